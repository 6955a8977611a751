/* tests/unit/test_target_info.c — what the library says about a target:
 * ncc_target_available (runs here) and ncc_target_can_compile (emits code
 * here, even when it cannot run), the two facts `ncc targets` prints. The
 * LLVM cross targets compile wherever LLVM is built in and never run in
 * process; ref runs and emits nothing; a GPU target emits its source
 * without a device; an unknown name is a usage error. What the emitted
 * code is, is checked outside ncc by tests/cli/test_targets.py.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ncc.h"

static void test_ref_and_unknown(void **state) {
  (void)state;
  char why[256];
  assert_int_equal(ncc_target_available("ref", why, sizeof why), NCC_OK);
  assert_int_equal(ncc_target_can_compile("ref", why, sizeof why), NCC_ERR_UNSUPPORTED);
  assert_non_null(strstr(why, "ref"));
  assert_int_equal(ncc_target_can_compile("tpu", why, sizeof why), NCC_ERR_USAGE);
  assert_non_null(strstr(why, "tpu"));
  assert_int_equal(ncc_target_can_compile("tpu", NULL, 0), NCC_ERR_USAGE);
}

static void test_cross_targets(void **state) {
  (void)state;
  const char *cross[] = {"x86_64", "aarch64"};
  for (int i = 0; i < 2; i++) {
    char why[256];
    /* never run in process: exit 3, with the reason */
    assert_int_equal(ncc_target_available(cross[i], why, sizeof why), NCC_ERR_UNSUPPORTED);
    assert_non_null(strstr(why, cross[i]));
    assert_null(strstr(why, "not implemented"));
#ifdef NCC_HAVE_LLVM
    assert_non_null(strstr(why, "cross target"));
    assert_int_equal(ncc_target_can_compile(cross[i], why, sizeof why), NCC_OK);
    assert_string_equal(why, "");
#else
    assert_int_equal(ncc_target_can_compile(cross[i], why, sizeof why), NCC_ERR_UNSUPPORTED);
    assert_non_null(strstr(why, "LLVM"));
#endif
  }
}

static void test_cpu_and_gpu(void **state) {
  (void)state;
  char why[256];
#ifdef NCC_HAVE_LLVM
  /* where the JIT runs, the same host can be emitted for */
  if (ncc_target_available("cpu", NULL, 0) == NCC_OK)
    assert_int_equal(ncc_target_can_compile(NULL, why, sizeof why), NCC_OK);
#else
  assert_int_equal(ncc_target_can_compile("cpu", why, sizeof why), NCC_ERR_UNSUPPORTED);
#endif
#ifdef NCC_HAVE_OPENCL
  assert_int_equal(ncc_target_can_compile("opencl", why, sizeof why), NCC_OK);
#else
  assert_int_equal(ncc_target_can_compile("opencl", why, sizeof why), NCC_ERR_UNSUPPORTED);
  assert_non_null(strstr(why, "not built"));
#endif
#ifdef NCC_HAVE_CUDA
  assert_int_equal(ncc_target_can_compile("cuda", why, sizeof why), NCC_OK);
#else
  assert_int_equal(ncc_target_can_compile("cuda", why, sizeof why), NCC_ERR_UNSUPPORTED);
  assert_non_null(strstr(why, "not built"));
#endif
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ref_and_unknown),
      cmocka_unit_test(test_cross_targets),
      cmocka_unit_test(test_cpu_and_gpu),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
