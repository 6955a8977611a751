/* codegen/cstyle/gpu.h — lowering and rendering for the GPU targets:
 * which nodes the GPU lowering handles (gpu_lower.c), the graph's kernels
 * as one program from the C-style renderer (gpu_render.c), and the
 * program source or kernel IR `ncc compile` writes. The device executor
 * and the device vtable the drivers fill are targets/gpu/gpu_exec.h.
 */
#ifndef NCC_GPU_H
#define NCC_GPU_H

#include "../../passes/fusion.h"
#include "cstyle.h"

/* ---- lowering (gpu_lower.c) ---- */
bool ncc_gpu_supports_op(const ncc_node *n);
/* Reshape-like nodes that alias their input's device buffer. */
bool ncc_gpu_alias_op(const ncc_node *n);
ncc_status ncc_gpu_lower_node(const ncc_node *n, const char *name,
                              kir_kernel **out);
ncc_status ncc_gpu_lower_group(const ncc_fuse_group *gr, const char *name,
                               kir_kernel **out);

/* ---- programs (gpu_render.c; the graph loop in targets/gpu/gpu_exec.c) ---- */
/* Lower every node the GPU handles; kernels[i] (one slot per node) stays
 * NULL for host and alias nodes. A fused group of the plan (elementwise or
 * reduce kind; NULL plan: none) that lowers as a whole has its kernel in
 * its root's slot and fused[group] set; its other members get none. */
ncc_status ncc_gpu_lower_graph(const ncc_graph *g, const ncc_fuse_plan *fp,
                               kir_kernel **kernels, bool *fused);
/* The fuse plan of g (*fp) and its kernels (*ks, one slot per node; *fused,
 * one per group) through ncc_gpu_lower_graph; the caller frees all three.
 * These two are defined in targets/gpu/gpu_exec.c until the graph-lowering
 * loop joins codegen's one lowering driver (issue 11). */
ncc_status ncc_gpu_lower_all(const ncc_graph *g, ncc_fuse_plan **fp, kir_kernel ***ks,
                             bool **fused);
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
