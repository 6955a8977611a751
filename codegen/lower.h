/* codegen/lower.h — lowering graph nodes to kernel IR (codegen/kir.h).
 *
 * Each kernel kind has one lowering file (lower_eltwise.c, ...) that fixes
 * the algorithm and chooses a schedule (loop order, parallel / vector marks)
 * for the target's vector width. A node without a lowering answers
 * NCC_ERR_UNSUPPORTED (no error message set) and runs on its reference
 * kernel instead.
 *
 * The files form layers, each calling only the ones below it
 * (tests/lower/callgraph.py checks there is no cycle):
 *   lower_graph.c                      the graph-lowering loop
 *   lower.c                            dispatch: node / group -> kind
 *   lower_{eltwise,matmul,reduce,conv,blocked}.c   the kinds
 *   lower_gx.c                         group members at a point, epilogues
 *   lower_util.c, lower_formula.c, lower_contract.c   shared helpers
 *   lower_amx.c                        the x86 AMX tile GEMM skeleton
 *   lower_qconv.c                      QLinearConv's shared parts, its AMX kernel
 *   lower_wino.c, lower_bconv_amx.c    blocked Conv algorithms lower_blocked.c picks
 */
#ifndef NCC_LOWER_H
#define NCC_LOWER_H

#include "../passes/fusion.h"
#include "kir.h"
#include "../ir/window.h"

typedef struct ncc_lower_opts {
  int vector_width; /* f32 lanes the target prefers: 16, 8, 4 or 1 */
  /* The target runs x86 AMX tile kernels (KIR_E_TILE_*): int8 dot
   * products (amx-int8), bf16 (amx-bf16). Set only for the in-process cpu
   * target whose OS granted the tile state (codegen/llvm/amx.c). */
  bool amx_int8, amx_bf16;
} ncc_lower_opts;

/* ---- dispatch (lower.c) ---- */

/* Whether some lowering handles this node (op, dtypes, shapes). */
bool ncc_lower_supports(const ncc_node *n);
/* Lower node `n`. `name` names the kernel (unique within a module). */
ncc_status ncc_lower_node(const ncc_node *n, const char *name,
                          const ncc_lower_opts *o, kir_kernel **out);

/* ---- fused groups (passes/fusion.h) ----
 * A group becomes one kernel whose input buffers bind to the group's
 * external values (KIR_BIND_INPUT index i = gr->ext[i]) and whose output 0
 * is the root's output 0; values inside the group live in registers only.
 * NCC_ERR_UNSUPPORTED (no message) when this group cannot be one kernel
 * (shapes, broadcasting, dtypes): its nodes are then lowered one by one. */
ncc_status ncc_lower_group(const ncc_fuse_group *gr, const char *name,
                           const ncc_lower_opts *o, kir_kernel **out);

/* ---- per kind (the dispatchers above pick one) ---- */

/* Nodes touching blocked (#nchw<k>c) values: Reorder, Conv, pools and
 * elementwise ops (lower_blocked.c). */
bool ncc_lower_blocked_supports(const ncc_node *n);
ncc_status ncc_lower_blocked(const ncc_node *n, const char *name,
                             const ncc_lower_opts *o, kir_kernel **out);

ncc_status ncc_lower_eltwise(const ncc_node *n, const char *name,
                             const ncc_lower_opts *o, kir_kernel **out);

bool ncc_lower_transpose_supports(const ncc_node *n);
ncc_status ncc_lower_transpose(const ncc_node *n, const char *name,
                               const ncc_lower_opts *o, kir_kernel **out);
/* Reshape / Flatten / Squeeze / Unsqueeze of plain data: a flat copy
 * (lower_eltwise.c). */
bool ncc_lower_reshape_supports(const ncc_node *n);
ncc_status ncc_lower_reshape(const ncc_node *n, const char *name,
                             const ncc_lower_opts *o, kir_kernel **out);
/* Concat of plain data (up to NCC_LOWER_MAX_OPS inputs): one copy loop
 * per input (lower_eltwise.c). */
bool ncc_lower_concat_supports(const ncc_node *n);
ncc_status ncc_lower_concat(const ncc_node *n, const char *name,
                            const ncc_lower_opts *o, kir_kernel **out);
bool ncc_lower_matmul_supports(const ncc_node *n);
ncc_status ncc_lower_matmul(const ncc_node *n, const char *name,
                            const ncc_lower_opts *o, kir_kernel **out);

/* QLinearMatMul / MatMulInteger with a constant 2-D B (lower_qmatmul.c). */
bool ncc_lower_qmatmul_supports(const ncc_node *n);
ncc_status ncc_lower_qmatmul(const ncc_node *n, const char *name,
                             const ncc_lower_opts *o, kir_kernel **out);
/* QLinearMatMul / MatMulInteger of two activations, batched (lower_qbmm.c). */
bool ncc_lower_qbmm_supports(const ncc_node *n);
ncc_status ncc_lower_qbmm(const ncc_node *n, const char *name,
                          const ncc_lower_opts *o, kir_kernel **out);

bool ncc_lower_reduce_supports(const ncc_node *n);
ncc_status ncc_lower_reduce(const ncc_node *n, const char *name,
                            const ncc_lower_opts *o, kir_kernel **out);

bool ncc_lower_conv_supports(const ncc_node *n);
ncc_status ncc_lower_conv(const ncc_node *n, const char *name,
                          const ncc_lower_opts *o, kir_kernel **out);

/* Per kind: the contraction n (the group's anchor) with its epilogue
 * (gr NULL: the node alone, inputs bound by node input index). */
ncc_status ncc_lower_matmul_ep(const ncc_node *n, const char *name,
                               const ncc_lower_opts *o, const ncc_fuse_group *gr,
                               kir_kernel **out);
ncc_status ncc_lower_conv_ep(const ncc_node *n, const char *name,
                             const ncc_lower_opts *o, const ncc_fuse_group *gr,
                             kir_kernel **out);
/* A group some of whose values are blocked (lower_blocked.c). */
ncc_status ncc_lower_blocked_group(const ncc_fuse_group *gr, const char *name,
                                   const ncc_lower_opts *o, kir_kernel **out);
ncc_status ncc_lower_eltwise_group(const ncc_fuse_group *gr, const char *name,
                                   const ncc_lower_opts *o, kir_kernel **out);
ncc_status ncc_lower_reduce_group(const ncc_fuse_group *gr, const char *name,
                                  const ncc_lower_opts *o, kir_kernel **out);

/* ---- shared helpers: small ones (lower_util.c) ---- */

/* ceil(a / b) for a >= 0, b > 0 (compile-time sizes). */
static inline int64_t ncc_lower_cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
/* 0 <= pos < size, an i64 position against a static size (padding tests). */
kir_expr *ncc_lower_inside(kir_kernel *k, kir_expr *pos, int64_t size);

/* A dim of a declared shape as an i64 expression (a constant, or the
 * run-time value of its symbol). */
kir_expr *ncc_lower_dim(kir_kernel *k, int64_t d);

/* The end of a lowering: on success with k built (kir_ok) *out = k;
 * otherwise k is freed and the error returned (OOM names `what`). */
ncc_status ncc_lower_finish(kir_kernel *k, ncc_status st, const char *what,
                            kir_kernel **out);

/* fn(ctx, lo, hi) over [0, n) in parts of at least `grain`, on up to
 * ncc_options.compile_threads threads (0: one per online core; the caller
 * is one of them), for compile-time work on big weights such as packing.
 * Parts that cannot get a thread run on the caller. */
typedef void (*ncc_lower_part_fn)(void *ctx, int64_t lo, int64_t hi);
void ncc_lower_parallel(int64_t n, int64_t grain, ncc_lower_part_fn fn, void *ctx);

/* A buffer bound to `data` (bytes long, ncc_malloc'd): constants prepared
 * at compile time, owned by the kernel from now on. */
int ncc_lower_data_buf(kir_kernel *k, const char *name, ncc_dtype dt, void *data,
                       size_t bytes);

/* Whether all n floats are bf16 values (low 16 bits zero): weights the
 * precision pass rounded, which bf16 tile kernels may take as they are. */
bool ncc_lower_bf16_exact(const float *v, int64_t n);

/* Integer kernels (QLinearConv, QLinearMatMul): four bytes packed in an
 * i32 moved from s8 to u8 (each byte ^ 0x80); and the requantisation of an
 * i32 sum: f32 multiply by `mult`, round half to even, add the zero point
 * zy, saturate to the u8/s8 range of ydt, convert (the reference's formula,
 * in f32). */
kir_expr *ncc_lower_s8_to_u8(kir_kernel *k, kir_expr *w);
/* Element i of constant u8/s8 data, read by type: weight scans touch
 * millions of bytes, where a conversion through double per element
 * (ncc_idx_read) cost a BERT-base int8 compile seconds. */
static inline int32_t ncc_lower_byte(const ncc_value *v, int64_t i) {
  return v->dtype == NCC_DT_U8 ? ((const uint8_t *)v->data)[i] : ((const int8_t *)v->data)[i];
}
/* Element i of a constant (element 0 of a one-element constant, which
 * broadcasts; 0 for an absent one): zero points, scales, bias. */
double ncc_lower_const_at(const ncc_value *v, int64_t i);
/* The requantisation multiplier of column (channel) j: sa * sb[j] / sy,
 * computed in f32 as the reference combines the scales. */
float ncc_lower_requant_mult(const ncc_value *sa, const ncc_value *sb, const ncc_value *sy,
                             int64_t j);
/* A quantization parameter the kernel bakes in: a constant of one value,
 * or (n > 0) of n values, one per channel or column. */
bool ncc_lower_qparam(const ncc_value *v, int64_t n);
/* 8-bit integer data (the operands of the QLinear kernels). */
static inline bool ncc_lower_is8(const ncc_value *v) {
  return v && (v->dtype == NCC_DT_U8 || v->dtype == NCC_DT_I8);
}
/* Whether every multiplier (f32) sa * sb[j] / sy, j < n, is finite: the
 * compiled requantisation saturates a NaN product to the bottom of the
 * range where the reference takes it as 0, so a zero, infinite or NaN
 * scale (constants of 1 or n f32 values) leaves the node to the reference
 * kernel and both targets agree. */
bool ncc_lower_requant_finite(const ncc_value *sa, const ncc_value *sb, const ncc_value *sy,
                              int64_t n);
kir_expr *ncc_lower_requant(kir_kernel *k, kir_expr *acc, kir_expr *mult, double zy,
                            ncc_dtype ydt);

/* ---- QLinearConv (lower_qconv.c) ----
 * u8 or s8 activations, constant weights whose values minus their zero
 * point fit s8, constant scales and zero points (per-tensor, the weights'
 * per output channel). s8 activations are offset by 128 to u8 (the offset
 * folded into zx). Padding reads the zero point, so the correction
 * corr[oc] = bias - zx * sum(w - zw) is one constant per channel; the
 * requantisation (f32 multiply, round half to even, zero point,
 * saturate) is the reference's, in f32. */
typedef struct ncc_qconv {
  ncc_dtype xdt, ydt;
  int64_t zx, zy; /* zx after the s8 -> u8 offset */
  int64_t ic4;    /* groups of 4 input channels per group */
} ncc_qconv;
bool ncc_lower_qconv_ok(const ncc_node *n, ncc_window *w, ncc_qconv *q);
/* The word of output channel o and quad kq (= channel quad * taps + tap)
 * in a kernel's packed weights. */
typedef int64_t (*ncc_qconv_slot)(const void *ctx, int64_t o, int64_t kq);
/* The weights minus their zero point, four input channels per word (byte
 * j: channel 4 * quad + j; missing channels 0) at slot(ctx, o, kq) of
 * `words` words, and corr[] and the requantisation multipliers mult[]
 * (oc_pad long, zeros past OC) as data buffers *bw, *bc, *bm; false on
 * OOM. */
bool ncc_lower_qconv_pack(kir_kernel *k, const ncc_node *n, const ncc_qconv *q, int64_t oc_pad,
                          int64_t words, ncc_qconv_slot slot, const void *ctx, int *bw, int *bc,
                          int *bm);
/* The four bytes of input channels 4 c4 .. 4 c4 + 3 at one pixel (their
 * element indices chan_index[]) as one u8 quad: channels past icg 0,
 * lanes where `spatial` (may be NULL) is false the zero point. */
kir_expr *ncc_lower_qconv_x4(kir_kernel *k, const ncc_qconv *q, int bx, int64_t icg,
                             kir_expr *c4, kir_expr *chan_index[4], kir_expr *spatial);
/* The AMX-INT8 kernel of a group-1 QLinearConv with static C, H, W and
 * output sizes (N may be symbolic); fits() says whether it applies. */
bool ncc_lower_qconv_amx_fits(const ncc_node *n, const ncc_window *w, const ncc_qconv *q);
ncc_status ncc_lower_qconv_amx(const ncc_node *n, const ncc_window *w, const ncc_qconv *q,
                               kir_kernel *k);
/* The packed vector kernel of the same QLinearConvs (hosts without AMX):
 * panels of vw pixels packed once per task, KIR_E_DOT4 per output
 * channel. */
bool ncc_lower_qconv_vec_fits(const ncc_node *n, const ncc_window *w, const ncc_qconv *q,
                              int vw);
ncc_status ncc_lower_qconv_vec(const ncc_node *n, const ncc_window *w, const ncc_qconv *q,
                               int vw, kir_kernel *k);

/* ---- blocked Conv in bf16 on AMX tiles (lower_bconv_amx.c) ----
 * A group-1 Conv with NCHW16c input and output, RoundBF16 input and
 * bf16-exact constant weights; bx, bb (-1: no bias) and by are the
 * caller's buffers, epi (may be NULL) the fused epilogue of one stored
 * 16-channel row: v at physical output index yi, first channel c0. */
typedef kir_expr *(*ncc_bconv_epi)(void *ctx, kir_kernel *k, kir_block *blk, kir_expr *v,
                                   kir_expr *yi, kir_expr *c0);
bool ncc_lower_bconv_amx_fits(const ncc_node *n, const ncc_window *w);
ncc_status ncc_lower_bconv_amx(const ncc_node *n, const ncc_window *w, kir_kernel *k, int bx,
                               int bb, int by, ncc_bconv_epi epi, void *ctx);

/* ---- blocked 3x3 stride-1 Conv by Winograd F(m x m, 3 x 3) (lower_wino.c) ----
 * m = 2 or 4, as the winograd pass marked the node (`conv.winograd`);
 * buffers and epilogue as ncc_lower_bconv_amx's. fits: whether the kernel
 * applies on vw-lane vectors (its stack scratch included). */
bool ncc_lower_wino_fits(const ncc_node *n, const ncc_window *w, int m, int vw);
ncc_status ncc_lower_bconv_wino(const ncc_node *n, const ncc_window *w, int m, int vw,
                                kir_kernel *k, int bx, int bb, int by, ncc_bconv_epi epi,
                                void *ctx);
#define NCC_CONV_NB_MAX 4 /* output-channel blocks per pass */
#define NCC_CONV_R_MAX 14 /* output pixels per pass */
/* The blocked Conv's register tile for ocb output blocks of kb channels
 * over P pixels (or tiles) on vw-lane vectors: nb blocks x R pixels. */
void ncc_lower_conv_tile(int64_t ocb, int kb, int vw, int64_t P, int *nb, int *R);

/* ---- x86 AMX tile GEMM (lower_amx.c) ----
 * C = A (M x K, rows lda elements apart, from memory) times B (K x N,
 * packed: panels of 16 columns, each K*a_esize/4 rows of 16 i32 words
 * holding a column's 4 bytes of k), as one parallel loop appended to
 * `top`; `row` writes the epilogue of each row of C: its 16 sums (acc_dt,
 * loaded from the task's stored tiles), row index, first column and how
 * many columns to store (0: none). */
typedef struct ncc_amx_gemm {
  int a_buf, b_buf;
  int64_t lda, K, N;
  int a_esize;     /* bytes per element of A: 1 (int8) or 2 (bf16) */
  bool a_f32;      /* A is f32 (a_esize 2): converted per task to bf16
                      scratch rows of K elements (K a multiple of 32) */
  int64_t a_cols;  /* a_f32: A's own columns (<= K: the rest are zeros) */
  kir_expr *M;     /* rows at run time */
  int64_t m_static; /* M when static, else 0 */
  int64_t m_min;   /* M's least non-zero value (symbolic M) */
  kir_tile_op dp;
  ncc_dtype acc_dt; /* I32 or F32 */
  void (*row)(kir_kernel *k, kir_block *blk, void *ctx, kir_expr *sums, kir_expr *row,
              kir_expr *col, kir_expr *count);
  void *ctx;
} ncc_amx_gemm;
/* Whether the skeleton handles g's sizes (K's bytes a multiple of 4; M
 * static or never between 1 and 15; a_f32: K at most 4096, the scratch
 * rows on the stack within 128 KiB). */
bool ncc_lower_amx_fits(const ncc_amx_gemm *g);
/* B packed for g (b_buf's data): word(ctx, q, n) is column n's 4 bytes
 * at k bytes 4q..4q+3 of B. NULL on OOM; *bytes: its size. */
typedef uint32_t (*ncc_amx_word)(const void *ctx, int64_t q, int64_t n);
uint32_t *ncc_lower_amx_pack(const ncc_amx_gemm *g, ncc_amx_word word, const void *ctx,
                             size_t *bytes);
void ncc_lower_amx_gemm(kir_kernel *k, kir_block *top, const ncc_amx_gemm *g);

/* Whether every input and output of n has the plain layout. */
bool ncc_lower_plain(const ncc_node *n);

/* The decoded window (ir/window.h) of a 2-D Conv / pool; false for windows
 * the CPU kernels do not handle (auto_pad SAME_*). */
bool ncc_lower_window(const ncc_node *n, ncc_window *w);

/* Strides (elements, i64 expressions) of value v read at the points of
 * shape s viewed as n_view consecutive dim groups (group j = dims
 * [first[j], first[j+1]), first[n_view] = s->rank), numpy-aligned: 0 where
 * v is broadcast over a whole group; false when v covers only part of a
 * group or does not broadcast to s. */
bool ncc_lower_view_strides(kir_kernel *k, const ncc_value *v,
                            const ncc_shape *s, const int *first, int n_view,
                            kir_expr **stride);

/* ---- shared helpers: elementwise formulas (lower_formula.c) ---- */

/* Most operands of one elementwise loop nest (one buffer is the output). */
#define NCC_LOWER_MAX_OPS (KIR_MAX_BUFS - 1)

/* The op, attributes and dtypes of an elementwise node have a formula
 * (shapes are not checked). */
bool ncc_lower_eltwise_op_ok(const ncc_node *n);
/* ... and its operands broadcast to its output (ncc_lower_broadcast). */
bool ncc_lower_eltwise_supports(const ncc_node *n);

/* The broadcast structure of a loop nest over shape `os` reading operands
 * ops[]: dims collapsed into groups every operand treats alike. */
typedef struct ncc_bcast {
  int n_ops;
  int m;                     /* collapsed dims */
  int first[NCC_MAX_RANK];   /* first output dim of each group */
  int last[NCC_MAX_RANK];    /* one past the last */
  bool bc[NCC_LOWER_MAX_OPS][NCC_MAX_RANK]; /* operand broadcasts over the group */
} ncc_bcast;
/* The plan of operands ops[0..n_ops) over output shape os; false when one
 * does not broadcast to it (numpy rules, decidable at compile time). */
bool ncc_lower_broadcast(const ncc_value *const *ops, int n_ops,
                         const ncc_shape *os, ncc_bcast *p);
/* The non-omitted inputs of n (at most NCC_LOWER_MAX_OPS); their count. */
int ncc_lower_operands(const ncc_node *n, const ncc_value **ops);
/* Input i of n as broadcasting reads it, when that is not its own shape
 * (a per-axis Q/DQ scale or zero point: ir/qdq.h): *view is a copy of the
 * value with that shape; false when the value reads as itself. */
bool ncc_lower_operand_view(const ncc_node *n, int i, ncc_value *view);
/* ncc_lower_operands with such views (views: room for 3, a Q/DQ's). */
int ncc_lower_operand_views(const ncc_node *n, const ncc_value **ops, ncc_value *views);

/* The scalar formula of elementwise node n on operand values x[0..nx) (its
 * non-omitted inputs in order), each `lanes` wide. */
kir_expr *ncc_lower_eltwise_formula(kir_kernel *k, const ncc_node *n,
                                    kir_expr **x, int nx, int lanes);

/* ---- shared helpers: contractions (lower_contract.c) ---- */

/* A f32 MatMul or Gemm as C[b](M x N) = A[b](M x K) B[b](K x N). */
typedef struct ncc_contraction {
  int64_t M, N, K;             /* dims (may be symbolic) */
  int64_t batch[NCC_MAX_RANK]; /* batch dims, outermost (product: batches) */
  int n_batch;
  int64_t fold[NCC_MAX_RANK];  /* A's leading dims folded into M (B rank 2) */
  int n_fold;
  bool a_batched, b_batched;   /* has the batch dims (else shared by all) */
  bool trans_a, trans_b;       /* Gemm's transA, transB */
  float alpha, beta;           /* Gemm's (1 otherwise) */
  const ncc_value *c;          /* Gemm's C, broadcast to [M, N]; or NULL */
} ncc_contraction;
/* MatMul: A and B of rank >= 2, and B of rank 2 (A's batch dims fold into
 * M), or A of rank 2 (shared by B's batches), or equal batch dims on both
 * (no broadcasting between them). Gemm: A and B of rank 2, C of rank <= 2
 * whose dims are 1 or full. False for anything else. */
bool ncc_lower_contraction(const ncc_node *n, ncc_contraction *c);

/* ---- shared helpers: fused groups at a point (lower_gx.c) ---- */

/* Evaluating a group's elementwise members at one point of the iteration
 * space (lower_gx.c). A kind's lowering supplies `ext` (an external
 * value at the point) and optionally `special` (members it computes itself:
 * the contraction's accumulator, a reduction's per-row result; NULL: use
 * the member's formula). Members read more than once are kept in locals. */
typedef struct ncc_gx ncc_gx;
typedef kir_expr *(*ncc_gx_ext_fn)(ncc_gx *x, int ext, int lanes);
typedef kir_expr *(*ncc_gx_special_fn)(ncc_gx *x, kir_block *blk, int member,
                                       int lanes);
struct ncc_gx {
  kir_kernel *k;
  const ncc_fuse_group *gr;
  ncc_gx_ext_fn ext;
  ncc_gx_special_fn special;
  void *ctx;
  int ext_buf[NCC_FUSE_MAX_EXT]; /* kernel buffer per external value, -1 */
  int uses[NCC_FUSE_MAX_MEMBERS];
  kir_expr *memo[NCC_FUSE_MAX_MEMBERS];
  int memo_lanes;
  int local[NCC_FUSE_MAX_MEMBERS][2]; /* scalar / wide, -1: none yet */
  int dup[NCC_FUSE_MAX_MEMBERS][2];   /* operand of a formula using it twice */
};
void ncc_gx_init(ncc_gx *x, kir_kernel *k, const ncc_fuse_group *gr);
/* Start a new point (forget the values of the previous one). */
void ncc_gx_point(ncc_gx *x);
/* The value of v (a member's output or an external value) at the point. */
kir_expr *ncc_gx_value(ncc_gx *x, kir_block *blk, const ncc_value *v, int lanes);
kir_expr *ncc_gx_member(ncc_gx *x, kir_block *blk, int m, int lanes);
int ncc_gx_member_of(const ncc_gx *x, const ncc_value *v); /* -1: external */
int ncc_gx_ext_of(const ncc_gx *x, const ncc_value *v);    /* -1: internal */
/* The kernel buffer of external value e (created on first use). */
int ncc_gx_buf(ncc_gx *x, int e);

/* An epilogue: the elementwise members of an epilogue group applied to the
 * contraction's result where it is stored. The contraction's lowering sets
 * `acc` (its value at the point) and `coord` (the point's index in each
 * view group of its output) and calls ncc_epilogue_apply. */
typedef struct ncc_epilogue {
  ncc_gx gx;
  int anchor; /* member index of the contraction */
  int n_view;
  int first[NCC_MAX_RANK + 1];
  kir_expr *stride[NCC_FUSE_MAX_EXT][NCC_MAX_RANK];
  kir_expr *coord[NCC_MAX_RANK];
  kir_expr *acc;
  kir_expr *count; /* explicit vectors: active lanes (masked loads) */
  int lanes;       /* >1: explicit vectors along the last view group */
} ncc_epilogue;
/* Prepare for output view `first` (n_view groups); false when an external
 * operand of the epilogue does not fit the view. */
bool ncc_epilogue_init(ncc_epilogue *ep, kir_kernel *k,
                       const ncc_fuse_group *gr, const int *first, int n_view);
kir_expr *ncc_epilogue_apply(ncc_epilogue *ep, kir_block *blk);
/* The buffer index node input `in` of the anchor binds to (its external
 * value's index when fused, else `in`). */
int ncc_lower_bind_index(const ncc_epilogue *ep, const ncc_node *n, int in);

/* ---- the graph-lowering loop (lower_graph.c) ----
 * One loop lowers a graph to kernels for every target (the cpu JIT,
 * --emit=obj/lib, the GPU programs). It reads the fuse plan, tries each
 * fused group as one kernel and, where the target's group lowering
 * declines, lowers the group's members one by one; it names every kernel
 * after its node ("<prefix>k<i>_<op>", "_fused" for a group), so names are
 * unique within a module, and fills one kernel slot per node. What differs
 * between targets is a table of their lowering functions
 * (ncc_lower_target) and a request (options, name prefix and style). */
/* A target's lowering functions. */
typedef struct ncc_lower_target {
  /* Whether lower_node may take node n (others stay host nodes). */
  bool (*supports)(const ncc_node *n);
  /* As ncc_lower_node above: NCC_ERR_UNSUPPORTED, no message, when
   * the node runs on its reference kernel instead. */
  ncc_status (*lower_node)(const ncc_node *n, const char *name,
                           const ncc_lower_opts *o, kir_kernel **out);
  /* As ncc_lower_group above; NULL: the target fuses no group. */
  ncc_status (*lower_group)(const ncc_fuse_group *gr, const char *name,
                            const ncc_lower_opts *o, kir_kernel **out);
} ncc_lower_target;

/* The target-independent lowerings above, as the LLVM targets use them. */
extern const ncc_lower_target ncc_lower_target_generic;

typedef struct ncc_lower_request {
  const ncc_lower_target *target;
  ncc_lower_opts opts; /* handed to the target's functions */
  /* Kernel names: prefix (NULL: none; an identifier head such as "net_"),
   * then "k<i>_<op>" with i the node index (a group's root) and op its op
   * (a group's: its first member's, or with name_by_anchor its anchor's,
   * passes/fusion.h), then "_fused" for a group. */
  const char *prefix;
  bool name_by_anchor;
  /* Print each kernel's IR to the kernel-IR dump when that dump is on
   * (ir/options.h). */
  bool dump;
  /* No kernel for a standalone view node (ncc_node_is_view): the host
   * executor hands the input's buffer on (runtime/exec.c). */
  bool skip_views;
} ncc_lower_request;

/* Lower graph g with its fuse plan fp (NULL: no groups). kernels[i] (one
 * slot per node) gets node i's kernel, or stays NULL for nodes the target
 * does not lower; a group that lowers as a whole has its kernel in its
 * root's slot, group_kernel[gi] set (group_kernel may be NULL), and no
 * kernels for its other members. *n_lowered: kernels made. */
ncc_status ncc_lower_graph(const ncc_graph *g, const ncc_fuse_plan *fp,
                           const ncc_lower_request *rq, kir_kernel **kernels,
                           bool *group_kernel, int *n_lowered);

/* The same, reading the plan of g and allocating the arrays: the result
 * owns them (ncc_lowered_free frees every one still set; a caller keeping
 * one sets its field to NULL first). */
typedef struct ncc_lowered {
  int n_nodes;
  ncc_fuse_plan *fp;
  kir_kernel **kernels; /* n_nodes slots */
  bool *group_kernel;   /* one per group of fp */
  int n_kernels;
} ncc_lowered;
ncc_status ncc_lower_graph_new(const ncc_graph *g, const ncc_lower_request *rq,
                               ncc_lowered *out);
void ncc_lowered_free(ncc_lowered *l);

#endif /* NCC_LOWER_H */
