# tests/stats_noise.cmake — the noise flag (bench/harness/stats.py
# robust_cv / noisy) and everything that applies it: one outlier among 20
# steady runs is not noisy, a bimodal sample is; measure.summarize and the
# adaptive extra rounds use the same rule; the report recomputes it from a
# row's samples and prints both the robust and the plain cv.  Label
# `harness`; pure Python (no ncc, no vendor).
add_test(NAME harness.stats_noise
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/test_stats_noise.py)
set_tests_properties(harness.stats_noise PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}"
  LABELS harness
  TIMEOUT 60)
