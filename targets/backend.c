/* targets/backend.c — the `ref` backend and the backend lookup.
 *
 * `ref` runs the whole graph through the reference interpreter; it is always
 * available and is what every other backend is checked against. The other
 * backends (targets/cpu with LLVM, targets/opencl and targets/cuda when
 * built with them; those load their drivers at run time) are found through
 * their rows of the target table.
 */
#include "targets.h"

static bool ref_available(char *why, size_t cap) {
  if (why && cap) why[0] = '\0';
  return true;
}

static bool ref_supports_op(const ncc_node *n) {
  (void)n;
  return false; /* everything runs on reference (host) kernels */
}

static ncc_status ref_compile(const ncc_graph *g, const ncc_backend_opts *opts,
                              void **state) {
  (void)opts;
  *state = (void *)g;
  return NCC_OK;
}

static ncc_status ref_run(void *state, const ncc_tensor *in, int n_in,
                          ncc_tensor *out, int n_out) {
  return ncc_ref_run((const ncc_graph *)state, in, n_in, out, n_out);
}

static int ref_num_kernels(const void *state) {
  (void)state;
  return 0;
}

static int ref_num_host(const void *state) {
  return ((const ncc_graph *)state)->n_nodes;
}

static bool ref_on_host(const void *state, int i) {
  (void)state;
  (void)i;
  return true;
}

static void ref_free(void *state) { (void)state; }

const ncc_backend ncc_backend_ref = {
    .name = "ref",
    .description = "reference interpreter (defines the semantics)",
    .available = ref_available,
    .supports_op = ref_supports_op,
    .compile = ref_compile,
    .run = ref_run,
    .num_kernels = ref_num_kernels,
    .num_host_kernels = ref_num_host,
    .on_host = ref_on_host,
    .free = ref_free,
};

const ncc_backend *ncc_backend_find(const char *name) {
  const ncc_target_row *t = ncc_target_row_find(name);
  return t && t->in_process ? t->backend : NULL;
}
