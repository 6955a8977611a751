# tests/filecheck.cmake — FileCheck tests of the text IR: one ctest test per
# tests/filecheck/**/*.nir (subdirectories too, so each pass can keep its
# tests in its own folder), run by tests/filecheck/run.py, label filecheck.
# The test name is filecheck.<path with '/' as '.'>, e.g. filecheck.rt_conv.
file(GLOB_RECURSE NCC_FILECHECK_TESTS CONFIGURE_DEPENDS
  ${CMAKE_CURRENT_SOURCE_DIR}/filecheck/*.nir)
foreach(test ${NCC_FILECHECK_TESTS})
  # a test of an LLVM target ('// REQUIRES: target=cpu|x86_64|aarch64') is
  # registered only where that target is built, like the other cpu suites
  # (a skip without a hardware reason fails strict CI)
  file(STRINGS ${test} requires REGEX "^// REQUIRES: target=(cpu|x86_64|aarch64)")
  if(requires AND NOT NCC_LLVM)
    continue()
  endif()
  file(RELATIVE_PATH rel ${CMAKE_CURRENT_SOURCE_DIR}/filecheck ${test})
  string(REGEX REPLACE "\\.nir$" "" name ${rel})
  string(REPLACE "/" "." name ${name})
  add_test(NAME filecheck.${name}
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/filecheck/run.py ${test})
  set_tests_properties(filecheck.${name} PROPERTIES
    ENVIRONMENT "${NCC_TEST_ENV}" LABELS filecheck SKIP_RETURN_CODE 77)
endforeach()
