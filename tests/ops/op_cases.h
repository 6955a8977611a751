/* tests/ops/op_cases.h — the op-case table that tests/ops/test_backend_ops.c
 * runs against every target (in the manner of ggml's test-backend-ops).
 *
 * A case is one small graph: a builder (the op, its attributes, its input
 * shapes with odd sizes and broadcasting, its dtypes, a symbolic dim where
 * one module must serve several sizes), how its inputs are drawn (ranges
 * the op is defined on), a tolerance against target `ref`, and how many of
 * its nodes a code-generating target is expected to compile (the rest run
 * on the host kernels). Nothing here names a target except the few
 * documented exceptions in `kernels_on`, so a new target runs every case
 * with no edit here.
 */
#ifndef NCC_TEST_OP_CASES_H
#define NCC_TEST_OP_CASES_H

#include <stdbool.h>
#include <stdint.h>

#include "ncc.h"

/* Largest number of input sets (values of the symbolic dim) a case has. */
#define OP_CASE_MAX_SETS 6

typedef struct op_case op_case;

/* Builds the case's graph (inputs, nodes, outputs, shape inference) into
 * the graph op_case_build returns. */
typedef void (*op_case_builder)(const op_case *c);

struct op_case {
  const char *name;      /* unique: "<op>/<what>", e.g. "Sub/broadcast" */
  op_case_builder build; /* the family's graph builder (op_cases.c) */
  int op;                /* an ncc_op (ir/ir.h): the family's op */
  double lo, hi;         /* range of the float inputs */
  const char *attr;      /* a variant: "alpha", "tanh", "ties", ... */
  union {                /* the shapes and attributes of some families */
    struct { int64_t m, k, n; } mm;
    struct {
      int64_t m, k, n;
      int ta, tb, rank_c; /* rank_c -1: no C */
      int64_t c[2];
      float alpha, beta;
    } gemm;
    struct {
      int64_t x[4], w[4];
      int64_t stride, pad, dil, group;
      int bias;
      /* explicit pads (top, left, bottom, right) when any is nonzero;
       * else `pad` on every side */
      int64_t pads[4];
    } conv;
  };
  double atol, rtol;      /* |target - ref| <= atol + rtol * |ref| (but see
                           * op_case_compare: cpu's ulp budgets) */
  int kernels;            /* nodes a target that compiles code compiles */
  const char *kernels_on; /* exceptions by target, "opencl=0,cuda=0" */
  /* The values the symbolic dim N takes, one input set each: the module is
   * compiled once and run on every set (n_sets 0: no N, one set). */
  int n_sets;
  int64_t n_values[OP_CASE_MAX_SETS];
};

extern const op_case op_cases[];
extern const int op_case_count;

/* Build case c (index i seeds its random data, so a filtered run draws the
 * same numbers as a full one). The graph lives until the next build or
 * op_case_free. */
ncc_graph *op_case_build(const op_case *c, int i);
void op_case_free(void);
/* The built case's inputs for set s (0 <= s < max(1, n_sets)): n_in
 * tensors into ins (free each with ncc_tensor_free). */
int op_case_inputs(const op_case *c, int s, ncc_tensor *ins, int cap);
/* A label for output o of the built graph ("out 3: Sub"). */
const char *op_case_output_label(int o);
/* Output o of the built case: ref's values against the target's, element
 * by element (NaN matches NaN); fails the running cmocka test naming
 * `what`. On target cpu an op with a row in tests/tol_cpu_ref.def (the
 * table tests/py/diff_ort.py reads too) is held to that row's budget in
 * ulps, scaled by |input| (`in`: the case's inputs for this set) or the
 * largest |ref| as the row says; an elementwise op without a row must be
 * bit-exact. Every other target and case: |target - ref| <= atol + rtol
 * |ref| with the case's atol and rtol. */
void op_case_compare(const op_case *c, int o, const ncc_tensor *in, const ncc_tensor *ref,
                     const ncc_tensor *got, const char *target, const char *what);
/* Whether the built graph has a node of op `name` (for --op). */
bool op_case_has_op(const char *name);
/* The compiled kernels expected of `target` (whose desc says whether it
 * compiles code at all). */
int op_case_expected_kernels(const op_case *c, const ncc_target_desc *target);

#endif /* NCC_TEST_OP_CASES_H */
