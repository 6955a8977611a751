/* tools/ncc/inputs.c — model inputs for `run` and `bench`: read from the
 * --input .npy files and checked against the model's declared inputs, or
 * (bench only) generated from the declared shapes with a fixed seed.
 *
 * A symbolic dim such as N takes its value from the first file that uses
 * it; every other use must agree, so shape mismatches are reported here
 * with the file name instead of deep inside the interpreter.
 */
#include <string.h>

#include "cli.h"

void cli_tensors_free(ncc_tensor *t, int n) {
  if (!t) return;
  for (int i = 0; i < n; i++) ncc_tensor_free(&t[i]);
}

/* Graph input index for the k-th --input flag. */
static ncc_status input_slot(const ncc_graph *g, const cli_opts *o,
                             const cli_input *in, int *slot,
                             const char **path) {
  *path = in->path;
  char names[512];
  if (!in->name) {
    if (ncc_graph_num_inputs(g) != 1)
      return ncc_error(NCC_ERR_INPUT,
                       "%s: '--input %s' without a NAME needs a model with "
                       "one input, and this one has %d (%s); use --input "
                       "NAME=FILE",
                       o->model, in->path, ncc_graph_num_inputs(g),
                       cli_input_names(g, names, sizeof names));
    *slot = 0;
    return NCC_OK;
  }
  /* NAME may contain '=': take the split whose left side names an input
   * of the model; more than one such split is ambiguous. */
  char cands[512] = "";
  int n_cand = 0;
  *slot = -1;
  for (const char *eq = strchr(in->arg, '='); eq; eq = strchr(eq + 1, '=')) {
    if (eq == in->arg || !eq[1]) continue;
    for (int i = 0; i < ncc_graph_num_inputs(g); i++) {
      const char *nm = ncc_graph_input_name(g, i);
      if (strlen(nm) != (size_t)(eq - in->arg) ||
          memcmp(nm, in->arg, (size_t)(eq - in->arg)) != 0)
        continue;
      cli_append(cands, sizeof cands, n_cand++ ? ", '" : "'");
      cli_append(cands, sizeof cands, nm);
      cli_append(cands, sizeof cands, "'");
      *slot = i;
      *path = eq + 1;
    }
  }
  if (n_cand > 1)
    return ncc_error(NCC_ERR_USAGE,
                     "--input '%s' is ambiguous: NAME can be any of the "
                     "model's inputs %s",
                     in->arg, cands);
  if (*slot < 0)
    return ncc_error(NCC_ERR_INPUT,
                     "%s: the model has no input '%s' (its inputs: %s)",
                     o->model, in->name,
                     cli_input_names(g, names, sizeof names));
  return NCC_OK;
}

/* src[i] = the file for graph input i; all present, none twice. */
static ncc_status match_inputs(const ncc_graph *g, const cli_opts *o,
                               const char **src) {
  for (int k = 0; k < o->n_inputs; k++) {
    int slot = -1;
    const char *path;
    ncc_status st = input_slot(g, o, &o->inputs[k], &slot, &path);
    if (st) return st;
    if (src[slot])
      return ncc_error(NCC_ERR_USAGE, "input '%s' is given twice (%s and %s)",
                       ncc_graph_input_name(g, slot), src[slot], path);
    src[slot] = path;
  }
  char missing[512] = "";
  int n_missing = 0;
  for (int i = 0; i < ncc_graph_num_inputs(g); i++) {
    if (src[i]) continue;
    cli_append(missing, sizeof missing, n_missing++ ? ", '" : "'");
    cli_append(missing, sizeof missing, ncc_graph_input_name(g, i));
    cli_append(missing, sizeof missing, "'");
  }
  if (n_missing)
    return ncc_error(NCC_ERR_INPUT,
                     "%s: missing %s %s (give --input NAME=FILE.npy)",
                     o->model, n_missing > 1 ? "inputs" : "input", missing);
  return NCC_OK;
}

static ncc_status type_mismatch(const ncc_graph *g, const ncc_value_info *v,
                                const char *path, const ncc_tensor *t) {
  char want[256], got[256];
  cli_format_type(g, v->dtype, v->rank, v->dims, v->sym, want, sizeof want);
  cli_format_type(g, t->dtype, t->rank, t->dims, NULL, got, sizeof got);
  return ncc_error(NCC_ERR_INPUT, "%s: input '%s' must be %s, the file holds %s",
                   path, v->name, want, got);
}

/* The value already bound to symbol `sym` by inputs before `upto` (or
 * earlier dims of input `upto`), or -1. */
static int64_t bound_value(const ncc_graph *g, const ncc_tensor *t, int upto,
                           int upto_dim, int sym, int *from) {
  for (int i = 0; i <= upto; i++) {
    ncc_value_info s;
    if (ncc_graph_input_info(g, i, &s)) continue;
    int end = i == upto ? upto_dim : s.rank;
    for (int d = 0; d < end; d++)
      if (s.sym[d] == sym) {
        *from = i;
        return t[i].dims[d];
      }
  }
  return -1;
}

static ncc_status check_input(const ncc_graph *g, int i, const char *path,
                              const ncc_tensor *t) {
  ncc_value_info v;
  ncc_status st = ncc_graph_input_info(g, i, &v);
  if (st) return st;
  if (t[i].dtype != v.dtype || t[i].rank != v.rank)
    return type_mismatch(g, &v, path, &t[i]);
  for (int d = 0; d < v.rank; d++) {
    if (v.sym[d] < 0) {
      if (v.dims[d] >= 0 && v.dims[d] != t[i].dims[d])
        return type_mismatch(g, &v, path, &t[i]);
      continue;
    }
    int from;
    int64_t prev = bound_value(g, t, i, d, v.sym[d], &from);
    if (prev >= 0 && prev != t[i].dims[d])
      return ncc_error(NCC_ERR_INPUT,
                       "%s: input '%s' has %s = %lld in dim %d, but input "
                       "'%s' set it to %lld",
                       path, v.name, ncc_graph_sym_name(g, v.sym[d]),
                       (long long)t[i].dims[d], d, ncc_graph_input_name(g, from),
                       (long long)prev);
  }
  return NCC_OK;
}

ncc_status cli_inputs_load(const ncc_graph *g, const cli_opts *o,
                           ncc_tensor *out) {
  int n = ncc_graph_num_inputs(g);
  const char **src = ncc_calloc((size_t)(n ? n : 1), sizeof *src);
  if (!src) return NCC_ERR_NOMEM;
  ncc_status st = match_inputs(g, o, src);
  for (int i = 0; i < n && !st; i++) {
    st = ncc_npy_read(src[i], &out[i]);
    if (!st) st = check_input(g, i, src[i], out);
  }
  ncc_free(src, 0);
  if (st) cli_tensors_free(out, n);
  return st;
}

int64_t cli_inputs_batch(const ncc_graph *g, const ncc_tensor *in) {
  ncc_value_info v;
  if (ncc_graph_input_info(g, 0, &v) || v.rank == 0 || v.sym[0] < 0) return 0;
  return in[0].dims[0];
}

/* ---- random inputs ---- */
static bool is_batch_sym(const ncc_graph *g, int sym) {
  for (int i = 0; i < ncc_graph_num_inputs(g); i++) {
    ncc_value_info s;
    if (!ncc_graph_input_info(g, i, &s) && s.rank > 0 && s.sym[0] == sym)
      return true;
  }
  return false;
}

static ncc_status concrete_dims(const ncc_graph *g, const ncc_value_info *v,
                                int64_t batch, int64_t *dims) {
  for (int d = 0; d < v->rank; d++) {
    if (v->sym[d] < 0) {
      dims[d] = v->dims[d];
      continue;
    }
    if (!is_batch_sym(g, v->sym[d]))
      return ncc_error(NCC_ERR_USAGE,
                       "input '%s' has symbolic dim '%s' (dim %d) that "
                       "--batch does not set; give the input with --input "
                       "%s=FILE.npy",
                       v->name, ncc_graph_sym_name(g, v->sym[d]), d, v->name);
    dims[d] = batch;
  }
  return NCC_OK;
}

/* splitmix64: small, fast, and the same stream on every machine. */
static uint64_t next_random(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* IEEE half bits of k/1024 for |k| < 1024, exact (no rounding needed). */
static uint16_t half_of_k1024(int k) {
  if (k == 0) return 0;
  uint16_t sign = k < 0 ? 0x8000 : 0;
  unsigned a = (unsigned)(k < 0 ? -k : k);
  int e = 0;
  while ((a >> (e + 1)) != 0) e++; /* floor(log2 a), 0..9 */
  uint16_t mant = (uint16_t)((a << (10 - e)) & 0x3ff);
  return (uint16_t)(sign | (uint16_t)((e + 5) << 10) | mant);
}

/* Floats in [-1, 1) on a 1/1024 grid (1/128 for bf16: exact in every float
 * dtype); integers and bools in {0, 1}, which are valid indices for any
 * non-empty axis. */
static void fill_random(ncc_tensor *t, uint64_t *state) {
  int64_t n = ncc_tensor_numel(t);
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = next_random(state);
    int k = (int)(r % 2048) - 1024;
    int bit = (int)(r >> 63);
    switch (t->dtype) {
    case NCC_DT_F32: ((float *)t->data)[i] = (float)k / 1024.0f; break;
    case NCC_DT_F64: ((double *)t->data)[i] = k / 1024.0; break;
    case NCC_DT_F16: ((uint16_t *)t->data)[i] = half_of_k1024(k); break;
    case NCC_DT_I64: ((int64_t *)t->data)[i] = bit; break;
    case NCC_DT_I32: ((int32_t *)t->data)[i] = bit; break;
    case NCC_DT_I8:
    case NCC_DT_U8:
    case NCC_DT_BOOL: ((uint8_t *)t->data)[i] = (uint8_t)bit; break;
    case NCC_DT_I16:
    case NCC_DT_U16: ((uint16_t *)t->data)[i] = (uint16_t)bit; break;
    case NCC_DT_U32: ((uint32_t *)t->data)[i] = (uint32_t)bit; break;
    case NCC_DT_U64: ((uint64_t *)t->data)[i] = (uint64_t)bit; break;
    case NCC_DT_BF16: { /* bf16 keeps 8 significant bits: a 1/128 grid */
      float f = (float)(k / 8) / 128.0f;
      uint32_t w;
      memcpy(&w, &f, 4);
      ((uint16_t *)t->data)[i] = (uint16_t)(w >> 16);
      break;
    }
    default: break;
    }
  }
}

ncc_status cli_inputs_random(const ncc_graph *g, int64_t batch,
                             ncc_tensor *out) {
  uint64_t state = 0x6e6363; /* fixed seed: runs are comparable */
  ncc_status st = NCC_OK;
  for (int i = 0; i < ncc_graph_num_inputs(g) && !st; i++) {
    ncc_value_info v;
    int64_t dims[NCC_MAX_RANK];
    st = ncc_graph_input_info(g, i, &v);
    if (!st) st = concrete_dims(g, &v, batch, dims);
    if (!st) st = ncc_tensor_alloc(&out[i], v.dtype, v.rank, dims);
    if (st == NCC_ERR_INPUT || st == NCC_ERR_UNSUPPORTED)
      ncc_error_prefix("input '%s'", v.name);
    if (!st) fill_random(&out[i], &state);
  }
  if (st) cli_tensors_free(out, ncc_graph_num_inputs(g));
  return st;
}
