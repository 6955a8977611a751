/* ir/ops.c — the op table, expanded from ir/ops.def. */
#include <string.h>

#include "ir.h"

const ncc_op_info ncc_op_table[NCC_OP_COUNT] = {
#define NCC_OP(id, nm, mi, ma, mo, mao, fl, rule) [NCC_OP_##id] = {nm, mi, ma, mo, mao, fl},
#include "ops.def"
#undef NCC_OP
};

/* The count is written down here on purpose: adding an op to ops.def without
 * looking at every table that expands it must fail the build. */
#define NCC_OP_EXPECTED_COUNT 58
_Static_assert(NCC_OP_COUNT == NCC_OP_EXPECTED_COUNT,
               "ops.def changed: update NCC_OP_EXPECTED_COUNT and the tables");

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
