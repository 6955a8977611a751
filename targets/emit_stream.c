/* targets/emit_stream.c — ahead-of-time output to a stream (`ncc compile
 * -o -`, or text kinds on stdout).
 *
 * The emitters write files through the atomic writer, so a stream gets
 * the output of a file emitted into a private work directory
 * "<tmpdir>/.ncc-<pid>-XXXXXX": registered for signal cleanup while it
 * exists, and swept by a later run after a SIGKILL. The caller names the
 * temporary directory (the driver passes $TMPDIR): libncc reads no
 * environment.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ncc.h"
#include "../ir/atomic_file.h"

ncc_status ncc_module_emit_stream(const ncc_graph *g, const char *target,
                                  const ncc_options *opts, const char *kind,
                                  const char *tmpdir, FILE *out) {
  if (!out || !kind)
    return ncc_error(NCC_ERR_USAGE, "ncc_module_emit_stream: no stream or kind");
  if (strcmp(kind, "lib") == 0)
    return ncc_error(NCC_ERR_USAGE,
                     "--emit=lib writes a library and a header: it cannot go "
                     "to a stream");
  char probe[4096], path[4200];
  snprintf(probe, sizeof probe, "%s/ncc-emit", tmpdir && *tmpdir ? tmpdir : "/tmp");
  char *work = NULL;
  int wslot = -1;
  ncc_status st = ncc_atomic_workdir(probe, &work, &wslot);
  if (st) return st;
  snprintf(path, sizeof path, "%s/out", work);
  int slot = ncc_atomic_register(path, false);
  st = ncc_module_emit_opts(g, target, opts, kind, path);
  FILE *f = st ? NULL : fopen(path, "rb");
  if (!st && !f)
    st = ncc_error(NCC_ERR_INPUT, "%s: cannot read back: %s", path, strerror(errno));
  if (f) {
    char buf[65536];
    size_t n;
    /* A short write is the caller's to report (it owns the stream). */
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
      if (fwrite(buf, 1, n, out) != n) break;
    fclose(f);
  }
  unlink(path);
  rmdir(work);
  ncc_atomic_unregister(slot);
  ncc_atomic_unregister(wslot);
  ncc_free(work, 0);
  return st;
}
