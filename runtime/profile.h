/* runtime/profile.h — the recorder behind ncc_module_profile_* (ncc.h).
 *
 * A module owns one recorder; while a profiled run is in progress the
 * module makes it the calling thread's current recorder, and the executors
 * (runtime/exec.c, targets/gpu/gpu_exec.c) and the cpu kernel launch read
 * it once per run / launch: NULL (not profiling) costs one thread-local load.
 * Only the calling thread appends; the pool's workers write their shares'
 * times into a launch-local array the launch appends afterwards.
 */
#ifndef NCC_RUNTIME_PROFILE_H
#define NCC_RUNTIME_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "../ir/ir.h"

typedef struct ncc_prof {
  ncc_profile_event *ev;
  int n, cap;
  int run;          /* index of the run in progress */
  int64_t base_ns;  /* when profiling was enabled */
  bool dropped;     /* an append found no memory (records are incomplete) */
} ncc_prof;

int64_t ncc_prof_now_ns(void); /* CLOCK_MONOTONIC */
/* Append one event (t0, t1 from ncc_prof_now_ns). */
void ncc_prof_add(ncc_prof *p, int node, int thread, bool host, int64_t t0, int64_t t1);
void ncc_prof_reset(ncc_prof *p);
void ncc_prof_free(ncc_prof *p);

/* The recorder of the profiled run on this thread, or NULL. */
ncc_prof *ncc_prof_current(void);
void ncc_prof_set_current(ncc_prof *p);

#endif /* NCC_RUNTIME_PROFILE_H */
