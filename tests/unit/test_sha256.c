/* tests/unit/test_sha256.c — ir/sha256.c against the FIPS 180-4 / NIST
 * vectors, fed whole and in uneven pieces (the block buffering). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ir/sha256.h"

static void hex_of(const void *data, size_t n, size_t piece, char hex[65]) {
  ncc_sha256 s;
  ncc_sha256_init(&s);
  const unsigned char *p = data;
  while (n > 0) {
    size_t k = piece && piece < n ? piece : n;
    ncc_sha256_update(&s, p, k);
    p += k;
    n -= k;
  }
  uint8_t d[32];
  ncc_sha256_final(&s, d);
  ncc_sha256_hex(d, hex);
}

static void vectors(void **state) {
  (void)state;
  static const struct {
    const char *in, *out;
  } v[] = {
      {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
      {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopq"
       "klmnopqrlmnopqrsmnopqrstnopqrstu",
       "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
  };
  char hex[65];
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
    for (size_t piece = 0; piece < 8; piece += 3) {
      hex_of(v[i].in, strlen(v[i].in), piece, hex);
      assert_string_equal(hex, v[i].out);
    }
}

/* One million 'a': many blocks, and the length's high bits. */
static void million_a(void **state) {
  (void)state;
  size_t n = 1000000;
  char *a = malloc(n);
  assert_non_null(a);
  memset(a, 'a', n);
  char hex[65];
  hex_of(a, n, 0, hex);
  assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  hex_of(a, n, 1000, hex);
  assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  uint8_t d[32];
  ncc_sha256_sum(a, n, d);
  ncc_sha256_hex(d, hex);
  assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  free(a);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(vectors), cmocka_unit_test(million_a)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
