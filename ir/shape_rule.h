/* ir/shape_rule.h — private to shape inference: the context a rule runs
 * in, the symbolic-dimension engine and the input/attribute readers
 * (ir/shape_dims.c), and one rule per family (ir/shape_<family>.c).
 *
 * Which rule infers an op is the last column of its ir/ops.def row; ir/shape.c
 * expands that column into its dispatch table. A rule checks dtypes, ranks
 * and attributes, sets every output's dtype and shape and, where it can, the
 * content of small integer outputs.
 */
#ifndef NCC_SHAPE_RULE_H
#define NCC_SHAPE_RULE_H

#include <string.h>

#include "shape.h"

typedef struct ictx {
  ncc_graph *g; /* NULL at run time: no fresh symbols */
  const ncc_node *n;
  const ncc_tinfo *in; /* n->n_in entries */
  ncc_tinfo *out;      /* n->n_out entries */
  char label[192];     /* "" until ncc_si_label: formatting it for every
                          node of every run cost more than some kernels */
} ictx;

/* Product of dims kept as (static part, list of symbols), so that symbols
 * can cancel between two products (Reshape's -1, Flatten). */
typedef struct dprod {
  int64_t stat;
  int n;
  int64_t sym[NCC_MAX_RANK];
  bool ovf;
} dprod;

/* dtype sets for ncc_si_check_dtype */
#define DT(x) (1u << NCC_DT_##x)
#define DT_FLOAT DT(F32)
#define DT_ARITH (DT(F32) | DT(I32) | DT(I64))
#define DT_INDEX (DT(I32) | DT(I64))
#define DT_ANY (((1u << NCC_DT_COUNT) - 1) & ~DT(UNDEF)) /* every dtype */

static inline bool is_static(int64_t d) { return d >= 0; }

static inline const ncc_tinfo *IN(ictx *c, int i) { return &c->in[i]; }

static inline bool has_in(ictx *c, int i) {
  return i < c->n->n_in && c->in[i].dtype != NCC_DT_UNDEF;
}

static inline int rank_of(ictx *c, int i) { return c->in[i].shape.rank; }

static inline void set_out(ictx *c, int k, ncc_dtype dt, const ncc_shape *s) {
  c->out[k].dtype = dt;
  c->out[k].shape = *s;
}

static inline void set_content(ncc_tinfo *t, const int64_t *v, int n) {
  memcpy(t->content, v, sizeof(int64_t) * (size_t)n);
  t->content_len = n;
}

/* "node 'x' (Op): message" as an ncc_error. */
__attribute__((format(printf, 3, 4))) ncc_status
ncc_si_fail(ictx *c, ncc_status st, const char *fmt, ...);
ncc_status ncc_si_nomem(void);
/* "node 'x' (Op)", formatted on first use. */
const char *ncc_si_label(ictx *c);
const char *ncc_si_fmt_shape(const ncc_graph *g, const ncc_shape *s, char *buf,
                             size_t cap);
bool ncc_si_sym_is_fresh(const ncc_graph *g, int64_t d);
bool ncc_si_merge_dim(const ncc_graph *g, int64_t a, int64_t b, int64_t *r);
ncc_status ncc_si_fresh_dim(ictx *c, int64_t *d);
void ncc_si_dprod_init(dprod *p);
void ncc_si_dprod_mul(dprod *p, int64_t d);
void ncc_si_dprod_cancel(dprod *a, dprod *b);
ncc_status ncc_si_dprod_dim(ictx *c, const dprod *p, int64_t *d);
bool ncc_si_read_int(ncc_dtype dt, const void *data, int64_t i, int64_t *v);
bool ncc_si_read_f64(ncc_dtype dt, const void *data, int64_t i, double *v);
int ncc_si_content_slots(ncc_dtype dt, const ncc_shape *s);
void ncc_si_content_from_data(ncc_tinfo *t);
bool ncc_si_wrap_to(ncc_dtype dt, int64_t v, int64_t *r);
int64_t ncc_si_bcast_index(const ncc_shape *out, const ncc_shape *in,
                           int64_t i);
ncc_status ncc_si_check_dtype(ictx *c, int i, unsigned mask);
ncc_status ncc_si_check_index(ictx *c, int i);
ncc_status ncc_si_check_same_dtype(ictx *c, int i, int j);
ncc_status ncc_si_check_rank(ictx *c, int i, int r);
ncc_status ncc_si_check_min_rank(ictx *c, int i, int r);
ncc_status ncc_si_check_out_rank(ictx *c, int r);
ncc_status ncc_si_norm_axis(ictx *c, const char *what, int64_t axis, int r,
                            bool inclusive, int *out);
ncc_status ncc_si_input_ints(ictx *c, int i, int64_t *vals, int cap, int *n,
                             bool *known);
ncc_status ncc_si_input_axes(ictx *c, int i, int r, int *axes, int *n,
                             bool *known);
ncc_status ncc_si_vec_len(ictx *c, int i, int *len);
void ncc_si_pass_content(ictx *c, int i, int k);
ncc_status ncc_si_check_unidir(ictx *c, int i, const ncc_shape *to);
void ncc_si_unravel(const ncc_shape *s, int64_t i, int64_t *coord);
int64_t ncc_si_ravel(const ncc_shape *s, const int64_t *coord);
ncc_status ncc_si_shape_input(ictx *c, int i, ncc_shape *s);

/* The rules, named by the last column of ir/ops.def. */
#define NCC_OP(id, nm, mi, ma, mo, mao, fl, rule)                              \
  ncc_status ncc_rule_##rule(ictx *c);
#include "ops.def"
#undef NCC_OP

/* ---- dtype sets ----
 * Named after ONNX's type constraints; an op takes a set only where its
 * reference kernel computes every member exactly (docs/IR-CONVENTIONS.md
 * ## Dtypes): integers with wrap-around in (u)int64, floats in double rounded
 * once to the dtype. DT_ANY (above) is every dtype, for byte movers. */
#define DT_SINT (DT(I8) | DT(I16) | DT(I32) | DT(I64))
#define DT_UINT (DT(U8) | DT(U16) | DT(U32) | DT(U64))
#define DT_INTS (DT_SINT | DT_UINT)
#define DT_FLOATS (DT(F32) | DT(F16) | DT(BF16) | DT(F64))
#define DT_NUMERIC (DT_INTS | DT_FLOATS)
#define DT_SIGNED (DT_SINT | DT_FLOATS) /* Neg, Relu: no unsigned */
/* the floats the op families of issue 12 were checked on (bf16 reads and
 * writes through the same accessors, but no node case covers it yet) */
#define DT_F16_F32_F64 (DT(F16) | DT(F32) | DT(F64))

#endif /* NCC_SHAPE_RULE_H */
