# tests/aot_safety.cmake — the generated library's checked sizes, its
# outputs after a failed run and its thread contract (label aot;
# tests/aot/test_aot_safety.py around tests/aot/safety_main.c).
if(NCC_LLVM)
  add_test(NAME aot.safety
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/aot/test_aot_safety.py)
  set_tests_properties(aot.safety PROPERTIES
    ENVIRONMENT "${NCC_TEST_ENV}" LABELS aot TIMEOUT 300)
endif()
