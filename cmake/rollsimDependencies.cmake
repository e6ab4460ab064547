# The packages in rollsim::core's link interface, declared once. The build finds them with
#   rollsim_find_core_dependencies(find_package REQUIRED)
# and the installed rollsimConfig.cmake with
#   rollsim_find_core_dependencies(find_dependency)
# (find_dependency passes on the caller's REQUIRED and QUIET). The core is a static library, so even its
# private dependencies reach a consumer's link line; every one of them is listed here. MPI is not: it
# belongs to the command-line tool only.
macro(rollsim_find_core_dependencies command)
  cmake_language(CALL ${command} SUNDIALS 6.4 ${ARGN} COMPONENTS cvode ida arkode)
  cmake_language(CALL ${command} Eigen3 3.4 ${ARGN} NO_MODULE)
  cmake_language(CALL ${command} HDF5 ${ARGN} COMPONENTS C)
  cmake_language(CALL ${command} tomlplusplus ${ARGN})
  cmake_language(CALL ${command} Threads ${ARGN})
  # GiNaC (with CLN) derives the user models' equations; it ships a pkg-config file, no CMake package.
  cmake_language(CALL ${command} PkgConfig ${ARGN})
  pkg_check_modules(GINAC REQUIRED IMPORTED_TARGET GLOBAL ginac)
endmacro()
