# tests/nn.cmake — the reduction, normalization, pooling and attention ops (reductions, normalizations, pools,
# ConvTranspose, RoiAlign, Attention, RotaryEmbedding): malformed nodes are
# refused with exit 2 and one error line naming the node, on ref and cpu.
# (Their values are checked by python.node_conformance and python.diff_ort,
# tests/py/ortgen_nn.py.) Needs python3 with numpy and onnx.
add_test(NAME nn.test_nn_errors
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/nn/test_nn_errors.py)
set_tests_properties(nn.test_nn_errors PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}" LABELS cli TIMEOUT 300 SKIP_RETURN_CODE 77)
