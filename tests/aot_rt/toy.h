/* tests/aot_rt/toy.h — the C interface of the two hand-made models that
 * tests/aot_rt/test_aot_rt.c drives, as `ncc compile --emit=lib` would
 * write it (codegen/llvm/aot_lib.c, write_header) for the prefixes toya and
 * toyb, plus the hooks the models' files export for the test.
 */
#ifndef TOY_H
#define TOY_H

#include <stddef.h>
#include <stdint.h>

#define TOY_STATUS(P)                                                      \
  enum {                                                                   \
    P##_STATUS_OK = 0,                                                     \
    P##_STATUS_BAD_ARG = 1,                                                \
    P##_STATUS_NO_MEMORY = 2,                                              \
    P##_STATUS_NOT_SET = 3,                                                \
    P##_STATUS_BUSY = 4                                                    \
  };
#define TOY_API(p)                                                         \
  typedef struct p##_model p##_model;                                      \
  p##_model *p##_create(int num_threads);                                  \
  void p##_free(p##_model *m);                                             \
  int p##_num_threads(const p##_model *m);                                 \
  int p##_set_input(p##_model *m, int i, const void *data, int rank,       \
                    const int64_t *dims);                                  \
  int p##_run(p##_model *m);                                               \
  const void *p##_output(const p##_model *m, int i, int *rank, int64_t *dims); \
  const char *p##_error(const p##_model *m);                               \
  int p##_num_inputs(void);                                                \
  int p##_num_outputs(void);                                               \
  const char *p##_input_name(int i);                                       \
  const char *p##_input_type(int i);                                       \
  const char *p##_output_name(int i);                                      \
  const char *p##_output_type(int i);

TOY_STATUS(TOYA)
TOY_API(toya)
TOY_STATUS(TOYB)
TOY_API(toyb)

/* toya: x f32[N,4] -> y = -(2 * (x + w) + 1) f32[N,4] (w = {1,2,3,4} the
 * weights), x_copy = x. Scratch t0 = x + w (steps 0-1), t1 = 2 * t0 (1-2),
 * t2 = t1 + 1 (2-3): t0 and t2 may share bytes, t1 may not. */
#define TOYA_TMP 3
int64_t toya_test_arena(const toya_model *m);          /* planned bytes */
int64_t toya_test_tmp_off(const toya_model *m, int t); /* t0..t2's offsets */
/* Per-thread shares run by the last step (tid 0..63) and its nth. */
extern int toya_shares[64], toya_last_nth;
/* When set, step 0 calls the API on this model from inside the run and
 * stores the statuses of run, set_input, and output (1: it was NULL). */
extern toya_model *toya_reenter;
extern int toya_reenter_st[3];

/* toyb: x f32[N] -> y f32[1] = sum over the scratch a = x (shape [N, N, N]
 * declared, so a huge N overflows the scratch) and b (the same, alive
 * together with a); only its sizes matter to the tests. */
int64_t toyb_test_arena(const toyb_model *m);

#endif /* TOY_H */
