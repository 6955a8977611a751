# tests/harness_spec.cmake — bench/harness/spec.py's reading of an E4 spec
# with an empty eltwise_k (no k axis). Pure Python, no measurement.
add_test(NAME harness.spec_eltwise_k
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/test_spec_eltwise_k.py)
set_tests_properties(harness.spec_eltwise_k PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}" LABELS harness TIMEOUT 60)
