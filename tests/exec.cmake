# tests/exec.cmake — what the host executor (runtime/exec.c) does instead of
# running a node, against ONNX Runtime:
#   python.views_ort       Reshape, Flatten, Squeeze, Unsqueeze and Identity
#                          run as views (no kernel, no copy): the lifetimes
#                          of the values they view (chains, fused readers,
#                          graph outputs, later temporaries that could take a
#                          source's slot) on ref and cpu, and the view count
#                          and profile of `ncc bench`;
#   python.shape_memo_ort  the shape memo: one module run at changing and
#                          repeated batches, the Shape/Size chains kept per
#                          binding (libncc in-process: release builds only).
# Exit 77 (skipped) without numpy, onnx or onnxruntime.
add_test(NAME python.views_ort
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/views_ort.py)
set_tests_properties(python.views_ort PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}" LABELS "python;cpu" TIMEOUT 300
  SKIP_RETURN_CODE 77)
add_test(NAME python.shape_memo_ort
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/shape_memo_ort.py)
set_tests_properties(python.shape_memo_ort PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}" LABELS "python;cpu;release" TIMEOUT 300
  SKIP_RETURN_CODE 77)
