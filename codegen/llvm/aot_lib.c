/* codegen/llvm/aot_lib.c — `--emit=lib`: a self-contained library that runs
 * one graph, plus the C header to call it (docs/AOT.md).
 *
 * What goes in: the graph's compiled kernels (one LLVM object for the
 * target, as the JIT would build them, weights packed the same way), the
 * weights as one constant global in that object, and C glue generated here
 * that runs the kernel sequence: input checks, binding of symbolic dims
 * (a batch `N` stays a run-time parameter, as the kernels read sizes at
 * run time), a scratch-buffer plan made at run time for the current sizes,
 * and a small pthread pool for the kernels' parallel loops. The glue is
 * compiled with the target's C compiler, which also links the result: a
 * shared library, or (for an output named *.o) one relocatable object.
 *
 * Which nodes the library runs: only those its outputs need, walking back
 * from the graph outputs through the buffers each kernel actually reads, so
 * shape subgraphs that feed only Reshape's shape input drop out. Fused
 * groups (passes/fusion.h) become one kernel, as in the JIT, when their
 * lowering takes them (else their nodes are lowered one by one); pure view
 * ops (Reshape, Flatten, Squeeze, Unsqueeze, Identity) alias their input;
 * every other needed node must have a compiled kernel, else the error
 * names the op (NCC_ERR_UNSUPPORTED). Every dim must be static or equal to
 * a symbolic dim of an input. Structurally identical kernels (repeated
 * blocks) are emitted once and shared (kir_dedupe), as in the JIT.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../ir/ctime.h"
#include "../../ir/options.h"
#include "../../passes/fusion.h"
#include "../../ir/atomic_file.h"
#include "../escape.h"
#include "aot.h"

/* ncc_aot_rt_head, ncc_aot_rt_body: codegen/llvm/aot_rt/aot_rt.{h,c},
 * embedded at build time (aot_rt/embed.cmake) */
#include "aot_rt_embed.h"

extern char **environ;

enum { S_IN, S_OUT, S_CONST, S_TMP }; /* as NCC_S_* in aot_rt/aot_rt.h */

typedef struct aot_slot {
  int kind, index;    /* IN/OUT: input/output number; TMP: scratch number */
  const ncc_value *v; /* shape and dtype (NULL for packed data) */
  size_t off;         /* CONST: offset in the weights */
  int def, last;      /* TMP: first and last step touching it */
} aot_slot;

/* the generated step table's bufs[] (aot_rt/aot_rt.h) holds every buffer */
_Static_assert(KIR_MAX_BUFS <= 64, "raise ncc_step.bufs in aot_rt/aot_rt.h too");

typedef struct aot_step {
  kir_kernel *k; /* NULL: a copy */
  int kernel;    /* index in klist; after dedupe, in fns */
  int bufs[KIR_MAX_BUFS];
  int size_slot;
  int dst, src;
} aot_step;

typedef struct lib {
  const ncc_graph *g;
  const ncc_llvm_host *h;
  char prefix[64], upper[64];
  kir_kernel **kernels; /* per node (a group's at its root), NULL when none */
  kir_kernel **klist;   /* in step order */
  int n_kernels;
  kir_kernel **fns; /* the distinct kernels: the functions emitted */
  int n_fns;
  ncc_fuse_plan *fp;
  bool *gk; /* per group: lowered as one kernel */
  bool *need; /* per value: the library must compute or hold it */
  bool *run;  /* per node: the library runs it */
  int *root;  /* per value: its storage slot, -1 none yet */
  aot_slot *slots;
  int n_slots, cap_slots;
  aot_step *steps;
  int n_steps;
  ncc_aot_blob *blobs;
  int n_blobs;
  size_t weights_bytes;
  int *in_slot, *out_slot, *tmp_slot;
  int n_tmp;
} lib;

static void lib_free(lib *L) {
  if (L->kernels)
    for (int i = 0; i < L->g->n_nodes; i++) kir_kernel_free(L->kernels[i]);
  ncc_free(L->kernels, 0);
  ncc_free(L->klist, 0);
  ncc_free(L->fns, 0);
  ncc_fuse_plan_free(L->fp);
  ncc_free(L->gk, 0);
  ncc_free(L->need, 0);
  ncc_free(L->run, 0);
  ncc_free(L->root, 0);
  ncc_free(L->slots, 0);
  ncc_free(L->steps, 0);
  ncc_free(L->blobs, 0);
  ncc_free(L->in_slot, 0);
  ncc_free(L->out_slot, 0);
  ncc_free(L->tmp_slot, 0);
}

static ncc_status lib_init(lib *L, const ncc_graph *g, const ncc_llvm_host *h) {
  memset(L, 0, sizeof *L);
  L->g = g;
  L->h = h;
  size_t nn = (size_t)g->n_nodes + 1, nv = (size_t)g->n_values + 1;
  L->cap_slots = g->n_values + g->n_outputs + KIR_MAX_BUFS * g->n_nodes + 1;
  size_t ns = (size_t)L->cap_slots;
  L->kernels = ncc_calloc(nn, sizeof *L->kernels);
  L->klist = ncc_calloc(nn, sizeof *L->klist);
  L->fns = ncc_calloc(nn, sizeof *L->fns);
  L->gk = ncc_calloc(nn, sizeof *L->gk);
  L->need = ncc_calloc(nv, sizeof *L->need);
  L->run = ncc_calloc(nn, sizeof *L->run);
  L->root = ncc_calloc(nv, sizeof *L->root);
  L->slots = ncc_calloc(ns, sizeof *L->slots);
  L->steps = ncc_calloc(nn + (size_t)g->n_outputs, sizeof *L->steps);
  L->blobs = ncc_calloc(ns, sizeof *L->blobs);
  L->in_slot = ncc_calloc((size_t)g->n_inputs + 1, sizeof *L->in_slot);
  L->out_slot = ncc_calloc((size_t)g->n_outputs + 1, sizeof *L->out_slot);
  L->tmp_slot = ncc_calloc(ns, sizeof *L->tmp_slot);
  if (!L->kernels || !L->klist || !L->fns || !L->gk || !L->need || !L->run || !L->root ||
      !L->slots || !L->steps || !L->blobs || !L->in_slot || !L->out_slot ||
      !L->tmp_slot)
    return NCC_ERR_NOMEM;
  for (int v = 0; v < g->n_values; v++) L->root[v] = -1;
  for (int o = 0; o < g->n_outputs; o++) L->out_slot[o] = -1;
  return ncc_fuse_plan_build(g, &L->fp);
}

/* The group node i belongs to when that group is one kernel, else NULL. */
static const ncc_fuse_group *fused(const lib *L, int i) {
  int gi = L->fp->group_of[i];
  return gi >= 0 && L->gk[gi] ? &L->fp->groups[gi] : NULL;
}

/* The values a kernel's KIR_BIND_INPUT indices refer to: a group kernel's
 * external values, else the node's inputs. */
static ncc_value *const *kernel_inputs(const lib *L, int i, int *n) {
  const ncc_fuse_group *gr = fused(L, i);
  *n = gr ? gr->n_ext : L->g->nodes[i]->n_in;
  return gr ? gr->ext : L->g->nodes[i]->in;
}

/* ---- names ---- */

/* The API prefix: the output's base name without directory, extension and
 * a leading "lib", made a C identifier (codegen/escape.h). */
static void make_prefix(lib *L, const char *path) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  if (strncmp(base, "lib", 3) == 0 && base[3] && base[3] != '.') base += 3;
  ncc_escape_api_prefix(base, strcspn(base, "."), L->prefix, sizeof L->prefix);
  for (size_t i = 0; i < sizeof L->prefix; i++) {
    char c = L->prefix[i];
    L->upper[i] = (char)(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  }
}

/* path with its extension (after the last '.' of the base name) replaced
 * by `ext`; malloc'd through ncc_malloc (size in *cap). */
static char *replace_ext(const char *path, const char *ext, size_t *cap) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  const char *dot = strrchr(base, '.');
  size_t stem = dot && dot != base ? (size_t)(dot - path) : strlen(path);
  *cap = stem + strlen(ext) + 1;
  char *s = ncc_malloc(*cap);
  if (s) snprintf(s, *cap, "%.*s%s", (int)stem, path, ext);
  return s;
}

static bool ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* ---- which nodes run, and their kernels ---- */

static bool plain(const ncc_value *v) { return v->layout.kind == NCC_LAYOUT_PLAIN; }

/* Lower the graph (kernel names "<prefix>_k<i>_<op>", identifiers in the
 * glue), then walk back from the outputs: a node runs when a needed value
 * comes out of it; a kernel needs the inputs it binds, a view its data
 * input; the members of a group that is one kernel are computed by its
 * root. */
static ncc_status mark_needed(lib *L) {
  const ncc_graph *g = L->g;
  char label[128], prefix[sizeof L->prefix + 1];
  snprintf(prefix, sizeof prefix, "%s_", L->prefix);
  ncc_lower_request rq = {.target = &ncc_lower_target_generic,
                          .opts = {.vector_width = L->h->vector_width},
                          .prefix = prefix};
  int nk;
  ncc_status st = ncc_lower_graph(g, L->fp, &rq, L->kernels, L->gk, &nk);
  if (st != NCC_OK) return st;
  for (int o = 0; o < g->n_outputs; o++) L->need[g->outputs[o]->id] = true;
  for (int i = g->n_nodes - 1; i >= 0; i--) {
    const ncc_node *n = g->nodes[i];
    int gi = L->fp->group_of[i];
    const ncc_fuse_group *gr = gi >= 0 ? &L->fp->groups[gi] : NULL;
    if (gr && L->gk[gi] && gr->members[gr->n_members - 1] != n)
      continue; /* a member computed by its root */
    bool want = false;
    for (int k = 0; k < n->n_out; k++)
      if (n->out[k] && L->need[n->out[k]->id]) want = true;
    if (!want) continue;
    L->run[i] = true;
    if (ncc_op_is_view(n->op)) {
      if (n->n_in < 1 || !n->in[0] || !n->out[0] || !plain(n->in[0]) || !plain(n->out[0]))
        return ncc_error(NCC_ERR_UNSUPPORTED,
                         "%s: op '%s' on a blocked layout has no compiled "
                         "kernel for --emit=lib",
                         ncc_node_label(n, label, sizeof label), ncc_op_name(n->op));
      L->need[n->in[0]->id] = true;
      continue;
    }
    if (!L->kernels[i])
      return ncc_error(NCC_ERR_UNSUPPORTED,
                       "%s: op '%s' has no compiled kernel for --emit=lib",
                       ncc_node_label(n, label, sizeof label), ncc_op_name(n->op));
    const kir_kernel *k = L->kernels[i];
    int n_in;
    ncc_value *const *ins = kernel_inputs(L, i, &n_in);
    for (int b = 0; b < k->n_bufs; b++)
      if (k->bufs[b].bind == KIR_BIND_INPUT) {
        int idx = k->bufs[b].index;
        if (idx < 0 || idx >= n_in || !ins[idx])
          return ncc_error(NCC_ERR_INTERNAL, "kernel %s binds a missing input %d",
                           k->name, idx);
        L->need[ins[idx]->id] = true;
      }
  }
  return NCC_OK;
}

/* ---- storage ---- */

static int add_slot(lib *L, int kind, int index, const ncc_value *v) {
  NCC_ASSERT(L->n_slots < L->cap_slots);
  aot_slot *s = &L->slots[L->n_slots];
  s->kind = kind;
  s->index = index;
  s->v = v;
  return L->n_slots++;
}

static int add_blob(lib *L, const void *data, size_t bytes) {
  size_t off = (L->weights_bytes + 63) & ~(size_t)63;
  ncc_aot_blob *b = &L->blobs[L->n_blobs++];
  b->data = data;
  b->bytes = bytes;
  b->offset = off;
  L->weights_bytes = off + bytes;
  int s = add_slot(L, S_CONST, L->n_blobs - 1, NULL);
  L->slots[s].off = off;
  return s;
}

static int add_tmp(lib *L, const ncc_value *v, int step) {
  int s = add_slot(L, S_TMP, L->n_tmp, v);
  L->tmp_slot[L->n_tmp++] = s;
  L->slots[s].def = L->slots[s].last = step;
  return s;
}

/* The slot holding v's data (creating a constant's on first use); a read
 * at `step` extends a scratch tensor's lifetime. -1: none (a bug). */
static int read_slot(lib *L, const ncc_value *v, int step) {
  int s = L->root[v->id];
  if (s < 0 && v->kind == NCC_VAL_CONST && v->data) {
    int64_t numel = ncc_shape_numel(&v->shape);
    if (numel < 0) return -1;
    s = add_blob(L, v->data, (size_t)numel * ncc_dtype_size(v->dtype));
    L->slots[s].v = v;
    L->root[v->id] = s;
  }
  if (s >= 0 && L->slots[s].kind == S_TMP && L->slots[s].last < step)
    L->slots[s].last = step;
  return s;
}

/* Where the kernel of step `step` writes v: the output buffer when v is a
 * graph output not claimed yet, else scratch. */
static int write_slot(lib *L, const ncc_value *v, int step) {
  const ncc_graph *g = L->g;
  for (int o = 0; o < g->n_outputs; o++)
    if (g->outputs[o] == v && L->out_slot[o] < 0) {
      int s = add_slot(L, S_OUT, o, v);
      L->out_slot[o] = s;
      return L->root[v->id] = s;
    }
  return L->root[v->id] = add_tmp(L, v, step);
}

static ncc_status no_storage(const ncc_value *v) {
  return ncc_error(NCC_ERR_INTERNAL, "value '%s' has no storage in the library",
                   v->name ? v->name : "?");
}

static ncc_status plan_kernel(lib *L, int i) {
  const ncc_node *n = L->g->nodes[i];
  kir_kernel *k = L->kernels[i];
  int n_in;
  ncc_value *const *ins = kernel_inputs(L, i, &n_in);
  int step = L->n_steps;
  aot_step *s = &L->steps[L->n_steps++];
  s->k = k;
  s->kernel = L->n_kernels;
  L->klist[L->n_kernels++] = k;
  s->size_slot = -1;
  for (int b = 0; b < k->n_bufs; b++) {
    const kir_buf *kb = &k->bufs[b];
    int slot = -1;
    if (kb->bind == KIR_BIND_INPUT) {
      slot = read_slot(L, ins[kb->index], step);
      if (slot < 0) return no_storage(ins[kb->index]);
    } else if (kb->bind == KIR_BIND_OUTPUT) {
      const ncc_value *v = kb->index < n->n_out ? n->out[kb->index] : NULL;
      if (!v) return ncc_error(NCC_ERR_INTERNAL, "kernel %s writes a missing output", k->name);
      slot = write_slot(L, v, step);
      if (s->size_slot < 0 || kb->index == 0) s->size_slot = slot;
    } else {
      /* zero bytes is legal (weights packed from an empty constant) */
      if (!kb->data && kb->data_bytes)
        return ncc_error(NCC_ERR_INTERNAL,
                         "kernel %s: constant data of unknown size", k->name);
      slot = add_blob(L, kb->data, kb->data_bytes);
    }
    s->bufs[b] = slot;
  }
  if (s->size_slot < 0)
    return ncc_error(NCC_ERR_INTERNAL, "kernel %s has no output", k->name);
  return NCC_OK;
}

/* Outputs that no kernel wrote in place (inputs, constants, views, an
 * output listed twice) are copied at the end. */
static ncc_status plan_copies(lib *L) {
  const ncc_graph *g = L->g;
  for (int o = 0; o < g->n_outputs; o++) {
    if (L->out_slot[o] >= 0) continue;
    const ncc_value *v = g->outputs[o];
    int step = L->n_steps;
    int src = read_slot(L, v, step);
    if (src < 0) return no_storage(v);
    L->out_slot[o] = add_slot(L, S_OUT, o, v);
    aot_step *s = &L->steps[L->n_steps++];
    s->kernel = -1;
    s->dst = L->out_slot[o];
    s->src = src;
  }
  return NCC_OK;
}

static ncc_status plan(lib *L) {
  const ncc_graph *g = L->g;
  for (int i = 0; i < g->n_inputs; i++)
    L->root[g->inputs[i]->id] = L->in_slot[i] = add_slot(L, S_IN, i, g->inputs[i]);
  for (int i = 0; i < g->n_nodes; i++) {
    if (!L->run[i]) continue; /* also the members a group root computes */
    const ncc_node *n = g->nodes[i];
    if (ncc_op_is_view(n->op)) {
      int s = read_slot(L, n->in[0], L->n_steps);
      if (s < 0) return no_storage(n->in[0]);
      L->root[n->out[0]->id] = s;
      continue;
    }
    ncc_status st = plan_kernel(L, i);
    if (st != NCC_OK) return st;
  }
  /* a view's storage lives as long as its last reader; reads of the view
   * were recorded on the root, as read_slot resolves through root[] */
  return plan_copies(L);
}

static ncc_status check_value(const lib *L, const bool *bound, const ncc_value *v) {
  for (int d = 0; v && d < v->shape.rank; d++) {
    int64_t dd = v->shape.d[d];
    if (ncc_dim_is_sym(dd) && !bound[ncc_dim_sym_id(dd)])
      return ncc_error(NCC_ERR_UNSUPPORTED,
                       "value '%s': dim '%s' is not known from the input "
                       "shapes; --emit=lib needs every dim static or equal "
                       "to an input's",
                       v->name ? v->name : "?",
                       ncc_graph_sym_name(L->g, ncc_dim_sym_id(dd)));
  }
  return NCC_OK;
}

/* The values of run node i whose sizes the kernels or the glue use: its
 * needed inputs and outputs; for a group kernel its external values and
 * every member's outputs. */
static ncc_status check_node(const lib *L, const bool *bound, int i) {
  const ncc_node *n = L->g->nodes[i];
  const ncc_fuse_group *gr = fused(L, i);
  ncc_status st = NCC_OK;
  if (gr) {
    for (int e = 0; e < gr->n_ext && !st; e++) st = check_value(L, bound, gr->ext[e]);
    for (int m = 0; m < gr->n_members && !st; m++)
      for (int k = 0; k < gr->members[m]->n_out && !st; k++)
        st = check_value(L, bound, gr->members[m]->out[k]);
    return st;
  }
  for (int k = 0; k < n->n_in && !st; k++)
    if (n->in[k] && L->need[n->in[k]->id]) st = check_value(L, bound, n->in[k]);
  for (int k = 0; k < n->n_out && !st; k++) st = check_value(L, bound, n->out[k]);
  return st;
}

/* Every dim the library sizes by must be static or an input's dim. */
static ncc_status check_dims(lib *L) {
  const ncc_graph *g = L->g;
  bool *bound = ncc_calloc((size_t)g->n_syms + 1, sizeof *bound);
  if (!bound) return NCC_ERR_NOMEM;
  for (int i = 0; i < g->n_inputs; i++)
    for (int d = 0; d < g->inputs[i]->shape.rank; d++)
      if (ncc_dim_is_sym(g->inputs[i]->shape.d[d]))
        bound[ncc_dim_sym_id(g->inputs[i]->shape.d[d])] = true;
  ncc_status st = NCC_OK;
  for (int i = 0; i < g->n_nodes && st == NCC_OK; i++)
    if (L->run[i]) st = check_node(L, bound, i);
  ncc_free(bound, 0);
  return st;
}

/* Share one function among structurally identical kernels: steps then
 * index the distinct list. */
static ncc_status dedupe(lib *L) {
  int *rep = ncc_calloc((size_t)L->n_kernels + 1, sizeof *rep);
  int *fn_of = ncc_calloc((size_t)L->n_kernels + 1, sizeof *fn_of);
  bool ok = rep && fn_of;
  if (ok && !ncc_opts()->kernel_reuse)
    for (int k = 0; k < L->n_kernels; k++) rep[k] = k;
  else if (ok)
    ok = kir_dedupe(L->klist, L->n_kernels, rep) >= 0;
  if (ok) {
    L->n_fns = 0;
    for (int k = 0; k < L->n_kernels; k++) {
      if (rep[k] == k) {
        fn_of[k] = L->n_fns;
        L->fns[L->n_fns++] = L->klist[k];
      } else {
        fn_of[k] = fn_of[rep[k]];
        ncc_ctime_kernel_reused(ncc_ctime_find(L->klist[k]->name));
      }
    }
    for (int s = 0; s < L->n_steps; s++)
      if (L->steps[s].k) L->steps[s].kernel = fn_of[L->steps[s].kernel];
  }
  ncc_free(rep, 0);
  ncc_free(fn_of, 0);
  return ok ? NCC_OK : NCC_ERR_NOMEM;
}

/* ---- the header and the glue ---- */

/* Model bytes (names, types with symbolic dims) reach the header and the
 * glue only through codegen/escape.h: ncc_escape_fput(COMMENT) inside
 * comments, ncc_escape_fput(CSTR) inside string literals. */

static const char *type_of(const lib *L, const ncc_value *v, char *buf, size_t cap) {
  return ncc_type_str(L->g, v->dtype, &v->shape, NULL, buf, cap);
}

static void write_io_list(const lib *L, FILE *f, bool inputs) {
  const ncc_graph *g = L->g;
  int n = inputs ? g->n_inputs : g->n_outputs;
  char t[256];
  for (int i = 0; i < n; i++) {
    const ncc_value *v = inputs ? g->inputs[i] : g->outputs[i];
    fprintf(f, " *   %d  ", i);
    ncc_escape_fput(f, NCC_ESC_COMMENT, v->name);
    fputs("  ", f);
    ncc_escape_fput(f, NCC_ESC_COMMENT, type_of(L, v, t, sizeof t));
    fputc('\n', f);
  }
}

static void write_header(const lib *L, FILE *f, const char *lib_name,
                         const char *target) {
  const char *p = L->prefix, *P = L->upper;
  const ncc_graph *g = L->g;
  fputs("/* The C interface of ", f);
  ncc_escape_fput(f, NCC_ESC_COMMENT, lib_name);
  fputs(", generated by ncc " NCC_VERSION_STRING " (target ", f);
  ncc_escape_fput(f, NCC_ESC_COMMENT, target);
  fputs(")\n * from graph '", f);
  ncc_escape_fput(f, NCC_ESC_COMMENT, g->name);
  fprintf(f, "'. Do not edit.\n"
             " *\n"
             " * The library is self-contained: the compiled kernels, the glue "
             "that runs\n"
             " * them and the weights. It needs only libc, libm and libpthread.\n"
             " *\n"
             " * Inputs (the data is borrowed until %s_run returns):\n", p);
  write_io_list(L, f, true);
  fprintf(f, " * Outputs (owned by the model; valid until the next run or "
             "%s_free):\n", p);
  write_io_list(L, f, false);
  fprintf(f, " * Symbolic dims take their values from the input shapes of each "
             "run; a run\n * with new values plans the scratch memory anew "
             "(once per new size).\n"
             " * Sizes: every size computed from dims is checked; an input, output or\n"
             " * scratch size that does not fit the address space (PTRDIFF_MAX bytes) is\n"
             " * %s_STATUS_BAD_ARG with a message naming it, never a wrapped buffer.\n"
             " *\n"
             " * Threads: models are independent (one per thread needs no locking).\n"
             " * A model serves one call at a time: a call made while another call on\n"
             " * the same model is in progress (set_input, run, output) changes nothing\n"
             " * and returns %s_STATUS_BUSY (output: NULL). Sharing one model between\n"
             " * threads therefore needs the caller's own lock around the whole\n"
             " * set_input/run/output sequence; free it only when no call is running.\n"
             " *\n"
             " *   %s_model *m = %s_create(0);    (0: a thread per core)\n"
             " *   %s_set_input(m, 0, data, rank, dims);\n"
             " *   if (%s_run(m) != %s_STATUS_OK) fprintf(stderr, \"%%s\\n\", %s_error(m));\n"
             " *   const float *y = %s_output(m, 0, &rank, dims);\n"
             " *   %s_free(m);\n"
             " */\n",
          P, P, p, p, p, p, P, p, p, p);
  fprintf(f, "#ifndef %s_H_INCLUDED\n#define %s_H_INCLUDED\n\n", P, P);
  fprintf(f, "#include <stdint.h>\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
  fprintf(f, "#define %s_NUM_INPUTS %d\n#define %s_NUM_OUTPUTS %d\n"
             "#define %s_MAX_RANK 8\n\n",
          P, g->n_inputs, P, g->n_outputs, P);
  fprintf(f, "/* Status codes (the API prefix keeps them apart from system "
             "macros). */\n"
             "enum {\n  %s_STATUS_OK = 0,\n"
             "  %s_STATUS_BAD_ARG = 1,   /* a bad index, rank, dim or pointer */\n"
             "  %s_STATUS_NO_MEMORY = 2, /* out of memory */\n"
             "  %s_STATUS_NOT_SET = 3,   /* an input is not set */\n"
             "  %s_STATUS_BUSY = 4       /* another call on this model is in progress */\n"
             "};\n\n",
          P, P, P, P, P);
  fprintf(f, "typedef struct %s_model %s_model;\n\n", p, p);
  fprintf(f,
          "/* num_threads <= 0: one per online core. NULL when out of memory. */\n"
          "%s_model *%s_create(int num_threads);\n"
          "void %s_free(%s_model *m);\n"
          "int %s_num_threads(const %s_model *m);\n\n"
          "/* Input i (in the order above); dims has `rank` entries. */\n"
          "int %s_set_input(%s_model *m, int i, const void *data, int rank,\n"
          "    const int64_t *dims);\n"
          "int %s_run(%s_model *m);\n"
          "/* Output i of the last run when it succeeded; rank and dims (room\n"
          " * for %s_MAX_RANK) may be NULL. NULL and rank 0 before the first\n"
          " * run, after a failed run (it invalidates the outputs) and while\n"
          " * another call is in progress. */\n"
          "const void *%s_output(const %s_model *m, int i, int *rank, int64_t *dims);\n"
          "/* The last error of m, one line (\"\" when none); BUSY sets none.\n"
          " * Read it from the thread whose call failed, before the next call. */\n"
          "const char *%s_error(const %s_model *m);\n\n"
          "int %s_num_inputs(void);\nint %s_num_outputs(void);\n"
          "/* Name and declared type (\"f32[N,3,224,224]\"); NULL out of range. */\n"
          "const char *%s_input_name(int i);\nconst char *%s_input_type(int i);\n"
          "const char *%s_output_name(int i);\nconst char *%s_output_type(int i);\n\n",
          p, p, p, p, p, p, p, p, p, p, P, p, p, p, p, p, p, p, p, p, p);
  fprintf(f, "#ifdef __cplusplus\n}\n#endif\n#endif /* %s_H_INCLUDED */\n", P);
}

static void write_dims(FILE *f, const ncc_value *v) {
  if (!v || v->shape.rank == 0) {
    fputs("{0}", f); /* C11 has no empty initializer */
    return;
  }
  fputc('{', f);
  for (int d = 0; v && d < v->shape.rank; d++) {
    int64_t dd = v->shape.d[d];
    fprintf(f, "%s%lld", d ? ", " : "",
            (long long)(ncc_dim_is_sym(dd) ? -(int64_t)ncc_dim_sym_id(dd) - 1 : dd));
  }
  fputc('}', f);
}

static void write_names(FILE *f, const char *table, const lib *L, bool inputs,
                        bool types) {
  const ncc_graph *g = L->g;
  int n = inputs ? g->n_inputs : g->n_outputs;
  char t[256];
  fprintf(f, "static const char *const %s[] = {", table);
  for (int i = 0; i < n; i++) {
    const ncc_value *v = inputs ? g->inputs[i] : g->outputs[i];
    fputs("\"", f);
    ncc_escape_fput(f, NCC_ESC_CSTR, types ? type_of(L, v, t, sizeof t) : v->name);
    fputs("\", ", f);
  }
  fputs("NULL};\n", f);
}

static void write_tables(const lib *L, FILE *f, const char *hname) {
  const ncc_graph *g = L->g;
  const char *p = L->prefix;
  /* a header name has no escapes: hname is ncc's own "model.h", never
   * model bytes; the prefix and kernel names are identifiers (escape.h) */
  fprintf(f, "#include \"%s\"\n\n", hname);
  fprintf(f, "#define NCC_API(x) %s_##x\n#define NCC_MODEL %s_model\n"
             "#define NCC_ERR(x) %s_STATUS_##x\n#define NCC_WEIGHTS %s_weights\n",
          p, p, L->upper, p);
  fprintf(f, "#define NCC_NUM_IN %d\n#define NCC_NUM_OUT %d\n#define NCC_NUM_SYMS %d\n"
             "#define NCC_NUM_TMP %d\n#define NCC_NUM_STEPS %d\n\n",
          g->n_inputs, g->n_outputs, g->n_syms, L->n_tmp, L->n_steps);
  fprintf(f, "extern const unsigned char %s_weights[];\n", p);
  for (int i = 0; i < L->n_fns; i++)
    fprintf(f, "void %s(void *const *, const int64_t *, int32_t, int32_t);\n",
            L->fns[i]->name);
  fputs("\nstatic const ncc_kfn ncc_kernels[] = {", f);
  for (int i = 0; i < L->n_fns; i++) fprintf(f, "%s, ", L->fns[i]->name);
  fputs("NULL};\n\n/* kind, index, esize, rank, dims, off, def, last */\n"
        "static const ncc_slot ncc_slots[] = {\n", f);
  for (int i = 0; i < L->n_slots; i++) {
    const aot_slot *s = &L->slots[i];
    const ncc_value *v = s->kind == S_CONST ? NULL : s->v;
    fprintf(f, "  {%d, %d, %zu, %d, ", s->kind, s->index,
            v ? ncc_dtype_size(v->dtype) : (size_t)1, v ? v->shape.rank : 0);
    write_dims(f, v);
    fprintf(f, ", %zu, %d, %d}, /* ", s->off, s->def, s->last);
    ncc_escape_fput(f, NCC_ESC_COMMENT, s->v ? s->v->name : "packed data");
    fputs(" */\n", f);
  }
  fputs("  {0}};\n\n/* kernel, n_bufs, bufs, size_slot, cost, dst, src */\n"
        "static const ncc_step ncc_steps[] = {\n", f);
  for (int i = 0; i < L->n_steps; i++) {
    const aot_step *s = &L->steps[i];
    if (!s->k) {
      fprintf(f, "  {-1, 0, {0}, 0, 0.0, %d, %d},\n", s->dst, s->src);
      continue;
    }
    fprintf(f, "  {%d, %d, {", s->kernel, s->k->n_bufs);
    for (int b = 0; b < s->k->n_bufs; b++) fprintf(f, "%s%d", b ? ", " : "", s->bufs[b]);
    fprintf(f, "}, %d, %.17g, 0, 0}, /* %s */\n", s->size_slot, s->k->cost_per_elem,
            L->fns[s->kernel]->name);
  }
  fputs("  {0}};\n\n", f);
  fputs("static const int ncc_in_slot[] = {", f);
  for (int i = 0; i < g->n_inputs; i++) fprintf(f, "%d, ", L->in_slot[i]);
  fputs("0};\nstatic const int ncc_out_slot[] = {", f);
  for (int i = 0; i < g->n_outputs; i++) fprintf(f, "%d, ", L->out_slot[i]);
  fputs("0};\nstatic const int ncc_tmp_slot[] = {", f);
  for (int i = 0; i < L->n_tmp; i++) fprintf(f, "%d, ", L->tmp_slot[i]);
  fputs("0};\n", f);
  write_names(f, "ncc_in_names", L, true, false);
  write_names(f, "ncc_in_types", L, true, true);
  write_names(f, "ncc_out_names", L, false, false);
  write_names(f, "ncc_out_types", L, false, true);
  fputs("static const char *const ncc_sym_names[] = {", f);
  for (int i = 0; i < g->n_syms; i++) {
    fputs("\"", f);
    ncc_escape_fput(f, NCC_ESC_CSTR, ncc_graph_sym_name(g, i));
    fputs("\", ", f);
  }
  fputs("NULL};\n\n", f);
}

static void write_glue(const lib *L, FILE *f, const char *hname,
                       const char *model, const char *target) {
  fputs("/* Glue generated by ncc " NCC_VERSION_STRING " for graph '", f);
  ncc_escape_fput(f, NCC_ESC_COMMENT, model);
  fputs("' (target ", f);
  ncc_escape_fput(f, NCC_ESC_COMMENT, target);
  fprintf(f, "): runs the kernel\n * sequence; see %s. Do not edit. */\n", hname);
  fputs((const char *)ncc_aot_rt_head, f);
  fputc('\n', f);
  write_tables(L, f, hname);
  fputs((const char *)ncc_aot_rt_body, f);
}

/* ---- files and the C compiler ---- */

typedef struct workdir {
  char *dir;
  int slot;                  /* the registry slot of dir */
  int file_slot[8];          /* and of the files in it */
} workdir;

/* dir/name as a fresh string (ncc_malloc'd, *cap its size). */
static char *join(const char *dir, const char *name, size_t *cap) {
  *cap = strlen(dir) + strlen(name) + 2;
  char *s = ncc_malloc(*cap);
  if (s) snprintf(s, *cap, "%s/%s", dir, name);
  return s;
}

static const char *const work_files[] = {"glue.c", "kernels.o", "model.h",
                                         "cc.log", "out", NULL};

/* A short hidden directory ".ncc-<pid>-XXXXXX" beside `path` (the final
 * renames stay on one file system; the C compiler needs real paths). It
 * and its files are registered, so the driver's SIGINT/SIGTERM handler
 * removes them; ones a SIGKILLed ncc left are swept here by a later run. */
static ncc_status workdir_make(workdir *w, const char *path) {
  for (int i = 0; i < 8; i++) w->file_slot[i] = -1;
  ncc_status st = ncc_atomic_workdir(path, &w->dir, &w->slot);
  for (int i = 0; !st && work_files[i]; i++) {
    size_t cap;
    char *f = join(w->dir, work_files[i], &cap);
    if (!f) return NCC_ERR_NOMEM;
    w->file_slot[i] = ncc_atomic_register(f, false);
    ncc_free(f, cap);
  }
  return st;
}

/* Remove the directory, or keep it (for debugging) and say where. */
static void workdir_remove(workdir *w, bool keep) {
  if (!w->dir) return;
  if (keep) {
    char t[1024];
    ncc_escape_text(w->dir, t, sizeof t);
    fprintf(stderr, "ncc: kept the temporary files in %s\n", t);
  }
  for (int i = 0; work_files[i] && !keep; i++) {
    size_t cap;
    char *f = join(w->dir, work_files[i], &cap);
    if (f) unlink(f);
    ncc_free(f, cap);
  }
  if (!keep) rmdir(w->dir);
  for (int i = 0; i < 8; i++) ncc_atomic_unregister(w->file_slot[i]);
  ncc_atomic_unregister(w->slot);
  ncc_free(w->dir, 0);
  w->dir = NULL;
}

/* Whether `prog` names an executable (a path, or found on PATH). */
static bool find_program(const char *prog) {
  if (strchr(prog, '/')) return access(prog, X_OK) == 0;
  /* the exception: PATH is the search path any exec would use */
  const char *path = getenv("PATH");
  if (!path) path = "/usr/bin:/bin";
  char buf[4096];
  for (const char *p = path; *p;) {
    const char *end = strchr(p, ':');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    snprintf(buf, sizeof buf, "%.*s/%s", (int)len, len ? p : ".", prog);
    if (access(buf, X_OK) == 0) return true;
    if (!end) break;
    p = end + 1;
  }
  return false;
}

/* The C compiler for the target: ncc_options.aarch64_cc or
 * aarch64-linux-gnu-gcc for aarch64, ncc_options.cc or cc for the host and
 * x86_64 (the driver fills them from NCC_AARCH64_CC and NCC_CC, the names
 * the message gives). */
static ncc_status pick_cc(const char *target, const char **cc) {
  bool arm = target && strcmp(target, "aarch64") == 0;
  const char *var = arm ? "NCC_AARCH64_CC" : "NCC_CC";
  const char *set = arm ? ncc_opts()->aarch64_cc : ncc_opts()->cc;
  *cc = set && *set ? set : arm ? "aarch64-linux-gnu-gcc" : "cc";
  if (!find_program(*cc))
    return ncc_error(NCC_ERR_UNSUPPORTED,
                     "--emit=lib for target '%s' needs a C compiler: '%s' not "
                     "found (set %s)",
                     target ? target : "cpu", *cc, var);
  return NCC_OK;
}

/* The first line of the compiler's messages, for the error. */
static void first_line(const char *log, char *buf, size_t cap) {
  buf[0] = 0;
  FILE *f = fopen(log, "r");
  if (!f) return;
  while (fgets(buf, (int)cap, f))
    if (strstr(buf, "error") || strstr(buf, "undefined")) break;
  fclose(f);
  buf[strcspn(buf, "\n")] = 0;
}

static ncc_status run_cc(const char *cc, char *const *argv, const char *log) {
  posix_spawn_file_actions_t fa;
  if (posix_spawn_file_actions_init(&fa)) return NCC_ERR_NOMEM;
  posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  /* its own process group, so a signal handler can stop all of it (the
   * driver forwards SIGINT/SIGTERM) before removing the work dir */
  posix_spawnattr_t at;
  if (posix_spawnattr_init(&at)) {
    posix_spawn_file_actions_destroy(&fa);
    return NCC_ERR_NOMEM;
  }
  /* The fatal signals stay blocked until the handler knows the child, so
   * none arrives between the spawn and ncc_atomic_set_child (the child
   * starts with the mask it would have had). */
  sigset_t fatal, old;
  sigemptyset(&fatal);
  sigaddset(&fatal, SIGINT);
  sigaddset(&fatal, SIGTERM);
  sigaddset(&fatal, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &fatal, &old);
  posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setpgroup(&at, 0);
  posix_spawnattr_setsigmask(&at, &old);
  pid_t pid;
  int err = posix_spawnp(&pid, cc, &fa, &at, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&at);
  if (!err) ncc_atomic_set_child((long)pid);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (err)
    return ncc_error(NCC_ERR_UNSUPPORTED, "cannot run the C compiler '%s': %s", cc,
                     strerror(err));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) {
      ncc_atomic_set_child(0);
      return ncc_error(NCC_ERR_INTERNAL, "waiting for '%s': %s", cc, strerror(errno));
    }
  ncc_atomic_set_child(0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return NCC_OK;
  char line[200];
  first_line(log, line, sizeof line);
  return ncc_error(NCC_ERR_INTERNAL, "the C compiler '%s' failed on the "
                                     "library glue: %s", cc,
                   line[0] ? line : "(no message)");
}

static ncc_status open_text(const char *path, FILE **f) {
  *f = fopen(path, "w");
  if (!*f) return ncc_error(NCC_ERR_INPUT, "%s: cannot create: %s", path, strerror(errno));
  return NCC_OK;
}

static ncc_status close_text(const char *path, FILE *f) {
  bool bad = ferror(f) != 0;
  if (fclose(f) != 0 || bad) return ncc_error(NCC_ERR_INPUT, "%s: cannot write", path);
  return NCC_OK;
}

typedef struct lib_paths {
  char *glue, *obj, *hdr, *log, *out, *final_hdr;
  size_t c_glue, c_obj, c_hdr, c_log, c_out, c_final;
} lib_paths;

static void paths_free(lib_paths *p) {
  ncc_free(p->glue, p->c_glue);
  ncc_free(p->obj, p->c_obj);
  ncc_free(p->hdr, p->c_hdr);
  ncc_free(p->log, p->c_log);
  ncc_free(p->out, p->c_out);
  ncc_free(p->final_hdr, p->c_final);
}

static ncc_status build(lib *L, const char *target, const char *path,
                        const char *cc, const workdir *w) {
  lib_paths P = {0};
  P.glue = join(w->dir, "glue.c", &P.c_glue);
  P.obj = join(w->dir, "kernels.o", &P.c_obj);
  P.hdr = join(w->dir, "model.h", &P.c_hdr);
  P.log = join(w->dir, "cc.log", &P.c_log);
  P.out = join(w->dir, "out", &P.c_out);
  P.final_hdr = replace_ext(path, ".h", &P.c_final);
  if (!P.glue || !P.obj || !P.hdr || !P.log || !P.out || !P.final_hdr) {
    paths_free(&P);
    return NCC_ERR_NOMEM;
  }
  const char *lib_name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  const char *tname = target ? target : "cpu";
  FILE *f;
  ncc_status st = NCC_OK;
  for (int i = 0; i < L->n_fns && !st; i++)
    if (!ncc_escape_is_ident(L->fns[i]->name))
      st = ncc_error(NCC_ERR_INTERNAL, "kernel name '%s' is not a C identifier",
                     L->fns[i]->name);
  if (!st) st = open_text(P.hdr, &f);
  if (!st) {
    write_header(L, f, lib_name, tname);
    st = close_text(P.hdr, f);
  }
  if (!st) st = open_text(P.glue, &f);
  if (!st) {
    write_glue(L, f, "model.h", L->g->name, tname);
    st = close_text(P.glue, f);
  }
  char wsym[96];
  snprintf(wsym, sizeof wsym, "%s_weights", L->prefix);
  ncc_aot_object o = {.kernels = L->fns, .n_kernels = L->n_fns,
                      .weights_symbol = wsym, .blobs = L->blobs,
                      .n_blobs = L->n_blobs, .weights_bytes = L->weights_bytes,
                      .hide_kernels = true};
  if (!st) st = ncc_aot_emit_module(&o, L->h, "obj", P.obj);
  bool reloc = ends_with(path, ".o");
  char *shared[] = {(char *)cc, "-O2", "-fPIC", "-shared", "-o", P.out, P.glue,
                    P.obj, "-lm", "-lpthread", NULL};
  char *relocatable[] = {(char *)cc, "-O2", "-fPIC", "-r", "-nostdlib", "-o",
                         P.out, P.glue, P.obj, NULL};
  /* the C compiler builds the glue and links: the library's link phase */
  double t0 = ncc_ctime_now();
  if (!st) st = run_cc(cc, reloc ? relocatable : shared, P.log);
  ncc_ctime_add(NCC_PHASE_LINK, ncc_ctime_now() - t0);
  /* the linker makes an executable-mode file; every output of ncc gets
   * 0666 & ~umask, the mode the header got from fopen */
  struct stat hs;
  if (!st && (stat(P.hdr, &hs) != 0 || chmod(P.out, hs.st_mode & 0777) != 0))
    st = ncc_error(NCC_ERR_INPUT, "%s: cannot write the output file: %s", path,
                   strerror(errno));
  if (!st && rename(P.out, path) != 0)
    st = ncc_error(NCC_ERR_INPUT, "%s: cannot write the output file: %s", path,
                   strerror(errno));
  if (!st && rename(P.hdr, P.final_hdr) != 0) {
    int err = errno;
    unlink(path);
    st = ncc_error(NCC_ERR_INPUT, "%s: cannot write the header: %s",
                   P.final_hdr, strerror(err));
  }
  paths_free(&P);
  return st;
}

ncc_status ncc_aot_emit_lib(const ncc_graph *g, const char *target,
                            const ncc_llvm_host *h, const char *path) {
  if (ends_with(path, ".h") || ends_with(path, ".c"))
    return ncc_error(NCC_ERR_USAGE,
                     "%s: --emit=lib writes a library and a .h beside it; name "
                     "the library (NAME.so or NAME.o)", path);
  const char *cc;
  ncc_status st = pick_cc(target, &cc);
  if (st != NCC_OK) return st;
  lib L;
  st = lib_init(&L, g, h);
  if (st == NCC_OK) {
    make_prefix(&L, path);
    st = mark_needed(&L);
  }
  if (st == NCC_OK) st = check_dims(&L);
  if (st == NCC_OK) st = plan(&L);
  if (st == NCC_OK) st = dedupe(&L);
  workdir w = {0};
  if (st == NCC_OK) st = workdir_make(&w, path);
  if (st == NCC_OK) st = build(&L, target, path, cc, &w);
  workdir_remove(&w, ncc_opts()->keep_temps != 0);
  lib_free(&L);
  return st;
}
