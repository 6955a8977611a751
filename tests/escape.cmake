# tests/escape.cmake — model bytes in generated source and in what ncc
# prints (label escape): hostile names through --emit=lib (C header and glue
# compiled as C11 and C++ with -Werror, exports, a program run against
# numpy), --emit=opencl and --emit=ptx (tests/escape/test_escape.py); and
# control bytes in names kept out of the terminal and valid in --json
# (tests/escape/test_cli_names.py).
if(NCC_LLVM)
  add_test(NAME escape.codegen
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/escape/test_escape.py)
  set_tests_properties(escape.codegen PROPERTIES
    ENVIRONMENT "${NCC_TEST_ENV};POCL_CACHE_DIR=${CMAKE_BINARY_DIR}/pocl-cache;LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/gpu/lsan.supp:print_suppressions=0"
    LABELS escape TIMEOUT 120)
endif()
add_test(NAME escape.cli_names
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/escape/test_cli_names.py)
set_tests_properties(escape.cli_names PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}" LABELS escape TIMEOUT 120)
