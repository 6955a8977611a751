# tests/benchstats.cmake — what `ncc bench` reports beside its numbers: the
# median's 95% CI, the noisy flag, threads and CPU pinning, the nodes run on
# reference kernels (and the warning of bench and run), --batch lists. The
# CI's definition itself is tests/unit/test_cli_stats.c; the ablation's
# rows are tests/filecheck/pass_drift_ablate.nir.
add_test(NAME benchstats.test_bench_stats
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/benchstats/test_bench_stats.py)
set_tests_properties(benchstats.test_bench_stats PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}" LABELS "cli" TIMEOUT 300)
