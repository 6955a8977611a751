/* tools/ncc/args.c — the flags the sub-commands share, parsed in one place.
 *
 * Long options take their value as `--flag=VALUE` or `--flag VALUE`; `-o`
 * as `-o FILE` or `-oFILE`; `--` ends the options. Each command accepts only
 * the flag groups it lists (cli_command.flags), so `ncc import --batch 4` is
 * an error rather than silently ignored. `--help` anywhere before `--` wins
 * over everything else, as in git.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef enum opt_id {
  OPT_TARGET, OPT_PASSES, OPT_DISABLE, OPT_PRINT_AFTER, OPT_TIME_PASSES,
  OPT_VERIFY_EACH, OPT_INPUT, OPT_OUTPUT_DIR, OPT_EMIT, OPT_BATCH,
  OPT_WARMUP, OPT_ITERS, OPT_JSON, OPT_ABLATE, OPT_CHECK_EACH_PASS,
  OPT_RTOL, OPT_ATOL, OPT_OUT, OPT_CUDA_ARCH, OPT_LAYOUT_BLOCK, OPT_MAX_MEMORY,
  OPT_THREADS, OPT_CODEGEN_OPT, OPT_COMPILE_THREADS, OPT_CACHE_DIR, OPT_NO_CACHE,
  OPT_PROFILE, OPT_TRACE, OPT_PEAK_GFLOPS, OPT_PEAK_GBPS, OPT_PRECISION,
  OPT_COMPARE_F32, OPT_TARGET_CPU, OPT_TARGET_FEATURES, OPT_NO_AMX, OPT_WINOGRAD,
} opt_id;

typedef struct long_opt {
  const char *name; /* without the leading "--" */
  opt_id id;
  unsigned group;
  bool takes_value;
} long_opt;

static const long_opt long_opts[] = {
    {"target", OPT_TARGET, CLI_F_TARGET, true},
    {"cuda-arch", OPT_CUDA_ARCH, CLI_F_TARGET, true},
    {"passes", OPT_PASSES, CLI_F_PIPELINE, true},
    {"disable-pass", OPT_DISABLE, CLI_F_PIPELINE, true},
    {"print-after", OPT_PRINT_AFTER, CLI_F_PIPELINE, true},
    {"time-passes", OPT_TIME_PASSES, CLI_F_PIPELINE, false},
    {"verify-each", OPT_VERIFY_EACH, CLI_F_PIPELINE, false},
    {"layout-block", OPT_LAYOUT_BLOCK, CLI_F_PIPELINE, true},
    {"winograd", OPT_WINOGRAD, CLI_F_PIPELINE, true},
    {"codegen-opt", OPT_CODEGEN_OPT, CLI_F_PIPELINE, true},
    {"precision", OPT_PRECISION, CLI_F_PIPELINE, true},
    {"no-amx", OPT_NO_AMX, CLI_F_PIPELINE, false},
    {"compare-f32", OPT_COMPARE_F32, CLI_F_COMPARE, false},
    {"compile-threads", OPT_COMPILE_THREADS, CLI_F_PIPELINE, true},
    {"input", OPT_INPUT, CLI_F_INPUT, true},
    {"output-dir", OPT_OUTPUT_DIR, CLI_F_OUTDIR, true},
    {"emit", OPT_EMIT, CLI_F_EMIT, true},
    {"target-cpu", OPT_TARGET_CPU, CLI_F_EMIT, true},
    {"target-features", OPT_TARGET_FEATURES, CLI_F_EMIT, true},
    {"batch", OPT_BATCH, CLI_F_BENCH, true},
    {"warmup", OPT_WARMUP, CLI_F_BENCH, true},
    {"iters", OPT_ITERS, CLI_F_BENCH, true},
    {"json", OPT_JSON, CLI_F_BENCH | CLI_F_JSON, false},
    {"ablate", OPT_ABLATE, CLI_F_BENCH, false},
    {"check-each-pass", OPT_CHECK_EACH_PASS, CLI_F_DRIFT, false},
    {"rtol", OPT_RTOL, CLI_F_DRIFT, true},
    {"atol", OPT_ATOL, CLI_F_DRIFT, true},
    {"max-memory", OPT_MAX_MEMORY, CLI_F_MEMORY, true},
    {"threads", OPT_THREADS, CLI_F_THREADS, true},
    {"cache-dir", OPT_CACHE_DIR, CLI_F_CACHE, true},
    {"no-cache", OPT_NO_CACHE, CLI_F_CACHE, false},
    {"profile", OPT_PROFILE, CLI_F_BENCH, false},
    {"peak-gflops", OPT_PEAK_GFLOPS, CLI_F_BENCH, true},
    {"peak-gbps", OPT_PEAK_GBPS, CLI_F_BENCH, true},
    {"trace", OPT_TRACE, CLI_F_TRACE, true},
};

/* -o has no long form. */
static const long_opt out_opt = {"o", OPT_OUT, CLI_F_OUT, true};

/* Parsing state shared by the helpers below. */
typedef struct argp {
  const cli_command *cmd;
  int argc, i;
  char **argv;
  cli_opts *o;
} argp;

/* A usage error with a pointer to the command's help. */
static ncc_status bad(const argp *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static ncc_status bad(const argp *a, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return ncc_error(NCC_ERR_USAGE, "%s (see 'ncc %s --help')", msg,
                   a->cmd->name);
}

/* Limits keep the arithmetic of bench far from overflow. */
#define MAX_COUNT 1000000
#define MAX_BATCH (1 << 20)

static ncc_status set_count(const argp *a, const char *flag, const char *v,
                            int64_t lo, int64_t hi, int64_t *dst) {
  if (!cli_parse_int(v, lo, hi, dst))
    return ncc_error(NCC_ERR_USAGE,
                     "%s expects an integer from %lld to %lld, got '%s'",
                     flag, (long long)lo, (long long)hi, v);
  return NCC_OK;
}

/* --batch N or --batch N1,N2,...: each in [1, MAX_BATCH], no repeats. */
static ncc_status set_batches(cli_opts *o, const char *v) {
  o->batch_set = true;
  o->n_batches = 0;
  for (const char *s = v;;) {
    const char *e = strchr(s, ',');
    size_t len = e ? (size_t)(e - s) : strlen(s);
    char item[32];
    int64_t b;
    bool ok = len > 0 && len < sizeof item;
    if (ok) {
      memcpy(item, s, len);
      item[len] = 0;
      ok = cli_parse_int(item, 1, MAX_BATCH, &b);
    }
    if (!ok)
      return ncc_error(NCC_ERR_USAGE,
                       "--batch expects an integer from 1 to %d or a comma-separated "
                       "list of them (e.g. 1,8), got '%s'", MAX_BATCH, v);
    for (int i = 0; i < o->n_batches; i++)
      if (o->batches[i] == b)
        return ncc_error(NCC_ERR_USAGE, "--batch lists %lld twice in '%s'", (long long)b, v);
    if (o->n_batches == CLI_MAX_BATCHES)
      return ncc_error(NCC_ERR_USAGE, "--batch lists more than %d batch sizes",
                       CLI_MAX_BATCHES);
    o->batches[o->n_batches++] = b;
    if (!e) break;
    s = e + 1;
  }
  o->batch = o->batches[0];
  return NCC_OK;
}

/* A tolerance: a finite decimal >= 0. */
static ncc_status set_tolerance(const char *flag, const char *v, double *dst,
                                bool *seen) {
  char *end;
  double d = v[0] ? strtod(v, &end) : -1;
  if (!v[0] || *end || !(d >= 0) || d > 1e300)
    return ncc_error(NCC_ERR_USAGE, "%s expects a number >= 0, got '%s'", flag,
                     v);
  *dst = d;
  *seen = true;
  return NCC_OK;
}

/* --max-memory=SIZE: bytes, or a number with K, M, G or T (binary:
 * 1K = 1024), optionally followed by "B" or "iB" ("2G", "512MiB"). */
static ncc_status set_max_memory(const char *v) {
  char *end;
  errno = 0;
  double d = (v[0] >= '0' && v[0] <= '9') ? strtod(v, &end) : -1;
  static const char units[] = "KMGT";
  const char *u = d >= 0 && *end ? strchr(units, end[0] & ~0x20) : NULL;
  if (u && end[0]) {
    for (int i = 0; i <= (int)(u - units); i++) d *= 1024;
    end++;
    if (*end == 'i' && end[1] == 'B') end += 2;
    else if (*end == 'B') end++;
  } else if (d >= 0 && *end == 'B') {
    end++;
  }
  if (d < 1 || errno || *end || d >= 18446744073709551615.0)
    return ncc_error(NCC_ERR_USAGE,
                     "--max-memory expects a size in bytes with an optional K, M, "
                     "G or T suffix (e.g. 512M), got '%s'", v);
  ncc_set_max_memory((size_t)d);
  return NCC_OK;
}

static ncc_status add_input(argp *a, const char *v) {
  cli_input *in = &a->o->inputs[a->o->n_inputs];
  const char *eq = strchr(v, '=');
  if (eq) {
    if (eq == v) return bad(a, "--input '%s' has an empty NAME", v);
    if (!eq[1]) return bad(a, "--input '%s' has an empty FILE", v);
    char *name = ncc_malloc((size_t)(eq - v) + 1);
    if (!name) return NCC_ERR_NOMEM;
    memcpy(name, v, (size_t)(eq - v));
    name[eq - v] = 0;
    in->name = name;
    in->path = eq + 1;
    in->arg = v; /* the split is settled against the model (inputs.c) */
  } else {
    if (!v[0]) return bad(a, "--input needs a FILE");
    in->path = v;
  }
  a->o->n_inputs++;
  return NCC_OK;
}

/* A machine peak: a finite number > 0. */
static ncc_status set_peak(const char *flag, const char *v, double *dst) {
  char *end;
  double d = v[0] ? strtod(v, &end) : -1;
  if (!v[0] || *end || !(d > 0) || d > 1e12)
    return ncc_error(NCC_ERR_USAGE, "%s expects a number > 0, got '%s'", flag, v);
  *dst = d;
  return NCC_OK;
}

static ncc_status apply_long(argp *a, const long_opt *lo, const char *v) {
  cli_opts *o = a->o;
  switch (lo->id) {
  case OPT_TARGET:
    o->target = v;
    o->target_set = true;
    break;
  /* the cuda target reads its arch from the environment (docs/GPU.md) */
  case OPT_CUDA_ARCH: setenv("NCC_CUDA_ARCH", v, 1); break;
  case OPT_PASSES: o->passes = v; break;
  case OPT_DISABLE: o->disabled[o->n_disabled++] = v; break;
  case OPT_PRINT_AFTER: o->print_after = v; break;
  case OPT_TIME_PASSES: o->time_passes = true; break;
  case OPT_VERIFY_EACH: o->verify_each = true; break;
  case OPT_LAYOUT_BLOCK: {
    int64_t b;
    if (!cli_parse_int(v, 1, 64, &b) || (b & (b - 1)))
      return ncc_error(NCC_ERR_USAGE,
                       "--layout-block expects a power of two from 1 to 64, got '%s'", v);
    o->layout_block = (int)b;
    break;
  }
  case OPT_WINOGRAD:
    if (strcmp(v, "auto") == 0) {
      o->winograd = 0;
    } else if (strcmp(v, "2") == 0 || strcmp(v, "4") == 0) {
      o->winograd = v[0] - '0';
    } else {
      return ncc_error(NCC_ERR_USAGE, "--winograd expects auto, 2 or 4, got '%s'", v);
    }
    break;
  case OPT_INPUT: return add_input(a, v);
  case OPT_OUTPUT_DIR:
    if (!v[0]) return bad(a, "--output-dir needs a directory");
    o->output_dir = v;
    break;
  case OPT_EMIT: o->emit = v; break;
  /* checked by libncc (ncc_module_emit_opts), which knows the targets */
  case OPT_TARGET_CPU: o->lib.target_cpu = v; break;
  case OPT_TARGET_FEATURES: o->lib.target_features = v; break;
  case OPT_BATCH: return set_batches(o, v);
  case OPT_WARMUP: return set_count(a, "--warmup", v, 0, MAX_COUNT, &o->warmup);
  case OPT_ITERS:
    o->iters_set = true;
    return set_count(a, "--iters", v, 1, MAX_COUNT, &o->iters);
  case OPT_JSON: o->json = true; break;
  case OPT_ABLATE: o->ablate = true; break;
  case OPT_CHECK_EACH_PASS: o->check_each_pass = true; break;
  case OPT_MAX_MEMORY: return set_max_memory(v);
  case OPT_CODEGEN_OPT: {
    int64_t l;
    if (!cli_parse_int(v, 0, 3, &l))
      return ncc_error(NCC_ERR_USAGE, "--codegen-opt expects an integer from 0 to 3, got '%s'", v);
    o->codegen_opt = (int)l;
    break;
  }
  case OPT_PRECISION: {
    int pr = ncc_precision_from_name(v);
    if (pr < 0)
      return ncc_error(NCC_ERR_USAGE, "--precision expects f32, bf16 or fp16, got '%s'", v);
    o->lib.precision = pr;
    break;
  }
  case OPT_COMPARE_F32: o->compare_f32 = true; break;
  case OPT_NO_AMX: o->lib.no_amx = 1; break;
  case OPT_COMPILE_THREADS: {
    int64_t t;
    if (!cli_parse_int(v, 0, 1024, &t))
      return ncc_error(NCC_ERR_USAGE,
                       "--compile-threads expects an integer from 0 to 1024, got '%s'", v);
    o->lib.compile_threads = (int)t;
    break;
  }
  case OPT_THREADS: {
    int64_t t;
    if (!cli_parse_int(v, 1, 1024, &t))
      return ncc_error(NCC_ERR_USAGE, "--threads expects an integer from 1 to 1024, got '%s'", v);
    o->lib.num_threads = (int)t;
    break;
  }
  case OPT_CACHE_DIR:
    if (!v[0]) return bad(a, "--cache-dir needs a directory");
    o->lib.cache_dir = v;
    break;
  case OPT_NO_CACHE: o->lib.cache_dir = NULL; break;
  case OPT_PROFILE: o->profile = true; break;
  case OPT_TRACE:
    if (!v[0]) return bad(a, "--trace needs a file name");
    o->trace = v;
    break;
  case OPT_PEAK_GFLOPS: return set_peak("--peak-gflops", v, &o->peak_gflops);
  case OPT_PEAK_GBPS: return set_peak("--peak-gbps", v, &o->peak_gbps);
  case OPT_RTOL: return set_tolerance("--rtol", v, &o->rtol, &o->tol_set);
  case OPT_ATOL: return set_tolerance("--atol", v, &o->atol, &o->tol_set);
  case OPT_OUT:
    if (!v[0]) return bad(a, "-o needs a file name");
    o->out = v;
    break;
  }
  return NCC_OK;
}

/* "unknown option", naming the nearest option of this command when one is
 * close (ncc_suggest): `--disable-passes` -> "did you mean '--disable-pass'?". */
static ncc_status unknown_long(argp *a, const char *arg, size_t n) {
  enum { MAX_OPTS = sizeof long_opts / sizeof long_opts[0] };
  const char *names[MAX_OPTS];
  int k = 0;
  for (size_t i = 0; i < MAX_OPTS; i++)
    if (long_opts[i].group & a->cmd->flags) names[k++] = long_opts[i].name;
  char word[64];
  const char *near = NULL;
  if (n < sizeof word) {
    memcpy(word, arg, n);
    word[n] = 0;
    near = ncc_suggest(word, names, k);
  }
  if (near) return bad(a, "unknown option '%s'; did you mean '--%s'?", a->argv[a->i], near);
  return bad(a, "unknown option '%s'", a->argv[a->i]);
}

/* `--name[=value]` at argv[a->i]. */
static ncc_status parse_long(argp *a) {
  const char *arg = a->argv[a->i] + 2;
  const char *eq = strchr(arg, '=');
  size_t n = eq ? (size_t)(eq - arg) : strlen(arg);
  const long_opt *lo = NULL;
  for (size_t k = 0; k < sizeof long_opts / sizeof long_opts[0]; k++)
    if (strlen(long_opts[k].name) == n &&
        memcmp(long_opts[k].name, arg, n) == 0)
      lo = &long_opts[k];
  if (lo && !(lo->group & a->cmd->flags))
    return bad(a, "option '--%s' does not apply to this command", lo->name);
  if (!lo) return unknown_long(a, arg, n);
  if (!lo->takes_value) {
    if (eq) return bad(a, "option '--%s' takes no value", lo->name);
    return apply_long(a, lo, NULL);
  }
  if (eq) return apply_long(a, lo, eq + 1);
  if (a->i + 1 >= a->argc) return bad(a, "option '--%s' needs a value", lo->name);
  return apply_long(a, lo, a->argv[++a->i]);
}

/* -o FILE, -oFILE, -O0..-O3. */
static ncc_status parse_short(argp *a) {
  const char *arg = a->argv[a->i];
  if (arg[1] == 'o' && (a->cmd->flags & CLI_F_OUT)) {
    if (arg[2]) return apply_long(a, &out_opt, arg + 2);
    if (a->i + 1 >= a->argc) return bad(a, "option '-o' needs a file name");
    return apply_long(a, &out_opt, a->argv[++a->i]);
  }
  if (arg[1] == 'O' && (a->cmd->flags & CLI_F_PIPELINE)) {
    if (arg[2] >= '0' && arg[2] <= '3' && !arg[3]) {
      a->o->opt_level = arg[2] - '0';
      return NCC_OK;
    }
    return bad(a, "unknown optimization level '%s' (use -O0 .. -O3)", arg);
  }
  return bad(a, "unknown option '%s'", arg);
}

static ncc_status positional(argp *a, const char *arg) {
  if (!a->cmd->needs_model || a->o->model)
    return bad(a, "unexpected argument '%s'", arg);
  a->o->model = arg;
  return NCC_OK;
}

static bool wants_help(int argc, char **argv, int first) {
  for (int i = first; i < argc; i++) {
    if (strcmp(argv[i], "--") == 0) return false;
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
      return true;
  }
  return false;
}

static void set_defaults(const cli_command *cmd, cli_opts *o) {
  memset(o, 0, sizeof *o);
  o->cmd = cmd;
  /* cpu where it is built; a -DNCC_LLVM=OFF build has no cpu target, so
   * its default is the one target every build has. */
  o->target = "ref";
  ncc_target_desc d;
  for (int i = 0; ncc_target_get(i, &d) == NCC_OK; i++)
    if (strcmp(d.name, "cpu") == 0 && d.runs) o->target = "cpu";
  o->opt_level = 2;
  o->output_dir = ".";
  o->batch = 1;
  o->batches[0] = 1;
  o->n_batches = 1;
  o->warmup = 3;
  o->iters = 20;
  o->rtol = 1e-4;
  o->atol = 1e-5;
  o->codegen_opt = -1;
  ncc_options_init(&o->lib);
  o->lib.codegen_level = -1; /* NCC_CODEGEN_OPT sets it; cli_parse resolves */
  cli_env_options(&o->lib);
}

/* The compile-speed tier (ncc_options.codegen_level) of each -O level:
 * docs/CODEGEN.md "Compile-speed tiers" has the measurements. */
static const int codegen_of_opt[4] = {0, 1, 2, 3};

ncc_status cli_parse(const cli_command *cmd, int argc, char **argv, int first,
                     cli_opts *o) {
  set_defaults(cmd, o);
  if (wants_help(argc, argv, first)) {
    o->help = true;
    return NCC_OK;
  }
  /* Repeatable flags: there can be no more of them than arguments. */
  size_t n = (size_t)(argc > 0 ? argc : 1);
  o->inputs = ncc_calloc(n, sizeof *o->inputs);
  o->disabled = ncc_calloc(n, sizeof *o->disabled);
  if (!o->inputs || !o->disabled) return NCC_ERR_NOMEM;
  argp a = {cmd, argc, first, argv, o};
  bool opts_done = false;
  ncc_status st = NCC_OK;
  for (; a.i < argc && !st; a.i++) {
    const char *arg = argv[a.i];
    if (opts_done || arg[0] != '-' || !arg[1]) st = positional(&a, arg);
    else if (strcmp(arg, "--") == 0) opts_done = true;
    else if (arg[1] == '-') st = parse_long(&a);
    else st = parse_short(&a);
  }
  /* --codegen-opt, else NCC_CODEGEN_OPT, else the -O level's tier */
  if (o->codegen_opt >= 0) o->lib.codegen_level = o->codegen_opt;
  else if (o->lib.codegen_level < 0) o->lib.codegen_level = codegen_of_opt[o->opt_level];
  if (!st && cmd->needs_model && !o->model)
    st = ncc_error(NCC_ERR_USAGE, "'ncc %s' needs %s (see 'ncc %s --help')", cmd->name,
                   /* `ncc cache` takes an action where the others take a model */
                   strcmp(cmd->name, "cache") == 0 ? "stats or clear" : "a MODEL", cmd->name);
  return st;
}

void cli_opts_free(cli_opts *o) {
  if (o->inputs)
    for (int i = 0; i < o->n_inputs; i++) ncc_free((void *)o->inputs[i].name, 0);
  ncc_free(o->inputs, 0);
  ncc_free(o->disabled, 0);
  o->inputs = NULL;
  o->disabled = NULL;
  o->n_inputs = 0;
}
