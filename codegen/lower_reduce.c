/* codegen/lower_reduce.c — row-wise kernels: ReduceSum/Mean/Max,
 * GlobalAveragePool, Softmax, LogSoftmax, LayerNormalization, and
 * BatchNormalization (inference: one row per (n, c) plane).
 *
 * Each is viewed as [rows, R] with R the product of the reduced trailing
 * dims (a reduction over other axes runs on the reference kernel). One
 * parallel loop runs over rows; within a row every sweep is a vector loop
 * of w-lane explicit vectors plus a scalar loop for the R % w tail, and
 * reductions keep a vector accumulator reduced horizontally at the end.
 * Softmax and LayerNorm make their sweeps over a row that stays in cache:
 * max, exp-and-store, sum, scale (softmax); mean, centred sum of squares
 * (two-pass variance, stable), normalize (layernorm).
 */
#include <math.h>
#include <string.h>

#include "../ir/attrs.h"
#include "../passes/rows.h"
#include "lower.h"

#define F32 NCC_DT_F32

static kir_expr *cst(kir_kernel *k, double v, int lanes) {
  return kir_splat(k, kir_const_f(k, F32, v), lanes);
}

typedef struct rplan {
  int first; /* reduced dims are [first, rank) of input 0 */
  bool mean; /* ReduceMean / GlobalAveragePool */
} rplan;

/* BatchNormalization (inference) and GlobalAveragePool: rows are the
 * (n, c) planes. */
static bool plane_plan(const ncc_node *n, rplan *p) {
  if (n->n_in < 1 || !n->in[0] || n->in[0]->dtype != F32) return false;
  if (n->n_out < 1 || !n->out[0] || n->out[0]->dtype != F32) return false;
  for (int i = 1; i < n->n_out; i++)
    if (n->out[i]) return false;
  const ncc_value *x = n->in[0];
  int r = x->shape.rank;
  if (n->op == NCC_OP_BATCHNORM) {
    /* params are [C] */
    ncc_norm_attrs na;
    ncc_attrs_norm(n, &na);
    if (r < 2 || na.training_mode) return false;
    for (int i = 1; i < 5; i++) {
      const ncc_value *v = n->in[i];
      if (!v || v->dtype != F32 || v->shape.rank != 1 || v->shape.d[0] != x->shape.d[1])
        return false;
    }
  } else if (r < 3) {
    return false;
  }
  p->first = 2;
  /* an empty plane has no mean */
  for (int j = p->first; j < r; j++)
    if (x->shape.d[j] == 0) return false;
  return true;
}

static bool plan(const ncc_node *n, rplan *p) {
  memset(p, 0, sizeof *p);
  p->mean = n->op == NCC_OP_REDUCEMEAN || n->op == NCC_OP_GLOBALAVGPOOL;
  if (n->op == NCC_OP_BATCHNORM || n->op == NCC_OP_GLOBALAVGPOOL) return plane_plan(n, p);
  /* the reductions, Softmax and LayerNorm: the rows fusion sees too */
  if (!ncc_row_split(n, &p->first)) return false;
  if (n->op == NCC_OP_LAYERNORM) {
    /* scale and bias: exactly the normalized shape */
    const ncc_value *x = n->in[0];
    int r = x->shape.rank;
    for (int i = 1; i < n->n_in && i < 3; i++) {
      const ncc_value *v = n->in[i];
      if (!v) continue;
      if (v->dtype != F32 || v->shape.rank != r - p->first) return false;
      for (int j = 0; j < v->shape.rank; j++)
        if (v->shape.d[j] != x->shape.d[p->first + j]) return false;
    }
  }
  return true;
}

bool ncc_lower_reduce_supports(const ncc_node *n) {
  rplan p;
  return plan(n, &p);
}

/* ---- row sweeps ---- */

typedef struct row {
  kir_kernel *k;
  int w;
  kir_expr *base; /* element index of the row start */
  kir_expr *R;
} row;

/* f(x, r, lanes): the value of element(s) at offset r of the row. */
typedef kir_expr *(*elem_fn)(row *rw, kir_block *blk, kir_expr *r, int lanes,
                             void *ctx);

/* Returns a scalar local holding op over f(r), r in [0, R). */
static int row_reduce(row *rw, kir_block *blk, kir_op op, double init,
                      elem_fn f, void *ctx) {
  kir_kernel *k = rw->k;
  int w = rw->w;
  int sacc = kir_local_add(k, F32, 1);
  kir_expr *full = kir_const_i(k, 0);
  kir_assign(k, blk, sacc, cst(k, init, 1));
  if (w > 1) {
    int vacc = kir_local_add(k, F32, w);
    kir_assign(k, blk, vacc, cst(k, init, w));
    int vv = kir_var_new(k);
    kir_expr *nv = kir_bin(k, KIR_DIV, rw->R, kir_const_i(k, w));
    kir_stmt *l = kir_for(k, blk, vv, kir_const_i(k, 0), nv, KIR_SERIAL, 0);
    kir_block b = kir_body_begin();
    kir_expr *r = kir_mul(k, kir_var(k, vv), kir_const_i(k, w));
    kir_assign(k, &b, vacc, kir_bin(k, op, kir_local_ref(k, vacc), f(rw, &b, r, w, ctx)));
    kir_body_end(l, &b);
    kir_assign(k, blk, sacc, kir_hreduce(k, op, kir_local_ref(k, vacc)));
    full = kir_mul(k, nv, kir_const_i(k, w));
  }
  int vs = kir_var_new(k);
  kir_stmt *l = kir_for(k, blk, vs, full, rw->R, KIR_SERIAL, 0);
  kir_block b = kir_body_begin();
  kir_assign(k, &b, sacc,
             kir_bin(k, op, kir_local_ref(k, sacc), f(rw, &b, kir_var(k, vs), 1, ctx)));
  kir_body_end(l, &b);
  return sacc;
}

/* y[base + r] = f(r) for r in [0, R). */
static void row_map(row *rw, kir_block *blk, int ybuf, elem_fn f, void *ctx) {
  kir_kernel *k = rw->k;
  int w = rw->w;
  kir_expr *full = kir_const_i(k, 0);
  if (w > 1) {
    int vv = kir_var_new(k);
    kir_expr *nv = kir_bin(k, KIR_DIV, rw->R, kir_const_i(k, w));
    kir_stmt *l = kir_for(k, blk, vv, kir_const_i(k, 0), nv, KIR_SERIAL, 0);
    kir_block b = kir_body_begin();
    kir_expr *r = kir_mul(k, kir_var(k, vv), kir_const_i(k, w));
    kir_store(k, &b, ybuf, kir_add(k, rw->base, r), f(rw, &b, r, w, ctx), NULL);
    kir_body_end(l, &b);
    full = kir_mul(k, nv, kir_const_i(k, w));
  }
  int vs = kir_var_new(k);
  kir_stmt *l = kir_for(k, blk, vs, full, rw->R, KIR_SERIAL, 0);
  kir_block b = kir_body_begin();
  kir_expr *r = kir_var(k, vs);
  kir_store(k, &b, ybuf, kir_add(k, rw->base, r), f(rw, &b, r, 1, ctx), NULL);
  kir_body_end(l, &b);
}

/* ---- element functions ---- */

typedef struct ectx {
  int xbuf, ybuf, sbuf, bbuf; /* input, output, scale, bias (-1 none) */
  int m, s, c;                /* scalar locals: max/mean, sum/rstd, shift */
  bool log;
} ectx;

static kir_expr *ld(row *rw, int buf, kir_expr *r, int lanes) {
  return kir_loadv(rw->k, buf, kir_add(rw->k, rw->base, r), lanes, NULL);
}

static kir_expr *local_splat(row *rw, int local, int lanes) {
  return kir_splat(rw->k, kir_local_ref(rw->k, local), lanes);
}

static kir_expr *e_x(row *rw, kir_block *blk, kir_expr *r, int lanes,
                     void *c) {
  return ld(rw, ((ectx *)c)->xbuf, r, lanes);
}

static kir_expr *e_y(row *rw, kir_block *blk, kir_expr *r, int lanes,
                     void *c) {
  return ld(rw, ((ectx *)c)->ybuf, r, lanes);
}

/* x - m */
static kir_expr *e_centred(row *rw, kir_block *blk, kir_expr *r, int lanes,
                           void *c) {
  ectx *e = c;
  return kir_bin(rw->k, KIR_SUB, ld(rw, e->xbuf, r, lanes), local_splat(rw, e->m, lanes));
}

static kir_expr *e_exp_centred(row *rw, kir_block *blk, kir_expr *r, int lanes,
                               void *c) {
  return kir_un(rw->k, KIR_EXP, e_centred(rw, blk, r, lanes, c));
}

static kir_expr *e_sq_centred(row *rw, kir_block *blk, kir_expr *r, int lanes,
                              void *c) {
  kir_expr *d = e_centred(rw, blk, r, lanes, c);
  return kir_bin(rw->k, KIR_MUL, d, d);
}

/* softmax: y * s (s = 1/sum); log-softmax: x - m - s (s = log(sum)) */
static kir_expr *e_softmax_out(row *rw, kir_block *blk, kir_expr *r, int lanes,
                               void *c) {
  ectx *e = c;
  if (e->log)
    return kir_bin(rw->k, KIR_SUB, e_centred(rw, blk, r, lanes, c), local_splat(rw, e->s, lanes));
  return kir_bin(rw->k, KIR_MUL, ld(rw, e->ybuf, r, lanes), local_splat(rw, e->s, lanes));
}

/* (x - mean) * rstd * scale[r] + bias[r] */
static kir_expr *e_layernorm_out(row *rw, kir_block *blk, kir_expr *r, int lanes,
                                 void *c) {
  ectx *e = c;
  kir_kernel *k = rw->k;
  kir_expr *v = kir_bin(k, KIR_MUL, e_centred(rw, blk, r, lanes, c), local_splat(rw, e->s, lanes));
  kir_expr *sc = kir_loadv(k, e->sbuf, r, lanes, NULL);
  if (e->bbuf >= 0) return kir_fma(k, v, sc, kir_loadv(k, e->bbuf, r, lanes, NULL));
  return kir_bin(k, KIR_MUL, v, sc);
}

/* BatchNorm: (x - mean) * a + B with a = scale / sqrt(var + eps) */
static kir_expr *e_bn_out(row *rw, kir_block *blk, kir_expr *r, int lanes,
                          void *c) {
  ectx *e = c;
  return kir_fma(rw->k, e_centred(rw, blk, r, lanes, c), local_splat(rw, e->s, lanes),
                 local_splat(rw, e->c, lanes));
}

/* ---- kernels ---- */

ncc_status ncc_lower_reduce(const ncc_node *n, const char *name,
                            const ncc_lower_opts *o, kir_kernel **out) {
  *out = NULL;
  rplan p;
  if (!plan(n, &p)) return NCC_ERR_UNSUPPORTED;
  kir_kernel *k = kir_kernel_new(name);
  if (!k) return NCC_ERR_NOMEM;
  const ncc_value *x = n->in[0];
  int rank = x->shape.rank;
  ectx e = {.xbuf = kir_buf_input(k, 0, F32), .sbuf = -1, .bbuf = -1};
  if (n->op == NCC_OP_LAYERNORM) {
    e.sbuf = kir_buf_input(k, 1, F32);
    if (n->n_in > 2 && n->in[2]) e.bbuf = kir_buf_input(k, 2, F32);
  }
  e.ybuf = kir_buf_output(k, 0, F32);
  kir_expr *rows = kir_const_i(k, 1), *R = kir_const_i(k, 1);
  for (int j = 0; j < rank; j++) {
    kir_expr *d = ncc_lower_dim(k, x->shape.d[j]);
    if (j < p.first)
      rows = kir_mul(k, rows, d);
    else
      R = kir_mul(k, R, d);
  }
  row rw = {.k = k, .w = o->vector_width > 0 ? o->vector_width : 1, .R = R};
  int vo = kir_var_new(k);
  kir_block top = kir_body_begin();
  kir_stmt *lo = kir_for(k, &top, vo, kir_const_i(k, 0), rows, KIR_PARALLEL, 0);
  kir_block b = kir_body_begin();
  rw.base = kir_mul(k, kir_var(k, vo), R);
  kir_expr *Rf = kir_cast(k, F32, R);
  switch (n->op) {
  case NCC_OP_REDUCEMAX:
  case NCC_OP_REDUCESUM:
  case NCC_OP_REDUCEMEAN:
  case NCC_OP_GLOBALAVGPOOL: {
    bool mx = n->op == NCC_OP_REDUCEMAX;
    int acc = row_reduce(&rw, &b, mx ? KIR_MAX : KIR_ADD, mx ? -INFINITY : 0.0, e_x, &e);
    kir_expr *v = kir_local_ref(k, acc);
    if (p.mean) v = kir_bin(k, KIR_DIV, v, Rf);
    kir_store(k, &b, e.ybuf, kir_var(k, vo), v, NULL);
    break;
  }
  case NCC_OP_SOFTMAX:
  case NCC_OP_LOGSOFTMAX: {
    e.log = n->op == NCC_OP_LOGSOFTMAX;
    e.m = row_reduce(&rw, &b, KIR_MAX, -INFINITY, e_x, &e);
    if (!e.log) row_map(&rw, &b, e.ybuf, e_exp_centred, &e);
    int sum = row_reduce(&rw, &b, KIR_ADD, 0.0, e.log ? e_exp_centred : e_y, &e);
    e.s = kir_local_add(k, F32, 1);
    kir_expr *s = kir_local_ref(k, sum);
    kir_assign(k, &b, e.s, e.log ? kir_un(k, KIR_LOG, s) : kir_bin(k, KIR_DIV, cst(k, 1.0, 1), s));
    row_map(&rw, &b, e.ybuf, e_softmax_out, &e);
    break;
  }
  case NCC_OP_BATCHNORM: {
    ncc_norm_attrs na;
    ncc_attrs_norm(n, &na);
    double eps = na.epsilon;
    kir_expr *ch = kir_bin(k, KIR_REM, kir_var(k, vo), ncc_lower_dim(k, x->shape.d[1]));
    int bs = kir_buf_input(k, 1, F32), bb = kir_buf_input(k, 2, F32);
    int bm = kir_buf_input(k, 3, F32), bv = kir_buf_input(k, 4, F32);
    e.m = kir_local_add(k, F32, 1);
    e.s = kir_local_add(k, F32, 1);
    e.c = kir_local_add(k, F32, 1);
    kir_assign(k, &b, e.m, kir_load(k, bm, ch));
    kir_assign(k, &b, e.s,
               kir_bin(k, KIR_DIV, kir_load(k, bs, ch),
                       kir_un(k, KIR_SQRT, kir_bin(k, KIR_ADD, kir_load(k, bv, ch),
                                                   cst(k, eps, 1)))));
    kir_assign(k, &b, e.c, kir_load(k, bb, ch));
    row_map(&rw, &b, e.ybuf, e_bn_out, &e);
    break;
  }
  case NCC_OP_LAYERNORM: {
    ncc_norm_attrs na;
    ncc_attrs_norm(n, &na);
    double eps = na.epsilon;
    int sum = row_reduce(&rw, &b, KIR_ADD, 0.0, e_x, &e);
    e.m = kir_local_add(k, F32, 1);
    kir_assign(k, &b, e.m, kir_bin(k, KIR_DIV, kir_local_ref(k, sum), Rf));
    int ss = row_reduce(&rw, &b, KIR_ADD, 0.0, e_sq_centred, &e);
    e.s = kir_local_add(k, F32, 1);
    kir_expr *var = kir_bin(k, KIR_DIV, kir_local_ref(k, ss), Rf);
    kir_assign(k, &b, e.s,
               kir_bin(k, KIR_DIV, cst(k, 1.0, 1),
                       kir_un(k, KIR_SQRT, kir_bin(k, KIR_ADD, var, cst(k, eps, 1)))));
    row_map(&rw, &b, e.ybuf, e_layernorm_out, &e);
    break;
  }
  default:
    NCC_ASSERT(!"unhandled row op");
  }
  kir_body_end(lo, &b);
  kir_kernel_set_body(k, &top);
  if (!kir_ok(k)) {
    kir_kernel_free(k);
    return ncc_error(NCC_ERR_NOMEM, "out of memory lowering %s", ncc_op_name(n->op));
  }
  /* work per output element: R for reductions (output is one per row) */
  bool per_row = n->op != NCC_OP_SOFTMAX && n->op != NCC_OP_LOGSOFTMAX &&
                 n->op != NCC_OP_LAYERNORM && n->op != NCC_OP_BATCHNORM;
  int64_t rs = 1;
  for (int j = p.first; j < rank; j++)
    rs *= ncc_dim_is_sym(x->shape.d[j]) ? 64 : x->shape.d[j];
  k->cost_per_elem = per_row ? (double)rs : 4.0;
  *out = k;
  return NCC_OK;
}

/* ---- fused row groups (fuse.kind = "reduce") ----
 * Every member works on the rows [rows, R] of one shape S: full members
 * (shape S: elementwise, Softmax, LayerNorm) are expressions of the row
 * offset r, evaluated inside whichever sweep needs them (recomputed rather
 * than stored); per-row members (shape S with the reduced dims 1:
 * reductions, elementwise on their results) are locals computed once per
 * row, in graph order. The root is stored by a final sweep (full) or once
 * per row (per-row). So a decomposed LayerNorm or Softmax, or a reduction
 * with elementwise work before and after it, reads its input from memory
 * in each sweep and writes only the result. */

enum { C_FULL, C_COL, C_ROW, C_SCALAR };

typedef struct rgroup {
  ncc_gx gx;
  row rw;
  const ncc_shape *S;
  int first;
  kir_expr *row_idx;
  kir_expr *r;                      /* row offset of the current point */
  kir_expr *Rf;                     /* R as f32 */
  int cls[NCC_FUSE_MAX_EXT];        /* external value classes, -1 unknown */
  int mloc[NCC_FUSE_MAX_MEMBERS];   /* per-row result local, -1 */
  int aux[NCC_FUSE_MAX_MEMBERS][2]; /* Softmax: max, 1/sum or log(sum);
                                       LayerNorm: mean, 1/stddev */
  bool row_member[NCC_FUSE_MAX_MEMBERS];
} rgroup;

/* Class of value shape v against S split at `first` (numpy-aligned). */
static int value_class(const ncc_value *v, const ncc_shape *S, int first) {
  int r = S->rank, vr = v->shape.rank;
  if (vr > r) return -1;
  bool rows_full = true, rows_one = true, cols_full = true, cols_one = true;
  for (int j = 0; j < r; j++) {
    int jj = j - (r - vr);
    int64_t d = jj < 0 ? 1 : v->shape.d[jj];
    bool full = d == S->d[j], one = d == 1;
    if (j < first) {
      rows_full &= full;
      rows_one &= one;
    } else {
      cols_full &= full;
      cols_one &= one;
    }
  }
  if (rows_full && cols_full) return C_FULL;
  if (rows_one && cols_one) return C_SCALAR;
  if (rows_one && cols_full) return C_COL;
  if (rows_full && cols_one) return C_ROW;
  return -1;
}

static bool is_row_op(const ncc_node *n) {
  return n->op == NCC_OP_REDUCESUM || n->op == NCC_OP_REDUCEMEAN ||
         n->op == NCC_OP_REDUCEMAX || n->op == NCC_OP_SOFTMAX ||
         n->op == NCC_OP_LOGSOFTMAX || n->op == NCC_OP_LAYERNORM;
}

static bool is_reduce_op(const ncc_node *n) {
  return n->op == NCC_OP_REDUCESUM || n->op == NCC_OP_REDUCEMEAN ||
         n->op == NCC_OP_REDUCEMAX;
}

/* Inputs that carry data (not a reduction's axes). */
static bool data_input(const ncc_node *n, int i) {
  return !(is_reduce_op(n) && i > 0);
}

static kir_expr *rg_ext(ncc_gx *x, int e, int lanes) {
  rgroup *g = x->ctx;
  kir_kernel *k = x->k;
  int buf = ncc_gx_buf(x, e);
  switch (g->cls[e]) {
  case C_FULL: return kir_loadv(k, buf, kir_add(k, g->rw.base, g->r), lanes, NULL);
  case C_COL: return kir_loadv(k, buf, g->r, lanes, NULL);
  case C_ROW: return kir_splat(k, kir_load(k, buf, g->row_idx), lanes);
  default: return kir_splat(k, kir_load(k, buf, kir_const_i(k, 0)), lanes);
  }
}

static kir_expr *rg_special(ncc_gx *x, kir_block *blk, int m, int lanes) {
  rgroup *g = x->ctx;
  kir_kernel *k = x->k;
  const ncc_node *n = x->gr->members[m];
  if (g->mloc[m] >= 0) return kir_splat(k, kir_local_ref(k, g->mloc[m]), lanes);
  if (n->op == NCC_OP_SOFTMAX || n->op == NCC_OP_LOGSOFTMAX) {
    kir_expr *c = kir_bin(k, KIR_SUB, ncc_gx_value(x, blk, n->in[0], lanes),
                          kir_splat(k, kir_local_ref(k, g->aux[m][0]), lanes));
    kir_expr *s = kir_splat(k, kir_local_ref(k, g->aux[m][1]), lanes);
    if (n->op == NCC_OP_LOGSOFTMAX) return kir_bin(k, KIR_SUB, c, s);
    return kir_bin(k, KIR_MUL, kir_un(k, KIR_EXP, c), s);
  }
  if (n->op == NCC_OP_LAYERNORM) {
    kir_expr *c = kir_bin(k, KIR_SUB, ncc_gx_value(x, blk, n->in[0], lanes),
                          kir_splat(k, kir_local_ref(k, g->aux[m][0]), lanes));
    kir_expr *v = kir_bin(k, KIR_MUL, c, kir_splat(k, kir_local_ref(k, g->aux[m][1]), lanes));
    kir_expr *sc = ncc_gx_value(x, blk, n->in[1], lanes);
    if (n->n_in > 2 && n->in[2])
      return kir_fma(k, v, sc, ncc_gx_value(x, blk, n->in[2], lanes));
    return kir_bin(k, KIR_MUL, v, sc);
  }
  return NULL;
}

/* Element function of a sweep: value v of the group at offset r. */
typedef struct sweep {
  rgroup *g;
  const ncc_value *v;
  kir_expr *sub; /* subtracted per-row scalar (centring), or NULL */
  bool square, exp;
} sweep;

static kir_expr *e_sweep(row *rw, kir_block *blk, kir_expr *r, int lanes, void *c) {
  sweep *s = c;
  rgroup *g = s->g;
  kir_kernel *k = rw->k;
  g->r = r;
  ncc_gx_point(&g->gx);
  kir_expr *v = ncc_gx_value(&g->gx, blk, s->v, lanes);
  if (s->sub) v = kir_bin(k, KIR_SUB, v, kir_splat(k, s->sub, lanes));
  if (s->exp) v = kir_un(k, KIR_EXP, v);
  if (s->square) v = kir_bin(k, KIR_MUL, v, v);
  return v;
}

static int sweep_reduce(rgroup *g, kir_block *b, kir_op op, double init,
                        const ncc_value *v, kir_expr *sub, bool sq, bool ex) {
  sweep s = {.g = g, .v = v, .sub = sub, .square = sq, .exp = ex};
  return row_reduce(&g->rw, b, op, init, e_sweep, &s);
}

/* A new scalar local set to e. */
static int row_local(kir_kernel *k, kir_block *b, kir_expr *e) {
  int l = kir_local_add(k, F32, 1);
  kir_assign(k, b, l, e);
  return l;
}

/* Per-row work of member m (graph order) in the row body. */
static void row_member(rgroup *g, kir_block *b, int m) {
  kir_kernel *k = g->gx.k;
  const ncc_node *n = g->gx.gr->members[m];
  const ncc_value *x = n->in[0];
  switch (n->op) {
  case NCC_OP_REDUCESUM:
  case NCC_OP_REDUCEMEAN:
  case NCC_OP_REDUCEMAX: {
    bool mx = n->op == NCC_OP_REDUCEMAX;
    int acc = sweep_reduce(g, b, mx ? KIR_MAX : KIR_ADD, mx ? -INFINITY : 0.0, x,
                           NULL, false, false);
    if (n->op == NCC_OP_REDUCEMEAN)
      acc = row_local(k, b, kir_bin(k, KIR_DIV, kir_local_ref(k, acc), g->Rf));
    g->mloc[m] = acc;
    return;
  }
  case NCC_OP_SOFTMAX:
  case NCC_OP_LOGSOFTMAX: {
    int mx = sweep_reduce(g, b, KIR_MAX, -INFINITY, x, NULL, false, false);
    int sum = sweep_reduce(g, b, KIR_ADD, 0.0, x, kir_local_ref(k, mx), false, true);
    kir_expr *s = kir_local_ref(k, sum);
    g->aux[m][0] = mx;
    g->aux[m][1] = row_local(k, b, n->op == NCC_OP_LOGSOFTMAX
                                       ? kir_un(k, KIR_LOG, s)
                                       : kir_bin(k, KIR_DIV, cst(k, 1.0, 1), s));
    return;
  }
  case NCC_OP_LAYERNORM: {
    ncc_norm_attrs na;
    ncc_attrs_norm(n, &na);
    double eps = na.epsilon;
    int sum = sweep_reduce(g, b, KIR_ADD, 0.0, x, NULL, false, false);
    int mean = row_local(k, b, kir_bin(k, KIR_DIV, kir_local_ref(k, sum), g->Rf));
    int ss = sweep_reduce(g, b, KIR_ADD, 0.0, x, kir_local_ref(k, mean), true, false);
    kir_expr *var = kir_bin(k, KIR_DIV, kir_local_ref(k, ss), g->Rf);
    g->aux[m][0] = mean;
    g->aux[m][1] = row_local(
        k, b, kir_bin(k, KIR_DIV, cst(k, 1.0, 1),
                      kir_un(k, KIR_SQRT, kir_bin(k, KIR_ADD, var, cst(k, eps, 1)))));
    return;
  }
  default:
    if (!g->row_member[m]) return; /* full elementwise: evaluated lazily */
    ncc_gx_point(&g->gx);
    g->mloc[m] = row_local(k, b, ncc_gx_member(&g->gx, b, m, 1));
    return;
  }
}

/* Check the group and fill S, first, the classes; false: unsupported. */
static bool rgroup_plan(rgroup *g, const ncc_fuse_group *gr) {
  g->S = NULL;
  for (int m = 0; m < gr->n_members && !g->S; m++) {
    rplan p;
    const ncc_node *n = gr->members[m];
    if (!is_row_op(n) || !plan(n, &p)) continue;
    g->S = &n->in[0]->shape;
    g->first = p.first;
  }
  if (!g->S) return false;
  ncc_shape P = *g->S;
  for (int j = g->first; j < P.rank; j++) P.d[j] = 1;
  for (int e = 0; e < NCC_FUSE_MAX_EXT; e++) g->cls[e] = -1;
  for (int m = 0; m < gr->n_members; m++) {
    const ncc_node *n = gr->members[m];
    const ncc_value *y = n->out[0];
    g->mloc[m] = g->aux[m][0] = g->aux[m][1] = -1;
    if (y->dtype != F32) return false;
    bool full = ncc_shape_eq(&y->shape, g->S), per_row = ncc_shape_eq(&y->shape, &P);
    if (is_row_op(n)) {
      rplan p;
      if (!plan(n, &p) || p.first != g->first || !ncc_shape_eq(&n->in[0]->shape, g->S))
        return false;
      if (is_reduce_op(n) && !per_row) {
        /* keepdims = 0: only as the root, stored per row all the same */
        if (m != gr->n_members - 1 || y->shape.rank != g->first) return false;
      }
    } else {
      if (!ncc_lower_eltwise_supports(n) || (!full && !per_row)) return false;
      g->row_member[m] = per_row && !full;
    }
    for (int i = 0; i < n->n_in; i++) {
      const ncc_value *v = n->in[i];
      int e = v ? ncc_gx_ext_of(&g->gx, v) : -1;
      if (e < 0 || !data_input(n, i)) continue;
      int c = value_class(v, g->S, g->first);
      if (c < 0 || v->dtype != (n->op == NCC_OP_WHERE && i == 0 ? NCC_DT_BOOL : F32))
        return false;
      g->cls[e] = c;
    }
  }
  return true;
}

ncc_status ncc_lower_reduce_group(const ncc_fuse_group *gr, const char *name,
                                  const ncc_lower_opts *o, kir_kernel **out) {
  *out = NULL;
  kir_kernel *k = kir_kernel_new(name);
  if (!k) return NCC_ERR_NOMEM;
  rgroup g;
  memset(&g, 0, sizeof g);
  ncc_gx_init(&g.gx, k, gr);
  g.gx.ext = rg_ext;
  g.gx.special = rg_special;
  g.gx.ctx = &g;
  if (!rgroup_plan(&g, gr)) {
    kir_kernel_free(k);
    return NCC_ERR_UNSUPPORTED;
  }
  const ncc_node *root = gr->members[gr->n_members - 1];
  int ybuf = kir_buf_output(k, 0, F32);
  kir_expr *rows = kir_const_i(k, 1), *R = kir_const_i(k, 1);
  for (int j = 0; j < g.S->rank; j++) {
    kir_expr *d = ncc_lower_dim(k, g.S->d[j]);
    if (j < g.first)
      rows = kir_mul(k, rows, d);
    else
      R = kir_mul(k, R, d);
  }
  g.rw = (row){.k = k, .w = o->vector_width > 0 ? o->vector_width : 1, .R = R};
  g.Rf = kir_cast(k, F32, R);
  int vo = kir_var_new(k);
  kir_block top = kir_body_begin();
  kir_stmt *lo = kir_for(k, &top, vo, kir_const_i(k, 0), rows, KIR_PARALLEL, 0);
  kir_block b = kir_body_begin();
  g.row_idx = kir_var(k, vo);
  g.rw.base = kir_mul(k, g.row_idx, R);
  for (int m = 0; m < gr->n_members; m++) row_member(&g, &b, m);
  bool full_root = ncc_shape_eq(&root->out[0]->shape, g.S) &&
                   !(is_reduce_op(root) || g.row_member[gr->n_members - 1]);
  if (full_root) {
    sweep s = {.g = &g, .v = root->out[0]};
    row_map(&g.rw, &b, ybuf, e_sweep, &s);
  } else {
    int m = gr->n_members - 1;
    NCC_ASSERT(g.mloc[m] >= 0);
    kir_store(k, &b, ybuf, g.row_idx, kir_local_ref(k, g.mloc[m]), NULL);
  }
  kir_body_end(lo, &b);
  kir_kernel_set_body(k, &top);
  if (!kir_ok(k)) {
    kir_kernel_free(k);
    return ncc_error(NCC_ERR_NOMEM, "out of memory lowering a fused row group");
  }
  int64_t rs = 1;
  for (int j = g.first; j < g.S->rank; j++)
    rs *= ncc_dim_is_sym(g.S->d[j]) ? 64 : g.S->d[j];
  k->cost_per_elem = (full_root ? 1.0 : (double)rs) * (double)gr->n_members;
  *out = k;
  return NCC_OK;
}
