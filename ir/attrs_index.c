/* ir/attrs_index.c — typed views of the indexing, scatter, resampling and
 * sorting ops' attributes (ir/attrs.h, the indexing block): defaults and
 * validity rules written once; shape inference reports what is invalid and
 * the kernels trust the result.
 */
#include <string.h>

#include "attrs.h"

static ncc_status int_in(const ncc_node *n, const char *name, int64_t dflt,
                         int64_t lo, int64_t hi, int64_t *v) {
  ncc_status st = ncc_attrs_get_int(n, name, dflt, v);
  if (st) return st;
  if (*v < lo || *v > hi)
    return ncc_node_error(n, NCC_ERR_INPUT, "attribute '%s' is %lld, expected %lld..%lld",
                          name, (long long)*v, (long long)lo, (long long)hi);
  return NCC_OK;
}

static ncc_status flag(const ncc_node *n, const char *name, bool dflt, bool *b) {
  int64_t v;
  ncc_status st = int_in(n, name, dflt, 0, 1, &v);
  *b = v != 0;
  return st;
}

static ncc_status fl(const ncc_node *n, const char *name, float dflt, float *v) {
  const ncc_attr *a = ncc_node_attr(n, name);
  *v = dflt;
  if (!a) return NCC_OK;
  if (a->kind == NCC_ATTR_FLOAT) *v = a->f;
  else if (a->kind == NCC_ATTR_INT) *v = (float)a->i;
  else return ncc_node_error(n, NCC_ERR_INPUT, "attribute '%s' must be a float", name);
  return NCC_OK;
}

/* The index of a string attribute's value in names (NULL-terminated);
 * dflt when absent. An unknown value is unsupported (ONNX may add one). */
static ncc_status choice(const ncc_node *n, const char *name, const char *const *names,
                         int dflt, int *out) {
  const ncc_attr *a = ncc_node_attr(n, name);
  *out = dflt;
  if (!a) return NCC_OK;
  if (a->kind != NCC_ATTR_STRING || !a->s)
    return ncc_node_error(n, NCC_ERR_INPUT, "attribute '%s' must be a string", name);
  for (int i = 0; names[i]; i++)
    if (strcmp(names[i], a->s) == 0) {
      *out = i;
      return NCC_OK;
    }
  return ncc_node_error(n, NCC_ERR_UNSUPPORTED, "%s '%s' is not supported", name, a->s);
}

ncc_status ncc_attrs_scatter(const ncc_node *n, ncc_scatter_red *red) {
  static const char *const names[] = {"none", "add", "mul", "max", "min", NULL};
  int v;
  ncc_status st = choice(n, "reduction", names, 0, &v);
  *red = (ncc_scatter_red)v;
  return st;
}

ncc_status ncc_attrs_gather_nd(const ncc_node *n, int64_t *batch_dims) {
  return int_in(n, "batch_dims", 0, 0, NCC_MAX_RANK, batch_dims);
}

ncc_status ncc_attrs_depth_space(const ncc_node *n, ncc_depth_space_attrs *a) {
  static const char *const names[] = {"DCR", "CRD", NULL};
  int m = 0;
  *a = (ncc_depth_space_attrs){.blocksize = 1};
  if (!ncc_node_attr(n, "blocksize"))
    return ncc_node_error(n, NCC_ERR_INPUT, "missing attribute 'blocksize'");
  ncc_status st = int_in(n, "blocksize", 1, 1, INT32_MAX, &a->blocksize);
  if (!st) st = choice(n, "mode", names, 0, &m);
  a->crd = m == 1;
  return st;
}

ncc_status ncc_attrs_resize(const ncc_node *n, ncc_resize_attrs *a) {
  static const char *const modes[] = {"nearest", "linear", "cubic", NULL};
  static const char *const coords[] = {
      "half_pixel",         "half_pixel_symmetric", "pytorch_half_pixel",
      "align_corners",      "asymmetric",           "tf_crop_and_resize",
      "tf_half_pixel_for_nn", NULL};
  static const char *const nearest[] = {"round_prefer_floor", "round_prefer_ceil",
                                        "floor", "ceil", NULL};
  static const char *const keep[] = {"stretch", "not_larger", "not_smaller", NULL};
  int m = 0, c = 0, nm = 0, k = 0;
  ncc_status st;
  memset(a, 0, sizeof *a);
  a->n_axes = a->n_scales = -1;
  if (n->op == NCC_OP_UPSAMPLE) {
    /* Upsample-7/9: nearest or linear, asymmetric coordinates, floor. */
    static const char *const umodes[] = {"nearest", "linear", "bilinear", NULL};
    if ((st = choice(n, "mode", umodes, 0, &m))) return st;
    a->mode = m ? NCC_RS_LINEAR : NCC_RS_NEAREST;
    a->coord = NCC_RS_ASYMMETRIC;
    a->nearest = NCC_RS_FLOOR;
    const ncc_attr *s = ncc_node_attr(n, "scales");
    if (s) {
      if (s->kind != NCC_ATTR_FLOATS || s->n > NCC_MAX_RANK)
        return ncc_node_error(n, NCC_ERR_INPUT, "attribute 'scales' must be floats");
      a->n_scales = s->n;
      for (int i = 0; i < s->n; i++) a->scales[i] = s->floats[i];
    }
    return NCC_OK;
  }
  a->cubic_a = -0.75f;
  if ((st = choice(n, "mode", modes, 0, &m)) ||
      (st = choice(n, "coordinate_transformation_mode", coords, 0, &c)) ||
      (st = choice(n, "nearest_mode", nearest, 0, &nm)) ||
      (st = choice(n, "keep_aspect_ratio_policy", keep, 0, &k)) ||
      (st = fl(n, "cubic_coeff_a", -0.75f, &a->cubic_a)) ||
      (st = fl(n, "extrapolation_value", 0.0f, &a->extrapolation)) ||
      (st = flag(n, "exclude_outside", false, &a->exclude_outside)) ||
      (st = flag(n, "antialias", false, &a->antialias)))
    return st;
  a->mode = (ncc_resize_mode)m;
  a->coord = (ncc_resize_coord)c;
  a->nearest = (ncc_resize_nearest)nm;
  a->keep = (ncc_resize_keep)k;
  int cnt = 0;
  const int64_t *ax = ncc_attr_ints(n, "axes", &cnt);
  if (ax) {
    if (cnt > NCC_MAX_RANK)
      return ncc_node_error(n, NCC_ERR_INPUT, "attribute 'axes' has %d entries", cnt);
    a->n_axes = cnt;
    memcpy(a->axes, ax, sizeof *ax * (size_t)cnt);
  }
  return NCC_OK;
}

ncc_status ncc_attrs_grid_sample(const ncc_node *n, ncc_grid_sample_attrs *a) {
  static const char *const modes[] = {"bilinear", "linear", "nearest",
                                      "bicubic",  "cubic",  NULL};
  static const char *const pads[] = {"zeros", "border", "reflection", NULL};
  int m = 0, p = 0;
  ncc_status st;
  *a = (ncc_grid_sample_attrs){0};
  if ((st = choice(n, "mode", modes, 0, &m)) || (st = choice(n, "padding_mode", pads, 0, &p)) ||
      (st = flag(n, "align_corners", false, &a->align_corners)))
    return st;
  a->mode = m <= 1 ? NCC_RS_LINEAR : m == 2 ? NCC_RS_NEAREST : NCC_RS_CUBIC;
  a->pad = (ncc_gs_pad)p;
  return NCC_OK;
}

ncc_status ncc_attrs_sort(const ncc_node *n, ncc_sort_attrs *a) {
  ncc_status st;
  *a = (ncc_sort_attrs){0};
  if ((st = ncc_attrs_get_int(n, "axis", n->op == NCC_OP_TOPK ? -1 : 0, &a->axis)))
    return st;
  if (n->op == NCC_OP_TOPK)
    return (st = flag(n, "largest", true, &a->largest)) ? st
                                                        : flag(n, "sorted", true, &a->sorted);
  return (st = flag(n, "keepdims", true, &a->keepdims))
             ? st
             : flag(n, "select_last_index", false, &a->select_last);
}

ncc_status ncc_attrs_opt_axis(const ncc_node *n, bool *has_axis, int64_t *axis) {
  *has_axis = ncc_node_attr(n, "axis") != NULL;
  return ncc_attrs_get_int(n, "axis", 0, axis);
}

ncc_status ncc_attrs_unique(const ncc_node *n, bool *sorted) {
  return flag(n, "sorted", true, sorted);
}

ncc_status ncc_attrs_reverse_sequence(const ncc_node *n, int *batch_axis,
                                      int *time_axis) {
  int64_t b, t;
  ncc_status st;
  if ((st = int_in(n, "batch_axis", 1, 0, 1, &b)) || (st = int_in(n, "time_axis", 0, 0, 1, &t)))
    return st;
  if (b == t)
    return ncc_node_error(n, NCC_ERR_INPUT, "batch_axis and time_axis are both %lld",
                          (long long)b);
  *batch_axis = (int)b;
  *time_axis = (int)t;
  return NCC_OK;
}

ncc_status ncc_attrs_einsum(const ncc_node *n, const char **equation) {
  const ncc_attr *a = ncc_node_attr(n, "equation");
  *equation = "";
  if (!a || a->kind != NCC_ATTR_STRING || !a->s)
    return ncc_node_error(n, NCC_ERR_INPUT, "attribute 'equation' (a string) is required");
  *equation = a->s;
  return NCC_OK;
}

ncc_status ncc_attrs_nms(const ncc_node *n, bool *center_point_box) {
  return flag(n, "center_point_box", false, center_point_box);
}
