/* tools/ncc/targets.c — the targets `ncc` knows (docs/CLI.md), read from
 * libncc's target table (ncc_target_count, ncc_target_get), so a target
 * that lands in libncc shows up in `ncc targets`, --help and the checks
 * without touching the driver. Whether a target runs here or only
 * compiles comes from the runtime (ncc_target_available,
 * ncc_target_can_compile); a known target that is not built stays in the
 * table, so asking for it says why it is unavailable (exit 3) rather than
 * "unknown target" (exit 1).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

bool cli_target_known(const char *name) {
  ncc_target_desc d;
  for (int i = 0; i < ncc_target_count(); i++)
    if (ncc_target_get(i, &d) == NCC_OK && strcmp(d.name, name) == 0) return true;
  return false;
}

void cli_target_names(char *buf, size_t cap, const char *marked, const char *mark) {
  size_t n = 0;
  if (cap) buf[0] = '\0';
  ncc_target_desc d;
  for (int i = 0; i < ncc_target_count() && n < cap; i++) {
    if (ncc_target_get(i, &d) != NCC_OK) continue;
    bool m = mark && marked && strcmp(d.name, marked) == 0;
    n += (size_t)snprintf(buf + n, cap - n, "%s%s%s%s", n ? ", " : "", d.name,
                          m ? " " : "", m ? mark : "");
  }
}

void cli_print_help(const char *usage, FILE *f) {
  const char *at = strstr(usage, "@TARGETS@");
  if (!at) {
    fputs(usage, f);
    return;
  }
  char names[512];
  cli_target_names(names, sizeof names, "cpu", "(default)");
  fprintf(f, "%.*s%s", (int)(at - usage), usage, names);
  cli_print_help(at + strlen("@TARGETS@"), f);
}

ncc_status cli_target_check(const char *name) {
  if (cli_target_known(name)) {
    char why[256];
    /* On failure the runtime's message names the target and the reason. */
    return ncc_target_available(name, why, sizeof why);
  }
  char names[512];
  cli_target_names(names, sizeof names, NULL, NULL);
  const char *list[16];
  int n = 0;
  ncc_target_desc d;
  for (int i = 0; i < ncc_target_count() && n < 16; i++)
    if (ncc_target_get(i, &d) == NCC_OK) list[n++] = d.name;
  const char *near = ncc_suggest(name, list, n);
  if (near)
    return ncc_error(NCC_ERR_USAGE, "unknown target '%s'; did you mean '%s'? (known: %s)", name,
                     near, names);
  return ncc_error(NCC_ERR_USAGE, "unknown target '%s' (known: %s)", name, names);
}
