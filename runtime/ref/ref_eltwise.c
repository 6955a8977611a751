/* runtime/ref/ref_eltwise.c — reference kernels of the elementwise ops.
 *
 * Binary ops, Where and variadic Max/Min broadcast like numpy. A broadcast is
 * planned once per call: size-1 dims are dropped and adjacent dims merged
 * while every operand stays linear across them, so same-shape contiguous
 * operands become a single row and a bias add becomes rows of "vector op
 * scalar" — the fast paths fall out of the plan instead of being separate code.
 *
 * f32 (complete in ncc) has typed loops; arithmetic is done in float, the
 * transcendental functions in double with libm and rounded once, which is at
 * least as exact as ONNX Runtime. Every other dtype goes through the
 * ref_util.c accessors: float dtypes in double (f16/bf16 rounded once on
 * store), signed integer dtypes in int64 and unsigned ones in uint64 with
 * two's-complement wrap-around (never C's undefined overflow), so u64 values
 * above 2^63 order and divide as unsigned. Integer Div truncates toward zero
 * like C (and ONNX Runtime); a zero divisor is an input error rather than a
 * trap.
 */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "../../ir/f16.h"
#include "ref.h"

static bool is_fp(ncc_dtype dt) { return ncc_ref_is_float(dt); }

/* ---- broadcast plan: operand 0 is the (contiguous) output ---- */

#define MAX_OPS 4

typedef struct bcast {
  int rank, nops;
  int64_t dims[NCC_MAX_RANK];
  int64_t st[MAX_OPS][NCC_MAX_RANK];
} bcast;

static void bcast_init(bcast *b, const ncc_tensor *out,
                       const ncc_tensor *const *ins, int n_ins) {
  NCC_ASSERT(n_ins + 1 <= MAX_OPS);
  int64_t st[MAX_OPS][NCC_MAX_RANK];
  b->nops = n_ins + 1;
  ncc_ref_strides(out, st[0]);
  for (int k = 0; k < n_ins; k++)
    ncc_ref_bcast_strides(ins[k], out->rank, out->dims, st[k + 1]);
  int m = 0;
  for (int i = 0; i < out->rank; i++) {
    if (out->dims[i] == 1) continue;
    bool merge = m > 0;
    for (int k = 0; merge && k < b->nops; k++)
      merge = b->st[k][m - 1] == st[k][i] * out->dims[i];
    if (merge) {
      b->dims[m - 1] *= out->dims[i];
      for (int k = 0; k < b->nops; k++) b->st[k][m - 1] = st[k][i];
    } else {
      b->dims[m] = out->dims[i];
      for (int k = 0; k < b->nops; k++) b->st[k][m] = st[k][i];
      m++;
    }
  }
  if (m == 0) { /* a single element */
    b->dims[0] = 1;
    for (int k = 0; k < b->nops; k++) b->st[k][0] = 0;
    m = 1;
  }
  b->rank = m;
}

/* Calls fn once per innermost row with each operand's element offset at the
 * row start and its stride along the row (the output's is 1). */
typedef void (*row_fn)(void *ctx, int64_t n, const int64_t *off,
                       const int64_t *st);

static void bcast_run(const bcast *b, row_fn fn, void *ctx) {
  int r = b->rank;
  for (int i = 0; i < r; i++)
    if (b->dims[i] == 0) return;
  int64_t idx[NCC_MAX_RANK] = {0}, off[MAX_OPS] = {0}, inner[MAX_OPS];
  for (int k = 0; k < b->nops; k++) inner[k] = b->st[k][r - 1];
  for (;;) {
    fn(ctx, b->dims[r - 1], off, inner);
    int d = r - 2;
    for (; d >= 0; d--) {
      for (int k = 0; k < b->nops; k++) off[k] += b->st[k][d];
      if (++idx[d] < b->dims[d]) break;
      for (int k = 0; k < b->nops; k++) off[k] -= b->st[k][d] * b->dims[d];
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

/* ---- scalar semantics ---- */

/* NaN-propagating max/min (numpy maximum/minimum, ONNX Max/Min). */
static double max_f(double x, double y) { return (x > y || isnan(x)) ? x : y; }
static double min_f(double x, double y) { return (x < y || isnan(x)) ? x : y; }
static float max_f32(float x, float y) { return (x > y || isnan(x)) ? x : y; }
static float min_f32(float x, float y) { return (x < y || isnan(x)) ? x : y; }

static int64_t wrap_add(int64_t x, int64_t y) {
  return (int64_t)((uint64_t)x + (uint64_t)y);
}
static int64_t wrap_sub(int64_t x, int64_t y) {
  return (int64_t)((uint64_t)x - (uint64_t)y);
}
static int64_t wrap_mul(int64_t x, int64_t y) {
  return (int64_t)((uint64_t)x * (uint64_t)y);
}

/* x ** y for y >= 0 by squaring, wrapping like repeated multiplication. */
static int64_t ipow(int64_t x, int64_t y) {
  int64_t r = 1;
  while (y > 0) {
    if (y & 1) r = wrap_mul(r, x);
    x = wrap_mul(x, x);
    y >>= 1;
  }
  return r;
}

static double bin_f(ncc_op op, double x, double y) {
  switch (op) {
  case NCC_OP_ADD: return x + y;
  case NCC_OP_SUB: return x - y;
  case NCC_OP_MUL: return x * y;
  case NCC_OP_DIV: return x / y;
  case NCC_OP_POW: return pow(x, y);
  case NCC_OP_MAX: return max_f(x, y);
  case NCC_OP_MIN: return min_f(x, y);
  case NCC_OP_EQUAL: return x == y;
  case NCC_OP_LESS: return x < y;
  case NCC_OP_GREATER: return x > y;
  default: NCC_ASSERT(!"bin_f: not a binary op"); return 0;
  }
}

/* Integer semantics; *div0 is set on a zero divisor. */
static int64_t bin_i(ncc_op op, int64_t x, int64_t y, bool *div0) {
  switch (op) {
  case NCC_OP_ADD: return wrap_add(x, y);
  case NCC_OP_SUB: return wrap_sub(x, y);
  case NCC_OP_MUL: return wrap_mul(x, y);
  case NCC_OP_DIV:
    if (y == 0) {
      *div0 = true;
      return 0;
    }
    if (y == -1) return wrap_sub(0, x); /* INT64_MIN / -1 wraps */
    return x / y;
  case NCC_OP_POW: return ipow(x, y);
  case NCC_OP_MAX: return x > y ? x : y;
  case NCC_OP_MIN: return x < y ? x : y;
  case NCC_OP_EQUAL: return x == y;
  case NCC_OP_LESS: return x < y;
  case NCC_OP_GREATER: return x > y;
  default: NCC_ASSERT(!"bin_i: not a binary op"); return 0;
  }
}

/* Unsigned semantics (u8 .. u64): the same ops on uint64, which wraps. */
static uint64_t bin_u(ncc_op op, uint64_t x, uint64_t y, bool *div0) {
  switch (op) {
  case NCC_OP_ADD: return x + y;
  case NCC_OP_SUB: return x - y;
  case NCC_OP_MUL: return x * y;
  case NCC_OP_DIV:
    if (y == 0) {
      *div0 = true;
      return 0;
    }
    return x / y;
  case NCC_OP_POW: return (uint64_t)ipow((int64_t)x, (int64_t)y);
  case NCC_OP_MAX: return x > y ? x : y;
  case NCC_OP_MIN: return x < y ? x : y;
  case NCC_OP_EQUAL: return x == y;
  case NCC_OP_LESS: return x < y;
  case NCC_OP_GREATER: return x > y;
  default: NCC_ASSERT(!"bin_u: not a binary op"); return 0;
  }
}

static bool is_compare(ncc_op op) {
  return op == NCC_OP_EQUAL || op == NCC_OP_LESS || op == NCC_OP_GREATER;
}

/* ---- binary rows ---- */

typedef struct bin_ctx {
  ncc_op op;
  const ncc_tensor *a, *b;
  ncc_tensor *o;
  bool div0;
} bin_ctx;

/* Typed f32 row. EXPR uses x, y; STORE the output pointer type. */
#define BIN_ROW(OT, EXPR)                                                      \
  do {                                                                         \
    OT *o_ = (OT *)c->o->data + off[0];                                        \
    const float *a_ = (const float *)c->a->data + off[1];                      \
    const float *b_ = (const float *)c->b->data + off[2];                      \
    int64_t sa = st[1], sb = st[2];                                            \
    if (sa == 1 && sb == 1) {                                                  \
      for (int64_t k = 0; k < n; k++) {                                        \
        float x = a_[k], y = b_[k];                                            \
        o_[k] = (OT)(EXPR);                                                    \
      }                                                                        \
    } else if (sa == 1 && sb == 0) {                                           \
      float y = b_[0];                                                         \
      for (int64_t k = 0; k < n; k++) {                                        \
        float x = a_[k];                                                       \
        o_[k] = (OT)(EXPR);                                                    \
      }                                                                        \
    } else {                                                                   \
      for (int64_t k = 0; k < n; k++) {                                        \
        float x = a_[k * sa], y = b_[k * sb];                                  \
        o_[k] = (OT)(EXPR);                                                    \
      }                                                                        \
    }                                                                          \
  } while (0)

static void bin_f32_row(void *vc, int64_t n, const int64_t *off,
                        const int64_t *st) {
  bin_ctx *c = vc;
  switch (c->op) {
  case NCC_OP_ADD: BIN_ROW(float, x + y); break;
  case NCC_OP_SUB: BIN_ROW(float, x - y); break;
  case NCC_OP_MUL: BIN_ROW(float, x * y); break;
  case NCC_OP_DIV: BIN_ROW(float, x / y); break;
  case NCC_OP_POW: BIN_ROW(float, pow(x, y)); break;
  case NCC_OP_MAX: BIN_ROW(float, max_f32(x, y)); break;
  case NCC_OP_MIN: BIN_ROW(float, min_f32(x, y)); break;
  case NCC_OP_EQUAL: BIN_ROW(uint8_t, x == y); break;
  case NCC_OP_LESS: BIN_ROW(uint8_t, x < y); break;
  case NCC_OP_GREATER: BIN_ROW(uint8_t, x > y); break;
  default: NCC_ASSERT(!"bin_f32_row: not a binary op");
  }
}

/* Any dtypes, through the accessors. Arithmetic follows the output's class,
 * comparisons the inputs' class; an integer Pow with a float or negative
 * exponent goes through pow() and the float -> integer rule. */
static void bin_gen_row(void *vc, int64_t n, const int64_t *off,
                        const int64_t *st) {
  bin_ctx *c = vc;
  bool cmp = is_compare(c->op);
  bool fp = cmp ? is_fp(c->a->dtype) || is_fp(c->b->dtype) : is_fp(c->o->dtype);
  for (int64_t k = 0; k < n; k++) {
    int64_t io = off[0] + k * st[0], ia = off[1] + k * st[1],
            ib = off[2] + k * st[2];
    if (fp) {
      double r = bin_f(c->op, ncc_ref_get_f(c->a, ia), ncc_ref_get_f(c->b, ib));
      ncc_ref_set_f(c->o, io, r);
      continue;
    }
    if (ncc_ref_is_unsigned(c->a->dtype)) {
      uint64_t r = bin_u(c->op, ncc_ref_get_u(c->a, ia),
                         ncc_ref_get_u(c->b, ib), &c->div0);
      ncc_ref_set_u(c->o, io, r);
      continue;
    }
    if (c->op == NCC_OP_POW &&
        (is_fp(c->b->dtype) || ncc_ref_get_i(c->b, ib) < 0 ||
         (ncc_ref_is_unsigned(c->b->dtype) && ncc_ref_get_u(c->b, ib) > INT64_MAX))) {
      ncc_ref_set_f(c->o, io,
                    pow(ncc_ref_get_f(c->a, ia), ncc_ref_get_f(c->b, ib)));
      continue;
    }
    int64_t r = bin_i(c->op, ncc_ref_get_i(c->a, ia), ncc_ref_get_i(c->b, ib),
                      &c->div0);
    ncc_ref_set_i(c->o, io, r);
  }
}

/* o = a op b with broadcasting; a may be o itself (variadic Max/Min). */
static ncc_status binary(ncc_op op, const ncc_tensor *a, const ncc_tensor *b,
                         ncc_tensor *o) {
  const ncc_tensor *ins[2] = {a, b};
  bcast plan;
  bcast_init(&plan, o, ins, 2);
  bin_ctx c = {op, a, b, o, false};
  bool f32 = a->dtype == NCC_DT_F32 && b->dtype == NCC_DT_F32 &&
             o->dtype == (is_compare(op) ? NCC_DT_BOOL : NCC_DT_F32);
  bcast_run(&plan, f32 ? bin_f32_row : bin_gen_row, &c);
  if (c.div0) return ncc_error(NCC_ERR_INPUT, "integer division by zero");
  return NCC_OK;
}

#define BINARY_KERNEL(ID)                                                      \
  ncc_status ncc_ref_##ID(const ncc_node *n, const ncc_tensor *const *in,      \
                          ncc_tensor *out) {                                   \
    return binary(n->op, in[0], in[1], out);                                   \
  }
BINARY_KERNEL(ADD)
BINARY_KERNEL(SUB)
BINARY_KERNEL(MUL)
BINARY_KERNEL(DIV)
BINARY_KERNEL(POW)
BINARY_KERNEL(EQUAL)
BINARY_KERNEL(LESS)
BINARY_KERNEL(GREATER)

/* Variadic Max/Min fold into the output: out = in0 op in1, out op= in_k. */
static ncc_status variadic(const ncc_node *n, const ncc_tensor *const *in,
                           ncc_tensor *out) {
  if (n->n_in == 1) {
    memcpy(out->data, in[0]->data, ncc_tensor_nbytes(out));
    return NCC_OK;
  }
  ncc_status st = binary(n->op, in[0], in[1], out);
  for (int k = 2; k < n->n_in && st == NCC_OK; k++)
    st = binary(n->op, out, in[k], out);
  return st;
}

ncc_status ncc_ref_MAX(const ncc_node *n, const ncc_tensor *const *in,
                       ncc_tensor *out) {
  return variadic(n, in, out);
}

ncc_status ncc_ref_MIN(const ncc_node *n, const ncc_tensor *const *in,
                       ncc_tensor *out) {
  return variadic(n, in, out);
}

/* ---- Where: byte copies selected by a bool condition ---- */

typedef struct where_ctx {
  const uint8_t *cond;
  const char *x, *y;
  char *o;
} where_ctx;

#define WHERE_ROW(ES)                                                          \
  for (int64_t k = 0; k < n; k++) {                                            \
    const char *src = c->cond[off[1] + k * st[1]]                              \
                          ? c->x + (size_t)(off[2] + k * st[2]) * ES           \
                          : c->y + (size_t)(off[3] + k * st[3]) * ES;          \
    memcpy(c->o + (size_t)(off[0] + k) * ES, src, ES);                         \
  }

#define WHERE_ROW_FN(ES)                                                       \
  static void where_row_##ES(void *vc, int64_t n, const int64_t *off,         \
                             const int64_t *st) {                              \
    where_ctx *c = vc;                                                         \
    WHERE_ROW(ES)                                                              \
  }
WHERE_ROW_FN(1)
WHERE_ROW_FN(2)
WHERE_ROW_FN(4)
WHERE_ROW_FN(8)

ncc_status ncc_ref_WHERE(const ncc_node *n, const ncc_tensor *const *in,
                         ncc_tensor *out) {
  (void)n;
  if (in[0]->dtype != NCC_DT_BOOL)
    return ncc_error(NCC_ERR_INPUT, "Where condition must be bool, not %s",
                     ncc_dtype_name(in[0]->dtype));
  bcast plan;
  bcast_init(&plan, out, in, 3);
  where_ctx c = {in[0]->data, in[1]->data, in[2]->data, out->data};
  row_fn fn;
  switch (ncc_dtype_size(out->dtype)) {
  case 1: fn = where_row_1; break;
  case 2: fn = where_row_2; break;
  case 4: fn = where_row_4; break;
  case 8: fn = where_row_8; break;
  default: return ncc_error(NCC_ERR_INTERNAL, "Where: bad element size");
  }
  bcast_run(&plan, fn, &c);
  return NCC_OK;
}

/* ---- unary ops ---- */

typedef struct uparams {
  double alpha, beta, gamma; /* LeakyRelu, HardSigmoid, Elu, Selu, ... */
  double lo, hi;      /* Clip on float dtypes */
  int64_t ilo, ihi;   /* Clip on signed integer dtypes */
  uint64_t ulo, uhi;  /* Clip on unsigned integer dtypes */
  bool gelu_tanh;
} uparams;

static double clamp01(double v) { return min_f(max_f(v, 0.0), 1.0); }

/* Logistic function without overflow for large |x|. */
static double sigmoid(double x) {
  if (x >= 0) return 1.0 / (1.0 + exp(-x));
  double e = exp(x);
  return e / (1.0 + e);
}

/* log(1 + e^x) without overflow: x + log1p(e^-x) for positive x. */
static double softplus(double x) {
  return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
}

static double gelu(double x, bool tanh_approx) {
  if (tanh_approx) {
    const double k = 0.7978845608028654; /* sqrt(2/pi) */
    return 0.5 * x * (1.0 + tanh(k * (x + 0.044715 * x * x * x)));
  }
  return 0.5 * x * (1.0 + erf(x * 0.7071067811865476)); /* x / sqrt(2) */
}

static double un_f(ncc_op op, double x, const uparams *p) {
  switch (op) {
    /* the formulas of ir/eltwise.def, in double */
#define X x
#define K(c) (c)
#define ADD(a, b) ((a) + (b))
#define SUB(a, b) ((a) - (b))
#define MUL(a, b) ((a) * (b))
#define DIV(a, b) ((a) / (b))
#define NEG(a) (-(a))
#define ABS(a) fabs(a)
#define SQRT(a) sqrt(a)
#define EXP(a) exp(a)
#define LOG(a) log(a)
#define ERF(a) erf(a)
#define TANH(a) tanh(a)
#define SIN(a) sin(a)
#define COS(a) cos(a)
#define TAN(a) tan(a)
#define ASIN(a) asin(a)
#define ACOS(a) acos(a)
#define ATAN(a) atan(a)
#define SINH(a) sinh(a)
#define COSH(a) cosh(a)
#define ASINH(a) asinh(a)
#define ACOSH(a) acosh(a)
#define ATANH(a) atanh(a)
#define FLOOR(a) floor(a)
#define CEIL(a) ceil(a)
#define ROUND(a) nearbyint(a)
#define RBF16(a) ncc_bf16_to_f64(ncc_bf16_from_f32((float)(a)))
#define RF16(a) ncc_f16_to_f64(ncc_f16_from_f32((float)(a)))
#define SEL_LT(a, b, t, f) ((a) < (b) ? (t) : (f))
#define ALPHA (p->alpha)
#define BETA (p->beta)
#define GAMMA (p->gamma)
#define NCC_UNARY(id, formula) case NCC_OP_##id: return formula;
#include "../../ir/eltwise.def"
  case NCC_OP_SIGMOID: return sigmoid(x);
  case NCC_OP_CLIP: return min_f(max_f(x, p->lo), p->hi);
  case NCC_OP_HARDSIGMOID: return clamp01(p->alpha * x + p->beta);
  case NCC_OP_HARDSWISH: return x * clamp01(x / 6.0 + 0.5);
  case NCC_OP_GELU: return gelu(x, p->gelu_tanh);
  case NCC_OP_SOFTPLUS: return softplus(x);
  case NCC_OP_IDENTITY: return x;
  default: NCC_ASSERT(!"un_f: not a unary op"); return 0;
  }
}

/* Integer forms of the ops that have them; false for the others. */
static bool un_i(ncc_op op, int64_t x, const uparams *p, int64_t *r) {
  switch (op) {
  case NCC_OP_NEG: *r = wrap_sub(0, x); return true;
  case NCC_OP_ABS: *r = x < 0 ? wrap_sub(0, x) : x; return true;
  case NCC_OP_RELU: *r = x < 0 ? 0 : x; return true;
  case NCC_OP_CLIP: {
    int64_t v = x < p->ilo ? p->ilo : x;
    *r = v > p->ihi ? p->ihi : v;
    return true;
  }
  default: return false;
  }
}

/* The same on unsigned dtypes (ONNX has no unsigned Neg; it wraps). */
static bool un_u(ncc_op op, uint64_t x, const uparams *p, uint64_t *r) {
  switch (op) {
  case NCC_OP_NEG: *r = 0 - x; return true;
  case NCC_OP_ABS:
  case NCC_OP_RELU: *r = x; return true;
  case NCC_OP_CLIP: {
    uint64_t v = x < p->ulo ? p->ulo : x;
    *r = v > p->uhi ? p->uhi : v;
    return true;
  }
  default: return false;
  }
}

static ncc_status unary(const ncc_node *n, const ncc_tensor *x,
                        ncc_tensor *out, const uparams *p) {
  int64_t cnt = ncc_tensor_numel(out);
  if (x->dtype == NCC_DT_F32 && out->dtype == NCC_DT_F32) {
    const float *xs = x->data;
    float *os = out->data;
    if (n->op == NCC_OP_RELU) { /* the hot one in CNNs */
      for (int64_t i = 0; i < cnt; i++) os[i] = xs[i] < 0 ? 0.0f : xs[i];
    } else {
      for (int64_t i = 0; i < cnt; i++) os[i] = (float)un_f(n->op, xs[i], p);
    }
    return NCC_OK;
  }
  bool un = ncc_ref_is_unsigned(x->dtype);
  for (int64_t i = 0; i < cnt; i++) {
    int64_t r;
    uint64_t u;
    if (un && un_u(n->op, ncc_ref_get_u(x, i), p, &u))
      ncc_ref_set_u(out, i, u);
    else if (!un && !is_fp(x->dtype) && un_i(n->op, ncc_ref_get_i(x, i), p, &r))
      ncc_ref_set_i(out, i, r);
    else
      ncc_ref_set_f(out, i, un_f(n->op, ncc_ref_get_f(x, i), p));
  }
  return NCC_OK;
}

#define UNARY_KERNEL(ID)                                                       \
  ncc_status ncc_ref_##ID(const ncc_node *n, const ncc_tensor *const *in,      \
                          ncc_tensor *out) {                                   \
    uparams p = {0};                                                           \
    ncc_act_attrs a;                                                           \
    ncc_attrs_act(n, &a);                                                      \
    p.alpha = a.alpha;                                                         \
    p.beta = a.beta;                                                           \
    p.gamma = a.gamma;                                                         \
    return unary(n, in[0], out, &p);                                           \
  }
#define NCC_UNARY(id, formula) UNARY_KERNEL(id)
#include "../../ir/eltwise.def"
UNARY_KERNEL(SIGMOID)
UNARY_KERNEL(HARDSWISH)
UNARY_KERNEL(SOFTPLUS)

ncc_status ncc_ref_HARDSIGMOID(const ncc_node *n, const ncc_tensor *const *in,
                               ncc_tensor *out) {
  uparams p = {0};
  ncc_act_attrs a;
  ncc_attrs_act(n, &a);
  p.alpha = a.alpha;
  p.beta = a.beta;
  return unary(n, in[0], out, &p);
}

ncc_status ncc_ref_GELU(const ncc_node *n, const ncc_tensor *const *in,
                        ncc_tensor *out) {
  uparams p = {0};
  ncc_act_attrs a;
  ncc_status st = ncc_attrs_act(n, &a);
  if (st) return st;
  p.gelu_tanh = a.gelu_tanh;
  return unary(n, in[0], out, &p);
}

/* Clip's bounds are optional scalar inputs; an omitted or empty one means
 * unbounded. min > max yields max (numpy and ONNX Runtime agree). */
ncc_status ncc_ref_CLIP(const ncc_node *n, const ncc_tensor *const *in,
                        ncc_tensor *out) {
  uparams p = {0};
  const ncc_tensor *lo = n->n_in > 1 ? in[1] : NULL;
  const ncc_tensor *hi = n->n_in > 2 ? in[2] : NULL;
  bool has_lo = lo && ncc_tensor_numel(lo) > 0;
  bool has_hi = hi && ncc_tensor_numel(hi) > 0;
  p.lo = has_lo ? ncc_ref_get_f(lo, 0) : -INFINITY;
  p.hi = has_hi ? ncc_ref_get_f(hi, 0) : INFINITY;
  p.ilo = has_lo ? ncc_ref_get_i(lo, 0) : INT64_MIN;
  p.ihi = has_hi ? ncc_ref_get_i(hi, 0) : INT64_MAX;
  p.ulo = has_lo ? ncc_ref_get_u(lo, 0) : 0;
  p.uhi = has_hi ? ncc_ref_get_u(hi, 0) : UINT64_MAX;
  return unary(n, in[0], out, &p);
}

ncc_status ncc_ref_IDENTITY(const ncc_node *n, const ncc_tensor *const *in,
                            ncc_tensor *out) {
  (void)n;
  memcpy(out->data, in[0]->data, ncc_tensor_nbytes(out));
  return NCC_OK;
}

/* Cast: the conversion rules live in ref_util.c (truncation toward zero,
 * round-to-nearest-even to f16/bf16, nonzero -> true). A float source goes
 * through double (exact for every float dtype), a signed integer one
 * through int64 and an unsigned one through uint64, so every integer ->
 * float conversion rounds once and u64 keeps values above 2^63. */
ncc_status ncc_ref_CAST(const ncc_node *n, const ncc_tensor *const *in,
                        ncc_tensor *out) {
  (void)n;
  const ncc_tensor *x = in[0];
  int64_t cnt = ncc_tensor_numel(out);
  if (x->dtype == out->dtype) {
    memcpy(out->data, x->data, ncc_tensor_nbytes(out));
    return NCC_OK;
  }
  if (is_fp(x->dtype)) {
    for (int64_t i = 0; i < cnt; i++)
      ncc_ref_set_f(out, i, ncc_ref_get_f(x, i));
  } else if (ncc_ref_is_unsigned(x->dtype)) {
    for (int64_t i = 0; i < cnt; i++)
      ncc_ref_set_u(out, i, ncc_ref_get_u(x, i));
  } else {
    for (int64_t i = 0; i < cnt; i++)
      ncc_ref_set_i(out, i, ncc_ref_get_i(x, i));
  }
  return NCC_OK;
}
