# tests/winograd.cmake — Winograd F(2x2, 3x3) and F(4x4, 3x3) convolutions
# (pass winograd, codegen/lower_wino.c) against ONNX Runtime: padded,
# asymmetric, unpadded, fused residual, chained and 512-channel 3x3 Convs
# at odd sizes, both tile sizes at vector widths 16/8/4/1, and which Convs
# the pass marks (tests/py/winograd_ort.py); the marks in the IR are
# tests/filecheck/pass_winograd.nir. Exit 77 (skipped) without numpy, onnx
# or onnxruntime; without the cpu target (no LLVM) only the marks.
add_test(NAME python.winograd_ort
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/winograd_ort.py)
set_tests_properties(python.winograd_ort PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}" LABELS "python;cpu" TIMEOUT 300
  SKIP_RETURN_CODE 77)
