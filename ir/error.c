/* ir/error.c — the two kinds of errors: NCC_ASSERT for ncc's own bugs
 * (abort with a location), and a per-thread message plus ncc_status for
 * anything a user's input can cause. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stdbool.h>

#include "ir.h"

#define NCC_ERRBUF 1024
static _Thread_local char errbuf[NCC_ERRBUF];

const char *ncc_error_message(void) { return errbuf; }

_Noreturn void ncc_assert_fail(const char *cond, const char *file, int line) {
  fprintf(stderr, "ncc: internal error: %s:%d: assertion '%s' failed\n", file,
          line, cond);
  abort();
}

/* ---- text for a terminal ---- */

int ncc_utf8_len(const unsigned char *p) {
  unsigned char c = p[0];
  if (c < 0x80) return 1;
  int n;
  unsigned char lo = 0x80, hi = 0xbf; /* the second byte's range */
  if (c >= 0xc2 && c <= 0xdf) n = 2;
  else if (c >= 0xe0 && c <= 0xef) n = 3;
  else if (c >= 0xf0 && c <= 0xf4) n = 4;
  else return 0;
  if (c == 0xe0) lo = 0xa0;      /* overlong */
  else if (c == 0xed) hi = 0x9f; /* surrogates */
  else if (c == 0xf0) lo = 0x90; /* overlong */
  else if (c == 0xf4) hi = 0x8f; /* beyond U+10FFFF */
  if (p[1] < lo || p[1] > hi) return 0;
  for (int i = 2; i < n; i++)
    if (p[i] < 0x80 || p[i] > 0xbf) return 0;
  return n;
}

/* A unit (a character or an escape) is written whole or not at all. */
static void text_unit(char *buf, size_t cap, size_t *len, size_t *written,
                      const char *p, size_t n) {
  if (buf && *written == *len && *len + n < cap) {
    memcpy(buf + *len, p, n);
    *written = *len + n;
  }
  *len += n;
}

size_t ncc_escape_text(const char *s, char *buf, size_t cap) {
  static const char hex[] = "0123456789abcdef";
  size_t len = 0, written = 0;
  if (!cap) buf = NULL;
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
    int n = ncc_utf8_len(p);
    /* C0 controls, DEL and C1 controls (U+0080..U+009F: 8-bit CSI and
     * friends) are escaped like bytes that are not UTF-8 */
    bool control = n == 1 ? (*p < 0x20 || *p == 0x7f) : n == 2 && *p == 0xc2 && p[1] < 0xa0;
    if (n > 0 && !control) {
      text_unit(buf, cap, &len, &written, (const char *)p, (size_t)n);
      p += n;
      continue;
    }
    for (int i = 0; i < (n ? n : 1); i++, p++) {
      char e[4] = {'\\', 'x', hex[*p >> 4], hex[*p & 15]};
      text_unit(buf, cap, &len, &written, e, 4);
    }
  }
  if (buf) buf[written] = 0;
  return len;
}

/* ---- the thread's message ---- */

ncc_status ncc_verror(ncc_status st, const char *fmt, va_list ap) {
  char raw[NCC_ERRBUF];
  vsnprintf(raw, sizeof raw, fmt, ap);
  /* One line of visible text whatever the input's names hold: control
   * bytes (newlines, terminal escapes) and bytes that are not UTF-8 show
   * as \xNN. */
  ncc_escape_text(raw, errbuf, sizeof errbuf);
  return st;
}

ncc_status ncc_error(ncc_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  ncc_verror(st, fmt, ap);
  va_end(ap);
  return st;
}

void ncc_error_prefix(const char *fmt, ...) {
  char pre[NCC_ERRBUF], raw[NCC_ERRBUF];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(pre, sizeof pre, fmt, ap);
  va_end(ap);
  /* the current message is escaped already, and escaping is idempotent:
   * escape the whole line, so the prefix (model names too) is one line */
  snprintf(raw, sizeof raw, "%s: %s", pre, errbuf);
  ncc_escape_text(raw, errbuf, sizeof errbuf);
}
