/* ir/alloc.c — the one allocator hook and the per-graph arena.
 *
 * Everything libncc allocates goes through ncc_malloc & co., so a test can
 * install an allocator that fails the Nth allocation and check that every
 * path reports NCC_ERR_NOMEM instead of crashing. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ir.h"

static void *default_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  (void)ud;
  (void)osize;
  if (nsize == 0) {
    free(ptr);
    return NULL;
  }
  return realloc(ptr, nsize);
}

static ncc_alloc_fn alloc_fn = default_alloc;
static void *alloc_ud;

void ncc_set_allocator(ncc_alloc_fn fn, void *ud) {
  alloc_fn = fn ? fn : default_alloc;
  alloc_ud = fn ? ud : NULL;
}

void *ncc_malloc(size_t n) {
  void *p = alloc_fn(alloc_ud, NULL, 0, n ? n : 1);
  if (!p) ncc_error(NCC_ERR_NOMEM, "out of memory (%zu bytes)", n);
  return p;
}

void *ncc_calloc(size_t n, size_t size) {
  if (size && n > SIZE_MAX / size) {
    ncc_error(NCC_ERR_NOMEM, "out of memory (size overflow)");
    return NULL;
  }
  size_t total = n * size;
  void *p = ncc_malloc(total);
  if (p) memset(p, 0, total ? total : 1);
  return p;
}

void *ncc_realloc(void *p, size_t old, size_t n) {
  void *q = alloc_fn(alloc_ud, p, old, n ? n : 1);
  if (!q) ncc_error(NCC_ERR_NOMEM, "out of memory (%zu bytes)", n);
  return q;
}

void ncc_free(void *p, size_t n) {
  if (p) alloc_fn(alloc_ud, p, n, 0);
}

/* Below this a few traps cost less than the call. */
#define PREFAULT_MIN ((size_t)1 << 20)

void ncc_prefault(void *p, size_t n) {
#ifdef MADV_POPULATE_WRITE
  long page = sysconf(_SC_PAGESIZE); /* cheap; no shared state: packing
                                        threads call this at once */
  if (!p || n < PREFAULT_MIN || page <= 0) return;
  uintptr_t mask = (uintptr_t)page - 1;
  uintptr_t a = ((uintptr_t)p + mask) & ~mask, e = ((uintptr_t)p + n) & ~mask;
  /* advice only: a kernel before 5.14 says EINVAL and the pages fault in
   * one by one as before */
  if (e > a) (void)madvise((void *)a, e - a, MADV_POPULATE_WRITE);
#else
  (void)p;
  (void)n;
#endif
}

/* ---- arena: a list of blocks; large requests get a block of their own ---- */
struct ncc_arena_block {
  ncc_arena_block *next;
  size_t cap, used;
  _Alignas(16) unsigned char mem[];
};

#define ARENA_BLOCK (64 * 1024)

/* an adopted buffer; the record itself lives in the arena's blocks */
struct ncc_arena_adopted {
  ncc_arena_adopted *next;
  void *p;
  size_t n;
};

void ncc_arena_init(ncc_arena *a) {
  a->head = NULL;
  a->adopted = NULL;
  a->used_bytes = 0;
}

void ncc_arena_release(ncc_arena *a) {
  /* the adopted buffers first: their records are in the blocks */
  for (ncc_arena_adopted *d = a->adopted; d; d = d->next) ncc_free(d->p, d->n);
  a->adopted = NULL;
  ncc_arena_block *b = a->head;
  while (b) {
    ncc_arena_block *n = b->next;
    ncc_free(b, sizeof *b + b->cap);
    b = n;
  }
  a->head = NULL;
  a->used_bytes = 0;
}

void *ncc_arena_alloc(ncc_arena *a, size_t n) {
  void *p = ncc_arena_alloc_uninit(a, n);
  size_t r = (n + 15) & ~(size_t)15;
  if (p) memset(p, 0, r ? r : 16);
  return p;
}

void *ncc_arena_alloc_uninit(ncc_arena *a, size_t n) {
  n = (n + 15) & ~(size_t)15;
  if (n == 0) n = 16;
  ncc_arena_block *b = a->head;
  if (!b || b->cap - b->used < n) {
    size_t cap = n > ARENA_BLOCK / 4 ? n : ARENA_BLOCK;
    if (cap > SIZE_MAX - sizeof *b) {
      ncc_error(NCC_ERR_NOMEM, "out of memory (arena request too large)");
      return NULL;
    }
    ncc_arena_block *nb = ncc_malloc(sizeof *nb + cap);
    if (!nb) return NULL;
    nb->cap = cap;
    nb->used = 0;
    if (b && cap != ARENA_BLOCK) {
      /* A big dedicated block goes behind the current one so the current
       * block's free space stays usable. */
      nb->next = b->next;
      b->next = nb;
    } else {
      nb->next = b;
      a->head = nb;
    }
    b = nb;
  }
  void *p = b->mem + b->used;
  b->used += n;
  a->used_bytes += n;
  return p;
}

void *ncc_arena_adopt(ncc_arena *a, void *p, size_t n) {
  if (!p || ((uintptr_t)p & 15)) return NULL;
  ncc_arena_adopted *d = ncc_arena_alloc_uninit(a, sizeof *d);
  if (!d) return NULL;
  d->p = p;
  d->n = n;
  d->next = a->adopted;
  a->adopted = d;
  a->used_bytes += n;
  return p;
}

void *ncc_arena_memdup(ncc_arena *a, const void *p, size_t n) {
  void *q = ncc_arena_alloc(a, n);
  if (q && n) memcpy(q, p, n);
  return q;
}

char *ncc_arena_strndup(ncc_arena *a, const char *s, size_t n) {
  char *q = ncc_arena_alloc(a, n + 1);
  if (q) {
    memcpy(q, s, n);
    q[n] = 0;
  }
  return q;
}

char *ncc_arena_strdup(ncc_arena *a, const char *s) {
  return ncc_arena_strndup(a, s, strlen(s));
}
