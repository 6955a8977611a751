/* tests/unit/test_escape.c — the escaping layers, by their properties:
 * codegen/escape.h (model bytes into generated C, CUDA C, OpenCL C) and
 * ncc_escape_text (ir/error.c: messages and printed names).
 *
 * Inputs: a fixed list of hostile strings plus seeded random byte strings.
 * Properties: comment text never holds a comment delimiter, a backslash, a
 * trigraph or a byte outside printable ASCII; a C string body decodes (by
 * the C rules, implemented here) back to the input; identifier tails are
 * [A-Za-z0-9] with no leading digit and decode back to the input, so the
 * mangling is injective, shown also on names that collide under the old
 * "anything else becomes _" rule; truncation never splits an escape; text
 * for a terminal holds no control byte and no invalid UTF-8, keeps valid
 * UTF-8, and escaping it again changes nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "codegen/escape.h"
#include "ir/ir.h"

static const char *const nasty[] = {
    "", "*/", "/*", "//", "\\", "x\\", "?\?/", "?\?=", "?", "\"", "'", "\n", "\r\n",
    "\x1b[31m", "\x07", "\x7f", "\xff\xfe", "\xc3\x28", "\xc2\x9b", "*", "/", "**//",
    "*/ __attribute__((constructor)) static void pwn(void) { } /*", "a-b", "a_b",
    "a.b", "a b", "aZ2Db", "aZb", "Z", "ZZ", "1", "Z31", "_", "__", "_X", "__X",
    "0abc", "abc0", "%", "%25", "h\xc3\xa9llo", "\xe2\x80\xa8",
};
#define N_NASTY (sizeof nasty / sizeof nasty[0])
#define N_RANDOM 400

static char randoms[N_RANDOM][64];

static void make_randoms(void) {
  static const char alpha[] = "*/\\?\"'\n\r\x1b\x07\x7f\x80\xc2\xc3\xff%Z_-.09azAZ ";
  uint32_t x = 12345;
  for (int i = 0; i < N_RANDOM; i++) {
    x = x * 1103515245u + 12345u;
    int n = (int)(x >> 16) % 40;
    for (int j = 0; j < n; j++) {
      x = x * 1103515245u + 12345u;
      randoms[i][j] = alpha[(x >> 16) % (sizeof alpha - 1)];
    }
    randoms[i][n] = 0;
  }
}

/* Every input: the list, then the random strings. */
static const char *input(int i) {
  return i < (int)N_NASTY ? nasty[i] : randoms[i - (int)N_NASTY];
}
#define N_INPUTS ((int)N_NASTY + N_RANDOM)

static char *esc(ncc_esc_kind kind, const char *s) {
  char *e = ncc_escape_dup(kind, s);
  assert_non_null(e);
  assert_int_equal(strlen(e), ncc_escape(kind, s, NULL, 0));
  return e;
}

static int hexval(char c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static void test_comment(void **state) {
  (void)state;
  for (int i = 0; i < N_INPUTS; i++) {
    char *e = esc(NCC_ESC_COMMENT, input(i));
    for (const char *p = e; *p; p++) assert_true(*p >= 0x20 && *p < 0x7f);
    assert_null(strstr(e, "*/"));
    assert_null(strstr(e, "/*"));
    assert_null(strchr(e, '\\'));
    assert_null(strstr(e, "??"));
    /* whatever stands around it: no '/' first, no '*' last */
    size_t n = strlen(e);
    assert_false(n && e[0] == '/');
    assert_false(n && e[n - 1] == '*');
    ncc_free(e, 0);
  }
}

/* The C rules for the escapes NCC_ESC_CSTR writes. */
static void decode_cstr(const char *e, char *out) {
  size_t n = 0;
  for (const char *p = e; *p; p++) {
    assert_true(*p >= 0x20 && *p < 0x7f);
    assert_true(*p != '"');
    if (*p != '\\') {
      out[n++] = *p;
      continue;
    }
    p++;
    if (*p == '"' || *p == '\\' || *p == '?') {
      out[n++] = *p;
    } else {
      assert_true(p[0] >= '0' && p[0] <= '3' && p[1] >= '0' && p[1] <= '7' &&
                  p[2] >= '0' && p[2] <= '7');
      out[n++] = (char)((p[0] - '0') * 64 + (p[1] - '0') * 8 + (p[2] - '0'));
      p += 2;
    }
  }
  out[n] = 0;
}

static void test_cstr(void **state) {
  (void)state;
  char back[512];
  for (int i = 0; i < N_INPUTS; i++) {
    char *e = esc(NCC_ESC_CSTR, input(i));
    assert_null(strstr(e, "??")); /* no trigraph */
    decode_cstr(e, back);
    assert_string_equal(back, input(i));
    ncc_free(e, 0);
  }
}

static void decode_ident(const char *e, char *out) {
  size_t n = 0;
  for (const char *p = e; *p; p++) {
    if (*p == 'Z') {
      int hi = hexval(p[1]), lo = hi >= 0 ? hexval(p[2]) : -1;
      assert_true(hi >= 0 && lo >= 0);
      out[n++] = (char)(hi * 16 + lo);
      p += 2;
    } else {
      out[n++] = *p;
    }
  }
  out[n] = 0;
}

static void test_ident(void **state) {
  (void)state;
  char back[512], full[600];
  for (int i = 0; i < N_INPUTS; i++) {
    char *e = esc(NCC_ESC_IDENT, input(i));
    for (const char *p = e; *p; p++)
      assert_true((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                  (*p >= '0' && *p <= '9'));
    assert_false(e[0] >= '0' && e[0] <= '9');
    decode_ident(e, back); /* decodable: the mangling is injective */
    assert_string_equal(back, input(i));
    snprintf(full, sizeof full, "net_k3_%s_fused", e);
    assert_true(ncc_escape_is_ident(full));
    ncc_free(e, 0);
  }
  /* names the old rule made equal stay apart */
  for (size_t i = 0; i < N_NASTY; i++)
    for (size_t j = i + 1; j < N_NASTY; j++) {
      char *a = esc(NCC_ESC_IDENT, nasty[i]), *b = esc(NCC_ESC_IDENT, nasty[j]);
      assert_string_not_equal(a, b);
      ncc_free(a, 0);
      ncc_free(b, 0);
    }
  assert_false(ncc_escape_is_ident("a__b"));
  assert_false(ncc_escape_is_ident("_a"));
  assert_false(ncc_escape_is_ident("1a"));
  assert_false(ncc_escape_is_ident("a-b"));
  assert_false(ncc_escape_is_ident(""));
}

static void test_kernel_name_and_prefix(void **state) {
  (void)state;
  char buf[32], p[64];
  ncc_escape_kernel_name(buf, sizeof buf, "net_k3_", "Relu", "_fused");
  assert_string_equal(buf, "net_k3_Relu_fused");
  ncc_escape_kernel_name(buf, sizeof buf, "k0_", "a*/b", "");
  assert_string_equal(buf, "k0_aZ2AZ2Fb");
  /* too long: cut between escapes, still an identifier */
  ncc_escape_kernel_name(buf, 10, "k0_", "a*/b", "_fused");
  assert_string_equal(buf, "k0_aZ2A");
  assert_true(ncc_escape_is_ident(buf));
  const char *cases[][2] = {{"net", "net"}, {"a-b", "a_b"}, {"a__b", "a_b"},
                            {"_x_", "x"}, {"2net", "m2net"}, {"", "m"},
                            {"\x1b[1m", "m1m"}, {"*/", "m"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ncc_escape_api_prefix(cases[i][0], strlen(cases[i][0]), p, sizeof p);
    assert_string_equal(p, cases[i][1]);
    assert_true(ncc_escape_is_ident(p));
  }
}

/* A truncated escape is a prefix of the full one ending between units. */
static void test_truncation(void **state) {
  (void)state;
  const ncc_esc_kind kinds[] = {NCC_ESC_IDENT, NCC_ESC_CSTR, NCC_ESC_COMMENT};
  char buf[64];
  for (size_t k = 0; k < 3; k++)
    for (int i = 0; i < N_INPUTS; i += 7) {
      char *full = esc(kinds[k], input(i));
      for (size_t cap = 1; cap < 12; cap++) {
        assert_int_equal(ncc_escape(kinds[k], input(i), buf, cap), strlen(full));
        size_t n = strlen(buf);
        assert_true(n < cap);
        assert_memory_equal(buf, full, n);
        /* the rest, escaped again from where the cut fell, is well formed:
         * the cut is never inside an escape */
        if (kinds[k] == NCC_ESC_CSTR) {
          char back[512];
          decode_cstr(buf, back); /* asserts on a partial escape */
        }
        if (kinds[k] == NCC_ESC_IDENT) {
          char back[512];
          decode_ident(buf, back);
        }
      }
      ncc_free(full, 0);
    }
}

static void test_text(void **state) {
  (void)state;
  char a[2048], b[2048];
  ncc_escape_text("a\x1b[31mb\x07\n\x7f", a, sizeof a);
  assert_string_equal(a, "a\\x1b[31mb\\x07\\x0a\\x7f");
  ncc_escape_text("h\xc3\xa9llo \xe2\x82\xac", a, sizeof a); /* valid UTF-8 kept */
  assert_string_equal(a, "h\xc3\xa9llo \xe2\x82\xac");
  ncc_escape_text("\xc2\x9b" "1m", a, sizeof a); /* C1 CSI */
  assert_string_equal(a, "\\xc2\\x9b1m");
  ncc_escape_text("\xff\xc0\x80\xed\xa0\x80\xf4\x90\x80\x80\xe2\x82", a, sizeof a);
  assert_null(strchr(a, (char)0xff));
  for (const unsigned char *p = (const unsigned char *)a; *p; p++) assert_true(*p < 0x80);
  for (int i = 0; i < N_INPUTS; i++) {
    size_t n = ncc_escape_text(input(i), a, sizeof a);
    assert_int_equal(n, strlen(a));
    for (const unsigned char *p = (const unsigned char *)a; *p;) {
      int u = ncc_utf8_len(p);
      assert_true(u > 0); /* valid UTF-8 throughout */
      assert_false(u == 1 && (*p < 0x20 || *p == 0x7f));
      assert_false(u == 2 && p[0] == 0xc2 && p[1] < 0xa0);
      p += u;
    }
    ncc_escape_text(a, b, sizeof b);
    assert_string_equal(a, b); /* idempotent */
    /* cut between units: never half of an escape or a character */
    for (size_t cap = 1; cap < 10; cap++) {
      ncc_escape_text(input(i), b, cap);
      assert_memory_equal(b, a, strlen(b));
      size_t m = strlen(b);
      assert_true((a[m] & 0xc0) != 0x80);
      if (!strchr(input(i), '\\')) /* then every backslash starts an escape */
        for (size_t k = m >= 3 ? m - 3 : 0; k < m; k++) assert_false(b[k] == '\\');
    }
  }
}

static void test_error_message(void **state) {
  (void)state;
  ncc_error(NCC_ERR_INPUT, "value '%s'", "v\x1b]0;t\x07\n\xff");
  assert_string_equal(ncc_error_message(), "value 'v\\x1b]0;t\\x07\\x0a\\xff'");
  ncc_error_prefix("%s", "m\x1b.onnx");
  assert_string_equal(ncc_error_message(), "m\\x1b.onnx: value 'v\\x1b]0;t\\x07\\x0a\\xff'");
}

int main(void) {
  make_randoms();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_comment),       cmocka_unit_test(test_cstr),
      cmocka_unit_test(test_ident),         cmocka_unit_test(test_kernel_name_and_prefix),
      cmocka_unit_test(test_truncation),    cmocka_unit_test(test_text),
      cmocka_unit_test(test_error_message),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
