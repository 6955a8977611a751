# tests/files.cmake — files and compatibility (label files): zero-size
# tensors on ref/cpu/opencl vs onnxruntime, output modes under umask, no
# temporaries after SIGINT/SIGTERM/SIGKILL, long -o names, concurrent runs
# into one --output-dir, outputs listed twice, newer opsets, '=' in --input
# names, file names in errors (tests/files/test_files.py).
add_test(NAME files.test_files
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/files/test_files.py)
set_tests_properties(files.test_files PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV_OPENCL}" LABELS files TIMEOUT 600)
