# tests/f16.cmake — the checksums embedded in tests/unit/test_f16.c are
# numpy's (tests/f16/f16_oracle.py recomputes them). Needs python3 + numpy.
add_test(NAME python.f16_oracle
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/f16/f16_oracle.py
                 ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_f16.c)
set_tests_properties(python.f16_oracle PROPERTIES LABELS python TIMEOUT 120)
