/* ir/shape.c — dtype, shape and small-content inference for every op.
 *
 * ncc_infer_node is the single authority on what a node produces: the
 * importer and the text parser run it over whole graphs (ncc_infer_graph),
 * passes re-run it, and the reference interpreter calls it with concrete
 * tensors before running each kernel. It is also the one place that checks
 * arity, attributes and dtype support, so kernels may trust their inputs.
 *
 * Dims are static (>= 0) or symbolic (ncc_dim_is_sym). Symbols flow through
 * ops that do not change them (N stays N through Conv's batch dim, through
 * Shape -> Gather -> Concat -> Reshape), and a dim that cannot be known
 * without data becomes a fresh symbol ("unk__K") when a graph is given.
 *
 * "Content" is the value of a small integer tensor (at most NCC_CONTENT_MAX
 * elements, static shape), whose elements may themselves be symbolic dims.
 * It carries the shape arithmetic PyTorch exports (Shape, Gather, Unsqueeze,
 * Concat, Equal/Where, ConstantOfShape ...) so that Reshape, Expand, Slice
 * and friends get static or symbolic output shapes at compile time.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "shape.h"
#include "window.h"

/* ------------------------------------------------------------------------ */
/* context and diagnostics                                                   */

typedef struct ictx {
  ncc_graph *g; /* NULL at run time: no fresh symbols */
  const ncc_node *n;
  const ncc_tinfo *in; /* n->n_in entries */
  ncc_tinfo *out;      /* n->n_out entries */
  char label[192];
} ictx;

/* Report an error about the current node: "node 'x' (Op): message". */
__attribute__((format(printf, 3, 4))) static ncc_status
fail(ictx *c, ncc_status st, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return ncc_error(st, "%s: %s", c->label, msg);
}

static ncc_status nomem(void) {
  return ncc_error(NCC_ERR_NOMEM, "out of memory");
}

/* Append printf output to buf (of capacity cap) at *len, never overflowing. */
__attribute__((format(printf, 4, 5))) static void
append(char *buf, size_t cap, size_t *len, const char *fmt, ...) {
  if (*len >= cap) return;
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(buf + *len, cap - *len, fmt, ap);
  va_end(ap);
  if (k > 0) *len += (size_t)k < cap - *len ? (size_t)k : cap - *len - 1;
}

static void fmt_dim(const ncc_graph *g, int64_t d, char *buf, size_t cap) {
  if (ncc_dim_is_sym(d))
    snprintf(buf, cap, "%s",
             g ? ncc_graph_sym_name(g, ncc_dim_sym_id(d)) : "?");
  else snprintf(buf, cap, "%lld", (long long)d);
}

/* "[N,3,224,224]" (symbols by name when a graph is known). */
static const char *fmt_shape(const ncc_graph *g, const ncc_shape *s, char *buf,
                             size_t cap) {
  size_t len = 0;
  buf[0] = 0;
  append(buf, cap, &len, "[");
  for (int i = 0; i < s->rank && i < NCC_MAX_RANK; i++) {
    char d[64];
    fmt_dim(g, s->d[i], d, sizeof d);
    append(buf, cap, &len, "%s%s", i ? "," : "", d);
  }
  append(buf, cap, &len, "]");
  return buf;
}

/* ------------------------------------------------------------------------ */
/* dims and symbols                                                          */

static bool is_static(int64_t d) { return d >= 0; }

/* Fresh symbols are the "unk__K" ones minted by inference; named ones come
 * from the model (N, batch, ...) and are preferred when two symbols meet. */
static bool sym_is_fresh(const ncc_graph *g, int64_t d) {
  if (!g || !ncc_dim_is_sym(d)) return false;
  return strncmp(ncc_graph_sym_name(g, ncc_dim_sym_id(d)), "unk__", 5) == 0;
}

static int64_t pick_sym(const ncc_graph *g, int64_t a, int64_t b) {
  if (sym_is_fresh(g, a) && !sym_is_fresh(g, b)) return b;
  return a;
}

/* numpy broadcasting of one dim pair; false on a static mismatch. */
static bool bcast_dim(const ncc_graph *g, int64_t a, int64_t b, int64_t *r) {
  bool sa = ncc_dim_is_sym(a), sb = ncc_dim_is_sym(b);
  if (a == b) *r = a;
  else if (!sa && a == 1) *r = b;
  else if (!sb && b == 1) *r = a;
  else if (sa && sb) *r = pick_sym(g, a, b);
  else if (sa) *r = b; /* N with static k != 1: N must be k (or 1) */
  else if (sb) *r = a;
  else return false;
  return true;
}

/* Two dims that must be equal (Concat, MatMul's inner dim, declared shapes):
 * the more specific wins; false on a static mismatch. */
static bool merge_dim(const ncc_graph *g, int64_t a, int64_t b, int64_t *r) {
  bool sa = ncc_dim_is_sym(a), sb = ncc_dim_is_sym(b);
  if (a == b) *r = a;
  else if (sa && sb) *r = pick_sym(g, a, b);
  else if (sa) *r = b;
  else if (sb) *r = a;
  else return false;
  return true;
}

/* A fresh symbol for a dim that needs data to be known; an error at run
 * time (no graph), where everything should be concrete. */
static ncc_status fresh_dim(ictx *c, int64_t *d) {
  if (!c->g)
    return fail(c, NCC_ERR_INPUT,
                "an output dim depends on data that is not known");
  int id = ncc_graph_fresh_sym(c->g);
  if (id < 0)
    return c->g->n_syms >= NCC_MAX_SYMS ? NCC_ERR_INPUT : NCC_ERR_NOMEM;
  *d = ncc_dim_sym(id);
  return NCC_OK;
}

ncc_status ncc_broadcast_shapes(ncc_graph *g, const ncc_shape *a,
                                const ncc_shape *b, ncc_shape *out) {
  if (a->rank < 0 || a->rank > NCC_MAX_RANK || b->rank < 0 ||
      b->rank > NCC_MAX_RANK)
    return ncc_error(NCC_ERR_INPUT, "invalid rank in broadcast");
  int r = a->rank > b->rank ? a->rank : b->rank;
  ncc_shape o = {.rank = r};
  for (int i = 0; i < r; i++) {
    int ia = a->rank - r + i, ib = b->rank - r + i;
    int64_t da = ia >= 0 ? a->d[ia] : 1, db = ib >= 0 ? b->d[ib] : 1;
    if (!bcast_dim(g, da, db, &o.d[i])) {
      char sa[256], sb[256];
      return ncc_error(
          NCC_ERR_INPUT,
          "cannot broadcast shapes %s and %s (dim %d: %lld vs %lld)",
          fmt_shape(g, a, sa, sizeof sa), fmt_shape(g, b, sb, sizeof sb), i,
          (long long)da, (long long)db);
    }
  }
  *out = o;
  return NCC_OK;
}

/* Product of dims kept as (static part, list of symbols), so that symbols
 * can cancel between two products (Reshape's -1, Flatten). */
typedef struct dprod {
  int64_t stat;
  int n;
  int64_t sym[NCC_MAX_RANK];
  bool ovf;
} dprod;

static void dprod_init(dprod *p) {
  p->stat = 1;
  p->n = 0;
  p->ovf = false;
}

static void dprod_mul(dprod *p, int64_t d) {
  if (ncc_dim_is_sym(d)) {
    if (p->n < NCC_MAX_RANK) p->sym[p->n++] = d;
  } else if (__builtin_mul_overflow(p->stat, d, &p->stat)) {
    p->ovf = true;
  }
}

/* Remove symbols common to both products. */
static void dprod_cancel(dprod *a, dprod *b) {
  for (int i = 0; i < a->n; i++)
    for (int j = 0; j < b->n; j++)
      if (a->sym[i] == b->sym[j]) {
        a->sym[i--] = a->sym[--a->n];
        b->sym[j] = b->sym[--b->n];
        break;
      }
}

/* The product as one dim: static, a single symbol, or a fresh symbol. */
static ncc_status dprod_dim(ictx *c, const dprod *p, int64_t *d) {
  if (p->ovf) return fail(c, NCC_ERR_INPUT, "dim product overflows");
  if (p->n == 0 || p->stat == 0) *d = p->stat;
  else if (p->n == 1 && p->stat == 1) *d = p->sym[0];
  else return fresh_dim(c, d);
  return NCC_OK;
}

/* ------------------------------------------------------------------------ */
/* dtypes, raw data and content                                              */

#define DT(x) (1u << NCC_DT_##x)
#define DT_FLOAT DT(F32)
#define DT_ARITH (DT(F32) | DT(I32) | DT(I64))
#define DT_INDEX (DT(I32) | DT(I64))
#define DT_ANY                                                                 \
  (DT(F32) | DT(F16) | DT(F64) | DT(I8) | DT(U8) | DT(I32) | DT(I64) | DT(BOOL))

static bool is_intlike(ncc_dtype dt) {
  return dt == NCC_DT_I64 || dt == NCC_DT_I32 || dt == NCC_DT_I8 ||
         dt == NCC_DT_U8 || dt == NCC_DT_BOOL;
}

/* Element i of raw data as int64 (integer dtypes only). */
static bool read_int(ncc_dtype dt, const void *data, int64_t i, int64_t *v) {
  const unsigned char *p = data;
  switch (dt) {
  case NCC_DT_I64: {
    int64_t x;
    memcpy(&x, p + i * 8, 8);
    *v = x;
    return true;
  }
  case NCC_DT_I32: {
    int32_t x;
    memcpy(&x, p + i * 4, 4);
    *v = x;
    return true;
  }
  case NCC_DT_I8: *v = (int8_t)p[i]; return true;
  case NCC_DT_U8: *v = p[i]; return true;
  case NCC_DT_BOOL: *v = p[i] != 0; return true;
  default: return false;
  }
}

/* Element i of raw data as double (f32, f64 and integer dtypes). */
static bool read_f64(ncc_dtype dt, const void *data, int64_t i, double *v) {
  const unsigned char *p = data;
  if (dt == NCC_DT_F32) {
    float x;
    memcpy(&x, p + i * 4, 4);
    *v = x;
    return true;
  }
  if (dt == NCC_DT_F64) {
    memcpy(v, p + i * 8, 8);
    return true;
  }
  int64_t x;
  if (!read_int(dt, data, i, &x)) return false;
  *v = (double)x;
  return true;
}

/* Number of content slots of a tensor, or -1 when it cannot carry content. */
static int content_slots(ncc_dtype dt, const ncc_shape *s) {
  if (!is_intlike(dt)) return -1;
  int64_t n = ncc_shape_numel(s);
  return n >= 0 && n <= NCC_CONTENT_MAX ? (int)n : -1;
}

static void content_from_data(ncc_tinfo *t) {
  int n = content_slots(t->dtype, &t->shape);
  if (n < 0 || !t->data) return;
  for (int i = 0; i < n; i++) read_int(t->dtype, t->data, i, &t->content[i]);
  t->content_len = n;
}

void ncc_tinfo_from_value(ncc_tinfo *t, const ncc_value *v) {
  memset(t, 0, sizeof *t);
  t->content_len = -1;
  t->dtype = v->dtype;
  t->shape = v->shape;
  if (v->kind == NCC_VAL_CONST) t->data = v->data;
  if (v->content && v->content_len >= 0 && v->content_len <= NCC_CONTENT_MAX &&
      v->content_len == content_slots(v->dtype, &v->shape)) {
    memcpy(t->content, v->content, sizeof(int64_t) * (size_t)v->content_len);
    t->content_len = v->content_len;
  } else {
    content_from_data(t);
  }
}

void ncc_tinfo_from_tensor(ncc_tinfo *t, const ncc_tensor *x) {
  memset(t, 0, sizeof *t);
  t->content_len = -1;
  t->dtype = x->dtype;
  t->shape.rank = x->rank < 0              ? 0
                  : x->rank > NCC_MAX_RANK ? NCC_MAX_RANK
                                           : x->rank;
  for (int i = 0; i < t->shape.rank; i++) t->shape.d[i] = x->dims[i];
  t->data = x->data;
  content_from_data(t);
}

/* A value converted to dtype dt as a cast would; false when unknown (a
 * symbol that cannot survive the conversion). */
static bool wrap_to(ncc_dtype dt, int64_t v, int64_t *r) {
  if (ncc_dim_is_sym(v)) {
    if (dt != NCC_DT_I64 && dt != NCC_DT_I32) return false;
    *r = v;
    return true;
  }
  switch (dt) {
  case NCC_DT_I32: *r = (int32_t)(uint32_t)(uint64_t)v; break;
  case NCC_DT_I8: *r = (int8_t)(uint8_t)(uint64_t)v; break;
  case NCC_DT_U8: *r = (uint8_t)(uint64_t)v; break;
  case NCC_DT_BOOL: *r = v != 0; break;
  default: *r = v; break;
  }
  return true;
}

/* Flat index into `in` for flat index i of `out`, numpy-broadcast (both
 * shapes static). */
static int64_t bcast_index(const ncc_shape *out, const ncc_shape *in,
                           int64_t i) {
  int64_t idx = 0, stride = 1;
  for (int k = out->rank - 1, j = in->rank - 1; k >= 0; k--, j--) {
    int64_t coord = i % out->d[k];
    i /= out->d[k];
    if (j >= 0) {
      if (in->d[j] != 1) idx += coord * stride;
      stride *= in->d[j];
    }
  }
  return idx;
}

/* ------------------------------------------------------------------------ */
/* input, attribute and dtype checks                                         */

static const ncc_tinfo *IN(ictx *c, int i) { return &c->in[i]; }

static bool has_in(ictx *c, int i) {
  return i < c->n->n_in && c->in[i].dtype != NCC_DT_UNDEF;
}

static int rank_of(ictx *c, int i) { return c->in[i].shape.rank; }

static ncc_status check_dtype(ictx *c, int i, unsigned mask) {
  ncc_dtype dt = c->in[i].dtype;
  if (!(mask & (1u << dt)))
    return fail(c, NCC_ERR_UNSUPPORTED, "dtype %s is not supported (input %d)",
                ncc_dtype_name(dt), i);
  return NCC_OK;
}

/* Index-like inputs (shapes, axes, indices, pads) must be integers: a type
 * error of the model, not a missing feature of ncc. */
static ncc_status check_index(ictx *c, int i) {
  ncc_dtype dt = c->in[i].dtype;
  if (dt != NCC_DT_I64 && dt != NCC_DT_I32)
    return fail(c, NCC_ERR_INPUT, "input %d has dtype %s, expected i64", i,
                ncc_dtype_name(dt));
  return NCC_OK;
}

static ncc_status check_same_dtype(ictx *c, int i, int j) {
  if (c->in[i].dtype != c->in[j].dtype)
    return fail(
        c, NCC_ERR_INPUT, "input %d has dtype %s, expected %s (as input %d)", j,
        ncc_dtype_name(c->in[j].dtype), ncc_dtype_name(c->in[i].dtype), i);
  return NCC_OK;
}

static ncc_status check_rank(ictx *c, int i, int r) {
  if (rank_of(c, i) != r)
    return fail(c, NCC_ERR_INPUT, "input %d has %d dims, expected %d", i,
                rank_of(c, i), r);
  return NCC_OK;
}

static ncc_status check_min_rank(ictx *c, int i, int r) {
  if (rank_of(c, i) < r)
    return fail(c, NCC_ERR_INPUT, "input %d has %d dims, expected at least %d",
                i, rank_of(c, i), r);
  return NCC_OK;
}

static ncc_status check_out_rank(ictx *c, int r) {
  if (r > NCC_MAX_RANK)
    return fail(c, NCC_ERR_UNSUPPORTED, "output rank %d exceeds %d", r,
                NCC_MAX_RANK);
  return NCC_OK;
}

/* Integer attribute (default when absent); a wrong kind is an error. */
static ncc_status attr_int(ictx *c, const char *name, int64_t dflt,
                           int64_t *v) {
  const ncc_attr *a = ncc_node_attr(c->n, name);
  *v = dflt;
  if (!a) return NCC_OK;
  if (a->kind != NCC_ATTR_INT)
    return fail(c, NCC_ERR_INPUT, "attribute '%s' must be an int", name);
  *v = a->i;
  return NCC_OK;
}

/* Integer attribute restricted to 0/1. */
static ncc_status attr_flag(ictx *c, const char *name, int64_t dflt, bool *v) {
  int64_t x;
  *v = dflt != 0;
  ncc_status st = attr_int(c, name, dflt, &x);
  if (st) return st;
  if (x != 0 && x != 1)
    return fail(c, NCC_ERR_INPUT, "attribute '%s' must be 0 or 1, got %lld",
                name, (long long)x);
  *v = x != 0;
  return NCC_OK;
}

/* Ints attribute: *count -1 when absent. */
static ncc_status attr_ints(ictx *c, const char *name, const int64_t **v,
                            int *count) {
  const ncc_attr *a = ncc_node_attr(c->n, name);
  *v = NULL;
  *count = -1;
  if (!a) return NCC_OK;
  if (a->kind != NCC_ATTR_INTS)
    return fail(c, NCC_ERR_INPUT, "attribute '%s' must be a list of ints",
                name);
  *v = a->ints;
  *count = a->n;
  return NCC_OK;
}

static ncc_status attr_string(ictx *c, const char *name, const char *dflt,
                              const char **v) {
  const ncc_attr *a = ncc_node_attr(c->n, name);
  *v = dflt;
  if (!a) return NCC_OK;
  if (a->kind != NCC_ATTR_STRING || !a->s)
    return fail(c, NCC_ERR_INPUT, "attribute '%s' must be a string", name);
  *v = a->s;
  return NCC_OK;
}

/* Normalize an axis in [-r, r-1] (or [-r, r] when `inclusive`). */
static ncc_status norm_axis(ictx *c, const char *what, int64_t axis, int r,
                            bool inclusive, int *out) {
  int64_t hi = inclusive ? r : r - 1;
  *out = 0;
  if (axis < -(int64_t)r || axis > hi)
    return fail(c, NCC_ERR_INPUT, "%s %lld is out of range for rank %d", what,
                (long long)axis, r);
  *out = (int)(axis < 0 ? axis + r : axis);
  return NCC_OK;
}

/* Values of a small integer input, from content or raw data. Returns false
 * when unknown. At most `cap` values; more is an error. */
static ncc_status input_ints(ictx *c, int i, int64_t *vals, int cap, int *n,
                             bool *known) {
  const ncc_tinfo *t = IN(c, i);
  *known = false;
  *n = 0;
  int64_t numel = ncc_shape_numel(&t->shape);
  if (numel > cap)
    return fail(c, NCC_ERR_UNSUPPORTED,
                "input %d has %lld elements (at most %d)", i, (long long)numel,
                cap);
  if (t->content_len >= 0 && t->content_len == numel) {
    memcpy(vals, t->content, sizeof(int64_t) * (size_t)numel);
  } else if (t->data && numel >= 0) {
    for (int64_t k = 0; k < numel; k++)
      if (!read_int(t->dtype, t->data, k, &vals[k])) return NCC_OK;
  } else {
    return NCC_OK;
  }
  *n = (int)numel;
  *known = true;
  return NCC_OK;
}

/* Static axes (no symbols) from input i, normalized to [0, r), distinct. */
static ncc_status input_axes(ictx *c, int i, int r, int *axes, int *n,
                             bool *known) {
  int64_t v[NCC_CONTENT_MAX];
  ncc_status st = input_ints(c, i, v, NCC_CONTENT_MAX, n, known);
  if (st || !*known) return st;
  bool seen[NCC_MAX_RANK + 1] = {false};
  for (int k = 0; k < *n; k++) {
    if (ncc_dim_is_sym(v[k]))
      return fail(c, NCC_ERR_INPUT, "axes (input %d) must be static", i);
    st = norm_axis(c, "axis", v[k], r, false, &axes[k]);
    if (st) return st;
    if (seen[axes[k]])
      return fail(c, NCC_ERR_INPUT, "axis %lld is repeated", (long long)v[k]);
    seen[axes[k]] = true;
  }
  return NCC_OK;
}

/* The static length of a 1-D input (shape vectors, axes lists). */
static ncc_status vec_len(ictx *c, int i, int *len) {
  *len = 0;
  ncc_status st = check_rank(c, i, 1);
  if (st) return st;
  int64_t d = IN(c, i)->shape.d[0];
  if (!is_static(d))
    return fail(
        c, NCC_ERR_UNSUPPORTED,
        "input %d has a symbolic length: the output rank depends on data", i);
  if (d > NCC_CONTENT_MAX)
    return fail(c, NCC_ERR_UNSUPPORTED,
                "input %d has %lld elements (at most %d)", i, (long long)d,
                NCC_CONTENT_MAX);
  *len = (int)d;
  return NCC_OK;
}

static void set_out(ictx *c, int k, ncc_dtype dt, const ncc_shape *s) {
  c->out[k].dtype = dt;
  c->out[k].shape = *s;
}

static void set_content(ncc_tinfo *t, const int64_t *v, int n) {
  memcpy(t->content, v, sizeof(int64_t) * (size_t)n);
  t->content_len = n;
}

/* Output k keeps input i's content when the element order is unchanged
 * (Identity, Reshape, Flatten, Squeeze, Unsqueeze). */
static void pass_content(ictx *c, int i, int k) {
  const ncc_tinfo *t = IN(c, i);
  int n = content_slots(c->out[k].dtype, &c->out[k].shape);
  if (t->content_len >= 0 && t->content_len == n)
    set_content(&c->out[k], t->content, n);
}

/* ------------------------------------------------------------------------ */
/* elementwise ops                                                           */

/* Integer result of a binary op on two content elements (possibly
 * symbolic); false when it cannot be known statically. Symbols are dims, so
 * they are >= 0, which decides comparisons with negative numbers. */
static bool content_binop(ncc_op op, ncc_dtype dt, int64_t a, int64_t b,
                          int64_t *r) {
  bool sa = ncc_dim_is_sym(a), sb = ncc_dim_is_sym(b);
  if (sa || sb) {
    switch (op) {
    case NCC_OP_ADD:
      if (b == 0) *r = a;
      else if (a == 0) *r = b;
      else return false;
      return true;
    case NCC_OP_SUB:
      if (b == 0) *r = a;
      else if (a == b) *r = 0;
      else return false;
      return true;
    case NCC_OP_MUL:
      if (b == 1) *r = a;
      else if (a == 1) *r = b;
      else if (a == 0 || b == 0) *r = 0;
      else return false;
      return true;
    case NCC_OP_DIV:
      if (b != 1) return false;
      *r = a;
      return true;
    case NCC_OP_EQUAL:
      if (a == b) *r = 1;
      else if ((sa && !sb && b < 0) || (sb && !sa && a < 0)) *r = 0;
      else return false;
      return true;
    case NCC_OP_LESS: /* a < b */
    case NCC_OP_GREATER: /* a > b */ {
      int cmp; /* sign of a - b when known */
      if (a == b) cmp = 0;
      else if (sa && !sb && b < 0) cmp = 1;
      else if (sb && !sa && a < 0) cmp = -1;
      else return false;
      *r = op == NCC_OP_LESS ? cmp < 0 : cmp > 0;
      return true;
    }
    case NCC_OP_MAX:
      if (a == b || (sa && !sb && b <= 0)) *r = a;
      else if (sb && !sa && a <= 0) *r = b;
      else return false;
      return true;
    case NCC_OP_MIN:
      if (a == b || (sb && !sa && a <= 0)) *r = a;
      else if (sa && !sb && b <= 0) *r = b;
      else return false;
      return true;
    default: return false;
    }
  }
  int64_t x;
  switch (op) {
  case NCC_OP_ADD:
    if (__builtin_add_overflow(a, b, &x)) return false;
    break;
  case NCC_OP_SUB:
    if (__builtin_sub_overflow(a, b, &x)) return false;
    break;
  case NCC_OP_MUL:
    if (__builtin_mul_overflow(a, b, &x)) return false;
    break;
  case NCC_OP_DIV: /* C truncation, like the interpreter */
    if (b == 0 || (a == INT64_MIN && b == -1)) return false;
    x = a / b;
    break;
  case NCC_OP_MAX: x = a > b ? a : b; break;
  case NCC_OP_MIN: x = a < b ? a : b; break;
  case NCC_OP_EQUAL: *r = a == b; return true;
  case NCC_OP_LESS: *r = a < b; return true;
  case NCC_OP_GREATER: *r = a > b; return true;
  default: return false;
  }
  /* Values that leave the dtype's range are left unknown rather than
   * guessing the wrap-around of the kernels. */
  if (dt == NCC_DT_I32 && (x < INT32_MIN || x > INT32_MAX)) return false;
  if (ncc_dim_is_sym(x)) return false; /* would read as a symbol */
  *r = x;
  return true;
}

/* Content of a broadcasting op's output from its inputs' content: `op`
 * folded left over inputs [first, first + count). */
static void eltwise_content(ictx *c, ncc_op op, int first, int count) {
  ncc_tinfo *o = &c->out[0];
  int n = content_slots(o->dtype, &o->shape);
  if (n < 0) return;
  for (int i = first; i < first + count; i++)
    if (IN(c, i)->content_len < 0) return;
  int64_t v[NCC_CONTENT_MAX];
  ncc_dtype dt = IN(c, first)->dtype;
  for (int e = 0; e < n; e++) {
    const ncc_tinfo *t = IN(c, first);
    int64_t acc = t->content[bcast_index(&o->shape, &t->shape, e)];
    for (int i = first + 1; i < first + count; i++) {
      t = IN(c, i);
      int64_t b = t->content[bcast_index(&o->shape, &t->shape, e)];
      if (!content_binop(op, dt, acc, b, &acc)) return;
    }
    v[e] = acc;
  }
  set_content(o, v, n);
}

/* Broadcast the shapes of inputs [first, first + count) into *out. */
static ncc_status bcast_inputs(ictx *c, int first, int count, ncc_shape *out) {
  ncc_shape s = IN(c, first)->shape;
  for (int i = first + 1; i < first + count; i++) {
    if (ncc_broadcast_shapes(c->g, &s, &IN(c, i)->shape, &s)) {
      ncc_error_prefix("%s", c->label);
      return NCC_ERR_INPUT;
    }
  }
  *out = s;
  return NCC_OK;
}

/* Add Sub Mul Div Pow Equal Less Greater Max Min. */
static ncc_status infer_binary(ictx *c) {
  ncc_op op = c->n->op;
  unsigned mask = op == NCC_OP_POW     ? DT_FLOAT
                  : op == NCC_OP_EQUAL ? DT_ARITH | DT(BOOL)
                                       : DT_ARITH;
  ncc_status st;
  int nin = c->n->n_in;
  for (int i = 0; i < nin; i++) {
    if (op == NCC_OP_POW && i == 1) { /* exponent may be an integer */
      st = check_dtype(c, 1, DT_ARITH);
    } else {
      st = check_dtype(c, i, mask);
      if (!st && i > 0) st = check_same_dtype(c, 0, i);
    }
    if (st) return st;
  }
  ncc_shape s;
  if ((st = bcast_inputs(c, 0, nin, &s))) return st;
  bool cmp = ncc_op_table[op].flags & NCC_OPF_COMPARE;
  set_out(c, 0, cmp ? NCC_DT_BOOL : IN(c, 0)->dtype, &s);
  if (op != NCC_OP_POW) eltwise_content(c, op, 0, nin);
  return NCC_OK;
}

static ncc_status infer_where(ictx *c) {
  ncc_status st;
  if (IN(c, 0)->dtype != NCC_DT_BOOL)
    return fail(c, NCC_ERR_INPUT, "input 0 has dtype %s, expected bool",
                ncc_dtype_name(IN(c, 0)->dtype));
  if ((st = check_dtype(c, 1, DT_ARITH | DT(BOOL))) ||
      (st = check_same_dtype(c, 1, 2)))
    return st;
  ncc_shape s;
  if ((st = bcast_inputs(c, 0, 3, &s))) return st;
  set_out(c, 0, IN(c, 1)->dtype, &s);
  ncc_tinfo *o = &c->out[0];
  int n = content_slots(o->dtype, &s);
  if (n < 0) return NCC_OK;
  for (int i = 0; i < 3; i++)
    if (IN(c, i)->content_len < 0) return NCC_OK;
  int64_t v[NCC_CONTENT_MAX];
  for (int e = 0; e < n; e++) {
    const ncc_tinfo *cond = IN(c, 0);
    const ncc_tinfo *pick =
        cond->content[bcast_index(&s, &cond->shape, e)] ? IN(c, 1) : IN(c, 2);
    v[e] = pick->content[bcast_index(&s, &pick->shape, e)];
  }
  set_content(o, v, n);
  return NCC_OK;
}

/* Unary math ops, Identity, Cast and Clip: same shape as input 0. */
static ncc_status infer_unary(ictx *c) {
  ncc_op op = c->n->op;
  const ncc_tinfo *x = IN(c, 0);
  ncc_status st;
  ncc_dtype odt = x->dtype;
  switch (op) {
  case NCC_OP_IDENTITY:
  case NCC_OP_REORDER: st = check_dtype(c, 0, DT_ANY); break;
  case NCC_OP_NEG:
  case NCC_OP_ABS: st = check_dtype(c, 0, DT_ARITH); break;
  case NCC_OP_CAST: {
    const char *to;
    st = check_dtype(c, 0, DT_ANY);
    if (!st) st = attr_string(c, "to", NULL, &to);
    if (st) return st;
    if (!to)
      return fail(c, NCC_ERR_INPUT, "missing attribute 'to' (a dtype name)");
    odt = ncc_dtype_from_name(to, strlen(to));
    if (odt == NCC_DT_UNDEF)
      return fail(c, NCC_ERR_UNSUPPORTED, "cannot cast to unknown dtype '%s'",
                  to);
    break;
  }
  case NCC_OP_GELU: {
    const char *ap;
    if ((st = check_dtype(c, 0, DT_FLOAT)) ||
        (st = attr_string(c, "approximate", "none", &ap)))
      return st;
    if (strcmp(ap, "none") != 0 && strcmp(ap, "tanh") != 0)
      return fail(
          c, NCC_ERR_INPUT,
          "attribute 'approximate' must be \"none\" or \"tanh\", got \"%s\"",
          ap);
    break;
  }
  case NCC_OP_CLIP:
    st = check_dtype(c, 0, DT_FLOAT);
    for (int i = 1; !st && i < c->n->n_in; i++) {
      if (!has_in(c, i)) continue;
      st = check_same_dtype(c, 0, i);
      if (!st && ncc_shape_numel(&IN(c, i)->shape) != 1)
        st = fail(c, NCC_ERR_INPUT, "input %d (%s) must be a scalar", i,
                  i == 1 ? "min" : "max");
    }
    break;
  default: st = check_dtype(c, 0, DT_FLOAT); break;
  }
  if (st) return st;
  set_out(c, 0, odt, &x->shape);

  /* Content: Identity and integer casts keep it; Neg/Abs compute it; a cast
   * of constant float data to an integer type derives it from the data. */
  ncc_tinfo *o = &c->out[0];
  int n = content_slots(odt, &x->shape);
  if (n < 0) return NCC_OK;
  int64_t v[NCC_CONTENT_MAX];
  if (x->content_len == n) {
    for (int e = 0; e < n; e++) {
      int64_t a = x->content[e];
      if (op == NCC_OP_ABS) {
        if (!ncc_dim_is_sym(a)) {
          if (a == INT64_MIN) return NCC_OK;
          a = a < 0 ? -a : a;
        }
      } else if (op == NCC_OP_NEG) {
        if (ncc_dim_is_sym(a) || a == INT64_MIN) return NCC_OK;
        a = -a;
      }
      if (op != NCC_OP_CAST && odt == NCC_DT_I32 && a > INT32_MAX)
        return NCC_OK; /* wraps in the kernel */
      if (op != NCC_OP_CAST) v[e] = a;
      else if (!wrap_to(odt, a, &v[e])) return NCC_OK;
    }
    set_content(o, v, n);
  } else if (op == NCC_OP_CAST && x->data &&
             (x->dtype == NCC_DT_F32 || x->dtype == NCC_DT_F64)) {
    for (int e = 0; e < n; e++) {
      double f;
      read_f64(x->dtype, x->data, e, &f);
      if (odt == NCC_DT_BOOL) {
        v[e] = f != 0; /* NaN is true, as in C */
        continue;
      }
      /* Out-of-range conversions are left to the kernels' own rules
       * (runtime/ref/ref_util.c); narrow types go through i32 there. */
      bool in_range = odt == NCC_DT_I64 ? f > -9.2e18 && f < 9.2e18
                                        : f > -0x1p31 - 1.0 && f < 0x1p31;
      if (!in_range) return NCC_OK; /* also NaN */
      if (!wrap_to(odt, (int64_t)f, &v[e])) return NCC_OK;
    }
    set_content(o, v, n);
  }
  return NCC_OK;
}

/* ------------------------------------------------------------------------ */
/* contractions and convolution                                              */

/* Input i must broadcast to `to` without growing (Gemm's C, norm scales). */
static ncc_status check_unidir(ictx *c, int i, const ncc_shape *to) {
  const ncc_shape *s = &IN(c, i)->shape;
  bool ok = s->rank <= to->rank;
  for (int k = 0; ok && k < s->rank; k++) {
    int64_t d = s->d[s->rank - 1 - k], t = to->d[to->rank - 1 - k], r;
    ok = d == 1 || merge_dim(c->g, d, t, &r);
  }
  if (!ok) {
    char a[256], b[256];
    return fail(
        c, NCC_ERR_INPUT, "input %d of shape %s does not broadcast to %s", i,
        fmt_shape(c->g, s, a, sizeof a), fmt_shape(c->g, to, b, sizeof b));
  }
  return NCC_OK;
}

static ncc_status infer_matmul(ictx *c) {
  ncc_status st;
  if ((st = check_dtype(c, 0, DT_FLOAT)) || (st = check_same_dtype(c, 0, 1)) ||
      (st = check_min_rank(c, 0, 1)) || (st = check_min_rank(c, 1, 1)))
    return st;
  ncc_shape a = IN(c, 0)->shape, b = IN(c, 1)->shape;
  int ra = a.rank, rb = b.rank;
  if (ra == 1) { /* [K] -> [1, K] */
    a.rank = 2;
    a.d[1] = a.d[0];
    a.d[0] = 1;
  }
  if (rb == 1) { /* [K] -> [K, 1] */
    b.rank = 2;
    b.d[1] = 1;
  }
  int64_t k;
  if (!merge_dim(c->g, a.d[a.rank - 1], b.d[b.rank - 2], &k)) {
    char sa[256], sb[256];
    return fail(c, NCC_ERR_INPUT, "inner dims differ: %s x %s",
                fmt_shape(c->g, &IN(c, 0)->shape, sa, sizeof sa),
                fmt_shape(c->g, &IN(c, 1)->shape, sb, sizeof sb));
  }
  ncc_shape ba = {.rank = a.rank - 2}, bb = {.rank = b.rank - 2}, o;
  memcpy(ba.d, a.d, sizeof(int64_t) * (size_t)ba.rank);
  memcpy(bb.d, b.d, sizeof(int64_t) * (size_t)bb.rank);
  if (ncc_broadcast_shapes(c->g, &ba, &bb, &o)) {
    ncc_error_prefix("%s: batch dims", c->label);
    return NCC_ERR_INPUT;
  }
  if (ra > 1) o.d[o.rank++] = a.d[a.rank - 2];
  if (rb > 1) {
    if ((st = check_out_rank(c, o.rank + 1))) return st;
    o.d[o.rank++] = b.d[b.rank - 1];
  }
  set_out(c, 0, IN(c, 0)->dtype, &o);
  return NCC_OK;
}

static ncc_status infer_gemm(ictx *c) {
  ncc_status st;
  bool ta, tb;
  if ((st = check_dtype(c, 0, DT_FLOAT)) || (st = check_same_dtype(c, 0, 1)) ||
      (st = check_rank(c, 0, 2)) || (st = check_rank(c, 1, 2)) ||
      (st = attr_flag(c, "transA", 0, &ta)) ||
      (st = attr_flag(c, "transB", 0, &tb)))
    return st;
  const int64_t *A = IN(c, 0)->shape.d, *B = IN(c, 1)->shape.d;
  int64_t m = A[ta], ka = A[!ta], kb = B[tb], n = B[!tb], k;
  if (!merge_dim(c->g, ka, kb, &k))
    return fail(c, NCC_ERR_INPUT, "inner dims differ: %lld vs %lld",
                (long long)ka, (long long)kb);
  ncc_shape o = {.rank = 2, .d = {m, n}};
  if (has_in(c, 2) &&
      ((st = check_same_dtype(c, 0, 2)) || (st = check_unidir(c, 2, &o))))
    return st;
  set_out(c, 0, IN(c, 0)->dtype, &o);
  return NCC_OK;
}

/* Output size of spatial dim i for input size `in`. */
static ncc_status window_dim(ictx *c, const ncc_window *w, int i, int64_t in,
                             int64_t *out) {
  int64_t s = w->stride[i], pb = w->pad_begin[i], pe = w->pad_end[i];
  int64_t eff = ncc_window_extent(w, i);
  if (!is_static(in)) {
    /* Only "same"-sized windows keep a symbolic dim. */
    bool same =
        s == 1 && ((w->auto_pad == NCC_AUTO_PAD_NOTSET && pb + pe == eff - 1) ||
                   w->auto_pad == NCC_AUTO_PAD_SAME_UPPER || w->auto_pad == NCC_AUTO_PAD_SAME_LOWER ||
                   (w->auto_pad == NCC_AUTO_PAD_VALID && eff == 1));
    if (same) {
      *out = in;
      return NCC_OK;
    }
    return fresh_dim(c, out);
  }
  if (w->auto_pad == NCC_AUTO_PAD_SAME_UPPER || w->auto_pad == NCC_AUTO_PAD_SAME_LOWER) {
    *out = in / s + (in % s != 0);
    return NCC_OK;
  }
  int64_t padded;
  if (__builtin_add_overflow(in, pb + pe, &padded))
    return fail(c, NCC_ERR_INPUT, "spatial dim %d is too large", i);
  if (padded < eff)
    return fail(c, NCC_ERR_INPUT,
                "spatial dim %d (%lld, padded %lld) is smaller than the kernel "
                "extent %lld",
                i, (long long)in, (long long)padded, (long long)eff);
  int64_t span = padded - eff;
  int64_t o = span / s + 1;
  if (w->ceil_mode && span % s) {
    o++;
    /* The last window must start inside the input or its left padding
     * (PyTorch's and ONNX Runtime's rule): (o-1)*s < in + pb. */
    int64_t lim = in + pb; /* <= padded: no overflow */
    if (o - 1 >= lim / s + (lim % s != 0)) o--;
  }
  *out = o;
  return NCC_OK;
}

static ncc_status infer_conv(ictx *c) {
  ncc_status st;
  if ((st = check_dtype(c, 0, DT_FLOAT)) || (st = check_same_dtype(c, 0, 1)) ||
      (st = check_min_rank(c, 0, 3)) || (st = check_rank(c, 1, rank_of(c, 0))))
    return st;
  const ncc_shape *x = &IN(c, 0)->shape, *wt = &IN(c, 1)->shape;
  ncc_window w;
  if ((st = ncc_window_decode(c->n, x->rank - 2, wt->d + 2, &w))) return st;
  int64_t group = w.group;
  int64_t ch = x->d[1], wc = wt->d[1], m = wt->d[0];
  if (is_static(ch) && is_static(wc) && (ch % group != 0 || ch / group != wc))
    return fail(
        c, NCC_ERR_INPUT,
        "input has %lld channels but the weight expects %lld x group %lld",
        (long long)ch, (long long)wc, (long long)group);
  if (is_static(m) && m % group != 0)
    return fail(c, NCC_ERR_INPUT,
                "group %lld does not divide the %lld output channels",
                (long long)group, (long long)m);
  if (has_in(c, 2)) {
    int64_t r;
    if ((st = check_same_dtype(c, 0, 2)) || (st = check_rank(c, 2, 1)))
      return st;
    if (!merge_dim(c->g, IN(c, 2)->shape.d[0], m, &r))
      return fail(c, NCC_ERR_INPUT, "bias has %lld entries, expected %lld",
                  (long long)IN(c, 2)->shape.d[0], (long long)m);
  }
  ncc_shape o = {.rank = x->rank, .d = {x->d[0], m}};
  for (int i = 0; i < w.rank; i++)
    if ((st = window_dim(c, &w, i, x->d[i + 2], &o.d[i + 2]))) return st;
  set_out(c, 0, IN(c, 0)->dtype, &o);
  return NCC_OK;
}

/* MaxPool (optional i64 Indices output), AveragePool. */
static ncc_status infer_pool(ictx *c) {
  ncc_status st;
  if ((st = check_dtype(c, 0, DT_FLOAT)) || (st = check_min_rank(c, 0, 3)))
    return st;
  const ncc_shape *x = &IN(c, 0)->shape;
  ncc_window w;
  bool flag;
  if (c->n->op == NCC_OP_AVGPOOL)
    st = attr_flag(c, "count_include_pad", 0, &flag);
  else st = attr_flag(c, "storage_order", 0, &flag);
  if (st || (st = ncc_window_decode(c->n, x->rank - 2, NULL, &w))) return st;
  ncc_shape o = *x;
  for (int i = 0; i < w.rank; i++)
    if ((st = window_dim(c, &w, i, x->d[i + 2], &o.d[i + 2]))) return st;
  set_out(c, 0, IN(c, 0)->dtype, &o);
  if (c->n->n_out > 1) set_out(c, 1, NCC_DT_I64, &o);
  return NCC_OK;
}

static ncc_status infer_global_pool(ictx *c) {
  ncc_status st;
  if ((st = check_dtype(c, 0, DT_FLOAT)) || (st = check_min_rank(c, 0, 3)))
    return st;
  ncc_shape o = IN(c, 0)->shape;
  for (int i = 2; i < o.rank; i++) o.d[i] = 1;
  set_out(c, 0, IN(c, 0)->dtype, &o);
  return NCC_OK;
}

/* ------------------------------------------------------------------------ */
/* normalization and reductions                                              */

static ncc_status infer_batchnorm(ictx *c) {
  ncc_status st;
  int64_t training;
  if ((st = check_dtype(c, 0, DT_FLOAT)) || (st = check_min_rank(c, 0, 2)) ||
      (st = attr_int(c, "training_mode", 0, &training)))
    return st;
  if (training != 0)
    return fail(c, NCC_ERR_UNSUPPORTED, "training_mode=%lld is not supported",
                (long long)training);
  int64_t ch = IN(c, 0)->shape.d[1];
  static const char *names[] = {"", "scale", "B", "mean", "var"};
  for (int i = 1; i < 5; i++) {
    int64_t r;
    if ((st = check_same_dtype(c, 0, i)) || (st = check_rank(c, i, 1)))
      return st;
    if (!merge_dim(c->g, IN(c, i)->shape.d[0], ch, &r))
      return fail(c, NCC_ERR_INPUT, "%s has %lld entries, expected %lld",
                  names[i], (long long)IN(c, i)->shape.d[0], (long long)ch);
  }
  set_out(c, 0, IN(c, 0)->dtype, &IN(c, 0)->shape);
  return NCC_OK;
}

static ncc_status infer_layernorm(ictx *c) {
  ncc_status st;
  int64_t axis_attr;
  int r = rank_of(c, 0), axis = 0;
  if ((st = check_dtype(c, 0, DT_FLOAT)) || (st = check_min_rank(c, 0, 1)) ||
      (st = attr_int(c, "axis", -1, &axis_attr)) ||
      (st = norm_axis(c, "axis", axis_attr, r, false, &axis)))
    return st;
  ncc_shape norm = {.rank = r - axis};
  memcpy(norm.d, IN(c, 0)->shape.d + axis, sizeof(int64_t) * (size_t)norm.rank);
  for (int i = 1; i < c->n->n_in; i++) {
    if (!has_in(c, i)) continue;
    if ((st = check_same_dtype(c, 0, i)) || (st = check_unidir(c, i, &norm)))
      return st;
  }
  set_out(c, 0, IN(c, 0)->dtype, &IN(c, 0)->shape);
  ncc_shape stat = IN(c, 0)->shape;
  for (int i = axis; i < r; i++) stat.d[i] = 1;
  for (int k = 1; k < c->n->n_out; k++) set_out(c, k, NCC_DT_F32, &stat);
  return NCC_OK;
}

static ncc_status infer_softmax(ictx *c) {
  ncc_status st;
  int64_t axis_attr;
  int axis = 0;
  if ((st = check_dtype(c, 0, DT_FLOAT)) || (st = check_min_rank(c, 0, 1)) ||
      (st = attr_int(c, "axis", -1, &axis_attr)) ||
      (st = norm_axis(c, "axis", axis_attr, rank_of(c, 0), false, &axis)))
    return st;
  set_out(c, 0, IN(c, 0)->dtype, &IN(c, 0)->shape);
  return NCC_OK;
}

/* ReduceMean/Sum/Max with optional axes input (opset-18 form). */
static ncc_status infer_reduce(ictx *c) {
  ncc_status st;
  bool keep, noop;
  if ((st = check_dtype(c, 0, DT_ARITH)) ||
      (st = attr_flag(c, "keepdims", 1, &keep)) ||
      (st = attr_flag(c, "noop_with_empty_axes", 0, &noop)))
    return st;
  const ncc_shape *x = &IN(c, 0)->shape;
  int r = x->rank, n = 0, len = 0;
  int axes[NCC_CONTENT_MAX];
  bool known = true;
  if (has_in(c, 1)) {
    if ((st = check_index(c, 1)) || (st = vec_len(c, 1, &len)) ||
        (st = input_axes(c, 1, r, axes, &n, &known)))
      return st;
  }
  ncc_shape o = {.rank = 0};
  if (!known && len > 0) {
    /* Which dims are reduced depends on data: only the rank is known. */
    if (len > r) return fail(c, NCC_ERR_INPUT, "%d axes for rank %d", len, r);
    for (int i = 0; i < r; i++) {
      if (!keep && i >= r - len) break;
      if (keep && x->d[i] == 1) o.d[o.rank++] = 1;
      else if ((st = fresh_dim(c, &o.d[o.rank++]))) return st;
    }
    set_out(c, 0, IN(c, 0)->dtype, &o);
    return NCC_OK;
  }
  bool red[NCC_MAX_RANK] = {false};
  if (n == 0 && noop) {
    set_out(c, 0, IN(c, 0)->dtype, x);
    pass_content(c, 0, 0);
    return NCC_OK;
  }
  for (int i = 0; i < r; i++) red[i] = n == 0;
  for (int i = 0; i < n; i++) red[axes[i]] = true;
  for (int i = 0; i < r; i++) {
    if (!red[i]) o.d[o.rank++] = x->d[i];
    else if (keep) o.d[o.rank++] = 1;
  }
  set_out(c, 0, IN(c, 0)->dtype, &o);
  return NCC_OK;
}

/* ------------------------------------------------------------------------ */
/* shape and data movement                                                   */

static void unravel(const ncc_shape *s, int64_t i, int64_t *coord) {
  for (int k = s->rank - 1; k >= 0; k--) {
    coord[k] = s->d[k] ? i % s->d[k] : 0;
    i = s->d[k] ? i / s->d[k] : 0;
  }
}

static int64_t ravel(const ncc_shape *s, const int64_t *coord) {
  int64_t i = 0;
  for (int k = 0; k < s->rank; k++) i = i * s->d[k] + coord[k];
  return i;
}

static ncc_status infer_reshape(ictx *c) {
  ncc_status st;
  int len, n;
  bool allowzero, known;
  int64_t v[NCC_CONTENT_MAX];
  if ((st = check_dtype(c, 0, DT_ANY)) || (st = check_index(c, 1)) ||
      (st = vec_len(c, 1, &len)) || (st = check_out_rank(c, len)) ||
      (st = attr_flag(c, "allowzero", 0, &allowzero)) ||
      (st = input_ints(c, 1, v, NCC_CONTENT_MAX, &n, &known)))
    return st;
  const ncc_shape *x = &IN(c, 0)->shape;
  ncc_shape o = {.rank = len};
  if (!known) {
    for (int i = 0; i < len; i++)
      if ((st = fresh_dim(c, &o.d[i]))) return st;
    set_out(c, 0, IN(c, 0)->dtype, &o);
    return NCC_OK;
  }
  int neg = -1;
  bool zero = false;
  for (int i = 0; i < len; i++) {
    int64_t e = v[i];
    if (ncc_dim_is_sym(e)) {
      o.d[i] = e;
    } else if (e == -1) {
      if (neg >= 0) return fail(c, NCC_ERR_INPUT, "shape has more than one -1");
      neg = i;
      o.d[i] = 1;
    } else if (e < -1) {
      return fail(c, NCC_ERR_INPUT, "shape entry %d is %lld", i, (long long)e);
    } else if (e == 0 && !allowzero) {
      if (i >= x->rank)
        return fail(c, NCC_ERR_INPUT,
                    "shape entry %d is 0 (copy) but the input has rank %d", i,
                    x->rank);
      o.d[i] = x->d[i];
    } else {
      zero |= e == 0;
      o.d[i] = e;
    }
  }
  if (allowzero && zero && neg >= 0)
    return fail(c, NCC_ERR_INPUT, "shape has both 0 and -1 with allowzero=1");
  dprod pin, pout;
  dprod_init(&pin);
  dprod_init(&pout);
  for (int i = 0; i < x->rank; i++) dprod_mul(&pin, x->d[i]);
  for (int i = 0; i < len; i++)
    if (i != neg) dprod_mul(&pout, o.d[i]);
  if (pin.ovf || pout.ovf)
    return fail(c, NCC_ERR_INPUT, "element count overflows");
  dprod_cancel(&pin, &pout);
  char a[256], b[256];
  if (neg >= 0) {
    if (pin.n == 0 && pout.n == 0) {
      if (pout.stat == 0 || pin.stat % pout.stat != 0)
        return fail(c, NCC_ERR_INPUT, "cannot reshape %s into %s",
                    fmt_shape(c->g, x, a, sizeof a),
                    fmt_shape(c->g, &o, b, sizeof b));
      o.d[neg] = pin.stat / pout.stat;
    } else if (pin.n == 1 && pout.n == 0 && pin.stat == pout.stat &&
               pout.stat != 0) {
      o.d[neg] = pin.sym[0];
    } else if ((st = fresh_dim(c, &o.d[neg]))) {
      return st;
    }
  } else if (pin.n == 0 && pout.n == 0 && pin.stat != pout.stat) {
    return fail(c, NCC_ERR_INPUT, "cannot reshape %s (%lld elements) into %s",
                fmt_shape(c->g, x, a, sizeof a), (long long)pin.stat,
                fmt_shape(c->g, &o, b, sizeof b));
  }
  set_out(c, 0, IN(c, 0)->dtype, &o);
  pass_content(c, 0, 0);
  return NCC_OK;
}

static ncc_status infer_transpose(ictx *c) {
  ncc_status st;
  const int64_t *perm;
  int np;
  if ((st = check_dtype(c, 0, DT_ANY)) ||
      (st = attr_ints(c, "perm", &perm, &np)))
    return st;
  const ncc_tinfo *x = IN(c, 0);
  int r = x->shape.rank;
  int p[NCC_MAX_RANK];
  if (np < 0) {
    for (int i = 0; i < r; i++) p[i] = r - 1 - i;
  } else {
    bool seen[NCC_MAX_RANK] = {false};
    if (np != r)
      return fail(c, NCC_ERR_INPUT, "perm has %d entries for rank %d", np, r);
    for (int i = 0; i < r; i++) {
      if (perm[i] < 0 || perm[i] >= r || seen[perm[i]])
        return fail(c, NCC_ERR_INPUT, "perm is not a permutation of 0..%d",
                    r - 1);
      seen[perm[i]] = true;
      p[i] = (int)perm[i];
    }
  }
  ncc_shape o = {.rank = r};
  for (int i = 0; i < r; i++) o.d[i] = x->shape.d[p[i]];
  set_out(c, 0, x->dtype, &o);
  int n = content_slots(x->dtype, &o);
  if (n >= 0 && x->content_len == n) {
    int64_t v[NCC_CONTENT_MAX], co[NCC_MAX_RANK], ci[NCC_MAX_RANK];
    for (int e = 0; e < n; e++) {
      unravel(&o, e, co);
      for (int k = 0; k < r; k++) ci[p[k]] = co[k];
      v[e] = x->content[ravel(&x->shape, ci)];
    }
    set_content(&c->out[0], v, n);
  }
  return NCC_OK;
}

static ncc_status infer_flatten(ictx *c) {
  ncc_status st;
  int64_t axis_attr;
  int axis = 0;
  const ncc_shape *x = &IN(c, 0)->shape;
  if ((st = check_dtype(c, 0, DT_ANY)) ||
      (st = attr_int(c, "axis", 1, &axis_attr)) ||
      (st = norm_axis(c, "axis", axis_attr, x->rank, true, &axis)))
    return st;
  dprod lo, hi;
  dprod_init(&lo);
  dprod_init(&hi);
  for (int i = 0; i < x->rank; i++) dprod_mul(i < axis ? &lo : &hi, x->d[i]);
  ncc_shape o = {.rank = 2};
  if ((st = dprod_dim(c, &lo, &o.d[0])) || (st = dprod_dim(c, &hi, &o.d[1])))
    return st;
  set_out(c, 0, IN(c, 0)->dtype, &o);
  pass_content(c, 0, 0);
  return NCC_OK;
}

static ncc_status infer_squeeze(ictx *c) {
  ncc_status st;
  if ((st = check_dtype(c, 0, DT_ANY))) return st;
  const ncc_shape *x = &IN(c, 0)->shape;
  int r = x->rank, n = 0, len = 0;
  int axes[NCC_CONTENT_MAX];
  bool known = true, sq[NCC_MAX_RANK] = {false};
  ncc_shape o = {.rank = 0};
  if (has_in(c, 1)) {
    if ((st = check_index(c, 1)) || (st = vec_len(c, 1, &len)) ||
        (st = input_axes(c, 1, r, axes, &n, &known)))
      return st;
    if (!known) {
      if (len > r) return fail(c, NCC_ERR_INPUT, "%d axes for rank %d", len, r);
      for (int i = 0; i < r - len; i++)
        if ((st = fresh_dim(c, &o.d[o.rank++]))) return st;
      set_out(c, 0, IN(c, 0)->dtype, &o);
      pass_content(c, 0, 0);
      return NCC_OK;
    }
    for (int i = 0; i < n; i++) {
      int64_t d = x->d[axes[i]];
      if (is_static(d) && d != 1)
        return fail(c, NCC_ERR_INPUT, "cannot squeeze axis %d of size %lld",
                    axes[i], (long long)d);
      sq[axes[i]] = true;
    }
  } else {
    /* Without axes every size-1 dim goes; a symbolic dim might be 1 or not,
     * and the output rank would depend on it. */
    for (int i = 0; i < r; i++) {
      if (!is_static(x->d[i]))
        return fail(c, NCC_ERR_UNSUPPORTED,
                    "Squeeze without axes on a symbolic dim (%d)", i);
      sq[i] = x->d[i] == 1;
    }
  }
  for (int i = 0; i < r; i++)
    if (!sq[i]) o.d[o.rank++] = x->d[i];
  set_out(c, 0, IN(c, 0)->dtype, &o);
  pass_content(c, 0, 0);
  return NCC_OK;
}

static ncc_status infer_unsqueeze(ictx *c) {
  ncc_status st;
  int len, n;
  int axes[NCC_CONTENT_MAX];
  bool known;
  if ((st = check_dtype(c, 0, DT_ANY)) || (st = check_index(c, 1)) ||
      (st = vec_len(c, 1, &len)))
    return st;
  const ncc_shape *x = &IN(c, 0)->shape;
  int ro = x->rank + len;
  if ((st = check_out_rank(c, ro)) ||
      (st = input_axes(c, 1, ro, axes, &n, &known)))
    return st;
  ncc_shape o = {.rank = ro};
  if (!known) {
    for (int i = 0; i < ro; i++)
      if ((st = fresh_dim(c, &o.d[i]))) return st;
  } else {
    bool ins[NCC_MAX_RANK] = {false};
    for (int i = 0; i < n; i++) ins[axes[i]] = true;
    for (int i = 0, j = 0; i < ro; i++) o.d[i] = ins[i] ? 1 : x->d[j++];
  }
  set_out(c, 0, IN(c, 0)->dtype, &o);
  pass_content(c, 0, 0);
  return NCC_OK;
}

static ncc_status infer_concat(ictx *c) {
  ncc_status st;
  int nin = c->n->n_in, r = rank_of(c, 0), axis = 0;
  int64_t axis_attr;
  if (!ncc_node_attr(c->n, "axis"))
    return fail(c, NCC_ERR_INPUT, "missing attribute 'axis'");
  if ((st = check_dtype(c, 0, DT_ANY)) || (st = check_min_rank(c, 0, 1)) ||
      (st = attr_int(c, "axis", 0, &axis_attr)) ||
      (st = norm_axis(c, "axis", axis_attr, r, false, &axis)))
    return st;
  ncc_shape o = IN(c, 0)->shape;
  dprod sum = {.stat = 0}; /* a sum, kept like a product: static + symbols */
  for (int i = 0; i < nin; i++) {
    const ncc_shape *s = &IN(c, i)->shape;
    if ((st = check_same_dtype(c, 0, i)) || (st = check_rank(c, i, r)))
      return st;
    for (int k = 0; k < r; k++) {
      if (k == axis) continue;
      if (!merge_dim(c->g, o.d[k], s->d[k], &o.d[k]))
        return fail(c, NCC_ERR_INPUT,
                    "input %d has size %lld in dim %d, expected %lld", i,
                    (long long)s->d[k], k, (long long)o.d[k]);
    }
    int64_t d = s->d[axis];
    if (ncc_dim_is_sym(d)) {
      if (sum.n < NCC_MAX_RANK) sum.sym[sum.n] = d;
      sum.n++;
    } else if (__builtin_add_overflow(sum.stat, d, &sum.stat)) {
      return fail(c, NCC_ERR_INPUT, "concatenated size overflows");
    }
  }
  if (sum.n == 0) o.d[axis] = sum.stat;
  else if (sum.n == 1 && sum.stat == 0) o.d[axis] = sum.sym[0];
  else if ((st = fresh_dim(c, &o.d[axis]))) return st;
  set_out(c, 0, IN(c, 0)->dtype, &o);

  int n = content_slots(IN(c, 0)->dtype, &o);
  if (n < 0) return NCC_OK;
  for (int i = 0; i < nin; i++)
    if (IN(c, i)->content_len < 0) return NCC_OK;
  int64_t v[NCC_CONTENT_MAX], co[NCC_MAX_RANK];
  for (int e = 0; e < n; e++) {
    unravel(&o, e, co);
    int i = 0;
    while (co[axis] >= IN(c, i)->shape.d[axis])
      co[axis] -= IN(c, i++)->shape.d[axis];
    v[e] = IN(c, i)->content[ravel(&IN(c, i)->shape, co)];
  }
  set_content(&c->out[0], v, n);
  return NCC_OK;
}

static ncc_status infer_split(ictx *c) {
  ncc_status st;
  int64_t axis_attr, num;
  int axis = 0, nout = c->n->n_out;
  const ncc_tinfo *x = IN(c, 0);
  if ((st = check_dtype(c, 0, DT_ANY)) || (st = check_min_rank(c, 0, 1)) ||
      (st = attr_int(c, "axis", 0, &axis_attr)) ||
      (st = attr_int(c, "num_outputs", nout, &num)) ||
      (st = norm_axis(c, "axis", axis_attr, x->shape.rank, false, &axis)))
    return st;
  if (num != nout)
    return fail(c, NCC_ERR_INPUT,
                "num_outputs is %lld but the node has %d outputs",
                (long long)num, nout);
  int64_t dim = x->shape.d[axis];
  int64_t sizes[NCC_CONTENT_MAX];
  bool known = true;
  int n = 0;
  if (nout > NCC_CONTENT_MAX)
    return fail(c, NCC_ERR_UNSUPPORTED, "%d outputs (at most %d)", nout,
                NCC_CONTENT_MAX);
  if (has_in(c, 1)) {
    int len;
    if ((st = check_index(c, 1)) || (st = vec_len(c, 1, &len)) ||
        (st = input_ints(c, 1, sizes, NCC_CONTENT_MAX, &n, &known)))
      return st;
    if (len != nout)
      return fail(c, NCC_ERR_INPUT,
                  "split has %d sizes but the node has %d outputs", len, nout);
    if (known) {
      int64_t total = 0;
      bool all_static = true;
      for (int i = 0; i < nout; i++) {
        if (ncc_dim_is_sym(sizes[i])) {
          all_static = false;
        } else if (sizes[i] < 0) {
          return fail(c, NCC_ERR_INPUT, "split size %d is %lld", i,
                      (long long)sizes[i]);
        } else if (__builtin_add_overflow(total, sizes[i], &total)) {
          return fail(c, NCC_ERR_INPUT, "split sizes overflow");
        }
      }
      if (all_static && is_static(dim) && total != dim)
        return fail(c, NCC_ERR_INPUT, "split sizes sum to %lld, dim %d is %lld",
                    (long long)total, axis, (long long)dim);
    }
  } else if (is_static(dim)) {
    int64_t chunk = dim / nout + (dim % nout != 0);
    for (int i = 0; i < nout; i++) sizes[i] = chunk;
    sizes[nout - 1] = dim - chunk * (nout - 1);
    if (sizes[nout - 1] < 0)
      return fail(c, NCC_ERR_INPUT, "cannot split size %lld into %d outputs",
                  (long long)dim, nout);
  } else if (nout == 1) {
    sizes[0] = dim;
  } else {
    known = false;
  }
  for (int i = 0; i < nout; i++) {
    ncc_shape o = x->shape;
    if (!known && (st = fresh_dim(c, &sizes[i]))) return st;
    o.d[axis] = sizes[i];
    set_out(c, i, x->dtype, &o);
  }
  /* Content of each part. */
  if (!known || x->content_len < 0) return NCC_OK;
  int64_t off = 0, co[NCC_MAX_RANK], v[NCC_CONTENT_MAX];
  for (int i = 0; i < nout; i++) {
    ncc_tinfo *o = &c->out[i];
    int m = content_slots(o->dtype, &o->shape);
    if (m < 0) return NCC_OK;
    for (int e = 0; e < m; e++) {
      unravel(&o->shape, e, co);
      co[axis] += off;
      v[e] = x->content[ravel(&x->shape, co)];
    }
    set_content(o, v, m);
    off += sizes[i];
  }
  return NCC_OK;
}

/* Slice bounds at least this large mean "to the end" on a symbolic dim
 * (PyTorch writes INT64_MAX, other exporters INT32_MAX). */
#define SLICE_BIG ((int64_t)INT32_MAX)

/* Size of one sliced dim; *begin gets the clamped start and *exact is set
 * when the result is static. */
static ncc_status slice_dim(ictx *c, int64_t d, int64_t s, int64_t e,
                            int64_t step, int64_t *out, int64_t *begin,
                            bool *exact) {
  *exact = false;
  if (ncc_dim_is_sym(step)) return fresh_dim(c, out);
  if (step == 0) return fail(c, NCC_ERR_INPUT, "slice step is 0");
  bool ss = ncc_dim_is_sym(s), se = ncc_dim_is_sym(e);
  if (!is_static(d)) {
    bool to_end = step == 1 && s == 0 && (e == d || (!se && e >= SLICE_BIG));
    bool reverse = step == -1 && !ss && (s == -1 || s >= SLICE_BIG) && !se &&
                   e <= -SLICE_BIG;
    if (to_end || reverse) {
      *out = d;
      return NCC_OK;
    }
    return fresh_dim(c, out);
  }
  if (ss || se) return fresh_dim(c, out);
  int64_t cnt = 0;
  if (s < 0) s += d; /* d >= 0: cannot overflow */
  if (e < 0) e += d;
  if (d == 0) {
    s = 0;
  } else if (step > 0) {
    s = s < 0 ? 0 : s > d ? d : s;
    e = e < 0 ? 0 : e > d ? d : e;
    cnt = e > s ? (e - s - 1) / step + 1 : 0;
  } else {
    int64_t ns = step == INT64_MIN ? INT64_MAX : -step;
    s = s < 0 ? 0 : s > d - 1 ? d - 1 : s;
    e = e < -1 ? -1 : e > d - 1 ? d - 1 : e;
    cnt = s > e ? (s - e - 1) / ns + 1 : 0;
  }
  *out = cnt;
  *begin = s;
  *exact = true;
  return NCC_OK;
}

static ncc_status infer_slice(ictx *c) {
  ncc_status st;
  const ncc_tinfo *x = IN(c, 0);
  int r = x->shape.rank, len, len2, n;
  if ((st = check_dtype(c, 0, DT_ANY)) || (st = check_index(c, 1)) ||
      (st = check_index(c, 2)) || (st = vec_len(c, 1, &len)) ||
      (st = vec_len(c, 2, &len2)))
    return st;
  for (int i = 3; i < c->n->n_in; i++) {
    if (!has_in(c, i)) continue;
    if ((st = check_index(c, i)) || (st = vec_len(c, i, &len2))) return st;
    if (len2 != len) break;
  }
  if (len2 != len)
    return fail(c, NCC_ERR_INPUT,
                "starts, ends, axes and steps differ in length");
  int64_t starts[NCC_CONTENT_MAX], ends[NCC_CONTENT_MAX],
      steps[NCC_CONTENT_MAX];
  int axes[NCC_CONTENT_MAX];
  bool ks, ke, ka = true, kst = true;
  if ((st = input_ints(c, 1, starts, NCC_CONTENT_MAX, &n, &ks)) ||
      (st = input_ints(c, 2, ends, NCC_CONTENT_MAX, &n, &ke)))
    return st;
  if (has_in(c, 3)) {
    if ((st = input_axes(c, 3, r, axes, &n, &ka))) return st;
  } else {
    if (len > r)
      return fail(c, NCC_ERR_INPUT, "%d slice entries for rank %d", len, r);
    for (int i = 0; i < len; i++) axes[i] = i;
  }
  if (has_in(c, 4)) {
    if ((st = input_ints(c, 4, steps, NCC_CONTENT_MAX, &n, &kst))) return st;
  } else {
    for (int i = 0; i < len; i++) steps[i] = 1;
  }
  ncc_shape o = x->shape;
  int64_t begin[NCC_MAX_RANK] = {0}, stride[NCC_MAX_RANK];
  bool exact = ka && ks && ke && kst;
  for (int k = 0; k < NCC_MAX_RANK; k++) stride[k] = 1;
  if (!ka) {
    for (int k = 0; k < r; k++)
      if ((st = fresh_dim(c, &o.d[k]))) return st;
  }
  for (int i = 0; ka && i < len; i++) {
    int a = axes[i];
    bool ex;
    if (!ks || !ke || !kst) {
      if ((st = fresh_dim(c, &o.d[a]))) return st;
      continue;
    }
    if ((st = slice_dim(c, x->shape.d[a], starts[i], ends[i], steps[i], &o.d[a],
                        &begin[a], &ex)))
      return st;
    stride[a] = steps[i];
    exact &= ex;
  }
  set_out(c, 0, x->dtype, &o);
  int m = content_slots(x->dtype, &o);
  if (!exact || m < 0 || x->content_len < 0) return NCC_OK;
  int64_t v[NCC_CONTENT_MAX], co[NCC_MAX_RANK];
  for (int e = 0; e < m; e++) {
    unravel(&o, e, co);
    for (int k = 0; k < r; k++) co[k] = begin[k] + co[k] * stride[k];
    v[e] = x->content[ravel(&x->shape, co)];
  }
  set_content(&c->out[0], v, m);
  return NCC_OK;
}

static ncc_status infer_gather(ictx *c) {
  ncc_status st;
  int64_t axis_attr;
  int axis = 0;
  const ncc_tinfo *x = IN(c, 0), *ix = IN(c, 1);
  int r = x->shape.rank, ri = ix->shape.rank;
  if ((st = check_dtype(c, 0, DT_ANY)) || (st = check_index(c, 1)) ||
      (st = check_min_rank(c, 0, 1)) ||
      (st = attr_int(c, "axis", 0, &axis_attr)) ||
      (st = norm_axis(c, "axis", axis_attr, r, false, &axis)) ||
      (st = check_out_rank(c, r - 1 + ri)))
    return st;
  ncc_shape o = {.rank = 0};
  for (int k = 0; k < axis; k++) o.d[o.rank++] = x->shape.d[k];
  for (int k = 0; k < ri; k++) o.d[o.rank++] = ix->shape.d[k];
  for (int k = axis + 1; k < r; k++) o.d[o.rank++] = x->shape.d[k];
  set_out(c, 0, x->dtype, &o);

  /* Indices are checked wherever they are known, so kernels can trust them. */
  int64_t d = x->shape.d[axis], ni = ncc_shape_numel(&ix->shape);
  bool from_content = ni >= 0 && ix->content_len == ni;
  bool sym_index = false;
  if (is_static(d) && ni >= 0 && (from_content || ix->data)) {
    for (int64_t k = 0; k < ni; k++) {
      int64_t v = 0;
      if (from_content) v = ix->content[k];
      else read_int(ix->dtype, ix->data, k, &v);
      if (ncc_dim_is_sym(v)) {
        sym_index = true;
        continue;
      }
      if (v < -d || v >= d)
        return fail(c, NCC_ERR_INPUT,
                    "index %lld is out of range for dim %d of size %lld",
                    (long long)v, axis, (long long)d);
    }
  }
  int m = content_slots(x->dtype, &o);
  if (m < 0 || !from_content || sym_index || x->content_len < 0) return NCC_OK;
  int64_t v[NCC_CONTENT_MAX], co[NCC_MAX_RANK], ci[NCC_MAX_RANK];
  for (int e = 0; e < m; e++) {
    unravel(&o, e, co);
    int64_t idx = ravel(&ix->shape, co + axis);
    int64_t t = ix->content[idx];
    for (int k = 0; k < axis; k++) ci[k] = co[k];
    ci[axis] = t < 0 ? t + d : t;
    for (int k = axis + 1; k < r; k++) ci[k] = co[k - 1 + ri];
    v[e] = x->content[ravel(&x->shape, ci)];
  }
  set_content(&c->out[0], v, m);
  return NCC_OK;
}

static ncc_status infer_shape_op(ictx *c) {
  ncc_status st;
  int64_t start, end;
  int r = rank_of(c, 0);
  if ((st = check_dtype(c, 0, DT_ANY)) ||
      (st = attr_int(c, "start", 0, &start)) ||
      (st = attr_int(c, "end", r, &end)))
    return st;
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = start < 0 ? 0 : start > r ? r : start;
  end = end < 0 ? 0 : end > r ? r : end;
  int len = end > start ? (int)(end - start) : 0;
  ncc_shape o = {.rank = 1, .d = {len}};
  set_out(c, 0, NCC_DT_I64, &o);
  set_content(&c->out[0], IN(c, 0)->shape.d + start, len);
  return NCC_OK;
}

/* Read a 1-D shape input (Expand, ConstantOfShape) into s: static entries
 * must be >= 0; unknown content gives fresh dims. */
static ncc_status shape_input(ictx *c, int i, ncc_shape *s) {
  ncc_status st;
  int len, n;
  bool known;
  int64_t v[NCC_CONTENT_MAX];
  if ((st = check_index(c, i)) || (st = vec_len(c, i, &len)) ||
      (st = check_out_rank(c, len)) ||
      (st = input_ints(c, i, v, NCC_CONTENT_MAX, &n, &known)))
    return st;
  s->rank = len;
  for (int k = 0; k < len; k++) {
    if (!known) {
      if ((st = fresh_dim(c, &s->d[k]))) return st;
    } else if (!ncc_dim_is_sym(v[k]) && v[k] < 0) {
      return fail(c, NCC_ERR_INPUT, "shape entry %d is %lld", k,
                  (long long)v[k]);
    } else {
      s->d[k] = v[k];
    }
  }
  return NCC_OK;
}

static ncc_status infer_expand(ictx *c) {
  ncc_status st;
  ncc_shape s, o;
  const ncc_tinfo *x = IN(c, 0);
  if ((st = check_dtype(c, 0, DT_ANY)) || (st = shape_input(c, 1, &s)))
    return st;
  if (ncc_broadcast_shapes(c->g, &x->shape, &s, &o)) {
    ncc_error_prefix("%s", c->label);
    return NCC_ERR_INPUT;
  }
  set_out(c, 0, x->dtype, &o);
  int m = content_slots(x->dtype, &o);
  if (m < 0 || x->content_len < 0) return NCC_OK;
  int64_t v[NCC_CONTENT_MAX];
  for (int e = 0; e < m; e++) v[e] = x->content[bcast_index(&o, &x->shape, e)];
  set_content(&c->out[0], v, m);
  return NCC_OK;
}

static ncc_status infer_pad(ictx *c) {
  ncc_status st;
  const char *mode;
  const ncc_tinfo *x = IN(c, 0);
  int r = x->shape.rank, na = r, lp, n;
  if ((st = check_dtype(c, 0, DT_ANY)) || (st = check_index(c, 1)) ||
      (st = attr_string(c, "mode", "constant", &mode)))
    return st;
  bool constant = !strcmp(mode, "constant"), reflect = !strcmp(mode, "reflect");
  bool wrap = !strcmp(mode, "wrap");
  if (!constant && !reflect && !wrap && strcmp(mode, "edge") != 0)
    return fail(c, NCC_ERR_INPUT, "unknown mode \"%s\"", mode);
  if (has_in(c, 2) && ((st = check_same_dtype(c, 0, 2)) ||
                       ncc_shape_numel(&IN(c, 2)->shape) != 1))
    return st ? st : fail(c, NCC_ERR_INPUT, "constant_value must be a scalar");
  int axes[NCC_CONTENT_MAX];
  bool ka = true, kp;
  if (has_in(c, 3)) {
    if ((st = check_index(c, 3)) || (st = vec_len(c, 3, &na)) ||
        (st = input_axes(c, 3, r, axes, &n, &ka)))
      return st;
  } else {
    for (int i = 0; i < r; i++) axes[i] = i;
  }
  int64_t pads[NCC_CONTENT_MAX];
  if ((st = vec_len(c, 1, &lp))) return st;
  if (lp != 2 * na)
    return fail(c, NCC_ERR_INPUT, "pads has %d entries, expected %d", lp,
                2 * na);
  if ((st = input_ints(c, 1, pads, NCC_CONTENT_MAX, &n, &kp))) return st;
  ncc_shape o = x->shape;
  for (int k = 0; !ka && k < r; k++)
    if ((st = fresh_dim(c, &o.d[k]))) return st;
  for (int i = 0; ka && i < na; i++) {
    int a = axes[i];
    int64_t d = x->shape.d[a], pb = pads[i], pe = pads[i + na], total, nd;
    if (!kp || ncc_dim_is_sym(pb) || ncc_dim_is_sym(pe)) {
      if ((st = fresh_dim(c, &o.d[a]))) return st;
      continue;
    }
    if (__builtin_add_overflow(pb, pe, &total))
      return fail(c, NCC_ERR_INPUT, "pads overflow");
    if (!is_static(d)) {
      if (total == 0) continue;
      if ((st = fresh_dim(c, &o.d[a]))) return st;
      continue;
    }
    if (__builtin_add_overflow(d, total, &nd) || nd < 0)
      return fail(c, NCC_ERR_INPUT,
                  "pads (%lld, %lld) are invalid for dim %d of size %lld",
                  (long long)pb, (long long)pe, a, (long long)d);
    if (!constant && (pb > 0 || pe > 0)) {
      int64_t lim = reflect ? d - 1 : wrap ? d : INT64_MAX;
      if (d == 0 || pb > lim || pe > lim)
        return fail(
            c, NCC_ERR_INPUT,
            "%s pads (%lld, %lld) are too large for dim %d of size %lld", mode,
            (long long)pb, (long long)pe, a, (long long)d);
    }
    o.d[a] = nd;
  }
  set_out(c, 0, x->dtype, &o);
  return NCC_OK;
}

/* ------------------------------------------------------------------------ */
/* sources                                                                   */

/* A tensor attribute that a node outputs or fills with (Constant,
 * ConstantOfShape). */
static ncc_status tensor_attr(ictx *c, const char *name, const ncc_const **t) {
  const ncc_attr *a = ncc_node_attr(c->n, name);
  *t = NULL;
  if (!a) return NCC_OK;
  if (a->kind != NCC_ATTR_TENSOR)
    return fail(c, NCC_ERR_INPUT, "attribute '%s' must be a tensor", name);
  const ncc_const *k = &a->t;
  if (k->dtype <= NCC_DT_UNDEF || k->dtype >= NCC_DT_COUNT ||
      k->shape.rank < 0 || k->shape.rank > NCC_MAX_RANK ||
      ncc_shape_numel(&k->shape) < 0 ||
      (ncc_shape_numel(&k->shape) > 0 && !k->data))
    return fail(c, NCC_ERR_INPUT, "attribute '%s' is not a valid tensor", name);
  *t = k;
  return NCC_OK;
}

static ncc_status infer_constant(ictx *c) {
  const ncc_const *t;
  ncc_status st = tensor_attr(c, "value", &t);
  if (st) return st;
  if (!t) return fail(c, NCC_ERR_INPUT, "missing attribute 'value'");
  set_out(c, 0, t->dtype, &t->shape);
  c->out[0].data = t->data;
  content_from_data(&c->out[0]);
  c->out[0].data = NULL;
  return NCC_OK;
}

static ncc_status infer_constant_of_shape(ictx *c) {
  ncc_status st;
  const ncc_const *t;
  ncc_shape o;
  if ((st = shape_input(c, 0, &o)) || (st = tensor_attr(c, "value", &t)))
    return st;
  if (t && ncc_shape_numel(&t->shape) != 1)
    return fail(c, NCC_ERR_INPUT, "attribute 'value' must have one element");
  ncc_dtype dt = t ? t->dtype : NCC_DT_F32;
  set_out(c, 0, dt, &o);
  int m = content_slots(dt, &o);
  int64_t fill, v[NCC_CONTENT_MAX];
  if (m < 0 || !t || !read_int(dt, t->data, 0, &fill)) return NCC_OK;
  for (int e = 0; e < m; e++) v[e] = fill;
  set_content(&c->out[0], v, m);
  return NCC_OK;
}

/* Largest Range we agree to describe. */
#define RANGE_MAX ((int64_t)1 << 40)

static ncc_status range_count_int(ictx *c, int64_t start, int64_t limit,
                                  int64_t delta, int64_t *cnt) {
  int64_t diff;
  if (delta == 0) return fail(c, NCC_ERR_INPUT, "delta is 0");
  if (__builtin_sub_overflow(limit, start, &diff))
    return fail(c, NCC_ERR_INPUT, "range is too large");
  /* ceil(diff / delta) when positive; q + 1 is capped so it cannot
   * overflow (diff = INT64_MIN, delta = -1). */
  int64_t q;
  if (delta > 0 ? diff <= 0 : diff >= 0) q = -1;
  else if (delta > 0) q = (diff - 1) / delta;
  else q = delta == INT64_MIN ? 0 : (-(diff + 1)) / (-delta);
  *cnt = q >= RANGE_MAX ? RANGE_MAX + 1 : q + 1;
  return NCC_OK;
}

static ncc_status infer_range(ictx *c) {
  ncc_status st;
  if ((st = check_dtype(c, 0, DT_ARITH))) return st;
  for (int i = 0; i < 3; i++) {
    if ((st = check_same_dtype(c, 0, i))) return st;
    if (ncc_shape_numel(&IN(c, i)->shape) != 1)
      return fail(c, NCC_ERR_INPUT, "input %d must be a scalar", i);
  }
  ncc_dtype dt = IN(c, 0)->dtype;
  ncc_shape o = {.rank = 1};
  int64_t v[3], cnt = -1;
  bool known[3], all = true, any_sym = false;
  if (dt == NCC_DT_F32) {
    double f[3];
    for (int i = 0; i < 3; i++) {
      all &= IN(c, i)->data != NULL;
      if (all) read_f64(dt, IN(c, i)->data, 0, &f[i]);
    }
    if (all) {
      /* As ONNX Runtime: the difference in float, the quotient in double. */
      float diff = (float)f[1] - (float)f[0];
      double q = ceil((double)diff / f[2]);
      if (f[2] == 0 || !isfinite(q))
        return fail(c, NCC_ERR_INPUT, "invalid range (%g, %g, %g)", f[0], f[1],
                    f[2]);
      cnt = q < 0 ? 0 : q > (double)RANGE_MAX ? RANGE_MAX + 1 : (int64_t)q;
    }
  } else {
    for (int i = 0; i < 3; i++) {
      int n;
      if ((st = input_ints(c, i, &v[i], 1, &n, &known[i]))) return st;
      all &= known[i];
      any_sym |= known[i] && ncc_dim_is_sym(v[i]);
    }
    if (all && !any_sym) {
      if ((st = range_count_int(c, v[0], v[1], v[2], &cnt))) return st;
    } else if (all && v[0] == 0 && v[2] == 1 && ncc_dim_is_sym(v[1])) {
      o.d[0] = v[1]; /* Range(0, N, 1) has N elements */
      set_out(c, 0, dt, &o);
      return NCC_OK;
    }
  }
  if (cnt > RANGE_MAX)
    return fail(c, NCC_ERR_INPUT, "range of more than %lld elements",
                (long long)RANGE_MAX);
  if (cnt < 0 && (st = fresh_dim(c, &o.d[0]))) return st;
  if (cnt >= 0) o.d[0] = cnt;
  set_out(c, 0, dt, &o);
  if (dt != NCC_DT_F32 && cnt >= 0 && cnt <= NCC_CONTENT_MAX) {
    int64_t w[NCC_CONTENT_MAX];
    for (int64_t e = 0; e < cnt; e++) w[e] = v[0] + e * v[2];
    set_content(&c->out[0], w, (int)cnt);
  }
  return NCC_OK;
}

/* ------------------------------------------------------------------------ */
/* entry points                                                              */

static ncc_status dispatch(ictx *c) {
  switch (c->n->op) {
  case NCC_OP_ADD:
  case NCC_OP_SUB:
  case NCC_OP_MUL:
  case NCC_OP_DIV:
  case NCC_OP_POW:
  case NCC_OP_MAX:
  case NCC_OP_MIN:
  case NCC_OP_EQUAL:
  case NCC_OP_LESS:
  case NCC_OP_GREATER: return infer_binary(c);
  case NCC_OP_WHERE: return infer_where(c);
  case NCC_OP_NEG:
  case NCC_OP_ABS:
  case NCC_OP_SQRT:
  case NCC_OP_RECIPROCAL:
  case NCC_OP_EXP:
  case NCC_OP_LOG:
  case NCC_OP_ERF:
  case NCC_OP_TANH:
  case NCC_OP_SIGMOID:
  case NCC_OP_RELU:
  case NCC_OP_LEAKYRELU:
  case NCC_OP_CLIP:
  case NCC_OP_HARDSIGMOID:
  case NCC_OP_HARDSWISH:
  case NCC_OP_GELU:
  case NCC_OP_SOFTPLUS:
  case NCC_OP_IDENTITY:
  case NCC_OP_REORDER:
  case NCC_OP_CAST: return infer_unary(c);
  case NCC_OP_MATMUL: return infer_matmul(c);
  case NCC_OP_GEMM: return infer_gemm(c);
  case NCC_OP_CONV: return infer_conv(c);
  case NCC_OP_BATCHNORM: return infer_batchnorm(c);
  case NCC_OP_LAYERNORM: return infer_layernorm(c);
  case NCC_OP_SOFTMAX:
  case NCC_OP_LOGSOFTMAX: return infer_softmax(c);
  case NCC_OP_REDUCEMEAN:
  case NCC_OP_REDUCESUM:
  case NCC_OP_REDUCEMAX: return infer_reduce(c);
  case NCC_OP_MAXPOOL:
  case NCC_OP_AVGPOOL: return infer_pool(c);
  case NCC_OP_GLOBALAVGPOOL: return infer_global_pool(c);
  case NCC_OP_RESHAPE: return infer_reshape(c);
  case NCC_OP_TRANSPOSE: return infer_transpose(c);
  case NCC_OP_FLATTEN: return infer_flatten(c);
  case NCC_OP_SQUEEZE: return infer_squeeze(c);
  case NCC_OP_UNSQUEEZE: return infer_unsqueeze(c);
  case NCC_OP_CONCAT: return infer_concat(c);
  case NCC_OP_SPLIT: return infer_split(c);
  case NCC_OP_SLICE: return infer_slice(c);
  case NCC_OP_GATHER: return infer_gather(c);
  case NCC_OP_SHAPE: return infer_shape_op(c);
  case NCC_OP_EXPAND: return infer_expand(c);
  case NCC_OP_PAD: return infer_pad(c);
  case NCC_OP_CONSTANT: return infer_constant(c);
  case NCC_OP_CONSTANTOFSHAPE: return infer_constant_of_shape(c);
  case NCC_OP_RANGE: return infer_range(c);
  case NCC_OP_COUNT: break;
  }
  return ncc_error(NCC_ERR_INTERNAL, "%s: no shape inference", c->label);
}

static ncc_status check_arity(ictx *c, const char *what, int have, int lo,
                              int hi) {
  if (have >= lo && (hi < 0 || have <= hi)) return NCC_OK;
  if (hi < 0)
    return fail(c, NCC_ERR_INPUT, "has %d %s, expected at least %d", have, what,
                lo);
  if (lo == hi)
    return fail(c, NCC_ERR_INPUT, "has %d %s, expected %d", have, what, lo);
  return fail(c, NCC_ERR_INPUT, "has %d %s, expected %d to %d", have, what, lo,
              hi);
}

/* Inputs are well-formed: required ones present, valid dtypes, ranks and
 * dims, content consistent with the shape. */
static ncc_status check_inputs(ictx *c) {
  const ncc_op_info *info = &ncc_op_table[c->n->op];
  for (int i = 0; i < c->n->n_in; i++) {
    const ncc_tinfo *t = &c->in[i];
    bool required = i < info->min_in || info->max_in < 0;
    if (t->dtype == NCC_DT_UNDEF) {
      if (required) return fail(c, NCC_ERR_INPUT, "input %d is missing", i);
      continue;
    }
    if ((unsigned)t->dtype >= NCC_DT_COUNT)
      return fail(c, NCC_ERR_INPUT, "input %d has an invalid dtype", i);
    if (t->shape.rank < 0 || t->shape.rank > NCC_MAX_RANK)
      return fail(c, NCC_ERR_UNSUPPORTED, "input %d has rank %d (at most %d)",
                  i, t->shape.rank, NCC_MAX_RANK);
    for (int k = 0; k < t->shape.rank; k++)
      if (!is_static(t->shape.d[k]) && !ncc_dim_is_sym(t->shape.d[k]))
        return fail(c, NCC_ERR_INPUT, "input %d has invalid dim %lld", i,
                    (long long)t->shape.d[k]);
    if (t->content_len >= 0 &&
        t->content_len != content_slots(t->dtype, &t->shape))
      return fail(c, NCC_ERR_INTERNAL,
                  "input %d has content inconsistent with its shape", i);
  }
  return NCC_OK;
}

ncc_status ncc_infer_node(ncc_graph *g, const ncc_node *n, const ncc_tinfo *in,
                          ncc_tinfo *out) {
  if ((unsigned)n->op >= NCC_OP_COUNT)
    return ncc_error(NCC_ERR_INPUT, "node #%d has an invalid op", n->id);
  ictx c = {.g = g, .n = n, .in = in, .out = out};
  ncc_node_label(n, c.label, sizeof c.label);
  const ncc_op_info *info = &ncc_op_table[n->op];
  ncc_status st;
  if ((st = check_arity(&c, "inputs", n->n_in, info->min_in, info->max_in)) ||
      (st = check_arity(&c, "outputs", n->n_out, info->min_out, info->max_out)))
    return st;
  for (int k = 0; k < n->n_out; k++) {
    memset(&out[k], 0, sizeof out[k]);
    out[k].content_len = -1;
  }
  if ((st = check_inputs(&c))) return st;
  return dispatch(&c);
}

/* Declared dim vs inferred dim: the more specific one, or false when both
 * are static and differ. Between two symbols the inferred one wins unless it
 * is fresh (so re-running inference keeps the names it gave before). */
static bool merge_declared(const ncc_graph *g, int64_t decl, int64_t inf,
                           int64_t *r) {
  if (!is_static(decl) && !ncc_dim_is_sym(decl)) decl = inf; /* unknown */
  if (is_static(decl) && is_static(inf)) {
    *r = inf;
    return decl == inf;
  }
  if (is_static(decl)) *r = decl;
  else if (is_static(inf)) *r = inf;
  else *r = sym_is_fresh(g, inf) ? decl : inf;
  return true;
}

static ncc_status store_content(ncc_graph *g, ncc_value *v, const int64_t *c,
                                int len) {
  if (len < 0) {
    v->content = NULL;
    v->content_len = -1;
    return NCC_OK;
  }
  if (v->content && v->content_len == len &&
      memcmp(v->content, c, sizeof(int64_t) * (size_t)len) == 0)
    return NCC_OK;
  int64_t *p = ncc_arena_memdup(&g->arena, c, sizeof(int64_t) * (size_t)len);
  if (!p) return nomem();
  v->content = p;
  v->content_len = len;
  return NCC_OK;
}

/* Store an inferred output on its value, checking it against what the
 * value declares (ONNX value_info, text IR annotations). */
static ncc_status store_output(ncc_graph *g, const ncc_node *n, ncc_value *v,
                               const ncc_tinfo *t) {
  char label[192], a[256], b[256];
  if (v->dtype != NCC_DT_UNDEF && v->dtype != t->dtype)
    return ncc_error(NCC_ERR_INPUT,
                     "%s: output '%s' is declared %s but computes %s",
                     ncc_node_label(n, label, sizeof label), v->name,
                     ncc_dtype_name(v->dtype), ncc_dtype_name(t->dtype));
  ncc_shape s = t->shape;
  if (v->shape.rank > 0) {
    bool ok = v->shape.rank == s.rank;
    for (int i = 0; ok && i < s.rank; i++)
      ok = merge_declared(g, v->shape.d[i], t->shape.d[i], &s.d[i]);
    if (!ok)
      return ncc_error(NCC_ERR_INPUT,
                       "%s: output '%s' is declared with shape %s but has %s",
                       ncc_node_label(n, label, sizeof label), v->name,
                       fmt_shape(g, &v->shape, a, sizeof a),
                       fmt_shape(g, &t->shape, b, sizeof b));
  }
  v->dtype = t->dtype;
  v->shape = s;
  int len = t->content_len;
  if (len >= 0 && len != content_slots(t->dtype, &s)) len = -1;
  return store_content(g, v, t->content, len);
}

/* A constant's content, derived from its data. */
static ncc_status const_content(ncc_graph *g, ncc_value *v) {
  ncc_tinfo t;
  memset(&t, 0, sizeof t);
  t.dtype = v->dtype;
  t.shape = v->shape;
  t.data = v->data;
  t.content_len = -1;
  if (v->shape.rank >= 0 && v->shape.rank <= NCC_MAX_RANK)
    content_from_data(&t);
  return store_content(g, v, t.content, t.content_len);
}

/* The tinfos of a node's inputs; a value without a type is one used before
 * the node that computes it. */
static ncc_status node_inputs(const ncc_node *n, ncc_tinfo *ins) {
  for (int i = 0; i < n->n_in; i++) {
    const ncc_value *v = n->in[i];
    if (v && v->dtype == NCC_DT_UNDEF) {
      char label[192];
      if ((unsigned)n->op < NCC_OP_COUNT)
        ncc_node_label(n, label, sizeof label);
      else snprintf(label, sizeof label, "node #%d", n->id);
      return ncc_error(NCC_ERR_INPUT,
                       "%s: input %d ('%s') has no type (used before it is "
                       "computed?)",
                       label, i, v->name);
    }
    if (v) {
      ncc_tinfo_from_value(&ins[i], v);
    } else {
      memset(&ins[i], 0, sizeof ins[i]);
      ins[i].content_len = -1;
    }
  }
  return NCC_OK;
}

ncc_status ncc_infer_graph(ncc_graph *g) {
  ncc_status st = NCC_OK;
  for (int i = 0; i < g->n_values; i++)
    if (g->values[i]->kind == NCC_VAL_CONST &&
        (st = const_content(g, g->values[i])))
      return st;
  int cap_in = 0, cap_out = 0;
  ncc_tinfo *ins = NULL, *outs = NULL;
  for (int k = 0; k < g->n_nodes && !st; k++) {
    const ncc_node *n = g->nodes[k];
    if (n->n_in > cap_in || n->n_out > cap_out) {
      ncc_free(ins, 0);
      ncc_free(outs, 0);
      cap_in = n->n_in > cap_in ? n->n_in : cap_in;
      cap_out = n->n_out > cap_out ? n->n_out : cap_out;
      ins = ncc_calloc((size_t)cap_in + 1, sizeof *ins);
      outs = ncc_calloc((size_t)cap_out + 1, sizeof *outs);
      if (!ins || !outs) {
        st = NCC_ERR_NOMEM;
        break;
      }
    }
    st = node_inputs(n, ins);
    if (!st) st = ncc_infer_node(g, n, ins, outs);
    for (int i = 0; i < n->n_out && !st; i++)
      if (n->out[i]) st = store_output(g, n, n->out[i], &outs[i]);
  }
  ncc_free(ins, 0);
  ncc_free(outs, 0);
  return st;
}
