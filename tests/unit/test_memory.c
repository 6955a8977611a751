/* tests/unit/test_memory.c — the memory budget (ncc_set_max_memory) and
 * the activation planner (passes/memplan.c) against oracles outside it.
 *
 * Budget: the default is 75% of physical memory as sysconf reports it;
 * tensors, .nir constants and const-fold outputs over the budget fail with
 * NCC_ERR_NOMEM before anything is allocated, naming what and how much.
 *
 * Planner: on seeded random buffer sets (static and batch-linear sizes), no
 * two buffers alive at the same step overlap (checked pairwise, at several
 * batches), every buffer lies inside the arena, the arena is at least the
 * most bytes ever live at once, and it is no larger than what the previous
 * quadratic first-fit planner (re-implemented here as the reference) gave.
 */
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
#include "passes/memplan.h"

/* ---- budget ---- */

static void test_budget_api(void **state) {
  (void)state;
  ncc_set_max_memory(0);
  double phys = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
  double def = (double)ncc_max_memory();
  assert_true(def > 0.749 * phys && def < 0.751 * phys);
  ncc_set_max_memory(12345);
  assert_int_equal(ncc_max_memory(), 12345);
  ncc_set_max_memory(0);
  assert_true((double)ncc_max_memory() == def);
}

static void test_budget_tensor(void **state) {
  (void)state;
  ncc_set_max_memory(1 << 20);
  ncc_tensor t;
  int64_t ok[2] = {256, 1024}, big[2] = {257, 1024};
  assert_int_equal(ncc_tensor_alloc(&t, NCC_DT_F32, 2, ok), NCC_OK);
  ncc_tensor_free(&t);
  assert_int_equal(ncc_tensor_alloc(&t, NCC_DT_F32, 2, big), NCC_ERR_NOMEM);
  assert_non_null(strstr(ncc_error_message(), "over the memory budget of 1.0 MiB"));
  assert_null(t.data);
  /* past the address space: a bad shape (INPUT), not a wrap-around */
  int64_t huge[3] = {INT64_C(1) << 40, INT64_C(1) << 40, 1 << 10};
  assert_int_equal(ncc_tensor_alloc(&t, NCC_DT_F32, 3, huge), NCC_ERR_INPUT);
  assert_null(t.data);
  ncc_set_max_memory(0);
}

/* Splats of 512 KiB each: one fits a 1 MiB budget, three do not (the
 * total counts, not each constant alone). */
static void test_budget_nir_splats(void **state) {
  (void)state;
  const char *one = "graph @s(%x: f32[131072]) {\n"
                    "  %c0: f32[131072] = const splat(1.0)\n"
                    "  %y = Add(%x, %c0)\n"
                    "  return %y\n}\n";
  const char *three = "graph @s(%x: f32[131072]) {\n"
                      "  %c0: f32[131072] = const splat(1.0)\n"
                      "  %c1: f32[131072] = const splat(2.0)\n"
                      "  %c2: f32[131072] = const splat(3.0)\n"
                      "  %a = Add(%x, %c0)\n"
                      "  %b = Add(%a, %c1)\n"
                      "  %y = Add(%b, %c2)\n"
                      "  return %y\n}\n";
  ncc_set_max_memory(1 << 20);
  ncc_graph *g = NULL;
  ncc_status st = ncc_graph_parse_text(one, strlen(one), "one.nir", &g);
  if (st) print_error("%s\n", ncc_error_message());
  assert_int_equal(st, NCC_OK);
  ncc_graph_free(g);
  g = NULL;
  assert_int_equal(ncc_graph_parse_text(three, strlen(three), "three.nir", &g),
                   NCC_ERR_NOMEM);
  assert_null(g);
  const char *msg = ncc_error_message();
  assert_non_null(strstr(msg, "three.nir:4:"));
  assert_non_null(strstr(msg, "1.5 MiB, over the memory budget of 1.0 MiB"));
  ncc_set_max_memory(0);
}

/* Concat(c, c) doubles a constant: folding stops growing it past 1 MiB
 * (the old rule counted c twice and doubled it without end), and what is
 * folded counts against the budget. */
static const char *concat_chain(int n, int len) {
  static char buf[8192];
  int o = snprintf(buf, sizeof buf,
                   "graph @amp() {\n  %%t0: f32[%d] = const splat(1.0)\n", len);
  for (int i = 1; i <= n; i++)
    o += snprintf(buf + o, sizeof buf - (size_t)o,
                  "  %%t%d = Concat(%%t%d, %%t%d) {axis = 0}\n", i, i - 1, i - 1);
  snprintf(buf + o, sizeof buf - (size_t)o, "  return %%t%d\n}\n", n);
  return buf;
}

static ncc_status fold(ncc_graph *g) {
  ncc_pipeline *p;
  assert_int_equal(ncc_pipeline_new(1, &p), NCC_OK);
  assert_int_equal(ncc_pipeline_set_passes(p, "const-fold"), NCC_OK);
  ncc_status st = ncc_pipeline_run(p, g);
  ncc_pipeline_free(p);
  return st;
}

static void test_budget_const_fold(void **state) {
  (void)state;
  ncc_set_max_memory(0);
  const char *src = concat_chain(12, 1024); /* 4 KiB doubled 12 times: 16 MiB */
  ncc_graph *g = NULL;
  assert_int_equal(ncc_graph_parse_text(src, strlen(src), "amp.nir", &g), NCC_OK);
  assert_int_equal(fold(g), NCC_OK);
  /* t8 (1 MiB) is folded, t9 (2 MiB from 1 MiB) is left to run time */
  assert_int_equal(ncc_graph_find_value(g, "t8")->kind, NCC_VAL_CONST);
  assert_int_equal(ncc_graph_find_value(g, "t9")->kind, NCC_VAL_NODE);
  assert_int_equal(ncc_graph_num_nodes(g), 4);
  ncc_graph_free(g);
  /* under a 100 KiB budget folding t4 (64 KiB) brings the folded total to
   * 8 + 16 + 32 + 64 = 120 KiB: it fails, naming the node */
  ncc_set_max_memory(100 << 10);
  g = NULL;
  assert_int_equal(ncc_graph_parse_text(src, strlen(src), "amp.nir", &g), NCC_OK);
  assert_int_equal(fold(g), NCC_ERR_NOMEM);
  const char *msg = ncc_error_message();
  assert_non_null(strstr(msg, "node #3 (Concat): const-fold"));
  assert_non_null(strstr(msg, "120.0 KiB, over the memory budget of 100.0 KiB"));
  ncc_graph_free(g);
  ncc_set_max_memory(0);
}

/* ---- planner ---- */

static uint64_t rng_state;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

static int64_t rup(int64_t v) { return (v + 63) / 64 * 64; }

/* The previous planner: first fit over every placed buffer until nothing
 * moves, largest first and by start, the smaller arena kept. */
typedef struct {
  int idx;
  int64_t a, b;
  int begin;
} ref_ent;

static int ref_size_desc(const void *x, const void *y) {
  const ref_ent *p = x, *q = y;
  if (p->a != q->a) return p->a > q->a ? -1 : 1;
  if (p->b != q->b) return p->b > q->b ? -1 : 1;
  return p->idx - q->idx;
}

static int ref_begin(const void *x, const void *y) {
  const ref_ent *p = x, *q = y;
  if (p->begin != q->begin) return p->begin < q->begin ? -1 : 1;
  return ref_size_desc(x, y);
}

static void ref_fit(const ncc_membuf *bufs, const ref_ent *e, int n, int64_t *oa,
                    int64_t *ob, int64_t *aa, int64_t *ab) {
  *aa = *ab = 0;
  for (int i = 0; i < n; i++) {
    const ncc_membuf *v = &bufs[e[i].idx];
    int64_t va = 0, vb = 0;
    for (bool moved = e[i].a + e[i].b != 0; moved;) {
      moved = false;
      for (int j = 0; j < i; j++) {
        const ncc_membuf *u = &bufs[e[j].idx];
        if (u->end < v->begin || v->end < u->begin || e[j].a + e[j].b == 0) continue;
        int64_t ua = oa[e[j].idx], ub = ob[e[j].idx], uea = ua + e[j].a, ueb = ub + e[j].b;
        if ((uea <= va && ueb <= vb) || (va + e[i].a <= ua && vb + e[i].b <= ub)) continue;
        va = va > uea ? va : uea;
        vb = vb > ueb ? vb : ueb;
        moved = true;
      }
    }
    oa[e[i].idx] = va;
    ob[e[i].idx] = vb;
    if (va + e[i].a > *aa) *aa = va + e[i].a;
    if (vb + e[i].b > *ab) *ab = vb + e[i].b;
  }
}

static void ref_layout(const ncc_membuf *bufs, int n, int64_t *aa, int64_t *ab) {
  ref_ent *e = calloc((size_t)n, sizeof *e);
  int64_t *o = calloc(2 * (size_t)n, sizeof *o);
  assert_non_null(e);
  assert_non_null(o);
  for (int i = 0; i < n; i++)
    e[i] = (ref_ent){i, rup(bufs[i].a), rup(bufs[i].b), bufs[i].begin};
  int64_t sa[2], sb[2];
  qsort(e, (size_t)n, sizeof *e, ref_size_desc);
  ref_fit(bufs, e, n, o, o + n, &sa[0], &sb[0]);
  qsort(e, (size_t)n, sizeof *e, ref_begin);
  ref_fit(bufs, e, n, o, o + n, &sa[1], &sb[1]);
  int k = sa[1] < sa[0] || (sa[1] == sa[0] && sb[1] < sb[0]);
  *aa = sa[k];
  *ab = sb[k];
  free(e);
  free(o);
}

/* Overlap, bounds and the live-bytes lower bound at one batch. */
static void check_plan(const ncc_membuf *b, int n, int64_t aa, int64_t ab, int64_t batch,
                       int steps) {
  int64_t arena = aa * batch + ab;
  for (int i = 0; i < n; i++) {
    int64_t oi = b[i].off_a * batch + b[i].off_b, si = b[i].a * batch + b[i].b;
    assert_true(oi >= 0 && oi + si <= arena);
    for (int j = 0; j < i; j++) {
      if (b[i].end < b[j].begin || b[j].end < b[i].begin) continue;
      int64_t oj = b[j].off_a * batch + b[j].off_b, sj = b[j].a * batch + b[j].b;
      if (si == 0 || sj == 0) continue;
      if (!(oi + si <= oj || oj + sj <= oi))
        fail_msg("buffers %d and %d overlap at batch %lld", i, j, (long long)batch);
    }
  }
  int64_t peak = 0;
  for (int t = 0; t < steps; t++) {
    int64_t live = 0;
    for (int i = 0; i < n; i++)
      if (b[i].begin <= t && t <= b[i].end) live += b[i].a * batch + b[i].b;
    if (live > peak) peak = live;
  }
  assert_true(arena >= peak);
}

static void test_memplan_random(void **state) {
  (void)state;
  rng_state = 0x9E3779B97F4A7C15ull;
  for (int round = 0; round < 300; round++) {
    int n = 1 + (int)(rnd() % 60), steps = 1 + (int)(rnd() % 40);
    bool linear = round % 3 == 0;
    ncc_membuf *b = calloc((size_t)n, sizeof *b);
    assert_non_null(b);
    for (int i = 0; i < n; i++) {
      b[i].begin = (int)(rnd() % (uint64_t)steps);
      int span = rnd() % 4 == 0 ? (int)(rnd() % (uint64_t)steps) : (int)(rnd() % 3);
      b[i].end = b[i].begin + span < steps ? b[i].begin + span : steps - 1;
      b[i].b = rnd() % 8 == 0 ? 0 : (int64_t)(rnd() % 5000);
      if (linear && rnd() % 2) b[i].a = (int64_t)(rnd() % 3000);
    }
    int64_t aa, ab, ra, rb;
    assert_int_equal(ncc_memplan_layout(b, n, &aa, &ab), NCC_OK);
    ref_layout(b, n, &ra, &rb);
    /* no worse than the quadratic planner (the batch part first) */
    assert_true(aa < ra || (aa == ra && ab <= rb));
    static const int64_t batches[] = {0, 1, 3, 64, 1000};
    for (int k = 0; k < (linear ? 5 : 1); k++)
      check_plan(b, n, aa, ab, linear ? batches[k] : 0, steps);
    free(b);
  }
}

/* A long chain plans in two slots (the case that was quadratic). */
static void test_memplan_long_chain(void **state) {
  (void)state;
  int n = 100000;
  ncc_membuf *b = calloc((size_t)n, sizeof *b);
  assert_non_null(b);
  for (int i = 0; i < n; i++) b[i] = (ncc_membuf){.b = 256, .begin = i, .end = i + 1};
  int64_t aa, ab;
  assert_int_equal(ncc_memplan_layout(b, n, &aa, &ab), NCC_OK);
  assert_int_equal(aa, 0);
  assert_int_equal(ab, 512);
  for (int i = 1; i < n; i++) assert_true(b[i].off_b != b[i - 1].off_b);
  free(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_budget_api),
      cmocka_unit_test(test_budget_tensor),
      cmocka_unit_test(test_budget_nir_splats),
      cmocka_unit_test(test_budget_const_fold),
      cmocka_unit_test(test_memplan_random),
      cmocka_unit_test(test_memplan_long_chain),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
