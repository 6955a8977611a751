/* ir/atomic_file.h — the one way libncc and the driver write an output
 * file. The writer itself (ncc_afile_*, ncc_atomic_write, sweep, signal
 * cleanup) is public, in ncc.h; this header adds what only libncc uses.
 *
 * A file is written unnamed (O_TMPFILE) or under a short hidden name
 * ".ncc-<pid>-XXXXXX" in the target's directory, then linked/renamed over
 * the target: readers see the old file or the whole new one, a failure
 * leaves nothing, and the final mode is 0666 & ~umask for every kind.
 * Named temporaries (files and the --emit=lib work directory) are kept in
 * a registry that ncc_atomic_cleanup_signal() empties from a signal
 * handler, and ones a SIGKILLed process left are swept by a later run
 * (the pid in the name says whether their owner is gone).
 */
#ifndef NCC_ATOMIC_FILE_H
#define NCC_ATOMIC_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "ncc.h"

/* A work directory "<dir of path>/.ncc-<pid>-XXXXXX" (mode 0700), registered
 * for signal cleanup (slot in *slot); returns it ncc_malloc'd in *out. Stale work dirs and
 * temporaries of dead ncc processes in that directory are swept first. */
ncc_status ncc_atomic_workdir(const char *path, char **out, int *slot);
/* Register a path inside a work dir (a file the handler should unlink);
 * returns the slot or -1 when the registry is full. */
int ncc_atomic_register(const char *path, bool is_dir);
void ncc_atomic_unregister(int slot);
/* A child process (the C compiler) the handler should pass the signal to;
 * 0 for none. */
void ncc_atomic_set_child(long pid);

#endif
