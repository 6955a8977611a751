# tests/harness_vendors.cmake — the vendor adapters of the experiment harness
# (bench/harness/adapters): each installed vendor's output against
# onnxruntime ORT_DISABLE_ALL run directly, a sweep with every vendor that
# must give live rows (inductor: cold and warm compile, E6 dynamic=True),
# wrong or unloadable vendors never silent.  Label `harness`; exit 77 (skip)
# when a vendor is not installed (tools/setup.sh installs them all) or
# numpy/onnx/onnxruntime are missing.  Minutes: TorchInductor's cold
# compiles run gcc.
add_test(NAME harness.vendors
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/test_harness_vendors.py)
set_tests_properties(harness.vendors PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}"
  LABELS "harness;release"
  TIMEOUT 1800
  SKIP_RETURN_CODE 77)
