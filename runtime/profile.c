/* runtime/profile.c — the profile recorder (runtime/profile.h). */
#include "profile.h"

#include <time.h>

static _Thread_local ncc_prof *current;

ncc_prof *ncc_prof_current(void) { return current; }
void ncc_prof_set_current(ncc_prof *p) { current = p; }

int64_t ncc_prof_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void ncc_prof_add(ncc_prof *p, int node, int thread, bool host, int64_t t0, int64_t t1) {
  if (p->n == p->cap) {
    int cap = p->cap ? p->cap * 2 : 1024;
    ncc_profile_event *e = ncc_realloc(p->ev, sizeof *e * (size_t)p->cap, sizeof *e * (size_t)cap);
    if (!e) {
      p->dropped = true;
      return;
    }
    p->ev = e;
    p->cap = cap;
  }
  ncc_profile_event *e = &p->ev[p->n++];
  e->run = p->run;
  e->node = node;
  e->thread = thread;
  e->host = host ? 1 : 0;
  e->start_us = (double)(t0 - p->base_ns) / 1e3;
  e->dur_us = (double)(t1 - t0) / 1e3;
}

void ncc_prof_reset(ncc_prof *p) {
  p->n = 0;
  p->run = 0;
  p->dropped = false;
  p->base_ns = ncc_prof_now_ns();
}

void ncc_prof_free(ncc_prof *p) {
  ncc_free(p->ev, 0);
  p->ev = NULL;
  p->n = p->cap = 0;
}
