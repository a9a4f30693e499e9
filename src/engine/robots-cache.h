/* robots-cache.h - each host's robots.txt, fetched once and shared by the
 * workers. */
#ifndef SIEVE_ROBOTS_CACHE_H
#define SIEVE_ROBOTS_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sieve/robots.h"

typedef struct robots_cache robots_cache;

typedef enum robots_state {
    ROBOTS_READY, /* *rules applies */
    ROBOTS_FETCH, /* the caller must fetch it, then call robots_cache_store() */
    ROBOTS_WAIT,  /* another transfer is fetching it */
} robots_state;

/* expiry_s: how long rules stay valid; retry_s: how long the "disallow
 * everything" of an unreachable or failing server lasts; budget: the most
 * bytes of entries and rules kept (0: no limit), past which the hosts
 * used least recently are dropped and asked again when they come back. */
int robots_cache_new(robots_cache **out, double expiry_s, double retry_s, uint64_t budget);
void robots_cache_free(robots_cache *c);

/* Looks up a host (its authority) for the URL whose path and query are
 * path (path_len bytes). ROBOTS_READY sets *allowed, whether the rules
 * allow the path, and *crawl_delay, the rules' Crawl-delay (-1 when
 * none). Thread-safe. */
robots_state robots_cache_lookup(robots_cache *c, const char *host, size_t len, double now,
                                 const char *path, size_t path_len, bool *allowed,
                                 double *crawl_delay);

/* Stores the outcome of a fetch claimed with ROBOTS_FETCH, taking rules
 * (NULL keeps what the host had). temporary marks the outcome of a
 * failure, kept for retry_s only. The lookups that waited for the fetch
 * (the claiming one too if comes_back: its URL waits for its host's turn)
 * get these rules next even if they have expired by then, so that an
 * expiry shorter than the host's delay cannot send them round fetching
 * robots.txt for ever; until then the host is not dropped either. */
void robots_cache_store(robots_cache *c, const char *host, size_t len, sieve_robots *rules,
                        double now, bool temporary, bool comes_back);

/* Hosts held, and the bytes they take with their rules. */
void robots_cache_stats(robots_cache *c, uint64_t *hosts, uint64_t *bytes);

#endif
