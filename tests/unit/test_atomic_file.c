/* tests/unit/test_atomic_file.c — the atomic writer (ir/atomic_file.c):
 * final mode 0666 & ~umask, replacing an existing file, an aborted write
 * leaves nothing, a NAME_MAX-long target name works, the signal-time
 * cleanup removes registered temporaries, and the sweep removes leftovers
 * of a dead pid but not of a live one. The oracle is the file system
 * (stat, readdir), not ncc.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "ir/ir.h"
#include "ir/atomic_file.h"

static char dir[64];

static int entries(void) { /* besides . and .. */
  DIR *d = opendir(dir);
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
  if (d) closedir(d);
  return n;
}

static int setup(void **state) {
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/ncc-test-afile-XXXXXX");
  return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

static void test_mode_and_replace(void **state) {
  (void)state;
  char p[128];
  snprintf(p, sizeof p, "%s/out.bin", dir);
  mode_t old = umask(077);
  assert_int_equal(ncc_atomic_write(p, "abc", 3), NCC_OK);
  struct stat sb;
  assert_int_equal(stat(p, &sb), 0);
  assert_int_equal(sb.st_mode & 0777, 0600);
  umask(022);
  assert_int_equal(ncc_atomic_write(p, "hello", 5), NCC_OK); /* replace */
  assert_int_equal(stat(p, &sb), 0);
  assert_int_equal(sb.st_mode & 0777, 0644);
  assert_int_equal(sb.st_size, 5);
  umask(old);
  assert_int_equal(entries(), 1);
}

static void test_abort_leaves_nothing(void **state) {
  (void)state;
  char p[128];
  snprintf(p, sizeof p, "%s/never", dir);
  ncc_afile a;
  assert_int_equal(ncc_afile_open(&a, p), NCC_OK);
  fputs("partial", a.f);
  ncc_afile_abort(&a);
  assert_int_equal(entries(), 0);
}

static void test_long_name(void **state) {
  (void)state;
  char p[400];
  int n = snprintf(p, sizeof p, "%s/", dir);
  memset(p + n, 'n', 255);
  p[n + 255] = 0; /* NAME_MAX */
  assert_int_equal(ncc_atomic_write(p, "x", 1), NCC_OK);
  assert_int_equal(ncc_atomic_write(p, "y", 1), NCC_OK); /* via a hidden name */
  assert_int_equal(access(p, F_OK), 0);
  assert_int_equal(entries(), 1);
}

static void test_signal_cleanup(void **state) {
  (void)state;
  char *w = NULL;
  int slot;
  char p[128];
  snprintf(p, sizeof p, "%s/lib.so", dir);
  assert_int_equal(ncc_atomic_workdir(p, &w, &slot), NCC_OK);
  char f[256];
  snprintf(f, sizeof f, "%s/glue.c", w);
  FILE *fp = fopen(f, "w");
  assert_non_null(fp);
  fclose(fp);
  int fs = ncc_atomic_register(f, false);
  assert_true(fs >= 0);
  assert_int_equal(entries(), 1);
  ncc_atomic_cleanup_signal(SIGTERM);
  assert_int_equal(entries(), 0);
  ncc_atomic_unregister(fs);
  ncc_atomic_unregister(slot);
  ncc_free(w, 0);
}

static void test_sweep(void **state) {
  (void)state;
  pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, NULL, 0); /* a pid that is gone */
  char p[160];
  snprintf(p, sizeof p, "%s/.ncc-%ld-abcdef", dir, (long)child);
  assert_int_equal(mkdir(p, 0700), 0);
  snprintf(p, sizeof p, "%s/.ncc-%ld-abcdef/out", dir, (long)child);
  FILE *fp = fopen(p, "w");
  assert_non_null(fp);
  fclose(fp);
  snprintf(p, sizeof p, "%s/.ncc-%ld-zzzzzz", dir, (long)getppid()); /* alive */
  fp = fopen(p, "w");
  assert_non_null(fp);
  fclose(fp);
  snprintf(p, sizeof p, "%s/.ncc-run-1-y.npy", dir); /* not ours: kept */
  fp = fopen(p, "w");
  assert_non_null(fp);
  fclose(fp);
  assert_int_equal(entries(), 3);
  ncc_atomic_sweep(dir);
  assert_int_equal(entries(), 2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_mode_and_replace, setup, teardown),
      cmocka_unit_test_setup_teardown(test_abort_leaves_nothing, setup, teardown),
      cmocka_unit_test_setup_teardown(test_long_name, setup, teardown),
      cmocka_unit_test_setup_teardown(test_signal_cleanup, setup, teardown),
      cmocka_unit_test_setup_teardown(test_sweep, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
