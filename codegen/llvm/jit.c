/* codegen/llvm/jit.c — host detection, O3 optimization and ORC LLJIT.
 *
 * The host CPU name and feature string come from LLVM
 * (LLVMGetHostCPUName / LLVMGetHostCPUFeatures) and select the vector width
 * lowering uses: AVX-512 16 f32 lanes, AVX/AVX2 8, SSE/NEON 4, else scalar.
 * Each distinct kernel of a graph becomes its own LLVM module: emitted,
 * verified, optimized with the new pass manager (ncc_llvm_pipeline: the
 * compile-speed tier's pipeline, pipeline.c), turned into an object file here
 * (LLVMTargetMachineEmitToMemoryBuffer) and added to the graph's LLJIT,
 * whose symbol search falls back to the process (libm for the scalarized
 * math calls). Kernels do not call one another, so one module each
 * optimizes to the same code as one module for all, and makes every phase
 * measurable per kernel (ncc_compile_stats, ir/ctime.h): each kernel is
 * looked up right away, which links its object alone, so that errors and
 * compile time belong to ncc_module_compile, not to the first run. The
 * modules compile on ncc_options.compile_threads threads, each with its
 * own context and target machine; the objects go to the JIT in kernel
 * order afterwards ("the kernels' compiles" below).
 *
 * With ncc_options.cache_dir the object files persist (ir/kcache.h): the
 * key is a SHA-256 over the kernel IR's digest (kir_kernel_digest: its
 * structure, not its names nor its constant buffers' data, so an equal
 * kernel of another model shares the entry and two kernels of one name
 * and other code never do), the target triple, CPU, features and vector
 * width, the pass pipeline, the code generator's settings and level, the
 * emitter's source id (NCC_LLVM_EMIT_ID, from CMake: the same kernel IR
 * makes other LLVM IR once emit.c changes), and the ncc, LLVM and cache
 * format versions. The key comes before any LLVM IR: a hit builds no
 * module at all (no emission, verification, optimization or code
 * generation). The object's one exported symbol is then named after the
 * key, not the kernel, and ncc_jit_lookup maps kernel names to it.
 */
#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../../ir/ctime.h"
#include "../../ir/kcache.h"
#include "../../ir/options.h"
#include "../../ir/sha256.h"
#include "llvm.h"

/* A kernel's name and the JIT symbol of its code (the same without the
 * cache; "ncc_k_" and the key's first 32 hex digits with it). */
typedef struct jit_sym {
  char *name;
  char sym[40];
  uint8_t key[32];
  bool keyed;
} jit_sym;

struct ncc_jit {
  LLVMOrcLLJITRef jit;
  jit_sym *syms;
  int n_syms;
  int misses; /* entries written by this compile (prune after) */
};

/* What the code generator does with an optimized module, beyond the
 * target: make_tm's settings and the object file kind. Part of the cache
 * key: change it when they change. */
#define CODEGEN_SETTINGS "tm:aggressive,pic,jit-code-model;emit:obj"

static ncc_llvm_host host;
static char host_error[256];
static pthread_once_t host_once = PTHREAD_ONCE_INIT;

/* Whether the comma-separated feature list has "+name". */
static bool has_feature(const char *list, const char *name) {
  size_t n = strlen(name);
  for (const char *p = list; p && *p;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len == n + 1 && p[0] == '+' && memcmp(p + 1, name, n) == 0) return true;
    p = end ? end + 1 : NULL;
  }
  return false;
}

bool ncc_llvm_has_feature(const ncc_llvm_host *h, const char *name) {
  return h && has_feature(h->features, name);
}

static int width_from_features(const char *f) {
  if (has_feature(f, "avx512f")) return 16;
  if (has_feature(f, "avx2") || has_feature(f, "avx")) return 8;
  if (has_feature(f, "sse2") || has_feature(f, "neon")) return 4;
  return 1;
}

/* LLVM's host strings live for the process (they are set once). */
static void host_init(void) {
  if (LLVMInitializeNativeTarget() || LLVMInitializeNativeAsmPrinter()) {
    snprintf(host_error, sizeof host_error,
             "LLVM has no code generator for this host");
    return;
  }
  char *triple = LLVMGetDefaultTargetTriple();
  LLVMTargetRef t;
  char *err = NULL;
  if (LLVMGetTargetFromTriple(triple, &t, &err)) {
    snprintf(host_error, sizeof host_error, "LLVM cannot target %s: %s", triple,
             err ? err : "?");
    LLVMDisposeMessage(err);
    LLVMDisposeMessage(triple);
    return;
  }
  host.triple = triple;
  host.cpu = LLVMGetHostCPUName();
  host.features = LLVMGetHostCPUFeatures();
  /* a caller's narrower width is ncc_options.vector_width (the driver
   * reads NCC_VECTOR_WIDTH), applied where kernels are lowered */
  host.vector_width = width_from_features(host.features);
  host.in_process = true;
}

ncc_status ncc_llvm_host_info(const ncc_llvm_host **out) {
  pthread_once(&host_once, host_init);
  *out = host.triple ? &host : NULL;
  if (!host.triple)
    return ncc_error(NCC_ERR_UNSUPPORTED, "cpu target: %s", host_error);
  return NCC_OK;
}

static LLVMTargetMachineRef make_tm(const ncc_llvm_host *h) {
  return (LLVMTargetMachineRef)ncc_llvm_target_machine(h, true);
}

void *ncc_llvm_target_machine(const ncc_llvm_host *h, bool jit) {
  LLVMTargetRef t;
  char *err = NULL;
  if (LLVMGetTargetFromTriple(h->triple, &t, &err)) {
    LLVMDisposeMessage(err);
    return NULL;
  }
  return LLVMCreateTargetMachine(t, h->triple, h->cpu, h->features,
                                 (LLVMCodeGenOptLevel)ncc_llvm_codegen_level(), LLVMRelocPIC,
                                 jit ? LLVMCodeModelJITDefault : LLVMCodeModelDefault);
}

static ncc_status llvm_error(LLVMErrorRef e, const char *what) {
  char *msg = LLVMGetErrorMessage(e);
  ncc_status st = ncc_error(NCC_ERR_INTERNAL, "LLVM %s: %s", what, msg);
  LLVMDisposeErrorMessage(msg);
  return st;
}

void ncc_jit_free(ncc_jit *j) {
  if (!j) return;
  if (j->jit) LLVMOrcDisposeLLJIT(j->jit);
  for (int i = 0; i < j->n_syms; i++) ncc_free(j->syms[i].name, 0);
  ncc_free(j->syms, 0);
  ncc_free(j, sizeof *j);
}

/* The JIT symbol of kernel `name` (the name itself when not renamed). */
static const char *jit_symbol(const ncc_jit *j, const char *name) {
  for (int i = 0; i < j->n_syms; i++)
    if (strcmp(j->syms[i].name, name) == 0) return j->syms[i].keyed ? j->syms[i].sym : name;
  return name;
}

ncc_kernel_fn ncc_jit_lookup(ncc_jit *j, const char *name) {
  LLVMOrcExecutorAddress addr = 0;
  LLVMErrorRef e = LLVMOrcLLJITLookup(j->jit, &addr, jit_symbol(j, name));
  if (e) {
    llvm_error(e, "lookup");
    return NULL;
  }
  return (ncc_kernel_fn)(uintptr_t)addr;
}

/* The module's text to the dump stream (LLVMDumpModule only knows stderr). */
static void dump_module(LLVMModuleRef mod) {
  char *text = LLVMPrintModuleToString(mod);
  fputs(text, ncc_opts_dump_file());
  LLVMDisposeMessage(text);
}


/* Add a phase's ms to `ms` (a worker's per-kernel tally) or, when NULL,
 * straight to kernel k's row and the totals (the calling thread). */
static void tally(double *ms, int k, ncc_compile_phase p, double dt) {
  if (ms) ms[p] += dt;
  else ncc_ctime_kernel_add(k, p, dt);
}

/* Set the target and emit the kernels (no verification yet); the ir time
 * to `ms` (one kernel) or each kernel's row (ms NULL). */
static ncc_status emit_module(LLVMContextRef ctx, LLVMModuleRef mod, kir_kernel *const *ks,
                              int n, const ncc_llvm_host *h, LLVMTargetMachineRef tm,
                              double *ms) {
  LLVMSetTarget(mod, h->triple);
  LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(tm);
  LLVMSetModuleDataLayout(mod, dl);
  LLVMDisposeTargetData(dl);
  for (int i = 0; i < n; i++) {
    double t0 = ncc_ctime_now();
    ncc_status st = ncc_llvm_emit_kernel(ctx, mod, ks[i], h);
    if (st != NCC_OK) return st;
    tally(ms, ms ? -1 : ncc_ctime_find(ks[i]->name), NCC_PHASE_IR, ncc_ctime_now() - t0);
  }
  return NCC_OK;
}

/* Verify, then optimize with ncc_llvm_pipeline; the dumps. The ir and opt
 * times go to ms[]. */
static ncc_status verify_optimise(LLVMModuleRef mod, LLVMTargetMachineRef tm, double *ms) {
  char *msg = NULL;
  double t0 = ncc_ctime_now();
  if (LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg)) {
    ncc_status st = ncc_error(NCC_ERR_INTERNAL, "emitted LLVM IR is invalid: %.200s", msg);
    if (ncc_opts_dump(NCC_DUMP_LLVM_IR)) dump_module(mod);
    LLVMDisposeMessage(msg);
    return st;
  }
  LLVMDisposeMessage(msg);
  double t1 = ncc_ctime_now();
  ms[NCC_PHASE_IR] += t1 - t0;
  LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
  LLVMErrorRef e = LLVMRunPasses(mod, ncc_llvm_pipeline(), tm, po);
  LLVMDisposePassBuilderOptions(po);
  ms[NCC_PHASE_OPT] += ncc_ctime_now() - t1;
  if (e) return llvm_error(e, "optimization");
  if (ncc_opts_dump(NCC_DUMP_LLVM_IR)) dump_module(mod);
  if (ncc_opts_dump(NCC_DUMP_ASM)) {
    LLVMMemoryBufferRef buf = NULL;
    char *err = NULL;
    if (!LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMAssemblyFile, &err, &buf)) {
      fwrite(LLVMGetBufferStart(buf), 1, LLVMGetBufferSize(buf), ncc_opts_dump_file());
      LLVMDisposeMemoryBuffer(buf);
    }
    LLVMDisposeMessage(err);
  }
  return NCC_OK;
}

ncc_status ncc_llvm_build_module(void *llvm_ctx, void *llvm_module,
                                 kir_kernel *const *ks, int n,
                                 const ncc_llvm_host *h, void *llvm_tm) {
  /* a module of one kernel times everything per kernel; a module of many
   * (--emit) has its verifier and optimizer in the totals only */
  int row = n == 1 ? ncc_ctime_find(ks[0]->name) : -1;
  ncc_status st = emit_module(llvm_ctx, llvm_module, ks, n, h, llvm_tm, NULL);
  if (st != NCC_OK) return st;
  double ms[NCC_PHASE_COUNT] = {0};
  st = verify_optimise(llvm_module, llvm_tm, ms);
  ncc_ctime_kernel_add(row, NCC_PHASE_IR, ms[NCC_PHASE_IR]);
  ncc_ctime_kernel_add(row, NCC_PHASE_OPT, ms[NCC_PHASE_OPT]);
  return st;
}

static ncc_status make_jit(const ncc_llvm_host *h, LLVMOrcLLJITRef *out) {
  *out = NULL;
  LLVMTargetMachineRef tm = make_tm(h);
  if (!tm) return ncc_error(NCC_ERR_INTERNAL, "LLVM: no target machine");
  LLVMOrcLLJITBuilderRef b = LLVMOrcCreateLLJITBuilder();
  /* the builder takes the target machine, the JIT takes the builder */
  LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(
      b, LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(tm));
  LLVMOrcLLJITRef jit;
  LLVMErrorRef e = LLVMOrcCreateLLJIT(&jit, b);
  if (e) return llvm_error(e, "JIT creation");
  LLVMOrcDefinitionGeneratorRef gen;
  e = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
      &gen, LLVMOrcLLJITGetGlobalPrefix(jit), NULL, NULL);
  if (e) {
    LLVMOrcDisposeLLJIT(jit);
    return llvm_error(e, "process symbols");
  }
  LLVMOrcJITDylibAddGenerator(LLVMOrcLLJITGetMainJITDylib(jit), gen);
  /* the tile instructions' C versions (amx_emu.c), by name: a library
   * linked into a program exports none of its symbols to the process
   * search above, and a cached object must not hold this process's
   * addresses */
  static const struct {
    const char *name;
    void (*fn)(void);
  } emu[] = {{"ncc_amx_emu_load", (void (*)(void))ncc_amx_emu_load},
             {"ncc_amx_emu_store", (void (*)(void))ncc_amx_emu_store},
             {"ncc_amx_emu_dp", (void (*)(void))ncc_amx_emu_dp}};
  LLVMOrcCSymbolMapPair pairs[3];
  for (int i = 0; i < 3; i++) {
    pairs[i].Name = LLVMOrcLLJITMangleAndIntern(jit, emu[i].name);
    pairs[i].Sym.Address = (LLVMOrcExecutorAddress)(uintptr_t)emu[i].fn;
    pairs[i].Sym.Flags.GenericFlags =
        LLVMJITSymbolGenericFlagsExported | LLVMJITSymbolGenericFlagsCallable;
    pairs[i].Sym.Flags.TargetFlags = 0;
  }
  e = LLVMOrcJITDylibDefine(LLVMOrcLLJITGetMainJITDylib(jit), LLVMOrcAbsoluteSymbols(pairs, 3));
  if (e) {
    LLVMOrcDisposeLLJIT(jit);
    return llvm_error(e, "tile emulation symbols");
  }
  *out = jit;
  return NCC_OK;
}


/* The source of the LLVM IR emitted from a kernel (emit.c, this file,
 * llvm.h, kir.h), hashed by CMake: a changed emitter changes the code of
 * an unchanged kernel, so it must change the key too. */
#ifndef NCC_LLVM_EMIT_ID
#define NCC_LLVM_EMIT_ID "unknown"
#endif

/* The cache key of kernel k: see the top of this file. Made from the
 * kernel IR, not the LLVM IR, so that a hit builds no LLVM module. */
static void kernel_key(const kir_kernel *k, const ncc_llvm_host *h, uint8_t key[32]) {
  ncc_sha256 s;
  ncc_sha256_init(&s);
  char v[160];
  unsigned major, minor, patch;
  LLVMGetVersion(&major, &minor, &patch);
  snprintf(v, sizeof v, "ncc-kcache %u;ncc %s;llvm %u.%u.%u;emit %s", NCC_KCACHE_FORMAT,
           NCC_VERSION_STRING, major, minor, patch, NCC_LLVM_EMIT_ID);
  ncc_sha256_str(&s, v);
  ncc_sha256_str(&s, h->triple);
  ncc_sha256_str(&s, h->cpu);
  ncc_sha256_str(&s, h->features);
  ncc_sha256_str(&s, ncc_llvm_pipeline());
  snprintf(v, sizeof v, "%s;level %d;width %d", CODEGEN_SETTINGS, ncc_llvm_codegen_level(),
           h->vector_width);
  ncc_sha256_str(&s, v);
  kir_kernel_digest(k, &s);
  ncc_sha256_final(&s, key);
}

/* Remember kernel `name`'s symbol; false when out of memory. */
static jit_sym *add_sym(ncc_jit *j, const char *name) {
  size_t n = (size_t)j->n_syms;
  if ((n & (n - 1)) == 0) {
    jit_sym *v = ncc_realloc(j->syms, n * sizeof *v, (n ? 2 * n : 1) * sizeof *v);
    if (!v) return NULL;
    j->syms = v;
  }
  jit_sym *e = &j->syms[n];
  memset(e, 0, sizeof *e);
  size_t len = strlen(name);
  if (!(e->name = ncc_malloc(len + 1))) return NULL;
  memcpy(e->name, name, len + 1);
  j->n_syms++;
  return e;
}

static ncc_status add_object(ncc_jit *j, LLVMMemoryBufferRef obj) {
  LLVMErrorRef e = LLVMOrcLLJITAddObjectFile(j->jit, LLVMOrcLLJITGetMainJITDylib(j->jit), obj);
  return e ? llvm_error(e, "adding the object") : NCC_OK;
}

/* ---- the kernels' compiles, on ncc_options.compile_threads threads ----
 * Each kernel is one job: emit, key, cache lookup, verify, optimise,
 * object, cache store. A worker has its own LLVMContext and target machine
 * (neither is thread-safe) and the caller's options in scope (ncc_opts is
 * per thread), with compile_stats cleared: a job keeps its times, cache
 * outcome and error in its slot, and the calling thread, after the join,
 * adds them to the stats and the objects to the JIT in kernel order, so
 * the result and the error reported do not depend on the thread count or
 * on which job finished first. */

enum { JOB_NO_CACHE, JOB_HIT, JOB_MISS, JOB_SAME };

typedef struct kjob {
  kir_kernel *k;
  jit_sym *e;               /* its symbol (keyed by the worker) */
  LLVMMemoryBufferRef obj;  /* NULL: an equal kernel's object serves */
  double ms[NCC_PHASE_COUNT];
  int cache;                /* JOB_* */
  bool claimed;             /* its key is claimed (under kwork.lock) */
  ncc_status st;
  char msg[1024];           /* the worker's ncc_error_message on failure */
} kjob;

typedef struct kwork {
  kjob *jobs;
  int n;
  const ncc_llvm_host *h;
  const ncc_options *opts; /* the caller's, compile_stats NULL */
  const char *dir;         /* cache directory or NULL */
  int test_bad;            /* ncc_options.cpu_test_bad_kernel */
  atomic_int next;         /* the next job to claim */
  atomic_int first_fail;   /* the lowest failed job; n: none */
  pthread_mutex_t lock;    /* key claims (same-key dedupe) */
} kwork;

/* Whether an earlier-claimed job of this compile has job x's key, else
 * claim it: an equal kernel is compiled once, by whichever job claims the
 * key first (the object's symbol is named after the key, so either
 * object serves every kernel with it). */
static bool claim_key(kwork *w, kjob *x) {
  bool dup = false;
  pthread_mutex_lock(&w->lock);
  for (int i = 0; i < w->n && !dup; i++)
    dup = w->jobs[i].claimed && memcmp(w->jobs[i].e->key, x->e->key, 32) == 0;
  if (!dup) x->claimed = true;
  pthread_mutex_unlock(&w->lock);
  return dup;
}

/* Kernel x: keyed from its KIR, then (a hit) its stored object read,
 * with no LLVM module built, or (a miss, or no cache) emitted as its own
 * module, verified, optimized, compiled to an object file here and
 * stored. */
static ncc_status compile_job(kwork *w, kjob *x, LLVMContextRef ctx, LLVMTargetMachineRef tm) {
  const ncc_llvm_host *h = w->h;
  kir_kernel *k = x->k;
  jit_sym *e = x->e;
  if (w->test_bad > 0 && (int)(x - w->jobs) + 1 >= w->test_bad)
    return ncc_error(NCC_ERR_INTERNAL, "cpu test hook: kernel %s fails to compile", k->name);
  if (w->dir) {
    double t0 = ncc_ctime_now();
    kernel_key(k, h, e->key);
    e->keyed = true;
    char hex[65];
    ncc_sha256_hex(e->key, hex);
    snprintf(e->sym, sizeof e->sym, "ncc_k_%.32s", hex);
    x->ms[NCC_PHASE_IR] += ncc_ctime_now() - t0;
    /* an equal kernel in this compile (kernel_reuse off) */
    if (claim_key(w, x)) {
      x->cache = JOB_SAME;
      return NCC_OK;
    }
    t0 = ncc_ctime_now();
    void *data;
    size_t len;
    if (ncc_kcache_get(w->dir, e->key, &data, &len)) {
      x->obj = LLVMCreateMemoryBufferWithMemoryRangeCopy(data, len, e->sym);
      ncc_free(data, len);
      x->ms[NCC_PHASE_CODEGEN] += ncc_ctime_now() - t0;
      x->cache = JOB_HIT;
      return NCC_OK;
    }
  }
  LLVMModuleRef mod = LLVMModuleCreateWithNameInContext(k->name, ctx);
  ncc_status st = emit_module(ctx, mod, &k, 1, h, tm, x->ms);
  if (st == NCC_OK) st = verify_optimise(mod, tm, x->ms);
  if (st == NCC_OK) {
    double t0 = ncc_ctime_now();
    /* the exported symbol is the key's: an equal kernel of another model
     * (another name) finds its code under it */
    if (w->dir) {
      LLVMValueRef f = LLVMGetNamedFunction(mod, k->name);
      if (f) LLVMSetValueName2(f, e->sym, strlen(e->sym));
    }
    char *err = NULL;
    if (LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMObjectFile, &err, &x->obj)) {
      st = ncc_error(NCC_ERR_INTERNAL, "LLVM code generation: %.200s", err ? err : "?");
      x->obj = NULL;
    }
    LLVMDisposeMessage(err);
    /* a failed write costs the next compile its hit, nothing more */
    if (x->obj && w->dir) {
      ncc_kcache_put(w->dir, e->key, LLVMGetBufferStart(x->obj), LLVMGetBufferSize(x->obj));
      x->cache = JOB_MISS;
    }
    x->ms[NCC_PHASE_CODEGEN] += ncc_ctime_now() - t0;
  }
  LLVMDisposeModule(mod);
  return st;
}

/* Claim jobs in kernel order until none is left, or every one left comes
 * after a failed one (those before it still run, so the first failure in
 * kernel order is the one reported, whatever the timing). */
static void run_jobs(kwork *w) {
  const ncc_options *prev = ncc_opts_enter(w->opts);
  LLVMContextRef ctx = NULL;
  LLVMTargetMachineRef tm = NULL;
  for (;;) {
    int i = atomic_fetch_add(&w->next, 1);
    if (i >= w->n || i > atomic_load(&w->first_fail)) break;
    kjob *x = &w->jobs[i];
    if (!tm && !(tm = make_tm(w->h))) {
      x->st = ncc_error(NCC_ERR_INTERNAL, "LLVM: no target machine");
    } else {
      /* one context for this worker's modules (each disposed once compiled) */
      if (!ctx) ctx = LLVMContextCreate();
      x->st = compile_job(w, x, ctx, tm);
    }
    if (x->st == NCC_OK) continue;
    snprintf(x->msg, sizeof x->msg, "%s", ncc_error_message());
    int f = atomic_load(&w->first_fail);
    while (i < f && !atomic_compare_exchange_weak(&w->first_fail, &f, i)) {
    }
  }
  if (ctx) LLVMContextDispose(ctx);
  if (tm) LLVMDisposeTargetMachine(tm);
  ncc_opts_leave(prev);
}

static void *worker_main(void *arg) {
  run_jobs(arg);
  return NULL;
}

/* Threads for n kernels: ncc_options.compile_threads (0: one per online
 * core), at most one per kernel; one while a dump is on, so that modules'
 * dumps do not interleave. */
static int compile_threads(int n) {
  if (ncc_opts_dump(NCC_DUMP_LLVM_IR | NCC_DUMP_ASM)) return 1;
  int t = ncc_opts_compile_threads();
  return t > n ? (n > 1 ? n : 1) : t;
}

/* Run the jobs on `threads` threads: this one and threads - 1 more (fewer
 * if they cannot be started: the work is the same). */
static void run_workers(kwork *w, int threads) {
  pthread_t tid[64];
  int started = 0;
  pthread_attr_t attr;
  bool attr_ok = threads > 1 && pthread_attr_init(&attr) == 0;
  /* LLVM's code generator recurses: the main thread's stack size */
  if (attr_ok) pthread_attr_setstacksize(&attr, (size_t)8 << 20);
  for (int t = 1; t < threads; t++)
    if (pthread_create(&tid[started], attr_ok ? &attr : NULL, worker_main, w) == 0) started++;
  if (attr_ok) pthread_attr_destroy(&attr);
  run_jobs(w);
  for (int t = 0; t < started; t++) pthread_join(tid[t], NULL);
}

/* Look kernel k up, which links its object: the link phase. */
static ncc_status materialise(ncc_jit *j, const kir_kernel *k) {
  double t0 = ncc_ctime_now();
  ncc_kernel_fn fn = ncc_jit_lookup(j, k->name);
  ncc_ctime_kernel_add(ncc_ctime_find(k->name), NCC_PHASE_LINK, ncc_ctime_now() - t0);
  return fn ? NCC_OK : NCC_ERR_INTERNAL;
}

/* Compile the jobs, then, in kernel order: their times and cache outcome
 * to the stats, and their objects to the JIT (or the first error). */
static ncc_status compile_all(ncc_jit *j, kjob *jobs, int n, const ncc_llvm_host *h) {
  const ncc_options *o = ncc_opts();
  ncc_options wo = *o;
  wo.compile_stats = NULL;
  kwork w = {.jobs = jobs, .n = n, .h = h, .opts = &wo, .test_bad = o->cpu_test_bad_kernel};
  /* a dump shows what LLVM makes of the kernel: compile it afresh */
  if (o->cache_dir && *o->cache_dir && !ncc_opts_dump(NCC_DUMP_LLVM_IR | NCC_DUMP_ASM))
    w.dir = o->cache_dir;
  atomic_init(&w.next, 0);
  atomic_init(&w.first_fail, n);
  if (pthread_mutex_init(&w.lock, NULL) != 0)
    return ncc_error(NCC_ERR_INTERNAL, "cannot create a mutex");
  int threads = compile_threads(n);
  double t0 = ncc_ctime_now();
  run_workers(&w, threads);
  double wall = ncc_ctime_now() - t0;
  pthread_mutex_destroy(&w.lock);
  double work = 0;
  for (int i = 0; i < n; i++) {
    kjob *x = &jobs[i];
    int row = ncc_ctime_find(x->k->name);
    for (int p = 0; p < NCC_PHASE_COUNT; p++) {
      ncc_ctime_kernel_add(row, (ncc_compile_phase)p, x->ms[p]);
      work += x->ms[p];
    }
    if (x->cache != JOB_NO_CACHE) ncc_ctime_kernel_cache(row, x->cache != JOB_MISS);
    if (x->cache == JOB_MISS) j->misses++;
  }
  ncc_ctime_parallel(threads, wall, work);
  ncc_status st = NCC_OK;
  int fail = atomic_load(&w.first_fail);
  if (fail < n) st = ncc_error(jobs[fail].st, "%s", jobs[fail].msg);
  for (int i = 0; i < n; i++) {
    LLVMMemoryBufferRef obj = jobs[i].obj;
    jobs[i].obj = NULL;
    if (!obj) continue;
    /* the JIT owns an object once given it, failed or not */
    if (st == NCC_OK) st = add_object(j, obj);
    else LLVMDisposeMemoryBuffer(obj);
  }
  return st;
}

ncc_status ncc_jit_compile(kir_kernel *const *ks, int n, ncc_jit **out) {
  *out = NULL;
  const ncc_llvm_host *h;
  ncc_status st = ncc_llvm_host_info(&h);
  if (st != NCC_OK) return st;
  ncc_jit *j = ncc_calloc(1, sizeof *j);
  kjob *jobs = ncc_calloc((size_t)(n > 0 ? n : 1), sizeof *jobs);
  if (!j || !jobs) {
    ncc_free(jobs, 0);
    ncc_jit_free(j);
    return NCC_ERR_NOMEM;
  }
  st = make_jit(h, &j->jit);
  /* every symbol before the workers start: their slots do not move */
  for (int i = 0; i < n && st == NCC_OK; i++)
    if (!add_sym(j, ks[i]->name)) st = NCC_ERR_NOMEM;
  for (int i = 0; i < n && st == NCC_OK; i++) {
    jobs[i].k = ks[i];
    jobs[i].e = &j->syms[i];
  }
  if (st == NCC_OK) st = compile_all(j, jobs, n, h);
  ncc_free(jobs, 0);
  for (int i = 0; i < n && st == NCC_OK; i++) st = materialise(j, ks[i]);
  /* the size bound, checked once per compile that stored something */
  const ncc_options *o = ncc_opts();
  if (st == NCC_OK && j->misses > 0) ncc_kcache_prune(o->cache_dir, o->cache_max_bytes);
  if (st != NCC_OK) {
    ncc_jit_free(j);
    return st;
  }
  *out = j;
  return NCC_OK;
}
