/* tests/unit/test_text.c — the text IR (printer and parser), the verifier
 * and the structural hash: round trips of API-built and hand-written graphs,
 * bit-exact floats, every attribute kind, symbolic dims and layouts, parse
 * diagnostics with their positions, each structural error the verifier must
 * catch, hash invariance under renaming, and allocation failures. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ir/ir.h"
#include "ir/shape.h"
#include "test_alloc.h"

/* ---- helpers ---- */

static ncc_graph *parse_ok(const char *text) {
  ncc_graph *g = NULL;
  ncc_status st = ncc_graph_parse_text(text, strlen(text), "t.nir", &g);
  if (st) fprintf(stderr, "unexpected parse error: %s\n", ncc_error_message());
  assert_int_equal(st, NCC_OK);
  assert_non_null(g);
  return g;
}

/* print(g), parse it, print again: both texts must be identical. Returns
 * the first text (free()). */
static char *check_roundtrip(const ncc_graph *g) {
  char *t1 = ncc_graph_print_string(g);
  assert_non_null(t1);
  ncc_graph *g2 = parse_ok(t1);
  char *t2 = ncc_graph_print_string(g2);
  assert_non_null(t2);
  if (strcmp(t1, t2) != 0) fprintf(stderr, "--- first\n%s--- second\n%s", t1, t2);
  assert_string_equal(t1, t2);
  assert_true(ncc_graph_hash(g) == ncc_graph_hash(g2));
  free(t2);
  ncc_graph_free(g2);
  return t1;
}

/* Text that is already canonical must print back byte for byte. */
static void check_canonical(const char *text) {
  ncc_graph *g = parse_ok(text);
  char *t = ncc_graph_print_string(g);
  assert_non_null(t);
  if (strcmp(t, text) != 0) fprintf(stderr, "--- in\n%s--- out\n%s", text, t);
  assert_string_equal(t, text);
  free(t);
  ncc_graph_free(g);
}

/* True when parsing fails with exactly `msg`; reports a mismatch. */
static bool parse_error_is(const char *text, const char *msg) {
  ncc_graph *g = (ncc_graph *)1;
  ncc_status st = ncc_graph_parse_text(text, strlen(text), "bad.nir", &g);
  bool ok = st == NCC_ERR_INPUT && !g && strcmp(ncc_error_message(), msg) == 0;
  if (!ok)
    fprintf(stderr, "for:\n%s\nwant: %s\ngot:  %s\n", text, msg,
            st ? ncc_error_message() : "(no error)");
  if (st == NCC_OK) ncc_graph_free(g);
  return ok;
}

static ncc_value *add_out(ncc_graph *g, ncc_node *n, int idx, const char *name) {
  ncc_value *v = ncc_graph_add_value(g, name, NCC_VAL_NODE, NCC_DT_UNDEF, NULL);
  assert_non_null(v);
  ncc_node_set_output(n, idx, v);
  return v;
}

static ncc_shape shp(int rank, ...) {
  ncc_shape s;
  memset(&s, 0, sizeof s);
  s.rank = rank;
  va_list ap;
  va_start(ap, rank);
  for (int i = 0; i < rank; i++) s.d[i] = va_arg(ap, int64_t);
  va_end(ap);
  return s;
}

static uint32_t lcg(uint32_t *s) {
  *s = *s * 1664525u + 1013904223u;
  return *s;
}

/* A graph built through the API with a bit of everything: quoted names, a
 * symbolic batch, constants in all three data forms, an omitted optional
 * input, a multi-output node, node names and attributes of several kinds. */
static ncc_graph *build_graph(const char *xname, const char *sym) {
  ncc_graph *g = ncc_graph_new("api graph");
  assert_non_null(g);
  int N = ncc_graph_sym(g, sym, strlen(sym));
  ncc_shape xs = shp(4, ncc_dim_sym(N), (int64_t)3, (int64_t)8, (int64_t)8);
  ncc_value *x = ncc_graph_add_value(g, xname, NCC_VAL_INPUT, NCC_DT_F32, &xs);
  assert_non_null(x);
  assert_int_equal(ncc_graph_add_input(g, x), NCC_OK);

  float wd[4 * 3 * 3 * 3];
  uint32_t seed = 7;
  for (size_t i = 0; i < sizeof wd / sizeof wd[0]; i++)
    wd[i] = (float)(lcg(&seed) >> 8) / 16777216.0f - 0.5f;
  ncc_shape ws = shp(4, (int64_t)4, (int64_t)3, (int64_t)3, (int64_t)3);
  ncc_value *w = ncc_graph_add_const(g, "conv.weight", NCC_DT_F32, &ws, wd);
  float bd[4] = {0.5f, -0.0f, 1e-5f, 3.0f};
  ncc_shape bs = shp(1, (int64_t)4);
  ncc_value *b = ncc_graph_add_const(g, "conv.bias", NCC_DT_F32, &bs, bd);
  float ones[64];
  for (int i = 0; i < 64; i++) ones[i] = 1.0f;
  ncc_shape ss = shp(4, (int64_t)1, (int64_t)4, (int64_t)4, (int64_t)4);
  ncc_value *scale = ncc_graph_add_const(g, "scale", NCC_DT_F32, &ss, ones);
  float mx = 6.0f;
  ncc_shape scalar = shp(0);
  ncc_value *cmax = ncc_graph_add_const(g, "six", NCC_DT_F32, &scalar, &mx);
  int64_t split[2] = {1, 3};
  ncc_shape s2 = shp(1, (int64_t)2);
  ncc_value *sp = ncc_graph_add_const(g, "split", NCC_DT_I64, &s2, split);
  assert_true(w && b && scale && cmax && sp);

  ncc_value *in3[3] = {x, w, b};
  ncc_node *conv = ncc_graph_add_node(g, NCC_OP_CONV, "conv/1", 3, in3, 1);
  int64_t pads[4] = {1, 1, 1, 1}, strides[2] = {2, 2}, ks[2] = {3, 3};
  ncc_node_set_attr_ints(g, conv, "strides", strides, 2);
  ncc_node_set_attr_ints(g, conv, "pads", pads, 4);
  ncc_node_set_attr_ints(g, conv, "kernel_shape", ks, 2);
  ncc_node_set_attr_int(g, conv, "group", 1);
  ncc_value *y = add_out(g, conv, 0, "y");

  ncc_value *in2[2] = {y, scale};
  ncc_node *mul = ncc_graph_add_node(g, NCC_OP_MUL, NULL, 2, in2, 1);
  ncc_value *m = add_out(g, mul, 0, "m");

  ncc_value *inc[3] = {m, NULL, cmax};
  ncc_node *clip = ncc_graph_add_node(g, NCC_OP_CLIP, "clip", 3, inc, 1);
  ncc_value *c = add_out(g, clip, 0, "c");

  ncc_value *ins[2] = {c, sp};
  ncc_node *split_n = ncc_graph_add_node(g, NCC_OP_SPLIT, "split", 2, ins, 2);
  ncc_node_set_attr_int(g, split_n, "axis", 1);
  ncc_value *s0 = add_out(g, split_n, 0, "part 0");
  ncc_value *s1 = add_out(g, split_n, 1, "part\"1\"");

  ncc_value *inl[1] = {s1};
  ncc_node *lr = ncc_graph_add_node(g, NCC_OP_LEAKYRELU, "", 1, inl, 1);
  ncc_node_set_attr_float(g, lr, "alpha", 0.2f);
  ncc_value *l = add_out(g, lr, 0, "l");

  assert_int_equal(ncc_graph_add_output(g, s0), NCC_OK);
  assert_int_equal(ncc_graph_add_output(g, l), NCC_OK);
  ncc_status st = ncc_infer_graph(g);
  if (st) fprintf(stderr, "%s\n", ncc_error_message());
  assert_int_equal(st, NCC_OK);
  assert_int_equal(ncc_graph_verify(g), NCC_OK);
  return g;
}

/* ---- round trips ---- */

static void test_roundtrip_api(void **state) {
  (void)state;
  ncc_graph *g = build_graph("onnx::input.1", "N");
  char *t = check_roundtrip(g);
  /* spot checks of the printed form */
  assert_non_null(strstr(t, "graph @\"api graph\"(%\"onnx::input.1\": f32[N,3,8,8]) {\n"));
  assert_non_null(strstr(t, "  %conv.weight: f32[4,3,3,3] = const hex\""));
  assert_non_null(strstr(t, "  %conv.bias: f32[4] = const [0.5, -0.0, 1e-05, 3.0]\n"));
  assert_non_null(strstr(t, "  %scale: f32[1,4,4,4] = const splat(1.0)\n"));
  assert_non_null(strstr(t, "  %six: f32[] = const [6.0]\n"));
  assert_non_null(strstr(t, "  %split: i64[2] = const [1, 3]\n"));
  assert_non_null(strstr(t, "  %y: f32[N,4,4,4] = Conv(%\"onnx::input.1\", %conv.weight, "
                            "%conv.bias) {group = 1, kernel_shape = [3, 3], pads = "
                            "[1, 1, 1, 1], strides = [2, 2]} @\"conv/1\"\n"));
  assert_non_null(strstr(t, "  %m: f32[N,4,4,4] = Mul(%y, %scale)\n"));
  assert_non_null(strstr(t, "  %c: f32[N,4,4,4] = Clip(%m, _, %six) @clip\n"));
  assert_non_null(strstr(t, "  %\"part 0\": f32[N,1,4,4], %\"part\\\"1\\\"\": f32[N,3,4,4] = "
                            "Split(%c, %split) {axis = 1} @split\n"));
  assert_non_null(strstr(t, " = LeakyRelu(%\"part\\\"1\\\"\") {alpha = 0.2}\n"));
  assert_non_null(strstr(t, "  return %\"part 0\", %l\n}\n"));
  /* the weights read back bit-exactly */
  ncc_graph *g2 = parse_ok(t);
  ncc_value *w1 = ncc_graph_find_value(g, "conv.weight");
  ncc_value *w2 = ncc_graph_find_value(g2, "conv.weight");
  assert_memory_equal(w1->data, w2->data, 4 * 3 * 3 * 3 * 4);
  ncc_graph_free(g2);
  free(t);
  ncc_graph_free(g);
}

static const char *const canonical_texts[] = {
    /* no inputs, no attributes, an empty return */
    "graph @empty() {\n"
    "  return\n"
    "}\n",
    /* elementwise, broadcasting, comparisons, Where, Cast */
    "graph @elt(%a: f32[2,3], %b: f32[3]) {\n"
    "  %s: f32[2,3] = Add(%a, %b)\n"
    "  %p: f32[2,3] = Pow(%s, %b)\n"
    "  %l: bool[2,3] = Less(%a, %b)\n"
    "  %w: f32[2,3] = Where(%l, %a, %p)\n"
    "  %i: i64[2,3] = Cast(%w) {to = \"i64\"}\n"
    "  %g: f32[2,3] = Gelu(%w) {approximate = \"tanh\"}\n"
    "  return %i, %g\n"
    "}\n",
    /* the shape arithmetic of an exported model: N flows through */
    "graph @shapes(%x: f32[N,4,6]) {\n"
    "  %idx: i64[] = const [0]\n"
    "  %tail: i64[1] = const [24]\n"
    "  %sh: i64[3] = Shape(%x)\n"
    "  %n: i64[] = Gather(%sh, %idx) {axis = 0}\n"
    "  %ax: i64[1] = const [0]\n"
    "  return %sh\n"
    "}\n",
    /* layouts and quoted symbols */
    "graph @blocked(%x: f32[\"batch size\",64,56,56]) {\n"
    "  %b: f32[\"batch size\",64,56,56]#nchw8c = Reorder(%x)\n"
    "  %r: f32[\"batch size\",64,56,56]#nchw8c = Relu(%b)\n"
    "  %t: f32[\"batch size\",64,56,56] = Reorder(%r)\n"
    "  return %t\n"
    "}\n",
};

static void test_roundtrip_text(void **state) {
  (void)state;
  /* constants print first, so texts written that way are canonical; the
   * third text is not canonical (constant after a node): checked apart */
  check_canonical(canonical_texts[0]);
  check_canonical(canonical_texts[1]);
  check_canonical(canonical_texts[3]);
  ncc_graph *g = parse_ok(canonical_texts[2]);
  char *t = check_roundtrip(g);
  assert_non_null(strstr(t, "  %ax: i64[1] = const [0]\n  %sh: i64[3] = Shape(%x)\n"));
  assert_non_null(strstr(t, "  %n: i64[] = Gather(%sh, %idx) {axis = 0}\n"));
  free(t);
  ncc_graph_free(g);
  /* comments, blank lines, free spacing and missing output types */
  g = parse_ok("// RUN: nothing\n\n graph   @m ( %x : f32 [ 2 , 2 ] )\n{ // c\n"
               "%y=Relu(%x)@r %z = Neg( %y ){ }\nreturn %z , %y }   // end\n");
  t = ncc_graph_print_string(g);
  assert_string_equal(t, "graph @m(%x: f32[2,2]) {\n"
                         "  %y: f32[2,2] = Relu(%x) @r\n"
                         "  %z: f32[2,2] = Neg(%y)\n"
                         "  return %z, %y\n"
                         "}\n");
  free(t);
  ncc_graph_free(g);
}

/* ---- floats ---- */

static float f32_bits(uint32_t b) {
  float f;
  memcpy(&f, &b, 4);
  return f;
}

/* 2000 random bit patterns plus the special ones, as a floats attribute
 * (always printed in decimal) and as constants in list form. */
static void test_float_exact(void **state) {
  (void)state;
  enum { K = 2000 };
  static const uint32_t special[] = {
      0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u,
      0xffc00000u, 0x7fc00001u, 0xffc12345u, 0x7f800001u, 0x00000001u,
      0x80000001u, 0x007fffffu, 0x00800000u, 0x7f7fffffu, 0x3dcccccdu,
      0x3f800000u, 0x4b800001u, 0x3727c5acu};
  float *v = malloc(sizeof(float) * K);
  assert_non_null(v);
  uint32_t seed = 12345;
  for (int i = 0; i < K; i++) {
    size_t ns = sizeof special / sizeof special[0];
    v[i] = f32_bits((size_t)i < ns ? special[i] : lcg(&seed));
  }
  ncc_graph *g = ncc_graph_new("f");
  ncc_shape s = shp(1, (int64_t)16);
  ncc_value *x = ncc_graph_add_value(g, "x", NCC_VAL_INPUT, NCC_DT_F32, &s);
  ncc_graph_add_input(g, x);
  ncc_node *n = ncc_graph_add_node(g, NCC_OP_IDENTITY, "id", 1, &x, 1);
  ncc_node_set_attr_floats(g, n, "a.vals", v, K);
  ncc_node_set_attr_float(g, n, "a.nz", -0.0f);
  ncc_node_set_attr_float(g, n, "a.qnan", f32_bits(0x7fc00001u));
  ncc_node_set_attr_float(g, n, "a.two", 2.0f);
  ncc_value *y = add_out(g, n, 0, "y");
  for (int c = 0; c < 4; c++) { /* the special values as constants */
    char nm[16];
    snprintf(nm, sizeof nm, "c%d", c);
    assert_non_null(ncc_graph_add_const(g, nm, NCC_DT_F32, &s, v + 16 * c));
  }
  double dv[8] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 0.1, 4.9e-324, 1e300};
  uint64_t nanbits = 0x7ff0000000000001ull;
  memcpy(&dv[4], &nanbits, 8);
  ncc_shape s8 = shp(1, (int64_t)8);
  assert_non_null(ncc_graph_add_const(g, "d", NCC_DT_F64, &s8, dv));
  uint16_t hv[8] = {0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x7e01, 0x0001, 0x3555};
  assert_non_null(ncc_graph_add_const(g, "h", NCC_DT_F16, &s8, hv));
  ncc_graph_add_output(g, y);
  assert_int_equal(ncc_infer_graph(g), NCC_OK);

  char *t = check_roundtrip(g);
  assert_non_null(strstr(t, "a.nz = -0.0"));
  assert_non_null(strstr(t, "a.qnan = nan(0x7fc00001)"));
  assert_non_null(strstr(t, "a.two = 2.0"));
  assert_non_null(strstr(t, "const [0.0, -0.0, inf, -inf, nan, -nan, nan(0x7fc00001), "
                            "nan(0xffc12345), nan(0x7f800001), 1e-45, -1e-45, "));
  assert_non_null(strstr(t, "%d: f64[8] = const [0.0, -0.0, inf, -inf, "
                            "nan(0x7ff0000000000001), 0.1, 5e-324, 1e+300]"));
  assert_non_null(strstr(t, "%h: f16[8] = const [0.0, -0.0, inf, -inf, nan, "
                            "nan(0x7e01), 5.9604645e-08, 0.33325195]"));
  ncc_graph *g2 = parse_ok(t);
  const ncc_attr *a = ncc_node_attr(g2->nodes[0], "a.vals");
  assert_non_null(a);
  assert_int_equal(a->kind, NCC_ATTR_FLOATS);
  assert_int_equal(a->n, K);
  assert_memory_equal(a->floats, v, sizeof(float) * K);
  assert_memory_equal(ncc_graph_find_value(g2, "d")->data, dv, sizeof dv);
  assert_memory_equal(ncc_graph_find_value(g2, "h")->data, hv, sizeof hv);
  for (int c = 0; c < 4; c++) {
    char nm[16];
    snprintf(nm, sizeof nm, "c%d", c);
    assert_memory_equal(ncc_graph_find_value(g2, nm)->data, v + 16 * c, 64);
  }
  ncc_graph_free(g2);
  free(t);
  ncc_graph_free(g);
  free(v);

  /* decimals that are not shortest still read exactly; f16 rounds to even */
  g = parse_ok("graph @f() {\n"
               "  %a: f32[3] = const [0.100000001, 1E2, -3.40282347e+38]\n"
               "  %h: f16[3] = const [65519.0, 65520.0, 1.00048828125]\n"
               "  return %a, %h\n}\n");
  float *a3 = ncc_graph_find_value(g, "a")->data;
  assert_true(a3[0] == 0.1f && a3[1] == 100.0f && a3[2] == -3.40282347e+38f);
  uint16_t *h3 = ncc_graph_find_value(g, "h")->data;
  assert_int_equal(h3[0], 0x7bff);
  assert_int_equal(h3[1], 0x7c00);
  assert_int_equal(h3[2], 0x3c00);
  t = ncc_graph_print_string(g);
  assert_non_null(strstr(t, "[0.1, 100.0, -3.4028235e+38]"));
  free(t);
  ncc_graph_free(g);
}

/* ---- attributes ---- */

static void test_attr_kinds(void **state) {
  (void)state;
  /* names with a '.' are annotations: Identity has no attributes of its
   * own, and the verifier checks op attributes against ir/attrs.def */
  const char *text =
      "graph @attrs(%x: f32[2,3]) {\n"
      "  %y: f32[2,3] = Identity(%x) {a.e_floats = floats[], a.e_ints = ints[], "
      "a.f = 1.5, a.fi = 3.0, a.finf = -inf, a.fl = [0.5, -2.0, 1e+20], a.i = -7, "
      "a.imax = 9223372036854775807, a.imin = -9223372036854775808, "
      "a.is = [1, -2, 3], a.s = \"a \\\"q\\\" \\\\ \\n\\t\\01\\ff\", "
      "a.t = tensor<i64[2]> [4, 5], a.t0 = tensor<f32[0]> [], "
      "a.tb = tensor<u8[20]> hex\"000102030405060708090a0b0c0d0e0f10111213\", "
      "a.ts = tensor<bool[17]> splat(true), \"a.weird key\" = \"\"}\n"
      "  return %y\n"
      "}\n";
  check_canonical(text);
  ncc_graph *g = parse_ok(text);
  const ncc_node *n = g->nodes[0];
  assert_int_equal(n->n_attrs, 16);
  assert_int_equal(ncc_node_attr(n, "a.e_ints")->kind, NCC_ATTR_INTS);
  assert_int_equal(ncc_node_attr(n, "a.e_ints")->n, 0);
  assert_int_equal(ncc_node_attr(n, "a.e_floats")->kind, NCC_ATTR_FLOATS);
  assert_int_equal(ncc_node_attr(n, "a.fi")->kind, NCC_ATTR_FLOAT);
  assert_true(ncc_attr_float(n, "a.fi", 0) == 3.0f);
  assert_int_equal(ncc_attr_int(n, "a.i", 0), -7);
  assert_int_equal(ncc_attr_int(n, "a.imin", 0), INT64_MIN);
  assert_string_equal(ncc_attr_string(n, "a.s", NULL), "a \"q\" \\ \n\t\x01\xff");
  const ncc_attr *t = ncc_node_attr(n, "a.t");
  assert_int_equal(t->kind, NCC_ATTR_TENSOR);
  assert_int_equal(t->t.dtype, NCC_DT_I64);
  assert_int_equal(((int64_t *)t->t.data)[1], 5);
  const ncc_attr *tb = ncc_node_attr(n, "a.tb");
  assert_int_equal(((unsigned char *)tb->t.data)[19], 0x13);
  assert_string_equal(ncc_attr_string(n, "a.weird key", NULL), "");
  ncc_graph_free(g);

  /* a list with any float is floats; bools outside 0/1 print as hex */
  g = parse_ok("graph @m(%x: f32[2]) {\n  %y: f32[2] = Identity(%x) {a.l = [1, 2.5]}\n"
               "  return %y\n}\n");
  assert_int_equal(ncc_node_attr(g->nodes[0], "a.l")->kind, NCC_ATTR_FLOATS);
  ncc_graph_free(g);
  g = ncc_graph_new("b");
  unsigned char bv[3] = {0, 1, 2};
  ncc_shape s3 = shp(1, (int64_t)3);
  ncc_value *bc = ncc_graph_add_const(g, "b", NCC_DT_BOOL, &s3, bv);
  ncc_graph_add_output(g, bc);
  char *txt = check_roundtrip(g);
  assert_non_null(strstr(txt, "%b: bool[3] = const hex\"000102\""));
  free(txt);
  ncc_graph_free(g);
}

/* Integer dtypes, a Constant node with a tensor attribute, ConstantOfShape
 * with a symbolic shape, and every data form for several dtypes. */
static void test_dtypes_and_data(void **state) {
  (void)state;
  check_canonical(
      "graph @d(%x: f32[N,2]) {\n"
      "  %a: i8[3] = const [-128, 0, 127]\n"
      "  %b: u8[2] = const [0, 255]\n"
      "  %c: i32[2] = const [-2147483648, 2147483647]\n"
      "  %e: bool[2] = const [true, false]\n"
      "  %z: i64[0] = const []\n"
      "  %big: i32[17] = const splat(-1)\n"
      "  %hx: i8[17] = const hex\"ff000102030405060708090a0b0c0d0e0f\"\n"
      "  %k: f32[2,2] = Constant() {value = tensor<f32[2,2]> [1.0, 2.0, 3.0, 4.0]}\n"
      "  %sh: i64[2] = Shape(%x)\n"
      "  %o: f32[N,2] = ConstantOfShape(%sh) {value = tensor<f32[1]> [0.5]}\n"
      "  return %o, %k\n"
      "}\n");
}

/* ---- parse errors ---- */

static void test_parse_errors(void **state) {
  (void)state;
  static const struct {
    const char *text, *msg;
  } cases[] = {
      {"", "bad.nir:1:1: expected 'graph'"},
      {"graph main() {}", "bad.nir:1:7: expected '@' and the graph name"},
      {"graph @g(%x: f32[2]) {\n  %y = Conc(%x)\n  return %y\n}\n",
       "bad.nir:2:8: unknown op 'Conc'"},
      {"graph @g(%x: f32[2]) {\n  %y = Relu(%q)\n  return %y\n}\n",
       "bad.nir:2:13: use of undefined value '%q'"},
      {"graph @g(%x: f32[2) {\n  return %x\n}\n", "bad.nir:1:19: expected ']'"},
      {"graph @g(%x: f33[2]) {\n  return %x\n}\n", "bad.nir:1:14: unknown dtype 'f33'"},
      {"graph @g(%x: f32[2]) {\n  %x = Relu(%x)\n  return %x\n}\n",
       "bad.nir:2:3: redefinition of value '%x'"},
      {"graph @g(%x: f32[2]) {\n  %y = Relu(%x, %x)\n  return %y\n}\n",
       "bad.nir:2:8: Relu takes 1 input, got 2"},
      {"graph @g(%x: f32[2]) {\n  %y = Conv(%x)\n  return %y\n}\n",
       "bad.nir:2:8: Conv takes 2 to 3 inputs, got 1"},
      {"graph @g(%x: f32[2]) {\n  %y = Add(%x, _)\n  return %y\n}\n",
       "bad.nir:2:16: input 1 of Add is required and cannot be '_'"},
      {"graph @g(%x: f32[2]) {\n  %y, %z = Relu(%x)\n  return %y\n}\n",
       "bad.nir:2:12: Relu has 1 output, got 2"},
      {"graph @g(%x: f32[2]) {\n  %y = Relu(%x) {a = 1, a = 2}\n  return %y\n}\n",
       "bad.nir:2:25: duplicate attribute 'a'"},
      {"graph @g(%x: f32[2]) {\n  %y = Relu(%x) {a = []}\n  return %y\n}\n",
       "bad.nir:2:22: an empty list needs a kind: ints[] or floats[]"},
      {"graph @g(%x: f32[2]) {\n  %y = Relu(%x) {a = ints[1.5]}\n  return %y\n}\n",
       "bad.nir:2:27: expected an integer"},
      {"graph @g(%x: f32[2]) {\n  %y = Relu(%x) {a = 99999999999999999999}\n  return %y\n}\n",
       "bad.nir:2:22: integer out of range"},
      {"graph @g() {\n  %c: f32[2] = const [1.0]\n  return %c\n}\n",
       "bad.nir:2:26: f32[2] needs 2 elements, got 1"},
      {"graph @g() {\n  %c: f32[1] = const [1.0, 2.0]\n  return %c\n}\n",
       "bad.nir:2:28: too many elements for f32[1]"},
      {"graph @g() {\n  %c: u8[1] = const [256]\n  return %c\n}\n",
       "bad.nir:2:22: 256 is out of range for u8"},
      {"graph @g() {\n  %c: f32[1] = const hex\"0000\"\n  return %c\n}\n",
       "bad.nir:2:25: hex data has 4 digits, f32[1] needs 8"},
      {"graph @g() {\n  %c: f32[1] = const hex\"0000g000\"\n  return %c\n}\n",
       "bad.nir:2:30: invalid hex digit"},
      {"graph @g(%x: f32[N]) {\n  %c: f32[N] = const [1.0]\n  return %c\n}\n",
       "bad.nir:2:3: a constant needs a static shape"},
      {"graph @g() {\n  %c: f32[1000000000,1000000] = const splat(0.0)\n  return %c\n}\n",
       "bad.nir:2:39: splat of f32[1000000000,1000000] is too large (at most 268435456 bytes)"},
      {"graph @g(%x: f32[1,2,3,4,5,6,7,8,9]) {\n  return %x\n}\n",
       "bad.nir:1:34: rank exceeds the maximum of 8"},
      {"graph @g(%x: f32[-1]) {\n  return %x\n}\n",
       "bad.nir:1:18: a dim must be a size >= 0 or a symbol"},
      {"graph @g(%x: f32[2]#nhwc) {\n  return %x\n}\n", "bad.nir:1:21: unknown layout '#nhwc'"},
      {"graph @g(%x: f32[2]) {\n  %y = Relu(%x) @\"a\\q\"\n  return %y\n}\n",
       "bad.nir:2:20: invalid escape in a string"},
      {"graph @g(%x: f32[2]) {\n  %y = Relu(%x) {s = \"abc}\n  return %y\n}\n",
       "bad.nir:2:22: unterminated string"},
      {"graph @g(%x: f32[2]) {\n  %\"a\\00\" = Relu(%x)\n  return %x\n}\n",
       "bad.nir:2:3: a value name contains a NUL byte"},
      {"graph @g(%x: f32[2]) {\n  %y = Relu(%x) $\n  return %y\n}\n",
       "bad.nir:2:17: unexpected character '$'"},
      {"graph @g(%x: f32[2]) {\n  %y = Relu(%x)\n  return %y\n} x",
       "bad.nir:4:3: expected the end of the input after '}'"},
      {"graph @g(%x: f32[2]) {\n  %y = Relu(%x)\n", "bad.nir:3:1: expected 'return' before the end of the graph"},
      {"graph @g(%x: f32[2]) {\n  %y: f32[3] = Relu(%x)\n  return %y\n}\n",
       "bad.nir:2:3: node #0 (Relu): output 'y' is declared with shape [3] but has [2]"},
      {"graph @g(%x: f32[2]) {\n  %y: f32[] = Relu(%x)\n  return %y\n}\n",
       "bad.nir:2:3: '%y' is declared f32[] but Relu infers f32[2]"},
      {"graph @g(%x: f32[N]) {\n  %y: f32[M] = Relu(%x)\n  return %y\n}\n",
       "bad.nir:2:3: '%y' is declared f32[M] but Relu infers f32[N]"},
      {"graph @g(%x: f32[2]) {\n  %y = Relu(%x) {a = nan(0x7f800000)}\n  return %y\n}\n",
       "bad.nir:2:26: nan(0x...) must hold the bits of a NaN"},
      {"graph @g(%x: f32[2]) {\n  %y = Relu(%x) {a = 1.2.3}\n  return %y\n}\n",
       "bad.nir:2:22: malformed number"},
      {"graph @g(%x: f32[2]) {\n  %c: f32[1] = Relu(%x) @n / \n  return %c\n}\n",
       "bad.nir:2:28: expected '//' to start a comment"},
      {"graph @g(%x: f32[2]) {\n  %c = const [1.0]\n  return %c\n}\n",
       "bad.nir:2:3: a constant needs a type"},
      {"graph @g(%x: f32[2]) {\n  %y = Relu(%x)\n  return %y,\n}\n",
       "bad.nir:4:1: expected a value name"},
      {"graph @g(%x: f32[2]) {\n  %y = Relu(%x) {a = tensor<f32[2]#nchw8c> [1.0, 2.0]}\n"
       "  return %y\n}\n",
       "bad.nir:2:35: a tensor attribute has no layout"},
  };
  int bad = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    bad += !parse_error_is(cases[i].text, cases[i].msg);
  assert_int_equal(bad, 0);

  /* NUL bytes and other binary input are diagnosed, not trusted */
  const char bin[] = "graph @g(%x: f32[2]) {\0\xff";
  ncc_graph *g = NULL;
  assert_int_equal(ncc_graph_parse_text(bin, sizeof bin - 1, "b.nir", &g), NCC_ERR_INPUT);
  assert_string_equal(ncc_error_message(), "b.nir:1:23: unexpected character '\\x00'");
}

static void test_parse_file(void **state) {
  (void)state;
  char path[] = "/tmp/ncc_test_text_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  const char *text = "graph @f(%x: f32[2]) {\n  %y: f32[2] = Exp(%x)\n  return %y\n}\n";
  assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
  close(fd);
  ncc_graph *g = NULL;
  assert_int_equal(ncc_graph_parse_file(path, &g), NCC_OK);
  char *t = ncc_graph_print_string(g);
  assert_string_equal(t, text);
  free(t);
  /* ncc_graph_print to a FILE gives the same text */
  FILE *f = tmpfile();
  assert_non_null(f);
  assert_int_equal(ncc_graph_print(g, f), NCC_OK);
  char buf[256] = {0};
  rewind(f);
  assert_int_equal(fread(buf, 1, sizeof buf - 1, f), strlen(text));
  assert_string_equal(buf, text);
  fclose(f);
  /* a write error is reported, not ignored */
  f = fopen("/dev/full", "w");
  if (f) {
    assert_int_equal(ncc_graph_print(g, f), NCC_ERR_INPUT);
    assert_string_equal(ncc_error_message(), "cannot write the text IR");
    fclose(f);
  }
  ncc_graph_free(g);
  unlink(path);
  assert_int_equal(ncc_graph_parse_file("/nonexistent/x.nir", &g), NCC_ERR_INPUT);
  assert_non_null(strstr(ncc_error_message(), "cannot open '/nonexistent/x.nir'"));
}

/* ---- hash ---- */

static void test_hash(void **state) {
  (void)state;
  ncc_graph *a = build_graph("x", "N");
  ncc_graph *b = build_graph("renamed input", "batch");
  assert_true(ncc_graph_hash(a) == ncc_graph_hash(b));

  const char *base = "graph @h(%x: f32[N,4], %y: f32[N,4]) {\n"
                     "  %k: f32[4] = const [1.0, 2.0, 3.0, 4.0]\n"
                     "  %s: f32[N,4] = Sub(%x, %y) @s\n"
                     "  %m: f32[N,4] = Mul(%s, %k)\n"
                     "  %r: f32[N,4] = LeakyRelu(%m) {alpha = 0.1}\n"
                     "  return %r\n}\n";
  const char *variants[] = {
      /* renamed values, nodes, graph and symbol: equal */
      "graph @other(%a: f32[B,4], %b: f32[B,4]) {\n"
      "  %kk: f32[4] = const [1.0, 2.0, 3.0, 4.0]\n"
      "  %t: f32[B,4] = Sub(%a, %b) @first\n"
      "  %u: f32[B,4] = Mul(%t, %kk) @second\n"
      "  %v: f32[B,4] = LeakyRelu(%u) {alpha = 0.1}\n"
      "  return %v\n}\n",
      /* changed attribute */
      "graph @h(%x: f32[N,4], %y: f32[N,4]) {\n"
      "  %k: f32[4] = const [1.0, 2.0, 3.0, 4.0]\n"
      "  %s: f32[N,4] = Sub(%x, %y) @s\n"
      "  %m: f32[N,4] = Mul(%s, %k)\n"
      "  %r: f32[N,4] = LeakyRelu(%m) {alpha = 0.2}\n"
      "  return %r\n}\n",
      /* changed wiring */
      "graph @h(%x: f32[N,4], %y: f32[N,4]) {\n"
      "  %k: f32[4] = const [1.0, 2.0, 3.0, 4.0]\n"
      "  %s: f32[N,4] = Sub(%y, %x) @s\n"
      "  %m: f32[N,4] = Mul(%s, %k)\n"
      "  %r: f32[N,4] = LeakyRelu(%m) {alpha = 0.1}\n"
      "  return %r\n}\n",
      /* changed constant data */
      "graph @h(%x: f32[N,4], %y: f32[N,4]) {\n"
      "  %k: f32[4] = const [1.0, 2.0, 3.0, 5.0]\n"
      "  %s: f32[N,4] = Sub(%x, %y) @s\n"
      "  %m: f32[N,4] = Mul(%s, %k)\n"
      "  %r: f32[N,4] = LeakyRelu(%m) {alpha = 0.1}\n"
      "  return %r\n}\n",
      /* changed type */
      "graph @h(%x: f32[N,4], %y: f32[1,4]) {\n"
      "  %k: f32[4] = const [1.0, 2.0, 3.0, 4.0]\n"
      "  %s: f32[N,4] = Sub(%x, %y) @s\n"
      "  %m: f32[N,4] = Mul(%s, %k)\n"
      "  %r: f32[N,4] = LeakyRelu(%m) {alpha = 0.1}\n"
      "  return %r\n}\n",
      /* two distinct symbols instead of one */
      "graph @h(%x: f32[N,4], %y: f32[M,4]) {\n"
      "  %k: f32[4] = const [1.0, 2.0, 3.0, 4.0]\n"
      "  %s: f32[N,4] = Sub(%x, %y) @s\n"
      "  %m: f32[N,4] = Mul(%s, %k)\n"
      "  %r: f32[N,4] = LeakyRelu(%m) {alpha = 0.1}\n"
      "  return %r\n}\n",
  };
  ncc_graph *g0 = parse_ok(base);
  uint64_t h0 = ncc_graph_hash(g0);
  for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++) {
    ncc_graph *gv = parse_ok(variants[i]);
    if (i == 0) assert_true(ncc_graph_hash(gv) == h0);
    else assert_true(ncc_graph_hash(gv) != h0);
    ncc_graph_free(gv);
  }
  /* attribute order does not matter */
  ncc_node *conv_a = a->nodes[0];
  ncc_attr tmp = conv_a->attrs[0];
  conv_a->attrs[0] = conv_a->attrs[1];
  conv_a->attrs[1] = tmp;
  assert_true(ncc_graph_hash(a) == ncc_graph_hash(b));
  assert_true(ncc_node_hash(conv_a) == ncc_node_hash(b->nodes[0]));

  /* node hash: same op/attrs/input types hash alike whatever the names and
   * weights; an attribute or an input type changes it */
  ncc_graph *r = parse_ok("graph @r(%x: f32[1,4,8,8]) {\n"
                          "  %w1: f32[4,4,3,3] = const splat(1.0)\n"
                          "  %w2: f32[4,4,3,3] = const splat(2.0)\n"
                          "  %a: f32[1,4,8,8] = Conv(%x, %w1) {pads = [1, 1, 1, 1]} @c1\n"
                          "  %b: f32[1,4,8,8] = Conv(%a, %w2) {pads = [1, 1, 1, 1]} @c2\n"
                          "  %c: f32[1,4,6,6] = Conv(%b, %w2) {pads = [0, 0, 0, 0]} @c3\n"
                          "  %d: f32[1,4,8,8] = Relu(%a)\n"
                          "  return %c, %d\n}\n");
  assert_true(ncc_node_hash(r->nodes[0]) == ncc_node_hash(r->nodes[1]));
  assert_true(ncc_node_hash(r->nodes[1]) != ncc_node_hash(r->nodes[2]));
  assert_true(ncc_node_hash(r->nodes[0]) != ncc_node_hash(r->nodes[3]));
  ncc_graph_free(r);
  ncc_graph_free(g0);
  ncc_graph_free(a);
  ncc_graph_free(b);
}

/* ---- verifier ---- */

static const char *const vbase =
    "graph @v(%x: f32[2,3]) {\n"
    "  %k: f32[3] = const [1.0, 2.0, 3.0]\n"
    "  %a: f32[2,3] = Add(%x, %k) @add\n"
    "  %r: f32[2,3] = Relu(%a) @relu\n"
    "  %n: f32[2,3] = Neg(%r)\n"
    "  return %n\n}\n";

static void expect_verify(ncc_graph *g, const char *needle) {
  ncc_status st = ncc_graph_verify(g);
  if (st == NCC_OK || !strstr(ncc_error_message(), needle))
    fprintf(stderr, "want '%s', got '%s'\n", needle, st ? ncc_error_message() : "OK");
  assert_int_not_equal(st, NCC_OK);
  assert_non_null(strstr(ncc_error_message(), needle));
  ncc_graph_free(g);
}

static void test_verify(void **state) {
  (void)state;
  ncc_graph *g = parse_ok(vbase);
  assert_int_equal(ncc_graph_verify(g), NCC_OK);
  ncc_graph_free(g);

  /* nodes out of topological order */
  g = parse_ok(vbase);
  ncc_node *t = g->nodes[1];
  g->nodes[1] = g->nodes[2], g->nodes[2] = t;
  g->nodes[1]->id = 1, g->nodes[2]->id = 2;
  expect_verify(g, "node #1 (Neg): input 0 'r' is used before it is produced");

  /* a node using its own output: a cycle */
  g = parse_ok(vbase);
  g->nodes[1]->in[0] = g->nodes[1]->out[0];
  expect_verify(g, "node 'relu' (Relu): input 0 'r' is its own output (a cycle)");

  /* a value produced twice */
  g = parse_ok(vbase);
  g->nodes[2]->out[0] = g->nodes[1]->out[0];
  expect_verify(g, "node #2 (Neg): output 0 'r' is already defined elsewhere");

  /* producer not recorded */
  g = parse_ok(vbase);
  g->nodes[1]->out[0]->producer = g->nodes[0];
  expect_verify(g, "node 'relu' (Relu): output 0 'r' does not record this node as its producer");

  /* an undefined graph output (a value nothing produces) */
  g = parse_ok(vbase);
  ncc_value *lost = ncc_graph_add_value(g, "lost", NCC_VAL_NODE, NCC_DT_F32, NULL);
  g->outputs[0] = lost;
  expect_verify(g, "graph output 0 'lost' is not defined");

  /* an input whose producer was removed */
  g = parse_ok(vbase);
  bool dead[3] = {false, true, false};
  ncc_graph_remove_nodes(g, dead);
  expect_verify(g, "node #1 (Neg): input 0 'r' is not defined (its producer is not in the graph)");

  /* arity out of the op's range, and a required input missing */
  g = parse_ok(vbase);
  g->nodes[0]->n_in = 1;
  expect_verify(g, "node 'add' (Add): has 1 inputs, Add takes 2");
  g = parse_ok(vbase);
  g->nodes[0]->in[1] = NULL;
  expect_verify(g, "node 'add' (Add): required input 1 is missing");
  g = parse_ok(vbase);
  g->nodes[2]->n_out = 2;
  expect_verify(g, "node #2 (Neg): has 2 outputs, Neg has 1");

  /* graph inputs: listed twice, or an input value missing from the list */
  g = parse_ok(vbase);
  ncc_graph_add_input(g, g->inputs[0]);
  expect_verify(g, "graph input 'x' is listed twice");
  g = parse_ok(vbase);
  g->n_inputs = 0;
  expect_verify(g, "node 'add' (Add): input 0 'x' is an input value missing from the graph inputs");

  /* a constant without data */
  g = parse_ok(vbase);
  ncc_graph_find_value(g, "k")->data = NULL;
  expect_verify(g, "constant 'k' has no data");

  /* duplicate names */
  g = parse_ok(vbase);
  ncc_graph_find_value(g, "r")->name = "a";
  expect_verify(g, "value name 'a' is not unique");

  /* rank and dims */
  g = parse_ok(vbase);
  ncc_graph_find_value(g, "r")->shape.rank = 9;
  expect_verify(g, "node 'relu' (Relu): output 0 'r' has rank 9 (at most 8)");
  g = parse_ok(vbase);
  ncc_graph_find_value(g, "r")->shape.d[0] = -5;
  expect_verify(g, "node 'relu' (Relu): output 0 'r' has an invalid dim 0 (-5)");
  g = parse_ok(vbase);
  ncc_graph_find_value(g, "x")->shape.d[1] = ncc_dim_sym(3);
  expect_verify(g, "graph input 'x' has an invalid dim 1");

  /* a stored type inference disagrees with */
  g = parse_ok(vbase);
  ncc_graph_find_value(g, "r")->shape.d[1] = 4;
  expect_verify(g, "node 'relu' (Relu): output 0 'r' is f32[2,4] but inference gives f32[2,3]");
  g = parse_ok(vbase);
  ncc_graph_find_value(g, "n")->dtype = NCC_DT_I64;
  expect_verify(g, "node #2 (Neg): output 0 'n' is i64[2,3] but inference gives f32[2,3]");

  /* a malformed attribute, an invalid op */
  g = parse_ok(vbase);
  ncc_node_set_attr_ints(g, g->nodes[1], "bad", NULL, 0);
  g->nodes[1]->attrs[0].n = -1;
  expect_verify(g, "node 'relu' (Relu): attribute 'bad' is malformed");
  g = parse_ok(vbase);
  g->nodes[1]->op = NCC_OP_COUNT;
  expect_verify(g, "node #1 has an invalid op");

  /* fresh symbols minted while verifying are dropped again */
  g = parse_ok("graph @s(%x: f32[6], %s: i64[2]) {\n"
               "  %r: f32[A,B] = Reshape(%x, %s)\n  return %r\n}\n");
  int n_syms = g->n_syms;
  assert_int_equal(ncc_graph_verify(g), NCC_OK);
  assert_int_equal(ncc_graph_verify(g), NCC_OK);
  assert_int_equal(g->n_syms, n_syms);
  char *txt = check_roundtrip(g);
  assert_non_null(strstr(txt, "%r: f32[A,B] = Reshape(%x, %s)"));
  free(txt);
  ncc_graph_free(g);
}

/* ---- allocation failure ---- */

/* Fail the k-th allocation for k = 0, 1, ... until a run sees no failure:
 * every failure must come back as NCC_ERR_NOMEM (never a crash or another
 * error), and a graph that did parse must print and verify or say NOMEM. */
static void check_alloc_failure(const char *text) {
  bool clean = false;
  for (int k = 0; k < 5000 && !clean; k++) {
    test_alloc_arm(k);
    ncc_graph *g = NULL;
    ncc_status st = ncc_graph_parse_text(text, strlen(text), "a.nir", &g);
    if (st != NCC_OK) {
      if (st != NCC_ERR_NOMEM) fprintf(stderr, "k=%d: %s\n", k, ncc_error_message());
      assert_int_equal(st, NCC_ERR_NOMEM);
      assert_null(g);
      continue;
    }
    char *t = ncc_graph_print_string(g);
    (void)ncc_graph_hash(g);
    ncc_status vs = ncc_graph_verify(g);
    assert_true(vs == NCC_OK || vs == NCC_ERR_NOMEM);
    if (t) {
      assert_string_equal(t, text);
      free(t);
    }
    clean = test_alloc_ran_clean();
    ncc_graph_free(g);
  }
  test_alloc_disarm();
  assert_true(clean);
}

static const char *const alloc_text =
    "graph @a(%x: f32[N,2]) {\n"
    "  %c: f32[2] = const [1.0, nan]\n"
    "  %h: i8[20] = const hex\"000102030405060708090a0b0c0d0e0f10111213\"\n"
    "  %s: f32[32] = const splat(0.5)\n"
    "  %y: f32[N,2] = Add(%x, %c) @add\n"
    "  %z: f32[N,2] = LeakyRelu(%y) {a.l = [1.0, 2.0], a.s = \"s\", "
    "a.t = tensor<i64[2]> [1, 2], alpha = 0.5}\n"
    "  return %z\n"
    "}\n";

static void test_alloc_failure(void **state) {
  (void)state;
  check_alloc_failure(canonical_texts[1]);
  check_alloc_failure(alloc_text);
  check_alloc_failure(canonical_texts[3]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_roundtrip_api),   cmocka_unit_test(test_roundtrip_text),
      cmocka_unit_test(test_float_exact),     cmocka_unit_test(test_attr_kinds),
      cmocka_unit_test(test_dtypes_and_data), cmocka_unit_test(test_parse_errors),
      cmocka_unit_test(test_parse_file),      cmocka_unit_test(test_hash),
      cmocka_unit_test(test_verify),          cmocka_unit_test(test_alloc_failure),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
