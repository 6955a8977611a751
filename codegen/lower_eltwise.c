/* codegen/lower_eltwise.c — elementwise ops (unary, binary with numpy
 * broadcasting, variadic Max/Min, Where, Clip, QuantizeLinear and
 * DequantizeLinear) to one loop nest.
 *
 * Broadcasting is expressed with strides: an operand's stride is 0 along the
 * dims it broadcasts over. Adjacent output dims that every operand treats
 * alike (all broadcast or all not) are collapsed, so a same-shape op is one
 * flat loop and a bias add is two. The schedule: a flat loop is split into
 * blocks distributed over threads, each block vectorized; a deeper nest
 * runs its outer dims as one parallel loop (decomposed with div/mod once per
 * row) around a vectorized innermost loop. The vector loop is up to four
 * native vectors wide (loop_lanes): independent work per iteration for
 * long fused chains. Which ops qualify, the broadcast plan and the scalar
 * formulas are shared with the other kinds (lower_formula.c).
 */
#include "../ir/attrs.h"
#include "lower.h"

/* Elements per parallel block of a flat loop: large enough to amortize the
 * loop overhead, small enough to balance threads. */
#define FLAT_BLOCK 4096

/* Independent vectors per iteration of the vector loop. The emitter
 * evaluates a w*U-lane body whose every operation LLVM splits into U
 * native-width operations with no dependences between them: a long chain
 * (a fused group of activations is hundreds of operations deep, each
 * waiting for the one before) then keeps the vector units busy instead of
 * waiting on latency, which out-of-order execution cannot hide once one
 * iteration fills its window (measured: 16 fused ops with Tanh and
 * Sigmoid, 1.6x). */
#define INTERLEAVE 4
#define MAX_LANES 64 /* the emitter's limit */

/* Lanes of the vector loop over an innermost extent of `inner` elements
 * (-1: not known at compile time): up to INTERLEAVE native vectors, fewer
 * when the extent is short (the masked remainder computes all its lanes). */
static int loop_lanes(int w, int64_t inner) {
  if (w <= 1) return 1;
  int u = INTERLEAVE;
  while (u > 1 && (w * u > MAX_LANES || (inner >= 0 && inner < (int64_t)w * u))) u /= 2;
  return w * u;
}

/* The innermost collapsed extent of plan p, -1 when symbolic; a flat loop
 * runs in blocks of FLAT_BLOCK. */
static int64_t inner_extent(const ncc_bcast *p, const ncc_shape *os) {
  if (p->m == 0) return 1;
  int64_t n = 1;
  for (int j = p->first[p->m - 1]; j < p->last[p->m - 1]; j++) {
    if (ncc_dim_is_sym(os->d[j])) return p->m == 1 ? FLAT_BLOCK : -1;
    n *= os->d[j];
  }
  return p->m == 1 && n > FLAT_BLOCK ? FLAT_BLOCK : n;
}

/* Emits the body of one point: idx[i] indexes operand i, oidx the output. */
typedef void (*nest_body_fn)(kir_kernel *k, void *ctx, kir_expr **idx,
                             kir_expr *oidx, kir_block *blk);

/* The loop nest over output shape `os` (see the file comment). */
static void eltwise_nest(kir_kernel *k, const ncc_bcast *p, const ncc_shape *os,
                         int w, nest_body_fn body, void *ctx) {
  w = loop_lanes(w, inner_extent(p, os));
  /* Extent of each collapsed group, and strides per operand and output. */
  kir_expr *ext[NCC_MAX_RANK] = {0};
  for (int g = 0; g < p->m; g++) {
    ext[g] = kir_const_i(k, 1);
    for (int j = p->first[g]; j < p->last[g]; j++)
      ext[g] = kir_mul(k, ext[g], ncc_lower_dim(k, os->d[j]));
  }
  kir_expr *stride[NCC_LOWER_MAX_OPS][NCC_MAX_RANK] = {{0}}, *ostride[NCC_MAX_RANK] = {0};
  for (int g = p->m - 1; g >= 0; g--) {
    ostride[g] = g == p->m - 1 ? kir_const_i(k, 1)
                               : kir_mul(k, ostride[g + 1], ext[g + 1]);
    for (int i = 0; i < p->n_ops; i++) {
      kir_expr *after = kir_const_i(k, 1);
      for (int h = g + 1; h < p->m; h++)
        if (!p->bc[i][h]) after = kir_mul(k, after, ext[h]);
      stride[i][g] = p->bc[i][g] ? kir_const_i(k, 0) : after;
    }
  }

  kir_block top = kir_body_begin();
  kir_expr *idx[NCC_LOWER_MAX_OPS];
  kir_mark vmark = w > 1 ? KIR_VECTOR : KIR_SERIAL;
  if (p->m == 0) {
    for (int i = 0; i < p->n_ops; i++) idx[i] = kir_const_i(k, 0);
    body(k, ctx, idx, kir_const_i(k, 0), &top);
  } else if (p->m == 1) {
    int vb = kir_var_new(k), vi = kir_var_new(k);
    kir_expr *len = ext[0];
    kir_stmt *lb = kir_for(k, &top, vb, kir_const_i(k, 0),
                           kir_cdiv(k, len, FLAT_BLOCK), KIR_PARALLEL, 0);
    kir_block bb = kir_body_begin();
    kir_expr *lo = kir_mul(k, kir_var(k, vb), kir_const_i(k, FLAT_BLOCK));
    kir_stmt *li = kir_for(k, &bb, vi, lo,
                           kir_min(k, len, kir_add(k, lo, kir_const_i(k, FLAT_BLOCK))),
                           vmark, w);
    kir_block ib = kir_body_begin();
    for (int i = 0; i < p->n_ops; i++)
      idx[i] = kir_mul(k, kir_var(k, vi), stride[i][0]);
    body(k, ctx, idx, kir_var(k, vi), &ib);
    kir_body_end(li, &ib);
    kir_body_end(lb, &bb);
  } else {
    /* outer dims flattened into one parallel loop */
    int vo = kir_var_new(k), vi = kir_var_new(k);
    kir_expr *outer = kir_const_i(k, 1);
    for (int g = 0; g < p->m - 1; g++) outer = kir_mul(k, outer, ext[g]);
    kir_stmt *lo = kir_for(k, &top, vo, kir_const_i(k, 0), outer, KIR_PARALLEL, 0);
    kir_block ob = kir_body_begin();
    kir_stmt *li = kir_for(k, &ob, vi, kir_const_i(k, 0), ext[p->m - 1], vmark, w);
    kir_block ib = kir_body_begin();
    kir_expr *coord[NCC_MAX_RANK] = {0};
    kir_expr *inner = kir_const_i(k, 1); /* product of groups after g */
    for (int g = p->m - 2; g >= 0; g--) {
      kir_expr *q = kir_is_const(inner, 1)
                        ? kir_var(k, vo)
                        : kir_bin(k, KIR_DIV, kir_var(k, vo), inner);
      coord[g] = g == 0 ? q : kir_bin(k, KIR_REM, q, ext[g]);
      inner = kir_mul(k, inner, ext[g]);
    }
    kir_expr *oidx = kir_var(k, vi);
    for (int g = 0; g < p->m - 1; g++)
      oidx = kir_add(k, oidx, kir_mul(k, coord[g], ostride[g]));
    for (int i = 0; i < p->n_ops; i++) {
      idx[i] = kir_mul(k, kir_var(k, vi), stride[i][p->m - 1]);
      for (int g = 0; g < p->m - 1; g++)
        idx[i] = kir_add(k, idx[i], kir_mul(k, coord[g], stride[i][g]));
    }
    body(k, ctx, idx, oidx, &ib);
    kir_body_end(li, &ib);
    kir_body_end(lo, &ob);
  }
  kir_kernel_set_body(k, &top);
}

/* ---- one node ---- */

typedef struct node_ctx {
  const ncc_node *n;
  int n_ops;
  int bufs[NCC_LOWER_MAX_OPS];
  int obuf;
} node_ctx;

static void node_body(kir_kernel *k, void *ctx, kir_expr **idx, kir_expr *oidx,
                      kir_block *blk) {
  node_ctx *c = ctx;
  kir_expr *x[NCC_LOWER_MAX_OPS];
  for (int i = 0; i < c->n_ops; i++) x[i] = kir_load(k, c->bufs[i], idx[i]);
  kir_store(k, blk, c->obuf, oidx, ncc_lower_eltwise_formula(k, c->n, x, c->n_ops, 1),
            NULL);
}

ncc_status ncc_lower_eltwise(const ncc_node *n, const char *name,
                             const ncc_lower_opts *o, kir_kernel **out) {
  *out = NULL;
  ncc_bcast p;
  const ncc_value *ops[NCC_LOWER_MAX_OPS];
  ncc_value views[3];
  int n_ops = ncc_lower_operand_views(n, ops, views);
  if (!ncc_lower_eltwise_op_ok(n) || !ncc_lower_broadcast(ops, n_ops, &n->out[0]->shape, &p))
    return NCC_ERR_UNSUPPORTED;
  kir_kernel *k = kir_kernel_new(name);
  if (!k) return NCC_ERR_NOMEM;
  int w = o->vector_width > 0 ? o->vector_width : 1;
  node_ctx c = {.n = n, .n_ops = n_ops};
  for (int i = 0, j = 0; i < n->n_in; i++)
    if (n->in[i]) c.bufs[j++] = kir_buf_input(k, i, n->in[i]->dtype);
  c.obuf = kir_buf_output(k, 0, n->out[0]->dtype);
  eltwise_nest(k, &p, &n->out[0]->shape, w, node_body, &c);
  if (!kir_ok(k)) {
    kir_kernel_free(k);
    return ncc_error(NCC_ERR_NOMEM, "out of memory lowering %s",
                     ncc_op_name(n->op));
  }
  k->cost_per_elem = 1.0;
  *out = k;
  return NCC_OK;
}

/* ---- an elementwise group: one loop nest, the root's formula tree ---- */

typedef struct group_ctx {
  ncc_gx gx;
  kir_expr **idx; /* per external value, at the current point */
  int obuf;
} group_ctx;

static kir_expr *group_ext(ncc_gx *x, int e, int lanes) {
  group_ctx *c = x->ctx;
  (void)lanes; /* scalar code inside the vector loop */
  return kir_load(x->k, ncc_gx_buf(x, e), c->idx[e]);
}

static void group_body(kir_kernel *k, void *ctx, kir_expr **idx, kir_expr *oidx,
                       kir_block *blk) {
  group_ctx *c = ctx;
  c->idx = idx;
  ncc_gx_point(&c->gx);
  kir_expr *v = ncc_gx_member(&c->gx, blk, c->gx.gr->n_members - 1, 1);
  kir_store(k, blk, c->obuf, oidx, v, NULL);
}

/* The group's external values as broadcasting reads them: a per-axis
 * Q/DQ parameter as its view (ncc_lower_operand_view). False when one
 * value is read two different ways (a per-axis scale also added as is, or
 * along two axes): the members then run as kernels of their own. */
static bool group_operand_views(const ncc_fuse_group *gr, const ncc_value **ext,
                                ncc_value *views) {
  bool as_is[NCC_FUSE_MAX_EXT] = {0}, viewed[NCC_FUSE_MAX_EXT] = {0};
  for (int e = 0; e < gr->n_ext; e++) ext[e] = gr->ext[e];
  for (int m = 0; m < gr->n_members; m++) {
    const ncc_node *n = gr->members[m];
    for (int i = 0; i < n->n_in; i++) {
      int e = -1;
      for (int j = 0; j < gr->n_ext && e < 0; j++)
        if (n->in[i] && gr->ext[j] == n->in[i]) e = j;
      if (e < 0) continue;
      ncc_value v;
      if (!ncc_lower_operand_view(n, i, &v)) {
        as_is[e] = true;
      } else if (!viewed[e]) {
        views[e] = v;
        viewed[e] = true;
        ext[e] = &views[e];
      } else if (!ncc_shape_eq(&views[e].shape, &v.shape)) {
        return false;
      }
      if (as_is[e] && viewed[e]) return false;
    }
  }
  return true;
}

ncc_status ncc_lower_eltwise_group(const ncc_fuse_group *gr, const char *name,
                                   const ncc_lower_opts *o, kir_kernel **out) {
  *out = NULL;
  const ncc_node *root = gr->members[gr->n_members - 1];
  const ncc_shape *os = &root->out[0]->shape;
  for (int m = 0; m < gr->n_members; m++) {
    const ncc_node *n = gr->members[m];
    if (!ncc_lower_eltwise_op_ok(n) || !ncc_shape_eq(&n->out[0]->shape, os)) return NCC_ERR_UNSUPPORTED;
  }
  ncc_bcast p;
  const ncc_value *ext[NCC_FUSE_MAX_EXT];
  ncc_value views[NCC_FUSE_MAX_EXT];
  if (!group_operand_views(gr, ext, views) || !ncc_lower_broadcast(ext, gr->n_ext, os, &p))
    return NCC_ERR_UNSUPPORTED;
  kir_kernel *k = kir_kernel_new(name);
  if (!k) return NCC_ERR_NOMEM;
  int w = o->vector_width > 0 ? o->vector_width : 1;
  group_ctx c;
  ncc_gx_init(&c.gx, k, gr);
  c.gx.ext = group_ext;
  c.gx.ctx = &c;
  /* buffers in external-value order, then the output */
  for (int e = 0; e < gr->n_ext; e++) ncc_gx_buf(&c.gx, e);
  c.obuf = kir_buf_output(k, 0, root->out[0]->dtype);
  eltwise_nest(k, &p, os, w, group_body, &c);
  if (!kir_ok(k)) {
    kir_kernel_free(k);
    return ncc_error(NCC_ERR_NOMEM, "out of memory lowering a fused group");
  }
  k->cost_per_elem = (double)gr->n_members;
  *out = k;
  return NCC_OK;
}

/* ---- Transpose: out[o] = in[permuted index], an injective kernel ----
 * Output dims are walked like an elementwise op (outer dims as one parallel
 * loop, the last dim vectorized); the input index uses the permuted input
 * strides, so the inner access is contiguous only when the last dim stays
 * last (otherwise the emitter gathers). */

static bool transpose_ok(const ncc_node *n, int64_t *perm) {
  if (n->op != NCC_OP_TRANSPOSE || n->n_in != 1 || !n->in[0] || !n->out[0])
    return false;
  const ncc_value *x = n->in[0];
  if (x->dtype != NCC_DT_F32 && x->dtype != NCC_DT_I64 && x->dtype != NCC_DT_I32)
    return false;
  int r = x->shape.rank, p[NCC_MAX_RANK];
  if (r < 1 || ncc_attrs_perm(n, r, p)) return false;
  for (int j = 0; j < r; j++) perm[j] = p[j];
  return true;
}

bool ncc_lower_transpose_supports(const ncc_node *n) {
  int64_t perm[NCC_MAX_RANK];
  return transpose_ok(n, perm);
}

ncc_status ncc_lower_transpose(const ncc_node *n, const char *name,
                               const ncc_lower_opts *o, kir_kernel **out) {
  *out = NULL;
  int64_t perm[NCC_MAX_RANK];
  if (!transpose_ok(n, perm)) return NCC_ERR_UNSUPPORTED;
  kir_kernel *k = kir_kernel_new(name);
  if (!k) return NCC_ERR_NOMEM;
  const ncc_value *x = n->in[0];
  int r = x->shape.rank, w = o->vector_width > 0 ? o->vector_width : 1;
  int bx = kir_buf_input(k, 0, x->dtype), by = kir_buf_output(k, 0, x->dtype);
  kir_expr *istride[NCC_MAX_RANK] = {0}, *odim[NCC_MAX_RANK] = {0};
  kir_expr *acc = kir_const_i(k, 1);
  for (int j = r - 1; j >= 0; j--) {
    istride[j] = acc;
    acc = kir_mul(k, acc, ncc_lower_dim(k, x->shape.d[j]));
  }
  for (int j = 0; j < r; j++) odim[j] = ncc_lower_dim(k, x->shape.d[perm[j]]);
  kir_expr *outer = kir_const_i(k, 1);
  for (int j = 0; j < r - 1; j++) outer = kir_mul(k, outer, odim[j]);
  kir_block top = kir_body_begin();
  int vo = kir_var_new(k), vi = kir_var_new(k);
  kir_stmt *lo = kir_for(k, &top, vo, kir_const_i(k, 0), outer, KIR_PARALLEL, 0);
  kir_block ob = kir_body_begin();
  kir_stmt *li = kir_for(k, &ob, vi, kir_const_i(k, 0), odim[r - 1],
                         w > 1 ? KIR_VECTOR : KIR_SERIAL, w);
  kir_block ib = kir_body_begin();
  kir_expr *iidx = kir_mul(k, kir_var(k, vi), istride[perm[r - 1]]);
  kir_expr *inner = kir_const_i(k, 1);
  for (int j = r - 2; j >= 0; j--) {
    kir_expr *q = kir_is_const(inner, 1) ? kir_var(k, vo)
                                         : kir_bin(k, KIR_DIV, kir_var(k, vo), inner);
    kir_expr *cj = j == 0 ? q : kir_bin(k, KIR_REM, q, odim[j]);
    iidx = kir_add(k, iidx, kir_mul(k, cj, istride[perm[j]]));
    inner = kir_mul(k, inner, odim[j]);
  }
  kir_expr *oidx = kir_add(k, kir_mul(k, kir_var(k, vo), odim[r - 1]), kir_var(k, vi));
  kir_store(k, &ib, by, oidx, kir_load(k, bx, iidx), NULL);
  kir_body_end(li, &ib);
  kir_body_end(lo, &ob);
  kir_kernel_set_body(k, &top);
  if (!kir_ok(k)) {
    kir_kernel_free(k);
    return ncc_error(NCC_ERR_NOMEM, "out of memory lowering Transpose");
  }
  *out = k;
  return NCC_OK;
}

/* ---- Reshape / Flatten / Squeeze / Unsqueeze: a flat copy ----
 * On plain row-major data these change the shape, never the order of the
 * elements, so out[i] = in[i] over the whole storage (the shape or axes
 * operand is not read). A copy rather than an alias: the executor gives
 * every value its own buffer. Kept in a compiled kernel so real models'
 * heads (Flatten before the classifier) do not drop to a host kernel. */

static bool reshape_ok(const ncc_node *n) {
  if (n->op != NCC_OP_RESHAPE && n->op != NCC_OP_FLATTEN && n->op != NCC_OP_SQUEEZE &&
      n->op != NCC_OP_UNSQUEEZE)
    return false;
  if (n->n_in < 1 || !n->in[0] || n->n_out != 1 || !n->out[0]) return false;
  const ncc_value *x = n->in[0], *y = n->out[0];
  if (x->dtype != y->dtype ||
      (x->dtype != NCC_DT_F32 && x->dtype != NCC_DT_I64 && x->dtype != NCC_DT_I32 &&
       x->dtype != NCC_DT_U8 && x->dtype != NCC_DT_I8)) /* 8-bit: quantized models */
    return false;
  for (int j = 0; j < y->shape.rank; j++)
    if (!ncc_dim_is_sym(y->shape.d[j]) && y->shape.d[j] < 0) return false;
  for (int j = 0; j < x->shape.rank; j++)
    if (!ncc_dim_is_sym(x->shape.d[j]) && x->shape.d[j] < 0) return false;
  return true;
}

bool ncc_lower_reshape_supports(const ncc_node *n) { return reshape_ok(n); }

ncc_status ncc_lower_reshape(const ncc_node *n, const char *name,
                             const ncc_lower_opts *o, kir_kernel **out) {
  *out = NULL;
  if (!reshape_ok(n)) return NCC_ERR_UNSUPPORTED;
  kir_kernel *k = kir_kernel_new(name);
  if (!k) return NCC_ERR_NOMEM;
  const ncc_value *y = n->out[0];
  int w = o->vector_width > 0 ? o->vector_width : 1;
  int bx = kir_buf_input(k, 0, y->dtype), by = kir_buf_output(k, 0, y->dtype);
  kir_expr *len = kir_const_i(k, 1);
  for (int j = 0; j < y->shape.rank; j++) len = kir_mul(k, len, ncc_lower_dim(k, y->shape.d[j]));
  kir_block top = kir_body_begin();
  int vb = kir_var_new(k), vi = kir_var_new(k);
  kir_stmt *lb = kir_for(k, &top, vb, kir_const_i(k, 0), kir_cdiv(k, len, FLAT_BLOCK),
                         KIR_PARALLEL, 0);
  kir_block bb = kir_body_begin();
  kir_expr *lo = kir_mul(k, kir_var(k, vb), kir_const_i(k, FLAT_BLOCK));
  kir_stmt *li = kir_for(k, &bb, vi, lo,
                         kir_min(k, len, kir_add(k, lo, kir_const_i(k, FLAT_BLOCK))),
                         w > 1 ? KIR_VECTOR : KIR_SERIAL, w);
  kir_block ib = kir_body_begin();
  kir_store(k, &ib, by, kir_var(k, vi), kir_load(k, bx, kir_var(k, vi)), NULL);
  kir_body_end(li, &ib);
  kir_body_end(lb, &bb);
  kir_kernel_set_body(k, &top);
  k->cost_per_elem = 1.0;
  return ncc_lower_finish(k, NCC_OK, ncc_op_name(n->op), out);
}

/* ---- Concat of plain data: one copy loop per input ----
 * Viewed as [outer, A, inner] (A the concatenated axis), input j is rows
 * of a_j*inner contiguous elements landing at offset off_j*inner of each
 * output row of A*inner. Each input's rows are cut into chunks of
 * FLAT_BLOCK for the parallel loop (one image concatenated along channels
 * is one row), each chunk a vector copy. The copy stays: producers writing
 * straight into their slice needs the memory planner's help. */

static bool concat_ok(const ncc_node *n, int *axis) {
  if (n->op != NCC_OP_CONCAT || n->n_out != 1 || !n->out[0] || n->n_in < 1 ||
      n->n_in > NCC_LOWER_MAX_OPS)
    return false;
  const ncc_value *y = n->out[0];
  if (y->dtype != NCC_DT_F32 && y->dtype != NCC_DT_I64 && y->dtype != NCC_DT_I32) return false;
  if (ncc_attrs_axis_norm(n, y->shape.rank, axis) != NCC_OK) return false;
  for (int i = 0; i < n->n_in; i++) {
    const ncc_value *x = n->in[i];
    if (!x || x->dtype != y->dtype || x->shape.rank != y->shape.rank) return false;
    for (int j = 0; j < x->shape.rank; j++)
      if (!ncc_dim_is_sym(x->shape.d[j]) && x->shape.d[j] < 0) return false;
  }
  for (int j = 0; j < y->shape.rank; j++)
    if (!ncc_dim_is_sym(y->shape.d[j]) && y->shape.d[j] < 0) return false;
  return true;
}

bool ncc_lower_concat_supports(const ncc_node *n) {
  int axis;
  return concat_ok(n, &axis);
}

ncc_status ncc_lower_concat(const ncc_node *n, const char *name,
                            const ncc_lower_opts *o, kir_kernel **out) {
  *out = NULL;
  int axis;
  if (!concat_ok(n, &axis)) return NCC_ERR_UNSUPPORTED;
  kir_kernel *k = kir_kernel_new(name);
  if (!k) return NCC_ERR_NOMEM;
  const ncc_value *y = n->out[0];
  int w = o->vector_width > 0 ? o->vector_width : 1;
  int bufs[NCC_LOWER_MAX_OPS];
  for (int i = 0; i < n->n_in; i++) bufs[i] = kir_buf_input(k, i, y->dtype);
  int by = kir_buf_output(k, 0, y->dtype);
  kir_expr *outer = kir_const_i(k, 1), *inner = kir_const_i(k, 1);
  for (int j = 0; j < axis; j++) outer = kir_mul(k, outer, ncc_lower_dim(k, y->shape.d[j]));
  for (int j = axis + 1; j < y->shape.rank; j++)
    inner = kir_mul(k, inner, ncc_lower_dim(k, y->shape.d[j]));
  kir_expr *orow = kir_mul(k, ncc_lower_dim(k, y->shape.d[axis]), inner);
  kir_block top = kir_body_begin();
  kir_expr *off = kir_const_i(k, 0); /* off_j * inner */
  for (int i = 0; i < n->n_in; i++) {
    kir_expr *len = kir_mul(k, ncc_lower_dim(k, n->in[i]->shape.d[axis]), inner);
    kir_expr *nch = kir_cdiv(k, len, FLAT_BLOCK);
    int vt = kir_var_new(k), vq = kir_var_new(k);
    kir_stmt *lt = kir_for(k, &top, vt, kir_const_i(k, 0), kir_mul(k, outer, nch),
                           KIR_PARALLEL, 0);
    kir_block bt = kir_body_begin();
    kir_expr *t = kir_var(k, vt);
    kir_expr *r = kir_bin(k, KIR_DIV, t, nch);
    kir_expr *lo = kir_mul(k, kir_bin(k, KIR_REM, t, nch), kir_const_i(k, FLAT_BLOCK));
    kir_stmt *lq = kir_for(k, &bt, vq, lo,
                           kir_min(k, len, kir_add(k, lo, kir_const_i(k, FLAT_BLOCK))),
                           w > 1 ? KIR_VECTOR : KIR_SERIAL, w);
    kir_block bq = kir_body_begin();
    kir_expr *q = kir_var(k, vq);
    kir_expr *src = kir_add(k, kir_mul(k, r, len), q);
    kir_expr *dst = kir_add(k, kir_add(k, kir_mul(k, r, orow), off), q);
    kir_store(k, &bq, by, dst, kir_load(k, bufs[i], src), NULL);
    kir_body_end(lq, &bq);
    kir_body_end(lt, &bt);
    off = kir_add(k, off, len);
  }
  kir_kernel_set_body(k, &top);
  k->cost_per_elem = 1.0;
  return ncc_lower_finish(k, NCC_OK, "Concat", out);
}
