# tests/check.cmake — `ncc check MODEL [--json]` (docs/CLI.md): every
# unsupported op, dtype and opset of generated ONNX models listed with its
# count and first node, and the exit codes. Needs python3 with onnx.
add_test(NAME check.test_check
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/cli/test_check.py)
set_tests_properties(check.test_check PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}" LABELS cli TIMEOUT 300)
# `ncc check MODEL --target=T`: what did not compile for T (host nodes by
# op, first node and reason).
add_test(NAME check.test_check_target
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/cli/test_check_target.py)
set_tests_properties(check.test_check_target PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}" LABELS cli TIMEOUT 300)
