/* ir/kcache.c — the compile cache's store (ir/kcache.h) and the public
 * ncc_cache_stats / ncc_cache_clear. POSIX files only; every failure is a
 * miss or a skipped write, and errno is left to the caller's next call
 * (nothing here sets ncc_error, which would replace a real error's
 * message). */
#define _GNU_SOURCE /* mkostemp */
#include "kcache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ir.h"
#include "sha256.h"

static const char MAGIC[8] = "NCCKOBJ";
#define SUFFIX ".ncck"
#define TMP_MARK ".ncck.tmp"

static void put_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void put_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t get_u32(const uint8_t *p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; i--) v = v << 8 | p[i];
  return v;
}
static uint64_t get_u64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

/* DIR/<hex>.ncck into buf; false when it does not fit. */
static bool entry_path(const char *dir, const uint8_t key[32], char *buf, size_t cap) {
  char hex[65];
  ncc_sha256_hex(key, hex);
  int n = snprintf(buf, cap, "%s/%s" SUFFIX, dir, hex);
  return n > 0 && (size_t)n < cap;
}

/* read() all of n bytes (false on a short read or an error). */
static bool read_all(int fd, void *buf, size_t n) {
  uint8_t *p = buf;
  while (n > 0) {
    ssize_t r = read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= (size_t)r;
  }
  return true;
}

static bool write_all(int fd, const void *buf, size_t n) {
  const uint8_t *p = buf;
  while (n > 0) {
    ssize_t r = write(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= (size_t)r;
  }
  return true;
}

bool ncc_kcache_get(const char *dir, const uint8_t key[32], void **data, size_t *len) {
  *data = NULL;
  *len = 0;
  char path[4096];
  if (!dir || !*dir || !entry_path(dir, key, path, sizeof path)) return false;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false; /* absent (or unreadable: nothing to do) */
  uint8_t h[NCC_KCACHE_HEADER];
  struct stat st;
  bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
            st.st_size >= NCC_KCACHE_HEADER && read_all(fd, h, sizeof h) &&
            memcmp(h, MAGIC, 8) == 0 && get_u32(h + 8) == NCC_KCACHE_FORMAT &&
            get_u32(h + 12) == NCC_KCACHE_HEADER && memcmp(h + 16, key, 32) == 0 &&
            get_u64(h + 48) == (uint64_t)st.st_size - NCC_KCACHE_HEADER &&
            get_u64(h + 48) > 0 && get_u64(h + 48) < ((uint64_t)1 << 40);
  void *buf = NULL;
  size_t n = ok ? (size_t)get_u64(h + 48) : 0;
  bool nomem = false;
  if (ok) {
    buf = ncc_malloc(n);
    nomem = !buf;
    ok = buf && read_all(fd, buf, n);
  }
  if (ok) {
    uint8_t sum[32];
    ncc_sha256_sum(buf, n, sum);
    ok = memcmp(sum, h + 56, 32) == 0;
  }
  close(fd);
  if (!ok) {
    ncc_free(buf, n);
    /* never trusted again: a later compile writes a good one */
    if (!nomem) unlink(path);
    return false;
  }
  /* a hit is a use: eviction goes by modification time */
  utimensat(AT_FDCWD, path, NULL, 0);
  *data = buf;
  *len = n;
  return true;
}

/* mkdir -p, quietly. */
static void make_dirs(const char *dir) {
  char p[4096];
  int n = snprintf(p, sizeof p, "%s", dir);
  if (n <= 0 || (size_t)n >= sizeof p) return;
  for (char *s = p + 1; *s; s++) {
    if (*s != '/') continue;
    *s = 0;
    mkdir(p, 0777);
    *s = '/';
  }
  mkdir(p, 0777);
}

bool ncc_kcache_put(const char *dir, const uint8_t key[32], const void *data, size_t len) {
  char path[4096], tmp[4200];
  if (!dir || !*dir || !len || !entry_path(dir, key, path, sizeof path)) return false;
  int n = snprintf(tmp, sizeof tmp, "%s" ".tmp%ld.XXXXXX", path, (long)getpid());
  if (n <= 0 || (size_t)n >= sizeof tmp) return false;
  int fd = mkostemp(tmp, O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) {
    make_dirs(dir);
    snprintf(tmp, sizeof tmp, "%s" ".tmp%ld.XXXXXX", path, (long)getpid());
    fd = mkostemp(tmp, O_CLOEXEC);
  }
  if (fd < 0) return false;
  uint8_t h[NCC_KCACHE_HEADER] = {0};
  memcpy(h, MAGIC, 8);
  put_u32(h + 8, NCC_KCACHE_FORMAT);
  put_u32(h + 12, NCC_KCACHE_HEADER);
  memcpy(h + 16, key, 32);
  put_u64(h + 48, len);
  ncc_sha256_sum(data, len, h + 56);
  /* mkostemp makes the file 0600; entries are as shareable as the
   * directory (its mode and the umask decide) */
  mode_t um = umask(0);
  umask(um);
  fchmod(fd, 0666 & ~um);
  bool ok = write_all(fd, h, sizeof h) && write_all(fd, data, len);
  ok = close(fd) == 0 && ok;
  if (ok) ok = rename(tmp, path) == 0;
  if (!ok) unlink(tmp);
  return ok;
}

/* ---- scanning: prune, stats, clear ---- */

typedef struct entry {
  char name[96];
  int64_t mtime_ns;
  uint64_t bytes;
} entry;

static bool is_entry(const char *name) {
  size_t n = strlen(name);
  return n == 64 + strlen(SUFFIX) && strcmp(name + 64, SUFFIX) == 0 &&
         strspn(name, "0123456789abcdef") == 64;
}

static bool is_tmp(const char *name) {
  return strlen(name) > 64 && strspn(name, "0123456789abcdef") == 64 &&
         strncmp(name + 64, TMP_MARK, strlen(TMP_MARK)) == 0;
}

/* The entries of dir (and with tmp_too, temporaries), in a growing array. */
static int scan(const char *dir, bool tmp_too, entry **out, int *n_out) {
  *out = NULL;
  *n_out = 0;
  DIR *d = opendir(dir);
  if (!d) return -1;
  int n = 0, cap = 0;
  entry *v = NULL;
  struct dirent *de;
  while ((de = readdir(d))) {
    bool tmp = is_tmp(de->d_name);
    if (!is_entry(de->d_name) && !(tmp_too && tmp)) continue;
    if (strlen(de->d_name) >= sizeof v->name) continue;
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (n == cap) {
      int nc = cap ? 2 * cap : 64;
      entry *nv = ncc_realloc(v, (size_t)cap * sizeof *v, (size_t)nc * sizeof *v);
      if (!nv) break;
      v = nv;
      cap = nc;
    }
    snprintf(v[n].name, sizeof v[n].name, "%s", de->d_name);
    v[n].mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    v[n].bytes = (uint64_t)st.st_size;
    n++;
  }
  closedir(d);
  *out = v;
  *n_out = n;
  return 0;
}

static int by_mtime(const void *a, const void *b) {
  int64_t x = ((const entry *)a)->mtime_ns, y = ((const entry *)b)->mtime_ns;
  return x < y ? -1 : x > y;
}

static void remove_entry(const char *dir, const char *name) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  unlink(path);
}

void ncc_kcache_prune(const char *dir, uint64_t max_bytes) {
  if (!dir || !*dir) return;
  if (!max_bytes) max_bytes = NCC_KCACHE_DEFAULT_MAX;
  entry *v;
  int n;
  if (scan(dir, true, &v, &n) != 0) return;
  int64_t stale = ((int64_t)time(NULL) - 3600) * 1000000000;
  uint64_t total = 0;
  for (int i = 0; i < n; i++) {
    if (is_tmp(v[i].name)) {
      if (v[i].mtime_ns < stale) remove_entry(dir, v[i].name);
      v[i].bytes = 0;
      v[i].mtime_ns = INT64_MAX; /* never picked below */
    }
    total += v[i].bytes;
  }
  if (total > max_bytes) {
    qsort(v, (size_t)n, sizeof *v, by_mtime);
    uint64_t goal = max_bytes / 10 * 9;
    for (int i = 0; i < n && total > goal; i++) {
      if (!v[i].bytes) continue;
      remove_entry(dir, v[i].name);
      total -= v[i].bytes;
    }
  }
  ncc_free(v, 0);
}

ncc_status ncc_cache_stats(const char *dir, ncc_cache_info *out) {
  if (!dir || !*dir || !out)
    return ncc_error(NCC_ERR_USAGE, "ncc_cache_stats: no cache directory");
  memset(out, 0, sizeof *out);
  entry *v;
  int n;
  if (scan(dir, false, &v, &n) != 0) {
    if (errno == ENOENT) return NCC_OK; /* no cache yet: empty */
    return ncc_error(NCC_ERR_INPUT, "cannot read the cache directory '%s': %s", dir,
                     strerror(errno));
  }
  for (int i = 0; i < n; i++) out->bytes += (int64_t)v[i].bytes;
  out->entries = n;
  ncc_free(v, 0);
  return NCC_OK;
}

ncc_status ncc_cache_clear(const char *dir, int64_t *removed) {
  if (removed) *removed = 0;
  if (!dir || !*dir) return ncc_error(NCC_ERR_USAGE, "ncc_cache_clear: no cache directory");
  entry *v;
  int n;
  if (scan(dir, true, &v, &n) != 0) {
    if (errno == ENOENT) return NCC_OK;
    return ncc_error(NCC_ERR_INPUT, "cannot read the cache directory '%s': %s", dir,
                     strerror(errno));
  }
  int64_t k = 0;
  ncc_status st = NCC_OK;
  for (int i = 0; i < n; i++) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, v[i].name);
    if (unlink(path) == 0) k += is_entry(v[i].name);
    else if (errno != ENOENT && st == NCC_OK)
      st = ncc_error(NCC_ERR_INPUT, "cannot remove '%s': %s", path, strerror(errno));
  }
  ncc_free(v, 0);
  if (removed) *removed = k;
  return st;
}
