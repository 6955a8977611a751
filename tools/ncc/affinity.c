/* tools/ncc/affinity.c — which CPUs this process may run on, for the
 * "threads N, pinned to CPUs 0-1" line of `ncc bench`: a timing means
 * little without knowing whether its threads shared cores with others.
 *
 * "Pinned" means the affinity mask (sched_getaffinity: taskset, numactl,
 * a cgroup cpuset) allows fewer CPUs than are online.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

void cli_affinity_get(cli_affinity *a) {
  memset(a, 0, sizeof *a);
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  a->online = online > 0 ? (int)online : 0;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) {
    a->allowed = a->online; /* unknown: say nothing about pinning */
    return;
  }
  for (int c = 0; c < CPU_SETSIZE; c++) {
    if (!CPU_ISSET(c, &set)) continue;
    if (a->allowed < CLI_AFFINITY_MAX) a->cpus[a->allowed] = c;
    a->allowed++;
  }
  a->pinned = a->online > 0 && a->allowed < a->online;
}

/* "0-3,6,8-9" */
const char *cli_affinity_ranges(const cli_affinity *a, char *buf, size_t cap) {
  buf[0] = 0;
  int n = a->allowed < CLI_AFFINITY_MAX ? a->allowed : CLI_AFFINITY_MAX;
  for (int i = 0; i < n;) {
    int j = i;
    while (j + 1 < n && a->cpus[j + 1] == a->cpus[j] + 1) j++;
    char part[32];
    if (j > i) snprintf(part, sizeof part, "%s%d-%d", i ? "," : "", a->cpus[i], a->cpus[j]);
    else snprintf(part, sizeof part, "%s%d", i ? "," : "", a->cpus[i]);
    cli_append(buf, cap, part);
    i = j + 1;
  }
  return buf;
}

void cli_affinity_text(const cli_affinity *a, char *buf, size_t cap) {
  char r[256];
  if (a->pinned)
    snprintf(buf, cap, "pinned to CPU%s %s", a->allowed == 1 ? "" : "s",
             cli_affinity_ranges(a, r, sizeof r));
  else
    snprintf(buf, cap, "not pinned (%d CPU%s allowed)", a->allowed, a->allowed == 1 ? "" : "s");
}

void cli_affinity_json(const cli_affinity *a) {
  printf("\"pinned_cpus\": ");
  if (!a->pinned) {
    printf("null");
  } else {
    int n = a->allowed < CLI_AFFINITY_MAX ? a->allowed : CLI_AFFINITY_MAX;
    printf("[");
    for (int i = 0; i < n; i++) printf("%s%d", i ? ", " : "", a->cpus[i]);
    printf("]");
  }
  printf(", \"cpus_allowed\": %d", a->allowed);
}
