# tests/dtypes.cmake — every ncc dtype (int8/16/32/64, uint8/16/32/64,
# float16, bfloat16, float32, float64, bool) through the ops that compute on
# it and through Cast between every pair, on --target ref and cpu, against
# onnxruntime (numpy/ml_dtypes where ORT has no kernel): wrap-around,
# uint64 above 2^63, integer Div truncation (tests/py/dtype_ort.py).
add_test(NAME python.dtype_ort.ref
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/dtype_ort.py --target ref)
set_tests_properties(python.dtype_ort.ref PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}" LABELS python TIMEOUT 600 SKIP_RETURN_CODE 77)
if(NCC_LLVM)
  add_test(NAME python.dtype_ort.cpu
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/dtype_ort.py --target cpu)
  set_tests_properties(python.dtype_ort.cpu PROPERTIES
    ENVIRONMENT "${NCC_TEST_ENV}" LABELS "python;cpu" TIMEOUT 600 SKIP_RETURN_CODE 77)
endif()
