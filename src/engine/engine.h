/* engine.h - the state a crawl's modules share: the sieve_crawler behind
 * the opaque handle of sieve/crawl.h.
 *
 * Layers, from the bottom: the frontier library (src/lib) knows nothing
 * of fetching; the engine's helpers (scope, robots cache, credentials,
 * accept rules) know only the library; the fetch modules (worker, gate,
 * the three transfer kinds, outlinks, record) use those helpers; engine.c
 * wires everything and is the only file behind the public API. */
#ifndef SIEVE_ENGINE_H
#define SIEVE_ENGINE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <curl/curl.h>

#include "sieve/crawl.h"
#include "sieve/hashset.h"
#include "sieve/url.h"

#include "accept.h"
#include "backoff.h"
#include "creds.h"
#include "robots-cache.h"
#include "scope.h"

/* A host whose robots.txt could not be had, its tries spent, is left
 * alone this long (or for the expiry, if that is shorter), each of its
 * URLs refused with a record; then robots.txt is asked again. */
#define ENGINE_ROBOTS_RETRY_S 60.0

/* The DNS cache is swept of names past their lifetime about this often
 * (see xfer.c). */
#define ENGINE_DNS_SWEEP_MS 1000

/* Counters every worker adds to; stats_get() reads them. */
typedef struct engine_counters {
    atomic_uint_fast64_t reserved; /* pops allowed under max_pages */
    atomic_uint_fast64_t started;
    atomic_uint_fast64_t fetched;
    atomic_uint_fast64_t outcomes[SIEVE_OUTCOMES];
    atomic_uint_fast64_t errors;
    atomic_uint_fast64_t aborted;
    atomic_uint_fast64_t retries;
    atomic_uint_fast64_t in_flight;
    atomic_uint_fast64_t held; /* records held back (hold.c) */
    atomic_uint_fast64_t held_max;
    atomic_uint_fast64_t bytes;
    atomic_uint_fast64_t links;
    atomic_uint_fast64_t links_new;
    atomic_uint_fast64_t refused[SCOPE_VERDICTS]; /* links left out, by reason */
    atomic_uint_fast64_t filtered;
    atomic_uint_fast64_t nofollow, not_http, trap, malformed; /* refused by the extractor */
    atomic_uint_fast64_t robots_fetched;
    atomic_uint_fast64_t robots_denied;
    atomic_uint_fast64_t sitemaps;
    atomic_uint_fast64_t sitemaps_left_out;
    atomic_uint_fast64_t sitemap_pages;
    atomic_uint_fast64_t sitemap_bad;
    atomic_uint_fast64_t transfers; /* transfers begun, robots.txt included: the last id */
} engine_counters;

struct sieve_crawler {
    sieve_crawl_options o; /* a deep copy: its strings live in strings */
    char *strings;
    char *meaning; /* with a state_dir: what gives the state its meaning */
    sieve_crawl_callbacks cb;
    void *ud;

    sieve_frontier *frontier;
    sieve_canon *canon;
    scope *scope;
    robots_cache *robots;
    backoff *backoff; /* failing hosts, and the pauses before retries */
    creds *creds;
    sieve_hashset *seed_hosts; /* hosts the seeds name: reached whatever their address */
    accept_rules *accept;
    struct curl_slist *headers;
    CURLSH *share;
    pthread_mutex_t share_locks[CURL_LOCK_DATA_LAST];

    engine_counters n;
    atomic_bool running;   /* run() has started */
    atomic_int stops;      /* stop() calls */
    atomic_bool abort_now; /* transfers in flight end now, without records */
    atomic_bool limit_hit; /* max_pages reached */
    atomic_int failure;    /* a status that ends the run (first one wins) */
    atomic_uint workers_exited;
    atomic_uint workers_started; /* for the statistics: what really ran */
    struct worker **workers;     /* while run() runs: every worker, made before any starts */
    unsigned nworkers;
    int ctl[2];                /* control pipe: stop() and exiting workers write to it */
    atomic_llong dns_sweep_ms; /* when the next transfer sweeps the DNS cache */
};

/* Ends the run with status (a negative SIEVE_E*): no new fetch, transfers
 * in flight aborted. The first failure wins. Thread-safe. */
void engine_fail(sieve_crawler *c, int status);

/* Reports u done to the frontier; a failure there (the state's journal
 * could not be written) ends the run. */
void engine_done(sieve_crawler *c, const sieve_url *u);

/* Wakes run() (and through it the workers). Async-signal-safe. */
void engine_poke(sieve_crawler *c, char why);

/* The tag a URL carries in the frontier: depth in the low 20 bits (held at
 * the top rather than wrapped), whether the URL names a sitemap in bit 20,
 * the retries already made in bits 21-23, and the redirect hops taken to
 * reach it in the high 8. */
#define TAG_DEPTH_MASK    0xfffffu
#define TAG_SITEMAP_BIT   0x100000u
#define TAG_RETRIES_SHIFT 21
#define TAG_RETRIES_MASK  0x7u
#define TAG_HOPS_SHIFT    24
static inline uint32_t tag_make(uint32_t depth, uint32_t hops, bool sitemap)
{
    return (depth < TAG_DEPTH_MASK ? depth : TAG_DEPTH_MASK) | (sitemap ? TAG_SITEMAP_BIT : 0) |
           (hops << TAG_HOPS_SHIFT);
}

static inline unsigned tag_retries(uint32_t tag)
{
    return (tag >> TAG_RETRIES_SHIFT) & TAG_RETRIES_MASK;
}

static inline uint32_t tag_with_retries(uint32_t tag, unsigned retries)
{
    return (tag & ~(TAG_RETRIES_MASK << TAG_RETRIES_SHIFT)) |
           ((retries & TAG_RETRIES_MASK) << TAG_RETRIES_SHIFT);
}

#endif
