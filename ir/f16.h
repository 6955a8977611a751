/* ir/f16.h — the one IEEE binary16 and bfloat16 conversion of ncc (ir/f16.c), used by
 * the text IR, the reference kernels and constant folding alike.
 */
#ifndef NCC_IR_F16_H
#define NCC_IR_F16_H

#include <stdint.h>

/* f16 bits -> f32 / f64, exact; a NaN keeps its sign and payload. */
float ncc_f16_to_f32(uint16_t h);
double ncc_f16_to_f64(uint16_t h);

/* f32 / f64 -> f16 bits in one rounding, to nearest, ties to even;
 * overflow gives inf, a NaN keeps its sign and the top 10 payload bits
 * (a payload that truncates to zero becomes 1, so it stays a NaN). */
uint16_t ncc_f16_from_f32(float f);
uint16_t ncc_f16_from_f64(double d);

/* bfloat16 (the top half of an f32) the same way: to f32/f64 exact,
 * from f32/f64 in one rounding to nearest even, overflow to inf; a NaN
 * stays a (quiet) NaN with its sign. */
float ncc_bf16_to_f32(uint16_t h);
double ncc_bf16_to_f64(uint16_t h);
uint16_t ncc_bf16_from_f32(float f);
uint16_t ncc_bf16_from_f64(double d);

#endif
