/* codegen/lower_eltwise.c — elementwise ops (unary, binary with numpy
 * broadcasting, variadic Max/Min, Where, Clip) to one loop nest.
 *
 * Broadcasting is expressed with strides: an operand's stride is 0 along the
 * dims it broadcasts over. Adjacent output dims that every operand treats
 * alike (all broadcast or all not) are collapsed, so a same-shape op is one
 * flat loop and a bias add is two. The schedule: a flat loop is split into
 * blocks distributed over threads, each block vectorized; a deeper nest
 * runs its outer dims as one parallel loop (decomposed with div/mod once per
 * row) around a vectorized innermost loop. The vector loop is up to four
 * native vectors wide (loop_lanes): independent work per iteration for
 * long fused chains.
 *
 * Scalar formulas follow the reference interpreter (runtime/ref); the
 * numerically delicate ones are written in their stable form (Softplus).
 */
#include <math.h>
#include <string.h>

#include "../ir/attrs.h"
#include "lower.h"

/* Elements per parallel block of a flat loop: large enough to amortize the
 * loop overhead, small enough to balance threads. */
#define FLAT_BLOCK 4096

#define MAX_OPS (KIR_MAX_BUFS - 1)

static bool all_f32_inputs(const ncc_node *n) {
  for (int i = 0; i < n->n_in; i++)
    if (n->in[i] && n->in[i]->dtype != NCC_DT_F32) return false;
  return true;
}

/* Op and dtype check (shapes are checked by plan_broadcast). */
bool ncc_lower_eltwise_op_ok(const ncc_node *n) {
  if (n->n_out != 1 || !n->out[0] || n->n_in > MAX_OPS) return false;
  ncc_dtype od = n->out[0]->dtype;
  switch (n->op) {
  case NCC_OP_EQUAL:
  case NCC_OP_LESS:
  case NCC_OP_GREATER:
    return od == NCC_DT_BOOL && all_f32_inputs(n);
  case NCC_OP_WHERE:
    return od == NCC_DT_F32 && n->in[0] && n->in[0]->dtype == NCC_DT_BOOL &&
           n->in[1] && n->in[1]->dtype == NCC_DT_F32 && n->in[2] &&
           n->in[2]->dtype == NCC_DT_F32;
  case NCC_OP_CLIP:
    for (int i = 1; i < n->n_in; i++)
      if (n->in[i] && n->in[i]->shape.rank != 0) return false;
    return od == NCC_DT_F32 && n->in[0] && all_f32_inputs(n);
  case NCC_OP_GELU: {
    ncc_act_attrs a;
    if (ncc_attrs_act(n, &a)) return false;
    return od == NCC_DT_F32 && n->in[0] && all_f32_inputs(n);
  }
  case NCC_OP_ADD: case NCC_OP_SUB: case NCC_OP_MUL: case NCC_OP_DIV:
  case NCC_OP_POW: case NCC_OP_MAX: case NCC_OP_MIN:
  case NCC_OP_SIGMOID:
  case NCC_OP_HARDSIGMOID: case NCC_OP_HARDSWISH: case NCC_OP_SOFTPLUS:
  case NCC_OP_IDENTITY:
#define NCC_UNARY(id, formula) case NCC_OP_##id:
#include "../ir/eltwise.def"
#undef NCC_UNARY
    for (int i = 0; i < n->n_in; i++)
      if (!n->in[i]) return false;
    return od == NCC_DT_F32 && all_f32_inputs(n);
  default:
    return false;
  }
}

/* The broadcast structure of a loop nest over shape `os` reading operands
 * ops[]: dims collapsed into groups every operand treats alike. */
typedef struct bplan {
  int n_ops;
  int m;                     /* collapsed dims */
  int first[NCC_MAX_RANK];   /* first output dim of each group */
  int last[NCC_MAX_RANK];    /* one past the last */
  bool bc[MAX_OPS][NCC_MAX_RANK]; /* operand broadcasts over the group */
} bplan;

/* Operand dim aligned to output dim j (numpy: align right, missing = 1). */
static int64_t aligned_dim(const ncc_value *v, int r, int j) {
  int jj = j - (r - v->shape.rank);
  return jj < 0 ? 1 : v->shape.d[jj];
}

static bool plan_broadcast(const ncc_value *const *ops, int n_ops,
                           const ncc_shape *os, bplan *p) {
  memset(p, 0, sizeof *p);
  if (n_ops > MAX_OPS) return false;
  int r = os->rank;
  bool bcd[MAX_OPS][NCC_MAX_RANK];
  p->n_ops = n_ops;
  for (int k = 0; k < n_ops; k++) {
    const ncc_value *v = ops[k];
    if (v->shape.rank > r) return false;
    for (int j = 0; j < r; j++) {
      int64_t d = aligned_dim(v, r, j);
      if (d == os->d[j])
        bcd[k][j] = false;
      else if (d == 1)
        bcd[k][j] = true;
      else
        return false; /* e.g. two different symbols: not decidable here */
    }
  }
  int prev = -1;
  for (int j = 0; j < r; j++) {
    if (os->d[j] == 1) continue; /* size-1 dims do not affect indexing */
    bool same = prev >= 0;
    for (int k = 0; k < p->n_ops && same; k++)
      same = bcd[k][j] == bcd[k][prev];
    if (same) {
      p->last[p->m - 1] = j + 1;
    } else {
      p->first[p->m] = j;
      p->last[p->m] = j + 1;
      for (int k = 0; k < p->n_ops; k++) p->bc[k][p->m] = bcd[k][j];
      p->m++;
    }
    prev = j;
  }
  return true;
}

/* The non-omitted inputs of n. */
static int node_operands(const ncc_node *n, const ncc_value **ops) {
  int c = 0;
  for (int i = 0; i < n->n_in && c < MAX_OPS; i++)
    if (n->in[i]) ops[c++] = n->in[i];
  return c;
}

bool ncc_lower_eltwise_supports(const ncc_node *n) {
  bplan p;
  const ncc_value *ops[MAX_OPS];
  return ncc_lower_eltwise_op_ok(n) &&
         plan_broadcast(ops, node_operands(n, ops), &n->out[0]->shape, &p);
}

kir_expr *ncc_lower_eltwise_formula(kir_kernel *k, const ncc_node *n,
                                    kir_expr **x, int nx, int lanes) {
  ncc_dtype f = NCC_DT_F32;
#define C(v) kir_splat(k, kir_const_f(k, f, (v)), lanes)
#define B(op, a, b) kir_bin(k, KIR_##op, (a), (b))
#define U(op, a) kir_un(k, KIR_##op, (a))
  kir_expr *a = x[0];
  ncc_act_attrs act; /* ALPHA and BETA of the formulas */
  ncc_attrs_act(n, &act);
  switch (n->op) {
  case NCC_OP_ADD: return B(ADD, a, x[1]);
  case NCC_OP_SUB: return B(SUB, a, x[1]);
  case NCC_OP_MUL: return B(MUL, a, x[1]);
  case NCC_OP_DIV: return B(DIV, a, x[1]);
  case NCC_OP_POW: return B(POW, a, x[1]);
  case NCC_OP_MAX:
  case NCC_OP_MIN: {
    kir_expr *r = a;
    for (int i = 1; i < nx; i++)
      r = n->op == NCC_OP_MAX ? B(MAX, r, x[i]) : B(MIN, r, x[i]);
    return r;
  }
  case NCC_OP_EQUAL: return B(EQ, a, x[1]);
  case NCC_OP_LESS: return B(LT, a, x[1]);
  case NCC_OP_GREATER: return B(GT, a, x[1]);
  case NCC_OP_WHERE: return kir_select(k, a, x[1], x[2]);
  case NCC_OP_CLIP: {
    /* operands: x, then min and/or max in input order */
    kir_expr *r = a;
    int op = 1;
    if (n->n_in > 1 && n->in[1]) r = B(MAX, r, x[op++]);
    if (n->n_in > 2 && n->in[2]) r = B(MIN, r, x[op++]);
    return r;
  }
    /* the formulas of ir/eltwise.def, in kernel IR */
#define X a
#define K(c) C(c)
#define ADD(p, q) B(ADD, p, q)
#define SUB(p, q) B(SUB, p, q)
#define MUL(p, q) B(MUL, p, q)
#define DIV(p, q) B(DIV, p, q)
#define NEG(p) U(NEG, p)
#define ABS(p) U(ABS, p)
#define SQRT(p) U(SQRT, p)
#define EXP(p) U(EXP, p)
#define LOG(p) U(LOG, p)
#define ERF(p) U(ERF, p)
#define TANH(p) U(TANH, p)
#define SEL_LT(p, q, t, f) kir_select(k, B(LT, p, q), t, f)
#define ALPHA C(act.alpha)
#define BETA C(act.beta)
#define NCC_UNARY(id, formula) case NCC_OP_##id: return formula;
#include "../ir/eltwise.def"
#undef NCC_UNARY
#undef X
#undef K
#undef ADD
#undef SUB
#undef MUL
#undef DIV
#undef NEG
#undef ABS
#undef SQRT
#undef EXP
#undef LOG
#undef ERF
#undef TANH
#undef SEL_LT
#undef ALPHA
#undef BETA
  case NCC_OP_SIGMOID: return B(DIV, C(1.0), B(ADD, C(1.0), U(EXP, U(NEG, a))));
  case NCC_OP_HARDSIGMOID:
    return B(MAX, C(0.0), B(MIN, C(1.0), kir_fma(k, C(act.alpha), a, C(act.beta))));
  case NCC_OP_HARDSWISH:
    return B(MUL, a,
             B(MAX, C(0.0), B(MIN, C(1.0), kir_fma(k, C(1.0 / 6.0), a, C(0.5)))));
  case NCC_OP_GELU:
    if (act.gelu_tanh) {
      /* 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
      kir_expr *x3 = B(MUL, B(MUL, a, a), a);
      kir_expr *in = B(MUL, C(0.7978845608028654), kir_fma(k, C(0.044715), x3, a));
      return B(MUL, B(MUL, C(0.5), a), B(ADD, C(1.0), U(TANH, in)));
    }
    return B(MUL, B(MUL, C(0.5), a),
             B(ADD, C(1.0), U(ERF, B(MUL, a, C(0.7071067811865476)))));
  case NCC_OP_SOFTPLUS:
    /* log(1 + e^x) = max(x, 0) + log1p(e^-|x|): no overflow for large x */
    return B(ADD, B(MAX, a, C(0.0)), U(LOG1P, U(EXP, U(NEG, U(ABS, a)))));
  case NCC_OP_IDENTITY: return a;
  default: NCC_ASSERT(!"unhandled elementwise op"); return a;
  }
#undef C
#undef B
#undef U
}

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
static int64_t inner_extent(const bplan *p, const ncc_shape *os) {
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
static void eltwise_nest(kir_kernel *k, const bplan *p, const ncc_shape *os,
                         int w, nest_body_fn body, void *ctx) {
  w = loop_lanes(w, inner_extent(p, os));
  /* Extent of each collapsed group, and strides per operand and output. */
  kir_expr *ext[NCC_MAX_RANK] = {0};
  for (int g = 0; g < p->m; g++) {
    ext[g] = kir_const_i(k, 1);
    for (int j = p->first[g]; j < p->last[g]; j++)
      ext[g] = kir_mul(k, ext[g], ncc_lower_dim(k, os->d[j]));
  }
  kir_expr *stride[MAX_OPS][NCC_MAX_RANK] = {{0}}, *ostride[NCC_MAX_RANK] = {0};
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
  kir_expr *idx[MAX_OPS];
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
  int bufs[MAX_OPS];
  int obuf;
} node_ctx;

static void node_body(kir_kernel *k, void *ctx, kir_expr **idx, kir_expr *oidx,
                      kir_block *blk) {
  node_ctx *c = ctx;
  kir_expr *x[MAX_OPS];
  for (int i = 0; i < c->n_ops; i++) x[i] = kir_load(k, c->bufs[i], idx[i]);
  kir_store(k, blk, c->obuf, oidx, ncc_lower_eltwise_formula(k, c->n, x, c->n_ops, 1),
            NULL);
}

ncc_status ncc_lower_eltwise(const ncc_node *n, const char *name,
                             const ncc_lower_opts *o, kir_kernel **out) {
  *out = NULL;
  bplan p;
  const ncc_value *ops[MAX_OPS];
  int n_ops = node_operands(n, ops);
  if (!ncc_lower_eltwise_op_ok(n) || !plan_broadcast(ops, n_ops, &n->out[0]->shape, &p))
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

ncc_status ncc_lower_eltwise_group(const ncc_fuse_group *gr, const char *name,
                                   const ncc_lower_opts *o, kir_kernel **out) {
  *out = NULL;
  const ncc_node *root = gr->members[gr->n_members - 1];
  const ncc_shape *os = &root->out[0]->shape;
  for (int m = 0; m < gr->n_members; m++) {
    const ncc_node *n = gr->members[m];
    if (!ncc_lower_eltwise_op_ok(n) || !ncc_shape_eq(&n->out[0]->shape, os)) return NCC_ERR_UNSUPPORTED;
  }
  bplan p;
  if (!plan_broadcast((const ncc_value *const *)gr->ext, gr->n_ext, os, &p))
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
