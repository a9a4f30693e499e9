/* seen.c - the seen-set interface: one handle over the exact hash set, a
 * single Bloom filter, or a scalable cascade of Bloom filters.
 *
 * The three share one shape so the frontier never asks which it has:
 * a key is hashed once (XXH3-128 with the set's seed) and the hash is
 * handed to whichever structure is underneath.
 *
 * Growth (SIEVE_OVERFLOW_GROW). A Bloom filter cannot be resized, since
 * the keys are gone, so capacity is added as layers: layer i is sized for
 * capacity * 2^i keys at rate p / 2^(i+1). A key is new only if no layer
 * contains it, and new keys go into the newest layer, which is replaced
 * as the active one once it has taken its capacity. The rates form a
 * geometric series, so the chance of a false "seen" from any layer stays
 * below p, and memory stays within a constant factor of a filter sized for
 * the final count in advance. All layers share the seed, so one hash
 * serves every layer.
 *
 * Growth is triggered by the number of keys the newest layer accepted, not
 * by its bit count, which keeps the per-insert check to one comparison. */
#include <math.h>
#include <stdlib.h>

#include "bloom-internal.h"
#include "seen-internal.h"
#include "sieve/hashset.h"
#include "sieve/seen.h"
#include "sieve/status.h"

/* Enough layers for capacity * 2^47 keys: growth never runs out of slots
 * before memory does. */
#define SEEN_LAYERS_MAX 48

struct sieve_seen {
    sieve_seen_config cfg;
    sieve_hashset *exact;
    sieve_bloom *layer[SEEN_LAYERS_MAX];
    unsigned nlayers;
    uint64_t newest_capacity; /* keys the newest layer was sized for */
    uint64_t newest_added;    /* keys it has accepted */
    double older_count;       /* estimated keys in all but the newest layer */
};

/* A false positive is a page the crawl silently never fetches, so the
 * default rate is 1e-4: one new URL lost in ten thousand, for about 2.7
 * bytes a URL with the blocked layout (1.2 at 0.01). */
void sieve_seen_config_init(sieve_seen_config *cfg)
{
    *cfg = (sieve_seen_config){
        .kind = SIEVE_SEEN_BLOOM,
        .capacity = 1000000,
        .fp_rate = 1e-4,
        .layout = SIEVE_BLOOM_BLOCKED,
        .overflow = SIEVE_OVERFLOW_WARN,
        .seed = SIEVE_HASH_SEED_DEFAULT,
    };
}

static int config_valid(const sieve_seen_config *cfg)
{
    if (cfg->capacity == 0)
        return 0;
    if (cfg->kind == SIEVE_SEEN_EXACT)
        return 1;
    if (cfg->kind != SIEVE_SEEN_BLOOM)
        return 0;
    if (!(cfg->fp_rate > 0.0 && cfg->fp_rate < 1.0))
        return 0;
    if (cfg->layout != SIEVE_BLOOM_BLOCKED && cfg->layout != SIEVE_BLOOM_CLASSIC)
        return 0;
    return cfg->overflow == SIEVE_OVERFLOW_WARN || cfg->overflow == SIEVE_OVERFLOW_GROW;
}

/* Rate of layer i: the whole of p for a fixed filter, p / 2^(i+1) when
 * growing so the series sums below p. */
static double layer_rate(const sieve_seen_config *cfg, unsigned i)
{
    if (cfg->overflow == SIEVE_OVERFLOW_WARN)
        return cfg->fp_rate;
    return ldexp(cfg->fp_rate, -(int)(i + 1));
}

static int add_layer(sieve_seen *s)
{
    unsigned i = s->nlayers;
    if (i == SEEN_LAYERS_MAX)
        return SIEVE_EOVERFLOW;
    if (i > 0 && s->newest_capacity > UINT64_MAX / 2)
        return SIEVE_EOVERFLOW;
    uint64_t capacity = i == 0 ? s->cfg.capacity : s->newest_capacity * 2;
    sieve_bloom *b;
    int rc = sieve_bloom_new(&b, capacity, layer_rate(&s->cfg, i), s->cfg.layout, s->cfg.seed);
    if (rc != SIEVE_OK)
        return rc;
    if (i > 0)
        s->older_count += sieve_bloom_estimated_count(s->layer[i - 1]);
    s->layer[i] = b;
    s->nlayers = i + 1;
    s->newest_capacity = capacity;
    s->newest_added = 0;
    return SIEVE_OK;
}

int sieve_seen_new(sieve_seen **out, const sieve_seen_config *cfg)
{
    if (out == NULL || cfg == NULL || !config_valid(cfg))
        return SIEVE_EINVAL;
    sieve_seen *s = calloc(1, sizeof *s);
    if (s == NULL)
        return SIEVE_ENOMEM;
    s->cfg = *cfg;
    int rc = cfg->kind == SIEVE_SEEN_EXACT ? sieve_hashset_new(&s->exact, cfg->capacity, cfg->seed)
                                           : add_layer(s);
    if (rc != SIEVE_OK) {
        free(s);
        return rc;
    }
    *out = s;
    return SIEVE_OK;
}

void sieve_seen_free(sieve_seen *s)
{
    if (s == NULL)
        return;
    sieve_hashset_free(s->exact);
    for (unsigned i = 0; i < s->nlayers; i++)
        sieve_bloom_free(s->layer[i]);
    free(s);
}

sieve_hash sieve_seen_hash(const sieve_seen *s, const void *key, size_t len)
{
    return sieve_hash_key(key, len, s->cfg.seed);
}

void sieve_seen_prefetch(const sieve_seen *s, sieve_hash h)
{
    if (s->exact != NULL) {
        sieve_hashset_prefetch(s->exact, h);
        return;
    }
    for (unsigned i = 0; i < s->nlayers; i++)
        sieve_bloom_prefetch(s->layer[i], h);
}

static bool older_layers_contain(const sieve_seen *s, sieve_hash h)
{
    for (unsigned i = 0; i + 1 < s->nlayers; i++)
        if (sieve_bloom_contains_hashed(s->layer[i], h))
            return true;
    return false;
}

int sieve_seen_add_hashed(sieve_seen *s, const void *key, size_t len, sieve_hash h)
{
    if (s->exact != NULL)
        return sieve_hashset_add_hashed(s->exact, key, len, h);
    if (older_layers_contain(s, h))
        return SIEVE_SEEN;
    if (s->cfg.overflow == SIEVE_OVERFLOW_GROW && s->newest_added >= s->newest_capacity) {
        /* A failed growth keeps filling the current layer: its rate
         * climbs, but no key is refused for lack of memory. */
        (void)add_layer(s);
    }
    int rc = sieve_bloom_add_hashed(s->layer[s->nlayers - 1], h);
    if (rc == SIEVE_OK)
        s->newest_added++;
    return rc;
}

int sieve_seen_add(sieve_seen *s, const void *key, size_t len)
{
    return sieve_seen_add_hashed(s, key, len, sieve_seen_hash(s, key, len));
}

bool sieve_seen_contains_hashed(const sieve_seen *s, const void *key, size_t len, sieve_hash h)
{
    if (s->exact != NULL)
        return sieve_hashset_contains_hashed(s->exact, key, len, h);
    return older_layers_contain(s, h) || sieve_bloom_contains_hashed(s->layer[s->nlayers - 1], h);
}

bool sieve_seen_contains(const sieve_seen *s, const void *key, size_t len)
{
    return sieve_seen_contains_hashed(s, key, len, sieve_seen_hash(s, key, len));
}

sieve_seen_kind sieve_seen_get_kind(const sieve_seen *s)
{
    return s->cfg.kind;
}

double sieve_seen_estimated_count(const sieve_seen *s)
{
    if (s->exact != NULL)
        return (double)sieve_hashset_count(s->exact);
    return s->older_count + sieve_bloom_estimated_count(s->layer[s->nlayers - 1]);
}

double sieve_seen_estimated_fp_rate(const sieve_seen *s)
{
    if (s->exact != NULL)
        return 0.0;
    double none = 1.0;
    for (unsigned i = 0; i < s->nlayers; i++)
        none *= 1.0 - sieve_bloom_estimated_fp_rate(s->layer[i]);
    return 1.0 - none;
}

uint64_t sieve_seen_bytes(const sieve_seen *s)
{
    uint64_t bytes = sizeof *s;
    if (s->exact != NULL)
        return bytes + sieve_hashset_bytes(s->exact);
    for (unsigned i = 0; i < s->nlayers; i++) {
        sieve_bloom_info info;
        sieve_bloom_info_get(s->layer[i], &info);
        bytes += info.bytes;
    }
    return bytes;
}

unsigned sieve_seen_layers(const sieve_seen *s)
{
    return s->nlayers;
}

uint64_t sieve_seen_capacity(const sieve_seen *s)
{
    return s->cfg.capacity;
}

unsigned seen_layer_count(const sieve_seen *s)
{
    return s->exact != NULL ? 0 : s->nlayers;
}

uint64_t *seen_layer_words(sieve_seen *s, unsigned i, size_t *bytes)
{
    *bytes = s->layer[i]->bytes;
    return s->layer[i]->words;
}

uint64_t seen_newest_added(const sieve_seen *s)
{
    return s->newest_added;
}

int seen_restore_shape(sieve_seen *s, unsigned nlayers, uint64_t newest_added)
{
    if (s->exact != NULL || s->nlayers != 1 || s->layer[0]->bits_set != 0 || nlayers == 0 ||
        nlayers > SEEN_LAYERS_MAX || (nlayers > 1 && s->cfg.overflow != SIEVE_OVERFLOW_GROW))
        return SIEVE_EFORMAT;
    while (s->nlayers < nlayers) {
        int rc = add_layer(s);
        if (rc != SIEVE_OK)
            return rc == SIEVE_EOVERFLOW ? SIEVE_EFORMAT : rc;
    }
    s->newest_added = newest_added;
    return SIEVE_OK;
}

/* The saved count of the newest layer was read before its array was
 * copied, and pushes went on in between: the array may hold more. Growth
 * goes by the larger of the two, so a restored layer never takes more
 * than its capacity (an estimate a little high only grows it early). */
void seen_restored(sieve_seen *s)
{
    s->older_count = 0;
    for (unsigned i = 0; i < s->nlayers; i++) {
        s->layer[i]->bits_set = sieve_bloom_popcount(s->layer[i]);
        if (i + 1 < s->nlayers)
            s->older_count += sieve_bloom_estimated_count(s->layer[i]);
    }
    double held = sieve_bloom_estimated_count(s->layer[s->nlayers - 1]);
    if (held > (double)s->newest_capacity) /* a full array's is infinite */
        held = (double)s->newest_capacity;
    if (held > (double)s->newest_added)
        s->newest_added = (uint64_t)held;
}
