# rollsim_unity(TARGET): with ROLLSIM_UNITY on, TARGET's .cpp sources are compiled in groups of
# ROLLSIM_UNITY_BATCH, each through a generated file that includes them (a unity build): the headers they share
# (Eigen, SUNDIALS, doctest) are parsed and their templates instantiated once a group instead of once a file, which
# nearly halves an unoptimized, instrumented tree's compile (tools/test-sanitize turns it on there; the release
# tree keeps one object a file). CMake's own UNITY_BUILD names each source by its absolute path, so that every
# checkout's group files differ and ccache (tools/build, tools/test-sanitize) could reuse nothing between checkouts;
# here each group file names its sources by their path relative to it, the same in every checkout with its build
# tree in the same place. Sources with compile options or definitions of their own (the cone engine's -O1 files,
# tests/main.cpp's paths) are compiled alone. A unity build puts the files of a group into one translation unit:
# helpers in their anonymous namespaces must have names of their own across the files (a clash is a compile error
# in this tree alone).
option(ROLLSIM_UNITY "Compile the sources in groups (a unity build; tools/test-sanitize's trees)" OFF)
set(ROLLSIM_UNITY_BATCH 8 CACHE STRING "Sources in each group of a unity build")
function(rollsim_unity target)
  if(NOT ROLLSIM_UNITY)
    return()
  endif()
  get_target_property(sources ${target} SOURCES)
  get_target_property(dir ${target} SOURCE_DIR)
  set(unity_dir ${CMAKE_CURRENT_BINARY_DIR}/unity)
  set(kept "")
  set(group "")
  set(count 0)
  set(index 0)
  list(SORT sources)
  foreach(src IN LISTS sources)
    get_filename_component(abs ${src} ABSOLUTE BASE_DIR ${dir})
    get_source_file_property(options ${abs} COMPILE_OPTIONS)
    get_source_file_property(defines ${abs} COMPILE_DEFINITIONS)
    if(NOT abs MATCHES "\\.cpp$" OR options OR defines)
      list(APPEND kept ${abs})
      continue()
    endif()
    file(RELATIVE_PATH rel ${unity_dir} ${abs})
    string(APPEND group "#include \"${rel}\"\n")
    math(EXPR count "${count} + 1")
    if(count EQUAL ROLLSIM_UNITY_BATCH)
      file(CONFIGURE OUTPUT ${unity_dir}/${target}_${index}.cpp CONTENT "${group}")
      list(APPEND kept ${unity_dir}/${target}_${index}.cpp)
      math(EXPR index "${index} + 1")
      set(group "")
      set(count 0)
    endif()
  endforeach()
  if(count GREATER 0)
    file(CONFIGURE OUTPUT ${unity_dir}/${target}_${index}.cpp CONTENT "${group}")
    list(APPEND kept ${unity_dir}/${target}_${index}.cpp)
  endif()
  set_property(TARGET ${target} PROPERTY SOURCES ${kept})
endfunction()
