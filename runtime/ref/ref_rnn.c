/* runtime/ref/ref_rnn.c — reference kernels of RNN, GRU and LSTM.
 *
 * Written for reading, in double: every sequence of the batch runs on its
 * own, one direction after the other, one time step at a time, with the
 * ONNX equations spelled out (gate order: GRU z r h, LSTM i o f c; P holds
 * the peepholes i o f). Steps past a sequence's length (sequence_lens)
 * leave Y zero; Y_h / Y_c hold the state after the sequence's last step
 * (the reverse direction starts at its last valid step and ends at step 0).
 * `clip` bounds each activation's input to [-clip, clip]. Shapes were
 * checked by ir/shape_rnn.c; only data (sequence_lens) is checked here.
 */
#include <math.h>
#include <string.h>

#include "ref.h"

static double act(const ncc_rnn_act *f, double x) {
  double a = f->alpha, b = f->beta;
  switch (f->kind) {
  case NCC_RNN_RELU: return x > 0 ? x : 0;
  case NCC_RNN_TANH: return tanh(x);
  case NCC_RNN_SIGMOID: return 1.0 / (1.0 + exp(-x));
  case NCC_RNN_AFFINE: return a * x + b;
  case NCC_RNN_LEAKYRELU: return x >= 0 ? x : a * x;
  case NCC_RNN_THRESHOLDEDRELU: return x > a ? x : 0;
  case NCC_RNN_SCALEDTANH: return a * tanh(b * x);
  case NCC_RNN_HARDSIGMOID: return fmin(fmax(a * x + b, 0), 1);
  case NCC_RNN_ELU: return x >= 0 ? x : a * (exp(x) - 1);
  case NCC_RNN_SOFTSIGN: return x / (1 + fabs(x));
  case NCC_RNN_SOFTPLUS: return log1p(exp(x));
  }
  return x;
}

/* The weights of one node, read once into doubles. */
typedef struct rnn {
  ncc_rnn_attrs a;
  int64_t S, B, I, H, D, G;
  double *x, *w, *r, *bias, *p; /* bias: NULL = zeros; p: NULL = zeros */
  double *h0, *c0;              /* initial states [D][B][H]; NULL = zeros */
  const ncc_tensor *lens;
  /* scratch for one step */
  double *h, *c, *xw, *hr, *rh, *gate;
} rnn;

/* Tensor t as doubles, in an ncc_malloc'd array (NULL t: NULL). */
static ncc_status load(const ncc_tensor *t, double **out) {
  *out = NULL;
  if (!t) return NCC_OK;
  int64_t n = ncc_tensor_numel(t);
  double *d = ncc_malloc(sizeof(double) * (size_t)(n ? n : 1));
  if (!d) return NCC_ERR_NOMEM;
  for (int64_t i = 0; i < n; i++) d[i] = ncc_ref_get_f(t, i);
  *out = d;
  return NCC_OK;
}

/* Initial state tensor t ([D,B,H] or [B,D,H]) as doubles in [D][B][H]. */
static ncc_status load_state(const rnn *m, const ncc_tensor *t, double **out) {
  ncc_status st = load(t, out);
  if (st || !t || !m->a.batch_first) return st;
  double *s = ncc_malloc(sizeof(double) * (size_t)(m->D * m->B * m->H + 1));
  if (!s) return NCC_ERR_NOMEM;
  for (int64_t d = 0; d < m->D; d++)
    for (int64_t b = 0; b < m->B; b++)
      memcpy(&s[(d * m->B + b) * m->H], &(*out)[(b * m->D + d) * m->H],
             sizeof(double) * (size_t)m->H);
  ncc_free(*out, 0);
  *out = s;
  return NCC_OK;
}

static void rnn_free(rnn *m) {
  double *all[] = {m->x, m->w, m->r, m->bias, m->p, m->h0, m->c0,
                   m->h, m->c, m->xw, m->hr, m->rh, m->gate};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) ncc_free(all[i], 0);
}

/* Element offsets of X[t, b, :], Y[t, d, b, :] and Y_h[d, b, :]. */
static int64_t x_at(const rnn *m, int64_t t, int64_t b) {
  return (m->a.batch_first ? b * m->S + t : t * m->B + b) * m->I;
}
static int64_t y_at(const rnn *m, int64_t t, int64_t d, int64_t b) {
  return (m->a.batch_first ? (b * m->S + t) * m->D + d : (t * m->D + d) * m->B + b) *
         m->H;
}
static int64_t s_at(const rnn *m, int64_t d, int64_t b) {
  return (m->a.batch_first ? b * m->D + d : d * m->B + b) * m->H;
}

static double clipped(const rnn *m, double v) {
  if (!m->a.has_clip) return v;
  double c = m->a.clip;
  return v < -c ? -c : v > c ? c : v;
}

/* xw[g*H + j] = X[t,b,:] . W[d, g*H+j, :] + Wb[d, g*H+j] for every gate g,
 * and hr the same of h with R and Rb. */
static void project(const rnn *m, int64_t d, const double *xt) {
  int64_t GH = m->G * m->H;
  const double *w = m->w + d * GH * m->I, *r = m->r + d * GH * m->H;
  const double *wb = m->bias ? m->bias + d * 2 * GH : NULL;
  for (int64_t k = 0; k < GH; k++) {
    double sx = wb ? wb[k] : 0, sh = wb ? wb[GH + k] : 0;
    for (int64_t i = 0; i < m->I; i++) sx += xt[i] * w[k * m->I + i];
    for (int64_t i = 0; i < m->H; i++) sh += m->h[i] * r[k * m->H + i];
    m->xw[k] = sx;
    m->hr[k] = sh;
  }
}

/* One step of direction d: m->h (and m->c) become the new state. */
static void step(const rnn *m, int64_t d, const double *xt) {
  const ncc_rnn_act *f = &m->a.act[d * m->a.acts_per_dir];
  int64_t H = m->H;
  project(m, d, xt);
  double *h = m->h, *c = m->c, *xw = m->xw, *hr = m->hr;
  if (m->G == 1) { /* RNN: Ht = f(Xt W^T + Ht-1 R^T + Wb + Rb) */
    for (int64_t j = 0; j < H; j++) h[j] = act(&f[0], clipped(m, xw[j] + hr[j]));
    return;
  }
  if (m->G == 3) { /* GRU, gates z r h */
    double *z = m->gate, *rg = m->gate + H;
    for (int64_t j = 0; j < H; j++) {
      z[j] = act(&f[0], clipped(m, xw[j] + hr[j]));
      rg[j] = act(&f[0], clipped(m, xw[H + j] + hr[H + j]));
    }
    if (!m->a.linear_before_reset) {
      /* ht = g(Xt Wh^T + (rt (.) Ht-1) Rh^T + Rbh + Wbh) */
      const double *rh = m->r + (d * 3 + 2) * H * H;
      const double *rb = m->bias ? m->bias + d * 6 * H + 5 * H : NULL;
      for (int64_t j = 0; j < H; j++) {
        double s = rb ? rb[j] : 0;
        for (int64_t k = 0; k < H; k++) s += rg[k] * h[k] * rh[j * H + k];
        m->rh[j] = s;
      }
    } else { /* ht = g(Xt Wh^T + rt (.) (Ht-1 Rh^T + Rbh) + Wbh) */
      for (int64_t j = 0; j < H; j++) m->rh[j] = rg[j] * hr[2 * H + j];
    }
    for (int64_t j = 0; j < H; j++) {
      double hh = act(&f[1], clipped(m, xw[2 * H + j] + m->rh[j]));
      h[j] = (1 - z[j]) * hh + z[j] * h[j];
    }
    return;
  }
  /* LSTM, gates i o f c; peepholes P [i o f] */
  const double *p = m->p ? m->p + d * 3 * H : NULL;
  for (int64_t j = 0; j < H; j++) {
    double pi = p ? p[j] : 0, po = p ? p[H + j] : 0, pf = p ? p[2 * H + j] : 0;
    double ig = act(&f[0], clipped(m, xw[j] + hr[j] + pi * c[j]));
    double fg = m->a.input_forget
                    ? 1 - ig
                    : act(&f[0], clipped(m, xw[2 * H + j] + hr[2 * H + j] + pf * c[j]));
    double cg = act(&f[1], clipped(m, xw[3 * H + j] + hr[3 * H + j]));
    c[j] = fg * c[j] + ig * cg;
    double og = act(&f[0], clipped(m, xw[H + j] + hr[H + j] + po * c[j]));
    h[j] = og * act(&f[2], c[j]);
  }
}

static ncc_status rnn_run(const ncc_node *n, rnn *m, const ncc_tensor *const *in,
                          ncc_tensor *out) {
  bool lstm = m->G == 4;
  ncc_status st;
  int ni = n->n_in;
  if ((st = load(in[0], &m->x)) || (st = load(in[1], &m->w)) ||
      (st = load(in[2], &m->r)) || (st = load(ni > 3 ? in[3] : NULL, &m->bias)) ||
      (st = load_state(m, ni > 5 ? in[5] : NULL, &m->h0)) ||
      (st = load_state(m, lstm && ni > 6 ? in[6] : NULL, &m->c0)) ||
      (st = load(lstm && ni > 7 ? in[7] : NULL, &m->p)))
    return st;
  m->lens = ni > 4 ? in[4] : NULL;
  size_t h = (size_t)m->H + 1;
  m->h = ncc_malloc(sizeof(double) * h);
  m->c = ncc_calloc(h, sizeof(double));
  m->xw = ncc_malloc(sizeof(double) * h * (size_t)m->G);
  m->hr = ncc_malloc(sizeof(double) * h * (size_t)m->G);
  m->rh = ncc_malloc(sizeof(double) * h);
  m->gate = ncc_malloc(sizeof(double) * h * 2);
  if (!m->h || !m->c || !m->xw || !m->hr || !m->rh || !m->gate) return NCC_ERR_NOMEM;
  for (int64_t b = 0; b < m->B; b++) {
    int64_t len = m->S;
    if (m->lens) {
      len = ncc_ref_get_i(m->lens, b);
      if (len < 0 || len > m->S)
        return ncc_node_error(n, NCC_ERR_INPUT,
                              "sequence_lens[%lld] is %lld, outside [0, %lld]",
                              (long long)b, (long long)len, (long long)m->S);
    }
    for (int64_t d = 0; d < m->D; d++) {
      bool rev = m->a.reverse || d == 1;
      for (int64_t j = 0; j < m->H; j++) {
        m->h[j] = m->h0 ? m->h0[(d * m->B + b) * m->H + j] : 0;
        m->c[j] = m->c0 ? m->c0[(d * m->B + b) * m->H + j] : 0;
      }
      for (int64_t s = 0; s < len; s++) {
        int64_t t = rev ? len - 1 - s : s;
        step(m, d, m->x + x_at(m, t, b));
        if (n->n_out > 0 && out[0].data)
          for (int64_t j = 0; j < m->H; j++)
            ncc_ref_set_f(&out[0], y_at(m, t, d, b) + j, m->h[j]);
      }
      for (int64_t t = len; t < m->S && n->n_out > 0 && out[0].data; t++)
        for (int64_t j = 0; j < m->H; j++) ncc_ref_set_f(&out[0], y_at(m, t, d, b) + j, 0);
      for (int k = 1; k < n->n_out && k < 3; k++)
        if (out[k].data)
          for (int64_t j = 0; j < m->H; j++)
            ncc_ref_set_f(&out[k], s_at(m, d, b) + j, k == 1 ? m->h[j] : m->c[j]);
    }
  }
  return NCC_OK;
}

static ncc_status run_family(const ncc_node *n, const ncc_tensor *const *in,
                             ncc_tensor *out) {
  rnn m;
  memset(&m, 0, sizeof m);
  ncc_status st = ncc_attrs_rnn(n, &m.a);
  if (st) return st;
  const ncc_tensor *x = in[0];
  m.S = m.a.batch_first ? x->dims[1] : x->dims[0];
  m.B = m.a.batch_first ? x->dims[0] : x->dims[1];
  m.I = x->dims[2];
  m.H = in[2]->dims[2];
  m.D = m.a.num_dir;
  m.G = m.a.gates;
  st = rnn_run(n, &m, in, out);
  rnn_free(&m);
  return st;
}

ncc_status ncc_ref_RNN(const ncc_node *n, const ncc_tensor *const *in, ncc_tensor *out) {
  return run_family(n, in, out);
}

ncc_status ncc_ref_GRU(const ncc_node *n, const ncc_tensor *const *in, ncc_tensor *out) {
  return run_family(n, in, out);
}

ncc_status ncc_ref_LSTM(const ncc_node *n, const ncc_tensor *const *in, ncc_tensor *out) {
  return run_family(n, in, out);
}
