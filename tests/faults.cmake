# Fault injection from outside the program (SIGKILL, SIGINT, a file-size limit, a solver that gives up),
# with Debian's python3 and h5py.
add_test(NAME python_faults
  COMMAND /usr/bin/python3 -m unittest -v test_faults
  WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/python)
set_tests_properties(python_faults PROPERTIES ENVIRONMENT "ROLLSIM_BINARY=$<TARGET_FILE:rollsim>" TIMEOUT 600)
