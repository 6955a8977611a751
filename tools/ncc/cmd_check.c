/* tools/ncc/cmd_check.c — `ncc check MODEL [--json]`: everything in a model
 * that ncc does not support (ops, element types, opsets), each with its
 * count and first node, before anyone waits for a compile that would stop
 * at the first. The analysis is libncc's (ncc_model_check); this prints it.
 * Exit status 3 when there is a problem, 0 (with a one-line summary) when
 * none; a malformed model is the importer's error (2). */
#include <stdio.h>

#include "cli.h"

static void print_text(const ncc_check_report *r, const char *model) {
  char a[CLI_TEXT_MAX], b[CLI_TEXT_MAX], m[CLI_TEXT_MAX];
  for (int i = 0; i < r->n_problems; i++) {
    const ncc_check_problem *p = &r->problems[i];
    if (p->kind == NCC_CHECK_OPSET) { /* the name says it: "ai.onnx opset 6" */
      printf("unsupported %s\n", cli_text(p->name, a, sizeof a));
      continue;
    }
    printf("unsupported %s %s", ncc_check_kind_name(p->kind),
           cli_text(p->name, a, sizeof a));
    printf(": %lld %s, first %s '%s'", (long long)p->count,
           p->kind == NCC_CHECK_OP ? (p->count == 1 ? "node" : "nodes")
                                   : (p->count == 1 ? "use" : "uses"),
           p->first_is_node ? "node" : cli_text(p->first_op, b, sizeof b),
           cli_text(p->first, m, sizeof m));
    if (p->first_is_node && p->kind != NCC_CHECK_OP)
      printf(" (%s)", cli_text(p->first_op, b, sizeof b));
    printf("\n");
  }
  printf("%s: %d nodes, %d op types: %s\n", cli_text(model, m, sizeof m),
         r->n_nodes, r->n_op_types,
         r->n_problems ? "unsupported" : "OK");
  if (r->n_problems) printf("%d problem%s\n", r->n_problems, r->n_problems == 1 ? "" : "s");
}

static void print_json(const ncc_check_report *r, const char *model) {
  printf("{\"model\": ");
  cli_json_string(model);
  printf(", \"nodes\": %d, \"op_types\": %d, \"ok\": %s, \"problems\": [",
         r->n_nodes, r->n_op_types, r->n_problems ? "false" : "true");
  for (int i = 0; i < r->n_problems; i++) {
    const ncc_check_problem *p = &r->problems[i];
    printf("%s{\"kind\": \"%s\", \"name\": ", i ? ", " : "",
           ncc_check_kind_name(p->kind));
    cli_json_string(p->name);
    printf(", \"count\": %lld, \"first\": ", (long long)p->count);
    cli_json_string(p->first);
    printf(", \"first_op\": ");
    cli_json_string(p->first_op);
    printf("}");
  }
  printf("]}\n");
}

ncc_status cmd_check(const cli_opts *o) {
  ncc_status st = cli_check_readable(o->model);
  if (st) return st;
  ncc_check_report *r;
  if ((st = ncc_model_check(o->model, &r))) return st;
  if (o->json) print_json(r, o->model);
  else print_text(r, o->model);
  if (r->n_problems)
    st = ncc_error(NCC_ERR_UNSUPPORTED,
                   "%d unsupported op, dtype or opset problem%s (listed above)",
                   r->n_problems, r->n_problems == 1 ? "" : "s");
  ncc_check_report_free(r);
  return st;
}
