# tests/qkernels.cmake — the cpu target's integer kernels (QLinearConv,
# QLinearMatMul: KIR_E_DOT4, vpdpbusd where the host has AVX512-VNNI, the
# portable sum elsewhere) against ONNX Runtime at vector widths 16/8/4/1
# (tests/py/qkernels_ort.py). Exit 77 (skipped) without numpy, onnx or
# onnxruntime.
if(NCC_LLVM)
  add_test(NAME python.qkernels_ort
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/qkernels_ort.py)
  set_tests_properties(python.qkernels_ort PROPERTIES
    ENVIRONMENT "${NCC_TEST_ENV}" LABELS "python;cpu" TIMEOUT 600
    SKIP_RETURN_CODE 77)
endif()
# the two-activation kernels (lower_qbmm.c) through the OpenCL/CUDA C
# renderer, on PoCL (skipped, 77, where no OpenCL device runs)
if(NCC_OPENCL)
  add_test(NAME python.qkernels_ort.opencl
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/qkernels_ort.py --target opencl)
  set_tests_properties(python.qkernels_ort.opencl PROPERTIES
    ENVIRONMENT "${NCC_TEST_ENV_OPENCL}" LABELS "python;opencl" TIMEOUT 600
    SKIP_RETURN_CODE 77)
endif()
