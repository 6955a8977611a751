/* tools/ncc/cmd_info.c — `ncc passes` and `ncc targets`: what this build
 * offers, read from libncc's pass registry and target availability so the
 * lists never drift from what the library really does. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

ncc_status cmd_passes(const cli_opts *o) {
  (void)o;
  printf("%-16s %-5s %-24s %s\n", "NAME", "LEVEL", "NEEDS", "DESCRIPTION");
  for (int i = 0; i < ncc_pass_count(); i++) {
    const char *name, *needs, *desc;
    int level;
    ncc_status st = ncc_pass_info(i, &name, &level, &needs, &desc);
    if (st) return st;
    char lv[8];
    snprintf(lv, sizeof lv, "-O%d", level);
    printf("%-16s %-5s %-24s %s\n", name, lv, needs[0] ? needs : "-", desc);
  }
  return NCC_OK;
}

ncc_status cmd_targets(const cli_opts *o) {
  (void)o;
  printf("%-8s %-6s %s\n", "NAME", "USABLE", "DESCRIPTION");
  for (int i = 0; i < cli_n_targets; i++) {
    const cli_target *t = &cli_targets[i];
    char why[256], text[CLI_TEXT_MAX];
    if (ncc_target_available(t->name, why, sizeof why) == NCC_OK)
      printf("%-8s %-6s %s\n", t->name, "yes", t->what);
    else
      printf("%-8s %-6s %s (%s)\n", t->name, "no", t->what,
             why[0] ? cli_text(why, text, sizeof text) : "unavailable");
  }
  return NCC_OK;
}
