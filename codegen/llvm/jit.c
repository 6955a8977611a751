/* codegen/llvm/jit.c — host detection, O3 optimization and ORC LLJIT.
 *
 * The host CPU name and feature string come from LLVM
 * (LLVMGetHostCPUName / LLVMGetHostCPUFeatures) and select the vector width
 * lowering uses: AVX-512 16 f32 lanes, AVX/AVX2 8, SSE/NEON 4, else scalar.
 * Each distinct kernel of a graph becomes its own LLVM module: emitted,
 * verified, optimized with the new pass manager ("default<O3>") and added
 * to the graph's LLJIT, whose symbol search falls back to the process (libm
 * for the scalarized math calls). Kernels do not call one another, so one
 * module each optimizes to the same code as one module for all, and makes
 * every phase measurable per kernel (ncc_compile_stats, ir/ctime.h): each
 * kernel is looked up right away, which materialises its module alone, so
 * that compilation errors and compile time belong to ncc_module_compile,
 * not to the first run. The JIT's IR and object transform hooks (identity
 * transforms) note when machine code generation starts and ends inside
 * that lookup; the rest of it is linking.
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
#include <stdlib.h>
#include <string.h>

#include "../../ir/ctime.h"
#include "../../ir/options.h"
#include "llvm.h"

struct ncc_jit {
  LLVMOrcLLJITRef jit;
  double codegen_t0, codegen_t1; /* set by the transform hooks (ms) */
};

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
  ncc_free(j, sizeof *j);
}

ncc_kernel_fn ncc_jit_lookup(ncc_jit *j, const char *name) {
  LLVMOrcExecutorAddress addr = 0;
  LLVMErrorRef e = LLVMOrcLLJITLookup(j->jit, &addr, name);
  if (e) {
    llvm_error(e, "lookup");
    return NULL;
  }
  return (ncc_kernel_fn)(uintptr_t)addr;
}

static ncc_status build_module(LLVMContextRef ctx, LLVMModuleRef mod,
                               kir_kernel *const *ks, int n,
                               const ncc_llvm_host *h, LLVMTargetMachineRef tm) {
  return ncc_llvm_build_module(ctx, mod, ks, n, h, tm);
}

/* The module's text to the dump stream (LLVMDumpModule only knows stderr). */
static void dump_module(LLVMModuleRef mod) {
  char *text = LLVMPrintModuleToString(mod);
  fputs(text, ncc_opts_dump_file());
  LLVMDisposeMessage(text);
}

ncc_status ncc_llvm_build_module(void *llvm_ctx, void *llvm_module,
                                 kir_kernel *const *ks, int n,
                                 const ncc_llvm_host *h, void *llvm_tm) {
  LLVMContextRef ctx = llvm_ctx;
  LLVMModuleRef mod = llvm_module;
  LLVMTargetMachineRef tm = llvm_tm;
  LLVMSetTarget(mod, h->triple);
  LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(tm);
  LLVMSetModuleDataLayout(mod, dl);
  LLVMDisposeTargetData(dl);
  /* a module of one kernel times everything per kernel; a module of many
   * (--emit) has its verifier and optimizer in the totals only */
  int row = n == 1 ? ncc_ctime_find(ks[0]->name) : -1;
  for (int i = 0; i < n; i++) {
    double t0 = ncc_ctime_now();
    ncc_status st = ncc_llvm_emit_kernel(ctx, mod, ks[i], h);
    if (st != NCC_OK) return st;
    ncc_ctime_kernel_add(ncc_ctime_find(ks[i]->name), NCC_PHASE_IR, ncc_ctime_now() - t0);
  }
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

/* Identity transforms that only note the time: the IR one runs right
 * before the IR compile layer makes machine code, the object one right
 * after (both on the thread of the lookup that materialises the module). */
static LLVMErrorRef ir_seen(void *ctx, LLVMOrcThreadSafeModuleRef *m,
                            LLVMOrcMaterializationResponsibilityRef mr) {
  (void)m;
  (void)mr;
  ((ncc_jit *)ctx)->codegen_t0 = ncc_ctime_now();
  return LLVMErrorSuccess;
}

static LLVMErrorRef obj_seen(void *ctx, LLVMMemoryBufferRef *obj) {
  (void)obj;
  ((ncc_jit *)ctx)->codegen_t1 = ncc_ctime_now();
  return LLVMErrorSuccess;
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

/* Kernel k as its own module, emitted, optimized and added to the JIT. */
static ncc_status add_kernel(ncc_jit *j, LLVMOrcThreadSafeContextRef tsc,
                             kir_kernel *k, const ncc_llvm_host *h,
                             LLVMTargetMachineRef tm) {
  LLVMContextRef ctx = LLVMOrcThreadSafeContextGetContext(tsc);
  LLVMModuleRef mod = LLVMModuleCreateWithNameInContext(k->name, ctx);
  ncc_status st = build_module(ctx, mod, &k, 1, h, tm);
  if (st != NCC_OK) {
    LLVMDisposeModule(mod);
    return st;
  }
  LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(mod, tsc);
  LLVMErrorRef e = LLVMOrcLLJITAddLLVMIRModule(
      j->jit, LLVMOrcLLJITGetMainJITDylib(j->jit), tsm);
  if (e) {
    LLVMOrcDisposeThreadSafeModule(tsm); /* still ours on failure */
    return llvm_error(e, "adding the module");
  }
  return NCC_OK;
}

/* Look kernel k up, which compiles and links its module: codegen is the
 * time between the transform hooks, link the rest of the lookup. */
static ncc_status materialise(ncc_jit *j, const kir_kernel *k) {
  j->codegen_t0 = j->codegen_t1 = 0;
  double t0 = ncc_ctime_now();
  ncc_kernel_fn fn = ncc_jit_lookup(j, k->name);
  double total = ncc_ctime_now() - t0;
  if (!fn) return NCC_ERR_INTERNAL;
  double codegen = j->codegen_t0 > 0 && j->codegen_t1 >= j->codegen_t0
                       ? j->codegen_t1 - j->codegen_t0
                       : 0;
  int row = ncc_ctime_find(k->name);
  ncc_ctime_kernel_add(row, NCC_PHASE_CODEGEN, codegen);
  ncc_ctime_kernel_add(row, NCC_PHASE_LINK, total > codegen ? total - codegen : 0);
  return NCC_OK;
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
  LLVMOrcIRTransformLayerSetTransform(LLVMOrcLLJITGetIRTransformLayer(j->jit), ir_seen, j);
  LLVMOrcObjectTransformLayerSetTransform(LLVMOrcLLJITGetObjTransformLayer(j->jit),
                                          obj_seen, j);
  LLVMTargetMachineRef tm = make_tm(h);
  if (!tm) {
    ncc_jit_free(j);
    return ncc_error(NCC_ERR_INTERNAL, "LLVM: no target machine");
  }
  /* one context for all the modules; each module keeps it alive */
  LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContext();
  for (int i = 0; i < n && st == NCC_OK; i++) st = add_kernel(j, tsc, ks[i], h, tm);
  LLVMOrcDisposeThreadSafeContext(tsc);
  LLVMDisposeTargetMachine(tm);
  for (int i = 0; i < n && st == NCC_OK; i++) st = materialise(j, ks[i]);
  if (st != NCC_OK) {
    ncc_jit_free(j);
    return st;
  }
  *out = j;
  return NCC_OK;
}
