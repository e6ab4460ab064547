# cmake -DBINARY=rollsim_tests -P checkTestNames.cmake: fails when a doctest case's name holds a semicolon.
# doctest_discover_tests registers each case with ctest under its name, and CMake splits a name at a semicolon (its
# list separator): the ctest entry then carries the name's first part, whose filter matches no case, and passes
# without running one. Sixteen cases went unrun that way, one of them failing.
execute_process(COMMAND "${BINARY}" --list-test-cases --no-version OUTPUT_VARIABLE listed RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${BINARY} --list-test-cases exited with ${status}")
endif()
string(REPLACE ";" "<semicolon>" listed "${listed}")
string(REPLACE "\n" ";" lines "${listed}")
set(bad "")
foreach(line IN LISTS lines)
  if(line MATCHES "<semicolon>")
    string(REPLACE "<semicolon>" ";" line "${line}")
    string(APPEND bad "\n  ${line}")
  endif()
endforeach()
if(bad)
  message(FATAL_ERROR "test case names with a semicolon (ctest would run none of them: write a comma):${bad}")
endif()
