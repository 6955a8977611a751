/* tools/ncc/main.c — the `ncc` command: sub-command dispatch, --version,
 * --help, and the one place errors are printed.
 *
 * Every sub-command returns an ncc_status; on failure main prints exactly
 * one line "ncc: error: <message>" on stderr and exits with the status, so
 * scripts can tell a bad command line (1) from bad input (2), an
 * unsupported feature (3) and exhausted memory (4).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

#define PIPELINE_HELP                                                          \
  "  -O0 .. -O3             optimization level (default -O2): the graph passes\n" \
  "                         and the compile-speed tier of cpu kernels\n"     \
  "  --codegen-opt=N        compile-speed tier alone, 0 (fastest compile) .. 3\n" \
  "                         (LLVM O3); default: the -O level's\n"           \
  "  --compile-threads=N    threads compiling cpu kernels at once (default:\n" \
  "                         NCC_COMPILE_THREADS, else one per core; 1 = one\n" \
  "                         after another); the code is the same\n"        \
  "  --passes=a,b,c         run only these passes (in pipeline order)\n"    \
  "  --disable-pass=NAME    leave out a pass (repeatable)\n"                  \
  "  --print-after=NAME|all print the IR to stderr after a pass\n"            \
  "  --time-passes          report the time of each pass on stderr; bench and\n" \
  "                         compile also break compile time down by phase and\n" \
  "                         kernel (docs/CODEGEN.md)\n"                       \
  "  --verify-each          run the IR verifier after every pass\n"          \
  "  --layout-block=K       NCHW[K]c block of the layout pass (1, 2, 4, ..., 64;\n" \
  "                         default: the target's vector width, 1 = plain)\n" \
  "  --winograd=auto|2|4    3x3 stride-1 Convs of the winograd pass: where its\n" \
  "                         estimate says F(2x2 or 4x4, 3x3) pays (auto), or\n" \
  "                         all of them by F(2x2, 3x3) or F(4x4, 3x3); off:\n" \
  "                         --disable-pass=winograd\n" \
  "  --precision=P          f32 (default), bf16 or fp16: the operands of Conv,\n" \
  "                         MatMul and Gemm rounded to P, f32 accumulation;\n" \
  "                         other ops stay f32 (docs/PRECISION.md)\n"      \
  "  --no-amx               cpu: keep int8/bf16 matrix products off the host's\n" \
  "                         AMX tiles (vector dot products instead; NCC_AMX=0)\n"

#define MEMORY_HELP                                                            \
  "  --max-memory=SIZE      memory budget: the most the model may make ncc\n"  \
  "                         allocate for constants, activations and outputs\n" \
  "                         (bytes, or K/M/G/T, binary; default 75% of the\n"  \
  "                         physical memory); over it is exit status 4\n"

#define TRACE_HELP                                                             \
  "  --trace FILE.json      write a Chrome trace (Perfetto, chrome://tracing):\n" \
  "                         one event per run, step and kernel thread's share,\n" \
  "                         a lane per thread (docs/PROFILING.md); a file that\n" \
  "                         cannot be written is exit status 2\n"

#define THREADS_HELP                                                           \
  "  --threads N            kernel threads (default: NCC_NUM_THREADS, else one\n" \
  "                         per core)\n"

#define CACHE_HELP                                                             \
  "  --cache-dir DIR        compile cache of the cpu target's kernels (default:\n" \
  "                         NCC_CACHE_DIR, else $XDG_CACHE_HOME/ncc, else\n"  \
  "                         ~/.cache/ncc; see 'ncc cache')\n"                 \
  "  --no-cache             compile every kernel afresh, storing nothing\n"

#define TARGET_HELP                                                            \
  "  --target=T             @TARGETS@\n" /* cli_print_help: the table */    \
  "                         (see 'ncc targets'; without LLVM the default\n"   \
  "                         is ref)\n"

#define INPUT_HELP                                                             \
  "  --input NAME=FILE.npy  the value of model input NAME (repeatable);\n"    \
  "                         a NAME with '=' works: the split whose left side\n" \
  "                         is an input of the model is taken (two such\n"   \
  "                         splits: an error naming both)\n"                 \
  "  --input FILE.npy       a model with one input also takes this form\n"

static const char usage_import[] =
    "usage: ncc import MODEL.onnx [-o OUT.nir]\n"
    "\n"
    "Convert an ONNX model to ncc's text IR (stdout without -o).\n"
    "\n"
    "  -o FILE                write the IR to FILE\n" MEMORY_HELP;

static const char usage_opt[] =
    "usage: ncc opt IN.(nir|onnx) [PIPELINE FLAGS] [-o OUT.nir]\n"
    "\n"
    "Run the pass pipeline on a model and print the resulting text IR.\n"
    "\n" PIPELINE_HELP "  -o FILE                write the IR to FILE\n" MEMORY_HELP;

static const char usage_compile[] =
    "usage: ncc compile MODEL [--target=T] [PIPELINE FLAGS] [--emit=KIND] "
    "[-o OUT]\n"
    "\n"
    "Compile a model for a target.\n"
    "\n" TARGET_HELP PIPELINE_HELP
    "  --emit=KIND            ir, kir, llvm, asm, obj (default), lib, cuda, "
    "ptx, opencl\n"
    "                         lib: a self-contained library (NAME.so, or one\n"
    "                         relocatable NAME.o) and its C header NAME.h\n"
    "  --target-cpu=NAME      cross targets x86_64, aarch64: the LLVM CPU to\n"
    "                         compile for (default: x86-64-v3, generic)\n"
    "  --target-features=LIST cross targets: LLVM features added to the\n"
    "                         baseline, e.g. +dotprod or +i8mm (aarch64 int8\n"
    "                         kernels use SDOT / USDOT), +avxvnni; the output\n"
    "                         then needs a CPU that has them (docs/AOT.md)\n"
    "  -o FILE                output file (stdout for text kinds without "
    "-o;\n"
    "                         obj and lib default to the model's name)\n" MEMORY_HELP;

static const char usage_run[] =
    "usage: ncc run MODEL [--target=T] [PIPELINE FLAGS] "
    "[--input NAME=FILE.npy]... [--output-dir DIR]\n"
    "\n"
    "Run a model once and write DIR/<output-name>.npy for every output\n"
    "(characters other than letters, digits, '.', '_' and '-' in an output\n"
    "name become '_'; an output whose file name is taken, e.g. one listed\n"
    "twice, gets DIR/<name>_<index>.npy, index counting outputs from 0).\n"
    "Nothing is written unless every output is; concurrent runs into one\n"
    "DIR leave the files of one run.\n"
    "\n" TARGET_HELP PIPELINE_HELP INPUT_HELP
    "  --output-dir DIR       where to write the outputs (default: .)\n"
    TRACE_HELP THREADS_HELP MEMORY_HELP
    "\n"
    "Drift finder: with --check-each-pass nothing is written; instead the\n"
    "reference interpreter runs the unoptimized model and then the model\n"
    "after each prefix of the pipeline (whatever --target says), prints the\n"
    "max abs / rel error of every pass, and names the first pass whose\n"
    "outputs differ beyond |got - want| <= atol + rtol * |want|. Without\n"
    "--input, inputs are random (seeded, batch 1). Exit status 6 when a\n"
    "pass drifts.\n"
    "  --check-each-pass      run the drift finder\n"
    "  --rtol R, --atol A     its tolerances (default 1e-4, 1e-5)\n"
    "\n"
    "Accuracy of --precision: with --compare-f32 the model is also compiled\n"
    "and run at f32 on the same inputs, and a line per output gives the\n"
    "error of the low-precision run against it: max abs, max rel (max abs\n"
    "over the f32 output's largest magnitude), cosine similarity and, for\n"
    "an output of two or more dims, how often the arg max of the last axis\n"
    "agrees (top-1).\n"
    "  --compare-f32          print the accuracy report against f32\n" CACHE_HELP;

static const char usage_bench[] =
    "usage: ncc bench MODEL [--target=T] [PIPELINE FLAGS] "
    "[--input NAME=FILE.npy]...\n"
    "                 [--batch N[,N...]] [--warmup N] [--iters N] [--json]\n"
    "                 [--ablate] [--threads N] [--profile] [--trace FILE.json]\n"
    "\n"
    "Run a model repeatedly and report its latency. Without --input, inputs\n"
    "are random (seeded), with a symbolic first dimension set to --batch.\n"
    "The median comes with its 95% confidence interval (order statistics:\n"
    "with 20 runs, the 6th to the 15th fastest); a robust cv (1.4826 MAD /\n"
    "median) above 10% is flagged \"noisy: do not rank\". Every result names the thread count, the CPUs\n"
    "the process may run on, and the nodes that ran on reference kernels\n"
    "instead of compiled ones (also a warning on stderr).\n"
    "\n" TARGET_HELP PIPELINE_HELP INPUT_HELP
    "  --batch N[,N...]       batch size for generated inputs (default 1); a\n"
    "                         list compiles once and reports each batch (a\n"
    "                         JSON array with --json)\n"
    "  --warmup N             untimed runs first (default 3)\n"
    "  --iters N              timed runs (default 20; 30 rounds with --ablate)\n"
    "  --json                 print one JSON object instead of a table\n"
    "  --ablate               compile the model once per pass of the pipeline\n"
    "                         with that pass disabled (and the passes that\n"
    "                         need it), run all variants interleaved, and\n"
    "                         print each pass's effect: latency % with its\n"
    "                         95% CI and a verdict (\"within noise\" when the\n"
    "                         CI holds 0), kernels, bytes moved, compile time;\n"
    "                         a variant whose graph is identical to the\n"
    "                         baseline's is \"no change\" and is not timed;\n"
    "                         the first row, the baseline compiled again (A/A),\n"
    "                         shows what two compiles of one graph differ by:\n"
    "                         a delta overlapping it is \"within A/A noise\"\n"
    "                         (its compiles do not use the compile cache)\n"
    "  --profile              after the timed runs, as many profiled runs, then\n"
    "                         a per-kernel table sorted by time: the ops fused\n"
    "                         in each kernel, output shape, ms per run, share,\n"
    "                         GFLOP/s, GB/s and the roofline (the fraction of\n"
    "                         the FMA peak or of the bandwidth, whichever\n"
    "                         bounds it); reference-kernel and copy steps are\n"
    "                         rows too; \"profile\" in --json (docs/PROFILING.md)\n"
    "  --peak-gflops X, --peak-gbps Y\n"
    "                         the machine's peaks for the roofline (default:\n"
    "                         measured once, about 0.1 s)\n"
    TRACE_HELP THREADS_HELP MEMORY_HELP CACHE_HELP;

static const char usage_check[] =
    "usage: ncc check MODEL [--target=T] [PIPELINE FLAGS] [--json]\n"
    "\n"
    "List everything in a model that ncc does not support before compiling\n"
    "it: each unsupported op, element type (dtype) and ai.onnx opset, with\n"
    "how often it occurs and its first node (or value). Exit status 3 when\n"
    "there is any, 0 with a one-line summary (nodes, op types) when none;\n"
    "a malformed model is the importer's error (2).\n"
    "\n"
    "  --target=T             also compile a supported model for T (after the\n"
    "                         pipeline) and report what did not compile: the\n"
    "                         nodes that run on the host through reference\n"
    "                         kernels, by op, with the first node and why\n"
    "                         (data-dependent shape, no kernel for the op and\n"
    "                         dtype, or not in this form); exit status 0\n"
    "  --json                 print one JSON object instead of text\n" CACHE_HELP;

static const char usage_cache[] =
    "usage: ncc cache stats|clear [--cache-dir DIR]\n"
    "\n"
    "The compile cache: the machine code of the cpu target's kernels, kept\n"
    "between runs so that compiling a model again (or another model with\n"
    "equal kernels) skips LLVM's optimizer and code generator. An entry is\n"
    "keyed by the kernel's LLVM IR, the target, CPU and its features, and\n"
    "the ncc and LLVM versions; a damaged entry is rebuilt, never used.\n"
    "\n"
    "  stats                  print the directory, its entries and their bytes\n"
    "  clear                  remove every entry\n"
    "  --cache-dir DIR        the cache (default: NCC_CACHE_DIR, else\n"
    "                         $XDG_CACHE_HOME/ncc, else ~/.cache/ncc)\n";

static const char usage_passes[] =
    "usage: ncc passes\n"
    "\n"
    "List the passes: name, the lowest -O level that runs it, the passes it\n"
    "needs, and what it does.\n";

static const char usage_ops[] =
    "usage: ncc ops [--target=T] [--json]\n"
    "\n"
    "List the ops ncc supports, from its op table: name, domain, the ai.onnx\n"
    "opsets the importer takes it at, the element types it accepts, and per\n"
    "target whether its common form compiles ('compiled') or runs on its\n"
    "reference kernel ('ref'). docs/OPS.md is this list.\n"
    "\n"
    "  --target=T             only this target's column\n"
    "  --json                 print one JSON object instead of a table\n";

static const char usage_targets[] =
    "usage: ncc targets\n"
    "\n"
    "List the targets, one row each: RUN (ncc run/bench work on this\n"
    "machine), COMPILE (ncc compile --emit=<code> works here; '-' for ref,\n"
    "which emits no code) and a NOTE saying why a target only compiles\n"
    "(an LLVM cross target, no device) or is unavailable (not built in).\n";

const cli_command cli_commands[] = {
    {"import", CLI_F_OUT | CLI_F_MEMORY, true, usage_import, cmd_import},
    {"opt", CLI_F_OUT | CLI_F_PIPELINE | CLI_F_MEMORY, true, usage_opt, cmd_opt},
    {"compile", CLI_F_OUT | CLI_F_TARGET | CLI_F_PIPELINE | CLI_F_EMIT | CLI_F_MEMORY,
     true,
     usage_compile, cmd_compile},
    {"run",
     CLI_F_TARGET | CLI_F_PIPELINE | CLI_F_INPUT | CLI_F_OUTDIR | CLI_F_DRIFT |
         CLI_F_MEMORY | CLI_F_THREADS | CLI_F_CACHE | CLI_F_TRACE | CLI_F_COMPARE,
     true,
     usage_run, cmd_run},
    {"bench",
     CLI_F_TARGET | CLI_F_PIPELINE | CLI_F_INPUT | CLI_F_BENCH | CLI_F_MEMORY | CLI_F_THREADS |
         CLI_F_CACHE | CLI_F_TRACE,
     true,
     usage_bench, cmd_bench},
    {"check", CLI_F_JSON | CLI_F_TARGET | CLI_F_PIPELINE | CLI_F_CACHE, true, usage_check,
     cmd_check},
    {"passes", 0, false, usage_passes, cmd_passes},
    {"targets", 0, false, usage_targets, cmd_targets},
    {"ops", CLI_F_JSON | CLI_F_TARGET, false, usage_ops, cmd_ops},
    {"cache", CLI_F_CACHE, true, usage_cache, cmd_cache},
};
const int cli_n_commands = (int)(sizeof cli_commands / sizeof cli_commands[0]);

static void print_usage(FILE *f) {
  fprintf(f,
          "usage: ncc <command> [args]\n"
          "\n"
          "ncc " NCC_VERSION_STRING ", a deep-learning graph compiler.\n"
          "\n"
          "commands:\n"
          "  import   MODEL.onnx [-o OUT.nir]          ONNX -> text IR\n"
          "  opt      IN.(nir|onnx) [flags] [-o OUT]   run passes, print IR\n"
          "  compile  MODEL [--target=T] [--emit=KIND] compile for a target\n"
          "  run      MODEL [--input ...]              run once, write .npy "
          "outputs\n"
          "  bench    MODEL [--batch N] [--json]       measure latency\n"
          "  check    MODEL [--target=T] [--json]      list unsupported ops,\n"
          "                                            dtypes and opsets\n"
          "  passes                                    list the passes\n"
          "  targets                                   list the targets\n"
          "  ops      [--target=T] [--json]            list the supported ops\n"
          "  cache    stats|clear [--cache-dir DIR]    the compile cache\n"
          "\n"
          "'ncc <command> --help' describes a command; 'ncc --version' "
          "prints the version.\n"
          "Exit status: 0 ok, 1 bad command line, 2 bad input, 3 "
          "unsupported, 4 out of memory\n"
          "(over the --max-memory budget, default 75%% of physical memory),\n"
          "5 internal error, 6 a pass drifts ('ncc run --check-each-pass')."
          "\n\n" CLI_ENV_HELP);
}

static const cli_command *find_command(const char *name) {
  for (int i = 0; i < cli_n_commands; i++)
    if (strcmp(cli_commands[i].name, name) == 0) return &cli_commands[i];
  return NULL;
}

static ncc_status dispatch(int argc, char **argv) {
  if (argc < 2)
    return ncc_error(NCC_ERR_USAGE, "no command given (see 'ncc --help')");
  const char *name = argv[1];
  if (strcmp(name, "--version") == 0) {
    printf("ncc " NCC_VERSION_STRING "\n");
    return NCC_OK;
  }
  if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 ||
      strcmp(name, "help") == 0) {
    print_usage(stdout);
    return NCC_OK;
  }
  const cli_command *cmd = find_command(name);
  if (!cmd) {
    if (name[0] == '-')
      return ncc_error(NCC_ERR_USAGE,
                       "unknown option '%s' (a command comes first; see 'ncc "
                       "--help')",
                       name);
    const char *names[32];
    int n = 0;
    for (int i = 0; i < cli_n_commands && n < 32; i++) names[n++] = cli_commands[i].name;
    const char *near = ncc_suggest(name, names, n);
    if (near)
      return ncc_error(NCC_ERR_USAGE,
                       "unknown command '%s'; did you mean '%s'? (see 'ncc --help')", name,
                       near);
    return ncc_error(NCC_ERR_USAGE,
                     "unknown command '%s' (see 'ncc --help')", name);
  }
  cli_opts o;
  ncc_status st = cli_parse(cmd, argc, argv, 2, &o);
  if (!st && o.help) cli_print_help(cmd->usage, stdout);
  else if (!st) st = cmd->run(&o);
  cli_opts_free(&o);
  return st;
}

/* A failed write to stdout (a full disk, a closed pipe) must not pass as
 * success. */
static ncc_status flush_stdout(ncc_status st) {
  errno = 0;
  if (fflush(stdout) != 0 || ferror(stdout)) {
    if (!st)
      st = ncc_error(NCC_ERR_INPUT, "cannot write to standard output: %s",
                     errno ? strerror(errno) : "I/O error");
  }
  return st;
}

/* SIGINT/SIGTERM/SIGHUP: remove the temporaries being written (and stop
 * the C compiler of --emit=lib), then die of the signal as if unhandled. */
static void on_fatal_signal(int sig) {
  ncc_atomic_cleanup_signal(sig);
  signal(sig, SIG_DFL);
  raise(sig);
}

static void install_signal_cleanup(void) {
  static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
    struct sigaction sa, old;
    if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
      continue; /* e.g. nohup: keep ignoring it */
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal_signal;
    sigfillset(&sa.sa_mask); /* one handler at a time */
    sa.sa_flags = SA_RESETHAND;
    sigaction(sigs[i], &sa, NULL);
  }
}

int main(int argc, char **argv) {
  install_signal_cleanup();
  ncc_status st = flush_stdout(dispatch(argc, argv));
  if (st) {
    const char *msg = ncc_error_message();
    if (!msg[0]) msg = "failed (no message)";
    /* escaped when set (ir/error.c); again here, as escaping is idempotent,
     * so no message can reach the terminal raw */
    char line[CLI_TEXT_MAX * 2];
    fprintf(stderr, "ncc: error: %s\n", cli_text(msg, line, sizeof line));
  }
  return (int)st;
}
