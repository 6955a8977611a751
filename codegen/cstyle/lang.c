/* codegen/cstyle/lang.c — the OpenCL C and CUDA C dialects of the one
 * renderer, as data only (render.c reads these tables; it has no per-dialect
 * branch). Math functions are the full-precision ones (no native_ / __
 * intrinsics), so results stay within the conformance tolerances of the
 * reference interpreter.
 */
#include <string.h>

#include "cstyle.h"

#define TYPES(i64, i8, u8)                                                     \
  {[NCC_DT_F32] = "float", [NCC_DT_F64] = "double", [NCC_DT_I8] = i8,          \
   [NCC_DT_U8] = u8,       [NCC_DT_I32] = "int",    [NCC_DT_I64] = i64,        \
   [NCC_DT_BOOL] = "int"}
#define MEM_TYPES(i64, i8, u8)                                                 \
  {[NCC_DT_F32] = "float", [NCC_DT_F64] = "double", [NCC_DT_I8] = i8,          \
   [NCC_DT_U8] = u8,       [NCC_DT_I32] = "int",    [NCC_DT_I64] = i64,        \
   [NCC_DT_BOOL] = u8}
#define MATH(sfx)                                                              \
  {[KIR_SQRT] = "sqrt" sfx,  [KIR_EXP] = "exp" sfx,   [KIR_LOG] = "log" sfx,   \
   [KIR_LOG1P] = "log1p" sfx, [KIR_ERF] = "erf" sfx,  [KIR_TANH] = "tanh" sfx, \
   [KIR_FLOOR] = "floor" sfx, [KIR_ABS] = "fabs" sfx, [KIR_POW] = "pow" sfx,   \
   [KIR_REM] = "fmod" sfx,   [KIR_CEIL] = "ceil" sfx, [KIR_ROUND] = "rint" sfx, \
   [KIR_SIN] = "sin" sfx,    [KIR_COS] = "cos" sfx,   [KIR_TAN] = "tan" sfx,    \
   [KIR_ASIN] = "asin" sfx,  [KIR_ACOS] = "acos" sfx, [KIR_ATAN] = "atan" sfx,  \
   [KIR_SINH] = "sinh" sfx,  [KIR_COSH] = "cosh" sfx, [KIR_ASINH] = "asinh" sfx, \
   [KIR_ACOSH] = "acosh" sfx, [KIR_ATANH] = "atanh" sfx,                        \
   [KIR_RBF16] = "ncc_rbf16", [KIR_RF16] = "ncc_rf16"}
/* KIR_RBF16 / KIR_RF16 (f32 only): rounding on the bits as in
 * codegen/llvm/emit.c, written once for both dialects over their bit-cast
 * and qualifier words. */
#define ROUND_NARROW(Q, U, F, I)                                                \
  Q " float ncc_rbf16(float x) {\n"                                            \
  "  unsigned int b = " U "(x);\n"                                           \
  "  b = (b + 0x7fffu + ((b >> 16) & 1u)) & 0xffff0000u;\n"                   \
  "  return x != x ? x : " F "(b);\n"                                         \
  "}\n" Q " float ncc_rf16(float x) {\n"                                     \
  "  if (x != x) return x;\n"                                                \
  "  if (fabs" I "(x) < 6.103515625e-05f)\n"                                \
  "    return rint" I "(x * 16777216.0f) * 5.9604644775390625e-08f;\n"        \
  "  unsigned int b = " U "(x);\n"                                           \
  "  float y = " F "((b + 0xfffu + ((b >> 13) & 1u)) & 0xffffe000u);\n"       \
  "  return fabs" I "(y) > 65504.0f ? copysign" I "(NCC_INF, x) : y;\n"       \
  "}\n"

static const ncc_cstyle_lang opencl = {
    .name = "opencl",
    .prelude = "#ifdef cl_khr_fp64\n"
               "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
               "#endif\n"
               "#define NCC_INF INFINITY\n"
               "#define NCC_NAN NAN\n"
               ROUND_NARROW("static inline", "as_uint", "as_float", ""),
    .kernel_decl = "__kernel void",
    .exact_local_attr = "__attribute__((reqd_work_group_size(%d, 1, 1)))",
    .fn_qual = "static inline",
    .f64_guard = "#ifdef cl_khr_fp64",
    .buf_qual = "__global ",
    .restrict_kw = "restrict",
    .local_qual = "__local",
    .barrier = "barrier(CLK_LOCAL_MEM_FENCE);",
    .unroll_pragma = "#pragma unroll",
    .global_id = "((long)get_global_id(0))",
    .global_size = "((long)get_global_size(0))",
    .group_id = "((long)get_group_id(0))",
    .num_groups = "((long)get_num_groups(0))",
    .local_id = "((long)get_local_id(0))",
    .local_size = "((long)get_local_size(0))",
    .type = TYPES("long", "char", "uchar"),
    .mem_type = MEM_TYPES("long", "char", "uchar"),
    .i64_suffix = "L",
    .fn_f32 = MATH(""),
    .fn_f64 = MATH(""),
    .fma_f32 = "fma",
    .fma_f64 = "fma",
};

static const ncc_cstyle_lang cuda = {
    .name = "cuda",
    .prelude = "#define NCC_INF __int_as_float(0x7f800000)\n"
               "#define NCC_NAN __int_as_float(0x7fffffff)\n"
               ROUND_NARROW("static __device__ __forceinline__", "__float_as_uint",
                            "__uint_as_float", "f"),
    .kernel_decl = "extern \"C\" __global__ void",
    .exact_local_attr = "__launch_bounds__(%d)",
    .fn_qual = "static __device__ __forceinline__",
    .f64_guard = NULL,
    .buf_qual = "",
    .restrict_kw = "__restrict__",
    .local_qual = "__shared__",
    .barrier = "__syncthreads();",
    .unroll_pragma = "#pragma unroll",
    .global_id = "((long long)blockIdx.x * blockDim.x + threadIdx.x)",
    .global_size = "((long long)gridDim.x * blockDim.x)",
    .group_id = "((long long)blockIdx.x)",
    .num_groups = "((long long)gridDim.x)",
    .local_id = "((long long)threadIdx.x)",
    .local_size = "((long long)blockDim.x)",
    .type = TYPES("long long", "signed char", "unsigned char"),
    .mem_type = MEM_TYPES("long long", "signed char", "unsigned char"),
    .i64_suffix = "LL",
    .fn_f32 = MATH("f"),
    .fn_f64 = MATH(""),
    .fma_f32 = "fmaf",
    .fma_f64 = "fma",
};

static const ncc_cstyle_lang *const dialects[] = {&opencl, &cuda};

const ncc_cstyle_lang *ncc_cstyle_lang_find(const char *name) {
  for (size_t i = 0; name && i < sizeof dialects / sizeof dialects[0]; i++)
    if (strcmp(dialects[i]->name, name) == 0) return dialects[i];
  return NULL;
}
