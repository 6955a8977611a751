/* ir/sha256.h — SHA-256 (FIPS 180-4), for the compile cache's keys and
 * entry checksums (ir/kcache.h). A plain, portable implementation: the
 * inputs are a kernel IR's compact digest (codegen/kir_digest.c) and its
 * object code, a few KB to a few hundred KB each, so speed is not the
 * point; collision resistance is. */
#ifndef NCC_IR_SHA256_H
#define NCC_IR_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct ncc_sha256 {
  uint32_t h[8];
  uint64_t len; /* bytes hashed so far */
  uint8_t buf[64];
  size_t n; /* bytes in buf */
} ncc_sha256;

void ncc_sha256_init(ncc_sha256 *s);
void ncc_sha256_update(ncc_sha256 *s, const void *data, size_t n);
/* Add a string and its terminating NUL, so that ("ab","c") and ("a","bc")
 * hash differently. */
void ncc_sha256_str(ncc_sha256 *s, const char *str);
void ncc_sha256_final(ncc_sha256 *s, uint8_t out[32]);
/* One call: the digest of data[0..n). */
void ncc_sha256_sum(const void *data, size_t n, uint8_t out[32]);
/* 64 lowercase hex digits and a NUL into hex[65]. */
void ncc_sha256_hex(const uint8_t d[32], char hex[65]);

#endif /* NCC_IR_SHA256_H */
