/* robots-cache.c - robots.txt per host.
 *
 * The first URL of a host makes its worker claim the host (state FETCH)
 * and fetch robots.txt before the page; URLs of that host that other
 * workers pop meanwhile wait (state WAIT) instead of fetching it again.
 * Outcomes expire: rules after expiry_s (default a day), the "nothing is
 * allowed" of a failing server after retry_s, so a server that was down is
 * asked again.
 *
 * Rules replaced on expiry are kept until the cache is freed, because a
 * worker may still be reading them; a refetch a day per host is a small
 * price for lookups that hold no reference count. Hosts are few, so each
 * has one small allocation. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "robots-cache.h"
#include "sieve/hash.h"
#include "sieve/status.h"

#define BUCKETS 4096 /* hosts are few next to URLs: chains stay short */

typedef struct entry {
    struct entry *next;
    sieve_robots *rules; /* NULL while being fetched the first time */
    bool fetching;
    double fetched_at, expires;
    uint64_t admitted; /* the URL the last fetch was for: admitted once, even expired */
    size_t len;
    char host[];
} entry;

typedef struct retired {
    struct retired *next;
    sieve_robots *rules;
} retired;

struct robots_cache {
    pthread_mutex_t lock;
    double expiry_s, retry_s;
    entry *bucket[BUCKETS];
    retired *old;
};

int robots_cache_new(robots_cache **out, double expiry_s, double retry_s)
{
    robots_cache *c = calloc(1, sizeof *c);
    if (c == NULL)
        return SIEVE_ENOMEM;
    pthread_mutex_init(&c->lock, NULL);
    c->expiry_s = expiry_s;
    c->retry_s = retry_s;
    *out = c;
    return SIEVE_OK;
}

void robots_cache_free(robots_cache *c)
{
    if (c == NULL)
        return;
    for (size_t b = 0; b < BUCKETS; b++) {
        for (entry *e = c->bucket[b], *next; e != NULL; e = next) {
            next = e->next;
            sieve_robots_free(e->rules);
            free(e);
        }
    }
    for (retired *r = c->old, *next; r != NULL; r = next) {
        next = r->next;
        sieve_robots_free(r->rules);
        free(r);
    }
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static entry **slot_of(robots_cache *c, const char *host, size_t len)
{
    return &c->bucket[sieve_hash_key(host, len, SIEVE_HASH_SEED_DEFAULT).lo % BUCKETS];
}

static entry *find(robots_cache *c, const char *host, size_t len)
{
    for (entry *e = *slot_of(c, host, len); e != NULL; e = e->next)
        if (e->len == len && memcmp(e->host, host, len) == 0)
            return e;
    return NULL;
}

robots_state robots_cache_lookup(robots_cache *c, const char *host, size_t len, double now,
                                 uint64_t url_key, const sieve_robots **rules, double *fetched_at)
{
    robots_state st;
    pthread_mutex_lock(&c->lock);
    entry *e = find(c, host, len);
    if (e == NULL) {
        e = calloc(1, sizeof *e + len);
        if (e == NULL) {
            /* Without memory for the entry, fetch it anyway: the outcome
             * will not be kept, but no URL waits for ever. */
            pthread_mutex_unlock(&c->lock);
            return ROBOTS_FETCH;
        }
        e->len = len;
        memcpy(e->host, host, len);
        entry **slot = slot_of(c, host, len);
        e->next = *slot;
        *slot = e;
    }
    bool admitted = url_key != 0 && url_key == e->admitted;
    if (e->rules != NULL && (now < e->expires || admitted)) {
        if (admitted)
            e->admitted = 0;
        *rules = e->rules;
        *fetched_at = e->fetched_at;
        st = ROBOTS_READY;
    } else if (e->fetching) {
        st = ROBOTS_WAIT;
    } else {
        e->fetching = true;
        st = ROBOTS_FETCH;
    }
    pthread_mutex_unlock(&c->lock);
    return st;
}

void robots_cache_store(robots_cache *c, const char *host, size_t len, sieve_robots *rules,
                        double fetched_at, double now, bool temporary, uint64_t admitted)
{
    pthread_mutex_lock(&c->lock);
    entry *e = find(c, host, len);
    if (e == NULL) {
        pthread_mutex_unlock(&c->lock);
        sieve_robots_free(rules);
        return;
    }
    if (e->rules != NULL) {
        retired *r = malloc(sizeof *r);
        if (r != NULL) {
            *r = (retired){.next = c->old, .rules = e->rules};
            c->old = r;
        } else {
            /* No room to retire the old rules: keep them a while longer. */
            sieve_robots_free(rules);
            rules = NULL;
            temporary = true;
        }
    }
    if (rules != NULL) {
        e->rules = rules;
        e->fetched_at = fetched_at;
    }
    e->fetching = false;
    e->admitted = admitted;
    e->expires = now + (temporary ? c->retry_s : c->expiry_s);
    pthread_mutex_unlock(&c->lock);
}
