# tests/options.cmake — the driver's configuration (tests/options): the
# environment variables `ncc` documents become ncc_options (libncc reads
# none), and `ncc run` / `ncc bench` take --threads; bench reports the
# thread count. The library side is tests/unit/test_options.c.
if(NCC_LLVM)
  add_test(NAME options.test_options_cli
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/options/test_options_cli.py)
  set_tests_properties(options.test_options_cli PROPERTIES
    ENVIRONMENT "${NCC_TEST_ENV}" LABELS "cli;cpu" TIMEOUT 300)
endif()
