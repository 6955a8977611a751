/* tests/unit/test_fusion.c — the fusion pass, fused kernels, repeated-block
 * kernel reuse and memory planning.
 *
 * - which groups the `fusion` pass marks (and must not mark: values with a
 *   consumer outside, graph outputs, shape changes), that groups round-trip
 *   through the text IR and that invalid hand-written groups are ignored;
 * - the cpu backend running fused graphs against the reference interpreter
 *   (which ignores grouping) at two batch sizes, with fewer kernels than
 *   unfused: elementwise chains, MatMul/Gemm/Conv epilogues, row groups;
 * - the generated blocks (bench/blocks.py) at -O2, fused vs reference;
 * - kir_dedupe: the kernels of a depth-4 model are those of depth 1;
 * - the memory plan: values alive together never share bytes, for any
 *   batch; the executor's arena gives the same results batch after batch;
 * - allocation failures in the passes are reported, never crash or leak
 *   (tests/unit/test_alloc.h).
 */
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

#include "codegen/kir.h"
#include "codegen/llvm/llvm.h"
#include "ir/ir.h"
#include "ir/shape.h"
#include "passes/fusion.h"
#include "passes/memplan.h"
#include "passes/pass.h"
#include "test_alloc.h"
#include "test_env.h"

/* ---- graphs ---- */

static const char *const ELTWISE_IR =
    "graph @eltwise(%x: f32[N,8], %b: f32[8], %c: f32[8]) {\n"
    "  %a = Add(%x, %b)\n"
    "  %r = Relu(%a)\n"
    "  %u = Exp(%r)\n"
    "  %v = Neg(%r)\n"
    "  %w = Add(%u, %v)\n"
    "  %t = Transpose(%w)\n"
    "  %e = Sigmoid(%w)\n"
    "  %p = Mul(%b, %c)\n"
    "  %q = Add(%e, %p)\n"
    "  %o = Tanh(%q)\n"
    "  %z = Exp(%o)\n"
    "  return %t, %o, %z\n"
    "}\n";

static const char *const EPILOGUE_IR =
    "graph @epilogue(%x: f32[N,17], %img: f32[N,4,6,7]) {\n"
    "  %w: f32[17,17] = const splat(0.25)\n"
    "  %b: f32[17] = const splat(0.5)\n"
    "  %k: f32[4,4,3,3] = const splat(0.125)\n"
    "  %cb: f32[4] = const [-0.5, 0.25, 1.0, -1.0]\n"
    "  %cs: f32[4,1,1] = const [2.0, -1.0, 0.5, 3.0]\n"
    "  %mm = MatMul(%x, %w)\n"
    "  %y = Add(%mm, %b)\n"
    "  %h = Relu(%y)\n"
    "  %res = Add(%h, %x)\n"
    "  %g = Gemm(%res, %w, %b) {alpha = 0.5, transB = 1}\n"
    "  %s = Sigmoid(%g)\n"
    "  %m2 = MatMul(%s, %w)\n"
    "  %tr = Transpose(%m2)\n"
    "  %ex = Exp(%m2)\n"
    "  %c = Conv(%img, %k, %cb) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]}\n"
    "  %cm = Mul(%c, %cs)\n"
    "  %ca = Add(%cm, %img)\n"
    "  %cr = Relu(%ca)\n"
    "  return %tr, %ex, %cr\n"
    "}\n";

/* 1x1 Conv (a GEMM per image), batched attention MatMul with a mask */
static const char *const EPILOGUE2_IR =
    "graph @epilogue2(%img: f32[N,8,3,5], %q: f32[N,2,9,4], %kt: f32[N,2,4,9]) {\n"
    "  %k: f32[6,8,1,1] = const splat(0.25)\n"
    "  %cb: f32[6] = const [1.0, 2.0, 3.0, -1.0, -2.0, -3.0]\n"
    "  %mask: f32[9,9] = const splat(-0.5)\n"
    "  %sc: f32[] = const [0.5]\n"
    "  %c = Conv(%img, %k, %cb) {kernel_shape = [1, 1]}\n"
    "  %cr = Clip(%c, %sc)\n"
    "  %s = MatMul(%q, %kt)\n"
    "  %sd = Mul(%s, %sc)\n"
    "  %sm = Add(%sd, %mask)\n"
    "  %p = Softmax(%sm)\n"
    "  return %cr, %p\n"
    "}\n";

/* elementwise work computed before the MatMul, read only by its epilogue */
static const char *const PROLOGUE_IR =
    "graph @prologue(%x: f32[N,5,16], %z: f32[N,5,16]) {\n"
    "  %w: f32[16,16] = const splat(0.125)\n"
    "  %r = Sigmoid(%z)\n"
    "  %mm = MatMul(%x, %w)\n"
    "  %y = Add(%mm, %r)\n"
    "  return %y\n"
    "}\n";

static const char *const REDUCE_IR =
    "graph @reduce(%x: f32[N,4,19], %g: f32[19], %bt: f32[19]) {\n"
    "  %ax: i64[1] = const [-1]\n"
    "  %eps: f32[] = const [1e-05]\n"
    "  %two: f32[] = const [2.0]\n"
    "  %mx = ReduceMax(%x, %ax)\n"
    "  %d = Sub(%x, %mx)\n"
    "  %e = Exp(%d)\n"
    "  %s = ReduceSum(%e, %ax)\n"
    "  %sm = Div(%e, %s)\n"
    "  %mean = ReduceMean(%sm, %ax)\n"
    "  %c = Sub(%sm, %mean)\n"
    "  %sq = Pow(%c, %two)\n"
    "  %var = ReduceMean(%sq, %ax)\n"
    "  %ve = Add(%var, %eps)\n"
    "  %sd = Sqrt(%ve)\n"
    "  %n = Div(%c, %sd)\n"
    "  %sc = Mul(%n, %g)\n"
    "  %ln = Add(%sc, %bt)\n"
    "  %t = Transpose(%ln)\n"
    "  %p = Softmax(%ln)\n"
    "  %q = Mul(%p, %two)\n"
    "  %lq = Log(%q)\n"
    "  %sum = ReduceSum(%lq, %ax) {keepdims = 0}\n"
    "  %l2 = LayerNormalization(%x, %g, %bt)\n"
    "  %l2r = Relu(%l2)\n"
    "  return %t, %sum, %l2r\n"
    "}\n";

static ncc_graph *parse(const char *text) {
  ncc_graph *g = NULL;
  ncc_status st = ncc_graph_parse_text(text, strlen(text), "t.nir", &g);
  if (st != NCC_OK) print_error("parse: %s\n", ncc_error_message());
  assert_int_equal(st, NCC_OK);
  return g;
}

static void run_passes(ncc_graph *g, const char *list) {
  ncc_pipeline *p;
  assert_int_equal(ncc_pipeline_new(2, &p), NCC_OK);
  assert_int_equal(ncc_pipeline_set_passes(p, list), NCC_OK);
  ncc_pipeline_set_verify_each(p, 1);
  ncc_status st = ncc_pipeline_run(p, g);
  if (st != NCC_OK) print_error("passes: %s\n", ncc_error_message());
  assert_int_equal(st, NCC_OK);
  ncc_pipeline_free(p);
}

static int64_t group_of(const ncc_graph *g, const char *value) {
  const ncc_value *v = ncc_graph_find_value(g, value);
  assert_non_null(v);
  assert_non_null(v->producer);
  return ncc_attr_int(v->producer, "fuse.group", -1);
}

/* ---- the pass ---- */

static void check_text_round_trip(const ncc_graph *g) {
  char *a = ncc_graph_print_string(g);
  assert_non_null(a);
  ncc_graph *h = parse(a);
  char *b = ncc_graph_print_string(h);
  assert_non_null(b);
  assert_string_equal(a, b);
  free(a);
  free(b);
  ncc_graph_free(h);
}

static void test_pass_eltwise(void **state) {
  (void)state;
  ncc_graph *g = parse(ELTWISE_IR);
  run_passes(g, "fusion");
  /* the diamond rejoins: one group; w has a consumer outside (Transpose) */
  int64_t g0 = group_of(g, "a");
  assert_true(g0 >= 0);
  assert_int_equal(group_of(g, "r"), g0);
  assert_int_equal(group_of(g, "u"), g0);
  assert_int_equal(group_of(g, "v"), g0);
  assert_int_equal(group_of(g, "w"), g0);
  assert_int_equal(group_of(g, "t"), -1);
  /* p has another shape; o is a graph output, so z stays alone */
  int64_t g1 = group_of(g, "e");
  assert_true(g1 >= 0 && g1 != g0);
  assert_int_equal(group_of(g, "q"), g1);
  assert_int_equal(group_of(g, "o"), g1);
  assert_int_equal(group_of(g, "p"), -1);
  assert_int_equal(group_of(g, "z"), -1);
  ncc_fuse_plan *fp;
  assert_int_equal(ncc_fuse_plan_build(g, &fp), NCC_OK);
  assert_int_equal(fp->n_groups, 2);
  for (int i = 0; i < fp->n_groups; i++)
    assert_int_equal(fp->groups[i].kind, NCC_FUSE_ELTWISE);
  ncc_fuse_plan_free(fp);
  check_text_round_trip(g);
  /* running it again changes nothing */
  char *a = ncc_graph_print_string(g);
  run_passes(g, "fusion");
  char *b = ncc_graph_print_string(g);
  assert_string_equal(a, b);
  free(a);
  free(b);
  ncc_graph_free(g);
}

static void test_pass_epilogue_reduce(void **state) {
  (void)state;
  ncc_graph *g = parse(EPILOGUE_IR);
  run_passes(g, "fusion");
  int64_t g0 = group_of(g, "mm");
  assert_true(g0 >= 0);
  assert_int_equal(group_of(g, "res"), g0);
  assert_true(group_of(g, "g") >= 0);
  assert_int_equal(group_of(g, "s"), group_of(g, "g"));
  /* m2 has a non-elementwise consumer: nothing joins it */
  assert_int_equal(group_of(g, "m2"), -1);
  assert_int_equal(group_of(g, "cr"), group_of(g, "c"));
  assert_string_equal(ncc_attr_string(ncc_graph_find_value(g, "cr")->producer,
                                      "fuse.kind", ""),
                      "epilogue");
  check_text_round_trip(g);
  ncc_graph_free(g);

  g = parse(REDUCE_IR);
  run_passes(g, "fusion");
  int64_t r0 = group_of(g, "mx");
  assert_true(r0 >= 0);
  assert_int_equal(group_of(g, "ln"), r0); /* softmax + layernorm, decomposed */
  assert_int_equal(group_of(g, "t"), -1);
  assert_true(group_of(g, "p") >= 0);
  assert_int_equal(group_of(g, "sum"), group_of(g, "p"));
  assert_int_equal(group_of(g, "l2r"), group_of(g, "l2"));
  ncc_fuse_plan *fp;
  assert_int_equal(ncc_fuse_plan_build(g, &fp), NCC_OK);
  assert_int_equal(fp->n_groups, 3);
  assert_int_equal(fp->groups[0].kind, NCC_FUSE_REDUCE);
  ncc_fuse_plan_free(fp);
  ncc_graph_free(g);
}

/* Hand-written groups that break the rules are ignored by readers. */
static void test_plan_rejects_invalid(void **state) {
  (void)state;
  static const char *const bad =
      "graph @bad(%x: f32[N,8]) {\n"
      /* a's value escapes to the graph output: invalid */
      "  %a = Relu(%x) {fuse.group = 1, fuse.kind = \"eltwise\"}\n"
      "  %b = Exp(%a) {fuse.group = 1, fuse.kind = \"eltwise\"}\n"
      /* kinds disagree */
      "  %c = Neg(%b) {fuse.group = 2, fuse.kind = \"eltwise\"}\n"
      "  %d = Abs(%c) {fuse.group = 2, fuse.kind = \"reduce\"}\n"
      /* a group of one */
      "  %e = Tanh(%d) {fuse.group = 3, fuse.kind = \"eltwise\"}\n"
      /* valid */
      "  %f = Sigmoid(%e) {fuse.group = 7, fuse.kind = \"eltwise\"}\n"
      "  %h = Exp(%f) {fuse.group = 7, fuse.kind = \"eltwise\"}\n"
      "  return %a, %h\n"
      "}\n";
  ncc_graph *g = parse(bad);
  ncc_fuse_plan *fp;
  assert_int_equal(ncc_fuse_plan_build(g, &fp), NCC_OK);
  assert_int_equal(fp->n_groups, 1);
  assert_int_equal(fp->groups[0].id, 7);
  assert_int_equal(fp->groups[0].n_members, 2);
  assert_int_equal(fp->group_of[0], -1);
  ncc_fuse_plan_free(fp);
  ncc_graph_free(g);
}

/* ---- cpu vs ref ---- */

static uint64_t rng = 0x243f6a8885a308d3ull;
static float urand(float lo, float hi) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return lo + (hi - lo) * (float)((double)(rng >> 11) / 9007199254740992.0);
}

/* Inputs for g with every symbolic dim = batch. */
static void make_inputs(const ncc_graph *g, int64_t batch, ncc_tensor *in) {
  for (int i = 0; i < g->n_inputs; i++) {
    const ncc_value *v = g->inputs[i];
    int64_t d[NCC_MAX_RANK];
    for (int j = 0; j < v->shape.rank; j++)
      d[j] = ncc_dim_is_sym(v->shape.d[j]) ? batch : v->shape.d[j];
    assert_int_equal(ncc_tensor_alloc(&in[i], v->dtype, v->shape.rank, d), NCC_OK);
    float *p = in[i].data;
    for (int64_t k = 0; k < ncc_tensor_numel(&in[i]); k++) p[k] = urand(-2, 2);
  }
}

static void compare(const ncc_tensor *a, const ncc_tensor *b, const char *what) {
  assert_int_equal(a->rank, b->rank);
  for (int d = 0; d < a->rank; d++) assert_int_equal(a->dims[d], b->dims[d]);
  int64_t n = ncc_tensor_numel(a);
  for (int64_t i = 0; i < n; i++) {
    double x = ((const float *)a->data)[i], y = ((const float *)b->data)[i];
    if (x == y || (isnan(x) && isnan(y))) continue;
    if (!(fabs(x - y) <= 2e-5 + 2e-4 * fabs(x)))
      fail_msg("%s: element %lld: ref %.9g cpu %.9g", what, (long long)i, x, y);
  }
}

/* Whether this build has the cpu target (-DNCC_LLVM=OFF has not): the
 * tests that run cpu code skip() without it; a built cpu target that fails
 * still fails them. */
static bool have_cpu(void) {
#ifdef NCC_HAVE_LLVM
  return true;
#else
  return false;
#endif
}

/* Compile g for cpu, run it at each batch against ref; returns kernels. */
static int check_cpu(const ncc_graph *g, const char *what) {
  if (!have_cpu()) skip();
  ncc_module *m = NULL;
  ncc_status st = test_module_compile(g, "cpu", &m);
  if (st != NCC_OK) print_error("compile %s: %s\n", what, ncc_error_message());
  assert_int_equal(st, NCC_OK);
  static const int64_t batches[] = {3, 1, 3};
  for (size_t bi = 0; bi < sizeof batches / sizeof *batches; bi++) {
    ncc_tensor in[4], ref[4], cpu[4];
    int ni = g->n_inputs, no = g->n_outputs;
    assert_true(ni <= 4 && no <= 4);
    make_inputs(g, batches[bi], in);
    assert_int_equal(ncc_ref_run(g, in, ni, ref, no), NCC_OK);
    st = ncc_module_run(m, in, ni, cpu, no);
    if (st != NCC_OK) print_error("run %s: %s\n", what, ncc_error_message());
    assert_int_equal(st, NCC_OK);
    for (int o = 0; o < no; o++) {
      compare(&ref[o], &cpu[o], what);
      ncc_tensor_free(&ref[o]);
      ncc_tensor_free(&cpu[o]);
    }
    for (int i = 0; i < ni; i++) ncc_tensor_free(&in[i]);
  }
  int nk = ncc_module_num_kernels(m);
  ncc_module_free(m);
  return nk;
}

typedef struct fcase {
  const char *name, *ir;
  int fused_kernels; /* compiled kernels after fusion */
} fcase;

static void test_cpu_fused(void **state) {
  (void)state;
  static const fcase cases[] = {
      {"eltwise", ELTWISE_IR, 5},   /* 2 groups + Transpose, Mul, Exp */
      {"epilogue", EPILOGUE_IR, 6}, /* 3 groups + MatMul, Transpose, Exp */
      {"epilogue2", EPILOGUE2_IR, 3}, /* 2 groups + Softmax */
      {"prologue", PROLOGUE_IR, 1},
      {"reduce", REDUCE_IR, 4},     /* 3 row groups + Transpose */
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    ncc_graph *g = parse(cases[c].ir);
    int unfused = check_cpu(g, cases[c].name);
    run_passes(g, "fusion,memplan");
    int fused = check_cpu(g, cases[c].name);
    if (fused != cases[c].fused_kernels || fused >= unfused)
      fail_msg("%s: %d kernels fused (expected %d), %d unfused", cases[c].name, fused,
               cases[c].fused_kernels, unfused);
    ncc_graph_free(g);
  }
}

/* Groups that cannot become one kernel (here: an operand broadcasting over
 * part of the GEMM's rows) run unfused, still correct. */
static void test_cpu_fallback(void **state) {
  (void)state;
  static const char *const ir =
      "graph @fb(%x: f32[N,3,8]) {\n"
      "  %w: f32[8,8] = const splat(0.5)\n"
      "  %r: f32[3,1] = const [1.0, 2.0, 3.0]\n"
      "  %mm = MatMul(%x, %w)\n"
      "  %a = Add(%mm, %r)\n"
      "  %y = Relu(%a)\n"
      "  return %y\n"
      "}\n";
  ncc_graph *g = parse(ir);
  run_passes(g, "fusion");
  assert_true(group_of(g, "y") >= 0);
  assert_int_equal(check_cpu(g, "fallback"), 3);
  ncc_graph_free(g);
}

/* ---- generated blocks ---- */

/* tests/fusion.cmake reruns the other cases at other vector widths with
 * NCC_FUSION_NO_BLOCKS set: the block cases run once. */
static bool have_python(void) {
  return getenv("PYTHON") && getenv("NCC_SRC") && !getenv("NCC_FUSION_NO_BLOCKS");
}

/* bench/blocks.py BLOCK --depth D into a temporary .onnx; NULL if skipped. */
static char *gen_block(const char *block, int depth, const char *extra) {
  if (!have_python()) return NULL;
  char *path = malloc(96);
  assert_non_null(path);
  snprintf(path, 96, "/tmp/ncc_fusion_%s_d%d_%d.onnx", block, depth, (int)getpid());
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "\"%s\" \"%s/bench/blocks.py\" %s --depth %d %s -o %s",
           getenv("PYTHON"), getenv("NCC_SRC"), block, depth, extra, path);
  assert_int_equal(system(cmd), 0);
  return path;
}

static ncc_graph *load_opt(const char *path, bool fuse) {
  ncc_graph *g = NULL;
  assert_int_equal(ncc_graph_load(path, &g), NCC_OK);
  ncc_pipeline *p;
  assert_int_equal(ncc_pipeline_new(2, &p), NCC_OK);
  if (!fuse) assert_int_equal(ncc_pipeline_disable(p, "fusion"), NCC_OK);
  ncc_pipeline_set_verify_each(p, 1);
  assert_int_equal(ncc_pipeline_run(p, g), NCC_OK);
  ncc_pipeline_free(p);
  return g;
}

static void test_blocks(void **state) {
  (void)state;
  if (!have_python()) {
    print_message("skipped: PYTHON / NCC_SRC not set (or NCC_FUSION_NO_BLOCKS)\n");
    return;
  }
  static const char *const blocks[] = {"eltwise", "mlp", "conv", "resblock",
                                       "dwsep", "transformer"};
  for (size_t b = 0; b < sizeof blocks / sizeof *blocks; b++) {
    char *path = gen_block(blocks[b], 2, "--width 16 --spatial 5x7 --seq 5");
    ncc_graph *g = load_opt(path, false);
    int unfused = check_cpu(g, blocks[b]);
    ncc_graph_free(g);
    g = load_opt(path, true);
    int fused = check_cpu(g, blocks[b]);
    ncc_graph_free(g);
    print_message("%-12s kernels: %d unfused, %d fused\n", blocks[b], unfused, fused);
    if (fused >= unfused) fail_msg("%s: fusion did not reduce kernels", blocks[b]);
    unlink(path);
    free(path);
  }
}

/* ---- repeated-block reuse ---- */

static int distinct_kernels(const ncc_graph *g, int *total) {
#ifndef NCC_HAVE_LLVM
  (void)g;
  *total = 0;
  skip(); /* the kernels compared are the LLVM lowering's */
  return 0;
#else
  const ncc_llvm_host *h;
  assert_int_equal(ncc_llvm_host_info(&h), NCC_OK);
  int w = test_env_vector_width();
  ncc_lower_opts lo = {.vector_width = w ? w : h->vector_width};
  ncc_lower_request rq = {.target = &ncc_lower_target_generic, .opts = lo,
                          .name_by_anchor = true};
  ncc_lowered low;
  int *rep = calloc((size_t)g->n_nodes + 1, sizeof *rep);
  assert_non_null(rep);
  assert_int_equal(ncc_lower_graph_new(g, &rq, &low), NCC_OK);
  kir_kernel **ks = low.kernels;
  int d = kir_dedupe(ks, g->n_nodes, rep);
  for (int i = 0; i < g->n_nodes; i++)
    if (ks[i]) assert_true(rep[i] >= 0 && rep[i] <= i && ks[rep[i]]);
  *total = low.n_kernels;
  ncc_lowered_free(&low);
  free(rep);
  return d;
#endif
}

static void test_kernel_reuse(void **state) {
  (void)state;
  if (!have_python()) {
    print_message("skipped: PYTHON / NCC_SRC not set (or NCC_FUSION_NO_BLOCKS)\n");
    return;
  }
  static const char *const blocks[] = {"mlp", "resblock", "transformer"};
  for (size_t b = 0; b < sizeof blocks / sizeof *blocks; b++) {
    int t1, t4;
    char *p1 = gen_block(blocks[b], 1, "--width 16 --spatial 4x4 --seq 4");
    char *p4 = gen_block(blocks[b], 4, "--width 16 --spatial 4x4 --seq 4");
    ncc_graph *g1 = load_opt(p1, true), *g4 = load_opt(p4, true);
    int d1 = distinct_kernels(g1, &t1), d4 = distinct_kernels(g4, &t4);
    print_message("%-12s depth 1: %d kernels, %d distinct; depth 4: %d, %d distinct\n",
                  blocks[b], t1, d1, t4, d4);
    assert_int_equal(t4, 4 * t1);
    assert_int_equal(d4, d1);
    ncc_graph_free(g1);
    ncc_graph_free(g4);
    unlink(p1);
    unlink(p4);
    free(p1);
    free(p4);
  }
}

/* Equal kernel IR hashes alike; a different constant does not. */
static void test_kir_hash(void **state) {
  (void)state;
  kir_kernel *k[3];
  for (int i = 0; i < 3; i++) {
    char name[16];
    snprintf(name, sizeof name, "k%d", i);
    k[i] = kir_kernel_new(name);
    assert_non_null(k[i]);
    int in = kir_buf_input(k[i], 0, NCC_DT_F32), out = kir_buf_output(k[i], 0, NCC_DT_F32);
    kir_block top = kir_body_begin();
    int v = kir_var_new(k[i]);
    kir_stmt *l = kir_for(k[i], &top, v, kir_const_i(k[i], 0), kir_const_i(k[i], 9),
                          KIR_VECTOR, 8);
    kir_block b = kir_body_begin();
    kir_expr *x = kir_load(k[i], in, kir_var(k[i], v));
    kir_store(k[i], &b, out, kir_var(k[i], v),
              kir_bin(k[i], KIR_MUL, x, kir_const_f(k[i], NCC_DT_F32, i == 2 ? 3.0 : 2.0)),
              NULL);
    kir_body_end(l, &b);
    kir_kernel_set_body(k[i], &top);
    assert_true(kir_ok(k[i]));
  }
  assert_true(kir_kernel_hash(k[0]) == kir_kernel_hash(k[1]));
  assert_true(kir_kernel_equal(k[0], k[1]));
  assert_false(kir_kernel_equal(k[0], k[2]));
  int rep[4];
  kir_kernel *list[4] = {k[0], NULL, k[1], k[2]};
  assert_int_equal(kir_dedupe(list, 4, rep), 2);
  assert_int_equal(rep[0], 0);
  assert_int_equal(rep[1], -1);
  assert_int_equal(rep[2], 0);
  assert_int_equal(rep[3], 3);
  for (int i = 0; i < 3; i++) kir_kernel_free(k[i]);
}

/* ---- memory planning ---- */

static void check_plan_disjoint(const ncc_graph *g, const ncc_fuse_plan *fp,
                                const ncc_memplan *mp) {
  int n = g->n_values;
  int *def = calloc((size_t)n + 1, sizeof *def), *last = calloc((size_t)n + 1, sizeof *last);
  assert_non_null(def);
  assert_non_null(last);
  for (int v = 0; v < n; v++) def[v] = last[v] = -1;
  for (int i = 0; i < g->n_nodes; i++) {
    const ncc_node *nd = g->nodes[i];
    int pos = ncc_fuse_exec_pos(fp, i);
    for (int k = 0; k < nd->n_out; k++)
      if (nd->out[k]) def[nd->out[k]->id] = pos;
    for (int k = 0; k < nd->n_in; k++)
      if (nd->in[k] && last[nd->in[k]->id] < pos) last[nd->in[k]->id] = pos;
  }
  static const int64_t batches[] = {0, 1, 2, 7, 64};
  for (int u = 0; u < n; u++) {
    if (!mp->in_arena[u]) continue;
    assert_int_equal(mp->off_b[u] % NCC_MEMPLAN_ALIGN, 0);
    for (int v = u + 1; v < n; v++) {
      if (!mp->in_arena[v]) continue;
      int eu = last[u] > def[u] ? last[u] : def[u], ev = last[v] > def[v] ? last[v] : def[v];
      if (eu < def[v] || ev < def[u]) continue;
      for (size_t b = 0; b < sizeof batches / sizeof *batches; b++) {
        int64_t N = batches[b];
        int64_t ou = mp->off_a[u] * N + mp->off_b[u], su = mp->size_a[u] * N + mp->size_b[u];
        int64_t ov = mp->off_a[v] * N + mp->off_b[v], sv = mp->size_a[v] * N + mp->size_b[v];
        int64_t au = mp->arena_a * N + mp->arena_b;
        assert_true(ou + su <= au && ov + sv <= au);
        if (su && sv && ou < ov + sv && ov < ou + su)
          fail_msg("values %d and %d overlap at batch %lld", u, v, (long long)N);
      }
    }
  }
  free(def);
  free(last);
}

static void test_memplan(void **state) {
  (void)state;
  static const char *const irs[] = {ELTWISE_IR, EPILOGUE_IR, EPILOGUE2_IR, PROLOGUE_IR,
                                    REDUCE_IR};
  for (size_t c = 0; c < sizeof irs / sizeof *irs; c++) {
    for (int fuse = 0; fuse < 2; fuse++) {
      ncc_graph *g = parse(irs[c]);
      run_passes(g, fuse ? "fusion,memplan" : "memplan");
      if (!fuse) assert_true(ncc_memplan_annotated(g));
      ncc_fuse_plan *fp;
      ncc_memplan *mp;
      assert_int_equal(ncc_fuse_plan_build(g, &fp), NCC_OK);
      assert_int_equal(ncc_memplan_build(g, fp, &mp), NCC_OK);
      assert_true(mp->ok);
      check_plan_disjoint(g, fp, mp);
      /* the plan is never below the liveness bound */
      for (int64_t b = 1; b <= 8; b *= 2)
        assert_true(ncc_memplan_peak(g, fp, b, true) + 1e-9 >=
                    ncc_memplan_peak(g, fp, b, false));
      ncc_memplan_free(mp);
      ncc_fuse_plan_free(fp);
      if (have_cpu()) check_cpu(g, "memplan");
      ncc_graph_free(g);
    }
  }
}

/* Static shapes plan like the classic first fit: a chain of equal buffers
 * needs two slots. */
static void test_memplan_chain(void **state) {
  (void)state;
  ncc_membuf b[5];
  memset(b, 0, sizeof b);
  for (int i = 0; i < 5; i++) {
    b[i].b = 1000;
    b[i].begin = i;
    b[i].end = i + 1;
  }
  int64_t aa, ab;
  assert_int_equal(ncc_memplan_layout(b, 5, &aa, &ab), NCC_OK);
  assert_int_equal(aa, 0);
  assert_int_equal(ab, 2 * 1024);
  /* linear sizes: one static, one per batch, alive together */
  ncc_membuf c[2] = {{.a = 64, .b = 0, .begin = 0, .end = 1},
                     {.a = 0, .b = 100, .begin = 1, .end = 2}};
  assert_int_equal(ncc_memplan_layout(c, 2, &aa, &ab), NCC_OK);
  assert_int_equal(aa, 64);
  assert_int_equal(ab, 128);
}

/* ---- allocation failures ---- */

static void test_oom(void **state) {
  (void)state;
  static const char *const irs[] = {ELTWISE_IR, REDUCE_IR};
  for (size_t c = 0; c < sizeof irs / sizeof *irs; c++) {
    bool clean = false;
    for (long k = 0; !clean && k < 400; k++) {
      ncc_graph *g = parse(irs[c]);
      ncc_pipeline *p;
      assert_int_equal(ncc_pipeline_new(2, &p), NCC_OK);
      assert_int_equal(ncc_pipeline_set_passes(p, "fusion,memplan"), NCC_OK);
      test_alloc_arm(k);
      ncc_status st = ncc_pipeline_run(p, g);
      ncc_graph_stats gs;
      if (st == NCC_OK) ncc_graph_compute_stats(g, 2, &gs);
      test_alloc_disarm();
      assert_true(st == NCC_OK || st == NCC_ERR_NOMEM);
      clean = st == NCC_OK && test_alloc_ran_clean();
      ncc_pipeline_free(p);
      ncc_graph_free(g);
    }
    assert_true(clean);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pass_eltwise),
      cmocka_unit_test(test_pass_epilogue_reduce),
      cmocka_unit_test(test_plan_rejects_invalid),
      cmocka_unit_test(test_cpu_fused),
      cmocka_unit_test(test_cpu_fallback),
      cmocka_unit_test(test_blocks),
      cmocka_unit_test(test_kernel_reuse),
      cmocka_unit_test(test_kir_hash),
      cmocka_unit_test(test_memplan),
      cmocka_unit_test(test_memplan_chain),
      cmocka_unit_test(test_oom),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
