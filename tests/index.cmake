# tests/index.cmake — the indexing, scatter, resampling and sorting ops
#: bad inputs end as one `ncc: error:` line with exit 2/3 on ref
# and cpu, each confirmed bad by ONNX Runtime. Their values are checked by
# python.node_conformance* and python.diff_ort* (tests/py/ortgen_index.py).
add_test(NAME index.test_index_errors
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/index/test_index_errors.py)
set_tests_properties(index.test_index_errors PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}" LABELS "python;cli" TIMEOUT 300)
# compile-time output types with symbolic dims against ONNX's shape inference
add_test(NAME index.test_index_shapes
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/index/test_index_shapes.py)
set_tests_properties(index.test_index_shapes PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}" LABELS "python;cli" TIMEOUT 300)
