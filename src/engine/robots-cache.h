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
    ROBOTS_READY, /* *allowed and *crawl_delay apply */
    ROBOTS_DOWN,  /* robots.txt could not be had: nothing is allowed for now */
    ROBOTS_FETCH, /* the caller must fetch it, then end the claim with
                     robots_cache_store(), _again() or _down() */
    ROBOTS_WAIT,  /* another transfer is fetching it */
} robots_state;

/* The most bytes of a ROBOTS_DOWN reason, its terminating NUL included. */
#define ROBOTS_WHY_MAX 256

/* expiry_s: how long rules stay valid; retry_s: how long the "disallow
 * everything" of an unreachable or failing server lasts; budget: the most
 * bytes of entries and rules kept (0: no limit), past which the hosts
 * used least recently are dropped and asked again when they come back. */
int robots_cache_new(robots_cache **out, double expiry_s, double retry_s, uint64_t budget);
void robots_cache_free(robots_cache *c);

/* Looks up a host (its authority) for the URL whose path and query are
 * path (path_len bytes). ROBOTS_READY sets *allowed, whether the rules
 * allow the path, and *crawl_delay, the rules' Crawl-delay (-1 when
 * none); ROBOTS_DOWN copies the reason robots_cache_down() was given into
 * why (ROBOTS_WHY_MAX bytes). Thread-safe. */
robots_state robots_cache_lookup(robots_cache *c, const char *host, size_t len, double now,
                                 const char *path, size_t path_len, bool *allowed,
                                 double *crawl_delay, char *why);

/* Stores the rules a fetch claimed with ROBOTS_FETCH brought, taking them
 * (NULL keeps what the host had), for expiry_s. The lookups that waited
 * for the fetch (the claiming one too if comes_back: its URL waits for
 * its host's turn) get these rules next even if they have expired by
 * then, so that an expiry shorter than the host's delay cannot send them
 * round fetching robots.txt for ever; until then the host is not dropped
 * either. */
void robots_cache_store(robots_cache *c, const char *host, size_t len, sieve_robots *rules,
                        double now, bool comes_back);

/* How many fetches of the host's robots.txt in a row, before the one
 * claimed now, failed and were made again (robots_cache_again());
 * UINT_MAX when the cache does not hold the host (it had no memory for
 * it), so that such a host is not asked again and again. Thread-safe. */
unsigned robots_cache_failures(robots_cache *c, const char *host, size_t len);

/* Ends a claimed fetch that failed in a way that may pass: nothing is
 * stored, the failure is counted, and the host's next lookup claims the
 * fetch anew. The host is kept in memory until a fetch ends otherwise. */
void robots_cache_again(robots_cache *c, const char *host, size_t len);

/* Ends a claimed fetch that could not get robots.txt for good: for
 * retry_s, lookups answer ROBOTS_DOWN with why (cut to ROBOTS_WHY_MAX - 1
 * bytes), the lookups that waited for the fetch even past that. The
 * failures in a row are forgotten: the next fetch has all its tries. */
void robots_cache_down(robots_cache *c, const char *host, size_t len, const char *why, double now);

/* Hosts held, and the bytes they take with their rules. */
void robots_cache_stats(robots_cache *c, uint64_t *hosts, uint64_t *bytes);

#endif
