# tests/layering.cmake — the include rules between the layers
# (docs/ARCHITECTURE.md): layering.includes checks the tree,
# layering.self_test shows the check fails on planted forbidden includes.
add_test(NAME layering.includes
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/layering/check_layers.py
                 ${CMAKE_SOURCE_DIR})
add_test(NAME layering.self_test
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/layering/test_check_layers.py)
set_tests_properties(layering.includes layering.self_test PROPERTIES LABELS layering TIMEOUT 60)
