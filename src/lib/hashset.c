/* hashset.c - the exact seen-set: open addressing over a key arena.
 *
 * Layout. The table is a power-of-two array of 64-bit slots probed
 * linearly from h.lo & mask. A slot is 0 when empty; otherwise its high
 * SLOT_TAG_BITS hold a tag taken from the top of h.hi and its low
 * SLOT_POS_BITS hold the key's arena position plus one (so that a key at
 * position 0 still gives a non-zero slot). One slot is 8 bytes whatever the
 * key's length, and linear probing walks a single cache line most of the
 * time. The tag, independent of the bits that chose the slot, rejects all
 * but one in 2^24 foreign keys met while probing without touching the
 * arena, so a lookup usually costs one table miss plus one arena miss for
 * the key that matches.
 *
 * Keys live in an arena of ARENA_CHUNK-byte chunks, each key a LEB128
 * length followed by its bytes. A position is chunk * ARENA_CHUNK + offset;
 * keys never straddle chunks (a key that does not fit the current chunk's
 * rest starts a new one, and SIEVE_HASHSET_KEY_MAX plus its prefix always
 * fits an empty chunk), so a position resolves to one contiguous run of
 * bytes. Growing the arena never moves a key: only the small array of chunk
 * pointers is reallocated. That is what lets slots hold positions rather
 * than pointers, and it is why there is no malloc per key.
 *
 * Growth. At a load factor of 3/4 the table doubles. A slot does not hold
 * the bits of h.lo beyond the old mask, so each key is hashed again from
 * its stored bytes: one sequential pass over the arena per doubling, at
 * most two extra hashes per key in total (as with any doubling), and in
 * exchange a slot stays at 8 bytes. Presizing with expected avoids it.
 * The new table is allocated before the old one is touched, so a failed
 * allocation leaves the set exactly as it was.
 *
 * Limits. Positions are 40 bits, so the arena holds at most 1 TiB of keys;
 * past that an add fails with SIEVE_ENOMEM like any other failed growth.
 * The 24-bit tag leaves the other 40 bits of h.hi unused: slot choice
 * needs h.lo only. */
#include <stdlib.h>
#include <string.h>

#include "mem.h"
#include "bytes.h"
#include "sieve/hashset.h"
#include "sieve/status.h"

#define SLOT_POS_BITS 40
#define SLOT_TAG_BITS (64 - SLOT_POS_BITS)
#define SLOT_POS_MASK ((UINT64_C(1) << SLOT_POS_BITS) - 1)

/* 1 MiB: large enough that the chunk array stays tiny (1024 pointers per
 * GiB of keys), small enough that a near-empty set does not waste much. */
#define ARENA_CHUNK_SHIFT 20
#define ARENA_CHUNK       ((size_t)1 << ARENA_CHUNK_SHIFT)

/* Positions are SLOT_POS_BITS wide and store pos + 1. */
#define ARENA_MAX_CHUNKS ((SLOT_POS_MASK >> ARENA_CHUNK_SHIFT))

/* Every key takes at least one arena byte, so more keys than positions can
 * never be held; a presize beyond this is a caller's mistake. */
#define HASHSET_KEYS_MAX (UINT64_C(1) << SLOT_POS_BITS)

#define TABLE_MIN 16

struct sieve_hashset {
    uint64_t *slots;
    uint64_t mask;  /* table size - 1 */
    uint64_t count; /* keys held */
    uint64_t limit; /* count that triggers a doubling */
    uint64_t seed;
    unsigned char **chunks; /* arena chunks, all ARENA_CHUNK bytes */
    size_t nchunks;
    size_t chunks_cap; /* entries allocated in chunks[] */
    size_t used;       /* bytes used in the last chunk */
};

static uint64_t load_limit(uint64_t size)
{
    return size / 4 * 3;
}

static size_t table_bytes(uint64_t size)
{
    return (size_t)size * sizeof(uint64_t);
}

static uint64_t slot_make(sieve_hash h, uint64_t pos)
{
    return (h.hi >> SLOT_POS_BITS) << SLOT_POS_BITS | (pos + 1);
}

static bool slot_tag_matches(uint64_t slot, sieve_hash h)
{
    return (slot >> SLOT_POS_BITS) == (h.hi >> SLOT_POS_BITS);
}

/* The stored bytes of the key in slot; *len receives its length. */
static const unsigned char *arena_key(const sieve_hashset *s, uint64_t slot, size_t *len)
{
    uint64_t pos = (slot & SLOT_POS_MASK) - 1;
    const unsigned char *p = s->chunks[pos >> ARENA_CHUNK_SHIFT] + (pos & (ARENA_CHUNK - 1));
    return p + varint_get(p, len);
}

static bool slot_holds(const sieve_hashset *s, uint64_t slot, const void *key, size_t len)
{
    size_t stored;
    const unsigned char *p = arena_key(s, slot, &stored);
    return stored == len && (len == 0 || memcmp(p, key, len) == 0);
}

/* Index of the key's slot if present, else of the empty slot that ends
 * its probe sequence; *found tells which. The table is never full. */
static uint64_t probe(const sieve_hashset *s, const void *key, size_t len, sieve_hash h,
                      bool *found)
{
    uint64_t i = h.lo & s->mask;
    for (;;) {
        uint64_t slot = s->slots[i];
        if (slot == 0) {
            *found = false;
            return i;
        }
        if (slot_tag_matches(slot, h) && slot_holds(s, slot, key, len)) {
            *found = true;
            return i;
        }
        i = (i + 1) & s->mask;
    }
}

/* Smallest table that holds expected keys below the load limit. */
static int table_size_for(uint64_t expected, uint64_t *size)
{
    if (expected > HASHSET_KEYS_MAX)
        return SIEVE_EOVERFLOW;
    uint64_t n = TABLE_MIN;
    while (load_limit(n) < expected)
        n <<= 1;
    if (n > SIZE_MAX / sizeof(uint64_t))
        return SIEVE_EOVERFLOW;
    *size = n;
    return SIEVE_OK;
}

static int table_grow(sieve_hashset *s)
{
    uint64_t size = (s->mask + 1) * 2;
    if (size > SIZE_MAX / sizeof(uint64_t) || s->mask + 1 > HASHSET_KEYS_MAX)
        return SIEVE_ENOMEM;
    uint64_t *slots = sieve_mem_alloc_zeroed(table_bytes(size));
    if (slots == NULL)
        return SIEVE_ENOMEM;
    uint64_t mask = size - 1;
    for (uint64_t j = 0; j <= s->mask; j++) {
        uint64_t slot = s->slots[j];
        if (slot == 0)
            continue;
        size_t len;
        const unsigned char *key = arena_key(s, slot, &len);
        uint64_t i = sieve_hash_key(key, len, s->seed).lo & mask;
        while (slots[i] != 0)
            i = (i + 1) & mask;
        slots[i] = slot;
    }
    sieve_mem_free(s->slots, table_bytes(s->mask + 1));
    s->slots = slots;
    s->mask = mask;
    s->limit = load_limit(size);
    return SIEVE_OK;
}

/* Appends a new empty chunk; the set is unchanged on failure. */
static int arena_add_chunk(sieve_hashset *s)
{
    if (s->nchunks >= ARENA_MAX_CHUNKS)
        return SIEVE_ENOMEM;
    if (s->nchunks == s->chunks_cap) {
        size_t cap = s->chunks_cap ? s->chunks_cap * 2 : 16;
        unsigned char **chunks = realloc(s->chunks, cap * sizeof(*chunks));
        if (chunks == NULL)
            return SIEVE_ENOMEM;
        s->chunks = chunks;
        s->chunks_cap = cap;
    }
    unsigned char *c = malloc(ARENA_CHUNK);
    if (c == NULL)
        return SIEVE_ENOMEM;
    s->chunks[s->nchunks++] = c;
    s->used = 0;
    return SIEVE_OK;
}

/* Copies the key into the arena and returns its position in *pos. */
static int arena_store(sieve_hashset *s, const void *key, size_t len, uint64_t *pos)
{
    size_t need = varint_len(len) + len;
    if (s->nchunks == 0 || ARENA_CHUNK - s->used < need) {
        int rc = arena_add_chunk(s);
        if (rc != SIEVE_OK)
            return rc;
    }
    unsigned char *p = s->chunks[s->nchunks - 1] + s->used;
    size_t n = varint_put(p, len);
    if (len > 0)
        memcpy(p + n, key, len);
    *pos = (uint64_t)(s->nchunks - 1) << ARENA_CHUNK_SHIFT | s->used;
    s->used += need;
    return SIEVE_OK;
}

int sieve_hashset_new(sieve_hashset **out, uint64_t expected, uint64_t seed)
{
    if (out == NULL)
        return SIEVE_EINVAL;
    *out = NULL;
    uint64_t size;
    int rc = table_size_for(expected, &size);
    if (rc != SIEVE_OK)
        return rc;
    sieve_hashset *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return SIEVE_ENOMEM;
    s->slots = sieve_mem_alloc_zeroed(table_bytes(size));
    if (s->slots == NULL) {
        free(s);
        return SIEVE_ENOMEM;
    }
    s->mask = size - 1;
    s->limit = load_limit(size);
    s->seed = seed;
    *out = s;
    return SIEVE_OK;
}

void sieve_hashset_free(sieve_hashset *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->nchunks; i++)
        free(s->chunks[i]);
    free(s->chunks);
    sieve_mem_free(s->slots, table_bytes(s->mask + 1));
    free(s);
}

sieve_hash sieve_hashset_hash(const sieve_hashset *s, const void *key, size_t len)
{
    return sieve_hash_key(key, len, s->seed);
}

int sieve_hashset_add(sieve_hashset *s, const void *key, size_t len)
{
    if (s == NULL || (key == NULL && len > 0))
        return SIEVE_EINVAL;
    if (len > SIEVE_HASHSET_KEY_MAX)
        return SIEVE_ETOOLONG;
    return sieve_hashset_add_hashed(s, key, len, sieve_hash_key(key, len, s->seed));
}

int sieve_hashset_add_hashed(sieve_hashset *s, const void *key, size_t len, sieve_hash h)
{
    if (s == NULL || (key == NULL && len > 0))
        return SIEVE_EINVAL;
    if (len > SIEVE_HASHSET_KEY_MAX)
        return SIEVE_ETOOLONG;
    bool found;
    uint64_t i = probe(s, key, len, h, &found);
    if (found)
        return SIEVE_SEEN;
    /* Grow before storing the key so that a failure leaves nothing behind
     * but, at worst, a larger table. */
    if (s->count >= s->limit) {
        int rc = table_grow(s);
        if (rc != SIEVE_OK)
            return rc;
        i = probe(s, key, len, h, &found);
    }
    uint64_t pos;
    int rc = arena_store(s, key, len, &pos);
    if (rc != SIEVE_OK)
        return rc;
    s->slots[i] = slot_make(h, pos);
    s->count++;
    return SIEVE_OK;
}

bool sieve_hashset_contains(const sieve_hashset *s, const void *key, size_t len)
{
    if (s == NULL || (key == NULL && len > 0) || len > SIEVE_HASHSET_KEY_MAX)
        return false;
    return sieve_hashset_contains_hashed(s, key, len, sieve_hash_key(key, len, s->seed));
}

bool sieve_hashset_contains_hashed(const sieve_hashset *s, const void *key, size_t len,
                                   sieve_hash h)
{
    if (s == NULL || (key == NULL && len > 0) || len > SIEVE_HASHSET_KEY_MAX)
        return false;
    bool found;
    probe(s, key, len, h, &found);
    return found;
}

void sieve_hashset_prefetch(const sieve_hashset *s, sieve_hash h)
{
    if (s != NULL)
        __builtin_prefetch(&s->slots[h.lo & s->mask]);
}

uint64_t sieve_hashset_count(const sieve_hashset *s)
{
    return s != NULL ? s->count : 0;
}

uint64_t sieve_hashset_bytes(const sieve_hashset *s)
{
    if (s == NULL)
        return 0;
    return sizeof(*s) + sieve_mem_footprint(table_bytes(s->mask + 1)) +
           s->chunks_cap * sizeof(*s->chunks) + (uint64_t)s->nchunks * ARENA_CHUNK;
}
