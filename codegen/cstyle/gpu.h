/* codegen/cstyle/gpu.h — lowering and rendering for the GPU targets:
 * which nodes the GPU lowering handles (gpu_lower.c), the graph's kernels
 * as one program from the C-style renderer (gpu_render.c), and the
 * program source or kernel IR `ncc compile` writes. The device executor
 * and the device vtable the drivers fill are targets/gpu/gpu_exec.h.
 */
#ifndef NCC_GPU_H
#define NCC_GPU_H

#include "../../passes/fusion.h"
#include "../lower.h"
#include "cstyle.h"

/* ---- lowering (gpu_lower.c) ---- */
bool ncc_gpu_supports_op(const ncc_node *n);
ncc_status ncc_gpu_lower_node(const ncc_node *n, const char *name,
                              const ncc_lower_opts *o, kir_kernel **out);
/* Elementwise, reduce and epilogue groups (the contraction as the tiled
 * GEMM with the epilogue on its register tile). */
ncc_status ncc_gpu_lower_group(const ncc_fuse_group *gr, const char *name,
                               const ncc_lower_opts *o, kir_kernel **out);
/* The three above, for the graph-lowering loop (codegen/lower.h): it
 * lowers every node the GPU handles; host and alias nodes get no kernel. */
extern const ncc_lower_target ncc_gpu_lower_target;
/* Vector width handed to the CPU-style lowerings: their `vector` loops
 * become work-item loops; 4-lane accumulators give some ILP per work-item. */
#define NCC_GPU_VECTOR_WIDTH 4
/* The fuse plan of g (*fp) and the GPU kernels of its nodes (*ks, one slot
 * per node, NULL for host and alias nodes; *fused, one per group: lowered
 * as one kernel, in its root's slot), through ncc_lower_graph; the caller
 * frees all three, also on error. */
ncc_status ncc_gpu_lower_all(const ncc_graph *g, ncc_fuse_plan **fp, kir_kernel ***ks,
                             bool **fused);

/* ---- programs (gpu_render.c) ---- */
/* Render the prelude and kernels[0..n) (NULL entries skipped) as one
 * program; infos[i] describes kernels[i]. Test hook: with
 * ncc_options.gpu_test_bad_kernel set (the driver's NCC_GPU_TEST_BAD_KERNEL)
 * the program gets an `#error`, so the "kernel fails to compile" path can
 * be tested. */
ncc_status ncc_gpu_render_program(const ncc_cstyle_lang *lang,
                                  kir_kernel *const *kernels, int n,
                                  ncc_sbuf *out, ncc_cstyle_info *infos);
/* The program source of the graph's kernels (fused groups included). */
ncc_status ncc_gpu_render_graph(const ncc_graph *g, const ncc_cstyle_lang *lang,
                                ncc_sbuf *out);
/* `ncc compile --emit=kir|<lang>` for a GPU target: the kernel IR or the
 * program source of the graph's kernels, written through a temporary file. */
ncc_status ncc_gpu_emit_source(const ncc_graph *g, const ncc_cstyle_lang *lang,
                               const char *kind, const char *path);

#endif /* NCC_GPU_H */
