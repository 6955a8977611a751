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
 * compile time belong to ncc_module_compile, not to the first run.
 *
 * With ncc_options.cache_dir the object files persist (ir/kcache.h): the
 * key is a SHA-256 over the kernel's unoptimized LLVM IR (bitcode) with its own
 * names replaced by a placeholder (so an equal kernel of another model
 * shares the entry), the target triple, CPU and features, the pass
 * pipeline, the code generator's settings, and the ncc, LLVM and cache
 * format versions. A hit skips verification, optimization and code
 * generation. The object's one exported symbol is then named after the
 * key, not the kernel, and ncc_jit_lookup maps kernel names to it.
 */
#include <llvm-c/Analysis.h>
#include <llvm-c/BitWriter.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <pthread.h>
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


/* Set the target and emit the kernels (no verification yet). */
static ncc_status emit_module(LLVMContextRef ctx, LLVMModuleRef mod, kir_kernel *const *ks,
                              int n, const ncc_llvm_host *h, LLVMTargetMachineRef tm) {
  LLVMSetTarget(mod, h->triple);
  LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(tm);
  LLVMSetModuleDataLayout(mod, dl);
  LLVMDisposeTargetData(dl);
  for (int i = 0; i < n; i++) {
    double t0 = ncc_ctime_now();
    ncc_status st = ncc_llvm_emit_kernel(ctx, mod, ks[i], h);
    if (st != NCC_OK) return st;
    ncc_ctime_kernel_add(ncc_ctime_find(ks[i]->name), NCC_PHASE_IR, ncc_ctime_now() - t0);
  }
  return NCC_OK;
}

/* Verify, then optimize with ncc_llvm_pipeline; the dumps. `row` is
 * the kernel row of a one-kernel module, else -1. */
static ncc_status verify_optimise(LLVMModuleRef mod, int row, LLVMTargetMachineRef tm) {
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
  ncc_ctime_kernel_add(row, NCC_PHASE_IR, t1 - t0);
  LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
  LLVMErrorRef e = LLVMRunPasses(mod, ncc_llvm_pipeline(), tm, po);
  LLVMDisposePassBuilderOptions(po);
  ncc_ctime_kernel_add(row, NCC_PHASE_OPT, ncc_ctime_now() - t1);
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
  ncc_status st = emit_module(llvm_ctx, llvm_module, ks, n, h, llvm_tm);
  return st ? st : verify_optimise(llvm_module, row, llvm_tm);
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
  *out = jit;
  return NCC_OK;
}


/* Rename the functions kernel `from` defines ("from", "from.body") to
 * the same names on `to`, and the module's own names with them. */
static void rename_kernel(LLVMModuleRef mod, const char *from, const char *to) {
  size_t n = strlen(from);
  char buf[512];
  for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f)) {
    if (LLVMIsDeclaration(f)) continue;
    size_t len;
    const char *name = LLVMGetValueName2(f, &len);
    if (len < n || memcmp(name, from, n) != 0 || (len > n && name[n] != '.')) continue;
    int k = snprintf(buf, sizeof buf, "%s%.*s", to, (int)(len - n), name + n);
    if (k > 0 && (size_t)k < sizeof buf) LLVMSetValueName2(f, buf, (size_t)k);
  }
  LLVMSetModuleIdentifier(mod, to, strlen(to));
  LLVMSetSourceFileName(mod, to, strlen(to));
}

/* The cache key of kernel k's emitted (unoptimized) module: see the top
 * of this file. The kernel's names become a placeholder while the bitcode
 * is written, so the key is the code's, not the name's. */
static void kernel_key(LLVMModuleRef mod, const char *name, const ncc_llvm_host *h,
                       uint8_t key[32]) {
  ncc_sha256 s;
  ncc_sha256_init(&s);
  char v[64];
  unsigned major, minor, patch;
  LLVMGetVersion(&major, &minor, &patch);
  snprintf(v, sizeof v, "ncc-kcache %u;ncc %s;llvm %u.%u.%u", NCC_KCACHE_FORMAT,
           NCC_VERSION_STRING, major, minor, patch);
  ncc_sha256_str(&s, v);
  ncc_sha256_str(&s, h->triple);
  ncc_sha256_str(&s, h->cpu);
  ncc_sha256_str(&s, h->features);
  ncc_sha256_str(&s, ncc_llvm_pipeline());
  snprintf(v, sizeof v, "%s;level %d", CODEGEN_SETTINGS, ncc_llvm_codegen_level());
  ncc_sha256_str(&s, v);
  rename_kernel(mod, name, "ncc_kernel");
  /* bitcode: the module exactly, and several times cheaper to make than
   * its text (13 MB of text for ResNet-18's kernels) */
  LLVMMemoryBufferRef bc = LLVMWriteBitcodeToMemoryBuffer(mod);
  ncc_sha256_update(&s, LLVMGetBufferStart(bc), LLVMGetBufferSize(bc));
  LLVMDisposeMemoryBuffer(bc);
  rename_kernel(mod, "ncc_kernel", name);
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

/* An earlier kernel of this JIT with the same key (its code is there). */
static const jit_sym *same_key(const ncc_jit *j, const jit_sym *e) {
  for (int i = 0; i < j->n_syms; i++)
    if (&j->syms[i] != e && j->syms[i].keyed && memcmp(j->syms[i].key, e->key, 32) == 0)
      return &j->syms[i];
  return NULL;
}

static ncc_status add_object(ncc_jit *j, LLVMMemoryBufferRef obj) {
  LLVMErrorRef e = LLVMOrcLLJITAddObjectFile(j->jit, LLVMOrcLLJITGetMainJITDylib(j->jit), obj);
  return e ? llvm_error(e, "adding the object") : NCC_OK;
}

/* Kernel k as its own module: emitted, then (a cache miss, or no cache)
 * verified, optimized, compiled to an object file here and stored, or (a
 * hit) its stored object; the object goes to the JIT. */
static ncc_status add_kernel(ncc_jit *j, LLVMContextRef ctx, kir_kernel *k,
                             const ncc_llvm_host *h, LLVMTargetMachineRef tm) {
  const ncc_options *o = ncc_opts();
  /* a dump shows what LLVM makes of the kernel: compile it afresh */
  const char *dir = o->cache_dir && *o->cache_dir &&
                            !ncc_opts_dump(NCC_DUMP_LLVM_IR | NCC_DUMP_ASM)
                        ? o->cache_dir
                        : NULL;
  int row = ncc_ctime_find(k->name);
  jit_sym *e = add_sym(j, k->name);
  if (!e) return NCC_ERR_NOMEM;
  LLVMModuleRef mod = LLVMModuleCreateWithNameInContext(k->name, ctx);
  ncc_status st = emit_module(ctx, mod, &k, 1, h, tm);
  if (st == NCC_OK && dir) {
    double t0 = ncc_ctime_now();
    kernel_key(mod, k->name, h, e->key);
    e->keyed = true;
    char hex[65];
    ncc_sha256_hex(e->key, hex);
    snprintf(e->sym, sizeof e->sym, "ncc_k_%.32s", hex);
    ncc_ctime_kernel_add(row, NCC_PHASE_IR, ncc_ctime_now() - t0);
    /* an equal kernel already in this JIT (kernel_reuse off) */
    if (same_key(j, e)) {
      LLVMDisposeModule(mod);
      ncc_ctime_kernel_cache(row, true);
      return NCC_OK;
    }
    t0 = ncc_ctime_now();
    void *data;
    size_t len;
    if (ncc_kcache_get(dir, e->key, &data, &len)) {
      LLVMDisposeModule(mod);
      LLVMMemoryBufferRef obj =
          LLVMCreateMemoryBufferWithMemoryRangeCopy(data, len, e->sym);
      ncc_free(data, len);
      ncc_ctime_kernel_add(row, NCC_PHASE_CODEGEN, ncc_ctime_now() - t0);
      ncc_ctime_kernel_cache(row, true);
      return add_object(j, obj);
    }
  }
  if (st == NCC_OK) st = verify_optimise(mod, row, tm);
  LLVMMemoryBufferRef obj = NULL;
  if (st == NCC_OK) {
    double t0 = ncc_ctime_now();
    if (dir) {
      LLVMValueRef f = LLVMGetNamedFunction(mod, k->name);
      if (f) LLVMSetValueName2(f, e->sym, strlen(e->sym));
    }
    char *err = NULL;
    if (LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMObjectFile, &err, &obj)) {
      st = ncc_error(NCC_ERR_INTERNAL, "LLVM code generation: %.200s", err ? err : "?");
      obj = NULL;
    }
    LLVMDisposeMessage(err);
    /* a failed write costs the next compile its hit, nothing more */
    if (obj && dir) {
      ncc_kcache_put(dir, e->key, LLVMGetBufferStart(obj), LLVMGetBufferSize(obj));
      ncc_ctime_kernel_cache(row, false);
      j->misses++;
    }
    ncc_ctime_kernel_add(row, NCC_PHASE_CODEGEN, ncc_ctime_now() - t0);
  }
  LLVMDisposeModule(mod);
  return st == NCC_OK ? add_object(j, obj) : st;
}

/* Look kernel k up, which links its object: the link phase. */
static ncc_status materialise(ncc_jit *j, const kir_kernel *k) {
  double t0 = ncc_ctime_now();
  ncc_kernel_fn fn = ncc_jit_lookup(j, k->name);
  ncc_ctime_kernel_add(ncc_ctime_find(k->name), NCC_PHASE_LINK, ncc_ctime_now() - t0);
  return fn ? NCC_OK : NCC_ERR_INTERNAL;
}

ncc_status ncc_jit_compile(kir_kernel *const *ks, int n, ncc_jit **out) {
  *out = NULL;
  const ncc_llvm_host *h;
  ncc_status st = ncc_llvm_host_info(&h);
  if (st != NCC_OK) return st;
  ncc_jit *j = ncc_calloc(1, sizeof *j);
  if (!j) return NCC_ERR_NOMEM;
  st = make_jit(h, &j->jit);
  if (st != NCC_OK) {
    ncc_jit_free(j);
    return st;
  }
  LLVMTargetMachineRef tm = make_tm(h);
  if (!tm) {
    ncc_jit_free(j);
    return ncc_error(NCC_ERR_INTERNAL, "LLVM: no target machine");
  }
  /* one context for all the modules (each is disposed once compiled) */
  LLVMContextRef ctx = LLVMContextCreate();
  for (int i = 0; i < n && st == NCC_OK; i++) st = add_kernel(j, ctx, ks[i], h, tm);
  LLVMContextDispose(ctx);
  LLVMDisposeTargetMachine(tm);
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
