# tests/harness_rounds.cmake — the harness's interleaved timing: rounds
# rotate and pair, adaptive repeats, groups and shards, a quick sweep with
# grouped rows (equal sample counts, one group id, a CI on every median),
# resume re-timing a partial group whole, old rows still reporting.  Label
# `harness`; exit 77 (skip) when numpy/onnx/onnxruntime are missing.
add_test(NAME harness.rounds
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/test_harness_rounds.py)
set_tests_properties(harness.rounds PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}"
  LABELS harness
  TIMEOUT 600
  SKIP_RETURN_CODE 77)
