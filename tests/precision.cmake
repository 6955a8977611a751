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
# the RoundBF16/RoundF16 functions of the OpenCL/CUDA prelude (skipped, 77,
# where no OpenCL device runs)
if(NCC_OPENCL)
  add_test(NAME python.precision.opencl
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/test_precision.py --target opencl)
  set_tests_properties(python.precision.opencl PROPERTIES
    ENVIRONMENT "${NCC_TEST_ENV_OPENCL}" LABELS "python;opencl" TIMEOUT 900 SKIP_RETURN_CODE 77)
endif()
