/* tests/unit/test_onnx.c — the ONNX importer: every storage form of
 * initializers, Constant forms, opset-13 forms upgraded to the opset-21
 * canonical form, symbolic dims, node re-sorting, optional inputs and
 * outputs, Sum and Dropout as ops of their own, the error statuses and messages of malformed models, arbitrary
 * bytes (every prefix and many corruptions of a good model), nesting bombs,
 * and allocation failure at every allocation.
 *
 * The models are written by tests/bad_onnx/make_fixtures.py into
 * $NCC_BUILD/onnx_fixtures (the ctest fixture `onnx_fixtures`). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <float.h>
#include <string.h>

#include <cmocka.h>

#include "frontend/frontend.h"
#include "ir/ir.h"
#include "test_alloc.h"

/* ---- helpers ---- */

static const char *fixture(const char *name) {
  static char path[4096];
  const char *dir = getenv("NCC_BUILD");
  if (!dir) fail_msg("NCC_BUILD is not set (run through ctest)");
  snprintf(path, sizeof path, "%s/onnx_fixtures/%s", dir, name);
  return path;
}

static ncc_graph *import_ok(const char *name) {
  ncc_graph *g = NULL;
  ncc_status st = ncc_graph_import_onnx(fixture(name), &g);
  if (st) fail_msg("%s: status %d: %s", name, st, ncc_error_message());
  assert_non_null(g);
  return g;
}

/* The whole fixture file, malloc'd (free with free). */
static unsigned char *slurp(const char *name, size_t *len) {
  FILE *f = fopen(fixture(name), "rb");
  if (!f) fail_msg("cannot open fixture %s", name);
  unsigned char *buf = malloc(1 << 20);
  assert_non_null(buf);
  *len = fread(buf, 1, 1 << 20, f);
  fclose(f);
  return buf;
}

static const ncc_value *value(const ncc_graph *g, const char *name) {
  const ncc_value *v = ncc_graph_find_value(g, name);
  if (!v) fail_msg("no value '%s'", name);
  return v;
}

static const ncc_node *node_named(const ncc_graph *g, const char *name) {
  for (int i = 0; i < g->n_nodes; i++)
    if (strcmp(g->nodes[i]->name, name) == 0) return g->nodes[i];
  fail_msg("no node '%s'", name);
  return NULL;
}

static void check_const(const ncc_graph *g, const char *name, ncc_dtype dt,
                        int rank, const int64_t *dims, const void *data,
                        size_t nbytes) {
  const ncc_value *v = value(g, name);
  assert_int_equal(v->kind, NCC_VAL_CONST);
  assert_int_equal(v->dtype, dt);
  assert_int_equal(v->shape.rank, rank);
  for (int i = 0; i < rank; i++) assert_int_equal(v->shape.d[i], dims[i]);
  assert_non_null(v->data);
  if (nbytes) assert_memory_equal(v->data, data, nbytes);
}

/* An i64 constant input with the given content. */
static void check_i64_input(const ncc_value *v, const int64_t *want, int n) {
  assert_non_null(v);
  assert_int_equal(v->kind, NCC_VAL_CONST);
  assert_int_equal(v->dtype, NCC_DT_I64);
  assert_int_equal(v->shape.rank, 1);
  assert_int_equal(v->shape.d[0], n);
  assert_memory_equal(v->data, want, sizeof(int64_t) * (size_t)n);
}

/* ---- good models ---- */

static void test_initializers(void **state) {
  (void)state;
  ncc_graph *g = import_ok("inits.onnx");
  assert_int_equal(ncc_graph_num_inputs(g), 0);
  assert_int_equal(ncc_graph_num_outputs(g), 16);
  int64_t d22[] = {2, 2}, d2[] = {2}, d3[] = {3}, d1[] = {1}, d03[] = {0, 3};
  float f32[] = {1.5f, -2.0f, 3.25f, 0.0f}, f32r[] = {1, 2, 3, 4};
  int64_t i64[] = {1, -2, (int64_t)1 << 40}, i64r[] = {5, -6};
  int32_t i32[] = {7, -8};
  double f64[] = {0.25, -1e300};
  uint16_t f16[] = {0x3c00, 0xc000}, f16r[] = {0x3800};
  uint8_t bools[] = {1, 0, 1}, boolr[] = {1, 0}, u8[] = {0, 255};
  int8_t i8[] = {-128, 127};
  float scalar = 2.5f;
  check_const(g, "f32_typed", NCC_DT_F32, 2, d22, f32, sizeof f32);
  check_const(g, "i64_typed", NCC_DT_I64, 1, d3, i64, sizeof i64);
  check_const(g, "i32_typed", NCC_DT_I32, 1, d2, i32, sizeof i32);
  check_const(g, "f64_typed", NCC_DT_F64, 1, d2, f64, sizeof f64);
  check_const(g, "f16_typed", NCC_DT_F16, 1, d2, f16, sizeof f16);
  check_const(g, "bool_typed", NCC_DT_BOOL, 1, d3, bools, sizeof bools);
  check_const(g, "i8_typed", NCC_DT_I8, 1, d2, i8, sizeof i8);
  check_const(g, "u8_typed", NCC_DT_U8, 1, d2, u8, sizeof u8);
  check_const(g, "f32_raw", NCC_DT_F32, 2, d22, f32r, sizeof f32r);
  check_const(g, "i64_raw", NCC_DT_I64, 1, d2, i64r, sizeof i64r);
  check_const(g, "f16_raw", NCC_DT_F16, 1, d1, f16r, sizeof f16r);
  check_const(g, "bool_raw", NCC_DT_BOOL, 1, d2, boolr, sizeof boolr);
  check_const(g, "scalar_raw", NCC_DT_F32, 0, NULL, &scalar, sizeof scalar);
  check_const(g, "empty_raw", NCC_DT_F32, 2, d03, NULL, 0);
  /* the taken-over buffers (>= 4 KB of raw_data) */
  static float big[3000];
  static uint8_t bigb[5000];
  for (int i = 0; i < 3000; i++) big[i] = (float)i * 0.25f - 100;
  for (int i = 0; i < 5000; i++) bigb[i] = i % 3 != 0;
  int64_t d3000[] = {3000}, d5000[] = {5000};
  check_const(g, "f32_big_raw", NCC_DT_F32, 1, d3000, big, sizeof big);
  check_const(g, "bool_big_raw", NCC_DT_BOOL, 1, d5000, bigb, sizeof bigb);
  /* Identity keeps dtype and shape: inference ran. */
  const ncc_value *o = value(g, "o_f16_typed");
  assert_int_equal(o->kind, NCC_VAL_NODE);
  assert_int_equal(o->dtype, NCC_DT_F16);
  assert_int_equal(o->shape.d[0], 2);
  ncc_graph_free(g);
}

static void test_constants(void **state) {
  (void)state;
  ncc_graph *g = import_ok("constants.onnx");
  int64_t d2[] = {2}, d3[] = {3};
  float t[] = {1, 2}, f = 1.5f, fs[] = {1, 2, 3};
  int64_t i = 7, is[] = {4, 5};
  check_const(g, "c_tensor", NCC_DT_F32, 1, d2, t, sizeof t);
  check_const(g, "c_float", NCC_DT_F32, 0, NULL, &f, sizeof f);
  check_const(g, "c_floats", NCC_DT_F32, 1, d3, fs, sizeof fs);
  check_const(g, "c_int", NCC_DT_I64, 0, NULL, &i, sizeof i);
  check_const(g, "c_ints", NCC_DT_I64, 1, d2, is, sizeof is);
  /* Constant nodes are gone; only the Identity nodes remain. */
  assert_int_equal(ncc_graph_num_nodes(g), 5);
  for (int k = 0; k < g->n_nodes; k++)
    assert_int_equal(g->nodes[k]->op, NCC_OP_IDENTITY);
  ncc_graph_free(g);
}

static void test_reduce_opset13(void **state) {
  (void)state;
  ncc_graph *g = import_ok("reduce13.onnx");
  const ncc_node *rm = node_named(g, "rm"), *rx = node_named(g, "rx"),
                 *rs = node_named(g, "rs");
  int64_t a1[] = {1}, a02[] = {0, 2};
  assert_int_equal(rm->n_in, 2);
  check_i64_input(rm->in[1], a1, 1);
  assert_null(ncc_node_attr(rm, "axes"));
  assert_int_equal(ncc_attr_int(rm, "keepdims", 1), 0);
  assert_int_equal(rx->n_in, 2);
  check_i64_input(rx->in[1], a02, 2);
  assert_null(ncc_node_attr(rx, "axes"));
  assert_string_equal(rs->in[1]->name, "ax");
  /* Inference used the upgraded axes. */
  const ncc_value *m = value(g, "m"), *mx = value(g, "mx");
  assert_int_equal(m->shape.rank, 2);
  assert_int_equal(m->shape.d[1], 4);
  assert_int_equal(mx->shape.rank, 3);
  assert_int_equal(mx->shape.d[1], 3);
  ncc_graph_free(g);
}

static void test_symbolic_dims(void **state) {
  (void)state;
  ncc_graph *g = import_ok("symbolic.onnx");
  assert_int_equal(ncc_graph_num_inputs(g), 2);
  const ncc_value *x = g->inputs[0], *b = g->inputs[1];
  assert_string_equal(ncc_graph_input_name(g, 0), "x");
  assert_int_equal(x->kind, NCC_VAL_INPUT);
  assert_int_equal(x->shape.rank, 3);
  assert_true(ncc_dim_is_sym(x->shape.d[0]));
  assert_string_equal(ncc_graph_sym_name(g, ncc_dim_sym_id(x->shape.d[0])), "N");
  assert_int_equal(x->shape.d[1], 3);
  assert_true(ncc_dim_is_sym(x->shape.d[2])); /* missing dim: fresh symbol */
  assert_true(x->shape.d[2] != x->shape.d[0]);
  assert_int_equal(b->shape.d[0], x->shape.d[0]); /* same name, same symbol */
  const ncc_value *y = value(g, "y");
  assert_int_equal(y->shape.d[0], x->shape.d[0]);
  assert_int_equal(y->shape.d[2], x->shape.d[2]);
  ncc_graph_free(g);
}

static void test_resorted(void **state) {
  (void)state;
  ncc_graph *g = import_ok("unsorted.onnx");
  assert_int_equal(g->n_nodes, 2);
  assert_string_equal(g->nodes[0]->name, "first");
  assert_string_equal(g->nodes[1]->name, "second");
  ncc_graph_free(g);
}

static void test_split_upgrade(void **state) {
  (void)state;
  ncc_graph *g = import_ok("split.onnx");
  const ncc_node *even = node_named(g, "even"), *sized = node_named(g, "sized");
  assert_int_equal(even->n_in, 1);
  assert_int_equal(ncc_attr_int(even, "num_outputs", -1), 2);
  assert_int_equal(sized->n_in, 2);
  int64_t s[] = {1, 3};
  check_i64_input(sized->in[1], s, 2);
  assert_null(ncc_node_attr(sized, "split"));
  assert_int_equal(value(g, "d")->shape.d[1], 3);
  ncc_graph_free(g);
}

static void test_cast_and_optional_inputs(void **state) {
  (void)state;
  ncc_graph *g = import_ok("cast_clip.onnx");
  const ncc_node *cast = node_named(g, "cast"), *clip = node_named(g, "clip");
  const ncc_attr *to = ncc_node_attr(cast, "to");
  assert_non_null(to);
  assert_int_equal(to->kind, NCC_ATTR_STRING);
  assert_string_equal(to->s, "f16");
  assert_int_equal(value(g, "h")->dtype, NCC_DT_F16);
  assert_int_equal(clip->n_in, 3);
  assert_non_null(clip->in[0]);
  /* an omitted bound is ONNX's default, the type's lowest value (so -inf
   * becomes -FLT_MAX), which the importer writes out */
  assert_non_null(clip->in[1]);
  assert_int_equal(clip->in[1]->kind, NCC_VAL_CONST);
  assert_true(*(const float *)clip->in[1]->data == -FLT_MAX);
  assert_string_equal(clip->in[2]->name, "mx");
  ncc_graph_free(g);
}

static void test_layernorm_outputs(void **state) {
  (void)state;
  ncc_graph *g = import_ok("layernorm.onnx");
  /* `s` is an initializer also listed as input: a constant, not an input. */
  assert_int_equal(ncc_graph_num_inputs(g), 1);
  assert_int_equal(value(g, "s")->kind, NCC_VAL_CONST);
  const ncc_node *ln = node_named(g, "ln");
  assert_int_equal(ln->n_out, 3);
  assert_non_null(ln->out[1]); /* the omitted middle output got a value */
  assert_string_equal(ln->out[2]->name, "inv");
  assert_int_equal(ncc_graph_num_outputs(g), 2);
  ncc_graph_free(g);
}

static void test_composite_ops(void **state) {
  (void)state;
  ncc_graph *g = import_ok("composite.onnx");
  /* Sum and Dropout are ops of their own: Sum keeps its three
   * inputs, a Dropout its named mask and its ratio/training_mode inputs
   * (the simplify pass removes inference Dropouts and turns two-input f32
   * Sums into Adds: tests/filecheck/logic/pass_simplify_logic.nir). */
  assert_int_equal(g->n_nodes, 3);
  assert_int_equal(g->nodes[0]->op, NCC_OP_SUM);
  assert_int_equal(g->nodes[0]->n_in, 3);
  assert_string_equal(g->nodes[0]->in[2]->name, "c");
  assert_string_equal(g->nodes[0]->out[0]->name, "s");
  assert_int_equal(g->nodes[1]->op, NCC_OP_DROPOUT);
  assert_int_equal(g->nodes[1]->n_out, 2);
  assert_int_equal(g->nodes[1]->out[1]->dtype, NCC_DT_BOOL);
  assert_int_equal(g->nodes[2]->op, NCC_OP_DROPOUT);
  assert_int_equal(g->nodes[2]->n_in, 3);
  const ncc_value *y = value(g, "y");
  assert_int_equal(y->shape.rank, 2);
  assert_int_equal(y->shape.d[1], 3);
  ncc_graph_free(g);
}

static void test_load_dispatch(void **state) {
  (void)state;
  ncc_graph *g = NULL;
  assert_int_equal(ncc_graph_load(fixture("mlp.onnx"), &g), NCC_OK);
  assert_int_equal(ncc_graph_num_inputs(g), 1);
  assert_int_equal(ncc_graph_num_outputs(g), 1);
  assert_int_equal(ncc_graph_num_nodes(g), 3);
  assert_string_equal(ncc_graph_output_name(g, 0), "y");
  /* .nir goes to the text parser: the printed import loads back equal. */
  char nir[4200];
  snprintf(nir, sizeof nir, "%s", fixture("mlp_roundtrip.nir"));
  FILE *f = fopen(nir, "w");
  assert_non_null(f);
  assert_int_equal(ncc_graph_print(g, f), NCC_OK);
  fclose(f);
  ncc_graph *h = NULL;
  if (ncc_graph_load(nir, &h)) fail_msg("%s", ncc_error_message());
  assert_true(ncc_graph_hash(g) == ncc_graph_hash(h));
  ncc_graph_free(h);
  ncc_graph_free(g);
  g = NULL;
  assert_int_equal(ncc_graph_load("model.txt", &g), NCC_ERR_INPUT);
  assert_null(g);
  assert_non_null(strstr(ncc_error_message(), "model.txt: unknown model extension"));
  assert_int_equal(ncc_graph_load("no_extension", &g), NCC_ERR_INPUT);
  assert_int_equal(ncc_graph_import_onnx("/nonexistent/m.onnx", &g),
                   NCC_ERR_INPUT);
  assert_null(g);
  assert_non_null(strstr(ncc_error_message(), "/nonexistent/m.onnx: cannot open"));
}

/* ---- malformed models: status and message ---- */

static void test_error_statuses(void **state) {
  (void)state;
  static const struct {
    const char *file;
    ncc_status st;
    const char *msg;
  } cases[] = {
      {"bad_cycle.onnx", NCC_ERR_INPUT, "graph has a cycle through node 'r"},
      {"bad_unknown_op.onnx", NCC_ERR_UNSUPPORTED,
       "node 'foo': unsupported op 'FooBar'"},
      {"bad_opset_6.onnx", NCC_ERR_UNSUPPORTED, "opset 6"},
      {"bad_external_data.onnx", NCC_ERR_UNSUPPORTED, "external data"},
      {"bad_raw_data_short.onnx", NCC_ERR_INPUT,
       "raw_data holds 13 bytes, expected 16"},
      {"bad_attr_wrong_kind.onnx", NCC_ERR_INPUT,
       "attribute 'perm' must be INTS, not FLOAT"},
      {"bad_missing_initializer.onnx", NCC_ERR_INPUT,
       "node 'mm': input 'W' is not defined"},
      {"bad_rank_12_input.onnx", NCC_ERR_UNSUPPORTED, "rank 12"},
      {"bad_absurd_input_dim.onnx", NCC_ERR_INPUT, "1000000000000"},
      {"bad_add_mismatch.onnx", NCC_ERR_INPUT, "add"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    ncc_graph *g = (ncc_graph *)&g; /* must be reset to NULL */
    const char *path = fixture(cases[i].file);
    ncc_status st = ncc_graph_import_onnx(path, &g);
    const char *msg = ncc_error_message();
    if (st != cases[i].st || !strstr(msg, cases[i].msg) ||
        strncmp(msg, path, strlen(path)) != 0)
      fail_msg("%s: status %d (want %d), message '%s' (want '%s' after the "
               "path)",
               cases[i].file, st, cases[i].st, msg, cases[i].msg);
    assert_null(g);
  }
}

/* ---- arbitrary bytes ---- */

static void expect_rejected(const void *buf, size_t len, const char *what) {
  ncc_graph *g = NULL;
  ncc_status st = ncc_graph_import_onnx_buffer(buf, len, "mem.onnx", &g);
  if (st != NCC_ERR_INPUT && st != NCC_ERR_UNSUPPORTED)
    fail_msg("%s: status %d (%s)", what, st, ncc_error_message());
  assert_null(g);
  assert_int_equal(strncmp(ncc_error_message(), "mem.onnx: ", 10), 0);
  assert_null(strchr(ncc_error_message(), '\n'));
}

static void test_prefixes_and_corruptions(void **state) {
  (void)state;
  size_t len;
  unsigned char *buf = slurp("mlp.onnx", &len);
  assert_true(len > 100);
  /* No proper prefix of a model is a usable model (the opset import comes
   * last), and none may crash. */
  for (size_t n = 0; n < len; n++) expect_rejected(buf, n, "prefix");
  /* Flipping bytes: any status, but no crash, leak or sanitizer report. */
  unsigned char *copy = malloc(len);
  assert_non_null(copy);
  for (size_t i = 0; i < len; i++)
    for (int k = 0; k < 3; k++) {
      static const unsigned char masks[] = {0xff, 0x80, 0x01};
      memcpy(copy, buf, len);
      copy[i] ^= masks[k];
      ncc_graph *g = NULL;
      ncc_status st = ncc_graph_import_onnx_buffer(copy, len, "x", &g);
      assert_true(st == NCC_OK ? g != NULL : g == NULL);
      assert_true(st == NCC_OK || st == NCC_ERR_INPUT ||
                  st == NCC_ERR_UNSUPPORTED);
      ncc_graph_free(g);
    }
  free(copy);
  free(buf);
}

/* A length-delimited protobuf field `num` around buf[0..*len), in place. */
static void wrap(unsigned char *buf, size_t *len, unsigned num) {
  unsigned char head[12];
  size_t h = 0, n = *len;
  head[h++] = (unsigned char)(num << 3 | 2);
  do {
    head[h++] = (unsigned char)((n & 0x7f) | (n > 0x7f ? 0x80 : 0));
    n >>= 7;
  } while (n);
  memmove(buf + h, buf, *len);
  memcpy(buf, head, h);
  *len += h;
}

static void test_garbage_and_nesting(void **state) {
  (void)state;
  expect_rejected("", 0, "empty");
  assert_non_null(strstr(ncc_error_message(), "empty file"));
  static const unsigned char junk[] = {0x08, 0x96, 0x01, 0xff, 0xff, 0x12,
                                       0x40, 0x00, 0x13, 0x37};
  expect_rejected(junk, sizeof junk, "junk");
  assert_non_null(strstr(ncc_error_message(), "protobuf parse failed"));
  srand(7);
  unsigned char rnd[512];
  for (int k = 0; k < 200; k++) {
    size_t n = (size_t)(rand() % (int)sizeof rnd);
    for (size_t i = 0; i < n; i++) rnd[i] = (unsigned char)rand();
    ncc_graph *g = NULL;
    ncc_status st = ncc_graph_import_onnx_buffer(rnd, n, "rnd", &g);
    assert_true(st == NCC_ERR_INPUT || st == NCC_ERR_UNSUPPORTED);
  }
  /* graph.node.attribute.g... nested 5000 levels: must be refused before
   * the recursive decoder runs out of stack. */
  size_t cap = 5000 * 3 * 4 + 64, len = 0;
  unsigned char *deep = malloc(cap);
  assert_non_null(deep);
  for (int lvl = 0; lvl < 5000; lvl++) {
    wrap(deep, &len, 6); /* AttributeProto.g */
    wrap(deep, &len, 5); /* NodeProto.attribute */
    wrap(deep, &len, 1); /* GraphProto.node */
  }
  wrap(deep, &len, 7); /* ModelProto.graph */
  assert_true(len <= cap);
  expect_rejected(deep, len, "deep");
  assert_non_null(strstr(ncc_error_message(), "nested"));
  free(deep);
}

/* onnx_tensor_take_value directly: a big, 16-aligned raw_data becomes the
 * constant's data (the tensor keeps none); a small one, or one not aligned
 * as arena memory is, is copied and stays the tensor's. */
static void take_case(ncc_graph *g, const char *name, size_t n, size_t skew, bool taken) {
  unsigned char *buf = ncc_malloc(n * sizeof(float) + 16);
  assert_non_null(buf);
  float *vals = (float *)(buf + skew);
  for (size_t i = 0; i < n; i++) vals[i] = (float)i * 0.5f - 3;
  Onnx__TensorProto t = ONNX__TENSOR_PROTO__INIT;
  int64_t dims[1] = {(int64_t)n};
  t.n_dims = 1;
  t.dims = dims;
  t.has_data_type = 1;
  t.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
  t.has_raw_data = 1;
  t.raw_data.data = (uint8_t *)vals;
  t.raw_data.len = n * sizeof(float);
  ncc_value *v = NULL;
  assert_int_equal(onnx_tensor_take_value(g, &t, name, name, &v), NCC_OK);
  assert_non_null(v);
  assert_int_equal(v->shape.d[0], (int64_t)n);
  if (taken) {
    assert_ptr_equal(v->data, vals); /* the graph frees it */
    assert_null(t.raw_data.data);
    assert_int_equal(t.raw_data.len, 0); /* the tensor says it holds nothing */
  } else {
    assert_ptr_not_equal(v->data, vals);
    assert_ptr_equal(t.raw_data.data, vals);
    for (size_t i = 0; i < n; i++) assert_true(((float *)v->data)[i] == (float)i * 0.5f - 3);
    ncc_free(buf, 0);
  }
}

static void test_take_value(void **state) {
  (void)state;
  ncc_graph *g = ncc_graph_new("take");
  assert_non_null(g);
  take_case(g, "big", 4096, 0, true);      /* 16 KB, malloc-aligned */
  take_case(g, "small", 100, 0, false);    /* under 4 KB */
  take_case(g, "unaligned", 4096, 4, false);
  ncc_graph_free(g);
}

/* ---- allocation failure ---- */

/* Every allocation of importing fixture `name` fails in turn: NOMEM, no
 * graph, nothing leaked (the sanitizer build), then a clean import. */
static void allocation_failures(const char *name) {
  size_t len;
  unsigned char *buf = slurp(name, &len);
  int failures = 0;
  for (long k = 0; k < 100000; k++) {
    test_alloc_arm(k);
    ncc_graph *g = NULL;
    ncc_status st = ncc_graph_import_onnx_buffer(buf, len, "m.onnx", &g);
    test_alloc_disarm();
    if (st == NCC_OK) {
      assert_true(test_alloc_ran_clean());
      ncc_graph_free(g);
      break;
    }
    if (st != NCC_ERR_NOMEM)
      fail_msg("allocation %ld failing gave status %d: %s", k, st,
               ncc_error_message());
    assert_null(g);
    failures++;
  }
  assert_true(failures > 10);
  free(buf);
}

static void test_allocation_failures(void **state) {
  (void)state;
  allocation_failures("layernorm.onnx");
  /* initializers taken over without a copy, and copied ones */
  allocation_failures("inits.onnx");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_initializers),
      cmocka_unit_test(test_take_value),
      cmocka_unit_test(test_constants),
      cmocka_unit_test(test_reduce_opset13),
      cmocka_unit_test(test_symbolic_dims),
      cmocka_unit_test(test_resorted),
      cmocka_unit_test(test_split_upgrade),
      cmocka_unit_test(test_cast_and_optional_inputs),
      cmocka_unit_test(test_layernorm_outputs),
      cmocka_unit_test(test_composite_ops),
      cmocka_unit_test(test_load_dispatch),
      cmocka_unit_test(test_error_statuses),
      cmocka_unit_test(test_prefixes_and_corruptions),
      cmocka_unit_test(test_garbage_and_nesting),
      cmocka_unit_test(test_allocation_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
