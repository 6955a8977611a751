# tests/aarch64.cmake — cross-compilation to AArch64 (label aarch64): op
# models and the generated blocks, built with --target=aarch64 --emit=lib,
# linked statically by aarch64-linux-gnu-gcc and run under qemu-aarch64
# (tests/aarch64/test_aarch64.py); the int8 kernels with and without the
# dot-product features (+dotprod: SDOT, +i8mm: USDOT) against onnxruntime
# under qemu-aarch64 -cpu max (tests/aarch64/test_int8_dot.py). Skipped
# (exit 77) without those tools.
if(NCC_LLVM)
  add_test(NAME aarch64.qemu
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/aarch64/test_aarch64.py)
  set_tests_properties(aarch64.qemu PROPERTIES
    ENVIRONMENT "${NCC_TEST_ENV}" LABELS aarch64 SKIP_RETURN_CODE 77 TIMEOUT 300)
  add_test(NAME aarch64.int8
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/aarch64/test_int8_dot.py)
  set_tests_properties(aarch64.int8 PROPERTIES
    ENVIRONMENT "${NCC_TEST_ENV}" LABELS aarch64 SKIP_RETURN_CODE 77 TIMEOUT 600)
endif()
