/* codegen/kir_digest.c — a kernel's structure into a SHA-256, for the
 * compile cache's key (codegen/llvm/jit.c). Unlike kir_kernel_hash (64
 * bits, for dedupe within one graph, where kir_kernel_equal confirms), a
 * persistent key must not collide, so the structure goes in whole, as
 * fixed-width fields with explicit tags for absent children and list
 * ends: two kernels with the same bytes have the same tree.
 *
 * Left out, like kir_kernel_equal: the kernel's and buffers' names, what
 * KIR_BIND_DATA buffers point to (passed at launch) and cost_per_elem
 * (the runtime's thread count), none of which the LLVM emitter reads; so
 * equal kernels of different models share a key. */
#include <string.h>

#include "../ir/sha256.h"
#include "kir.h"

/* A conv kernel visits tens of thousands of expression nodes, most of
 * them shared subexpressions (an index used by many loads): ~2000 distinct
 * nodes in ResNet-18's largest. So the DAG goes in, not the tree: a node
 * seen before is a back reference (its number in visit order), and each
 * field is a LEB128 varint (signed ones zigzagged). Both are prefix-free,
 * so the bytes decode to one DAG, hence one tree: kernels that differ
 * never feed the same bytes (equal kernels shared differently would: a
 * miss, never a wrong hit). Bytes collect in buf and reach the hash in
 * large blocks. */
typedef struct sink {
  ncc_sha256 *s;
  size_t n;
  uint8_t buf[4096];
  /* the nodes seen: open addressing, pointer -> visit number + 1 */
  const kir_expr **seen;
  uint64_t *num;
  size_t cap, used;
  uint64_t nodes; /* new nodes so far */
} sink;

static void uv(sink *o, uint64_t v) {
  if (o->n > sizeof o->buf - 10) {
    ncc_sha256_update(o->s, o->buf, o->n);
    o->n = 0;
  }
  while (v >= 0x80) {
    o->buf[o->n++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  o->buf[o->n++] = (uint8_t)v;
}

static void sv(sink *o, int64_t v) {
  uv(o, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

static size_t slot_of(const sink *o, const kir_expr *e) {
  size_t h = (size_t)(((uintptr_t)e >> 4) * 0x9e3779b97f4a7c15ull);
  size_t i = h & (o->cap - 1);
  while (o->seen[i] && o->seen[i] != e) i = (i + 1) & (o->cap - 1);
  return i;
}

/* Double the table; false (the table unchanged) when out of memory. */
static bool grow(sink *o) {
  size_t cap = o->cap ? 2 * o->cap : 1024;
  const kir_expr **seen = ncc_calloc(cap, sizeof *seen);
  uint64_t *num = ncc_calloc(cap, sizeof *num);
  if (!seen || !num) {
    ncc_free(seen, 0);
    ncc_free(num, 0);
    return false;
  }
  sink t = {.seen = seen, .num = num, .cap = cap};
  for (size_t i = 0; i < o->cap; i++)
    if (o->seen[i]) {
      size_t j = slot_of(&t, o->seen[i]);
      seen[j] = o->seen[i];
      num[j] = o->num[i];
    }
  ncc_free(o->seen, 0);
  ncc_free(o->num, 0);
  o->seen = seen;
  o->num = num;
  o->cap = cap;
  return true;
}

/* Tags: 0 no node, 1 a back reference, kind + 2 a new node. */
static void digest_expr(sink *o, const kir_expr *e) {
  if (!e) {
    uv(o, 0);
    return;
  }
  /* every new node takes the next number, recorded or not: out of memory,
   * a node goes in whole again, and a back reference still names one
   * node of the bytes */
  bool room = 2 * (o->used + 1) <= o->cap || grow(o);
  size_t i = room ? slot_of(o, e) : 0;
  if (room && o->seen[i]) {
    uv(o, 1);
    uv(o, o->num[i] - 1);
    return;
  }
  o->nodes++;
  if (room) {
    o->seen[i] = e;
    o->num[i] = o->nodes;
    o->used++;
  }
  uint64_t fb;
  memcpy(&fb, &e->f, sizeof fb);
  uv(o, (uint64_t)e->k + 2);
  uv(o, (uint64_t)e->op);
  uv(o, (uint64_t)e->dt);
  sv(o, e->lanes);
  sv(o, e->id);
  uv(o, fb);
  sv(o, e->i);
  digest_expr(o, e->a);
  digest_expr(o, e->b);
  digest_expr(o, e->c);
}

static void digest_stmts(sink *o, const kir_stmt *st) {
  for (; st; st = st->next) {
    uv(o, (uint64_t)st->k + 1);
    sv(o, st->var);
    uv(o, (uint64_t)st->mark);
    sv(o, st->factor);
    sv(o, st->buf);
    sv(o, st->local);
    digest_expr(o, st->lo);
    digest_expr(o, st->hi);
    digest_expr(o, st->index);
    digest_expr(o, st->value);
    digest_expr(o, st->count);
    if (st->k == KIR_S_FOR) digest_stmts(o, st->body);
  }
  uv(o, 0); /* end of the list */
}

void kir_kernel_digest(const kir_kernel *k, ncc_sha256 *s) {
  sink o = {.s = s};
  ncc_sha256_str(s, "kir-digest 2");
  sv(&o, k->n_bufs);
  sv(&o, k->n_locals);
  sv(&o, k->n_vars);
  for (int b = 0; b < k->n_bufs; b++) {
    const kir_buf *u = &k->bufs[b];
    uv(&o, (uint64_t)u->dt);
    uv(&o, u->is_output);
    uv(&o, (uint64_t)u->bind);
    sv(&o, u->index);
    sv(&o, u->local_elems);
  }
  for (int l = 0; l < k->n_locals; l++) {
    uv(&o, (uint64_t)k->locals[l].dt);
    sv(&o, k->locals[l].lanes);
  }
  digest_stmts(&o, k->body);
  ncc_sha256_update(s, o.buf, o.n);
  ncc_free(o.seen, 0);
  ncc_free(o.num, 0);
}
