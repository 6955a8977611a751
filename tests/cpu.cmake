# tests/cpu.cmake — the cpu backend's extra registrations: rerun the module
# tests (tests/unit/test_cpu_module.c: a chain with a host op and a symbolic
# batch, errors, allocation failure) with narrower vectors, so the AVX2
# (8 lanes), SSE/NEON (4) and scalar (1) code paths are checked on an
# AVX-512 host too. The op cases at each width are ops.cpu.w* (ops.cmake).
if(NCC_LLVM AND TARGET test_cpu_module)
  foreach(w 8 4 1)
    # widths 4 and 1 run in the release stage of tools/test.sh (label
    # release): under ASan the sweep cost CI minutes over its budget
    set(labels "unit;cpu")
    if(NOT w EQUAL 8)
      list(APPEND labels release)
    endif()
    add_test(NAME unit.test_cpu_module.w${w} COMMAND test_cpu_module)
    set_tests_properties(unit.test_cpu_module.w${w} PROPERTIES
      ENVIRONMENT "${NCC_TEST_ENV};NCC_VECTOR_WIDTH=${w}" LABELS "${labels}")
  endforeach()
endif()
