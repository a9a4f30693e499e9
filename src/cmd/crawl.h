/* crawl.h - the state `sieve crawl` shares between its parts.
 *
 * Data flow: seeds are canonicalized and pushed into the frontier; W
 * worker threads each drive up to C transfers through their own curl multi
 * handle, popping URLs from the frontier; every HTML body is parsed while
 * it streams in, its links canonicalized, checked against the scope and
 * pushed as one batch per page; one JSON line per fetched URL goes to the
 * output. The frontier decides what is fetched next and when the crawl is
 * over; the signal thread closes it on SIGINT or SIGTERM. */
#ifndef SIEVE_CRAWL_H
#define SIEVE_CRAWL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <curl/curl.h>

#include "sieve/sieve.h"
#include "sieve/url.h"
#include "scope.h"

/* Longest URL the crawler handles; --max-url-len may lower it. */
#define CRAWL_URL_MAX 8192

typedef struct record_writer record_writer;

struct crawl_opts {
    unsigned workers;          /* W threads; default: number of cores */
    unsigned concurrency;      /* C transfers per worker; default 32 */
    unsigned max_redirects;    /* redirect hops followed per URL; default 10 */
    unsigned host_connections; /* K: a host's URLs in flight at once; default 2 */
    double delay_s;            /* D: between two requests to a host; default 1 */
    double max_crawl_delay_s;  /* cap on robots.txt Crawl-delay; default 30 */
    bool ignore_robots;        /* --ignore-robots */
    bool sitemaps;             /* seed hosts from robots.txt Sitemap lines; default on */
    uint64_t max_sitemaps;     /* sitemap files queued in a crawl; default 10000 */
    double robots_expiry_s;    /* robots.txt kept this long; default 1 day */
    long connect_timeout_ms;   /* default 10 s */
    long timeout_ms;           /* whole transfer; default 60 s */
    long low_speed_bytes;      /* abort below this rate ... */
    long low_speed_time_s;     /* ... sustained this long; default 100 B/s, 15 s */
    uint64_t max_page_bytes;   /* after decompression; default 10 MiB */
    const char *user_agent;    /* default "sieve/VERSION (web crawler)" */
    bool follow_nofollow;      /* --follow-nofollow */
    scope_kind scope;          /* default SCOPE_HOST */
    const char **allow;        /* regular expressions, URL must match one (if any) */
    unsigned n_allow;
    const char **deny; /* URL must match none */
    unsigned n_deny;
    long max_depth;              /* -1: no limit */
    uint64_t max_pages;          /* 0: no limit */
    uint64_t max_pages_per_host; /* 0: no limit */
    const char **strip_params;   /* query parameters to drop */
    unsigned n_strip_params;
    bool sort_query;
    size_t max_url_len;     /* trap guard; default 2048 */
    unsigned max_segments;  /* trap guard; default 20 */
    unsigned max_repeat;    /* trap guard; default 2 */
    const char *output;     /* NULL: stdout */
    bool quiet;             /* no status line */
    sieve_seen_config seen; /* --seen, --capacity, --fp-rate, --on-overflow */
    const char **seeds;     /* seed files or URLs, as given */
    unsigned n_seeds;
};
typedef struct crawl_opts crawl_opts;

/* Counters every worker adds to; read by the status line and summary. */
typedef struct crawl_counters {
    atomic_uint_fast64_t reserved;                /* pops allowed under --max-pages */
    atomic_uint_fast64_t started;                 /* transfers begun */
    atomic_uint_fast64_t fetched;                 /* records written */
    atomic_uint_fast64_t errors;                  /* records with an error */
    atomic_uint_fast64_t bytes;                   /* body bytes received, decompressed */
    atomic_uint_fast64_t links;                   /* links found */
    atomic_uint_fast64_t links_new;               /* links enqueued */
    atomic_uint_fast64_t refused[SCOPE_VERDICTS]; /* links left out, by reason */
    atomic_uint_fast64_t refused_robots;          /* URLs not fetched: robots.txt */
    atomic_uint_fast64_t robots_fetched;          /* robots.txt requests */
    atomic_uint_fast64_t sitemaps;                /* sitemap files queued */
    atomic_uint_fast64_t sitemaps_left_out;       /* not queued: --max-sitemaps, or
                                                     listed by a listed sitemap index */
    atomic_uint_fast64_t sitemap_pages;           /* page entries read from sitemaps */
    atomic_uint_fast64_t sitemap_bad;             /* entries that are no crawlable URL */
} crawl_counters;

typedef struct crawl {
    const crawl_opts *opts;
    sieve_frontier *frontier;
    sieve_canon *canon;
    scope *scope;
    record_writer *out;
    struct robots_cache *robots;
    CURLSH *share;
    crawl_counters n;
    atomic_bool abort_now; /* second signal: abort transfers in flight */
    atomic_bool limit_hit; /* --max-pages reached */
    atomic_bool failed;    /* the output broke: the crawl stops */
} crawl;

/* Stops the crawl because of an error the run cannot recover from. */
void crawl_fail(crawl *c, const char *why);

/* The tag a URL carries in the frontier: depth in the low 23 bits (held at
 * the top rather than wrapped), whether the URL names a sitemap in bit 23,
 * and the redirect hops taken to reach it in the high 8. */
#define CRAWL_DEPTH_MASK  0x7fffffu
#define CRAWL_SITEMAP_BIT 0x800000u
#define CRAWL_HOPS_SHIFT  24
static inline uint32_t crawl_tag(uint32_t depth, uint32_t hops, bool sitemap)
{
    return (depth < CRAWL_DEPTH_MASK ? depth : CRAWL_DEPTH_MASK) |
           (sitemap ? CRAWL_SITEMAP_BIT : 0) | (hops << CRAWL_HOPS_SHIFT);
}

#endif
