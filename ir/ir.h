/* ir/ir.h — ncc's graph IR (internal to libncc).
 *
 * A graph owns one arena; every value, node, attribute and string of the
 * graph lives in it and dies with ncc_graph_free. Nodes are kept in a
 * topological order (the verifier checks it). Dims are int64: >= 0 is a
 * static size, and a small band of very negative numbers encodes named
 * symbolic dims (see ncc_dim_sym), so shapes stay plain arrays.
 */
#ifndef NCC_IR_H
#define NCC_IR_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ncc.h"

/* ---- internal errors: our bugs abort, user input returns a status ---- */
#define NCC_ASSERT(c)                                                          \
  do {                                                                         \
    if (!(c)) ncc_assert_fail(#c, __FILE__, __LINE__);                         \
  } while (0)
_Noreturn void ncc_assert_fail(const char *cond, const char *file, int line);

/* ncc_error, ncc_error_prefix, ncc_escape_text, ncc_utf8_len: ncc.h. */
ncc_status ncc_verror(ncc_status st, const char *fmt, va_list ap);

/* ---- allocation through the hook ---- */
/* ncc_malloc, ncc_calloc, ncc_realloc, ncc_free: ncc.h. */

/* Faults in the pages of a fresh buffer of n bytes that is about to be
 * written whole, in one call instead of one trap per page (big buffers
 * only; a no-op where the kernel cannot). Weight packing is mostly this. */
void ncc_prefault(void *p, size_t n);

/* ---- arena ---- */
typedef struct ncc_arena_block ncc_arena_block;
typedef struct ncc_arena_adopted ncc_arena_adopted;
typedef struct ncc_arena {
  ncc_arena_block *head;
  ncc_arena_adopted *adopted; /* buffers taken over by ncc_arena_adopt */
  size_t used_bytes; /* statistics */
} ncc_arena;

void ncc_arena_init(ncc_arena *a);
void ncc_arena_release(ncc_arena *a);
void *ncc_arena_alloc(ncc_arena *a, size_t n); /* zeroed, 16-aligned */
/* Not zeroed: a big request's pages stay untouched until written. */
void *ncc_arena_alloc_uninit(ncc_arena *a, size_t n);
char *ncc_arena_strdup(ncc_arena *a, const char *s);
char *ncc_arena_strndup(ncc_arena *a, const char *s, size_t n);
void *ncc_arena_memdup(ncc_arena *a, const void *p, size_t n);
/* Takes over p, an ncc_malloc'd buffer of n bytes, so that it lives (and is
 * freed) with the arena: a weight decoded into its own buffer joins the
 * graph without a copy. Returns p, or NULL (p still the caller's) when p
 * is not 16-aligned as arena memory is, or on OOM. */
void *ncc_arena_adopt(ncc_arena *a, void *p, size_t n);

/* ncc_tensor_alloc without zeroing, for buffers a kernel writes whole
 * (zeroing a graph output first would be a second pass over memory). */
ncc_status ncc_tensor_alloc_uninit(ncc_tensor *t, ncc_dtype dt, int rank,
                                   const int64_t *dims);
/* Copy src's data into dst's allocated buffer when dst has src's dtype
 * and dims; false (nothing copied) otherwise. */
bool ncc_tensor_copy_into(ncc_tensor *dst, const ncc_tensor *src);

/* ---- checked size arithmetic (ir/size.c) ----
 * Every size computed from dims goes through these: a result above
 * NCC_SIZE_LIMIT (min of SIZE_MAX, PTRDIFF_MAX, INT64_MAX; kernels index
 * with int64) is refused (false, *out untouched), never wrapped. */
#define NCC_SIZE_LIMIT                                                      \
  ((size_t)(PTRDIFF_MAX < INT64_MAX ? PTRDIFF_MAX : INT64_MAX) < SIZE_MAX   \
       ? (size_t)(PTRDIFF_MAX < INT64_MAX ? PTRDIFF_MAX : INT64_MAX)        \
       : SIZE_MAX)
bool ncc_size_mul(size_t a, size_t b, size_t *out);
bool ncc_size_add(size_t a, size_t b, size_t *out);
/* Elements / bytes of a shape; false when a dim is negative or the result
 * exceeds the limit. An empty shape (a dim 0) has 0, but the product of
 * its nonzero dims must still be within the limit, so no partial product
 * of the dims (a stride, a batch count) can overflow: [2^62, 0] is valid,
 * [2^62, 2^62, 0] is not. */
bool ncc_dims_numel(int rank, const int64_t *dims, size_t *out);
bool ncc_dims_nbytes(size_t esize, int rank, const int64_t *dims, size_t *out);

/* ---- ops ---- */
enum {
  NCC_OPF_ELTWISE = 1u << 0,
  NCC_OPF_BINARY = 1u << 1,
  NCC_OPF_UNARY = 1u << 2,
  NCC_OPF_COMPARE = 1u << 3,
  NCC_OPF_CONTRACTION = 1u << 4,
  NCC_OPF_REDUCTION = 1u << 5,
  NCC_OPF_NORM = 1u << 6,
  NCC_OPF_POOL = 1u << 7,
  NCC_OPF_SHAPE = 1u << 8,  /* data movement / shape-only */
  NCC_OPF_SOURCE = 1u << 9, /* produces data without tensor inputs */
  NCC_OPF_INTERNAL = 1u << 10, /* ncc's own op, not ONNX: never imported */
  /* Some output dims depend on input values (NonZero, ...): the shape rule
   * gives them fresh symbols at compile time; at run time the executors do
   * not allocate the outputs, the reference kernel does once it knows them
   * (docs/DYNAMIC-SHAPES.md). */
  NCC_OPF_DYNAMIC = 1u << 11,
  /* ONNX Runtime's contrib op (domain com.microsoft), which its quantizer
   * emits: imported from that domain only, never from ai.onnx */
  NCC_OPF_CONTRIB = 1u << 12,
};

typedef enum ncc_op {
#define NCC_OP(id, name, mi, ma, mo, mao, fl, rule) NCC_OP_##id,
#include "ops.def"
#undef NCC_OP
  NCC_OP_COUNT
} ncc_op;

typedef struct ncc_op_info {
  const char *name;
  int min_in, max_in; /* max_in -1: variadic */
  int min_out, max_out;
  unsigned flags;
} ncc_op_info;

extern const ncc_op_info ncc_op_table[NCC_OP_COUNT];
/* NCC_OP_COUNT when the name is unknown. */
ncc_op ncc_op_lookup(const char *name, size_t len);
static inline const char *ncc_op_name(ncc_op op) { return ncc_op_table[op].name; }
/* Whether input i of op may not be left empty: those below min_in but for
 * ops.def's NCC_OP_OPTIONAL rows, and every input of a variadic op. */
bool ncc_op_input_required(ncc_op op, int i);
/* Ops whose output is their data input's bytes under another shape
 * (Reshape, Flatten, Squeeze, Unsqueeze, Identity): backends may alias. */
bool ncc_op_is_view(ncc_op op);

/* ---- dims and shapes ---- */
#define NCC_SYM_BASE (INT64_MIN / 2)
#define NCC_MAX_SYMS (1 << 20)
static inline bool ncc_dim_is_sym(int64_t d) {
  return d >= NCC_SYM_BASE && d < NCC_SYM_BASE + NCC_MAX_SYMS;
}
static inline int64_t ncc_dim_sym(int id) { return NCC_SYM_BASE + id; }
static inline int ncc_dim_sym_id(int64_t d) { return (int)(d - NCC_SYM_BASE); }
/* At run time, a dim of an NCC_OPF_DYNAMIC op's output that only its
 * kernel knows (neither static nor a symbol). */
#define NCC_DIM_DATA ((int64_t)-1)

typedef struct ncc_shape {
  int rank;
  int64_t d[NCC_MAX_RANK];
} ncc_shape;

bool ncc_shape_is_static(const ncc_shape *s);
int64_t ncc_shape_numel(const ncc_shape *s); /* -1 when not static */
bool ncc_shape_eq(const ncc_shape *a, const ncc_shape *b);

typedef enum ncc_layout_kind {
  NCC_LAYOUT_PLAIN = 0, /* row-major in the logical dim order */
  NCC_LAYOUT_NCHWC = 1, /* blocked NCHW[x]c, block in `block` */
} ncc_layout_kind;

typedef struct ncc_layout {
  ncc_layout_kind kind;
  int block;
} ncc_layout;

/* Whether two layouts store the same values as the same bytes. */
static inline bool ncc_layout_eq(ncc_layout a, ncc_layout b) {
  return a.kind == b.kind && (a.kind == NCC_LAYOUT_PLAIN || a.block == b.block);
}

/* ---- attributes ---- */
typedef enum ncc_attr_kind {
  NCC_ATTR_INT,
  NCC_ATTR_FLOAT,
  NCC_ATTR_INTS,
  NCC_ATTR_FLOATS,
  NCC_ATTR_STRING,
  NCC_ATTR_TENSOR,
  /* a list of strings, as the schema (ir/attrs.def) names ONNX's
   * STRINGS kind; the IR never holds one (the importer joins the names). */
  NCC_ATTR_STRINGS,
  /* a subgraph (If's branches, Loop's body), owned by the graph of
   * the node (ncc_node_set_attr_graph); see docs/IR.md "Subgraphs". */
  NCC_ATTR_GRAPH,
} ncc_attr_kind;

/* A constant tensor with a static shape (attribute payloads, constants). */
typedef struct ncc_const {
  ncc_dtype dtype;
  ncc_shape shape;
  void *data; /* arena; ncc_shape_numel * ncc_dtype_size bytes */
} ncc_const;

typedef struct ncc_attr {
  const char *name;
  ncc_attr_kind kind;
  int64_t i;
  float f;
  int n; /* element count of ints / floats */
  int64_t *ints;
  float *floats;
  const char *s;
  ncc_const t;
  struct ncc_graph *graph; /* NCC_ATTR_GRAPH */
} ncc_attr;

/* ---- values and nodes ---- */
typedef enum ncc_value_kind {
  NCC_VAL_NODE = 0, /* produced by a node */
  NCC_VAL_INPUT,    /* graph input */
  NCC_VAL_CONST,    /* initializer / constant (data != NULL) */
} ncc_value_kind;

#define NCC_CONTENT_MAX 64

struct ncc_node;

typedef struct ncc_value {
  int id; /* index in graph->values */
  const char *name;
  ncc_value_kind kind;
  ncc_dtype dtype;
  ncc_shape shape;
  ncc_layout layout;
  struct ncc_node *producer; /* NULL for inputs and constants */
  int producer_idx;
  void *data; /* CONST only: arena payload */
  /* Inferred content of small integer tensors (shape arithmetic); elements
   * may be symbolic dims. Not printed; recomputed by shape inference. */
  int content_len; /* -1: unknown */
  int64_t *content;
} ncc_value;

/* The NCHW[k]c block of v's storage, 0 when v (or NULL) is stored plain. */
static inline int ncc_value_block(const ncc_value *v) {
  return v && v->layout.kind == NCC_LAYOUT_NCHWC && v->layout.block > 1 ? v->layout.block
                                                                        : 0;
}

typedef struct ncc_node {
  int id;
  ncc_op op;
  const char *name; /* may be "" */
  int n_in;
  ncc_value **in; /* an entry is NULL for an omitted optional input */
  int n_out;
  ncc_value **out;
  int n_attrs;
  ncc_attr *attrs;
} ncc_node;

struct ncc_graph {
  ncc_arena arena;
  const char *name;
  ncc_value **values;
  int n_values, cap_values;
  ncc_node **nodes; /* topological order */
  int n_nodes, cap_nodes;
  ncc_value **inputs;
  int n_inputs, cap_inputs;
  ncc_value **outputs;
  int n_outputs, cap_outputs;
  const char **syms; /* names of symbolic dims */
  int n_syms, cap_syms;
  /* name -> value index (open addressing, -1 empty) */
  int *name_tab;
  int name_cap;
  int next_auto; /* counter for fresh names */
  /* the subgraphs of this graph's GRAPH attributes, freed with it */
  struct ncc_graph **subs;
  int n_subs, cap_subs;
};

/* Graph construction. All return NULL / a status on OOM with the error set. */
ncc_graph *ncc_graph_new(const char *name);
/* name NULL -> a fresh unique name. Fails (NULL, error set) on a duplicate. */
ncc_value *ncc_graph_add_value(ncc_graph *g, const char *name,
                               ncc_value_kind kind, ncc_dtype dt,
                               const ncc_shape *shape);
ncc_value *ncc_graph_find_value(const ncc_graph *g, const char *name);
/* Constant value holding a copy of `data` (nbytes from dtype and shape). */
ncc_value *ncc_graph_add_const(ncc_graph *g, const char *name, ncc_dtype dt,
                               const ncc_shape *shape, const void *data);
/* Appends a node with inputs `in` (copied) and n_out fresh output slots,
 * which the caller fills with ncc_node_set_output. */
ncc_node *ncc_graph_add_node(ncc_graph *g, ncc_op op, const char *name,
                             int n_in, ncc_value *const *in, int n_out);
void ncc_node_set_output(ncc_node *n, int idx, ncc_value *v);
ncc_status ncc_graph_add_input(ncc_graph *g, ncc_value *v);
ncc_status ncc_graph_add_output(ncc_graph *g, ncc_value *v);
/* Index of symbol `name`, adding it when new; -1 on OOM. */
int ncc_graph_sym(ncc_graph *g, const char *name, size_t len);
/* A fresh anonymous symbol ("unk__K"); -1 on OOM. */
int ncc_graph_fresh_sym(ncc_graph *g);
/* Drop nodes whose `dead[node->id]` is true and renumber (passes use it). */
void ncc_graph_remove_nodes(ncc_graph *g, const bool *dead);

/* Attributes (arena-allocated copies). */
ncc_attr *ncc_node_add_attr(ncc_graph *g, ncc_node *n, const char *name,
                            ncc_attr_kind kind);
ncc_status ncc_node_set_attr_int(ncc_graph *g, ncc_node *n, const char *name,
                                 int64_t v);
ncc_status ncc_node_set_attr_float(ncc_graph *g, ncc_node *n, const char *name,
                                   float v);
ncc_status ncc_node_set_attr_ints(ncc_graph *g, ncc_node *n, const char *name,
                                  const int64_t *v, int count);
ncc_status ncc_node_set_attr_floats(ncc_graph *g, ncc_node *n,
                                    const char *name, const float *v,
                                    int count);
ncc_status ncc_node_set_attr_string(ncc_graph *g, ncc_node *n,
                                    const char *name, const char *s);
const ncc_attr *ncc_node_attr(const ncc_node *n, const char *name);
/* a GRAPH attribute; g takes ownership of sub (freed with g, also
 * when this fails). ncc_attr_graph: the subgraph, NULL when absent or of
 * another kind. */
ncc_status ncc_node_set_attr_graph(ncc_graph *g, ncc_node *n, const char *name,
                                   ncc_graph *sub);
ncc_graph *ncc_attr_graph(const ncc_node *n, const char *name);
int64_t ncc_attr_int(const ncc_node *n, const char *name, int64_t dflt);
float ncc_attr_float(const ncc_node *n, const char *name, float dflt);
/* Pointer to the ints and their count, or NULL (count 0) when absent. */
const int64_t *ncc_attr_ints(const ncc_node *n, const char *name, int *count);
const char *ncc_attr_string(const ncc_node *n, const char *name,
                            const char *dflt);

/* Whether node n's one output is its input 0's bytes under another shape:
 * a view op (ncc_op_is_view) on plain layouts, one dtype. Executors hand
 * the input's buffer on instead of copying it (runtime/exec.c, the GPU
 * executor, the AOT library's plan). */
bool ncc_node_is_view(const ncc_node *n);
/* Printable name of a node for diagnostics: "'name' (Op)" or "#id (Op)". */
const char *ncc_node_label(const ncc_node *n, char *buf, size_t cap);
/* ncc_error with the message prefixed by the node's label. */
ncc_status ncc_node_error(const ncc_node *n, ncc_status st, const char *fmt, ...)
    NCC_PRINTF(3, 4);

/* ---- text IR, verifier and hashing (ir/text_print.c, ir/hash.c) ---- */
/* A type as the text IR writes it ("f32[N,3,224,224]", "f32[1,8,56,56,8]#nchw8c")
 * into buf (truncated to cap); layout may be NULL. Returns buf. */
const char *ncc_type_str(const ncc_graph *g, ncc_dtype dt, const ncc_shape *s,
                         const ncc_layout *layout, char *buf, size_t cap);
/* Hash of a node's op, attributes, input types/layouts and output count,
 * ignoring every name and constant data: equal for nodes that one kernel
 * could serve (repeated-block reuse). Symbolic dims hash by id, so compare
 * only nodes of one graph. */
uint64_t ncc_node_hash(const ncc_node *n);

#endif /* NCC_IR_H */
