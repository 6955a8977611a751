/* ir/ctime.h — compile-time accounting inside libncc (ncc_compile_stats).
 *
 * The public entry points put the caller's ncc_options in scope
 * (ir/options.h); these helpers add to its compile_stats, if any, and do
 * nothing otherwise, so code generators time their phases without an
 * argument for it. Kernel rows are found by name (kernel names are unique
 * within a graph). Weight packing is counted on a per-thread clock that
 * the lowering loop reads around each kernel (ncc_ctime_pack_*).
 */
#ifndef NCC_IR_CTIME_H
#define NCC_IR_CTIME_H

#include "ir.h"

double ncc_ctime_now(void); /* monotonic, milliseconds */
/* The stats in scope, or NULL. */
ncc_compile_stats *ncc_ctime_stats(void);
/* The phases' totals so far (0 when stats are off). */
double ncc_ctime_phase_sum(void);
/* Add ms to a phase's total. */
void ncc_ctime_add(ncc_compile_phase p, double ms);
/* A kernel row (created if new, with its node count); -1 when stats are
 * off or out of memory (then only totals are kept). */
int ncc_ctime_kernel(const char *name, int nodes);
int ncc_ctime_find(const char *name);
/* Add ms to kernel k's phase and to the phase total. */
void ncc_ctime_kernel_add(int k, ncc_compile_phase p, double ms);
void ncc_ctime_kernel_reused(int k);
/* Kernel k's machine code came from the compile cache (hit) or was
 * compiled and stored (miss): the row's flag and the call's counts. */
void ncc_ctime_kernel_cache(int k, bool hit);
/* Packing: code that packs weights brackets it with begin/end; the total
 * so far (this thread) is what the lowering loop differences. */
double ncc_ctime_pack_begin(void);
void ncc_ctime_pack_end(double t0);
double ncc_ctime_pack_total(void);
/* A parallel section of kernel compiles: its threads, its wall-clock time
 * and the phase time (per kernel, already added) spent inside it. */
void ncc_ctime_parallel(int threads, double wall_ms, double work_ms);
/* Begin/finish a public call's accounting: total_ms and other_ms. */
void ncc_ctime_finish(double t0);

#endif /* NCC_IR_CTIME_H */
