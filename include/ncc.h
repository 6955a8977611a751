/* include/ncc.h — the one public header of libncc.
 *
 * Opaque handles, `ncc_<noun>_<verb>` names, and every fallible function
 * returns an ncc_status. On failure a one-line message (without the
 * "ncc: error: " prefix) is kept per thread and read with ncc_error_message().
 * Messages name the file and, where there is one, the node or line.
 */
#ifndef NCC_H
#define NCC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NCC_VERSION_STRING "0.1.0"

/* Status codes double as the `ncc` command's exit codes (docs/CLI.md). */
typedef enum ncc_status {
  NCC_OK = 0,
  NCC_ERR_USAGE = 1,       /* bad command line or API misuse */
  NCC_ERR_INPUT = 2,       /* malformed or inconsistent model, IR or .npy */
  NCC_ERR_UNSUPPORTED = 3, /* well-formed, but an op/dtype/target ncc lacks */
  NCC_ERR_NOMEM = 4,       /* an allocation failed */
  NCC_ERR_INTERNAL = 5     /* an ncc bug that could be reported, not aborted */
} ncc_status;

#if defined(__GNUC__) || defined(__clang__)
#define NCC_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define NCC_PRINTF(f, a)
#endif

/* Last error message of the calling thread ("" when none). */
const char *ncc_error_message(void);
/* Set the thread's error message (printf-style) and return `st`: programs
 * built on libncc (the `ncc` driver) report through the same channel. */
ncc_status ncc_error(ncc_status st, const char *fmt, ...) NCC_PRINTF(2, 3);
/* Prefix the current message with "prefix: " (e.g. a file name). */
void ncc_error_prefix(const char *fmt, ...) NCC_PRINTF(1, 2);
/* Messages are one line of visible text: ncc_escape_text keeps valid UTF-8
 * and writes C0 and C1 controls, DEL and bytes that are not UTF-8 as
 * "\xNN" (snprintf-like: returns the full length, cuts between units).
 * The driver prints names through it too. ncc_utf8_len: the length of the
 * valid UTF-8 sequence at p, 0 when none starts there. */
size_t ncc_escape_text(const char *s, char *buf, size_t cap);
int ncc_utf8_len(const unsigned char *p);

/* ---- allocation hook (Lua-style): nsize == 0 frees and returns NULL. ---- */
typedef void *(*ncc_alloc_fn)(void *ud, void *ptr, size_t osize, size_t nsize);
/* Install an allocator for everything libncc allocates; NULL restores malloc.
 * It is called from several threads at once when kernels compile in
 * parallel (ncc_options.compile_threads) and during a module's runs. */
void ncc_set_allocator(ncc_alloc_fn fn, void *ud);
/* Allocate through the installed allocator; on failure NULL with an
 * NCC_ERR_NOMEM message set. ncc_free's size may be 0 when unknown. */
void *ncc_malloc(size_t n);
void *ncc_calloc(size_t n, size_t size);
void *ncc_realloc(void *p, size_t old, size_t n);
void ncc_free(void *p, size_t n);

/* ---- memory budget ----
 * The most bytes one model may make libncc allocate for its data: each
 * folded or parsed constant and their running total, a planned activation
 * arena, and a run's arena plus outputs once symbolic dims bind. Sizes are
 * checked before allocating; over the budget is NCC_ERR_NOMEM, naming the
 * node, constant or value, the size and the budget. Process-wide like the
 * allocator; 0 restores the default, 75% of physical memory (no
 * environment variable is read). ncc_options.max_memory overrides it for
 * one compile and its module's runs (ncc_max_memory says so inside them). */
void ncc_set_max_memory(size_t bytes);
size_t ncc_max_memory(void); /* the budget in force, in bytes */

/* ---- options ----
 * What a caller can set for one compile or emit (and the runs of the module
 * it makes). libncc reads no environment variable for any of these: the
 * `ncc` driver reads NCC_NUM_THREADS, NCC_VECTOR_WIDTH, ... and passes them
 * here (docs/CONFIGURATION.md). Fill with ncc_options_init, then set fields; `size`
 * lets later versions add fields at the end without breaking callers. */
enum {
  NCC_DUMP_KERNEL_IR = 1u << 0, /* each kernel's kernel IR, as lowered */
  NCC_DUMP_LLVM_IR = 1u << 1,   /* each LLVM module (and an invalid one) */
  NCC_DUMP_ASM = 1u << 2,       /* the JIT's assembly */
  NCC_DUMP_GPU = 1u << 3        /* GPU program sources and compiler logs */
};

typedef struct ncc_options {
  size_t size;       /* sizeof(ncc_options), set by ncc_options_init */
  int num_threads;   /* kernel threads of a module's runs; 0: one per core */
  int vector_width;  /* f32 lanes of cpu kernels (1, 4, 8, 16); 0: the host's */
  int kernel_reuse;  /* 1 (default): equal kernels share one function */
  unsigned dump;     /* NCC_DUMP_* bits (debugging); 0: none */
  FILE *dump_file;   /* where dumps go; NULL: stderr */
  const char *cc;         /* --emit=lib C compiler, cpu/x86_64; NULL: "cc" */
  const char *aarch64_cc; /* the same for aarch64; NULL: aarch64-linux-gnu-gcc */
  int keep_temps;    /* --emit=lib: keep its work directory (debugging) */
  size_t max_memory; /* memory budget of this compile and its module's runs;
                        0: the process-wide one (ncc_set_max_memory) */
  int gpu_test_bad_kernel; /* test hook: GPU programs fail to compile */
  /* where compile and emit report their time (see "compile time" at the
   * end of this header); NULL: nowhere. Never kept by a module. */
  struct ncc_compile_stats *compile_stats;
  /* compile-speed tier of cpu kernels, 0 (fastest compile) .. 3 (default,
   * LLVM's O3); see docs/CODEGEN.md "Compile-speed tiers" */
  int codegen_level;
  /* The persistent compile cache (cpu target; docs/CODEGEN.md, "Compile
   * cache"): the directory of its entries, created when missing; NULL: no
   * cache. Never kept by a module. The `ncc` driver sets it from
   * --cache-dir, NCC_CACHE_DIR or the user's cache directory. */
  const char *cache_dir;
  size_t cache_max_bytes; /* evict least recently used above; 0: 1 GiB */
  /* threads that compile a cpu module's kernels at once (docs/CODEGEN.md,
   * "Parallel kernel compilation"); 0 (default): one per online core;
   * 1: one after another on the calling thread. The result does not
   * depend on it. With several, an allocator (ncc_set_allocator) is called
   * from those threads too. */
  int compile_threads;
  int cpu_test_bad_kernel; /* test hook: the n-th (1-based) distinct cpu
                              kernel and the later ones fail to compile */
  /* NCC_PRECISION_*: the type of the operands of the graph's matmuls and
   * convolutions (docs/PRECISION.md). The precision pass does the
   * rounding: give the pipeline the same value (ncc_pipeline_set_precision)
   * before compiling. Kernels accumulate in f32 either way. */
  int precision;
  /* The LLVM cross targets' CPU (x86_64, aarch64; ncc_module_emit_opts):
   * target_cpu, an LLVM CPU name, replaces the row's ("x86-64-v3",
   * "generic"); target_features, LLVM's comma list ("+dotprod,+i8mm"), is
   * added to the row's features. NULL or "": the row's baseline, whose
   * code runs on every such CPU. ncc's kernels pick instructions (e.g. the
   * int8 dot products: SDOT, USDOT, VPDPBUSD) from the feature list only,
   * not from the CPU name. Target "cpu" always compiles for this host's
   * own CPU and features: setting either for it is NCC_ERR_USAGE
   * (docs/AOT.md, "Target CPU and features"). */
  const char *target_cpu;
  const char *target_features;
  /* cpu target: 1 keeps every kernel off the host's AMX tile unit (for
   * ablation: the vector dot-product kernels instead). 0 (default): int8
   * and bf16 matrix products use the tiles where the host has them and
   * the OS grants them (docs/PRECISION.md, "Matrix tiles"). */
  int no_amx;
  /* cpu target, for testing: 1 lowers int8 and bf16 matrix products to
   * the AMX tile kernels on a host without AMX too, each tile instruction
   * run by a C function (slow: it tests the tile kernels' indexing and
   * epilogues anywhere; a host with AMX runs them natively). no_amx wins
   * (docs/PRECISION.md, "Matrix tiles"). */
  int amx_emulate;
} ncc_options;

/* ncc_options.precision. BF16 and FP16 round the operands (weights once,
 * at compile time; activations where they are made) of Conv, MatMul and
 * Gemm; everything else (softmax, norms, reductions, exp/log, the bias,
 * the accumulator) stays f32. */
enum {
  NCC_PRECISION_F32 = 0, /* the default: nothing rounded */
  NCC_PRECISION_BF16,
  NCC_PRECISION_FP16
};
/* "f32", "bf16", "fp16"; NULL when out of range. */
const char *ncc_precision_name(int precision);
/* The NCC_PRECISION_* of a name as above; -1 when unknown. */
int ncc_precision_from_name(const char *name);

/* Defaults: the values ncc_module_compile and ncc_module_emit use. */
void ncc_options_init(ncc_options *o);

/* ---- dtypes ---- */
typedef enum ncc_dtype {
  NCC_DT_UNDEF = 0,
  NCC_DT_F32,
  NCC_DT_F16,
  NCC_DT_F64,
  NCC_DT_I8,
  NCC_DT_U8,
  NCC_DT_I32,
  NCC_DT_I64,
  NCC_DT_BOOL,
  /* appended later, so the values above keep their numbers */
  NCC_DT_I16,
  NCC_DT_U16,
  NCC_DT_U32,
  NCC_DT_U64,
  NCC_DT_BF16, /* bfloat16: the top 16 bits of an f32 */
  NCC_DT_COUNT
} ncc_dtype;

size_t ncc_dtype_size(ncc_dtype dt);      /* bytes per element, 0 for UNDEF */
const char *ncc_dtype_name(ncc_dtype dt); /* "f32", "i64", ... */
/* Parse a name as printed by ncc_dtype_name; NCC_DT_UNDEF when unknown. */
ncc_dtype ncc_dtype_from_name(const char *name, size_t len);

/* ---- host tensors (concrete shapes) ---- */
#define NCC_MAX_RANK 8

typedef struct ncc_tensor {
  ncc_dtype dtype;
  int rank;
  int64_t dims[NCC_MAX_RANK];
  void *data;
  int owns_data; /* 1 when ncc_tensor_free must release data */
} ncc_tensor;

/* Allocate zeroed storage for the given type and shape. */
ncc_status ncc_tensor_alloc(ncc_tensor *t, ncc_dtype dt, int rank,
                            const int64_t *dims);
void ncc_tensor_free(ncc_tensor *t);
/* Sizes are checked, never wrapped: numel is -1 and nbytes SIZE_MAX when
 * a dim is negative or the size passes PTRDIFF_MAX bytes (0 when a dim is
 * 0, whatever the others are). ncc_tensor_alloc refuses such a shape
 * (NCC_ERR_INPUT), and so do runs given such an input. */
int64_t ncc_tensor_numel(const ncc_tensor *t);
size_t ncc_tensor_nbytes(const ncc_tensor *t);

/* .npy files (format versions 1.0-3.0, little-endian, C order). */
ncc_status ncc_npy_read(const char *path, ncc_tensor *out);
ncc_status ncc_npy_read_buffer(const void *buf, size_t len, const char *name,
                               ncc_tensor *out);
/* Writes to a temporary file and renames it, so no half-written output. */
ncc_status ncc_npy_write(const char *path, const ncc_tensor *t);
/* The .npy bytes of `t` into an open stream (an ncc_afile's, for writers
 * that stage several files); `path` is for messages. */
ncc_status ncc_npy_write_to(FILE *f, const char *path, const ncc_tensor *t);

/* ---- writing files (ir/atomic_file.c) ----
 * How libncc and the driver write every output: the file is written
 * unnamed (O_TMPFILE) or under a hidden ".ncc-<pid>-XXXXXX" name beside the
 * target, then linked or renamed over it, so readers see the old file or
 * the whole new one and a failure leaves nothing. */
typedef struct ncc_afile {
  FILE *f;          /* write here between open and commit */
  const char *path; /* the final name (not owned) */
  char *tmp;        /* the hidden name while it has one, else NULL */
  int slot;         /* cleanup-registry slot of tmp, -1 if none */
} ncc_afile;
/* Start writing `path`. Errors name `path`. */
ncc_status ncc_afile_open(ncc_afile *a, const char *path);
/* Check the writes, then make the file appear as `path`. Frees `a` either
 * way; on failure nothing is left. */
ncc_status ncc_afile_commit(ncc_afile *a);
/* Drop the file (nothing appears). Safe on a zeroed or committed `a`. */
void ncc_afile_abort(ncc_afile *a);
/* The whole of `data` as `path`. */
ncc_status ncc_atomic_write(const char *path, const void *data, size_t len);
/* Remove stale ".ncc-<pid>-*" entries that dead processes left in `dir`. */
void ncc_atomic_sweep(const char *dir);
/* Async-signal-safe: unlink every temporary being written and signal the
 * C compiler of a running --emit=lib. For a SIGINT/SIGTERM handler. */
void ncc_atomic_cleanup_signal(int sig);

/* ---- graphs ---- */
typedef struct ncc_graph ncc_graph;

/* Load an ONNX model (.onnx) or text IR (.nir), chosen by extension;
 * the graph is shape-inferred and verified. */
ncc_status ncc_graph_load(const char *path, ncc_graph **out);
ncc_status ncc_graph_import_onnx(const char *path, ncc_graph **out);
ncc_status ncc_graph_import_onnx_buffer(const void *buf, size_t len,
                                        const char *name, ncc_graph **out);
ncc_status ncc_graph_parse_text(const char *text, size_t len,
                                const char *name, ncc_graph **out);
ncc_status ncc_graph_parse_file(const char *path, ncc_graph **out);

/* Text IR; print(parse(x)) == x. */
ncc_status ncc_graph_print(const ncc_graph *g, FILE *f);
/* Malloc'd NUL-terminated text (free with free()), or NULL on OOM. */
char *ncc_graph_print_string(const ncc_graph *g);

ncc_status ncc_graph_verify(const ncc_graph *g);
/* Structural hash: equal for graphs equal up to value/node naming. */
uint64_t ncc_graph_hash(const ncc_graph *g);
void ncc_graph_free(ncc_graph *g);

int ncc_graph_num_inputs(const ncc_graph *g);
int ncc_graph_num_outputs(const ncc_graph *g);
const char *ncc_graph_input_name(const ncc_graph *g, int i);
const char *ncc_graph_output_name(const ncc_graph *g, int i);
int ncc_graph_num_nodes(const ncc_graph *g);
/* The declared type of graph input/output i: dims[d] >= 0 is a static
 * size; a symbolic dim has dims[d] = -1 and sym[d] its symbol (>= 0, the
 * same number wherever the symbol appears; name: ncc_graph_sym_name); a
 * dim of unknown size has dims[d] = -1 and sym[d] = -1. Names and strings
 * are the graph's. NCC_ERR_USAGE for i out of range. */
typedef struct ncc_value_info {
  const char *name;
  ncc_dtype dtype;
  int rank;
  int64_t dims[NCC_MAX_RANK];
  int sym[NCC_MAX_RANK];
} ncc_value_info;
ncc_status ncc_graph_input_info(const ncc_graph *g, int i, ncc_value_info *out);
ncc_status ncc_graph_output_info(const ncc_graph *g, int i, ncc_value_info *out);
/* The name of symbol `id` ("?" when there is none). */
const char *ncc_graph_sym_name(const ncc_graph *g, int id);

/* What a graph costs: the pass manager reports it after each pass and
 * `ncc bench --ablate` per variant. Symbolic dims count as `sym_value`. */
typedef struct ncc_graph_stats {
  int nodes;
  int kernels;           /* nodes that launch work (fused groups count once) */
  double flops;          /* estimated floating-point operations */
  double bytes_moved;    /* estimated bytes read + written by kernels */
  double peak_act_bytes; /* peak live activation memory (liveness) */
} ncc_graph_stats;
void ncc_graph_compute_stats(const ncc_graph *g, int64_t sym_value,
                             ncc_graph_stats *st);

/* ---- checking a model before compiling it (frontend/onnx_check.c) ----
 * ncc_model_check reads a model and lists everything in it that ncc does
 * not support, all at once, where the importer stops at the first: each
 * problem with how often it occurs and where first. A model with no
 * problem is then imported in full, so NCC_OK with n_problems == 0 means
 * ncc_graph_load succeeds. A malformed file is NCC_ERR_INPUT (no report);
 * NCC_OK with problems is the caller's "unsupported". .nir files have no
 * such problems: they are loaded. Strings are the report's (model bytes,
 * unescaped); free the report with ncc_check_report_free. */
typedef enum ncc_check_kind {
  NCC_CHECK_OP,    /* name: the op type; "domain:Op" for another domain */
  NCC_CHECK_DTYPE, /* name: the ONNX element type, lower case ("bfloat16") */
  NCC_CHECK_OPSET, /* name: "ai.onnx opset N" (or "no ai.onnx opset") */
} ncc_check_kind;
typedef struct ncc_check_problem {
  ncc_check_kind kind;
  const char *name;
  int64_t count;   /* nodes (op), uses (dtype: values, tensors, Cast to), 1 */
  const char *first; /* name of the first node or value ("#i": node i has no
                        name); "" for an opset */
  const char *first_op; /* the first node's op type, or what the first value
                           is: "input", "output", "value_info",
                           "initializer"; "" for an opset */
  int first_is_node; /* 1: first names a node (else a value, or nothing) */
} ncc_check_problem;
typedef struct ncc_check_report {
  int n_nodes;    /* nodes of the main graph */
  int n_op_types; /* distinct op types among them */
  int n_problems;
  ncc_check_problem *problems; /* in order of first occurrence */
} ncc_check_report;
ncc_status ncc_model_check(const char *path, ncc_check_report **out);
void ncc_check_report_free(ncc_check_report *r);
const char *ncc_check_kind_name(ncc_check_kind k); /* "op", "dtype", "opset" */

/* ---- reference interpreter (target `ref`) ----
 * inputs: one tensor per graph input, in order; symbolic dims bind to their
 * shapes. outputs: n_out tensors, allocated by the callee (free each with
 * ncc_tensor_free). */
ncc_status ncc_ref_run(const ncc_graph *g, const ncc_tensor *inputs, int n_in,
                       ncc_tensor *outputs, int n_out);

/* ---- executable modules (a graph compiled for one target) ----
 * target: "ref", "cpu" (LLVM JIT for this host; NULL means "cpu"), ...
 * The module borrows the graph, which must outlive it. Ops a target does not
 * compile run on the reference kernels inside the module ("host" kernels).
 * Run: like ncc_ref_run, outputs are allocated by the callee. A shape whose
 * size overflows (e.g. an output sized from a huge symbolic dim bound by an
 * empty input) is NCC_ERR_INPUT, one too large to allocate NCC_ERR_INPUT
 * or NCC_ERR_NOMEM.
 *
 * Threads: ncc_module_run and ncc_module_run_into may be called on one
 * module from several threads at once; the runs are serialised on the
 * module's lock (each sees only its own inputs and outputs). Different
 * modules run concurrently and share only the process-wide kernel thread
 * pool, which runs a job that finds it busy on the calling thread (the
 * opencl and cuda targets serialise all runs on their device's lock).
 * ncc_module_free must not race with a run of the same module. Error
 * messages are per thread (ncc_error_message). */
typedef struct ncc_module ncc_module;
ncc_status ncc_module_compile(const ncc_graph *g, const char *target,
                              ncc_module **out);
ncc_status ncc_module_run(ncc_module *m, const ncc_tensor *in, int n_in,
                          ncc_tensor *out, int n_out);
/* ncc_module_run into outputs the caller owns: out[i] must be allocated
 * (data != NULL) with output i's dtype and shape for these inputs, e.g.
 * the tensors of an earlier run. Kernels write them in place, so a
 * steady-state loop allocates nothing and touches no fresh pages (what
 * ONNX Runtime's IOBinding gives). A buffer that does not match is
 * NCC_ERR_USAGE; the caller keeps ownership either way. */
ncc_status ncc_module_run_into(ncc_module *m, const ncc_tensor *in, int n_in,
                               ncc_tensor *out, int n_out);
/* ncc_module_compile with options (NULL: the defaults); the module keeps
 * a copy, so `opts` need not outlive the call (its dump_file must). */
ncc_status ncc_module_compile_opts(const ncc_graph *g, const char *target,
                                   const ncc_options *opts, ncc_module **out);
/* The kernel threads the module asked for: num_threads, or one per online
 * core. Runs use at most that many from the process-wide pool, which the
 * first run of any module creates with that module's count, so a later
 * module asking for more than the pool has runs on the pool's size. 1 for
 * targets whose kernels do not run on the pool ("ref", GPU targets). */
int ncc_module_num_threads(const ncc_module *m);
int ncc_module_num_kernels(const ncc_module *m);      /* compiled */
int ncc_module_num_host_kernels(const ncc_module *m); /* run by ref kernels */
/* Nodes that hand their input's buffer on under another shape (Reshape,
 * Flatten, Squeeze, Unsqueeze, Identity): neither a kernel nor a copy.
 * Every node is compiled (or inside a compiled group), a host kernel, or a
 * view. */
int ncc_module_num_views(const ncc_module *m);
/* What a module did not compile: the nodes of its graph (graph order) that
 * run on the host through their reference kernels, each with its ONNX op
 * name, node name ("" when it has none), index and why it was not compiled:
 * NCC_HOST_DYNAMIC (its output shape depends on values,
 * docs/DYNAMIC-SHAPES.md), NCC_HOST_NO_KERNEL (the target compiles no
 * kernel for this op on these dtypes), NCC_HOST_FORM (the target compiles
 * the op and dtypes, but not in this form: attributes or layout),
 * NCC_HOST_TARGET (the target
 * compiles nothing: "ref"). Fills up to `cap` entries of `out` (which may
 * be NULL with cap 0) and returns the number of host nodes. The strings
 * live as long as the module's graph. `ncc check MODEL --target=T` prints
 * this report. */
typedef enum ncc_host_why {
  NCC_HOST_DYNAMIC,
  NCC_HOST_NO_KERNEL,
  NCC_HOST_FORM,
  NCC_HOST_TARGET,
} ncc_host_why;
typedef struct ncc_host_node {
  const char *op;
  const char *name;
  int node; /* index in graph order */
  ncc_host_why why;
} ncc_host_node;
int ncc_module_host_nodes(const ncc_module *m, ncc_host_node *out, int cap);
const char *ncc_host_why_text(ncc_host_why why);
const char *ncc_module_target(const ncc_module *m);
/* ---- profiling a module's runs (runtime/profile.c) ----
 * Off by default and free when off (the executor checks one flag per run).
 * ncc_module_profile_enable(m, 1) clears the records and makes every later
 * run of m record, with CLOCK_MONOTONIC, one event per run (node -1), one
 * per step (a compiled kernel, a fused group at its root, or a node run by
 * its reference kernel on the host) and, on cpu, one per kernel thread's
 * share of a kernel; 0 stops recording and keeps the records. The opencl
 * and cuda targets time each step on the host around its launch and a
 * wait for the device (so steps do not overlap); the ref target records
 * runs only. docs/PROFILING.md. */
typedef struct ncc_profile_event {
  int run;    /* 0-based index of the profiled run */
  int node;   /* the step's node in graph order (a fused group's root); -1:
                 the whole run */
  int thread; /* -1: the step on the calling thread; >= 0: one kernel
                 thread's share of it (0: the calling thread, 1..: the pool's
                 workers) */
  int host;   /* 1: a reference kernel on the host (GPU targets: host work) */
  double start_us, dur_us; /* start from enabling, duration, microseconds */
} ncc_profile_event;
ncc_status ncc_module_profile_enable(ncc_module *m, int on);
/* The records so far: copies min(count, cap) into out (out may be NULL
 * with cap 0) and returns count. */
int ncc_module_profile_get(ncc_module *m, ncc_profile_event *out, int cap);
/* The node (graph order) whose step computes node i: a fused group's root,
 * or i itself; -1 for i out of range. *kernel_name (may be NULL) gets the
 * compiled kernel's name, or NULL for a host step; it lives as long as m. */
int ncc_module_step_of(const ncc_module *m, int i, const char **kernel_name);
/* What the profiler reports of node i (graph order) of m's graph, with
 * symbolic dims counted as sym_value: its ONNX name and op, its step, a
 * FLOP estimate (the pass statistics'), the bytes its step reads from
 * outside (inputs not computed in the same step: activations, weights) and
 * writes for others (outputs read outside the step, or graph outputs), and
 * its first output's shape as "1x64x56x56". Strings live as long as m's
 * graph. NCC_ERR_USAGE for i out of range. */
typedef struct ncc_node_info {
  const char *name; /* "" when the model gave none */
  const char *op;
  int step;
  double flops, in_bytes, out_bytes;
  char shape[64];
} ncc_node_info;
ncc_status ncc_module_node_info(const ncc_module *m, int i, int64_t sym_value,
                                ncc_node_info *out);
void ncc_module_free(ncc_module *m);
/* The targets ncc knows, in a fixed order, whether this build has them or
 * not (ncc_target_available / ncc_target_can_compile say what works here).
 * ncc_target_get returns NCC_ERR_USAGE for i outside [0, count). */
typedef struct ncc_target_desc {
  const char *name;        /* "ref", "cpu", "x86_64", "aarch64", "opencl", ... */
  const char *description; /* one line */
  int runs;                /* 1: has an executor in this build (a device may still be missing) */
  int compiles;            /* 1: this build can emit code for it */
  int vector_width;        /* f32 lanes its kernels use; 0: decided at run time */
  const char *emit_kinds;  /* comma list for --emit ("" : none) */
} ncc_target_desc;
int ncc_target_count(void);
ncc_status ncc_target_get(int i, ncc_target_desc *out);
/* NCC_OK when `target` can run here; otherwise a status and, in `why`, the
 * reason (unknown target, not built in, no device, ...). */
ncc_status ncc_target_available(const char *target, char *why, size_t cap);
/* NCC_OK when this build can compile code for `target` (ncc_module_emit,
 * `ncc compile --emit=...`), even where it cannot run: the LLVM cross
 * targets x86_64 and aarch64, and a GPU target's source without a device.
 * Otherwise a status and, in `why`, the reason ("ref" emits no code; not
 * built in; this LLVM lacks the target; unknown target: NCC_ERR_USAGE). */
ncc_status ncc_target_can_compile(const char *target, char *why, size_t cap);
/* Ahead-of-time output of the compiled kernels (host-run ops are not part
 * of it): kind "kir" (kernel IR text), "llvm" (LLVM IR), "asm", "obj"; for
 * target "cpu" (this host), "x86_64" (AVX2 baseline) or "aarch64" (NEON).
 * Kind "lib" is the whole graph as a self-contained library (a shared
 * library, or a relocatable object when `path` ends in ".o") plus a C
 * header beside it (extension replaced by ".h"); it needs the target's C
 * compiler (docs/AOT.md) and fails, naming the op, when a needed node has
 * no compiled kernel. Written through temporary files, so failure leaves
 * nothing at `path`. */
ncc_status ncc_module_emit(const ncc_graph *g, const char *target,
                           const char *kind, const char *path);

/* ncc_module_emit with options (NULL: the defaults): vector_width (target
 * "cpu"), dumps, and for kind "lib" kernel_reuse, the C compiler and
 * keep_temps. */
ncc_status ncc_module_emit_opts(const ncc_graph *g, const char *target,
                                const ncc_options *opts, const char *kind,
                                const char *path);
/* ncc_module_emit_opts into an open stream (stdout): the output is made in
 * a private work directory beside $TMPDIR (removed on return, and by
 * ncc_atomic_cleanup_signal) and copied to `f`. Not for kind "lib". */
ncc_status ncc_module_emit_stream(const ncc_graph *g, const char *target,
                                  const ncc_options *opts, const char *kind,
                                  const char *tmpdir, FILE *f);

/* ---- pass pipelines (passes/) ----
 * A pipeline is the -O level's passes, or an explicit list, less the
 * disabled ones. Asking to drop a pass another enabled pass needs is an
 * error naming both. print_after/time_passes/verify_each are the manager's
 * debugging switches; passes never print. */
typedef struct ncc_pipeline ncc_pipeline;
ncc_status ncc_pipeline_new(int opt_level, ncc_pipeline **out);
void ncc_pipeline_free(ncc_pipeline *p);
ncc_status ncc_pipeline_set_passes(ncc_pipeline *p, const char *comma_list);
ncc_status ncc_pipeline_disable(ncc_pipeline *p, const char *name);
/* name: a pass or "all"; the IR is printed to `f` after each such pass. */
ncc_status ncc_pipeline_print_after(ncc_pipeline *p, const char *name, FILE *f);
void ncc_pipeline_set_time_passes(ncc_pipeline *p, int on);
void ncc_pipeline_set_verify_each(ncc_pipeline *p, int on);
/* The NCHW[k]c block the layout pass uses (<= 1: it leaves the graph
 * plain, the default); see ncc_target_layout_block. */
void ncc_pipeline_set_layout_block(ncc_pipeline *p, int block);
/* Which 3x3 stride-1 Convs the winograd pass computes by Winograd's
 * F(m x m, 3 x 3): 0 (default) those where its estimate says it pays,
 * with the m it prefers; 2 or 4: every one it can, with that m.
 * NCC_ERR_USAGE for any other value. (--disable-pass=winograd: none.) */
ncc_status ncc_pipeline_set_winograd(ncc_pipeline *p, int m);
/* The precision (NCC_PRECISION_*) the precision pass rounds matmul and
 * convolution operands to; F32 (default) leaves the graph as it is.
 * NCC_ERR_USAGE when out of range. */
ncc_status ncc_pipeline_set_precision(ncc_pipeline *p, int precision);
/* The default block for `target`: its f32 vector width for CPU targets
 * ("cpu" = this host's; x86_64 8; aarch64 4; "ref"
 * and NULL as "cpu", so the interpreter checks the graph cpu runs), 1 for
 * GPU targets (blocked layouts are a CPU schedule). Built without LLVM,
 * the host's width comes from the CPU's features (targets/targets.c). A
 * caller that sets ncc_options.vector_width for "cpu" passes that width
 * here instead. */
int ncc_target_layout_block(const char *target);
/* Symbolic dims count as this value in the statistics (default 1). */
void ncc_pipeline_set_stats_batch(ncc_pipeline *p, int64_t batch);
ncc_status ncc_pipeline_run(const ncc_pipeline *p, ncc_graph *g);
/* Checks the pipeline (names, dependencies) without running it. */
ncc_status ncc_pipeline_check(const ncc_pipeline *p);
/* Per-pass table: time, rewrites, nodes, kernels, FLOPs, bytes, peak memory. */
void ncc_pipeline_report(const ncc_pipeline *p, FILE *f);
/* The passes that ran in the last ncc_pipeline_run, in order. */
int ncc_pipeline_num_ran(const ncc_pipeline *p);
const char *ncc_pipeline_ran_name(const ncc_pipeline *p, int i);

/* The pass registry (for `ncc passes`). */
int ncc_pass_count(void);
ncc_status ncc_pass_info(int i, const char **name, int *level,
                         const char **needs, const char **desc);

/* ---- the ops ncc knows (ir/ops.def), for `ncc ops` and docs/OPS.md ----
 * One entry per op, in the table's order. opset_min..opset_max: the
 * ai.onnx opsets at which the importer takes the op (0, 0 for ncc's own
 * ops, domain "ncc", which passes make and the importer refuses). dtypes:
 * bit (1u << dt) for each element type whose probe node (a small node of
 * the op in a common form) ncc's shape rule accepts; 0 when the op has no
 * probe form. NCC_ERR_USAGE for i outside [0, ncc_op_count()). */
typedef struct ncc_op_desc {
  const char *name;   /* the ONNX op type */
  const char *domain; /* "ai.onnx" or "ncc" */
  int opset_min, opset_max;
  int min_inputs, max_inputs; /* max_inputs -1: variadic */
  int min_outputs, max_outputs;
  unsigned dtypes;
} ncc_op_desc;
int ncc_op_count(void);
ncc_status ncc_op_describe(int i, ncc_op_desc *out);
/* Whether `target` compiles op i: *dtypes gets a bit (1u << dt) for each
 * element type whose probe node the target's code generator takes (the
 * LLVM targets' generic lowering, the GPU targets' C renderer); 0 means
 * the op runs on its reference (host) kernel there, as every op does on
 * "ref". A node in another form may still run on the host: `ncc check
 * MODEL --target=T` tells per model. NCC_ERR_USAGE for an unknown target. */
ncc_status ncc_op_target_compiles(int i, const char *target, unsigned *dtypes);

/* ---- "did you mean" (ir/suggest.c) ----
 * The name among names[0..n) closest to `word` by edit distance (insert,
 * delete, substitute, swap two adjacent characters) when that distance is
 * at most max(2, length/3) of the longer of the two; NULL when none is
 * that close or `word` is one of the names. Messages that reject a pass,
 * target or command name use it. ncc_edit_distance: the distance itself
 * ((size_t)-1 for names over 64 bytes). */
const char *ncc_suggest(const char *word, const char *const *names, int n);
size_t ncc_edit_distance(const char *a, const char *b);


/* ---- compile time (ir/ctime.c) ----
 * Where ncc_module_compile_opts and ncc_module_emit_opts spend their time,
 * when ncc_options.compile_stats points at a zeroed ncc_compile_stats: the
 * call fills it (a few monotonic clock reads per kernel, always cheap).
 * Import (ncc_graph_load) and the passes (ncc_pipeline_ran_ms) are the
 * caller's own calls and are timed there. Phase boundaries:
 *   lower    graph -> kernel IR (codegen/lower*.c), packing excluded
 *   pack     weight packing done while lowering (pre-packed GEMM/conv panels)
 *   ir       kernel IR -> LLVM IR, with the verifier
 *   opt      LLVMRunPasses "default<O3>" (explicit, before the JIT sees it)
 *   codegen  machine code: the JIT's IR compile layer (observed from its IR
 *            and object transform hooks), or an emitted object/assembly
 *   link     the rest of the lookup that materialises a kernel: linking,
 *            relocation and memory protection of the JIT'd object; for
 *            --emit=lib, the C compiler building and linking the library
 *   backend  a GPU target's compile, whole (source render, program build)
 * other_ms is the rest of the call (fusion plan, executor set-up, kernel
 * dedupe, installation). The cpu target JITs one LLVM module per distinct
 * kernel, so every phase is per kernel there; --emit writes one module,
 * whose opt and codegen appear in the totals only. A kernel equal to an
 * earlier one (ncc_options.kernel_reuse) is lowered (and its weights
 * packed) but shares that kernel's function: reused = 1, and its ir, opt,
 * codegen and link are 0. */
typedef enum ncc_compile_phase {
  NCC_PHASE_LOWER,
  NCC_PHASE_PACK,
  NCC_PHASE_IR,
  NCC_PHASE_OPT,
  NCC_PHASE_CODEGEN,
  NCC_PHASE_LINK,
  NCC_PHASE_BACKEND,
  NCC_PHASE_COUNT
} ncc_compile_phase;
/* "lower", "pack", "ir", "opt", "codegen", "link", "backend"; "?" else. */
const char *ncc_compile_phase_name(int phase);
typedef struct ncc_kernel_compile_stats {
  char name[160]; /* the kernel's function name (an escaped symbol) */
  int nodes;      /* graph nodes fused into it */
  int reused;     /* 1: shares the function of an equal, earlier kernel */
  double ms[NCC_PHASE_COUNT];
  int cache_hit;  /* 1: its machine code came from the compile cache */
} ncc_kernel_compile_stats;
typedef struct ncc_compile_stats {
  double total_ms; /* the whole compile or emit call */
  double ms[NCC_PHASE_COUNT];
  double other_ms; /* total_ms less the phases (>= 0) */
  int n_kernels;   /* compiled kernels, graph order */
  ncc_kernel_compile_stats *kernels; /* allocated by libncc */
  /* with ncc_options.cache_dir: kernels whose machine code was read from
   * the cache (no opt, no codegen: ir is the key, codegen the read) and
   * kernels compiled and then stored */
  int cache_hits, cache_misses;
  /* the cpu target compiles its kernels (their ir, opt and codegen) on
   * compile_threads threads at once: the phase and kernel times above are
   * each kernel's own (summed, they can exceed the wall clock), while
   * kernels_wall_ms is the wall-clock time of that parallel section and
   * kernels_work_ms the phase time spent inside it; other_ms counts the
   * section at its wall time */
  int compile_threads;
  double kernels_wall_ms, kernels_work_ms;
} ncc_compile_stats;
/* ---- compile cache (ir/kcache.c) ----
 * The entries of a cache directory (ncc_options.cache_dir): how many and
 * their bytes; a missing directory is an empty cache. Clear removes the
 * entries (and temporaries of interrupted writes), nothing else. */
typedef struct ncc_cache_info {
  int64_t entries;
  int64_t bytes;
} ncc_cache_info;
ncc_status ncc_cache_stats(const char *dir, ncc_cache_info *out);
ncc_status ncc_cache_clear(const char *dir, int64_t *removed);
/* Release what a compile put in `s` and zero it (so it can be reused). */
void ncc_compile_stats_free(ncc_compile_stats *s);
/* The time of the i-th pass of the last ncc_pipeline_run (as
 * ncc_pipeline_ran_name), in milliseconds; 0 outside [0, num_ran). */
double ncc_pipeline_ran_ms(const ncc_pipeline *p, int i);

#ifdef __cplusplus
}
#endif
#endif /* NCC_H */
