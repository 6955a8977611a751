/* targets/targets.h — the target table: one row per target ncc knows.
 *
 * Every list of targets comes from here: the module API (targets/module.c),
 * the public enumeration and layout widths (targets/targets.c, through
 * ncc_target_count/ncc_target_get the driver's `ncc targets`, --help and
 * its checks), and the CPU description handed to codegen/llvm. Adding an
 * LLVM cross target is one row; a C-style GPU target is one row, one
 * dialect (codegen/cstyle/lang.c) and one driver file (targets/<name>/).
 */
#ifndef NCC_TARGETS_TARGETS_H
#define NCC_TARGETS_TARGETS_H

#include "backend.h"

typedef enum ncc_target_kind {
  NCC_TARGET_INTERP, /* the reference interpreter: emits no code */
  NCC_TARGET_LLVM,   /* kernels through codegen/llvm */
  NCC_TARGET_GPU,    /* C-style kernels (codegen/cstyle) run by targets/gpu */
} ncc_target_kind;

typedef struct ncc_target_row {
  const char *name;
  const char *description; /* one line: `ncc targets`, ncc_target_get */
  ncc_target_kind kind;
  /* Its executor in this build; NULL where none is built or the target only
   * compiles (an LLVM cross target). */
  const ncc_backend *backend;
  bool in_process; /* runs in ncc; false: compiles only (its code runs elsewhere) */
  /* LLVM targets: the CPU description codegen/llvm compiles for; a NULL
   * triple is this host as LLVM sees it (ncc_llvm_host_info). */
  const char *triple, *cpu, *features;
  int vector_width;         /* f32 lanes; 0: the host's (a NULL triple, ref) */
  const char *emit_kinds;   /* --emit kinds, a comma list ("": none) */
  const char *cmake_option; /* the option that leaves it out; NULL: always built */
  bool built;               /* part of this build */
} ncc_target_row;

extern const ncc_target_row ncc_target_table[];
extern const int ncc_target_table_len;
/* NCC_ERR_USAGE "unknown target 'x'", with "did you mean" when a known
 * name is close (ncc_suggest). */
ncc_status ncc_target_unknown(const char *name);

/* The row of `name` (NULL: no such target). */
const ncc_target_row *ncc_target_row_find(const char *name);

#endif /* NCC_TARGETS_TARGETS_H */
