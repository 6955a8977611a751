# tests/fuzz.cmake — libFuzzer targets (-DNCC_FUZZ=ON, clang only; included
# by tests/CMakeLists.txt). Every tests/fuzz/fuzz_AREA.c becomes an executable
# fuzz_AREA built with -fsanitize=fuzzer,address,undefined against libncc,
# and a ctest test fuzz.AREA runs it for a short, reproducible while (fixed
# seed) on a copy of its seed corpus tests/fuzz/corpus_AREA/ in the build
# dir (libFuzzer adds the inputs it finds to the corpus directory it is
# given, and the source tree must stay clean). Long runs: docs/FUZZING.md.
if(NOT NCC_FUZZ)
  return()
endif()
if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "NCC_FUZZ needs clang (-DCMAKE_C_COMPILER=clang-19)")
endif()
if(NOT NCC_SANITIZE)
  message(FATAL_ERROR "NCC_FUZZ needs -DNCC_SANITIZE=ON (libncc is fuzzed "
                      "with ASan and UBSan)")
endif()

# Coverage instrumentation for the library itself, so the fuzzer sees the
# branches it takes inside libncc (not only in the target's own file).
target_compile_options(ncc PRIVATE -fsanitize=fuzzer-no-link)

set(NCC_FUZZ_SECONDS 20 CACHE STRING "Seconds each fuzz.* ctest test runs")
set(NCC_FUZZ_FLAGS -fsanitize=fuzzer,address,undefined)

file(GLOB NCC_FUZZ_SOURCES CONFIGURE_DEPENDS
     ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_*.c)
foreach(src ${NCC_FUZZ_SOURCES})
  get_filename_component(target ${src} NAME_WE) # fuzz_onnx
  string(REGEX REPLACE "^fuzz_" "" area ${target}) # onnx
  add_executable(${target} ${src})
  target_include_directories(${target} PRIVATE ${CMAKE_SOURCE_DIR})
  target_compile_options(${target} PRIVATE ${NCC_FUZZ_FLAGS})
  target_link_options(${target} PRIVATE ${NCC_FUZZ_FLAGS})
  target_link_libraries(${target} PRIVATE ncc)

  set(seeds ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus_${area})
  set(work ${CMAKE_CURRENT_BINARY_DIR}/fuzz_corpus_${area})
  set(artifacts ${CMAKE_CURRENT_BINARY_DIR}/fuzz_artifacts_${area})
  add_test(NAME fuzz.${area}.corpus
    COMMAND ${CMAKE_COMMAND} -DSEEDS=${seeds} -DWORK=${work}
            -DARTIFACTS=${artifacts} -P ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/copy_corpus.cmake)
  set_tests_properties(fuzz.${area}.corpus PROPERTIES
    FIXTURES_SETUP fuzz_corpus_${area} LABELS fuzz)
  add_test(NAME fuzz.${area}
    COMMAND ${target} -max_total_time=${NCC_FUZZ_SECONDS} -seed=1
            -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
            -artifact_prefix=${artifacts}/ ${work})
  set_tests_properties(fuzz.${area} PROPERTIES
    ENVIRONMENT "${NCC_TEST_ENV}"
    FIXTURES_REQUIRED fuzz_corpus_${area}
    LABELS fuzz
    TIMEOUT 300)
endforeach()
