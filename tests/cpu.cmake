# tests/cpu.cmake — the cpu backend's extra registrations: rerun the op
# conformance test with narrower vectors, so the AVX2 (8 lanes), SSE/NEON
# (4) and scalar (1) code paths are checked on an AVX-512 host too.
if(NCC_LLVM AND TARGET test_cpu_ops)
  foreach(w 8 4 1)
    add_test(NAME unit.test_cpu_ops.w${w} COMMAND test_cpu_ops)
    set_tests_properties(unit.test_cpu_ops.w${w} PROPERTIES
      ENVIRONMENT "${NCC_TEST_ENV};NCC_VECTOR_WIDTH=${w}" LABELS "unit;cpu")
  endforeach()
endif()
