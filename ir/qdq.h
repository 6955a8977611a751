/* ir/qdq.h — the elementwise form of QuantizeLinear and DequantizeLinear:
 * which of their nodes compute as one elementwise op (the cpu backend's
 * compiled, fusable kernels; passes/fusion.c and codegen/lower_formula.c
 * both ask), and how their per-axis scale and zero point broadcast. */
#ifndef NCC_IR_QDQ_H
#define NCC_IR_QDQ_H

#include "ir.h"

/* Whether n is a QuantizeLinear (f32 -> u8/i8) or DequantizeLinear (u8/i8
 * -> f32) with an f32 scale and a zero point of the integer side's dtype,
 * per tensor or per axis (1-D along a static axis; no blocks). *axis: the
 * normalized axis when per axis, else -1. */
bool ncc_qdq_eltwise(const ncc_node *n, int *axis);

/* The shape input i of such a node is read with when broadcast to its
 * output: its own for per-tensor parameters and for input 0, else the
 * output's rank with 1 in every dim but the axis (numpy broadcasting then
 * indexes a 1-D per-axis parameter right). */
ncc_shape ncc_qdq_operand_shape(const ncc_node *n, int axis, int i);

#endif /* NCC_IR_QDQ_H */
