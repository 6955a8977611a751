/* tests/aot/safety_main.c — the size, stale-output and thread contracts of
 * a library made by `ncc compile --emit=lib`, for the model of
 * tests/aot/test_aot_safety.py:
 *
 *   sz(x: f32[N,0], k: f32[0,4], z: f32[M,4]) -> y = Relu(x @ k): f32[N,4],
 *                                               w = Relu(z):      f32[M,4]
 *
 * Built with -DMODEL=<api prefix> -DMODEL_UPPER=<PREFIX> -DMODEL_H="<header>".
 *   prog sizes    every size boundary (16-byte rows: 2^59-1 rows fit in
 *                 PTRDIFF_MAX bytes, 2^59 do not), [2^62, 0] as reported,
 *                 and that a failed run leaves no readable output
 *   prog threads  4 threads x own model, every result checked; 4 threads
 *                 on one shared model: OK or BUSY, never anything else
 * The oracle is plain C (relu, and x @ k = 0 since K = 0).
 * Exit 0 when every check passes; one line per failure on stderr.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include MODEL_H

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define API(x) CAT(MODEL, CAT(_, x))
#define ST(x) CAT(MODEL_UPPER, CAT(_STATUS_, x))

static int failures;

static void check(int ok, const char *what, const API(model) *m) {
  if (ok) return;
  failures++;
  fprintf(stderr, "FAIL %s (error: '%s')\n", what, m ? API(error)(m) : "");
}

static int set3(API(model) *m, int64_t n, int64_t rows, const float *z) {
  int64_t dx[2] = {n, 0}, dk[2] = {0, 4}, dz[2] = {rows, 4};
  static float dummy;
  int st = API(set_input)(m, 0, &dummy, 2, dx);
  if (st == 0) st = API(set_input)(m, 1, &dummy, 2, dk);
  if (st == 0) st = API(set_input)(m, 2, z, 2, dz);
  return st;
}

/* y must be n x 4 zeros, w relu(z) for `rows` rows. */
static int outputs_ok(API(model) *m, int64_t n, int64_t rows, const float *z) {
  int rank = -1;
  int64_t d[8];
  const float *y = API(output)(m, 0, &rank, d);
  if (!y || rank != 2 || d[0] != n || d[1] != 4) return 0;
  for (int64_t i = 0; i < n * 4; i++)
    if (y[i] != 0.0f) return 0;
  const float *w = API(output)(m, 1, &rank, d);
  if (!w || rank != 2 || d[0] != rows || d[1] != 4) return 0;
  for (int64_t i = 0; i < rows * 4; i++)
    if (w[i] != (z[i] > 0 ? z[i] : 0.0f)) return 0;
  return 1;
}

static int sizes(void) {
  API(model) *m = API(create)(2);
  float z[12];
  for (int i = 0; i < 12; i++) z[i] = (float)(i - 5);
  const int64_t big = (int64_t)1 << 62, fit = ((int64_t)1 << 59) - 1, past = (int64_t)1 << 59;
  /* before any run: nothing to read */
  int rank = 7;
  check(API(output)(m, 0, &rank, NULL) == NULL && rank == 0, "output before a run", m);
  check(set3(m, 2, 3, z) == ST(OK), "set small inputs", m);
  check(API(run)(m) == ST(OK), "run small", m);
  check(outputs_ok(m, 2, 3, z), "outputs small", m);
  /* the report: an empty x of [2^62, 0] binds N = 2^62; y is 2^66 bytes */
  check(set3(m, big, 3, z) == ST(OK), "set_input [2^62, 0] (empty) is accepted", m);
  check(API(run)(m) == ST(BAD_ARG), "run with N = 2^62 is BAD_ARG", m);
  check(strstr(API(error)(m), "output 'y'") != NULL, "the message names output 'y'", m);
  /* a failed run invalidates the outputs of the earlier one */
  rank = 7;
  check(API(output)(m, 0, &rank, NULL) == NULL && rank == 0, "no stale output 0", m);
  check(API(output)(m, 1, NULL, NULL) == NULL, "no stale output 1", m);
  /* y at the limit (2^63 - 16 bytes): representable, so only memory fails */
  check(set3(m, fit, 3, z) == ST(OK), "set N = 2^59 - 1", m);
  check(API(run)(m) == ST(NO_MEMORY), "run with y of 2^63 - 16 bytes is NO_MEMORY", m);
  check(API(output)(m, 0, NULL, NULL) == NULL, "no output after NO_MEMORY", m);
  check(set3(m, past, 3, z) == ST(OK), "set N = 2^59", m);
  check(API(run)(m) == ST(BAD_ARG), "run with y of 2^63 bytes is BAD_ARG", m);
  /* input sizes: z of 2^59 - 1 rows fits, 2^59 rows and 2^62 rows do not */
  int64_t dz[2] = {fit, 4};
  check(API(set_input)(m, 2, z, 2, dz) == ST(OK), "set_input z at the limit", m);
  dz[0] = past;
  check(API(set_input)(m, 2, z, 2, dz) == ST(BAD_ARG), "set_input z one past", m);
  check(strstr(API(error)(m), "input 'z'") != NULL, "the message names input 'z'", m);
  dz[0] = big;
  check(API(set_input)(m, 2, z, 2, dz) == ST(BAD_ARG), "set_input z of 2^62 rows", m);
  /* huge dims next to a 0 are an empty tensor, whatever their product */
  int64_t dk[2] = {0, 4}, dx[2] = {big, 0};
  static float dummy;
  check(API(set_input)(m, 0, &dummy, 2, dx) == ST(OK), "x [2^62, 0]", m);
  check(API(set_input)(m, 1, &dummy, 2, dk) == ST(OK), "k [0, 4]", m);
  dx[0] = INT64_MAX; /* the largest dim: its product with the others fits */
  check(API(set_input)(m, 0, &dummy, 2, dx) == ST(OK), "x [2^63 - 1, 0]", m);
  check(API(run)(m) == ST(BAD_ARG), "run with N = 2^63 - 1 is BAD_ARG", m);
  /* and the model still works afterwards */
  check(set3(m, 1, 2, z) == ST(OK), "set small again", m);
  check(API(run)(m) == ST(OK), "run small again", m);
  check(outputs_ok(m, 1, 2, z), "outputs small again", m);
  API(free)(m);
  return failures;
}

/* ---- threads ---- */
#define ROWS 8192 /* 32768 elements: enough work for the model's own pool */
#define ITERS 60

typedef struct job {
  API(model) *shared;
  int tid, ok, busy, bad;
} job;

static void fill(float *z, int tid, int it) {
  for (int i = 0; i < ROWS * 4; i++) z[i] = (float)((i * 7 + tid * 13 + it * 3) % 23 - 11);
}

/* Models are independent: each thread runs its own, every result checked. */
static void *own_model(void *arg) {
  job *j = arg;
  API(model) *m = API(create)(2);
  float *z = malloc(sizeof(float) * ROWS * 4);
  for (int it = 0; m && z && it < ITERS; it++) {
    fill(z, j->tid, it);
    int n = 1 + (it + j->tid) % 3, rows = ROWS - (it % 2) * 100;
    if (set3(m, n, rows, z) == ST(OK) && API(run)(m) == ST(OK) && outputs_ok(m, n, rows, z))
      j->ok++;
    else
      j->bad++;
  }
  free(z);
  API(free)(m);
  return NULL;
}

/* One model shared without a lock: each call succeeds or is refused. */
static void *shared_model(void *arg) {
  job *j = arg;
  for (int it = 0; it < ITERS * 4; it++) {
    int st = API(run)(j->shared);
    if (st == ST(OK)) j->ok++;
    else if (st == ST(BUSY)) j->busy++;
    else j->bad++;
    int rank;
    const void *p = API(output)(j->shared, 1, &rank, NULL);
    if (p && rank != 2) j->bad++;
  }
  return NULL;
}

static int threads(void) {
  pthread_t th[4];
  job jobs[4];
  memset(jobs, 0, sizeof jobs);
  for (int t = 0; t < 4; t++) {
    jobs[t].tid = t;
    pthread_create(&th[t], NULL, own_model, &jobs[t]);
  }
  for (int t = 0; t < 4; t++) pthread_join(th[t], NULL);
  for (int t = 0; t < 4; t++) {
    char what[64];
    snprintf(what, sizeof what, "thread %d: %d of %d runs right", t, jobs[t].ok, ITERS);
    check(jobs[t].ok == ITERS && jobs[t].bad == 0, what, NULL);
  }
  API(model) *m = API(create)(2);
  float *z = malloc(sizeof(float) * ROWS * 4);
  fill(z, 9, 9);
  check(set3(m, 2, ROWS, z) == ST(OK), "shared: set inputs", m);
  memset(jobs, 0, sizeof jobs);
  for (int t = 0; t < 4; t++) {
    jobs[t].shared = m;
    pthread_create(&th[t], NULL, shared_model, &jobs[t]);
  }
  for (int t = 0; t < 4; t++) pthread_join(th[t], NULL);
  int ok = 0, busy = 0;
  for (int t = 0; t < 4; t++) {
    ok += jobs[t].ok;
    busy += jobs[t].busy;
    check(jobs[t].bad == 0, "shared: every call OK or BUSY", m);
  }
  check(ok > 0, "shared: some runs succeeded", m);
  check(API(run)(m) == ST(OK) && outputs_ok(m, 2, ROWS, z), "shared: result after", m);
  printf("shared model: %d runs OK, %d refused BUSY\n", ok, busy);
  free(z);
  API(free)(m);
  return failures;
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "sizes") == 0) return sizes() ? 1 : 0;
  if (argc == 2 && strcmp(argv[1], "threads") == 0) return threads() ? 1 : 0;
  fprintf(stderr, "usage: %s sizes|threads\n", argv[0]);
  return 2;
}
