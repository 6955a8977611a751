/* passes/memplan_core.c — the interval packer (see memplan_core.h): greedy
 * first fit, largest first and by first step, the smaller arena kept.
 *
 * Which placed buffers are alive together with a new one comes from a
 * segment tree over the steps, so planning stays O(n log T) per buffer's
 * neighbours instead of scanning every placed buffer (quadratic on long
 * graphs). With static sizes the first fit offset is the lowest one clear
 * of every neighbour: one sweep over them sorted by offset finds it. With
 * linear sizes a bump goes to the componentwise maximum of the offset and
 * the neighbour's end, and the fixed-point loop runs over the neighbours
 * in placement order.
 *
 * Offsets and sizes are handled as uint64_t: sizes are at most INT64_MAX
 * and every placed end at most `limit` <= INT64_MAX, so every sum of two
 * is exact; an end past `limit` is reported, never wrapped.
 *
 * Embedded verbatim into generated libraries (codegen/llvm/aot_rt/): libc
 * only, every file-scope name starts with mp_ or ncc_memplan_, and every
 * static function is reachable from the two entry points (the glue is
 * compiled with -Wall -Wextra -Wshadow -pedantic by the tests).
 */
#include "memplan_core.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct mp_ent {
  uint64_t a, b; /* rounded sizes */
  int idx, begin;
} mp_ent;

typedef struct mp_span {
  uint64_t lo, hi;
} mp_span;

/* The scratch, carved out of the caller's `work`: the segment tree's
 * per-node offsets and fill counts, its two CSR lists, the placement
 * entries, the offsets of both orders and the neighbour lists. */
typedef struct mp_work {
  uint64_t *off;     /* 4n: (a, b) offsets of the two orders */
  mp_span *span;     /* n: neighbours by offset (static sizes) */
  mp_ent *e;         /* n: the placement order */
  int *cand, *stamp; /* n + 1 each: neighbours, and seen-marks */
  int size;          /* tree leaves, a power of two */
  size_t nodes;      /* 2 * size + 1 */
  int *cover_off, *cover_fill, *cover;
  int *part_off, *part_fill, *part;
} mp_work;

static uint64_t mp_round(int64_t v) {
  return ((uint64_t)v + NCC_MEMPLAN_ALIGN - 1) / NCC_MEMPLAN_ALIGN * NCC_MEMPLAN_ALIGN;
}

static int mp_end(const ncc_membuf *b) { return b->end > b->begin ? b->end : b->begin; }

static int mp_by_size_desc(const void *x, const void *y) {
  const mp_ent *p = x, *q = y;
  if (p->a != q->a) return p->a > q->a ? -1 : 1;
  if (p->b != q->b) return p->b > q->b ? -1 : 1;
  return p->idx - q->idx;
}

static int mp_by_begin(const void *x, const void *y) {
  const mp_ent *p = x, *q = y;
  if (p->begin != q->begin) return p->begin < q->begin ? -1 : 1;
  return mp_by_size_desc(x, y);
}

static int mp_by_int(const void *x, const void *y) {
  int p = *(const int *)x, q = *(const int *)y;
  return (p > q) - (p < q);
}

static int mp_by_lo(const void *x, const void *y) {
  const mp_span *p = x, *q = y;
  return (p->lo > q->lo) - (p->lo < q->lo);
}

/* u ends at or below v's offset in both parts. */
static bool mp_below(uint64_t ua, uint64_t ub, uint64_t va, uint64_t vb) {
  return ua <= va && ub <= vb;
}

/* ---- the segment tree ----
 * A placed buffer is listed in `cover` at the O(log T) nodes its lifetime
 * decomposes into, and in `part` at those nodes and their ancestors. The
 * buffers alive together with [lo, hi] are then `part` of its
 * decomposition nodes plus `cover` of their ancestors: every overlap is
 * found, in O(log T) lists. Calls fn(w, node, is_decomposition_node, ud)
 * for the nodes of [lo, hi]. */
typedef void (*mp_visit)(mp_work *w, int node, bool full, void *ud);

static void mp_walk(mp_work *w, int node, int nl, int nr, int lo, int hi, mp_visit fn,
                    void *ud) {
  if (hi < nl || nr < lo) return;
  if (lo <= nl && nr <= hi) {
    fn(w, node, true, ud);
    return;
  }
  fn(w, node, false, ud);
  int mid = nl + (nr - nl) / 2;
  mp_walk(w, 2 * node, nl, mid, lo, hi, fn, ud);
  mp_walk(w, 2 * node + 1, mid + 1, nr, lo, hi, fn, ud);
}

/* Counts list entries: into the per-node offsets when they exist (w->
 * cover_off), else into the totals at ud (ncc_memplan_work_bytes). */
static void mp_count(mp_work *w, int node, bool full, void *ud) {
  if (!w->cover_off) {
    size_t *tot = ud;
    tot[0] += full;
    tot[1]++;
    return;
  }
  if (full) w->cover_off[node + 1]++;
  w->part_off[node + 1]++;
}

static void mp_put(mp_work *w, int node, bool full, void *ud) {
  int id = *(const int *)ud;
  if (full) w->cover[w->cover_off[node] + w->cover_fill[node]++] = id;
  w->part[w->part_off[node] + w->part_fill[node]++] = id;
}

typedef struct mp_query {
  int n, mark;
} mp_query;

static void mp_add_list(mp_work *w, mp_query *q, const int *l, int n) {
  for (int i = 0; i < n; i++)
    if (w->stamp[l[i]] != q->mark) {
      w->stamp[l[i]] = q->mark;
      w->cand[q->n++] = l[i];
    }
}

static void mp_get(mp_work *w, int node, bool full, void *ud) {
  if (full) mp_add_list(w, ud, w->part + w->part_off[node], w->part_fill[node]);
  else mp_add_list(w, ud, w->cover + w->cover_off[node], w->cover_fill[node]);
}

/* The first step and the tree's leaves for bufs (steps are shifted by -t0
 * into [0, size)). */
static int mp_tree_size(const ncc_membuf *bufs, int n, int *t0) {
  *t0 = bufs[0].begin;
  for (int i = 1; i < n; i++)
    if (bufs[i].begin < *t0) *t0 = bufs[i].begin;
  int span = 1, size = 1;
  for (int i = 0; i < n; i++)
    if (mp_end(&bufs[i]) - *t0 + 1 > span) span = mp_end(&bufs[i]) - *t0 + 1;
  while (size < span) size *= 2;
  return size;
}

static bool mp_grow(uint64_t *total, uint64_t count, uint64_t each) {
  if (count && each > (uint64_t)SIZE_MAX / count) return false;
  if (*total > (uint64_t)SIZE_MAX - count * each) return false;
  *total += count * each;
  return true;
}

/* Carves the scratch at base (NULL: only measures it); returns its bytes,
 * 0 when they do not fit in a size_t. Arrays of 8-byte elements first, so
 * every one is aligned. */
static size_t mp_carve(mp_work *w, char *base, int n, int size, uint64_t n_cover,
                       uint64_t n_part) {
  uint64_t nn = (uint64_t)n, nodes = 2 * (uint64_t)size + 1, at = 0;
  uint64_t o_off = at, o_span, o_e, o_cand, o_stamp, o_cov, o_part, o_cl, o_pl;
  bool ok = mp_grow(&at, 4 * nn, sizeof *w->off);
  o_span = at;
  ok = ok && mp_grow(&at, nn, sizeof *w->span);
  o_e = at;
  ok = ok && mp_grow(&at, nn, sizeof *w->e);
  o_cand = at;
  ok = ok && mp_grow(&at, nn + 1, sizeof(int));
  o_stamp = at;
  ok = ok && mp_grow(&at, nn + 1, sizeof(int));
  o_cov = at;
  ok = ok && mp_grow(&at, 2 * nodes, sizeof(int));
  o_part = at;
  ok = ok && mp_grow(&at, 2 * nodes, sizeof(int));
  o_cl = at;
  ok = ok && mp_grow(&at, n_cover + 1, sizeof(int));
  o_pl = at;
  ok = ok && mp_grow(&at, n_part + 1, sizeof(int));
  if (!ok) return 0;
  if (base) {
    w->off = (uint64_t *)(void *)(base + o_off);
    w->span = (mp_span *)(void *)(base + o_span);
    w->e = (mp_ent *)(void *)(base + o_e);
    w->cand = (int *)(void *)(base + o_cand);
    w->stamp = (int *)(void *)(base + o_stamp);
    w->cover_off = (int *)(void *)(base + o_cov);
    w->cover_fill = w->cover_off + nodes;
    w->part_off = (int *)(void *)(base + o_part);
    w->part_fill = w->part_off + nodes;
    w->cover = (int *)(void *)(base + o_cl);
    w->part = (int *)(void *)(base + o_pl);
    w->size = size;
    w->nodes = (size_t)nodes;
  }
  return (size_t)at;
}

/* List sizes of the tree over bufs: tot[0] cover entries, tot[1] part. */
static void mp_list_sizes(const ncc_membuf *bufs, int n, int size, int t0, size_t *tot) {
  mp_work w;
  memset(&w, 0, sizeof w);
  tot[0] = tot[1] = 0;
  for (int i = 0; i < n; i++)
    mp_walk(&w, 1, 0, size - 1, bufs[i].begin - t0, mp_end(&bufs[i]) - t0, mp_count, tot);
}

NCC_MEMPLAN_CORE_API size_t ncc_memplan_work_bytes(const ncc_membuf *bufs, int n) {
  if (n <= 0) return 0;
  int t0, size = mp_tree_size(bufs, n, &t0);
  size_t tot[2];
  mp_list_sizes(bufs, n, size, t0, tot);
  return mp_carve(NULL, NULL, n, size, tot[0], tot[1]);
}

/* Empties the tree's lists and sizes them for every buffer of e[]. */
static void mp_tree_reset(mp_work *w, const ncc_membuf *bufs, int n, int t0) {
  memset(w->cover_off, 0, 2 * w->nodes * sizeof(int));
  memset(w->part_off, 0, 2 * w->nodes * sizeof(int));
  for (int i = 0; i < n; i++) {
    const ncc_membuf *b = &bufs[w->e[i].idx];
    mp_walk(w, 1, 0, w->size - 1, b->begin - t0, mp_end(b) - t0, mp_count, NULL);
  }
  for (size_t k = 1; k < w->nodes; k++) {
    w->cover_off[k] += w->cover_off[k - 1];
    w->part_off[k] += w->part_off[k - 1];
  }
}

/* First fit in the order of w->e; offsets into oa/ob (by buffer index).
 * Returns false when an end passes limit. */
static bool mp_first_fit(mp_work *w, const ncc_membuf *bufs, int n, int t0,
                         uint64_t limit, uint64_t *oa, uint64_t *ob, uint64_t *arena_a,
                         uint64_t *arena_b) {
  const mp_ent *e = w->e;
  *arena_a = *arena_b = 0;
  bool linear = false;
  for (int i = 0; i < n; i++) linear |= e[i].a != 0;
  mp_tree_reset(w, bufs, n, t0);
  memset(w->stamp, 0, ((size_t)n + 1) * sizeof(int));
  /* cand[] holds positions in e[] (placement order) */
  for (int i = 0; i < n; i++) {
    const ncc_membuf *v = &bufs[e[i].idx];
    int lo = v->begin - t0, hi = mp_end(v) - t0;
    uint64_t va = 0, vb = 0;
    if (e[i].a + e[i].b != 0) {
      mp_query q = {.n = 0, .mark = i + 1};
      mp_walk(w, 1, 0, w->size - 1, lo, hi, mp_get, &q);
      if (!linear) {
        for (int c = 0; c < q.n; c++) {
          int u = e[w->cand[c]].idx;
          w->span[c].lo = ob[u];
          w->span[c].hi = ob[u] + e[w->cand[c]].b;
        }
        qsort(w->span, (size_t)q.n, sizeof *w->span, mp_by_lo);
        for (int c = 0; c < q.n; c++)
          if (w->span[c].lo < vb + e[i].b && w->span[c].hi > vb) vb = w->span[c].hi;
      } else {
        qsort(w->cand, (size_t)q.n, sizeof *w->cand, mp_by_int);
        for (bool moved = true; moved;) {
          moved = false;
          for (int c = 0; c < q.n; c++) {
            int j = w->cand[c];
            uint64_t ua = oa[e[j].idx], ub = ob[e[j].idx];
            uint64_t uea = ua + e[j].a, ueb = ub + e[j].b;
            if (mp_below(uea, ueb, va, vb) || mp_below(va + e[i].a, vb + e[i].b, ua, ub))
              continue;
            va = va > uea ? va : uea;
            vb = vb > ueb ? vb : ueb;
            moved = true;
          }
        }
      }
      int id = i;
      mp_walk(w, 1, 0, w->size - 1, lo, hi, mp_put, &id);
    }
    if (e[i].a > limit - va || e[i].b > limit - vb) return false;
    oa[e[i].idx] = va;
    ob[e[i].idx] = vb;
    if (va + e[i].a > *arena_a) *arena_a = va + e[i].a;
    if (vb + e[i].b > *arena_b) *arena_b = vb + e[i].b;
  }
  return true;
}

NCC_MEMPLAN_CORE_API int ncc_memplan_pack(ncc_membuf *bufs, int n, int64_t limit,
                                          void *work, int64_t *arena_a,
                                          int64_t *arena_b) {
  *arena_a = *arena_b = 0;
  if (n <= 0) return 0;
  if (limit < 0 || !work) return -1;
  int t0, size = mp_tree_size(bufs, n, &t0);
  size_t tot[2];
  mp_list_sizes(bufs, n, size, t0, tot);
  mp_work w;
  if (!mp_carve(&w, work, n, size, tot[0], tot[1])) return -1;
  for (int i = 0; i < n; i++) {
    if (bufs[i].a < 0 || bufs[i].b < 0) return -1;
    w.e[i].idx = i;
    w.e[i].a = mp_round(bufs[i].a);
    w.e[i].b = mp_round(bufs[i].b);
    w.e[i].begin = bufs[i].begin;
  }
  uint64_t sa[2], sb[2], *off = w.off, lim = (uint64_t)limit;
  qsort(w.e, (size_t)n, sizeof *w.e, mp_by_size_desc);
  if (!mp_first_fit(&w, bufs, n, t0, lim, off, off + n, &sa[0], &sb[0])) return -1;
  qsort(w.e, (size_t)n, sizeof *w.e, mp_by_begin);
  if (!mp_first_fit(&w, bufs, n, t0, lim, off + 2 * n, off + 3 * n, &sa[1], &sb[1]))
    return -1;
  int k = sa[1] < sa[0] || (sa[1] == sa[0] && sb[1] < sb[0]);
  for (int i = 0; i < n; i++) {
    bufs[i].off_a = (int64_t)off[2 * k * n + i];
    bufs[i].off_b = (int64_t)off[(2 * k + 1) * n + i];
  }
  *arena_a = (int64_t)sa[k];
  *arena_b = (int64_t)sb[k];
  return 0;
}
