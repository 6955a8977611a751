/* ir/shape_dims.c — the engine under every shape rule: diagnostics, the
 * symbolic dims (static >= 0 or a symbol; fresh "unk__K" symbols when a
 * graph is given), products of dims that cancel symbols (Reshape, Flatten),
 * numpy broadcasting, raw data and "content" (the value of a small integer
 * tensor, whose elements may be symbolic dims), and the checked readers of
 * inputs and attributes the rules use (ir/shape_rule.h).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "f16.h"
#include "shape_rule.h"

/* ------------------------------------------------------------------------ */
/* context and diagnostics                                                   */


/* Report an error about the current node: "node 'x' (Op): message". */
__attribute__((format(printf, 3, 4))) ncc_status
ncc_si_fail(ictx *c, ncc_status st, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return ncc_error(st, "%s: %s", ncc_si_label(c), msg);
}

const char *ncc_si_label(ictx *c) {
  if (!c->label[0]) ncc_node_label(c->n, c->label, sizeof c->label);
  return c->label;
}

ncc_status ncc_si_nomem(void) {
  return ncc_error(NCC_ERR_NOMEM, "out of memory");
}

/* Append printf output to buf (of capacity cap) at *len, never overflowing. */
__attribute__((format(printf, 4, 5))) void
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
const char *ncc_si_fmt_shape(const ncc_graph *g, const ncc_shape *s, char *buf,
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


/* Fresh symbols are the "unk__K" ones minted by inference; named ones come
 * from the model (N, batch, ...) and are preferred when two symbols meet. */
bool ncc_si_sym_is_fresh(const ncc_graph *g, int64_t d) {
  if (!g || !ncc_dim_is_sym(d)) return false;
  return strncmp(ncc_graph_sym_name(g, ncc_dim_sym_id(d)), "unk__", 5) == 0;
}

static int64_t pick_sym(const ncc_graph *g, int64_t a, int64_t b) {
  if (ncc_si_sym_is_fresh(g, a) && !ncc_si_sym_is_fresh(g, b)) return b;
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
bool ncc_si_merge_dim(const ncc_graph *g, int64_t a, int64_t b, int64_t *r) {
  bool sa = ncc_dim_is_sym(a), sb = ncc_dim_is_sym(b);
  if (a == b) *r = a;
  else if (sa && sb) *r = pick_sym(g, a, b);
  else if (sa) *r = b;
  else if (sb) *r = a;
  else return false;
  return true;
}

/* A fresh symbol for a dim that needs data to be known. At run time (no
 * graph) everything should be concrete, except the outputs of an
 * NCC_OPF_DYNAMIC op, which only its kernel can size: those dims are
 * NCC_DIM_DATA until the kernel allocates the output. */
ncc_status ncc_si_fresh_dim(ictx *c, int64_t *d) {
  if (!c->g && (ncc_op_table[c->n->op].flags & NCC_OPF_DYNAMIC)) {
    *d = NCC_DIM_DATA;
    return NCC_OK;
  }
  if (!c->g)
    return ncc_si_fail(c, NCC_ERR_INPUT,
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
          ncc_si_fmt_shape(g, a, sa, sizeof sa), ncc_si_fmt_shape(g, b, sb, sizeof sb), i,
          (long long)da, (long long)db);
    }
  }
  *out = o;
  return NCC_OK;
}


void ncc_si_dprod_init(dprod *p) {
  p->stat = 1;
  p->n = 0;
  p->ovf = false;
}

void ncc_si_dprod_mul(dprod *p, int64_t d) {
  if (ncc_dim_is_sym(d)) {
    if (p->n < NCC_MAX_RANK) p->sym[p->n++] = d;
  } else if (__builtin_mul_overflow(p->stat, d, &p->stat)) {
    p->ovf = true;
  }
}

/* Remove symbols common to both products. */
void ncc_si_dprod_cancel(dprod *a, dprod *b) {
  for (int i = 0; i < a->n; i++)
    for (int j = 0; j < b->n; j++)
      if (a->sym[i] == b->sym[j]) {
        a->sym[i--] = a->sym[--a->n];
        b->sym[j] = b->sym[--b->n];
        break;
      }
}

/* The product as one dim: static, a single symbol, or a fresh symbol. */
ncc_status ncc_si_dprod_dim(ictx *c, const dprod *p, int64_t *d) {
  if (p->ovf) return ncc_si_fail(c, NCC_ERR_INPUT, "dim product overflows");
  if (p->n == 0 || p->stat == 0) *d = p->stat;
  else if (p->n == 1 && p->stat == 1) *d = p->sym[0];
  else return ncc_si_fresh_dim(c, d);
  return NCC_OK;
}

/* ------------------------------------------------------------------------ */
/* dtypes, raw data and content                                              */


/* Integer dtypes whose every value is an int64 (so not u64, whose values
 * above 2^63 content could not tell from negative ones). */
static bool is_intlike(ncc_dtype dt) {
  return dt == NCC_DT_I64 || dt == NCC_DT_I32 || dt == NCC_DT_I8 ||
         dt == NCC_DT_U8 || dt == NCC_DT_BOOL || dt == NCC_DT_I16 ||
         dt == NCC_DT_U16 || dt == NCC_DT_U32;
}

/* Element i of raw data as int64 (integer dtypes only). */
bool ncc_si_read_int(ncc_dtype dt, const void *data, int64_t i, int64_t *v) {
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
  case NCC_DT_I16: {
    int16_t x;
    memcpy(&x, p + i * 2, 2);
    *v = x;
    return true;
  }
  case NCC_DT_U16: {
    uint16_t x;
    memcpy(&x, p + i * 2, 2);
    *v = x;
    return true;
  }
  case NCC_DT_U32: {
    uint32_t x;
    memcpy(&x, p + i * 4, 4);
    *v = x;
    return true;
  }
  case NCC_DT_U64: { /* only values that are int64 values too */
    uint64_t x;
    memcpy(&x, p + i * 8, 8);
    if (x > INT64_MAX) return false;
    *v = (int64_t)x;
    return true;
  }
  default: return false;
  }
}

/* Element i of raw data as double (f32, f64 and integer dtypes). */
bool ncc_si_read_f64(ncc_dtype dt, const void *data, int64_t i, double *v) {
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
  if (dt == NCC_DT_U64) {
    uint64_t u;
    memcpy(&u, p + i * 8, 8);
    *v = (double)u;
    return true;
  }
  if (dt == NCC_DT_F16 || dt == NCC_DT_BF16) {
    uint16_t h;
    memcpy(&h, p + i * 2, 2);
    *v = dt == NCC_DT_F16 ? ncc_f16_to_f64(h) : ncc_bf16_to_f64(h);
    return true;
  }
  int64_t x;
  if (!ncc_si_read_int(dt, data, i, &x)) return false;
  *v = (double)x;
  return true;
}

/* Number of content slots of a tensor, or -1 when it cannot carry content. */
int ncc_si_content_slots(ncc_dtype dt, const ncc_shape *s) {
  if (!is_intlike(dt)) return -1;
  int64_t n = ncc_shape_numel(s);
  return n >= 0 && n <= NCC_CONTENT_MAX ? (int)n : -1;
}

void ncc_si_content_from_data(ncc_tinfo *t) {
  int n = ncc_si_content_slots(t->dtype, &t->shape);
  if (n < 0 || !t->data) return;
  for (int i = 0; i < n; i++) ncc_si_read_int(t->dtype, t->data, i, &t->content[i]);
  t->content_len = n;
}

void ncc_tinfo_from_value(ncc_tinfo *t, const ncc_value *v) {
  memset(t, 0, sizeof *t);
  t->content_len = -1;
  t->dtype = v->dtype;
  t->shape = v->shape;
  if (v->kind == NCC_VAL_CONST) t->data = v->data;
  if (v->content && v->content_len >= 0 && v->content_len <= NCC_CONTENT_MAX &&
      v->content_len == ncc_si_content_slots(v->dtype, &v->shape)) {
    memcpy(t->content, v->content, sizeof(int64_t) * (size_t)v->content_len);
    t->content_len = v->content_len;
  } else {
    ncc_si_content_from_data(t);
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
  ncc_si_content_from_data(t);
}

/* A value converted to dtype dt as a cast would; false when unknown (a
 * symbol that cannot survive the conversion). */
bool ncc_si_wrap_to(ncc_dtype dt, int64_t v, int64_t *r) {
  if (ncc_dim_is_sym(v)) {
    if (dt != NCC_DT_I64 && dt != NCC_DT_I32) return false;
    *r = v;
    return true;
  }
  switch (dt) {
  case NCC_DT_I32: *r = (int32_t)(uint32_t)(uint64_t)v; break;
  case NCC_DT_I8: *r = (int8_t)(uint8_t)(uint64_t)v; break;
  case NCC_DT_U8: *r = (uint8_t)(uint64_t)v; break;
  case NCC_DT_I16: *r = (int16_t)(uint16_t)(uint64_t)v; break;
  case NCC_DT_U16: *r = (uint16_t)(uint64_t)v; break;
  case NCC_DT_U32: *r = (uint32_t)(uint64_t)v; break;
  case NCC_DT_BOOL: *r = v != 0; break;
  default: *r = v; break;
  }
  return true;
}

/* Flat index into `in` for flat index i of `out`, numpy-broadcast (both
 * shapes static). */
int64_t ncc_si_bcast_index(const ncc_shape *out, const ncc_shape *in,
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




ncc_status ncc_si_check_dtype(ictx *c, int i, unsigned mask) {
  ncc_dtype dt = c->in[i].dtype;
  if (!(mask & (1u << dt)))
    return ncc_si_fail(c, NCC_ERR_UNSUPPORTED, "dtype %s is not supported (input %d)",
                ncc_dtype_name(dt), i);
  return NCC_OK;
}

/* Index-like inputs (shapes, axes, indices, pads) must be integers: a type
 * error of the model, not a missing feature of ncc. */
ncc_status ncc_si_check_index(ictx *c, int i) {
  ncc_dtype dt = c->in[i].dtype;
  if (dt != NCC_DT_I64 && dt != NCC_DT_I32)
    return ncc_si_fail(c, NCC_ERR_INPUT, "input %d has dtype %s, expected i64", i,
                ncc_dtype_name(dt));
  return NCC_OK;
}

ncc_status ncc_si_check_same_dtype(ictx *c, int i, int j) {
  if (c->in[i].dtype != c->in[j].dtype)
    return ncc_si_fail(
        c, NCC_ERR_INPUT, "input %d has dtype %s, expected %s (as input %d)", j,
        ncc_dtype_name(c->in[j].dtype), ncc_dtype_name(c->in[i].dtype), i);
  return NCC_OK;
}

ncc_status ncc_si_check_rank(ictx *c, int i, int r) {
  if (rank_of(c, i) != r)
    return ncc_si_fail(c, NCC_ERR_INPUT, "input %d has %d dims, expected %d", i,
                rank_of(c, i), r);
  return NCC_OK;
}

ncc_status ncc_si_check_min_rank(ictx *c, int i, int r) {
  if (rank_of(c, i) < r)
    return ncc_si_fail(c, NCC_ERR_INPUT, "input %d has %d dims, expected at least %d",
                i, rank_of(c, i), r);
  return NCC_OK;
}

ncc_status ncc_si_check_out_rank(ictx *c, int r) {
  if (r > NCC_MAX_RANK)
    return ncc_si_fail(c, NCC_ERR_UNSUPPORTED, "output rank %d exceeds %d", r,
                NCC_MAX_RANK);
  return NCC_OK;
}

/* Normalize an axis in [-r, r-1] (or [-r, r] when `inclusive`). */
ncc_status ncc_si_norm_axis(ictx *c, const char *what, int64_t axis, int r,
                            bool inclusive, int *out) {
  int64_t hi = inclusive ? r : r - 1;
  *out = 0;
  if (axis < -(int64_t)r || axis > hi)
    return ncc_si_fail(c, NCC_ERR_INPUT, "%s %lld is out of range for rank %d", what,
                (long long)axis, r);
  *out = (int)(axis < 0 ? axis + r : axis);
  return NCC_OK;
}

/* Values of a small integer input, from content or raw data. Returns false
 * when unknown. At most `cap` values; more is an error. */
ncc_status ncc_si_input_ints(ictx *c, int i, int64_t *vals, int cap, int *n,
                             bool *known) {
  const ncc_tinfo *t = IN(c, i);
  *known = false;
  *n = 0;
  int64_t numel = ncc_shape_numel(&t->shape);
  if (numel > cap)
    return ncc_si_fail(c, NCC_ERR_UNSUPPORTED,
                "input %d has %lld elements (at most %d)", i, (long long)numel,
                cap);
  if (t->content_len >= 0 && t->content_len == numel) {
    memcpy(vals, t->content, sizeof(int64_t) * (size_t)numel);
  } else if (t->data && numel >= 0) {
    for (int64_t k = 0; k < numel; k++)
      if (!ncc_si_read_int(t->dtype, t->data, k, &vals[k])) return NCC_OK;
  } else {
    return NCC_OK;
  }
  *n = (int)numel;
  *known = true;
  return NCC_OK;
}

/* Static axes (no symbols) from input i, normalized to [0, r), distinct. */
ncc_status ncc_si_input_axes(ictx *c, int i, int r, int *axes, int *n,
                             bool *known) {
  int64_t v[NCC_CONTENT_MAX];
  ncc_status st = ncc_si_input_ints(c, i, v, NCC_CONTENT_MAX, n, known);
  if (st || !*known) return st;
  bool seen[NCC_MAX_RANK + 1] = {false};
  for (int k = 0; k < *n; k++) {
    if (ncc_dim_is_sym(v[k]))
      return ncc_si_fail(c, NCC_ERR_INPUT, "axes (input %d) must be static", i);
    st = ncc_si_norm_axis(c, "axis", v[k], r, false, &axes[k]);
    if (st) return st;
    if (seen[axes[k]])
      return ncc_si_fail(c, NCC_ERR_INPUT, "axis %lld is repeated", (long long)v[k]);
    seen[axes[k]] = true;
  }
  return NCC_OK;
}

/* The static length of a 1-D input (shape vectors, axes lists). */
ncc_status ncc_si_vec_len(ictx *c, int i, int *len) {
  *len = 0;
  ncc_status st = ncc_si_check_rank(c, i, 1);
  if (st) return st;
  int64_t d = IN(c, i)->shape.d[0];
  if (!is_static(d))
    return ncc_si_fail(
        c, NCC_ERR_UNSUPPORTED,
        "input %d has a symbolic length: the output rank depends on data", i);
  if (d > NCC_CONTENT_MAX)
    return ncc_si_fail(c, NCC_ERR_UNSUPPORTED,
                "input %d has %lld elements (at most %d)", i, (long long)d,
                NCC_CONTENT_MAX);
  *len = (int)d;
  return NCC_OK;
}



/* Output k keeps input i's content when the element order is unchanged
 * (Identity, Reshape, Flatten, Squeeze, Unsqueeze). */
void ncc_si_pass_content(ictx *c, int i, int k) {
  const ncc_tinfo *t = IN(c, i);
  int n = ncc_si_content_slots(c->out[k].dtype, &c->out[k].shape);
  if (t->content_len >= 0 && t->content_len == n)
    set_content(&c->out[k], t->content, n);
}


/* Input i must broadcast to `to` without growing (Gemm's C, norm scales). */
ncc_status ncc_si_check_unidir(ictx *c, int i, const ncc_shape *to) {
  const ncc_shape *s = &IN(c, i)->shape;
  bool ok = s->rank <= to->rank;
  for (int k = 0; ok && k < s->rank; k++) {
    int64_t d = s->d[s->rank - 1 - k], t = to->d[to->rank - 1 - k], r;
    ok = d == 1 || ncc_si_merge_dim(c->g, d, t, &r);
  }
  if (!ok) {
    char a[256], b[256];
    return ncc_si_fail(
        c, NCC_ERR_INPUT, "input %d of shape %s does not broadcast to %s", i,
        ncc_si_fmt_shape(c->g, s, a, sizeof a), ncc_si_fmt_shape(c->g, to, b, sizeof b));
  }
  return NCC_OK;
}

void ncc_si_unravel(const ncc_shape *s, int64_t i, int64_t *coord) {
  for (int k = s->rank - 1; k >= 0; k--) {
    coord[k] = s->d[k] ? i % s->d[k] : 0;
    i = s->d[k] ? i / s->d[k] : 0;
  }
}

int64_t ncc_si_ravel(const ncc_shape *s, const int64_t *coord) {
  int64_t i = 0;
  for (int k = 0; k < s->rank; k++) i = i * s->d[k] + coord[k];
  return i;
}

/* Read a 1-D shape input (Expand, ConstantOfShape) into s: static entries
 * must be >= 0; unknown content gives fresh dims. */
ncc_status ncc_si_shape_input(ictx *c, int i, ncc_shape *s) {
  ncc_status st;
  int len, n;
  bool known;
  int64_t v[NCC_CONTENT_MAX];
  if ((st = ncc_si_check_index(c, i)) || (st = ncc_si_vec_len(c, i, &len)) ||
      (st = ncc_si_check_out_rank(c, len)) ||
      (st = ncc_si_input_ints(c, i, v, NCC_CONTENT_MAX, &n, &known)))
    return st;
  s->rank = len;
  for (int k = 0; k < len; k++) {
    if (!known) {
      if ((st = ncc_si_fresh_dim(c, &s->d[k]))) return st;
    } else if (!ncc_dim_is_sym(v[k]) && v[k] < 0) {
      return ncc_si_fail(c, NCC_ERR_INPUT, "shape entry %d is %lld", k,
                  (long long)v[k]);
    } else {
      s->d[k] = v[k];
    }
  }
  return NCC_OK;
}
