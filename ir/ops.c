/* ir/ops.c — the op table, expanded from ir/ops.def. */
#include <string.h>

#include "ir.h"

const ncc_op_info ncc_op_table[NCC_OP_COUNT] = {
#define NCC_OP(id, nm, mi, ma, mo, mao, fl, rule) [NCC_OP_##id] = {nm, mi, ma, mo, mao, fl},
#include "ops.def"
#undef NCC_OP
};

/* Every table indexed by op is expanded from ops.def (this one, the enum,
 * the shape rules of ir/shape.c, the reference kernels of runtime/ref), and a
 * row whose rule or ncc_ref_<ID> kernel is missing fails to compile or link,
 * so a new row needs no count bumped here. Lowerings that do not know an op
 * report it unsupported (docs/ADDING-AN-OP.md). */

bool ncc_op_input_required(ncc_op op, int i) {
  const ncc_op_info *oi = &ncc_op_table[op];
  if (oi->max_in < 0) return true;
  if (i >= oi->min_in) return false;
  unsigned opt = 0;
  switch (op) {
#define NCC_OP(id, nm, mi, ma, mo, mao, fl, rule)
#define NCC_OP_OPTIONAL(id, mask)                                                            \
  case NCC_OP_##id: opt = (mask); break;
#include "ops.def"
#undef NCC_OP_OPTIONAL
#undef NCC_OP
  default: break;
  }
  return i >= 32 || !(opt >> i & 1u);
}

bool ncc_op_is_view(ncc_op op) {
  switch (op) {
  case NCC_OP_RESHAPE:
  case NCC_OP_FLATTEN:
  case NCC_OP_SQUEEZE:
  case NCC_OP_UNSQUEEZE:
  case NCC_OP_IDENTITY: return true;
  default: return false;
  }
}

ncc_op ncc_op_lookup(const char *name, size_t len) {
  for (int i = 0; i < NCC_OP_COUNT; i++)
    if (strlen(ncc_op_table[i].name) == len &&
        memcmp(ncc_op_table[i].name, name, len) == 0)
      return (ncc_op)i;
  return NCC_OP_COUNT;
}
