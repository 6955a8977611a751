# tests/zoo.cmake — the model zoo (label zoo, tests/zoo/README.md): 34 real
# architectures from torch, torchvision and transformers with seeded random
# weights, exported once to ONNX into a cache ($NCC_ZOO_CACHE, else
# ~/.cache/ncc-zoo/<torch version>/) by zoo.export, then run by `ncc run` on
# ref (zoo.ref) and cpu (zoo.cpu) and compared with torch's outputs.  A model
# that tests/zoo/EXPECTED says passes and does not is a failure; models that
# newly pass are reported.  zoo.selftest shows the comparison can fail.
# Exit 77 (skipped) without torch/torchvision/transformers
# (tools/requirements-zoo.txt, installed by tools/setup.sh).
set(NCC_ZOO_DIR ${CMAKE_CURRENT_SOURCE_DIR}/zoo)
add_test(NAME zoo.export
         COMMAND ${Python3_EXECUTABLE} ${NCC_ZOO_DIR}/export.py --allow-failures)
# a cold cache exports every model (~2 min idle, ~8 on a loaded 2-core box)
set_tests_properties(zoo.export PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}" LABELS zoo TIMEOUT 1800 SKIP_RETURN_CODE 77
  FIXTURES_SETUP zoo_cache)
set(NCC_ZOO_TARGETS ref)
if(NCC_LLVM)
  list(APPEND NCC_ZOO_TARGETS cpu)
endif()
foreach(t ${NCC_ZOO_TARGETS})
  add_test(NAME zoo.${t}
           COMMAND ${Python3_EXECUTABLE} ${NCC_ZOO_DIR}/run_zoo.py --target ${t}
                   --json ${CMAKE_BINARY_DIR}/zoo-${t}.json
                   --markdown ${CMAKE_BINARY_DIR}/zoo-${t}.md)
  set_tests_properties(zoo.${t} PROPERTIES
    ENVIRONMENT "${NCC_TEST_ENV}" LABELS zoo TIMEOUT 1800 SKIP_RETURN_CODE 77
    FIXTURES_REQUIRED zoo_cache)
endforeach()
add_test(NAME zoo.selftest
         COMMAND ${Python3_EXECUTABLE} ${NCC_ZOO_DIR}/test_runner.py)
set_tests_properties(zoo.selftest PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}" LABELS zoo TIMEOUT 600 SKIP_RETURN_CODE 77
  FIXTURES_REQUIRED zoo_cache)
