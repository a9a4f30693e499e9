/* bloom-internal.h - what bloom.c, bloom-model.c and bloom-file.c share.
 *
 * The filter struct lives here rather than in bloom.c because the file
 * loader fills the bit array in place and the model needs the shape; the
 * rest of the library sees only the opaque handle of sieve/bloom.h.
 *
 * Functions declared here are hidden from the shared library's ABI. */
#ifndef SIEVE_BLOOM_INTERNAL_H
#define SIEVE_BLOOM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "sieve/bloom.h"

#define SIEVE_HIDDEN __attribute__((visibility("hidden")))

/* A block is one 64-byte cache line. */
#define BLOOM_BLOCK_BITS  512u
#define BLOOM_BLOCK_WORDS 8u

/* Largest bit array we agree to allocate (64 TiB). Far above any real
 * machine, yet small enough that every size derived from it (bits, bytes,
 * block counts) fits 64-bit arithmetic with room to spare. */
#define BLOOM_MAX_BYTES (UINT64_C(1) << 46)

struct sieve_bloom {
    uint64_t *words;   /* the bit array, 64-byte aligned */
    size_t bytes;      /* its size: whole 64-bit words, whole blocks if blocked */
    uint64_t m;        /* bits (a multiple of 512 if blocked) */
    uint64_t nblocks;  /* m / 512 if blocked, else 0 */
    uint64_t seed;     /* hash seed */
    uint64_t capacity; /* n it was sized for */
    uint64_t bits_set; /* X, kept up to date by every add */
    double fp_rate;    /* p it was sized for */
    unsigned k;        /* probes per key */
    sieve_bloom_layout layout;
    double *table; /* blocked only: F_k(j), see bloom-model.c */
    size_t table_len;
};

/* Bytes of the bit array for m bits: whole words, so the classic layout can
 * read 64 bits at a time. 0 if m is 0 or above BLOOM_MAX_BYTES * 8. */
SIEVE_HIDDEN uint64_t sieve_bloom_array_bytes(uint64_t m);

/* Allocates a zeroed filter of this exact shape (m already rounded for the
 * blocked layout) with its model table. Checks nothing but sizes. */
SIEVE_HIDDEN int sieve_bloom_create(sieve_bloom **out, sieve_bloom_layout layout, uint64_t m,
                                    unsigned k, uint64_t seed, uint64_t capacity, double fp_rate);

/* Population count of the whole bit array. */
SIEVE_HIDDEN uint64_t sieve_bloom_popcount(const sieve_bloom *b);

/* Builds the blocked model's table F_k(j) for j = 0, 1, ... until F is 1
 * within rounding: *table is malloc'ed, *len its length. SIEVE_ENOMEM. */
SIEVE_HIDDEN int sieve_bloom_model_table(unsigned k, double **table, size_t *len);

/* Blocked model rate for lambda keys per block, from a table above. */
SIEVE_HIDDEN double sieve_bloom_model_blocked(const double *table, size_t len, double lambda);

/* Classic model rate (1 - e^(-kn/m))^k. */
SIEVE_HIDDEN double sieve_bloom_model_classic(uint64_t m, unsigned k, double n);

#endif
