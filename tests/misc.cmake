# tests/misc.cmake — the quantization, misc and signal ops: bad
# input refused with one error line and the right exit code, hostile values
# answered without undefined behaviour, on ref and cpu. (Their numerics are
# checked by the python suites: node_conformance and diff_ort, through
# tests/py/ortgen_misc.py.) Needs python3 with numpy and onnx.
add_test(NAME misc.test_misc_errors
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/test_misc_errors.py)
set_tests_properties(misc.test_misc_errors PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}" LABELS cli TIMEOUT 300)
