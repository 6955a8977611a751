/* passes/memplan_core.h — the interval packer under ncc's one memory
 * planner: buffers with a size (a * batch + b bytes) and a lifetime (the
 * steps [begin, end]) get offsets into one arena, two buffers sharing bytes
 * only when their lifetimes are disjoint.
 *
 * Pure C11 over libc, no IR and no allocation (the caller hands in the
 * scratch it measured with ncc_memplan_work_bytes), because the same code
 * runs in two places: in the compiler (passes/memplan.c, and through it the
 * executor runtime/exec.c) and, embedded at build time, in the glue of every
 * library `ncc compile --emit=lib` writes (codegen/llvm/aot_rt/), which
 * plans its scratch at run time for the current symbol values. There the
 * glue defines NCC_MEMPLAN_CORE_API as `static`, so two models link into
 * one program.
 */
#ifndef NCC_MEMPLAN_CORE_H
#define NCC_MEMPLAN_CORE_H

#include <stddef.h>
#include <stdint.h>

#ifndef NCC_MEMPLAN_CORE_API
#define NCC_MEMPLAN_CORE_API
#endif

/* Every buffer's size is rounded up to this, so every offset is a multiple
 * of it (the kernels' vector loads and the glue assume 64). */
#define NCC_MEMPLAN_ALIGN 64

typedef struct ncc_membuf {
  int64_t a, b;         /* bytes = a * batch + b (a = 0: static), >= 0 */
  int begin, end;       /* first and last step using it, inclusive */
  int64_t off_a, off_b; /* result: offset = off_a * batch + off_b */
} ncc_membuf;

/* Bytes of scratch ncc_memplan_pack needs for these buffers (it depends
 * only on n and the lifetimes, not on the sizes); 0 when n <= 0 or when
 * that does not fit in a size_t. */
NCC_MEMPLAN_CORE_API size_t ncc_memplan_work_bytes(const ncc_membuf *bufs, int n);

/* Places bufs[0..n) and sets their off_a/off_b; *arena_a / *arena_b: the
 * arena's bytes. Greedy first fit (a buffer starts at offset 0 and is
 * bumped past every placed buffer alive at the same time that overlaps
 * it), once largest first and once by first step, the smaller arena kept
 * (its batch part first). With linear sizes "u lies below v" must hold in
 * both parts, so the plan is valid for every batch >= 0 at once. `work`:
 * ncc_memplan_work_bytes(bufs, n) bytes, suitably aligned (malloc's).
 * Returns 0, or -1 (nothing usable) when a size is negative or an end,
 * in either part, would pass `limit` bytes (0 <= limit <= INT64_MAX). */
NCC_MEMPLAN_CORE_API int ncc_memplan_pack(ncc_membuf *bufs, int n, int64_t limit,
                                          void *work, int64_t *arena_a,
                                          int64_t *arena_b);

#endif /* NCC_MEMPLAN_CORE_H */
