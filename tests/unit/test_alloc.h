/* tests/unit/test_alloc.h — the one failing allocator every unit test uses
 * to check NCC_ERR_NOMEM paths (header-only: each test is one executable).
 *
 *   test_alloc_arm(k);    // the k-th allocation from now (0-based) fails
 *   ... call libncc ...
 *   test_alloc_disarm();  // back to malloc
 *   test_alloc.calls      // allocations seen while armed
 *   test_alloc.live       // blocks allocated and not yet freed while armed
 *
 * The usual loop arms k = 0, 1, ... until a run makes no more than k
 * allocations, i.e. the failure was never injected and the run went clean. */
#ifndef NCC_TEST_ALLOC_H
#define NCC_TEST_ALLOC_H

#include <stdlib.h>

#include "ncc.h"

static struct {
  long calls; /* allocations (and reallocations) while armed */
  long fail_at; /* 0-based index of the failing one; -1: never */
  long live;  /* malloc'd minus freed, while armed */
} test_alloc = {0, -1, 0};

static void *test_alloc_fn(void *ud, void *ptr, size_t osize, size_t nsize) {
  (void)ud;
  (void)osize;
  if (nsize == 0) {
    if (ptr) test_alloc.live--;
    free(ptr);
    return NULL;
  }
  if (test_alloc.calls++ == test_alloc.fail_at) return NULL;
  void *q = realloc(ptr, nsize);
  if (q && !ptr) test_alloc.live++;
  return q;
}

static inline void test_alloc_arm(long fail_at) {
  test_alloc.calls = 0;
  test_alloc.live = 0;
  test_alloc.fail_at = fail_at;
  ncc_set_allocator(test_alloc_fn, NULL);
}

static inline void test_alloc_disarm(void) { ncc_set_allocator(NULL, NULL); }

/* True when the armed run never reached its failing allocation. */
static inline int test_alloc_ran_clean(void) {
  return test_alloc.fail_at < 0 || test_alloc.calls <= test_alloc.fail_at;
}

#endif /* NCC_TEST_ALLOC_H */
