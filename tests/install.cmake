# tests/install.cmake — the install tree and pkg-config file work for a
# C program that embeds libncc; its whole output is checked against
# onnxruntime (77, skipped, without numpy/onnxruntime).
set(NCC_SAN_FLAGS "")
if(NCC_SANITIZE)
  set(NCC_SAN_FLAGS "-fsanitize=address,undefined")
endif()
add_test(NAME install.pkgconfig COMMAND bash ${CMAKE_SOURCE_DIR}/tests/install/run.sh)
set_tests_properties(install.pkgconfig PROPERTIES LABELS install
  ENVIRONMENT "${NCC_TEST_ENV};CC=${CMAKE_C_COMPILER};SAN_FLAGS=${NCC_SAN_FLAGS}"
  SKIP_RETURN_CODE 77 DEPENDS "" )
