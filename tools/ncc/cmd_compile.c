/* tools/ncc/cmd_compile.c — `ncc compile`: load a model, run the pipeline
 * and write what a target makes of it (--emit).
 *
 *   ir                  text IR after the passes (any target)
 *   kir, llvm, asm, obj the compiled kernels (cpu, x86_64, aarch64)
 *   lib                 a self-contained library + C header (docs/AOT.md)
 *   cuda, ptx, opencl   GPU kernels: CUDA C, its PTX (NVRTC), OpenCL C;
 *                       targets cuda / opencl, no device needed (docs/GPU.md)
 * (which target emits which kind is libncc's target table: ncc_target_get)
 *
 * Cross targets compile on any host, so only `cpu` has to be usable here.
 * Text kinds go to stdout without -o; obj and lib default to the model's
 * base name with .o / .so in the current directory; the missing parent
 * directories of -o are created (tools/ncc/outdir.c). libncc writes every
 * file through a temporary name and a rename: a failure leaves nothing
 * (nor the directories made for it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "ctime.h"

/* Whether the comma list `list` has `kind`. */
static bool has_kind(const char *list, const char *kind) {
  size_t n = strlen(kind);
  for (const char *p = list; *p;) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len == n && strncmp(p, kind, n) == 0) return true;
    if (!e) break;
    p = e + 1;
  }
  return false;
}

/* The kinds and targets come from libncc's target table: an LLVM target is
 * one that emits LLVM IR; other targets that emit code (the GPU targets)
 * emit through their backend, which checks the kind. */
static bool is_llvm(const ncc_target_desc *d) { return has_kind(d->emit_kinds, "llvm"); }

/* "ir, kir, llvm, ...": every kind some target emits, each once. */
static void all_kinds(char *buf, size_t cap) {
  size_t n = (size_t)snprintf(buf, cap, "ir");
  ncc_target_desc d;
  for (int i = 0; i < ncc_target_count() && n < cap; i++) {
    if (ncc_target_get(i, &d)) continue;
    char kind[32];
    for (const char *p = d.emit_kinds; *p && n < cap;) {
      size_t len = strcspn(p, ",");
      snprintf(kind, sizeof kind, "%.*s", (int)len, p);
      bool seen = strcmp(kind, "ir") == 0;
      ncc_target_desc e;
      for (int j = 0; j < i && !seen; j++)
        seen = !ncc_target_get(j, &e) && has_kind(e.emit_kinds, kind);
      if (!seen) n += (size_t)snprintf(buf + n, cap - n, ", %s", kind);
      p += len + (p[len] == ',');
    }
  }
}

/* The first target that emits `kind`, LLVM ones or the others. */
static const char *emitter_of(const char *kind, bool llvm) {
  ncc_target_desc d;
  for (int i = 0; i < ncc_target_count(); i++)
    if (!ncc_target_get(i, &d) && is_llvm(&d) == llvm && has_kind(d.emit_kinds, kind))
      return d.name;
  return NULL;
}

/* "cpu, x86_64 or aarch64": the LLVM targets that emit `kind`. */
static void llvm_emitters(const char *kind, char *buf, size_t cap) {
  const char *names[64];
  int n = 0;
  ncc_target_desc d;
  for (int i = 0; i < ncc_target_count() && n < 64; i++)
    if (!ncc_target_get(i, &d) && is_llvm(&d) && has_kind(d.emit_kinds, kind))
      names[n++] = d.name;
  size_t len = 0;
  buf[0] = '\0';
  for (int i = 0; i < n && len < cap; i++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%s",
                            i == 0 ? "" : i == n - 1 ? " or " : ", ", names[i]);
}

/* Exit 1 for names ncc does not know, 3 for combinations it cannot make. */
static ncc_status check_request(const char *emit, const char *target) {
  char list[256];
  if (strcmp(emit, "ir") != 0 && !emitter_of(emit, true) && !emitter_of(emit, false)) {
    all_kinds(list, sizeof list);
    return ncc_error(NCC_ERR_USAGE, "unknown --emit kind '%s' (%s)", emit, list);
  }
  if (!cli_target_known(target)) return cli_target_check(target); /* "unknown target" */
  if (strcmp(emit, "ir") == 0) return NCC_OK;
  ncc_target_desc d = {0};
  for (int i = 0; i < ncc_target_count(); i++)
    if (!ncc_target_get(i, &d) && strcmp(d.name, target) == 0) break;
  /* the GPU targets emit through their backend, which checks the kind */
  if (d.emit_kinds[0] && !is_llvm(&d)) return NCC_OK;
  if (!emitter_of(emit, true))
    return ncc_error(NCC_ERR_UNSUPPORTED, "--emit=%s needs --target=%s", emit,
                     emitter_of(emit, false));
  if (!has_kind(d.emit_kinds, emit)) {
    llvm_emitters(emit, list, sizeof list);
    return ncc_error(NCC_ERR_UNSUPPORTED,
                     "target '%s' cannot emit '%s' (--emit=%s needs target %s)",
                     target, emit, emit, list);
  }
  /* a target that runs here needs a usable host; the others only their
   * code generator */
  if (d.runs) return cli_target_check(target);
  char why[256];
  return ncc_target_can_compile(target, why, sizeof why);
}

/* "dir/model.onnx" -> "model<ext>" (in the current directory). */
static char *default_output(const char *model, const char *ext) {
  const char *base = strrchr(model, '/');
  base = base ? base + 1 : model;
  const char *dot = strrchr(base, '.');
  size_t stem = dot && dot != base ? (size_t)(dot - base) : strlen(base);
  size_t cap = stem + strlen(ext) + 1;
  char *s = ncc_malloc(cap);
  if (s) snprintf(s, cap, "%.*s%s", (int)stem, base, ext);
  return s;
}

static ncc_status emit_code(const ncc_graph *g, const cli_opts *o,
                            const ncc_options *lib, const char *emit) {
  bool binary = strcmp(emit, "obj") == 0 || strcmp(emit, "lib") == 0;
  const char *out = o->out;
  if (out && strcmp(out, "-") == 0) {
    if (strcmp(emit, "lib") == 0)
      return ncc_error(NCC_ERR_USAGE,
                       "--emit=lib writes a library and a header: name the "
                       "library with -o NAME.so");
    out = NULL;
    binary = false; /* an object to stdout, when asked for explicitly */
  }
  if (out) {
    /* out/x.so: make out/ (removed again if the emit fails) */
    cli_made_dirs made;
    ncc_status st = cli_out_parents(out, &made);
    if (st) return st;
    st = ncc_module_emit_opts(g, o->target, lib, emit, out);
    cli_out_parents_done(&made, st);
    return st;
  }
  if (!binary)
    return ncc_module_emit_stream(g, o->target, lib, emit, getenv("TMPDIR"), stdout);
  char *path = default_output(o->model, strcmp(emit, "lib") == 0 ? ".so" : ".o");
  if (!path) return NCC_ERR_NOMEM;
  ncc_status st = ncc_module_emit_opts(g, o->target, lib, emit, path);
  ncc_free(path, 0);
  return st;
}

/* --target-cpu / --target-features describe an LLVM cross target's CPU
 * (one that compiles here but does not run in ncc): x86_64, aarch64. */
static ncc_status check_cross_cpu(const cli_opts *o, const char *emit) {
  const char *flag = o->lib.target_cpu ? "--target-cpu" : "--target-features";
  if (!o->lib.target_cpu && !o->lib.target_features) return NCC_OK;
  ncc_target_desc d;
  for (int i = 0; i < ncc_target_count(); i++)
    if (!ncc_target_get(i, &d) && strcmp(d.name, o->target) == 0 && is_llvm(&d) && !d.runs) {
      if (strcmp(emit, "ir") == 0)
        return ncc_error(NCC_ERR_USAGE, "%s changes the code, not the IR: use it with "
                         "--emit=llvm, asm, obj or lib", flag);
      return NCC_OK;
    }
  return ncc_error(NCC_ERR_USAGE,
                   "%s is for the cross targets (x86_64, aarch64), not '%s' (cpu "
                   "compiles for this host's own CPU and features)", flag, o->target);
}

ncc_status cmd_compile(const cli_opts *o) {
  const char *emit = o->emit ? o->emit : "obj";
  ncc_status st = check_request(emit, o->target);
  if (!st) st = check_cross_cpu(o, emit);
  if (!st) st = cli_pipeline_check(o);
  if (st) return st;
  ncc_graph *g = NULL;
  int n_ran;
  /* --time-passes: where the compile time went, on stderr (ctime.h) */
  cli_ctime ct = {0};
  ncc_options lib = cli_ctime_options(&ct, o);
  double t0 = cli_now_ms();
  st = cli_ctime_load(&ct, o->model, &g);
  if (!st) st = cli_ctime_pipeline(&ct, g, o, 1, NULL, 0, &n_ran);
  if (!st)
    st = strcmp(emit, "ir") == 0 ? cli_print_graph(g, o->out) : emit_code(g, o, &lib, emit);
  ct.compile_ms = cli_now_ms() - t0;
  if (!st && o->time_passes) cli_ctime_table(&ct, stderr, 10);
  cli_ctime_free(&ct);
  ncc_graph_free(g);
  return st;
}
