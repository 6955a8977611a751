/* ir/options.c — ncc_options defaults and the per-thread scope of the
 * caller's options during a compile, emit or run (see ir/options.h). */
#include "options.h"

#include <string.h>
#include <unistd.h>

static const ncc_options defaults = {
    .size = sizeof(ncc_options),
    .kernel_reuse = 1,
    .codegen_level = 3,
};

static _Thread_local const ncc_options *current;

void ncc_options_init(ncc_options *o) {
  if (o) *o = defaults;
}

void ncc_opts_copy(ncc_options *dst, const ncc_options *src) {
  *dst = defaults;
  if (!src) return;
  /* a struct from another header version: take the fields both know */
  size_t n = src->size && src->size < sizeof *dst ? src->size : sizeof *dst;
  memcpy(dst, src, n);
  dst->size = sizeof *dst;
}

static const char *const precision_names[] = {"f32", "bf16", "fp16"};

const char *ncc_precision_name(int precision) {
  return precision >= 0 && precision < 3 ? precision_names[precision] : NULL;
}

int ncc_precision_from_name(const char *name) {
  for (int i = 0; name && i < 3; i++)
    if (strcmp(name, precision_names[i]) == 0) return i;
  return -1;
}

const ncc_options *ncc_opts(void) { return current ? current : &defaults; }

const ncc_options *ncc_opts_enter(const ncc_options *o) {
  const ncc_options *prev = current;
  current = o;
  return prev;
}

void ncc_opts_leave(const ncc_options *prev) { current = prev; }

bool ncc_opts_dump(unsigned bit) { return (ncc_opts()->dump & bit) != 0; }

FILE *ncc_opts_dump_file(void) {
  FILE *f = ncc_opts()->dump_file;
  return f ? f : stderr;
}

int ncc_opts_compile_threads(void) {
  long t = ncc_opts()->compile_threads;
  if (t <= 0) t = sysconf(_SC_NPROCESSORS_ONLN);
  return t < 1 ? 1 : t > 64 ? 64 : (int)t;
}
