# tests/harness_report.cmake — the harness report on synthetic rows: every
# median with its CI, "(within noise)" for overlapping rows, noisy rows kept
# out of rankings and of "fastest vendor", ncc's ratio against each vendor,
# old rows without samples still reported.  Label `harness`; needs only
# Python (matplotlib optional).
add_test(NAME harness.report
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/test_harness_report.py)
set_tests_properties(harness.report PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}"
  LABELS harness
  TIMEOUT 120)
