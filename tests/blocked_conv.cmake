# tests/blocked_conv.cmake — the blocked Conv kernel's input-channel chunks
# (partial sums in a stack scratch, bias and epilogue after the last chunk),
# its two task orders, and the blocked pools' padding against ONNX Runtime
# at vector widths 16/8/4/1 (tests/py/blocked_conv_ort.py). Exit 77 (skipped) without numpy,
# onnx or onnxruntime.
add_test(NAME python.blocked_conv_ort
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/blocked_conv_ort.py)
set_tests_properties(python.blocked_conv_ort PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}" LABELS "python;cpu" TIMEOUT 900
  SKIP_RETURN_CODE 77)
