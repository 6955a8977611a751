/* codegen/llvm/aot_rt/aot_rt.h — the AOT runtime, part 1 of 2: the types of
 * the tables that `ncc compile --emit=lib` generates (docs/AOT.md).
 *
 * The glue of a generated library is one C file: this header, then the
 * generated part (codegen/llvm/aot_lib.c: the model's tables and the macros
 * NCC_API(x), NCC_MODEL, NCC_ERR(x), NCC_WEIGHTS, NCC_NUM_*), then
 * aot_rt.c. Both runtime files are embedded into libncc at build time
 * (embed.cmake here inlines their local #includes), so the glue has the
 * same text as these files; the unit test tests/aot_rt/ compiles them the
 * same way around hand-made tables, under -Werror and the sanitizers.
 */
#ifndef NCC_AOT_RT_H
#define NCC_AOT_RT_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Every compiled kernel has this ABI: buffers in kernel order, the values
 * of the symbolic dims, and this thread's share (tid of nth) of the
 * outermost parallel loop. */
typedef void (*ncc_kfn)(void *const *bufs, const int64_t *syms, int32_t tid,
                        int32_t nth);

/* Where a tensor lives: a caller's input, an output buffer of the model,
 * the embedded weights, or a planned slice of the scratch arena. */
enum { NCC_S_IN, NCC_S_OUT, NCC_S_CONST, NCC_S_TMP };

typedef struct ncc_slot {
  int kind, index; /* IN/OUT: input/output number; TMP: scratch number */
  size_t esize;    /* bytes per element */
  int rank;
  int64_t dims[8]; /* >= 0: static; < 0: symbolic dim -(id + 1) */
  size_t off;      /* CONST: offset in the weights */
  int def, last;   /* TMP: first and last step that touch it */
} ncc_slot;

/* kernel >= 0: run it on bufs (slots); kernel < 0: copy slot src to dst. */
typedef struct ncc_step {
  int kernel, n_bufs;
  int bufs[64]; /* KIR_MAX_BUFS (codegen/kir.h) */
  int size_slot; /* its element count times cost sizes the thread count */
  double cost;
  int dst, src;
} ncc_step;

#endif /* NCC_AOT_RT_H */
