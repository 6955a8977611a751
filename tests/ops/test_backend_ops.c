/* tests/ops/test_backend_ops.c — every op case (tests/ops/op_cases.c) on
 * every target, each compared with target `ref` (as ggml's
 * test-backend-ops does for its backends).
 *
 * The targets come from the public enumeration (ncc_target_count /
 * ncc_target_get), so a new target runs every case with no edit here.
 * A target without an executor in this build (runs == 0: the LLVM cross
 * targets) or whose device is missing is passed over with
 * "SKIP <target>: <why>" and does not fail. For each case the graph is
 * compiled once, run on each input set, and every output compared with
 * ref's; then run again into caller buffers poisoned first (so a kernel
 * that skips elements is caught); and the number of compiled kernels is
 * checked against the case's expectation (the rest are host kernels).
 *
 *   test_backend_ops [--target=a,b] [--exclude=a,b] [--op=Conv,Sub]
 *                    [--case=substring] [--vector-width=N] [--codegen-level=N]
 *                    [--list]
 *   test_backend_ops --target=cuda --emit=cuda,ptx --check="ptxas -arch=sm_90 {}"
 *
 * --emit compiles without running: each case is emitted in each kind and
 * --check's command (if any) runs on the last file ({} is its path); for
 * a target whose device is absent (CUDA PTX checked by ptxas).
 * Exit status: 0 all passed, 1 a failure or a bad argument, 77 every
 * selected target was skipped.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <cmocka.h>

#include "ncc.h"
#include "op_cases.h"

#define MAX_IN 40
#define MAX_OUT 40

static struct {
  const char *targets, *exclude, *ops, *case_sub, *emit, *check;
  int vector_width;
  int codegen_level; /* -1: the library's default */
  bool list;
} arg;
static char tmpdir[] = "/tmp/ncc_backend_ops_XXXXXX";

typedef struct job {
  const ncc_target_desc *target;
  const op_case *c;
  int index;
} job;

/* Is `name` in the comma list (case-insensitive)? */
static bool in_list(const char *list, const char *name) {
  size_t n = strlen(name);
  for (const char *p = list; p && *p;) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len == n && strncasecmp(p, name, n) == 0) return true;
    p = e ? e + 1 : NULL;
  }
  return false;
}

static ncc_options options(void) {
  ncc_options o;
  ncc_options_init(&o);
  o.vector_width = arg.vector_width;
  if (arg.codegen_level >= 0) o.codegen_level = arg.codegen_level;
  return o;
}

/* ---- one case on one target ---- */

static void compare_all(const job *j, const ncc_tensor *in, ncc_tensor *ref, ncc_tensor *got,
                        int n_out, int set, const char *how) {
  const op_case *c = j->c;
  for (int o = 0; o < n_out; o++) {
    char what[200];
    snprintf(what, sizeof what, "%s: %s: %s", c->name, op_case_output_label(o), how);
    if (c->n_sets)
      snprintf(what + strlen(what), sizeof what - strlen(what), ", N=%lld",
               (long long)c->n_values[set]);
    op_case_compare(c, o, in, &ref[o], &got[o], j->target->name, what);
  }
}

static void run_case(const job *j, const ncc_graph *g) {
  const op_case *c = j->c;
  const char *t = j->target->name;
  int n_out = ncc_graph_num_outputs(g);
  assert_true(n_out <= MAX_OUT);
  ncc_options o = options();
  ncc_module *m = NULL;
  ncc_status st = ncc_module_compile_opts(g, t, &o, &m);
  if (st != NCC_OK) fail_msg("%s: compile for %s: %s", c->name, t, ncc_error_message());
  for (int s = 0; s < (c->n_sets ? c->n_sets : 1); s++) {
    ncc_tensor in[MAX_IN], ref[MAX_OUT], got[MAX_OUT];
    int n_in = op_case_inputs(c, s, in, MAX_IN);
    st = ncc_ref_run(g, in, n_in, ref, n_out);
    if (st != NCC_OK) fail_msg("%s: ref: %s", c->name, ncc_error_message());
    st = ncc_module_run(m, in, n_in, got, n_out);
    if (st != NCC_OK) fail_msg("%s: run on %s: %s", c->name, t, ncc_error_message());
    compare_all(j, in, ref, got, n_out, s, "run");
    /* again into the same buffers, poisoned first */
    for (int k = 0; k < n_out; k++)
      if (ncc_tensor_nbytes(&got[k])) memset(got[k].data, 0x7f, ncc_tensor_nbytes(&got[k]));
    st = ncc_module_run_into(m, in, n_in, got, n_out);
    if (st != NCC_OK) fail_msg("%s: run_into on %s: %s", c->name, t, ncc_error_message());
    compare_all(j, in, ref, got, n_out, s, "run_into");
    for (int k = 0; k < n_out; k++) {
      ncc_tensor_free(&ref[k]);
      ncc_tensor_free(&got[k]);
    }
    for (int k = 0; k < n_in; k++) ncc_tensor_free(&in[k]);
  }
  int nk = ncc_module_num_kernels(m), nh = ncc_module_num_host_kernels(m);
  int nv = ncc_module_num_views(m);
  int want = op_case_expected_kernels(c, j->target);
  ncc_module_free(m);
  if (nk + nh + nv != ncc_graph_num_nodes(g))
    fail_msg("%s: %d kernels + %d host kernels + %d views for %d nodes", c->name, nk, nh,
             nv, ncc_graph_num_nodes(g));
  if (nk != want)
    fail_msg("%s: %s compiled %d of the %d nodes, expected %d", c->name, t, nk,
             ncc_graph_num_nodes(g), want);
}

/* --emit: each kind to a file; --check's command on the last one. */
static void emit_case(const job *j, const ncc_graph *g) {
  ncc_options o = options();
  char path[256] = "", kinds[128];
  snprintf(kinds, sizeof kinds, "%s", arg.emit);
  for (char *save = NULL, *k = strtok_r(kinds, ",", &save); k; k = strtok_r(NULL, ",", &save)) {
    if (path[0]) remove(path);
    snprintf(path, sizeof path, "%s/case%d.%s", tmpdir, j->index, k);
    ncc_status st = ncc_module_emit_opts(g, j->target->name, &o, k, path);
    if (st != NCC_OK) fail_msg("%s: emit %s: %s", j->c->name, k, ncc_error_message());
  }
  if (arg.check) { /* every {} is the path */
    char cmd[2048] = "";
    size_t n = 0;
    for (const char *p = arg.check; *p && n + sizeof path < sizeof cmd; p++) {
      if (p[0] == '{' && p[1] == '}') {
        n += (size_t)snprintf(cmd + n, sizeof cmd - n, "%s", path);
        p++;
      } else {
        cmd[n++] = *p;
        cmd[n] = '\0';
      }
    }
    if (system(cmd) != 0) fail_msg("%s: `%s` failed", j->c->name, cmd);
  }
  remove(path);
}

static void test_case(void **state) {
  const job *j = *state;
  const ncc_graph *g = op_case_build(j->c, j->index);
  if (arg.emit)
    emit_case(j, g);
  else
    run_case(j, g);
}

static int teardown_case(void **state) {
  (void)state;
  op_case_free();
  return 0;
}

/* ---- targets ---- */

/* Why target t cannot take part here (NULL: it can). */
static const char *why_not(const ncc_target_desc *t, char *why, size_t cap) {
  if (arg.emit) {
    if (!t->compiles) return "emits no code in this build";
    char kinds[128];
    snprintf(kinds, sizeof kinds, "%s", arg.emit);
    for (char *save = NULL, *k = strtok_r(kinds, ",", &save); k; k = strtok_r(NULL, ",", &save))
      if (!in_list(t->emit_kinds, k)) {
        snprintf(why, cap, "does not emit %s", k);
        return why;
      }
    if (arg.check) { /* the checking tool must be there */
      char tool[256];
      snprintf(tool, sizeof tool, "%s", arg.check);
      tool[strcspn(tool, " ")] = '\0';
      if (access(tool, X_OK) != 0) {
        snprintf(why, cap, "no %s", tool);
        return why;
      }
    }
    /* a one-op probe: the emitter's own compiler may be missing (NVRTC) */
    const ncc_graph *g = op_case_build(&op_cases[0], 0);
    char path[200];
    snprintf(path, sizeof path, "%s/probe", tmpdir);
    const char *last = strrchr(arg.emit, ',');
    ncc_options o = options();
    ncc_status st = ncc_module_emit_opts(g, t->name, &o, last ? last + 1 : arg.emit, path);
    remove(path);
    op_case_free();
    if (st == NCC_ERR_UNSUPPORTED) {
      snprintf(why, cap, "%s", ncc_error_message());
      return why;
    }
    return NULL;
  }
  if (!t->runs) {
    snprintf(why, cap, "no executor in this build (%s)",
             t->compiles ? "it only compiles" : "not built");
    return why;
  }
  if (ncc_target_available(t->name, why, cap) != NCC_OK) return why;
  return NULL;
}

/* Runs the selected cases on t; returns the number that failed, or -1
 * when none was selected. */
static int run_target(const ncc_target_desc *t) {
  job *jobs = calloc((size_t)op_case_count, sizeof *jobs);
  struct CMUnitTest *tests = calloc((size_t)op_case_count, sizeof *tests);
  char **names = calloc((size_t)op_case_count, sizeof *names);
  assert_true(jobs && tests && names);
  int n = 0;
  for (int i = 0; i < op_case_count; i++) {
    const op_case *c = &op_cases[i];
    if (arg.case_sub && !strstr(c->name, arg.case_sub)) continue;
    if (arg.ops) {
      op_case_build(c, i);
      bool hit = false;
      char ops[256];
      snprintf(ops, sizeof ops, "%s", arg.ops);
      for (char *save = NULL, *o = strtok_r(ops, ",", &save); o; o = strtok_r(NULL, ",", &save))
        hit = hit || op_case_has_op(o);
      op_case_free();
      if (!hit) continue;
    }
    jobs[n] = (job){t, c, i};
    size_t len = strlen(t->name) + strlen(c->name) + 2;
    names[n] = malloc(len);
    assert_non_null(names[n]);
    snprintf(names[n], len, "%s/%s", t->name, c->name);
    tests[n] = (struct CMUnitTest){names[n], test_case, NULL, teardown_case, &jobs[n]};
    n++;
  }
  int failed = -1;
  if (n > 0) {
    char group[96];
    if (arg.codegen_level >= 0 && !arg.emit)
      snprintf(group, sizeof group, "%s (vector width %d, codegen level %d)", t->name,
               arg.vector_width, arg.codegen_level);
    else if (arg.vector_width && !arg.emit)
      snprintf(group, sizeof group, "%s (vector width %d)", t->name, arg.vector_width);
    else
      snprintf(group, sizeof group, "%s%s%s", t->name, arg.emit ? " --emit=" : "",
               arg.emit ? arg.emit : "");
    printf("== %s: %d case(s)\n", group, n);
    fflush(stdout);
    failed = _cmocka_run_group_tests(group, tests, (size_t)n, NULL, NULL);
  }
  for (int k = 0; k < n; k++) free(names[k]);
  free(names);
  free(tests);
  free(jobs);
  return failed;
}

/* --check's tools may leave files beside the emitted ones */
static void clean_tmpdir(void) {
  DIR *d = opendir(tmpdir);
  for (struct dirent *e; d && (e = readdir(d));) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    char p[512];
    snprintf(p, sizeof p, "%s/%s", tmpdir, e->d_name);
    remove(p);
  }
  if (d) closedir(d);
  rmdir(tmpdir);
}

static int usage(const char *msg) {
  fprintf(stderr,
          "test_backend_ops: %s\nusage: test_backend_ops [--target=a,b] [--exclude=a,b] "
          "[--op=Op,Op] [--case=substring] [--vector-width=N] [--codegen-level=N] "
          "[--emit=kinds [--check=cmd]] "
          "[--list]\n",
          msg);
  return 1;
}

int main(int argc, char **argv) {
  arg.codegen_level = -1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
#define OPT(s) (strncmp(a, s "=", sizeof s) == 0 ? a + sizeof s : NULL)
    if (OPT("--target")) arg.targets = OPT("--target");
    else if (OPT("--exclude")) arg.exclude = OPT("--exclude");
    else if (OPT("--op")) arg.ops = OPT("--op");
    else if (OPT("--case")) arg.case_sub = OPT("--case");
    else if (OPT("--emit")) arg.emit = OPT("--emit");
    else if (OPT("--check")) arg.check = OPT("--check");
    else if (OPT("--vector-width")) {
      arg.vector_width = atoi(a + sizeof "--vector-width");
      if (arg.vector_width != 1 && arg.vector_width != 4 && arg.vector_width != 8 &&
          arg.vector_width != 16)
        return usage("--vector-width: 1, 4, 8 or 16");
    }
    else if (OPT("--codegen-level")) {
      const char *v = OPT("--codegen-level");
      if (v[0] < '0' || v[0] > '3' || v[1]) return usage("--codegen-level: 0, 1, 2 or 3");
      arg.codegen_level = v[0] - '0';
    }
    else if (strcmp(a, "--list") == 0) arg.list = true;
    else return usage("unknown argument");
#undef OPT
  }
  if (arg.check && !arg.emit) return usage("--check needs --emit");
  if (arg.list) {
    int outs = 0;
    for (int i = 0; i < op_case_count; i++) {
      const ncc_graph *g = op_case_build(&op_cases[i], i);
      int n_out = ncc_graph_num_outputs(g), sets = op_cases[i].n_sets;
      printf("%3d  %-34s %2d node(s) %2d output(s) %d set(s), %d compiled%s%s\n", i,
             op_cases[i].name, ncc_graph_num_nodes(g), n_out, sets ? sets : 1,
             op_cases[i].kernels, op_cases[i].kernels_on ? " but " : "",
             op_cases[i].kernels_on ? op_cases[i].kernels_on : "");
      outs += n_out;
      op_case_free();
    }
    printf("%d cases, %d outputs compared with ref\n", op_case_count, outs);
    return 0;
  }
  /* every target named must exist: a typo must not pass as "nothing to do" */
  int count = ncc_target_count();
  ncc_target_desc *all = calloc((size_t)count, sizeof *all);
  if (!all) return 1;
  for (int i = 0; i < count; i++)
    if (ncc_target_get(i, &all[i]) != NCC_OK) return usage(ncc_error_message());
  const char *lists[2] = {arg.targets, arg.exclude};
  for (int l = 0; l < 2; l++) {
    char names[256];
    snprintf(names, sizeof names, "%s", lists[l] ? lists[l] : "");
    for (char *save = NULL, *n = strtok_r(names, ",", &save); n; n = strtok_r(NULL, ",", &save)) {
      bool known = false;
      for (int i = 0; i < count; i++) known = known || strcasecmp(all[i].name, n) == 0;
      if (!known) {
        fprintf(stderr, "test_backend_ops: no target '%s'\n", n);
        return 1;
      }
    }
  }
  if (!mkdtemp(tmpdir)) return 1;
  int ran = 0, skipped = 0, failed = 0, selected_none = 0;
  for (int i = 0; i < count; i++) {
    const ncc_target_desc *t = &all[i];
    if (arg.targets && !in_list(arg.targets, t->name)) continue;
    if (arg.exclude && in_list(arg.exclude, t->name)) continue;
    char why[512];
    const char *no = why_not(t, why, sizeof why);
    if (no) {
      printf("SKIP %s: %s\n", t->name, no);
      skipped++;
      continue;
    }
    int f = run_target(t);
    if (f < 0) {
      selected_none++;
      continue;
    }
    ran++;
    failed += f;
  }
  clean_tmpdir();
  free(all);
  if (failed) return 1;
  if (ran == 0 && selected_none) {
    fprintf(stderr, "test_backend_ops: no case matches%s%s%s%s\n", arg.ops ? " --op=" : "",
            arg.ops ? arg.ops : "", arg.case_sub ? " --case=" : "",
            arg.case_sub ? arg.case_sub : "");
    return 1;
  }
  if (ran == 0 && skipped) return 77;
  if (ran == 0) return usage("no target selected");
  return 0;
}
