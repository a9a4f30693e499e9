/* frontier-internal.h - what frontier.c (pushing, opening, checkpoints)
 * and frontier-take.c (pops, tickets, done and requeues) share: the
 * frontier's state under its one lock, and the helpers both sides call
 * with it held. Not exported. */
#ifndef SIEVE_FRONTIER_INTERNAL_H
#define SIEVE_FRONTIER_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "frontier-state.h"
#include "hosts.h"
#include "later.h"
#include "runs.h"
#include "sieve/fifo.h"
#include "sieve/frontier.h"

/* A URL in flight: what done() checks a ticket against. */
typedef struct flight {
    char *url; /* a durable frontier's copy of its entry, for checkpoints; grows only */
    uint32_t len, cap, tag;
    uint64_t url_hash;
    uint32_t gen;  /* the ticket's high half; never 0, so no zeroed ticket is valid */
    uint32_t host; /* the host whose slot done() frees */
    uint32_t next; /* next free slot, while free */
    bool busy;
} flight;

#define FLIGHT_NONE     UINT32_MAX
#define FLIGHT_URL_LOST UINT32_MAX /* flight.len: its copy could not be kept */
/* A host's window: the bytes of its URLs in memory past which the rest
 * wait on disk (runs.h), as a share of queue_memory. Several slow hosts
 * may fill memory before the others' URLs are held back. */
#define WINDOW_SHARE 8
#define WINDOW_MIN   (4u << 10)
/* The buffer of deferred URLs, a share of queue_memory, counted in it. */
#define DEFER_BUFFER_SHARE 16
#define DEFER_BUFFER_MIN   (16u << 10)
/* A refill brings back at most this many bytes of a host's URLs at a
 * time (and at most its window). */
#define REFILL_MAX (256u << 10)
/* The spill's head reads at most this share of queue_memory a pop, so
 * that a spill of one held host's URLs, all deferred, does not hold the
 * lock for long. */
#define HEAD_SHARE 4
/* The retry heap's share of queue_memory. Retries wait in memory, off
 * their hosts, and an outage over many hosts would give back a few URLs
 * of each: past this share a URL given back for a retry waits on disk
 * behind its host's other URLs instead, and its host rests for the wait
 * (docs/durable-frontier.md). */
#define LATER_SHARE 8
/* Slots made by new(), so that pops are quick from the first on. */
#define FLIGHTS_INITIAL 64
#define TICKET_SEED     FSTATE_URL_SEED /* one hash for the ticket and the journal */

struct sieve_frontier {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    sieve_seen *seen;
    sieve_fifo *queue;   /* the queue, without per-host scheduling */
    sieve_hosts *hosts;  /* per-host queues, with it */
    unsigned partitions; /* of the hosts, for pop_from() */
    size_t max_url_len;
    sieve_logger logger;
    double warn_at;  /* next estimated count that triggers a warning */
    int grow;        /* the seen-set grows instead of overflowing */
    unsigned layers; /* Bloom layers last reported */
    sieve_frontier_stats st;
    unsigned waiters;
    sieve_frontier_wake_fn on_wake;
    void *wake_ud;
    fstate *state;      /* durable: the state directory; NULL in memory */
    bool keep_flights;  /* flights keep their URLs, for checkpoints */
    uint64_t budget;    /* queue_memory; 0: none */
    uint64_t ram_bytes; /* what the URLs queued in memory cost, as budget counts */
    uint64_t spilled;   /* push records in the journal the head has to read */
    runs *runs;         /* URLs deferred behind their hosts' windows: with a budget and hosts */
    runs_list *listing; /* a checkpoint's listing of them, while one is taken */
    uint64_t window;    /* a host's share of the budget before its URLs are deferred */
    flight *flights;    /* the URLs in flight, by ticket index */
    uint32_t nflights, cap_flights;
    uint32_t free_flight; /* head of the free slots, or FLIGHT_NONE */
    later later;          /* URLs given back to wait for a time: retries */
    char *entry;          /* a URL with data made into its entry (entry.h) */
    size_t entry_cap;
};

/* XXH3-64, inlined: a pop and its done() each hash the URL once. */
static inline uint64_t frontier_url_hash(const char *url, size_t len)
{
    return XXH3_64bits_withSeed(url, len, TICKET_SEED);
}

/* CLOCK_MONOTONIC in seconds. */
double frontier_now_s(void);
/* Wakes the pops blocked in pop() (one, or all) and tells the embedder's
 * on_wake, for callers that wait elsewhere. Lock held. */
void frontier_wake_locked(sieve_frontier *f, bool all);
/* Sets an entry of host id aside behind its window. Lock held. */
int frontier_defer_locked(sieve_frontier *f, uint32_t id, const char *e, size_t len, uint32_t tag);
/* Queues an entry in memory, or sets it aside past window bytes of its
 * host's queue. Lock held, or no other thread yet. */
int frontier_queue_entry(sieve_frontier *f, const char *e, size_t len, uint32_t tag, double now,
                         uint64_t window);
/* u's entry (entry.h), made in f's buffer if u has data; NULL when that
 * cannot grow. Lock held. */
const char *frontier_entry_locked(sieve_frontier *f, const sieve_url *u);
/* Data a URL may carry: at most SIEVE_URL_DATA_MAX bytes, and there. */
int frontier_check_data(const sieve_url *u);

#endif
