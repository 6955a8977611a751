/* tests/gpu/ncc_sgemm.c — ncc's side of the SGEMM benchmark in
 * tools/gpu-check.sh: Y = A B with A an n x n input and B an n x n
 * constant (weights, uploaded once), compiled for a GPU target.
 *
 * One full run (upload A, kernels, download Y) is checked against a
 * double-precision product on sampled elements, then the device kernels
 * alone are timed on the buffers that run left on the device (transfers
 * excluded, as cuBLAS is timed). Prints one JSON line:
 *   {"target": ..., "n": ..., "ms": ..., "gflops": ..., "max_rel_err": ...}
 * Usage: ncc_gpu_sgemm [--target cuda|opencl] [--n 4096] [--iters 20]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "targets/gpu/gpu_exec.h"
#include "ir/ir.h"
#include "ir/shape.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;
static float frand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (float)((double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static int fail(const char *what) {
  fprintf(stderr, "ncc_gpu_sgemm: %s: %s\n", what, ncc_error_message());
  return 1;
}

int main(int argc, char **argv) {
  const char *target = "cuda";
  int64_t n = 4096;
  int iters = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--target") == 0) target = argv[i + 1];
    else if (strcmp(argv[i], "--n") == 0) n = atoll(argv[i + 1]);
    else if (strcmp(argv[i], "--iters") == 0) iters = atoi(argv[i + 1]);
    else {
      fprintf(stderr, "usage: ncc_gpu_sgemm [--target T] [--n N] [--iters K]\n");
      return 2;
    }
  }
  const ncc_backend *be = ncc_backend_find(target);
  char why[400];
  if (!be || ncc_target_available(target, why, sizeof why) != NCC_OK) {
    fprintf(stderr, "ncc_gpu_sgemm: target %s unavailable: %s\n", target,
            be ? why : "not built");
    return 77;
  }
  ncc_graph *g = ncc_graph_new("sgemm");
  ncc_tensor a, b, y;
  int64_t d[2] = {n, n};
  if (!g || ncc_tensor_alloc(&a, NCC_DT_F32, 2, d) || ncc_tensor_alloc(&b, NCC_DT_F32, 2, d))
    return fail("alloc");
  for (int64_t i = 0; i < n * n; i++) ((float *)a.data)[i] = frand();
  for (int64_t i = 0; i < n * n; i++) ((float *)b.data)[i] = frand();
  ncc_shape s = {.rank = 2, .d = {n, n}};
  ncc_value *va = ncc_graph_add_value(g, "a", NCC_VAL_INPUT, NCC_DT_F32, &s);
  ncc_value *vb = ncc_graph_add_const(g, "b", NCC_DT_F32, &s, b.data);
  ncc_value *in[2] = {va, vb};
  ncc_node *mm = ncc_graph_add_node(g, NCC_OP_MATMUL, "mm", 2, in, 1);
  ncc_value *vy = ncc_graph_add_value(g, "y", NCC_VAL_NODE, NCC_DT_UNDEF, NULL);
  if (!va || !vb || !mm || !vy) return fail("graph");
  ncc_node_set_output(mm, 0, vy);
  if (ncc_graph_add_input(g, va) || ncc_graph_add_output(g, vy) || ncc_infer_graph(g))
    return fail("graph");
  void *state = NULL;
  ncc_backend_opts opts = {0};
  if (be->compile(g, &opts, &state)) return fail("compile");
  if (be->run(state, &a, 1, &y, 1)) return fail("run");
  /* check sampled elements against a double-precision dot product */
  double max_rel = 0.0;
  for (int k = 0; k < 64; k++) {
    int64_t r = (k * 7919) % n, c = (k * 104729 + 13) % n;
    double ref = 0.0, mag = 0.0;
    for (int64_t j = 0; j < n; j++) {
      double p = (double)((float *)a.data)[r * n + j] * ((float *)b.data)[j * n + c];
      ref += p;
      mag += fabs(p);
    }
    double err = fabs(((float *)y.data)[r * n + c] - ref) / (mag > 0 ? mag : 1.0);
    if (err > max_rel) max_rel = err;
  }
  double ms = 0.0;
  if (ncc_gpu_time_kernels(state, 1, &ms) || ncc_gpu_time_kernels(state, iters, &ms))
    return fail("timing");
  double gflops = 2.0 * (double)n * (double)n * (double)n / (ms * 1e6);
  printf("{\"target\": \"%s\", \"n\": %lld, \"iters\": %d, \"ms\": %.4f, \"gflops\": %.1f, "
         "\"max_rel_err\": %.3g}\n",
         target, (long long)n, iters, ms, gflops, max_rel);
  be->free(state);
  ncc_tensor_free(&a);
  ncc_tensor_free(&b);
  ncc_tensor_free(&y);
  ncc_graph_free(g);
  return max_rel < 1e-4 ? 0 : 1;
}
