/* tests/install/embed.c — a C program embedding libncc through the
 * installed header and pkg-config file: load a model, run it on `ref`,
 * write the first output to OUT.npy (tests/install/run.sh compares all of
 * it with onnxruntime) and print its name and element count. */
#include <ncc.h>
#include <stdio.h>

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: embed MODEL.onnx INPUT.npy OUT.npy\n");
    return 1;
  }
  ncc_graph *g = NULL;
  ncc_tensor x, y;
  if (ncc_graph_load(argv[1], &g) || ncc_npy_read(argv[2], &x)) {
    fprintf(stderr, "embed: %s\n", ncc_error_message());
    ncc_graph_free(g);
    return 1;
  }
  if (ncc_ref_run(g, &x, 1, &y, 1) || ncc_npy_write(argv[3], &y)) {
    fprintf(stderr, "embed: %s\n", ncc_error_message());
    return 1;
  }
  printf("%s %lld\n", ncc_graph_output_name(g, 0), (long long)ncc_tensor_numel(&y));
  ncc_tensor_free(&x);
  ncc_tensor_free(&y);
  ncc_graph_free(g);
  return 0;
}
