/* passes/const_fold.c — constant folding, including shape subgraphs.
 *
 * A node whose inputs are all constants is evaluated once with the reference
 * kernels (so folding can never disagree with `ref`), and its outputs become
 * constants in place (names kept). Values whose content shape inference
 * already knows statically — Shape of a static tensor, Gather of a static
 * dim out of [N,8,64], the Concat feeding a Reshape — become constants
 * too, which is what resolves PyTorch-style shape arithmetic at compile
 * time. Outputs that would blow a small input up into a big constant
 * (ConstantOfShape, Expand, Range, Concat(c, c)) are left to run time;
 * what is folded is checked against the memory budget first (per output
 * and in total), so a tiny model cannot make the compiler allocate more
 * than the machine has. */
#include <string.h>

#include "../ir/budget.h"
#include "../ir/shape.h"
#include "../runtime/ref/ref.h"
#include "pass.h"

#define FOLD_MAX_BYTES (1u << 20)

static size_t value_bytes(const ncc_value *v) {
  int64_t n = ncc_shape_numel(&v->shape);
  return n < 0 ? SIZE_MAX : (size_t)n * ncc_dtype_size(v->dtype);
}

/* Turn `v` into a constant holding `data` (copied into the arena). */
static ncc_status make_const(ncc_graph *g, ncc_value *v, const void *data,
                             size_t bytes) {
  void *copy = ncc_arena_memdup(&g->arena, data, bytes);
  if (!copy) return NCC_ERR_NOMEM;
  v->kind = NCC_VAL_CONST;
  v->data = copy;
  v->producer = NULL;
  v->producer_idx = 0;
  return NCC_OK;
}

/* Content fully known and static -> constant without evaluating anything. */
static bool content_static(const ncc_value *v) {
  if (v->content_len < 0 || !ncc_shape_is_static(&v->shape)) return false;
  if (ncc_shape_numel(&v->shape) != v->content_len) return false;
  if (v->dtype != NCC_DT_I64 && v->dtype != NCC_DT_I32) return false;
  for (int i = 0; i < v->content_len; i++)
    if (ncc_dim_is_sym(v->content[i])) return false;
  return true;
}

static ncc_status fold_content(ncc_graph *g, ncc_value *v) {
  int64_t buf[NCC_CONTENT_MAX];
  int32_t buf32[NCC_CONTENT_MAX];
  for (int i = 0; i < v->content_len; i++) {
    buf[i] = v->content[i];
    buf32[i] = (int32_t)v->content[i];
  }
  return v->dtype == NCC_DT_I64
             ? make_const(g, v, buf, sizeof(int64_t) * (size_t)v->content_len)
             : make_const(g, v, buf32, sizeof(int32_t) * (size_t)v->content_len);
}

static size_t sat_add(size_t x, size_t y) { return x > SIZE_MAX - y ? SIZE_MAX : x + y; }

static ncc_status evaluate(ncc_graph *g, ncc_node *n, size_t *folded_bytes) {
  ncc_tensor in[16], out[8];
  const ncc_tensor *inp[16];
  ncc_tinfo ti[16], to[8];
  ncc_status st = NCC_OK;
  if (n->n_in > 16 || n->n_out > 8) return NCC_OK; /* not worth folding */
  /* a data-dependent op's output shape is a fresh symbol that the rest of
   * the graph was inferred with: left to run time */
  if (ncc_ref_allocates_outputs(n)) return NCC_OK;
  memset(out, 0, sizeof out);
  for (int k = 0; k < n->n_in; k++) {
    ncc_value *v = n->in[k];
    if (!v) {
      inp[k] = NULL;
      memset(&ti[k], 0, sizeof ti[k]);
      ti[k].content_len = -1;
      continue;
    }
    memset(&in[k], 0, sizeof in[k]);
    in[k].dtype = v->dtype;
    in[k].rank = v->shape.rank;
    memcpy(in[k].dims, v->shape.d, sizeof(int64_t) * (size_t)v->shape.rank);
    in[k].data = v->data;
    inp[k] = &in[k];
    ncc_tinfo_from_tensor(&ti[k], &in[k]);
  }
  if ((st = ncc_infer_node(NULL, n, ti, to))) return st;
  /* Input bytes count each distinct value once: Concat(c, c) reads c
   * twice but holds it once, and counting it twice let a chain of such
   * Concats double a constant 34 times. */
  size_t in_total = 0;
  for (int k = 0; k < n->n_in; k++) {
    bool dup = false;
    for (int j = 0; j < k && !dup; j++) dup = n->in[j] == n->in[k];
    if (n->in[k] && !dup) in_total = sat_add(in_total, value_bytes(n->in[k]));
  }
  /* output bytes; SIZE_MAX when unknown or past size_t */
  size_t total = 0;
  for (int k = 0; k < n->n_out; k++) {
    if (to[k].dtype == NCC_DT_UNDEF) continue;
    int64_t cnt = ncc_shape_numel(&to[k].shape);
    size_t es = ncc_dtype_size(to[k].dtype);
    total = cnt < 0 || (uint64_t)cnt > SIZE_MAX / es ? SIZE_MAX
                                                     : sat_add(total, (size_t)cnt * es);
  }
  /* A fold that grows the constants past FOLD_MAX_BYTES is left to run
   * time; within that, every output and the running total of what this
   * pass folded must fit the memory budget before anything is allocated. */
  if (total > FOLD_MAX_BYTES && total > in_total) return NCC_OK;
  size_t sum = sat_add(*folded_bytes, total);
  if ((st = ncc_budget_check(total > INT64_MAX ? -1 : (int64_t)total, "const-fold")) ||
      (st = ncc_budget_check(sum > INT64_MAX ? -1 : (int64_t)sum,
                             "const-fold (with the constants folded before)")))
    return st;
  *folded_bytes = sum;
  for (int k = 0; k < n->n_out; k++) {
    if (to[k].dtype == NCC_DT_UNDEF) continue;
    if ((st = ncc_tensor_alloc(&out[k], to[k].dtype, to[k].shape.rank, to[k].shape.d)))
      goto done;
  }
  if ((st = ncc_ref_kernels[n->op](n, inp, out))) goto done;
  for (int k = 0; k < n->n_out; k++)
    if (n->out[k] && out[k].data &&
        (st = make_const(g, n->out[k], out[k].data, ncc_tensor_nbytes(&out[k]))))
      goto done;
done:
  for (int k = 0; k < n->n_out; k++) ncc_tensor_free(&out[k]);
  return st;
}

static ncc_status run(ncc_graph *g, ncc_pass_ctx *ctx) {
  int folded = 0;
  size_t folded_bytes = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    ncc_node *n = g->nodes[i];
    /* constants are plain: a node producing a blocked value stays */
    bool plain_out = true;
    for (int k = 0; k < n->n_out; k++)
      if (n->out[k] && n->out[k]->layout.kind != NCC_LAYOUT_PLAIN) plain_out = false;
    if (!plain_out) continue;
    bool all_const = true;
    for (int k = 0; k < n->n_in; k++)
      if (n->in[k] && n->in[k]->kind != NCC_VAL_CONST) all_const = false;
    ncc_status st;
    if (all_const) {
      if ((st = evaluate(g, n, &folded_bytes))) {
        char lb[128];
        ncc_error_prefix("%s", ncc_node_label(n, lb, sizeof lb));
        return st;
      }
    } else {
      /* Folding by content only when every output is known: a node is
       * either gone or untouched, never half-folded. */
      bool all_static = n->n_out > 0;
      for (int k = 0; k < n->n_out; k++)
        if (!n->out[k] || !content_static(n->out[k])) all_static = false;
      for (int k = 0; all_static && k < n->n_out; k++)
        if ((st = fold_content(g, n->out[k]))) return st;
    }
    bool all = n->n_out > 0;
    for (int k = 0; k < n->n_out; k++)
      if (n->out[k] && n->out[k]->kind != NCC_VAL_CONST) all = false;
    if (all) {
      for (int k = 0; k < n->n_out; k++) n->out[k] = NULL;
      folded++;
    }
  }
  if (folded && ncc_dce(g) < 0) return NCC_ERR_NOMEM;
  ctx->rewrites = folded;
  ctx->changed = folded > 0;
  return NCC_OK;
}

const ncc_pass ncc_pass_const_fold = {
    .name = "const-fold",
    .level = 1,
    .needs = "",
    .desc = "constant folding, including shape subgraphs (Shape/Gather/Concat)",
    .run = run,
};
