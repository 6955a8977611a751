/* tools/ncc/outdir.c — the directories an output path (-o) needs.
 *
 * `ncc compile --emit=lib -o out/x.so`, `ncc import -o out/m.nir` and the
 * others create the missing parent directories of their output, as `ncc
 * run --output-dir` creates its directory. The files themselves are
 * written through temporaries (ncc_afile), so a failure leaves no file;
 * the directories made for it are removed again on failure (those that
 * stayed empty), so a failed command leaves the tree as it found it.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

ncc_status cli_out_parents(const char *path, cli_made_dirs *m) {
  memset(m, 0, sizeof *m);
  if (!path || strcmp(path, "-") == 0) return NCC_OK;
  size_t len = strlen(path);
  char *dir = ncc_malloc(len + 1);
  if (!dir) return NCC_ERR_NOMEM;
  memcpy(dir, path, len + 1);
  /* each prefix ending before a '/', shortest first */
  ncc_status st = NCC_OK;
  for (size_t i = 1; i < len && !st; i++) {
    if (dir[i] != '/' || dir[i - 1] == '/') continue;
    dir[i] = '\0';
    struct stat sb;
    if (stat(dir, &sb) == 0) {
      if (!S_ISDIR(sb.st_mode))
        st = ncc_error(NCC_ERR_INPUT, "%s: cannot write '%s': '%s' is not a directory", path,
                       path, dir);
    } else if (errno != ENOENT) {
      st = ncc_error(NCC_ERR_INPUT, "%s: cannot write it: %s: %s", path, dir, strerror(errno));
    } else if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
      st = ncc_error(NCC_ERR_INPUT, "%s: cannot create directory '%s': %s", path, dir,
                     strerror(errno));
    } else if (m->n < CLI_MADE_DIRS_MAX) {
      m->dirs[m->n] = ncc_malloc(i + 1);
      if (m->dirs[m->n]) memcpy(m->dirs[m->n++], dir, i + 1);
    }
    dir[i] = '/';
  }
  ncc_free(dir, len + 1);
  if (st) cli_out_parents_done(m, st);
  return st;
}

void cli_out_parents_done(cli_made_dirs *m, ncc_status st) {
  for (int i = m->n - 1; i >= 0; i--) {
    if (st) rmdir(m->dirs[i]); /* fails, as it should, when not empty */
    ncc_free(m->dirs[i], 0);
  }
  m->n = 0;
}
