/* codegen/kir_short.h — shorthands for the index arithmetic of a lowering
 * (kir.h's builders on the kernel `k` in scope), so the kernel-building
 * code reads like the loop nest it builds. Include in .c files only,
 * after the other headers. */
#ifndef NCC_KIR_SHORT_H
#define NCC_KIR_SHORT_H

#define I(v) kir_const_i(k, (v))
#define ADD(a, b) kir_add(k, (a), (b))
#define MUL(a, b) kir_mul(k, (a), (b))
#define DIV(a, b) kir_bin(k, KIR_DIV, (a), (b))
#define REM(a, b) kir_bin(k, KIR_REM, (a), (b))
#define AND(a, b) kir_bin(k, KIR_AND, (a), (b))
#define LT(a, b) kir_bin(k, KIR_LT, (a), (b))

#endif
