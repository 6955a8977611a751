/* tests/unit/test_target_info.c — what the library says about a target:
 * ncc_target_available (runs here) and ncc_target_can_compile (emits code
 * here, even when it cannot run), the two facts `ncc targets` prints. The
 * LLVM cross targets compile wherever LLVM is built in and never run in
 * process; ref runs and emits nothing; a GPU target emits its source
 * without a device; an unknown name is a usage error. What the emitted
 * code is, is checked outside ncc by tests/cli/test_targets.py.
 */
#include <setjmp.h>
#include <stdbool.h>
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

/* The enumeration agrees with the per-name questions, target by target. */
static void test_enumeration(void **state) {
  (void)state;
  int n = ncc_target_count();
  assert_true(n >= 6);
  ncc_target_desc d;
  assert_int_equal(ncc_target_get(-1, &d), NCC_ERR_USAGE);
  assert_int_equal(ncc_target_get(n, &d), NCC_ERR_USAGE);
  bool seen_ref = false, seen_cross = false;
  for (int i = 0; i < n; i++) {
    assert_int_equal(ncc_target_get(i, &d), NCC_OK);
    for (int j = 0; j < i; j++) {
      ncc_target_desc e;
      assert_int_equal(ncc_target_get(j, &e), NCC_OK);
      assert_string_not_equal(d.name, e.name);
    }
    char why[256];
    ncc_status avail = ncc_target_available(d.name, why, sizeof why);
    /* Runs here implies an executor; no executor means it cannot run. */
    if (avail == NCC_OK) assert_true(d.runs);
    if (!d.runs) assert_int_not_equal(avail, NCC_OK);
    assert_int_equal(d.compiles,
                     ncc_target_can_compile(d.name, why, sizeof why) == NCC_OK);
    if (strcmp(d.name, "ref") == 0) {
      seen_ref = true;
      assert_true(d.runs);
      assert_false(d.compiles);
    }
    if (strcmp(d.name, "aarch64") == 0) {
      seen_cross = true;
      assert_false(d.runs); /* a cross target never runs in process */
      assert_int_equal(d.vector_width, 4);
    }
  }
  assert_true(seen_ref && seen_cross);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ref_and_unknown),
      cmocka_unit_test(test_cross_targets),
      cmocka_unit_test(test_cpu_and_gpu),
      cmocka_unit_test(test_enumeration),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
