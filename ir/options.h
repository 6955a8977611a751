/* ir/options.h — the caller's ncc_options inside the library.
 *
 * num_threads, vector_width and kernel_reuse travel explicitly (the
 * backend options, targets/backend.h). The debugging and tool settings
 * (dumps, the C compiler of --emit=lib, keep_temps, the memory budget) are
 * read deep inside code generators and drivers that have no options
 * argument, so the public entry points (ncc_module_compile_opts, _emit_opts
 * and a module's runs) put the caller's options in scope for the calling
 * thread for the length of the call; code reads them with ncc_opts(). This
 * replaces the environment variables those places used to read: nothing in
 * the library reads NCC_* from the environment any more (docs/CONFIGURATION.md). */
#ifndef NCC_IR_OPTIONS_H
#define NCC_IR_OPTIONS_H

#include <stdio.h>

#include "ir.h"

/* The options in scope on this thread (the defaults outside any call). */
const ncc_options *ncc_opts(void);
/* Put `o` in scope (NULL: the defaults); returns what to restore. */
const ncc_options *ncc_opts_enter(const ncc_options *o);
void ncc_opts_leave(const ncc_options *prev);
/* Copy a caller's struct (its `size` may be from an older or newer
 * header) into a full one, the missing fields defaulted. */
void ncc_opts_copy(ncc_options *dst, const ncc_options *src);
/* Whether dump `bit` is on, and where dumps go (stderr by default). */
bool ncc_opts_dump(unsigned bit);
FILE *ncc_opts_dump_file(void);
/* Threads compile-time work may use (kernel compiles, weight packing):
 * compile_threads, 0 meaning one per online core; in [1, 64]. */
int ncc_opts_compile_threads(void);

#endif /* NCC_IR_OPTIONS_H */
