# tests/ops.cmake — the op-case table (tests/ops/op_cases.c) against every
# target, each compared with `ref` (tests/ops/test_backend_ops.c). One
# registration per target that needs its own settings; ops.rest runs every
# other target the library enumerates (ref, and any target added later),
# so a new target is tested without an edit here.
#   ops.cpu.w16/w8/w4/w1  the cpu JIT at 16, 8, 4 lanes and scalar (through
#                         ncc_options.vector_width), so the AVX-512, AVX2,
#                         SSE/NEON and scalar code paths are all checked
#   ops.opencl            PoCL here (label opencl; its kernel cache and
#                         leak suppressions as in tests/gpu.cmake)
#   ops.cuda              a CUDA device (label cuda; 77, skipped, without)
#   ops.cuda.ptx          every case's CUDA C through NVRTC to PTX,
#                         assembled by ptxas for sm_90 (no device needed)
# Run one target or op by hand:
#   build/test_backend_ops --target=opencl --op=Conv   (--list: the cases)
if(NOT TARGET ncc)
  return()
endif()
set(NCC_OPS_DIR ${CMAKE_CURRENT_SOURCE_DIR}/ops)
add_executable(test_backend_ops ${NCC_OPS_DIR}/test_backend_ops.c ${NCC_OPS_DIR}/op_cases.c)
target_include_directories(test_backend_ops PRIVATE ${CMAKE_SOURCE_DIR} ${NCC_OPS_DIR}
  ${CMOCKA_INCLUDE_DIRS})
target_link_libraries(test_backend_ops PRIVATE ncc ${CMOCKA_LIBRARIES})

function(ncc_ops_test name labels)
  cmake_parse_arguments(T "" "" "ARGS;ENV" ${ARGN})
  add_test(NAME ${name} COMMAND test_backend_ops ${T_ARGS})
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "${NCC_TEST_ENV};${T_ENV}"
    LABELS "ops;${labels}" SKIP_RETURN_CODE 77 TIMEOUT 900)
endfunction()

ncc_ops_test(ops.rest ref ARGS --exclude=cpu,opencl,cuda)
if(NCC_LLVM)
  foreach(w 16 8 4 1)
    ncc_ops_test(ops.cpu.w${w} cpu ARGS --target=cpu --vector-width=${w})
  endforeach()
endif()
set(NCC_OPS_GPU_ENV
  "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/gpu/lsan.supp:print_suppressions=0"
  "POCL_CACHE_DIR=${CMAKE_BINARY_DIR}/pocl-cache")
if(NCC_OPENCL_INCLUDE AND NCC_OPENCL)
  ncc_ops_test(ops.opencl opencl ARGS --target=opencl ENV ${NCC_OPS_GPU_ENV})
endif()
if(NCC_CUDA)
  set(NCC_OPS_PTXAS "${NCC_CUDA_HOME}/bin/ptxas")
  if(NOT NCC_CUDA_HOME)
    set(NCC_OPS_PTXAS /usr/local/cuda/bin/ptxas)
  endif()
  ncc_ops_test(ops.cuda cuda ARGS --target=cuda ENV ${NCC_OPS_GPU_ENV})
  ncc_ops_test(ops.cuda.ptx cuda ARGS --target=cuda --emit=cuda,ptx
    "--check=${NCC_OPS_PTXAS} -arch=sm_90 {} -o {}.cubin" ENV ${NCC_OPS_GPU_ENV})
endif()
