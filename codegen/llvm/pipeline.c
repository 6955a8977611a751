/* codegen/llvm/pipeline.c — compile-speed tiers: ncc_options.codegen_level
 * (0..3) chooses the LLVM pass pipeline and the machine-code opt level.
 *
 * ncc's kernels reach LLVM already vectorised and tiled (emit.c), so the
 * loop vectoriser, SLP and most of default<O3>'s inter-procedural work find
 * nothing to do; what the kernels do need is the cleanup of the emitted IR:
 * allocas promoted (sroa), redundant loads and address arithmetic folded
 * (early-cse, instcombine, gvn) and invariant loads hoisted out of the
 * inner loops (licm). docs/CODEGEN.md "Compile-speed tiers" has the
 * measurements behind each tier. */
#include <llvm-c/TargetMachine.h>

#include "ir/options.h"
#include "llvm.h"

typedef struct tier {
  const char *passes;     /* LLVMRunPasses pipeline */
  LLVMCodeGenOptLevel cg; /* machine-code level */
} tier;

/* The short pipeline: what the explicitly vectorised kernels need. On
 * ResNet-18 it costs a third of default<O3>'s optimisation time for the
 * same steady-state latency. A shorter one (sroa, instcombine,
 * simplifycfg) leaves IR on which instruction selection goes quadratic
 * (minutes on MobileNetV3), so every tier keeps licm and gvn. */
#define SHORT_PIPELINE                                                  \
  "function(sroa,early-cse,instcombine<no-verify-fixpoint>,simplifycfg," \
  "loop-mssa(licm),gvn,instcombine<no-verify-fixpoint>,simplifycfg)"
/* The same with loop-unroll after gvn: without it MobileNetV3-small ran
 * ~18% slower than at default<O3>, with it as fast (which of its kernels
 * need the unrolling is not yet measured). */
#define UNROLL_PIPELINE                                                 \
  "function(sroa,early-cse,instcombine<no-verify-fixpoint>,simplifycfg," \
  "loop-mssa(licm),gvn,loop-unroll,instcombine<no-verify-fixpoint>,"     \
  "simplifycfg)"

static const tier tiers[4] = {
    /* 0: fastest compile (fast instruction selection, no scheduling):
     * kernels several times slower; for one-shot runs and debugging */
    {SHORT_PIPELINE, LLVMCodeGenLevelNone},
    /* 1: fast compile, decent kernels */
    {SHORT_PIPELINE, LLVMCodeGenLevelLess},
    /* 2: the driver's default (-O2): O3's latency on the models measured */
    {UNROLL_PIPELINE, LLVMCodeGenLevelDefault},
    /* 3: the library's default, what every kernel got before the tiers */
    {"default<O3>", LLVMCodeGenLevelAggressive},
};

static const tier *current_tier(void) {
  int l = ncc_opts()->codegen_level;
  if (l < 0 || l > 3) l = 3;
  return &tiers[l];
}

const char *ncc_llvm_pipeline(void) {
  return current_tier()->passes;
}

int ncc_llvm_codegen_level(void) {
  return (int)current_tier()->cg;
}
