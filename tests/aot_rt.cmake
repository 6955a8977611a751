# tests/aot_rt.cmake — the AOT runtime (codegen/llvm/aot_rt/, embedded into
# every --emit=lib library) compiled as real C in this build, under
# -Werror and the sanitizers, around two hand-made models in one program
# (label aot, unit; tests/aot_rt/). The models' files get the flags the
# generated glue is checked with (tests/aot/test_aot.py).
add_executable(test_aot_rt ${CMAKE_CURRENT_SOURCE_DIR}/aot_rt/test_aot_rt.c
  ${CMAKE_CURRENT_SOURCE_DIR}/aot_rt/toy_a.c ${CMAKE_CURRENT_SOURCE_DIR}/aot_rt/toy_b.c)
target_include_directories(test_aot_rt PRIVATE ${CMAKE_SOURCE_DIR} ${CMOCKA_INCLUDE_DIRS})
target_link_libraries(test_aot_rt PRIVATE ${CMOCKA_LIBRARIES} Threads::Threads)
set_source_files_properties(${CMAKE_CURRENT_SOURCE_DIR}/aot_rt/toy_a.c
  ${CMAKE_CURRENT_SOURCE_DIR}/aot_rt/toy_b.c PROPERTIES
  COMPILE_OPTIONS "-pedantic;-Wshadow;-Wunused-parameter")
add_test(NAME unit.aot_rt COMMAND test_aot_rt)
set_tests_properties(unit.aot_rt PROPERTIES ENVIRONMENT "${NCC_TEST_ENV}" LABELS "aot;unit")
# In the ThreadSanitizer build (tests/tsan.cmake) the runtime's thread pool
# and its BUSY guard run under -fsanitize=thread too.
if(NCC_TSAN)
  set_tests_properties(unit.aot_rt PROPERTIES LABELS "aot;unit;tsan"
    ENVIRONMENT "${NCC_TEST_ENV};TSAN_OPTIONS=halt_on_error=1 second_deadlock_stack=1")
endif()
