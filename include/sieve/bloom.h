/* sieve/bloom.h - a Bloom filter of seen keys, hashed with XXH3-128.
 *
 * Sizing. For capacity n and false-positive rate p the classic optimum is
 *
 *     m = -n ln p / (ln 2)^2 bits,    k = round(ln 2 * m / n) probes,
 *
 * and after n insertions the rate is (1 - e^(-kn/m))^k.
 *
 * Layouts. SIEVE_BLOOM_BLOCKED (the default) puts all k bits of a key in one
 * 64-byte block (512 bits), so add and contains cost one cache miss. Blocks
 * fill unevenly (the keys per block follow a Poisson law), which raises the
 * rate above the classic formula for the same m; the blocked filter is
 * therefore sized with that law: m is the smallest multiple of 512 bits and
 * k the probe count for which the expected rate, averaged over block loads,
 * is at most p. SIEVE_BLOOM_CLASSIC spreads the k bits over the whole array
 * (k cache misses) and is kept for comparison.
 *
 * Both layouts are planned for an expected rate of 0.98 p at capacity, not
 * p: a filter planned for exactly p measures above p about half the time,
 * and the margin costs about 0.3% more bits.
 *
 * Hashing. One XXH3-128 hash per key, halves h1 and h2. Blocked: h1 picks
 * the block, and the k distinct bit positions inside it are successive
 * 9-bit fields of h2 and of a splitmix64 sequence seeded by h2 (double
 * hashing inside a block is too regular and overshoots the model's rate).
 * Classic: position i is h1 + i*h2 reduced to [0, m) (double hashing).
 *
 * Count. The number of set bits X is kept as bits are set, and the
 * estimated number of keys is n* = -(m/k) ln(1 - X/m).
 *
 * A filter is not thread-safe: concurrent readers are fine, a writer needs
 * exclusive access (sieve_frontier provides it). Sizes are 64-bit. */
#ifndef SIEVE_BLOOM_H
#define SIEVE_BLOOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sieve/export.h"
#include "sieve/hash.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sieve_bloom sieve_bloom;

typedef enum sieve_bloom_layout {
    SIEVE_BLOOM_BLOCKED = 0, /* one 64-byte block per key */
    SIEVE_BLOOM_CLASSIC = 1, /* k independent positions over all m bits */
} sieve_bloom_layout;

/* Largest probe count accepted by sieve_bloom_new_mk(). */
#define SIEVE_BLOOM_K_MAX 64

/* A filter's shape and state, filled by sieve_bloom_info(). */
typedef struct sieve_bloom_info {
    sieve_bloom_layout layout;
    uint64_t m;         /* bits */
    unsigned k;         /* probes per key */
    uint64_t seed;      /* hash seed */
    uint64_t capacity;  /* n it was sized for (derived from m, k when built from them) */
    double fp_rate;     /* p it was sized for (the model's rate at capacity when built from m, k) */
    uint64_t bits_set;  /* X */
    uint64_t bytes;     /* memory the filter holds, bit array and bookkeeping */
    double est_count;   /* -(m/k) ln(1 - X/m) */
    double est_fp_rate; /* the model's rate for est_count keys */
} sieve_bloom_info;

/* Creates an empty filter sized for capacity keys at false-positive rate
 * fp_rate, in the given layout, hashing with seed. Returns SIEVE_OK and sets
 * *out; SIEVE_EINVAL if capacity is 0, fp_rate is not in (0, 1) or layout is
 * unknown; SIEVE_EOVERFLOW if the bit array would not fit in memory's address
 * space; SIEVE_ENOMEM if it cannot be allocated. *out is untouched on error. */
SIEVE_API int sieve_bloom_new(sieve_bloom **out, uint64_t capacity, double fp_rate,
                              sieve_bloom_layout layout, uint64_t seed);

/* Creates an empty filter of exactly m bits and k probes. For the blocked
 * layout m is rounded up to a multiple of 512. SIEVE_EINVAL if m is 0, k is 0
 * or above SIEVE_BLOOM_K_MAX (for blocked, also above 512); otherwise as
 * sieve_bloom_new(). */
SIEVE_API int sieve_bloom_new_mk(sieve_bloom **out, uint64_t m, unsigned k,
                                 sieve_bloom_layout layout, uint64_t seed);

/* Frees the filter and its bits. NULL is a no-op. */
SIEVE_API void sieve_bloom_free(sieve_bloom *b);

/* Hashes a key the way this filter does (its seed). */
SIEVE_API sieve_hash sieve_bloom_hash(const sieve_bloom *b, const void *key, size_t len);

/* Adds a key. Returns SIEVE_OK if at least one of its bits was clear (the key
 * was certainly absent), SIEVE_SEEN if all were set (present, or a false
 * positive). Test and set happen in one pass over the key's bits. */
SIEVE_API int sieve_bloom_add(sieve_bloom *b, const void *key, size_t len);

/* As sieve_bloom_add(), for a hash from sieve_bloom_hash(). */
SIEVE_API int sieve_bloom_add_hashed(sieve_bloom *b, sieve_hash h);

/* True if the key may have been added; false if it certainly was not. */
SIEVE_API bool sieve_bloom_contains(const sieve_bloom *b, const void *key, size_t len);

/* As sieve_bloom_contains(), for a hash from sieve_bloom_hash(). */
SIEVE_API bool sieve_bloom_contains_hashed(const sieve_bloom *b, sieve_hash h);

/* Hints the CPU to fetch the memory h will touch. Never changes the filter;
 * issue it for a whole batch before probing it so the misses overlap. */
SIEVE_API void sieve_bloom_prefetch(const sieve_bloom *b, sieve_hash h);

/* Adds n keys: hashes them all, prefetches every block, then tests and sets
 * each in order. results (may be NULL) receives SIEVE_OK or SIEVE_SEEN per
 * key, exactly as n calls of sieve_bloom_add() would. Returns the number of
 * keys that were absent. */
SIEVE_API size_t sieve_bloom_add_batch(sieve_bloom *b, const sieve_key *keys, size_t n,
                                       int *results);

/* Fills *info with the filter's shape and current estimates. O(1) for the
 * classic layout; the blocked layout's rate model is computed once per
 * filter and cached. */
SIEVE_API void sieve_bloom_info_get(const sieve_bloom *b, sieve_bloom_info *info);

/* The estimated number of distinct keys added, from the set-bit count;
 * INFINITY once every bit is set. */
SIEVE_API double sieve_bloom_estimated_count(const sieve_bloom *b);

/* The false-positive rate the model predicts for the current estimated count. */
SIEVE_API double sieve_bloom_estimated_fp_rate(const sieve_bloom *b);

/* Sets dst to the union dst | src. Both must have the same layout, m, k and
 * seed, else SIEVE_EMISMATCH and dst is unchanged. The set-bit count is
 * recomputed, so estimates stay right. */
SIEVE_API int sieve_bloom_union(sieve_bloom *dst, const sieve_bloom *src);

/* The model's expected false-positive rate for a filter of this layout, m bits
 * and k probes holding n keys. Useful for planning; no filter needed. Returns
 * a negative value for invalid arguments. */
SIEVE_API double sieve_bloom_model_fp_rate(sieve_bloom_layout layout, uint64_t m, unsigned k,
                                           double n);

/* The (m, k) sieve_bloom_new() would choose, without allocating. Same errors. */
SIEVE_API int sieve_bloom_plan(uint64_t capacity, double fp_rate, sieve_bloom_layout layout,
                               uint64_t *m, unsigned *k);

/* Writes the filter to path atomically (a temporary file renamed over it).
 * Format: a 64-byte little-endian header (magic, format version, layout, m,
 * k, seed, capacity, requested rate, set bits, checksum) then the bit array;
 * the checksum is XXH3-64 over header and bits. SIEVE_EIO on a system error
 * (errno is kept), and the previous file at path, if any, is left intact. */
SIEVE_API int sieve_bloom_save(const sieve_bloom *b, const char *path);

/* Reads a filter written by sieve_bloom_save(). Refuses, without crashing and
 * without allocating more than the file's own size: SIEVE_EFORMAT (bad magic,
 * impossible shape), SIEVE_EVERSION, SIEVE_ETRUNCATED (shorter than its header
 * says), SIEVE_ECHECKSUM, SIEVE_EIO (cannot open or read), SIEVE_ENOMEM. */
SIEVE_API int sieve_bloom_load(sieve_bloom **out, const char *path);

#ifdef __cplusplus
}
#endif
#endif
