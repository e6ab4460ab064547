# rollsim_unity(TARGET KIND): TARGET's .cpp sources compiled in groups of ROLLSIM_UNITY_BATCH, each through a
# generated file that includes them (a unity build): the headers they share (Eigen, SUNDIALS, doctest) are parsed
# and their templates instantiated once a group instead of once a file. KIND is `library` (the core), `cli` (the
# command-line tool) or `tests` (the test binary). ROLLSIM_UNITY says which are grouped:
#   all    every target given, the default. From an empty cache build/'s library took 390 s of CPU at -O3 (user
#          and system time) instead of 561 s one object a file, and a sanitizer tree's compile is nearly halved;
#   tests  the test binary alone: the library and the command-line tool one object a file, so that a source of
#          theirs that lacks an #include fails to compile (a group hides it when an earlier file of the group
#          includes the header);
#   off    none (ON and OFF, the values of the option this was, mean all and off).
# CMake's own UNITY_BUILD names each source by its absolute path, so that every checkout's group files differ and
# ccache (tools/build, tools/test-sanitize) could reuse nothing between checkouts; here each group file names its
# sources by their path relative to it, the same in every checkout with its build tree in the same place. Sources
# with compile definitions of their own (tests/main.cpp's paths, src/cli/sweep.cpp in an MPI build) are compiled
# alone, as are those with CMake's source property
# SKIP_UNITY_BUILD_INCLUSION (a file whose third-party headers clash with names an earlier file of a group brings
# in). Sources with compile options of their own (the files compiled at -O1 where the rest are at -O0) are grouped
# with the sources that have the same options. A unity build puts the files of a group into
# one translation unit: helpers in their anonymous namespaces must have names of their own across the files (a
# clash is a compile error).
set(ROLLSIM_UNITY "all" CACHE STRING "Sources compiled in groups (a unity build): all, tests or off")
set_property(CACHE ROLLSIM_UNITY PROPERTY STRINGS all tests off)
set(ROLLSIM_UNITY_BATCH 8 CACHE STRING "Sources in each group of a unity build")
function(rollsim_unity target kind)
  string(TOLOWER "${ROLLSIM_UNITY}" scope)
  if(scope MATCHES "^(all|on)$")
    set(grouped ON)
  elseif(scope STREQUAL "tests")
    set(grouped OFF)
    if(kind STREQUAL "tests")
      set(grouped ON)
    endif()
  elseif(scope MATCHES "^(off|)$")
    set(grouped OFF)
  else()
    message(FATAL_ERROR "ROLLSIM_UNITY is \"${ROLLSIM_UNITY}\": it takes all, tests or off")
  endif()
  if(NOT grouped)
    return()
  endif()
  get_target_property(sources ${target} SOURCES)
  get_target_property(dir ${target} SOURCE_DIR)
  set(unity_dir ${CMAKE_CURRENT_BINARY_DIR}/unity)
  set(kept "")
  set(classes "")  # the distinct compile options of the sources that have some, each grouped apart
  set(plain "")
  list(SORT sources)
  foreach(src IN LISTS sources)
    get_filename_component(abs ${src} ABSOLUTE BASE_DIR ${dir})
    get_source_file_property(options ${abs} COMPILE_OPTIONS)
    get_source_file_property(defines ${abs} COMPILE_DEFINITIONS)
    get_source_file_property(alone ${abs} SKIP_UNITY_BUILD_INCLUSION)
    if(NOT abs MATCHES "\\.cpp$" OR defines OR alone)
      list(APPEND kept ${abs})
    elseif(options)
      string(JOIN " " key ${options})
      list(FIND classes "${key}" class)
      if(class EQUAL -1)
        list(LENGTH classes class)
        list(APPEND classes "${key}")
        set(options_${class} "${options}")
        set(files_${class} "")
      endif()
      list(APPEND files_${class} ${abs})
    else()
      list(APPEND plain ${abs})
    endif()
  endforeach()
  # rollsim_unity_groups(NAME FILES...): FILES in groups of ROLLSIM_UNITY_BATCH, NAME_0.cpp, NAME_1.cpp, ...; the
  # group files are appended to `kept` and named in `made`.
  macro(rollsim_unity_groups name)
    set(made "")
    set(group "")
    set(count 0)
    set(index 0)
    foreach(abs ${ARGN})
      file(RELATIVE_PATH rel ${unity_dir} ${abs})
      string(APPEND group "#include \"${rel}\"\n")
      math(EXPR count "${count} + 1")
      if(count EQUAL ROLLSIM_UNITY_BATCH)
        file(CONFIGURE OUTPUT ${unity_dir}/${name}_${index}.cpp CONTENT "${group}")
        list(APPEND made ${unity_dir}/${name}_${index}.cpp)
        math(EXPR index "${index} + 1")
        set(group "")
        set(count 0)
      endif()
    endforeach()
    if(count GREATER 0)
      file(CONFIGURE OUTPUT ${unity_dir}/${name}_${index}.cpp CONTENT "${group}")
      list(APPEND made ${unity_dir}/${name}_${index}.cpp)
    endif()
    list(APPEND kept ${made})
  endmacro()
  rollsim_unity_groups(${target} ${plain})
  # The sources with compile options of their own, grouped with those that have the same options (the group file
  # carries them; it goes without the precompiled header, which is built with the tree's options).
  list(LENGTH classes n_classes)
  if(n_classes GREATER 0)
    math(EXPR last "${n_classes} - 1")
    foreach(class RANGE ${last})
      rollsim_unity_groups(${target}_options${class} ${files_${class}})
      set_source_files_properties(${made} PROPERTIES COMPILE_OPTIONS "${options_${class}}" SKIP_PRECOMPILE_HEADERS ON)
    endforeach()
  endif()
  set_property(TARGET ${target} PROPERTY SOURCES ${kept})
endfunction()
