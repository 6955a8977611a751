/* codegen/llvm/aot.h — what the ahead-of-time outputs share: aot.c writes
 * kernel IR, LLVM IR, assembly and objects; aot_lib.c builds `--emit=lib`
 * (a self-contained shared library or object plus a C header) on top of
 * aot.c's object writer. Internal to codegen/llvm.
 */
#ifndef NCC_CODEGEN_AOT_H
#define NCC_CODEGEN_AOT_H

#include "llvm.h"

/* Constant data embedded in an object as one global byte array: the
 * pieces lie at their `offset`s (64-byte aligned), zeros in between. */
typedef struct ncc_aot_blob {
  const void *data;
  size_t bytes;
  size_t offset;
} ncc_aot_blob;

typedef struct ncc_aot_object {
  kir_kernel *const *kernels;
  int n_kernels;
  const char *weights_symbol; /* NULL: no weights global */
  const ncc_aot_blob *blobs;
  int n_blobs;
  size_t weights_bytes;
  bool hide_kernels; /* hidden visibility: not exported from a library */
  /* kernels structurally equal to one in `kernels` (kir_dedupe): each
   * alias_names[i] becomes an alias of the function alias_targets[i], so
   * every kernel keeps its symbol but is compiled once */
  const char *const *alias_names, *const *alias_targets;
  int n_aliases;
} ncc_aot_object;

/* Build, optimize and write the kernels (and weights) for `h` as kind
 * "llvm", "asm" or "obj" to `path`. */
ncc_status ncc_aot_emit_module(const ncc_aot_object *o, const ncc_llvm_host *h,
                               const char *kind, const char *path);

/* `--emit=lib`: `path` is the library (a relocatable object when it ends in
 * ".o", else a shared library); the header goes beside it with the
 * extension replaced by ".h". See docs/AOT.md. */
ncc_status ncc_aot_emit_lib(const ncc_graph *g, const char *target,
                            const ncc_llvm_host *h, const char *path);

#endif /* NCC_CODEGEN_AOT_H */
