/* ir/text_parse.c — the parser of ncc's text IR (grammar in docs/IR.md).
 *
 * A hand-written lexer and a flat recursive-descent parser (the grammar has
 * no nesting beyond a fixed depth, so no input can grow the C stack). The
 * graph is built with the ir/ir.h functions as statements are read, so every
 * use is resolved against the values defined above it: a use before its
 * definition, and hence a cycle, cannot be written. Afterwards the parser
 * runs shape inference (which merges the declared output types with the
 * inferred ones), checks that each declared type survived unchanged, and
 * runs the verifier.
 *
 * The input is untrusted (fuzzed): every scan is bounded by the length, every
 * count is checked before it is used, allocations are checked, and each
 * error is one line "FILE:LINE:COL: what is wrong" with NCC_ERR_INPUT.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "budget.h"
#include "f16.h"
#include "ir.h"
#include "shape.h"

#define MAX_TEXT ((size_t)INT_MAX - 16) /* keeps line/col and counts in int */
#define MAX_SYMS 4096                   /* distinct symbolic dims per graph */
#define MAX_ATTRS 256                   /* attributes per node */
#define MAX_OUTS 65536                  /* outputs per node */
#define MAX_LIST (1 << 28)              /* elements of a list attribute */
#define NUM_MAX 256                     /* longest numeric literal */
#define SPLAT_MAX ((int64_t)256 << 20)  /* bytes a splat may expand to */
#define MARK_UNSTORED (-2)              /* content_len before inference */
#define MAX_DEPTH 16                    /* subgraphs nested in subgraphs */

typedef enum tok_kind {
  T_EOF,
  T_VALUE,  /* %name or %"name" */
  T_AT,     /* @name or @"name" */
  T_IDENT,  /* [A-Za-z_][A-Za-z0-9_.]* */
  T_NUMBER, /* -?[0-9][A-Za-z0-9_.]* with e+/e- exponents */
  T_STRING, /* "..." */
  T_LPAREN, T_RPAREN, T_LBRACK, T_RBRACK, T_LBRACE, T_RBRACE,
  T_LT, T_GT, T_COMMA, T_COLON, T_EQ, T_HASH, T_MINUS,
} tok_kind;

typedef struct tok {
  tok_kind k;
  size_t pos, len;   /* the whole token */
  size_t npos, nlen; /* name or string body, without sigil and quotes */
  bool quoted;       /* body holds escapes */
  int line, col;
} tok;

typedef struct decl { /* a node output's declared type */
  bool has;
  ncc_dtype dt;
  ncc_shape shape;
  int line, col;
} decl;

typedef struct result { /* one left-hand side entry of a statement */
  tok name;
  bool skip; /* '_' */
  bool typed;
  ncc_dtype dt;
  ncc_shape shape;
  ncc_layout layout;
} result;

typedef struct srcloc {
  int line, col;
} srcloc;

typedef struct parser {
  const char *src, *file;
  size_t len, pos;
  int line, col;
  tok t;
  ncc_graph *g;
  ncc_status st;
  char *buf; /* the last decoded name or string, NUL-terminated */
  size_t buf_cap;
  decl *decls; /* by value id */
  int cap_decls;
  srcloc *nlocs; /* by node id */
  int cap_nlocs;
  ncc_value **ins; /* operands of the node being read */
  int cap_ins;
  tok *in_toks; /* their tokens, for diagnostics */
  int cap_toks;
  result *res;
  int cap_res;
  int64_t const_bytes; /* constant data so far, against the memory budget */
  struct splat *splats; /* big splats, filled once the whole text parsed */
  int n_splats, cap_splats;
  int depth; /* subgraph nesting (0: the file's graph) */
} parser;

/* A big splat's storage is reserved (untouched pages) as it is read and
 * filled only after the whole graph parsed, so that a text whose splats
 * add up to more than the memory budget fails without touching memory. */
typedef struct splat {
  unsigned char *buf;
  size_t nbytes, es;
  unsigned char elem[8];
} splat;
#define SPLAT_DEFER ((size_t)1 << 20)

/* ------------------------------------------------------------------------ */
/* errors                                                                    */

__attribute__((format(printf, 4, 5))) static bool
fail_at(parser *p, int line, int col, const char *fmt, ...) {
  if (p->st) return false; /* the first error is the one reported */
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  p->st = ncc_error(NCC_ERR_INPUT, "%s:%d:%d: %s", p->file, line, col, msg);
  return false;
}

#define fail(p, ...) fail_at((p), (p)->t.line, (p)->t.col, __VA_ARGS__)

/* An allocation failed; ncc_malloc already set the message. */
static bool oom(parser *p) {
  if (!p->st) p->st = NCC_ERR_NOMEM;
  return false;
}

/* The token's source text for messages, shortened, non-ASCII escaped. */
static const char *tok_text(const parser *p, const tok *t, char *buf,
                            size_t cap) {
  size_t o = 0, i = 0;
  for (; i < t->len && o + 8 < cap; i++) {
    unsigned char c = (unsigned char)p->src[t->pos + i];
    if (c >= 0x20 && c < 0x7f) buf[o++] = (char)c;
    else o += (size_t)snprintf(buf + o, cap - o, "\\x%02x", c);
  }
  buf[o] = 0;
  if (i < t->len) snprintf(buf + o, cap - o, "...");
  return buf;
}

/* Make room for `need` elements in a parser-owned array. */
static bool grow(parser *p, void **arr, int *cap, int need, size_t elem) {
  if (need <= *cap) return true;
  int nc = *cap ? *cap : 16;
  while (nc < need) {
    if (nc > INT_MAX / 2) return fail(p, "too many items");
    nc *= 2;
  }
  void *na = ncc_realloc(*arr, (size_t)*cap * elem, (size_t)nc * elem);
  if (!na) return oom(p);
  memset((char *)na + (size_t)*cap * elem, 0, (size_t)(nc - *cap) * elem);
  *arr = na;
  *cap = nc;
  return true;
}

/* ------------------------------------------------------------------------ */
/* lexer                                                                     */

static bool is_alpha(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
static bool is_hex(unsigned char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
static int hex_val(unsigned char c) {
  return is_digit(c) ? c - '0' : (c | 0x20) - 'a' + 10;
}
static bool is_name_char(unsigned char c) {
  return is_alpha(c) || is_digit(c) || c == '.';
}

static unsigned char at(const parser *p, size_t i) {
  return i < p->len ? (unsigned char)p->src[i] : 0;
}

static void skip_space(parser *p) {
  while (p->pos < p->len) {
    unsigned char c = at(p, p->pos);
    if (c == '\n') {
      p->pos++, p->line++, p->col = 1;
    } else if (c == ' ' || c == '\t' || c == '\r') {
      p->pos++, p->col++;
    } else if (c == '/' && at(p, p->pos + 1) == '/') {
      while (p->pos < p->len && at(p, p->pos) != '\n') p->pos++, p->col++;
    } else {
      return;
    }
  }
}

/* Scan a quoted body starting at the '"' at p->pos + off; sets the body span
 * and returns the offset just past the closing quote (0 on error). Escapes
 * are checked here so that decoding cannot fail later. */
static size_t scan_quoted(parser *p, size_t off, tok *t) {
  size_t i = p->pos + off + 1;
  while (i < p->len) {
    unsigned char c = at(p, i);
    int col = p->col + (int)(i - p->pos);
    if (c == '"') break;
    if (c == '\\') {
      unsigned char e = at(p, i + 1);
      if (i + 1 < p->len && (e == '"' || e == '\\' || e == 'n' || e == 't')) {
        i += 2;
      } else if (i + 2 < p->len && is_hex(e) && is_hex(at(p, i + 2))) {
        i += 3;
      } else {
        fail_at(p, p->line, col, "invalid escape in a string");
        return 0;
      }
      continue;
    }
    if (c == '\n' || c == '\r') break;
    if (c < 0x20 || c == 0x7f) {
      fail_at(p, p->line, col,
              "invalid character in a string (write it as \\%02x)", c);
      return 0;
    }
    i++;
  }
  if (at(p, i) != '"' || i >= p->len) {
    fail_at(p, p->line, p->col + (int)off, "unterminated string");
    return 0;
  }
  t->npos = p->pos + off + 1;
  t->nlen = i - t->npos;
  t->quoted = true;
  return i + 1 - p->pos;
}

/* A name after a sigil: bare [A-Za-z0-9_.]+ or quoted. */
static size_t scan_name(parser *p, tok *t) {
  if (at(p, p->pos + 1) == '"') return scan_quoted(p, 1, t);
  size_t i = p->pos + 1;
  while (i < p->len && is_name_char(at(p, i))) i++;
  if (i == p->pos + 1) {
    fail_at(p, p->line, p->col + 1, "expected a name after '%c'",
            at(p, p->pos));
    return 0;
  }
  t->npos = p->pos + 1;
  t->nlen = i - t->npos;
  return i - p->pos;
}

static size_t scan_number(parser *p) {
  size_t s = p->pos, i = s + (at(p, s) == '-');
  bool hex = at(p, i) == '0' && (at(p, i + 1) | 0x20) == 'x';
  for (; i < p->len; i++) {
    unsigned char c = at(p, i);
    if (is_name_char(c)) continue;
    if ((c == '+' || c == '-') && !hex && (at(p, i - 1) | 0x20) == 'e')
      continue;
    break;
  }
  return i - s;
}

/* Read the next token into p->t (T_EOF after an error). */
static void next(parser *p) {
  skip_space(p);
  tok t = {.k = T_EOF, .pos = p->pos, .line = p->line, .col = p->col};
  size_t n = 0;
  if (p->pos >= p->len || p->st) {
    p->t = t;
    return;
  }
  unsigned char c = at(p, p->pos);
  static const char punct[] = "()[]{}<>,:=#";
  const char *pc = c ? strchr(punct, c) : NULL;
  if (pc) {
    t.k = (tok_kind)(T_LPAREN + (pc - punct));
    n = 1;
  } else if (c == '%' || c == '@') {
    t.k = c == '%' ? T_VALUE : T_AT;
    n = scan_name(p, &t);
  } else if (c == '"') {
    t.k = T_STRING;
    n = scan_quoted(p, 0, &t);
  } else if (is_alpha(c)) {
    t.k = T_IDENT;
    for (n = 1; p->pos + n < p->len && is_name_char(at(p, p->pos + n)); n++) {
    }
    t.npos = p->pos;
    t.nlen = n;
  } else if (is_digit(c) || (c == '-' && is_digit(at(p, p->pos + 1)))) {
    t.k = T_NUMBER;
    n = scan_number(p);
  } else if (c == '-') {
    t.k = T_MINUS;
    n = 1;
  } else if (c == '/') {
    fail_at(p, t.line, t.col, "expected '//' to start a comment");
  } else if (c >= 0x20 && c < 0x7f) {
    fail_at(p, t.line, t.col, "unexpected character '%c'", c);
  } else {
    fail_at(p, t.line, t.col, "unexpected character '\\x%02x'", c);
  }
  if (p->st) {
    t.k = T_EOF;
    n = 0;
  }
  t.len = n;
  p->pos += n;
  p->col += (int)n;
  p->t = t;
}

static bool is_kw(const parser *p, const char *kw) {
  size_t n = strlen(kw);
  return p->t.k == T_IDENT && p->t.len == n &&
         memcmp(p->src + p->t.pos, kw, n) == 0;
}

static bool accept(parser *p, tok_kind k) {
  if (p->t.k != k) return false;
  next(p);
  return true;
}

static bool expect(parser *p, tok_kind k, const char *what) {
  if (accept(p, k)) return true;
  return fail(p, "expected %s", what);
}

/* Decode a name or string body into p->buf (NUL-terminated). A NUL byte
 * cannot live in a C string: reported as an error naming `what`. */
static bool decode(parser *p, const tok *t, const char *what) {
  if (t->nlen + 1 > p->buf_cap) {
    size_t nc = t->nlen + 1 > 256 ? t->nlen + 1 : 256;
    char *nb = ncc_realloc(p->buf, p->buf_cap, nc);
    if (!nb) return oom(p);
    p->buf = nb;
    p->buf_cap = nc;
  }
  const char *s = p->src + t->npos;
  size_t o = 0;
  for (size_t i = 0; i < t->nlen; i++) {
    char c = s[i];
    if (t->quoted && c == '\\') {
      char e = s[++i];
      if (e == 'n') c = '\n';
      else if (e == 't') c = '\t';
      else if (e == '"' || e == '\\') c = e;
      else {
        c = (char)(hex_val((unsigned char)e) * 16 +
                   hex_val((unsigned char)s[i + 1]));
        i++;
      }
      if (!c)
        return fail_at(p, t->line, t->col, "%s contains a NUL byte", what);
    }
    p->buf[o++] = c;
  }
  p->buf[o] = 0;
  return true;
}

/* ------------------------------------------------------------------------ */
/* numbers                                                                   */

typedef enum { NUM_BAD, NUM_INT, NUM_FLOAT } numform;

static numform classify(const char *s, size_t n) {
  size_t i = s[0] == '-', d0 = i;
  while (i < n && is_digit((unsigned char)s[i])) i++;
  if (i == d0) return NUM_BAD;
  if (i == n) return NUM_INT;
  if (s[i] == '.')
    for (i++; i < n && is_digit((unsigned char)s[i]);) i++;
  if (i < n && (s[i] | 0x20) == 'e') {
    i++;
    if (i < n && (s[i] == '+' || s[i] == '-')) i++;
    size_t e0 = i;
    while (i < n && is_digit((unsigned char)s[i])) i++;
    if (i == e0) return NUM_BAD;
  }
  return i == n ? NUM_FLOAT : NUM_BAD;
}

static numform tok_form(const parser *p) {
  return p->t.k == T_NUMBER ? classify(p->src + p->t.pos, p->t.len) : NUM_BAD;
}

/* The current T_NUMBER as an int64 (decimal); errors on other forms. */
static bool parse_int(parser *p, int64_t *v) {
  if (tok_form(p) != NUM_INT) return fail(p, "expected an integer");
  const char *s = p->src + p->t.pos;
  bool neg = s[0] == '-';
  uint64_t m = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
  for (size_t i = neg; i < p->t.len; i++) {
    uint64_t d = (uint64_t)(s[i] - '0');
    if (m > (lim - d) / 10) return fail(p, "integer out of range");
    m = m * 10 + d;
  }
  *v = neg ? (m == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)m)
           : (int64_t)m;
  next(p);
  return true;
}

/* `nan(0xBITS)`: the exact bit pattern of a NaN of `bytes` width. */
static bool parse_nan_bits(parser *p, int bytes, bool bf16, uint64_t *bits) {
  next(p); /* '(' */
  const char *s = p->src + p->t.pos;
  size_t n = p->t.len;
  if (p->t.k != T_NUMBER || n < 3 || s[0] != '0' || (s[1] | 0x20) != 'x' ||
      n - 2 > (size_t)bytes * 2)
    return fail(p, "expected the bits of a NaN, e.g. nan(0x%s)",
                bf16 ? "7fc1" : bytes == 2 ? "7e01" : bytes == 4 ? "7fc00001"
                                                 : "7ff8000000000001");
  uint64_t b = 0;
  for (size_t i = 2; i < n; i++) {
    if (!is_hex((unsigned char)s[i])) return fail(p, "invalid hex digit");
    b = b << 4 | (uint64_t)hex_val((unsigned char)s[i]);
  }
  int mbits = bf16 ? 7 : bytes == 2 ? 10 : bytes == 4 ? 23 : 52;
  uint64_t expo = ((1ull << (bytes * 8 - 1 - mbits)) - 1) << mbits;
  if ((b & expo) != expo || !(b & ((1ull << mbits) - 1)))
    return fail(p, "nan(0x...) must hold the bits of a NaN");
  *bits = b;
  next(p);
  return expect(p, T_RPAREN, "')'");
}

/* A float of dtype dt (F32, F64, F16 or BF16), stored as its bits in `out`:
 * [-] (NUMBER | inf | nan | nan(0xBITS)). */
static bool parse_fp(parser *p, ncc_dtype dt, void *out) {
  int bytes = (int)ncc_dtype_size(dt);
  bool bf16 = dt == NCC_DT_BF16;
  bool neg = accept(p, T_MINUS);
  uint64_t sign = 1ull << (bytes * 8 - 1), bits = 0;
  if (is_kw(p, "inf") || is_kw(p, "nan")) {
    bool nan = is_kw(p, "nan");
    next(p);
    if (nan && p->t.k == T_LPAREN) {
      if (!parse_nan_bits(p, bytes, bf16, &bits)) return false;
    } else if (nan) {
      bits = bf16 ? 0x7fc0 : bytes == 2 ? 0x7e00 : bytes == 4 ? 0x7fc00000u : 0x7ff8000000000000ull;
    } else {
      bits = bf16 ? 0x7f80 : bytes == 2 ? 0x7c00 : bytes == 4 ? 0x7f800000u : 0x7ff0000000000000ull;
    }
    if (neg) bits ^= sign;
  } else {
    if (neg || tok_form(p) == NUM_BAD) return fail(p, "expected a number");
    char tmp[NUM_MAX + 1];
    if (p->t.len > NUM_MAX) return fail(p, "number too long");
    memcpy(tmp, p->src + p->t.pos, p->t.len);
    tmp[p->t.len] = 0;
    if (dt == NCC_DT_F64) {
      double d = strtod(tmp, NULL);
      memcpy(&bits, &d, 8);
    } else if (bf16) { /* one rounding from the decimal's double */
      bits = ncc_bf16_from_f64(strtod(tmp, NULL));
    } else {
      float f = strtof(tmp, NULL);
      uint32_t b32;
      memcpy(&b32, &f, 4);
      bits = dt == NCC_DT_F16 ? ncc_f16_from_f32(f) : b32;
    }
    next(p);
  }
  if (bytes == 2) {
    uint16_t h = (uint16_t)bits;
    memcpy(out, &h, 2);
  } else if (bytes == 4) {
    uint32_t w = (uint32_t)bits;
    memcpy(out, &w, 4);
  } else {
    memcpy(out, &bits, 8);
  }
  return true;
}

static bool starts_float(const parser *p) {
  return p->t.k == T_MINUS || is_kw(p, "inf") || is_kw(p, "nan") ||
         tok_form(p) == NUM_FLOAT;
}

/* ------------------------------------------------------------------------ */
/* types                                                                     */

static bool parse_dim(parser *p, int64_t *d) {
  if (p->t.k == T_NUMBER) {
    tok t = p->t;
    if (!parse_int(p, d)) return false;
    if (*d < 0)
      return fail_at(p, t.line, t.col, "a dim must be a size >= 0 or a symbol");
    return true;
  }
  if (p->t.k != T_IDENT && p->t.k != T_STRING)
    return fail(p, "expected a dim (a size or a symbol)");
  tok t = p->t;
  if (!decode(p, &t, "a symbol")) return false;
  int id = ncc_graph_sym(p->g, p->buf, strlen(p->buf));
  if (id < 0) return oom(p);
  if (p->g->n_syms > MAX_SYMS)
    return fail(p, "too many symbolic dims (at most %d)", MAX_SYMS);
  *d = ncc_dim_sym(id);
  next(p);
  return true;
}

/* `#nchw<k>c` */
static bool parse_layout(parser *p, ncc_layout *l) {
  char tb[160];
  const char *s = p->src + p->t.pos;
  size_t n = p->t.len;
  if (p->t.k == T_IDENT && n > 5 && memcmp(s, "nchw", 4) == 0 &&
      s[n - 1] == 'c' && n - 5 <= 7 && s[4] != '0') {
    int64_t b = 0;
    bool ok = true;
    for (size_t i = 4; i < n - 1; i++) {
      ok = ok && is_digit((unsigned char)s[i]);
      b = b * 10 + (s[i] - '0');
    }
    if (ok && b > 0) {
      l->kind = NCC_LAYOUT_NCHWC;
      l->block = (int)b;
      next(p);
      return true;
    }
  }
  return fail(p, "unknown layout '#%s'", tok_text(p, &p->t, tb, sizeof tb));
}

/* dtype '[' dims ']' ['#' layout] */
static bool parse_type(parser *p, ncc_dtype *dt, ncc_shape *s, ncc_layout *l) {
  char tb[160];
  if (p->t.k != T_IDENT) return fail(p, "expected a type such as f32[N,3]");
  *dt = ncc_dtype_from_name(p->src + p->t.pos, p->t.len);
  if (*dt == NCC_DT_UNDEF)
    return fail(p, "unknown dtype '%s'", tok_text(p, &p->t, tb, sizeof tb));
  next(p);
  if (!expect(p, T_LBRACK, "'['")) return false;
  memset(s, 0, sizeof *s);
  if (p->t.k != T_RBRACK) {
    for (;;) {
      if (s->rank == NCC_MAX_RANK)
        return fail(p, "rank exceeds the maximum of %d", NCC_MAX_RANK);
      if (!parse_dim(p, &s->d[s->rank])) return false;
      s->rank++;
      if (!accept(p, T_COMMA)) break;
    }
  }
  if (!expect(p, T_RBRACK, "']'")) return false;
  if (l) memset(l, 0, sizeof *l);
  if (p->t.k == T_HASH) {
    if (!l) return fail(p, "a tensor attribute has no layout");
    next(p);
    return parse_layout(p, l);
  }
  return true;
}

/* ------------------------------------------------------------------------ */
/* constant data                                                             */

/* One element of dtype dt into dst. */
static bool parse_elem(parser *p, ncc_dtype dt, unsigned char *dst) {
  if (dt == NCC_DT_F32 || dt == NCC_DT_F64 || dt == NCC_DT_F16 || dt == NCC_DT_BF16)
    return parse_fp(p, dt, dst);
  if (dt == NCC_DT_U64 && tok_form(p) == NUM_INT && p->src[p->t.pos] != '-') {
    /* the whole unsigned range, beyond int64's */
    const char *s = p->src + p->t.pos;
    uint64_t m = 0;
    for (size_t i = 0; i < p->t.len; i++) {
      uint64_t d = (uint64_t)(s[i] - '0');
      if (m > (UINT64_MAX - d) / 10) return fail(p, "integer out of range");
      m = m * 10 + d;
    }
    memcpy(dst, &m, 8);
    next(p);
    return true;
  }
  if (dt == NCC_DT_BOOL) {
    int64_t v = -1;
    if (is_kw(p, "true") || is_kw(p, "false")) {
      v = is_kw(p, "true");
      next(p);
    } else if (tok_form(p) == NUM_INT) {
      tok t = p->t;
      if (!parse_int(p, &v)) return false;
      if (v != 0 && v != 1) return fail_at(p, t.line, t.col, "a bool is true or false");
    } else {
      return fail(p, "expected true or false");
    }
    dst[0] = (unsigned char)v;
    return true;
  }
  tok t = p->t;
  int64_t v;
  if (!parse_int(p, &v)) return false;
  int64_t lo = INT64_MIN, hi = INT64_MAX;
  if (dt == NCC_DT_I8) lo = -128, hi = 127;
  if (dt == NCC_DT_U8) lo = 0, hi = 255;
  if (dt == NCC_DT_I32) lo = INT32_MIN, hi = INT32_MAX;
  if (dt == NCC_DT_I16) lo = INT16_MIN, hi = INT16_MAX;
  if (dt == NCC_DT_U16) lo = 0, hi = UINT16_MAX;
  if (dt == NCC_DT_U32) lo = 0, hi = UINT32_MAX;
  if (dt == NCC_DT_U64) lo = 0;
  if (v < lo || v > hi)
    return fail_at(p, t.line, t.col, "%lld is out of range for %s",
                   (long long)v, ncc_dtype_name(dt));
  if (dt == NCC_DT_I8 || dt == NCC_DT_U8) dst[0] = (unsigned char)v;
  else if (dt == NCC_DT_I32 || dt == NCC_DT_U32) {
    uint32_t w = (uint32_t)v;
    memcpy(dst, &w, 4);
  } else if (dt == NCC_DT_I16 || dt == NCC_DT_U16) {
    uint16_t w = (uint16_t)v;
    memcpy(dst, &w, 2);
  } else {
    memcpy(dst, &v, 8);
  }
  return true;
}

/* '[' elems ']' with exactly `numel` elements, into the graph's arena. */
static bool parse_list_data(parser *p, ncc_dtype dt, int64_t numel,
                            const char *type, void **out) {
  size_t es = ncc_dtype_size(dt), cap = 0;
  int64_t count = 0;
  unsigned char *buf = NULL;
  next(p); /* '[' */
  bool ok = true;
  while (ok && p->t.k != T_RBRACK) {
    if (count == numel) {
      ok = fail(p, "too many elements for %s", type);
      break;
    }
    if ((size_t)(count + 1) * es > cap) {
      size_t nc = cap ? cap * 2 : 64 * es;
      if (nc > (size_t)numel * es) nc = (size_t)numel * es;
      unsigned char *nb = ncc_realloc(buf, cap, nc);
      if (!nb) {
        ok = oom(p);
        break;
      }
      buf = nb;
      cap = nc;
    }
    ok = parse_elem(p, dt, buf + (size_t)count * es);
    count++;
    if (ok && !accept(p, T_COMMA)) break;
  }
  if (ok && p->t.k != T_RBRACK) ok = fail(p, "expected ',' or ']'");
  if (ok && count != numel)
    ok = fail(p, "%s needs %lld elements, got %lld", type, (long long)numel,
              (long long)count);
  if (ok) {
    next(p);
    *out = ncc_arena_memdup(&p->g->arena, buf, (size_t)numel * es);
    if (!*out) ok = oom(p);
  }
  ncc_free(buf, cap);
  return ok;
}

/* `hex"..."`: the little-endian bytes, two hex digits each, decoded
 * straight into the arena (the length is checked first, so the size is
 * bounded by the input). */
static bool parse_hex_data(parser *p, size_t nbytes, const char *type,
                           void **out) {
  next(p); /* 'hex' */
  if (p->t.k != T_STRING) return fail(p, "expected a string of hex digits");
  if (p->t.nlen != 2 * nbytes)
    return fail(p, "hex data has %zu digits, %s needs %zu", p->t.nlen, type,
                2 * nbytes);
  unsigned char *buf = ncc_arena_alloc(&p->g->arena, nbytes);
  if (!buf) return oom(p);
  const unsigned char *s = (const unsigned char *)p->src + p->t.npos;
  for (size_t i = 0; i < nbytes; i++) {
    if (!is_hex(s[2 * i]) || !is_hex(s[2 * i + 1])) {
      int bad = is_hex(s[2 * i]) ? 1 : 0;
      return fail_at(p, p->t.line, p->t.col + 1 + (int)(2 * i) + bad,
                     "invalid hex digit");
    }
    buf[i] = (unsigned char)(hex_val(s[2 * i]) << 4 | hex_val(s[2 * i + 1]));
  }
  next(p);
  *out = buf;
  return true;
}

/* Count a constant's bytes against the memory budget: the total, not just
 * each constant, so that many splats of a few hundred MB each cannot add
 * up to more than the machine has. */
static bool charge(parser *p, size_t nbytes, int line, int col, const char *type) {
  int64_t total = p->const_bytes > INT64_MAX - (int64_t)nbytes
                      ? -1
                      : p->const_bytes + (int64_t)nbytes;
  if (!ncc_budget_fits(total)) {
    char what[300];
    snprintf(what, sizeof what, "%s:%d:%d: constant %s (with the constants before it)",
             p->file, line, col, type);
    if (!p->st) p->st = ncc_budget_check(total, what);
    return false;
  }
  p->const_bytes = total;
  return true;
}

/* Data of a constant or tensor attribute of a static type: a list, a
 * splat, or hex. Sets *out to exactly numel * size bytes in the graph's
 * arena (where it stays: the value or attribute points at it). */
static bool parse_data(parser *p, ncc_dtype dt, const ncc_shape *s,
                       void **out) {
  char type[192];
  ncc_type_str(p->g, dt, s, NULL, type, sizeof type);
  int64_t numel = ncc_shape_numel(s);
  size_t es = ncc_dtype_size(dt);
  if (numel < 0 || numel > INT64_MAX / (int64_t)es ||
      (uint64_t)numel * es > SIZE_MAX / 2)
    return fail(p, "%s is too large for a constant", type);
  size_t nbytes = (size_t)numel * es;
  int line = p->t.line, col = p->t.col;
  if (p->t.k == T_LBRACK)
    return charge(p, nbytes, line, col, type) && parse_list_data(p, dt, numel, type, out);
  if (is_kw(p, "hex"))
    return charge(p, nbytes, line, col, type) && parse_hex_data(p, nbytes, type, out);
  if (!is_kw(p, "splat"))
    return fail(p, "expected constant data: '[', 'splat(' or 'hex\"'");
  next(p);
  if (!expect(p, T_LPAREN, "'('")) return false;
  unsigned char elem[8];
  if (!parse_elem(p, dt, elem) || !expect(p, T_RPAREN, "')'")) return false;
  if (numel * (int64_t)es > SPLAT_MAX)
    return fail_at(p, line, col, "splat of %s is too large (at most %lld bytes)",
                   type, (long long)SPLAT_MAX);
  if (!charge(p, nbytes, line, col, type)) return false;
  unsigned char *buf = nbytes >= SPLAT_DEFER ? ncc_arena_alloc_uninit(&p->g->arena, nbytes)
                                             : ncc_arena_alloc(&p->g->arena, nbytes);
  if (!buf) return oom(p);
  *out = buf;
  if (nbytes >= SPLAT_DEFER) {
    if (!grow(p, (void **)&p->splats, &p->cap_splats, p->n_splats + 1, sizeof *p->splats))
      return false;
    splat *sp = &p->splats[p->n_splats++];
    sp->buf = buf;
    sp->nbytes = nbytes;
    sp->es = es;
    memcpy(sp->elem, elem, sizeof elem);
    return true;
  }
  for (size_t i = 0; i < nbytes; i += es) memcpy(buf + i, elem, es);
  return true;
}

static bool fill_splats(parser *p) {
  for (int k = 0; k < p->n_splats; k++) {
    const splat *sp = &p->splats[k];
    for (size_t i = 0; i < sp->nbytes; i += sp->es) memcpy(sp->buf + i, sp->elem, sp->es);
  }
  return true;
}

/* ------------------------------------------------------------------------ */
/* attributes                                                                */

/* '[' ... ']' of ints or floats; kind: NCC_ATTR_INTS, _FLOATS, or -1 when
 * the elements decide (any float makes it floats). */
static bool parse_list_attr(parser *p, ncc_node *n, const char *key,
                            int kind) {
  int line = p->t.line, col = p->t.col;
  if (!expect(p, T_LBRACK, "'['")) return false;
  int64_t *iv = NULL;
  float *fv = NULL;
  int count = 0, cap = 0;
  bool any_float = kind == NCC_ATTR_FLOATS, ok = true;
  while (ok && p->t.k != T_RBRACK) {
    if (count == MAX_LIST) {
      ok = fail(p, "list too long");
      break;
    }
    if (count == cap) {
      int nc = cap ? cap * 2 : 16;
      int64_t *ni = ncc_realloc(iv, sizeof *iv * (size_t)cap, sizeof *iv * (size_t)nc);
      if (ni) iv = ni;
      float *nf = ni ? ncc_realloc(fv, sizeof *fv * (size_t)cap, sizeof *fv * (size_t)nc) : NULL;
      if (nf) fv = nf;
      if (!ni || !nf) {
        ok = oom(p);
        break;
      }
      cap = nc;
    }
    if (starts_float(p)) {
      if (kind == NCC_ATTR_INTS) {
        ok = fail(p, "expected an integer");
        break;
      }
      any_float = true;
      ok = parse_fp(p, NCC_DT_F32, &fv[count]);
      iv[count] = 0;
    } else {
      ok = parse_int(p, &iv[count]);
      fv[count] = (float)iv[count];
    }
    count++;
    if (ok && !accept(p, T_COMMA)) break;
  }
  if (ok && p->t.k != T_RBRACK) ok = fail(p, "expected ',' or ']'");
  if (ok && count == 0 && kind < 0)
    ok = fail_at(p, line, col, "an empty list needs a kind: ints[] or floats[]");
  if (ok) {
    next(p);
    ncc_status st = any_float
                        ? ncc_node_set_attr_floats(p->g, n, key, fv, count)
                        : ncc_node_set_attr_ints(p->g, n, key, iv, count);
    if (st) ok = oom(p);
  }
  ncc_free(iv, sizeof *iv * (size_t)cap);
  ncc_free(fv, sizeof *fv * (size_t)cap);
  return ok;
}

/* tensor '<' type '>' data */
static bool parse_tensor_attr(parser *p, ncc_node *n, const char *key) {
  next(p); /* 'tensor' */
  if (!expect(p, T_LT, "'<'")) return false;
  int line = p->t.line, col = p->t.col;
  ncc_dtype dt;
  ncc_shape s;
  if (!parse_type(p, &dt, &s, NULL) || !expect(p, T_GT, "'>'")) return false;
  if (!ncc_shape_is_static(&s))
    return fail_at(p, line, col, "a tensor attribute needs a static shape");
  void *data;
  if (!parse_data(p, dt, &s, &data)) return false;
  ncc_attr *a = ncc_node_add_attr(p->g, n, key, NCC_ATTR_TENSOR);
  if (!a) return oom(p);
  a->t.dtype = dt;
  a->t.shape = s;
  a->t.data = data;
  return true;
}

static bool parse_graph_attr(parser *p, ncc_node *n, const char *key);

static bool parse_attr_value(parser *p, ncc_node *n, const char *key) {
  ncc_status st = NCC_OK;
  if (starts_float(p)) {
    float f;
    if (!parse_fp(p, NCC_DT_F32, &f)) return false;
    st = ncc_node_set_attr_float(p->g, n, key, f);
  } else if (p->t.k == T_NUMBER) {
    int64_t v;
    if (tok_form(p) == NUM_BAD) return fail(p, "malformed number");
    if (!parse_int(p, &v)) return false;
    st = ncc_node_set_attr_int(p->g, n, key, v);
  } else if (p->t.k == T_LBRACK) {
    return parse_list_attr(p, n, key, -1);
  } else if (is_kw(p, "ints") || is_kw(p, "floats")) {
    int kind = is_kw(p, "ints") ? NCC_ATTR_INTS : NCC_ATTR_FLOATS;
    next(p);
    return parse_list_attr(p, n, key, kind);
  } else if (p->t.k == T_STRING) {
    tok t = p->t;
    if (!decode(p, &t, "a string attribute")) return false;
    next(p);
    st = ncc_node_set_attr_string(p->g, n, key, p->buf);
  } else if (is_kw(p, "tensor")) {
    return parse_tensor_attr(p, n, key);
  } else if (is_kw(p, "graph")) {
    return parse_graph_attr(p, n, key);
  } else {
    return fail(p, "expected an attribute value");
  }
  return st ? oom(p) : true;
}

/* '{' [key '=' value (',' key '=' value)*] '}' */
static bool parse_attrs(parser *p, ncc_node *n) {
  next(p); /* '{' */
  if (accept(p, T_RBRACE)) return true;
  for (;;) {
    char tb[160];
    tok kt = p->t;
    if (kt.k != T_IDENT && kt.k != T_STRING)
      return fail(p, "expected an attribute name");
    if (!decode(p, &kt, "an attribute name")) return false;
    if (ncc_node_attr(n, p->buf))
      return fail(p, "duplicate attribute '%s'", tok_text(p, &kt, tb, sizeof tb));
    if (n->n_attrs >= MAX_ATTRS)
      return fail(p, "too many attributes (at most %d)", MAX_ATTRS);
    char *key = ncc_arena_strdup(&p->g->arena, p->buf);
    if (!key) return oom(p);
    next(p);
    if (!expect(p, T_EQ, "'='") || !parse_attr_value(p, n, key)) return false;
    if (accept(p, T_RBRACE)) return true;
    if (!expect(p, T_COMMA, "',' or '}'")) return false;
  }
}

/* ------------------------------------------------------------------------ */
/* statements                                                                */

/* The value a `%name` token refers to, or an error. */
static ncc_value *lookup(parser *p, const tok *t) {
  char tb[160];
  if (!decode(p, t, "a value name")) return NULL;
  ncc_value *v = ncc_graph_find_value(p->g, p->buf);
  if (!v)
    fail_at(p, t->line, t->col, "use of undefined value '%s'",
            tok_text(p, t, tb, sizeof tb));
  return v;
}

/* A new value named by token t (which must not exist yet). */
static ncc_value *define(parser *p, const tok *t, ncc_value_kind kind,
                         ncc_dtype dt, const ncc_shape *s) {
  char tb[160];
  if (!decode(p, t, "a value name")) return NULL;
  if (ncc_graph_find_value(p->g, p->buf)) {
    fail_at(p, t->line, t->col, "redefinition of value '%s'",
            tok_text(p, t, tb, sizeof tb));
    return NULL;
  }
  ncc_value *v = ncc_graph_add_value(p->g, p->buf, kind, dt, s);
  if (!v) oom(p);
  return v;
}

static void arity_text(char *buf, size_t cap, int lo, int hi,
                       const char *what) {
  if (hi < 0) snprintf(buf, cap, "at least %d %s%s", lo, what, lo == 1 ? "" : "s");
  else if (lo == hi) snprintf(buf, cap, "%d %s%s", lo, what, lo == 1 ? "" : "s");
  else snprintf(buf, cap, "%d to %d %ss", lo, hi, what);
}

/* Operand and result counts, and '_' only where the op allows it. */
static bool check_arity(parser *p, ncc_op op, const tok *optok, int n_in,
                        int n_res) {
  const ncc_op_info *oi = &ncc_op_table[op];
  char want[64];
  if (n_in < oi->min_in || (oi->max_in >= 0 && n_in > oi->max_in)) {
    arity_text(want, sizeof want, oi->min_in, oi->max_in, "input");
    return fail_at(p, optok->line, optok->col, "%s takes %s, got %d",
                   oi->name, want, n_in);
  }
  if (n_res < oi->min_out || (oi->max_out >= 0 && n_res > oi->max_out)) {
    arity_text(want, sizeof want, oi->min_out, oi->max_out, "output");
    return fail_at(p, optok->line, optok->col, "%s has %s, got %d", oi->name,
                   want, n_res);
  }
  for (int i = 0; i < n_in; i++)
    if (!p->ins[i] && ncc_op_input_required(op, i))
      return fail_at(p, p->in_toks[i].line, p->in_toks[i].col,
                     "input %d of %s is required and cannot be '_'", i,
                     oi->name);
  for (int j = 0; j < n_res; j++)
    if (p->res[j].skip && (j < oi->min_out || oi->max_out < 0))
      return fail_at(p, p->res[j].name.line, p->res[j].name.col,
                     "output %d of %s is required and cannot be '_'", j,
                     oi->name);
  return true;
}

/* '(' operands ')' into p->ins / p->in_toks; returns the count or -1. */
static int parse_operands(parser *p) {
  if (!expect(p, T_LPAREN, "'('")) return -1;
  int n = 0;
  if (accept(p, T_RPAREN)) return 0;
  for (;;) {
    if (!grow(p, (void **)&p->ins, &p->cap_ins, n + 1, sizeof *p->ins) ||
        !grow(p, (void **)&p->in_toks, &p->cap_toks, n + 1, sizeof *p->in_toks))
      return -1;
    p->in_toks[n] = p->t;
    if (p->t.k == T_VALUE) {
      p->ins[n] = lookup(p, &p->t);
      if (!p->ins[n]) return -1;
    } else if (is_kw(p, "_")) {
      p->ins[n] = NULL;
    } else {
      fail(p, "expected a value or '_'");
      return -1;
    }
    n++;
    next(p);
    if (accept(p, T_RPAREN)) return n;
    if (!expect(p, T_COMMA, "',' or ')'")) return -1;
  }
}

static bool record_node_loc(parser *p, const ncc_node *n, const tok *first) {
  if (!grow(p, (void **)&p->nlocs, &p->cap_nlocs, n->id + 1, sizeof *p->nlocs))
    return false;
  p->nlocs[n->id].line = first->line;
  p->nlocs[n->id].col = first->col;
  return true;
}

static bool define_outputs(parser *p, ncc_node *n, int n_res) {
  for (int j = 0; j < n_res; j++) {
    result *r = &p->res[j];
    if (r->skip) continue;
    ncc_value *v = define(p, &r->name, NCC_VAL_NODE,
                          r->typed ? r->dt : NCC_DT_UNDEF,
                          r->typed ? &r->shape : NULL);
    if (!v) return false;
    v->layout = r->layout;
    ncc_node_set_output(n, j, v);
    if (!grow(p, (void **)&p->decls, &p->cap_decls, v->id + 1,
              sizeof *p->decls))
      return false;
    decl *d = &p->decls[v->id];
    d->has = r->typed;
    d->dt = r->dt;
    d->shape = r->shape;
    d->line = r->name.line;
    d->col = r->name.col;
  }
  return true;
}

/* OpName '(' operands ')' ['{' attrs '}'] ['@' name] */
static bool parse_node(parser *p, int n_res) {
  char tb[160];
  tok optok = p->t;
  ncc_op op = ncc_op_lookup(p->src + optok.pos, optok.len);
  if (op == NCC_OP_COUNT)
    return fail(p, "unknown op '%s'", tok_text(p, &optok, tb, sizeof tb));
  next(p);
  int n_in = parse_operands(p);
  if (n_in < 0 || !check_arity(p, op, &optok, n_in, n_res)) return false;
  ncc_node *n = ncc_graph_add_node(p->g, op, NULL, n_in, p->ins, n_res);
  if (!n) return oom(p);
  if (!record_node_loc(p, n, &p->res[0].name)) return false;
  if (p->t.k == T_LBRACE && !parse_attrs(p, n)) return false;
  if (p->t.k == T_AT) {
    tok t = p->t;
    if (!decode(p, &t, "a node name")) return false;
    n->name = ncc_arena_strdup(&p->g->arena, p->buf);
    if (!n->name) return oom(p);
    next(p);
  }
  return define_outputs(p, n, n_res);
}

/* 'const' data, for a single typed result with a static shape. */
static bool parse_const(parser *p, int n_res) {
  result *r = &p->res[0];
  if (n_res != 1 || r->skip)
    return fail_at(p, r->name.line, r->name.col,
                   "a constant defines exactly one value");
  if (!r->typed)
    return fail_at(p, r->name.line, r->name.col, "a constant needs a type");
  if (!ncc_shape_is_static(&r->shape))
    return fail_at(p, r->name.line, r->name.col,
                   "a constant needs a static shape");
  next(p); /* 'const' */
  void *data;
  if (!parse_data(p, r->dt, &r->shape, &data)) return false;
  /* ncc_graph_add_const would copy the data; it already lives in the arena */
  ncc_value *v = define(p, &r->name, NCC_VAL_CONST, r->dt, &r->shape);
  if (!v) return false;
  v->data = data;
  v->layout = r->layout;
  return true;
}

/* results '=' ('const' data | node) */
static bool parse_stmt(parser *p) {
  int n_res = 0;
  for (;;) {
    if (n_res == MAX_OUTS) return fail(p, "too many outputs");
    if (!grow(p, (void **)&p->res, &p->cap_res, n_res + 1, sizeof *p->res))
      return false;
    result *r = &p->res[n_res++];
    memset(r, 0, sizeof *r);
    r->name = p->t;
    if (p->t.k == T_VALUE) {
      next(p);
      if (accept(p, T_COLON)) {
        r->typed = true;
        if (!parse_type(p, &r->dt, &r->shape, &r->layout)) return false;
      }
    } else if (is_kw(p, "_")) {
      r->skip = true;
      next(p);
    } else {
      return fail(p, "expected a value name or '_'");
    }
    if (!accept(p, T_COMMA)) break;
  }
  if (!expect(p, T_EQ, "'='")) return false;
  if (is_kw(p, "const")) return parse_const(p, n_res);
  if (p->t.k != T_IDENT) return fail(p, "expected an op name or 'const'");
  return parse_node(p, n_res);
}

/* 'return' [value (',' value)*] */
static bool parse_return(parser *p) {
  next(p);
  if (p->t.k != T_VALUE) return true;
  for (;;) {
    if (p->t.k != T_VALUE) return fail(p, "expected a value name");
    ncc_value *v = lookup(p, &p->t);
    if (!v) return false;
    if (ncc_graph_add_output(p->g, v)) return oom(p);
    next(p);
    if (!accept(p, T_COMMA)) return true;
  }
}

/* 'graph' '@'name '(' [value ':' type (',' ...)*] ')' '{' stmt* return '}' */
static bool parse_graph(parser *p) {
  if (!is_kw(p, "graph")) return fail(p, "expected 'graph'");
  next(p);
  if (p->t.k != T_AT) return fail(p, "expected '@' and the graph name");
  tok gt = p->t;
  if (!decode(p, &gt, "the graph name")) return false;
  p->g = ncc_graph_new(p->buf);
  if (!p->g) return oom(p);
  next(p);
  if (!expect(p, T_LPAREN, "'('")) return false;
  if (!accept(p, T_RPAREN)) {
    for (;;) {
      if (p->t.k != T_VALUE) return fail(p, "expected an input such as %%x: f32[N]");
      tok nt = p->t;
      next(p);
      ncc_dtype dt;
      ncc_shape s;
      ncc_layout l;
      if (!expect(p, T_COLON, "':'") || !parse_type(p, &dt, &s, &l))
        return false;
      ncc_value *v = define(p, &nt, NCC_VAL_INPUT, dt, &s);
      if (!v) return false;
      v->layout = l;
      if (ncc_graph_add_input(p->g, v)) return oom(p);
      if (accept(p, T_RPAREN)) break;
      if (!expect(p, T_COMMA, "',' or ')'")) return false;
    }
  }
  if (!expect(p, T_LBRACE, "'{'")) return false;
  while (!is_kw(p, "return")) {
    if (p->t.k == T_EOF || p->t.k == T_RBRACE)
      return fail(p, "expected 'return' before the end of the graph");
    if (p->t.k != T_VALUE && !is_kw(p, "_"))
      return fail(p, "expected a statement ('%%name = ...') or 'return'");
    if (!parse_stmt(p)) return false;
  }
  if (!parse_return(p) || !expect(p, T_RBRACE, "'}'")) return false;
  if (p->depth == 0 && p->t.k != T_EOF)
    return fail(p, "expected the end of the input after '}'");
  return true;
}

/* ------------------------------------------------------------------------ */
/* after parsing: inference, declared types, verifier                        */

/* The first node inference did not get to store: the one that failed. */
static int failed_node(const ncc_graph *g) {
  for (int k = 0; k < g->n_nodes; k++)
    for (int j = 0; j < g->nodes[k]->n_out; j++)
      if (g->nodes[k]->out[j] &&
          g->nodes[k]->out[j]->content_len == MARK_UNSTORED)
        return k;
  return -1;
}

static bool finish(parser *p) {
  ncc_graph *g = p->g;
  for (int k = 0; k < g->n_nodes; k++)
    for (int j = 0; j < g->nodes[k]->n_out; j++)
      if (g->nodes[k]->out[j]) g->nodes[k]->out[j]->content_len = MARK_UNSTORED;
  ncc_status st = ncc_infer_graph(g);
  if (st) {
    int k = st == NCC_ERR_NOMEM ? -1 : failed_node(g);
    if (k >= 0 && k < p->cap_nlocs)
      ncc_error_prefix("%s:%d:%d", p->file, p->nlocs[k].line, p->nlocs[k].col);
    else if (st != NCC_ERR_NOMEM)
      ncc_error_prefix("%s", p->file);
    p->st = st;
    return false;
  }
  /* Inference keeps a declared dim where it refines an unknown one; any
   * other difference means the text declared a wrong type. */
  for (int k = 0; k < g->n_nodes; k++) {
    const ncc_node *n = g->nodes[k];
    for (int j = 0; j < n->n_out; j++) {
      const ncc_value *v = n->out[j];
      const decl *d = v && v->id < p->cap_decls ? &p->decls[v->id] : NULL;
      if (!d || !d->has) continue;
      if (d->dt == v->dtype && ncc_shape_eq(&d->shape, &v->shape)) continue;
      char a[256], b[256];
      return fail_at(p, d->line, d->col, "'%%%s' is declared %s but %s infers %s",
                     v->name, ncc_type_str(g, d->dt, &d->shape, NULL, a, sizeof a),
                     ncc_op_name(n->op),
                     ncc_type_str(g, v->dtype, &v->shape, NULL, b, sizeof b));
    }
  }
  st = ncc_graph_verify(g);
  if (st) {
    ncc_error_prefix("%s", p->file);
    p->st = st;
    return false;
  }
  return true;
}

static void parser_release(parser *p) {
  ncc_free(p->splats, 0);
  ncc_free(p->buf, p->buf_cap);
  ncc_free(p->decls, 0);
  ncc_free(p->nlocs, 0);
  ncc_free(p->ins, 0);
  ncc_free(p->in_toks, 0);
  ncc_free(p->res, 0);
}

/* `graph @name(...) { ... }` as an attribute value: a subgraph,
 * parsed, inferred and verified as a graph of its own by a parser that
 * continues in the same text (the depth bound keeps the C stack small). */
static bool parse_graph_attr(parser *p, ncc_node *n, const char *key) {
  if (p->depth + 1 >= MAX_DEPTH)
    return fail(p, "subgraphs nested more than %d deep", MAX_DEPTH);
  parser sub = {.src = p->src, .len = p->len, .pos = p->pos, .line = p->line,
                .col = p->col, .t = p->t, .file = p->file, .depth = p->depth + 1,
                .const_bytes = p->const_bytes};
  bool ok = parse_graph(&sub) && fill_splats(&sub) && finish(&sub);
  p->pos = sub.pos, p->line = sub.line, p->col = sub.col, p->t = sub.t;
  p->const_bytes = sub.const_bytes;
  parser_release(&sub);
  if (!ok) {
    ncc_graph_free(sub.g);
    p->st = sub.st ? sub.st : NCC_ERR_INPUT;
    return false;
  }
  return ncc_node_set_attr_graph(p->g, n, key, sub.g) ? oom(p) : true;
}

ncc_status ncc_graph_parse_text(const char *text, size_t len, const char *name,
                                ncc_graph **out) {
  if (!out || (!text && len))
    return ncc_error(NCC_ERR_USAGE, "ncc_graph_parse_text: bad arguments");
  *out = NULL;
  parser p = {.src = text ? text : "", .len = len, .line = 1, .col = 1,
              .file = name ? name : "<text>"};
  if (len > MAX_TEXT)
    return ncc_error(NCC_ERR_INPUT, "%s: text IR is too large", p.file);
  next(&p);
  if (parse_graph(&p) && fill_splats(&p)) finish(&p);
  parser_release(&p);
  if (p.st) {
    ncc_graph_free(p.g);
    return p.st;
  }
  *out = p.g;
  return NCC_OK;
}

/* Read a whole file (regular or not) into a new buffer. */
static ncc_status read_file(const char *path, char **data, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return ncc_error(NCC_ERR_INPUT, "cannot open '%s': %s", path, strerror(errno));
  /* A regular file's size avoids growing (a model's IR can be 100 MB);
   * pipes and the like grow as they are read. */
  struct stat sb;
  size_t cap = 1 << 16, n = 0;
  if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0 &&
      (uint64_t)sb.st_size < MAX_TEXT)
    cap = (size_t)sb.st_size + 1; /* +1: EOF is seen without growing */
  char *buf = ncc_malloc(cap);
  ncc_status st = buf ? NCC_OK : NCC_ERR_NOMEM;
  while (!st) {
    if (n == cap) {
      if (cap > MAX_TEXT) {
        st = ncc_error(NCC_ERR_INPUT, "%s: text IR is too large", path);
        break;
      }
      char *nb = ncc_realloc(buf, cap, cap * 2);
      if (!nb) {
        st = NCC_ERR_NOMEM;
        break;
      }
      buf = nb;
      cap *= 2;
    }
    size_t k = fread(buf + n, 1, cap - n, f);
    n += k;
    if (k == 0) {
      if (ferror(f)) st = ncc_error(NCC_ERR_INPUT, "cannot read '%s': %s", path, strerror(errno));
      break;
    }
  }
  fclose(f);
  if (st) {
    ncc_free(buf, cap);
    return st;
  }
  *data = buf;
  *len = n;
  return NCC_OK;
}

ncc_status ncc_graph_parse_file(const char *path, ncc_graph **out) {
  if (!path || !out) return ncc_error(NCC_ERR_USAGE, "ncc_graph_parse_file: bad arguments");
  *out = NULL;
  char *text = NULL;
  size_t len = 0;
  ncc_status st = read_file(path, &text, &len);
  if (st) return st;
  st = ncc_graph_parse_text(text, len, path, out);
  ncc_free(text, 0);
  return st;
}
