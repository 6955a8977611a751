# tests/index_memo.cmake — the LLVM emitter's memo of index expressions
# (codegen/llvm/emit.c) on odd-sized conv, depthwise, pool, matmul, softmax,
# reduce and broadcast kernels at tiers 0 and 2, against ONNX Runtime and
# the reference target (tests/py/test_index_memo.py).
if(NOT TARGET ncc OR NOT NCC_LLVM)
  return()
endif()
add_test(NAME cpu.index_memo
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/test_index_memo.py)
set_tests_properties(cpu.index_memo PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}" LABELS "python;cpu" TIMEOUT 600 SKIP_RETURN_CODE 77)
