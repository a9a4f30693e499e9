/* frontier-take.c - URLs out of the frontier and back: pops, the
 * tickets that check every done() and requeue() against its pop, host
 * holds and pauses, and the end of a crawl.
 *
 * Completion. in_flight counts URLs popped and not yet reported done().
 * The crawl is over when the queue is empty and in_flight is 0; the thread
 * that makes it so wakes every waiter, so workers never poll.
 *
 * Tickets. A done() that answers no pop, or answers one twice, would
 * corrupt that count and end a crawl early (or never). So every pop takes
 * a slot in a table of URLs in flight, holding the URL's hash and host,
 * and hands out a ticket: the slot's index and its generation, which goes
 * up each time the slot is freed. done() and requeue() accept a URL only
 * if its ticket names a slot in use at that generation and its bytes and
 * host are the ones popped. Freed slots are reused, so the table grows
 * only to the most URLs ever in flight at once: a pop allocates nothing. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "entry.h"
#include "frontier-internal.h"
#include "sieve/hashset.h"
#include "sieve/status.h"

static uint64_t queued_locked(const sieve_frontier *f)
{
    return (f->hosts != NULL ? hosts_queued(f->hosts) : sieve_fifo_length(f->queue)) + f->spilled +
           f->later.n + (f->runs != NULL ? runs_total(f->runs) : 0);
}

static int drained_locked(const sieve_frontier *f)
{
    return queued_locked(f) == 0 && f->st.in_flight == 0;
}

static struct timespec timespec_of(double t)
{
    struct timespec ts;
    ts.tv_sec = (time_t)t;
    ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

/* ---- tickets: the URLs in flight ---- */

/* Makes sure a slot is free before a URL is taken, so that a pop that
 * cannot record its URL takes nothing. The table doubles: it grows only
 * with the most URLs ever in flight at once. */
static int reserve_flight_locked(sieve_frontier *f)
{
    if (f->free_flight != FLIGHT_NONE || f->nflights < f->cap_flights)
        return SIEVE_OK;
    if (f->cap_flights >= FLIGHT_NONE / 2)
        return SIEVE_ENOMEM;
    uint32_t cap = f->cap_flights * 2;
    flight *fl = realloc(f->flights, cap * sizeof *fl);
    if (fl == NULL)
        return SIEVE_ENOMEM;
    f->flights = fl;
    f->cap_flights = cap;
    return SIEVE_OK;
}

/* A durable frontier's checkpoints list the URLs in flight, so a slot
 * keeps a copy of the entry (the URL and its data); its buffer only
 * grows, so a steady crawl allocates nothing. If it cannot grow, the slot
 * is marked (FLIGHT_URL_LOST) and checkpoints wait until that URL lands
 * (the journal still has it). */
static void keep_flight_url(flight *x, const char *url, size_t len, uint32_t tag)
{
    if (len > x->cap) {
        size_t cap = len > 2 * (size_t)x->cap ? len : 2 * (size_t)x->cap;
        char *p = realloc(x->url, cap < 128 ? 128 : cap);
        if (p != NULL) {
            x->url = p;
            x->cap = (uint32_t)(cap < 128 ? 128 : cap);
        }
    }
    x->len = len <= x->cap ? (uint32_t)len : FLIGHT_URL_LOST;
    if (x->len != FLIGHT_URL_LOST)
        memcpy(x->url, url, len);
    x->tag = tag;
}

/* Records a URL just taken (a slot was reserved), u, whose entry is e (n
 * bytes), and returns its ticket. */
static uint64_t board_locked(sieve_frontier *f, const char *e, size_t n, const sieve_url *u)
{
    uint32_t i = f->free_flight;
    if (i != FLIGHT_NONE) {
        f->free_flight = f->flights[i].next;
    } else {
        i = f->nflights++;
        f->flights[i] = (flight){.gen = 1};
    }
    flight *x = &f->flights[i];
    if (f->keep_flights)
        keep_flight_url(x, e, n, u->depth);
    x->url_hash = frontier_url_hash(u->url, u->len);
    x->host = u->host;
    x->busy = true;
    return (uint64_t)x->gen << 32 | i;
}

/* The slot of u if u is a URL in flight as pop() handed it out (h is the
 * hash of its bytes), else NULL. */
static flight *flight_of_locked(sieve_frontier *f, const sieve_url *u, uint64_t h)
{
    uint32_t i = (uint32_t)u->ticket;
    if (i >= f->nflights)
        return NULL;
    flight *x = &f->flights[i];
    if (!x->busy || x->gen != (uint32_t)(u->ticket >> 32) || x->host != u->host || x->url_hash != h)
        return NULL;
    return x;
}

/* Frees a slot; its next ticket differs from every earlier one (until the
 * generation wraps after 2^32 - 1 reuses). */
static void land_locked(sieve_frontier *f, flight *x)
{
    x->busy = false;
    x->gen = x->gen == UINT32_MAX ? 1 : x->gen + 1;
    x->next = f->free_flight;
    f->free_flight = (uint32_t)(x - f->flights);
}

/* Reads the spill back from the journal, in order, until memory holds the
 * budget's worth or the spill is all in (or a share of the budget was
 * read: see HEAD_SHARE). A read that fails closes the frontier: a damaged
 * journal must not end the crawl as if it were done. */
static int refill_locked(sieve_frontier *f, double now)
{
    uint64_t read = 0;
    while (f->spilled > 0 && f->ram_bytes < f->budget && read < f->budget / HEAD_SHARE + 1) {
        const char *e;
        size_t len;
        uint32_t tag;
        uint64_t passed;
        int rc = fstate_head_next(f->state, &e, &len, &tag, &passed);
        /* URLs done before a recovery, passed over, were counted too */
        f->spilled -= passed < f->spilled ? passed : f->spilled;
        if (rc == SIEVE_EAGAIN && f->spilled == 0)
            break;
        if (rc == SIEVE_OK)
            rc = frontier_queue_entry(f, e, len, tag, now, f->window);
        if (rc == SIEVE_EAGAIN) {
            sieve_log(&f->logger, SIEVE_LOG_ERROR,
                      "the journal ended with %llu queued URLs not read back",
                      (unsigned long long)f->spilled);
            rc = SIEVE_ETRUNCATED;
        }
        if (rc != SIEVE_OK) {
            f->st.closed = 1;
            frontier_wake_locked(f, true);
            return rc == SIEVE_ENOMEM ? rc : SIEVE_ECLOSED;
        }
        read += len + SIEVE_QUEUE_ENTRY_COST;
    }
    if (f->spilled == 0)
        fstate_head_stop(f->state);
    return SIEVE_OK;
}

static int bring_back(void *ud, uint32_t host, const char *e, size_t len, uint32_t tag)
{
    sieve_frontier *f = ud;
    int rc = hosts_refill(f->hosts, host, e, len, tag);
    if (rc == SIEVE_OK)
        f->ram_bytes += len + SIEVE_QUEUE_ENTRY_COST;
    return rc;
}

/* Brings a host's oldest deferred URLs back to its queue: what the budget
 * has room for, within its window and REFILL_MAX, and one at least. A run
 * that cannot be read closes the frontier, as a damaged journal does. */
static int refill_host_locked(sieve_frontier *f, uint32_t host)
{
    uint64_t room = f->ram_bytes < f->budget ? f->budget - f->ram_bytes : 0;
    uint64_t max = f->window < REFILL_MAX ? f->window : REFILL_MAX;
    size_t taken;
    int rc = runs_take(f->runs, host, room < max ? room : max, bring_back, f, &taken);
    if (taken > 0)
        (void)hosts_defer(f->hosts, host,
                          -(int64_t)taken); /* counted in by frontier_defer_locked() */
    else if (rc == SIEVE_OK) /* the host counts URLs the runs do not have: never loop on it */
        rc = SIEVE_ESTATE;
    if (rc == SIEVE_EIO || rc == SIEVE_EFORMAT || rc == SIEVE_ESTATE) {
        sieve_log(&f->logger, SIEVE_LOG_ERROR, "%s",
                  rc == SIEVE_ESTATE ? "deferred URLs out of step with their host: the frontier "
                                       "stops rather than lose track of them"
                                     : runs_message(f->runs));
        f->st.closed = 1;
        frontier_wake_locked(f, true);
        return SIEVE_ECLOSED;
    }
    return rc;
}

/* URLs whose wait is over go back in front of their hosts' queues. One
 * that cannot (no memory) waits on and is tried at the next look. */
static void release_due_locked(sieve_frontier *f, double now)
{
    const later_url *first;
    while ((first = later_first(&f->later)) != NULL && first->due <= now) {
        if (hosts_return(f->hosts, first->host, first->url, first->len, first->tag) != SIEVE_OK)
            return;
        later_url u = later_take(&f->later);
        hosts_wait_later(f->hosts, u.host, false);
        if (f->budget > 0)
            f->ram_bytes += u.len + SIEVE_QUEUE_ENTRY_COST;
        free(u.url);
    }
}

/* Takes the next URL if one may be fetched now. Without per-host
 * scheduling that is the oldest URL; with it, the oldest URL of the host
 * that has been ready longest, in partition part if one there is. On SIEVE_EAGAIN, *next_ready says
 * when a URL will be ready (+inf: not until a push or a done()). */
static int take_locked(sieve_frontier *f, uint32_t part, double now, char *buf, size_t cap,
                       sieve_url *out, double *next_ready)
{
    size_t len;
    uint32_t tag, host = 0;
    int rc = reserve_flight_locked(f);
    if (rc != SIEVE_OK)
        return rc;
    if (f->spilled > 0 && f->ram_bytes < f->budget / 2 && (rc = refill_locked(f, now)) != SIEVE_OK)
        return rc;
    /* One byte is kept back for the terminating NUL. */
    if (f->hosts != NULL) {
        release_due_locked(f, now);
        while ((rc = hosts_pop(f->hosts, part, now, buf, cap - 1, &len, &tag, &host, next_ready)) ==
                   HOSTS_REFILL &&
               (rc = refill_host_locked(f, host)) == SIEVE_OK)
            ;
        const later_url *first = later_first(&f->later);
        if (rc == SIEVE_EAGAIN && first != NULL && first->due < *next_ready)
            *next_ready = first->due;
    } else {
        rc = sieve_fifo_pop(f->queue, buf, cap - 1, &len, &tag);
        *next_ready = 1.0 / 0.0;
    }
    if (rc != SIEVE_OK)
        return rc;
    buf[len] = '\0';
    if (f->budget > 0)
        f->ram_bytes -= len + SIEVE_QUEUE_ENTRY_COST;
    sieve_url u = {.depth = tag, .host = host};
    entry_split(buf, len, &u);
    u.ticket = board_locked(f, buf, len, &u);
    *out = u;
    f->st.popped++;
    f->st.in_flight++;
    return SIEVE_OK;
}

static int pop_part(sieve_frontier *f, uint32_t part, char *buf, size_t cap, sieve_url *out,
                    int timeout_ms)
{
    double deadline = timeout_ms > 0 ? frontier_now_s() + timeout_ms / 1e3 : 0;
    int rc;
    pthread_mutex_lock(&f->lock);
    for (;;) {
        if (f->st.closed) {
            rc = SIEVE_ECLOSED;
            break;
        }
        double now = frontier_now_s(), next_ready;
        rc = take_locked(f, part, now, buf, cap, out, &next_ready);
        if (rc != SIEVE_EAGAIN)
            break;
        if (drained_locked(f)) {
            rc = SIEVE_EDRAINED;
            break;
        }
        if (timeout_ms == 0)
            break;
        if (timeout_ms > 0 && now >= deadline) {
            rc = SIEVE_ETIMEDOUT;
            break;
        }
        double wake_at = timeout_ms > 0 && deadline < next_ready ? deadline : next_ready;
        f->waiters++;
        if (isinf(wake_at)) {
            pthread_cond_wait(&f->wake, &f->lock);
        } else {
            struct timespec ts = timespec_of(wake_at);
            pthread_cond_timedwait(&f->wake, &f->lock, &ts);
        }
        f->waiters--;
    }
    pthread_mutex_unlock(&f->lock);
    return rc;
}

static int try_pop_part(sieve_frontier *f, uint32_t part, char *buf, size_t cap, sieve_url *out,
                        double *ready_in)
{
    pthread_mutex_lock(&f->lock);
    int rc = SIEVE_ECLOSED;
    double now = frontier_now_s(), next_ready = 1.0 / 0.0;
    if (!f->st.closed) {
        rc = take_locked(f, part, now, buf, cap, out, &next_ready);
        if (rc == SIEVE_EAGAIN && drained_locked(f))
            rc = SIEVE_EDRAINED;
    }
    pthread_mutex_unlock(&f->lock);
    if (rc == SIEVE_EAGAIN && ready_in != NULL)
        *ready_in = next_ready > now ? next_ready - now : 0;
    return rc;
}

static bool pop_args_ok(const sieve_frontier *f, const char *buf, size_t cap, const sieve_url *out)
{
    return f != NULL && buf != NULL && out != NULL && cap > 0;
}

int sieve_frontier_pop(sieve_frontier *f, char *buf, size_t cap, sieve_url *out, int timeout_ms)
{
    return pop_args_ok(f, buf, cap, out) ? pop_part(f, HOSTS_ANY, buf, cap, out, timeout_ms)
                                         : SIEVE_EINVAL;
}

int sieve_frontier_try_pop(sieve_frontier *f, char *buf, size_t cap, sieve_url *out,
                           double *ready_in)
{
    return pop_args_ok(f, buf, cap, out) ? try_pop_part(f, HOSTS_ANY, buf, cap, out, ready_in)
                                         : SIEVE_EINVAL;
}

int sieve_frontier_pop_from(sieve_frontier *f, unsigned part, char *buf, size_t cap, sieve_url *out,
                            int timeout_ms)
{
    if (!pop_args_ok(f, buf, cap, out) || part >= f->partitions)
        return SIEVE_EINVAL;
    return pop_part(f, part, buf, cap, out, timeout_ms);
}

int sieve_frontier_try_pop_from(sieve_frontier *f, unsigned part, char *buf, size_t cap,
                                sieve_url *out, double *ready_in)
{
    if (!pop_args_ok(f, buf, cap, out) || part >= f->partitions)
        return SIEVE_EINVAL;
    return try_pop_part(f, part, buf, cap, out, ready_in);
}

/* Journals a done(); if that fails the frontier closes, as after a push
 * that could not be journaled. */
static int log_done_locked(sieve_frontier *f, uint64_t url_hash)
{
    int rc = fstate_log_done(f->state, url_hash);
    if (rc != SIEVE_OK) {
        f->st.closed = 1;
        frontier_wake_locked(f, true);
    }
    return rc;
}

int sieve_frontier_done(sieve_frontier *f, const sieve_url *u)
{
    if (f == NULL || u == NULL || u->url == NULL)
        return SIEVE_EINVAL;
    uint64_t h = frontier_url_hash(u->url, u->len);
    pthread_mutex_lock(&f->lock);
    int rc = SIEVE_ESTATE;
    flight *x = flight_of_locked(f, u, h);
    if (x != NULL && f->state != NULL && (rc = log_done_locked(f, h)) != SIEVE_OK)
        x = NULL; /* not journaled: it stays in flight */
    if (x != NULL && (f->hosts == NULL || (rc = hosts_done(f->hosts, x->host)) >= 0)) {
        land_locked(f, x);
        f->st.in_flight--;
        f->st.done++;
        if (drained_locked(f))
            frontier_wake_locked(f, true);
        else if (rc == 1)
            frontier_wake_locked(f, false); /* its host may take another URL */
        rc = SIEVE_OK;
    }
    pthread_mutex_unlock(&f->lock);
    return rc;
}

/* A URL given back unfetched: no longer in flight, nor counted as popped;
 * its host may give another URL now. */
static void give_back_locked(sieve_frontier *f, flight *x)
{
    land_locked(f, x);
    f->st.in_flight--;
    f->st.popped--;
    frontier_wake_locked(f, false);
}

int sieve_frontier_requeue(sieve_frontier *f, const sieve_url *u)
{
    return sieve_frontier_requeue_after(f, u, 0);
}

/* Whether the retry heap takes a URL of len bytes: always without runs
 * to defer to (no budget: all of the queue is in memory anyway), else
 * within its share of the budget. */
static bool later_has_room(const sieve_frontier *f, size_t len)
{
    return f->runs == NULL || f->later.bytes + later_cost(len) <= f->budget / LATER_SHARE;
}

/* Takes a URL out of flight without a done(): back onto its host's queue,
 * to go after pause_s, or (off_host) into the retry heap, away from its
 * host, until pause_s has passed, its host free to give another URL. When
 * the heap is full the URL is set aside on disk behind its host's other
 * URLs, and the host rests for pause_s instead: memory stays within the
 * budget however many hosts fail at once. */
static int put_back(sieve_frontier *f, const sieve_url *u, double pause_s, bool off_host)
{
    if (f == NULL || u == NULL || u->url == NULL || !(pause_s >= 0))
        return SIEVE_EINVAL;
    if (f->hosts == NULL)
        return SIEVE_ESTATE;
    int rc = frontier_check_data(u);
    if (rc != SIEVE_OK)
        return rc;
    uint64_t h = frontier_url_hash(u->url, u->len);
    pthread_mutex_lock(&f->lock);
    flight *x = flight_of_locked(f, u, h);
    const char *e = x != NULL ? frontier_entry_locked(f, u) : NULL;
    if (x == NULL) {
        rc = SIEVE_ESTATE;
    } else if (e == NULL) {
        rc = SIEVE_ENOMEM;
    } else if (off_host && !later_has_room(f, entry_len(u))) {
        rc = frontier_defer_locked(f, x->host, e, entry_len(u), u->depth);
        if (rc == SIEVE_OK)
            rc = hosts_rest(f->hosts, x->host, frontier_now_s(), pause_s);
    } else if (off_host) {
        rc = later_add(&f->later, frontier_now_s() + pause_s, x->host, e, entry_len(u), u->depth);
        if (rc == SIEVE_OK)
            rc = hosts_wait_later(f->hosts, x->host, true);
        if (rc == SIEVE_OK && (rc = hosts_done(f->hosts, x->host)) >= 0)
            rc = SIEVE_OK;
    } else {
        rc = hosts_requeue(f->hosts, x->host, e, entry_len(u), u->depth, frontier_now_s(), pause_s);
        if (rc == SIEVE_OK && f->budget > 0)
            f->ram_bytes += entry_len(u) + SIEVE_QUEUE_ENTRY_COST;
    }
    if (rc == SIEVE_OK)
        give_back_locked(f, x);
    pthread_mutex_unlock(&f->lock);
    return rc;
}

int sieve_frontier_requeue_after(sieve_frontier *f, const sieve_url *u, double pause_s)
{
    return put_back(f, u, pause_s, false);
}

int sieve_frontier_retry_later(sieve_frontier *f, const sieve_url *u, double wait_s)
{
    return put_back(f, u, wait_s, true);
}

int sieve_frontier_hold_host(sieve_frontier *f, const char *host, size_t len, bool hold)
{
    if (f == NULL || host == NULL)
        return SIEVE_EINVAL;
    if (f->hosts == NULL)
        return SIEVE_ESTATE;
    pthread_mutex_lock(&f->lock);
    int rc = hosts_hold(f->hosts, host, len, hold);
    if (rc == SIEVE_OK && !hold)
        frontier_wake_locked(f, true);
    pthread_mutex_unlock(&f->lock);
    return rc;
}

int sieve_frontier_pause_host(sieve_frontier *f, const char *host, size_t len, double pause_s)
{
    if (f == NULL || host == NULL || !(pause_s >= 0))
        return SIEVE_EINVAL;
    if (f->hosts == NULL)
        return SIEVE_ESTATE;
    pthread_mutex_lock(&f->lock);
    int rc = hosts_pause(f->hosts, host, len, frontier_now_s() + pause_s);
    pthread_mutex_unlock(&f->lock);
    return rc;
}

int sieve_frontier_set_host_delay(sieve_frontier *f, const char *host, size_t len, double delay_s)
{
    if (f == NULL || host == NULL || !(delay_s >= 0))
        return SIEVE_EINVAL;
    if (f->hosts == NULL)
        return SIEVE_ESTATE;
    pthread_mutex_lock(&f->lock);
    int rc = hosts_set_delay(f->hosts, host, len, delay_s);
    pthread_mutex_unlock(&f->lock);
    return rc;
}

void sieve_frontier_close(sieve_frontier *f)
{
    pthread_mutex_lock(&f->lock);
    f->st.closed = 1;
    frontier_wake_locked(f, true);
    pthread_mutex_unlock(&f->lock);
}

void sieve_frontier_stats_get(sieve_frontier *f, sieve_frontier_stats *st)
{
    pthread_mutex_lock(&f->lock);
    *st = f->st;
    st->queue_len = queued_locked(f);
    st->spilled = f->spilled;
    st->deferred = f->runs != NULL ? runs_total(f->runs) : 0;
    st->queue_bytes = sieve_fifo_bytes(f->queue) + (f->hosts ? hosts_bytes(f->hosts) : 0) +
                      (f->runs != NULL ? runs_memory(f->runs) : 0);
    st->hosts = f->hosts ? hosts_count(f->hosts) : 0;
    st->seen_bytes = sieve_seen_bytes(f->seen);
    st->est_count = sieve_seen_estimated_count(f->seen);
    st->est_fp_rate = sieve_seen_estimated_fp_rate(f->seen);
    st->layers = sieve_seen_layers(f->seen);
    pthread_mutex_unlock(&f->lock);
}
