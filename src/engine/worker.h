/* worker.h - a fetch worker: one thread, one curl multi handle, up to
 * `concurrency` transfers at once, fed by the frontier, and beside them a
 * few robots.txt fetches of hosts met for the first time. */
#ifndef SIEVE_WORKER_H
#define SIEVE_WORKER_H

#include <pthread.h>

#include "engine.h"
#include "xfer.h"

struct worker {
    sieve_crawler *c;
    unsigned index; /* its partition of the frontier's hosts */
    CURLM *multi;
    xfer *slots;                     /* nslots for any transfer, then nrobots for robots.txt */
    unsigned nslots, active;         /* the first slots, and how many are busy */
    unsigned nrobots, robots_active; /* the robots.txt slots, and the busy ones */
    atomic_bool hungry;              /* has free slots: a frontier event must wake it */
    double ready_in;                 /* seconds until the frontier may have a URL ready */
    pthread_t thread;
    char popbuf[SIEVE_POP_BUF_MAX]; /* a URL popped, with its data */
    /* links whose URLs went to the frontier, skipped when pages repeat
     * them; NULL when the embedder filters links (its filter sees them) */
    sieve_links_memo *memo;
    /* records the embedder holds back (hold.c): held counts them, the
     * released ones wait on the list, under hold_lock */
    unsigned held;
    pthread_mutex_t hold_lock;
    sieve_crawl_hold *released, *released_tail;
    bool asleep; /* in curl_multi_poll(), none released: a release wakes it */
};

/* A worker thread's stack: glibc's usual default (8 MiB, from the
 * stack limit), whatever the process's default for new threads is. */
#define WORKER_STACK_BYTES ((size_t)8 << 20)

/* Creates the worker with this index (its partition of the hosts) and
 * its transfer slots; NULL when out of memory or when curl cannot make a
 * handle. */
worker *worker_new(sieve_crawler *c, unsigned index);

/* Runs the worker until the frontier is drained or closed and its own
 * transfers have ended. A pthread start routine: arg is a worker. */
void *worker_run(void *arg);

/* Makes a worker waiting in curl look at the crawl's state again.
 * Thread-safe. */
void worker_wake(worker *w);

/* The frontier's on_wake: wakes every worker with free slots. ud is the
 * crawler. Lock-free, so the frontier may call it under its lock. */
void worker_frontier_woke(void *ud);

void worker_free(worker *w);

/* A slot with no transfer, or NULL. */
xfer *worker_free_slot(worker *w);

/* A robots.txt slot with no transfer, or else a slot with none, or NULL. */
xfer *worker_robots_slot(worker *w);

/* Counts x in or out of its worker's busy slots. */
void worker_slot_busy(worker *w, const xfer *x, bool busy);

/* Starts the popped URL u in a free slot, as a page or a sitemap. */
void worker_start(worker *w, const sieve_url *u);

#endif
