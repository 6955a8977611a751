# tests/patchify.cmake — the patchify pass (passes/patchify.c) against ONNX
# Runtime: ViT's patch embedding, ConvNeXt's stem and downsample, a
# non-square patch, on ref and cpu at vector widths 8/4/1, and `ncc opt`
# showing the 1x1 Convs with the pass and none without it
# (tests/py/patchify_ort.py); the IR rewrite and where it must not fire are
# tests/filecheck/pass_patchify.nir. Exit 77 (skipped) without numpy, onnx
# or onnxruntime.
add_test(NAME python.patchify_ort
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/patchify_ort.py)
set_tests_properties(python.patchify_ort PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}" LABELS "python;cpu" TIMEOUT 300
  SKIP_RETURN_CODE 77)
