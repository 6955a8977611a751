/* runtime/npy.c — reading and writing numpy .npy files.
 *
 * The .npy format is a 6-byte magic "\x93NUMPY", a version byte pair, a
 * little-endian header length (2 bytes in 1.0, 4 in 2.0/3.0) and a Python
 * dict literal such as {'descr': '<f4', 'fortran_order': False, 'shape':
 * (2, 3), } padded with spaces; the raw array bytes follow. We parse the dict
 * with a tiny tokenizer rather than trusting its layout, because files come
 * from many writers. Anything we cannot read correctly is refused with a
 * message that starts with the file name: malformed files are NCC_ERR_INPUT,
 * well-formed ones that ncc cannot represent (big-endian, Fortran order,
 * complex, structured) are NCC_ERR_UNSUPPORTED. numpy has no bfloat16:
 * ncc's bf16 is the '<V2' form np.save writes for ml_dtypes.bfloat16.
 *
 * ncc runs on little-endian hosts only, so '<' and '=' data is used as is.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../ir/ir.h"
#include "../ir/atomic_file.h"

#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__)
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "ncc's .npy reader assumes a little-endian host");
#endif

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
/* numpy itself refuses headers above 10000 bytes by default; we allow more
 * but not so much that a corrupt length makes us allocate gigabytes. */
#define NPY_MAX_HEADER (1u << 20)

/* What the header says. */
typedef struct npy_header {
  ncc_dtype dtype;
  int rank;
  int64_t dims[NCC_MAX_RANK];
  size_t nbytes; /* data size implied by dtype and shape */
} npy_header;

/* ---- the dict tokenizer ---- */
typedef struct hparser {
  const char *p, *end;
  const char *name; /* file name for messages */
} hparser;

static void skip_ws(hparser *h) {
  while (h->p < h->end &&
         (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r'))
    h->p++;
}

static ncc_status bad_header(const hparser *h, const char *what) {
  return ncc_error(NCC_ERR_INPUT, "%s: malformed .npy header: %s", h->name,
                   what);
}

/* Consume `c` after optional whitespace. */
static bool accept(hparser *h, char c) {
  skip_ws(h);
  if (h->p < h->end && *h->p == c) {
    h->p++;
    return true;
  }
  return false;
}

/* A quoted Python string literal ('...' or "..."), without escapes (numpy
 * never writes any in the keys and dtype strings we accept). The result
 * points into the header. */
static ncc_status parse_string(hparser *h, const char **s, size_t *len) {
  skip_ws(h);
  if (h->p >= h->end || (*h->p != '\'' && *h->p != '"'))
    return bad_header(h, "expected a quoted string");
  char q = *h->p++;
  const char *start = h->p;
  while (h->p < h->end && *h->p != q) {
    if (*h->p == '\\' || *h->p == '\n' || *h->p == '\0')
      return bad_header(h, "unsupported character in a string");
    h->p++;
  }
  if (h->p >= h->end) return bad_header(h, "unterminated string");
  *s = start;
  *len = (size_t)(h->p - start);
  h->p++;
  return NCC_OK;
}

static bool match_word(hparser *h, const char *w) {
  size_t n = strlen(w);
  skip_ws(h);
  if ((size_t)(h->end - h->p) < n || memcmp(h->p, w, n) != 0) return false;
  /* The word must end here (so "Falsey" is not False). */
  if ((size_t)(h->end - h->p) > n) {
    char c = h->p[n];
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
        (c >= '0' && c <= '9') || c == '_')
      return false;
  }
  h->p += n;
  return true;
}

/* A non-negative decimal integer (an optional Python 2 'L' suffix is
 * accepted, as numpy does for old files). */
static ncc_status parse_dim(hparser *h, int64_t *out) {
  skip_ws(h);
  if (h->p < h->end && *h->p == '-')
    return bad_header(h, "negative dimension in 'shape'");
  if (h->p >= h->end || *h->p < '0' || *h->p > '9')
    return bad_header(h, "'shape' must be a tuple of integers");
  int64_t v = 0;
  while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
    int d = *h->p - '0';
    if (v > (INT64_MAX - d) / 10)
      return bad_header(h, "dimension in 'shape' is too large");
    v = v * 10 + d;
    h->p++;
  }
  if (h->p < h->end && (*h->p == 'L' || *h->p == 'l')) h->p++;
  *out = v;
  return NCC_OK;
}

/* '(' [dim (',' dim)* [',']] ')'; "()" is a scalar and "(3,)" rank 1. */
static ncc_status parse_shape(hparser *h, npy_header *hd) {
  if (!accept(h, '(')) return bad_header(h, "'shape' must be a tuple");
  hd->rank = 0;
  if (accept(h, ')')) return NCC_OK;
  for (;;) {
    int64_t d = 0;
    ncc_status st = parse_dim(h, &d);
    if (st) return st;
    if (hd->rank == NCC_MAX_RANK)
      return ncc_error(NCC_ERR_UNSUPPORTED,
                       "%s: .npy array has more than %d dimensions", h->name,
                       NCC_MAX_RANK);
    hd->dims[hd->rank++] = d;
    if (accept(h, ')')) return NCC_OK;
    if (!accept(h, ',')) return bad_header(h, "expected ',' or ')' in 'shape'");
    if (accept(h, ')')) return NCC_OK;
  }
}

/* Map a numpy type string to an ncc dtype. */
static ncc_status parse_descr(hparser *h, const char *s, size_t len,
                              ncc_dtype *out) {
  static const struct {
    char kind;
    int size;
    ncc_dtype dt;
  } types[] = {
      {'f', 4, NCC_DT_F32}, {'f', 2, NCC_DT_F16}, {'f', 8, NCC_DT_F64},
      {'i', 8, NCC_DT_I64}, {'i', 4, NCC_DT_I32}, {'i', 1, NCC_DT_I8},
      {'u', 1, NCC_DT_U8},  {'b', 1, NCC_DT_BOOL}, {'i', 2, NCC_DT_I16},
      {'u', 2, NCC_DT_U16}, {'u', 4, NCC_DT_U32},  {'u', 8, NCC_DT_U64},
      /* numpy has no bfloat16: an ml_dtypes.bfloat16 array saves as 2-byte
       * opaque elements ('<V2'), which ncc reads and writes as bf16 bits */
      {'V', 2, NCC_DT_BF16},
  };
  if (len == 3 && (s[0] == '<' || s[0] == '>' || s[0] == '=' || s[0] == '|') &&
      s[2] >= '1' && s[2] <= '9') {
    char order = s[0], kind = s[1];
    int size = s[2] - '0';
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
      if (types[i].kind != kind || types[i].size != size) continue;
      /* Byte order only matters for multi-byte types. */
      if (size > 1 && order == '>')
        return ncc_error(NCC_ERR_UNSUPPORTED,
                         "%s: big-endian .npy data ('%.*s') is not supported; "
                         "save it little-endian",
                         h->name, (int)len, s);
      if (size > 1 && order == '|' && kind != 'V')
        break; /* not a valid numpy descr */
      *out = types[i].dt;
      return NCC_OK;
    }
  }
  return ncc_error(NCC_ERR_UNSUPPORTED,
                   "%s: .npy dtype '%.*s' is not supported (ncc reads f32, "
                   "f16, f64, i8, i16, i32, i64, u8, u16, u32, u64, bool, "
                   "and '<V2' as bf16)",
                   h->name, (int)(len > 32 ? 32 : len), s);
}

static ncc_status parse_entry(hparser *h, npy_header *hd, unsigned *seen) {
  const char *key;
  size_t klen;
  ncc_status st = parse_string(h, &key, &klen);
  if (st) return st;
  if (!accept(h, ':')) return bad_header(h, "expected ':' after a key");
  unsigned bit;
  if (klen == 5 && memcmp(key, "descr", 5) == 0) {
    bit = 1;
    skip_ws(h);
    if (h->p < h->end && *h->p == '[')
      return ncc_error(NCC_ERR_UNSUPPORTED,
                       "%s: structured .npy dtypes are not supported",
                       h->name);
    const char *s;
    size_t len;
    if ((st = parse_string(h, &s, &len))) return st;
    if ((st = parse_descr(h, s, len, &hd->dtype))) return st;
  } else if (klen == 13 && memcmp(key, "fortran_order", 13) == 0) {
    bit = 2;
    if (match_word(h, "True"))
      return ncc_error(NCC_ERR_UNSUPPORTED,
                       "%s: Fortran-order .npy arrays are not supported; save "
                       "a C-contiguous array",
                       h->name);
    if (!match_word(h, "False"))
      return bad_header(h, "'fortran_order' must be True or False");
  } else if (klen == 5 && memcmp(key, "shape", 5) == 0) {
    bit = 4;
    if ((st = parse_shape(h, hd))) return st;
  } else {
    return ncc_error(NCC_ERR_INPUT, "%s: malformed .npy header: unknown key '%.*s'",
                     h->name, (int)(klen > 32 ? 32 : klen), key);
  }
  if (*seen & bit) return bad_header(h, "a key appears twice");
  *seen |= bit;
  return NCC_OK;
}

/* Parse the header dict and compute the data size it implies. */
static ncc_status parse_header(const char *text, size_t len, const char *name,
                               npy_header *hd) {
  hparser h = {text, text + len, name};
  unsigned seen = 0;
  memset(hd, 0, sizeof *hd);
  if (!accept(&h, '{')) return bad_header(&h, "it is not a dict");
  while (!accept(&h, '}')) {
    ncc_status st = parse_entry(&h, hd, &seen);
    if (st) return st;
    if (accept(&h, '}')) break;
    if (!accept(&h, ',')) return bad_header(&h, "expected ',' or '}'");
  }
  skip_ws(&h);
  if (h.p != h.end) return bad_header(&h, "text after the dict");
  if (!(seen & 1)) return bad_header(&h, "missing key 'descr'");
  if (!(seen & 2)) return bad_header(&h, "missing key 'fortran_order'");
  if (!(seen & 4)) return bad_header(&h, "missing key 'shape'");
  /* checked: an empty array may have huge other dims, a full one not */
  if (!ncc_dims_nbytes(ncc_dtype_size(hd->dtype), hd->rank, hd->dims, &hd->nbytes))
    return bad_header(&h, "'shape' is too large");
  return NCC_OK;
}

/* ---- the fixed prefix: magic, version, header length ---- */
static ncc_status check_magic(const unsigned char *b, size_t n,
                              const char *name, size_t *len_bytes) {
  if (n < NPY_MAGIC_LEN || memcmp(b, NPY_MAGIC, NPY_MAGIC_LEN) != 0)
    return ncc_error(NCC_ERR_INPUT, "%s: not a .npy file (bad magic)", name);
  if (n < 8)
    return ncc_error(NCC_ERR_INPUT, "%s: truncated .npy file (no version)",
                     name);
  if (b[7] != 0 || b[6] < 1 || b[6] > 3)
    return ncc_error(NCC_ERR_UNSUPPORTED,
                     "%s: .npy format version %d.%d is not supported (1.0, "
                     "2.0, 3.0 are)",
                     name, b[6], b[7]);
  *len_bytes = b[6] == 1 ? 2 : 4;
  return NCC_OK;
}

static ncc_status header_length(const unsigned char *b, size_t len_bytes,
                                const char *name, size_t *hlen) {
  size_t v = (size_t)b[0] | (size_t)b[1] << 8;
  if (len_bytes == 4) v |= (size_t)b[2] << 16 | (size_t)b[3] << 24;
  if (v > NPY_MAX_HEADER)
    return ncc_error(NCC_ERR_INPUT,
                     "%s: malformed .npy header: header length %zu is too "
                     "large",
                     name, v);
  *hlen = v;
  return NCC_OK;
}

static ncc_status truncated_data(const char *name, size_t want, size_t got) {
  return ncc_error(NCC_ERR_INPUT,
                   "%s: .npy data is truncated (the shape needs %zu bytes, "
                   "the file has %zu)",
                   name, want, got);
}

static ncc_status trailing_data(const char *name, size_t want) {
  return ncc_error(NCC_ERR_INPUT,
                   "%s: .npy file has bytes after the %zu bytes of data its "
                   "shape describes",
                   name, want);
}

/* Allocate the tensor for a parsed header, naming the file on failure. */
static ncc_status alloc_for(const npy_header *hd, const char *name,
                            ncc_tensor *out) {
  ncc_status st = ncc_tensor_alloc(out, hd->dtype, hd->rank, hd->dims);
  if (st) ncc_error_prefix("%s", name);
  return st;
}

ncc_status ncc_npy_read_buffer(const void *buf, size_t len, const char *name,
                               ncc_tensor *out) {
  memset(out, 0, sizeof *out);
  if (!name) name = "<buffer>";
  const unsigned char *b = buf;
  size_t len_bytes = 0, hlen = 0;
  ncc_status st = check_magic(b, len, name, &len_bytes);
  if (st) return st;
  if (len < 8 + len_bytes)
    return ncc_error(NCC_ERR_INPUT, "%s: truncated .npy header", name);
  if ((st = header_length(b + 8, len_bytes, name, &hlen))) return st;
  size_t off = 8 + len_bytes;
  if (len - off < hlen)
    return ncc_error(NCC_ERR_INPUT, "%s: truncated .npy header", name);
  npy_header hd;
  if ((st = parse_header((const char *)b + off, hlen, name, &hd))) return st;
  off += hlen;
  if (len - off < hd.nbytes) return truncated_data(name, hd.nbytes, len - off);
  if (len - off > hd.nbytes) return trailing_data(name, hd.nbytes);
  if ((st = alloc_for(&hd, name, out))) return st;
  if (hd.nbytes) memcpy(out->data, b + off, hd.nbytes);
  return NCC_OK;
}

/* ---- reading a file ---- */
static ncc_status io_error(const char *path, const char *what) {
  return ncc_error(NCC_ERR_INPUT, "%s: %s: %s", path, what,
                   errno ? strerror(errno) : "I/O error");
}

/* Read exactly n bytes; *got says how many arrived before EOF. */
static ncc_status read_fully(FILE *f, void *dst, size_t n, size_t *got,
                             const char *path) {
  errno = 0;
  *got = fread(dst, 1, n, f);
  if (*got < n && ferror(f)) return io_error(path, "cannot read");
  return NCC_OK;
}

/* Header of an open file: on success the file is positioned at the data. */
static ncc_status read_file_header(FILE *f, const char *path, npy_header *hd,
                                   size_t *data_off) {
  unsigned char pre[12];
  size_t got = 0, len_bytes = 0, hlen = 0;
  ncc_status st = read_fully(f, pre, 8, &got, path);
  if (st) return st;
  if (got == 0)
    return ncc_error(NCC_ERR_INPUT, "%s: empty file, not a .npy file", path);
  if ((st = check_magic(pre, got, path, &len_bytes))) return st;
  if ((st = read_fully(f, pre + 8, len_bytes, &got, path))) return st;
  if (got < len_bytes)
    return ncc_error(NCC_ERR_INPUT, "%s: truncated .npy header", path);
  if ((st = header_length(pre + 8, len_bytes, path, &hlen))) return st;
  char *text = ncc_malloc(hlen ? hlen : 1);
  if (!text) return NCC_ERR_NOMEM;
  st = read_fully(f, text, hlen, &got, path);
  if (!st && got < hlen)
    st = ncc_error(NCC_ERR_INPUT, "%s: truncated .npy header", path);
  if (!st) st = parse_header(text, hlen, path, hd);
  ncc_free(text, hlen ? hlen : 1);
  *data_off = 8 + len_bytes + hlen;
  return st;
}

/* For regular files, compare the size on disk with what the header claims
 * before allocating, so a lying header cannot make us allocate gigabytes. */
static ncc_status check_file_size(FILE *f, const char *path,
                                  const npy_header *hd, size_t data_off) {
  struct stat sb;
  if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) return NCC_OK;
  size_t have = (uint64_t)sb.st_size > data_off
                    ? (size_t)((uint64_t)sb.st_size - data_off)
                    : 0;
  if (have < hd->nbytes) return truncated_data(path, hd->nbytes, have);
  if (have > hd->nbytes) return trailing_data(path, hd->nbytes);
  return NCC_OK;
}

static ncc_status read_file_data(FILE *f, const char *path,
                                 const npy_header *hd, ncc_tensor *out) {
  ncc_status st = alloc_for(hd, path, out);
  if (st) return st;
  size_t got;
  st = read_fully(f, out->data, hd->nbytes, &got, path);
  if (!st && got < hd->nbytes) st = truncated_data(path, hd->nbytes, got);
  if (!st && fgetc(f) != EOF) st = trailing_data(path, hd->nbytes);
  if (st) ncc_tensor_free(out);
  return st;
}

ncc_status ncc_npy_read(const char *path, ncc_tensor *out) {
  memset(out, 0, sizeof *out);
  errno = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return io_error(path, "cannot open");
  struct stat sb;
  ncc_status st = NCC_OK;
  if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode))
    st = ncc_error(NCC_ERR_INPUT, "%s: is a directory, not a .npy file", path);
  npy_header hd;
  size_t data_off = 0;
  if (!st) st = read_file_header(f, path, &hd, &data_off);
  if (!st) st = check_file_size(f, path, &hd, data_off);
  if (!st) st = read_file_data(f, path, &hd, out);
  fclose(f);
  return st;
}

/* ---- writing ---- */
static const char *npy_descr(ncc_dtype dt) {
  switch (dt) {
  case NCC_DT_F32: return "<f4";
  case NCC_DT_F16: return "<f2";
  case NCC_DT_F64: return "<f8";
  case NCC_DT_I64: return "<i8";
  case NCC_DT_I32: return "<i4";
  case NCC_DT_I8: return "|i1";
  case NCC_DT_U8: return "|u1";
  case NCC_DT_BOOL: return "|b1";
  case NCC_DT_I16: return "<i2";
  case NCC_DT_U16: return "<u2";
  case NCC_DT_U32: return "<u4";
  case NCC_DT_U64: return "<u8";
  case NCC_DT_BF16: return "<V2"; /* what ml_dtypes.bfloat16 saves as */
  default: return NULL;
  }
}

/* Build the full preamble (magic .. padded header) as numpy does: format
 * 1.0 (a rank <= 8 header always fits its 16-bit length), padded with spaces
 * and a final newline to a multiple of 64 bytes so the data is aligned.
 * Returns its length, 0 when `cap` is too small. */
static size_t format_preamble(const ncc_tensor *t, char *buf, size_t cap) {
  char dict[512];
  int n = snprintf(dict, sizeof dict,
                   "{'descr': '%s', 'fortran_order': False, 'shape': (",
                   npy_descr(t->dtype));
  for (int i = 0; i < t->rank; i++)
    n += snprintf(dict + n, sizeof dict - (size_t)n, "%s%lld", i ? ", " : "",
                  (long long)t->dims[i]);
  n += snprintf(dict + n, sizeof dict - (size_t)n, "%s), }",
                t->rank == 1 ? "," : "");
  size_t dlen = (size_t)n;
  size_t pre = 10; /* 1.0: magic(6) + version(2) + u16 length */
  size_t total = (pre + dlen + 1 + 63) / 64 * 64;
  if (total > cap) return 0;
  size_t hlen = total - pre;
  memcpy(buf, NPY_MAGIC, NPY_MAGIC_LEN);
  buf[6] = 1;
  buf[7] = 0;
  buf[8] = (char)(hlen & 0xff);
  buf[9] = (char)(hlen >> 8);
  memcpy(buf + pre, dict, dlen);
  memset(buf + pre + dlen, ' ', hlen - dlen - 1);
  buf[total - 1] = '\n';
  return total;
}

static ncc_status check_writable(const char *path, const ncc_tensor *t) {
  if (!npy_descr(t->dtype))
    return ncc_error(NCC_ERR_USAGE, "%s: cannot write a tensor of dtype %s",
                     path, ncc_dtype_name(t->dtype));
  if (t->rank < 0 || t->rank > NCC_MAX_RANK)
    return ncc_error(NCC_ERR_USAGE, "%s: cannot write a tensor of rank %d",
                     path, t->rank);
  for (int i = 0; i < t->rank; i++)
    if (t->dims[i] < 0)
      return ncc_error(NCC_ERR_USAGE, "%s: tensor dim %d is negative", path,
                       i);
  if (ncc_tensor_nbytes(t) == SIZE_MAX)
    return ncc_error(NCC_ERR_USAGE, "%s: the tensor's size overflows", path);
  if (ncc_tensor_nbytes(t) && !t->data)
    return ncc_error(NCC_ERR_USAGE, "%s: tensor has no data", path);
  return NCC_OK;
}

static ncc_status write_all(FILE *f, const ncc_tensor *t, const char *path) {
  char pre[1024];
  size_t plen = format_preamble(t, pre, sizeof pre);
  NCC_ASSERT(plen > 0); /* rank <= 8 always fits */
  size_t nbytes = ncc_tensor_nbytes(t);
  errno = 0;
  if (fwrite(pre, 1, plen, f) != plen ||
      (nbytes && fwrite(t->data, 1, nbytes, f) != nbytes) || fflush(f) != 0)
    return io_error(path, "cannot write");
  return NCC_OK;
}

ncc_status ncc_npy_write_to(FILE *f, const char *path, const ncc_tensor *t) {
  ncc_status st = check_writable(path, t);
  return st ? st : write_all(f, t, path);
}

ncc_status ncc_npy_write(const char *path, const ncc_tensor *t) {
  ncc_status st = check_writable(path, t);
  if (st) return st;
  ncc_afile a;
  if ((st = ncc_afile_open(&a, path))) return st;
  st = write_all(a.f, t, path);
  if (st) {
    ncc_afile_abort(&a);
    return st;
  }
  return ncc_afile_commit(&a);
}
