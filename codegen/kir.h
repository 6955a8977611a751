/* codegen/kir.h — the kernel IR: a small loop-level IR shared by every
 * code generator (LLVM, and the CUDA C / OpenCL C renderer), so it holds
 * no LLVM types.
 *
 * A kernel is a loop nest over buffers. Loops carry schedule marks:
 * `parallel` (outermost only: split statically over threads), `vector(w)`
 * (the emitter vectorizes a scalar body w lanes wide, masked tail
 * included), `unroll(u)`. Loads and stores take an element index (an i64
 * expression, affine in the loop variables in the common case). Expressions
 * are scalar or explicitly vector (`lanes` > 1: contiguous loads of `lanes`
 * elements, splats, horizontal reductions), which contractions and
 * reductions use for register tiles and accumulators. Sizes that are not
 * static are SYM expressions: the value of graph symbol `id`, passed at run
 * time, so one kernel serves every batch size.
 *
 * Inside a `vector` loop the body is scalar code: locals assigned there
 * become per-lane (vector) values, so reductions nested in a vectorized
 * loop (convolution, pooling) are written as plain scalar accumulations.
 *
 * Builders never fail: on OOM they set k->oom and return a poison node, so
 * lowering code stays linear; check kir_ok() before using a kernel.
 */
#ifndef NCC_KIR_H
#define NCC_KIR_H

#include <stdio.h>

#include "../ir/ir.h"

typedef enum kir_ek {
  KIR_E_CONST,  /* f (float types) or i (integer/bool types) */
  KIR_E_VAR,    /* loop variable `id` (i64) */
  KIR_E_SYM,    /* graph symbol `id` at run time (i64) */
  KIR_E_LOCAL,  /* local variable `id` */
  KIR_E_LOAD,   /* buffer `id` at element index a; c: active lanes or NULL;
                   b: a bool guard or NULL (false: 0, memory not touched) */
  KIR_E_UN,     /* op(a) */
  KIR_E_BIN,    /* op(a, b) */
  KIR_E_FMA,    /* a * b + c */
  KIR_E_SELECT, /* a ? b : c */
  KIR_E_CAST,   /* a converted to dt */
  KIR_E_SPLAT,  /* scalar a repeated `lanes` times */
  KIR_E_HREDUCE, /* op (ADD or MAX) over the lanes of a, a scalar */
  KIR_E_DOT4,   /* i32: c + sum over the 4 bytes j of each i32 lane of
                   u8(a byte j) * s8(b byte j) (wrapping): the int8 dot
                   product instructions (x86 VNNI vpdpbusd) */
  /* Matrix tiles (x86 AMX; the LLVM emitter only, where the lowering was
   * told the host has them: ncc_lower_opts.amx). A tile value is 16 rows
   * of 64 bytes, typed <256 x i32>; its shape (rows, bytes per row) is a
   * static part of the node, i = rows | colsb << 16 (| k << 32 for DP). */
  KIR_E_TILE_LOAD, /* rows of buffer `id` from element index a, row stride
                      b elements */
  KIR_E_TILE_ZERO, /* a zero tile */
  KIR_E_TILE_DP    /* c + a * b: id = kir_tile_op (k = bytes of a's rows) */
} kir_ek;

/* The tile dot products (KIR_E_TILE_DP's id): a's rows hold k bytes of
 * quads (int8) or pairs (bf16); b is k/4 (k/2) rows of 16 such groups,
 * one per column of c (the "VNNI" layout); c is i32 or f32. */
typedef enum kir_tile_op {
  KIR_TILE_DPBUSD,  /* u8 a x s8 b -> i32 */
  KIR_TILE_DPBSSD,  /* s8 a x s8 b -> i32 */
  KIR_TILE_DPBF16PS, /* bf16 a x bf16 b -> f32 */
  KIR_TILE_DPBSUD,  /* s8 a x u8 b -> i32 (constant weights as a) */
  KIR_TILE_DPBUUD   /* u8 a x u8 b -> i32 */
} kir_tile_op;

typedef enum kir_op {
  /* binary */
  KIR_ADD, KIR_SUB, KIR_MUL, KIR_DIV, KIR_REM, KIR_MIN, KIR_MAX, KIR_POW,
  KIR_LT, KIR_LE, KIR_GT, KIR_GE, KIR_EQ, KIR_NE, KIR_AND, KIR_OR,
  /* unary */
  KIR_NEG, KIR_ABS, KIR_SQRT, KIR_EXP, KIR_LOG, KIR_LOG1P, KIR_ERF, KIR_TANH,
  KIR_NOT, KIR_FLOOR,
  KIR_CEIL, KIR_ROUND, /* ROUND: to nearest, ties to even */
  KIR_SIN, KIR_COS, KIR_TAN, KIR_ASIN, KIR_ACOS, KIR_ATAN,
  KIR_SINH, KIR_COSH, KIR_ASINH, KIR_ACOSH, KIR_ATANH,
  KIR_RBF16, KIR_RF16, /* f32 rounded to bf16 / f16, ties to even, kept f32 */
  KIR_OP_COUNT
} kir_op;

typedef struct kir_expr {
  kir_ek k;
  kir_op op;
  ncc_dtype dt; /* element type; NCC_DT_BOOL for conditions */
  int lanes;    /* 1: scalar */
  int id;
  double f;
  int64_t i;
  struct kir_expr *a, *b, *c;
} kir_expr;

typedef enum kir_mark {
  KIR_SERIAL = 0,
  KIR_PARALLEL,
  KIR_VECTOR, /* factor = lanes */
  KIR_UNROLL, /* factor = unroll count: a full unroll by the emitter when
               * trip <= factor (constant bounds, at most 64), else LLVM is
               * told to unroll by factor (<= 64); unroll(1) keeps a loop
               * rolled (a body ncc unrolled already, on which LLVM's
               * unroller would only spend compile time) */
  /* GPU kernels only (codegen/cstyle; the LLVM emitter never sees them):
   * a gpu.group loop spreads its iterations over work-groups (thread
   * blocks); a gpu.thread loop, directly inside one, spans exactly `factor`
   * iterations, one per work-item of the group, so a barrier inside it is
   * reached by every work-item. */
  KIR_GPU_GROUP,
  KIR_GPU_THREAD
} kir_mark;

/* BARRIER: work-group barrier over local memory (GPU kernels only).
 * TILE_STORE: tile `value` (shape rows | colsb << 16 in factor) to buf at
 * element index, rows `count` elements apart (x86 AMX, LLVM only). */
typedef enum kir_sk {
  KIR_S_FOR, KIR_S_STORE, KIR_S_ASSIGN, KIR_S_BARRIER, KIR_S_TILE_STORE
} kir_sk;

typedef struct kir_stmt {
  kir_sk k;
  struct kir_stmt *next;
  /* FOR: var in [lo, hi) step 1 */
  int var;
  kir_expr *lo, *hi;
  kir_mark mark;
  int factor;
  struct kir_stmt *body;
  /* STORE: buf[index] = value (value->lanes contiguous elements; count:
   * active lanes or NULL); ASSIGN: local = value */
  int buf, local;
  kir_expr *index, *value, *count;
} kir_stmt;

/* How the runtime binds a buffer (codegen leaves it alone). */
typedef enum kir_bind_kind {
  KIR_BIND_INPUT,  /* node input `index` */
  KIR_BIND_OUTPUT, /* node output `index` */
  KIR_BIND_DATA    /* `data`: constant data prepared at compile time */
} kir_bind_kind;

typedef struct kir_buf {
  const char *name;
  ncc_dtype dt;
  bool is_output;
  kir_bind_kind bind;
  int index;
  const void *data;
  size_t data_bytes; /* size of `data` (ahead-of-time output embeds it) */
  void *owned; /* allocation behind `data` that the kernel owns (ncc_free);
                  whoever keeps `data` past the kernel takes it over */
  int64_t local_elems; /* > 0: a kernel-local array of this many elements,
                          never bound: work-group (shared) memory on a GPU,
                          the calling thread's stack on the cpu */
} kir_buf;

typedef struct kir_local {
  ncc_dtype dt;
  int lanes;
} kir_local;

/* Buffers of one kernel (its ABI passes them as a pointer array). 64 so a
 * DenseNet Concat of up to 63 inputs is one kernel; the AOT runtime's step
 * table (codegen/llvm/aot_rt/aot_rt.h) has the same bound. */
#define KIR_MAX_BUFS 64

typedef struct kir_kernel {
  ncc_arena arena;
  const char *name;
  kir_buf bufs[KIR_MAX_BUFS];
  int n_bufs;
  kir_local *locals;
  int n_locals, cap_locals;
  int n_vars;
  kir_stmt *body; /* top-level statements */
  /* Rough work per output element, for choosing a thread count. */
  double cost_per_elem;
  bool oom;
} kir_kernel;

/* A statement list under construction. */
typedef struct kir_block {
  kir_stmt *head, *tail;
} kir_block;

kir_kernel *kir_kernel_new(const char *name); /* NULL on OOM (error set) */
void kir_kernel_free(kir_kernel *k);
static inline bool kir_ok(const kir_kernel *k) { return k && !k->oom; }

int kir_buf_add(kir_kernel *k, const char *name, ncc_dtype dt, bool is_output);
/* Shorthands binding a buffer to node input / output `index`. */
int kir_buf_input(kir_kernel *k, int index, ncc_dtype dt);
int kir_buf_output(kir_kernel *k, int index, ncc_dtype dt);
int kir_local_add(kir_kernel *k, ncc_dtype dt, int lanes);
/* A kernel-local array of `elems` elements: work-group (shared) memory on
 * a GPU, a stack array of each call on the cpu (codegen/llvm/emit.c). */
int kir_buf_local(kir_kernel *k, const char *name, ncc_dtype dt, int64_t elems);
int kir_var_new(kir_kernel *k);

/* Expressions (constant-folding the easy index arithmetic). */
kir_expr *kir_const_f(kir_kernel *k, ncc_dtype dt, double v);
kir_expr *kir_const_i(kir_kernel *k, int64_t v); /* i64 */
kir_expr *kir_var(kir_kernel *k, int var);
kir_expr *kir_sym(kir_kernel *k, int sym);
kir_expr *kir_local_ref(kir_kernel *k, int local);
/* Scalar load, or a `lanes`-wide contiguous one; count may be NULL. */
kir_expr *kir_load(kir_kernel *k, int buf, kir_expr *index);
/* Scalar load that yields 0 without touching memory where `guard` is false
 * (padding: the index may then be out of bounds). */
kir_expr *kir_load_guarded(kir_kernel *k, int buf, kir_expr *index,
                           kir_expr *guard);
kir_expr *kir_loadv(kir_kernel *k, int buf, kir_expr *index, int lanes,
                    kir_expr *count);
kir_expr *kir_un(kir_kernel *k, kir_op op, kir_expr *a);
kir_expr *kir_bin(kir_kernel *k, kir_op op, kir_expr *a, kir_expr *b);
kir_expr *kir_fma(kir_kernel *k, kir_expr *a, kir_expr *b, kir_expr *c);
kir_expr *kir_select(kir_kernel *k, kir_expr *c, kir_expr *a, kir_expr *b);
kir_expr *kir_cast(kir_kernel *k, ncc_dtype dt, kir_expr *a);
kir_expr *kir_splat(kir_kernel *k, kir_expr *a, int lanes);
kir_expr *kir_hreduce(kir_kernel *k, kir_op op, kir_expr *a);
/* c + the u8 x s8 dot products of the 4 bytes packed in each i32 of a and
 * b (every operand i32, lanes of c). */
kir_expr *kir_dot4(kir_kernel *k, kir_expr *a, kir_expr *b, kir_expr *c);
/* Tiles (KIR_E_TILE_*): a rows x colsb-byte tile of buffer `buf` at
 * element `index`, rows `stride` elements apart; a zero tile; c + a * b
 * with c's shape (rows, colsb) and a's bytes per row k; a tile stored
 * (kir_tile_store, a statement). */
kir_expr *kir_tile_load(kir_kernel *k, int buf, kir_expr *index, kir_expr *stride, int rows,
                        int colsb);
kir_expr *kir_tile_zero(kir_kernel *k, int rows, int colsb);
kir_expr *kir_tile_dp(kir_kernel *k, kir_tile_op op, kir_expr *a, kir_expr *b, kir_expr *c,
                      int rows, int colsb, int kbytes);
/* i64 index helpers that fold constants (x*1, x+0, c1*c2, ...). */
kir_expr *kir_add(kir_kernel *k, kir_expr *a, kir_expr *b);
kir_expr *kir_mul(kir_kernel *k, kir_expr *a, kir_expr *b);
kir_expr *kir_min(kir_kernel *k, kir_expr *a, kir_expr *b);
kir_expr *kir_cdiv(kir_kernel *k, kir_expr *a, int64_t d); /* ceil(a/d) */
bool kir_is_const(const kir_expr *e, int64_t v);

/* Statements: appended to a block; a FOR returns its body block. */
kir_stmt *kir_for(kir_kernel *k, kir_block *blk, int var, kir_expr *lo,
                  kir_expr *hi, kir_mark mark, int factor);
void kir_store(kir_kernel *k, kir_block *blk, int buf, kir_expr *index,
               kir_expr *value, kir_expr *count);
void kir_assign(kir_kernel *k, kir_block *blk, int local, kir_expr *value);
void kir_tile_store(kir_kernel *k, kir_block *blk, int buf, kir_expr *index, kir_expr *stride,
                    kir_expr *tile, int rows, int colsb);
/* A work-group barrier (GPU kernels, inside a gpu.thread loop). */
void kir_barrier(kir_kernel *k, kir_block *blk);
/* The block of a FOR's body, to append to. */
kir_block kir_body_begin(void);
void kir_body_end(kir_stmt *loop, kir_block *body);
void kir_kernel_set_body(kir_kernel *k, kir_block *blk);

/* Structural identity (repeated-block reuse): equal for kernels that
 * compile to the same code, whatever their names and whatever data their
 * KIR_BIND_DATA buffers point to (that is passed at launch). */
uint64_t kir_kernel_hash(const kir_kernel *k);
bool kir_kernel_equal(const kir_kernel *a, const kir_kernel *b);
/* rep[i] = the first j <= i with ks[j] structurally equal to ks[i] (NULL
 * entries: rep -1). Returns the number of distinct kernels, -1 on OOM. */
int kir_dedupe(kir_kernel *const *ks, int n, int *rep);

/* Feed everything of k that shapes its code into a SHA-256 (the compile
 * cache's key, codegen/llvm/jit.c): what kir_kernel_equal compares, as
 * whole fields, so no two different kernels feed the same bytes. */
struct ncc_sha256;
void kir_kernel_digest(const kir_kernel *k, struct ncc_sha256 *s);

/* Human-readable form (tests, NCC_DEBUG_KIR, --emit=kir). */
void kir_print(const kir_kernel *k, FILE *f);
const char *kir_op_name(kir_op op);

#endif /* NCC_KIR_H */
