# tests/precision.cmake — --precision=bf16|fp16 (passes/precision.c, the
# RoundBF16/RoundF16 kernels, `ncc run --compare-f32`) against numpy doing
# the same rounded math, on --target ref and cpu (tests/py/test_precision.py).
add_test(NAME python.precision.ref
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/test_precision.py --target ref)
set_tests_properties(python.precision.ref PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}" LABELS python TIMEOUT 600 SKIP_RETURN_CODE 77)
if(NCC_LLVM)
  add_test(NAME python.precision.cpu
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/test_precision.py --target cpu)
  set_tests_properties(python.precision.cpu PROPERTIES
    ENVIRONMENT "${NCC_TEST_ENV}" LABELS "python;cpu" TIMEOUT 600 SKIP_RETURN_CODE 77)
endif()
