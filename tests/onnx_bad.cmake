# tests/onnx_bad.cmake — the ONNX importer's test registrations (included by
# tests/CMakeLists.txt):
#  - onnx.fixtures writes the models unit.test_onnx reads (a ctest fixture,
#    so the unit test always runs after it);
#  - onnx.bad_corpus runs `ncc import` over >= 60 malformed models written by
#    onnx.bad_corpus.make, checking exit status, the one-line diagnostic and
#    that nothing is written.
# The models are generated at test time with the onnx Python package, so no
# binary fixture needs to be kept in sync with the scripts.
set(NCC_BAD_ONNX_DIR ${CMAKE_CURRENT_SOURCE_DIR}/bad_onnx)

add_test(NAME onnx.fixtures
  COMMAND ${Python3_EXECUTABLE} ${NCC_BAD_ONNX_DIR}/make_fixtures.py
          ${CMAKE_BINARY_DIR}/onnx_fixtures)
set_tests_properties(onnx.fixtures PROPERTIES
  FIXTURES_SETUP onnx_fixtures LABELS onnx)
if(TEST unit.test_onnx)
  set_tests_properties(unit.test_onnx PROPERTIES FIXTURES_REQUIRED onnx_fixtures)
endif()

add_test(NAME onnx.bad_corpus.make
  COMMAND ${Python3_EXECUTABLE} ${NCC_BAD_ONNX_DIR}/make_corpus.py
          ${CMAKE_BINARY_DIR}/bad_onnx)
set_tests_properties(onnx.bad_corpus.make PROPERTIES
  FIXTURES_SETUP onnx_bad_corpus LABELS onnx)
add_test(NAME onnx.bad_corpus
  COMMAND ${Python3_EXECUTABLE} ${NCC_BAD_ONNX_DIR}/run_corpus.py
          ${CMAKE_BINARY_DIR}/bad_onnx)
set_tests_properties(onnx.bad_corpus PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}"
  FIXTURES_REQUIRED onnx_bad_corpus
  LABELS onnx
  TIMEOUT 600)
