# The layer order of docs/architecture.md: every #include "rollsim/<module>/..." in src/ and include/ points to
# the same or a lower layer that the module's row lists (layers), and the checker itself on synthetic trees
# (python_layers).
add_test(NAME layers
  COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/python/check_layers.py ${CMAKE_SOURCE_DIR})
add_test(NAME python_layers
  COMMAND /usr/bin/python3 -m unittest -v test_layers
  WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}/tests/python)
set_tests_properties(layers python_layers PROPERTIES ENVIRONMENT "PYTHONDONTWRITEBYTECODE=1"
  LABELS "python;python_tools")
