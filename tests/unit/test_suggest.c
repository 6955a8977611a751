/* tests/unit/test_suggest.c — "did you mean" (ir/suggest.c): the edit
 * distance (insertions, deletions, substitutions and adjacent swaps, each
 * 1) and the rule for suggesting: the closest name, only within
 * max(2, len/3), never the word itself. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ncc.h"

static void test_distance(void **state) {
  (void)state;
  assert_int_equal(ncc_edit_distance("", ""), 0);
  assert_int_equal(ncc_edit_distance("fusion", "fusion"), 0);
  assert_int_equal(ncc_edit_distance("", "abc"), 3);
  assert_int_equal(ncc_edit_distance("abc", ""), 3);
  assert_int_equal(ncc_edit_distance("fusoin", "fusion"), 1); /* one swap */
  assert_int_equal(ncc_edit_distance("cpux", "cpu"), 1);      /* deletion */
  assert_int_equal(ncc_edit_distance("cp", "cpu"), 1);        /* insertion */
  assert_int_equal(ncc_edit_distance("gpu", "cpu"), 1);       /* substitution */
  assert_int_equal(ncc_edit_distance("kitten", "sitting"), 3);
  assert_int_equal(ncc_edit_distance("ca", "abc"), 3); /* OSA: no edit of a swapped pair */
  assert_int_equal(ncc_edit_distance("ab", "ba"), 1);
  char longer[80];
  memset(longer, 'a', sizeof longer - 1);
  longer[sizeof longer - 1] = '\0';
  assert_true(ncc_edit_distance(longer, "a") == (size_t)-1);
}

static void test_suggest(void **state) {
  (void)state;
  static const char *const passes[] = {"const-fold", "simplify", "bn-fold", "cse",
                                       "dce", "layout", "fusion", "memplan"};
  int n = (int)(sizeof passes / sizeof passes[0]);
  assert_string_equal(ncc_suggest("fusoin", passes, n), "fusion");
  assert_string_equal(ncc_suggest("memplna", passes, n), "memplan");
  assert_string_equal(ncc_suggest("bnfold", passes, n), "bn-fold");
  assert_string_equal(ncc_suggest("simplfy", passes, n), "simplify");
  /* the closest wins; ties keep the first listed ("cse" before "dce") */
  assert_string_equal(ncc_suggest("xse", passes, n), "cse");
  assert_string_equal(ncc_suggest("dcx", passes, n), "dce");
  assert_string_equal(ncc_suggest("dse", passes, n), "cse"); /* a tie */
  /* the word itself, or nothing close: no suggestion */
  assert_null(ncc_suggest("fusion", passes, n));
  assert_null(ncc_suggest("zzzzzzzz", passes, n));
  assert_null(ncc_suggest("fu", passes, n)); /* 4 away from fusion */
  /* max(2, len/3): 2 edits fine for short names, 4 for a 12-letter one */
  static const char *const t[] = {"ref", "cpu", "x86_64", "aarch64", "opencl", "cuda"};
  assert_string_equal(ncc_suggest("cpux", t, 6), "cpu");
  assert_string_equal(ncc_suggest("aarch46", t, 6), "aarch64");
  assert_string_equal(ncc_suggest("openlc", t, 6), "opencl");
  assert_null(ncc_suggest("tpuxyz", t, 6));
  static const char *const l[] = {"verify-each-pass"};
  assert_string_equal(ncc_suggest("verfy-eahc-pas", l, 1), "verify-each-pass"); /* 3 <= 16/3 */
  assert_string_equal(ncc_suggest("vrfy-eahc-ps", l, 1), "verify-each-pass"); /* 5 */
  assert_null(ncc_suggest("vrfy-ahc-ps", l, 1));                                /* 6 > 5 */
  /* bad arguments */
  assert_null(ncc_suggest(NULL, passes, n));
  assert_null(ncc_suggest("x", NULL, 0));
  static const char *const with_null[] = {NULL, "cpu"};
  assert_string_equal(ncc_suggest("cpv", with_null, 2), "cpu");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_distance),
      cmocka_unit_test(test_suggest),
  };
  return cmocka_run_group_tests_name("suggest", tests, NULL, NULL);
}
