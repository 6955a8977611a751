# tests/attrib.cmake — pass attribution (bench/harness/attrib*.py, the
# `shapley` experiment kind): Shapley values against their definition,
# pairwise interactions, bootstrap intervals, the report from synthetic rows,
# and a tiny sweep end to end with ncc.  Label `harness`; exit 77 (skip)
# when numpy/onnx/onnxruntime are missing.
add_test(NAME harness.attrib
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/test_attrib.py)
set_tests_properties(harness.attrib PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}"
  LABELS harness
  TIMEOUT 600
  SKIP_RETURN_CODE 77)
