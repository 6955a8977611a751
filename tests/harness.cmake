# tests/harness.cmake — the experiment harness (bench/experiment,
# bench/harness): metric arithmetic, spec checks, a tiny sweep end to end
# with ncc ref and ONNX Runtime (resume, shards, merge), a missing vendor
# skipped cleanly, the report without matplotlib.  Label `harness`; exit 77
# (skip) when numpy/onnx/onnxruntime are missing.
add_test(NAME harness.experiment
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/test_harness.py)
set_tests_properties(harness.experiment PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}"
  LABELS harness
  TIMEOUT 600
  SKIP_RETURN_CODE 77)
