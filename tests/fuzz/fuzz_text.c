/* tests/fuzz/fuzz_text.c — libFuzzer target for the text IR.
 *
 * Any bytes may be fed to the parser: it must either fail cleanly with a
 * message or build a verified graph. When it succeeds, the graph's printed
 * form must parse again, print to the same text (print(parse(x)) == x), and
 * hash the same. Any violation aborts, which libFuzzer reports as a crash.
 * Seeds: tests/fuzz/corpus_text/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncc.h"

static void die(const char *what, const char *text) {
  fprintf(stderr, "fuzz_text: %s: %s\n--- printed IR ---\n%s", what,
          ncc_error_message(), text ? text : "(none)\n");
  abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ncc_graph *g = NULL;
  if (ncc_graph_parse_text((const char *)data, size, "fuzz.nir", &g) != NCC_OK) {
    if (g) die("a failed parse returned a graph", NULL);
    return 0;
  }
  char *t1 = ncc_graph_print_string(g);
  if (!t1) die("printing failed", NULL);
  ncc_graph *g2 = NULL;
  if (ncc_graph_parse_text(t1, strlen(t1), "printed.nir", &g2) != NCC_OK)
    die("the printed IR does not parse", t1);
  char *t2 = ncc_graph_print_string(g2);
  if (!t2) die("printing failed", t1);
  if (strcmp(t1, t2) != 0) {
    fprintf(stderr, "--- reprinted IR ---\n%s", t2);
    die("print(parse(printed)) differs from printed", t1);
  }
  if (ncc_graph_hash(g) != ncc_graph_hash(g2))
    die("the reparsed graph hashes differently", t1);
  free(t1);
  free(t2);
  ncc_graph_free(g);
  ncc_graph_free(g2);
  return 0;
}
