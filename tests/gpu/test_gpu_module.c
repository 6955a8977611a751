/* tests/gpu/test_gpu_module.c — the GPU targets' device executor around
 * the kernels: host nodes between device kernels, outputs that alias a
 * device buffer (Reshape, Flatten, Unsqueeze), a symbolic batch served by
 * one module; and the module's error paths. (Each op against ref, on every
 * target, is tests/ops/test_backend_ops.c.)
 *
 * NCC_GPU_TEST_MODE=run (default): compile for NCC_GPU_TARGET (default
 *   opencl), run it and ref on the same random inputs, compare every
 *   output; check that the kernels the backend claims are compiled.
 * NCC_GPU_TEST_MODE=ptx: emit the graph as CUDA C and PTX (NVRTC, no GPU
 *   needed) and assemble the PTX with $PTXAS -arch=$NCC_PTX_ARCH
 *   (default /usr/local/cuda/bin/ptxas, sm_90); the emit errors.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/unit/test_graph.h"

static const char *target = "opencl";
static bool ptx_mode;
static char tmpdir[] = "/tmp/ncc_gpu_module_XXXXXX";
static int ptx_count;

/* ---- comparing ---- */

static void compare(const ncc_tensor *a, const ncc_tensor *b, double atol, double rtol,
                    const char *what, int out) {
  compare_outputs(a, b, atol, rtol, target, what, out);
}

/* ptx mode: CUDA C and PTX of G, PTX assembled by ptxas. */
static void check_ptx(const char *what) {
  char cu[128], ptx[128], cmd[512];
  snprintf(cu, sizeof cu, "%s/g%d.cu", tmpdir, ptx_count);
  snprintf(ptx, sizeof ptx, "%s/g%d.ptx", tmpdir, ptx_count++);
  ncc_status st = ncc_module_emit(G, "cuda", "cuda", cu);
  if (st == NCC_OK) st = ncc_module_emit(G, "cuda", "ptx", ptx);
  if (st != NCC_OK) fail_msg("%s: emit: %s", what, ncc_error_message());
  const char *ptxas = getenv("PTXAS") ? getenv("PTXAS") : "/usr/local/cuda/bin/ptxas";
  const char *arch = getenv("NCC_PTX_ARCH") ? getenv("NCC_PTX_ARCH") : "sm_90";
  snprintf(cmd, sizeof cmd, "%s -arch=%s %s -o %s/out.cubin", ptxas, arch, ptx, tmpdir);
  if (system(cmd) != 0) fail_msg("%s: ptxas rejected %s", what, ptx);
  remove(cu);
  remove(ptx);
  char cubin[160];
  snprintf(cubin, sizeof cubin, "%s/out.cubin", tmpdir);
  remove(cubin);
}

/* Compile G for the target once; for each input set, run ref and target
 * and compare every output. Returns the compiled-kernel count (-1 in ptx
 * mode). */
static int check_sets(ncc_tensor *const *sets, int n_sets, int n_in, double atol, double rtol,
                      const char *what) {
  if (ptx_mode) {
    check_ptx(what);
    return -1;
  }
  int n_out = ncc_graph_num_outputs(G);
  ncc_tensor ref[32], dev[32];
  assert_true(n_out <= 32);
  ncc_module *m = NULL;
  ncc_status st = ncc_module_compile(G, target, &m);
  if (st != NCC_OK) fail_msg("%s: compile: %s", what, ncc_error_message());
  for (int s = 0; s < n_sets; s++) {
    st = ncc_ref_run(G, sets[s], n_in, ref, n_out);
    if (st != NCC_OK) fail_msg("%s: ref: %s", what, ncc_error_message());
    st = ncc_module_run(m, sets[s], n_in, dev, n_out);
    if (st != NCC_OK) fail_msg("%s: run: %s", what, ncc_error_message());
    for (int o = 0; o < n_out; o++) {
      compare(&ref[o], &dev[o], atol, rtol, what, o);
      ncc_tensor_free(&ref[o]);
      ncc_tensor_free(&dev[o]);
    }
  }
  int nk = ncc_module_num_kernels(m);
  assert_int_equal(nk + ncc_module_num_host_kernels(m), ncc_graph_num_nodes(G));
  ncc_module_free(m);
  return nk;
}

static void expect_kernels(int got, int want) {
  if (got >= 0) assert_int_equal(got, want);
}

/* ---- the module: host nodes between device kernels, a symbolic batch ---- */

static void test_chain_symbolic_batch(void **state) {
  (void)state;
  int64_t N = sym("N");
  int64_t dx[2] = {N, 17}, db[1] = {17};
  ncc_value *x = input(NCC_DT_F32, 2, dx);
  ncc_value *b = input(NCC_DT_F32, 1, db);
  ncc_value *h = OP(NCC_OP_RELU, OP(NCC_OP_ADD, x, b));
  ncc_value *t = OP(NCC_OP_TRANSPOSE, h);
  ncc_value *u = OP(NCC_OP_MUL, t, t);
  ncc_value *sh = OP(NCC_OP_SHAPE, u);                        /* host, dims only */
  u = opv(NCC_OP_RESHAPE, 2, (ncc_value *[]){u, sh});          /* device alias */
  ncc_value *f = OP(NCC_OP_FLATTEN, u);                        /* device alias */
  ncc_value *e = OP(NCC_OP_EXP, f);
  static const int64_t ax0[1] = {0};
  ncc_value *s = OP(NCC_OP_UNSQUEEZE, h, axes_const(1, ax0));  /* device alias */
  output(e);
  output(h);
  output(s);
  infer();
  static const int64_t batches[] = {1, 5, 5, 9, 2};
  ncc_tensor in[5][2], *sets[5];
  for (int i = 0; i < 5; i++) {
    int64_t d[2] = {batches[i], 17};
    in[i][0] = rand_tensor(NCC_DT_F32, 2, d, -1, 1);
    in[i][1] = rand_tensor(NCC_DT_F32, 1, db, -1, 1);
    sets[i] = in[i];
  }
  expect_kernels(check_sets(sets, 5, 2, 1e-6, 1e-6, "chain"), 5);
  for (int i = 0; i < 5; i++) {
    ncc_tensor_free(&in[i][0]);
    ncc_tensor_free(&in[i][1]);
  }
}

static void test_module_errors(void **state) {
  (void)state;
  if (ptx_mode) {
    /* an arch NVRTC does not have, and a malformed one */
    int64_t d[1] = {17};
    output(OP(NCC_OP_EXP, input(NCC_DT_F32, 1, d)));
    infer();
    char path[160];
    snprintf(path, sizeof path, "%s/x.ptx", tmpdir);
    setenv("NCC_CUDA_ARCH", "sm_10", 1);
    assert_int_equal(ncc_module_emit(G, "cuda", "ptx", path), NCC_ERR_UNSUPPORTED);
    setenv("NCC_CUDA_ARCH", "gfx90a", 1);
    assert_int_equal(ncc_module_emit(G, "cuda", "ptx", path), NCC_ERR_USAGE);
    unsetenv("NCC_CUDA_ARCH");
    assert_int_equal(ncc_module_emit(G, "cuda", "asm", path), NCC_ERR_UNSUPPORTED);
    assert_int_equal(ncc_module_emit(G, "opencl", "ptx", path), NCC_ERR_UNSUPPORTED);
    assert_int_equal(ncc_module_emit(G, "cuda", "cuda", "/nonexistent/dir/x.cu"), NCC_ERR_INPUT);
    assert_int_equal(access(path, F_OK), -1); /* nothing half-written */
    return;
  }
  int64_t d[1] = {17};
  ncc_value *a = input(NCC_DT_F32, 1, d);
  output(OP(NCC_OP_EXP, a));
  infer();
  ncc_module *m = NULL;
  assert_int_equal(ncc_module_compile(G, target, &m), NCC_OK);
  assert_string_equal(ncc_module_target(m), target);
  ncc_tensor out[1];
  int64_t wrong[1] = {16};
  ncc_tensor t = rand_tensor(NCC_DT_F32, 1, wrong, 0, 1);
  assert_int_equal(ncc_module_run(m, &t, 1, out, 1), NCC_ERR_INPUT);
  assert_non_null(strstr(ncc_error_message(), "dim 0"));
  assert_int_equal(ncc_module_run(m, &t, 0, out, 1), NCC_ERR_INPUT);
  ncc_tensor_free(&t);
  ncc_module_free(m);
  /* a kernel that fails to compile (the test hook breaks the program;
   * libncc reads no environment, so it is an option) */
  ncc_options o;
  ncc_options_init(&o);
  o.gpu_test_bad_kernel = 1;
  assert_int_equal(ncc_module_compile_opts(G, target, &o, &m), NCC_ERR_INTERNAL);
  assert_null(m);
  assert_non_null(strstr(ncc_error_message(), "failed to compile"));
}

int main(void) {
  const char *mode = getenv("NCC_GPU_TEST_MODE");
  ptx_mode = mode && strcmp(mode, "ptx") == 0;
  if (getenv("NCC_GPU_TARGET")) target = getenv("NCC_GPU_TARGET");
  char why[400];
  if (ptx_mode) {
    const char *ptxas = getenv("PTXAS") ? getenv("PTXAS") : "/usr/local/cuda/bin/ptxas";
    if (access(ptxas, X_OK) != 0) {
      print_message("skipped: no ptxas at %s\n", ptxas);
      return 77;
    }
    target = "cuda";
    /* NVRTC is needed for PTX: probe with a one-node graph */
    ncc_graph *pg = ncc_graph_new("probe");
    int64_t d[1] = {4};
    ncc_shape ps = mkshape(1, d);
    ncc_value *x = pg ? ncc_graph_add_value(pg, "x", NCC_VAL_INPUT, NCC_DT_F32, &ps) : NULL;
    ncc_node *n = x ? ncc_graph_add_node(pg, NCC_OP_NEG, NULL, 1, &x, 1) : NULL;
    ncc_value *y = n ? ncc_graph_add_value(pg, "y", NCC_VAL_NODE, NCC_DT_UNDEF, NULL) : NULL;
    if (!y) return 1;
    ncc_node_set_output(n, 0, y);
    if (ncc_graph_add_input(pg, x) || ncc_graph_add_output(pg, y) || ncc_infer_graph(pg))
      return 1;
    char probe[64];
    snprintf(probe, sizeof probe, "/tmp/ncc_gpu_probe_%d.ptx", (int)getpid());
    ncc_status pst = ncc_module_emit(pg, "cuda", "ptx", probe);
    ncc_graph_free(pg);
    remove(probe);
    if (pst == NCC_ERR_UNSUPPORTED) {
      print_message("skipped: no PTX here (%s)\n", ncc_error_message());
      return 77;
    }
  } else if (ncc_target_available(target, why, sizeof why) != NCC_OK) {
    print_message("skipped: target %s unavailable (%s)\n", target, why);
    return 77;
  }
  if (!mkdtemp(tmpdir)) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_chain_symbolic_batch, setup, teardown),
      cmocka_unit_test_setup_teardown(test_module_errors, setup, teardown),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  rmdir(tmpdir);
  return rc;
}
