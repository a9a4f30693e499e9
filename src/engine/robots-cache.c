/* robots-cache.c - robots.txt per host.
 *
 * The first URL of a host makes its worker claim the host (state FETCH)
 * and fetch robots.txt before the page; URLs of that host that other
 * workers pop meanwhile wait (state WAIT) instead of fetching it again.
 * Outcomes expire: rules after expiry_s (default a day), the "nothing is
 * allowed" of a server that could not be asked (state DOWN, with the
 * reason its records give) after retry_s, so a server that was down is
 * asked again. A fetch that failed in a way that may pass ends with no
 * outcome at all (again): the entry only counts the failures in a row,
 * and the host's next URL claims the fetch anew, until the fetcher gives
 * up and stores DOWN.
 *
 * A URL that waited for a fetch (the one that claimed it, and those that
 * found it under way) goes under the rules that fetch brought, even if
 * they have expired by its turn: the fetch counts its waiters and lets
 * that many lookups through. Admitting only the URL the fetch was made
 * for let two URLs of a host, each given back while the other's fetch
 * ran, take each other's turn for ever, fetching robots.txt each time.
 *
 * Memory is bounded: entries sit on a list in the order they were last
 * used, and once rules and entries take more than the budget, the least
 * recently used go (not one being fetched or to be fetched again, nor
 * one whose URL waits for its turn to use it), to be fetched again if
 * their host comes back.
 * Lookups answer under the lock (allowed or not, and the crawl delay)
 * rather than lend the rules out, so replaced or dropped rules are freed
 * at once. */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "robots-cache.h"
#include "sieve/hash.h"
#include "sieve/status.h"

/* The most lookups one fetch lets through once its rules have expired. */
#define ADMITS_MAX 1024u

typedef struct entry {
    struct entry *next;          /* in its bucket */
    struct entry *newer, *older; /* in the order of use */
    sieve_robots *rules;         /* NULL while being fetched the first time */
    char *down;                  /* why nothing is allowed, while DOWN */
    bool fetching;
    unsigned failures; /* fetches in a row that failed and were made again */
    double expires;
    uint32_t waiters; /* lookups answered FETCH or WAIT since the fetch began */
    uint32_t admits;  /* lookups still to answer with the rules, even expired */
    size_t bytes;     /* the entry and its rules */
    uint64_t hash;
    size_t len;
    char host[];
} entry;

struct robots_cache {
    pthread_mutex_t lock;
    double expiry_s, retry_s;
    uint64_t budget, bytes, count;
    entry **bucket;
    uint64_t mask;
    entry *newest, *oldest;
};

int robots_cache_new(robots_cache **out, double expiry_s, double retry_s, uint64_t budget)
{
    robots_cache *c = calloc(1, sizeof *c);
    if (c == NULL || (c->bucket = calloc(1024, sizeof *c->bucket)) == NULL) {
        free(c);
        return SIEVE_ENOMEM;
    }
    pthread_mutex_init(&c->lock, NULL);
    c->mask = 1023;
    c->expiry_s = expiry_s;
    c->retry_s = retry_s;
    c->budget = budget;
    *out = c;
    return SIEVE_OK;
}

void robots_cache_free(robots_cache *c)
{
    if (c == NULL)
        return;
    for (entry *e = c->newest, *next; e != NULL; e = next) {
        next = e->older;
        sieve_robots_free(e->rules);
        free(e->down);
        free(e);
    }
    pthread_mutex_destroy(&c->lock);
    free(c->bucket);
    free(c);
}

static uint64_t hash_of(const char *host, size_t len)
{
    return sieve_hash_key(host, len, SIEVE_HASH_SEED_DEFAULT).lo;
}

static entry *find(robots_cache *c, const char *host, size_t len, uint64_t hash)
{
    for (entry *e = c->bucket[hash & c->mask]; e != NULL; e = e->next)
        if (e->hash == hash && e->len == len && memcmp(e->host, host, len) == 0)
            return e;
    return NULL;
}

static void unlink_use(robots_cache *c, entry *e)
{
    *(e->newer != NULL ? &e->newer->older : &c->newest) = e->older;
    *(e->older != NULL ? &e->older->newer : &c->oldest) = e->newer;
}

static void link_newest(robots_cache *c, entry *e)
{
    e->newer = NULL;
    e->older = c->newest;
    *(c->newest != NULL ? &c->newest->newer : &c->oldest) = e;
    c->newest = e;
}

/* Buckets double with the entries, so chains stay short however many
 * hosts the budget holds. A failed growth keeps the old, longer chains. */
static void grow_buckets(robots_cache *c)
{
    uint64_t size = (c->mask + 1) * 2;
    entry **b = calloc(size, sizeof *b);
    if (b == NULL)
        return;
    for (entry *e = c->newest; e != NULL; e = e->older) {
        e->next = b[e->hash & (size - 1)];
        b[e->hash & (size - 1)] = e;
    }
    free(c->bucket);
    c->bucket = b;
    c->mask = size - 1;
}

static void drop(robots_cache *c, entry *e)
{
    entry **p = &c->bucket[e->hash & c->mask];
    while (*p != e)
        p = &(*p)->next;
    *p = e->next;
    unlink_use(c, e);
    c->bytes -= e->bytes;
    c->count--;
    sieve_robots_free(e->rules);
    free(e->down);
    free(e);
}

/* Drops the least recently used entries that nothing waits on until the
 * cache fits its budget. */
static void shrink(robots_cache *c)
{
    entry *e = c->oldest;
    while (c->budget > 0 && c->bytes > c->budget && e != NULL) {
        entry *newer = e->newer;
        if (!e->fetching && e->failures == 0 && e->admits == 0)
            drop(c, e);
        e = newer;
    }
}

robots_state robots_cache_lookup(robots_cache *c, const char *host, size_t len, double now,
                                 const char *path, size_t path_len, bool *allowed,
                                 double *crawl_delay, char *why)
{
    robots_state st;
    uint64_t hash = hash_of(host, len);
    pthread_mutex_lock(&c->lock);
    entry *e = find(c, host, len, hash);
    if (e == NULL) {
        e = calloc(1, sizeof *e + len);
        if (e == NULL) {
            /* Without memory for the entry, fetch it anyway: the outcome
             * will not be kept, but no URL waits for ever. */
            pthread_mutex_unlock(&c->lock);
            return ROBOTS_FETCH;
        }
        if (c->count + 1 > c->mask + 1)
            grow_buckets(c);
        e->len = len;
        e->hash = hash;
        e->bytes = sizeof *e + len;
        memcpy(e->host, host, len);
        e->next = c->bucket[hash & c->mask];
        c->bucket[hash & c->mask] = e;
        c->bytes += e->bytes;
        c->count++;
    } else {
        unlink_use(c, e);
    }
    link_newest(c, e);
    bool fresh = now < e->expires;
    if ((e->rules != NULL || e->down != NULL) && (fresh || e->admits > 0)) {
        /* Fresh or not, an answer uses an admit: kept until expiry, the
         * admits would pin the entry against the memory budget. */
        if (e->admits > 0)
            e->admits--;
        if (e->down != NULL) {
            snprintf(why, ROBOTS_WHY_MAX, "%s", e->down);
            st = ROBOTS_DOWN;
        } else {
            *allowed = sieve_robots_allowed(e->rules, path, path_len);
            *crawl_delay = sieve_robots_crawl_delay(e->rules);
            st = ROBOTS_READY;
        }
    } else if (e->fetching) {
        e->waiters += e->waiters < ADMITS_MAX;
        st = ROBOTS_WAIT;
    } else {
        e->fetching = true;
        e->waiters = 1;
        st = ROBOTS_FETCH;
    }
    shrink(c);
    pthread_mutex_unlock(&c->lock);
    return st;
}

/* Ends the claim on e: the lookups that waited (the claiming one too if
 * comes_back) are let through, and the outcome lasts expiry seconds. */
static void end_fetch(robots_cache *c, entry *e, double now, double expiry, bool comes_back)
{
    e->fetching = false;
    uint32_t admits = e->waiters - (comes_back || e->waiters == 0 ? 0 : 1);
    e->admits = e->admits + admits < ADMITS_MAX ? e->admits + admits : ADMITS_MAX;
    e->waiters = 0;
    e->failures = 0;
    e->expires = now + expiry;
    shrink(c);
}

/* Sets or clears (why NULL) the entry's reason for being DOWN. */
static void set_down(robots_cache *c, entry *e, const char *why)
{
    if (e->down != NULL) {
        size_t n = strlen(e->down) + 1;
        e->bytes -= n;
        c->bytes -= n;
        free(e->down);
        e->down = NULL;
    }
    if (why == NULL)
        return;
    size_t n = strnlen(why, ROBOTS_WHY_MAX - 1);
    if ((e->down = malloc(n + 1)) == NULL)
        return; /* no reason, no DOWN: the next lookup asks again */
    memcpy(e->down, why, n);
    e->down[n] = '\0';
    e->bytes += n + 1;
    c->bytes += n + 1;
}

void robots_cache_store(robots_cache *c, const char *host, size_t len, sieve_robots *rules,
                        double now, bool comes_back)
{
    pthread_mutex_lock(&c->lock);
    entry *e = find(c, host, len, hash_of(host, len));
    if (e == NULL) {
        pthread_mutex_unlock(&c->lock);
        sieve_robots_free(rules);
        return;
    }
    if (rules != NULL) {
        sieve_robots_stats st;
        sieve_robots_stats_get(rules, &st);
        if (e->rules != NULL) {
            sieve_robots_stats old;
            sieve_robots_stats_get(e->rules, &old);
            e->bytes -= old.memory;
            c->bytes -= old.memory;
            sieve_robots_free(e->rules);
        }
        e->rules = rules;
        e->bytes += st.memory;
        c->bytes += st.memory;
    }
    set_down(c, e, NULL);
    end_fetch(c, e, now, c->expiry_s, comes_back);
    pthread_mutex_unlock(&c->lock);
}

unsigned robots_cache_failures(robots_cache *c, const char *host, size_t len)
{
    pthread_mutex_lock(&c->lock);
    entry *e = find(c, host, len, hash_of(host, len));
    unsigned n = e != NULL ? e->failures : UINT_MAX;
    pthread_mutex_unlock(&c->lock);
    return n;
}

void robots_cache_again(robots_cache *c, const char *host, size_t len)
{
    pthread_mutex_lock(&c->lock);
    entry *e = find(c, host, len, hash_of(host, len));
    if (e != NULL) {
        /* The URLs that waited are queued again, and ask again. */
        e->fetching = false;
        e->waiters = 0;
        e->admits = 0;
        e->expires = 0;
        e->failures += e->failures < UINT_MAX - 1;
        set_down(c, e, NULL);
    }
    pthread_mutex_unlock(&c->lock);
}

void robots_cache_down(robots_cache *c, const char *host, size_t len, const char *why, double now)
{
    pthread_mutex_lock(&c->lock);
    entry *e = find(c, host, len, hash_of(host, len));
    if (e != NULL) {
        set_down(c, e, why);
        end_fetch(c, e, now, c->retry_s, false);
    }
    pthread_mutex_unlock(&c->lock);
}

void robots_cache_stats(robots_cache *c, uint64_t *hosts, uint64_t *bytes)
{
    pthread_mutex_lock(&c->lock);
    *hosts = c->count;
    *bytes = c->bytes;
    pthread_mutex_unlock(&c->lock);
}
