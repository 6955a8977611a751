# tests/qdq_eltwise.cmake — QuantizeLinear / DequantizeLinear compiled on
# the cpu target as fusable elementwise kernels (per tensor and per axis,
# u8 and s8), exact against ONNX Runtime, and `ncc check` reporting a
# DQ -> Add -> Relu -> Q chain as one kernel (tests/py/test_qdq_eltwise.py).
# Needs numpy, onnx and onnxruntime (else skipped).
if(NCC_LLVM)
  add_test(NAME cpu.test_qdq_eltwise
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/test_qdq_eltwise.py)
  set_tests_properties(cpu.test_qdq_eltwise PROPERTIES
    ENVIRONMENT "${NCC_TEST_ENV}" LABELS "python;cpu" TIMEOUT 600 SKIP_RETURN_CODE 77)
endif()
