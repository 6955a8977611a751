# tests/tsan.cmake — in the ThreadSanitizer build (-DNCC_TSAN=ON, made by
# tools/test.sh as build-tsan) the concurrency tests carry the label tsan:
# ncc_module_run from several threads (unit.test_module_threads) and the
# generated library's thread contract (aot.safety, whose glue and driver are
# then compiled with -fsanitize=thread), and the cpu kernels compiled on
# several threads (unit.test_jit_threads), and big weights packed on several
# threads (tsan.pack_threads). Only their targets are built there:
#   cmake --build build-tsan --target ncc_cli test_module_threads test_jit_threads test_aot_rt
#   ctest -L tsan
if(NCC_TSAN)
  # tsan.supp: libLLVM's own (uninstrumented) synchronisation
  set(NCC_TSAN_ENV "TSAN_OPTIONS=halt_on_error=1 second_deadlock_stack=1 suppressions=${CMAKE_CURRENT_SOURCE_DIR}/tsan.supp")
  set_tests_properties(unit.test_module_threads PROPERTIES
    LABELS "unit;tsan" ENVIRONMENT "${NCC_TEST_ENV};${NCC_TSAN_ENV}")
  if(NCC_LLVM)
    set_tests_properties(unit.test_jit_threads PROPERTIES
      LABELS "unit;tsan" ENVIRONMENT "${NCC_TEST_ENV};${NCC_TSAN_ENV}")
    set_tests_properties(aot.safety PROPERTIES LABELS "aot;tsan"
      ENVIRONMENT "${NCC_TEST_ENV};${NCC_TSAN_ENV};NCC_TSAN_CC=${CMAKE_C_COMPILER}")
    # weights packed on several threads while kernels compile
    add_test(NAME tsan.pack_threads
      COMMAND ncc_cli bench ${CMAKE_CURRENT_SOURCE_DIR}/tsan/pack.nir --iters 1 --warmup 0
              --compile-threads=2)
    set_tests_properties(tsan.pack_threads PROPERTIES LABELS tsan
      ENVIRONMENT "${NCC_TEST_ENV};${NCC_TSAN_ENV}")
  endif()
endif()
