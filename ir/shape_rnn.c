/* ir/shape_rnn.c — the recurrent rule: RNN, GRU and LSTM.
 *
 * The three share their signature: X, W, R, B, sequence_lens, initial_h
 * (and LSTM's initial_c, P), outputs Y, Y_h (and LSTM's Y_c), with G gates
 * (RNN 1, GRU 3, LSTM 4) stacked in W's and R's rows. Layout 0 puts time
 * first (X [S, B, I]), layout 1 batch first (X [B, S, I]); the attributes
 * are ir/attrs.c's ncc_rnn_attrs.
 */
#include "attrs.h"
#include "shape_rule.h"

/* Input i's dim j must agree with `want`; *got (when not NULL) gets the
 * merged dim. */
static ncc_status want_dim(ictx *c, int i, int j, int64_t want, const char *what,
                           int64_t *got) {
  int64_t d = IN(c, i)->shape.d[j], r;
  if (!ncc_si_merge_dim(c->g, d, want, &r)) {
    char sa[64], sb[64];
    ncc_shape a = {.rank = 1, .d = {d}}, b = {.rank = 1, .d = {want}};
    return ncc_si_fail(c, NCC_ERR_INPUT, "input %d dim %d is %s, but %s is %s", i, j,
                       ncc_si_fmt_shape(c->g, &a, sa, sizeof sa), what,
                       ncc_si_fmt_shape(c->g, &b, sb, sizeof sb));
  }
  if (got) *got = r;
  return NCC_OK;
}

/* G * H as a dim (static when H is). */
static int64_t times(int64_t g, int64_t h) { return is_static(h) ? g * h : -1; }

/* A [D, B, H] state (layout 0) or [B, D, H] (layout 1), input i. */
static ncc_status check_state(ictx *c, int i, const ncc_rnn_attrs *a, int64_t *batch,
                              int64_t h) {
  ncc_status st;
  int bd = a->batch_first ? 0 : 1, dd = a->batch_first ? 1 : 0;
  if ((st = ncc_si_check_same_dtype(c, 0, i)) || (st = ncc_si_check_rank(c, i, 3)) ||
      (st = want_dim(c, i, dd, a->num_dir, "the direction count", NULL)) ||
      (st = want_dim(c, i, bd, *batch, "the batch", batch)) ||
      (st = want_dim(c, i, 2, h, "hidden_size", NULL)))
    return st;
  return NCC_OK;
}

ncc_status ncc_rule_rnn(ictx *c) {
  ncc_rnn_attrs a;
  ncc_status st;
  if ((st = ncc_attrs_rnn(c->n, &a)) || (st = ncc_si_check_dtype(c, 0, DT_FLOAT)) ||
      (st = ncc_si_check_rank(c, 0, 3)) || (st = ncc_si_check_same_dtype(c, 0, 1)) ||
      (st = ncc_si_check_same_dtype(c, 0, 2)) || (st = ncc_si_check_rank(c, 1, 3)) ||
      (st = ncc_si_check_rank(c, 2, 3)))
    return st;
  const int64_t *x = IN(c, 0)->shape.d;
  int64_t seq = a.batch_first ? x[1] : x[0], batch = a.batch_first ? x[0] : x[1];
  int64_t h = a.hidden_size >= 0 ? a.hidden_size : IN(c, 2)->shape.d[2];
  int64_t g = a.gates, d = a.num_dir;
  /* W [D, G*H, I], R [D, G*H, H] */
  if ((st = want_dim(c, 1, 0, d, "the direction count", NULL)) ||
      (st = want_dim(c, 1, 2, x[2], "the input size", NULL)) ||
      (st = want_dim(c, 2, 0, d, "the direction count", NULL)) ||
      (st = want_dim(c, 2, 2, h, "hidden_size", &h)) ||
      (st = want_dim(c, 1, 1, times(g, h), "gates * hidden_size", NULL)) ||
      (st = want_dim(c, 2, 1, times(g, h), "gates * hidden_size", NULL)))
    return st;
  if (has_in(c, 3) && /* B [D, 2*G*H] */
      ((st = ncc_si_check_same_dtype(c, 0, 3)) || (st = ncc_si_check_rank(c, 3, 2)) ||
       (st = want_dim(c, 3, 0, d, "the direction count", NULL)) ||
       (st = want_dim(c, 3, 1, times(2 * g, h), "2 * gates * hidden_size", NULL))))
    return st;
  if (has_in(c, 4)) { /* sequence_lens [B], int32 */
    if (IN(c, 4)->dtype != NCC_DT_I32)
      return ncc_si_fail(c, NCC_ERR_INPUT, "sequence_lens must be i32, not %s",
                         ncc_dtype_name(IN(c, 4)->dtype));
    if ((st = ncc_si_check_rank(c, 4, 1)) ||
        (st = want_dim(c, 4, 0, batch, "the batch", &batch)))
      return st;
  }
  if (has_in(c, 5) && (st = check_state(c, 5, &a, &batch, h))) return st;
  if (has_in(c, 6) && (st = check_state(c, 6, &a, &batch, h))) return st;
  if (has_in(c, 7) && /* P [D, 3*H] */
      ((st = ncc_si_check_same_dtype(c, 0, 7)) || (st = ncc_si_check_rank(c, 7, 2)) ||
       (st = want_dim(c, 7, 0, d, "the direction count", NULL)) ||
       (st = want_dim(c, 7, 1, times(3, h), "3 * hidden_size", NULL))))
    return st;
  ncc_dtype dt = IN(c, 0)->dtype;
  ncc_shape y = a.batch_first ? (ncc_shape){.rank = 4, .d = {batch, seq, d, h}}
                              : (ncc_shape){.rank = 4, .d = {seq, d, batch, h}};
  ncc_shape s = a.batch_first ? (ncc_shape){.rank = 3, .d = {batch, d, h}}
                              : (ncc_shape){.rank = 3, .d = {d, batch, h}};
  for (int k = 0; k < c->n->n_out; k++) set_out(c, k, dt, k == 0 ? &y : &s);
  return NCC_OK;
}
