# tests/qdq_fold.cmake — the qdq-fold pass against ONNX Runtime's QDQ run
# (tests/py/qdq_fold_ort.py: quantize_static models and hand-written QDQ
# graphs must fold and agree within one quantum), on ref and, with LLVM,
# on cpu. Its FileCheck test is tests/filecheck/pass_qdq_fold.nir.
add_test(NAME python.qdq_fold_ort
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/qdq_fold_ort.py)
set_tests_properties(python.qdq_fold_ort PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}" LABELS "python;passes" TIMEOUT 600 SKIP_RETURN_CODE 77)
if(NCC_LLVM)
  add_test(NAME python.qdq_fold_ort.cpu
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/qdq_fold_ort.py
                   --target cpu)
  set_tests_properties(python.qdq_fold_ort.cpu PROPERTIES
    ENVIRONMENT "${NCC_TEST_ENV}" LABELS "python;passes;cpu" TIMEOUT 600
    SKIP_RETURN_CODE 77)
endif()
