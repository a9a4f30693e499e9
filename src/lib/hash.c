/* hash.c - the key hash: XXH3-128, inlined so the compiler sees through it. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "sieve/hash.h"

sieve_hash sieve_hash_key(const void *key, size_t len, uint64_t seed)
{
    XXH128_hash_t h = XXH3_128bits_withSeed(key, len, seed);
    return (sieve_hash){.lo = h.low64, .hi = h.high64};
}
