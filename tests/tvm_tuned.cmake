# tests/tvm_tuned.cmake — tuned TVM (MetaSchedule, a fixed trial budget per
# task) is a row of its own beside untuned TVM, with its tuning time inside
# the compile time and reported apart, or a one-line skip where MetaSchedule
# cannot work.  Label `harness`; skipped (77) without tvm.
add_test(NAME harness.tvm_tuned
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/test_tvm_tuned.py)
set_tests_properties(harness.tvm_tuned PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}"
  LABELS harness
  SKIP_RETURN_CODE 77
  TIMEOUT 1200)
