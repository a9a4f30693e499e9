/* hosts.h - per-host queues and the heap of hosts ready to be fetched from
 * (internal to the frontier, which holds the lock around every call).
 *
 * The queues hold entries (entry.h): a URL, or its data, a NUL and the
 * URL. Only hosts_push() looks inside one, to find its host. */
#ifndef SIEVE_HOSTS_H
#define SIEVE_HOSTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sieve/fifo.h"
#include "sieve/frontier.h"

typedef struct sieve_hosts sieve_hosts;

int hosts_new(sieve_hosts **out, const sieve_politeness *p);
void hosts_free(sieve_hosts *h);

/* The authority ("host" or "host:port") of a URL: the bytes after "://" up
 * to the first '/', '?' or '#'. Empty when the URL has no "//". */
void hosts_authority(const char *url, size_t len, const char **host, size_t *host_len);

/* Appends an entry of len bytes, whose URL starts at url_at, to its host's
 * queue. SIEVE_ENOMEM leaves everything as it was. */
int hosts_push(sieve_hosts *h, const char *entry, size_t len, size_t url_at, uint32_t tag,
               double now);

/* hosts_push_within()'s answer for an entry to defer (runs.h). */
#define HOSTS_DEFER 1

/* hosts_push(), but behind what the host has set aside: if it has
 * deferred URLs, or its queues hold some and this entry would take them
 * past window bytes (each entry counting its length plus
 * SIEVE_QUEUE_ENTRY_COST; window 0: always), nothing is appended and
 * HOSTS_DEFER says to defer it. *host_id gets the host's id (created if new) either way. */
int hosts_push_within(sieve_hosts *h, const char *entry, size_t len, size_t url_at, uint32_t tag,
                      double now, uint64_t window, uint32_t *host_id);

/* Counts n URLs of host_id as deferred (n < 0: brought back or gone).
 * A host with deferred URLs is ready as if they were queued, and never
 * forgotten. SIEVE_ESTATE for an unknown host or a count below 0. */
int hosts_defer(sieve_hosts *h, uint32_t host_id, int64_t n);

/* Appends a deferred entry brought back to host_id's queue, whatever its
 * window (the caller counts it out with hosts_defer()). */
int hosts_refill(sieve_hosts *h, uint32_t host_id, const char *entry, size_t len, uint32_t tag);

/* hosts_pop()'s answer when the readiest host has URLs deferred and none
 * in memory: *host_id names it, nothing was taken; refill it and pop
 * again. */
#define HOSTS_REFILL 2

/* A pop that prefers no partition. */
#define HOSTS_ANY UINT32_MAX

/* Takes the oldest entry of the host that has been ready longest, if one
 * is ready at now: SIEVE_OK, filling buf (cap bytes), *len, *tag and
 * *host_id. With partitions (hosts.c), the host is of partition part if
 * one there is ready, else of another; HOSTS_ANY prefers none.
 * Otherwise SIEVE_EAGAIN and *next_ready: when the earliest host becomes
 * ready (+inf when every host with URLs is at its connection limit).
 * SIEVE_ERANGE if cap is too small (nothing taken). Each call first
 * forgets a few idle hosts (hosts.c): a host id stays valid while the
 * host has a URL in flight or waiting for a retry. */
int hosts_pop(sieve_hosts *h, uint32_t part, double now, void *buf, size_t cap, size_t *len,
              uint32_t *tag, uint32_t *host_id, double *next_ready);

/* A URL of host_id is finished: frees a connection slot. Returns 1 if the
 * host became ready for another URL, 0 if not, SIEVE_ESTATE for an unknown
 * host or one with nothing in flight. */
int hosts_done(sieve_hosts *h, uint32_t host_id);

/* Puts an entry in front of host_id's queue (after those returned before
 * it), as a URL given back; nothing about the host's connections changes. */
int hosts_return(sieve_hosts *h, uint32_t host_id, const char *entry, size_t len, uint32_t tag);

/* Gives back a popped URL of host_id unfetched: it leaves the host's
 * in-flight count and is served again before the host's other URLs, not
 * before the host's delay, or pause_s if longer, has passed from now. */
int hosts_requeue(sieve_hosts *h, uint32_t host_id, const char *entry, size_t len, uint32_t tag,
                  double now, double pause_s);

/* A popped URL of host_id went elsewhere unfetched (set aside on disk
 * for a retry): it leaves the host's in-flight count, and the host starts
 * nothing before its delay, or pause_s if longer, has passed from now.
 * SIEVE_ESTATE for an unknown host or one with nothing in flight. */
int hosts_rest(sieve_hosts *h, uint32_t host_id, double now, double pause_s);

/* Counts a URL of host_id into (waiting) or out of the retry heap: while
 * any waits there the host is not forgotten, so its id stays valid.
 * SIEVE_ESTATE for an unknown host, or a count that would go below 0. */
int hosts_wait_later(sieve_hosts *h, uint32_t host_id, bool waiting);

/* Holds a host (it is given no URL) or releases it. Creates the host if
 * needed. */
int hosts_hold(sieve_hosts *h, const char *host, size_t len, bool held);

/* Starts no request to a host before until (a time of the caller's
 * clock), e.g. while a failing server is left alone. Creates the host if
 * needed. */
int hosts_pause(sieve_hosts *h, const char *host, size_t len, double until);

/* Sets a host's own delay between request starts (from robots.txt's
 * Crawl-delay), capped at the policy's max_delay. Creates the host if
 * needed. */
int hosts_set_delay(sieve_hosts *h, const char *host, size_t len, double delay);

/* Calls fn for every entry queued, each host's in the order pop() would
 * give them (URLs given back first), without taking any; stops at fn's
 * first nonzero return and returns it. */
int hosts_foreach(const sieve_hosts *h, sieve_fifo_visit_fn fn, void *ud);

uint64_t hosts_queued(const sieve_hosts *h);
/* Hosts known now: idle ones are forgotten (hosts.c). */
uint64_t hosts_count(const sieve_hosts *h);
uint64_t hosts_bytes(const sieve_hosts *h);

#endif
