/* sieve/hash.h - the one hash every seen-set uses.
 *
 * A key is hashed once, with XXH3-128, and the two 64-bit halves serve
 * every later step: the Bloom filter's block choice and double hashing,
 * the exact set's slot and tag. Hashing outside a lock and probing
 * inside it is what lets the frontier take batches cheaply. */
#ifndef SIEVE_HASH_H
#define SIEVE_HASH_H

#include <stddef.h>
#include <stdint.h>

#include "sieve/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sieve_hash {
    uint64_t lo;
    uint64_t hi;
} sieve_hash;

/* A key as bytes: URLs are not NUL-terminated inside libsieve. */
typedef struct sieve_key {
    const void *data;
    size_t len;
} sieve_key;

/* Default seed of every filter and set created without an explicit one. */
#define SIEVE_HASH_SEED_DEFAULT UINT64_C(0x5133c0ffee5eed01)

/* Hashes len bytes at key with XXH3-128 and the given seed. key may be
 * NULL when len is 0. Pure function: same input, same output, on every
 * platform (the filter file format relies on it). */
SIEVE_API sieve_hash sieve_hash_key(const void *key, size_t len, uint64_t seed);

#ifdef __cplusplus
}
#endif
#endif
