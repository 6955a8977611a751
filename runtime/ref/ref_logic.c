/* runtime/ref/ref_logic.c — reference kernels of the logical, bitwise,
 * integer and simple elementwise/variadic ops: And Or Xor Not, Mod,
 * BitShift, Bitwise{And,Or,Xor,Not}, LessOrEqual, GreaterOrEqual, IsNaN,
 * IsInf, PRelu, Sum, Mean, Shrink, CastLike.
 *
 * Every dtype goes through the ref_util.c accessors: integers as int64
 * (unsigned ones as their uint64 bits, so u64 keeps its range) stored back
 * with two's-complement wrap-around to the dtype's width, floats in double
 * except where the result must be rounded to f32 at each step as ONNX
 * Runtime and numpy do (f32 Mod, Shrink, Sum/Mean accumulate in float). A
 * dtype's class (float, unsigned, width) is read from its name and size,
 * so dtypes ncc gains later need no case here.
 */
#include <math.h>
#include <string.h>

#include "ref.h"

/* ---- dtype classes ---- */

static bool is_fp(ncc_dtype dt) {
  const char *nm = ncc_dtype_name(dt);
  return nm[0] == 'f' || strcmp(nm, "bf16") == 0;
}

static bool is_unsigned(ncc_dtype dt) { return ncc_dtype_name(dt)[0] == 'u'; }

static int bit_width(ncc_dtype dt) { return 8 * (int)ncc_dtype_size(dt); }

/* ---- numpy broadcasting over an output and two inputs ---- */

typedef struct biter {
  int rank;
  int64_t dims[NCC_MAX_RANK], coord[NCC_MAX_RANK];
  int64_t st[2][NCC_MAX_RANK];
  int64_t off[2]; /* element offsets of the current output element's inputs */
} biter;

static void biter_init(biter *it, const ncc_tensor *out, const ncc_tensor *a,
                       const ncc_tensor *b) {
  memset(it, 0, sizeof *it);
  it->rank = out->rank;
  memcpy(it->dims, out->dims, sizeof(int64_t) * (size_t)out->rank);
  ncc_ref_bcast_strides(a, out->rank, out->dims, it->st[0]);
  if (b) ncc_ref_bcast_strides(b, out->rank, out->dims, it->st[1]);
}

static void biter_next(biter *it) {
  for (int d = it->rank - 1; d >= 0; d--) {
    it->off[0] += it->st[0][d];
    it->off[1] += it->st[1][d];
    if (++it->coord[d] < it->dims[d]) return;
    it->off[0] -= it->st[0][d] * it->dims[d];
    it->off[1] -= it->st[1][d] * it->dims[d];
    it->coord[d] = 0;
  }
}

/* ---- scalar semantics ---- */

/* Mod with fmod=0: the remainder of floored division, with the divisor's
 * sign (Python, numpy.mod); fmod=1: C's fmod, the dividend's sign. Zero
 * results of fmod=0 take the divisor's sign, as numpy's do. */
static double mod_f(double x, double y, bool c_fmod) {
  double r = fmod(x, y);
  if (c_fmod) return r;
  if (r != 0 && (r < 0) != (y < 0)) r += y;
  else if (r == 0) r = copysign(0.0, y);
  return r;
}

static float mod_f32(float x, float y, bool c_fmod) {
  float r = fmodf(x, y);
  if (c_fmod) return r;
  if (r != 0 && (r < 0) != (y < 0)) r += y;
  else if (r == 0) r = copysignf(0.0f, y);
  return r;
}

/* Integer Mod; *div0 on a zero divisor. Unsigned operands arrive as their
 * uint64 bits. */
static int64_t mod_i(int64_t x, int64_t y, bool c_fmod, bool uns, bool *div0) {
  if (y == 0) {
    *div0 = true;
    return 0;
  }
  if (uns) return (int64_t)((uint64_t)x % (uint64_t)y);
  if (y == -1) return 0; /* INT64_MIN % -1 traps in C */
  int64_t r = x % y;
  if (!c_fmod && r != 0 && (r < 0) != (y < 0)) r += y;
  return r;
}

/* BitShift on a `w`-bit dtype: shifts by y < 0 or y >= w leave only the
 * sign fill (-1 for a right shift of a negative signed x, else 0); right
 * shifts of signed values are arithmetic. */
static int64_t shift_i(int64_t x, int64_t y, bool left, bool uns, int w) {
  bool neg = !uns && x < 0;
  if (y < 0 || y >= w) return !left && neg ? -1 : 0;
  if (left) return (int64_t)((uint64_t)x << y);
  if (uns) { /* x holds the value's low w bits, zero above */
    uint64_t m = w == 64 ? ~0ull : (1ull << w) - 1;
    return (int64_t)(((uint64_t)x & m) >> y);
  }
  return neg ? ~(~x >> y) : x >> y; /* arithmetic without relying on >> of negatives */
}

/* ---- binary ops ---- */

typedef struct bin_args {
  ncc_op op;
  ncc_logic_attrs at;
  bool fp, uns, f32;
  int w;
  bool div0;
} bin_args;

/* Compare two integer operands as their dtype does. */
static int cmp_i(int64_t x, int64_t y, bool uns) {
  if (uns) return (uint64_t)x < (uint64_t)y ? -1 : (uint64_t)x > (uint64_t)y;
  return x < y ? -1 : x > y;
}

static void bin_elem(bin_args *p, const ncc_tensor *a, int64_t ia,
                     const ncc_tensor *b, int64_t ib, ncc_tensor *o, int64_t io) {
  switch (p->op) {
  case NCC_OP_AND:
    ncc_ref_set_i(o, io, ncc_ref_get_i(a, ia) && ncc_ref_get_i(b, ib));
    return;
  case NCC_OP_OR:
    ncc_ref_set_i(o, io, ncc_ref_get_i(a, ia) || ncc_ref_get_i(b, ib));
    return;
  case NCC_OP_XOR:
    ncc_ref_set_i(o, io, !ncc_ref_get_i(a, ia) != !ncc_ref_get_i(b, ib));
    return;
  case NCC_OP_BITWISEAND:
    ncc_ref_set_i(o, io, ncc_ref_get_i(a, ia) & ncc_ref_get_i(b, ib));
    return;
  case NCC_OP_BITWISEOR:
    ncc_ref_set_i(o, io, ncc_ref_get_i(a, ia) | ncc_ref_get_i(b, ib));
    return;
  case NCC_OP_BITWISEXOR:
    ncc_ref_set_i(o, io, ncc_ref_get_i(a, ia) ^ ncc_ref_get_i(b, ib));
    return;
  case NCC_OP_BITSHIFT: {
    int64_t y = ncc_ref_get_i(b, ib);
    if (p->uns && y < 0) y = INT64_MAX; /* a u64 shift count past 2^63 */
    ncc_ref_set_i(o, io, shift_i(ncc_ref_get_i(a, ia), y, p->at.shift_left, p->uns, p->w));
    return;
  }
  case NCC_OP_LESSOREQUAL:
  case NCC_OP_GREATEROREQUAL: {
    int c;
    if (p->fp) {
      double x = ncc_ref_get_f(a, ia), y = ncc_ref_get_f(b, ib);
      if (isnan(x) || isnan(y)) { /* unordered: both false */
        ncc_ref_set_i(o, io, 0);
        return;
      }
      c = x < y ? -1 : x > y;
    } else {
      c = cmp_i(ncc_ref_get_i(a, ia), ncc_ref_get_i(b, ib), p->uns);
    }
    ncc_ref_set_i(o, io, p->op == NCC_OP_LESSOREQUAL ? c <= 0 : c >= 0);
    return;
  }
  case NCC_OP_MOD:
    if (p->f32) {
      float r = mod_f32((float)ncc_ref_get_f(a, ia), (float)ncc_ref_get_f(b, ib), p->at.fmod);
      ncc_ref_set_f(o, io, r);
    } else if (p->fp) {
      ncc_ref_set_f(o, io, mod_f(ncc_ref_get_f(a, ia), ncc_ref_get_f(b, ib), p->at.fmod));
    } else {
      ncc_ref_set_i(o, io, mod_i(ncc_ref_get_i(a, ia), ncc_ref_get_i(b, ib), p->at.fmod,
                                 p->uns, &p->div0));
    }
    return;
  case NCC_OP_PRELU:
    if (p->fp) {
      double x = ncc_ref_get_f(a, ia); /* x * slope of two f32s is exact in double */
      ncc_ref_set_f(o, io, x < 0 ? x * ncc_ref_get_f(b, ib) : x);
    } else {
      int64_t x = ncc_ref_get_i(a, ia);
      ncc_ref_set_i(o, io, x < 0 ? (int64_t)((uint64_t)x * (uint64_t)ncc_ref_get_i(b, ib)) : x);
    }
    return;
  default: NCC_ASSERT(!"bin_elem: not a logical or bitwise binary op");
  }
}

static ncc_status logic_binary(const ncc_node *n, const ncc_tensor *const *in,
                               ncc_tensor *out) {
  bin_args p = {.op = n->op};
  ncc_status st = ncc_attrs_logic(n, &p.at);
  if (st) return st;
  ncc_dtype dt = in[0]->dtype;
  p.fp = is_fp(dt);
  p.f32 = dt == NCC_DT_F32;
  p.uns = is_unsigned(dt);
  p.w = bit_width(dt);
  int64_t cnt = ncc_tensor_numel(out);
  biter it;
  biter_init(&it, out, in[0], in[1]);
  for (int64_t i = 0; i < cnt; i++, biter_next(&it))
    bin_elem(&p, in[0], it.off[0], in[1], it.off[1], out, i);
  if (p.div0) return ncc_node_error(n, NCC_ERR_INPUT, "integer Mod by zero");
  return NCC_OK;
}

#define LOGIC_BINARY(ID)                                                       \
  ncc_status ncc_ref_##ID(const ncc_node *n, const ncc_tensor *const *in,      \
                          ncc_tensor *out) {                                   \
    return logic_binary(n, in, out);                                           \
  }
LOGIC_BINARY(AND)
LOGIC_BINARY(OR)
LOGIC_BINARY(XOR)
LOGIC_BINARY(MOD)
LOGIC_BINARY(BITSHIFT)
LOGIC_BINARY(BITWISEAND)
LOGIC_BINARY(BITWISEOR)
LOGIC_BINARY(BITWISEXOR)
LOGIC_BINARY(LESSOREQUAL)
LOGIC_BINARY(GREATEROREQUAL)
LOGIC_BINARY(PRELU)

/* ---- unary ops ---- */

static ncc_status logic_unary(const ncc_node *n, const ncc_tensor *const *in,
                              ncc_tensor *out) {
  ncc_logic_attrs at;
  ncc_status st = ncc_attrs_logic(n, &at);
  if (st) return st;
  const ncc_tensor *x = in[0];
  int64_t cnt = ncc_tensor_numel(out);
  bool fp = is_fp(x->dtype), f32 = x->dtype == NCC_DT_F32;
  for (int64_t i = 0; i < cnt; i++) {
    switch (n->op) {
    case NCC_OP_NOT: ncc_ref_set_i(out, i, !ncc_ref_get_i(x, i)); break;
    case NCC_OP_BITWISENOT: ncc_ref_set_i(out, i, ~ncc_ref_get_i(x, i)); break;
    case NCC_OP_ISNAN: ncc_ref_set_i(out, i, isnan(ncc_ref_get_f(x, i))); break;
    case NCC_OP_ISINF: {
      double v = ncc_ref_get_f(x, i);
      ncc_ref_set_i(out, i, isinf(v) && (v > 0 ? at.detect_positive : at.detect_negative));
      break;
    }
    case NCC_OP_SHRINK: {
      /* x < -lambd: x + bias; x > lambd: x - bias; else 0. In float for
       * f32 (one f32 rounding, as ONNX Runtime); integers add the bias
       * truncated to an integer. */
      double v = ncc_ref_get_f(x, i);
      int sel = v < -(double)at.lambd ? -1 : v > (double)at.lambd ? 1 : 0;
      if (sel == 0) ncc_ref_set_f(out, i, 0.0);
      else if (f32) ncc_ref_set_f(out, i, sel < 0 ? (float)v + at.bias : (float)v - at.bias);
      else if (fp) ncc_ref_set_f(out, i, sel < 0 ? v + at.bias : v - at.bias);
      else {
        /* the bias truncated toward zero (no UB for NaN or huge ones) */
        double bd = at.bias;
        int64_t xi = ncc_ref_get_i(x, i), bi = fabs(bd) < 0x1p62 ? (int64_t)bd : 0;
        ncc_ref_set_i(out, i, (int64_t)(sel < 0 ? (uint64_t)xi + (uint64_t)bi
                                                : (uint64_t)xi - (uint64_t)bi));
      }
      break;
    }
    default: NCC_ASSERT(!"logic_unary: not a logical or bitwise unary op");
    }
  }
  return NCC_OK;
}

#define LOGIC_UNARY(ID)                                                        \
  ncc_status ncc_ref_##ID(const ncc_node *n, const ncc_tensor *const *in,      \
                          ncc_tensor *out) {                                   \
    return logic_unary(n, in, out);                                            \
  }
LOGIC_UNARY(NOT)
LOGIC_UNARY(BITWISENOT)
LOGIC_UNARY(ISNAN)
LOGIC_UNARY(ISINF)
LOGIC_UNARY(SHRINK)

/* ---- Sum, Mean: out = in0, then out += in_k in input order, each step
 * rounded to the dtype (numpy's and ONNX Runtime's order); Mean divides
 * the sum by the input count. ---- */

/* a + b rounded once to dt: in float for f32 (the double sum of two f32s
 * rounded to f32 could round twice). */
static double add_in(ncc_dtype dt, double a, double b) {
  return dt == NCC_DT_F32 ? (double)((float)a + (float)b) : a + b;
}

static ncc_status variadic(const ncc_node *n, const ncc_tensor *const *in,
                           ncc_tensor *out) {
  int64_t cnt = ncc_tensor_numel(out);
  biter it;
  biter_init(&it, out, in[0], NULL);
  for (int64_t i = 0; i < cnt; i++, biter_next(&it))
    ncc_ref_set_f(out, i, ncc_ref_get_f(in[0], it.off[0]));
  for (int k = 1; k < n->n_in; k++) {
    biter_init(&it, out, in[k], NULL);
    for (int64_t i = 0; i < cnt; i++, biter_next(&it))
      ncc_ref_set_f(out, i, add_in(out->dtype, ncc_ref_get_f(out, i),
                                   ncc_ref_get_f(in[k], it.off[0])));
  }
  if (n->op == NCC_OP_MEAN && n->n_in > 1)
    for (int64_t i = 0; i < cnt; i++)
      ncc_ref_set_f(out, i, ncc_ref_get_f(out, i) / n->n_in); /* one rounding */
  return NCC_OK;
}

ncc_status ncc_ref_SUM(const ncc_node *n, const ncc_tensor *const *in, ncc_tensor *out) {
  return variadic(n, in, out);
}

ncc_status ncc_ref_MEAN(const ncc_node *n, const ncc_tensor *const *in, ncc_tensor *out) {
  return variadic(n, in, out);
}

/* CastLike is Cast to input 1's dtype: the output already has it. */
ncc_status ncc_ref_CASTLIKE(const ncc_node *n, const ncc_tensor *const *in,
                            ncc_tensor *out) {
  return ncc_ref_CAST(n, in, out);
}
