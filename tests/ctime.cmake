# tests/ctime.cmake — where compile time goes: `ncc bench --json`'s
# compile_breakdown and the --time-passes tables (every phase, adding up,
# one row per kernel, reused kernels flagged; targets ref, cpu, opencl).
add_test(NAME ctime.breakdown
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/ctime/test_ctime.py)
set_tests_properties(ctime.breakdown PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV_OPENCL}" LABELS "cli" TIMEOUT 300)
