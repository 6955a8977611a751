# tests/blocked.cmake — rerun the blocked-layout kernel tests
# (tests/unit/test_blocked.c) with narrower vectors (AVX2 8 lanes, SSE/NEON
# 4, scalar 1), so every register-tile choice of codegen/lower_blocked.c is
# checked on an AVX-512 host too.
if(NCC_LLVM AND TARGET test_blocked)
  foreach(w 8 4 1)
    # widths 4 and 1 run in the release stage of tools/test.sh (label
    # release): under ASan the sweep cost CI minutes over its budget
    set(labels "unit;cpu")
    if(NOT w EQUAL 8)
      list(APPEND labels release)
    endif()
    add_test(NAME unit.test_blocked.w${w} COMMAND test_blocked)
    set_tests_properties(unit.test_blocked.w${w} PROPERTIES
      ENVIRONMENT "${NCC_TEST_ENV};NCC_VECTOR_WIDTH=${w}" LABELS "${labels}")
  endforeach()
endif()
