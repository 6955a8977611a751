/* ir/budget.c — the process-wide memory budget (see ir/budget.h).
 *
 * The default is 75% of physical memory: what a model may make ncc
 * allocate in one go without pushing the machine into swap or the OOM
 * killer. It is a plain process-wide setting like the allocator hook;
 * the library reads no environment variable for it (the CLI has
 * --max-memory). */
#include "budget.h"

#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#include "../include/ncc.h"
#include "options.h"

static _Atomic size_t max_memory; /* 0: the default */

void ncc_set_max_memory(size_t bytes) { atomic_store(&max_memory, bytes); }

static size_t default_budget(void) {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return (size_t)1 << 32; /* unknown: 4 GiB */
  double b = (double)pages * (double)page * 0.75;
  return b >= (double)SIZE_MAX ? SIZE_MAX : (size_t)b;
}

size_t ncc_max_memory(void) {
  /* a compile's or run's own budget (ncc_options.max_memory) first */
  size_t b = ncc_opts()->max_memory;
  if (b) return b;
  b = atomic_load(&max_memory);
  return b ? b : default_budget();
}

size_t ncc_budget_bytes(void) { return ncc_max_memory(); }

bool ncc_budget_fits(int64_t bytes) {
  return bytes >= 0 && (uint64_t)bytes <= (uint64_t)ncc_budget_bytes();
}

void ncc_format_bytes(double bytes, char *buf, size_t cap) {
  static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024 && u < 6) {
    bytes /= 1024;
    u++;
  }
  if (u == 0) snprintf(buf, cap, "%.0f B", bytes);
  else snprintf(buf, cap, "%.1f %s", bytes, unit[u]);
}

ncc_status ncc_budget_check(int64_t bytes, const char *what) {
  if (ncc_budget_fits(bytes)) return NCC_OK;
  char need[32], have[32];
  if (bytes < 0) snprintf(need, sizeof need, "more than 8 EiB");
  else ncc_format_bytes((double)bytes, need, sizeof need);
  ncc_format_bytes((double)ncc_budget_bytes(), have, sizeof have);
  return ncc_error(NCC_ERR_NOMEM,
                   "%s would allocate %s, over the memory budget of %s (--max-memory)",
                   what, need, have);
}
