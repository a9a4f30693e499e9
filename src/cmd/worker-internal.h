/* worker-internal.h - what the fetch worker (worker.c), its robots.txt
 * gate (robots-gate.c) and its sitemap reader (sitemaps.c) share: the
 * transfer slots and parked URLs. */
#ifndef SIEVE_WORKER_INTERNAL_H
#define SIEVE_WORKER_INTERNAL_H

#include <stdbool.h>
#include <time.h>

#include "crawl.h"
#include "sieve/links.h"
#include "sieve/sitemap.h"
#include "worker.h"

#define LINK_BATCH 64
#define LINK_STORE (CRAWL_URL_MAX + 1) * 4

typedef struct xfer {
    worker *w;
    CURL *easy;
    int busy;
    char url[CRAWL_URL_MAX + 1];
    sieve_url popped; /* as the frontier gave it, for done() */
    /* A robots.txt transfer: its body, and the page that waits for it. */
    bool robots;
    char *body;
    size_t body_len;
    double started;
    char page[CRAWL_URL_MAX + 1];
    sieve_url page_url;
    uint32_t depth, hops;
    bool sitemap; /* the URL names a sitemap: its body goes to sm */
    struct timespec start;
    char errbuf[CURL_ERROR_SIZE];
    const char *fail; /* our own reason for aborting, if any */
    int sniffed;
    long status;
    sieve_links *lx;
    sieve_sitemap *sm;
    int parse_rc;
    uint64_t bytes;
    uint64_t links_found, links_new;
    /* links waiting to be pushed, their text packed in store */
    sieve_url batch[LINK_BATCH];
    size_t host_off[LINK_BATCH], host_len[LINK_BATCH];
    size_t nbatch, store_used;
    char store[LINK_STORE];
} xfer;

/* A popped URL not yet started: its host's robots.txt is being fetched
 * (waiting), or its host's delay since that fetch has not passed. */
typedef struct parked {
    sieve_url u; /* u.url is owned */
    double not_before;
    bool waiting;
} parked;

struct worker {
    crawl *c;
    CURLM *multi;
    xfer *slots;
    unsigned nslots, active;
    parked *park;
    unsigned npark, cap_park;
    char popbuf[CRAWL_URL_MAX + 1];
};

/* worker.c */
xfer *worker_free_slot(worker *w);
/* Queues a canonical URL found by transfer x with its frontier tag, if the
 * scope takes it; returns whether it did. The URL goes out with the next
 * worker_flush_links(). */
bool worker_offer(xfer *x, const char *url, const sieve_canon_info *info, uint32_t tag);
/* Pushes the URLs x has queued; one the frontier had seen gives its host
 * quota back. */
void worker_flush_links(xfer *x);
void worker_begin(worker *w, xfer *x);
void worker_start_page(worker *w, const sieve_url *u);
double worker_now(void);

/* robots-gate.c */
size_t gate_keep_body(xfer *x, const char *data, size_t n);
void gate_dispatch(worker *w, const sieve_url *u);
void gate_run_parked(worker *w);
void gate_finish_robots(worker *w, xfer *x, CURLcode result);

/* sitemaps.c */
/* robots.txt of the host of robots_url listed these sitemaps: queue them. */
void sitemaps_seed(crawl *c, const char *robots_url, const sieve_robots *rules);
/* A sitemap's 2xx response began: start its parser in x->sm. */
void sitemap_begin(xfer *x);
/* Feeds a sitemap's body to its parser; returns n, or 0 (which aborts
 * the transfer, its reason in x->fail) once the parser has given up. */
size_t sitemap_body(xfer *x, const char *data, size_t n);
/* The transfer ended; complete says the body arrived whole. Sets the
 * transfer's link counts and frees the parser. */
void sitemap_end(xfer *x, bool complete);

#endif
