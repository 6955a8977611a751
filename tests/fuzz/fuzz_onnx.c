/* tests/fuzz/fuzz_onnx.c — libFuzzer target: arbitrary bytes into the ONNX
 * importer (protobuf-c decoding, tensor decoding, attribute checks, the
 * topological sort, shape inference and the verifier), then the text printer
 * on whatever imports.
 *
 * Beyond "no crash, no leak, no sanitizer report", it checks the error
 * contract: a failure is NCC_ERR_INPUT or NCC_ERR_UNSUPPORTED (inputs are
 * small, so never an allocation failure), leaves no graph, and has a
 * one-line message that starts with the file name. Build and run: see
 * docs/FUZZING.md. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

#define NAME "fuzz.onnx"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ncc_graph *g = NULL;
  ncc_status st = ncc_graph_import_onnx_buffer(data, size, NAME, &g);
  if (st == NCC_OK) {
    NCC_ASSERT(g != NULL);
    char *text = ncc_graph_print_string(g);
    NCC_ASSERT(text != NULL);
    free(text);
    ncc_graph_free(g);
    return 0;
  }
  const char *msg = ncc_error_message();
  NCC_ASSERT(g == NULL);
  NCC_ASSERT(st == NCC_ERR_INPUT || st == NCC_ERR_UNSUPPORTED);
  NCC_ASSERT(strncmp(msg, NAME ": ", strlen(NAME) + 2) == 0);
  /* one line of visible text: no control byte, valid UTF-8 (ir/error.c) */
  for (const unsigned char *p = (const unsigned char *)msg; *p;) {
    int n = ncc_utf8_len(p);
    NCC_ASSERT(n > 0 && !(n == 1 && (*p < 0x20 || *p == 0x7f)));
    p += n;
  }
  return 0;
}
