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
  # Siconos Numerics' LCP solver chooses the modes of many contacts at once (src/hybrid/lcp.cpp). Debian's
  # libsiconos-numerics-dev ships no CMake package of its own for the numerics alone (siconos-config.cmake loads
  # every Siconos component and sets CMAKE_CXX_STANDARD to 11), so the library and headers are found directly.
  if(NOT TARGET rollsim::siconos_numerics)
    find_path(ROLLSIM_SICONOS_INCLUDE_DIR siconos/numerics/LCP_Solvers.h)
    find_library(ROLLSIM_SICONOS_NUMERICS_LIBRARY siconos_numerics)
    if(NOT ROLLSIM_SICONOS_INCLUDE_DIR OR NOT ROLLSIM_SICONOS_NUMERICS_LIBRARY)
      message(FATAL_ERROR "Siconos Numerics not found: install libsiconos-numerics-dev (tools/install-deps does)")
    endif()
    add_library(rollsim::siconos_numerics UNKNOWN IMPORTED)
    set_target_properties(rollsim::siconos_numerics PROPERTIES
      IMPORTED_LOCATION "${ROLLSIM_SICONOS_NUMERICS_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${ROLLSIM_SICONOS_INCLUDE_DIR};${ROLLSIM_SICONOS_INCLUDE_DIR}/siconos")
  endif()
endmacro()
