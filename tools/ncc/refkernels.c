/* tools/ncc/refkernels.c — the nodes a compiled module runs on reference
 * (host) kernels instead of compiled ones, summed by op, for the warning
 * of `ncc run` / `ncc bench` and the count in bench results: a timing that
 * is partly the interpreter's must say so (an op without a compiled kernel
 * makes --emit=lib fail on the same model).
 *
 * Nodes a target compiles nothing for by design (target "ref") are not
 * counted: there every node is a reference kernel, and that is the point.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

void cli_refk_collect(const ncc_module *m, cli_refk *r) {
  memset(r, 0, sizeof *r);
  int n = ncc_module_host_nodes(m, NULL, 0);
  if (n <= 0) return;
  ncc_host_node *nodes = ncc_calloc((size_t)n, sizeof *nodes);
  if (!nodes) return; /* the report is best effort; the run goes on */
  n = ncc_module_host_nodes(m, nodes, n);
  for (int i = 0; i < n; i++) {
    if (nodes[i].why == NCC_HOST_TARGET) continue;
    r->nodes++;
    const char *op = nodes[i].op ? nodes[i].op : "?";
    int k = 0;
    while (k < r->n_ops && strcmp(r->op[k], op) != 0) k++;
    if (k == r->n_ops) {
      if (r->n_ops == CLI_REFK_OPS) {
        r->other++;
        continue;
      }
      snprintf(r->op[k], sizeof r->op[k], "%s", op);
      r->n_ops++;
    }
    r->count[k]++;
  }
  ncc_free(nodes, 0);
}

/* "Gather x3, Shape x1" (with_counts) or "Gather, Shape". */
static const char *ops_text(const cli_refk *r, bool with_counts, char *buf, size_t cap) {
  buf[0] = 0;
  char t[CLI_TEXT_MAX], part[CLI_TEXT_MAX + 32];
  for (int k = 0; k < r->n_ops; k++) {
    cli_text(r->op[k], t, sizeof t);
    if (with_counts) snprintf(part, sizeof part, "%s%s x%d", k ? ", " : "", t, r->count[k]);
    else snprintf(part, sizeof part, "%s%s", k ? ", " : "", t);
    cli_append(buf, cap, part);
  }
  if (r->other) {
    snprintf(part, sizeof part, ", %d more", r->other);
    cli_append(buf, cap, part);
  }
  return buf;
}

void cli_refk_warn(const cli_refk *r, const char *model, const char *target) {
  if (!r->nodes) return;
  char ops[1024], tm[CLI_TEXT_MAX], tt[CLI_TEXT_MAX];
  cli_text(model, tm, sizeof tm);
  cli_text(target, tt, sizeof tt);
  fprintf(stderr,
          "ncc: warning: %d node%s run%s on reference kernels on target %s: %s "
          "(ncc check %s --target=%s lists them)\n",
          r->nodes, r->nodes == 1 ? "" : "s", r->nodes == 1 ? "s" : "", tt,
          ops_text(r, false, ops, sizeof ops), tm, tt);
}

const char *cli_refk_text(const cli_refk *r, char *buf, size_t cap) {
  char ops[1024];
  if (!r->nodes) snprintf(buf, cap, "none");
  else
    snprintf(buf, cap, "%d node%s (%s)", r->nodes, r->nodes == 1 ? "" : "s",
             ops_text(r, true, ops, sizeof ops));
  return buf;
}

void cli_refk_json(const cli_refk *r) {
  printf("\"reference_kernels\": {\"nodes\": %d, \"ops\": {", r->nodes);
  for (int k = 0; k < r->n_ops; k++) {
    if (k) printf(", ");
    cli_json_string(r->op[k]);
    printf(": %d", r->count[k]);
  }
  printf("}, \"other_ops_nodes\": %d}", r->other);
}
