# tests/memory.cmake — the memory budget (--max-memory, ncc_set_max_memory)
# from the command line: a 1.4 KB Concat bomb, many big .nir splats,
# activations over a small budget and a symbolic batch bound to a huge value
# fail with exit 4 before allocating (small peak RSS); models within the
# budget still match numpy. Needs python3 with numpy and onnx.
add_test(NAME memory.test_memory
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/memory/test_memory.py)
set_tests_properties(memory.test_memory PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}" LABELS memory TIMEOUT 300)
