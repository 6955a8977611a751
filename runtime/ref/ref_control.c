/* runtime/ref/ref_control.c — reference kernels of If and Loop.
 *
 * A body is a graph of its own whose inputs include the outer values it
 * reads (the node's trailing inputs, docs/IR.md "Subgraphs"), so a kernel
 * runs it with the host executor (runtime/exec.c) like any graph: every
 * node of the body on the reference kernels, whatever the target of the
 * enclosing graph (the cpu target compiles nothing inside a body).
 *
 * Output shapes depend on data (the branch taken, the trip count): If and
 * Loop are NCC_OPF_DYNAMIC ops, whose outputs the executors leave
 * unallocated (docs/DYNAMIC-SHAPES.md). A body's result is moved into the
 * node's output (or copied, when something gave the output a buffer of
 * exactly that shape).
 */
#include <string.h>

#include "../exec.h"
#include "ref.h"

/* Put src (owned or borrowed) into the node output dst. */
static ncc_status place(ncc_tensor *dst, ncc_tensor *src) {
  if (ncc_tensor_copy_into(dst, src)) {
    ncc_tensor_free(src);
    return NCC_OK;
  }
  ncc_tensor_free(dst);
  if (src->owns_data || !src->data) {
    *dst = *src;
    memset(src, 0, sizeof *src);
    return NCC_OK;
  }
  ncc_status st = ncc_tensor_alloc_uninit(dst, src->dtype, src->rank, src->dims);
  if (st == NCC_OK && ncc_tensor_nbytes(src))
    memcpy(dst->data, src->data, ncc_tensor_nbytes(src));
  return st;
}

/* A borrowed view of t: the body reads it, nobody frees it through this. */
static ncc_tensor borrow(const ncc_tensor *t) {
  ncc_tensor v = *t;
  v.owns_data = 0;
  return v;
}

/* The one element of a condition or trip count (checked at run time: the
 * shape rule only knows static dims). */
static ncc_status scalar_of(const ncc_node *n, const ncc_tensor *t, const char *what,
                            int64_t *v) {
  if (ncc_tensor_numel(t) != 1)
    return ncc_node_error(n, NCC_ERR_INPUT, "%s holds %lld elements, not 1", what,
                          (long long)ncc_tensor_numel(t));
  *v = ncc_ref_get_i(t, 0);
  return NCC_OK;
}

ncc_status ncc_ref_IF(const ncc_node *n, const ncc_tensor *const *in, ncc_tensor *out) {
  int64_t c = 0;
  ncc_status st = scalar_of(n, in[0], "the condition", &c);
  if (st) return st;
  const ncc_graph *b = ncc_attr_graph(n, c ? "then_branch" : "else_branch");
  int n_args = n->n_in - 1;
  ncc_tensor *args = ncc_calloc((size_t)n_args + 1, sizeof *args);
  ncc_tensor *res = ncc_calloc((size_t)n->n_out + 1, sizeof *res);
  ncc_exec *x = NULL;
  st = args && res ? ncc_exec_create(b, &x) : NCC_ERR_NOMEM;
  for (int j = 0; j < n_args && st == NCC_OK; j++) args[j] = borrow(in[1 + j]);
  if (st == NCC_OK) st = ncc_exec_run(x, args, n_args, res, n->n_out);
  for (int k = 0; k < n->n_out && st == NCC_OK; k++) st = place(&out[k], &res[k]);
  for (int k = 0; res && k < n->n_out; k++) ncc_tensor_free(&res[k]);
  ncc_exec_free(x);
  ncc_free(args, 0);
  ncc_free(res, 0);
  return st;
}

/* ---- Loop ---- */

typedef struct loop_run {
  const ncc_node *n;
  const ncc_graph *body;
  int n_carried, n_cap, n_scan;
  ncc_exec *x;
  ncc_tensor *args;  /* body inputs: iteration, cond, carried, captures */
  ncc_tensor *res;   /* body outputs of one iteration */
  ncc_tensor *state; /* the carried values (borrowed until the first step) */
  ncc_tensor **scans; /* per scan output: one tensor per iteration */
  int64_t iters, cap_iters;
} loop_run;

static void loop_free(loop_run *L) {
  int n_res = 1 + L->n_carried + L->n_scan;
  for (int k = 0; L->res && k < n_res; k++) ncc_tensor_free(&L->res[k]);
  for (int k = 0; L->state && k < L->n_carried; k++) ncc_tensor_free(&L->state[k]);
  for (int k = 0; L->scans && k < L->n_scan; k++) {
    for (int64_t i = 0; L->scans[k] && i < L->iters; i++) ncc_tensor_free(&L->scans[k][i]);
    ncc_free(L->scans[k], 0);
  }
  if (L->args) { /* the iteration number and condition are the kernel's own */
    ncc_tensor_free(&L->args[0]);
    ncc_tensor_free(&L->args[1]);
  }
  ncc_free(L->scans, 0);
  ncc_free(L->state, 0);
  ncc_free(L->res, 0);
  ncc_free(L->args, 0);
  ncc_exec_free(L->x);
}

/* Keep this iteration's scan outputs (every iteration must give the same
 * shape: they are stacked). */
static ncc_status keep_scans(loop_run *L) {
  if (L->iters == L->cap_iters) {
    int64_t nc = L->cap_iters ? L->cap_iters * 2 : 8;
    for (int k = 0; k < L->n_scan; k++) {
      ncc_tensor *t = ncc_realloc(L->scans[k], sizeof(ncc_tensor) * (size_t)L->cap_iters,
                                  sizeof(ncc_tensor) * (size_t)nc);
      if (!t) return NCC_ERR_NOMEM;
      L->scans[k] = t;
    }
    L->cap_iters = nc;
  }
  for (int k = 0; k < L->n_scan; k++) {
    ncc_tensor *r = &L->res[1 + L->n_carried + k];
    if (L->iters > 0) {
      const ncc_tensor *f = &L->scans[k][0];
      bool same = f->rank == r->rank;
      for (int d = 0; same && d < r->rank; d++) same = f->dims[d] == r->dims[d];
      if (!same)
        return ncc_node_error(L->n, NCC_ERR_INPUT,
                              "scan output %d changes shape at iteration %lld", k,
                              (long long)L->iters);
    }
    L->scans[k][L->iters] = *r;
    memset(r, 0, sizeof *r);
  }
  L->iters++;
  return NCC_OK;
}

/* Scan output k: the iterations' tensors stacked along a new first axis. */
static ncc_status stack(loop_run *L, int k, ncc_tensor *dst) {
  const ncc_value *o = L->body->outputs[1 + L->n_carried + k];
  int64_t dims[NCC_MAX_RANK];
  int rank = o->shape.rank + 1;
  dims[0] = L->iters;
  for (int d = 1; d < rank; d++) /* no iteration: the body's static dims */
    dims[d] = L->iters ? L->scans[k][0].dims[d - 1]
                       : (o->shape.d[d - 1] >= 0 ? o->shape.d[d - 1] : 0);
  ncc_tensor t;
  ncc_status st = ncc_tensor_alloc_uninit(&t, o->dtype, rank, dims);
  if (st) return st;
  size_t off = 0;
  for (int64_t i = 0; i < L->iters; i++) {
    size_t nb = ncc_tensor_nbytes(&L->scans[k][i]);
    if (nb) memcpy((char *)t.data + off, L->scans[k][i].data, nb);
    off += nb;
  }
  return place(dst, &t);
}

/* The iteration number / condition as the body declares them ([] or [1]). */
static ncc_status scalar_arg(const ncc_value *v, ncc_tensor *t) {
  int64_t one[1] = {1};
  return ncc_tensor_alloc(t, v->dtype, v->shape.rank, one);
}

static ncc_status loop_run_all(loop_run *L, const ncc_tensor *const *in, ncc_tensor *out) {
  const ncc_node *n = L->n;
  int64_t max_trip = INT64_MAX, cond = 1;
  ncc_status st;
  if (n->n_in > 0 && in[0] && (st = scalar_of(n, in[0], "the trip count M", &max_trip)))
    return st;
  if (n->n_in > 1 && in[1] && (st = scalar_of(n, in[1], "the condition", &cond))) return st;
  int n_args = 2 + L->n_carried + L->n_cap, n_res = 1 + L->n_carried + L->n_scan;
  L->args = ncc_calloc((size_t)n_args, sizeof *L->args);
  L->res = ncc_calloc((size_t)n_res, sizeof *L->res);
  L->state = ncc_calloc((size_t)L->n_carried + 1, sizeof *L->state);
  L->scans = ncc_calloc((size_t)L->n_scan + 1, sizeof *L->scans);
  if (!L->args || !L->res || !L->state || !L->scans) return NCC_ERR_NOMEM;
  if ((st = ncc_exec_create(L->body, &L->x)) ||
      (st = scalar_arg(L->body->inputs[0], &L->args[0])) ||
      (st = scalar_arg(L->body->inputs[1], &L->args[1])))
    return st;
  for (int k = 0; k < L->n_carried; k++) L->state[k] = borrow(in[2 + k]);
  for (int j = 0; j < L->n_cap; j++)
    L->args[2 + L->n_carried + j] = borrow(in[2 + L->n_carried + j]);
  for (int64_t i = 0; i < max_trip && cond; i++) {
    ncc_ref_set_i(&L->args[0], 0, i);
    ncc_ref_set_i(&L->args[1], 0, cond);
    for (int k = 0; k < L->n_carried; k++) L->args[2 + k] = borrow(&L->state[k]);
    if ((st = ncc_exec_run(L->x, L->args, n_args, L->res, n_res))) return st;
    cond = ncc_ref_get_i(&L->res[0], 0);
    ncc_tensor_free(&L->res[0]);
    for (int k = 0; k < L->n_carried; k++) { /* the new value replaces the old */
      ncc_tensor_free(&L->state[k]);
      L->state[k] = L->res[1 + k];
      memset(&L->res[1 + k], 0, sizeof L->res[1 + k]);
    }
    if ((st = keep_scans(L))) return st;
  }
  for (int k = 0; k < n->n_out; k++) {
    st = k < L->n_carried ? place(&out[k], &L->state[k]) : stack(L, k - L->n_carried, &out[k]);
    if (st) return st;
  }
  return NCC_OK;
}

ncc_status ncc_ref_LOOP(const ncc_node *n, const ncc_tensor *const *in, ncc_tensor *out) {
  loop_run L;
  memset(&L, 0, sizeof L);
  L.n = n;
  L.body = ncc_attr_graph(n, "body");
  L.n_cap = (int)ncc_attr_int(n, "captures", 0);
  L.n_carried = (n->n_in < 2 ? 2 : n->n_in) - 2 - L.n_cap;
  L.n_scan = L.body->n_outputs - 1 - L.n_carried;
  ncc_status st = loop_run_all(&L, in, out);
  loop_free(&L);
  return st;
}

/* ---- Scan ---- */

/* outer = product of dims before axis a, inner = bytes of the dims after. */
static void split_at(int rank, const int64_t *dims, int a, size_t esize, int64_t *outer,
                     size_t *inner) {
  *outer = 1;
  *inner = esize;
  for (int d = 0; d < a; d++) *outer *= dims[d];
  for (int d = a + 1; d < rank; d++) *inner *= (size_t)dims[d];
}

/* Slice t of src along axis a into dst (allocated here). */
static ncc_status take_slice(const ncc_tensor *src, int a, int64_t t, ncc_tensor *dst) {
  int64_t dims[NCC_MAX_RANK], outer;
  size_t inner;
  for (int d = 0, e = 0; d < src->rank; d++)
    if (d != a) dims[e++] = src->dims[d];
  ncc_status st = ncc_tensor_alloc_uninit(dst, src->dtype, src->rank - 1, dims);
  if (st) return st;
  split_at(src->rank, src->dims, a, ncc_dtype_size(src->dtype), &outer, &inner);
  for (int64_t o = 0; o < outer && inner; o++)
    memcpy((char *)dst->data + (size_t)o * inner,
           (const char *)src->data + ((size_t)(o * src->dims[a] + t)) * inner, inner);
  return NCC_OK;
}

static int64_t ints_at(const ncc_node *n, const char *name, int i, int64_t dflt) {
  int cnt = 0;
  const int64_t *v = ncc_attr_ints(n, name, &cnt);
  return v && i < cnt ? v[i] : dflt;
}

static ncc_status scan_run(const ncc_node *n, const ncc_tensor *const *in, ncc_tensor *out,
                           loop_run *L, int M) {
  int N = L->n_carried, n_in = n->n_in, n_res = N + L->n_scan;
  int64_t seq = 0;
  ncc_status st;
  L->args = ncc_calloc((size_t)n_in + 2, sizeof *L->args);
  L->res = ncc_calloc((size_t)n_res + 1, sizeof *L->res);
  L->state = ncc_calloc((size_t)N + 1, sizeof *L->state);
  L->scans = ncc_calloc((size_t)L->n_scan + 1, sizeof *L->scans);
  int *ax = ncc_calloc((size_t)M + 1, sizeof *ax);
  if (!L->args || !L->res || !L->state || !L->scans || !ax) {
    ncc_free(ax, 0);
    return NCC_ERR_NOMEM;
  }
  for (int i = 0; i < M; i++) {
    const ncc_tensor *x = in[N + i];
    int64_t a = ints_at(n, "scan_input_axes", i, 0);
    ax[i] = (int)(a < 0 ? a + x->rank : a);
    if (i == 0) seq = x->dims[ax[0]];
    if (x->dims[ax[i]] != seq) {
      ncc_free(ax, 0);
      return ncc_node_error(n, NCC_ERR_INPUT, "the scan inputs have different lengths");
    }
  }
  st = ncc_exec_create(L->body, &L->x);
  for (int k = 0; k < N; k++) L->state[k] = borrow(in[k]);
  for (int j = N + M; j < n_in; j++) L->args[j] = borrow(in[j]);
  for (int64_t t = 0; t < seq && st == NCC_OK; t++) {
    for (int k = 0; k < N; k++) L->args[k] = borrow(&L->state[k]);
    for (int i = 0; i < M && st == NCC_OK; i++) {
      int64_t at = ints_at(n, "scan_input_directions", i, 0) ? seq - 1 - t : t;
      ncc_tensor_free(&L->args[N + i]);
      st = take_slice(in[N + i], ax[i], at, &L->args[N + i]);
    }
    if (st == NCC_OK) st = ncc_exec_run(L->x, L->args, n_in, L->res, n_res);
    for (int k = 0; k < N && st == NCC_OK; k++) {
      ncc_tensor_free(&L->state[k]);
      L->state[k] = L->res[k];
      memset(&L->res[k], 0, sizeof L->res[k]);
    }
    if (st == NCC_OK) {
      /* keep_scans counts scans after carried + 1 (Loop's condition) */
      memmove(&L->res[1], &L->res[0], sizeof *L->res * (size_t)n_res);
      memset(&L->res[0], 0, sizeof L->res[0]);
      st = keep_scans(L);
    }
  }
  for (int i = 0; i < M; i++) ncc_tensor_free(&L->args[N + i]);
  ncc_free(ax, 0);
  if (st) return st;
  for (int k = 0; k < n->n_out && st == NCC_OK; k++) {
    if (k < N) {
      st = place(&out[k], &L->state[k]);
      continue;
    }
    /* stack the iterations' outputs at the output axis, reversed for
     * direction 1 */
    int j = k - N;
    const ncc_value *o = L->body->outputs[k];
    int rank = o->shape.rank + 1;
    int64_t a = ints_at(n, "scan_output_axes", j, 0);
    int axis = (int)(a < 0 ? a + rank : a);
    bool rev = ints_at(n, "scan_output_directions", j, 0) != 0;
    int64_t dims[NCC_MAX_RANK];
    for (int d = 0, e = 0; d < rank; d++)
      dims[d] = d == axis ? seq
                          : (seq ? L->scans[j][0].dims[e++]
                                 : (o->shape.d[e] >= 0 ? o->shape.d[e++] : (e++, 0)));
    ncc_tensor t;
    if ((st = ncc_tensor_alloc_uninit(&t, o->dtype, rank, dims))) return st;
    int64_t outer;
    size_t inner;
    split_at(rank, dims, axis, ncc_dtype_size(o->dtype), &outer, &inner);
    for (int64_t it = 0; it < seq && inner; it++) {
      int64_t p = rev ? seq - 1 - it : it;
      for (int64_t q = 0; q < outer; q++)
        memcpy((char *)t.data + ((size_t)(q * seq + p)) * inner,
               (const char *)L->scans[j][it].data + (size_t)q * inner, inner);
    }
    st = place(&out[k], &t);
  }
  return st;
}

ncc_status ncc_ref_SCAN(const ncc_node *n, const ncc_tensor *const *in, ncc_tensor *out) {
  loop_run L;
  memset(&L, 0, sizeof L);
  L.n = n;
  L.body = ncc_attr_graph(n, "body");
  int M = (int)ncc_attr_int(n, "num_scan_inputs", 1);
  L.n_cap = (int)ncc_attr_int(n, "captures", 0);
  L.n_carried = n->n_in - M - L.n_cap;
  L.n_scan = L.body->n_outputs - L.n_carried;
  ncc_status st = scan_run(n, in, out, &L, M);
  /* loop_free frees args[0..1] as Loop's own scalars: Scan's are borrowed */
  if (L.args) memset(L.args, 0, sizeof *L.args * 2);
  loop_free(&L);
  return st;
}
