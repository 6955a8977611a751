# tests/conv1d.cmake — the conv1d pass (passes/conv1d.c) against ONNX
# Runtime: 1-D Conv (an audio stem, grouped + dilated + asymmetric pads,
# depthwise, 1x1), MaxPool and AveragePool at two lengths of a symbolic
# length, on ref and cpu at vector widths 8/4/1, none of them on reference
# kernels on cpu (tests/py/conv1d_ort.py); the IR rewrite and where it must
# not fire are tests/filecheck/pass_conv1d.nir. Exit 77 (skipped) without
# numpy, onnx or onnxruntime.
add_test(NAME python.conv1d_ort
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/conv1d_ort.py)
set_tests_properties(python.conv1d_ort PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}" LABELS "python;cpu" TIMEOUT 300
  SKIP_RETURN_CODE 77)
