# tests/layers.cmake — bench/layers, one model profiled layer by layer by
# ncc, onnxruntime and OpenVINO: the profile parsers on fixtures, the
# alignment (differing fusions merge, time is preserved), and a tiny model
# end to end against live onnxruntime and OpenVINO.  Label `layers`; exit
# 77 (skip) when numpy/onnx/onnxruntime/openvino are missing.
add_test(NAME layers.bench_layers
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/test_layers.py)
set_tests_properties(layers.bench_layers PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}"
  LABELS layers
  TIMEOUT 300
  SKIP_RETURN_CODE 77)
