# tests/python.cmake — the Python oracle suites (label `python`): ONNX node
# conformance, differential tests against ONNX Runtime, whole networks.
# Each runs `$NCC run --target=ref` (the NCC in ${NCC_TEST_ENV}); exit 77
# means numpy/onnx/onnxruntime are missing (see tools/requirements.txt).
set(NCC_PY_TESTS node_conformance diff_ort real_nets)
foreach(t ${NCC_PY_TESTS})
  add_test(NAME python.${t}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/${t}.py)
  set_tests_properties(python.${t} PROPERTIES
    ENVIRONMENT "${NCC_TEST_ENV}"
    LABELS python
    TIMEOUT 900
    SKIP_RETURN_CODE 77)
endforeach()
