# tests/mutation.cmake — tests/py/mutation_cases.py: small models, each aimed
# at a survivor of mutation testing (tools/mutate.py, docs/TESTING.md),
# checked against ONNX Runtime on ref and, with LLVM, on cpu. Fast on purpose:
# tools/mutate.py runs them on every mutant of the files they guard.
add_test(NAME python.mutation_cases
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/mutation_cases.py)
set_tests_properties(python.mutation_cases PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}" LABELS python TIMEOUT 300 SKIP_RETURN_CODE 77)
if(NCC_LLVM)
  add_test(NAME python.mutation_cases.cpu
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/mutation_cases.py
                   --target cpu)
  set_tests_properties(python.mutation_cases.cpu PROPERTIES
    ENVIRONMENT "${NCC_TEST_ENV}" LABELS "python;cpu" TIMEOUT 300 SKIP_RETURN_CODE 77)
endif()
