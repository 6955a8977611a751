/* tests/aot/aot_main.c — a generic program around a library made by
 * `ncc compile --emit=lib`, used by the aot and aarch64 tests.
 *
 * Built once per model with -DMODEL=<api prefix> -DMODEL_H="<header>":
 *
 *   prog NTHREADS GROUP [-- GROUP]...
 *   GROUP = OUTPREFIX [IN.raw DIMS]...    (one pair per model input)
 *
 * DIMS is "2,8,16" ("-" for a scalar). For each group the program sets the
 * inputs (raw little-endian data), runs the model and writes every output i
 * as OUTPREFIX<i>.raw plus OUTPREFIX<i>.shape ("2 8 16"). Several groups
 * run on one model, so a change of batch size (a new scratch plan) is
 * exercised in one process. Before that it checks the API's error paths.
 * Exit 0 on success, 1 on a failed call, 2 on a wrong error code.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include MODEL_H

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define API(x) CAT(MODEL, CAT(_, x))

static void *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  void *buf = malloc(n > 0 ? (size_t)n : 1);
  if (buf && n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  *len = n > 0 ? (size_t)n : 0;
  return buf;
}

static int parse_dims(const char *s, int64_t *dims) {
  int rank = 0;
  if (strcmp(s, "-") == 0) return 0;
  while (*s && rank < 8) {
    char *end;
    dims[rank++] = strtoll(s, &end, 10);
    s = *end == ',' ? end + 1 : end;
  }
  return rank;
}

/* Bytes per element from a declared type such as "f32[N,3]". */
static size_t elem_size(const char *type) {
  if (strncmp(type, "f64", 3) == 0 || strncmp(type, "i64", 3) == 0) return 8;
  if (strncmp(type, "f32", 3) == 0 || strncmp(type, "i32", 3) == 0) return 4;
  if (strncmp(type, "f16", 3) == 0) return 2;
  return 1;
}

static int expect(int got, int want, const char *what) {
  if (got == want) return 0;
  fprintf(stderr, "aot_main: %s returned %d, expected %d\n", what, got, want);
  return 1;
}

/* The error paths every library shares. */
static int check_errors(void) {
  API(model) *m = API(create)(1);
  if (!m) return 1;
  int bad = 0;
  int64_t dims[8] = {1};
  float x = 0;
  bad |= expect(API(set_input)(m, -1, &x, 1, dims), CAT(MODEL_UPPER, _STATUS_BAD_ARG), "set_input(-1)");
  bad |= expect(API(set_input)(m, API(num_inputs)(), &x, 1, dims),
                CAT(MODEL_UPPER, _STATUS_BAD_ARG), "set_input(n)");
  if (API(num_inputs)() > 0) {
    bad |= expect(API(set_input)(m, 0, &x, 9, dims), CAT(MODEL_UPPER, _STATUS_BAD_ARG),
                  "set_input(rank 9)");
    bad |= expect(API(run)(m), CAT(MODEL_UPPER, _STATUS_NOT_SET), "run without inputs");
    if (!API(error)(m)[0]) bad |= expect(1, 0, "error message");
  }
  if (API(output)(m, 0, NULL, NULL) != NULL) bad |= expect(1, 0, "output before run");
  if (API(input_name)(-1) || API(output_type)(API(num_outputs)()))
    bad |= expect(1, 0, "names out of range");
  API(free)(m);
  API(free)(NULL);
  return bad;
}

static int write_outputs(API(model) *m, const char *prefix) {
  for (int o = 0; o < API(num_outputs)(); o++) {
    int rank;
    int64_t dims[8];
    const void *data = API(output)(m, o, &rank, dims);
    size_t n = elem_size(API(output_type)(o));
    char path[4096];
    snprintf(path, sizeof path, "%s%d.shape", prefix, o);
    FILE *f = fopen(path, "w");
    if (!f) return 1;
    for (int d = 0; d < rank; d++) {
      fprintf(f, "%s%lld", d ? " " : "", (long long)dims[d]);
      n *= (size_t)dims[d];
    }
    fputc('\n', f);
    fclose(f);
    snprintf(path, sizeof path, "%s%d.raw", prefix, o);
    f = fopen(path, "wb");
    if (!f || (n && (!data || fwrite(data, 1, n, f) != n))) {
      if (f) fclose(f);
      return 1;
    }
    fclose(f);
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s NTHREADS OUTPREFIX [IN.raw DIMS]... [-- ...]\n", argv[0]);
    return 1;
  }
  if (check_errors()) return 2;
  API(model) *m = API(create)(atoi(argv[1]));
  if (!m) return 1;
  int n_in = API(num_inputs)();
  void *bufs[64] = {0};
  int rc = 0;
  for (int a = 2; a < argc && !rc;) {
    const char *prefix = argv[a++];
    for (int i = 0; i < n_in && !rc; i++, a += 2) {
      if (a + 1 >= argc || i >= 64) {
        fprintf(stderr, "aot_main: input %d missing\n", i);
        rc = 1;
        break;
      }
      size_t len;
      int64_t dims[8];
      free(bufs[i]);
      bufs[i] = read_file(argv[a], &len);
      int rank = parse_dims(argv[a + 1], dims);
      if (!bufs[i] || API(set_input)(m, i, bufs[i], rank, dims) != 0) {
        fprintf(stderr, "aot_main: input %d (%s): %s\n", i, argv[a], API(error)(m));
        rc = 1;
      }
    }
    if (!rc && API(run)(m) != 0) {
      fprintf(stderr, "aot_main: run: %s\n", API(error)(m));
      rc = 1;
    }
    if (!rc && write_outputs(m, prefix)) {
      fprintf(stderr, "aot_main: cannot write the outputs of %s\n", prefix);
      rc = 1;
    }
    if (a < argc && strcmp(argv[a], "--") == 0) a++;
  }
  for (int i = 0; i < 64; i++) free(bufs[i]);
  API(free)(m);
  return rc;
}
