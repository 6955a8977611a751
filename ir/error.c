/* ir/error.c — the two kinds of errors: NCC_ASSERT for ncc's own bugs
 * (abort with a location), and a per-thread message plus ncc_status for
 * anything a user's input can cause. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

#define NCC_ERRBUF 1024
static _Thread_local char errbuf[NCC_ERRBUF];

const char *ncc_error_message(void) { return errbuf; }

_Noreturn void ncc_assert_fail(const char *cond, const char *file, int line) {
  fprintf(stderr, "ncc: internal error: %s:%d: assertion '%s' failed\n", file,
          line, cond);
  abort();
}

ncc_status ncc_verror(ncc_status st, const char *fmt, va_list ap) {
  vsnprintf(errbuf, sizeof errbuf, fmt, ap);
  /* Keep diagnostics on one line whatever the input contained. */
  for (char *p = errbuf; *p; p++)
    if (*p == '\n' || *p == '\r') *p = ' ';
  return st;
}

ncc_status ncc_error(ncc_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  ncc_verror(st, fmt, ap);
  va_end(ap);
  return st;
}

void ncc_error_prefix(const char *fmt, ...) {
  char pre[NCC_ERRBUF], old[NCC_ERRBUF];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(pre, sizeof pre, fmt, ap);
  va_end(ap);
  memcpy(old, errbuf, sizeof old);
  snprintf(errbuf, sizeof errbuf, "%s: %s", pre, old);
  /* The prefix may carry names from the model: keep it one line too. */
  for (char *p = errbuf; *p; p++)
    if (*p == '\n' || *p == '\r') *p = ' ';
}
