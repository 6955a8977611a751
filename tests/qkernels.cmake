# tests/qkernels.cmake — the cpu target's integer kernels (QLinearConv,
# QLinearMatMul: AMX tiles where the host has them, KIR_E_DOT4 (vpdpbusd
# with AVX512-VNNI, the portable sum elsewhere)) against ONNX Runtime
# (tests/py/qkernels_ort.py). Exit 77 (skipped) without numpy, onnx or
# onnxruntime. python.qkernels_ort: the host's kernels and the portable
# sum (width 1); python.qkernels_ort.widths (label release: the release
# stage of tools/test.sh, as the sweep is long under ASan) every width
# 16/8/4/1 without tiles; python.qkernels_ort.tiles (release) the tile
# kernels, emulated on a host without AMX.
if(NCC_LLVM)
  add_test(NAME python.qkernels_ort
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/qkernels_ort.py)
  set_tests_properties(python.qkernels_ort PROPERTIES
    ENVIRONMENT "${NCC_TEST_ENV}" LABELS "python;cpu" TIMEOUT 600
    SKIP_RETURN_CODE 77)
  add_test(NAME python.qkernels_ort.widths
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/qkernels_ort.py --widths)
  set_tests_properties(python.qkernels_ort.widths PROPERTIES
    ENVIRONMENT "${NCC_TEST_ENV}" LABELS "python;cpu;release" TIMEOUT 600
    SKIP_RETURN_CODE 77)
  # the AMX tile kernels at width 16 on any host: natively where it has
  # AMX, else through NCC_AMX=emulate (codegen/llvm/amx_emu.c)
  add_test(NAME python.qkernels_ort.tiles
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/qkernels_ort.py --tiles)
  set_tests_properties(python.qkernels_ort.tiles PROPERTIES
    ENVIRONMENT "${NCC_TEST_ENV}" LABELS "python;cpu;release" TIMEOUT 600
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
