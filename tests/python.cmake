# Python tool tests (tests/python/test_*.py): one ctest entry per module, run with the
# system interpreter that has python3-h5py, -numpy, -matplotlib and -scipy.
# ROLLSIM_BINARY points at the built program for end-to-end tests.
set(ROLLSIM_PYTHON /usr/bin/python3)
set(ROLLSIM_PYTHON_TESTS h5_roundtrip rollsim_h5 plot figures docs_python h5tomat octave package formulations linear_sweep
  key_tables peer_siconos contact_views roles animate bench_table)
# The label python_tools marks the tests whose assertions are about the Python tools (tools/plot, tools/report,
# tools/h5tomat, the rollsim package, the Siconos peer) or about the sources alone; the program only makes
# their input files. tools/test-sanitize leaves them out under ASan (ctest -LE python_tools): they run in the
# release suite, and the program runs they make (the contact, table, sweep and linearize scenarios) run under
# ASan in the doctest cases (roles runs every shipped scenario briefly: the writer of its role attributes is
# src/io/result_file.cpp, which the doctest cases run under ASan). The python tests of what the program itself
# writes or prints (h5_roundtrip, linear_sweep,
# formulations, key_tables, faults, sweep) have no such label.
set(ROLLSIM_PYTHON_TOOL_TESTS plot figures docs_python h5tomat octave package rollsim_h5 peer_siconos
  contact_views roles animate bench_table)
foreach(name ${ROLLSIM_PYTHON_TESTS})
  add_test(NAME python_${name}
    COMMAND ${ROLLSIM_PYTHON} -m unittest -v test_${name}
    WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}/tests/python)
  # ROLLSIM_SANITIZED tells a test that the program is a sanitizer build (as the doctest cases are told): a case
  # whose assertions are about a Python tool's own logic, not about what the program prints, may skip there.
  set(sanitized "")
  if(ROLLSIM_SANITIZE)
    set(sanitized ";ROLLSIM_SANITIZED=1")
  endif()
  set_tests_properties(python_${name} PROPERTIES
    ENVIRONMENT "ROLLSIM_BINARY=$<TARGET_FILE:rollsim>;ROLLSIM_SOURCE_DIR=${CMAKE_SOURCE_DIR};PYTHONDONTWRITEBYTECODE=1;MPLBACKEND=Agg${sanitized}"
    LABELS python
    TIMEOUT 300)
  if(name IN_LIST ROLLSIM_PYTHON_TOOL_TESTS)
    set_property(TEST python_${name} APPEND PROPERTY LABELS python_tools)
  endif()
endforeach()
# Without octave every test of that module is skipped: report it as skipped, not passed.
set_tests_properties(python_octave PROPERTIES SKIP_REGULAR_EXPRESSION "OK \\(skipped=[0-9]+\\)")
# The same without python3-siconos (optional): the Siconos peer's comparison is skipped.
set_tests_properties(python_peer_siconos PROPERTIES SKIP_REGULAR_EXPRESSION "OK \\(skipped=[0-9]+\\)")
# tools/animate's page in headless Chromium, its video through ffmpeg: skipped without them (tools/install-deps).
set_tests_properties(python_animate PROPERTIES SKIP_REGULAR_EXPRESSION "OK \\(skipped=[0-9]+\\)")
