# tests/harness_models.cmake — real models in the experiment harness (ONNX
# files and a fake model-zoo cache: no torch needed) through every
# experiment kind that takes them, FLOP grouping, --models, and the
# hardware axis of a merge across machines (emulated rows never ranked).
# Label `harness`; needs numpy, onnx, onnxruntime (else skipped, 77).
add_test(NAME harness.models
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/test_harness_models.py)
set_tests_properties(harness.models PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}"
  LABELS "harness;release"
  SKIP_RETURN_CODE 77
  TIMEOUT 600)
