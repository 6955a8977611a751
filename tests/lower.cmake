# tests/lower.cmake — the structure of the lowering (codegen/lower*.c): the
# files call each other without a cycle (dispatch -> kinds -> shared
# helpers, see codegen/lower.h); the checker itself must find a planted one.
add_test(NAME lower.callgraph
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/lower/callgraph.py
                 --check ${CMAKE_SOURCE_DIR})
add_test(NAME lower.callgraph_self_test
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/lower/callgraph.py
                 --self-test)
set_tests_properties(lower.callgraph lower.callgraph_self_test PROPERTIES LABELS lower)
add_test(NAME lower.kernel_names
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/lower/test_kernel_names.py)
set_tests_properties(lower.kernel_names PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}" LABELS lower TIMEOUT 300)
