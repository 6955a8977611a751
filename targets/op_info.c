/* targets/op_info.c — the op table as the public API sees it (ncc_op_count,
 * ncc_op_describe, ncc_op_target_compiles): what `ncc ops` prints and
 * docs/OPS.md is generated from.
 *
 * Whether a target compiles an op is the target's own "can it compile this
 * node" hook, asked about a probe: a small graph holding one node of the op
 * in a common form (f32 data in plain layout, constant weights, default
 * attributes; ncc's Reorder into a blocked layout), parsed from text IR
 * below and shape-inferred, once per element type. The LLVM targets (cpu, x86_64, aarch64) share the generic
 * lowering's hook (ncc_lower_supports, what the cpu backend and --emit use);
 * opencl and cuda share the C renderer's (ncc_gpu_supports_op); ref compiles
 * nothing. Both hooks are plain C built into every libncc, so the answer is
 * the same on every machine whether or not LLVM or a GPU is here. A node of
 * another form (attributes, shapes, a blocked layout) may still run on its
 * reference kernel: `ncc check MODEL --target=T` says so per model.
 *
 * The probes also give the element types an op accepts: those whose probe
 * the shape rule takes. An op with no probe form (control flow, sources,
 * ops with several required outputs) reports no dtypes and no compiled
 * target.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "../codegen/cstyle/gpu.h"
#include "../codegen/lower.h"
#include "../frontend/frontend.h"
#include "../ir/ir.h"
#include "targets.h"

/* The probe of an op: text IR with `T` for the data element type. The
 * graph's input list and body go into "graph @p(...) {\n...\n}". */
typedef struct probe {
  const char *op;
  const char *params; /* graph inputs */
  const char *body;   /* nodes; the probed node is the last one */
} probe;

#define X4 "T[2,8,4,4]"
static const probe probes[] = {
    {"Where", "%c: bool[2,8,4,4], %x: " X4 ", %y: " X4,
     "%r = Where(%c, %x, %y)\n  return %r"},
    {"MatMul", "%x: T[2,8,16]",
     "%w: T[16,8] = const splat(1)\n  %r = MatMul(%x, %w)\n  return %r"},
    {"Gemm", "%x: T[4,16]",
     "%w: T[16,8] = const splat(1)\n  %r = Gemm(%x, %w)\n  return %r"},
    {"Conv", "%x: T[1,8,8,8]",
     "%w: T[8,8,3,3] = const splat(1)\n"
     "  %r = Conv(%x, %w) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]}\n  return %r"},
    {"ConvTranspose", "%x: T[1,8,8,8]",
     "%w: T[8,8,3,3] = const splat(1)\n"
     "  %r = ConvTranspose(%x, %w) {kernel_shape = [3, 3]}\n  return %r"},
    {"MaxPool", "%x: T[1,8,8,8]",
     "%r = MaxPool(%x) {kernel_shape = [2, 2], strides = [2, 2]}\n  return %r"},
    {"AveragePool", "%x: T[1,8,8,8]",
     "%r = AveragePool(%x) {kernel_shape = [2, 2], strides = [2, 2]}\n  return %r"},
    {"LpPool", "%x: T[1,8,8,8]",
     "%r = LpPool(%x) {kernel_shape = [2, 2], strides = [2, 2]}\n  return %r"},
    {"BatchNormalization", "%x: T[1,8,4,4]",
     "%s: T[8] = const splat(1)\n  %b: T[8] = const splat(1)\n"
     "  %m: T[8] = const splat(1)\n  %v: T[8] = const splat(1)\n"
     "  %r = BatchNormalization(%x, %s, %b, %m, %v)\n  return %r"},
    {"InstanceNormalization", "%x: T[1,8,4,4]",
     "%s: T[8] = const splat(1)\n  %b: T[8] = const splat(1)\n"
     "  %r = InstanceNormalization(%x, %s, %b)\n  return %r"},
    {"GroupNormalization", "%x: T[1,8,4,4]",
     "%s: T[8] = const splat(1)\n  %b: T[8] = const splat(1)\n"
     "  %r = GroupNormalization(%x, %s, %b) {num_groups = 2}\n  return %r"},
    {"LayerNormalization", "%x: " X4,
     "%s: T[4] = const splat(1)\n  %r = LayerNormalization(%x, %s)\n  return %r"},
    {"RMSNormalization", "%x: " X4,
     "%s: T[4] = const splat(1)\n  %r = RMSNormalization(%x, %s)\n  return %r"},
    /* ncc's own: into the NCHW8c layout the layout pass gives the cpu
     * targets and back (a graph output is plain); the probe is the last */
    {"Reorder", "%x: T[1,8,4,4]", "%b: T[1,8,4,4]#nchw8c = Reorder(%x)\n"
     "  %r: T[1,8,4,4] = Reorder(%b)\n  return %r"},
    {"Cast", "%x: " X4, "%r = Cast(%x) {to = \"f32\"}\n  return %r"},
    {"Transpose", "%x: " X4, "%r = Transpose(%x) {perm = [0, 2, 3, 1]}\n  return %r"},
    {"Reshape", "%x: " X4,
     "%s: i64[2] = const [2, 128]\n  %r = Reshape(%x, %s)\n  return %r"},
    {"Unsqueeze", "%x: " X4,
     "%a: i64[1] = const [0]\n  %r = Unsqueeze(%x, %a)\n  return %r"},
    {"Expand", "%x: " X4,
     "%s: i64[5] = const [2, 2, 8, 4, 4]\n  %r = Expand(%x, %s)\n  return %r"},
    {"Tile", "%x: " X4,
     "%s: i64[4] = const [1, 2, 1, 1]\n  %r = Tile(%x, %s)\n  return %r"},
    {"Slice", "%x: " X4,
     "%s: i64[1] = const [1]\n  %e: i64[1] = const [3]\n"
     "  %r = Slice(%x, %s, %e)\n  return %r"},
    {"Gather", "%x: " X4,
     "%i: i64[2] = const [0, 1]\n  %r = Gather(%x, %i)\n  return %r"},
    {"Pad", "%x: " X4,
     "%p: i64[8] = const [0, 0, 1, 1, 0, 0, 1, 1]\n  %r = Pad(%x, %p)\n  return %r"},
    {"TopK", "%x: " X4,
     "%k: i64[1] = const [2]\n  %v, %i = TopK(%x, %k)\n  return %v, %i"},
    {"Split", "%x: " X4,
     "%a, %b = Split(%x) {axis = 1, num_outputs = 2}\n  return %a, %b"},
    {"Concat", "%x: " X4 ", %y: " X4, "%r = Concat(%x, %y) {axis = 1}\n  return %r"},
    {"DepthToSpace", "%x: " X4, "%r = DepthToSpace(%x) {blocksize = 2}\n  return %r"},
    {"SpaceToDepth", "%x: " X4, "%r = SpaceToDepth(%x) {blocksize = 2}\n  return %r"},
    {"CumSum", "%x: " X4, "%a: i64[] = const [1]\n  %r = CumSum(%x, %a)\n  return %r"},
    {"Resize", "%x: " X4,
     "%s: f32[4] = const [1.0, 1.0, 2.0, 2.0]\n"
     "  %r = Resize(%x, _, %s)\n  return %r"},
};

/* Reductions take their axes as an input (opset 18 form). */
static bool is_reduce(const char *op) { return strncmp(op, "Reduce", 6) == 0; }

/* Write the probe text of `op` for dtype `dt` into buf; false when the op
 * has no probe form. */
static bool probe_text(ncc_op op, const char *dt, char *buf, size_t cap) {
  const ncc_op_info *oi = &ncc_op_table[op];
  const char *params = NULL, *body = NULL;
  char gen[512];
  for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++)
    if (strcmp(probes[i].op, oi->name) == 0) {
      params = probes[i].params;
      body = probes[i].body;
    }
  if (!params && is_reduce(oi->name)) {
    params = "%x: " X4;
    snprintf(gen, sizeof gen, "%%a: i64[1] = const [-1]\n  %%r = %s(%%x, %%a)\n  return %%r",
             oi->name);
    body = gen;
  }
  if (!params) {
    /* the generic form: 1-3 inputs of one shape and type, one output */
    if (oi->min_out > 1 || oi->min_in < 1 || oi->min_in > 3 ||
        (oi->flags & NCC_OPF_SOURCE))
      return false;
    static const char *const ins[] = {"%x: " X4, "%x: " X4 ", %y: " X4,
                                      "%x: " X4 ", %y: " X4 ", %z: " X4};
    static const char *const args[] = {"%x", "%x, %y", "%x, %y, %z"};
    params = ins[oi->min_in - 1];
    snprintf(gen, sizeof gen, "%%r = %s(%s)\n  return %%r", oi->name, args[oi->min_in - 1]);
    body = gen;
  }
  /* "graph @p(<params>) {\n  <body>\n}" with T replaced by dt */
  char tmpl[1200];
  snprintf(tmpl, sizeof tmpl, "graph @p(%s) {\n  %s\n}\n", params, body);
  size_t n = 0;
  for (const char *s = tmpl; *s && n + 8 < cap; s++) {
    if (*s == 'T' && s[1] == '[') n += (size_t)snprintf(buf + n, cap - n, "%s", dt);
    else buf[n++] = *s;
  }
  buf[n] = '\0';
  return true;
}

/* The probed facts of every op: bit dt set when dtype dt's probe parses
 * (accepts), and when each kind of code generator takes the node. */
typedef struct op_facts {
  unsigned accepts, llvm, gpu;
} op_facts;
static op_facts facts[NCC_OP_COUNT];
static pthread_once_t facts_once = PTHREAD_ONCE_INIT;

static void probe_all(void) {
  /* the probes' parse errors are not the caller's: keep its message */
  char saved[512];
  snprintf(saved, sizeof saved, "%s", ncc_error_message());
  char text[1600];
  for (int op = 0; op < NCC_OP_COUNT; op++) {
    for (int dt = NCC_DT_F32; dt < NCC_DT_COUNT; dt++) {
      if (!probe_text((ncc_op)op, ncc_dtype_name((ncc_dtype)dt), text, sizeof text))
        break;
      ncc_graph *g = NULL;
      if (ncc_graph_parse_text(text, strlen(text), "probe", &g) != NCC_OK) continue;
      const ncc_node *n = NULL;
      for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i]->op == (ncc_op)op) n = g->nodes[i];
      if (n) {
        unsigned bit = 1u << dt;
        facts[op].accepts |= bit;
        if (!(ncc_op_table[op].flags & NCC_OPF_DYNAMIC)) {
          if (ncc_lower_supports(n)) facts[op].llvm |= bit;
          if (ncc_gpu_supports_op(n)) facts[op].gpu |= bit;
        }
      }
      ncc_graph_free(g);
    }
  }
  ncc_error(NCC_OK, "%s", saved);
}

int ncc_op_count(void) { return NCC_OP_COUNT; }

ncc_status ncc_op_describe(int i, ncc_op_desc *out) {
  if (i < 0 || i >= NCC_OP_COUNT || !out)
    return ncc_error(NCC_ERR_USAGE, "ncc_op_describe: no op %d (ncc_op_count() is %d)", i,
                     NCC_OP_COUNT);
  pthread_once(&facts_once, probe_all);
  const ncc_op_info *oi = &ncc_op_table[i];
  bool own = (oi->flags & NCC_OPF_INTERNAL) != 0;
  bool contrib = (oi->flags & NCC_OPF_CONTRIB) != 0;
  int since = own ? 0 : onnx_op_since(oi->name);
  *out = (ncc_op_desc){
      .name = oi->name,
      .domain = own ? "ncc" : contrib ? "com.microsoft" : "ai.onnx",
      .opset_min = own ? 0 : contrib ? 1 : since > ONNX_OPSET_MIN ? since : ONNX_OPSET_MIN,
      .opset_max = own ? 0 : contrib ? 1 : ONNX_OPSET_MAX,
      .min_inputs = oi->min_in,
      .max_inputs = oi->max_in,
      .min_outputs = oi->min_out,
      .max_outputs = oi->max_out,
      .dtypes = facts[i].accepts,
  };
  return NCC_OK;
}

ncc_status ncc_op_target_compiles(int i, const char *target, unsigned *dtypes) {
  if (dtypes) *dtypes = 0;
  if (i < 0 || i >= NCC_OP_COUNT)
    return ncc_error(NCC_ERR_USAGE, "ncc_op_target_compiles: no op %d", i);
  const ncc_target_row *t = ncc_target_row_find(target ? target : "cpu");
  if (!t) return ncc_target_unknown(target);
  pthread_once(&facts_once, probe_all);
  if (dtypes)
    *dtypes = t->kind == NCC_TARGET_LLVM  ? facts[i].llvm
              : t->kind == NCC_TARGET_GPU ? facts[i].gpu
                                          : 0;
  return NCC_OK;
}
