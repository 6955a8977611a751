/* ir/dtype.c — dtype names and sizes, shape helpers, host tensors. */
#include <stdio.h>
#include <string.h>

#include "budget.h"
#include "ir.h"

static const struct {
  const char *name;
  size_t size;
} dtypes[NCC_DT_COUNT] = {
    [NCC_DT_UNDEF] = {"undef", 0}, [NCC_DT_F32] = {"f32", 4},
    [NCC_DT_F16] = {"f16", 2},     [NCC_DT_F64] = {"f64", 8},
    [NCC_DT_I8] = {"i8", 1},       [NCC_DT_U8] = {"u8", 1},
    [NCC_DT_I32] = {"i32", 4},     [NCC_DT_I64] = {"i64", 8},
    [NCC_DT_BOOL] = {"bool", 1},   [NCC_DT_I16] = {"i16", 2},
    [NCC_DT_U16] = {"u16", 2},     [NCC_DT_U32] = {"u32", 4},
    [NCC_DT_U64] = {"u64", 8},     [NCC_DT_BF16] = {"bf16", 2},
};

size_t ncc_dtype_size(ncc_dtype dt) {
  return (unsigned)dt < NCC_DT_COUNT ? dtypes[dt].size : 0;
}

const char *ncc_dtype_name(ncc_dtype dt) {
  return (unsigned)dt < NCC_DT_COUNT ? dtypes[dt].name : "?";
}

ncc_dtype ncc_dtype_from_name(const char *name, size_t len) {
  for (int i = 1; i < NCC_DT_COUNT; i++)
    if (strlen(dtypes[i].name) == len && memcmp(dtypes[i].name, name, len) == 0)
      return (ncc_dtype)i;
  return NCC_DT_UNDEF;
}

bool ncc_shape_is_static(const ncc_shape *s) {
  for (int i = 0; i < s->rank; i++)
    if (s->d[i] < 0) return false;
  return true;
}

int64_t ncc_shape_numel(const ncc_shape *s) {
  int64_t n = 1;
  for (int i = 0; i < s->rank; i++) {
    if (s->d[i] < 0) return -1;
    if (s->d[i] && n > INT64_MAX / s->d[i]) return -1;
    n *= s->d[i];
  }
  return n;
}

bool ncc_shape_eq(const ncc_shape *a, const ncc_shape *b) {
  if (a->rank != b->rank) return false;
  for (int i = 0; i < a->rank; i++)
    if (a->d[i] != b->d[i]) return false;
  return true;
}

/* ---- host tensors ---- */
int64_t ncc_tensor_numel(const ncc_tensor *t) {
  size_t n;
  if (t->rank < 0 || t->rank > NCC_MAX_RANK || !ncc_dims_numel(t->rank, t->dims, &n))
    return -1;
  return (int64_t)n;
}

size_t ncc_tensor_nbytes(const ncc_tensor *t) {
  size_t n;
  if (t->rank < 0 || t->rank > NCC_MAX_RANK ||
      !ncc_dims_nbytes(ncc_dtype_size(t->dtype), t->rank, t->dims, &n))
    return SIZE_MAX;
  return n;
}

static ncc_status tensor_alloc(ncc_tensor *t, ncc_dtype dt, int rank,
                               const int64_t *dims, bool zero) {
  memset(t, 0, sizeof *t);
  if (rank < 0 || rank > NCC_MAX_RANK)
    return ncc_error(NCC_ERR_UNSUPPORTED, "tensor rank %d exceeds %d", rank,
                     NCC_MAX_RANK);
  if (dt <= NCC_DT_UNDEF || dt >= NCC_DT_COUNT)
    return ncc_error(NCC_ERR_INPUT, "tensor has no valid dtype");
  for (int i = 0; i < rank; i++)
    if (dims[i] < 0)
      return ncc_error(NCC_ERR_INPUT, "tensor dim %d is negative (%lld)", i,
                       (long long)dims[i]);
  size_t bytes;
  if (!ncc_dims_nbytes(ncc_dtype_size(dt), rank, dims, &bytes))
    return ncc_error(NCC_ERR_INPUT, "tensor of %s: its size overflows", ncc_dtype_name(dt));
  /* the memory budget (ncc_set_max_memory) replaces a fixed cap */
  char what[96];
  snprintf(what, sizeof what, "a tensor of %s", ncc_dtype_name(dt));
  ncc_status st = ncc_budget_check((int64_t)bytes, what);
  if (st) return st;
  t->dtype = dt;
  t->rank = rank;
  if (rank) memcpy(t->dims, dims, sizeof(int64_t) * (size_t)rank);
  t->data = zero ? ncc_calloc(1, bytes ? bytes : 1) : ncc_malloc(bytes ? bytes : 1);
  if (!t->data) return NCC_ERR_NOMEM;
  t->owns_data = 1;
  return NCC_OK;
}

ncc_status ncc_tensor_alloc(ncc_tensor *t, ncc_dtype dt, int rank,
                            const int64_t *dims) {
  return tensor_alloc(t, dt, rank, dims, true);
}

ncc_status ncc_tensor_alloc_uninit(ncc_tensor *t, ncc_dtype dt, int rank,
                                   const int64_t *dims) {
  return tensor_alloc(t, dt, rank, dims, false);
}

bool ncc_tensor_copy_into(ncc_tensor *dst, const ncc_tensor *src) {
  bool ok = dst->data && dst->dtype == src->dtype && dst->rank == src->rank;
  for (int d = 0; ok && d < src->rank; d++) ok = dst->dims[d] == src->dims[d];
  if (ok && ncc_tensor_nbytes(src)) memcpy(dst->data, src->data, ncc_tensor_nbytes(src));
  return ok;
}

void ncc_tensor_free(ncc_tensor *t) {
  if (!t) return;
  if (t->owns_data) ncc_free(t->data, 0);
  memset(t, 0, sizeof *t);
}
