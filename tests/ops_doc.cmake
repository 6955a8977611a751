# tests/ops_doc.cmake — `ncc ops` (the supported ops, from ir/ops.def and each
# target's compile hook), "did you mean" for misspelt names, -o creating its
# directories, and docs/OPS.md being what `ncc ops` prints now.
add_test(NAME cli.test_ops
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/cli/test_ops.py)
set_tests_properties(cli.test_ops PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV_OPENCL}" LABELS "cli;docs" TIMEOUT 300)
add_test(NAME docs.test_ops_doc
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tools/update-ops-doc.py --check)
set_tests_properties(docs.test_ops_doc PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}" LABELS docs TIMEOUT 120)
