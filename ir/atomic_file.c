/* ir/atomic_file.c — atomic output files, their temporaries' registry
 * and the sweep of temporaries a killed ncc left (see atomic_file.h).
 *
 * Why O_TMPFILE first: an unnamed file vanishes with its last descriptor,
 * so even SIGKILL leaves nothing; linkat() then names it. It cannot replace
 * an existing file, so then it is linked under a hidden name and renamed,
 * a window of two system calls. Without O_TMPFILE (or /proc) the file is
 * created under the hidden name directly. Hidden names are short
 * (".ncc-<pid>-XXXXXX") so that any name legal as the target is legal for
 * them, and carry the pid so a later run can tell a dead owner's leftovers.
 */
#define _GNU_SOURCE
#include "atomic_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../ir/ir.h"

/* ---- the registry (read by a signal handler: fixed storage only) ---- */

#define REG_SLOTS 128
#define REG_PATH 4096

static char reg_path[REG_SLOTS][REG_PATH];
static volatile sig_atomic_t reg_kind[REG_SLOTS]; /* 0 free, 1 file, 2 dir */
static volatile sig_atomic_t reg_child;
static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;

int ncc_atomic_register(const char *path, bool is_dir) {
  size_t len = strlen(path);
  if (len >= REG_PATH) return -1;
  pthread_mutex_lock(&reg_mu);
  int slot = -1;
  for (int i = 0; i < REG_SLOTS && slot < 0; i++)
    if (!reg_kind[i]) slot = i;
  if (slot >= 0) {
    memcpy(reg_path[slot], path, len + 1);
    __atomic_signal_fence(__ATOMIC_SEQ_CST); /* the path before the flag */
    reg_kind[slot] = is_dir ? 2 : 1;
  }
  pthread_mutex_unlock(&reg_mu);
  return slot;
}

void ncc_atomic_unregister(int slot) {
  if (slot >= 0 && slot < REG_SLOTS) reg_kind[slot] = 0;
}

void ncc_atomic_set_child(long pid) { reg_child = (sig_atomic_t)pid; }

void ncc_atomic_cleanup_signal(int sig) {
  pid_t child = (pid_t)reg_child;
  if (child > 0) {
    /* The compiler runs in its own process group: stop all of it before
     * emptying the directory it writes into. */
    kill(-child, sig);
    /* A compiler may catch the signal or miss it (a shell script between
     * two commands forks the next one after the signal went by); give
     * the group two seconds, then SIGKILL it, so ncc never waits on it. */
    bool gone = false;
    for (int i = 0; i < 200 && !gone; i++) {
      pid_t r = waitpid(child, NULL, WNOHANG);
      gone = r == child || (r < 0 && errno != EINTR);
      if (!gone) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
      }
    }
    /* SIGKILL for a leader still running and for whatever of the group
     * outlived its leader: either would still write into the directory
     * about to be emptied (the group id cannot be reused while any member
     * lives); a killed leader is reaped, so it has stopped writing */
    kill(-child, SIGKILL);
    while (!gone && waitpid(child, NULL, 0) < 0 && errno == EINTR) {
    }
  }
  for (int i = 0; i < REG_SLOTS; i++)
    if (reg_kind[i] == 1) unlink(reg_path[i]);
  for (int i = 0; i < REG_SLOTS; i++)
    if (reg_kind[i] == 2) rmdir(reg_path[i]);
}

/* ---- names ---- */

/* The directory part of `path` ("." when none), ncc_malloc'd. */
static char *dir_of(const char *path) {
  const char *slash = strrchr(path, '/');
  size_t n = !slash ? 1 : slash == path ? 1 : (size_t)(slash - path);
  char *d = ncc_malloc(n + 1);
  if (!d) return NULL;
  if (!slash) memcpy(d, ".", 2);
  else {
    memcpy(d, slash == path ? "/" : path, n);
    d[n] = 0;
  }
  return d;
}

/* "<dir>/.ncc-<pid>-XXXXXX" with XXXXXX still to fill. */
static char *hidden_name(const char *dir, size_t *xpos) {
  size_t n = strlen(dir) + 40;
  char *s = ncc_malloc(n);
  if (!s) return NULL;
  int k = snprintf(s, n, "%s/.ncc-%ld-XXXXXX", dir, (long)getpid());
  *xpos = (size_t)k - 6;
  return s;
}

static void fill_random(char *x) {
  static const char al[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  static uint64_t counter;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t z = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^
               __atomic_add_fetch(&counter, 0x9e3779b97f4a7c15ull,
                                  __ATOMIC_RELAXED);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  for (int i = 0; i < 6; i++, z /= 62) x[i] = al[z % 62];
}

static ncc_status io_error(const char *path, const char *what, int err) {
  return ncc_error(err == ENOMEM ? NCC_ERR_NOMEM : NCC_ERR_INPUT, "%s: %s: %s",
                   path, what,
                   err ? strerror(err) : "I/O error");
}

/* What create_hidden makes at the fresh name. */
typedef enum { HIDDEN_FILE, HIDDEN_DIR, HIDDEN_LINK } hidden_kind;

/* Create a fresh hidden name in dir, registered for signal cleanup before
 * it exists: a file (mode 0666 & ~umask, through open's umask; returns its
 * fd), a directory (0700; returns 0) or a hard link to link_from (an
 * unnamed file's /proc path; returns 0). -1 with errno on failure. */
static int create_hidden(const char *dir, hidden_kind kind, const char *link_from,
                         char **out, int *slot) {
  size_t xpos;
  char *name = hidden_name(dir, &xpos);
  *out = NULL;
  *slot = -1;
  if (!name) {
    errno = ENOMEM;
    return -1;
  }
  for (int tries = 0; tries < 100; tries++) {
    fill_random(name + xpos);
    /* registered first: a signal right after creation still finds it */
    *slot = ncc_atomic_register(name, kind == HIDDEN_DIR);
    int fd = kind == HIDDEN_DIR ? mkdir(name, 0700)
             : kind == HIDDEN_LINK
                 ? linkat(AT_FDCWD, link_from, AT_FDCWD, name, AT_SYMLINK_FOLLOW)
                 : open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      *out = name;
      return fd;
    }
    int err = errno;
    ncc_atomic_unregister(*slot);
    *slot = -1;
    if (err != EEXIST) {
      ncc_free(name, 0);
      errno = err;
      return -1;
    }
  }
  ncc_free(name, 0);
  errno = EEXIST;
  return -1;
}

/* ---- files ---- */

static bool have_proc_fd(void) {
  static int have = -1;
  if (have < 0) have = access("/proc/self/fd", X_OK) == 0;
  return have;
}

ncc_status ncc_afile_open(ncc_afile *a, const char *path) {
  memset(a, 0, sizeof *a);
  a->path = path;
  a->slot = -1;
  char *dir = dir_of(path);
  if (!dir) return NCC_ERR_NOMEM;
  int fd = -1;
#ifdef O_TMPFILE
  if (have_proc_fd()) fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
#endif
  int err = 0;
  if (fd < 0) {
    fd = create_hidden(dir, HIDDEN_FILE, NULL, &a->tmp, &a->slot);
    err = errno;
  }
  ncc_free(dir, 0);
  if (fd < 0) return io_error(path, "cannot create", err);
  a->f = fdopen(fd, "wb");
  if (!a->f) {
    err = errno;
    close(fd);
    ncc_afile_abort(a);
    return io_error(path, "cannot write", err);
  }
  return NCC_OK;
}

void ncc_afile_abort(ncc_afile *a) {
  if (a->f) fclose(a->f);
  a->f = NULL;
  if (a->tmp) { /* the slot is valid only along with the name */
    unlink(a->tmp);
    ncc_atomic_unregister(a->slot);
  }
  a->slot = -1;
  ncc_free(a->tmp, 0);
  a->tmp = NULL;
}

/* Name the unnamed file behind `fd` as `path`, replacing what is there. */
static int link_unnamed(ncc_afile *a, int fd) {
  char proc[64];
  snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
  if (linkat(AT_FDCWD, proc, AT_FDCWD, a->path, AT_SYMLINK_FOLLOW) == 0)
    return 0;
  if (errno != EEXIST) return -1;
  char *dir = dir_of(a->path);
  if (!dir) {
    errno = ENOMEM;
    return -1;
  }
  char *name;
  int slot;
  int r = create_hidden(dir, HIDDEN_LINK, proc, &name, &slot);
  ncc_free(dir, 0);
  if (r < 0) return -1;
  a->tmp = name;
  a->slot = slot;
  return rename(name, a->path);
}

ncc_status ncc_afile_commit(ncc_afile *a) {
  if (!a->f) return io_error(a->path, "cannot write", EBADF);
  errno = 0;
  bool ok = fflush(a->f) == 0 && !ferror(a->f);
  int err = errno;
  int fd = fileno(a->f);
  if (ok && !a->tmp) {
    ok = link_unnamed(a, fd) == 0;
    err = errno;
    if (ok && a->tmp) { /* renamed: the hidden name is gone */
      ncc_atomic_unregister(a->slot);
      a->slot = -1;
      ncc_free(a->tmp, 0);
      a->tmp = NULL;
    }
    errno = 0;
    if (fclose(a->f) != 0 && ok) {
      ok = false;
      err = errno;
      unlink(a->path); /* written but not safely: take it back */
    }
    a->f = NULL;
  } else if (ok) {
    errno = 0;
    ok = fclose(a->f) == 0;
    err = errno;
    a->f = NULL;
    if (ok) {
      ok = rename(a->tmp, a->path) == 0;
      err = errno;
    }
  }
  ncc_status st = ok ? NCC_OK : io_error(a->path, "cannot write", err);
  if (ok && a->tmp) {
    ncc_atomic_unregister(a->slot);
    a->slot = -1;
    ncc_free(a->tmp, 0);
    a->tmp = NULL;
  }
  ncc_afile_abort(a);
  return st;
}

ncc_status ncc_atomic_write(const char *path, const void *data, size_t len) {
  ncc_afile a;
  ncc_status st = ncc_afile_open(&a, path);
  if (st) return st;
  errno = 0;
  if (len && fwrite(data, 1, len, a.f) != len) {
    int err = errno;
    ncc_afile_abort(&a);
    return io_error(path, "cannot write", err);
  }
  return ncc_afile_commit(&a);
}

/* ---- work directories and the sweep ---- */

/* The pid in ".ncc-<pid>-..." or -1. */
static long owner_pid(const char *name) {
  if (strncmp(name, ".ncc-", 5) != 0) return -1;
  const char *p = name + 5;
  long pid = 0;
  if (*p < '0' || *p > '9') return -1;
  for (; *p >= '0' && *p <= '9'; p++) {
    pid = pid * 10 + (*p - '0');
    if (pid > 1L << 30) return -1;
  }
  return *p == '-' ? pid : -1;
}

static void remove_tree_1(int dfd, const char *name) {
  int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (sub >= 0) {
    DIR *d = fdopendir(sub);
    if (!d) {
      close(sub);
      return;
    }
    struct dirent *e;
    while ((e = readdir(d)))
      if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
        unlinkat(sub, e->d_name, 0);
    closedir(d);
    unlinkat(dfd, name, AT_REMOVEDIR);
  } else {
    unlinkat(dfd, name, 0);
  }
}

void ncc_atomic_sweep(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  long self = (long)getpid();
  struct dirent *e;
  while ((e = readdir(d))) {
    long pid = owner_pid(e->d_name);
    if (pid <= 0 || pid == self) continue;
    if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* alive */
    remove_tree_1(dirfd(d), e->d_name);
  }
  closedir(d);
}

ncc_status ncc_atomic_workdir(const char *path, char **out, int *slot) {
  *out = NULL;
  char *dir = dir_of(path);
  if (!dir) return NCC_ERR_NOMEM;
  ncc_atomic_sweep(dir);
  int r = create_hidden(dir, HIDDEN_DIR, NULL, out, slot);
  int err = errno;
  ncc_free(dir, 0);
  if (r < 0)
    return ncc_error(err == ENOMEM ? NCC_ERR_NOMEM : NCC_ERR_INPUT,
                     "%s: cannot create a temporary directory beside it: %s",
                     path, strerror(err));
  return NCC_OK;
}
