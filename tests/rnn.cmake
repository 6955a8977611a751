# tests/rnn.cmake — the recurrent and control-flow family: RNN, GRU,
# LSTM in layout 1 against onnxruntime (which lacks it), the If/Loop node
# cases re-stamped to opset 13, bad models with subgraphs (exit 2, one
# `ncc: error:` line) and refusals (exit 3), `ncc check` inside bodies.
# The op-by-op checks against onnxruntime are tests/py/ortgen_rnn.py, run
# by python.diff_ort*; the text IR of subgraphs is tests/filecheck/rt_control.nir.
add_test(NAME rnn.control
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/test_rnn_control.py)
set_tests_properties(rnn.control PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}" LABELS "python;rnn" TIMEOUT 600 SKIP_RETURN_CODE 77)
if(NCC_LLVM)
  add_test(NAME rnn.control.cpu
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/py/test_rnn_control.py
                   --target cpu)
  set_tests_properties(rnn.control.cpu PROPERTIES
    ENVIRONMENT "${NCC_TEST_ENV}" LABELS "python;rnn;cpu" TIMEOUT 600 SKIP_RETURN_CODE 77)
endif()
