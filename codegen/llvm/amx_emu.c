/* codegen/llvm/amx_emu.c — the AMX tile instructions in plain C, for
 * running the tile kernels on a host without AMX (ncc_options.amx_emulate,
 * NCC_AMX=emulate).
 *
 * The tile kernels (lower_amx.c, lower_qconv.c, lower_qbmm.c,
 * lower_matmul.c, lower_bconv_amx.c) are otherwise tested only where the
 * host has AMX. With emulation the same kernel IR is lowered, and the
 * LLVM emitter turns each tile instruction into a call here (codegen/llvm
 * /emit.c), linked into the JIT by name (jit.c): the kernels' indexing,
 * packing, padding and epilogues then run, and are checked against
 * onnxruntime, on any host. Slow (a scalar loop per instruction): a test
 * mode, never a fast path.
 *
 * A tile is the emitter's <256 x i32> value: 16 rows of 64 bytes, row m
 * at byte 64 m. The arithmetic is Intel's (SDM, "TDPBSSD/TDPBSUD/TDPBUSD/
 * TDPBUUD" and "TDPBF16PS"): i32 sums wrap; bf16 products are exact in
 * f32 and added to the accumulator one at a time, the even element of a
 * pair first. (Denormals, which the hardware flushes, do not occur in
 * the tests.) */
#include <string.h>

#include "llvm.h"

void ncc_amx_emu_load(int32_t *t, const uint8_t *p, int64_t stride, int64_t rows, int64_t colsb) {
  memset(t, 0, 1024);
  for (int64_t m = 0; m < rows; m++) memcpy((uint8_t *)t + 64 * m, p + m * stride, (size_t)colsb);
}

void ncc_amx_emu_store(const int32_t *t, uint8_t *p, int64_t stride, int64_t rows,
                       int64_t colsb) {
  for (int64_t m = 0; m < rows; m++) memcpy(p + m * stride, (const uint8_t *)t + 64 * m, (size_t)colsb);
}

static float bf16_at(const int32_t *t, int64_t row, int64_t i) {
  uint16_t h;
  memcpy(&h, (const uint8_t *)t + 64 * row + 2 * i, 2);
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static int32_t byte_at(const int32_t *t, int64_t row, int64_t i, bool is_signed) {
  uint8_t v = ((const uint8_t *)t)[64 * row + i];
  return is_signed ? (int32_t)(int8_t)v : (int32_t)v;
}

/* c += a * b: op is kir_tile_op (KIR_TILE_DPBUSD, ...); c is rows x
 * colsb bytes, a rows x kbytes, b kbytes / 4 rows x colsb. */
void ncc_amx_emu_dp(int64_t op, int32_t *c, const int32_t *a, const int32_t *b, int64_t rows,
                    int64_t colsb, int64_t kbytes) {
  int64_t cols = colsb / 4, kq = kbytes / 4;
  if (op == KIR_TILE_DPBF16PS) {
    for (int64_t m = 0; m < rows; m++)
      for (int64_t n = 0; n < cols; n++) {
        float acc;
        memcpy(&acc, &c[16 * m + n], 4);
        for (int64_t k = 0; k < kq; k++) {
          acc += bf16_at(a, m, 2 * k) * bf16_at(b, k, 2 * n);
          acc += bf16_at(a, m, 2 * k + 1) * bf16_at(b, k, 2 * n + 1);
        }
        memcpy(&c[16 * m + n], &acc, 4);
      }
    return;
  }
  bool as = op == KIR_TILE_DPBSSD || op == KIR_TILE_DPBSUD;
  bool bs = op == KIR_TILE_DPBSSD || op == KIR_TILE_DPBUSD;
  for (int64_t m = 0; m < rows; m++)
    for (int64_t n = 0; n < cols; n++) {
      uint32_t acc = (uint32_t)c[16 * m + n];
      for (int64_t k = 0; k < kq; k++)
        for (int64_t j = 0; j < 4; j++)
          acc += (uint32_t)(byte_at(a, m, 4 * k + j, as) * byte_at(b, k, 4 * n + j, bs));
      c[16 * m + n] = (int32_t)acc;
    }
}
