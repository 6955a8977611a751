# tests/aarch64.cmake — cross-compilation to AArch64 (label aarch64): op
# models and the generated blocks, built with --target=aarch64 --emit=lib,
# linked statically by aarch64-linux-gnu-gcc and run under qemu-aarch64
# (tests/aarch64/test_aarch64.py). Skipped (exit 77) without those tools.
if(NCC_LLVM)
  add_test(NAME aarch64.qemu
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/aarch64/test_aarch64.py)
  set_tests_properties(aarch64.qemu PROPERTIES
    ENVIRONMENT "${NCC_TEST_ENV}" LABELS aarch64 SKIP_RETURN_CODE 77 TIMEOUT 300)
endif()
