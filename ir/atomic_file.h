/* ir/atomic_file.h — the one way libncc and the driver write an output
 * file (library-internal; the driver includes it for now).
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

typedef struct ncc_afile {
  FILE *f;          /* write here between open and commit */
  const char *path; /* the final name (not owned) */
  char *tmp;        /* the hidden name while it has one, else NULL */
  int slot;         /* registry slot of tmp, -1 if none */
} ncc_afile;

/* Start writing `path`. Errors name `path`. */
ncc_status ncc_afile_open(ncc_afile *a, const char *path);
/* Check the writes, then make the file appear as `path`. Frees `a` either
 * way; on failure nothing is left. */
ncc_status ncc_afile_commit(ncc_afile *a);
/* Drop the file (nothing appears). Safe on a zeroed or committed `a`. */
void ncc_afile_abort(ncc_afile *a);

/* The whole of `data` as `path`. */
ncc_status ncc_atomic_write(const char *path, const void *data, size_t len);

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
/* Remove stale ".ncc-<pid>-*" entries of dead processes in `dir`. */
void ncc_atomic_sweep(const char *dir);

/* The .npy bytes of `t` into an open stream (runtime/npy.c); `path` is for
 * messages. For writers that stage several files (ncc run). */
ncc_status ncc_npy_write_to(FILE *f, const char *path, const ncc_tensor *t);

/* Async-signal-safe: unlink/rmdir every registered temporary and signal the
 * registered child. For the driver's SIGINT/SIGTERM handler. */
void ncc_atomic_cleanup_signal(int sig);

#endif
