/* codegen/llvm/aot.c — ahead-of-time output: kernel IR, LLVM IR, assembly
 * or an object file for the host or a cross target (`ncc compile --emit`),
 * and the entry point of `--emit=lib` (aot_lib.c).
 *
 * The same lowering and module construction as the JIT, for the CPU
 * target description the caller passes (the target table, targets/: this
 * host, or a cross target such as x86_64's AVX2 baseline). For
 * kir/llvm/asm/obj only compiled kernels are emitted; nodes that run on
 * reference kernels are not part of the
 * output. Files are written by ir/atomic_file.c, so a failure leaves
 * nothing behind.
 */
#include <llvm-c/Core.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../ir/atomic_file.h"
#include "../../ir/ctime.h"
#include "../../ir/options.h"
#include "aot.h"

static pthread_once_t all_once = PTHREAD_ONCE_INIT;

static void init_all_targets(void) {
  LLVMInitializeAllTargetInfos();
  LLVMInitializeAllTargets();
  LLVMInitializeAllTargetMCs();
  LLVMInitializeAllAsmPrinters();
}

ncc_status ncc_llvm_can_emit(const ncc_llvm_host *h) {
  pthread_once(&all_once, init_all_targets);
  ncc_status st = NCC_OK;
  /* an LLVM built without this target's backend cannot emit for it */
  LLVMTargetRef t;
  char *err = NULL;
  if (LLVMGetTargetFromTriple(h->triple, &t, &err)) {
    st = ncc_error(NCC_ERR_UNSUPPORTED, "this LLVM cannot target %s: %s", h->triple,
                   err ? err : "?");
    LLVMDisposeMessage(err);
  }
  return st;
}

static ncc_status emit_kir(kir_kernel *const *ks, int n, const char *path) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return ncc_error(NCC_ERR_NOMEM, "out of memory printing kernel IR");
  for (int i = 0; i < n; i++) kir_print(ks[i], f);
  fclose(f);
  ncc_status st = ncc_atomic_write(path, buf, len);
  free(buf); /* open_memstream allocates with malloc */
  return st;
}

/* The weights as one 64-byte aligned constant global, added after the
 * optimizer ran (it has nothing to do with megabytes of data). */
static ncc_status add_weights(LLVMContextRef ctx, LLVMModuleRef mod,
                              const ncc_aot_object *o) {
  size_t total = o->weights_bytes ? o->weights_bytes : 1;
  unsigned char *bytes = ncc_calloc(total, 1);
  if (!bytes) return NCC_ERR_NOMEM;
  for (int i = 0; i < o->n_blobs; i++)
    if (o->blobs[i].bytes)
      memcpy(bytes + o->blobs[i].offset, o->blobs[i].data, o->blobs[i].bytes);
  LLVMValueRef init = LLVMConstStringInContext2(ctx, (const char *)bytes, total, 1);
  ncc_free(bytes, total);
  LLVMValueRef gv = LLVMAddGlobal(mod, LLVMTypeOf(init), o->weights_symbol);
  LLVMSetInitializer(gv, init);
  LLVMSetGlobalConstant(gv, 1);
  LLVMSetAlignment(gv, 64);
  LLVMSetVisibility(gv, LLVMHiddenVisibility);
  return NCC_OK;
}

/* Keep the kernels out of a library's exported symbols. */
static void hide_defined_functions(LLVMModuleRef mod) {
  for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f))
    if (!LLVMIsDeclaration(f) && LLVMGetLinkage(f) == LLVMExternalLinkage)
      LLVMSetVisibility(f, LLVMHiddenVisibility);
}

ncc_status ncc_aot_emit_module(const ncc_aot_object *o, const ncc_llvm_host *h,
                               const char *kind, const char *path) {
  /* static code: position independent (the object may go into a shared
   * library) with the default (small) code model, unlike the JIT's */
  LLVMTargetMachineRef tm = ncc_llvm_target_machine(h, false);
  if (!tm) return ncc_error(NCC_ERR_INTERNAL, "LLVM: no target machine for %s", h->triple);
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMModuleRef mod = LLVMModuleCreateWithNameInContext("ncc", ctx);
  ncc_status st = ncc_llvm_build_module(ctx, mod, o->kernels, o->n_kernels, h, tm);
  for (int i = 0; st == NCC_OK && i < o->n_aliases; i++) {
    LLVMValueRef f = LLVMGetNamedFunction(mod, o->alias_targets[i]);
    if (!f) st = ncc_error(NCC_ERR_INTERNAL, "LLVM: no kernel '%s'", o->alias_targets[i]);
    else LLVMAddAlias2(mod, LLVMGlobalGetValueType(f), 0, f, o->alias_names[i]);
  }
  if (st == NCC_OK && o->hide_kernels) hide_defined_functions(mod);
  if (st == NCC_OK && o->weights_symbol) st = add_weights(ctx, mod, o);
  if (st == NCC_OK && strcmp(kind, "llvm") == 0) {
    char *text = LLVMPrintModuleToString(mod);
    st = ncc_atomic_write(path, text, strlen(text));
    LLVMDisposeMessage(text);
  } else if (st == NCC_OK) {
    LLVMMemoryBufferRef mb = NULL;
    char *err = NULL;
    LLVMCodeGenFileType ft = strcmp(kind, "asm") == 0 ? LLVMAssemblyFile : LLVMObjectFile;
    double t0 = ncc_ctime_now();
    LLVMBool failed = LLVMTargetMachineEmitToMemoryBuffer(tm, mod, ft, &err, &mb);
    ncc_ctime_add(NCC_PHASE_CODEGEN, ncc_ctime_now() - t0);
    if (failed) {
      st = ncc_error(NCC_ERR_INTERNAL, "LLVM code generation: %s", err ? err : "?");
    } else {
      st = ncc_atomic_write(path, LLVMGetBufferStart(mb), LLVMGetBufferSize(mb));
      LLVMDisposeMemoryBuffer(mb);
    }
    LLVMDisposeMessage(err);
  }
  LLVMDisposeModule(mod);
  LLVMContextDispose(ctx);
  LLVMDisposeTargetMachine(tm);
  return st;
}

static bool is_kind(const char *kind, const char *const *kinds) {
  for (int i = 0; kinds[i]; i++)
    if (strcmp(kind, kinds[i]) == 0) return true;
  return false;
}

ncc_status ncc_llvm_emit_file(const ncc_graph *g, const char *target,
                              const ncc_llvm_host *h, const char *kind,
                              const char *path) {
  static const char *const kinds[] = {"kir", "llvm", "asm", "obj", "lib", NULL};
  if (!kind || !is_kind(kind, kinds))
    return ncc_error(NCC_ERR_UNSUPPORTED,
                     "target '%s' cannot emit '%s' (kir, llvm, asm, obj, lib)",
                     target ? target : "cpu", kind ? kind : "");
  pthread_once(&all_once, init_all_targets); /* a cross target's backend */
  ncc_status st;
  if (strcmp(kind, "lib") == 0) return ncc_aot_emit_lib(g, target, h, path);
  kir_kernel **list = ncc_calloc((size_t)g->n_nodes + 1, sizeof *list);
  if (!list) return NCC_ERR_NOMEM;
  /* named as the JIT names them (codegen/llvm/cpu_backend.c), and for
   * the host lowered as the JIT lowers them (tiles included), so kir,
   * llvm and asm show the code `ncc run` runs (an object runs in a
   * process that never asked the OS for the tile state: no tiles), the
   * tiles' emulation included (NCC_AMX=emulate: the host's kir, llvm and
   * asm show the calls amx_emu.c answers) */
  bool amx = !ncc_opts()->no_amx && strcmp(kind, "obj") != 0;
  bool emu = amx && h->in_process && ncc_opts()->amx_emulate;
  ncc_lower_request rq = {.target = &ncc_lower_target_generic,
                          .opts = {.vector_width = h->vector_width,
                                   .amx_int8 = emu || (amx && ncc_llvm_amx_usable(h, "amx-int8")),
                                   .amx_bf16 = emu || (amx && ncc_llvm_amx_usable(h, "amx-bf16"))},
                          .name_by_anchor = true,
                          .dump = true};
  ncc_lowered low;
  st = ncc_lower_graph_new(g, &rq, &low);
  kir_kernel **kernels = low.kernels;
  int nk = 0;
  for (int i = 0; st == NCC_OK && i < g->n_nodes; i++)
    if (kernels[i]) list[nk++] = kernels[i];
  if (st == NCC_OK && strcmp(kind, "kir") == 0) {
    st = emit_kir(list, nk, path);
  } else if (st == NCC_OK) {
    /* equal kernels (a long chain repeats a few) are compiled once; the
     * others become aliases: LLVM's time was linear in the graph */
    int *rep = ncc_calloc((size_t)g->n_nodes + 1, sizeof *rep);
    const char **names = ncc_calloc(2 * (size_t)g->n_nodes + 1, sizeof *names);
    int nd = 0, na = 0;
    if (!rep || !names || kir_dedupe(kernels, g->n_nodes, rep) < 0) {
      st = NCC_ERR_NOMEM;
    } else {
      for (int i = 0; i < g->n_nodes; i++) {
        if (!kernels[i]) continue;
        if (rep[i] == i) {
          list[nd++] = kernels[i];
        } else {
          ncc_ctime_kernel_reused(ncc_ctime_find(kernels[i]->name));
          names[na] = kernels[i]->name;
          names[g->n_nodes + na++] = kernels[rep[i]]->name;
        }
      }
      ncc_aot_object o = {.kernels = list, .n_kernels = nd, .alias_names = names,
                          .alias_targets = names + g->n_nodes, .n_aliases = na};
      st = ncc_aot_emit_module(&o, h, kind, path);
    }
    ncc_free(rep, 0);
    ncc_free(names, 0);
  }
  ncc_lowered_free(&low);
  ncc_free(list, 0);
  return st;
}
