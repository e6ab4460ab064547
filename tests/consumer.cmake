# rollsim as a library, end to end: install this build tree into a scratch prefix, build examples/consumer
# against it with find_package(rollsim), run it on the benchmark and check the edge time it prints against
# the README's figure and an independent solution of the benchmark's equations (tools/peer_scipy.py).
add_test(NAME consumer_install
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/consumer_test.sh ${CMAKE_COMMAND} ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR}
    ${CMAKE_C_COMPILER} ${CMAKE_CXX_COMPILER} ${CMAKE_BUILD_TYPE})
# Labelled packaging: tools/test-sanitize leaves it out under ASan (162 s there of installing and compiling the
# consumer at -O0; what it checks is the install tree and the CMake package, which the release suite checks, and
# the library calls it makes are the benchmark run that the doctest cases make under ASan).
set_tests_properties(consumer_install PROPERTIES TIMEOUT 300 LABELS packaging)
