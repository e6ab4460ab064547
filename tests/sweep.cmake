# End-to-end tests of `rollsim sweep` (Python, Debian's h5py). The MPI test is registered only when the
# MPI sweep is built (ROLLSIM_MPI=ON); tools/test-mpi runs these with `ctest -R sweep`.
add_test(NAME python_sweep
  COMMAND /usr/bin/python3 -m unittest -v test_sweep.Sweep
  WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/python)
set_tests_properties(python_sweep PROPERTIES ENVIRONMENT "ROLLSIM_BINARY=$<TARGET_FILE:rollsim>")

if(ROLLSIM_MPI)
  add_test(NAME python_sweep_mpi
    COMMAND /usr/bin/python3 -m unittest -v test_sweep.SweepMpi
    WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/python)
  set_tests_properties(python_sweep_mpi PROPERTIES
    ENVIRONMENT "ROLLSIM_BINARY=$<TARGET_FILE:rollsim>;ROLLSIM_MPI_TEST=1;MPIEXEC=${MPIEXEC_EXECUTABLE}")
endif()
