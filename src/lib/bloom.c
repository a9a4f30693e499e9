/* bloom.c - Bloom filter: probes, add, contains, batch, union.
 *
 * Two layouts share one struct (bloom-internal.h) and one hash per key.
 *
 * Blocked (the default). The key's hash picks one 512-bit block with
 * fastrange on h.lo (a multiply, no division), and its k bit positions
 * inside the block are successive 9-bit fields of h.hi and, past the first
 * seven, of splitmix64 outputs seeded by h.hi. Repeated positions are
 * skipped until k distinct ones are found: the sizing model in
 * bloom-model.c assumes k distinct uniform bits, and a key that set only
 * k - 1 would raise the real rate above the planned one.
 *
 * Why not double hashing inside the block (top 9 bits of h.hi + i*g)? An
 * arithmetic progression in a 512-bit block has only about 2^18 shapes, so
 * keys sharing a block overlap far more often than independent positions
 * would: measured at n = 1e6 with 1e8 absent queries, a filter sized for
 * p = 1e-4 answered 1.44e-4 (1.09e-3 at p = 1e-3), while independent
 * fields land on the model (0.99e-4). Fresh bits cost one splitmix64 per
 * seven positions, a few cycles against the cache miss.
 *
 * Add and contains walk the positions on the key's one cache line, testing
 * and setting bits as they go. After a fixed number of candidates
 * (never reached with a real hash) the probe falls back to a sweep over
 * the block, so a probe always ends.
 *
 * Classic. Position i is fastrange(h.lo + i*h.hi, m): k cache misses per
 * key, kept to measure what the blocked layout buys.
 *
 * Both layouts count newly set bits as they set them, so the set-bit count
 * X, and the estimates derived from it, cost nothing to keep. Only union
 * (which cannot know the overlap) and load recount.
 *
 * The blocked model's table F_k(j) is built when the filter is created, not
 * on first use: a lazily filled cache would be a write in a const reader,
 * and concurrent readers are allowed. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bloom-internal.h"
#include "mem.h"
#include "sieve/status.h"

#define LN2 0.69314718055994530942

/* Candidates tried before the fallback sweep (k <= 64 needs about k). */
#define BLOCK_TRIES 256u
/* 9-bit positions taken from one 64-bit word. */
#define POS_PER_WORD 7u

/* Keys hashed and prefetched together by the batch add: enough to cover
 * memory latency, small enough for the stack. */
#define BATCH 64u

/* Bits set in x. Portable builds for x86-64 have no popcnt instruction,
 * and __builtin_popcountll becomes a libgcc call per word; this is a dozen
 * inline operations. */
static inline unsigned popcount64(uint64_t x)
{
    x = x - ((x >> 1) & UINT64_C(0x5555555555555555));
    x = (x & UINT64_C(0x3333333333333333)) + ((x >> 2) & UINT64_C(0x3333333333333333));
    x = (x + (x >> 4)) & UINT64_C(0x0f0f0f0f0f0f0f0f);
    return (unsigned)((x * UINT64_C(0x0101010101010101)) >> 56);
}

static inline uint64_t fastrange64(uint64_t x, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)x * n) >> 64);
}

uint64_t sieve_bloom_array_bytes(uint64_t m)
{
    if (m == 0 || m > BLOOM_MAX_BYTES * 8)
        return 0;
    return (m + 63) / 64 * 8;
}

uint64_t sieve_bloom_popcount(const sieve_bloom *b)
{
    uint64_t n = 0;
    size_t words = b->bytes / 8;
    for (size_t i = 0; i < words; i++)
        n += popcount64(b->words[i]);
    return n;
}

int sieve_bloom_create(sieve_bloom **out, sieve_bloom_layout layout, uint64_t m, unsigned k,
                       uint64_t seed, uint64_t capacity, double fp_rate)
{
    uint64_t bytes = sieve_bloom_array_bytes(m);
    if (bytes == 0 || bytes > SIZE_MAX || bytes > PTRDIFF_MAX)
        return SIEVE_EOVERFLOW;
    sieve_bloom *b = calloc(1, sizeof(*b));
    if (b == NULL)
        return SIEVE_ENOMEM;
    b->bytes = (size_t)bytes;
    b->m = m;
    b->k = k;
    b->layout = layout;
    b->seed = seed;
    b->capacity = capacity;
    b->fp_rate = fp_rate;
    if (layout == SIEVE_BLOOM_BLOCKED) {
        b->nblocks = m / BLOOM_BLOCK_BITS;
        if (sieve_bloom_model_table(k, &b->table, &b->table_len) != SIEVE_OK) {
            free(b);
            return SIEVE_ENOMEM;
        }
    }
    b->words = sieve_mem_alloc_zeroed(b->bytes);
    if (b->words == NULL) {
        free(b->table);
        free(b);
        return SIEVE_ENOMEM;
    }
    *out = b;
    return SIEVE_OK;
}

int sieve_bloom_new(sieve_bloom **out, uint64_t capacity, double fp_rate, sieve_bloom_layout layout,
                    uint64_t seed)
{
    uint64_t m;
    unsigned k;
    if (out == NULL)
        return SIEVE_EINVAL;
    int rc = sieve_bloom_plan(capacity, fp_rate, layout, &m, &k);
    if (rc != SIEVE_OK)
        return rc;
    return sieve_bloom_create(out, layout, m, k, seed, capacity, fp_rate);
}

int sieve_bloom_new_mk(sieve_bloom **out, uint64_t m, unsigned k, sieve_bloom_layout layout,
                       uint64_t seed)
{
    if (out == NULL || m == 0 || k == 0 || k > SIEVE_BLOOM_K_MAX)
        return SIEVE_EINVAL;
    if (layout != SIEVE_BLOOM_BLOCKED && layout != SIEVE_BLOOM_CLASSIC)
        return SIEVE_EINVAL;
    if (m > BLOOM_MAX_BYTES * 8)
        return SIEVE_EOVERFLOW;
    if (layout == SIEVE_BLOOM_BLOCKED)
        m = (m + BLOOM_BLOCK_BITS - 1) / BLOOM_BLOCK_BITS * BLOOM_BLOCK_BITS;
    /* The n for which k is the optimal probe count: k = ln2 m / n. */
    double n = floor(LN2 * (double)m / k);
    uint64_t capacity = n < 1 ? 1 : (uint64_t)n;
    sieve_bloom *b;
    int rc = sieve_bloom_create(&b, layout, m, k, seed, capacity, 0);
    if (rc != SIEVE_OK)
        return rc;
    if (layout == SIEVE_BLOOM_BLOCKED)
        b->fp_rate = sieve_bloom_model_blocked(b->table, b->table_len,
                                               (double)capacity / (double)b->nblocks);
    else
        b->fp_rate = sieve_bloom_model_classic(m, k, (double)capacity);
    *out = b;
    return SIEVE_OK;
}

void sieve_bloom_free(sieve_bloom *b)
{
    if (b == NULL)
        return;
    sieve_mem_free(b->words, b->bytes);
    free(b->table);
    free(b);
}

sieve_hash sieve_bloom_hash(const sieve_bloom *b, const void *key, size_t len)
{
    return sieve_hash_key(key, len, b->seed);
}

/* ---- blocked layout ---- */

static inline uint64_t *block_of(const sieve_bloom *b, sieve_hash h)
{
    return b->words + fastrange64(h.lo, b->nblocks) * BLOOM_BLOCK_WORDS;
}

/* splitmix64's output function: a bijection whose every output bit
 * depends on every input bit, so successive counters give fresh bits. */
static inline uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* The stream of candidate positions of one key: 9-bit fields of h.hi,
 * then of splitmix64 outputs, then (never reached with a real hash) a
 * sweep of the whole block. */
typedef struct block_probe {
    uint64_t word, ctr, hi;
    unsigned left, tries;
} block_probe;

static inline void probe_start(block_probe *p, sieve_hash h)
{
    *p = (block_probe){.word = h.hi, .ctr = h.hi, .hi = h.hi, .left = POS_PER_WORD};
}

static inline unsigned probe_next(block_probe *p)
{
    unsigned pos;
    if (p->tries < BLOCK_TRIES) {
        if (p->left == 0) {
            p->ctr += UINT64_C(0x9e3779b97f4a7c15);
            p->word = mix64(p->ctr);
            p->left = POS_PER_WORD;
        }
        pos = (unsigned)p->word & (BLOOM_BLOCK_BITS - 1);
        p->word >>= 9;
        p->left--;
    } else {
        /* 512 consecutive tries visit every bit of the block. */
        pos = (unsigned)(p->hi + p->tries) & (BLOOM_BLOCK_BITS - 1);
    }
    p->tries++;
    return pos;
}

/* The next position not drawn before for this key; drawn records them, so
 * a repeated draw is skipped and the key gets k distinct bits. */
static inline unsigned probe_next_distinct(block_probe *p, uint64_t drawn[BLOOM_BLOCK_WORDS])
{
    for (;;) {
        unsigned pos = probe_next(p);
        uint64_t bit = UINT64_C(1) << (pos & 63);
        if (!(drawn[pos >> 6] & bit)) {
            drawn[pos >> 6] |= bit;
            return pos;
        }
    }
}

/* Add and contains test (and add sets) the block's bits one position at a
 * time. Counting fresh bits this way costs k tests, where a popcount of the
 * whole block would cost eight, with no popcount instruction in a portable
 * x86-64 build. */
static bool blocked_contains(const sieve_bloom *b, sieve_hash h)
{
    uint64_t drawn[BLOOM_BLOCK_WORDS] = {0};
    const uint64_t *blk = block_of(b, h);
    block_probe p;
    probe_start(&p, h);
    for (unsigned i = 0; i < b->k; i++) {
        unsigned pos = probe_next_distinct(&p, drawn);
        if (!(blk[pos >> 6] & (UINT64_C(1) << (pos & 63))))
            return false;
    }
    return true;
}

static int blocked_add(sieve_bloom *b, sieve_hash h)
{
    uint64_t drawn[BLOOM_BLOCK_WORDS] = {0};
    uint64_t *blk = block_of(b, h);
    unsigned fresh = 0;
    block_probe p;
    probe_start(&p, h);
    for (unsigned i = 0; i < b->k; i++) {
        unsigned pos = probe_next_distinct(&p, drawn);
        uint64_t bit = UINT64_C(1) << (pos & 63);
        fresh += !(blk[pos >> 6] & bit);
        blk[pos >> 6] |= bit;
    }
    b->bits_set += fresh;
    return fresh ? SIEVE_OK : SIEVE_SEEN;
}

/* ---- classic layout ---- */

static bool classic_contains(const sieve_bloom *b, sieve_hash h)
{
    uint64_t a = h.lo;
    for (unsigned i = 0; i < b->k; i++, a += h.hi) {
        uint64_t pos = fastrange64(a, b->m);
        if (!(b->words[pos >> 6] & (UINT64_C(1) << (pos & 63))))
            return false;
    }
    return true;
}

static int classic_add(sieve_bloom *b, sieve_hash h)
{
    uint64_t a = h.lo, fresh = 0;
    for (unsigned i = 0; i < b->k; i++, a += h.hi) {
        uint64_t pos = fastrange64(a, b->m);
        uint64_t bit = UINT64_C(1) << (pos & 63);
        uint64_t *w = &b->words[pos >> 6];
        if (!(*w & bit)) {
            *w |= bit;
            fresh++;
        }
    }
    b->bits_set += fresh;
    return fresh ? SIEVE_OK : SIEVE_SEEN;
}

/* ---- public probes ---- */

int sieve_bloom_add_hashed(sieve_bloom *b, sieve_hash h)
{
    if (b == NULL)
        return SIEVE_EINVAL;
    return b->layout == SIEVE_BLOOM_BLOCKED ? blocked_add(b, h) : classic_add(b, h);
}

int sieve_bloom_add(sieve_bloom *b, const void *key, size_t len)
{
    if (b == NULL || (key == NULL && len > 0))
        return SIEVE_EINVAL;
    return sieve_bloom_add_hashed(b, sieve_bloom_hash(b, key, len));
}

bool sieve_bloom_contains_hashed(const sieve_bloom *b, sieve_hash h)
{
    if (b == NULL)
        return false;
    return b->layout == SIEVE_BLOOM_BLOCKED ? blocked_contains(b, h) : classic_contains(b, h);
}

bool sieve_bloom_contains(const sieve_bloom *b, const void *key, size_t len)
{
    if (b == NULL || (key == NULL && len > 0))
        return false;
    return sieve_bloom_contains_hashed(b, sieve_bloom_hash(b, key, len));
}

/* rw is 1 when the caller is about to write: fetching the line for
 * ownership saves a second coherence round trip on the store. */
static inline void prefetch(const sieve_bloom *b, sieve_hash h, int rw)
{
    if (b->layout == SIEVE_BLOOM_BLOCKED) {
        if (rw)
            __builtin_prefetch(block_of(b, h), 1, 3);
        else
            __builtin_prefetch(block_of(b, h), 0, 3);
        return;
    }
    uint64_t a = h.lo;
    for (unsigned i = 0; i < b->k; i++, a += h.hi) {
        const uint64_t *w = &b->words[fastrange64(a, b->m) >> 6];
        if (rw)
            __builtin_prefetch(w, 1, 3);
        else
            __builtin_prefetch(w, 0, 3);
    }
}

/* Read intent: concurrent readers may prefetch the same lines, and taking
 * them exclusive would make the readers' cores fight over them. */
void sieve_bloom_prefetch(const sieve_bloom *b, sieve_hash h)
{
    if (b != NULL)
        prefetch(b, h, 0);
}

size_t sieve_bloom_add_batch(sieve_bloom *b, const sieve_key *keys, size_t n, int *results)
{
    sieve_hash h[BATCH];
    bool bad[BATCH];
    size_t absent = 0;
    if (b == NULL || keys == NULL)
        return 0;
    for (size_t base = 0; base < n; base += BATCH) {
        size_t cnt = n - base < BATCH ? n - base : BATCH;
        for (size_t i = 0; i < cnt; i++) {
            const sieve_key *key = &keys[base + i];
            bad[i] = key->data == NULL && key->len > 0;
            if (bad[i])
                continue;
            h[i] = sieve_bloom_hash(b, key->data, key->len);
            prefetch(b, h[i], 1);
        }
        /* In order, so a key repeated inside the batch is SEEN the second
         * time, exactly as with single adds. */
        for (size_t i = 0; i < cnt; i++) {
            int rc = bad[i] ? SIEVE_EINVAL : sieve_bloom_add_hashed(b, h[i]);
            if (rc == SIEVE_OK)
                absent++;
            if (results != NULL)
                results[base + i] = rc;
        }
    }
    return absent;
}

/* ---- estimates ---- */

double sieve_bloom_estimated_count(const sieve_bloom *b)
{
    /* A full array carries no information about how many keys made it
     * full: report infinity rather than a large arbitrary number. */
    if (b->bits_set >= b->m)
        return INFINITY;
    return -((double)b->m / b->k) * log1p(-(double)b->bits_set / (double)b->m);
}

double sieve_bloom_estimated_fp_rate(const sieve_bloom *b)
{
    double n = sieve_bloom_estimated_count(b);
    if (isinf(n))
        return 1;
    if (b->layout == SIEVE_BLOOM_BLOCKED)
        return sieve_bloom_model_blocked(b->table, b->table_len, n / (double)b->nblocks);
    return sieve_bloom_model_classic(b->m, b->k, n);
}

void sieve_bloom_info_get(const sieve_bloom *b, sieve_bloom_info *info)
{
    memset(info, 0, sizeof(*info));
    info->layout = b->layout;
    info->m = b->m;
    info->k = b->k;
    info->seed = b->seed;
    info->capacity = b->capacity;
    info->fp_rate = b->fp_rate;
    info->bits_set = b->bits_set;
    info->bytes = sizeof(*b) + sieve_mem_footprint(b->bytes) + b->table_len * sizeof(double);
    info->est_count = sieve_bloom_estimated_count(b);
    info->est_fp_rate = sieve_bloom_estimated_fp_rate(b);
}

int sieve_bloom_union(sieve_bloom *dst, const sieve_bloom *src)
{
    if (dst == NULL || src == NULL)
        return SIEVE_EINVAL;
    if (dst->layout != src->layout || dst->m != src->m || dst->k != src->k ||
        dst->seed != src->seed)
        return SIEVE_EMISMATCH;
    if (dst == src)
        return SIEVE_OK;
    size_t words = dst->bytes / 8;
    for (size_t i = 0; i < words; i++)
        dst->words[i] |= src->words[i];
    dst->bits_set = sieve_bloom_popcount(dst);
    return SIEVE_OK;
}
