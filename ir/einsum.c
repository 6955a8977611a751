/* ir/einsum.c — the Einsum equation parser (ir/einsum.h). */
#include <stdio.h>
#include <string.h>

#include "einsum.h"

static int letter(char ch) {
  if (ch >= 'A' && ch <= 'Z') return ch - 'A';
  if (ch >= 'a' && ch <= 'z') return 26 + ch - 'a';
  return -1;
}

/* One term's letters (ellipsis as -1) into t; false when malformed. */
static bool term(const char **p, const char *end, int *t, int *n, bool *ell) {
  *n = 0;
  *ell = false;
  while (*p < end && **p != ',' && **p != '-') {
    char ch = **p;
    if (ch == ' ') {
      (*p)++;
    } else if (ch == '.') {
      if (*ell || end - *p < 3 || strncmp(*p, "...", 3) != 0) return false;
      *ell = true;
      if (*n >= 2 * NCC_MAX_RANK) return false;
      t[(*n)++] = -1;
      *p += 3;
    } else {
      int l = letter(ch);
      if (l < 0 || *n >= 2 * NCC_MAX_RANK) return false;
      t[(*n)++] = l;
      (*p)++;
    }
  }
  return true;
}

/* Expand term t (n entries, at most one -1) to `rank` labels, the ellipsis
 * covering rank - letters dims aligned to the right of `ell_dims`. */
static bool expand(const int *t, int n, bool ell, int rank, int ell_dims, int *lab,
                   int *ell_used) {
  int letters = ell ? n - 1 : n;
  int e = rank - letters;
  if (e < 0 || (!ell && e != 0) || e > NCC_MAX_RANK) return false;
  if (ell_used && e > *ell_used) *ell_used = e;
  if (!lab) return true;
  int k = 0;
  for (int i = 0; i < n; i++) {
    if (t[i] >= 0) {
      lab[k++] = t[i];
    } else {
      for (int j = 0; j < e; j++) lab[k++] = 52 + ell_dims - e + j;
    }
  }
  return true;
}

bool ncc_einsum_parse(const char *eq, int n_in, const int *ranks, ncc_einsum *e,
                      char *err, size_t cap) {
  memset(e, 0, sizeof *e);
  if (n_in < 1 || n_in > NCC_EINSUM_MAX_IN) {
    snprintf(err, cap, "%d operands (1..%d)", n_in, NCC_EINSUM_MAX_IN);
    return false;
  }
  const char *p = eq, *end = eq + strlen(eq);
  const char *arrow = strstr(eq, "->");
  const char *lhs_end = arrow ? arrow : end;
  int t[NCC_EINSUM_MAX_IN][2 * NCC_MAX_RANK], tn[NCC_EINSUM_MAX_IN];
  bool tell[NCC_EINSUM_MAX_IN];
  int k = 0;
  for (;;) {
    if (k >= n_in || !term(&p, lhs_end, t[k], &tn[k], &tell[k])) goto bad;
    k++;
    if (p < lhs_end && *p == ',') {
      p++;
      continue;
    }
    if (p != lhs_end) goto bad;
    break;
  }
  if (k != n_in) {
    snprintf(err, cap, "equation '%s' has %d operands, the node %d", eq, k, n_in);
    return false;
  }
  int ell_dims = 0;
  for (int i = 0; i < n_in; i++)
    if (!expand(t[i], tn[i], tell[i], ranks[i], 0, NULL, &ell_dims)) {
      snprintf(err, cap, "equation '%s': operand %d has rank %d", eq, i, ranks[i]);
      return false;
    }
  e->n_in = n_in;
  int count[NCC_EINSUM_LABELS] = {0};
  for (int i = 0; i < n_in; i++) {
    e->rank[i] = ranks[i];
    expand(t[i], tn[i], tell[i], ranks[i], ell_dims, e->lab[i], NULL);
    for (int j = 0; j < tn[i]; j++)
      if (t[i][j] >= 0) count[t[i][j]]++;
  }
  if (arrow) {
    int ot[2 * NCC_MAX_RANK], on;
    bool oell;
    p = arrow + 2;
    if (!term(&p, end, ot, &on, &oell) || p != end) goto bad;
    int letters = oell ? on - 1 : on;
    if (letters + (oell ? ell_dims : 0) > NCC_MAX_RANK) goto bad;
    if (!expand(ot, on, oell, letters + (oell ? ell_dims : 0), ell_dims, e->out_lab, NULL))
      goto bad;
    e->out_rank = letters + (oell ? ell_dims : 0);
    bool seen[NCC_EINSUM_LABELS] = {false};
    for (int j = 0; j < e->out_rank; j++) {
      int l = e->out_lab[j];
      if (seen[l] || (l < 52 && count[l] == 0)) {
        snprintf(err, cap, "equation '%s': output label %d repeated or not in an input",
                 eq, j);
        return false;
      }
      seen[l] = true;
    }
    /* an ellipsis the output leaves out is summed over */
  } else {
    for (int j = 0; j < ell_dims; j++) e->out_lab[e->out_rank++] = 52 + j;
    for (int l = 0; l < 52; l++)
      if (count[l] == 1) {
        if (e->out_rank >= NCC_MAX_RANK) goto bad;
        e->out_lab[e->out_rank++] = l;
      }
  }
  return true;
bad:
  snprintf(err, cap, "malformed equation '%s'", eq);
  return false;
}
