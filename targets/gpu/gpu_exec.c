/* targets/gpu/gpu_exec.c — the device executor shared by the GPU backends
 * (see gpu_exec.h for the residency rules); the graph's lowering loop
 * lives here until it joins codegen's one lowering driver.
 *
 * Compile: lower what the GPU handles, render all kernels as one program
 * (one clBuildProgram / one NVRTC compilation per module), build it, and
 * upload the constants the kernels read. Run: walk the nodes in order like
 * the host executor (runtime/exec.c) — concrete shapes from ncc_infer_node,
 * symbols bound from inputs and outputs, declared shapes checked before a
 * kernel — but keep tensors on the device between kernels.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../ir/shape.h"
#include "../../runtime/exec.h"
#include "../../runtime/profile.h"
#include "../../runtime/ref/ref.h"
#include "../../codegen/escape.h"
#include "../../ir/options.h"
#include "gpu_exec.h"

/* ---- kernels (lowered by codegen: ncc_gpu_lower_all) ---- */

static void free_kernels(kir_kernel **ks, int n) {
  if (!ks) return;
  for (int i = 0; i < n; i++) kir_kernel_free(ks[i]);
  ncc_free(ks, 0);
}

/* ---- the module ---- */

typedef struct gkern {
  int node;
  kir_kernel *k; /* kept: launch sizes are its expressions */
  const ncc_fuse_group *group; /* a fused group's kernel: inputs are its ext */
  ncc_cstyle_info info;
  void *handle;
  /* the last launch, for ncc_gpu_time_kernels */
  ncc_gpu_arg args[KIR_MAX_BUFS + 16];
  int nargs;
  int64_t groups;
  bool launched;
} gkern;

typedef struct gval {
  ncc_gpu_mem mem; /* persistent device buffer */
  size_t cap;
  bool const_on_dev; /* a constant uploaded at compile time */
  /* per run */
  ncc_tensor t; /* dtype and dims; data while host_valid */
  bool bound, host_valid, dev_valid, host_owned, moved;
  bool virt; /* inside a fused group: shape only, never computed */
  int alias; /* -1, or the value whose device buffer this one shares */
} gval;

struct ncc_gpu_module {
  const ncc_gpu_device *dev;
  const ncc_graph *g;
  gkern *ks;
  int nk;
  int *node_k; /* per node: index in ks, or -1 */
  bool *inner;  /* per node: a fused group's member other than its root */
  int covered;  /* nodes the kernels compute */
  ncc_fuse_plan *fp;
  void *program;
  void **handles;
  gval *v;
  int64_t *syms;
  ncc_tinfo *tin, *tout;
  const ncc_tensor **inp;
  ncc_tensor *outs;
  int max_in, max_out;
};

void ncc_gpu_free(void *state) {
  ncc_gpu_module *m = state;
  if (!m) return;
  const ncc_gpu_device *d = m->dev;
  if (m->program) d->free_program(d->ctx, m->program, m->handles, m->nk);
  if (m->v)
    for (int i = 0; i < m->g->n_values; i++)
      if (m->v[i].mem) d->release(d->ctx, m->v[i].mem);
  if (m->ks)
    for (int i = 0; i < m->nk; i++) kir_kernel_free(m->ks[i].k);
  ncc_free(m->ks, 0);
  ncc_free(m->node_k, 0);
  ncc_free(m->inner, 0);
  ncc_fuse_plan_free(m->fp);
  ncc_free(m->handles, 0);
  ncc_free(m->v, 0);
  ncc_free(m->syms, 0);
  ncc_free(m->tin, 0);
  ncc_free(m->tout, 0);
  ncc_free(m->inp, 0);
  ncc_free(m->outs, 0);
  ncc_free(m, sizeof *m);
}

static ncc_status alloc_module(const ncc_gpu_device *dev, const ncc_graph *g,
                               ncc_gpu_module **out) {
  ncc_gpu_module *m = ncc_calloc(1, sizeof *m);
  if (!m) return NCC_ERR_NOMEM;
  m->dev = dev;
  m->g = g;
  for (int i = 0; i < g->n_nodes; i++) {
    if (g->nodes[i]->n_in > m->max_in) m->max_in = g->nodes[i]->n_in;
    if (g->nodes[i]->n_out > m->max_out) m->max_out = g->nodes[i]->n_out;
  }
  m->node_k = ncc_calloc((size_t)g->n_nodes + 1, sizeof *m->node_k);
  m->inner = ncc_calloc((size_t)g->n_nodes + 1, sizeof *m->inner);
  m->v = ncc_calloc((size_t)g->n_values + 1, sizeof *m->v);
  m->syms = ncc_calloc((size_t)g->n_syms + 1, sizeof *m->syms);
  m->tin = ncc_calloc((size_t)m->max_in + 1, sizeof *m->tin);
  m->tout = ncc_calloc((size_t)m->max_out + 1, sizeof *m->tout);
  m->inp = ncc_calloc((size_t)m->max_in + 1, sizeof *m->inp);
  m->outs = ncc_calloc((size_t)m->max_out + 1, sizeof *m->outs);
  if (!m->node_k || !m->inner || !m->v || !m->syms || !m->tin || !m->tout || !m->inp || !m->outs) {
    ncc_gpu_free(m);
    return NCC_ERR_NOMEM;
  }
  for (int i = 0; i < g->n_nodes; i++) m->node_k[i] = -1;
  for (int i = 0; i < g->n_values; i++) m->v[i].alias = -1;
  *out = m;
  return NCC_OK;
}

/* SIZE_MAX when the size overflows (checked in ncc_tensor_nbytes). */
static size_t nbytes(const ncc_tensor *t) { return ncc_tensor_nbytes(t); }

static ncc_status ensure_mem(ncc_gpu_module *m, int id, size_t bytes) {
  gval *v = &m->v[id];
  if (v->mem && v->cap >= bytes) return NCC_OK;
  const ncc_gpu_device *d = m->dev;
  if (v->mem) d->release(d->ctx, v->mem);
  v->mem = 0;
  v->cap = 0;
  size_t want = bytes < 16 ? 16 : bytes;
  ncc_status st = d->alloc(d->ctx, want, &v->mem);
  if (st != NCC_OK) return st;
  v->cap = want;
  return NCC_OK;
}

static ncc_gpu_mem mem_of(const ncc_gpu_module *m, int id) {
  while (m->v[id].alias >= 0) id = m->v[id].alias;
  return m->v[id].mem;
}

/* The value kernel input `index` binds to: the node's input, or a fused
 * group's external value. */
static const ncc_value *kernel_input(const ncc_gpu_module *m, const gkern *gk, int index) {
  if (gk->group) return gk->group->ext[index];
  return m->g->nodes[gk->node]->in[index];
}

/* Upload the constants kernels read (once, at compile time). */
static ncc_status upload_consts(ncc_gpu_module *m) {
  const ncc_gpu_device *d = m->dev;
  for (int j = 0; j < m->nk; j++) {
    const kir_kernel *k = m->ks[j].k;
    for (int b = 0; b < k->n_bufs; b++) {
      if (k->bufs[b].local_elems || k->bufs[b].bind != KIR_BIND_INPUT) continue;
      const ncc_value *val = kernel_input(m, &m->ks[j], k->bufs[b].index);
      if (!val || val->kind != NCC_VAL_CONST || m->v[val->id].const_on_dev) continue;
      ncc_tensor t = {.dtype = val->dtype, .rank = val->shape.rank};
      for (int r = 0; r < t.rank; r++) t.dims[r] = val->shape.d[r];
      size_t bytes = nbytes(&t);
      ncc_status st = ensure_mem(m, val->id, bytes);
      if (st == NCC_OK && bytes) st = d->upload(d->ctx, m->v[val->id].mem, val->data, bytes);
      if (st != NCC_OK) return st;
      m->v[val->id].const_on_dev = true;
    }
  }
  return NCC_OK;
}

ncc_status ncc_gpu_compile(const ncc_gpu_device *dev, const ncc_graph *g,
                           ncc_gpu_module **out) {
  *out = NULL;
  ncc_gpu_module *m;
  ncc_status st = alloc_module(dev, g, &m);
  if (st != NCC_OK) return st;
  kir_kernel **ks = NULL;
  bool *fused = NULL;
  ncc_cstyle_info *infos = ncc_calloc((size_t)g->n_nodes + 1, sizeof *infos);
  const char **names = ncc_calloc((size_t)g->n_nodes + 1, sizeof *names);
  ncc_sbuf src = {0};
  st = ncc_gpu_lower_all(g, &m->fp, &ks, &fused);
  if (st == NCC_OK && (!infos || !names)) st = NCC_ERR_NOMEM;
  if (st != NCC_OK) goto done;
  st = ncc_gpu_render_program(dev->lang, ks, g->n_nodes, &src, infos);
  if (st != NCC_OK) goto done;
  if (ncc_opts_dump(NCC_DUMP_GPU)) fputs(src.s, ncc_opts_dump_file());
  for (int i = 0; i < g->n_nodes; i++)
    if (ks[i]) m->nk++;
  m->ks = ncc_calloc((size_t)m->nk + 1, sizeof *m->ks);
  m->handles = ncc_calloc((size_t)m->nk + 1, sizeof *m->handles);
  if (!m->ks || !m->handles) {
    st = NCC_ERR_NOMEM;
    goto done;
  }
  int j = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    if (!ks[i]) continue;
    const ncc_cstyle_info *in = &infos[i];
    if (in->exact_local && in->local_size > dev->max_local) {
      st = ncc_error(NCC_ERR_UNSUPPORTED,
                     "%s: kernel %s needs %d work-items per group, the device allows %d",
                     dev->target, ks[i]->name, in->local_size, dev->max_local);
      goto done;
    }
    if (in->local_bytes > dev->max_local_bytes) {
      st = ncc_error(NCC_ERR_UNSUPPORTED,
                     "%s: kernel %s needs %lld bytes of local memory, the device has %lld",
                     dev->target, ks[i]->name, (long long)in->local_bytes,
                     (long long)dev->max_local_bytes);
      goto done;
    }
    m->ks[j].node = i;
    m->ks[j].k = ks[i];
    int gi = m->fp->group_of[i];
    if (gi >= 0 && fused[gi]) {
      const ncc_fuse_group *gr = &m->fp->groups[gi];
      m->ks[j].group = gr;
      for (int t = 0; t < gr->n_members - 1; t++) m->inner[gr->members[t]->id] = true;
      m->covered += gr->n_members;
    } else {
      m->covered++;
    }
    m->ks[j].info = *in;
    if (!in->exact_local && m->ks[j].info.local_size > dev->max_local)
      m->ks[j].info.local_size = dev->max_local;
    names[j] = ks[i]->name;
    m->node_k[i] = j;
    ks[i] = NULL; /* owned by the module now */
    j++;
  }
  if (m->nk > 0) {
    st = dev->build(dev->ctx, src.s, names, m->nk, &m->program, m->handles);
    if (st != NCC_OK) goto done;
    for (int k = 0; k < m->nk; k++) m->ks[k].handle = m->handles[k];
  }
  st = upload_consts(m);
done:
  ncc_sbuf_free(&src);
  ncc_free(names, 0);
  ncc_free(infos, 0);
  ncc_free(fused, 0);
  free_kernels(ks, g->n_nodes);
  if (st != NCC_OK) {
    ncc_gpu_free(m);
    return st;
  }
  *out = m;
  return NCC_OK;
}

int ncc_gpu_num_kernels(const void *state) { return ((const ncc_gpu_module *)state)->nk; }

int ncc_gpu_num_host_kernels(const void *state) {
  const ncc_gpu_module *m = state;
  return m->g->n_nodes - m->covered;
}

bool ncc_gpu_on_host(const void *state, int i) {
  const ncc_gpu_module *m = state;
  return m->node_k[i] < 0 && !m->inner[i];
}

/* ---- running ---- */

static ncc_status ensure_host(ncc_gpu_module *m, int id) {
  gval *v = &m->v[id];
  if (v->host_valid) return NCC_OK;
  if (!v->dev_valid)
    return ncc_error(NCC_ERR_INTERNAL, "%s: value '%s' is nowhere", m->dev->target,
                     m->g->values[id]->name);
  ncc_tensor t;
  ncc_status st = ncc_tensor_alloc(&t, v->t.dtype, v->t.rank, v->t.dims);
  if (st != NCC_OK) return st;
  size_t bytes = nbytes(&t);
  if (bytes) st = m->dev->download(m->dev->ctx, mem_of(m, id), t.data, bytes);
  if (st != NCC_OK) {
    ncc_tensor_free(&t);
    return st;
  }
  v->t.data = t.data;
  v->host_valid = v->host_owned = true;
  return NCC_OK;
}

static ncc_status ensure_dev(ncc_gpu_module *m, int id) {
  gval *v = &m->v[id];
  if (v->dev_valid) return NCC_OK;
  if (!v->host_valid)
    return ncc_error(NCC_ERR_INTERNAL, "%s: value '%s' is nowhere", m->dev->target,
                     m->g->values[id]->name);
  size_t bytes = nbytes(&v->t);
  ncc_status st = ensure_mem(m, id, bytes);
  if (st == NCC_OK && bytes) st = m->dev->upload(m->dev->ctx, v->mem, v->t.data, bytes);
  if (st == NCC_OK) v->dev_valid = true;
  return st;
}

static bool is_int_dtype(ncc_dtype dt) {
  return dt == NCC_DT_I64 || dt == NCC_DT_I32 || dt == NCC_DT_I8 || dt == NCC_DT_U8 ||
         dt == NCC_DT_BOOL;
}

static ncc_status bind_inputs(ncc_gpu_module *m, const ncc_tensor *in, int n_in) {
  ncc_status st = ncc_exec_check_inputs(m->g, m->syms, in, n_in);
  if (st) return st;
  for (int i = 0; i < n_in; i++) {
    gval *gv = &m->v[m->g->inputs[i]->id];
    gv->t = in[i];
    gv->t.owns_data = 0;
    gv->bound = gv->host_valid = true;
  }
  return NCC_OK;
}

static void bind_consts(ncc_gpu_module *m) {
  for (int i = 0; i < m->g->n_values; i++) {
    const ncc_value *val = m->g->values[i];
    if (val->kind != NCC_VAL_CONST) continue;
    gval *v = &m->v[i];
    memset(&v->t, 0, sizeof v->t);
    v->t.dtype = val->dtype;
    v->t.rank = val->shape.rank;
    for (int d = 0; d < v->t.rank; d++) v->t.dims[d] = val->shape.d[d];
    v->t.data = val->data;
    v->bound = v->host_valid = true;
    v->dev_valid = v->const_on_dev;
  }
}

static ncc_status launch_kernel(ncc_gpu_module *m, gkern *gk, const ncc_node *n) {
  const kir_kernel *k = gk->k;
  ncc_status st = NCC_OK;
  bool empty = true; /* every output has 0 elements: nothing to compute */
  for (int b = 0; b < k->n_bufs && st == NCC_OK; b++) {
    const kir_buf *kb = &k->bufs[b];
    if (kb->local_elems) continue;
    if (kb->bind == KIR_BIND_INPUT) {
      st = ensure_dev(m, kernel_input(m, gk, kb->index)->id);
    } else if (kb->bind == KIR_BIND_OUTPUT) {
      int id = n->out[kb->index]->id;
      size_t bytes = nbytes(&m->v[id].t);
      if (bytes) empty = false;
      st = ensure_mem(m, id, bytes); /* never 0 bytes: see ensure_mem */
    }
  }
  if (st != NCC_OK) return st;
  /* No launch on an empty range (batch 0): CUDA refuses a 0-block grid,
   * and PoCL with a cold kernel cache starts compiling the kernel for the
   * launch in the background and crashed at exit when nothing waited. */
  if (empty) {
    gk->launched = false;
    return NCC_OK;
  }
  int na = 0;
  for (int i = 0; i < gk->info.n_bufs; i++) {
    const kir_buf *kb = &k->bufs[gk->info.bufs[i]];
    int id = kb->bind == KIR_BIND_INPUT ? kernel_input(m, gk, kb->index)->id
                                        : n->out[kb->index]->id;
    gk->args[na].is_mem = true;
    gk->args[na++].mem = mem_of(m, id);
  }
  for (int i = 0; i < gk->info.n_syms; i++) {
    gk->args[na].is_mem = false;
    gk->args[na++].i64 = m->syms[gk->info.syms[i]];
  }
  gk->nargs = na;
  gk->groups = ncc_cstyle_groups(&gk->info, m->syms, m->dev->max_groups);
  st = m->dev->launch(m->dev->ctx, gk->handle, gk->args, na, gk->groups, gk->info.local_size);
  gk->launched = st == NCC_OK;
  return st;
}

/* Run node i on the host: inputs downloaded as needed, outputs on the host. */
static ncc_status run_host(ncc_gpu_module *m, const ncc_node *n) {
  ncc_status st = NCC_OK;
  for (int k = 0; k < n->n_in && st == NCC_OK; k++) {
    m->inp[k] = NULL;
    if (!n->in[k]) continue;
    /* Shape reads only the dims */
    if (n->op != NCC_OP_SHAPE) st = ensure_host(m, n->in[k]->id);
    m->inp[k] = &m->v[n->in[k]->id].t;
  }
  if (st != NCC_OK) return st;
  memset(m->outs, 0, sizeof *m->outs * (size_t)n->n_out);
  for (int k = 0; k < n->n_out && st == NCC_OK; k++) {
    if (ncc_ref_allocates_outputs(n)) /* the kernel sizes them */
      m->outs[k].dtype = n->out[k] ? m->tout[k].dtype : NCC_DT_UNDEF;
    else
      st = ncc_tensor_alloc(&m->outs[k], m->tout[k].dtype, m->tout[k].shape.rank,
                            m->tout[k].shape.d);
  }
  if (st == NCC_OK) st = ncc_ref_run_kernel(n, m->inp, m->outs);
  for (int k = 0; k < n->n_out; k++) {
    if (st == NCC_OK && n->out[k]) {
      gval *v = &m->v[n->out[k]->id];
      v->t = m->outs[k];
      v->t.owns_data = 0;
      v->host_valid = v->host_owned = true;
      v->dev_valid = false;
      if (ncc_ref_allocates_outputs(n)) { /* its dims are known only now */
        ncc_exec_bind_syms(m->g, m->syms, n->out[k], &v->t);
        st = ncc_exec_check_declared(m->syms, n->out[k], &v->t);
      }
    } else {
      ncc_tensor_free(&m->outs[k]);
    }
  }
  return st;
}

static ncc_status run_node(ncc_gpu_module *m, int i) {
  const ncc_node *n = m->g->nodes[i];
  ncc_status st = NCC_OK;
  for (int k = 0; k < n->n_in; k++) {
    if (!n->in[k]) {
      memset(&m->tin[k], 0, sizeof m->tin[k]);
      m->tin[k].dtype = NCC_DT_UNDEF;
      m->tin[k].content_len = -1;
      continue;
    }
    int id = n->in[k]->id;
    gval *v = &m->v[id];
    if (!v->bound)
      return ncc_error(NCC_ERR_INTERNAL, "%s: value '%s' used before it is computed",
                       m->dev->target, n->in[k]->name);
    /* small integer tensors feed shape inference (shape arithmetic) */
    if (!v->virt && is_int_dtype(v->t.dtype) && ncc_tensor_numel(&v->t) <= NCC_CONTENT_MAX) {
      st = ensure_host(m, id);
      if (st != NCC_OK) return st;
    }
    ncc_tensor view = v->t;
    if (!v->host_valid) view.data = NULL;
    ncc_tinfo_from_tensor(&m->tin[k], &view);
  }
  st = ncc_infer_node(NULL, n, m->tin, m->tout);
  if (st != NCC_OK) return st;
  for (int k = 0; k < n->n_out; k++) {
    if (!n->out[k]) continue;
    gval *v = &m->v[n->out[k]->id];
    memset(&v->t, 0, sizeof v->t);
    v->t.dtype = m->tout[k].dtype;
    v->t.rank = m->tout[k].shape.rank;
    for (int d = 0; d < v->t.rank; d++) v->t.dims[d] = m->tout[k].shape.d[d];
    /* device buffers are sized from these dims: never from a wrapped size
     * (a data-dependent op's dims come from its host kernel, run_host) */
    if (!ncc_ref_allocates_outputs(n) && nbytes(&v->t) == SIZE_MAX)
      return ncc_error(NCC_ERR_INPUT, "%s: value '%s' (%s, rank %d): its size overflows",
                       m->dev->target, n->out[k]->name, ncc_dtype_name(v->t.dtype),
                       v->t.rank);
    v->bound = true;
    v->host_valid = v->dev_valid = v->host_owned = false;
    v->virt = m->inner[i];
    ncc_exec_bind_syms(m->g, m->syms, n->out[k], &v->t);
  }
  if (m->inner[i]) return NCC_OK; /* computed by its group's kernel */
  int kj = m->node_k[i];
  if (kj >= 0) {
    const gkern *gk = &m->ks[kj];
    int n_in = gk->group ? gk->group->n_ext : n->n_in;
    for (int k = 0; k < n_in && st == NCC_OK; k++) {
      const ncc_value *x = kernel_input(m, gk, k);
      if (x) st = ncc_exec_check_declared(m->syms, x, &m->v[x->id].t);
    }
    for (int k = 0; k < n->n_out && st == NCC_OK; k++)
      if (n->out[k]) st = ncc_exec_check_declared(m->syms, n->out[k], &m->v[n->out[k]->id].t);
    if (st == NCC_OK) st = launch_kernel(m, &m->ks[kj], n);
    for (int k = 0; k < n->n_out && st == NCC_OK; k++)
      if (n->out[k]) m->v[n->out[k]->id].dev_valid = true;
    return st;
  }
  if (ncc_node_is_view(n)) {
    gval *x = &m->v[n->in[0]->id], *y = &m->v[n->out[0]->id];
    if (x->dev_valid && ncc_tensor_numel(&x->t) == ncc_tensor_numel(&y->t)) {
      y->alias = n->in[0]->id;
      y->dev_valid = true;
      return NCC_OK;
    }
  }
  return run_host(m, n);
}

/* A profiled run: host timestamps around each step and a wait for the
 * device, so a kernel's event covers its execution (the queue is in order;
 * the waits serialise what would otherwise overlap host work). */
static ncc_status run_nodes_profiled(ncc_gpu_module *m, ncc_prof *prof) {
  ncc_status st = m->dev->finish(m->dev->ctx);
  for (int i = 0; i < m->g->n_nodes && st == NCC_OK; i++) {
    if (m->inner[i]) {
      st = run_node(m, i);
      continue;
    }
    int64_t t0 = ncc_prof_now_ns();
    st = run_node(m, i);
    if (st == NCC_OK) st = m->dev->finish(m->dev->ctx);
    ncc_prof_add(prof, i, -1, m->node_k[i] < 0, t0, ncc_prof_now_ns());
  }
  return st;
}

int ncc_gpu_step_of(const void *state, int i, const char **kernel_name) {
  const ncc_gpu_module *m = state;
  int r = i;
  if (m->inner[i] && m->fp && m->fp->group_of[i] >= 0) {
    const ncc_fuse_group *gr = &m->fp->groups[m->fp->group_of[i]];
    r = gr->members[gr->n_members - 1]->id;
  }
  if (kernel_name && m->node_k[r] >= 0) *kernel_name = m->ks[m->node_k[r]].k->name;
  return r;
}

static ncc_status take_outputs(ncc_gpu_module *m, ncc_tensor *out, int n_out) {
  for (int o = 0; o < n_out; o++) {
    int id = m->g->outputs[o]->id;
    ncc_status st = ensure_host(m, id);
    gval *v = &m->v[id];
    if (st == NCC_OK && v->host_owned && !v->moved) {
      out[o] = v->t;
      out[o].owns_data = 1;
      v->moved = true;
      continue;
    }
    if (st == NCC_OK) st = ncc_tensor_alloc(&out[o], v->t.dtype, v->t.rank, v->t.dims);
    if (st == NCC_OK && nbytes(&v->t)) memcpy(out[o].data, v->t.data, nbytes(&v->t));
    if (st != NCC_OK) {
      for (int k = 0; k < o; k++) ncc_tensor_free(&out[k]);
      return st;
    }
  }
  return NCC_OK;
}

static void end_run(ncc_gpu_module *m) {
  for (int i = 0; i < m->g->n_values; i++) {
    gval *v = &m->v[i];
    if (v->host_owned && !v->moved) ncc_free(v->t.data, 0);
    memset(&v->t, 0, sizeof v->t);
    v->bound = v->host_valid = v->dev_valid = v->host_owned = v->moved = v->virt = false;
    v->alias = -1;
  }
}

ncc_status ncc_gpu_run(void *state, const ncc_tensor *in, int n_in, ncc_tensor *out,
                       int n_out) {
  ncc_gpu_module *m = state;
  const ncc_graph *g = m->g;
  for (int o = 0; o < n_out; o++) memset(&out[o], 0, sizeof out[o]);
  if (n_out != g->n_outputs)
    return ncc_error(NCC_ERR_USAGE, "graph '%s' has %d outputs, %d requested",
                     g->name ? g->name : "", g->n_outputs, n_out);
  end_run(m);
  memset(m->syms, 0, sizeof *m->syms * (size_t)(g->n_syms + 1));
  ncc_status st = bind_inputs(m, in, n_in);
  if (st == NCC_OK) st = ncc_run_budget_check(g, in, n_in);
  if (st == NCC_OK) {
    bind_consts(m);
    ncc_prof *prof = ncc_prof_current(); /* once per run: NULL when off */
    if (!prof)
      for (int i = 0; i < g->n_nodes && st == NCC_OK; i++) st = run_node(m, i);
    else
      st = run_nodes_profiled(m, prof);
  }
  if (st == NCC_OK) st = take_outputs(m, out, n_out);
  /* outputs of 0 bytes are not downloaded, so nothing else waited for the
   * queue: do not return with work in flight */
  if (st == NCC_OK) st = m->dev->finish(m->dev->ctx);
  end_run(m);
  return st;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

ncc_status ncc_gpu_time_kernels(void *state, int iters, double *ms) {
  ncc_gpu_module *m = state;
  const ncc_gpu_device *d = m->dev;
  *ms = 0.0;
  if (iters < 1) iters = 1;
  ncc_status st = d->finish(d->ctx);
  double t0 = now_ms();
  for (int it = 0; it < iters && st == NCC_OK; it++)
    for (int j = 0; j < m->nk && st == NCC_OK; j++) {
      gkern *gk = &m->ks[j];
      if (gk->launched)
        st = d->launch(d->ctx, gk->handle, gk->args, gk->nargs, gk->groups, gk->info.local_size);
    }
  if (st == NCC_OK) st = d->finish(d->ctx);
  *ms = (now_ms() - t0) / iters;
  return st;
}
