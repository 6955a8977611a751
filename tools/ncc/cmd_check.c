/* tools/ncc/cmd_check.c — `ncc check MODEL [--target=T] [--json]`:
 * everything in a model that ncc does not support (ops, element types,
 * opsets), each with its count and first node, before anyone waits for a
 * compile that would stop at the first. The analysis is libncc's
 * (ncc_model_check); this prints it. Exit status 3 when there is a
 * problem, 0 (with a one-line summary) when none; a malformed model is the
 * importer's error (2).
 *
 * With --target, a supported model is also compiled for T (the pipeline
 * flags apply) and the report says what did not compile: the nodes that
 * run on the host through reference kernels, grouped by op and reason
 * (ncc_module_host_nodes), so a researcher sees why a model is slow
 * before measuring it. Host nodes are not problems: exit 0. */
#include <stdio.h>
#include <string.h>

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
  printf("]");
}

/* Host nodes grouped by (op, why), in order of first appearance. */
typedef struct host_group {
  const ncc_host_node *first;
  int count;
} host_group;

static int group_hosts(const ncc_host_node *h, int n, host_group *gr) {
  int ng = 0;
  for (int i = 0; i < n; i++) {
    int j = 0;
    while (j < ng && !(gr[j].first->why == h[i].why && strcmp(gr[j].first->op, h[i].op) == 0))
      j++;
    if (j == ng) gr[ng++] = (host_group){&h[i], 0};
    gr[j].count++;
  }
  return ng;
}

static void print_hosts(const cli_opts *o, const ncc_module *m, int n_nodes,
                        const host_group *gr, int ng, int n_host) {
  char a[CLI_TEXT_MAX], b[CLI_TEXT_MAX];
  int n_views = ncc_module_num_views(m);
  if (o->json) {
    printf(", \"target\": ");
    cli_json_string(o->target);
    printf(", \"compiled_nodes\": %d, \"kernels\": %d, \"views\": %d, \"host_nodes\": %d, "
           "\"host\": [",
           n_nodes - n_host - n_views, ncc_module_num_kernels(m), n_views, n_host);
    for (int i = 0; i < ng; i++) {
      printf("%s{\"op\": ", i ? ", " : "");
      cli_json_string(gr[i].first->op);
      printf(", \"count\": %d, \"first\": ", gr[i].count);
      cli_json_string(gr[i].first->name);
      printf(", \"first_index\": %d", gr[i].first->node);
      printf(", \"why\": ");
      cli_json_string(ncc_host_why_text(gr[i].first->why));
      printf("}");
    }
    printf("]");
    return;
  }
  printf("%s: %d of %d nodes compiled into %d kernels, %d on the host",
         cli_text(o->target, a, sizeof a), n_nodes - n_host - n_views, n_nodes,
         ncc_module_num_kernels(m), n_host);
  if (n_views) printf(", %d %s of %s input (no kernel, no copy)", n_views,
                      n_views == 1 ? "view" : "views", n_views == 1 ? "its" : "their");
  printf("%s\n", ng ? ":" : "");
  for (int i = 0; i < ng; i++) {
    const ncc_host_node *f = gr[i].first;
    printf("  on the host %s: %d %s, first ", cli_text(f->op, a, sizeof a), gr[i].count,
           gr[i].count == 1 ? "node" : "nodes");
    if (*f->name) printf("'%s'", cli_text(f->name, b, sizeof b));
    else printf("#%d", f->node); /* unnamed: its place in the compiled graph */
    printf(" (%s)\n", ncc_host_why_text(f->why));
  }
}

/* Compile the model for --target after the pipeline and report its host
 * nodes (the graph after the passes: what actually runs). */
static ncc_status report_hosts(const cli_opts *o) {
  ncc_graph *g = NULL;
  ncc_module *m = NULL;
  ncc_host_node *h = NULL;
  host_group *gr = NULL;
  int n_ran;
  ncc_status st = cli_load_model(o->model, &g);
  if (!st) st = cli_pipeline_run(g, o, 1, NULL, 0, &n_ran);
  if (!st) st = ncc_module_compile_opts(g, o->target, &o->lib, &m);
  if (!st) {
    int n = ncc_module_host_nodes(m, NULL, 0);
    h = ncc_calloc((size_t)(n ? n : 1), sizeof *h);
    gr = ncc_calloc((size_t)(n ? n : 1), sizeof *gr);
    if (!h || !gr) st = NCC_ERR_NOMEM;
    if (!st) {
      ncc_module_host_nodes(m, h, n);
      int ng = group_hosts(h, n, gr);
      print_hosts(o, m, ncc_graph_num_nodes(g), gr, ng, n);
    }
  }
  ncc_free(h, 0);
  ncc_free(gr, 0);
  ncc_module_free(m);
  ncc_graph_free(g);
  return st;
}

ncc_status cmd_check(const cli_opts *o) {
  ncc_status st = cli_check_readable(o->model);
  if (!st && o->target_set) st = cli_target_check(o->target);
  if (!st && o->target_set) st = cli_pipeline_check(o);
  if (st) return st;
  ncc_check_report *r;
  if ((st = ncc_model_check(o->model, &r))) return st;
  if (o->json) print_json(r, o->model);
  else print_text(r, o->model);
  /* what did not compile: only a model ncc supports can be compiled */
  if (o->target_set && !r->n_problems) st = report_hosts(o);
  if (o->json) printf("}\n");
  if (!st && r->n_problems)
    st = ncc_error(NCC_ERR_UNSUPPORTED,
                   "%d unsupported op, dtype or opset problem%s (listed above)",
                   r->n_problems, r->n_problems == 1 ? "" : "s");
  ncc_check_report_free(r);
  return st;
}
