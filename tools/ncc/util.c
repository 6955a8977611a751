/* tools/ncc/util.c — small helpers of the driver: loading a model, writing
 * text output atomically (ir/atomic_file.c), formatting types and name lists for messages,
 * the clock, and strict integer parsing. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* Say plainly what is wrong with a model path before a loader guesses. */
ncc_status cli_check_readable(const char *path) {
  struct stat sb;
  if (stat(path, &sb) != 0)
    return ncc_error(NCC_ERR_INPUT, "%s: %s", path, strerror(errno));
  if (S_ISDIR(sb.st_mode))
    return ncc_error(NCC_ERR_INPUT, "%s: is a directory, not a model", path);
  return NCC_OK;
}

ncc_status cli_load_model(const char *path, ncc_graph **out) {
  *out = NULL;
  ncc_status st = cli_check_readable(path);
  return st ? st : ncc_graph_load(path, out);
}

ncc_status cli_print_graph(const ncc_graph *g, const char *path) {
  if (!path || strcmp(path, "-") == 0) return ncc_graph_print(g, stdout);
  cli_made_dirs made;
  ncc_status st = cli_out_parents(path, &made);
  if (st) return st;
  ncc_afile a;
  st = ncc_afile_open(&a, path);
  if (!st) {
    st = ncc_graph_print(g, a.f);
    if (st) ncc_afile_abort(&a);
    else st = ncc_afile_commit(&a);
  }
  cli_out_parents_done(&made, st);
  return st;
}

const char *cli_format_type(const ncc_graph *g, ncc_dtype dt, int rank,
                            const int64_t *dims, const int *sym, char *buf,
                            size_t cap) {
  char part[64];
  buf[0] = 0;
  cli_append(buf, cap, ncc_dtype_name(dt));
  cli_append(buf, cap, "[");
  for (int i = 0; i < rank; i++) {
    if (sym && sym[i] >= 0)
      snprintf(part, sizeof part, "%s%s", i ? "," : "",
               g ? ncc_graph_sym_name(g, sym[i]) : "?");
    else if (dims[i] < 0)
      snprintf(part, sizeof part, "%s?", i ? "," : "");
    else
      snprintf(part, sizeof part, "%s%lld", i ? "," : "", (long long)dims[i]);
    cli_append(buf, cap, part);
  }
  cli_append(buf, cap, "]");
  return buf;
}

void cli_append(char *buf, size_t cap, const char *s) {
  size_t n = strlen(buf), m = strlen(s);
  if (n + m < cap) {
    memcpy(buf + n, s, m + 1);
    return;
  }
  if (n + 4 > cap) return; /* already full */
  /* Does not fit: keep what does and mark the cut. */
  size_t keep = cap - 4 > n ? cap - 4 - n : 0;
  memcpy(buf + n, s, keep);
  memcpy(buf + n + keep, "...", 4);
}

const char *cli_input_names(const ncc_graph *g, char *buf, size_t cap) {
  buf[0] = 0;
  int n = ncc_graph_num_inputs(g);
  if (n == 0) cli_append(buf, cap, "none");
  for (int i = 0; i < n; i++) {
    if (i) cli_append(buf, cap, ", ");
    cli_append(buf, cap, "'");
    cli_append(buf, cap, ncc_graph_input_name(g, i));
    cli_append(buf, cap, "'");
  }
  return buf;
}

const char *cli_text(const char *s, char *buf, size_t cap) {
  ncc_escape_text(s, buf, cap);
  return buf;
}

void cli_json_string(const char *s) {
  static const char hex[] = "0123456789abcdef";
  putchar('"');
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
    int n = ncc_utf8_len(p);
    unsigned cp = n == 1 ? *p : n == 2 ? (unsigned)(p[0] & 0x1f) << 6 | (p[1] & 0x3f) : 0x100;
    if (n == 0) {
      printf("\\\\x%c%c", hex[*p >> 4], hex[*p & 15]); /* not UTF-8 */
      p++;
    } else if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) {
      printf("\\u%04x", cp); /* C0, DEL, C1 */
      p += n;
    } else if (*p == '"' || *p == '\\') {
      printf("\\%c", *p);
      p++;
    } else {
      fwrite(p, 1, (size_t)n, stdout);
      p += n;
    }
  }
  putchar('"');
}

double cli_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

bool cli_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out) {
  if (!s || !((*s >= '0' && *s <= '9') || *s == '-')) return false;
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || *end || v < lo || v > hi) return false;
  *out = v;
  return true;
}
