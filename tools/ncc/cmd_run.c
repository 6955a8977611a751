/* tools/ncc/cmd_run.c — `ncc run MODEL [--target=T] [--input ...]
 * [--output-dir DIR]`: run a model once and write one DIR/<output>.npy per
 * model output.
 *
 * Outputs are all-or-nothing: each is first written unnamed (or under a
 * hidden temporary name, ir/atomic_file.c) in DIR, and only when every
 * one succeeded are they given their final names, so a failure never leaves
 * a mix of new and stale results behind. The naming happens under an
 * exclusive flock() on DIR, so two runs into one DIR never mix either: the
 * files are all from whichever run committed last.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

#define MAX_NAME 200

typedef struct out_file {
  char name[MAX_NAME + 16]; /* sanitized, unique, without ".npy" */
  char *final;
  ncc_afile file;           /* staged, until committed */
} out_file;

/* Output names become file names: keep [A-Za-z0-9._-], map the rest
 * (notably '/') to '_', and never start with '.' (hidden, or "..").*/
static void sanitize(const char *name, int idx, char *buf) {
  size_t n = 0;
  for (const char *p = name; *p && n < MAX_NAME; p++) {
    char c = *p;
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '-' ||
              (c == '.' && n > 0);
    buf[n++] = ok ? c : '_';
  }
  buf[n] = 0;
  if (n == 0) snprintf(buf, MAX_NAME, "output_%d", idx);
}

/* Two outputs may sanitize to the same name ("a/b" and "a_b"): suffix the
 * later one with its index until it is unique. */
static void make_unique(out_file *f, int idx) {
  for (int k = 0;; k++) {
    bool clash = false;
    for (int j = 0; j < idx; j++)
      if (strcmp(f[j].name, f[idx].name) == 0) clash = true;
    if (!clash) return;
    size_t len = strlen(f[idx].name);
    if (len > MAX_NAME) len = MAX_NAME;
    snprintf(f[idx].name + len, sizeof f[idx].name - len, "_%d", idx + k);
  }
}

static char *join_path(const char *dir, const char *name) {
  size_t n = strlen(dir) + strlen(name) + 8;
  char *p = ncc_malloc(n);
  if (p) snprintf(p, n, "%s/%s.npy", dir, name);
  return p;
}

static ncc_status plan_files(const ncc_graph *g, const char *dir,
                             out_file *f) {
  for (int i = 0; i < ncc_graph_num_outputs(g); i++) {
    sanitize(ncc_graph_output_name(g, i), i, f[i].name);
    make_unique(f, i);
    f[i].final = join_path(dir, f[i].name);
    if (!f[i].final) return NCC_ERR_NOMEM;
    /* The one rename() failure we can foresee: catch it before anything is
     * written, so the outputs stay all-or-nothing. */
    struct stat sb;
    if (stat(f[i].final, &sb) == 0 && S_ISDIR(sb.st_mode))
      return ncc_error(NCC_ERR_INPUT,
                       "%s: cannot write output '%s': a directory is in the "
                       "way",
                       f[i].final, ncc_graph_output_name(g, i));
  }
  return NCC_OK;
}

/* DIR must be a directory; a missing one is created (parents must exist). */
static ncc_status check_output_dir(const char *dir, bool create) {
  struct stat sb;
  if (stat(dir, &sb) == 0) {
    if (!S_ISDIR(sb.st_mode))
      return ncc_error(NCC_ERR_INPUT, "%s: output directory is not a directory",
                       dir);
    return NCC_OK;
  }
  if (errno != ENOENT || (create && mkdir(dir, 0777) != 0 && errno != EEXIST))
    return ncc_error(NCC_ERR_INPUT, "%s: cannot use as output directory: %s",
                     dir, strerror(errno));
  return NCC_OK;
}

/* An exclusive lock on DIR for the commit (released by close), or -1
 * where none can be had (a write-only DIR, a file system without flock):
 * then a run still commits, as before, only unguarded against another. */
static int lock_dir(const char *dir) {
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return -1;
  while (flock(fd, LOCK_EX) != 0)
    if (errno != EINTR) {
      close(fd);
      return -1;
    }
  return fd;
}

static ncc_status commit(const ncc_graph *g, const char *dir, out_file *f,
                         const ncc_tensor *outs) {
  int n = ncc_graph_num_outputs(g);
  int lock = lock_dir(dir);
  ncc_status st = NCC_OK;
  for (int i = 0; i < n && !st; i++) st = ncc_afile_commit(&f[i].file);
  if (lock >= 0) close(lock);
  for (int i = 0; i < n && !st; i++) {
    char type[128], t1[CLI_TEXT_MAX], t2[CLI_TEXT_MAX], t3[CLI_TEXT_MAX];
    cli_format_type(g, outs[i].dtype, outs[i].rank, outs[i].dims, NULL, type,
                    sizeof type);
    printf("%s: %s -> %s\n", cli_text(ncc_graph_output_name(g, i), t1, sizeof t1),
           cli_text(type, t2, sizeof t2), cli_text(f[i].final, t3, sizeof t3));
  }
  return st;
}

static ncc_status write_outputs(const ncc_graph *g, const char *dir,
                                const ncc_tensor *outs) {
  int n = ncc_graph_num_outputs(g);
  out_file *f = ncc_calloc((size_t)(n ? n : 1), sizeof *f);
  if (!f) return NCC_ERR_NOMEM;
  ncc_status st = check_output_dir(dir, true);
  if (!st) ncc_atomic_sweep(dir); /* leftovers of a killed run */
  if (!st) st = plan_files(g, dir, f);
  for (int i = 0; i < n && !st; i++) {
    st = ncc_afile_open(&f[i].file, f[i].final);
    if (!st) st = ncc_npy_write_to(f[i].file.f, f[i].final, &outs[i]);
    if (st) ncc_error_prefix("output '%s'", ncc_graph_output_name(g, i));
  }
  if (!st) st = commit(g, dir, f, outs);
  for (int i = 0; i < n; i++) {
    ncc_afile_abort(&f[i].file); /* no-op once committed */
    ncc_free(f[i].final, 0);
  }
  ncc_free(f, 0);
  return st;
}

/* --trace: the run is profiled and its events written to the open file. */
static ncc_status write_trace(ncc_module *m, const ncc_graph *g, const ncc_tensor *in,
                              ncc_afile *tf) {
  cli_prof p = {0};
  int64_t b = cli_inputs_batch(g, in);
  ncc_status st = cli_prof_collect(m, g, b > 0 ? b : 1, &p);
  if (!st) st = cli_trace_write(tf, &p, g);
  cli_prof_free(&p);
  return st;
}

static ncc_status run_module(const ncc_graph *g, ncc_module *m,
                             const cli_opts *o, ncc_afile *tf) {
  int n_in = ncc_graph_num_inputs(g), n_out = ncc_graph_num_outputs(g);
  ncc_status st = NCC_OK;
  ncc_tensor *in = ncc_calloc((size_t)(n_in ? n_in : 1), sizeof *in);
  ncc_tensor *out = ncc_calloc((size_t)(n_out ? n_out : 1), sizeof *out);
  if (!in || !out) st = NCC_ERR_NOMEM;
  if (!st) st = cli_inputs_load(g, o, in);
  if (!st && tf->f) st = ncc_module_profile_enable(m, 1);
  if (!st) st = ncc_module_run(m, in, n_in, out, n_out);
  if (!st) st = write_outputs(g, o->output_dir, out);
  if (!st && o->compare_f32) st = cli_compare_f32(o, in, n_in, out, n_out);
  if (!st && tf->f) st = write_trace(m, g, in, tf);
  cli_tensors_free(in, in ? n_in : 0);
  cli_tensors_free(out, out ? n_out : 0);
  ncc_free(in, 0);
  ncc_free(out, 0);
  return st;
}

/* A compiled target that falls back to the interpreter for some nodes
 * says so once: the result is right, but it is not all compiled code
 * (and --emit=lib on the same model would fail). */
static void warn_reference_kernels(const ncc_module *m, const cli_opts *o) {
  if (strcmp(ncc_module_target(m), "ref") == 0) return;
  cli_refk r;
  cli_refk_collect(m, &r);
  cli_refk_warn(&r, o->model, o->target);
}

static ncc_status run_loaded(ncc_graph *g, const cli_opts *o, ncc_afile *tf) {
  int n_ran;
  ncc_module *m = NULL;
  ncc_status st = cli_pipeline_run(g, o, 1, NULL, 0, &n_ran);
  if (!st) st = ncc_module_compile_opts(g, o->target, &o->lib, &m);
  if (!st) st = run_module(g, m, o, tf);
  if (!st) warn_reference_kernels(m, o);
  ncc_module_free(m);
  return st;
}

ncc_status cmd_run(const cli_opts *o) {
  /* Cheap checks first: a bad flag should not wait for a big model. */
  ncc_status st = cli_target_check(o->target);
  if (!st) st = cli_pipeline_check(o);
  if (st) return st;
  if (o->check_each_pass) return cli_check_each_pass(o);
  if (o->tol_set)
    return ncc_error(NCC_ERR_USAGE,
                     "--rtol and --atol apply only with --check-each-pass");
  if (o->compare_f32 && o->lib.precision == NCC_PRECISION_F32)
    return ncc_error(NCC_ERR_USAGE, "--compare-f32 needs --precision=bf16 or fp16");
  if ((st = check_output_dir(o->output_dir, false))) return st;
  /* --trace FILE: opened first, so a path that cannot be written fails
   * before the model is compiled; committed only after a good run */
  ncc_afile tf = {0};
  if (o->trace && (st = ncc_afile_open(&tf, o->trace))) return st;
  ncc_graph *g = NULL;
  st = cli_load_model(o->model, &g);
  if (!st) st = run_loaded(g, o, &tf);
  ncc_graph_free(g);
  if (st) ncc_afile_abort(&tf);
  return st;
}
