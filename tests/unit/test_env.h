/* tests/unit/test_env.h — the settings the ctest reruns of a test pass in
 * the environment (tests/cpu.cmake, blocked.cmake, fusion.cmake set
 * NCC_VECTOR_WIDTH=8/4/1), turned into ncc_options: libncc reads no
 * environment, so a test that wants the narrower kernels asks for them
 * through the API, as the `ncc` driver does. Header-only. */
#ifndef NCC_TEST_ENV_H
#define NCC_TEST_ENV_H

#include <stdlib.h>

#include "ncc.h"

/* NCC_VECTOR_WIDTH when it is 1, 4, 8 or 16; else 0 (the host's). */
static inline int test_env_vector_width(void) {
  const char *w = getenv("NCC_VECTOR_WIDTH");
  int v = w ? atoi(w) : 0;
  return v == 1 || v == 4 || v == 8 || v == 16 ? v : 0;
}

/* ncc_module_compile with the environment's vector width. */
static inline ncc_status test_module_compile(const ncc_graph *g, const char *target,
                                             ncc_module **out) {
  ncc_options o;
  ncc_options_init(&o);
  o.vector_width = test_env_vector_width();
  return ncc_module_compile_opts(g, target, &o, out);
}

#endif /* NCC_TEST_ENV_H */
