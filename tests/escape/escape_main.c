/* tests/escape/escape_main.c — the program around a library made by
 * `ncc compile --emit=lib` from a model with hostile names (test_escape.py).
 *
 * Built with -DMODEL=<api prefix> -DMODEL_H="<header>". The model has two
 * inputs, A [4,S] (S symbolic) and B [4,1], and two f32 outputs of 4
 * values. The program fills the inputs with a fixed pattern (the test
 * computes the same in numpy), runs the model and prints, one per line:
 *   in <i> <hex of the input's name as the library reports it>
 *   out <o> <hex of the output's name> <the 4 values, %.9g>
 * so the names' trip through the generated C string literals is checked
 * byte for byte. */
#include <stdint.h>
#include <stdio.h>

#include MODEL_H

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define API(x) CAT(MODEL, CAT(_, x))

#define S 3

static void hex(const char *s) {
  if (!s) {
    printf(" NULL");
    return;
  }
  printf(" ");
  if (!*s) printf("-");
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) printf("%02x", *p);
}

int main(void) {
  static float a[S * 4], b[4];
  for (int i = 0; i < S * 4; i++) a[i] = (float)((i * 7) % 11 - 5) * 0.25f;
  for (int i = 0; i < 4; i++) b[i] = (float)((i * 5) % 13 - 6) * 0.5f;
  API(model) *m = API(create)(1);
  if (!m) return 1;
  int64_t da[2] = {4, S}, db[2] = {4, 1};
  if (API(set_input)(m, 0, a, 2, da) || API(set_input)(m, 1, b, 2, db) || API(run)(m)) {
    fprintf(stderr, "failed: %s\n", API(error)(m));
    API(free)(m);
    return 1;
  }
  for (int i = 0; i < API(num_inputs)(); i++) {
    printf("in %d", i);
    hex(API(input_name)(i));
    printf("\n");
  }
  for (int o = 0; o < API(num_outputs)(); o++) {
    int rank = 0;
    int64_t dims[8];
    const float *y = API(output)(m, o, &rank, dims);
    printf("out %d", o);
    hex(API(output_name)(o));
    for (int k = 0; y && k < 4; k++) printf(" %.9g", y[k]);
    printf("\n");
  }
  API(free)(m);
  return 0;
}
