/* sieve/hashset.h - the exact seen-set: every key kept, none lost.
 *
 * Open addressing (linear probing) over a power-of-two table of 64-bit
 * slots; a slot holds a tag from the key's hash and the key's offset in an
 * arena of large chunks, where keys are stored length-prefixed. No malloc
 * per key: memory grows by whole chunks and by table doublings.
 *
 * This is the reference the Bloom filter is measured against, and the
 * seen-set for a crawl that must not lose a single URL. Not thread-safe:
 * sieve_frontier serializes writers. */
#ifndef SIEVE_HASHSET_H
#define SIEVE_HASHSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sieve/export.h"
#include "sieve/hash.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sieve_hashset sieve_hashset;

/* Longest key the set stores, in bytes. */
#define SIEVE_HASHSET_KEY_MAX 65536

/* Creates an empty set presized for expected keys (0: a small default),
 * hashing with seed. SIEVE_EOVERFLOW if expected is beyond what a table can
 * address, SIEVE_ENOMEM if allocation fails. */
SIEVE_API int sieve_hashset_new(sieve_hashset **out, uint64_t expected, uint64_t seed);

/* Frees the set and every key it holds. NULL is a no-op. */
SIEVE_API void sieve_hashset_free(sieve_hashset *s);

/* Hashes a key the way this set does (its seed). */
SIEVE_API sieve_hash sieve_hashset_hash(const sieve_hashset *s, const void *key, size_t len);

/* Adds a copy of the key unless present. SIEVE_OK if added, SIEVE_SEEN if it
 * was there, SIEVE_ETOOLONG above SIEVE_HASHSET_KEY_MAX, SIEVE_ENOMEM when
 * growth fails (the set is unchanged and still valid). Empty keys are valid. */
SIEVE_API int sieve_hashset_add(sieve_hashset *s, const void *key, size_t len);

/* As sieve_hashset_add(), with h = sieve_hashset_hash(s, key, len). */
SIEVE_API int sieve_hashset_add_hashed(sieve_hashset *s, const void *key, size_t len, sieve_hash h);

/* True if the key was added. */
SIEVE_API bool sieve_hashset_contains(const sieve_hashset *s, const void *key, size_t len);

/* As sieve_hashset_contains(), with a precomputed hash. */
SIEVE_API bool sieve_hashset_contains_hashed(const sieve_hashset *s, const void *key, size_t len,
                                             sieve_hash h);

/* Hints the CPU to fetch the slot h will probe first. */
SIEVE_API void sieve_hashset_prefetch(const sieve_hashset *s, sieve_hash h);

/* Number of keys held. */
SIEVE_API uint64_t sieve_hashset_count(const sieve_hashset *s);

/* Bytes held: slot table, arena chunks (allocated, not only used) and the
 * handle. This is what the memory benchmark accounts. */
SIEVE_API uint64_t sieve_hashset_bytes(const sieve_hashset *s);

#ifdef __cplusplus
}
#endif
#endif
