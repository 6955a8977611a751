/* tests/install/embed.c — a C program embedding libncc through the
 * installed header and pkg-config file: load a model, run it on `ref`,
 * print the first output's checksum. */
#include <ncc.h>
#include <stdio.h>

int main(int argc, char **argv) {
  if (argc != 3) return 1;
  ncc_graph *g = NULL;
  ncc_tensor x, y;
  if (ncc_graph_load(argv[1], &g) || ncc_npy_read(argv[2], &x)) {
    fprintf(stderr, "embed: %s\n", ncc_error_message());
    ncc_graph_free(g);
    return 1;
  }
  if (ncc_ref_run(g, &x, 1, &y, 1)) {
    fprintf(stderr, "embed: %s\n", ncc_error_message());
    return 1;
  }
  double sum = 0;
  const float *p = y.data;
  for (int64_t i = 0; i < ncc_tensor_numel(&y); i++) sum += p[i];
  printf("%s %lld %.6f\n", ncc_graph_output_name(g, 0),
         (long long)ncc_tensor_numel(&y), sum);
  ncc_tensor_free(&x);
  ncc_tensor_free(&y);
  ncc_graph_free(g);
  return 0;
}
