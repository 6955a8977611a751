# tests/fusion.cmake — rerun the fused-kernel tests with narrower vectors
# (AVX2 8 lanes, SSE/NEON 4, scalar 1), so every epilogue and row-group
# path is checked on an AVX-512 host too; the generated-block cases run
# only in the main test (unit.test_fusion).
if(NCC_LLVM AND TARGET test_fusion)
  foreach(w 8 4 1)
    # widths 4 and 1 run in the release stage of tools/test.sh (label
    # release): under ASan the sweep cost CI minutes over its budget
    set(labels "unit;cpu;fusion")
    if(NOT w EQUAL 8)
      list(APPEND labels release)
    endif()
    add_test(NAME unit.test_fusion.w${w} COMMAND test_fusion)
    set_tests_properties(unit.test_fusion.w${w} PROPERTIES
      ENVIRONMENT "${NCC_TEST_ENV};NCC_VECTOR_WIDTH=${w};NCC_FUSION_NO_BLOCKS=1"
      LABELS "${labels}")
  endforeach()
endif()
