/* codegen/kir.c — kernel IR construction and printing.
 *
 * All nodes live in the kernel's arena. Builders fold the constant index
 * arithmetic that lowering produces everywhere (stride 1, offset 0, static
 * extents), which keeps printed kernels readable and emitted code lean.
 */
#include "kir.h"

#include <inttypes.h>
#include <string.h>

static kir_expr poison = {.k = KIR_E_CONST, .dt = NCC_DT_F32, .lanes = 1};

kir_kernel *kir_kernel_new(const char *name) {
  kir_kernel *k = ncc_calloc(1, sizeof *k);
  if (!k) return NULL;
  ncc_arena_init(&k->arena);
  k->name = ncc_arena_strdup(&k->arena, name);
  k->cost_per_elem = 1.0;
  if (!k->name) {
    kir_kernel_free(k);
    return NULL;
  }
  return k;
}

void kir_kernel_free(kir_kernel *k) {
  if (!k) return;
  for (int b = 0; b < k->n_bufs; b++) ncc_free(k->bufs[b].owned, 0);
  ncc_free(k->locals, 0);
  ncc_arena_release(&k->arena);
  ncc_free(k, sizeof *k);
}

int kir_buf_add(kir_kernel *k, const char *name, ncc_dtype dt, bool is_output) {
  NCC_ASSERT(k->n_bufs < KIR_MAX_BUFS);
  kir_buf *b = &k->bufs[k->n_bufs];
  b->name = ncc_arena_strdup(&k->arena, name);
  if (!b->name) k->oom = true;
  b->dt = dt;
  b->is_output = is_output;
  return k->n_bufs++;
}

int kir_buf_input(kir_kernel *k, int index, ncc_dtype dt) {
  char nm[16];
  snprintf(nm, sizeof nm, "in%d", index);
  int b = kir_buf_add(k, nm, dt, false);
  k->bufs[b].bind = KIR_BIND_INPUT;
  k->bufs[b].index = index;
  return b;
}

int kir_buf_output(kir_kernel *k, int index, ncc_dtype dt) {
  char nm[16];
  snprintf(nm, sizeof nm, "out%d", index);
  int b = kir_buf_add(k, nm, dt, true);
  k->bufs[b].bind = KIR_BIND_OUTPUT;
  k->bufs[b].index = index;
  return b;
}

int kir_buf_local(kir_kernel *k, const char *name, ncc_dtype dt, int64_t elems) {
  int b = kir_buf_add(k, name, dt, false);
  k->bufs[b].bind = KIR_BIND_DATA;
  k->bufs[b].local_elems = elems > 0 ? elems : 1;
  return b;
}

int kir_local_add(kir_kernel *k, ncc_dtype dt, int lanes) {
  if (k->n_locals == k->cap_locals) {
    int nc = k->cap_locals ? 2 * k->cap_locals : 16;
    kir_local *nl = ncc_realloc(k->locals, sizeof *nl * (size_t)k->cap_locals,
                                sizeof *nl * (size_t)nc);
    if (!nl) {
      k->oom = true;
      return 0;
    }
    k->locals = nl;
    k->cap_locals = nc;
  }
  k->locals[k->n_locals].dt = dt;
  k->locals[k->n_locals].lanes = lanes;
  return k->n_locals++;
}

int kir_var_new(kir_kernel *k) { return k->n_vars++; }

static kir_expr *node(kir_kernel *k, kir_ek kind, ncc_dtype dt, int lanes) {
  kir_expr *e = ncc_arena_alloc(&k->arena, sizeof *e);
  if (!e) {
    k->oom = true;
    return &poison;
  }
  e->k = kind;
  e->dt = dt;
  e->lanes = lanes;
  return e;
}

kir_expr *kir_const_f(kir_kernel *k, ncc_dtype dt, double v) {
  kir_expr *e = node(k, KIR_E_CONST, dt, 1);
  if (e != &poison) e->f = v;
  return e;
}

kir_expr *kir_const_i(kir_kernel *k, int64_t v) {
  kir_expr *e = node(k, KIR_E_CONST, NCC_DT_I64, 1);
  if (e != &poison) e->i = v;
  return e;
}

static kir_expr *leaf(kir_kernel *k, kir_ek kind, ncc_dtype dt, int lanes,
                      int id) {
  kir_expr *e = node(k, kind, dt, lanes);
  if (e != &poison) e->id = id;
  return e;
}

kir_expr *kir_var(kir_kernel *k, int var) {
  return leaf(k, KIR_E_VAR, NCC_DT_I64, 1, var);
}

kir_expr *kir_sym(kir_kernel *k, int sym) {
  return leaf(k, KIR_E_SYM, NCC_DT_I64, 1, sym);
}

kir_expr *kir_local_ref(kir_kernel *k, int local) {
  if (k->oom) return &poison;
  NCC_ASSERT(local >= 0 && local < k->n_locals);
  return leaf(k, KIR_E_LOCAL, k->locals[local].dt, k->locals[local].lanes,
              local);
}

kir_expr *kir_loadv(kir_kernel *k, int buf, kir_expr *index, int lanes,
                    kir_expr *count) {
  NCC_ASSERT(buf >= 0 && buf < k->n_bufs);
  kir_expr *e = leaf(k, KIR_E_LOAD, k->bufs[buf].dt, lanes, buf);
  if (e != &poison) {
    e->a = index;
    e->c = count;
  }
  return e;
}

kir_expr *kir_load_guarded(kir_kernel *k, int buf, kir_expr *index,
                           kir_expr *guard) {
  kir_expr *e = kir_loadv(k, buf, index, 1, NULL);
  if (e->k == KIR_E_LOAD && guard) e->b = guard;
  return e;
}

kir_expr *kir_load(kir_kernel *k, int buf, kir_expr *index) {
  return kir_loadv(k, buf, index, 1, NULL);
}

static bool is_compare(kir_op op) { return op >= KIR_LT && op <= KIR_NE; }

kir_expr *kir_un(kir_kernel *k, kir_op op, kir_expr *a) {
  kir_expr *e = node(k, KIR_E_UN, a->dt, a->lanes);
  if (e != &poison) {
    e->op = op;
    e->a = a;
  }
  return e;
}

kir_expr *kir_bin(kir_kernel *k, kir_op op, kir_expr *a, kir_expr *b) {
  if (!k->oom) NCC_ASSERT(a->lanes == b->lanes && a->dt == b->dt);
  ncc_dtype dt = is_compare(op) ? NCC_DT_BOOL : a->dt;
  kir_expr *e = node(k, KIR_E_BIN, dt, a->lanes);
  if (e != &poison) {
    e->op = op;
    e->a = a;
    e->b = b;
  }
  return e;
}

kir_expr *kir_fma(kir_kernel *k, kir_expr *a, kir_expr *b, kir_expr *c) {
  kir_expr *e = node(k, KIR_E_FMA, a->dt, a->lanes);
  if (e != &poison) {
    e->a = a;
    e->b = b;
    e->c = c;
  }
  return e;
}

kir_expr *kir_dot4(kir_kernel *k, kir_expr *a, kir_expr *b, kir_expr *c) {
  kir_expr *e = node(k, KIR_E_DOT4, NCC_DT_I32, c->lanes);
  if (e != &poison) {
    e->a = a;
    e->b = b;
    e->c = c;
  }
  return e;
}

static int64_t tile_shape(int rows, int colsb) {
  NCC_ASSERT(rows >= 1 && rows <= 16 && colsb >= 4 && colsb <= 64 && colsb % 4 == 0);
  return (int64_t)rows | (int64_t)colsb << 16;
}

kir_expr *kir_tile_load(kir_kernel *k, int buf, kir_expr *index, kir_expr *stride, int rows,
                        int colsb) {
  NCC_ASSERT(buf >= 0 && buf < k->n_bufs);
  kir_expr *e = leaf(k, KIR_E_TILE_LOAD, NCC_DT_I32, 256, buf);
  if (e != &poison) {
    e->i = tile_shape(rows, colsb);
    e->a = index;
    e->b = stride;
  }
  return e;
}

kir_expr *kir_tile_zero(kir_kernel *k, int rows, int colsb) {
  kir_expr *e = node(k, KIR_E_TILE_ZERO, NCC_DT_I32, 256);
  if (e != &poison) e->i = tile_shape(rows, colsb);
  return e;
}

kir_expr *kir_tile_dp(kir_kernel *k, kir_tile_op op, kir_expr *a, kir_expr *b, kir_expr *c,
                      int rows, int colsb, int kbytes) {
  kir_expr *e = node(k, KIR_E_TILE_DP, NCC_DT_I32, 256);
  if (e != &poison) {
    NCC_ASSERT(kbytes >= 4 && kbytes <= 64 && kbytes % 4 == 0);
    e->id = (int)op;
    e->i = tile_shape(rows, colsb) | (int64_t)kbytes << 32;
    e->a = a;
    e->b = b;
    e->c = c;
  }
  return e;
}

kir_expr *kir_select(kir_kernel *k, kir_expr *c, kir_expr *a, kir_expr *b) {
  kir_expr *e = node(k, KIR_E_SELECT, a->dt, a->lanes);
  if (e != &poison) {
    e->a = c;
    e->b = a;
    e->c = b;
  }
  return e;
}

kir_expr *kir_cast(kir_kernel *k, ncc_dtype dt, kir_expr *a) {
  if (a->dt == dt) return a;
  kir_expr *e = node(k, KIR_E_CAST, dt, a->lanes);
  if (e != &poison) e->a = a;
  return e;
}

kir_expr *kir_splat(kir_kernel *k, kir_expr *a, int lanes) {
  if (lanes == 1) return a;
  kir_expr *e = node(k, KIR_E_SPLAT, a->dt, lanes);
  if (e != &poison) e->a = a;
  return e;
}

kir_expr *kir_hreduce(kir_kernel *k, kir_op op, kir_expr *a) {
  if (a->lanes == 1) return a;
  kir_expr *e = node(k, KIR_E_HREDUCE, a->dt, 1);
  if (e != &poison) {
    e->op = op;
    e->a = a;
  }
  return e;
}

bool kir_is_const(const kir_expr *e, int64_t v) {
  return e->k == KIR_E_CONST && e->dt == NCC_DT_I64 && e->i == v;
}

kir_expr *kir_add(kir_kernel *k, kir_expr *a, kir_expr *b) {
  if (kir_is_const(a, 0)) return b;
  if (kir_is_const(b, 0)) return a;
  if (a->k == KIR_E_CONST && b->k == KIR_E_CONST && a->dt == NCC_DT_I64)
    return kir_const_i(k, a->i + b->i);
  return kir_bin(k, KIR_ADD, a, b);
}

kir_expr *kir_mul(kir_kernel *k, kir_expr *a, kir_expr *b) {
  if (kir_is_const(a, 1)) return b;
  if (kir_is_const(b, 1)) return a;
  if (kir_is_const(a, 0) || kir_is_const(b, 0)) return kir_const_i(k, 0);
  if (a->k == KIR_E_CONST && b->k == KIR_E_CONST && a->dt == NCC_DT_I64)
    return kir_const_i(k, a->i * b->i);
  return kir_bin(k, KIR_MUL, a, b);
}

kir_expr *kir_min(kir_kernel *k, kir_expr *a, kir_expr *b) {
  if (a->k == KIR_E_CONST && b->k == KIR_E_CONST && a->dt == NCC_DT_I64)
    return kir_const_i(k, a->i < b->i ? a->i : b->i);
  return kir_bin(k, KIR_MIN, a, b);
}

kir_expr *kir_cdiv(kir_kernel *k, kir_expr *a, int64_t d) {
  if (d == 1) return a;
  if (a->k == KIR_E_CONST && a->dt == NCC_DT_I64)
    return kir_const_i(k, (a->i + d - 1) / d);
  return kir_bin(k, KIR_DIV, kir_add(k, a, kir_const_i(k, d - 1)),
                 kir_const_i(k, d));
}

static kir_stmt *stmt(kir_kernel *k, kir_block *blk, kir_sk kind) {
  kir_stmt *s = ncc_arena_alloc(&k->arena, sizeof *s);
  if (!s) {
    k->oom = true;
    return NULL;
  }
  s->k = kind;
  if (blk->tail)
    blk->tail->next = s;
  else
    blk->head = s;
  blk->tail = s;
  return s;
}

kir_stmt *kir_for(kir_kernel *k, kir_block *blk, int var, kir_expr *lo,
                  kir_expr *hi, kir_mark mark, int factor) {
  kir_stmt *s = stmt(k, blk, KIR_S_FOR);
  if (!s) return NULL;
  s->var = var;
  s->lo = lo;
  s->hi = hi;
  s->mark = mark;
  s->factor = factor;
  return s;
}

void kir_store(kir_kernel *k, kir_block *blk, int buf, kir_expr *index,
               kir_expr *value, kir_expr *count) {
  kir_stmt *s = stmt(k, blk, KIR_S_STORE);
  if (!s) return;
  s->buf = buf;
  s->index = index;
  s->value = value;
  s->count = count;
}

void kir_assign(kir_kernel *k, kir_block *blk, int local, kir_expr *value) {
  kir_stmt *s = stmt(k, blk, KIR_S_ASSIGN);
  if (!s) return;
  s->local = local;
  s->value = value;
}

void kir_tile_store(kir_kernel *k, kir_block *blk, int buf, kir_expr *index, kir_expr *stride,
                    kir_expr *tile, int rows, int colsb) {
  kir_stmt *s = stmt(k, blk, KIR_S_TILE_STORE);
  if (!s) return;
  s->buf = buf;
  s->index = index;
  s->count = stride;
  s->value = tile;
  s->factor = (int)tile_shape(rows, colsb);
}

void kir_barrier(kir_kernel *k, kir_block *blk) { stmt(k, blk, KIR_S_BARRIER); }

kir_block kir_body_begin(void) {
  kir_block b = {NULL, NULL};
  return b;
}

void kir_body_end(kir_stmt *loop, kir_block *body) {
  if (loop) loop->body = body->head;
}

void kir_kernel_set_body(kir_kernel *k, kir_block *blk) { k->body = blk->head; }

/* ---- printer ---- */

static const char *const op_names[KIR_OP_COUNT] = {
    "add", "sub", "mul", "div", "rem", "min",  "max", "pow",   "lt",
    "le",  "gt",  "ge",  "eq",  "ne",  "and",  "or",  "neg",   "abs",
    "sqrt", "exp", "log", "log1p", "erf", "tanh", "not", "floor",
    "ceil", "round", "sin", "cos", "tan", "asin", "acos", "atan",
    "sinh", "cosh", "asinh", "acosh", "atanh", "rbf16", "rf16"};

const char *kir_op_name(kir_op op) {
  return op >= 0 && op < KIR_OP_COUNT ? op_names[op] : "?";
}

static void print_type(ncc_dtype dt, int lanes, FILE *f) {
  if (lanes > 1)
    fprintf(f, "<%d x %s>", lanes, ncc_dtype_name(dt));
  else
    fprintf(f, "%s", ncc_dtype_name(dt));
}

static void print_expr(const kir_kernel *k, const kir_expr *e, FILE *f);

/* "a, b, c)": the operands of a three-operand node. */
static void print_abc(const kir_kernel *k, const kir_expr *e, FILE *f) {
  print_expr(k, e->a, f);
  fprintf(f, ", ");
  print_expr(k, e->b, f);
  fprintf(f, ", ");
  print_expr(k, e->c, f);
  fprintf(f, ")");
}

static void print_expr(const kir_kernel *k, const kir_expr *e, FILE *f) {
  switch (e->k) {
  case KIR_E_CONST:
    if (e->dt == NCC_DT_I64)
      fprintf(f, "%" PRId64, e->i);
    else if (e->dt == NCC_DT_BOOL)
      fprintf(f, "%s", e->i ? "true" : "false");
    else
      fprintf(f, "%.9g", e->f);
    break;
  case KIR_E_VAR: fprintf(f, "i%d", e->id); break;
  case KIR_E_SYM: fprintf(f, "$s%d", e->id); break;
  case KIR_E_LOCAL: fprintf(f, "%%l%d", e->id); break;
  case KIR_E_LOAD:
    fprintf(f, "%s[", k->bufs[e->id].name);
    print_expr(k, e->a, f);
    if (e->lanes > 1) fprintf(f, " +: %d", e->lanes);
    if (e->c) {
      fprintf(f, " if < ");
      print_expr(k, e->c, f);
    }
    if (e->b) {
      fprintf(f, " if ");
      print_expr(k, e->b, f);
    }
    fprintf(f, "]");
    break;
  case KIR_E_UN:
    fprintf(f, "%s(", kir_op_name(e->op));
    print_expr(k, e->a, f);
    fprintf(f, ")");
    break;
  case KIR_E_BIN:
    fprintf(f, "%s(", kir_op_name(e->op));
    print_expr(k, e->a, f);
    fprintf(f, ", ");
    print_expr(k, e->b, f);
    fprintf(f, ")");
    break;
  case KIR_E_FMA:
  case KIR_E_SELECT:
  case KIR_E_DOT4:
    fprintf(f, "%s(", e->k == KIR_E_FMA ? "fma" : e->k == KIR_E_DOT4 ? "dot4" : "select");
    print_abc(k, e, f);
    break;
  case KIR_E_CAST:
    fprintf(f, "cast<");
    print_type(e->dt, 1, f);
    fprintf(f, ">(");
    print_expr(k, e->a, f);
    fprintf(f, ")");
    break;
  case KIR_E_SPLAT:
    fprintf(f, "splat<%d>(", e->lanes);
    print_expr(k, e->a, f);
    fprintf(f, ")");
    break;
  case KIR_E_HREDUCE:
    fprintf(f, "reduce_%s(", kir_op_name(e->op));
    print_expr(k, e->a, f);
    fprintf(f, ")");
    break;
  case KIR_E_TILE_LOAD:
    fprintf(f, "tile<%dx%d>(%s[", (int)(e->i & 0xffff), (int)(e->i >> 16 & 0xffff),
            k->bufs[e->id].name);
    print_expr(k, e->a, f);
    fprintf(f, "], stride ");
    print_expr(k, e->b, f);
    fprintf(f, ")");
    break;
  case KIR_E_TILE_ZERO:
    fprintf(f, "tile<%dx%d>(0)", (int)(e->i & 0xffff), (int)(e->i >> 16 & 0xffff));
    break;
  case KIR_E_TILE_DP: {
    static const char *const dp[] = {"tdpbusd", "tdpbssd", "tdpbf16ps", "tdpbsud", "tdpbuud"};
    fprintf(f, "%s<%dx%d, k %d>(", dp[e->id], (int)(e->i & 0xffff),
            (int)(e->i >> 16 & 0xffff), (int)(e->i >> 32));
    print_abc(k, e, f);
    break;
  }
  }
}

static const char *mark_name(kir_mark m) {
  switch (m) {
  case KIR_PARALLEL: return " parallel";
  case KIR_VECTOR: return " vector";
  case KIR_UNROLL: return " unroll";
  case KIR_GPU_GROUP: return " gpu.group";
  case KIR_GPU_THREAD: return " gpu.thread";
  default: return "";
  }
}

static void print_stmts(const kir_kernel *k, const kir_stmt *s, int depth,
                        FILE *f) {
  for (; s; s = s->next) {
    fprintf(f, "%*s", 2 * depth, "");
    switch (s->k) {
    case KIR_S_FOR:
      fprintf(f, "for i%d in [", s->var);
      print_expr(k, s->lo, f);
      fprintf(f, ", ");
      print_expr(k, s->hi, f);
      fprintf(f, ")%s", mark_name(s->mark));
      if (s->mark == KIR_VECTOR || s->mark == KIR_UNROLL || s->mark == KIR_GPU_THREAD)
        fprintf(f, "(%d)", s->factor);
      fprintf(f, " {\n");
      print_stmts(k, s->body, depth + 1, f);
      fprintf(f, "%*s}\n", 2 * depth, "");
      break;
    case KIR_S_STORE:
      fprintf(f, "%s[", k->bufs[s->buf].name);
      print_expr(k, s->index, f);
      if (s->value->lanes > 1) fprintf(f, " +: %d", s->value->lanes);
      if (s->count) {
        fprintf(f, " if < ");
        print_expr(k, s->count, f);
      }
      fprintf(f, "] = ");
      print_expr(k, s->value, f);
      fprintf(f, "\n");
      break;
    case KIR_S_ASSIGN:
      fprintf(f, "%%l%d = ", s->local);
      print_expr(k, s->value, f);
      fprintf(f, "\n");
      break;
    case KIR_S_BARRIER: fprintf(f, "barrier\n"); break;
    case KIR_S_TILE_STORE:
      fprintf(f, "%s[", k->bufs[s->buf].name);
      print_expr(k, s->index, f);
      fprintf(f, "] = tile<%dx%d>(", s->factor & 0xffff, s->factor >> 16);
      print_expr(k, s->value, f);
      fprintf(f, "), stride ");
      print_expr(k, s->count, f);
      fprintf(f, "\n");
      break;
    }
  }
}

void kir_print(const kir_kernel *k, FILE *f) {
  fprintf(f, "kernel %s(", k->name);
  for (int b = 0; b < k->n_bufs; b++) {
    fprintf(f, "%s%s: %s%s", b ? ", " : "", k->bufs[b].name,
            ncc_dtype_name(k->bufs[b].dt), k->bufs[b].is_output ? " out" : "");
    if (k->bufs[b].local_elems > 0)
      fprintf(f, " local[%" PRId64 "]", k->bufs[b].local_elems);
  }
  fprintf(f, ") {\n");
  for (int l = 0; l < k->n_locals; l++) {
    fprintf(f, "  local %%l%d: ", l);
    print_type(k->locals[l].dt, k->locals[l].lanes, f);
    fprintf(f, "\n");
  }
  print_stmts(k, k->body, 1, f);
  fprintf(f, "}\n");
}

/* ---- structural hashing and equality ---- */

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0x100000001b3ull;
}

static uint64_t hash_expr(const kir_expr *e) {
  if (!e) return 0x5bd1e995u;
  uint64_t fb;
  memcpy(&fb, &e->f, sizeof fb);
  uint64_t h = mix(mix(mix(mix(0xcbf29ce484222325ull, (uint64_t)e->k), (uint64_t)e->op),
                       (uint64_t)e->dt),
                   (uint64_t)e->lanes);
  h = mix(mix(mix(h, (uint64_t)e->id), fb), (uint64_t)e->i);
  return mix(mix(mix(h, hash_expr(e->a)), hash_expr(e->b)), hash_expr(e->c));
}

static bool expr_eq(const kir_expr *a, const kir_expr *b) {
  if (a == b) return true;
  if (!a || !b) return false;
  return a->k == b->k && a->op == b->op && a->dt == b->dt && a->lanes == b->lanes &&
         a->id == b->id && memcmp(&a->f, &b->f, sizeof a->f) == 0 && a->i == b->i &&
         expr_eq(a->a, b->a) && expr_eq(a->b, b->b) && expr_eq(a->c, b->c);
}

static uint64_t hash_stmts(const kir_stmt *s) {
  uint64_t h = 0x84222325cbf29ce4ull;
  for (; s; s = s->next) {
    h = mix(mix(h, (uint64_t)s->k), (uint64_t)s->var);
    h = mix(mix(mix(h, hash_expr(s->lo)), hash_expr(s->hi)), (uint64_t)s->mark);
    h = mix(mix(mix(h, (uint64_t)s->factor), (uint64_t)s->buf), (uint64_t)s->local);
    h = mix(mix(mix(h, hash_expr(s->index)), hash_expr(s->value)), hash_expr(s->count));
    h = mix(h, s->k == KIR_S_FOR ? hash_stmts(s->body) : 0);
  }
  return h;
}

static bool stmts_eq(const kir_stmt *a, const kir_stmt *b) {
  for (; a && b; a = a->next, b = b->next) {
    if (a->k != b->k || a->var != b->var || a->mark != b->mark ||
        a->factor != b->factor || a->buf != b->buf || a->local != b->local)
      return false;
    if (!expr_eq(a->lo, b->lo) || !expr_eq(a->hi, b->hi) ||
        !expr_eq(a->index, b->index) || !expr_eq(a->value, b->value) ||
        !expr_eq(a->count, b->count))
      return false;
    if (a->k == KIR_S_FOR && !stmts_eq(a->body, b->body)) return false;
  }
  return !a && !b;
}

uint64_t kir_kernel_hash(const kir_kernel *k) {
  uint64_t h = mix(mix(0x1234567ull, (uint64_t)k->n_bufs), (uint64_t)k->n_locals);
  h = mix(h, (uint64_t)k->n_vars);
  for (int b = 0; b < k->n_bufs; b++) {
    const kir_buf *u = &k->bufs[b];
    h = mix(mix(mix(mix(h, (uint64_t)u->dt), (uint64_t)u->is_output), (uint64_t)u->bind),
            (uint64_t)u->index);
  }
  for (int l = 0; l < k->n_locals; l++)
    h = mix(mix(h, (uint64_t)k->locals[l].dt), (uint64_t)k->locals[l].lanes);
  return mix(h, hash_stmts(k->body));
}

bool kir_kernel_equal(const kir_kernel *a, const kir_kernel *b) {
  if (a->n_bufs != b->n_bufs || a->n_locals != b->n_locals || a->n_vars != b->n_vars)
    return false;
  for (int i = 0; i < a->n_bufs; i++) {
    const kir_buf *x = &a->bufs[i], *y = &b->bufs[i];
    if (x->dt != y->dt || x->is_output != y->is_output || x->bind != y->bind ||
        x->index != y->index || x->local_elems != y->local_elems)
      return false;
  }
  for (int l = 0; l < a->n_locals; l++)
    if (a->locals[l].dt != b->locals[l].dt || a->locals[l].lanes != b->locals[l].lanes)
      return false;
  return stmts_eq(a->body, b->body);
}

int kir_dedupe(kir_kernel *const *ks, int n, int *rep) {
  int cap = 16;
  while (cap < 2 * n) cap *= 2;
  int *tab = ncc_malloc(sizeof(int) * (size_t)cap);
  uint64_t *hs = ncc_calloc((size_t)n + 1, sizeof *hs);
  if (!tab || !hs) {
    ncc_free(tab, 0);
    ncc_free(hs, 0);
    return -1;
  }
  for (int i = 0; i < cap; i++) tab[i] = -1;
  int distinct = 0;
  for (int i = 0; i < n; i++) {
    rep[i] = -1;
    if (!ks[i]) continue;
    hs[i] = kir_kernel_hash(ks[i]);
    size_t slot = (size_t)(hs[i] & (uint64_t)(cap - 1));
    for (;; slot = (slot + 1) & (size_t)(cap - 1)) {
      int j = tab[slot];
      if (j < 0) {
        tab[slot] = i;
        rep[i] = i;
        distinct++;
        break;
      }
      if (hs[j] == hs[i] && kir_kernel_equal(ks[j], ks[i])) {
        rep[i] = j;
        break;
      }
    }
  }
  ncc_free(tab, 0);
  ncc_free(hs, 0);
  return distinct;
}
