# tests/targets.cmake — `ncc targets` against what really works: every
# target is compiled and run on a tiny model and the RUN / COMPILE columns
# must agree (docs/CLI.md). Needs python3 with numpy and onnx.
add_test(NAME cli.test_targets
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/cli/test_targets.py)
set_tests_properties(cli.test_targets PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV_OPENCL}" LABELS cli TIMEOUT 300)
