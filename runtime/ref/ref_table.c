/* runtime/ref/ref_table.c — the reference interpreter's kernel table,
 * expanded from ir/ops.def so that every op has exactly one kernel
 * (a missing ncc_ref_<ID> is a link error, not a run-time surprise). */
#include "ref.h"

const ncc_ref_kernel ncc_ref_kernels[NCC_OP_COUNT] = {
#define NCC_OP(id, nm, mi, ma, mo, mao, fl, rule) [NCC_OP_##id] = ncc_ref_##id,
#include "../../ir/ops.def"
#undef NCC_OP
};
