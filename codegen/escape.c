/* codegen/escape.c — model bytes into generated source (see escape.h: the
 * one place that decides how a name may appear in C, CUDA C or OpenCL C). */
#include "escape.h"

#include <string.h>

#include "../ir/ir.h"

typedef struct sink {
  char *buf;
  size_t cap, len, written; /* len: the full length; written: in buf */
  FILE *f;
  bool full; /* a unit did not fit: write no more, so nothing is skipped */
} sink;

/* One escape unit, written whole or not at all. */
static void unit(sink *k, const char *p, size_t n) {
  if (k->f) fwrite(p, 1, n, k->f);
  if (k->buf && !k->full) {
    if (k->len + n < k->cap) {
      memcpy(k->buf + k->len, p, n);
      k->written = k->len + n;
    } else {
      k->full = true;
    }
  }
  k->len += n;
}

static void hex_unit(sink *k, char lead, unsigned char c) {
  static const char hex[] = "0123456789ABCDEF";
  char e[3] = {lead, hex[c >> 4], hex[c & 15]};
  unit(k, e, 3);
}

static bool printable(unsigned char c) { return c >= 0x20 && c < 0x7f; }
static bool alnum(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static void ident(sink *k, const unsigned char *s) {
  if (!*s) unit(k, "Z00", 3); /* no name has a NUL: still injective */
  for (const unsigned char *p = s; *p; p++) {
    bool digit_first = p == s && *p >= '0' && *p <= '9';
    if (alnum(*p) && *p != 'Z' && !digit_first) unit(k, (const char *)p, 1);
    else hex_unit(k, 'Z', *p);
  }
}

static void cstr(sink *k, const unsigned char *s) {
  for (const unsigned char *p = s; *p; p++) {
    if (*p == '"' || *p == '\\' || *p == '?') {
      char e[2] = {'\\', (char)*p};
      unit(k, e, 2);
    } else if (printable(*p)) {
      unit(k, (const char *)p, 1);
    } else {
      /* always three digits: a following digit cannot extend the escape */
      char e[4] = {'\\', (char)('0' + (*p >> 6)), (char)('0' + ((*p >> 3) & 7)),
                   (char)('0' + (*p & 7))};
      unit(k, e, 4);
    }
  }
}

static void comment(sink *k, const unsigned char *s) {
  for (const unsigned char *p = s; *p; p++) {
    unsigned char c = *p, next = p[1];
    bool bad = !printable(c) || c == '%' || c == '\\' ||
               (c == '*' && (next == '/' || next == 0)) ||
               (c == '/' && (next == '*' || p == s)) || (c == '?' && next == '?');
    if (bad) hex_unit(k, '%', c);
    else unit(k, (const char *)p, 1);
  }
}

static size_t run(ncc_esc_kind kind, const char *s, sink *k) {
  const unsigned char *u = (const unsigned char *)(s ? s : "");
  switch (kind) {
  case NCC_ESC_IDENT: ident(k, u); break;
  case NCC_ESC_CSTR: cstr(k, u); break;
  case NCC_ESC_COMMENT: comment(k, u); break;
  }
  return k->len;
}

size_t ncc_escape(ncc_esc_kind kind, const char *s, char *buf, size_t cap) {
  sink k = {.buf = cap ? buf : NULL, .cap = cap};
  size_t n = run(kind, s, &k);
  if (k.buf) k.buf[k.written] = 0;
  return n;
}

char *ncc_escape_dup(ncc_esc_kind kind, const char *s) {
  size_t n = ncc_escape(kind, s, NULL, 0);
  char *p = ncc_malloc(n + 1);
  if (p) ncc_escape(kind, s, p, n + 1);
  return p;
}

void ncc_escape_fput(FILE *f, ncc_esc_kind kind, const char *s) {
  sink k = {.f = f};
  run(kind, s, &k);
}

void ncc_escape_api_prefix(const char *base, size_t len, char *buf, size_t cap) {
  size_t n = 0;
  bool gap = false;
  for (size_t i = 0; i < len && base[i] && n + 2 < cap; i++) {
    unsigned char c = (unsigned char)base[i];
    if (!alnum(c)) {
      gap = n > 0;
      continue;
    }
    if (gap) buf[n++] = '_';
    gap = false;
    if (n == 0 && c >= '0' && c <= '9') buf[n++] = 'm';
    buf[n++] = (char)c;
  }
  if (n == 0) buf[n++] = 'm';
  buf[n] = 0;
}

void ncc_escape_kernel_name(char *buf, size_t cap, const char *head, const char *op,
                            const char *tail) {
  if (!cap) return;
  size_t n = (size_t)snprintf(buf, cap, "%s", head);
  if (n >= cap) return;
  n += ncc_escape(NCC_ESC_IDENT, op, buf + n, cap - n);
  if (n < cap) snprintf(buf + n, cap - n, "%s", tail);
}

bool ncc_escape_is_ident(const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  if (!s || !((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))) return false;
  for (; *p; p++)
    if (!(alnum(*p) || (*p == '_' && p[1] != '_'))) return false;
  return true;
}
