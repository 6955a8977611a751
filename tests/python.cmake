# tests/python.cmake — the Python oracle suites (label `python`): ONNX node
# conformance, differential tests against ONNX Runtime, whole networks.
# Each runs `$NCC run --target=ref` (the NCC in ${NCC_TEST_ENV}); exit 77
# means numpy/onnx/onnxruntime are missing (see tools/requirements.txt) or
# the target cannot run in this build.
set(NCC_PY_TESTS node_conformance diff_ort real_nets)
foreach(t ${NCC_PY_TESTS})
  add_test(NAME python.${t}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/${t}.py)
  set_tests_properties(python.${t} PROPERTIES
    ENVIRONMENT "${NCC_TEST_ENV}"
    LABELS python
    TIMEOUT 1800
    SKIP_RETURN_CODE 77)
endforeach()

# Every pass keeps the numerics of real models (docs/PASSES.md): the bench
# blocks and real networks at -O2 --verify-each against ONNX Runtime, and
# the drift finder (--check-each-pass) at -O3; on ref, about 20 s under ASan.
add_test(NAME python.pass_numerics
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/pass_numerics.py)
set_tests_properties(python.pass_numerics PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}"
  LABELS "python;passes"
  TIMEOUT 600
  SKIP_RETURN_CODE 77)

# The same suites on the LLVM cpu backend (labels `python;cpu`). diff_ort
# compares the cpu target with both ONNX Runtime and `--target=ref` (tight
# per-op tolerances, TOL_CPU_REF in tests/py/diff_ort.py), over its wide
# 1000-element cases too. python.diff_ort.cpu.w4 repeats the cpu-vs-ref
# check of the wide cases (odd sizes, sweeps) with 4-lane kernels (the
# SSE/NEON width), whose tails differ from the host's 16 or 8 lanes; the
# scalar path (NCC_VECTOR_WIDTH=1) is left to ops.cpu.w1 (tests/ops.cmake) to keep
# the suite short (run diff_ort.py by hand with it after emitter changes).
# The w4 rerun carries label release: it runs in tools/test.sh's release
# stage (its C paths are the host width's, which the ASan stage covers).
if(NCC_LLVM)
  set(NCC_PY_CPU_ARGS_node_conformance --target cpu)
  set(NCC_PY_CPU_ARGS_diff_ort --target cpu --oracle ort,ref)
  set(NCC_PY_CPU_ARGS_real_nets --target cpu)
  foreach(t ${NCC_PY_TESTS})
    add_test(NAME python.${t}.cpu
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/${t}.py
                     ${NCC_PY_CPU_ARGS_${t}})
    set_tests_properties(python.${t}.cpu PROPERTIES
      ENVIRONMENT "${NCC_TEST_ENV}"
      LABELS "python;cpu"
      TIMEOUT 1800
      SKIP_RETURN_CODE 77)
  endforeach()
  foreach(w 4)
    add_test(NAME python.diff_ort.cpu.w${w}
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/diff_ort.py
                     --target cpu --oracle ref --wide-only)
    set_tests_properties(python.diff_ort.cpu.w${w} PROPERTIES
      ENVIRONMENT "${NCC_TEST_ENV};NCC_VECTOR_WIDTH=${w}"
      LABELS "python;cpu;release"
      TIMEOUT 1800
      SKIP_RETURN_CODE 77)
  endforeach()
endif()
