/* worker.c - a fetch worker.
 *
 * Each worker thread owns a curl multi handle and a fixed set of transfer
 * slots. It tops the slots up from the frontier (blocking in pop() only
 * when it has nothing in flight, so an idle worker sleeps until there is
 * work or the crawl is over), passes each popped URL through the gate,
 * lets curl drive every transfer, and hands each finished one to its
 * kind. stop() reaches a worker in two ways: the frontier is closed (pop
 * returns at once) and curl_multi_wakeup() ends its wait in curl. Records
 * the embedder holds back (hold.c) come back the same way: a release
 * wakes the worker, which delivers them; it exits only once it holds
 * none, even after an abort. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "gate.h"
#include "hold.h"
#include "via.h"
#include "worker.h"

/* Waiting. A worker waits in curl_multi_poll() for its transfers'
 * sockets, curl's own timers, and two more events: the frontier calls
 * on_wake when a URL may be taken (a push, a done, a requeue, a released
 * host), which wakes every worker with free slots, and try_pop() says
 * when the next host's delay ends, which bounds the wait. So no worker
 * polls on a fixed clock, and a stalled transfer holds up nothing. This
 * bound only guards against an event nobody announced. Before each wait
 * the embedder's on_wait does what it gathered from the worker's
 * transfers (an archive's appends), and the records it released go out
 * first: the worker would otherwise sleep on them. */
#define WORKER_WAIT_MAX_MS 60000

/* Idle connections. curl keeps at most four per transfer slot open by
 * default, and a crawl over many hosts moves on to other hosts before it
 * comes back to one: its connections would be closed before they were
 * used again, and every page would pay a new connection (over a thousand
 * hosts, 3,214 connections for 3,221 requests). So each worker keeps up
 * to this many open, fewer when the process may not open that many files:
 * the file limit, less a reserve for the crawl's own files, shared among
 * the workers with room for their transfers. The cap is not higher
 * because curl 7.88 walks its whole connection cache each time a transfer
 * is removed from the multi handle (later versions look the connection
 * up by its id): 1024 cost about 5% of a crawl over 1000 hosts. */
#define WORKER_IDLE_CONNECTIONS_MAX 1024

/* Robots.txt slots. The first URL of a host waits for its robots.txt,
 * whose fetch begins with a DNS lookup and a new connection: tens of
 * milliseconds on the real web. Fetched in the worker's transfer slots,
 * those files would keep the slots waiting on name servers whenever a
 * crawl meets many new hosts. So each worker has more slots, for
 * robots.txt only: sixteen per transfer slot, this many at most. A URL
 * that finds them all busy fetches its robots.txt in its own slot. Over
 * 1000 hosts with lookups of 50 ms (bench/hosts.sh --dns-ms 50), pages/s
 * against a crawl over 4 hosts was 0.27 without them and 0.39 with one
 * per transfer slot in earlier runs; side by side, 0.61 with four and
 * 0.70 with sixteen (bench/results/hosts.txt), which cost 2.4 MiB more
 * peak RSS over 4 hosts and 7.2 over 1000. */
#define WORKER_ROBOTS_SLOTS_MAX 256

/* Links a worker remembers as pushed (sieve/links.h): 8 bytes each. */
#define WORKER_LINKS_MEMO    (1u << 16)
#define WORKER_FILES_RESERVE 64

/* Robots.txt slots of each worker. */
static unsigned robots_slots(const sieve_crawler *c)
{
    if (c->o.ignore_robots)
        return 0;
    return c->o.concurrency < WORKER_ROBOTS_SLOTS_MAX / 16 ? 16 * c->o.concurrency
                                                           : WORKER_ROBOTS_SLOTS_MAX;
}

static long idle_connections(const sieve_crawler *c)
{
    long least = 4L * c->o.concurrency; /* curl's own default */
    struct rlimit r;
    if (getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur == RLIM_INFINITY)
        return WORKER_IDLE_CONNECTIONS_MAX;
    long files = (long)(r.rlim_cur > WORKER_FILES_RESERVE ? r.rlim_cur - WORKER_FILES_RESERVE : 0);
    long each = files / (long)c->o.workers - (long)(c->o.concurrency + robots_slots(c));
    if (each > WORKER_IDLE_CONNECTIONS_MAX)
        each = WORKER_IDLE_CONNECTIONS_MAX;
    return each > least ? each : least;
}

worker *worker_new(sieve_crawler *c, unsigned index)
{
    worker *w = calloc(1, sizeof *w);
    if (w == NULL)
        return NULL;
    pthread_mutex_init(&w->hold_lock, NULL);
    w->c = c;
    w->index = index;
    if (c->cb.on_link == NULL && sieve_links_memo_new(&w->memo, WORKER_LINKS_MEMO) != SIEVE_OK) {
        free(w);
        return NULL;
    }
    w->nslots = c->o.concurrency;
    w->nrobots = robots_slots(c);
    w->slots = calloc(w->nslots + w->nrobots, sizeof *w->slots);
    w->multi = curl_multi_init();
    if (w->slots == NULL || w->multi == NULL) {
        worker_free(w);
        return NULL;
    }
    curl_multi_setopt(w->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)w->nslots);
    curl_multi_setopt(w->multi, CURLMOPT_MAXCONNECTS, idle_connections(c));
    for (unsigned i = 0; i < w->nslots + w->nrobots; i++) {
        w->slots[i].w = w;
        w->slots[i].c = c;
        w->slots[i].memo = w->memo;
        w->slots[i].robots_slot = i >= w->nslots;
        if (xfer_setup(&w->slots[i]) != SIEVE_OK) {
            worker_free(w);
            return NULL;
        }
    }
    return w;
}

void worker_free(worker *w)
{
    if (w == NULL)
        return;
    for (unsigned i = 0; w->slots != NULL && i < w->nslots + w->nrobots; i++) {
        xfer *x = &w->slots[i];
        free(x->body);
        sieve_links_free(x->lx);
        sieve_sitemap_free(x->sm);
        sieve_sha1_free(&x->body_digest); /* kept from transfer to transfer */
        if (x->easy != NULL)
            curl_easy_cleanup(x->easy);
    }
    if (w->multi != NULL)
        curl_multi_cleanup(w->multi);
    sieve_links_memo_free(w->memo);
    pthread_mutex_destroy(&w->hold_lock);
    free(w->slots);
    free(w);
}

void worker_wake(worker *w)
{
    curl_multi_wakeup(w->multi);
}

void worker_frontier_woke(void *ud)
{
    sieve_crawler *c = ud;
    for (unsigned i = 0; i < c->nworkers; i++)
        if (atomic_load(&c->workers[i]->hungry))
            curl_multi_wakeup(c->workers[i]->multi);
}

xfer *worker_free_slot(worker *w)
{
    for (unsigned i = 0; i < w->nslots; i++)
        if (!w->slots[i].busy)
            return &w->slots[i];
    return NULL;
}

xfer *worker_robots_slot(worker *w)
{
    for (unsigned i = w->nslots; i < w->nslots + w->nrobots; i++)
        if (!w->slots[i].busy)
            return &w->slots[i];
    return worker_free_slot(w);
}

void worker_slot_busy(worker *w, const xfer *x, bool busy)
{
    unsigned *n = x->robots_slot ? &w->robots_active : &w->active;
    *n = busy ? *n + 1 : *n - 1;
}

/* Transfers in flight, in either kind of slot. */
static unsigned in_flight(const worker *w)
{
    return w->active + w->robots_active;
}

void worker_start(worker *w, const sieve_url *u)
{
    /* A robots.txt slot only when the URL's fetch of its robots.txt has
     * just ended there and the frontier could not take the URL back. */
    xfer *x = worker_free_slot(w);
    if (x == NULL)
        x = worker_robots_slot(w);
    via_copy(&x->popped, x->url, x->via, u);
    x->depth = u->depth & TAG_DEPTH_MASK;
    x->hops = u->depth >> TAG_HOPS_SHIFT;
    x->retries = tag_retries(u->depth);
    atomic_fetch_add(&w->c->n.started, 1);
    xfer_start(x, (u->depth & TAG_SITEMAP_BIT) ? &xfer_sitemap : &xfer_page);
}

/* Takes URLs from the frontier into free slots. Blocks only when nothing
 * is in flight here. Returns false while the crawl goes on, true once the
 * frontier says there will be no more work. */
static bool top_up(worker *w)
{
    sieve_crawler *c = w->c;
    uint64_t max_pages = c->o.max_pages;
    /* Hungry before looking: a push that comes after a look that found
     * nothing then wakes this worker's next wait. */
    atomic_store(&w->hungry, true);
    w->ready_in = INFINITY;
    while (w->active < w->nslots) {
        /* A pop needs one of the max_pages reservations. The frontier is
         * not closed when they run out: a worker blocked in pop() may hold
         * one of the last, and must still get its URL. */
        if (max_pages > 0 && atomic_fetch_add(&c->n.reserved, 1) >= max_pages) {
            atomic_fetch_sub(&c->n.reserved, 1);
            /* Over only once the pages have started: a URL waiting for
             * its host's robots.txt holds a reservation it may give back. */
            if (atomic_load(&c->n.started) < max_pages)
                return false;
            atomic_store(&c->limit_hit, true);
            return true;
        }
        sieve_url u;
        /* Not while records are held: their releases need this thread. */
        int rc = in_flight(w) == 0 && w->held == 0
                     ? sieve_frontier_pop_from(c->frontier, w->index, w->popbuf, sizeof w->popbuf,
                                               &u, -1)
                     : sieve_frontier_try_pop_from(c->frontier, w->index, w->popbuf,
                                                   sizeof w->popbuf, &u, &w->ready_in);
        if (rc != SIEVE_OK && max_pages > 0)
            atomic_fetch_sub(&c->n.reserved, 1);
        if (rc == SIEVE_OK)
            gate_admit(w, &u);
        else if (rc == SIEVE_EAGAIN || rc == SIEVE_ETIMEDOUT)
            return false;
        else
            return true; /* drained or closed */
    }
    atomic_store(&w->hungry, false);
    return false;
}

/* How long to wait in curl: until the frontier may have a URL, if this
 * worker has room for one; curl shortens it to its own next timer. */
static int wait_ms(const worker *w)
{
    double ms = w->active < w->nslots ? ceil(w->ready_in * 1e3) : INFINITY;
    return ms < WORKER_WAIT_MAX_MS ? (int)ms : WORKER_WAIT_MAX_MS;
}

/* Ends a transfer without a record; its URL is not reported done (a
 * resumed crawl fetches it again). The handle is out of the multi. */
static void drop(worker *w, xfer *x)
{
    worker_slot_busy(w, x, false);
    sieve_links_free(x->lx);
    x->lx = NULL;
    sieve_sitemap_free(x->sm);
    x->sm = NULL;
    free(x->body);
    x->body = NULL;
    atomic_fetch_add(&w->c->n.aborted, 1);
    xfer_release(x);
}

/* Hands each finished transfer to its kind; returns how many finished. */
static unsigned reap(worker *w)
{
    CURLMsg *m;
    int left;
    unsigned n = 0;
    while ((m = curl_multi_info_read(w->multi, &left)) != NULL) {
        if (m->msg != CURLMSG_DONE)
            continue;
        xfer *x = NULL;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&x);
        CURLcode result = m->data.result;
        curl_multi_remove_handle(w->multi, m->easy_handle);
        /* A transfer the abort cut short is dropped like the others. */
        if (atomic_load(&w->c->abort_now)) {
            drop(w, x);
            continue;
        }
        worker_slot_busy(w, x, false);
        x->kind->finish(x, result);
        n++;
    }
    return n;
}

/* The stop grace is over: every transfer ends now, without a record. */
static void abort_all(worker *w)
{
    for (unsigned i = 0; i < w->nslots + w->nrobots; i++) {
        xfer *x = &w->slots[i];
        if (!x->busy)
            continue;
        curl_multi_remove_handle(w->multi, x->easy);
        drop(w, x);
    }
}

/* Whether the worker may take more URLs: not while it holds a record
 * for each of its slots, so that it never runs far ahead of whatever the
 * embedder holds them for. */
static bool room_for_more(worker *w)
{
    if (w->held < w->nslots)
        return true;
    atomic_store(&w->hungry, false);
    w->ready_in = INFINITY;
    return false;
}

/* Before a wait: the embedder finishes what it gathered from this
 * worker's transfers (on_wait), and the records released meanwhile go
 * out. True when some did: slots may have come free, so the worker looks
 * again before it waits. */
static bool before_wait(worker *w)
{
    sieve_crawler *c = w->c;
    if (c->cb.on_wait != NULL)
        c->cb.on_wait(c->ud, w->index);
    return hold_deliver(w) > 0;
}

/* Waits in curl for the worker's transfers, a wakeup or ms; not when a
 * record came back meanwhile (the loop delivers it first). */
static void wait_events(worker *w, int ms)
{
    if (before_wait(w) || !hold_sleep(w))
        return;
    curl_multi_poll(w->multi, NULL, 0, ms, NULL);
    hold_awake(w);
}

void *worker_run(void *arg)
{
    worker *w = arg;
    sieve_crawler *c = w->c;
    bool no_more = false;
    for (;;) {
        hold_deliver(w);
        if (atomic_load(&c->abort_now)) {
            abort_all(w);
            /* The held records' releases still come to this worker. */
            if (w->held == 0)
                break;
            wait_events(w, WORKER_WAIT_MAX_MS);
            continue;
        }
        /* After max_pages, look again: a page in flight that failed and
         * was given back for a retry has freed its reservation. */
        if ((!no_more || atomic_load(&c->limit_hit)) && room_for_more(w))
            no_more = top_up(w);
        if (no_more && in_flight(w) == 0 && w->held == 0)
            break;
        if (in_flight(w) == 0) {
            /* max_pages reservations, not the queue, held it back: one
             * comes back with a requeue, which wakes it; or it waits for
             * its held records, whose releases wake it */
            wait_events(w, wait_ms(w));
            continue;
        }
        int running;
        curl_multi_perform(w->multi, &running);
        /* A slot freed: fill it before waiting, or it would wait for the
         * next event of some other transfer. */
        if (reap(w) > 0)
            continue;
        if (in_flight(w) > 0)
            wait_events(w, wait_ms(w));
    }
    atomic_fetch_add(&c->workers_exited, 1);
    engine_poke(c, 'w');
    return NULL;
}
