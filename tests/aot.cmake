# tests/aot.cmake — ahead-of-time output on this host (label aot):
# `ncc compile --emit=ir|kir|llvm|asm|obj|lib` and the libraries it makes,
# run through a C program and compared with the reference interpreter
# (tests/aot/test_aot.py).
if(NCC_LLVM)
  add_test(NAME aot.compile
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/aot/test_aot.py)
  set_tests_properties(aot.compile PROPERTIES
    ENVIRONMENT "${NCC_TEST_ENV}" LABELS aot TIMEOUT 120)
endif()
