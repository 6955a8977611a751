/* tools/ncc/cli.h — what the files of the `ncc` driver share.
 *
 * The driver is a thin layer over libncc: main.c dispatches sub-commands,
 * args.c parses the flags they share into one cli_opts, and each cmd_*.c
 * implements one sub-command as `ncc_status cmd_X(const cli_opts *)`. A
 * failing command leaves its message in ncc_error_message(); main prints it
 * as the single "ncc: error:" line and exits with the status (docs/CLI.md).
 */
#ifndef NCC_CLI_H
#define NCC_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "ncc.h"

/* Groups of flags a sub-command accepts. */
enum {
  CLI_F_OUT = 1u << 0,      /* -o FILE */
  CLI_F_TARGET = 1u << 1,   /* --target=T */
  CLI_F_PIPELINE = 1u << 2, /* -O, --passes, --disable-pass, --print-after,
                               --time-passes, --verify-each */
  CLI_F_INPUT = 1u << 3,    /* --input [NAME=]FILE */
  CLI_F_OUTDIR = 1u << 4,   /* --output-dir DIR */
  CLI_F_EMIT = 1u << 5,     /* --emit=KIND */
  CLI_F_BENCH = 1u << 6,    /* --batch, --warmup, --iters, --json, --ablate */
  CLI_F_DRIFT = 1u << 7,    /* --check-each-pass, --rtol, --atol */
  CLI_F_MEMORY = 1u << 8,   /* --max-memory=SIZE */
  CLI_F_THREADS = 1u << 9,  /* --threads N */
  CLI_F_JSON = 1u << 10,    /* --json alone (ncc check) */
  CLI_F_CACHE = 1u << 11,   /* --cache-dir DIR, --no-cache */
  CLI_F_TRACE = 1u << 12,   /* --trace FILE.json */
  CLI_F_COMPARE = 1u << 13, /* --compare-f32 (ncc run) */
};

/* Exit status of `ncc run --check-each-pass` when a pass drifts (1-4 are
 * the ncc_status codes of docs/CLI.md, 5 an internal error). */
#define CLI_EXIT_DRIFT 6

typedef struct cli_opts cli_opts;

/* At most this many batch sizes in one `--batch B1,B2,...` */
#define CLI_MAX_BATCHES 16
/* Timed rounds of `bench --ablate` without --iters: enough for a 95% CI of
 * each paired ratio that excludes the outer third of the rounds. */
#define CLI_ABLATE_ITERS 30

typedef struct cli_command {
  const char *name;
  unsigned flags;
  bool needs_model; /* takes exactly one MODEL argument */
  const char *usage;
  ncc_status (*run)(const cli_opts *o);
} cli_command;

typedef struct cli_input {
  const char *name; /* NULL for a bare `--input FILE`; split at the first '=' */
  const char *path;
  const char *arg;  /* the whole NAME=FILE, for names containing '=' */
} cli_input;

struct cli_opts {
  const cli_command *cmd;
  bool help;
  const char *model;
  const char *out;
  const char *target; /* default "cpu" (docs/CLI.md) */
  /* pipeline */
  int opt_level;        /* default 2 */
  const char *passes;   /* explicit pipeline, NULL for the -O one */
  const char **disabled;
  int n_disabled;
  const char *print_after; /* NULL, "all" or a pass name */
  bool time_passes, verify_each;
  int layout_block; /* --layout-block; 0: the target's default */
  int winograd;     /* --winograd: 0 auto, 2 or 4 (ncc_pipeline_set_winograd) */
  int codegen_opt;  /* --codegen-opt; -1: NCC_CODEGEN_OPT, else from -O */
  /* run / bench */
  cli_input *inputs;
  int n_inputs;
  const char *output_dir; /* default "." */
  const char *emit;       /* NULL: the command's default */
  int64_t batch;          /* default 1 */
  bool batch_set;
  int64_t warmup, iters;
  bool json;
  bool target_set; /* --target given (ncc check compiles only then) */
  bool ablate; /* bench --ablate */
  /* run --check-each-pass (the drift finder) */
  bool check_each_pass;
  double rtol, atol; /* default 1e-4, 1e-5 */
  bool tol_set;      /* --rtol or --atol given */
  /* run --compare-f32: the accuracy of --precision against an f32 run */
  bool compare_f32;
  /* what libncc is given: the environment (env.c), then --threads */
  ncc_options lib;
  /* bench --batch B1,B2,...: one result per batch (batch = batches[0]) */
  int64_t batches[CLI_MAX_BATCHES];
  int n_batches; /* 1 unless a list was given */
  bool iters_set; /* --iters given (bench --ablate has its own default) */
  /* bench --profile (profile.c) and --trace FILE (bench, run) */
  bool profile;
  const char *trace;
  double peak_gflops, peak_gbps; /* > 0: given, else measured */
};

/* ---- main.c ---- */
extern const cli_command cli_commands[];
extern const int cli_n_commands;

/* ---- args.c ---- */
/* Parse argv[first..argc) for `cmd`. On error returns NCC_ERR_USAGE with the
 * message set; cli_opts_free is safe either way. */
ncc_status cli_parse(const cli_command *cmd, int argc, char **argv, int first,
                     cli_opts *o);
void cli_opts_free(cli_opts *o);

/* ---- precision.c ---- */
/* ncc run --compare-f32: compile `o->model` again at f32 (same target and
 * pipeline otherwise), run it on `in` and print, per output, the error of
 * `out` (the run at o->lib.precision) against it. */
ncc_status cli_compare_f32(const cli_opts *o, const ncc_tensor *in, int n_in,
                           const ncc_tensor *out, int n_out);

/* ---- env.c ---- */
/* Fill library options from the environment variables ncc honours. */
void cli_env_options(ncc_options *o);
/* The compile cache's directory without --cache-dir: NCC_CACHE_DIR, else
 * $XDG_CACHE_HOME/ncc, else $HOME/.cache/ncc; NULL with NCC_CACHE=0 (or
 * no HOME). The string lives for the process. */
const char *cli_env_cache_dir(void);
#define CLI_ENV_HELP                                                           \
  "environment (read by ncc and passed to libncc as options, except the GPU\n" \
  "ones at the end; docs/CONFIGURATION.md):\n"   \
  "  NCC_NUM_THREADS=N      kernel threads (default: one per core; --threads)\n" \
  "  NCC_VECTOR_WIDTH=W     f32 lanes of cpu kernels and of the layout block\n" \
  "                         (1, 4, 8, 16; default: the host's)\n"             \
  "  NCC_KERNEL_REUSE=0     compile each kernel on its own, not shared\n"     \
  "  NCC_AMX=0              keep cpu kernels off the AMX tiles (--no-amx)\n" \
  "  NCC_AMX=emulate        testing: tile kernels on a host without AMX, each\n" \
  "                         tile instruction run by a C function (slow)\n" \
  "  NCC_CODEGEN_OPT=N      compile-speed tier of cpu kernels, 0..3 (default:\n" \
  "                         from -O; --codegen-opt)\n"                        \
  "  NCC_COMPILE_THREADS=N  threads compiling cpu kernels at once (default 0:\n" \
  "                         one per core; --compile-threads)\n"             \
  "  NCC_CC, NCC_AARCH64_CC C compiler of --emit=lib (default cc,\n"          \
  "                         aarch64-linux-gnu-gcc)\n"                         \
  "  NCC_KEEP_AOT_TEMPS=1   keep the work directory of --emit=lib\n"          \
  "  NCC_CACHE_DIR=DIR      compile cache of run, bench and check (default\n" \
  "                         $XDG_CACHE_HOME/ncc, else ~/.cache/ncc;\n"        \
  "                         --cache-dir); NCC_CACHE=0 turns it off\n"        \
  "  NCC_CACHE_MAX=SIZE     its size bound (K/M/G suffix; default 1G)\n"     \
  "  NCC_DEBUG_KIR, NCC_DUMP_LLVM, NCC_DUMP_ASM, NCC_DEBUG_GPU\n"              \
  "                         print kernel IR, LLVM IR, assembly, GPU sources\n" \
  "                         and compiler logs to stderr\n"                    \
  "  NCC_OPENCL_LIB, NCC_OPENCL_DEVICE, NCC_CUDA_DRIVER_LIB, NCC_NVRTC_LIB,\n" \
  "  NCC_CUDA_HOME, NCC_CUDA_ARCH   GPU driver and device (docs/GPU.md;\n"   \
  "                         read by libncc when it loads a GPU driver)\n"

/* ---- targets.c: the targets, from libncc's target table ---- */
/* Whether libncc knows a target of this name. */
bool cli_target_known(const char *name);
/* The target names joined by ", "; `mark` (may be NULL) is appended to
 * the target named `marked`, as "cpu (default)". */
void cli_target_names(char *buf, size_t cap, const char *marked, const char *mark);
/* Print a command's help text with "@TARGETS@" replaced by the names. */
void cli_print_help(const char *usage, FILE *f);
/* Known and available, else an error: unknown -> USAGE, not available ->
 * UNSUPPORTED (both name the target). */
ncc_status cli_target_check(const char *name);

/* ---- pipeline.c: the pipeline flags, through libncc's pass manager ---- */
/* Check the flags (pass names, dependencies) without a graph. */
ncc_status cli_pipeline_check(const cli_opts *o);
/* Run the pipeline on g (symbolic dims count as `batch` in statistics);
 * *n_ran is the number of passes that ran and ran[] (may be NULL) receives
 * up to cap of their names. */
ncc_status cli_pipeline_run(ncc_graph *g, const cli_opts *o, int64_t batch,
                            const char **ran, int cap, int *n_ran);
/* The pipeline of the flags less the passes named in drop[0..n_drop), with
 * --verify-each but without the reports (--print-after, --time-passes):
 * the drift finder and the ablation build many. Checked; free with
 * ncc_pipeline_free. */
ncc_status cli_pipeline_build(const cli_opts *o, const char *const *drop,
                              int n_drop, ncc_pipeline **out);

/* ---- inputs.c ---- */
/* Load the model's inputs from the --input flags (one tensor per graph
 * input, in graph order), checked against the declared dtypes and shapes. */
ncc_status cli_inputs_load(const ncc_graph *g, const cli_opts *o,
                           ncc_tensor *out);
/* Seeded random inputs: the first dim of an input, when symbolic, and every
 * other use of that symbol, becomes `batch`; other symbolic dims are an
 * error asking for --input. */
ncc_status cli_inputs_random(const ncc_graph *g, int64_t batch,
                             ncc_tensor *out);
/* The batch the inputs bind: the value of the first input's first dim when
 * it is symbolic, else 0 (none). */
int64_t cli_inputs_batch(const ncc_graph *g, const ncc_tensor *in);
void cli_tensors_free(ncc_tensor *t, int n);

/* ---- util.c ---- */
ncc_status cli_check_readable(const char *path);
ncc_status cli_load_model(const char *path, ncc_graph **out);
/* Print g's text IR to `path` (stdout when NULL or "-") through a temporary
 * file and a rename. */
ncc_status cli_print_graph(const ncc_graph *g, const char *path);
/* "f32[N,3]" */
const char *cli_format_type(const ncc_graph *g, ncc_dtype dt, int rank,
                            const int64_t *dims, const int *sym, char *buf,
                            size_t cap);
/* Append `s` to buf (NUL-terminated, capacity cap), ending in "..." when it
 * does not fit. */
void cli_append(char *buf, size_t cap, const char *s);
/* What the driver prints that may carry a model's or a user's bytes
 * (names, paths, types with symbolic dims) goes through these two:
 * cli_text for a terminal line (ncc_escape_text: control bytes and bytes
 * that are not UTF-8 as \xNN; returns buf), cli_json_string for a JSON
 * string on stdout (controls as \u00XX; a byte that is not UTF-8, which
 * JSON cannot hold, as the text \xNN). */
#define CLI_TEXT_MAX 1024
const char *cli_text(const char *s, char *buf, size_t cap);
void cli_json_string(const char *s);
/* Comma-separated quoted names of graph inputs, for messages. */
const char *cli_input_names(const ncc_graph *g, char *buf, size_t cap);
double cli_now_ms(void);
/* Parse a decimal integer in [lo, hi]; false when it is not one. */
bool cli_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out);

/* ---- cmd_bench.c, shared with cmd_ablate.c ---- */
/* Inputs from --input files, or random ones shaped by --batch; *batch is
 * the batch they bind. */
ncc_status cli_bench_inputs(const ncc_graph *g, const cli_opts *o,
                            ncc_tensor *in, int64_t *batch);
void cli_json_number(double v); /* null for inf/nan */

/* ---- outdir.c: the parent directories of an -o path ---- */
#define CLI_MADE_DIRS_MAX 32
typedef struct cli_made_dirs {
  char *dirs[CLI_MADE_DIRS_MAX]; /* created, shortest first */
  int n;
} cli_made_dirs;
/* Create the missing parent directories of `path` (none for NULL or "-"),
 * remembering them in *m. On failure nothing stays created. */
ncc_status cli_out_parents(const char *path, cli_made_dirs *m);
/* After the write: with st != NCC_OK remove the directories made (those
 * still empty); either way release *m. */
void cli_out_parents_done(cli_made_dirs *m, ncc_status st);

/* ---- commands ---- */
ncc_status cmd_import(const cli_opts *o);
ncc_status cmd_opt(const cli_opts *o);
ncc_status cmd_compile(const cli_opts *o);
ncc_status cmd_run(const cli_opts *o);
ncc_status cmd_bench(const cli_opts *o);
ncc_status cmd_passes(const cli_opts *o);
ncc_status cmd_targets(const cli_opts *o);
ncc_status cmd_check(const cli_opts *o);
ncc_status cmd_ops(const cli_opts *o);
ncc_status cmd_cache(const cli_opts *o);
/* `run --check-each-pass` (cmd_drift.c) and `bench --ablate` (cmd_ablate.c) */
ncc_status cli_check_each_pass(const cli_opts *o);
ncc_status cli_ablate(const cli_opts *o);

/* ---- stats.c: a median's interval, cv, noise flags (docs/CLI.md) ---- */
/* The rank k of the 95% order-statistic CI of a median of n samples: the
 * interval is [k-th smallest, k-th largest]; 0 when n < 6 (no such
 * interval exists: cli_median_ci then gives min..max). The definition of
 * bench/harness/stats.py's median_ci. */
int64_t cli_median_ci_rank(int64_t n);
/* The 95% CI of the median of sorted[0..n) (ascending); NaN when n == 0. */
void cli_median_ci(const double *sorted, int64_t n, double *lo, double *hi);
double cli_median_sorted(const double *sorted, int64_t n);
void cli_sort_doubles(double *x, int64_t n);
/* Population standard deviation over the mean (0 when the mean is not > 0). */
double cli_cv(const double *x, int64_t n);
/* 1.4826 * median absolute deviation / median of sorted[0..n): the cv a
 * normal sample with that spread would have, blind to rare outliers. */
double cli_robust_cv(const double *sorted, int64_t n);
/* Above this robust cv a result is flagged noisy and should not be ranked
 * (bench/harness/stats.py's CV_RANK_MAX and noisy()). */
#define CLI_CV_RANK_MAX 0.10
bool cli_noisy(double robust_cv);
/* An ablation's verdict from the CI of its latency delta in %: "within
 * noise" when it holds 0, else "slower without" / "faster without". */
const char *cli_delta_verdict(double lo_pct, double hi_pct);

/* ---- affinity.c: the CPUs this process may run on ---- */
#define CLI_AFFINITY_MAX 1024
typedef struct cli_affinity {
  int online;  /* CPUs online */
  int allowed; /* CPUs the affinity mask allows */
  bool pinned; /* allowed < online */
  int cpus[CLI_AFFINITY_MAX]; /* the allowed ones, ascending */
} cli_affinity;
void cli_affinity_get(cli_affinity *a);
/* "0-3,6" into buf; returns buf. */
const char *cli_affinity_ranges(const cli_affinity *a, char *buf, size_t cap);
/* "pinned to CPUs 0-1" or "not pinned (16 CPUs allowed)" */
void cli_affinity_text(const cli_affinity *a, char *buf, size_t cap);
/* "pinned_cpus": [0, 1] | null, "cpus_allowed": N (no braces) */
void cli_affinity_json(const cli_affinity *a);

/* ---- refkernels.c: nodes a module runs on reference kernels ---- */
#define CLI_REFK_OPS 32
typedef struct cli_refk {
  int nodes; /* not counting NCC_HOST_TARGET (target ref) */
  int n_ops;
  char op[CLI_REFK_OPS][64];
  int count[CLI_REFK_OPS];
  int other; /* nodes of ops beyond the first CLI_REFK_OPS */
} cli_refk;
void cli_refk_collect(const ncc_module *m, cli_refk *r);
/* One "ncc: warning:" line on stderr when r->nodes > 0. */
void cli_refk_warn(const cli_refk *r, const char *model, const char *target);
/* "3 nodes (Gather x2, Shape x1)" or "none"; returns buf. */
const char *cli_refk_text(const cli_refk *r, char *buf, size_t cap);
/* "reference_kernels": {"nodes": N, "ops": {"Gather": 2}, ...} */
void cli_refk_json(const cli_refk *r);

/* ---- profile.c: bench --profile and --trace ---- */
typedef struct cli_prof_row {
  int step;           /* the step's node (a fused group's root) */
  const char *kernel; /* compiled kernel's name; NULL: a reference kernel */
  char name[128];
  bool host, copy;    /* a reference kernel; only data-moving ops */
  double ms, calls;   /* per run */
  double flops, bytes, gflops, gbps, share;
  double roofline;    /* NAN: no peaks */
  bool compute_bound;
} cli_prof_row;
typedef struct cli_prof {
  int runs, threads_used;
  double total_ms, run_ms;
  double peak_gflops, peak_gbps; /* NAN: unknown */
  bool peak_gflops_given, peak_gbps_given;
  ncc_profile_event *ev;
  int n_ev;
  cli_prof_row *rows; /* sorted by ms, descending */
  int n_rows;
  ncc_node_info *info; /* per node */
} cli_prof;
/* Peaks from --peak-* or measured once per process. */
void cli_prof_peaks(const cli_opts *o, int threads, cli_prof *p);
/* Rows from m's profile records (after profiled runs of batch `batch`). */
ncc_status cli_prof_collect(ncc_module *m, const ncc_graph *g, int64_t batch, cli_prof *p);
void cli_prof_free(cli_prof *p);
void cli_prof_table(const cli_prof *p, const ncc_graph *g, FILE *f, int max_rows);
void cli_prof_json(const cli_prof *p, const ncc_graph *g, FILE *f); /* "profile": {...} */
/* The Chrome trace into a (opened with ncc_afile_open), committed. */
ncc_status cli_trace_write(ncc_afile *a, const cli_prof *p, const ncc_graph *g);

#endif /* NCC_CLI_H */
