# tests/opsets.cmake — the ONNX opsets the importer reads (7 .. the installed
# onnx's newest): every claimed op's node forms of each opset run against
# ONNX Runtime on ref and cpu, and the models ncc must refuse (an opset out
# of range, an attribute outside its opsets, an op before its opset)
# (tests/py/opset_ort.py). Exit 77: numpy/onnx/onnxruntime missing, or the
# target cannot run in this build.
add_test(NAME opsets.opset_ort
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/opset_ort.py)
set_tests_properties(opsets.opset_ort PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}" LABELS "python;opsets" TIMEOUT 900
  SKIP_RETURN_CODE 77)
if(NCC_LLVM)
  add_test(NAME opsets.opset_ort.cpu
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/opset_ort.py
                   --target cpu)
  set_tests_properties(opsets.opset_ort.cpu PROPERTIES
    ENVIRONMENT "${NCC_TEST_ENV}" LABELS "python;opsets;cpu" TIMEOUT 900
    SKIP_RETURN_CODE 77)
endif()
