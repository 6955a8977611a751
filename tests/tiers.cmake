# tests/tiers.cmake — every compile-speed tier (ncc_options.codegen_level,
# `--codegen-opt`, codegen/llvm/pipeline.c) computes the same results:
#   ops.cpu.tier0/1/2  the op-case table on the cpu JIT at the host's width
#                      and tiers 0..2, against ref (tier 3, the library's
#                      default, is ops.cpu.w*: tests/ops.cmake)
#   python.diff_ort.cpu.tier0/1/2  diff_ort's cases through `ncc run` at
#                      each tier (NCC_CODEGEN_OPT), against ONNX Runtime
#                      and ref (label release: tools/test.sh runs them in
#                      the release build, ~4 min each under ASan; the
#                      sanitizers still see every tier in ops.cpu.tier*)
#   tiers.cli          --codegen-opt and NCC_CODEGEN_OPT reach the library,
#                      bad values, resblock at every tier (tiers/)
if(NOT TARGET ncc OR NOT NCC_LLVM)
  return()
endif()
foreach(t 0 1 2)
  ncc_ops_test(ops.cpu.tier${t} cpu ARGS --target=cpu --codegen-level=${t})
  add_test(NAME python.diff_ort.cpu.tier${t}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/diff_ort.py
                   --target cpu --oracle ort,ref)
  set_tests_properties(python.diff_ort.cpu.tier${t} PROPERTIES
    ENVIRONMENT "${NCC_TEST_ENV};NCC_CODEGEN_OPT=${t}"
    LABELS "python;cpu;tiers;release"
    TIMEOUT 1800
    SKIP_RETURN_CODE 77)
endforeach()
add_test(NAME tiers.cli
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/tiers/test_tiers_cli.py)
set_tests_properties(tiers.cli PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}" LABELS "cli;cpu;tiers" TIMEOUT 300)
