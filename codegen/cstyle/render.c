/* codegen/cstyle/render.c — the one C-family renderer (cstyle.h).
 *
 * Everything dialect-specific is read from the ncc_cstyle_lang; this file
 * decides structure only: how each top-level loop maps onto work-groups
 * (rules R0-R3 in cstyle.h), declarations, scalarized vector lanes and
 * masked accesses. Index arithmetic is i64 throughout, as in the kernel IR.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "../escape.h"
#include "cstyle.h"

/* ---- string buffer ---- */

static void sb_reserve(ncc_sbuf *b, size_t extra) {
  if (b->oom || b->len + extra + 1 <= b->cap) return;
  size_t nc = b->cap ? b->cap : 4096;
  while (nc < b->len + extra + 1) nc *= 2;
  char *ns = ncc_realloc(b->s, b->cap, nc);
  if (!ns) {
    b->oom = true;
    return;
  }
  b->s = ns;
  b->cap = nc;
}

void ncc_sbuf_printf(ncc_sbuf *b, const char *fmt, ...) {
  if (b->oom) return;
  va_list ap;
  va_start(ap, fmt);
  char small[256];
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  sb_reserve(b, (size_t)n);
  if (b->oom) return;
  if ((size_t)n < sizeof small) {
    memcpy(b->s + b->len, small, (size_t)n + 1);
  } else {
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
  }
  b->len += (size_t)n;
}

void ncc_sbuf_puts(ncc_sbuf *b, const char *s) {
  size_t n = strlen(s);
  sb_reserve(b, n);
  if (b->oom) return;
  memcpy(b->s + b->len, s, n + 1);
  b->len += n;
}

void ncc_sbuf_free(ncc_sbuf *b) {
  ncc_free(b->s, b->cap);
  memset(b, 0, sizeof *b);
}

/* ---- host evaluation of launch sizes ---- */

bool ncc_cstyle_eval(const kir_expr *e, const int64_t *syms, int64_t *out) {
  int64_t a, b;
  switch (e->k) {
  case KIR_E_CONST:
    if (e->dt != NCC_DT_I64) return false;
    *out = e->i;
    return true;
  case KIR_E_SYM: *out = syms[e->id]; return true;
  case KIR_E_BIN:
    if (e->dt != NCC_DT_I64 || !ncc_cstyle_eval(e->a, syms, &a) ||
        !ncc_cstyle_eval(e->b, syms, &b))
      return false;
    switch (e->op) {
    case KIR_ADD: *out = a + b; return true;
    case KIR_SUB: *out = a - b; return true;
    case KIR_MUL: *out = a * b; return true;
    case KIR_DIV: *out = b ? a / b : 0; return true;
    case KIR_REM: *out = b ? a % b : 0; return true;
    case KIR_MIN: *out = a < b ? a : b; return true;
    case KIR_MAX: *out = a > b ? a : b; return true;
    default: return false;
    }
  default: return false;
  }
}

int64_t ncc_cstyle_groups(const ncc_cstyle_info *info, const int64_t *syms,
                          int64_t max_groups) {
  int64_t best = 1;
  for (int t = 0; t < info->n_terms; t++) {
    const ncc_cstyle_term *tm = &info->terms[t];
    int64_t total = 1, lo, hi;
    bool ok = true;
    for (int i = 0; i < tm->n && ok; i++) {
      ok = ncc_cstyle_eval(tm->lo[i], syms, &lo) && ncc_cstyle_eval(tm->hi[i], syms, &hi);
      int64_t trip = ok && hi > lo ? hi - lo : 0;
      if (ok && trip > 0 && total > INT64_MAX / trip) total = INT64_MAX;
      else if (ok) total *= trip;
    }
    int64_t pg = tm->per_group > 0 ? tm->per_group : info->local_size;
    int64_t g = ok ? (total + pg - 1) / pg : max_groups; /* unknown: fill */
    if (g > best) best = g;
  }
  return best > max_groups ? max_groups : best;
}

/* ---- renderer state ---- */

typedef struct R {
  const ncc_cstyle_lang *L;
  const kir_kernel *k;
  ncc_sbuf *o;
  int ind;
  int tmp; /* counter for fresh names */
} R;

#define OUT(...) ncc_sbuf_printf(r->o, __VA_ARGS__)

static void indent(R *r) { OUT("%*s", 2 * r->ind, ""); }

/* Names in the source go through codegen/escape.h: a buffer's name in a
 * comment. */
static void put_comment(R *r, const char *s) {
  char *e = ncc_escape_dup(NCC_ESC_COMMENT, s);
  if (!e) r->o->oom = true;
  else ncc_sbuf_puts(r->o, e);
  ncc_free(e, 0);
}

static const char *T(R *r, ncc_dtype dt) {
  const char *t = dt > NCC_DT_UNDEF && dt < NCC_DT_COUNT ? r->L->type[dt] : NULL;
  NCC_ASSERT(t != NULL);
  return t;
}

static const char *I64(R *r) { return T(r, NCC_DT_I64); }

static bool is_float(ncc_dtype dt) {
  return dt == NCC_DT_F32 || dt == NCC_DT_F64 || dt == NCC_DT_F16;
}

/* Helper function name suffix per dtype ("f32", "i64", ...). */
static const char *helper_type(ncc_dtype dt) {
  switch (dt) {
  case NCC_DT_F64: return "f64";
  case NCC_DT_I64: return "i64";
  case NCC_DT_F32: return "f32";
  default: return "i32"; /* i32, i8, u8, bool promote to int */
  }
}

/* ---- expressions ---- */

static void expr(R *r, const kir_expr *e, int lane);

static void local_name(R *r, int id, int lane) {
  if (r->k->locals[id].lanes > 1)
    OUT("l%d_%d", id, lane);
  else
    OUT("l%d", id);
}

static void buf_name(R *r, int b) { OUT("b%d", b); }

static void emit_const(R *r, const kir_expr *e) {
  switch (e->dt) {
  case NCC_DT_I64:
    if (e->i == INT64_MIN) /* its magnitude has no literal */
      OUT("(-9223372036854775807%s - 1%s)", r->L->i64_suffix, r->L->i64_suffix);
    else if (e->i < 0)
      OUT("(%" PRId64 "%s)", e->i, r->L->i64_suffix);
    else
      OUT("%" PRId64 "%s", e->i, r->L->i64_suffix);
    return;
  case NCC_DT_BOOL: OUT("%d", e->i ? 1 : 0); return;
  case NCC_DT_F32:
  case NCC_DT_F64: {
    bool f32 = e->dt == NCC_DT_F32;
    double v = f32 ? (double)(float)e->f : e->f;
    if (isnan(v)) {
      OUT("((%s)NCC_NAN)", T(r, e->dt));
      return;
    }
    if (isinf(v)) {
      OUT("(%s(%s)NCC_INF)", v < 0 ? "-" : "", T(r, e->dt));
      return;
    }
    char s[48];
    snprintf(s, sizeof s, f32 ? "%.9g" : "%.17g", v);
    bool dot = strpbrk(s, ".eEn") != NULL;
    OUT("%s%s%s%s%s", v < 0 ? "(" : "", s, dot ? "" : ".0", f32 ? "f" : "",
        v < 0 ? ")" : "");
    return;
  }
  default: OUT("((%s)%" PRId64 ")", T(r, e->dt), e->i); return;
  }
}

/* buf[index (+ lane)], converted from memory (bool bytes -> 0/1). */
static void emit_access(R *r, int buf, const kir_expr *index, int lane) {
  bool is_bool = r->k->bufs[buf].dt == NCC_DT_BOOL;
  if (is_bool) OUT("(");
  buf_name(r, buf);
  OUT("[");
  expr(r, index, 0);
  if (lane) OUT(" + %d", lane);
  OUT("]");
  if (is_bool) OUT(" != 0)");
}

static void emit_load(R *r, const kir_expr *e, int lane) {
  const kir_buf *b = &r->k->bufs[e->id];
  ncc_dtype dt = b->dt == NCC_DT_BOOL ? NCC_DT_BOOL : b->dt;
  if (e->b) { /* guarded: nothing is read where the guard is false */
    OUT("((");
    expr(r, e->b, 0);
    OUT(") ? ");
    emit_access(r, e->id, e->a, lane);
    OUT(" : (%s)0)", T(r, dt));
    return;
  }
  if (e->c) { /* lanes >= count are 0 and not read */
    OUT("(%d < (", lane);
    expr(r, e->c, 0);
    OUT(") ? ");
    emit_access(r, e->id, e->a, lane);
    OUT(" : (%s)0)", T(r, dt));
    return;
  }
  emit_access(r, e->id, e->a, lane);
}

static const char *binop_sym(kir_op op) {
  switch (op) {
  case KIR_ADD: return "+";
  case KIR_SUB: return "-";
  case KIR_MUL: return "*";
  case KIR_DIV: return "/";
  case KIR_REM: return "%";
  case KIR_LT: return "<";
  case KIR_LE: return "<=";
  case KIR_GT: return ">";
  case KIR_GE: return ">=";
  case KIR_EQ: return "==";
  case KIR_NE: return "!=";
  case KIR_AND: return "&";
  case KIR_OR: return "|";
  default: return NULL;
  }
}

static void call1(R *r, const char *fn, const kir_expr *a, int lane) {
  OUT("%s(", fn);
  expr(r, a, lane);
  OUT(")");
}

static void call2(R *r, const char *fn, const kir_expr *a, const kir_expr *b,
                  int lane) {
  OUT("%s(", fn);
  expr(r, a, lane);
  OUT(", ");
  expr(r, b, lane);
  OUT(")");
}

static const char *math_fn(R *r, kir_op op, ncc_dtype dt) {
  const char *fn = dt == NCC_DT_F64 ? r->L->fn_f64[op] : r->L->fn_f32[op];
  NCC_ASSERT(fn != NULL);
  return fn;
}

static void emit_un(R *r, const kir_expr *e, int lane) {
  ncc_dtype dt = e->a->dt;
  switch (e->op) {
  case KIR_NEG: OUT("(-"); expr(r, e->a, lane); OUT(")"); return;
  case KIR_NOT:
    OUT(dt == NCC_DT_BOOL ? "(!" : "(~");
    expr(r, e->a, lane);
    OUT(")");
    return;
  case KIR_ABS:
    if (!is_float(dt)) {
      OUT("ncc_abs_%s(", helper_type(dt));
      expr(r, e->a, lane);
      OUT(")");
      return;
    }
    break;
  default: break;
  }
  NCC_ASSERT(is_float(dt));
  call1(r, math_fn(r, e->op, dt), e->a, lane);
}

static void emit_bin(R *r, const kir_expr *e, int lane) {
  ncc_dtype dt = e->a->dt;
  if (e->op == KIR_MIN || e->op == KIR_MAX) {
    char fn[32];
    snprintf(fn, sizeof fn, "ncc_%s_%s", e->op == KIR_MIN ? "min" : "max",
             helper_type(dt));
    call2(r, fn, e->a, e->b, lane);
    return;
  }
  if (is_float(dt) && (e->op == KIR_REM || e->op == KIR_POW)) {
    call2(r, math_fn(r, e->op, dt), e->a, e->b, lane);
    return;
  }
  const char *sym = binop_sym(e->op);
  NCC_ASSERT(sym != NULL);
  OUT("(");
  expr(r, e->a, lane);
  OUT(" %s ", sym);
  expr(r, e->b, lane);
  OUT(")");
}

static void emit_cast(R *r, const kir_expr *e, int lane) {
  if (e->dt == NCC_DT_BOOL) {
    OUT("((");
    expr(r, e->a, lane);
    OUT(") != 0)");
    return;
  }
  OUT("((%s)(", T(r, e->dt));
  expr(r, e->a, lane);
  OUT("))");
}

static void emit_hreduce(R *r, const kir_expr *e) {
  int n = e->a->lanes;
  if (e->op == KIR_ADD) {
    OUT("(");
    for (int j = 0; j < n; j++) {
      if (j) OUT(" + ");
      expr(r, e->a, j);
    }
    OUT(")");
    return;
  }
  NCC_ASSERT(e->op == KIR_MAX || e->op == KIR_MIN);
  const char *nm = e->op == KIR_MAX ? "max" : "min";
  for (int j = 0; j < n - 1; j++) OUT("ncc_%s_%s(", nm, helper_type(e->dt));
  expr(r, e->a, 0);
  for (int j = 1; j < n; j++) {
    OUT(", ");
    expr(r, e->a, j);
    OUT(")");
  }
}

/* Lane `lane` of e (scalars ignore it). */
static void expr(R *r, const kir_expr *e, int lane) {
  if (e->lanes == 1) lane = 0;
  switch (e->k) {
  case KIR_E_CONST: emit_const(r, e); return;
  case KIR_E_VAR: OUT("i%d", e->id); return;
  case KIR_E_SYM: OUT("s%d", e->id); return;
  case KIR_E_LOCAL: local_name(r, e->id, lane); return;
  case KIR_E_LOAD: emit_load(r, e, lane); return;
  case KIR_E_UN: emit_un(r, e, lane); return;
  case KIR_E_BIN: emit_bin(r, e, lane); return;
  case KIR_E_FMA:
    OUT("%s(", e->dt == NCC_DT_F64 ? r->L->fma_f64 : r->L->fma_f32);
    expr(r, e->a, lane);
    OUT(", ");
    expr(r, e->b, lane);
    OUT(", ");
    expr(r, e->c, lane);
    OUT(")");
    return;
  case KIR_E_DOT4: /* the portable sum; both languages truncate the casts */
    OUT("(");
    expr(r, e->c, lane);
    for (int j = 0; j < 4; j++) {
      OUT(" + (int)(unsigned char)((");
      expr(r, e->a, lane);
      OUT(") >> %d) * (int)(signed char)((", 8 * j);
      expr(r, e->b, lane);
      OUT(") >> %d)", 8 * j);
    }
    OUT(")");
    return;
  case KIR_E_SELECT:
    OUT("((");
    expr(r, e->a, lane);
    OUT(") ? ");
    expr(r, e->b, lane);
    OUT(" : ");
    expr(r, e->c, lane);
    OUT(")");
    return;
  case KIR_E_CAST: emit_cast(r, e, lane); return;
  case KIR_E_SPLAT: expr(r, e->a, 0); return;
  case KIR_E_HREDUCE: emit_hreduce(r, e); return;
  case KIR_E_TILE_LOAD:
  case KIR_E_TILE_ZERO:
  case KIR_E_TILE_DP: break; /* CPU matrix tiles: lowered for the LLVM emitter only */
  }
  NCC_ASSERT(!"unknown kernel IR expression");
}

/* ---- statements (sequential) ---- */

static void stmts(R *r, const kir_stmt *s);
static void stmt(R *r, const kir_stmt *s);

static void emit_store(R *r, const kir_stmt *s) {
  int lanes = s->value->lanes;
  bool is_bool = r->k->bufs[s->buf].dt == NCC_DT_BOOL;
  for (int j = 0; j < lanes; j++) {
    indent(r);
    if (s->count) {
      OUT("if (%d < (", j);
      expr(r, s->count, 0);
      OUT(")) ");
    }
    buf_name(r, s->buf);
    OUT("[");
    expr(r, s->index, 0);
    if (j) OUT(" + %d", j);
    OUT("] = ");
    if (is_bool) OUT("(%s)(", r->L->mem_type[NCC_DT_BOOL]);
    expr(r, s->value, j);
    if (is_bool) OUT(")");
    OUT(";\n");
  }
}

static void emit_assign(R *r, const kir_stmt *s) {
  int lanes = r->k->locals[s->local].lanes;
  if (lanes == 1) {
    indent(r);
    local_name(r, s->local, 0);
    OUT(" = ");
    expr(r, s->value, 0);
    OUT(";\n");
    return;
  }
  /* all lanes are computed before any is written (a lane may read the
   * local's old value through a horizontal reduction) */
  const char *t = T(r, r->k->locals[s->local].dt);
  int id = r->tmp++;
  indent(r);
  OUT("{\n");
  r->ind++;
  for (int j = 0; j < lanes; j++) {
    indent(r);
    OUT("%s t%d_%d = ", t, id, j);
    expr(r, s->value, j);
    OUT(";\n");
  }
  for (int j = 0; j < lanes; j++) {
    indent(r);
    local_name(r, s->local, j);
    OUT(" = t%d_%d;\n", id, j);
  }
  r->ind--;
  indent(r);
  OUT("}\n");
}

static void emit_for_seq(R *r, const kir_stmt *s) {
  if (s->mark == KIR_UNROLL && s->factor != 1 && r->L->unroll_pragma) {
    indent(r);
    OUT("%s\n", r->L->unroll_pragma);
  }
  indent(r);
  OUT("for (%s i%d = ", I64(r), s->var);
  expr(r, s->lo, 0);
  OUT("; i%d < ", s->var);
  expr(r, s->hi, 0);
  OUT("; i%d++) {\n", s->var);
  r->ind++;
  stmts(r, s->body);
  r->ind--;
  indent(r);
  OUT("}\n");
}

/* A gpu.thread loop: this work-item's iteration. */
static void emit_thread_loop(R *r, const kir_stmt *s) {
  indent(r);
  OUT("{\n");
  r->ind++;
  indent(r);
  OUT("const %s i%d = ", I64(r), s->var);
  expr(r, s->lo, 0);
  OUT(" + %s;\n", r->L->local_id);
  stmts(r, s->body);
  r->ind--;
  indent(r);
  OUT("}\n");
}

static void stmt(R *r, const kir_stmt *s) {
  switch (s->k) {
  case KIR_S_FOR:
    if (s->mark == KIR_GPU_THREAD)
      emit_thread_loop(r, s);
    else
      emit_for_seq(r, s);
    break;
  case KIR_S_STORE: emit_store(r, s); break;
  case KIR_S_ASSIGN: emit_assign(r, s); break;
  case KIR_S_BARRIER:
    indent(r);
    OUT("%s\n", r->L->barrier);
    break;
  case KIR_S_TILE_STORE: NCC_ASSERT(!"matrix tiles reach the LLVM emitter only"); break;
  }
}

static void stmts(R *r, const kir_stmt *s) {
  for (; s; s = s->next) stmt(r, s);
}

/* ---- analysis ---- */

typedef bool (*expr_pred)(const kir_expr *e, const void *ctx);

static bool any_expr(const kir_expr *e, expr_pred p, const void *ctx) {
  if (!e) return false;
  if (p(e, ctx)) return true;
  return any_expr(e->a, p, ctx) || any_expr(e->b, p, ctx) || any_expr(e->c, p, ctx);
}

static bool any_stmt(const kir_stmt *s, expr_pred p, const void *ctx) {
  for (; s; s = s->next) {
    if (any_expr(s->lo, p, ctx) || any_expr(s->hi, p, ctx) ||
        any_expr(s->index, p, ctx) || any_expr(s->value, p, ctx) ||
        any_expr(s->count, p, ctx))
      return true;
    if (s->k == KIR_S_FOR && any_stmt(s->body, p, ctx)) return true;
  }
  return false;
}

static bool is_output_load(const kir_expr *e, const void *ctx) {
  const kir_kernel *k = ctx;
  return e->k == KIR_E_LOAD && k->bufs[e->id].is_output;
}

static bool not_host_evaluable(const kir_expr *e, const void *ctx) {
  (void)ctx;
  if (e->k == KIR_E_CONST || e->k == KIR_E_SYM) return false;
  if (e->k == KIR_E_BIN && e->dt == NCC_DT_I64) return false;
  return true;
}

/* Anything but constants, symbols, i64 arithmetic and the variable *ctx. */
static bool not_uniform_in(const kir_expr *e, const void *ctx) {
  if (e->k == KIR_E_VAR) return e->id != *(const int *)ctx;
  return not_host_evaluable(e, NULL);
}

static void collect_syms(const kir_expr *e, ncc_cstyle_info *info) {
  if (!e || info->n_syms > (int)(sizeof info->syms / sizeof info->syms[0])) return;
  if (e->k == KIR_E_SYM) {
    bool seen = false;
    for (int i = 0; i < info->n_syms; i++) seen |= info->syms[i] == e->id;
    if (!seen && info->n_syms == (int)(sizeof info->syms / sizeof info->syms[0])) {
      info->n_syms++; /* one past the end: too many (reported by the caller) */
      return;
    }
    if (!seen) {
      int i = info->n_syms++;
      while (i > 0 && info->syms[i - 1] > e->id) {
        info->syms[i] = info->syms[i - 1];
        i--;
      }
      info->syms[i] = e->id;
    }
  }
  collect_syms(e->a, info);
  collect_syms(e->b, info);
  collect_syms(e->c, info);
}

static void collect_syms_stmts(const kir_stmt *s, ncc_cstyle_info *info) {
  for (; s; s = s->next) {
    collect_syms(s->lo, info);
    collect_syms(s->hi, info);
    collect_syms(s->index, info);
    collect_syms(s->value, info);
    collect_syms(s->count, info);
    if (s->k == KIR_S_FOR) collect_syms_stmts(s->body, info);
  }
}

/* The loops from P down to its vector loop, when P's body is such a chain
 * (only scalar assignments before each loop, nothing after). */
typedef struct chain {
  const kir_stmt *loop[NCC_CSTYLE_MAX_NEST];
  int n;
} chain;

static bool chain_from(const kir_stmt *body, chain *c) {
  const kir_stmt *f = NULL;
  for (const kir_stmt *s = body; s; s = s->next) {
    if (f) return false;
    if (s->k == KIR_S_FOR)
      f = s;
    else if (s->k != KIR_S_ASSIGN)
      return false;
  }
  if (!f || c->n >= NCC_CSTYLE_MAX_NEST) return false;
  c->loop[c->n++] = f;
  if (f->mark == KIR_VECTOR) return true;
  if (f->mark == KIR_SERIAL || f->mark == KIR_UNROLL) return chain_from(f->body, c);
  return false;
}

typedef enum rule { RULE_FLAT, RULE_GROUP, RULE_ROWS, RULE_EXPLICIT, RULE_SINGLE } rule;

static rule classify(const kir_kernel *k, const kir_stmt *s, chain *c) {
  c->n = 0;
  if (s->k != KIR_S_FOR) return RULE_SINGLE;
  if (s->mark == KIR_GPU_GROUP) return RULE_EXPLICIT;
  if (s->mark != KIR_PARALLEL) return RULE_SINGLE;
  c->loop[c->n++] = s;
  bool indep = !any_stmt(k->body, is_output_load, k);
  if (!indep || !chain_from(s->body, c)) {
    c->n = 1;
    return RULE_ROWS;
  }
  bool flat = !any_expr(s->lo, not_host_evaluable, NULL) &&
              !any_expr(s->hi, not_host_evaluable, NULL);
  bool group = true;
  for (int i = 1; i < c->n; i++) {
    const kir_stmt *l = c->loop[i];
    flat &= !any_expr(l->lo, not_host_evaluable, NULL) &&
            !any_expr(l->hi, not_host_evaluable, NULL);
    group &= !any_expr(l->lo, not_uniform_in, &s->var) &&
             !any_expr(l->hi, not_uniform_in, &s->var);
  }
  if (flat) return RULE_FLAT;
  if (group) return RULE_GROUP;
  c->n = 1;
  return RULE_ROWS;
}

/* The thread loop directly inside an explicit group loop (its factor is
 * the work-group size). */
static const kir_stmt *thread_loop(const kir_stmt *g) {
  for (const kir_stmt *s = g->body; s; s = s->next)
    if (s->k == KIR_S_FOR && s->mark == KIR_GPU_THREAD) return s;
  return NULL;
}

/* ---- mapped top-level loops ---- */

/* "const T nI = max(0, hi - lo);" for loops [from, c->n) of a chain. */
static void emit_trips(R *r, const chain *c, int from, int id) {
  for (int i = from; i < c->n; i++) {
    indent(r);
    OUT("const %s n%d_%d = ncc_max_i64((0%s), ", I64(r), id, i, r->L->i64_suffix);
    expr(r, c->loop[i]->hi, 0);
    OUT(" - ");
    expr(r, c->loop[i]->lo, 0);
    OUT(");\n");
  }
}

/* Decompose flat index f<id> over loops [from, n) and run the chain's
 * assignments (those before each inner loop) and the vector loop's body. */
static void emit_chain_body(R *r, const chain *c, int from, int id) {
  indent(r);
  OUT("%s r%d = f%d;\n", I64(r), id, id);
  for (int i = c->n - 1; i >= from; i--) {
    indent(r);
    OUT("const %s i%d = ", I64(r), c->loop[i]->var);
    expr(r, c->loop[i]->lo, 0);
    if (i > from)
      OUT(" + r%d %% n%d_%d;\n", id, id, i);
    else
      OUT(" + r%d;\n", id);
    if (i > from) {
      indent(r);
      OUT("r%d /= n%d_%d;\n", id, id, i);
    }
  }
  for (int i = from; i < c->n - 1; i++)
    for (const kir_stmt *s = c->loop[i]->body; s && s != c->loop[i + 1]; s = s->next)
      stmt(r, s);
  stmts(r, c->loop[c->n - 1]->body);
}

static void emit_flat(R *r, const chain *c) {
  int id = r->tmp++;
  indent(r);
  OUT("{\n");
  r->ind++;
  emit_trips(r, c, 0, id);
  indent(r);
  OUT("const %s tot%d = ", I64(r), id);
  for (int i = 0; i < c->n; i++) OUT("%sn%d_%d", i ? " * " : "", id, i);
  OUT(";\n");
  indent(r);
  OUT("for (%s f%d = %s; f%d < tot%d; f%d += %s) {\n", I64(r), id, r->L->global_id,
      id, id, id, r->L->global_size);
  r->ind++;
  emit_chain_body(r, c, 0, id);
  r->ind--;
  indent(r);
  OUT("}\n");
  r->ind--;
  indent(r);
  OUT("}\n");
}

static void emit_group(R *r, const chain *c) {
  const kir_stmt *p = c->loop[0];
  int id = r->tmp++;
  indent(r);
  OUT("for (%s i%d = ", I64(r), p->var);
  expr(r, p->lo, 0);
  OUT(" + %s; i%d < ", r->L->group_id, p->var);
  expr(r, p->hi, 0);
  OUT("; i%d += %s) {\n", p->var, r->L->num_groups);
  r->ind++;
  for (const kir_stmt *s = p->body; s && s != c->loop[1]; s = s->next) stmt(r, s);
  emit_trips(r, c, 1, id);
  indent(r);
  OUT("const %s tot%d = ", I64(r), id);
  for (int i = 1; i < c->n; i++) OUT("%sn%d_%d", i > 1 ? " * " : "", id, i);
  OUT(";\n");
  indent(r);
  OUT("for (%s f%d = %s; f%d < tot%d; f%d += %s) {\n", I64(r), id, r->L->local_id,
      id, id, id, r->L->local_size);
  r->ind++;
  emit_chain_body(r, c, 1, id);
  r->ind--;
  indent(r);
  OUT("}\n");
  r->ind--;
  indent(r);
  OUT("}\n");
}

/* A loop spread over (global work-items | work-groups), grid-stride. */
static void emit_strided(R *r, const kir_stmt *s, const char *first,
                         const char *step) {
  indent(r);
  OUT("for (%s i%d = ", I64(r), s->var);
  expr(r, s->lo, 0);
  OUT(" + %s; i%d < ", first, s->var);
  expr(r, s->hi, 0);
  OUT("; i%d += %s) {\n", s->var, step);
  r->ind++;
  stmts(r, s->body);
  r->ind--;
  indent(r);
  OUT("}\n");
}

static void add_term(ncc_cstyle_info *info, const chain *c, int from, int to,
                     int per_group) {
  if (info->n_terms >= NCC_CSTYLE_MAX_TERMS) return; /* groups: fill */
  ncc_cstyle_term *t = &info->terms[info->n_terms++];
  t->n = 0;
  for (int i = from; i < to; i++) {
    t->lo[t->n] = c->loop[i]->lo;
    t->hi[t->n] = c->loop[i]->hi;
    t->n++;
  }
  t->per_group = per_group;
}

/* ---- program prelude ---- */

void ncc_cstyle_prelude(const ncc_cstyle_lang *L, ncc_sbuf *o) {
  ncc_sbuf_printf(o, "/* generated by ncc %s (%s) */\n%s\n", NCC_VERSION_STRING, L->name,
                  L->prelude);
  /* min/max as the CPU emitter computes them (a < b ? a : b, so NaN in a
   * gives b), abs for integers; one set per register type */
  static const ncc_dtype types[] = {NCC_DT_F32, NCC_DT_F64, NCC_DT_I32, NCC_DT_I64};
  for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
    const char *t = L->type[types[i]], *h = helper_type(types[i]);
    if (types[i] == NCC_DT_F64 && L->f64_guard) ncc_sbuf_printf(o, "%s\n", L->f64_guard);
    ncc_sbuf_printf(o, "%s %s ncc_min_%s(%s a, %s b) { return a < b ? a : b; }\n",
                    L->fn_qual, t, h, t, t);
    ncc_sbuf_printf(o, "%s %s ncc_max_%s(%s a, %s b) { return a > b ? a : b; }\n",
                    L->fn_qual, t, h, t, t);
    if (!is_float(types[i]))
      ncc_sbuf_printf(o, "%s %s ncc_abs_%s(%s a) { return a < 0 ? -a : a; }\n", L->fn_qual,
                      t, h, t);
    if (types[i] == NCC_DT_F64 && L->f64_guard) ncc_sbuf_printf(o, "#endif\n");
  }
  ncc_sbuf_puts(o, "\n");
}

/* ---- kernels ---- */

#define GENERIC_LOCAL 256
#define ROWS_LOCAL 64

ncc_status ncc_cstyle_render(const ncc_cstyle_lang *lang, const kir_kernel *k,
                             ncc_sbuf *out, ncc_cstyle_info *info) {
  memset(info, 0, sizeof *info);
  R rr = {.L = lang, .k = k, .o = out};
  R *r = &rr;
  /* classify the top-level statements and size the launch */
  int local = 0;
  bool exact = false, any_rows = false;
  for (const kir_stmt *s = k->body; s; s = s->next) {
    chain c;
    switch (classify(k, s, &c)) {
    case RULE_EXPLICIT: {
      const kir_stmt *t = thread_loop(s);
      if (!t || t->factor <= 0)
        return ncc_error(NCC_ERR_INTERNAL, "kernel %s: gpu.group loop without a gpu.thread loop",
                         k->name);
      if (exact && local != t->factor)
        return ncc_error(NCC_ERR_INTERNAL, "kernel %s: two work-group sizes", k->name);
      exact = true;
      local = t->factor;
      c.loop[0] = s;
      c.n = 1;
      add_term(info, &c, 0, 1, 1);
      break;
    }
    case RULE_FLAT:
      if (!exact && local < GENERIC_LOCAL) local = GENERIC_LOCAL;
      add_term(info, &c, 0, c.n, 0);
      break;
    case RULE_GROUP:
      if (!exact && local < GENERIC_LOCAL) local = GENERIC_LOCAL;
      add_term(info, &c, 0, 1, 1);
      break;
    case RULE_ROWS:
      any_rows = true;
      add_term(info, &c, 0, 1, 0);
      break;
    case RULE_SINGLE: break;
    }
  }
  if (local == 0) local = any_rows ? ROWS_LOCAL : GENERIC_LOCAL;
  info->local_size = local;
  info->exact_local = exact;
  for (int b = 0; b < k->n_bufs; b++)
    if (k->bufs[b].local_elems == 0)
      info->bufs[info->n_bufs++] = b;
    else
      info->local_bytes += k->bufs[b].local_elems * (int64_t)ncc_dtype_size(k->bufs[b].dt);
  collect_syms_stmts(k->body, info);
  if (info->n_syms > (int)(sizeof info->syms / sizeof info->syms[0]))
    return ncc_error(NCC_ERR_UNSUPPORTED, "kernel %s: more than %d symbolic dims", k->name,
                     (int)(sizeof info->syms / sizeof info->syms[0]));

  /* signature; the kernel's name was made by the escaping layer (a kernel
   * named otherwise is a bug, not something to print) */
  if (!ncc_escape_is_ident(k->name))
    return ncc_error(NCC_ERR_INTERNAL, "kernel name '%s' is not a C identifier", k->name);
  OUT("%s ", lang->kernel_decl);
  if (exact && lang->exact_local_attr) {
    OUT(lang->exact_local_attr, local);
    OUT(" ");
  }
  OUT("%s(", k->name);
  for (int i = 0; i < info->n_bufs; i++) {
    const kir_buf *b = &k->bufs[info->bufs[i]];
    OUT("%s\n    %s%s%s *%s b%d /* ", i ? "," : "", lang->buf_qual,
        b->is_output ? "" : "const ", lang->mem_type[b->dt], lang->restrict_kw,
        info->bufs[i]);
    put_comment(r, b->name);
    OUT(" */");
  }
  for (int i = 0; i < info->n_syms; i++)
    OUT("%s\n    const %s s%d", i || info->n_bufs ? "," : "", I64(r), info->syms[i]);
  OUT(") {\n");
  r->ind = 1;
  /* local arrays and locals */
  for (int b = 0; b < k->n_bufs; b++)
    if (k->bufs[b].local_elems > 0) {
      indent(r);
      OUT("%s %s b%d[%" PRId64 "]; /* ", lang->local_qual,
          lang->mem_type[k->bufs[b].dt], b, k->bufs[b].local_elems);
      put_comment(r, k->bufs[b].name);
      OUT(" */\n");
    }
  for (int l = 0; l < k->n_locals; l++) {
    indent(r);
    OUT("%s ", T(r, k->locals[l].dt));
    for (int j = 0; j < k->locals[l].lanes; j++) {
      OUT("%s", j ? ", " : "");
      local_name(r, l, j);
    }
    OUT(";\n");
  }
  /* body */
  for (const kir_stmt *s = k->body; s; s = s->next) {
    chain c;
    switch (classify(k, s, &c)) {
    case RULE_EXPLICIT: emit_strided(r, s, lang->group_id, lang->num_groups); break;
    case RULE_FLAT: emit_flat(r, &c); break;
    case RULE_GROUP: emit_group(r, &c); break;
    case RULE_ROWS: emit_strided(r, s, lang->global_id, lang->global_size); break;
    case RULE_SINGLE:
      indent(r);
      OUT("if (%s == 0) {\n", lang->global_id);
      r->ind++;
      stmt(r, s);
      r->ind--;
      indent(r);
      OUT("}\n");
      break;
    }
  }
  OUT("}\n\n");
  if (out->oom) return ncc_error(NCC_ERR_NOMEM, "out of memory rendering kernel %s", k->name);
  return NCC_OK;
}
