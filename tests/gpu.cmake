# tests/gpu.cmake — the GPU targets (docs/GPU.md). Label `opencl`: every
# generated block on the OpenCL device (PoCL here) against ref, the device
# executor (test_gpu_module.c) and the error paths. Label `cuda`: the
# blocks' and the module test's kernels through NVRTC to PTX, assembled by
# ptxas for sm_90 (no GPU needed); runs on a CUDA device when there is one
# (skipped otherwise); the error paths; the cuBLAS benchmark of
# tools/gpu-check.sh builds. Every op against ref on these targets is
# ops.opencl, ops.cuda and ops.cuda.ptx (tests/ops.cmake).
#
# PoCL compiles kernels slowly: its kernel cache lives in the build tree
# (POCL_CACHE_DIR), so only the first run pays. Under ASan the PoCL/LLVM/
# NVRTC allocations that live until exit are suppressed (gpu/lsan.supp);
# leak checking of ncc's own allocations stays on.
if(NOT TARGET ncc)
  return()
endif()
set(NCC_GPU_DIR ${CMAKE_CURRENT_SOURCE_DIR}/gpu)
set(NCC_GPU_ENV ${NCC_TEST_ENV}
  "LSAN_OPTIONS=suppressions=${NCC_GPU_DIR}/lsan.supp:print_suppressions=0"
  "POCL_CACHE_DIR=${CMAKE_BINARY_DIR}/pocl-cache")
set(NCC_PTXAS "${NCC_CUDA_HOME}/bin/ptxas")
if(NOT NCC_CUDA_HOME)
  set(NCC_PTXAS /usr/local/cuda/bin/ptxas)
endif()

add_executable(test_gpu_module ${NCC_GPU_DIR}/test_gpu_module.c)
target_include_directories(test_gpu_module PRIVATE ${CMAKE_SOURCE_DIR} ${CMOCKA_INCLUDE_DIRS})
target_link_libraries(test_gpu_module PRIVATE ncc ${CMOCKA_LIBRARIES})

# The ncc side of the SGEMM benchmark (tools/gpu-check.sh); a smoke run here.
add_executable(ncc_gpu_sgemm ${NCC_GPU_DIR}/ncc_sgemm.c)
target_include_directories(ncc_gpu_sgemm PRIVATE ${CMAKE_SOURCE_DIR})
target_link_libraries(ncc_gpu_sgemm PRIVATE ncc)

function(ncc_gpu_test name labels)
  cmake_parse_arguments(T "" "" "COMMAND;ENV" ${ARGN})
  add_test(NAME ${name} COMMAND ${T_COMMAND})
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "${NCC_GPU_ENV};${T_ENV}"
    LABELS "${labels}" SKIP_RETURN_CODE 77 TIMEOUT 600)
endfunction()

if(NCC_OPENCL_INCLUDE AND NCC_OPENCL)
  ncc_gpu_test(gpu.opencl.module opencl COMMAND test_gpu_module ENV NCC_GPU_TARGET=opencl)
  ncc_gpu_test(gpu.opencl.blocks opencl COMMAND ${Python3_EXECUTABLE}
    ${NCC_GPU_DIR}/gpu_blocks.py --target opencl --skip-unavailable)
  ncc_gpu_test(gpu.opencl.errors opencl COMMAND ${Python3_EXECUTABLE}
    ${NCC_GPU_DIR}/gpu_errors.py --target opencl)
  ncc_gpu_test(gpu.opencl.sgemm opencl COMMAND ncc_gpu_sgemm --target opencl --n 96 --iters 2)
endif()
if(NCC_CUDA)
  ncc_gpu_test(gpu.cuda.ptx.module cuda COMMAND test_gpu_module
    ENV NCC_GPU_TEST_MODE=ptx PTXAS=${NCC_PTXAS})
  ncc_gpu_test(gpu.cuda.ptx.blocks cuda COMMAND ${Python3_EXECUTABLE}
    ${NCC_GPU_DIR}/gpu_blocks.py --mode ptx --ptxas ${NCC_PTXAS})
  ncc_gpu_test(gpu.cuda.errors cuda COMMAND ${Python3_EXECUTABLE}
    ${NCC_GPU_DIR}/gpu_errors.py --target cuda)
  # on a machine with a CUDA device these run for real (77: skipped)
  ncc_gpu_test(gpu.cuda.module cuda COMMAND test_gpu_module ENV NCC_GPU_TARGET=cuda)
  ncc_gpu_test(gpu.cuda.blocks cuda COMMAND ${Python3_EXECUTABLE}
    ${NCC_GPU_DIR}/gpu_blocks.py --target cuda --skip-unavailable)
  if(NCC_CUDA_INCLUDE)
    # our dlopen declarations (targets/cuda/cuda_api.h) match the toolkit's
    add_library(ncc_cuda_abi_check OBJECT ${NCC_GPU_DIR}/abi_check.c)
    target_include_directories(ncc_cuda_abi_check SYSTEM PRIVATE ${NCC_CUDA_INCLUDE})
    target_include_directories(ncc_cuda_abi_check PRIVATE ${CMAKE_SOURCE_DIR})
    add_dependencies(test_gpu_module ncc_cuda_abi_check)
    # the cuBLAS side of tools/gpu-check.sh builds (with the script's own command)
    ncc_gpu_test(gpu.cuda.cublas_bench_builds cuda COMMAND
      ${CMAKE_SOURCE_DIR}/tools/gpu-check.sh --build-cublas-only ${CMAKE_BINARY_DIR}/gpu-check)
  endif()
endif()
