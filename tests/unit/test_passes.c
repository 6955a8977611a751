/* tests/unit/test_passes.c — the pass manager (levels, explicit lists,
 * disabling, dependencies, unknown names, statistics) and the passes
 * (const-fold, simplify, bn-fold, cse, dce), checking that each rewrite
 * keeps the graph's results: bit for bit where the pass claims exactness,
 * within float rounding for bn-fold. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ir/ir.h"
#include "ir/shape.h"
#include "passes/pass.h"

static ncc_value *input(ncc_graph *g, const char *name, int rank,
                        const int64_t *d) {
  ncc_shape s = {rank, {0}};
  memcpy(s.d, d, sizeof(int64_t) * (size_t)rank);
  ncc_value *v = ncc_graph_add_value(g, name, NCC_VAL_INPUT, NCC_DT_F32, &s);
  assert_non_null(v);
  assert_int_equal(ncc_graph_add_input(g, v), NCC_OK);
  return v;
}

static ncc_value *node1(ncc_graph *g, ncc_op op, int n_in, ncc_value **in,
                        const char *out) {
  ncc_node *n = ncc_graph_add_node(g, op, out, n_in, in, 1);
  assert_non_null(n);
  ncc_value *v = ncc_graph_add_value(g, out, NCC_VAL_NODE, NCC_DT_UNDEF, NULL);
  assert_non_null(v);
  ncc_node_set_output(n, 0, v);
  return v;
}

/* y = Relu(x) + Relu(x) + (c1 + c2), plus a dead Exp(x). */
static ncc_graph *sample(void) {
  ncc_graph *g = ncc_graph_new("s");
  int64_t d[2] = {2, 3};
  ncc_value *x = input(g, "x", 2, d);
  float c[3] = {1, 2, 3};
  ncc_shape cs = {1, {3}};
  ncc_value *c1 = ncc_graph_add_const(g, "c1", NCC_DT_F32, &cs, c);
  ncc_value *c2 = ncc_graph_add_const(g, "c2", NCC_DT_F32, &cs, c);
  ncc_value *r1 = node1(g, NCC_OP_RELU, 1, &x, "r1");
  ncc_value *r2 = node1(g, NCC_OP_RELU, 1, &x, "r2");
  node1(g, NCC_OP_EXP, 1, &x, "dead");
  ncc_value *a[2] = {r1, r2};
  ncc_value *s = node1(g, NCC_OP_ADD, 2, a, "s");
  ncc_value *b[2] = {c1, c2};
  ncc_value *cc = node1(g, NCC_OP_ADD, 2, b, "cc");
  ncc_value *e[2] = {s, cc};
  ncc_value *y = node1(g, NCC_OP_ADD, 2, e, "y");
  assert_int_equal(ncc_graph_add_output(g, y), NCC_OK);
  assert_int_equal(ncc_infer_graph(g), NCC_OK);
  return g;
}

static void run_ref(const ncc_graph *g, float *out6) {
  ncc_tensor in, out;
  int64_t d[2] = {2, 3};
  assert_int_equal(ncc_tensor_alloc(&in, NCC_DT_F32, 2, d), NCC_OK);
  float *p = in.data;
  for (int i = 0; i < 6; i++) p[i] = (float)i - 2.5f;
  assert_int_equal(ncc_ref_run(g, &in, 1, &out, 1), NCC_OK);
  memcpy(out6, out.data, 6 * sizeof(float));
  ncc_tensor_free(&in);
  ncc_tensor_free(&out);
}

static void test_levels(void **st) {
  (void)st;
  ncc_pipeline *p;
  assert_int_equal(ncc_pipeline_new(0, &p), NCC_OK);
  ncc_graph *g = sample();
  assert_int_equal(ncc_pipeline_run(p, g), NCC_OK);
  assert_int_equal(ncc_pipeline_num_ran(p), 0);
  assert_int_equal(ncc_graph_num_nodes(g), 6);
  ncc_pipeline_free(p);
  ncc_graph_free(g);

  assert_int_equal(ncc_pipeline_new(2, &p), NCC_OK);
  g = sample();
  float before[6], after[6];
  run_ref(g, before);
  ncc_pipeline_set_verify_each(p, 1);
  assert_int_equal(ncc_pipeline_run(p, g), NCC_OK);
  assert_true(ncc_pipeline_num_ran(p) >= 3);
  /* const-fold removed cc, dce removed dead, cse merged r2 into r1 */
  assert_int_equal(ncc_graph_num_nodes(g), 3);
  run_ref(g, after);
  assert_memory_equal(before, after, sizeof before);
  assert_string_equal(ncc_graph_output_name(g, 0), "y");
  ncc_pipeline_free(p);
  ncc_graph_free(g);
  assert_int_equal(ncc_pipeline_new(4, &p), NCC_ERR_USAGE);
}

static void test_explicit_and_disable(void **st) {
  (void)st;
  ncc_pipeline *p;
  assert_int_equal(ncc_pipeline_new(2, &p), NCC_OK);
  assert_int_equal(ncc_pipeline_set_passes(p, "dce"), NCC_OK);
  ncc_graph *g = sample();
  assert_int_equal(ncc_pipeline_run(p, g), NCC_OK);
  assert_int_equal(ncc_pipeline_num_ran(p), 1);
  assert_string_equal(ncc_pipeline_ran_name(p, 0), "dce");
  assert_int_equal(ncc_graph_num_nodes(g), 5); /* only the dead Exp went */
  ncc_graph_free(g);
  ncc_pipeline_free(p);

  assert_int_equal(ncc_pipeline_new(2, &p), NCC_OK);
  assert_int_equal(ncc_pipeline_disable(p, "cse"), NCC_OK);
  g = sample();
  assert_int_equal(ncc_pipeline_run(p, g), NCC_OK);
  for (int i = 0; i < ncc_pipeline_num_ran(p); i++)
    assert_string_not_equal(ncc_pipeline_ran_name(p, i), "cse");
  assert_int_equal(ncc_graph_num_nodes(g), 4); /* both Relus stay */
  ncc_graph_free(g);

  assert_int_equal(ncc_pipeline_set_passes(p, "dce,nosuch"), NCC_ERR_USAGE);
  assert_non_null(strstr(ncc_error_message(), "unknown pass 'nosuch'"));
  assert_int_equal(ncc_pipeline_disable(p, "fusion-typo"), NCC_ERR_USAGE);
  assert_int_equal(ncc_pipeline_print_after(p, "zzz", stderr), NCC_ERR_USAGE);
  ncc_pipeline_free(p);
}

static void test_registry(void **st) {
  (void)st;
  assert_true(ncc_pass_count() >= 3);
  for (int i = 0; i < ncc_pass_count(); i++) {
    const char *name, *needs, *desc;
    int level;
    assert_int_equal(ncc_pass_info(i, &name, &level, &needs, &desc), NCC_OK);
    assert_true(level >= 0 && level <= 3);
    assert_true(strlen(desc) > 10);
  }
  assert_int_equal(ncc_pass_info(-1, NULL, NULL, NULL, NULL), NCC_ERR_USAGE);
}

static void test_shape_subgraph_folds(void **st) {
  (void)st;
  /* Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])) with x static */
  ncc_graph *g = ncc_graph_new("f");
  int64_t d[3] = {4, 2, 3};
  ncc_value *x = input(g, "x", 3, d);
  ncc_value *sh = node1(g, NCC_OP_SHAPE, 1, &x, "sh");
  int64_t zero = 0, minus1 = -1;
  ncc_shape sc = {0, {0}}, s1 = {1, {1}};
  ncc_value *i0 = ncc_graph_add_const(g, "i0", NCC_DT_I64, &sc, &zero);
  ncc_value *ax = ncc_graph_add_const(g, "ax", NCC_DT_I64, &s1, &zero);
  ncc_value *m1 = ncc_graph_add_const(g, "m1", NCC_DT_I64, &s1, &minus1);
  ncc_value *ga[2] = {sh, i0};
  ncc_value *gd = node1(g, NCC_OP_GATHER, 2, ga, "gd");
  ncc_value *ua[2] = {gd, ax};
  ncc_value *un = node1(g, NCC_OP_UNSQUEEZE, 2, ua, "un");
  ncc_value *ca[2] = {un, m1};
  ncc_node *cat = ncc_graph_add_node(g, NCC_OP_CONCAT, "cat", 2, ca, 1);
  ncc_value *cv = ncc_graph_add_value(g, "cv", NCC_VAL_NODE, NCC_DT_UNDEF, NULL);
  ncc_node_set_output(cat, 0, cv);
  assert_int_equal(ncc_node_set_attr_int(g, cat, "axis", 0), NCC_OK);
  ncc_value *ra[2] = {x, cv};
  ncc_value *y = node1(g, NCC_OP_RESHAPE, 2, ra, "y");
  assert_int_equal(ncc_graph_add_output(g, y), NCC_OK);
  assert_int_equal(ncc_infer_graph(g), NCC_OK);

  ncc_graph_stats s0, s1st;
  ncc_graph_compute_stats(g, 1, &s0);
  ncc_pipeline *p;
  assert_int_equal(ncc_pipeline_new(1, &p), NCC_OK);
  assert_int_equal(ncc_pipeline_run(p, g), NCC_OK);
  assert_int_equal(ncc_graph_num_nodes(g), 1); /* just the Reshape */
  assert_int_equal(g->nodes[0]->op, NCC_OP_RESHAPE);
  assert_int_equal(g->nodes[0]->in[1]->kind, NCC_VAL_CONST);
  const int64_t *shape = g->nodes[0]->in[1]->data;
  assert_int_equal(shape[0], 4);
  assert_int_equal(shape[1], -1);
  ncc_graph_compute_stats(g, 1, &s1st);
  assert_true(s1st.kernels < s0.kernels);
  ncc_pipeline_free(p);
  ncc_graph_free(g);
}

static void test_stats(void **st) {
  (void)st;
  ncc_graph *g = ncc_graph_new("m");
  int64_t da[2] = {8, 16}, db[2] = {16, 4};
  ncc_value *a = input(g, "a", 2, da);
  ncc_value *b = input(g, "b", 2, db);
  ncc_value *ab[2] = {a, b};
  ncc_value *y = node1(g, NCC_OP_MATMUL, 2, ab, "y");
  assert_int_equal(ncc_graph_add_output(g, y), NCC_OK);
  assert_int_equal(ncc_infer_graph(g), NCC_OK);
  ncc_graph_stats s;
  ncc_graph_compute_stats(g, 1, &s);
  assert_int_equal(s.kernels, 1);
  assert_true(s.flops == 2.0 * 8 * 4 * 16);
  assert_true(s.bytes_moved == 4.0 * (8 * 16 + 16 * 4 + 8 * 4));
  assert_true(s.peak_act_bytes == 4.0 * (8 * 16 + 16 * 4 + 8 * 4));
  ncc_graph_free(g);
}

/* ---- graphs from text IR, and running them ---- */

typedef struct text {
  char *buf;
  size_t len, cap;
} text;

static void put(text *t, const char *fmt, ...) {
  va_list ap;
  if (!t->buf) {
    t->cap = 4096;
    t->buf = malloc(t->cap);
    assert_non_null(t->buf);
  }
  for (;;) {
    va_start(ap, fmt);
    int n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    assert_true(n >= 0);
    if ((size_t)n < t->cap - t->len) {
      t->len += (size_t)n;
      return;
    }
    t->cap = t->cap * 2 + (size_t)n + 64;
    t->buf = realloc(t->buf, t->cap);
    assert_non_null(t->buf);
  }
}

/* A seeded pseudo-random float in [lo, hi). */
static float rnd(uint32_t *s, float lo, float hi) {
  *s = *s * 1664525u + 1013904223u;
  return lo + (hi - lo) * (float)(*s >> 8) / 16777216.0f;
}

/* `%name: f32[dims] = const [...]` with n random elements. */
static void put_const(text *t, const char *name, const char *dims, int n,
                      uint32_t seed, float lo, float hi) {
  put(t, "  %%%s: f32[%s] = const [", name, dims);
  for (int i = 0; i < n; i++) put(t, "%s%.9g", i ? ", " : "", rnd(&seed, lo, hi));
  put(t, "]\n");
}

static ncc_graph *parse(const char *src) {
  ncc_graph *g = NULL;
  ncc_status st = ncc_graph_parse_text(src, strlen(src), "test.nir", &g);
  if (st) fprintf(stderr, "parse: %s\n", ncc_error_message());
  assert_int_equal(st, NCC_OK);
  return g;
}

/* Run the passes of `list` (comma-separated) with the verifier after each. */
static ncc_status run_passes(ncc_graph *g, const char *list) {
  ncc_pipeline *p;
  assert_int_equal(ncc_pipeline_new(2, &p), NCC_OK);
  assert_int_equal(ncc_pipeline_set_passes(p, list), NCC_OK);
  ncc_pipeline_set_verify_each(p, 1);
  ncc_status st = ncc_pipeline_run(p, g);
  if (st) fprintf(stderr, "pipeline: %s\n", ncc_error_message());
  ncc_pipeline_free(p);
  return st;
}

static int count_op(const ncc_graph *g, ncc_op op) {
  int n = 0;
  for (int i = 0; i < g->n_nodes; i++) n += g->nodes[i]->op == op;
  return n;
}

/* Run g on one f32 input of shape dims (seeded values, with a few special
 * values mixed in when `specials`); returns output 0 (free it). */
static ncc_tensor run_one(const ncc_graph *g, int rank, const int64_t *dims,
                          bool specials) {
  ncc_tensor in, out;
  assert_int_equal(ncc_tensor_alloc(&in, NCC_DT_F32, rank, dims), NCC_OK);
  float *p = in.data;
  uint32_t seed = 7;
  int64_t n = ncc_tensor_numel(&in);
  for (int64_t i = 0; i < n; i++) p[i] = rnd(&seed, -3, 3);
  if (specials && n >= 6) {
    p[0] = -0.0f;
    p[1] = INFINITY;
    p[2] = -INFINITY;
    p[3] = NAN;
    p[4] = 1e-30f;
    p[5] = 3e38f;
  }
  memset(&out, 0, sizeof out);
  assert_int_equal(ncc_ref_run(g, &in, 1, &out, 1), NCC_OK);
  ncc_tensor_free(&in);
  return out;
}

/* Optimize a copy of `src` with `passes`; the output must equal the
 * original's bit for bit (tol < 0) or within tol relative to max |y|. */
static ncc_graph *check_numerics(const char *src, const char *passes, int rank,
                                 const int64_t *dims, double tol) {
  ncc_graph *g0 = parse(src), *g1 = parse(src);
  assert_int_equal(run_passes(g1, passes), NCC_OK);
  ncc_tensor a = run_one(g0, rank, dims, tol < 0);
  ncc_tensor b = run_one(g1, rank, dims, tol < 0);
  assert_int_equal(a.rank, b.rank);
  assert_memory_equal(a.dims, b.dims, sizeof(int64_t) * (size_t)a.rank);
  int64_t n = ncc_tensor_numel(&a);
  if (tol < 0) {
    assert_memory_equal(a.data, b.data, ncc_tensor_nbytes(&a));
  } else {
    const float *pa = a.data, *pb = b.data;
    double mx = 0;
    for (int64_t i = 0; i < n; i++) mx = fmax(mx, fabs(pa[i]));
    for (int64_t i = 0; i < n; i++)
      if (fabs((double)pa[i] - pb[i]) > tol * (mx > 1 ? mx : 1)) {
        fprintf(stderr, "element %lld: %g vs %g\n", (long long)i, pa[i], pb[i]);
        fail();
      }
  }
  ncc_tensor_free(&a);
  ncc_tensor_free(&b);
  ncc_graph_free(g0);
  return g1;
}

/* ---- simplify ---- */

static void test_simplify_chain(void **st) {
  (void)st;
  /* Every rule once, in one chain; only the Relu and the Mul of x^2 stay. */
  const char *src =
      "graph @g(%x: f32[N,4,6]) {\n"
      "  %one: f32[6] = const splat(1.0)\n"
      "  %zero: f32[] = const [0.0]\n"
      "  %nz: f32[] = const [-0.0]\n"
      "  %two: f32[] = const [2.0]\n"
      "  %s24: i64[2] = const [-1, 24]\n"
      "  %s46: i64[3] = const [-1, 4, 6]\n"
      "  %ax: i64[1] = const [1]\n"
      "  %st: i64[1] = const [0]\n"
      "  %en: i64[1] = const [100]\n"
      "  %sx: i64[1] = const [2]\n"
      "  %pz: i64[6] = const [0, 0, 0, 0, 0, 0]\n"
      "  %a = Identity(%x)\n"
      "  %b = Mul(%a, %one)\n"
      "  %c = Add(%zero, %b)\n"
      "  %d = Sub(%c, %nz)\n"
      "  %e = Div(%d, %one)\n"
      "  %f = Cast(%e) {to = \"f32\"}\n"
      "  %t1 = Transpose(%f) {perm = [0, 2, 1]}\n"
      "  %t2 = Transpose(%t1) {perm = [0, 2, 1]}\n"
      "  %r1 = Reshape(%t2, %s24)\n"
      "  %r2 = Reshape(%r1, %s46)\n"
      "  %u = Unsqueeze(%r2, %ax)\n"
      "  %q = Squeeze(%u, %ax)\n"
      "  %sl = Slice(%q, %st, %en, %sx)\n"
      "  %cc = Concat(%sl) {axis = 0}\n"
      "  %pd = Pad(%cc, %pz)\n"
      "  %p1 = Pow(%pd, %one)\n"
      "  %p2 = Pow(%p1, %two)\n"
      "  %y = Relu(%p2)\n"
      "  return %y\n"
      "}\n";
  int64_t dims[3] = {2, 4, 6};
  ncc_graph *g = check_numerics(src, "simplify", 3, dims, -1);
  assert_int_equal(ncc_graph_num_nodes(g), 2);
  assert_int_equal(g->nodes[0]->op, NCC_OP_MUL);
  assert_ptr_equal(g->nodes[0]->in[0], g->nodes[0]->in[1]);
  assert_string_equal(g->nodes[0]->in[0]->name, "x");
  assert_string_equal(ncc_graph_output_name(g, 0), "y");
  ncc_graph_free(g);
}

static void test_simplify_keeps_output_names(void **st) {
  (void)st;
  /* %y = Identity(%r) is an output: Relu must now write %y. %z = Identity(%x)
   * of a graph input must stay. */
  const char *src = "graph @g(%x: f32[2,3]) {\n"
                    "  %r = Relu(%x)\n"
                    "  %y = Identity(%r)\n"
                    "  %z = Identity(%x)\n"
                    "  %w = Exp(%r)\n"
                    "  return %y, %z, %w\n"
                    "}\n";
  ncc_graph *g = parse(src);
  assert_int_equal(run_passes(g, "simplify"), NCC_OK);
  assert_int_equal(ncc_graph_num_nodes(g), 3);
  assert_int_equal(g->nodes[0]->op, NCC_OP_RELU);
  assert_string_equal(g->nodes[0]->out[0]->name, "y");
  assert_int_equal(count_op(g, NCC_OP_IDENTITY), 1);
  assert_string_equal(ncc_graph_output_name(g, 0), "y");
  assert_string_equal(ncc_graph_output_name(g, 1), "z");
  ncc_node *ex = g->nodes[2]->op == NCC_OP_EXP ? g->nodes[2] : g->nodes[1];
  assert_int_equal(ex->op, NCC_OP_EXP);
  assert_string_equal(ex->in[0]->name, "y");
  ncc_graph_free(g);
}

static void test_simplify_must_not_fire(void **st) {
  (void)st;
  /* Broadcasting that grows x, a constant that is almost all ones, a
   * Reshape whose 0 copies a dim of its (changing) input, a reversing
   * Slice, a shifting Pad, a broadcasting Pow(x, 2), a Cast to another
   * dtype. */
  const char *src =
      "graph @g(%x: f32[3], %m: f32[2,3]) {\n"
      "  %ones: f32[2,3] = const splat(1.0)\n"
      "  %almost: f32[3] = const [1.0, 1.0, 1.0000001]\n"
      "  %two: f32[2,3] = const splat(2.0)\n"
      "  %s0: i64[3] = const [0, 1, 2]\n"
      "  %s6: i64[2] = const [3, 2]\n"
      "  %st: i64[1] = const [-1]\n"
      "  %en: i64[1] = const [-100]\n"
      "  %ax: i64[1] = const [1]\n"
      "  %sm: i64[1] = const [-1]\n"
      "  %pads: i64[2] = const [1, -1]\n"
      "  %a = Mul(%x, %ones)\n"
      "  %b = Mul(%x, %almost)\n"
      "  %r1 = Reshape(%m, %s6)\n"
      "  %r2 = Reshape(%r1, %s0)\n"
      "  %sl = Slice(%m, %st, %en, %ax, %sm)\n"
      "  %pd = Pad(%x, %pads)\n"
      "  %p = Pow(%x, %two)\n"
      "  %c = Cast(%x) {to = \"f64\"}\n"
      "  return %a, %b, %r2, %sl, %pd, %p, %c\n"
      "}\n";
  ncc_graph *g = parse(src);
  int before = ncc_graph_num_nodes(g);
  ncc_pipeline *p;
  assert_int_equal(ncc_pipeline_new(1, &p), NCC_OK);
  assert_int_equal(ncc_pipeline_set_passes(p, "simplify"), NCC_OK);
  assert_int_equal(ncc_pipeline_run(p, g), NCC_OK);
  ncc_pipeline_free(p);
  assert_int_equal(ncc_graph_num_nodes(g), before);
  assert_int_equal(count_op(g, NCC_OP_POW), 1);
  ncc_graph_free(g);
}

/* The exactness claim behind Pow(x, 2) -> Mul(x, x), over many floats. */
static void test_square_is_exact(void **st) {
  (void)st;
  uint32_t s = 12345;
  for (int i = 0; i < 200000; i++) {
    s = s * 1664525u + 1013904223u;
    float x;
    memcpy(&x, &s, sizeof x);
    float viapow = (float)pow((double)x, 2.0), mul = x * x;
    if (isnan(x)) continue;
    assert_memory_equal(&viapow, &mul, sizeof mul);
  }
}

/* ---- bn-fold ---- */

static void bn_params(text *t, const char *p, int c, uint32_t seed) {
  char nm[64], dims[16];
  snprintf(dims, sizeof dims, "%d", c);
  snprintf(nm, sizeof nm, "%s_scale", p);
  put_const(t, nm, dims, c, seed, 0.5f, 1.5f);
  snprintf(nm, sizeof nm, "%s_b", p);
  put_const(t, nm, dims, c, seed + 1, -0.2f, 0.2f);
  snprintf(nm, sizeof nm, "%s_mean", p);
  put_const(t, nm, dims, c, seed + 2, -0.3f, 0.3f);
  snprintf(nm, sizeof nm, "%s_var", p);
  put_const(t, nm, dims, c, seed + 3, 0.5f, 2.0f);
}

static void test_bn_fold_conv(void **st) {
  (void)st;
  for (int bias = 0; bias < 2; bias++)
    for (int group = 1; group <= 4; group += 3) {
      text t = {0};
      put(&t, "graph @g(%%x: f32[N,4,5,5]) {\n");
      char wd[32];
      snprintf(wd, sizeof wd, "4,%d,3,3", 4 / group);
      put_const(&t, "w", wd, 4 * (4 / group) * 9, 3, -0.5f, 0.5f);
      put_const(&t, "cb", "4", 4, 4, -0.5f, 0.5f);
      bn_params(&t, "bn", 4, 10);
      put(&t, "  %%c = Conv(%%x, %%w%s) {group = %d, pads = [1, 1, 1, 1]}\n",
          bias ? ", %cb" : "", group);
      put(&t, "  %%y = BatchNormalization(%%c, %%bn_scale, %%bn_b, %%bn_mean, "
              "%%bn_var) {epsilon = 0.001}\n");
      put(&t, "  return %%y\n}\n");
      int64_t dims[4] = {2, 4, 5, 5};
      ncc_graph *g = check_numerics(t.buf, "const-fold,bn-fold", 4, dims, 1e-5);
      assert_int_equal(ncc_graph_num_nodes(g), 1);
      assert_int_equal(g->nodes[0]->op, NCC_OP_CONV);
      assert_int_equal(g->nodes[0]->n_in, 3);
      assert_string_equal(g->nodes[0]->out[0]->name, "y");
      ncc_graph_free(g);
      free(t.buf);
    }
}

static void test_bn_fold_gemm(void **st) {
  (void)st;
  for (int tb = 0; tb < 2; tb++)
    for (int cform = 0; cform < 3; cform++) { /* no C, C[6], scalar C */
      text t = {0};
      put(&t, "graph @g(%%a: f32[3,5]) {\n");
      put_const(&t, "b", tb ? "6,5" : "5,6", 30, 5, -1, 1);
      put_const(&t, "c6", "6", 6, 6, -1, 1);
      put_const(&t, "c1", "", 1, 7, -1, 1);
      bn_params(&t, "bn", 6, 20);
      put(&t, "  %%m = Gemm(%%a, %%b%s) {alpha = 0.5, beta = 2.0, transB = %d}\n",
          cform == 0 ? "" : cform == 1 ? ", %c6" : ", %c1", tb);
      put(&t, "  %%y = BatchNormalization(%%m, %%bn_scale, %%bn_b, %%bn_mean, "
              "%%bn_var)\n");
      put(&t, "  return %%y\n}\n");
      int64_t dims[2] = {3, 5};
      ncc_graph *g = check_numerics(t.buf, "const-fold,bn-fold", 2, dims, 1e-5);
      assert_int_equal(ncc_graph_num_nodes(g), 1);
      assert_int_equal(g->nodes[0]->op, NCC_OP_GEMM);
      assert_true(ncc_attr_float(g->nodes[0], "beta", 1.0f) == 1.0f);
      ncc_graph_free(g);
      free(t.buf);
    }
}

static void test_bn_fold_must_not_fire(void **st) {
  (void)st;
  /* Conv output read twice; BN mean an input; Gemm C varying along M;
   * Conv output a graph output. No fold into the producer: the BNs with
   * constant parameters become a per-channel Mul and Add, the one with
   * an input mean stays. */
  text t = {0};
  put(&t, "graph @g(%%x: f32[1,2,3,3], %%mean: f32[2], %%a: f32[3,4]) {\n");
  put_const(&t, "w", "2,2,1,1", 4, 3, -1, 1);
  put_const(&t, "b", "4,2", 8, 4, -1, 1);
  put_const(&t, "cm", "3,1", 3, 5, -1, 1);
  bn_params(&t, "bn", 2, 30);
  put(&t, "  %%c1 = Conv(%%x, %%w)\n"
          "  %%y1 = BatchNormalization(%%c1, %%bn_scale, %%bn_b, %%bn_mean, %%bn_var)\n"
          "  %%z1 = Relu(%%c1)\n"
          "  %%c2 = Conv(%%x, %%w) {pads = [1, 1, 1, 1]}\n"
          "  %%y2 = BatchNormalization(%%c2, %%bn_scale, %%bn_b, %%mean, %%bn_var)\n"
          "  %%m = Gemm(%%a, %%b, %%cm)\n"
          "  %%y3 = BatchNormalization(%%m, %%bn_scale, %%bn_b, %%bn_mean, %%bn_var)\n"
          "  %%c4 = Conv(%%x, %%w) {strides = [2, 2]}\n"
          "  %%y4 = BatchNormalization(%%c4, %%bn_scale, %%bn_b, %%bn_mean, %%bn_var)\n"
          "  return %%y1, %%z1, %%y2, %%y3, %%y4, %%c4\n}\n");
  ncc_graph *g = parse(t.buf);
  assert_int_equal(run_passes(g, "const-fold,bn-fold"), NCC_OK);
  assert_int_equal(count_op(g, NCC_OP_BATCHNORM), 1);
  assert_int_equal(count_op(g, NCC_OP_MUL), 3);
  assert_int_equal(count_op(g, NCC_OP_ADD), 3);
  for (int i = 0; i < g->n_nodes; i++) /* the weights were not touched */
    if (g->nodes[i]->op == NCC_OP_CONV) assert_string_equal(g->nodes[i]->in[1]->name, "w");
  ncc_graph_free(g);
  free(t.buf);
}

/* The per-channel Mul + Add computes the BN (ref interpreter on both
 * graphs) for BNs of rank 4, 3 and 2 that no producer absorbs, each Add
 * placed after its Mul (the verifier checks the order). */
static void test_bn_affine_numerics(void **st) {
  (void)st;
  text t = {0};
  put(&t, "graph @g(%%x: f32[N,3,4,5]) {\n");
  bn_params(&t, "bn", 3, 40);
  put_const(&t, "r3", "3", 3, 44, -1, 1);
  put(&t, "  %%a = BatchNormalization(%%x, %%bn_scale, %%bn_b, %%bn_mean, %%bn_var)\n"
          "  %%r = Relu(%%a)\n"
          "  %%s = Reshape(%%r, %%shp3)\n"
          "  %%b = BatchNormalization(%%s, %%bn_scale, %%bn_b, %%bn_mean, %%bn_var) "
          "{epsilon = 0.25}\n"
          "  %%t = Reshape(%%b, %%shp4)\n"
          "  %%p = GlobalAveragePool(%%t)\n"
          "  %%f = Flatten(%%p)\n"
          "  %%c = BatchNormalization(%%f, %%bn_scale, %%bn_b, %%bn_mean, %%bn_var)\n"
          "  %%y = Add(%%c, %%r3)\n"
          "  return %%y\n}\n");
  /* the Reshape targets, [N,3,20] and back */
  char *src = t.buf;
  const char *at = strstr(src, "  %a = ");
  assert_non_null(at);
  text u = {0};
  put(&u, "%.*s", (int)(at - src), src);
  put(&u, "  %%shp3: i64[3] = const [0, 3, 20]\n  %%shp4: i64[4] = const [0, 3, 4, 5]\n%s", at);
  int64_t dims[4] = {2, 3, 4, 5};
  ncc_graph *g = check_numerics(u.buf, "const-fold,bn-fold", 4, dims, 1e-5);
  assert_int_equal(count_op(g, NCC_OP_BATCHNORM), 0);
  assert_int_equal(count_op(g, NCC_OP_MUL), 3);
  ncc_graph_free(g);
  free(t.buf);
  free(u.buf);
}

/* ---- dependencies and dce of constants ---- */

static void test_dependency_refused(void **st) {
  (void)st;
  ncc_pipeline *p;
  assert_int_equal(ncc_pipeline_new(2, &p), NCC_OK);
  assert_int_equal(ncc_pipeline_disable(p, "const-fold"), NCC_OK);
  assert_int_equal(ncc_pipeline_check(p), NCC_ERR_USAGE);
  assert_string_equal(ncc_error_message(),
                      "cannot disable pass 'const-fold': pass 'bn-fold' needs "
                      "it (disable 'bn-fold' too)");
  assert_int_equal(ncc_pipeline_disable(p, "bn-fold"), NCC_OK);
  assert_int_equal(ncc_pipeline_check(p), NCC_OK);
  ncc_pipeline_free(p);
  /* At -O1 bn-fold is not in the pipeline: const-fold may go. */
  assert_int_equal(ncc_pipeline_new(1, &p), NCC_OK);
  assert_int_equal(ncc_pipeline_disable(p, "const-fold"), NCC_OK);
  assert_int_equal(ncc_pipeline_check(p), NCC_OK);
  assert_int_equal(ncc_pipeline_set_passes(p, "bn-fold"), NCC_OK);
  assert_int_equal(ncc_pipeline_check(p), NCC_ERR_USAGE);
  ncc_pipeline_free(p);
}

static void test_dce_drops_unused_consts(void **st) {
  (void)st;
  ncc_graph *g = parse("graph @g(%x: f32[2]) {\n"
                       "  %u: f32[2] = const [1.0, 2.0]\n"
                       "  %k: f32[2] = const [3.0, 4.0]\n"
                       "  %y = Add(%x, %k)\n"
                       "  return %y\n"
                       "}\n");
  assert_int_equal(run_passes(g, "dce"), NCC_OK);
  char *txt = ncc_graph_print_string(g);
  assert_non_null(txt);
  assert_null(strstr(txt, "%u"));
  assert_non_null(strstr(txt, "%k: f32[2] = const"));
  free(txt);
  ncc_graph_free(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_levels),
      cmocka_unit_test(test_explicit_and_disable),
      cmocka_unit_test(test_registry),
      cmocka_unit_test(test_shape_subgraph_folds),
      cmocka_unit_test(test_stats),
      cmocka_unit_test(test_simplify_chain),
      cmocka_unit_test(test_simplify_keeps_output_names),
      cmocka_unit_test(test_simplify_must_not_fire),
      cmocka_unit_test(test_square_is_exact),
      cmocka_unit_test(test_bn_fold_conv),
      cmocka_unit_test(test_bn_fold_gemm),
      cmocka_unit_test(test_bn_fold_must_not_fire),
      cmocka_unit_test(test_bn_affine_numerics),
      cmocka_unit_test(test_dependency_refused),
      cmocka_unit_test(test_dce_drops_unused_consts),
  };
  return cmocka_run_group_tests_name("passes", tests, NULL, NULL);
}
