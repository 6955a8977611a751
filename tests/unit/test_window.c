/* tests/unit/test_window.c — the one conv/pool window decoder
 * (ir/window.c): ONNX's defaults, pads ignored unless auto_pad is NOTSET,
 * SAME pads (the ONNX operator spec's formula, worked by hand below), a
 * Conv's kernel from its weight, and the one-line errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ir/window.h"

typedef struct fx {
  ncc_graph *g;
  ncc_node *n;
} fx;

static fx mk(ncc_op op) {
  fx f;
  f.g = ncc_graph_new("t");
  assert_non_null(f.g);
  ncc_shape s = {0, {0}};
  ncc_value *in[2] = {
      ncc_graph_add_value(f.g, NULL, NCC_VAL_INPUT, NCC_DT_F32, &s),
      ncc_graph_add_value(f.g, NULL, NCC_VAL_INPUT, NCC_DT_F32, &s)};
  f.n = ncc_graph_add_node(f.g, op, "t", op == NCC_OP_CONV ? 2 : 1, in, 1);
  assert_non_null(f.n);
  return f;
}

static void ints(fx *f, const char *name, int count, const int64_t *v) {
  assert_int_equal(ncc_node_set_attr_ints(f->g, f->n, name, v, count), NCC_OK);
}

static void defaults_and_valid(void **state) {
  (void)state;
  fx f = mk(NCC_OP_MAXPOOL);
  ints(&f, "kernel_shape", 2, (int64_t[]){3, 2});
  ints(&f, "pads", 4, (int64_t[]){1, 0, 2, 1});
  ncc_window w;
  assert_int_equal(ncc_window_decode(f.n, 2, NULL, &w), NCC_OK);
  assert_int_equal(w.rank, 2);
  assert_int_equal(w.group, 1);
  assert_false(w.ceil_mode);
  assert_int_equal(w.stride[0], 1);
  assert_int_equal(w.dilation[1], 1);
  assert_int_equal(w.pad_begin[0], 1);
  assert_int_equal(w.pad_end[0], 2);
  assert_int_equal(w.pad_end[1], 1);
  assert_int_equal(ncc_node_set_attr_string(f.g, f.n, "auto_pad", "VALID"), NCC_OK);
  assert_int_equal(ncc_window_decode(f.n, 2, NULL, &w), NCC_OK);
  assert_int_equal(w.pad_begin[0] + w.pad_end[0] + w.pad_begin[1] + w.pad_end[1], 0);
  ncc_graph_free(f.g);
}

static void same_pads(void **state) {
  (void)state;
  /* ONNX: pad_total = (ceil(in / s) - 1) * s + (k - 1) * d + 1 - in.
   * in 7, s 2, k 4, d 1: out 4, total (3 * 2) + 4 - 7 = 3: UPPER puts the
   * odd one at the end (1, 2), LOWER at the beginning (2, 1). */
  fx f = mk(NCC_OP_AVGPOOL);
  ints(&f, "kernel_shape", 1, (int64_t[]){4});
  ints(&f, "strides", 1, (int64_t[]){2});
  assert_int_equal(ncc_node_set_attr_string(f.g, f.n, "auto_pad", "SAME_UPPER"), NCC_OK);
  ncc_window w;
  int64_t b, e;
  assert_int_equal(ncc_window_decode(f.n, 1, NULL, &w), NCC_OK);
  ncc_window_pads(&w, 0, 7, 4, &b, &e);
  assert_int_equal(b, 1);
  assert_int_equal(e, 2);
  w.auto_pad = NCC_AUTO_PAD_SAME_LOWER;
  ncc_window_pads(&w, 0, 7, 4, &b, &e);
  assert_int_equal(b, 2);
  assert_int_equal(e, 1);
  /* stride 5 > kernel 4, in 10: total (2 - 1) * 5 + 4 - 10 < 0: clamped */
  ncc_window_pads(&w, 0, 10, 2, &b, &e);
  assert_int_equal(b + e, 0);
  ncc_graph_free(f.g);
}

static void conv_kernel_and_errors(void **state) {
  (void)state;
  fx f = mk(NCC_OP_CONV);
  ncc_window w;
  assert_int_equal(ncc_window_decode(f.n, 2, (int64_t[]){3, 5}, &w), NCC_OK);
  assert_int_equal(w.kernel[0], 3);
  assert_int_equal(w.kernel[1], 5);
  ints(&f, "kernel_shape", 2, (int64_t[]){3, 4});
  assert_int_equal(ncc_window_decode(f.n, 2, (int64_t[]){3, 5}, &w), NCC_ERR_INPUT);
  assert_non_null(strstr(ncc_error_message(), "kernel_shape[1] = 4"));
  assert_int_equal(ncc_node_set_attr_int(f.g, f.n, "group", 0), NCC_OK);
  ints(&f, "kernel_shape", 2, (int64_t[]){3, 5});
  assert_int_equal(ncc_window_decode(f.n, 2, (int64_t[]){3, 5}, &w), NCC_ERR_INPUT);
  assert_non_null(strstr(ncc_error_message(), "group must be positive"));
  ncc_graph_free(f.g);

  f = mk(NCC_OP_MAXPOOL);
  assert_int_equal(ncc_window_decode(f.n, 2, NULL, &w), NCC_ERR_INPUT);
  assert_non_null(strstr(ncc_error_message(), "missing attribute 'kernel_shape'"));
  ints(&f, "kernel_shape", 2, (int64_t[]){2, 2});
  ints(&f, "strides", 3, (int64_t[]){1, 1, 1});
  assert_int_equal(ncc_window_decode(f.n, 2, NULL, &w), NCC_ERR_INPUT);
  assert_non_null(strstr(ncc_error_message(), "'strides' has 3 values, expected 2"));
  ncc_graph_free(f.g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(defaults_and_valid),
      cmocka_unit_test(same_pads),
      cmocka_unit_test(conv_kernel_and_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
