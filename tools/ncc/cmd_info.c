/* tools/ncc/cmd_info.c — `ncc passes` and `ncc targets`: what this build
 * offers, read from libncc's pass registry and target availability so the
 * lists never drift from what the library really does (its target table). */
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

/* One row per target: RUN (ncc run/bench work here), COMPILE (ncc compile
 * --emit=<code> works here; "-" for ref, which emits no code) and a note
 * that says why a target only compiles or is not built. */
ncc_status cmd_targets(const cli_opts *o) {
  (void)o;
  printf("%-8s %-4s %-8s %s\n", "TARGET", "RUN", "COMPILE", "NOTE");
  for (int i = 0; i < ncc_target_count(); i++) {
    ncc_target_desc d, *t = &d;
    ncc_status st = ncc_target_get(i, &d);
    if (st) return st;
    char why[256], cwhy[256], text[CLI_TEXT_MAX];
    bool run = ncc_target_available(t->name, why, sizeof why) == NCC_OK;
    bool ref = strcmp(t->name, "ref") == 0;
    bool compile = !ref && ncc_target_can_compile(t->name, cwhy, sizeof cwhy) == NCC_OK;
    printf("%-8s %-4s %-8s %s", t->name, run ? "yes" : "no",
           ref ? "-" : compile ? "yes" : "no", t->description);
    if (!run && compile)
      printf(" (compile only: %s)", why[0] ? cli_text(why, text, sizeof text) : "cannot run here");
    else if (!run)
      printf(" (unavailable: %s)", why[0] ? cli_text(why, text, sizeof text) : "unavailable");
    else if (!compile && !ref)
      printf(" (cannot compile: %s)", cli_text(cwhy, text, sizeof text));
    printf("\n");
  }
  return NCC_OK;
}
