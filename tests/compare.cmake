# tests/compare.cmake — bench/compare, the user's own ONNX model against the
# vendors: a tiny model through ncc and ONNX Runtime (JSON structure, checks,
# CIs, ratio table), a planted output mismatch caught (--strict exits 3),
# usage errors as one line with exit 1.  Label `compare`; exit 77 (skip)
# when numpy/onnx/onnxruntime are missing.
add_test(NAME compare.bench_compare
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/test_compare.py)
set_tests_properties(compare.bench_compare PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}"
  LABELS compare
  TIMEOUT 600
  SKIP_RETURN_CODE 77)

# bench/precision/table.py: accuracy() against hand-computed answers, and a small
# conv model with its QDQ file (made with onnxruntime.quantization) at f32
# and int8 on ncc and onnxruntime (tests/py/test_precision_table.py).
if(NCC_LLVM)  # ncc's int8 and bf16 rows need the cpu target
  add_test(NAME compare.precision_table
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/test_precision_table.py)
  set_tests_properties(compare.precision_table PROPERTIES
    ENVIRONMENT "${NCC_TEST_ENV}"
    LABELS compare
    TIMEOUT 900
    SKIP_RETURN_CODE 77)
endif()
