/* ir/kcache.h — the persistent compile cache's store: one file per key
 * in a directory (ncc_options.cache_dir), holding a target's machine code
 * for one kernel. The code generator computes the key (codegen/llvm/jit.c:
 * a SHA-256 over everything the code depends on); this file only stores
 * and checks bytes, and never trusts them:
 *
 *   DIR/<64 hex digits of the key>.ncck
 *     0   8  magic "NCCKOBJ\0"
 *     8   4  format version (NCC_KCACHE_FORMAT), little-endian
 *     12  4  header size (88)
 *     16  32 the key
 *     48  8  payload length, little-endian
 *     56  32 SHA-256 of the payload
 *     88  .. payload (an object file)
 *
 * An entry is written to a temporary file in DIR and renamed into place,
 * so readers see a whole entry or none, and concurrent writers of one key
 * (equal bytes) are harmless. A short file or a wrong magic, version, key,
 * length or checksum is a miss: the entry is deleted when possible and the
 * caller rebuilds it. Every failure (no directory, read-only, full disk)
 * is a miss or a skipped write, never an error: the cache only ever saves
 * time. Eviction (ncc_kcache_prune) removes the least recently used
 * entries: a hit touches its entry's modification time. */
#ifndef NCC_IR_KCACHE_H
#define NCC_IR_KCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NCC_KCACHE_FORMAT 2u
#define NCC_KCACHE_HEADER 88
/* ncc_options.cache_max_bytes of 0 */
#define NCC_KCACHE_DEFAULT_MAX ((uint64_t)1 << 30)

/* The payload of key's entry, in *data (ncc_malloc'd, *len bytes), or
 * false: absent, unreadable or bad (then removed). */
bool ncc_kcache_get(const char *dir, const uint8_t key[32], void **data, size_t *len);
/* Store an entry, creating dir (and its parents) when missing; false when
 * it could not be written (nothing is left behind). */
bool ncc_kcache_put(const char *dir, const uint8_t key[32], const void *data, size_t len);
/* When the entries exceed max_bytes (0: the default), remove the least
 * recently used down to 90% of it; also removes temporary files a killed
 * writer left (older than an hour). */
void ncc_kcache_prune(const char *dir, uint64_t max_bytes);

#endif /* NCC_IR_KCACHE_H */
