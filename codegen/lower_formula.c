/* codegen/lower_formula.c — what an elementwise node computes: which ops,
 * attributes and dtypes have a formula, how the operands broadcast to the
 * output, and the scalar formula itself. Shared by the elementwise, blocked
 * and row-wise lowerings and by fused groups (lower_gx.c). Formulas follow
 * the reference interpreter (runtime/ref); the numerically delicate ones
 * are written in their stable form (Softplus). */
#include <string.h>

#include "../ir/attrs.h"
#include "../ir/qdq.h"
#include "lower.h"

static bool all_f32_inputs(const ncc_node *n) {
  for (int i = 0; i < n->n_in; i++)
    if (n->in[i] && n->in[i]->dtype != NCC_DT_F32) return false;
  return true;
}

bool ncc_lower_eltwise_op_ok(const ncc_node *n) {
  if (n->n_out != 1 || !n->out[0] || n->n_in > NCC_LOWER_MAX_OPS) return false;
  ncc_dtype od = n->out[0]->dtype;
  int axis;
  switch (n->op) {
  case NCC_OP_QUANTIZELINEAR:
  case NCC_OP_DEQUANTIZELINEAR:
    return ncc_qdq_eltwise(n, &axis);
  case NCC_OP_EQUAL:
  case NCC_OP_LESS:
  case NCC_OP_GREATER:
  case NCC_OP_LESSOREQUAL:
  case NCC_OP_GREATEROREQUAL:
  case NCC_OP_ISNAN:
    return od == NCC_DT_BOOL && all_f32_inputs(n);
  case NCC_OP_ISINF: {
    ncc_logic_attrs la;
    return od == NCC_DT_BOOL && all_f32_inputs(n) && !ncc_attrs_logic(n, &la);
  }
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
    for (int i = 0; i < n->n_in; i++)
      if (!n->in[i]) return false;
    return od == NCC_DT_F32 && all_f32_inputs(n);
  default:
    return false;
  }
}

/* Operand dim aligned to output dim j (numpy: align right, missing = 1). */
static int64_t aligned_dim(const ncc_value *v, int r, int j) {
  int jj = j - (r - v->shape.rank);
  return jj < 0 ? 1 : v->shape.d[jj];
}

bool ncc_lower_broadcast(const ncc_value *const *ops, int n_ops,
                           const ncc_shape *os, ncc_bcast *p) {
  memset(p, 0, sizeof *p);
  if (n_ops > NCC_LOWER_MAX_OPS) return false;
  int r = os->rank;
  bool bcd[NCC_LOWER_MAX_OPS][NCC_MAX_RANK];
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

int ncc_lower_operands(const ncc_node *n, const ncc_value **ops) {
  int c = 0;
  for (int i = 0; i < n->n_in && c < NCC_LOWER_MAX_OPS; i++)
    if (n->in[i]) ops[c++] = n->in[i];
  return c;
}

bool ncc_lower_operand_view(const ncc_node *n, int i, ncc_value *view) {
  int axis;
  if ((n->op != NCC_OP_QUANTIZELINEAR && n->op != NCC_OP_DEQUANTIZELINEAR) ||
      !ncc_qdq_eltwise(n, &axis) || axis < 0 || i == 0)
    return false;
  *view = *n->in[i];
  view->shape = ncc_qdq_operand_shape(n, axis, i);
  return true;
}

int ncc_lower_operand_views(const ncc_node *n, const ncc_value **ops, ncc_value *views) {
  int c = 0;
  for (int i = 0; i < n->n_in && c < NCC_LOWER_MAX_OPS; i++) {
    if (!n->in[i]) continue;
    ncc_value v;
    ops[c] = n->in[i];
    if (ncc_lower_operand_view(n, i, &v)) { /* Q/DQ only: c < 3 */
      views[c] = v;
      ops[c] = &views[c];
    }
    c++;
  }
  return c;
}

bool ncc_lower_eltwise_supports(const ncc_node *n) {
  ncc_bcast p;
  const ncc_value *ops[NCC_LOWER_MAX_OPS];
  ncc_value views[3]; /* Q/DQ: x, scale, zero point */
  if (!ncc_lower_eltwise_op_ok(n)) return false;
  bool qdq = n->op == NCC_OP_QUANTIZELINEAR || n->op == NCC_OP_DEQUANTIZELINEAR;
  int n_ops = qdq ? ncc_lower_operand_views(n, ops, views) : ncc_lower_operands(n, ops);
  return ncc_lower_broadcast(ops, n_ops, &n->out[0]->shape, &p);
}

/* QuantizeLinear: saturate(round_half_even(x / scale) + zero_point), in
 * f32 as the reference computes it (one IEEE division; the rounded
 * quotient plus a zero point of at most 8 bits is exact below 2^24 and
 * saturates above). NaN quantizes as 0; the clamp happens in f32, so the
 * conversion to an integer is always in range. */
static kir_expr *quantize_formula(kir_kernel *k, const ncc_node *n, kir_expr **x, int nx,
                                  int lanes) {
  ncc_dtype f = NCC_DT_F32, od = n->out[0]->dtype;
  kir_expr *q = kir_bin(k, KIR_DIV, x[0], x[1]);
  kir_expr *zero = kir_splat(k, kir_const_f(k, f, 0.0), lanes);
  q = kir_select(k, kir_bin(k, KIR_EQ, q, q), q, zero);
  q = kir_un(k, KIR_ROUND, q);
  if (nx > 2) q = kir_bin(k, KIR_ADD, q, kir_cast(k, f, x[2]));
  double lo = od == NCC_DT_U8 ? 0.0 : -128.0, hi = od == NCC_DT_U8 ? 255.0 : 127.0;
  q = kir_bin(k, KIR_MAX, q, kir_splat(k, kir_const_f(k, f, lo), lanes));
  q = kir_bin(k, KIR_MIN, q, kir_splat(k, kir_const_f(k, f, hi), lanes));
  /* through i32: fptosi straight to i8 would be out of range for u8 */
  return kir_cast(k, od, kir_cast(k, NCC_DT_I32, q));
}

/* DequantizeLinear: (x - zero_point) * scale; the 8-bit difference is
 * exact in f32, so the one rounding is the product's, as in the reference. */
static kir_expr *dequantize_formula(kir_kernel *k, kir_expr **x, int nx) {
  ncc_dtype f = NCC_DT_F32;
  kir_expr *v = kir_cast(k, f, x[0]);
  if (nx > 2) v = kir_bin(k, KIR_SUB, v, kir_cast(k, f, x[2]));
  return kir_bin(k, KIR_MUL, v, x[1]);
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
  case NCC_OP_QUANTIZELINEAR: return quantize_formula(k, n, x, nx, lanes);
  case NCC_OP_DEQUANTIZELINEAR: return dequantize_formula(k, x, nx);
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
  case NCC_OP_LESSOREQUAL: return B(LE, a, x[1]);
  case NCC_OP_GREATEROREQUAL: return B(GE, a, x[1]);
  case NCC_OP_ISNAN: return B(NE, a, a); /* unordered: true only for NaN */
  case NCC_OP_ISINF: {
    /* past the largest finite f32 (a constant every backend can print,
     * unlike infinity); NaN compares false */
    ncc_logic_attrs la;
    ncc_attrs_logic(n, &la);
    kir_expr *big = C(3.4028234663852886e38);
    if (la.detect_positive && la.detect_negative) return B(GT, U(ABS, a), big);
    if (la.detect_positive) return B(GT, a, big);
    if (la.detect_negative) return B(LT, a, U(NEG, big));
    return B(NE, C(0.0), C(0.0)); /* neither: always false */
  }
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
#define SIN(p) U(SIN, p)
#define COS(p) U(COS, p)
#define TAN(p) U(TAN, p)
#define ASIN(p) U(ASIN, p)
#define ACOS(p) U(ACOS, p)
#define ATAN(p) U(ATAN, p)
#define SINH(p) U(SINH, p)
#define COSH(p) U(COSH, p)
#define ASINH(p) U(ASINH, p)
#define ACOSH(p) U(ACOSH, p)
#define ATANH(p) U(ATANH, p)
#define FLOOR(p) U(FLOOR, p)
#define CEIL(p) U(CEIL, p)
#define ROUND(p) U(ROUND, p)
#define RBF16(p) U(RBF16, p)
#define RF16(p) U(RF16, p)
#define SEL_LT(p, q, t, f) kir_select(k, B(LT, p, q), t, f)
#define ALPHA C(act.alpha)
#define BETA C(act.beta)
#define GAMMA C(act.gamma)
#define NCC_UNARY(id, formula) case NCC_OP_##id: return formula;
#include "../ir/eltwise.def"
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
