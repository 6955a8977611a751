/* ir/text_print.c — the printer of ncc's text IR (grammar in docs/IR.md).
 *
 * The output is canonical: constants first (in value order), then nodes in
 * their topological order, attributes sorted by name, floats in the shortest
 * decimal that reads back to the same bits (or an explicit NaN bit pattern),
 * so that print(parse(x)) == x byte for byte. Large constants are written as
 * one hex string of their little-endian bytes, uniform ones as a splat.
 *
 * Output goes through a small sink that either streams to a FILE (so a large
 * model is never held twice in memory), grows a string, or fills a fixed
 * buffer with truncation (ncc_type_str, used by diagnostics).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "f16.h"
#include "ir.h"

/* Constants with at most this many elements are printed as a list. */
#define LIST_MAX 16

/* ---- output sink ---- */
typedef enum { SINK_FILE, SINK_GROW, SINK_FIXED } sink_kind;

typedef struct sink {
  sink_kind kind;
  FILE *f;
  char *buf;
  size_t len, cap;
  ncc_status st; /* first failure (OOM, write error); NCC_OK otherwise */
  int indent;    /* extra spaces of a subgraph's lines */
} sink;

#define FILE_CHUNK (1 << 16)

static void sink_flush(sink *s) {
  if (s->kind != SINK_FILE || !s->len) return;
  if (s->st == NCC_OK && fwrite(s->buf, 1, s->len, s->f) != s->len)
    s->st = ncc_error(NCC_ERR_INPUT, "cannot write the text IR");
  s->len = 0;
}

static void put(sink *s, const char *p, size_t n) {
  if (s->st != NCC_OK) return;
  switch (s->kind) {
  case SINK_FIXED: {
    size_t room = s->cap - 1 - s->len; /* cap >= 1, keep the NUL */
    if (n > room) n = room;
    memcpy(s->buf + s->len, p, n);
    s->len += n;
    s->buf[s->len] = 0;
    return;
  }
  case SINK_FILE:
    while (n) {
      size_t room = s->cap - s->len, k = n < room ? n : room;
      memcpy(s->buf + s->len, p, k);
      s->len += k, p += k, n -= k;
      if (s->len == s->cap) sink_flush(s);
      if (s->st != NCC_OK) return;
    }
    return;
  case SINK_GROW:
    if (n >= s->cap - s->len) { /* keep room for the NUL */
      size_t nc = s->cap ? s->cap : 4096;
      while (n >= nc - s->len) {
        if (nc > SIZE_MAX / 2) {
          s->st = ncc_error(NCC_ERR_NOMEM, "out of memory (text too large)");
          return;
        }
        nc *= 2;
      }
      char *nb = ncc_realloc(s->buf, s->cap, nc);
      if (!nb) {
        s->st = NCC_ERR_NOMEM;
        return;
      }
      s->buf = nb;
      s->cap = nc;
    }
    memcpy(s->buf + s->len, p, n);
    s->len += n;
    s->buf[s->len] = 0;
    return;
  }
}

static void puts_(sink *s, const char *p) { put(s, p, strlen(p)); }
static void putc_(sink *s, char c) { put(s, &c, 1); }

__attribute__((format(printf, 2, 3))) static void printf_(sink *s,
                                                          const char *fmt,
                                                          ...) {
  char tmp[128];
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (k > 0) put(s, tmp, (size_t)k < sizeof tmp ? (size_t)k : sizeof tmp - 1);
}

/* ---- names ---- */
static bool is_alnum_(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_';
}

/* Value, node and graph names may be bare when made of [A-Za-z0-9_.]. */
static bool bare_name(const char *p) {
  if (!*p) return false;
  for (; *p; p++)
    if (!is_alnum_((unsigned char)*p) && *p != '.') return false;
  return true;
}

/* Identifiers (symbols, attribute names) must also not start with a digit. */
static bool bare_ident(const char *p) {
  return bare_name(p) && !(p[0] >= '0' && p[0] <= '9');
}

/* A double-quoted string: \" \\ \n \t, and \HH for other bytes outside
 * printable ASCII, so the text stays one line of ASCII. */
static void put_quoted(sink *s, const char *p) {
  static const char hex[] = "0123456789abcdef";
  putc_(s, '"');
  const char *run = p;
  for (; *p; p++) {
    unsigned char c = (unsigned char)*p;
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') continue;
    put(s, run, (size_t)(p - run));
    char e[3] = {'\\', 0, 0};
    size_t n = 2;
    if (c == '"' || c == '\\') e[1] = (char)c;
    else if (c == '\n') e[1] = 'n';
    else if (c == '\t') e[1] = 't';
    else e[1] = hex[c >> 4], e[2] = hex[c & 15], n = 3;
    put(s, e, n);
    run = p + 1;
  }
  put(s, run, (size_t)(p - run));
  putc_(s, '"');
}

static void put_name(sink *s, char sigil, const char *name) {
  if (!name) name = "";
  if (sigil) putc_(s, sigil);
  if (bare_name(name)) puts_(s, name);
  else put_quoted(s, name);
}

static void put_ident(sink *s, const char *name) {
  if (!name) name = "";
  if (bare_ident(name)) puts_(s, name);
  else put_quoted(s, name);
}

/* ---- numbers ---- */

/* The shortest "%.*g" of x (at most maxprec digits) that `same` reads back
 * to the same bits; written positionally when the exponent is small, and
 * always recognisable as a float (".0" appended to integral forms). */
static void fmt_float(char *buf, size_t cap, double x, int maxprec,
                      bool (*same)(const char *, double)) {
  int p = 1;
  for (; p < maxprec; p++) {
    snprintf(buf, cap, "%.*g", p, x);
    if (same(buf, x)) break;
  }
  if (p == maxprec) snprintf(buf, cap, "%.*g", p, x);
  /* "1e+02" reads worse than "100": widen when the exponent is small. */
  const char *e = strchr(buf, 'e');
  if (e) {
    int ex = atoi(e + 1);
    if (ex >= 0 && ex < maxprec) {
      char wide[64];
      snprintf(wide, sizeof wide, "%.*g", ex + 1, x);
      if (!strchr(wide, 'e') && same(wide, x)) snprintf(buf, cap, "%s", wide);
    }
  }
  if (!strpbrk(buf, ".en")) {
    size_t n = strlen(buf);
    if (n + 3 <= cap) memcpy(buf + n, ".0", 3);
  }
}

static bool same_f32(const char *s, double x) {
  float a = strtof(s, NULL), b = (float)x;
  return memcmp(&a, &b, sizeof a) == 0;
}

static bool same_f64(const char *s, double x) {
  double a = strtod(s, NULL);
  return memcmp(&a, &x, sizeof a) == 0;
}

/* NaN and infinities, shared by every float width: "nan" and "-nan" are the
 * canonical quiet NaNs, any other NaN is written with its exact bits. */
static bool fmt_special(char *buf, size_t cap, bool nan, bool neg,
                        uint64_t bits, uint64_t quiet, uint64_t sign,
                        int hexdigits) {
  if (!nan) {
    snprintf(buf, cap, "%sinf", neg ? "-" : "");
    return true;
  }
  if (bits == quiet) snprintf(buf, cap, "nan");
  else if (bits == (quiet | sign)) snprintf(buf, cap, "-nan");
  else
    snprintf(buf, cap, "nan(0x%0*llx)", hexdigits, (unsigned long long)bits);
  return true;
}

static void fmt_f32(char *buf, size_t cap, float f) {
  uint32_t b;
  memcpy(&b, &f, 4);
  if (isnan(f) || isinf(f))
    fmt_special(buf, cap, isnan(f), b >> 31, b, 0x7fc00000u, 0x80000000u, 8);
  else
    fmt_float(buf, cap, (double)f, 9, same_f32);
}

static void fmt_f64(char *buf, size_t cap, double d) {
  uint64_t b;
  memcpy(&b, &d, 8);
  if (isnan(d) || isinf(d))
    fmt_special(buf, cap, isnan(d), b >> 63, b, 0x7ff8000000000000ull,
                0x8000000000000000ull, 16);
  else
    fmt_float(buf, cap, d, 17, same_f64);
}

/* An f16 is written as the shortest float of its exact value: that float
 * reads back exactly and converts back to f16 without rounding. */
static void fmt_f16(char *buf, size_t cap, uint16_t h) {
  if ((h & 0x7c00) == 0x7c00)
    fmt_special(buf, cap, (h & 1023) != 0, h >> 15, h, 0x7e00, 0x8000, 4);
  else
    fmt_float(buf, cap, (double)ncc_f16_to_f32(h), 9, same_f32);
}

static void put_f32(sink *s, float f) {
  char b[64];
  fmt_f32(b, sizeof b, f);
  puts_(s, b);
}

/* Element i of a constant of type dt. */
static void put_elem(sink *s, ncc_dtype dt, const unsigned char *p) {
  char b[64];
  switch (dt) {
  case NCC_DT_F32: {
    float f;
    memcpy(&f, p, 4);
    fmt_f32(b, sizeof b, f);
    break;
  }
  case NCC_DT_F64: {
    double d;
    memcpy(&d, p, 8);
    fmt_f64(b, sizeof b, d);
    break;
  }
  case NCC_DT_F16: {
    uint16_t h;
    memcpy(&h, p, 2);
    fmt_f16(b, sizeof b, h);
    break;
  }
  case NCC_DT_I8: snprintf(b, sizeof b, "%d", (int)(int8_t)p[0]); break;
  case NCC_DT_U8: snprintf(b, sizeof b, "%u", (unsigned)p[0]); break;
  case NCC_DT_I32: {
    int32_t v;
    memcpy(&v, p, 4);
    snprintf(b, sizeof b, "%ld", (long)v);
    break;
  }
  case NCC_DT_I64: {
    int64_t v;
    memcpy(&v, p, 8);
    snprintf(b, sizeof b, "%lld", (long long)v);
    break;
  }
  case NCC_DT_BOOL: snprintf(b, sizeof b, "%s", p[0] ? "true" : "false"); break;
  case NCC_DT_BF16: {
    uint16_t h;
    memcpy(&h, p, 2);
    if ((h & 0x7f80) == 0x7f80) /* inf, NaN: the f16 forms, bf16's bits */
      fmt_special(b, sizeof b, (h & 0x7f) != 0, h >> 15, h, 0x7fc0, 0x8000, 4);
    else /* the shortest f32 of its exact value, which reads back exactly */
      fmt_float(b, sizeof b, (double)ncc_bf16_to_f32(h), 9, same_f32);
    break;
  }
  case NCC_DT_I16: {
    int16_t v;
    memcpy(&v, p, 2);
    snprintf(b, sizeof b, "%d", (int)v);
    break;
  }
  case NCC_DT_U16: {
    uint16_t v;
    memcpy(&v, p, 2);
    snprintf(b, sizeof b, "%u", (unsigned)v);
    break;
  }
  case NCC_DT_U32: {
    uint32_t v;
    memcpy(&v, p, 4);
    snprintf(b, sizeof b, "%lu", (unsigned long)v);
    break;
  }
  case NCC_DT_U64: {
    uint64_t v;
    memcpy(&v, p, 8);
    snprintf(b, sizeof b, "%llu", (unsigned long long)v);
    break;
  }
  default: snprintf(b, sizeof b, "?"); break;
  }
  puts_(s, b);
}

/* ---- types ---- */
static void put_dim(sink *s, const ncc_graph *g, int64_t d) {
  if (d >= 0) printf_(s, "%lld", (long long)d);
  else if (ncc_dim_is_sym(d) && g && ncc_dim_sym_id(d) < g->n_syms)
    put_ident(s, g->syms[ncc_dim_sym_id(d)]);
  else printf_(s, "?%lld", (long long)d); /* invalid: the parser rejects it */
}

static void put_shape(sink *s, const ncc_graph *g, const ncc_shape *sh) {
  putc_(s, '[');
  int r = sh->rank < 0 ? 0 : sh->rank > NCC_MAX_RANK ? NCC_MAX_RANK : sh->rank;
  for (int i = 0; i < r; i++) {
    if (i) putc_(s, ',');
    put_dim(s, g, sh->d[i]);
  }
  putc_(s, ']');
}

static void put_type(sink *s, const ncc_graph *g, ncc_dtype dt,
                     const ncc_shape *sh, const ncc_layout *l) {
  puts_(s, ncc_dtype_name(dt));
  put_shape(s, g, sh);
  if (!l || l->kind == NCC_LAYOUT_PLAIN) return;
  if (l->kind == NCC_LAYOUT_NCHWC) printf_(s, "#nchw%dc", l->block);
  else printf_(s, "#?%d", (int)l->kind);
}

const char *ncc_type_str(const ncc_graph *g, ncc_dtype dt, const ncc_shape *s,
                         const ncc_layout *layout, char *buf, size_t cap) {
  if (!cap) return buf;
  sink k = {.kind = SINK_FIXED, .buf = buf, .cap = cap};
  buf[0] = 0;
  put_type(&k, g, dt, s, layout);
  return buf;
}

/* ---- constant data ---- */
static bool all_listable(ncc_dtype dt, const unsigned char *p, int64_t n) {
  if (dt != NCC_DT_BOOL) return true;
  for (int64_t i = 0; i < n; i++)
    if (p[i] > 1) return false; /* only 0/1 read back as false/true */
  return true;
}

static bool all_same(const unsigned char *p, int64_t n, size_t es) {
  for (int64_t i = 1; i < n; i++)
    if (memcmp(p, p + (size_t)i * es, es) != 0) return false;
  return true;
}

static void put_hex(sink *s, const unsigned char *p, size_t n) {
  static const char hex[] = "0123456789abcdef";
  char chunk[512];
  puts_(s, "hex\"");
  while (n) {
    size_t k = n < sizeof chunk / 2 ? n : sizeof chunk / 2;
    for (size_t i = 0; i < k; i++) {
      chunk[2 * i] = hex[p[i] >> 4];
      chunk[2 * i + 1] = hex[p[i] & 15];
    }
    put(s, chunk, 2 * k);
    p += k, n -= k;
  }
  putc_(s, '"');
}

/* `[e, ...]` for small tensors, `splat(e)` for uniform ones, else hex. */
static void put_data(sink *s, ncc_dtype dt, const ncc_shape *sh,
                     const void *data) {
  int64_t n = ncc_shape_numel(sh);
  size_t es = ncc_dtype_size(dt);
  const unsigned char *p = data;
  if (n < 0 || !es || (!p && n > 0)) {
    puts_(s, "hex\"\""); /* an invalid constant; the verifier names it */
    return;
  }
  if (n <= LIST_MAX && all_listable(dt, p, n)) {
    putc_(s, '[');
    for (int64_t i = 0; i < n; i++) {
      if (i) puts_(s, ", ");
      put_elem(s, dt, p + (size_t)i * es);
    }
    putc_(s, ']');
  } else if (all_same(p, n, es) && all_listable(dt, p, 1)) {
    puts_(s, "splat(");
    put_elem(s, dt, p);
    putc_(s, ')');
  } else {
    put_hex(s, p, (size_t)n * es);
  }
}

/* ---- attributes, nodes, graph ---- */
static void put_graph(sink *s, const ncc_graph *g);

/* The two-space indent of a statement, deeper inside a subgraph. */
static void put_indent(sink *s) {
  for (int i = 0; i < s->indent; i++) putc_(s, ' ');
  puts_(s, "  ");
}

static void put_attr(sink *s, const ncc_graph *g, const ncc_attr *a) {
  put_ident(s, a->name);
  puts_(s, " = ");
  switch (a->kind) {
  case NCC_ATTR_INT: printf_(s, "%lld", (long long)a->i); break;
  case NCC_ATTR_FLOAT: put_f32(s, a->f); break;
  case NCC_ATTR_INTS:
    if (a->n <= 0) puts_(s, "ints");
    putc_(s, '[');
    for (int i = 0; i < a->n && a->ints; i++)
      printf_(s, "%s%lld", i ? ", " : "", (long long)a->ints[i]);
    putc_(s, ']');
    break;
  case NCC_ATTR_FLOATS:
    if (a->n <= 0) puts_(s, "floats");
    putc_(s, '[');
    for (int i = 0; i < a->n && a->floats; i++) {
      if (i) puts_(s, ", ");
      put_f32(s, a->floats[i]);
    }
    putc_(s, ']');
    break;
  case NCC_ATTR_STRING: put_quoted(s, a->s ? a->s : ""); break;
  case NCC_ATTR_TENSOR:
    puts_(s, "tensor<");
    put_type(s, g, a->t.dtype, &a->t.shape, NULL);
    puts_(s, "> ");
    put_data(s, a->t.dtype, &a->t.shape, a->t.data);
    break;
  case NCC_ATTR_GRAPH: /* the subgraph, its lines indented deeper */
    if (!a->graph) {
      puts_(s, "?");
      break;
    }
    s->indent += 2;
    put_graph(s, a->graph);
    s->indent -= 2;
    break;
  default: puts_(s, "?"); break;
  }
}

/* Attribute indices of n sorted by name (insertion sort: a handful). */
static int *sorted_attrs(const ncc_node *n, int *local, int nlocal) {
  int *ix = local;
  if (n->n_attrs > nlocal) {
    ix = ncc_malloc(sizeof(int) * (size_t)n->n_attrs);
    if (!ix) return NULL;
  }
  for (int i = 0; i < n->n_attrs; i++) {
    int j = i;
    while (j > 0 && strcmp(n->attrs[ix[j - 1]].name, n->attrs[i].name) > 0) {
      ix[j] = ix[j - 1];
      j--;
    }
    ix[j] = i;
  }
  return ix;
}

static void put_value_decl(sink *s, const ncc_graph *g, const ncc_value *v) {
  put_name(s, '%', v->name);
  puts_(s, ": ");
  put_type(s, g, v->dtype, &v->shape, &v->layout);
}

static void put_node(sink *s, const ncc_graph *g, const ncc_node *n) {
  put_indent(s);
  for (int j = 0; j < n->n_out; j++) {
    if (j) puts_(s, ", ");
    if (n->out[j]) put_value_decl(s, g, n->out[j]);
    else putc_(s, '_');
  }
  if (!n->n_out) putc_(s, '_'); /* invalid; keeps the line parseable-looking */
  puts_(s, " = ");
  puts_(s, (unsigned)n->op < NCC_OP_COUNT ? ncc_op_name(n->op) : "?");
  putc_(s, '(');
  for (int i = 0; i < n->n_in; i++) {
    if (i) puts_(s, ", ");
    if (n->in[i]) put_name(s, '%', n->in[i]->name);
    else putc_(s, '_');
  }
  putc_(s, ')');
  if (n->n_attrs > 0) {
    int local[32];
    int *ix = sorted_attrs(n, local, 32);
    if (!ix) {
      s->st = NCC_ERR_NOMEM;
      return;
    }
    puts_(s, " {");
    for (int i = 0; i < n->n_attrs; i++) {
      if (i) puts_(s, ", ");
      put_attr(s, g, &n->attrs[ix[i]]);
    }
    putc_(s, '}');
    if (ix != local) ncc_free(ix, sizeof(int) * (size_t)n->n_attrs);
  }
  if (n->name && n->name[0]) {
    putc_(s, ' ');
    put_name(s, '@', n->name);
  }
  putc_(s, '\n');
}

static void put_graph(sink *s, const ncc_graph *g) {
  puts_(s, "graph ");
  put_name(s, '@', g->name);
  putc_(s, '(');
  for (int i = 0; i < g->n_inputs; i++) {
    if (i) puts_(s, ", ");
    put_value_decl(s, g, g->inputs[i]);
  }
  puts_(s, ") {\n");
  for (int i = 0; i < g->n_values && s->st == NCC_OK; i++) {
    const ncc_value *v = g->values[i];
    if (v->kind != NCC_VAL_CONST) continue;
    put_indent(s);
    put_value_decl(s, g, v);
    puts_(s, " = const ");
    put_data(s, v->dtype, &v->shape, v->data);
    putc_(s, '\n');
  }
  for (int i = 0; i < g->n_nodes && s->st == NCC_OK; i++)
    put_node(s, g, g->nodes[i]);
  put_indent(s);
  puts_(s, "return");
  for (int i = 0; i < g->n_outputs; i++) {
    puts_(s, i ? ", " : " ");
    put_name(s, '%', g->outputs[i]->name);
  }
  putc_(s, '\n');
  /* a subgraph's '}' lines up with the node that holds it */
  for (int i = 0; i < s->indent; i++) putc_(s, ' ');
  puts_(s, s->indent ? "}" : "}\n");
}

ncc_status ncc_graph_print(const ncc_graph *g, FILE *f) {
  sink s = {.kind = SINK_FILE, .f = f, .cap = FILE_CHUNK};
  s.buf = ncc_malloc(FILE_CHUNK);
  if (!s.buf) return NCC_ERR_NOMEM;
  put_graph(&s, g);
  sink_flush(&s);
  if (s.st == NCC_OK && fflush(f) != 0)
    s.st = ncc_error(NCC_ERR_INPUT, "cannot write the text IR");
  ncc_free(s.buf, FILE_CHUNK);
  return s.st;
}

/* The result must be freeable with free() (public contract), while the
 * allocation hook must see our allocations: build with the hook, then copy. */
char *ncc_graph_print_string(const ncc_graph *g) {
  sink s = {.kind = SINK_GROW};
  put_graph(&s, g);
  char *out = NULL;
  if (s.st == NCC_OK) {
    out = malloc(s.len + 1);
    if (out) {
      if (s.len) memcpy(out, s.buf, s.len);
      out[s.len] = 0;
    } else {
      ncc_error(NCC_ERR_NOMEM, "out of memory (%zu bytes)", s.len + 1);
    }
  }
  ncc_free(s.buf, s.cap);
  return out;
}
