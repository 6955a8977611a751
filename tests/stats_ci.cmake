# tests/stats_ci.cmake — the report's bootstrap confidence intervals (their
# coverage on synthetic data with a known answer), the adaptive repeats
# (until each median's CI half-width meets the target, or the cap) and the
# warning on rows too noisy to rank.  Label `harness`; pure Python.
add_test(NAME harness.stats_ci
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/test_stats_ci.py)
set_tests_properties(harness.stats_ci PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}"
  LABELS harness
  SKIP_RETURN_CODE 77
  TIMEOUT 300)
