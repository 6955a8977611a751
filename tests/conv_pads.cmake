# tests/conv_pads.cmake — Conv padded at the end only (top = left = 0,
# TensorFlow "SAME" at strides 1 and 2) and other asymmetric pads against
# ONNX Runtime on ref, on cpu at vector widths 16/8/4/1 (plain and blocked
# NCHW[k]c kernels) and on opencl where it runs (tests/py/conv_pads_ort.py).
# The same shapes are op cases of tests/ops (ops.*, against ref, cuda PTX
# included) and of python.diff_ort. Exit 77 (skipped) without numpy, onnx
# or onnxruntime.
add_test(NAME python.conv_pads_ort
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/conv_pads_ort.py)
set_tests_properties(python.conv_pads_ort PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV_OPENCL}" LABELS "python;cpu;opencl" TIMEOUT 900
  SKIP_RETURN_CODE 77)
