# tools/report end to end: the standard validation set, the HTML page, and the page rendered in headless
# Chromium (screenshot and DOM dump). The browser checks are skipped when chromium is missing
# (tools/install-deps installs it); ctest then reports the test as skipped, not passed.
add_test(NAME python_report
  COMMAND /usr/bin/python3 -m unittest -v test_report
  WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}/tests/python)
set_tests_properties(python_report PROPERTIES
  ENVIRONMENT "ROLLSIM_BINARY=$<TARGET_FILE:rollsim>;ROLLSIM_SOURCE_DIR=${CMAKE_SOURCE_DIR};PYTHONDONTWRITEBYTECODE=1;MPLBACKEND=Agg"
  LABELS "python;python_tools"
  TIMEOUT 300
  SKIP_REGULAR_EXPRESSION "OK \\(skipped=[0-9]+\\)")
