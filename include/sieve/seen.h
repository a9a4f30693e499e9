/* sieve/seen.h - the seen-set interface the frontier runs on.
 *
 * One interface over two implementations: a Bloom filter (small, may call
 * an unseen URL seen with probability p) and the exact hash set (never
 * wrong, costs the URLs' own bytes). The Bloom kind has an overflow policy:
 *
 *  - SIEVE_OVERFLOW_WARN keeps one filter; past its capacity its rate
 *    climbs, and the frontier logs a warning.
 *  - SIEVE_OVERFLOW_GROW is a scalable Bloom filter (Almeida et al., 2007):
 *    when the newest filter reaches its capacity a new one is added with
 *    twice the capacity and half the rate. Layer i has rate p/2^(i+1), so
 *    the total rate stays below p/2 + p/4 + ... < p however many keys come.
 *    A lookup probes every layer; an insert sets bits in the newest only.
 *
 * Not thread-safe; the frontier serializes access. */
#ifndef SIEVE_SEEN_H
#define SIEVE_SEEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sieve/bloom.h"
#include "sieve/export.h"
#include "sieve/hash.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sieve_seen sieve_seen;

typedef enum sieve_seen_kind {
    SIEVE_SEEN_BLOOM = 0,
    SIEVE_SEEN_EXACT = 1,
} sieve_seen_kind;

typedef enum sieve_overflow {
    SIEVE_OVERFLOW_WARN = 0,
    SIEVE_OVERFLOW_GROW = 1,
} sieve_overflow;

typedef struct sieve_seen_config {
    sieve_seen_kind kind;      /* default SIEVE_SEEN_BLOOM */
    uint64_t capacity;         /* keys expected; default 1,000,000 */
    double fp_rate;            /* Bloom only; default 1e-4 */
    sieve_bloom_layout layout; /* Bloom only; default blocked */
    sieve_overflow overflow;   /* Bloom only; default warn */
    uint64_t seed;             /* default SIEVE_HASH_SEED_DEFAULT */
} sieve_seen_config;

/* Fills cfg with the defaults above. */
SIEVE_API void sieve_seen_config_init(sieve_seen_config *cfg);

/* Creates a seen-set. SIEVE_EINVAL for an unknown kind, layout or policy, a
 * capacity of 0 or (Bloom) a rate outside (0, 1); otherwise the errors of
 * sieve_bloom_new() or sieve_hashset_new(). */
SIEVE_API int sieve_seen_new(sieve_seen **out, const sieve_seen_config *cfg);

/* Frees the set. NULL is a no-op. */
SIEVE_API void sieve_seen_free(sieve_seen *s);

/* Hashes a key for this set. Safe to call without exclusive access. */
SIEVE_API sieve_hash sieve_seen_hash(const sieve_seen *s, const void *key, size_t len);

/* Hints the CPU to fetch what an operation on h will touch (newest layer). */
SIEVE_API void sieve_seen_prefetch(const sieve_seen *s, sieve_hash h);

/* Adds a key unless it is (or, for Bloom, seems) present: SIEVE_OK if added,
 * SIEVE_SEEN if not, or an error (SIEVE_ENOMEM, SIEVE_ETOOLONG for the exact
 * set) with the set unchanged. h must come from sieve_seen_hash(). */
SIEVE_API int sieve_seen_add_hashed(sieve_seen *s, const void *key, size_t len, sieve_hash h);

/* As sieve_seen_add_hashed(), hashing the key itself. */
SIEVE_API int sieve_seen_add(sieve_seen *s, const void *key, size_t len);

/* True if the key is (or, for Bloom, may be) in the set. */
SIEVE_API bool sieve_seen_contains(const sieve_seen *s, const void *key, size_t len);

/* As sieve_seen_contains(), with h from sieve_seen_hash(). */
SIEVE_API bool sieve_seen_contains_hashed(const sieve_seen *s, const void *key, size_t len,
                                          sieve_hash h);

/* Kind of the set. */
SIEVE_API sieve_seen_kind sieve_seen_get_kind(const sieve_seen *s);

/* Estimated keys held (exact for the exact set). */
SIEVE_API double sieve_seen_estimated_count(const sieve_seen *s);

/* Estimated false-positive rate now (0 for the exact set). For a grown set,
 * the chance that any layer answers falsely. */
SIEVE_API double sieve_seen_estimated_fp_rate(const sieve_seen *s);

/* Bytes the set holds. */
SIEVE_API uint64_t sieve_seen_bytes(const sieve_seen *s);

/* Number of Bloom layers (1 unless grown; 0 for the exact set). */
SIEVE_API unsigned sieve_seen_layers(const sieve_seen *s);

/* The configured capacity. */
SIEVE_API uint64_t sieve_seen_capacity(const sieve_seen *s);

#ifdef __cplusplus
}
#endif
#endif
