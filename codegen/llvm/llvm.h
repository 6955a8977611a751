/* codegen/llvm/llvm.h — kernel IR to machine code through the LLVM C API.
 *
 * emit.c writes one LLVM function per kernel with explicit vector IR where
 * the schedule says `vector`; jit.c detects the host target, optimizes a
 * module with the new pass manager (default<O3>) and hands it to ORC LLJIT.
 *
 * Every kernel function has the same ABI:
 *   void name(void *const *bufs, const int64_t *syms, int32_t tid, int32_t nth)
 * bufs in kernel buffer order, syms indexed by graph symbol id, and (tid,
 * nth) selecting this thread's share of the outermost parallel loop.
 */
#ifndef NCC_CODEGEN_LLVM_H
#define NCC_CODEGEN_LLVM_H

#include "../kir.h"
#include "../lower.h"

typedef void (*ncc_kernel_fn)(void *const *bufs, const int64_t *syms,
                              int32_t tid, int32_t nth);

/* A CPU target description: the host as LLVM sees it (ncc_llvm_host_info)
 * or a cross target's row of the target table (targets/), handed down by
 * the caller; codegen/llvm keeps no list of targets. */
typedef struct ncc_llvm_host {
  const char *triple;
  const char *cpu;
  const char *features;
  int vector_width; /* f32 lanes: 16 (AVX-512), 8 (AVX2), 4 (SSE/NEON), 1 */
  bool in_process;  /* the host this process runs on (code for the JIT) */
} ncc_llvm_host;

/* Whether h's feature string enables `name` ("+name"), e.g. avx512vnni. */
bool ncc_llvm_has_feature(const ncc_llvm_host *h, const char *name);

/* Whether code for host h may use AMX tiles: h is this process's host
 * (in_process: the JIT's, never a cross target's), has amx-tile and
 * `feature` ("amx-int8", "amx-bf16") and the OS granted this process the
 * tile state (codegen/llvm/amx.c; asked once). */
bool ncc_llvm_amx_usable(const ncc_llvm_host *h, const char *feature);

/* The tile instructions in C (amx_emu.c): what the emitter calls instead
 * of them where the JIT's host cannot run them (ncc_options.amx_emulate).
 * A tile is 16 rows of 64 bytes; op is a kir_tile_op. */
void ncc_amx_emu_load(int32_t *t, const uint8_t *p, int64_t stride, int64_t rows, int64_t colsb);
void ncc_amx_emu_store(const int32_t *t, uint8_t *p, int64_t stride, int64_t rows,
                       int64_t colsb);
void ncc_amx_emu_dp(int64_t op, int32_t *c, const int32_t *a, const int32_t *b, int64_t rows,
                    int64_t colsb, int64_t kbytes);

/* NCC_OK with *out set, or an error when LLVM cannot target this host. */
ncc_status ncc_llvm_host_info(const ncc_llvm_host **out);

/* NCC_OK when ncc_llvm_emit_file can write code for `h`, else an error
 * saying why (this LLVM lacks the backend of h's triple). */
ncc_status ncc_llvm_can_emit(const ncc_llvm_host *h);

/* A JIT holding the code of one graph (one LLVM module per kernel). */
typedef struct ncc_jit ncc_jit;

/* Emit, optimize and JIT-compile `n` kernels, one LLVM module each (so
 * each phase is timed per kernel: ncc_compile_stats). */
ncc_status ncc_jit_compile(kir_kernel *const *ks, int n, ncc_jit **out);
ncc_kernel_fn ncc_jit_lookup(ncc_jit *j, const char *name);
void ncc_jit_free(ncc_jit *j);

/* Write what the CPU target `h` (named `target` in messages and in a
 * library's header) makes of the graph's compiled kernels: kind "kir",
 * "llvm", "asm", "obj" or "lib". */
ncc_status ncc_llvm_emit_file(const ncc_graph *g, const char *target,
                              const ncc_llvm_host *h, const char *kind,
                              const char *path);

/* Internal to codegen/llvm (LLVM handles passed as void*): a target
 * machine for h (NULL on failure), position independent, with the JIT's
 * code model or (for static objects and libraries) the default small one;
 * and a verified module, optimized at the codegen tier (pipeline.c), of the kernels.
 * The tier's pipeline and machine-code level are part of the compile
 * cache's key. */
void *ncc_llvm_target_machine(const ncc_llvm_host *h, bool jit);
ncc_status ncc_llvm_build_module(void *llvm_ctx, void *llvm_module,
                                 kir_kernel *const *ks, int n,
                                 const ncc_llvm_host *h, void *llvm_tm);

/* Internal to codegen/llvm (pipeline.c): the LLVM pass pipeline and the
 * machine-code level (an LLVMCodeGenOptLevel) of the caller's
 * ncc_options.codegen_level, the compile-speed tier. */
const char *ncc_llvm_pipeline(void);
int ncc_llvm_codegen_level(void);

/* Internal to codegen/llvm: emit kernel `k` into an LLVM module (opaque
 * pointers passed as void* so this header stays free of llvm-c). */
ncc_status ncc_llvm_emit_kernel(void *llvm_ctx, void *llvm_module,
                                const kir_kernel *k, const ncc_llvm_host *h);

#endif /* NCC_CODEGEN_LLVM_H */
