# tests/se_blocked.cmake — squeeze-excite blocks and network heads compiled
# on the cpu target (the blocked broadcast Mul, Flatten as a compiled copy)
# against ONNX Runtime, and `ncc check --target=cpu` reporting no host
# nodes for them (tests/py/test_se_blocked.py). Needs numpy, onnx and
# onnxruntime (else skipped).
if(NCC_LLVM)
  add_test(NAME blocked.test_se_blocked
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/test_se_blocked.py)
  set_tests_properties(blocked.test_se_blocked PROPERTIES
    ENVIRONMENT "${NCC_TEST_ENV}" LABELS "python;cpu" TIMEOUT 600 SKIP_RETURN_CODE 77)
endif()
