# tests/cli.cmake — the `ncc` command line against its contract (docs/CLI.md):
# exit codes, the one-line "ncc: error:" diagnostics, sub-commands on tiny
# generated ONNX / text-IR models compared with numpy, malformed .npy inputs
# and all-or-nothing output writing. Needs python3 with numpy and onnx.
add_test(NAME cli.test_cli
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/cli/test_cli.py)
set_tests_properties(cli.test_cli PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}" LABELS cli TIMEOUT 300)
