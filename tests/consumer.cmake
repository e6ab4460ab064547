# rollsim as a library, end to end: install this build tree into a scratch prefix, build examples/consumer
# against it with find_package(rollsim), run it on the benchmark and check the edge time it prints against
# the README's figure and an independent solution of the benchmark's equations (tools/peer_scipy.py).
add_test(NAME consumer_install
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/consumer_test.sh ${CMAKE_COMMAND} ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR}
    ${CMAKE_C_COMPILER} ${CMAKE_CXX_COMPILER} ${CMAKE_BUILD_TYPE})
set_tests_properties(consumer_install PROPERTIES TIMEOUT 300)
