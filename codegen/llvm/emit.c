/* codegen/llvm/emit.c — kernel IR to LLVM IR.
 *
 * One kernel becomes two functions: an internal `<name>.body` taking every
 * buffer as a `noalias` pointer (so LLVM may keep loads in registers across
 * stores), and the exported `<name>` with the common ABI that unpacks the
 * buffer array and calls it (inlined away by O3).
 *
 * `vector(w)` loops are vectorized here, not left to LLVM's vectorizer: the
 * body is emitted once with the loop variable as a vector of w lanes. For
 * each load/store the index is analysed: uniform (no dependence on the
 * variable) gives a scalar access and a splat, unit stride a contiguous
 * vector access, anything else a gather/scatter. The remainder (< w
 * iterations) runs the same body once more under a lane mask, with
 * llvm.masked.* loads and stores (cheap on AVX-512, correct everywhere).
 *
 * The outermost `parallel` loop is split statically: thread tid of nth runs
 * the tid-th contiguous chunk of the iteration space.
 *
 * Pure expressions (loop variables, symbols, constants and arithmetic on
 * them: the index expressions) are memoised structurally: the lowering
 * repeats the same div/rem/min chains in every unrolled statement, and
 * handing LLVM each copy cost more in early-cse/gvn and instruction
 * selection than everything else in a conv kernel. A memoised value is
 * reused only where it dominates: entries made inside a loop body (or a
 * vector remainder) are dropped when it closes, and entries that read a
 * loop variable are dropped when the variable is rebound (each unrolled
 * iteration). See memo_* below.
 */
#include <math.h>
#include <llvm-c/Core.h>
#include <llvm-c/DebugInfo.h>
#include <string.h>

#include "llvm.h"

typedef struct emitter {
  LLVMContextRef ctx;
  LLVMModuleRef mod;
  LLVMBuilderRef b;
  const kir_kernel *k;
  const ncc_llvm_host *host;
  LLVMValueRef fn;
  LLVMValueRef bufs[KIR_MAX_BUFS];
  LLVMValueRef syms, tid, nth; /* tid, nth as i64 */
  LLVMValueRef *vars;          /* current scalar value of each loop var */
  LLVMValueRef *locals;        /* allocas */
  LLVMValueRef *vlocals;       /* per-lane shadows inside a vector loop */
  bool *vlocal;                /* local is per-lane in the current loop */
  LLVMValueRef entry_first;    /* allocas go before this instruction */
  int vvar;                    /* variable being vectorized, -1: none */
  int vw;                      /* its lanes */
  bool vmode;                  /* evaluating in vector mode */
  LLVMValueRef vmask;          /* active lanes; NULL: all */
  bool in_parallel;
  struct memo *memo;
  LLVMValueRef emu_tiles[3];   /* amx_emu.c's operands: c (and results), a, b */
  LLVMTypeRef t_i1, t_i8, t_i32, t_i64, t_f32, t_f64, t_ptr, t_void;
} emitter;

/* ---- types and small helpers ---- */

static LLVMTypeRef scalar_type(emitter *E, ncc_dtype dt) {
  switch (dt) {
  case NCC_DT_F32: return E->t_f32;
  case NCC_DT_F64: return E->t_f64;
  /* bf16: a storage type (scratch rows of the AMX bf16 GEMM); casts to
   * and from f32 are fptrunc (vcvtneps2bf16, ties to even) and fpext */
  case NCC_DT_BF16: return LLVMBFloatTypeInContext(E->ctx);
  case NCC_DT_I64: return E->t_i64;
  case NCC_DT_I32: return E->t_i32;
  case NCC_DT_I8:
  case NCC_DT_U8: return E->t_i8;
  case NCC_DT_BOOL: return E->t_i1;
  default: NCC_ASSERT(!"kernel IR dtype without an LLVM type"); return NULL;
  }
}

/* In memory a bool is one byte. */
static LLVMTypeRef mem_type(emitter *E, ncc_dtype dt) {
  return dt == NCC_DT_BOOL ? E->t_i8 : scalar_type(E, dt);
}

static LLVMTypeRef vtype(LLVMTypeRef t, int lanes) {
  return lanes > 1 ? LLVMVectorType(t, (unsigned)lanes) : t;
}

static bool is_float(ncc_dtype dt) {
  return dt == NCC_DT_F32 || dt == NCC_DT_F64 || dt == NCC_DT_F16 || dt == NCC_DT_BF16;
}

static LLVMValueRef i64c(emitter *E, int64_t v) {
  return LLVMConstInt(E->t_i64, (unsigned long long)v, 1);
}

static LLVMValueRef splat(emitter *E, LLVMValueRef v, int lanes) {
  if (lanes <= 1) return v;
  LLVMTypeRef vt = LLVMVectorType(LLVMTypeOf(v), (unsigned)lanes);
  LLVMValueRef ins =
      LLVMBuildInsertElement(E->b, LLVMGetPoison(vt), v, i64c(E, 0), "");
  LLVMValueRef zero = LLVMConstNull(LLVMVectorType(E->t_i32, (unsigned)lanes));
  return LLVMBuildShuffleVector(E->b, ins, LLVMGetPoison(vt), zero, "");
}

static LLVMValueRef call_intrinsic(emitter *E, const char *name,
                                   LLVMTypeRef *ovl, int novl,
                                   LLVMValueRef *args, int nargs) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  NCC_ASSERT(id != 0);
  LLVMValueRef f = LLVMGetIntrinsicDeclaration(E->mod, id, ovl, (size_t)novl);
  LLVMTypeRef ft = LLVMIntrinsicGetType(E->ctx, id, ovl, (size_t)novl);
  return LLVMBuildCall2(E->b, ft, f, args, (unsigned)nargs, "");
}

/* A libm function of one argument, applied lane by lane to vectors. */
static LLVMValueRef call_libm(emitter *E, const char *f32name,
                              const char *f64name, LLVMValueRef x) {
  LLVMTypeRef t = LLVMTypeOf(x);
  bool vec = LLVMGetTypeKind(t) == LLVMVectorTypeKind;
  LLVMTypeRef et = vec ? LLVMGetElementType(t) : t;
  const char *name = et == E->t_f64 ? f64name : f32name;
  LLVMValueRef f = LLVMGetNamedFunction(E->mod, name);
  LLVMTypeRef ft = LLVMFunctionType(et, &et, 1, 0);
  if (!f) {
    f = LLVMAddFunction(E->mod, name, ft);
    LLVMSetLinkage(f, LLVMExternalLinkage);
  }
  if (!vec) return LLVMBuildCall2(E->b, ft, f, &x, 1, "");
  unsigned n = LLVMGetVectorSize(t);
  LLVMValueRef r = LLVMGetPoison(t);
  for (unsigned i = 0; i < n; i++) {
    LLVMValueRef xi = LLVMBuildExtractElement(E->b, x, i64c(E, i), "");
    LLVMValueRef yi = LLVMBuildCall2(E->b, ft, f, &xi, 1, "");
    r = LLVMBuildInsertElement(E->b, r, yi, i64c(E, i), "");
  }
  return r;
}

static LLVMValueRef intrinsic1(emitter *E, const char *name, LLVMValueRef x) {
  LLVMTypeRef t = LLVMTypeOf(x);
  return call_intrinsic(E, name, &t, 1, &x, 1);
}


/* ---- memo of pure expressions ----
 * info: per kir_expr pointer, whether it is pure (no loads, locals,
 * reductions), its structural hash and the loop variables it reads.
 * entries: stack of emitted values, newest last, chained per hash bucket;
 * closing a region pops back to the length it had when it opened. */

typedef struct memo_info {
  const kir_expr *e;
  uint64_t hash;
  uint64_t vars; /* bit min(var, 63) for each loop variable read */
  bool pure;
} memo_info;

typedef struct memo_entry {
  const kir_expr *e;
  uint64_t hash;
  uint64_t vars;
  bool vec; /* emitted as a vector (varying in vector mode) */
  LLVMValueRef v;
  int next; /* previous head of the bucket, -1: none */
} memo_entry;

#define MEMO_BUCKETS 1024

typedef struct memo {
  memo_info *info;
  size_t info_cap, info_n;
  memo_entry *ent;
  int n, cap;
  int head[MEMO_BUCKETS];
} memo;

static uint64_t var_bit(int id) { return 1ull << (id < 63 ? id : 63); }

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

static memo_info *memo_slot(memo *m, const kir_expr *e) {
  size_t mask = m->info_cap - 1;
  size_t i = ((uintptr_t)e >> 4) * 0x9e3779b97f4a7c15ull & mask;
  while (m->info[i].e && m->info[i].e != e) i = (i + 1) & mask;
  return &m->info[i];
}

static bool memo_grow_info(memo *m) {
  size_t cap = m->info_cap ? m->info_cap * 2 : 1024;
  memo_info *old = m->info;
  size_t old_cap = m->info_cap;
  m->info = ncc_calloc(cap, sizeof *m->info);
  if (!m->info) {
    m->info = old;
    return false;
  }
  m->info_cap = cap;
  for (size_t i = 0; i < old_cap; i++)
    if (old[i].e) *memo_slot(m, old[i].e) = old[i];
  ncc_free(old, 0);
  return true;
}

/* e's info (computed once per node); NULL when out of memory. */
static const memo_info *expr_info(memo *m, const kir_expr *e) {
  if (m->info_cap) {
    memo_info *s = memo_slot(m, e);
    if (s->e) return s;
  }
  memo_info r = {e, 0, 0, false};
  bool pure = true;
  uint64_t h = mix((uint64_t)e->k, (uint64_t)e->op);
  h = mix(h, (uint64_t)e->dt);
  h = mix(h, (uint64_t)e->lanes);
  switch (e->k) {
  case KIR_E_CONST: {
    uint64_t fb;
    memcpy(&fb, &e->f, sizeof fb);
    h = mix(mix(h, (uint64_t)e->i), fb);
    break;
  }
  case KIR_E_VAR:
    h = mix(h, (uint64_t)e->id);
    r.vars = var_bit(e->id);
    break;
  case KIR_E_SYM: h = mix(h, (uint64_t)e->id); break;
  case KIR_E_UN:
  case KIR_E_BIN:
  case KIR_E_SELECT:
  case KIR_E_CAST:
  case KIR_E_SPLAT: {
    const kir_expr *kids[3] = {e->a, e->b, e->c};
    for (int i = 0; i < 3; i++) {
      if (!kids[i]) {
        h = mix(h, 0);
        continue;
      }
      const memo_info *ki = expr_info(m, kids[i]);
      if (!ki) return NULL;
      pure = pure && ki->pure;
      h = mix(h, ki->hash);
      r.vars |= ki->vars;
    }
    break;
  }
  default: pure = false; break;
  }
  r.pure = pure;
  r.hash = h;
  if ((m->info_n + 1) * 2 > m->info_cap && !memo_grow_info(m)) return NULL;
  memo_info *s = memo_slot(m, e);
  *s = r;
  m->info_n++;
  return s;
}

static bool same_expr(const kir_expr *x, const kir_expr *y) {
  if (x == y) return true;
  if (!x || !y) return false;
  if (x->k != y->k || x->op != y->op || x->dt != y->dt || x->lanes != y->lanes ||
      x->id != y->id || x->i != y->i || memcmp(&x->f, &y->f, sizeof x->f) != 0)
    return false;
  return same_expr(x->a, y->a) && same_expr(x->b, y->b) && same_expr(x->c, y->c);
}

static LLVMValueRef memo_find(memo *m, const memo_info *in, bool vec) {
  for (int i = m->head[in->hash % MEMO_BUCKETS]; i >= 0; i = m->ent[i].next) {
    const memo_entry *en = &m->ent[i];
    if (en->v && en->hash == in->hash && en->vec == vec && same_expr(en->e, in->e))
      return en->v;
  }
  return NULL;
}

static void memo_add(memo *m, const memo_info *in, bool vec, LLVMValueRef v) {
  if (m->n == m->cap) {
    int cap = m->cap ? m->cap * 2 : 256;
    memo_entry *ne = ncc_calloc((size_t)cap, sizeof *ne);
    if (!ne) return; /* no memo: the value is simply emitted again */
    if (m->n) memcpy(ne, m->ent, sizeof *ne * (size_t)m->n);
    ncc_free(m->ent, 0);
    m->ent = ne;
    m->cap = cap;
  }
  size_t b = in->hash % MEMO_BUCKETS;
  m->ent[m->n] = (memo_entry){in->e, in->hash, in->vars, vec, v, m->head[b]};
  m->head[b] = m->n++;
}

/* Close a region: forget what was emitted since it had `mark` entries. */
static void memo_pop(memo *m, int mark) {
  while (m->n > mark) {
    memo_entry *en = &m->ent[--m->n];
    m->head[en->hash % MEMO_BUCKETS] = en->next;
  }
}

/* Loop variable `var` is about to be rebound. */
static void memo_forget_var(memo *m, int var) {
  uint64_t bit = var_bit(var);
  for (int i = 0; i < m->n; i++)
    if (m->ent[i].vars & bit) m->ent[i].v = NULL;
}

static void memo_init(memo *m) {
  memset(m, 0, sizeof *m);
  for (int i = 0; i < MEMO_BUCKETS; i++) m->head[i] = -1;
}

static void memo_free(memo *m) {
  ncc_free(m->info, 0);
  ncc_free(m->ent, 0);
}

/* ---- vector-context analysis ---- */

static bool varying(const emitter *E, const kir_expr *e) {
  if (!e || E->vvar < 0) return false;
  if (e->k == KIR_E_VAR) return e->id == E->vvar;
  if (e->k == KIR_E_LOCAL) return E->vlocal[e->id];
  return varying(E, e->a) || varying(E, e->b) || varying(E, e->c);
}

/* Whether e == coeff * vvar + (uniform), with a constant coeff. */
static bool affine_coeff(const emitter *E, const kir_expr *e, int64_t *coeff) {
  if (!varying(E, e)) {
    *coeff = 0;
    return true;
  }
  if (e->k == KIR_E_VAR) {
    *coeff = 1;
    return true;
  }
  if (e->k != KIR_E_BIN) return false;
  int64_t ca, cb;
  switch (e->op) {
  case KIR_ADD:
  case KIR_SUB:
    if (!affine_coeff(E, e->a, &ca) || !affine_coeff(E, e->b, &cb)) return false;
    *coeff = e->op == KIR_ADD ? ca + cb : ca - cb;
    return true;
  case KIR_MUL:
    if (e->b->k == KIR_E_CONST && affine_coeff(E, e->a, &ca)) {
      *coeff = ca * e->b->i;
      return true;
    }
    if (e->a->k == KIR_E_CONST && affine_coeff(E, e->b, &cb)) {
      *coeff = cb * e->a->i;
      return true;
    }
    return false;
  default:
    return false;
  }
}

static LLVMValueRef emit_expr(emitter *E, const kir_expr *e);

/* e in scalar mode (the vectorized variable stands for lane 0). */
static LLVMValueRef emit_scalar(emitter *E, const kir_expr *e) {
  bool saved = E->vmode;
  E->vmode = false;
  LLVMValueRef v = emit_expr(E, e);
  E->vmode = saved;
  return v;
}

/* Lanes of e's value in the current context. */
static int ctx_lanes(const emitter *E, const kir_expr *e) {
  if (E->vmode && varying(E, e)) return E->vw;
  return e->lanes;
}

/* e's value widened to `lanes` (splatting a uniform scalar). */
static LLVMValueRef emit_widened(emitter *E, const kir_expr *e, int lanes) {
  LLVMValueRef v = emit_expr(E, e);
  if (lanes > 1 && LLVMGetTypeKind(LLVMTypeOf(v)) != LLVMVectorTypeKind)
    v = splat(E, v, lanes);
  return v;
}

static LLVMValueRef lane_mask_from_count(emitter *E, LLVMValueRef count,
                                         int lanes) {
  if (lanes == 1) { /* <1 x i1>: 0 < count */
    LLVMValueRef m = LLVMBuildICmp(E->b, LLVMIntSLT, i64c(E, 0), count, "");
    return LLVMBuildInsertElement(
        E->b, LLVMGetPoison(LLVMVectorType(E->t_i1, 1)), m, i64c(E, 0), "");
  }
  LLVMValueRef steps[64];
  NCC_ASSERT(lanes <= 64);
  for (int i = 0; i < lanes; i++) steps[i] = i64c(E, i);
  LLVMValueRef step = LLVMConstVector(steps, (unsigned)lanes);
  return LLVMBuildICmp(E->b, LLVMIntSLT, step, splat(E, count, lanes), "");
}

static LLVMValueRef buf_ptr(emitter *E, int buf, LLVMValueRef index) {
  LLVMTypeRef et = mem_type(E, E->k->bufs[buf].dt);
  return LLVMBuildGEP2(E->b, et, E->bufs[buf], &index, 1, "");
}

static unsigned elem_align(emitter *E, ncc_dtype dt) {
  (void)E;
  size_t s = ncc_dtype_size(dt);
  return s ? (unsigned)s : 1;
}

/* Memory value -> register value (bytes -> i1 for bool). */
static LLVMValueRef from_mem(emitter *E, ncc_dtype dt, LLVMValueRef v) {
  if (dt != NCC_DT_BOOL) return v;
  return LLVMBuildICmp(E->b, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
}

static LLVMValueRef to_mem(emitter *E, ncc_dtype dt, LLVMValueRef v) {
  LLVMTypeRef t = LLVMTypeOf(v);
  if (dt == NCC_DT_BF16) { /* stored as its bits: a target without bf16
                              arithmetic would widen a (masked, split)
                              bf16 store through f32 and call __truncsfbf2 */
    LLVMTypeRef i16 = LLVMInt16TypeInContext(E->ctx);
    return LLVMBuildBitCast(E->b, v, LLVMGetTypeKind(t) == LLVMVectorTypeKind
                                         ? LLVMVectorType(i16, LLVMGetVectorSize(t))
                                         : i16, "");
  }
  if (dt != NCC_DT_BOOL) return v;
  LLVMTypeRef mt = LLVMGetTypeKind(t) == LLVMVectorTypeKind
                       ? LLVMVectorType(E->t_i8, LLVMGetVectorSize(t))
                       : E->t_i8;
  return LLVMBuildZExt(E->b, v, mt, "");
}

/* A vector access of `lanes` contiguous elements at ptr, under mask. */
static LLVMValueRef load_contig(emitter *E, ncc_dtype dt, LLVMValueRef ptr,
                                int lanes, LLVMValueRef mask) {
  LLVMTypeRef vt = LLVMVectorType(mem_type(E, dt), (unsigned)lanes);
  if (!mask) {
    LLVMValueRef v = LLVMBuildLoad2(E->b, vt, ptr, "");
    LLVMSetAlignment(v, elem_align(E, dt));
    return v;
  }
  LLVMTypeRef ovl[2] = {vt, E->t_ptr};
  LLVMValueRef args[4] = {ptr, LLVMConstInt(E->t_i32, elem_align(E, dt), 0),
                          mask, LLVMConstNull(vt)};
  return call_intrinsic(E, "llvm.masked.load", ovl, 2, args, 4);
}

/* Lanes v, v+s, v+2s, ... from ptr (a strided conv's input row): one
 * contiguous load of s*(lanes-1)+1 elements (masked where lane i's mask
 * is off: element s*i, the elements between never enabled) and a shuffle,
 * instead of a gather — which for bytes LLVM splits into one scalar load
 * per lane. */
static LLVMValueRef load_strided(emitter *E, ncc_dtype dt, LLVMValueRef ptr, int lanes,
                                 int s, LLVMValueRef mask) {
  int wide = s * (lanes - 1) + 1;
  LLVMValueRef wmask = NULL;
  if (mask) {
    LLVMValueRef idx[64 * 4];
    for (int j = 0; j < wide; j++) /* lane j/s, or a false lane of the zero vector */
      idx[j] = LLVMConstInt(E->t_i32, j % s == 0 ? (unsigned)(j / s) : (unsigned)lanes, 0);
    LLVMValueRef zero = LLVMConstNull(LLVMTypeOf(mask));
    wmask = LLVMBuildShuffleVector(E->b, mask, zero, LLVMConstVector(idx, (unsigned)wide), "");
  }
  LLVMValueRef w = load_contig(E, dt, ptr, wide, wmask);
  LLVMValueRef pick[64];
  for (int i = 0; i < lanes; i++) pick[i] = LLVMConstInt(E->t_i32, (unsigned)(s * i), 0);
  return LLVMBuildShuffleVector(E->b, w, LLVMGetPoison(LLVMTypeOf(w)),
                                LLVMConstVector(pick, (unsigned)lanes), "");
}

/* Strides load_strided takes (wider ones stay gathers). */
static bool small_stride(int64_t coeff, int lanes) {
  return coeff >= 2 && coeff <= 4 && lanes <= 64;
}

static void store_contig(emitter *E, ncc_dtype dt, LLVMValueRef ptr,
                         LLVMValueRef v, LLVMValueRef mask) {
  if (!mask) {
    LLVMValueRef s = LLVMBuildStore(E->b, v, ptr);
    LLVMSetAlignment(s, elem_align(E, dt));
    return;
  }
  LLVMTypeRef ovl[2] = {LLVMTypeOf(v), E->t_ptr};
  LLVMValueRef args[4] = {v, ptr, LLVMConstInt(E->t_i32, elem_align(E, dt), 0),
                          mask};
  call_intrinsic(E, "llvm.masked.store", ovl, 2, args, 4);
}

static LLVMValueRef all_true(emitter *E, int lanes) {
  return splat(E, LLVMConstInt(E->t_i1, 1, 0), lanes);
}

static LLVMValueRef emit_load(emitter *E, const kir_expr *e) {
  ncc_dtype dt = E->k->bufs[e->id].dt;
  if (e->lanes > 1 || e->c) { /* explicit vector load (maybe 1 lane) */
    LLVMValueRef ptr = buf_ptr(E, e->id, emit_scalar(E, e->a));
    int lanes = e->lanes;
    if (lanes == 1) { /* a masked <1 x T>: no access when count <= 0 */
      LLVMValueRef mask = lane_mask_from_count(E, emit_scalar(E, e->c), 1);
      LLVMValueRef v = load_contig(E, dt, ptr, 1, mask);
      return from_mem(E, dt, LLVMBuildExtractElement(E->b, v, i64c(E, 0), ""));
    }
    LLVMValueRef mask =
        e->c ? lane_mask_from_count(E, emit_scalar(E, e->c), lanes) : NULL;
    return from_mem(E, dt, load_contig(E, dt, ptr, lanes, mask));
  }
  int64_t coeff;
  if (e->b && !(E->vmode && (varying(E, e->a) || varying(E, e->b)))) {
    /* scalar guarded load: read index 0 instead (always valid), then 0 */
    LLVMValueRef g = emit_scalar(E, e->b);
    LLVMValueRef idx = LLVMBuildSelect(E->b, g, emit_scalar(E, e->a), i64c(E, 0), "");
    LLVMValueRef v = LLVMBuildLoad2(E->b, mem_type(E, dt), buf_ptr(E, e->id, idx), "");
    LLVMSetAlignment(v, elem_align(E, dt));
    v = from_mem(E, dt, v);
    return LLVMBuildSelect(E->b, g, v, LLVMConstNull(LLVMTypeOf(v)), "");
  }
  if (e->b) {
    /* per-lane guard: masked contiguous load or masked gather */
    LLVMValueRef mask = emit_widened(E, e->b, E->vw);
    if (E->vmask) mask = LLVMBuildAnd(E->b, mask, E->vmask, "");
    LLVMTypeRef vt = LLVMVectorType(mem_type(E, dt), (unsigned)E->vw);
    if (affine_coeff(E, e->a, &coeff) && coeff == 1)
      return from_mem(E, dt, load_contig(E, dt, buf_ptr(E, e->id, emit_scalar(E, e->a)),
                                         E->vw, mask));
    if (affine_coeff(E, e->a, &coeff) && small_stride(coeff, E->vw))
      return from_mem(E, dt, load_strided(E, dt, buf_ptr(E, e->id, emit_scalar(E, e->a)),
                                          E->vw, (int)coeff, mask));
    LLVMValueRef ptrs = buf_ptr(E, e->id, emit_widened(E, e->a, E->vw));
    LLVMTypeRef ovl[2] = {vt, LLVMTypeOf(ptrs)};
    LLVMValueRef args[4] = {ptrs, LLVMConstInt(E->t_i32, elem_align(E, dt), 0),
                            mask, LLVMConstNull(vt)};
    return from_mem(E, dt, call_intrinsic(E, "llvm.masked.gather", ovl, 2, args, 4));
  }
  if (!E->vmode || !varying(E, e->a)) {
    LLVMValueRef ptr = buf_ptr(E, e->id, emit_scalar(E, e->a));
    LLVMValueRef v = LLVMBuildLoad2(E->b, mem_type(E, dt), ptr, "");
    LLVMSetAlignment(v, elem_align(E, dt));
    return from_mem(E, dt, v);
  }
  if (affine_coeff(E, e->a, &coeff) && coeff == 1) {
    LLVMValueRef ptr = buf_ptr(E, e->id, emit_scalar(E, e->a));
    return from_mem(E, dt, load_contig(E, dt, ptr, E->vw, E->vmask));
  }
  if (affine_coeff(E, e->a, &coeff) && small_stride(coeff, E->vw))
    return from_mem(E, dt, load_strided(E, dt, buf_ptr(E, e->id, emit_scalar(E, e->a)),
                                        E->vw, (int)coeff, E->vmask));
  /* gather */
  LLVMValueRef idx = emit_expr(E, e->a);
  LLVMValueRef ptrs = buf_ptr(E, e->id, idx);
  LLVMTypeRef vt = LLVMVectorType(mem_type(E, dt), (unsigned)E->vw);
  LLVMTypeRef ovl[2] = {vt, LLVMTypeOf(ptrs)};
  LLVMValueRef args[4] = {ptrs, LLVMConstInt(E->t_i32, elem_align(E, dt), 0),
                          E->vmask ? E->vmask : all_true(E, E->vw),
                          LLVMConstNull(vt)};
  return from_mem(E, dt,
                  call_intrinsic(E, "llvm.masked.gather", ovl, 2, args, 4));
}

/* ---- arithmetic ---- */

static LLVMValueRef emit_bin(emitter *E, kir_op op, ncc_dtype dt,
                             LLVMValueRef a, LLVMValueRef b) {
  LLVMBuilderRef B = E->b;
  if (is_float(dt)) {
    switch (op) {
    case KIR_ADD: return LLVMBuildFAdd(B, a, b, "");
    case KIR_SUB: return LLVMBuildFSub(B, a, b, "");
    case KIR_MUL: return LLVMBuildFMul(B, a, b, "");
    case KIR_DIV: return LLVMBuildFDiv(B, a, b, "");
    case KIR_REM: return LLVMBuildFRem(B, a, b, "");
    case KIR_MIN:
    case KIR_MAX: {
      /* ref's (a < b || isnan(a)) ? a : b: a NaN on either side wins
       * (ONNX Max/Min, Clip, ReduceMax, MaxPool accumulators) */
      LLVMRealPredicate lt_gt = op == KIR_MIN ? LLVMRealOLT : LLVMRealOGT;
      LLVMValueRef pick_a = LLVMBuildOr(B, LLVMBuildFCmp(B, lt_gt, a, b, ""),
                                        LLVMBuildFCmp(B, LLVMRealUNO, a, a, ""), "");
      return LLVMBuildSelect(B, pick_a, a, b, "");
    }
    case KIR_POW: {
      LLVMTypeRef t = LLVMTypeOf(a);
      LLVMValueRef args[2] = {a, b};
      return call_intrinsic(E, "llvm.pow", &t, 1, args, 2);
    }
    case KIR_LT: return LLVMBuildFCmp(B, LLVMRealOLT, a, b, "");
    case KIR_LE: return LLVMBuildFCmp(B, LLVMRealOLE, a, b, "");
    case KIR_GT: return LLVMBuildFCmp(B, LLVMRealOGT, a, b, "");
    case KIR_GE: return LLVMBuildFCmp(B, LLVMRealOGE, a, b, "");
    case KIR_EQ: return LLVMBuildFCmp(B, LLVMRealOEQ, a, b, "");
    case KIR_NE: return LLVMBuildFCmp(B, LLVMRealUNE, a, b, "");
    default: break;
    }
  } else {
    switch (op) {
    case KIR_ADD: return LLVMBuildAdd(B, a, b, "");
    case KIR_SUB: return LLVMBuildSub(B, a, b, "");
    case KIR_MUL: return LLVMBuildMul(B, a, b, "");
    case KIR_DIV: return LLVMBuildSDiv(B, a, b, "");
    case KIR_REM: return LLVMBuildSRem(B, a, b, "");
    case KIR_MIN:
      return LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntSLT, a, b, ""), a, b, "");
    case KIR_MAX:
      return LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntSGT, a, b, ""), a, b, "");
    case KIR_LT: return LLVMBuildICmp(B, LLVMIntSLT, a, b, "");
    case KIR_LE: return LLVMBuildICmp(B, LLVMIntSLE, a, b, "");
    case KIR_GT: return LLVMBuildICmp(B, LLVMIntSGT, a, b, "");
    case KIR_GE: return LLVMBuildICmp(B, LLVMIntSGE, a, b, "");
    case KIR_EQ: return LLVMBuildICmp(B, LLVMIntEQ, a, b, "");
    case KIR_NE: return LLVMBuildICmp(B, LLVMIntNE, a, b, "");
    case KIR_AND: return LLVMBuildAnd(B, a, b, "");
    case KIR_OR: return LLVMBuildOr(B, a, b, "");
    default: break;
    }
  }
  NCC_ASSERT(!"binary op not supported for this dtype");
  return NULL;
}

/* ---- f32 transcendentals as vector polynomials ----
 * LLVM would expand llvm.exp on a vector into one libm call per lane; these
 * stay in vector registers. Error bounds, measured against double libm over
 * a dense sweep (2M points):
 *   exp:  Cephes expf reduction + degree-6 polynomial: 1.3 ulp on normal
 *         results, inf above 88.72, 0 below -104, denormals in between
 *   tanh: Cephes tanhf polynomial for |x| < 0.625, else
 *         1 - 2e / (1 + e), e = exp(-2|x|): 1.4 ulp
 *   sigmoid (the Sigmoid lowering's 1 / (1 + exp(-x)), recognized whole):
 *         e = exp(-|x|), 1 / (1 + e) for x >= 0, e / (1 + e) below:
 *         2.7 ulp (exp's error passes through for x < 0), denormals kept
 *   erf:  |x| < 1 Cephes erff x P(x^2), else Abramowitz & Stegun 7.1.26:
 *         3.2 ulp (relative error 2.2e-7)
 * (tanh 1.3, sigmoid 2.7, erf 3.0 ulp measured over [-110, 110].)
 * Their divisions are reciprocals of a denominator in [1, 5] (never 0, inf
 * or denormal), flagged `arcp ninf`: on AVX-512/AVX targets LLVM then uses
 * the hardware reciprocal estimate plus one Newton step (2^-14 -> ~2^-28,
 * under 1 ulp) instead of a divide, whose throughput (one per 10 cycles
 * for 16 lanes) would otherwise bound a chain of activations. */

static LLVMValueRef fc(emitter *E, LLVMTypeRef t, double v) {
  LLVMValueRef c = LLVMConstReal(E->t_f32, v);
  if (LLVMGetTypeKind(t) != LLVMVectorTypeKind) return c;
  unsigned n = LLVMGetVectorSize(t);
  LLVMValueRef el[64];
  for (unsigned i = 0; i < n; i++) el[i] = c;
  return LLVMConstVector(el, n);
}

static LLVMValueRef fmadd(emitter *E, LLVMValueRef a, LLVMValueRef b,
                          LLVMValueRef c) {
  LLVMTypeRef t = LLVMTypeOf(a);
  LLVMValueRef args[3] = {a, b, c};
  return call_intrinsic(E, "llvm.fma", &t, 1, args, 3);
}

/* Horner: c[0] x^(n-1) + ... + c[n-1] */
static LLVMValueRef poly(emitter *E, LLVMValueRef x, const double *c, int n) {
  LLVMTypeRef t = LLVMTypeOf(x);
  LLVMValueRef p = fc(E, t, c[0]);
  for (int i = 1; i < n; i++) p = fmadd(E, p, x, fc(E, t, c[i]));
  return p;
}

static LLVMValueRef fclamp(emitter *E, LLVMValueRef x, double lo, double hi) {
  LLVMTypeRef t = LLVMTypeOf(x);
  LLVMBuilderRef B = E->b;
  x = LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealOLT, x, fc(E, t, lo), ""),
                      fc(E, t, lo), x, "");
  return LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealOGT, x, fc(E, t, hi), ""),
                         fc(E, t, hi), x, "");
}

/* exp(x). `full`: every x (clamps, denormal results, NaN). Otherwise the
 * cheaper form for tanh, which needs e^x only for x in [-20, 0] (below,
 * tanh is 1 in f32): a single exponent scale, no NaN handling (the caller
 * does not use the result for NaN, where fptosi would give poison). */
static LLVMValueRef exp_f32(emitter *E, LLVMValueRef x, bool full) {
  static const double P[] = {1.9875691500E-4, 1.3981999507E-3, 8.3334519073E-3,
                             4.1665795894E-2, 1.6666665459E-1, 5.0000001201E-1};
  LLVMBuilderRef B = E->b;
  LLVMTypeRef t = LLVMTypeOf(x);
  bool vec = LLVMGetTypeKind(t) == LLVMVectorTypeKind;
  LLVMTypeRef it = vec ? LLVMVectorType(E->t_i32, LLVMGetVectorSize(t)) : E->t_i32;
  LLVMValueRef xc =
      full ? fclamp(E, x, -104.0, 88.72283905206835)
           : LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealOLT, x, fc(E, t, -20.0), ""),
                             fc(E, t, -20.0), x, "");
  /* n = round(x / ln 2), r = x - n ln 2 (ln 2 split in two for precision) */
  LLVMValueRef fx = intrinsic1(E, "llvm.floor", fmadd(E, xc, fc(E, t, 1.44269504088896341),
                                                     fc(E, t, 0.5)));
  LLVMValueRef r = fmadd(E, fx, fc(E, t, -0.693359375), xc);
  r = fmadd(E, fx, fc(E, t, 2.12194440e-4), r);
  LLVMValueRef z = LLVMBuildFMul(B, r, r, "");
  LLVMValueRef p = fmadd(E, poly(E, r, P, 6), z, LLVMBuildFAdd(B, r, fc(E, t, 1.0), ""));
  int lanes = vec ? (int)LLVMGetVectorSize(t) : 1;
  LLVMValueRef c127 = splat(E, LLVMConstInt(E->t_i32, 127, 0), lanes);
  LLVMValueRef c23 = splat(E, LLVMConstInt(E->t_i32, 23, 0), lanes);
  LLVMValueRef n = LLVMBuildFPToSI(B, fx, it, "");
  if (!full) { /* n in [-29, 0]: 2^n is normal */
    LLVMValueRef p1 = LLVMBuildBitCast(B, LLVMBuildShl(B, LLVMBuildAdd(B, n, c127, ""), c23, ""), t, "");
    return LLVMBuildFMul(B, p, p1, "");
  }
  /* 2^n as 2^n1 * 2^n2 (n1 = n >> 1), each built in the exponent field:
   * both stay normal for n in [-150, 128], so the product rounds to the
   * right denormal or overflows to inf exactly when exp does */
  LLVMValueRef c1 = splat(E, LLVMConstInt(E->t_i32, 1, 0), lanes);
  LLVMValueRef n1 = LLVMBuildAShr(B, n, c1, "");
  LLVMValueRef n2 = LLVMBuildSub(B, n, n1, "");
  LLVMValueRef p1 = LLVMBuildBitCast(B, LLVMBuildShl(B, LLVMBuildAdd(B, n1, c127, ""), c23, ""), t, "");
  LLVMValueRef p2 = LLVMBuildBitCast(B, LLVMBuildShl(B, LLVMBuildAdd(B, n2, c127, ""), c23, ""), t, "");
  LLVMValueRef y = LLVMBuildFMul(B, LLVMBuildFMul(B, p, p1, ""), p2, "");
  /* NaN in, NaN out (the clamps keep NaN but fptosi of NaN is poison) */
  LLVMValueRef nan = LLVMBuildFCmp(B, LLVMRealUNO, x, x, "");
  return LLVMBuildSelect(B, nan, x, y, "");
}

static LLVMValueRef emit_exp_f32(emitter *E, LLVMValueRef x) { return exp_f32(E, x, true); }

/* 1 / d for d in [1, 5]: see the comment above (a reciprocal estimate). */
static LLVMValueRef recip_bounded(emitter *E, LLVMValueRef d) {
  LLVMValueRef r = LLVMBuildFDiv(E->b, fc(E, LLVMTypeOf(d), 1.0), d, "");
  LLVMSetFastMathFlags(r, LLVMFastMathAllowReciprocal | LLVMFastMathNoInfs |
                              LLVMFastMathAllowContract);
  return r;
}

static LLVMValueRef emit_tanh_f32(emitter *E, LLVMValueRef x) {
  static const double P[] = {-5.70498872745E-3, 2.06390887954E-2, -5.37397155531E-2,
                             1.33314422036E-1, -3.33332819422E-1};
  LLVMBuilderRef B = E->b;
  LLVMTypeRef t = LLVMTypeOf(x);
  LLVMValueRef ax = intrinsic1(E, "llvm.fabs", x);
  LLVMValueRef z = LLVMBuildFMul(B, x, x, "");
  LLVMValueRef small = fmadd(E, LLVMBuildFMul(B, poly(E, z, P, 5), z, ""), x, x);
  /* e in [0, 1]: 1 + e never overflows, however large |x| is; for NaN
   * (is_small below is true) e is not used */
  LLVMValueRef e = exp_f32(E, LLVMBuildFMul(B, ax, fc(E, t, -2.0), ""), false);
  /* (1 - e) / (1 + e) as 1 - 2e / (1 + e): the quotient's error is
   * relative to a term below 0.45, so it stays under an ulp of the result */
  LLVMValueRef big = fmadd(E, LLVMBuildFMul(B, e, fc(E, t, -2.0), ""),
                           recip_bounded(E, LLVMBuildFAdd(B, e, fc(E, t, 1.0), "")),
                           fc(E, t, 1.0));
  LLVMTypeRef ovl = t;
  LLVMValueRef cs[2] = {big, x};
  big = call_intrinsic(E, "llvm.copysign", &ovl, 1, cs, 2);
  LLVMValueRef is_small = LLVMBuildFCmp(B, LLVMRealULT, ax, fc(E, t, 0.625), "");
  return LLVMBuildSelect(B, is_small, small, big, "");
}

/* 1 / (1 + exp(-x)) through e = exp(-|x|) in [0, 1]: no overflow, and for
 * x < 0 the result e / (1 + e) keeps its relative accuracy down to the
 * denormals (where 1 / (1 + exp(-x)) would turn 0 once exp(-x) is inf). */
static LLVMValueRef emit_sigmoid_f32(emitter *E, LLVMValueRef x) {
  LLVMBuilderRef B = E->b;
  LLVMTypeRef t = LLVMTypeOf(x);
  LLVMValueRef e = emit_exp_f32(E, LLVMBuildFNeg(B, intrinsic1(E, "llvm.fabs", x), ""));
  LLVMValueRef r = recip_bounded(E, LLVMBuildFAdd(B, e, fc(E, t, 1.0), ""));
  LLVMValueRef neg = LLVMBuildFCmp(B, LLVMRealOLT, x, fc(E, t, 0.0), "");
  return LLVMBuildSelect(B, neg, LLVMBuildFMul(B, e, r, ""), r, "");
}

static LLVMValueRef emit_erf_f32(emitter *E, LLVMValueRef x) {
  static const double A[] = {1.061405429, -1.453152027, 1.421413741, -0.284496736,
                             0.254829592, 0.0};
  LLVMBuilderRef B = E->b;
  LLVMTypeRef t = LLVMTypeOf(x);
  LLVMValueRef ax = intrinsic1(E, "llvm.fabs", x);
  /* erf is 1 in f32 from |x| = 3.92 on: clamping at 12 keeps the
   * denominator in [1, 5] (a reciprocal estimate, see above) */
  LLVMValueRef axc = fclamp(E, ax, 0.0, 12.0);
  LLVMValueRef tt = recip_bounded(E, fmadd(E, axc, fc(E, t, 0.3275911), fc(E, t, 1.0)));
  LLVMValueRef p = poly(E, tt, A, 6); /* t (a1 + t (a2 + ...)) */
  LLVMValueRef e = emit_exp_f32(E, LLVMBuildFNeg(B, LLVMBuildFMul(B, axc, axc, ""), ""));
  LLVMValueRef y = LLVMBuildFSub(B, fc(E, t, 1.0), LLVMBuildFMul(B, p, e, ""), "");
  LLVMTypeRef ovl = t;
  LLVMValueRef cs[2] = {y, x};
  y = call_intrinsic(E, "llvm.copysign", &ovl, 1, cs, 2);
  /* |x| < 1: x P(x^2) (Cephes erff), accurate relative to erf near 0 */
  static const double T[] = {7.853861353153693E-5, -8.010193625184903E-4,
                             5.188327685732524E-3, -2.685381193529856E-2,
                             1.128358514861418E-1, -3.761262582423300E-1,
                             1.128379165726710E0};
  LLVMValueRef small = LLVMBuildFMul(B, x, poly(E, LLVMBuildFMul(B, x, x, ""), T, 7), "");
  LLVMValueRef is_small = LLVMBuildFCmp(B, LLVMRealOLT, ax, fc(E, t, 1.0), "");
  return LLVMBuildSelect(B, is_small, small, y, "");
}

/* erf and tanh as calls to one internal function per module and vector
 * type ("ncc.erf.v16f32") instead of their ~40 instructions at every use:
 * a fused epilogue applies them once per accumulator (24 times in a
 * MatMul+GELU kernel), and LLVM's optimiser and instruction selector then
 * compiled 24 copies (150 of the MLP block's 190 ms). Tiers 0-2 keep the
 * call (their pipelines do not inline); tier 3's inliner decides. The body
 * is the same code as inline, so results do not change. */
typedef LLVMValueRef (*math_body_fn)(emitter *E, LLVMValueRef x);
static void add_fn_attr(emitter *E, LLVMValueRef f, unsigned idx, const char *name);

static LLVMValueRef call_math_fn(emitter *E, const char *name, math_body_fn body,
                                 LLVMValueRef x) {
  LLVMTypeRef t = LLVMTypeOf(x);
  char fname[64];
  bool vec = LLVMGetTypeKind(t) == LLVMVectorTypeKind;
  snprintf(fname, sizeof fname, "ncc.%s.%s%uf32", name, vec ? "v" : "s",
           vec ? LLVMGetVectorSize(t) : 1u);
  LLVMTypeRef ft = LLVMFunctionType(t, &t, 1, 0);
  LLVMValueRef f = LLVMGetNamedFunction(E->mod, fname);
  if (!f) {
    f = LLVMAddFunction(E->mod, fname, ft);
    LLVMSetLinkage(f, LLVMInternalLinkage);
    /* a pure function of x, so CSE and LICM treat calls like arithmetic:
     * a fused QuantizeLinear reads its operand three times (its NaN test
     * and select), and without these each read called erf again (6 calls
     * per vector, a DQ+GELU+Q kernel 7x slower than Erf alone) */
    add_fn_attr(E, f, LLVMAttributeFunctionIndex, "memory"); /* 0: memory(none) */
    add_fn_attr(E, f, LLVMAttributeFunctionIndex, "nounwind");
    add_fn_attr(E, f, LLVMAttributeFunctionIndex, "willreturn");
    LLVMBasicBlockRef saved = LLVMGetInsertBlock(E->b);
    LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(E->ctx, f, "entry");
    LLVMPositionBuilderAtEnd(E->b, entry);
    LLVMBuildRet(E->b, body(E, LLVMGetParam(f, 0)));
    LLVMPositionBuilderAtEnd(E->b, saved);
  }
  return LLVMBuildCall2(E->b, ft, f, &x, 1, "");
}

/* ---- rounding an f32 to bf16 / f16 precision (KIR_RBF16, KIR_RF16) ----
 * On the bits, so no target feature or runtime library call is needed and
 * vectors stay vectors: adding half an ulp of the narrow type (less one,
 * plus the kept lsb: ties to even) and clearing the dropped bits rounds to
 * nearest even, a carry stepping the exponent (up to inf). NaN is kept. */
/* Constant c in the shape of `like` (a scalar, or c in every lane). */
static LLVMValueRef const_like(LLVMTypeRef like, LLVMValueRef c) {
  if (LLVMGetTypeKind(like) != LLVMVectorTypeKind) return c;
  unsigned n = LLVMGetVectorSize(like);
  LLVMValueRef el[64];
  for (unsigned i = 0; i < n && i < 64; i++) el[i] = c;
  return LLVMConstVector(el, n);
}

static LLVMValueRef rnd_ci(emitter *E, LLVMTypeRef like, uint32_t v) {
  return const_like(like, LLVMConstInt(E->t_i32, v, 0));
}

static LLVMValueRef rnd_cf(emitter *E, LLVMTypeRef like, double v) {
  return const_like(like, LLVMConstReal(E->t_f32, v));
}

/* x's bits rounded to drop the low `bits` bits (ties to even). */
static LLVMValueRef rnd_bits(emitter *E, LLVMValueRef x, unsigned bits) {
  LLVMBuilderRef B = E->b;
  LLVMTypeRef ft = LLVMTypeOf(x);
  LLVMTypeRef it = LLVMGetTypeKind(ft) == LLVMVectorTypeKind
                       ? LLVMVectorType(E->t_i32, LLVMGetVectorSize(ft))
                       : E->t_i32;
  LLVMValueRef i = LLVMBuildBitCast(B, x, it, "");
  LLVMValueRef lsb = LLVMBuildAnd(B, LLVMBuildLShr(B, i, rnd_ci(E, it, bits), ""),
                                  rnd_ci(E, it, 1), "");
  LLVMValueRef r = LLVMBuildAdd(B, i, rnd_ci(E, it, (1u << (bits - 1)) - 1), "");
  r = LLVMBuildAdd(B, r, lsb, "");
  r = LLVMBuildAnd(B, r, rnd_ci(E, it, ~((1u << bits) - 1)), "");
  return LLVMBuildBitCast(B, r, ft, "");
}

static LLVMValueRef emit_round_narrow(emitter *E, kir_op op, LLVMValueRef x) {
  LLVMBuilderRef B = E->b;
  LLVMTypeRef ft = LLVMTypeOf(x);
  LLVMValueRef nan = LLVMBuildFCmp(B, LLVMRealUNO, x, x, "");
  if (op == KIR_RBF16) return LLVMBuildSelect(B, nan, x, rnd_bits(E, x, 16), "");
  /* f16: 13 bits dropped while normal; past 65504 is inf; below 2^-14 the
   * subnormals' fixed step 2^-24 (exact scaling by powers of two) */
  LLVMValueRef y = rnd_bits(E, x, 13);
  LLVMValueRef inf = intrinsic1(E, "llvm.fabs", y);
  LLVMValueRef big = LLVMBuildFCmp(B, LLVMRealOGT, inf, rnd_cf(E, ft, 65504.0), "");
  LLVMValueRef args[2] = {rnd_cf(E, ft, INFINITY), x};
  LLVMValueRef sinf = call_intrinsic(E, "llvm.copysign", &ft, 1, args, 2);
  y = LLVMBuildSelect(B, big, sinf, y, "");
  LLVMValueRef sub = LLVMBuildFMul(B, x, rnd_cf(E, ft, 16777216.0), "");
  sub = LLVMBuildFMul(B, intrinsic1(E, "llvm.roundeven", sub),
                      rnd_cf(E, ft, 1.0 / 16777216.0), "");
  LLVMValueRef small = LLVMBuildFCmp(B, LLVMRealOLT, intrinsic1(E, "llvm.fabs", x),
                                     rnd_cf(E, ft, 1.0 / 16384.0), "");
  y = LLVMBuildSelect(B, small, sub, y, "");
  return LLVMBuildSelect(B, nan, x, y, "");
}

static LLVMValueRef emit_un(emitter *E, kir_op op, ncc_dtype dt,
                            LLVMValueRef a) {
  LLVMBuilderRef B = E->b;
  if (is_float(dt)) {
    switch (op) {
    case KIR_NEG: return LLVMBuildFNeg(B, a, "");
    case KIR_ABS: return intrinsic1(E, "llvm.fabs", a);
    case KIR_SQRT: return intrinsic1(E, "llvm.sqrt", a);
    case KIR_EXP:
      return dt == NCC_DT_F32 ? emit_exp_f32(E, a) : intrinsic1(E, "llvm.exp", a);
    case KIR_LOG: return intrinsic1(E, "llvm.log", a);
    case KIR_FLOOR: return intrinsic1(E, "llvm.floor", a);
    case KIR_CEIL: return intrinsic1(E, "llvm.ceil", a);
    case KIR_ROUND: return intrinsic1(E, "llvm.roundeven", a);
    case KIR_RBF16:
    case KIR_RF16: NCC_ASSERT(dt == NCC_DT_F32); return emit_round_narrow(E, op, a);
    /* libm, lane by lane: LLVM 19 has no portable intrinsic for most of
     * these, and the JIT resolves libm as it does log1pf/erf */
    case KIR_SIN: return call_libm(E, "sinf", "sin", a);
    case KIR_COS: return call_libm(E, "cosf", "cos", a);
    case KIR_TAN: return call_libm(E, "tanf", "tan", a);
    case KIR_ASIN: return call_libm(E, "asinf", "asin", a);
    case KIR_ACOS: return call_libm(E, "acosf", "acos", a);
    case KIR_ATAN: return call_libm(E, "atanf", "atan", a);
    case KIR_SINH: return call_libm(E, "sinhf", "sinh", a);
    case KIR_COSH: return call_libm(E, "coshf", "cosh", a);
    case KIR_ASINH: return call_libm(E, "asinhf", "asinh", a);
    case KIR_ACOSH: return call_libm(E, "acoshf", "acosh", a);
    case KIR_ATANH: return call_libm(E, "atanhf", "atanh", a);
    case KIR_LOG1P: return call_libm(E, "log1pf", "log1p", a);
    case KIR_ERF:
      return dt == NCC_DT_F32 ? call_math_fn(E, "erf", emit_erf_f32, a)
                              : call_libm(E, "erff", "erf", a);
    case KIR_TANH:
      return dt == NCC_DT_F32 ? call_math_fn(E, "tanh", emit_tanh_f32, a)
                              : call_libm(E, "tanhf", "tanh", a);
    default: break;
    }
  } else {
    switch (op) {
    case KIR_NEG: return LLVMBuildNeg(B, a, "");
    case KIR_ABS: {
      LLVMValueRef neg = LLVMBuildNeg(B, a, "");
      LLVMValueRef lt =
          LLVMBuildICmp(B, LLVMIntSLT, a, LLVMConstNull(LLVMTypeOf(a)), "");
      return LLVMBuildSelect(B, lt, neg, a, "");
    }
    case KIR_NOT: return LLVMBuildNot(B, a, "");
    default: break;
    }
  }
  NCC_ASSERT(!"unary op not supported for this dtype");
  return NULL;
}

static bool is_int(ncc_dtype dt) { return !is_float(dt) && dt != NCC_DT_BOOL; }

/* f32 -> bf16 on the bits (ties to even, NaN kept quiet) where the
 * target has no conversion instruction: LLVM would call compiler-rt's
 * __truncsfbf2, which neither the JIT's process nor an older libgcc has
 * (the AMX emulation's scratch rows on an AVX2 host). */
static LLVMValueRef f32_to_bf16_bits(emitter *E, LLVMValueRef x) {
  LLVMBuilderRef B = E->b;
  LLVMTypeRef ft = LLVMTypeOf(x);
  /* the value's own lanes (a vector loop widens scalar expressions) */
  int lanes = LLVMGetTypeKind(ft) == LLVMVectorTypeKind ? (int)LLVMGetVectorSize(ft) : 1;
  LLVMTypeRef it = vtype(E->t_i32, lanes);
  LLVMValueRef nan = LLVMBuildFCmp(B, LLVMRealUNO, x, x, "");
  LLVMValueRef quiet = LLVMBuildOr(B, LLVMBuildBitCast(B, x, it, ""), rnd_ci(E, ft, 0x400000u), "");
  LLVMValueRef r = LLVMBuildSelect(B, nan, quiet, LLVMBuildBitCast(B, rnd_bits(E, x, 16), it, ""), "");
  r = LLVMBuildTrunc(B, LLVMBuildLShr(B, r, rnd_ci(E, ft, 16), ""),
                     vtype(LLVMInt16TypeInContext(E->ctx), lanes), "");
  return LLVMBuildBitCast(B, r, vtype(LLVMBFloatTypeInContext(E->ctx), lanes), "");
}

static LLVMValueRef emit_cast(emitter *E, ncc_dtype from, ncc_dtype to,
                              LLVMValueRef v, int lanes) {
  LLVMTypeRef tt = vtype(scalar_type(E, to), lanes);
  LLVMBuilderRef B = E->b;
  if (from == to) return v;
  if (to == NCC_DT_BOOL) {
    LLVMValueRef z = LLVMConstNull(LLVMTypeOf(v));
    return is_float(from) ? LLVMBuildFCmp(B, LLVMRealUNE, v, z, "")
                          : LLVMBuildICmp(B, LLVMIntNE, v, z, "");
  }
  if (from == NCC_DT_BOOL)
    return is_float(to) ? LLVMBuildUIToFP(B, v, tt, "") : LLVMBuildZExt(B, v, tt, "");
  if (from == NCC_DT_F32 && to == NCC_DT_BF16 && !ncc_llvm_has_feature(E->host, "avx512bf16"))
    return f32_to_bf16_bits(E, v);
  if (is_float(from) && is_float(to)) return LLVMBuildFPCast(B, v, tt, "");
  if (is_float(from) && to == NCC_DT_U8) /* 128..255 overflow fptosi to i8 */
    return LLVMBuildTrunc(B, LLVMBuildFPToSI(B, v, vtype(E->t_i32, lanes), ""), tt, "");
  if (is_float(from)) return LLVMBuildFPToSI(B, v, tt, "");
  if (is_float(to))
    return from == NCC_DT_U8 ? LLVMBuildUIToFP(B, v, tt, "")
                             : LLVMBuildSIToFP(B, v, tt, "");
  NCC_ASSERT(is_int(from) && is_int(to));
  return LLVMBuildIntCast2(B, v, tt, from != NCC_DT_U8, "");
}

/* Lanes [first, first + n) of vector v. */
static LLVMValueRef lanes_of(emitter *E, LLVMValueRef v, int first, int n) {
  LLVMValueRef idx[16];
  NCC_ASSERT(n <= 16);
  for (int i = 0; i < n; i++) idx[i] = LLVMConstInt(E->t_i32, (unsigned)(first + i), 0);
  return LLVMBuildShuffleVector(E->b, v, LLVMGetPoison(LLVMTypeOf(v)),
                                LLVMConstVector(idx, (unsigned)n), "");
}

/* The vector of x's lanes followed by y's (equal types). */
static LLVMValueRef concat(emitter *E, LLVMValueRef x, LLVMValueRef y) {
  unsigned n = LLVMGetVectorSize(LLVMTypeOf(x));
  LLVMValueRef idx[32];
  NCC_ASSERT(n <= 16);
  for (unsigned i = 0; i < 2 * n; i++) idx[i] = LLVMConstInt(E->t_i32, i, 0);
  return LLVMBuildShuffleVector(E->b, x, y, LLVMConstVector(idx, 2 * n), "");
}

/* One 4-lane (128-bit) AArch64 dot product, c + u8(a) . s8(b) per lane.
 * USDOT (FEAT_I8MM) takes the unsigned and signed bytes as they are. SDOT
 * (FEAT_DotProd) is signed by signed: a's bytes are flipped to s8,
 * a ^ 0x80 = u8(a) - 128, and the 128 * (sum of b's bytes) this drops is
 * added back, that sum being an SDOT of b against bytes of 1. All i32
 * arithmetic wraps, as the portable sum does, so the result is exact. */
static LLVMValueRef arm_dot4(emitter *E, bool usdot, LLVMValueRef a, LLVMValueRef b,
                             LLVMValueRef c) {
  LLVMTypeRef v16 = LLVMVectorType(E->t_i8, 16);
  LLVMTypeRef ovl[2] = {LLVMTypeOf(c), v16};
  LLVMValueRef b8 = LLVMBuildBitCast(E->b, b, v16, "");
  if (usdot) {
    LLVMValueRef args[3] = {c, LLVMBuildBitCast(E->b, a, v16, ""), b8};
    return call_intrinsic(E, "llvm.aarch64.neon.usdot", ovl, 2, args, 3);
  }
  LLVMValueRef flip = splat(E, LLVMConstInt(E->t_i32, 0x80808080u, 0), 4);
  LLVMValueRef args[3] = {c, LLVMBuildBitCast(E->b, LLVMBuildXor(E->b, a, flip, ""), v16, ""),
                          b8};
  LLVMValueRef dot = call_intrinsic(E, "llvm.aarch64.neon.sdot", ovl, 2, args, 3);
  LLVMValueRef sum_args[3] = {LLVMConstNull(LLVMTypeOf(c)),
                              splat(E, LLVMConstInt(E->t_i8, 1, 0), 16), b8};
  LLVMValueRef sum_b = call_intrinsic(E, "llvm.aarch64.neon.sdot", ovl, 2, sum_args, 3);
  return LLVMBuildAdd(E->b, dot,
                      LLVMBuildShl(E->b, sum_b, splat(E, LLVMConstInt(E->t_i32, 7, 0), 4), ""),
                      "");
}

/* KIR_E_DOT4 on AArch64 with FEAT_I8MM (USDOT) or FEAT_DotProd (SDOT),
 * 4, 8 or 16 lanes as 128-bit slices; NULL when the target has neither or
 * the lanes do not split so (the portable sum then). */
static LLVMValueRef emit_dot4_arm(emitter *E, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c,
                                  int lanes) {
  const ncc_llvm_host *h = E->host;
  bool arm = strncmp(h->triple, "aarch64", 7) == 0 || strncmp(h->triple, "arm64", 5) == 0;
  bool usdot = ncc_llvm_has_feature(h, "i8mm");
  if (!arm || (!usdot && !ncc_llvm_has_feature(h, "dotprod")) ||
      (lanes != 4 && lanes != 8 && lanes != 16))
    return NULL;
  if (lanes == 4) return arm_dot4(E, usdot, a, b, c);
  LLVMValueRef part[4];
  for (int q = 0; q < lanes / 4; q++)
    part[q] = arm_dot4(E, usdot, lanes_of(E, a, 4 * q, 4), lanes_of(E, b, 4 * q, 4),
                       lanes_of(E, c, 4 * q, 4));
  if (lanes == 8) return concat(E, part[0], part[1]);
  return concat(E, concat(E, part[0], part[1]), concat(E, part[2], part[3]));
}

/* KIR_E_DOT4 on x86 without VNNI: two pmaddwd. Each i32 word's bytes are
 * split into i16 lanes, a's zero-extended (bytes 0 and 2; 1 and 3), b's
 * sign-extended, so each pmaddwd adds two exact products per word (at most
 * 2 * 255 * 128 in magnitude: no wrap) -- the sum vpdpbusd makes, where
 * pmaddubsw would saturate it in 16 bits. 16 lanes need AVX512BW, or are
 * two halves on AVX2; NULL where neither fits (the portable sum then). */
static LLVMValueRef x86_pmadd_dot4(emitter *E, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c,
                                   int lanes) {
  const ncc_llvm_host *h = E->host;
  const char *name = NULL;
  if (lanes == 16 && ncc_llvm_has_feature(h, "avx512bw")) name = "llvm.x86.avx512.pmaddw.d.512";
  else if (lanes == 8 && ncc_llvm_has_feature(h, "avx2")) name = "llvm.x86.avx2.pmadd.wd";
  else if (lanes == 4 && ncc_llvm_has_feature(h, "sse2")) name = "llvm.x86.sse2.pmadd.wd";
  if (!name) {
    if (lanes != 16 || !ncc_llvm_has_feature(h, "avx2")) return NULL;
    LLVMValueRef lo = x86_pmadd_dot4(E, lanes_of(E, a, 0, 8), lanes_of(E, b, 0, 8),
                                     lanes_of(E, c, 0, 8), 8);
    LLVMValueRef hi = x86_pmadd_dot4(E, lanes_of(E, a, 8, 8), lanes_of(E, b, 8, 8),
                                     lanes_of(E, c, 8, 8), 8);
    return concat(E, lo, hi);
  }
  LLVMBuilderRef B = E->b;
  LLVMTypeRef wt = LLVMVectorType(LLVMInt16TypeInContext(E->ctx), (unsigned)(2 * lanes));
  LLVMValueRef m = rnd_ci(E, LLVMTypeOf(a), 0x00ff00ffu);
  LLVMValueRef e8 = const_like(wt, LLVMConstInt(LLVMInt16TypeInContext(E->ctx), 8, 0));
  LLVMValueRef a_even = LLVMBuildBitCast(B, LLVMBuildAnd(B, a, m, ""), wt, "");
  LLVMValueRef a_odd = LLVMBuildBitCast(
      B, LLVMBuildAnd(B, LLVMBuildLShr(B, a, rnd_ci(E, LLVMTypeOf(a), 8), ""), m, ""), wt, "");
  LLVMValueRef bw = LLVMBuildBitCast(B, b, wt, "");
  LLVMValueRef b_even = LLVMBuildAShr(B, LLVMBuildShl(B, bw, e8, ""), e8, "");
  LLVMValueRef b_odd = LLVMBuildAShr(B, bw, e8, "");
  LLVMValueRef args[2] = {a_even, b_even};
  LLVMValueRef p = call_intrinsic(E, name, NULL, 0, args, 2);
  args[0] = a_odd;
  args[1] = b_odd;
  p = LLVMBuildAdd(B, p, call_intrinsic(E, name, NULL, 0, args, 2), "");
  return LLVMBuildAdd(B, c, p, "");
}

/* KIR_E_DOT4: x86's vpdpbusd where the target has it at this width
 * (AVX512-VNNI; AVX-VNNI or AVX512-VNNI+VL for 8 and 4 lanes), AArch64's
 * USDOT or SDOT (emit_dot4_arm), pmaddwd pairs on other x86 targets
 * (x86_pmadd_dot4), else the same wrapping sum from shifts:
 * byte j of a zero-extended, of b sign-extended. */
static LLVMValueRef emit_dot4(emitter *E, const kir_expr *e, int lanes) {
  LLVMValueRef a = emit_widened(E, e->a, lanes), b = emit_widened(E, e->b, lanes),
               c = emit_widened(E, e->c, lanes);
  const ncc_llvm_host *h = E->host;
  LLVMValueRef arm = emit_dot4_arm(E, a, b, c, lanes);
  if (arm) return arm;
  bool vl = ncc_llvm_has_feature(h, "avx512vnni") && ncc_llvm_has_feature(h, "avx512vl");
  const char *name = NULL;
  if (lanes == 16 && ncc_llvm_has_feature(h, "avx512vnni"))
    name = "llvm.x86.avx512.vpdpbusd.512";
  else if (lanes == 8 && (vl || ncc_llvm_has_feature(h, "avxvnni")))
    name = "llvm.x86.avx512.vpdpbusd.256";
  else if (lanes == 4 && (vl || ncc_llvm_has_feature(h, "avxvnni")))
    name = "llvm.x86.avx512.vpdpbusd.128";
  if (name) {
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    NCC_ASSERT(id != 0);
    LLVMTypeRef ft = LLVMIntrinsicGetType(E->ctx, id, NULL, 0);
    LLVMTypeRef pt[3];
    LLVMGetParamTypes(ft, pt);
    LLVMValueRef args[3] = {LLVMBuildBitCast(E->b, c, pt[0], ""),
                            LLVMBuildBitCast(E->b, a, pt[1], ""),
                            LLVMBuildBitCast(E->b, b, pt[2], "")};
    LLVMValueRef f = LLVMGetIntrinsicDeclaration(E->mod, id, NULL, 0);
    LLVMValueRef r = LLVMBuildCall2(E->b, ft, f, args, 3, "");
    return LLVMBuildBitCast(E->b, r, LLVMTypeOf(c), "");
  }
  LLVMValueRef x86 = x86_pmadd_dot4(E, a, b, c, lanes);
  if (x86) return x86;
  LLVMValueRef acc = c;
  for (int j = 0; j < 4; j++) {
    LLVMValueRef ua = LLVMBuildAnd(E->b, LLVMBuildLShr(E->b, a, splat(E, LLVMConstInt(E->t_i32, 8u * j, 0), lanes), ""),
                                   splat(E, LLVMConstInt(E->t_i32, 255, 0), lanes), "");
    LLVMValueRef sb = LLVMBuildAShr(E->b, LLVMBuildShl(E->b, b, splat(E, LLVMConstInt(E->t_i32, 24u - 8u * j, 0), lanes), ""),
                                    splat(E, LLVMConstInt(E->t_i32, 24, 0), lanes), "");
    acc = LLVMBuildAdd(E->b, acc, LLVMBuildMul(E->b, ua, sb, ""), "");
  }
  return acc;
}

/* ---- matrix tiles (x86 AMX) ----
 * A KIR tile is a <256 x i32> value (locals are allocas of it, promoted by
 * sroa); each tile instruction bitcasts its operands to x86_amx and its
 * result back, the form clang's AMX API emits: X86's AMX lowering folds
 * the casts through loop phis, so accumulators stay in tile registers.
 * Tiles reach ordinary code only through memory (KIR_S_TILE_STORE: a cast
 * of a loop-phi tile to a vector fails in instruction selection). The
 * shapes are constants, from which LLVM writes the tile configuration. */

static LLVMTypeRef tile_vtype(emitter *E) { return LLVMVectorType(E->t_i32, 256); }

static LLVMValueRef i16c(emitter *E, int64_t v) {
  return LLVMConstInt(LLVMInt16TypeInContext(E->ctx), (unsigned long long)v, 0);
}

static LLVMValueRef to_amx(emitter *E, LLVMValueRef v) {
  return LLVMBuildBitCast(E->b, v, LLVMX86AMXTypeInContext(E->ctx), "");
}

static LLVMValueRef from_amx(emitter *E, LLVMValueRef t) {
  return LLVMBuildBitCast(E->b, t, tile_vtype(E), "");
}

/* ---- emulated tiles (NCC_AMX=emulate: amx_emu.c) ----
 * Where the JIT's host cannot run tile instructions, each is a call to
 * its C version, on 1 KiB stack slots of the function: the same kernel
 * IR, so its indexing and epilogues are tested on any host. Cross targets
 * (in_process false) always get the instructions: the lowering only makes
 * tiles for them when their features have AMX. */
static bool tiles_emulated(emitter *E) {
  return E->host->in_process && !ncc_llvm_amx_usable(E->host, "amx-tile");
}

static LLVMValueRef emu_slot(emitter *E, int i) {
  if (!E->emu_tiles[i]) {
    LLVMBuilderRef ab = LLVMCreateBuilderInContext(E->ctx);
    LLVMPositionBuilderBefore(ab, E->entry_first);
    E->emu_tiles[i] = LLVMBuildAlloca(ab, tile_vtype(E), "emu_tile");
    LLVMSetAlignment(E->emu_tiles[i], 64);
    LLVMDisposeBuilder(ab);
  }
  return E->emu_tiles[i];
}

/* A call of amx_emu.c's `name` (every argument a pointer or an i64). */
static void emu_call(emitter *E, const char *name, LLVMValueRef *args, int n) {
  LLVMTypeRef pt[7];
  for (int i = 0; i < n; i++) pt[i] = LLVMTypeOf(args[i]);
  LLVMTypeRef ft = LLVMFunctionType(E->t_void, pt, (unsigned)n, 0);
  LLVMValueRef f = LLVMGetNamedFunction(E->mod, name);
  if (!f) {
    f = LLVMAddFunction(E->mod, name, ft);
    LLVMSetLinkage(f, LLVMExternalLinkage);
  }
  LLVMBuildCall2(E->b, ft, f, args, (unsigned)n, "");
}

static LLVMValueRef emu_tile(emitter *E, const kir_expr *e, LLVMValueRef p, LLVMValueRef stride) {
  int64_t rows = e->i & 0xffff, colsb = e->i >> 16 & 0xffff;
  LLVMValueRef c = emu_slot(E, 0);
  switch (e->k) {
  case KIR_E_TILE_LOAD: {
    LLVMValueRef args[5] = {c, p, stride, i64c(E, rows), i64c(E, colsb)};
    emu_call(E, "ncc_amx_emu_load", args, 5);
    break;
  }
  case KIR_E_TILE_ZERO: return LLVMConstNull(tile_vtype(E));
  default: {
    LLVMValueRef a = emu_slot(E, 1), b = emu_slot(E, 2);
    LLVMBuildStore(E->b, emit_expr(E, e->c), c);
    LLVMBuildStore(E->b, emit_expr(E, e->a), a);
    LLVMBuildStore(E->b, emit_expr(E, e->b), b);
    LLVMValueRef args[7] = {i64c(E, e->id), c, a, b, i64c(E, rows), i64c(E, colsb),
                            i64c(E, e->i >> 32)};
    emu_call(E, "ncc_amx_emu_dp", args, 7);
  }
  }
  return LLVMBuildLoad2(E->b, tile_vtype(E), c, "");
}

static LLVMValueRef emit_tile(emitter *E, const kir_expr *e) {
  NCC_ASSERT(!E->vmode); /* tiles live outside vector loops */
  if (tiles_emulated(E)) {
    if (e->k != KIR_E_TILE_LOAD) return emu_tile(E, e, NULL, NULL);
    LLVMValueRef es = i64c(E, (int64_t)ncc_dtype_size(E->k->bufs[e->id].dt));
    LLVMValueRef off = LLVMBuildMul(E->b, emit_scalar(E, e->a), es, "");
    return emu_tile(E, e, LLVMBuildGEP2(E->b, E->t_i8, E->bufs[e->id], &off, 1, ""),
                    LLVMBuildMul(E->b, emit_scalar(E, e->b), es, ""));
  }
  LLVMValueRef rows = i16c(E, e->i & 0xffff), colsb = i16c(E, e->i >> 16 & 0xffff);
  switch (e->k) {
  case KIR_E_TILE_LOAD: {
    /* byte addressing: a bf16 buffer has no LLVM element type here */
    LLVMValueRef es = i64c(E, (int64_t)ncc_dtype_size(E->k->bufs[e->id].dt));
    LLVMValueRef stride = LLVMBuildMul(E->b, emit_scalar(E, e->b), es, "");
    LLVMValueRef off = LLVMBuildMul(E->b, emit_scalar(E, e->a), es, "");
    LLVMValueRef p = LLVMBuildGEP2(E->b, E->t_i8, E->bufs[e->id], &off, 1, "");
    LLVMValueRef args[4] = {rows, colsb, p, stride};
    return from_amx(E, call_intrinsic(E, "llvm.x86.tileloadd64.internal", NULL, 0, args, 4));
  }
  case KIR_E_TILE_ZERO: {
    LLVMValueRef args[2] = {rows, colsb};
    return from_amx(E, call_intrinsic(E, "llvm.x86.tilezero.internal", NULL, 0, args, 2));
  }
  case KIR_E_TILE_DP: {
    static const char *const names[] = {"llvm.x86.tdpbusd.internal",
                                        "llvm.x86.tdpbssd.internal",
                                        "llvm.x86.tdpbf16ps.internal",
                                        "llvm.x86.tdpbsud.internal",
                                        "llvm.x86.tdpbuud.internal"};
    NCC_ASSERT(e->id >= 0 && e->id < 5);
    LLVMValueRef c = to_amx(E, emit_expr(E, e->c));
    LLVMValueRef a = to_amx(E, emit_expr(E, e->a));
    LLVMValueRef b = to_amx(E, emit_expr(E, e->b));
    LLVMValueRef args[6] = {rows, colsb, i16c(E, e->i >> 32), c, a, b};
    return from_amx(E, call_intrinsic(E, names[e->id], NULL, 0, args, 6));
  }
  default: NCC_ASSERT(!"not a tile expression"); return NULL;
  }
}

/* KIR_S_TILE_STORE. The lowering stores every accumulator tile before its
 * epilogue reads the rows back as vectors: with tiles live across the
 * epilogue, each call to an out-of-line math function (a GELU's erf)
 * spilled and reloaded them and re-ran ldtilecfg (a bf16 MatMul+GELU took
 * 4 ms where its MatMul took 1). */
static void emit_tile_store(emitter *E, const kir_stmt *s) {
  LLVMValueRef es = i64c(E, (int64_t)ncc_dtype_size(E->k->bufs[s->buf].dt));
  LLVMValueRef off = LLVMBuildMul(E->b, emit_scalar(E, s->index), es, "");
  if (tiles_emulated(E)) {
    LLVMValueRef t = emu_slot(E, 0);
    LLVMBuildStore(E->b, emit_expr(E, s->value), t);
    LLVMValueRef args[5] = {t, LLVMBuildGEP2(E->b, E->t_i8, E->bufs[s->buf], &off, 1, ""),
                            LLVMBuildMul(E->b, emit_scalar(E, s->count), es, ""),
                            i64c(E, s->factor & 0xffff), i64c(E, s->factor >> 16)};
    emu_call(E, "ncc_amx_emu_store", args, 5);
    return;
  }
  LLVMValueRef args[5] = {i16c(E, s->factor & 0xffff), i16c(E, s->factor >> 16),
                          LLVMBuildGEP2(E->b, E->t_i8, E->bufs[s->buf], &off, 1, ""),
                          LLVMBuildMul(E->b, emit_scalar(E, s->count), es, ""),
                          to_amx(E, emit_expr(E, s->value))};
  call_intrinsic(E, "llvm.x86.tilestored64.internal", NULL, 0, args, 5);
}

static LLVMValueRef emit_var(emitter *E, const kir_expr *e) {
  LLVMValueRef base = E->vars[e->id];
  NCC_ASSERT(base != NULL);
  if (!(E->vmode && e->id == E->vvar)) return base;
  LLVMValueRef steps[64];
  for (int i = 0; i < E->vw; i++) steps[i] = i64c(E, i);
  return LLVMBuildAdd(E->b, splat(E, base, E->vw),
                      LLVMConstVector(steps, (unsigned)E->vw), "");
}

/* Whether e is the f32 constant 1 (or a splat of it). */
static bool is_one_f32(const kir_expr *e) {
  if (e->k == KIR_E_SPLAT) e = e->a;
  return e->k == KIR_E_CONST && e->dt == NCC_DT_F32 && e->f == 1.0;
}

/* The Sigmoid lowering's 1 / (1 + exp(-x)): its x, or NULL. */
static const kir_expr *sigmoid_arg(const kir_expr *e) {
  if (e->k != KIR_E_BIN || e->op != KIR_DIV || e->dt != NCC_DT_F32 || !is_one_f32(e->a))
    return NULL;
  const kir_expr *d = e->b;
  if (d->k != KIR_E_BIN || d->op != KIR_ADD || !is_one_f32(d->a)) return NULL;
  const kir_expr *ex = d->b;
  if (ex->k != KIR_E_UN || ex->op != KIR_EXP || ex->a->k != KIR_E_UN || ex->a->op != KIR_NEG)
    return NULL;
  return ex->a->a;
}

static LLVMValueRef emit_expr_new(emitter *E, const kir_expr *e) {
  int lanes = ctx_lanes(E, e);
  switch (e->k) {
  case KIR_E_CONST:
    if (is_float(e->dt)) return LLVMConstReal(scalar_type(E, e->dt), e->f);
    return LLVMConstInt(scalar_type(E, e->dt), (unsigned long long)e->i, 1);
  case KIR_E_VAR: return emit_var(E, e);
  case KIR_E_SYM: {
    LLVMValueRef idx = i64c(E, e->id);
    LLVMValueRef p = LLVMBuildGEP2(E->b, E->t_i64, E->syms, &idx, 1, "");
    LLVMValueRef v = LLVMBuildLoad2(E->b, E->t_i64, p, "");
    LLVMSetAlignment(v, 8);
    return v;
  }
  case KIR_E_LOCAL: {
    const kir_local *l = &E->k->locals[e->id];
    if (E->vmode && E->vlocal[e->id])
      return LLVMBuildLoad2(E->b, LLVMVectorType(scalar_type(E, l->dt), (unsigned)E->vw),
                            E->vlocals[e->id], "");
    return LLVMBuildLoad2(E->b, vtype(scalar_type(E, l->dt), l->lanes),
                          E->locals[e->id], "");
  }
  case KIR_E_LOAD: return emit_load(E, e);
  case KIR_E_UN: return emit_un(E, e->op, e->a->dt, emit_expr(E, e->a));
  case KIR_E_BIN: {
    const kir_expr *sx = sigmoid_arg(e);
    if (sx) return emit_sigmoid_f32(E, emit_expr(E, sx));
    LLVMValueRef a = emit_widened(E, e->a, lanes);
    LLVMValueRef b = emit_widened(E, e->b, lanes);
    return emit_bin(E, e->op, e->a->dt, a, b);
  }
  case KIR_E_FMA: {
    LLVMValueRef args[3] = {emit_widened(E, e->a, lanes),
                            emit_widened(E, e->b, lanes),
                            emit_widened(E, e->c, lanes)};
    LLVMTypeRef t = LLVMTypeOf(args[0]);
    return call_intrinsic(E, "llvm.fma", &t, 1, args, 3);
  }
  case KIR_E_SELECT:
    return LLVMBuildSelect(E->b, emit_widened(E, e->a, lanes),
                           emit_widened(E, e->b, lanes),
                           emit_widened(E, e->c, lanes), "");
  case KIR_E_CAST:
    return emit_cast(E, e->a->dt, e->dt, emit_expr(E, e->a), lanes);
  case KIR_E_SPLAT: return splat(E, emit_scalar(E, e->a), e->lanes);
  case KIR_E_DOT4: return emit_dot4(E, e, lanes);
  case KIR_E_TILE_LOAD:
  case KIR_E_TILE_ZERO:
  case KIR_E_TILE_DP: return emit_tile(E, e);
  case KIR_E_HREDUCE: {
    LLVMValueRef v = emit_expr(E, e->a);
    LLVMTypeRef t = LLVMTypeOf(v);
    if (!is_float(e->dt)) /* integer sums (the AMX kernels' row sums) */
      return call_intrinsic(E, e->op == KIR_ADD ? "llvm.vector.reduce.add"
                                                : "llvm.vector.reduce.smax", &t, 1, &v, 1);
    if (e->op == KIR_ADD) {
      LLVMValueRef args[2] = {LLVMConstReal(scalar_type(E, e->dt), -0.0), v};
      LLVMValueRef r = call_intrinsic(E, "llvm.vector.reduce.fadd", &t, 1, args, 2);
      /* reassociation lets it reduce as a tree */
      LLVMSetFastMathFlags(r, LLVMFastMathAllowReassoc);
      return r;
    }
    NCC_ASSERT(e->op == KIR_MAX);
    /* fmaximum propagates NaN like ref's max (reduce.fmax would drop it) */
    return call_intrinsic(E, "llvm.vector.reduce.fmaximum", &t, 1, &v, 1);
  }
  }
  NCC_ASSERT(!"unknown kernel IR expression");
  return NULL;
}

static LLVMValueRef emit_expr(emitter *E, const kir_expr *e) {
  if (e->k == KIR_E_CONST || (e->k == KIR_E_VAR && !E->vmode))
    return emit_expr_new(E, e); /* free: nothing to share */
  const memo_info *in = expr_info(E->memo, e);
  if (!in || !in->pure) return emit_expr_new(E, e);
  bool vec = E->vmode && E->vvar >= 0 && (in->vars & var_bit(E->vvar));
  LLVMValueRef v = memo_find(E->memo, in, vec);
  if (v) return v;
  v = emit_expr_new(E, e);
  memo_add(E->memo, in, vec, v);
  return v;
}

/* ---- statements ---- */

static void emit_stmts(emitter *E, const kir_stmt *s);

static void emit_store(emitter *E, const kir_stmt *s) {
  ncc_dtype dt = E->k->bufs[s->buf].dt;
  const kir_expr *v = s->value;
  if (v->lanes == 1 && s->count && !(E->vmode && varying(E, v))) {
    /* a masked one-lane store: nothing is written when count <= 0 */
    LLVMValueRef ptr = buf_ptr(E, s->buf, emit_scalar(E, s->index));
    LLVMValueRef mask = lane_mask_from_count(E, emit_scalar(E, s->count), 1);
    LLVMValueRef x = to_mem(E, dt, emit_expr(E, v));
    LLVMValueRef vec = LLVMBuildInsertElement(
        E->b, LLVMGetPoison(LLVMVectorType(LLVMTypeOf(x), 1)), x, i64c(E, 0), "");
    store_contig(E, dt, ptr, vec, mask);
    return;
  }
  if (v->lanes > 1) {
    LLVMValueRef ptr = buf_ptr(E, s->buf, emit_scalar(E, s->index));
    LLVMValueRef mask =
        s->count ? lane_mask_from_count(E, emit_scalar(E, s->count), v->lanes)
                 : NULL;
    store_contig(E, dt, ptr, to_mem(E, dt, emit_expr(E, v)), mask);
    return;
  }
  bool vary_i = E->vmode && varying(E, s->index);
  bool vary_v = E->vmode && varying(E, v);
  if (!vary_i) {
    /* a uniform store in a vector loop would race between lanes */
    NCC_ASSERT(!vary_v);
    LLVMValueRef ptr = buf_ptr(E, s->buf, emit_scalar(E, s->index));
    LLVMValueRef st = LLVMBuildStore(E->b, to_mem(E, dt, emit_expr(E, v)), ptr);
    LLVMSetAlignment(st, elem_align(E, dt));
    return;
  }
  LLVMValueRef val = to_mem(E, dt, emit_widened(E, v, E->vw));
  int64_t coeff;
  if (affine_coeff(E, s->index, &coeff) && coeff == 1) {
    LLVMValueRef ptr = buf_ptr(E, s->buf, emit_scalar(E, s->index));
    store_contig(E, dt, ptr, val, E->vmask);
    return;
  }
  LLVMValueRef ptrs = buf_ptr(E, s->buf, emit_expr(E, s->index));
  LLVMTypeRef ovl[2] = {LLVMTypeOf(val), LLVMTypeOf(ptrs)};
  LLVMValueRef args[4] = {val, ptrs, LLVMConstInt(E->t_i32, elem_align(E, dt), 0),
                          E->vmask ? E->vmask : all_true(E, E->vw)};
  call_intrinsic(E, "llvm.masked.scatter", ovl, 2, args, 4);
}

/* An unroll(u) loop the emitter did not expand: its latch branch gets
 * llvm.loop metadata, llvm.loop.unroll.disable for u = 1, else
 * llvm.loop.unroll.count u, so LLVM's unroller does what the lowering
 * chose without its cost analysis (on the blocked Conv's reduction loops
 * that analysis was half of the optimisation time). The loop ID must refer
 * to itself: built through a temporary node. */
static void unroll_hint(emitter *E, LLVMValueRef latch_br, int factor) {
  static const char off[] = "llvm.loop.unroll.disable",
                    count[] = "llvm.loop.unroll.count";
  LLVMMetadataRef hint[2];
  hint[0] = factor == 1 ? LLVMMDStringInContext2(E->ctx, off, sizeof off - 1)
                        : LLVMMDStringInContext2(E->ctx, count, sizeof count - 1);
  hint[1] = LLVMValueAsMetadata(LLVMConstInt(E->t_i32, (unsigned)factor, 0));
  LLVMMetadataRef opt = LLVMMDNodeInContext2(E->ctx, hint, factor == 1 ? 1 : 2);
  LLVMMetadataRef self = LLVMTemporaryMDNode(E->ctx, NULL, 0);
  LLVMMetadataRef ops[2] = {self, opt};
  LLVMMetadataRef id = LLVMMDNodeInContext2(E->ctx, ops, 2);
  LLVMMetadataReplaceAllUsesWith(self, id);
  LLVMSetMetadata(latch_br, LLVMGetMDKindIDInContext(E->ctx, "llvm.loop", 9),
                  LLVMMetadataAsValue(E->ctx, id));
}

/* A counted loop [lo, hi) with step `step`, body emitted by emit_stmts with
 * the variable bound to the induction value. Returns the value of the
 * induction variable on exit (the first value that failed the test). */
static LLVMValueRef emit_counted_loop(emitter *E, const kir_stmt *s,
                                      LLVMValueRef lo, LLVMValueRef hi,
                                      int64_t step) {
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(E->b);
  LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(E->ctx, E->fn, "loop");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(E->ctx, E->fn, "body");
  LLVMBasicBlockRef exit = LLVMAppendBasicBlockInContext(E->ctx, E->fn, "exit");
  LLVMBuildBr(E->b, head);
  LLVMPositionBuilderAtEnd(E->b, head);
  LLVMValueRef iv = LLVMBuildPhi(E->b, E->t_i64, "i");
  /* continue while iv + step <= hi (step 1: iv < hi) */
  LLVMValueRef cond =
      step == 1 ? LLVMBuildICmp(E->b, LLVMIntSLT, iv, hi, "")
                : LLVMBuildICmp(E->b, LLVMIntSLE,
                                LLVMBuildAdd(E->b, iv, i64c(E, step), ""), hi, "");
  LLVMBuildCondBr(E->b, cond, body, exit);
  LLVMPositionBuilderAtEnd(E->b, body);
  memo_forget_var(E->memo, s->var);
  E->vars[s->var] = iv;
  int mark = E->memo->n; /* the body does not dominate the exit */
  emit_stmts(E, s->body);
  memo_pop(E->memo, mark);
  LLVMValueRef next = LLVMBuildAdd(E->b, iv, i64c(E, step), "");
  LLVMBasicBlockRef latch = LLVMGetInsertBlock(E->b);
  LLVMValueRef back = LLVMBuildBr(E->b, head);
  if (s->mark == KIR_UNROLL && s->factor >= 1 && s->factor <= 64)
    unroll_hint(E, back, s->factor);
  LLVMValueRef in_vals[2] = {lo, next};
  LLVMBasicBlockRef in_bbs[2] = {pre, latch};
  LLVMAddIncoming(iv, in_vals, in_bbs, 2);
  LLVMPositionBuilderAtEnd(E->b, exit);
  return iv;
}

/* Mark the scalar locals assigned anywhere in `s` as per-lane. */
static void mark_vlocals(emitter *E, const kir_stmt *s) {
  for (; s; s = s->next) {
    if (s->k == KIR_S_FOR) mark_vlocals(E, s->body);
    if (s->k == KIR_S_ASSIGN && E->k->locals[s->local].lanes == 1)
      E->vlocal[s->local] = true;
  }
}

/* A w-lane alloca for each per-lane local, placed in the entry block. */
static void make_vlocals(emitter *E, int w) {
  LLVMBuilderRef ab = LLVMCreateBuilderInContext(E->ctx);
  LLVMPositionBuilderBefore(ab, E->entry_first);
  for (int l = 0; l < E->k->n_locals; l++)
    if (E->vlocal[l])
      E->vlocals[l] = LLVMBuildAlloca(
          ab, LLVMVectorType(scalar_type(E, E->k->locals[l].dt), (unsigned)w), "");
  LLVMDisposeBuilder(ab);
}

static void emit_vector_loop(emitter *E, const kir_stmt *s, LLVMValueRef lo,
                             LLVMValueRef hi) {
  int w = s->factor;
  mark_vlocals(E, s->body);
  make_vlocals(E, w);
  E->vvar = s->var;
  E->vw = w;
  E->vmode = true;
  E->vmask = NULL;
  LLVMValueRef iv = emit_counted_loop(E, s, lo, hi, w);
  /* masked remainder */
  LLVMBasicBlockRef tail = LLVMAppendBasicBlockInContext(E->ctx, E->fn, "tail");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(E->ctx, E->fn, "done");
  LLVMBuildCondBr(E->b, LLVMBuildICmp(E->b, LLVMIntSLT, iv, hi, ""), tail, done);
  LLVMPositionBuilderAtEnd(E->b, tail);
  E->vars[s->var] = iv;
  E->vmask = lane_mask_from_count(E, LLVMBuildSub(E->b, hi, iv, ""), w);
  int mark = E->memo->n; /* the tail does not dominate `done` */
  emit_stmts(E, s->body);
  memo_pop(E->memo, mark);
  LLVMBuildBr(E->b, done);
  LLVMPositionBuilderAtEnd(E->b, done);
  E->vvar = -1;
  E->vmode = false;
  E->vmask = NULL;
  memset(E->vlocal, 0, sizeof *E->vlocal * (size_t)E->k->n_locals);
}

static void emit_for(emitter *E, const kir_stmt *s) {
  LLVMValueRef lo = emit_scalar(E, s->lo);
  LLVMValueRef hi = emit_scalar(E, s->hi);
  if (s->mark == KIR_PARALLEL && !E->in_parallel) {
    /* this thread's chunk: [lo + min(tid*c, n), lo + min(tid*c + c, n)) */
    LLVMValueRef n = LLVMBuildSub(E->b, hi, lo, "");
    LLVMValueRef zero = i64c(E, 0);
    n = LLVMBuildSelect(E->b, LLVMBuildICmp(E->b, LLVMIntSLT, n, zero, ""),
                        zero, n, "");
    LLVMValueRef c = LLVMBuildSDiv(
        E->b, LLVMBuildAdd(E->b, n, LLVMBuildSub(E->b, E->nth, i64c(E, 1), ""), ""),
        E->nth, "");
    LLVMValueRef a = LLVMBuildMul(E->b, E->tid, c, "");
    LLVMValueRef z = LLVMBuildAdd(E->b, a, c, "");
    a = LLVMBuildSelect(E->b, LLVMBuildICmp(E->b, LLVMIntSLT, a, n, ""), a, n, "");
    z = LLVMBuildSelect(E->b, LLVMBuildICmp(E->b, LLVMIntSLT, z, n, ""), z, n, "");
    LLVMValueRef base = lo;
    lo = LLVMBuildAdd(E->b, base, a, "");
    hi = LLVMBuildAdd(E->b, base, z, "");
    E->in_parallel = true;
    emit_counted_loop(E, s, lo, hi, 1);
    E->in_parallel = false;
    return;
  }
  if (s->mark == KIR_VECTOR && s->factor > 1 && E->vvar < 0) {
    emit_vector_loop(E, s, lo, hi);
    return;
  }
  if (s->mark == KIR_UNROLL && s->lo->k == KIR_E_CONST &&
      s->hi->k == KIR_E_CONST && s->hi->i - s->lo->i <= s->factor &&
      s->hi->i - s->lo->i <= 64) {
    for (int64_t i = s->lo->i; i < s->hi->i; i++) {
      memo_forget_var(E->memo, s->var);
      E->vars[s->var] = i64c(E, i);
      emit_stmts(E, s->body);
    }
    memo_forget_var(E->memo, s->var);
    return;
  }
  emit_counted_loop(E, s, lo, hi, 1);
}

static void emit_stmts(emitter *E, const kir_stmt *s) {
  for (; s; s = s->next) {
    switch (s->k) {
    case KIR_S_FOR: emit_for(E, s); break;
    case KIR_S_STORE: emit_store(E, s); break;
    case KIR_S_ASSIGN:
      if (E->vmode && E->vlocal[s->local])
        LLVMBuildStore(E->b, emit_widened(E, s->value, E->vw), E->vlocals[s->local]);
      else
        LLVMBuildStore(E->b, emit_expr(E, s->value), E->locals[s->local]);
      break;
    case KIR_S_BARRIER: NCC_ASSERT(!"work-group barrier in a CPU kernel"); break;
    case KIR_S_TILE_STORE: emit_tile_store(E, s); break;
    }
  }
}

/* ---- functions ---- */

static void add_fn_attr(emitter *E, LLVMValueRef f, unsigned idx,
                        const char *name) {
  unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
  NCC_ASSERT(kind != 0);
  LLVMAddAttributeAtIndex(f, idx, LLVMCreateEnumAttribute(E->ctx, kind, 0));
}

static void add_target_attrs(emitter *E, LLVMValueRef f) {
  LLVMAddAttributeAtIndex(
      f, LLVMAttributeFunctionIndex,
      LLVMCreateStringAttribute(E->ctx, "target-cpu", 10, E->host->cpu,
                                (unsigned)strlen(E->host->cpu)));
  LLVMAddAttributeAtIndex(
      f, LLVMAttributeFunctionIndex,
      LLVMCreateStringAttribute(E->ctx, "target-features", 15,
                                E->host->features,
                                (unsigned)strlen(E->host->features)));
  add_fn_attr(E, f, LLVMAttributeFunctionIndex, "nounwind");
}

static void init_types(emitter *E) {
  E->t_i1 = LLVMInt1TypeInContext(E->ctx);
  E->t_i8 = LLVMInt8TypeInContext(E->ctx);
  E->t_i32 = LLVMInt32TypeInContext(E->ctx);
  E->t_i64 = LLVMInt64TypeInContext(E->ctx);
  E->t_f32 = LLVMFloatTypeInContext(E->ctx);
  E->t_f64 = LLVMDoubleTypeInContext(E->ctx);
  E->t_ptr = LLVMPointerTypeInContext(E->ctx, 0);
  E->t_void = LLVMVoidTypeInContext(E->ctx);
}

/* The body function: (ptr noalias b0, ..., ptr syms, i64 tid, i64 nth). */
static LLVMValueRef emit_body_fn(emitter *E, const char *name) {
  const kir_kernel *k = E->k;
  LLVMTypeRef params[KIR_MAX_BUFS + 3];
  int np = 0;
  for (int i = 0; i < k->n_bufs; i++) params[np++] = E->t_ptr;
  params[np++] = E->t_ptr;
  params[np++] = E->t_i64;
  params[np++] = E->t_i64;
  LLVMTypeRef ft = LLVMFunctionType(E->t_void, params, (unsigned)np, 0);
  char fname[256];
  snprintf(fname, sizeof fname, "%s.body", name);
  LLVMValueRef f = LLVMAddFunction(E->mod, fname, ft);
  LLVMSetLinkage(f, LLVMInternalLinkage);
  add_target_attrs(E, f);
  add_fn_attr(E, f, LLVMAttributeFunctionIndex, "alwaysinline");
  for (int i = 0; i < k->n_bufs; i++) {
    add_fn_attr(E, f, (unsigned)i + 1, "noalias");
    add_fn_attr(E, f, (unsigned)i + 1, "nocapture");
    E->bufs[i] = LLVMGetParam(f, (unsigned)i);
  }
  E->syms = LLVMGetParam(f, (unsigned)k->n_bufs);
  E->tid = LLVMGetParam(f, (unsigned)k->n_bufs + 1);
  E->nth = LLVMGetParam(f, (unsigned)k->n_bufs + 2);
  E->fn = f;
  LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(E->ctx, f, "entry");
  LLVMPositionBuilderAtEnd(E->b, entry);
  for (int l = 0; l < k->n_locals; l++)
    E->locals[l] = LLVMBuildAlloca(
        E->b, vtype(scalar_type(E, k->locals[l].dt), k->locals[l].lanes), "");
  /* a local buffer is this call's (this thread's) scratch array on the
   * stack; its (unused) parameter is whatever the runtime passed */
  for (int i = 0; i < k->n_bufs; i++)
    if (k->bufs[i].local_elems > 0) {
      LLVMTypeRef at = LLVMArrayType2(mem_type(E, k->bufs[i].dt), (uint64_t)k->bufs[i].local_elems);
      E->bufs[i] = LLVMBuildAlloca(E->b, at, k->bufs[i].name);
      LLVMSetAlignment(E->bufs[i], 64);
    }
  /* a no-op anchor: later allocas (per-lane locals) are inserted before it */
  E->entry_first = LLVMBuildAlloca(E->b, E->t_i8, "anchor");
  emit_stmts(E, k->body);
  LLVMBuildRetVoid(E->b);
  return f;
}

static void emit_wrapper(emitter *E, const char *name, LLVMValueRef body) {
  const kir_kernel *k = E->k;
  LLVMTypeRef params[4] = {E->t_ptr, E->t_ptr, E->t_i32, E->t_i32};
  LLVMTypeRef ft = LLVMFunctionType(E->t_void, params, 4, 0);
  LLVMValueRef f = LLVMAddFunction(E->mod, name, ft);
  add_target_attrs(E, f);
  LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(E->ctx, f, "entry");
  LLVMPositionBuilderAtEnd(E->b, entry);
  LLVMValueRef args[KIR_MAX_BUFS + 3];
  int na = 0;
  LLVMValueRef bufs = LLVMGetParam(f, 0);
  for (int i = 0; i < k->n_bufs; i++) {
    LLVMValueRef idx = i64c(E, i);
    LLVMValueRef p = LLVMBuildGEP2(E->b, E->t_ptr, bufs, &idx, 1, "");
    args[na++] = LLVMBuildLoad2(E->b, E->t_ptr, p, "");
  }
  args[na++] = LLVMGetParam(f, 1);
  args[na++] = LLVMBuildSExt(E->b, LLVMGetParam(f, 2), E->t_i64, "");
  args[na++] = LLVMBuildSExt(E->b, LLVMGetParam(f, 3), E->t_i64, "");
  LLVMBuildCall2(E->b, LLVMGlobalGetValueType(body), body, args, (unsigned)na, "");
  LLVMBuildRetVoid(E->b);
}

ncc_status ncc_llvm_emit_kernel(void *llvm_ctx, void *llvm_module,
                                const kir_kernel *k, const ncc_llvm_host *h) {
  emitter E;
  memset(&E, 0, sizeof E);
  E.ctx = (LLVMContextRef)llvm_ctx;
  E.mod = (LLVMModuleRef)llvm_module;
  E.k = k;
  E.host = h;
  E.vvar = -1;
  init_types(&E);
  E.vars = ncc_calloc((size_t)k->n_vars + 1, sizeof *E.vars);
  E.locals = ncc_calloc((size_t)k->n_locals + 1, sizeof *E.locals);
  E.vlocals = ncc_calloc((size_t)k->n_locals + 1, sizeof *E.vlocals);
  E.vlocal = ncc_calloc((size_t)k->n_locals + 1, sizeof *E.vlocal);
  if (!E.vars || !E.locals || !E.vlocals || !E.vlocal) {
    ncc_free(E.vars, 0);
    ncc_free(E.locals, 0);
    ncc_free(E.vlocals, 0);
    ncc_free(E.vlocal, 0);
    return NCC_ERR_NOMEM;
  }
  memo M;
  memo_init(&M);
  E.memo = &M;
  E.b = LLVMCreateBuilderInContext(E.ctx);
  LLVMValueRef body = emit_body_fn(&E, k->name);
  memo_free(&M);
  emit_wrapper(&E, k->name, body);
  LLVMDisposeBuilder(E.b);
  ncc_free(E.vars, 0);
  ncc_free(E.locals, 0);
  ncc_free(E.vlocals, 0);
  ncc_free(E.vlocal, 0);
  return NCC_OK;
}
