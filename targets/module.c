/* targets/module.c — the public executable-module API (ncc_module_*).
 *
 * A module is a graph compiled for one target: the backend's state plus the
 * backend itself, found through the target's row of the target table
 * (targets/table.c), which also says why a known target cannot run or
 * compile here. It borrows the graph, which must outlive it.
 *
 * Threads: a backend's state (executor buffers, plans, symbol values) is
 * per run, so runs of one module are serialised on the module's mutex;
 * different modules share nothing but the process-wide kernel pool, which
 * takes one job at a time and runs a concurrent one inline.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "../ir/ctime.h"
#include "../ir/options.h"
#include "../ir/shape.h"
#include "../passes/pass.h"
#include "../runtime/profile.h"
#include "../runtime/threadpool.h"
#include "targets.h"
#ifdef NCC_HAVE_LLVM
#include "../codegen/llvm/llvm.h"
#endif

struct ncc_module {
  const ncc_backend *be;
  const ncc_graph *g; /* borrowed: the caller's, compiled */
  void *state;
  pthread_mutex_t run_mu; /* one run at a time on this module */
  ncc_options opts;       /* the caller's, in scope during runs */
  int num_threads;        /* resolved: >= 1 */
  bool profiling;         /* ncc_module_profile_enable */
  ncc_prof prof;
};

/* A known target this build left out: the option that did it. */
static ncc_status not_built(const ncc_target_row *t) {
  if (t->kind == NCC_TARGET_LLVM)
    return ncc_error(NCC_ERR_UNSUPPORTED,
                     "target '%s' needs LLVM; this ncc was built without it", t->name);
  return ncc_error(NCC_ERR_UNSUPPORTED,
                   "target '%s' is not built into this ncc (configured with "
                   "-D%s=OFF)",
                   t->name, t->cmake_option ? t->cmake_option : "?");
}

static ncc_status find_target(const char *target, const ncc_backend **out) {
  *out = NULL;
  if (!target) target = "cpu";
  const ncc_target_row *t = ncc_target_row_find(target);
  if (!t) return ncc_target_unknown(target);
  if (t->built && t->in_process && t->backend) {
    *out = t->backend;
    return NCC_OK;
  }
  if (t->built && !t->in_process)
    return ncc_error(NCC_ERR_UNSUPPORTED,
                     "target '%s' is an LLVM cross target: it compiles (ncc "
                     "compile --target=%s) but does not run in ncc; use "
                     "--target=cpu to run here",
                     target, target);
  return not_built(t);
}

/* Whether the caller named a cross target's CPU or features. */
static bool cross_cpu_set(const ncc_options *o) {
  return (o->target_cpu && *o->target_cpu) || (o->target_features && *o->target_features);
}

#ifdef NCC_HAVE_LLVM
/* An LLVM name: CPU ("neoverse-n1", "x86-64-v4") or feature ("dotprod",
 * "avx512vnni", "v8.2a"). LLVM itself only warns about unknown ones. */
static bool llvm_name_ok(const char *s, size_t n) {
  if (n == 0 || n > 64) return false;
  for (size_t i = 0; i < n; i++)
    if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
          (s[i] >= '0' && s[i] <= '9') || s[i] == '-' || s[i] == '_' || s[i] == '.'))
      return false;
  return true;
}

/* ncc_options.target_features checked (a comma list of +name / -name). */
static ncc_status check_features(const char *f) {
  for (const char *p = f; *p;) {
    size_t len = strcspn(p, ",");
    if (len < 2 || (p[0] != '+' && p[0] != '-') || !llvm_name_ok(p + 1, len - 1))
      return ncc_error(NCC_ERR_USAGE,
                       "target features '%s': expected a comma list of +NAME or -NAME "
                       "(LLVM's names, e.g. +dotprod,+i8mm)", f);
    p += len + (p[len] == ',');
  }
  return NCC_OK;
}

/* The CPU description codegen/llvm compiles for: the host (with the
 * caller's vector width, if any) or the row's cross target, with the
 * caller's CPU and the row's features plus the caller's (written to
 * `feat`, which must outlive *out). */
static ncc_status llvm_desc(const ncc_target_row *t, ncc_llvm_host *out, char *feat,
                            size_t cap) {
  const ncc_options *o = ncc_opts();
  if (t->triple) {
    *out = (ncc_llvm_host){t->triple, t->cpu, t->features, t->vector_width, false};
    if (o->target_cpu && *o->target_cpu) {
      if (!llvm_name_ok(o->target_cpu, strlen(o->target_cpu)))
        return ncc_error(NCC_ERR_USAGE, "target cpu '%s': expected an LLVM CPU name",
                         o->target_cpu);
      out->cpu = o->target_cpu;
    }
    if (o->target_features && *o->target_features) {
      ncc_status st = check_features(o->target_features);
      if (st) return st;
      int n = snprintf(feat, cap, "%s%s%s", t->features, *t->features ? "," : "",
                       o->target_features);
      if (n < 0 || (size_t)n >= cap)
        return ncc_error(NCC_ERR_USAGE, "target features '%s': too long",
                         o->target_features);
      out->features = feat;
    }
    return NCC_OK;
  }
  const ncc_llvm_host *h;
  ncc_status st = ncc_llvm_host_info(&h);
  if (st) return st;
  *out = *h;
  /* the caller's width (ncc_options.vector_width) for this host only:
   * a cross target's width is part of its description */
  if (o->vector_width > 0) out->vector_width = o->vector_width;
  return NCC_OK;
}

/* Room for a target's feature list with the caller's. */
#define FEATURES_CAP 1024
#endif

ncc_status ncc_target_can_compile(const char *target, char *why, size_t cap) {
  if (why && cap) why[0] = '\0';
  if (!target) target = "cpu";
  ncc_status st;
  const ncc_target_row *t = ncc_target_row_find(target);
  if (!t)
    st = ncc_target_unknown(target);
  else if (t->kind == NCC_TARGET_INTERP)
    st = ncc_error(NCC_ERR_UNSUPPORTED,
                   "target '%s' interprets the graph; it emits no code", target);
  else if (!t->built)
    st = not_built(t);
  else if (t->backend && t->backend->emit)
    st = NCC_OK; /* a GPU target writes its source without a device */
#ifdef NCC_HAVE_LLVM
  else if (t->kind == NCC_TARGET_LLVM) {
    ncc_llvm_host h;
    char feat[FEATURES_CAP];
    st = llvm_desc(t, &h, feat, sizeof feat);
    if (!st) st = ncc_llvm_can_emit(&h);
  }
#endif
  else
    st = ncc_error(NCC_ERR_UNSUPPORTED, "target '%s' has no code generator", target);
  if (st && why && cap) snprintf(why, cap, "%s", ncc_error_message());
  return st;
}

ncc_status ncc_target_available(const char *target, char *why, size_t cap) {
  if (why && cap) why[0] = '\0';
  const ncc_backend *be;
  ncc_status st = find_target(target, &be);
  if (st != NCC_OK) {
    if (why && cap) snprintf(why, cap, "%s", ncc_error_message());
    return st;
  }
  if (!be->available(why, cap))
    return ncc_error(NCC_ERR_UNSUPPORTED, "target '%s' is unavailable: %s",
                     be->name, why && *why ? why : "no reason given");
  return NCC_OK;
}

ncc_status ncc_module_compile(const ncc_graph *g, const char *target,
                              ncc_module **out) {
  return ncc_module_compile_opts(g, target, NULL, out);
}

ncc_status ncc_module_compile_opts(const ncc_graph *g, const char *target,
                                   const ncc_options *opts, ncc_module **out) {
  if (!out) return ncc_error(NCC_ERR_USAGE, "ncc_module_compile: no output handle");
  *out = NULL;
  ncc_options o;
  ncc_opts_copy(&o, opts);
  if (o.num_threads < 0 || o.num_threads > 1024)
    return ncc_error(NCC_ERR_USAGE, "num_threads %d: expected 0 (one per core) to 1024",
                     o.num_threads);
  if (o.vector_width != 0 && o.vector_width != 1 && o.vector_width != 4 &&
      o.vector_width != 8 && o.vector_width != 16)
    return ncc_error(NCC_ERR_USAGE, "vector_width %d: expected 0 (the host's), 1, 4, 8 or 16",
                     o.vector_width);
  if (o.codegen_level < 0 || o.codegen_level > 3)
    return ncc_error(NCC_ERR_USAGE, "codegen_level %d: expected 0 (fastest compile) to 3",
                     o.codegen_level);
  if (!ncc_precision_name(o.precision))
    return ncc_error(NCC_ERR_USAGE, "precision %d: expected 0 (f32), 1 (bf16) or 2 (fp16)",
                     o.precision);
  if (cross_cpu_set(&o))
    return ncc_error(NCC_ERR_USAGE,
                     "target_cpu and target_features describe a cross target's CPU "
                     "(ncc_module_emit_opts); a module compiles for this host");
  const ncc_backend *be;
  char why[256];
  ncc_status st = find_target(target, &be);
  if (st != NCC_OK) return st;
  if (!be->available(why, sizeof why))
    return ncc_error(NCC_ERR_UNSUPPORTED, "target '%s' is unavailable: %s",
                     be->name, why);
  ncc_module *m = ncc_calloc(1, sizeof *m);
  if (!m) return NCC_ERR_NOMEM;
  if (pthread_mutex_init(&m->run_mu, NULL) != 0) {
    ncc_free(m, sizeof *m);
    return ncc_error(NCC_ERR_NOMEM, "ncc_module_compile: cannot create the run lock");
  }
  m->be = be;
  m->g = g;
  m->opts = o;
  m->num_threads = o.num_threads > 0 ? o.num_threads : ncc_threadpool_default_threads();
  ncc_backend_opts bo = {.num_threads = m->num_threads,
                         .vector_width = o.vector_width,
                         .kernel_reuse = o.kernel_reuse != 0};
  const ncc_options *prev = ncc_opts_enter(&m->opts);
  double t0 = ncc_ctime_now(), before = ncc_ctime_phase_sum();
  st = be->compile(g, &bo, &m->state);
  /* the GPU targets time their lowering only: the rest of their compile
   * (source render, program build) is one phase */
  if (be->emit)
    ncc_ctime_add(NCC_PHASE_BACKEND,
                  ncc_ctime_now() - t0 - (ncc_ctime_phase_sum() - before));
  ncc_ctime_finish(t0);
  ncc_opts_leave(prev);
  m->opts.compile_stats = NULL; /* the caller's; runs must not see it */
  m->opts.cache_dir = NULL;     /* the caller's string; compile-time only */
  if (st != NCC_OK) {
    pthread_mutex_destroy(&m->run_mu);
    ncc_free(m, sizeof *m);
    return st;
  }
  *out = m;
  return NCC_OK;
}

/* A profiled run: the recorder is this thread's current one while the
 * backend runs, and the run itself is one event (node -1). */
static int64_t profile_begin(ncc_module *m) {
  if (!m->profiling) return 0;
  ncc_prof_set_current(&m->prof);
  return ncc_prof_now_ns();
}

static void profile_end(ncc_module *m, int64_t t0) {
  if (!m->profiling) return;
  ncc_prof_add(&m->prof, -1, -1, false, t0, ncc_prof_now_ns());
  ncc_prof_set_current(NULL);
  m->prof.run++;
}

ncc_status ncc_module_run(ncc_module *m, const ncc_tensor *in, int n_in,
                          ncc_tensor *out, int n_out) {
  if (!m) return ncc_error(NCC_ERR_USAGE, "ncc_module_run: no module");
  pthread_mutex_lock(&m->run_mu);
  const ncc_options *prev = ncc_opts_enter(&m->opts);
  int64_t t0 = profile_begin(m);
  ncc_status st = m->be->run(m->state, in, n_in, out, n_out);
  profile_end(m, t0);
  ncc_opts_leave(prev);
  pthread_mutex_unlock(&m->run_mu);
  return st;
}

/* Backends without run_into: run into fresh outputs, then copy. */
static ncc_status run_then_copy(ncc_module *m, const ncc_tensor *in, int n_in,
                                ncc_tensor *out, int n_out) {
  ncc_tensor *tmp = ncc_calloc((size_t)(n_out > 0 ? n_out : 1), sizeof *tmp);
  if (!tmp) return NCC_ERR_NOMEM;
  ncc_status st = m->be->run(m->state, in, n_in, tmp, n_out);
  for (int o = 0; o < n_out && !st; o++)
    if (!ncc_tensor_copy_into(&out[o], &tmp[o]))
      st = ncc_error(NCC_ERR_USAGE,
                     "ncc_module_run_into: output %d has dtype %s and rank %d here; "
                     "the caller's buffer does not match",
                     o, ncc_dtype_name(tmp[o].dtype), tmp[o].rank);
  for (int o = 0; o < n_out; o++) ncc_tensor_free(&tmp[o]);
  ncc_free(tmp, 0);
  return st;
}

ncc_status ncc_module_run_into(ncc_module *m, const ncc_tensor *in, int n_in,
                               ncc_tensor *out, int n_out) {
  if (!m) return ncc_error(NCC_ERR_USAGE, "ncc_module_run_into: no module");
  if (n_out < 0 || (n_out && !out))
    return ncc_error(NCC_ERR_USAGE, "ncc_module_run_into: no output buffers");
  pthread_mutex_lock(&m->run_mu);
  const ncc_options *prev = ncc_opts_enter(&m->opts);
  int64_t t0 = profile_begin(m);
  ncc_status st = m->be->run_into ? m->be->run_into(m->state, in, n_in, out, n_out)
                                  : run_then_copy(m, in, n_in, out, n_out);
  profile_end(m, t0);
  ncc_opts_leave(prev);
  pthread_mutex_unlock(&m->run_mu);
  return st;
}

int ncc_module_num_kernels(const ncc_module *m) {
  return m ? m->be->num_kernels(m->state) : 0;
}

int ncc_module_num_host_kernels(const ncc_module *m) {
  return m ? m->be->num_host_kernels(m->state) : 0;
}

int ncc_module_host_nodes(const ncc_module *m, ncc_host_node *out, int cap) {
  if (!m || !m->be->on_host) return 0;
  bool compiles = strcmp(m->be->name, "ref") != 0;
  int n = 0;
  for (int i = 0; i < m->g->n_nodes; i++) {
    const ncc_node *nd = m->g->nodes[i];
    if (!m->be->on_host(m->state, i)) continue;
    if (n < cap && out) {
      ncc_host_node *h = &out[n];
      h->op = ncc_op_name(nd->op);
      h->name = nd->name ? nd->name : "";
      h->node = i;
      h->why = !compiles ? NCC_HOST_TARGET
               : (ncc_op_table[nd->op].flags & NCC_OPF_DYNAMIC) ? NCC_HOST_DYNAMIC
               : (m->be->supports_op && !m->be->supports_op(nd)) ? NCC_HOST_NO_KERNEL
                                                                : NCC_HOST_FORM;
    }
    n++;
  }
  return n;
}

const char *ncc_host_why_text(ncc_host_why why) {
  switch (why) {
  case NCC_HOST_DYNAMIC: return "data-dependent output shape";
  case NCC_HOST_NO_KERNEL: return "no compiled kernel for this op and dtype";
  case NCC_HOST_FORM: return "not compiled in this form (attributes or layout)";
  case NCC_HOST_TARGET: return "the target compiles nothing";
  }
  return "?";
}

int ncc_module_num_threads(const ncc_module *m) {
  if (!m) return 0;
  /* only the cpu target runs kernels on the thread pool */
  return strcmp(m->be->name, "cpu") == 0 ? m->num_threads : 1;
}

ncc_status ncc_module_profile_enable(ncc_module *m, int on) {
  if (!m) return ncc_error(NCC_ERR_USAGE, "ncc_module_profile_enable: no module");
  pthread_mutex_lock(&m->run_mu);
  if (on) ncc_prof_reset(&m->prof);
  m->profiling = on != 0;
  pthread_mutex_unlock(&m->run_mu);
  return NCC_OK;
}

int ncc_module_profile_get(ncc_module *m, ncc_profile_event *out, int cap) {
  if (!m) return 0;
  pthread_mutex_lock(&m->run_mu);
  int n = m->prof.n;
  for (int i = 0; i < n && i < cap && out; i++) out[i] = m->prof.ev[i];
  pthread_mutex_unlock(&m->run_mu);
  return n;
}

int ncc_module_num_views(const ncc_module *m) {
  return m && m->be->num_views ? m->be->num_views(m->state) : 0;
}

int ncc_module_step_of(const ncc_module *m, int i, const char **kernel_name) {
  if (kernel_name) *kernel_name = NULL;
  if (!m || i < 0 || i >= m->g->n_nodes) return -1;
  return m->be->step_of ? m->be->step_of(m->state, i, kernel_name) : i;
}

/* Whether some node outside step `step` (or the graph's outputs) reads v. */
static bool read_outside(const ncc_module *m, const ncc_value *v, int step) {
  const ncc_graph *g = m->g;
  if (ncc_is_graph_output(g, v)) return true;
  for (int j = 0; j < g->n_nodes; j++)
    for (int k = 0; k < g->nodes[j]->n_in; k++)
      if (g->nodes[j]->in[k] == v && ncc_module_step_of(m, j, NULL) != step) return true;
  return false;
}

ncc_status ncc_module_node_info(const ncc_module *m, int i, int64_t sym_value,
                                ncc_node_info *out) {
  if (!m || !out || i < 0 || i >= m->g->n_nodes)
    return ncc_error(NCC_ERR_USAGE, "ncc_module_node_info: no node %d", i);
  const ncc_node *n = m->g->nodes[i];
  memset(out, 0, sizeof *out);
  out->name = n->name ? n->name : "";
  out->op = ncc_op_name(n->op);
  out->step = ncc_module_step_of(m, i, NULL);
  out->flops = ncc_node_flops(n, sym_value);
  for (int k = 0; k < n->n_in; k++) {
    const ncc_value *v = n->in[k];
    bool again = false; /* a value read twice is read once */
    for (int j = 0; j < k && v && !again; j++) again = n->in[j] == v;
    if (!v || again) continue;
    int p = v->producer ? ncc_module_step_of(m, v->producer->id, NULL) : -1;
    if (p != out->step) out->in_bytes += ncc_value_bytes(v, sym_value);
  }
  for (int k = 0; k < n->n_out; k++)
    if (n->out[k] && read_outside(m, n->out[k], out->step))
      out->out_bytes += ncc_value_bytes(n->out[k], sym_value);
  const ncc_value *o = n->n_out > 0 ? n->out[0] : NULL;
  size_t len = 0;
  for (int d = 0; o && d < o->shape.rank && len + 24 < sizeof out->shape; d++) {
    int64_t dd = o->shape.d[d];
    len += (size_t)snprintf(out->shape + len, sizeof out->shape - len, "%s%lld",
                            d ? "x" : "", (long long)(ncc_dim_is_sym(dd) ? sym_value : dd));
  }
  if (o && o->shape.rank == 0) snprintf(out->shape, sizeof out->shape, "scalar");
  return NCC_OK;
}

const char *ncc_module_target(const ncc_module *m) {
  return m ? m->be->name : "";
}

void ncc_module_free(ncc_module *m) {
  if (!m) return;
  m->be->free(m->state);
  ncc_prof_free(&m->prof);
  pthread_mutex_destroy(&m->run_mu);
  ncc_free(m, sizeof *m);
}

ncc_status ncc_module_emit(const ncc_graph *g, const char *target,
                           const char *kind, const char *path) {
  return ncc_module_emit_opts(g, target, NULL, kind, path);
}

#ifdef NCC_HAVE_LLVM
/* The LLVM targets' names, "cpu, x86_64, aarch64", for a message. */
static void llvm_target_names(char *buf, size_t cap) {
  size_t n = 0;
  buf[0] = '\0';
  for (int i = 0; i < ncc_target_table_len && n < cap; i++)
    if (ncc_target_table[i].kind == NCC_TARGET_LLVM)
      n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? ", " : "",
                            ncc_target_table[i].name);
}
#endif

static ncc_status emit(const ncc_graph *g, const char *target, const char *kind,
                       const char *path) {
  if (!target) target = "cpu";
  const ncc_target_row *t = ncc_target_row_find(target);
  if (t && !t->triple && cross_cpu_set(ncc_opts()))
    return ncc_error(NCC_ERR_USAGE,
                     "target '%s' does not take a target CPU or features (the LLVM "
                     "cross targets x86_64 and aarch64 do; cpu is this host's own)",
                     target);
  /* a backend with its own emitter (the GPU targets) */
  if (t && t->built && t->backend && t->backend->emit) return t->backend->emit(g, kind, path);
#ifdef NCC_HAVE_LLVM
  if (t && t->kind == NCC_TARGET_LLVM) {
    ncc_llvm_host h;
    char feat[FEATURES_CAP];
    ncc_status st = llvm_desc(t, &h, feat, sizeof feat);
    return st ? st : ncc_llvm_emit_file(g, target, &h, kind, path);
  }
  char names[128];
  llvm_target_names(names, sizeof names);
  return ncc_error(NCC_ERR_UNSUPPORTED, "target '%s' has no LLVM code generator (%s)",
                   target, names);
#else
  (void)g;
  (void)kind;
  (void)path;
  return ncc_error(NCC_ERR_UNSUPPORTED,
                   "target '%s': this ncc was built without LLVM", target);
#endif
}

ncc_status ncc_module_emit_opts(const ncc_graph *g, const char *target,
                                const ncc_options *opts, const char *kind,
                                const char *path) {
  ncc_options o;
  ncc_opts_copy(&o, opts);
  if (o.vector_width != 0 && o.vector_width != 1 && o.vector_width != 4 &&
      o.vector_width != 8 && o.vector_width != 16)
    return ncc_error(NCC_ERR_USAGE, "vector_width %d: expected 0 (the host's), 1, 4, 8 or 16",
                     o.vector_width);
  if (o.codegen_level < 0 || o.codegen_level > 3)
    return ncc_error(NCC_ERR_USAGE, "codegen_level %d: expected 0 (fastest compile) to 3",
                     o.codegen_level);
  const ncc_options *prev = ncc_opts_enter(&o);
  double t0 = ncc_ctime_now();
  ncc_status st = emit(g, target, kind, path);
  ncc_ctime_finish(t0);
  ncc_opts_leave(prev);
  return st;
}
