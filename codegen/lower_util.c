/* codegen/lower_util.c — small helpers every kind of lowering uses: dims
 * as expressions, the end of a lowering, layout and window checks, operand
 * strides over a view of the output. */
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "../ir/index_data.h"
#include "../ir/options.h"
#include "lower.h"

typedef struct lower_part {
  ncc_lower_part_fn fn;
  void *ctx;
  int64_t lo, hi;
} lower_part;

static void *run_part(void *arg) {
  lower_part *p = arg;
  p->fn(p->ctx, p->lo, p->hi);
  return NULL;
}

void ncc_lower_parallel(int64_t n, int64_t grain, ncc_lower_part_fn fn, void *ctx) {
  enum { MAX_PARTS = 64 }; /* ncc_opts_compile_threads' ceiling */
  int64_t parts = grain > 0 ? n / grain : n;
  if (parts > ncc_opts_compile_threads()) parts = ncc_opts_compile_threads();
  if (parts <= 1) {
    if (n > 0) fn(ctx, 0, n);
    return;
  }
  lower_part part[MAX_PARTS];
  pthread_t tid[MAX_PARTS];
  bool started[MAX_PARTS] = {false};
  for (int64_t i = 0; i < parts; i++)
    part[i] = (lower_part){fn, ctx, n * i / parts, n * (i + 1) / parts};
  for (int64_t i = 1; i < parts; i++)
    started[i] = pthread_create(&tid[i], NULL, run_part, &part[i]) == 0;
  run_part(&part[0]);
  for (int64_t i = 1; i < parts; i++) {
    if (started[i]) pthread_join(tid[i], NULL);
    else run_part(&part[i]); /* no thread: the caller does it */
  }
}

kir_expr *ncc_lower_dim(kir_kernel *k, int64_t d) {
  return ncc_dim_is_sym(d) ? kir_sym(k, ncc_dim_sym_id(d)) : kir_const_i(k, d);
}

ncc_status ncc_lower_finish(kir_kernel *k, ncc_status st, const char *what,
                            kir_kernel **out) {
  if (st == NCC_OK && !kir_ok(k))
    st = ncc_error(NCC_ERR_NOMEM, "out of memory lowering %s", what);
  if (st != NCC_OK) {
    kir_kernel_free(k);
    return st;
  }
  *out = k;
  return NCC_OK;
}

bool ncc_lower_plain(const ncc_node *n) {
  for (int i = 0; i < n->n_in; i++)
    if (n->in[i] && n->in[i]->layout.kind != NCC_LAYOUT_PLAIN) return false;
  for (int i = 0; i < n->n_out; i++)
    if (n->out[i] && n->out[i]->layout.kind != NCC_LAYOUT_PLAIN) return false;
  return true;
}

bool ncc_lower_window(const ncc_node *n, ncc_window *w) {
  const ncc_value *x = n->n_in > 0 ? n->in[0] : NULL, *wt = n->n_in > 1 ? n->in[1] : NULL;
  bool conv = n->op == NCC_OP_CONV;
  if (!x || x->shape.rank != 4 || (conv && (!wt || wt->shape.rank != 4)))
    return false;
  if (ncc_window_decode(n, 2, conv ? wt->shape.d + 2 : NULL, w)) return false;
  return w->auto_pad == NCC_AUTO_PAD_NOTSET || w->auto_pad == NCC_AUTO_PAD_VALID;
}

bool ncc_lower_view_strides(kir_kernel *k, const ncc_value *v,
                            const ncc_shape *s, const int *first, int n_view,
                            kir_expr **stride) {
  int r = s->rank, vr = v->shape.rank;
  if (vr > r) return false;
  /* the operand's own row-major strides, aligned to s */
  kir_expr *own[NCC_MAX_RANK];
  kir_expr *acc = kir_const_i(k, 1);
  for (int j = r - 1; j >= 0; j--) {
    int jj = j - (r - vr);
    own[j] = acc;
    if (jj >= 0) acc = kir_mul(k, acc, ncc_lower_dim(k, v->shape.d[jj]));
  }
  for (int g = 0; g < n_view; g++) {
    bool full = true, bcast = true;
    for (int j = first[g]; j < first[g + 1]; j++) {
      int jj = j - (r - vr);
      int64_t d = jj < 0 ? 1 : v->shape.d[jj];
      if (d != s->d[j]) full = false;
      if (d != 1) bcast = false;
    }
    if (!full && !bcast) return false;
    /* a group all of size 1 is both: either stride works (coord is 0) */
    stride[g] = full && first[g] < first[g + 1] ? own[first[g + 1] - 1]
                                                : kir_const_i(k, 0);
  }
  return true;
}

int ncc_lower_data_buf(kir_kernel *k, const char *name, ncc_dtype dt, void *data,
                       size_t bytes) {
  int b = kir_buf_add(k, name, dt, false);
  k->bufs[b].bind = KIR_BIND_DATA;
  k->bufs[b].data = data;
  k->bufs[b].data_bytes = bytes;
  k->bufs[b].owned = data;
  return b;
}

kir_expr *ncc_lower_s8_to_u8(kir_kernel *k, kir_expr *w) {
  /* w ^ m = w + m - 2 (w & m): the kernel IR has no xor */
  kir_expr *m = kir_cast(k, NCC_DT_I32, kir_const_i(k, (int64_t)(int32_t)0x80808080u));
  return kir_bin(k, KIR_SUB, kir_bin(k, KIR_ADD, w, m),
                 kir_bin(k, KIR_MUL, kir_bin(k, KIR_AND, w, m),
                         kir_cast(k, NCC_DT_I32, kir_const_i(k, 2))));
}

bool ncc_lower_qparam(const ncc_value *v, int64_t n) {
  if (!v || v->kind != NCC_VAL_CONST || !v->data || !ncc_shape_is_static(&v->shape) ||
      v->shape.rank > 1)
    return false;
  int64_t e = ncc_shape_numel(&v->shape);
  return e == 1 || (n > 0 && e == n);
}

double ncc_lower_const_at(const ncc_value *v, int64_t i) {
  if (!v) return 0;
  return ncc_idx_read(v->dtype, v->data, ncc_shape_numel(&v->shape) == 1 ? 0 : i);
}

float ncc_lower_requant_mult(const ncc_value *sa, const ncc_value *sb, const ncc_value *sy,
                             int64_t j) {
  float m = (float)ncc_lower_const_at(sa, 0) * (float)ncc_lower_const_at(sb, j);
  return m / (float)ncc_lower_const_at(sy, 0);
}

bool ncc_lower_requant_finite(const ncc_value *sa, const ncc_value *sb, const ncc_value *sy,
                              int64_t n) {
  const ncc_value *s[3] = {sa, sb, sy};
  for (int i = 0; i < 3; i++)
    if (s[i]->dtype != NCC_DT_F32 || !s[i]->data) return false;
  for (int64_t j = 0; j < n; j++)
    if (!isfinite(ncc_lower_requant_mult(sa, sb, sy, j))) return false;
  return true;
}

kir_expr *ncc_lower_requant(kir_kernel *k, kir_expr *acc, kir_expr *mult, double zy,
                            ncc_dtype ydt) {
  double lo = ydt == NCC_DT_U8 ? 0 : -128, hi = ydt == NCC_DT_U8 ? 255 : 127;
  int w = acc->lanes; /* explicit vectors (a register tile) or scalar code */
#define CF(v) kir_splat(k, kir_const_f(k, NCC_DT_F32, (v)), w)
  kir_expr *f = kir_bin(k, KIR_MUL, kir_cast(k, NCC_DT_F32, acc), mult);
  f = kir_bin(k, KIR_ADD, kir_un(k, KIR_ROUND, f), CF(zy));
  f = kir_bin(k, KIR_MIN, kir_bin(k, KIR_MAX, f, CF(lo)), CF(hi));
#undef CF
  return kir_cast(k, ydt, f);
}

bool ncc_lower_bf16_exact(const float *v, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    uint32_t u;
    memcpy(&u, &v[i], sizeof u);
    if (u & 0xffffu) return false;
  }
  return true;
}

/* Output-channel blocks x pixels per pass: nb * R k-lane accumulators,
 * the nb weight vectors and a broadcast must fit the vector registers (32
 * with AVX-512, 16 with AVX2 or SSE: an unfitting tile spills in its
 * innermost loop); among the tiles that fit, the one with the most FMAs
 * per load (nb * R FMAs for nb weight loads and R broadcasts). 16
 * registers: 3 x 4 (or 2 x 6 where the blocks do not divide by 3), where
 * 4 x 3 needed 17 and spilled (a 64->64 3x3 conv on AVX2 ran 1.4-2.5x
 * slower); 32: 4 x 6. */
void ncc_lower_conv_tile(int64_t ocb, int kb, int vw, int64_t P, int *nb, int *R) {
  int regs = vw > 1 ? (kb + vw - 1) / vw : 1;
  int nregs = vw >= 16 ? 32 : 16;
  if (vw <= 1) { /* scalar code: 8 accumulators */
    *nb = 1;
    for (int d = NCC_CONV_NB_MAX; d > 1; d--)
      if (ocb % d == 0) {
        *nb = d;
        break;
      }
    *R = 8 / *nb > P ? (int)P : 8 / *nb;
    return;
  }
  double best = -1;
  *nb = 1;
  *R = 1;
  for (int d = 1; d <= NCC_CONV_NB_MAX; d++) {
    if (ocb % d) continue;
    int r = (nregs - 1 - d * regs) / (d * regs);
    if (r > NCC_CONV_R_MAX) r = NCC_CONV_R_MAX;
    if (r > P) r = (int)P;
    if (r < 1) continue;
    double score = (double)(d * r) / (double)(d + r);
    if (score > best) {
      best = score;
      *nb = d;
      *R = r;
    }
  }
}

kir_expr *ncc_lower_inside(kir_kernel *k, kir_expr *pos, int64_t size) {
  return kir_bin(k, KIR_AND, kir_bin(k, KIR_GE, pos, kir_const_i(k, 0)),
                 kir_bin(k, KIR_LT, pos, kir_const_i(k, size)));
}
