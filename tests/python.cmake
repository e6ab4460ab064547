# Python tool tests (tests/python/test_*.py): one ctest entry per module, run with the
# system interpreter that has python3-h5py, -numpy, -matplotlib and -scipy.
# ROLLSIM_BINARY points at the built program for end-to-end tests.
set(ROLLSIM_PYTHON /usr/bin/python3)
set(ROLLSIM_PYTHON_TESTS h5_roundtrip rollsim_h5 plot figures docs_python h5tomat octave package formulations
  key_tables peer_siconos contact_views)
foreach(name ${ROLLSIM_PYTHON_TESTS})
  add_test(NAME python_${name}
    COMMAND ${ROLLSIM_PYTHON} -m unittest -v test_${name}
    WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}/tests/python)
  set_tests_properties(python_${name} PROPERTIES
    ENVIRONMENT "ROLLSIM_BINARY=$<TARGET_FILE:rollsim>;ROLLSIM_SOURCE_DIR=${CMAKE_SOURCE_DIR};PYTHONDONTWRITEBYTECODE=1;MPLBACKEND=Agg"
    LABELS python
    TIMEOUT 300)
endforeach()
# Without octave every test of that module is skipped: report it as skipped, not passed.
set_tests_properties(python_octave PROPERTIES SKIP_REGULAR_EXPRESSION "OK \\(skipped=[0-9]+\\)")
# The same without python3-siconos (optional): the Siconos peer's comparison is skipped.
set_tests_properties(python_peer_siconos PROPERTIES SKIP_REGULAR_EXPRESSION "OK \\(skipped=[0-9]+\\)")
