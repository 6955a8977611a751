/* tests/unit/test_npy.c — .npy reading and writing (runtime/npy.c).
 *
 * Round trips of every dtype and of scalars, the header variants numpy and
 * other writers produce (format 1.0/2.0/3.0, key order, quoting, '=' and
 * '|' byte orders), and a table of malformed files, each of which must be
 * refused with the right status and a message that names the file. An
 * allocator hook checks that out-of-memory is reported, not crashed on, and
 * that a lying header cannot make the reader allocate what the file lacks.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "ir/ir.h"

/* ---- a scratch directory per test run ---- */
static char tmpdir[64];

static int setup_dir(void **state) {
  (void)state;
  snprintf(tmpdir, sizeof tmpdir, "/tmp/ncc-test-npy-XXXXXX");
  return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_dir(void **state) {
  (void)state;
  DIR *d = opendir(tmpdir);
  if (d) {
    struct dirent *e;
    char p[512];
    while ((e = readdir(d))) {
      if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
      snprintf(p, sizeof p, "%s/%s", tmpdir, e->d_name);
      unlink(p);
    }
    closedir(d);
  }
  rmdir(tmpdir);
  return 0;
}

static const char *path_in_tmp(const char *name, char *buf, size_t cap) {
  snprintf(buf, cap, "%s/%s", tmpdir, name);
  return buf;
}

/* Files in the scratch directory (to see that no temporary is left). */
static int count_files(void) {
  DIR *d = opendir(tmpdir);
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
  if (d) closedir(d);
  return n;
}

/* ---- building .npy images by hand ---- */
typedef struct image {
  unsigned char buf[4096];
  size_t len;
} image;

/* version major 1 uses a u16 header length, 2 and 3 a u32. hlen 0 means
 * strlen(header). */
static void make_npy_n(image *im, int major, const char *header, size_t hlen,
                       const void *data, size_t dlen) {
  if (!hlen) hlen = strlen(header);
  size_t lb = major == 1 ? 2 : 4;
  memcpy(im->buf, "\x93NUMPY", 6);
  im->buf[6] = (unsigned char)major;
  im->buf[7] = 0;
  for (size_t i = 0; i < lb; i++)
    im->buf[8 + i] = (unsigned char)(hlen >> (8 * i));
  memcpy(im->buf + 8 + lb, header, hlen);
  memcpy(im->buf + 8 + lb + hlen, data, dlen);
  im->len = 8 + lb + hlen + dlen;
}

static void make_npy(image *im, int major, const char *header,
                     const void *data, size_t dlen) {
  make_npy_n(im, major, header, 0, data, dlen);
}

static void write_file(const char *path, const void *b, size_t n) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(b, 1, n, f), n);
  assert_int_equal(fclose(f), 0);
}

static const float f6[6] = {1, -2, 3.5f, 0, 1e-3f, 6};

/* ---- round trips ---- */
static void fill_pattern(ncc_tensor *t) {
  unsigned char *p = t->data;
  size_t n = ncc_tensor_nbytes(t);
  for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(i * 37 + 11);
  if (t->dtype == NCC_DT_BOOL)
    for (size_t i = 0; i < n; i++) p[i] &= 1;
}

static void roundtrip(ncc_dtype dt, int rank, const int64_t *dims) {
  char path[256];
  path_in_tmp("rt.npy", path, sizeof path);
  ncc_tensor t, r;
  assert_int_equal(ncc_tensor_alloc(&t, dt, rank, dims), NCC_OK);
  fill_pattern(&t);
  assert_int_equal(ncc_npy_write(path, &t), NCC_OK);
  assert_int_equal(ncc_npy_read(path, &r), NCC_OK);
  assert_int_equal(r.dtype, dt);
  assert_int_equal(r.rank, rank);
  for (int i = 0; i < rank; i++) assert_int_equal(r.dims[i], dims[i]);
  assert_int_equal(ncc_tensor_nbytes(&r), ncc_tensor_nbytes(&t));
  if (ncc_tensor_nbytes(&t))
    assert_memory_equal(r.data, t.data, ncc_tensor_nbytes(&t));
  assert_true(r.owns_data);
  ncc_tensor_free(&t);
  ncc_tensor_free(&r);
  assert_int_equal(count_files(), 1); /* no temporary left behind */
  unlink(path);
}

static void test_roundtrip_every_dtype(void **state) {
  (void)state;
  const int64_t dims[2] = {2, 3};
  for (int dt = NCC_DT_F32; dt < NCC_DT_COUNT; dt++)
    roundtrip((ncc_dtype)dt, 2, dims);
}

static void test_roundtrip_shapes(void **state) {
  (void)state;
  const int64_t one[1] = {5}, empty[2] = {0, 3};
  const int64_t r8[8] = {1, 2, 1, 2, 1, 2, 1, 2};
  roundtrip(NCC_DT_F32, 0, NULL); /* scalar () */
  roundtrip(NCC_DT_I64, 1, one);  /* (5,) */
  roundtrip(NCC_DT_F32, 2, empty);
  roundtrip(NCC_DT_U8, 8, r8);
}

/* The written header is what numpy writes: format 1.0, padded to 64. */
static void test_written_header(void **state) {
  (void)state;
  char path[256];
  path_in_tmp("h.npy", path, sizeof path);
  const int64_t dims[1] = {3};
  ncc_tensor t;
  assert_int_equal(ncc_tensor_alloc(&t, NCC_DT_F32, 1, dims), NCC_OK);
  assert_int_equal(ncc_npy_write(path, &t), NCC_OK);
  ncc_tensor_free(&t);
  unsigned char b[256];
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  size_t n = fread(b, 1, sizeof b, f);
  fclose(f);
  unlink(path);
  /* numpy writes exactly these 128 + 12 bytes for np.zeros(3, 'f4') */
  assert_int_equal(n, 128 + 12);
  assert_memory_equal(b, "\x93NUMPY\x01\x00", 8);
  size_t hlen = (size_t)b[8] | (size_t)b[9] << 8;
  assert_int_equal(10 + hlen, 128);
  assert_int_equal(b[127], '\n');
  const char *want =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }";
  assert_memory_equal(b + 10, want, strlen(want));
}

/* ---- header variants other writers produce ---- */
static void expect_ok(const image *im, ncc_dtype dt, int rank,
                      const int64_t *dims) {
  ncc_tensor t;
  ncc_status st = ncc_npy_read_buffer(im->buf, im->len, "v.npy", &t);
  if (st) fail_msg("unexpected error: %s", ncc_error_message());
  assert_int_equal(t.dtype, dt);
  assert_int_equal(t.rank, rank);
  for (int i = 0; i < rank; i++) assert_int_equal(t.dims[i], dims[i]);
  ncc_tensor_free(&t);
}

static void test_header_variants(void **state) {
  (void)state;
  image im;
  const int64_t d23[2] = {2, 3}, d6[1] = {6};
  make_npy(&im, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }          \n", f6, 24);
  expect_ok(&im, NCC_DT_F32, 2, d23);
  make_npy(&im, 2, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", f6, 24);
  expect_ok(&im, NCC_DT_F32, 2, d23);
  make_npy(&im, 3, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", f6, 24);
  expect_ok(&im, NCC_DT_F32, 2, d23);
  /* any key order, no spaces, double quotes, no trailing comma */
  make_npy(&im, 1, "{\"shape\":(6,),\"fortran_order\":False,\"descr\":\"=f4\"}", f6, 24);
  expect_ok(&im, NCC_DT_F32, 1, d6);
  /* Python 2 long suffix, (2,3,) trailing comma */
  make_npy(&im, 1, "{'descr':'<i4','fortran_order':False,'shape':(2L,3L,)}", f6, 24);
  expect_ok(&im, NCC_DT_I32, 2, d23);
  /* one-byte types with any byte-order mark */
  static const char *const u1[] = {"|u1", "<u1", "=u1", ">u1"};
  for (int i = 0; i < 4; i++) {
    char h[128];
    snprintf(h, sizeof h, "{'descr': '%s', 'fortran_order': False, 'shape': (6,), }", u1[i]);
    make_npy(&im, 1, h, f6, 6);
    expect_ok(&im, NCC_DT_U8, 1, d6);
  }
  make_npy(&im, 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (6,), }", "\1\0\1\0\1\0", 6);
  expect_ok(&im, NCC_DT_BOOL, 1, d6);
  make_npy(&im, 1, "{'descr': '<i1', 'fortran_order': False, 'shape': (6,), }", f6, 6);
  expect_ok(&im, NCC_DT_I8, 1, d6);
  make_npy(&im, 1, "{'descr': '<f2', 'fortran_order': False, 'shape': (2,3), }", f6, 12);
  expect_ok(&im, NCC_DT_F16, 2, d23);
  make_npy(&im, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", f6, 24);
  const int64_t d3[1] = {3};
  expect_ok(&im, NCC_DT_F64, 1, d3);
  make_npy(&im, 1, "{'descr': '<i8', 'fortran_order': False, 'shape': (), }", f6, 8);
  expect_ok(&im, NCC_DT_I64, 0, NULL);
}

static void test_read_values(void **state) {
  (void)state;
  image im;
  make_npy(&im, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", f6, 24);
  ncc_tensor t;
  assert_int_equal(ncc_npy_read_buffer(im.buf, im.len, "x.npy", &t), NCC_OK);
  assert_memory_equal(t.data, f6, 24);
  ncc_tensor_free(&t);
}

/* ---- malformed input: status, and a message naming the file ---- */
typedef struct bad_case {
  const char *what;
  int major;          /* 0: `header` is the whole file, raw */
  const char *header;
  size_t hlen;        /* bytes of `header`; 0: strlen */
  size_t data_len;    /* zero bytes of data after the header */
  ncc_status want;
} bad_case;

#define HDR(d, f, s) \
  "{'descr': '" d "', 'fortran_order': " f ", 'shape': " s ", }", 0
/* A literal that may hold NUL bytes, with its exact length. */
#define BYTES(s) s, sizeof(s) - 1

static const bad_case bad_cases[] = {
    {"empty", 0, BYTES(""), 0, NCC_ERR_INPUT},
    {"bad magic", 0, BYTES("\x93NUMPX\x01\x00\x10\x00{}"), 0, NCC_ERR_INPUT},
    {"magic only", 0, BYTES("\x93NUMPY"), 0, NCC_ERR_INPUT},
    {"no header length", 0, BYTES("\x93NUMPY\x01\x00\x05"), 0, NCC_ERR_INPUT},
    {"header longer than file", 0, BYTES("\x93NUMPY\x01\x00\x50\x00{'descr'"), 0, NCC_ERR_INPUT},
    {"huge header length", 0, BYTES("\x93NUMPY\x02\x00\xff\xff\xff\xff{"), 0, NCC_ERR_INPUT},
    {"version 4.0", 0, BYTES("\x93NUMPY\x04\x00\x02\x00{}"), 0, NCC_ERR_UNSUPPORTED},
    {"not a dict", 1, "['descr', '<f4']", 0, 0, NCC_ERR_INPUT},
    {"missing descr", 1, "{'fortran_order': False, 'shape': (1,), }", 0, 4, NCC_ERR_INPUT},
    {"missing shape", 1, "{'descr': '<f4', 'fortran_order': False, }", 0, 4, NCC_ERR_INPUT},
    {"missing fortran_order", 1, "{'descr': '<f4', 'shape': (1,), }", 0, 4, NCC_ERR_INPUT},
    {"garbage shape", 1, HDR("<f4", "False", "(2, x)"), 8, NCC_ERR_INPUT},
    {"shape not a tuple", 1, HDR("<f4", "False", "3"), 12, NCC_ERR_INPUT},
    {"negative dim", 1, HDR("<f4", "False", "(-1, 3)"), 12, NCC_ERR_INPUT},
    {"unclosed shape", 1, HDR("<f4", "False", "(1, 2"), 8, NCC_ERR_INPUT},
    {"dim overflows int64", 1, HDR("<f4", "False", "(99999999999999999999,)"), 4, NCC_ERR_INPUT},
    {"size overflows", 1, HDR("<f4", "False", "(4611686018427387904, 4)"), 4, NCC_ERR_INPUT},
    {"data shorter", 1, HDR("<f4", "False", "(2, 3)"), 20, NCC_ERR_INPUT},
    {"data longer", 1, HDR("<f4", "False", "(2, 3)"), 28, NCC_ERR_INPUT},
    {"huge shape, no data", 1, HDR("<f4", "False", "(1073741824,)"), 4, NCC_ERR_INPUT},
    {"big-endian", 1, HDR(">f4", "False", "(1,)"), 4, NCC_ERR_UNSUPPORTED},
    {"fortran order", 1, HDR("<f4", "True", "(1,)"), 4, NCC_ERR_UNSUPPORTED},
    {"fortran_order not bool", 1, HDR("<f4", "'no'", "(1,)"), 4, NCC_ERR_INPUT},
    {"complex", 1, HDR("<c8", "False", "(1,)"), 8, NCC_ERR_UNSUPPORTED},
    {"unicode", 1, HDR("<U3", "False", "(1,)"), 12, NCC_ERR_UNSUPPORTED},
    {"void4 (not bf16)", 1, HDR("<V4", "False", "(1,)"), 4, NCC_ERR_UNSUPPORTED},
    {"float128", 1, HDR("<f16", "False", "(1,)"), 16, NCC_ERR_UNSUPPORTED},
    {"structured", 1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", 0, 4, NCC_ERR_UNSUPPORTED},
    {"rank 9", 1, HDR("<f4", "False", "(1,1,1,1,1,1,1,1,1)"), 4, NCC_ERR_UNSUPPORTED},
    {"unterminated string", 1, "{'descr': '<f4", 0, 0, NCC_ERR_INPUT},
    {"duplicate key", 1, "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 0, 4, NCC_ERR_INPUT},
    {"unknown key", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", 0, 4, NCC_ERR_INPUT},
    {"unclosed dict", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)", 0, 4, NCC_ERR_INPUT},
    {"text after dict", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), } junk", 0, 4, NCC_ERR_INPUT},
    {"NUL in header", 1, BYTES("{'descr': '<f\0', 'fortran_order': False, 'shape': (1,), }"), 4, NCC_ERR_INPUT},
    {"Falsey", 1, HDR("<f4", "Falsey", "(1,)"), 4, NCC_ERR_INPUT},
};

static ncc_status read_case(const bad_case *c, image *im) {
  static const unsigned char zeros[64];
  if (c->major == 0) {
    memcpy(im->buf, c->header, c->hlen);
    im->len = c->hlen;
  } else {
    make_npy_n(im, c->major, c->header, c->hlen, zeros, c->data_len);
  }
  ncc_tensor t;
  memset(&t, 0x5a, sizeof t);
  ncc_status st = ncc_npy_read_buffer(im->buf, im->len, "bad.npy", &t);
  if (st) {
    assert_null(t.data); /* nothing allocated, nothing to free */
  } else {
    ncc_tensor_free(&t);
  }
  return st;
}

static void test_malformed_buffers(void **state) {
  (void)state;
  image im;
  for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
    const bad_case *c = &bad_cases[i];
    ncc_status st = read_case(c, &im);
    if (st != c->want)
      fail_msg("case '%s': status %d, want %d (%s)", c->what, st, c->want,
               ncc_error_message());
    if (strncmp(ncc_error_message(), "bad.npy: ", 9) != 0)
      fail_msg("case '%s': message does not name the file: %s", c->what,
               ncc_error_message());
    assert_null(strchr(ncc_error_message(), '\n'));
  }
}

/* The same corpus through files on disk (a different code path). */
static void test_malformed_files(void **state) {
  (void)state;
  image im;
  char path[256];
  path_in_tmp("bad.npy", path, sizeof path);
  for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
    const bad_case *c = &bad_cases[i];
    ncc_status want = read_case(c, &im);
    write_file(path, im.buf, im.len);
    ncc_tensor t;
    ncc_status st = ncc_npy_read(path, &t);
    if (st != want)
      fail_msg("file case '%s': status %d, want %d (%s)", c->what, st, want,
               ncc_error_message());
    if (strncmp(ncc_error_message(), path, strlen(path)) != 0)
      fail_msg("file case '%s': message does not name the file: %s", c->what,
               ncc_error_message());
    assert_null(t.data);
  }
  unlink(path);
}

static void test_file_errors(void **state) {
  (void)state;
  ncc_tensor t;
  assert_int_equal(ncc_npy_read("/nonexistent/x.npy", &t), NCC_ERR_INPUT);
  assert_non_null(strstr(ncc_error_message(), "/nonexistent/x.npy"));
  assert_int_equal(ncc_npy_read(tmpdir, &t), NCC_ERR_INPUT);
  assert_non_null(strstr(ncc_error_message(), "directory"));
}

/* ---- writing failures ---- */
static void test_write_errors(void **state) {
  (void)state;
  const int64_t dims[1] = {2};
  ncc_tensor t;
  assert_int_equal(ncc_tensor_alloc(&t, NCC_DT_F32, 1, dims), NCC_OK);
  assert_int_equal(ncc_npy_write("/nonexistent/dir/y.npy", &t), NCC_ERR_INPUT);
  assert_non_null(strstr(ncc_error_message(), "/nonexistent/dir/y.npy"));
  /* Overwriting replaces the old file atomically; no temporary remains. */
  char path[256];
  path_in_tmp("y.npy", path, sizeof path);
  write_file(path, "old", 3);
  ((float *)t.data)[1] = 7;
  assert_int_equal(ncc_npy_write(path, &t), NCC_OK);
  assert_int_equal(count_files(), 1);
  ncc_tensor r;
  assert_int_equal(ncc_npy_read(path, &r), NCC_OK);
  assert_true(((float *)r.data)[1] == 7);
  ncc_tensor_free(&r);
  /* A tensor ncc cannot describe is refused before touching the disk. */
  ncc_tensor bad = t;
  bad.dtype = NCC_DT_UNDEF;
  assert_int_equal(ncc_npy_write(path, &bad), NCC_ERR_USAGE);
  ncc_tensor_free(&t);
  unlink(path);
  assert_int_equal(count_files(), 0);
}

/* ---- allocation: failures are reported, and headers cannot make the
 * reader allocate more than the file holds ---- */
typedef struct alloc_probe {
  long calls, fail_at; /* fail the fail_at-th allocation (1-based), 0 never */
  size_t largest;
} alloc_probe;

static void *probe_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  alloc_probe *p = ud;
  (void)osize;
  if (nsize == 0) {
    free(ptr);
    return NULL;
  }
  p->calls++;
  if (nsize > p->largest) p->largest = nsize;
  if (p->fail_at && p->calls == p->fail_at) return NULL;
  return realloc(ptr, nsize);
}

static void test_no_allocation_from_lying_header(void **state) {
  (void)state;
  image im;
  char path[256];
  path_in_tmp("lie.npy", path, sizeof path);
  make_npy_n(&im, 1, HDR("<f8", "False", "(100000000,)"), f6, 8);
  write_file(path, im.buf, im.len);
  alloc_probe p = {0, 0, 0};
  ncc_set_allocator(probe_alloc, &p);
  ncc_tensor t;
  ncc_status st = ncc_npy_read(path, &t);
  ncc_set_allocator(NULL, NULL);
  assert_int_equal(st, NCC_ERR_INPUT);
  assert_true(p.largest < 1 << 20);
  unlink(path);
}

static void test_out_of_memory(void **state) {
  (void)state;
  char path[256];
  path_in_tmp("oom.npy", path, sizeof path);
  const int64_t dims[2] = {4, 4};
  ncc_tensor t;
  assert_int_equal(ncc_tensor_alloc(&t, NCC_DT_F32, 2, dims), NCC_OK);
  assert_int_equal(ncc_npy_write(path, &t), NCC_OK);
  /* Fail each allocation in turn until a run needs no more. */
  for (long k = 1; k < 50; k++) {
    alloc_probe p = {0, k, 0};
    ncc_set_allocator(probe_alloc, &p);
    ncc_tensor r;
    ncc_status st = ncc_npy_read(path, &r);
    ncc_status sw = ncc_npy_write(path, &t);
    ncc_set_allocator(NULL, NULL);
    if (st == NCC_OK) ncc_tensor_free(&r);
    else assert_int_equal(st, NCC_ERR_NOMEM);
    assert_true(sw == NCC_OK || sw == NCC_ERR_NOMEM);
    if (p.calls < k) break; /* nothing failed: every path covered */
  }
  ncc_tensor_free(&t);
  unlink(path);
  assert_int_equal(count_files(), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_roundtrip_every_dtype),
      cmocka_unit_test(test_roundtrip_shapes),
      cmocka_unit_test(test_written_header),
      cmocka_unit_test(test_header_variants),
      cmocka_unit_test(test_read_values),
      cmocka_unit_test(test_malformed_buffers),
      cmocka_unit_test(test_malformed_files),
      cmocka_unit_test(test_file_errors),
      cmocka_unit_test(test_write_errors),
      cmocka_unit_test(test_no_allocation_from_lying_header),
      cmocka_unit_test(test_out_of_memory),
  };
  return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
