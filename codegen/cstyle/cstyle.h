/* codegen/cstyle/cstyle.h — kernel IR to C-family GPU source (CUDA C,
 * OpenCL C) with one renderer.
 *
 * The two dialects differ only in data: an ncc_cstyle_lang holds the kernel
 * and buffer qualifiers, the thread/group index expressions, the barrier,
 * the local-memory qualifier, type and math-function names and a prelude
 * (tinygrad's CStyleLanguage). The renderer has no per-dialect branch.
 *
 * How a kernel maps onto work-groups (the "GPU schedule"):
 * - Kernels lowered for the GPU (gpu_lower.c) say it explicitly: a
 *   gpu.group loop over work-groups with a gpu.thread loop of exactly
 *   `factor` work-items inside, local arrays and barriers.
 * - Kernels written for the CPU (codegen/lower*.c: an outermost `parallel`
 *   loop whose iterations are independent, `vector` loops whose iterations
 *   are independent lanes) are mapped by rule, per top-level parallel
 *   loop P:
 *   R1 "flat": P and a chain of loops down to a vector loop V form a
 *      rectangular nest (bounds known before the kernel starts) with only
 *      scalar assignments between the loops: the whole nest is flattened
 *      over all work-items (grid-stride).
 *   R2 "group": the chain exists but its bounds depend on P's variable:
 *      P is spread over work-groups and the rest of the chain over the
 *      work-items of a group.
 *   R3 "rows": otherwise each work-item runs whole iterations of P.
 *   R1/R2 also need that no buffer is both read and written by the kernel
 *   (then the nest's iterations are independent); otherwise R3.
 *   Statements outside any parallel loop run on work-item 0 only.
 * Explicit vectors (lanes > 1: register tiles, vector accumulators) are
 * scalarized: a w-lane local becomes w scalars, a vector expression is
 * rendered once per lane, masked lanes become conditionals.
 */
#ifndef NCC_CSTYLE_H
#define NCC_CSTYLE_H

#include "../kir.h"

typedef struct ncc_cstyle_lang {
  const char *name;    /* "cuda", "opencl" */
  const char *prelude; /* once at the top of a program (defines NCC_INF ...) */
  const char *kernel_decl;   /* before " name(" ("__kernel void", ...) */
  const char *exact_local_attr; /* printf format (%d: work-items) before a
                                   kernel that needs that group size */
  const char *fn_qual;          /* qualifiers of the prelude's helpers */
  const char *f64_guard;        /* #if around f64 helpers, or NULL */
  const char *buf_qual;      /* before a buffer parameter's element type */
  const char *restrict_kw;   /* after the '*' of a buffer parameter */
  const char *local_qual;    /* a work-group local array declaration */
  const char *barrier;       /* a work-group barrier statement */
  const char *unroll_pragma; /* a line before an unrolled loop */
  /* i64 expressions of the launch geometry (1-D) */
  const char *global_id, *global_size, *group_id, *num_groups, *local_id,
      *local_size;
  const char *type[NCC_DT_COUNT];     /* register types; bool as int */
  const char *mem_type[NCC_DT_COUNT]; /* element types in memory */
  const char *i64_suffix;             /* integer literal suffix of i64 */
  /* math functions by kernel-IR op, f32 and f64 (NULL: an operator) */
  const char *fn_f32[KIR_OP_COUNT], *fn_f64[KIR_OP_COUNT];
  const char *fma_f32, *fma_f64;
} ncc_cstyle_lang;

/* The dialect named `name` ("opencl", "cuda"; NULL: none). The dialects
 * are rows of one table in lang.c, so a new C-style target adds its
 * dialect there and finds it by name from its driver. */
const ncc_cstyle_lang *ncc_cstyle_lang_find(const char *name);

/* A growable string (OOM sets `oom`; appends become no-ops). */
typedef struct ncc_sbuf {
  char *s;
  size_t len, cap;
  bool oom;
} ncc_sbuf;
void ncc_sbuf_printf(ncc_sbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void ncc_sbuf_puts(ncc_sbuf *b, const char *s);
void ncc_sbuf_free(ncc_sbuf *b);

/* The launch geometry of a rendered kernel: `local_size` work-items per
 * group and as many groups as the largest term asks for, where a term is
 * ceil(prod_i max(0, hi_i - lo_i) / per_group). The expressions are the
 * kernel's own (constants and graph symbols only) and are evaluated before
 * each launch; every loop is grid-stride, so any group count is correct and
 * these only size the launch. */
#define NCC_CSTYLE_MAX_TERMS 8
#define NCC_CSTYLE_MAX_NEST 4
typedef struct ncc_cstyle_term {
  int n;
  const kir_expr *lo[NCC_CSTYLE_MAX_NEST], *hi[NCC_CSTYLE_MAX_NEST];
  int per_group;
} ncc_cstyle_term;

typedef struct ncc_cstyle_info {
  int local_size;
  bool exact_local; /* the kernel needs exactly local_size (barriers) */
  int n_terms;
  ncc_cstyle_term terms[NCC_CSTYLE_MAX_TERMS];
  /* parameters in order: the kernel's global buffers, then graph symbols */
  int n_bufs, bufs[KIR_MAX_BUFS];
  int n_syms, syms[16];
  int64_t local_bytes; /* work-group local memory */
} ncc_cstyle_info;

/* The prelude of a program: the dialect's, then helper functions. */
void ncc_cstyle_prelude(const ncc_cstyle_lang *lang, ncc_sbuf *out);
/* Append kernel `k` in dialect `lang` to `out` and describe its launch. */
ncc_status ncc_cstyle_render(const ncc_cstyle_lang *lang, const kir_kernel *k,
                             ncc_sbuf *out, ncc_cstyle_info *info);

/* Evaluate an i64 expression of constants and symbols (syms indexed by
 * symbol id); false when it holds anything else. */
bool ncc_cstyle_eval(const kir_expr *e, const int64_t *syms, int64_t *out);
/* The number of groups a kernel needs for these symbol values (>= 1, at
 * most `max_groups`). */
int64_t ncc_cstyle_groups(const ncc_cstyle_info *info, const int64_t *syms,
                          int64_t max_groups);

#endif /* NCC_CSTYLE_H */
