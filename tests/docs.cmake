# tests/docs.cmake — the documentation lives in docs/ and stays true: no
# pointers to design pages outside the repository, every Markdown link
# resolves, docs/CLI.md quotes the help texts ncc really prints.
add_test(NAME docs.test_docs
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/docs/test_docs.py)
set_tests_properties(docs.test_docs PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}" LABELS docs TIMEOUT 120)
