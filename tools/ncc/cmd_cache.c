/* tools/ncc/cmd_cache.c — `ncc cache stats|clear`: the compile cache's
 * directory (--cache-dir, else the environment's default, env.c) through
 * libncc's ncc_cache_stats / ncc_cache_clear, which know the entry format
 * and touch nothing else in the directory. */
#include <string.h>

#include "cli.h"

ncc_status cmd_cache(const cli_opts *o) {
  const char *action = o->model;
  bool stats = strcmp(action, "stats") == 0, clear = strcmp(action, "clear") == 0;
  char t[CLI_TEXT_MAX];
  if (!stats && !clear)
    return ncc_error(NCC_ERR_USAGE, "unknown cache action '%s' (stats or clear; see 'ncc "
                     "cache --help')", cli_text(action, t, sizeof t));
  const char *dir = o->lib.cache_dir;
  if (!dir)
    return ncc_error(NCC_ERR_USAGE, "no compile cache: NCC_CACHE=0, --no-cache or no HOME "
                     "(give --cache-dir DIR)");
  if (clear) {
    int64_t n;
    ncc_status st = ncc_cache_clear(dir, &n);
    if (st) return st;
    printf("removed %lld entries from %s\n", (long long)n, cli_text(dir, t, sizeof t));
    return NCC_OK;
  }
  ncc_cache_info info;
  ncc_status st = ncc_cache_stats(dir, &info);
  if (st) return st;
  printf("directory  %s\nentries    %lld\nbytes      %lld\n", cli_text(dir, t, sizeof t),
         (long long)info.entries, (long long)info.bytes);
  return NCC_OK;
}
