# tests/strict.cmake — the strict-CI skip policy (tools/test_skips.py,
# docs/TESTING.md "Skips"): which skipped tests fail tools/test.sh.
add_test(NAME strict.skip_policy
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/strict/test_skip_policy.py)
set_tests_properties(strict.skip_policy PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}" LABELS "strict;cli" TIMEOUT 60)
