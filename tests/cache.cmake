# tests/cache.cmake — the compile cache: SHA-256 against the standard
# vectors (unit.test_sha256) and the cache's behaviour through `ncc`:
# cold/warm, a kernel shared by two models, damaged entries, an impossible
# directory, concurrent writers, `ncc cache stats|clear`.
if(NCC_LLVM)
  add_test(NAME cache.behaviour
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/cache/test_cache.py)
  set_tests_properties(cache.behaviour PROPERTIES
    ENVIRONMENT "${NCC_TEST_ENV}" LABELS "cli" TIMEOUT 600)
endif()
