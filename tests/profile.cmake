# tests/profile.cmake — `ncc bench --profile` and `--trace` (docs/PROFILING.md):
# the per-kernel profile adds up to the run, names the ONNX nodes, counts
# FLOPs as numpy does; the Chrome trace parses with a lane per thread; a bad
# --trace path is one error line. Needs the cpu target (LLVM) and python3
# with numpy and onnx.
if(NCC_LLVM)
  add_test(NAME profile.test_profile
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/test_profile.py)
  set_tests_properties(profile.test_profile PROPERTIES
    ENVIRONMENT "${NCC_TEST_ENV}" LABELS cli TIMEOUT 600)
endif()
