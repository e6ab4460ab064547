# Python end-to-end tests of result files, with Debian's python3 and h5py.
add_test(NAME python_h5_roundtrip
  COMMAND /usr/bin/python3 -m unittest -v test_h5_roundtrip
  WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/python)
set_tests_properties(python_h5_roundtrip PROPERTIES ENVIRONMENT "ROLLSIM_BINARY=$<TARGET_FILE:rollsim>")
