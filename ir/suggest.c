/* ir/suggest.c — "did you mean": the closest of a list of names to a
 * misspelt one, for every message that rejects a name (passes, targets,
 * the driver's sub-commands). One helper, so every suggestion follows the
 * same rule: optimal-string-alignment (Damerau-Levenshtein with adjacent
 * transpositions) distance, and only when it is at most max(2, len/3) of
 * the longer name, so "fusoin" finds "fusion" but "xyz" suggests nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "ncc.h"

/* Names longer than this are not compared: none of ncc's are. */
#define SUGGEST_MAX_LEN 64

size_t ncc_edit_distance(const char *a, const char *b) {
  size_t n = strlen(a), m = strlen(b);
  if (n > SUGGEST_MAX_LEN || m > SUGGEST_MAX_LEN) return (size_t)-1;
  /* three rows of the DP table: i-2, i-1 and i */
  size_t rows[3][SUGGEST_MAX_LEN + 1];
  for (size_t j = 0; j <= m; j++) rows[1][j] = j;
  for (size_t i = 1; i <= n; i++) {
    size_t *cur = rows[(i + 1) % 3], *prev = rows[i % 3], *pp = rows[(i + 2) % 3];
    cur[0] = i;
    for (size_t j = 1; j <= m; j++) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      size_t d = prev[j] + 1;                          /* deletion */
      if (cur[j - 1] + 1 < d) d = cur[j - 1] + 1;      /* insertion */
      if (prev[j - 1] + cost < d) d = prev[j - 1] + cost; /* substitution */
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
          pp[j - 2] + 1 < d)
        d = pp[j - 2] + 1; /* adjacent transposition */
      cur[j] = d;
    }
  }
  return rows[(n + 1) % 3][m];
}

const char *ncc_suggest(const char *word, const char *const *names, int n) {
  if (!word || !names) return NULL;
  const char *best = NULL;
  size_t best_d = (size_t)-1;
  for (int i = 0; i < n; i++) {
    if (!names[i]) continue;
    size_t d = ncc_edit_distance(word, names[i]);
    if (d == 0) return NULL; /* not misspelt: nothing to suggest */
    size_t la = strlen(word), lb = strlen(names[i]);
    size_t len = la > lb ? la : lb, limit = len / 3 > 2 ? len / 3 : 2;
    if (d <= limit && d < best_d) {
      best = names[i];
      best_d = d;
    }
  }
  return best;
}
