/* frontier.c - the thread-safe frontier: a FIFO of URLs to fetch and the
 * seen-set that keeps any URL from being queued twice. This file makes,
 * opens and pushes; frontier-take.c hands URLs out and takes them back.
 *
 * One mutex guards both, because "not seen, so enqueue and mark seen" must
 * be one step: two threads pushing the same URL at once must not both
 * enqueue it. The lock is held only for the cheap part. Validation and
 * hashing happen before it is taken; push_batch() takes it once for a whole
 * page of links and prefetches every key's memory first, so the cache
 * misses of a batch overlap instead of queueing up behind each other.
 *
 * No URL is lost to an allocation failure: a URL is marked seen only when
 * its place in the queue is sure (reserved first, or appended first with
 * per-host queues), so if memory runs out nothing has changed and the
 * caller gets SIEVE_ENOMEM.
 *
 * Capacity. The seen-set's estimated count is compared with a threshold
 * after each push; the first crossing of the configured capacity logs one
 * warning and doubles the threshold. Messages are formatted and emitted
 * after the lock is released, so a slow log sink never stalls a push. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "bytes.h"
#include "checkpoint.h"
#include "entry.h"
#include "frontier-internal.h"
#include "sieve/hashset.h"
#include "sieve/status.h"

/* Keys hashed per lock acquisition in push_batch(): enough to overlap the
 * misses, small enough for the stack. */
#define BATCH_STEP 64

/* What push() decided under the lock and must log after releasing it. */
typedef struct pending_log {
    int warn;
    unsigned grew_to;
    double count;
    double fp_rate;
    uint64_t capacity;
} pending_log;

void sieve_frontier_config_init(sieve_frontier_config *cfg)
{
    sieve_seen_config_init(&cfg->seen);
    cfg->max_url_len = SIEVE_URL_MAX;
    /* Library code never prints on its own: messages go nowhere until the
     * embedder names a sink (sieve_logger_default() for stderr). */
    cfg->logger = (sieve_logger){.fn = NULL, .ctx = NULL, .level = SIEVE_LOG_WARN};
    cfg->politeness = (sieve_politeness){
        .enabled = false, .max_conns = 2, .delay_s = 1.0, .max_delay_s = 30.0, .partitions = 1};
    cfg->on_wake = NULL;
    cfg->wake_ud = NULL;
    cfg->state_meaning = NULL;
    cfg->queue_memory = 0;
    cfg->segment_bytes = 0;
    cfg->checkpoint_bytes = 0;
}

int sieve_frontier_new(sieve_frontier **out, const sieve_frontier_config *cfg)
{
    if (out == NULL || cfg == NULL || cfg->max_url_len == 0 ||
        cfg->max_url_len > SIEVE_HASHSET_KEY_MAX || cfg->queue_memory > 0 ||
        cfg->segment_bytes > 0 || cfg->checkpoint_bytes > 0)
        return SIEVE_EINVAL;
    const sieve_politeness *pol = &cfg->politeness;
    if (pol->enabled && (pol->max_conns == 0 || !(pol->delay_s >= 0) || !(pol->max_delay_s >= 0) ||
                         pol->partitions > SIEVE_PARTITIONS_MAX))
        return SIEVE_EINVAL;
    sieve_frontier *f = calloc(1, sizeof *f);
    if (f == NULL)
        return SIEVE_ENOMEM;
    int rc = SIEVE_ENOMEM;
    f->flights = malloc(FLIGHTS_INITIAL * sizeof *f->flights);
    if (f->flights == NULL)
        goto fail;
    f->cap_flights = FLIGHTS_INITIAL;
    rc = sieve_seen_new(&f->seen, &cfg->seen);
    if (rc != SIEVE_OK)
        goto fail;
    rc = sieve_fifo_new(&f->queue);
    if (rc == SIEVE_OK && cfg->politeness.enabled)
        rc = hosts_new(&f->hosts, &cfg->politeness);
    if (rc != SIEVE_OK)
        goto fail;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&f->wake, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&f->lock, NULL);
    f->max_url_len = cfg->max_url_len;
    f->logger = cfg->logger;
    f->on_wake = cfg->on_wake;
    f->wake_ud = cfg->wake_ud;
    f->warn_at = (double)cfg->seen.capacity;
    f->grow = cfg->seen.overflow == SIEVE_OVERFLOW_GROW;
    f->layers = sieve_seen_layers(f->seen);
    f->free_flight = FLIGHT_NONE;
    f->partitions = pol->enabled && pol->partitions > 1 ? pol->partitions : 1;
    *out = f;
    return SIEVE_OK;
fail:
    sieve_fifo_free(f->queue);
    sieve_seen_free(f->seen);
    free(f->flights);
    free(f);
    return rc;
}

static const fstate_lister lister;

void sieve_frontier_free(sieve_frontier *f)
{
    if (f == NULL)
        return;
    if (f->keep_flights) { /* a last checkpoint makes the next open quick */
        fstate_lister l = lister;
        l.ud = f;
        (void)fstate_sync(f->state, &f->lock, f->seen, &l, true);
    }
    runs_free(f->runs);
    pthread_cond_destroy(&f->wake);
    pthread_mutex_destroy(&f->lock);
    hosts_free(f->hosts);
    sieve_fifo_free(f->queue);
    sieve_seen_free(f->seen);
    fstate_close(f->state);
    for (uint32_t i = 0; i < f->nflights; i++)
        free(f->flights[i].url);
    free(f->flights);
    later_free(&f->later);
    free(f->entry);
    free(f);
}

double frontier_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- a durable frontier: the journal replayed into a new one ---- */

/* Sets an entry of host id aside behind its window. Lock held. A run
 * that cannot be written (a full disk) closes the frontier, as a journal
 * that cannot be: the page whose link it was is not done, and a resume
 * fetches it again. */
int frontier_defer_locked(sieve_frontier *f, uint32_t id, const char *e, size_t len, uint32_t tag)
{
    int rc = runs_defer(f->runs, id, e, len, tag);
    if (rc == SIEVE_EIO) {
        sieve_log(&f->logger, SIEVE_LOG_ERROR, "%s", runs_message(f->runs));
        f->st.closed = 1;
        frontier_wake_locked(f, true);
    }
    return rc == SIEVE_OK ? hosts_defer(f->hosts, id, 1) : rc;
}

/* Queues an entry read back from the state (at an open, or from the
 * spill) in memory, or sets it aside if its host's queue in memory is
 * past window bytes (0: whatever it holds) or has URLs set aside. Lock
 * held, or no other thread yet. */
int frontier_queue_entry(sieve_frontier *f, const char *e, size_t len, uint32_t tag, double now,
                         uint64_t window)
{
    uint64_t cost = len + SIEVE_QUEUE_ENTRY_COST;
    if (f->hosts == NULL || f->runs == NULL) {
        int rc = f->hosts != NULL ? hosts_push(f->hosts, e, len, entry_url_at(e, len), tag, now)
                                  : sieve_fifo_push(f->queue, e, len, tag);
        f->ram_bytes += rc == SIEVE_OK ? cost : 0;
        return rc;
    }
    uint32_t id;
    int rc = hosts_push_within(f->hosts, e, len, entry_url_at(e, len), tag, now, window, &id);
    if (rc == HOSTS_DEFER)
        return frontier_defer_locked(f, id, e, len, tag);
    f->ram_bytes += rc == SIEVE_OK ? cost : 0;
    return rc;
}

/* A URL to queue again at an open. The checkpoint's (may_spill false)
 * are not in the journal after the spill's head: past the budget they
 * are set aside, where hosts allow it, else kept in memory anyway. */
static int replay_pending(void *ud, const char *e, size_t len, uint32_t tag, bool may_spill)
{
    sieve_frontier *f = ud;
    uint64_t cost = len + SIEVE_QUEUE_ENTRY_COST;
    bool full = f->budget > 0 && f->ram_bytes + cost > f->budget;
    if (may_spill && full)
        return FSTATE_SPILL;
    return frontier_queue_entry(f, e, len, tag, frontier_now_s(), full ? 0 : f->window);
}

static int put_queued(void *ud, const void *url, size_t len, uint32_t tag)
{
    return ckpt_put_url(ud, url, len, tag);
}

static int put_deferred(void *ud, uint32_t host, const char *e, size_t len, uint32_t tag)
{
    (void)host;
    return ckpt_put_url(ud, e, len, tag);
}

/* A checkpoint's list: the URLs in flight, then the queue, each host's in
 * the order pop() gives them. Lock held. */
static int list_locked(void *ud, struct ckpt_writer *w, uint64_t *done, uint64_t *spilled)
{
    sieve_frontier *f = ud;
    for (uint32_t i = 0; i < f->nflights; i++) {
        const flight *x = &f->flights[i];
        if (x->busy && x->len == FLIGHT_URL_LOST)
            return SIEVE_ENOMEM; /* no checkpoint until it lands */
        int rc = x->busy ? ckpt_put_url(w, x->url, x->len, x->tag) : SIEVE_OK;
        if (rc != SIEVE_OK)
            return rc;
    }
    *done = f->st.done;
    *spilled = f->spilled;
    int rc = later_foreach(&f->later, put_queued, w);
    if (rc != SIEVE_OK)
        return rc;
    rc = f->hosts != NULL ? hosts_foreach(f->hosts, put_queued, w)
                          : sieve_fifo_foreach(f->queue, put_queued, w);
    return rc == SIEVE_OK && f->runs != NULL ? runs_list_begin(f->runs, &f->listing) : rc;
}

/* The deferred URLs, after the others: each host's come after its URLs
 * in memory, so an open that queues the list in order keeps every
 * host's order, setting aside what its window does not hold. */
static int list_more(void *ud, struct ckpt_writer *w)
{
    sieve_frontier *f = ud;
    if (f->listing == NULL)
        return SIEVE_OK;
    int rc = runs_list_walk(f->listing, put_deferred, w);
    if (rc != SIEVE_OK && rc != SIEVE_ENOMEM)
        rc = SIEVE_EIO; /* its message goes to runs_message() at the release */
    return rc;
}

static void list_release(void *ud)
{
    sieve_frontier *f = ud;
    if (f->listing == NULL)
        return;
    runs_list_end(f->runs, f->listing);
    f->listing = NULL;
}

static const fstate_lister lister = {
    .list = list_locked, .more = list_more, .release = list_release};

/* A frontier with a budget and hosts defers URLs past a host's window;
 * its runs live beside the journal. */
static int open_runs(sieve_frontier *f)
{
    f->window = f->budget / WINDOW_SHARE > WINDOW_MIN ? f->budget / WINDOW_SHARE : WINDOW_MIN;
    uint64_t buffer = f->budget / DEFER_BUFFER_SHARE > DEFER_BUFFER_MIN
                          ? f->budget / DEFER_BUFFER_SHARE
                          : DEFER_BUFFER_MIN;
    char dir[520], msg[700];
    snprintf(dir, sizeof dir, "%s/%s", fstate_path(f->state), FSTATE_RUNS_DIR);
    int rc = runs_open(&f->runs, dir, buffer, msg, sizeof msg);
    if (rc == SIEVE_EIO)
        sieve_log(&f->logger, SIEVE_LOG_ERROR, "%s", msg);
    return rc;
}

int sieve_frontier_open(sieve_frontier **out, const char *dir, const sieve_frontier_config *cfg)
{
    if (out == NULL || cfg == NULL)
        return SIEVE_EINVAL;
    sieve_frontier *f;
    sieve_frontier_config plain = *cfg;
    plain.queue_memory = 0; /* new() refuses these: they are a durable frontier's */
    plain.segment_bytes = 0;
    plain.checkpoint_bytes = 0;
    int rc = sieve_frontier_new(&f, &plain);
    if (rc != SIEVE_OK)
        return rc;
    f->budget = cfg->queue_memory;
    rc = dir != NULL ? fstate_open(&f->state, dir, cfg) : fstate_open_temporary(&f->state, cfg);
    if (rc == SIEVE_OK && f->budget > 0 && f->hosts != NULL)
        rc = open_runs(f);
    fstate_found found = {0};
    if (rc == SIEVE_OK)
        rc = fstate_replay(f->state, f->seen, replay_pending, f, &found);
    if (rc != SIEVE_OK) {
        sieve_frontier_free(f);
        return rc;
    }
    f->keep_flights = !fstate_temporary(f->state);
    f->spilled = found.spilled;
    f->st.recovered = found.pending;
    f->st.enqueued = found.pending;
    f->st.done = found.done;
    *out = f;
    return SIEVE_OK;
}

int sieve_frontier_sync(sieve_frontier *f)
{
    if (f == NULL)
        return SIEVE_EINVAL;
    if (f->state == NULL)
        return SIEVE_OK;
    fstate_lister l = lister;
    l.ud = f;
    int rc = fstate_sync(f->state, &f->lock, f->seen, &l, false);
    if (rc != SIEVE_OK) {
        pthread_mutex_lock(&f->lock);
        f->st.closed = 1;
        frontier_wake_locked(f, true);
        pthread_mutex_unlock(&f->lock);
    }
    return rc;
}

/* Nonzero bytes where v holds a byte at most 0x20 or 0x7f. */
static inline bytes16 space_or_control(bytes16 v)
{
    return (bytes16)((v <= 0x20) | (v == 0x7f));
}

/* True if a byte of p[0..n) is at most 0x20 or is 0x7f. Sixteen bytes at a
 * time, the last sixteen read again if n is not a multiple of sixteen:
 * every pushed URL is scanned, and it is the longest loop of a push. */
static bool has_space_or_control(const char *p, size_t n)
{
    if (n < 16) {
        for (size_t i = 0; i < n; i++)
            if ((unsigned char)p[i] <= 0x20 || p[i] == 0x7f)
                return true;
        return false;
    }
    bytes16 flags = {0};
    for (size_t i = 0; i + 16 <= n; i += 16)
        flags |= space_or_control(bytes16_load(p + i));
    flags |= space_or_control(bytes16_load(p + n - 16));
    return bytes16_any(flags);
}

/* True if url starts with "http://" or "https://" in any case and has a
 * byte after it: nearly every URL a crawler pushes, so one eight-byte
 * compare. Setting bit 0x20 lower-cases the letters and leaves ':' and '/'
 * alone; the only other bytes it turns into ':' or '/' are control bytes,
 * which the byte scan refuses. */
static bool is_http_url(const char *url, size_t len)
{
    if (len < 8)
        return false;
    char p[8];
    for (int i = 0; i < 8; i++)
        p[i] = (char)(url[i] | 0x20);
    return memcmp(p, "http://", 7) == 0 || (len > 8 && memcmp(p, "https://", 8) == 0);
}

/* Length of url's scheme if url starts with one and ':' follows it, or 0. */
static size_t scheme_length(const char *url, size_t len)
{
    if (!((url[0] | 0x20) >= 'a' && (url[0] | 0x20) <= 'z'))
        return 0;
    for (size_t i = 1; i < len; i++) {
        char c = url[i];
        if (c == ':')
            return i;
        int alnum = ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || (c >= '0' && c <= '9');
        if (!alnum && c != '+' && c != '-' && c != '.')
            return 0;
    }
    return 0;
}

/* Why a URL that is not "http(s)://..." is refused: another scheme is
 * SIEVE_ESCHEME; no scheme, or http(s) without "//", is not a URL. */
static int refuse_not_http(const char *url, size_t len)
{
    size_t n = scheme_length(url, len);
    if (n == 0)
        return SIEVE_EURL;
    int http = (n == 4 || n == 5) && strncasecmp(url, "https", n) == 0;
    return http ? SIEVE_EURL : SIEVE_ESCHEME;
}

/* A URL here is already canonical; this only refuses what cannot be
 * fetched: a scheme other than http(s), no scheme, or bytes no URL may
 * carry unescaped. */
static int check_url(const sieve_frontier *f, const char *url, size_t len)
{
    if (url == NULL || len == 0)
        return SIEVE_EEMPTY;
    if (len > f->max_url_len)
        return SIEVE_ETOOLONG;
    if (has_space_or_control(url, len))
        return SIEVE_EURL;
    return is_http_url(url, len) ? SIEVE_OK : refuse_not_http(url, len);
}

/* u's entry (entry.h), made in f's buffer if u has data; NULL when that
 * cannot grow. Lock held. */
const char *frontier_entry_locked(sieve_frontier *f, const sieve_url *u)
{
    return entry_make(u, &f->entry, &f->entry_cap);
}

/* Enqueue-then-mark, under the lock. See the header comment for the order.
 * e is u's entry when it goes to memory (to_ram). */
/* One FIFO: room is reserved first, so once the seen-set has accepted the
 * URL its push cannot fail, and the seen-set is probed once. */
static int offer_fifo_locked(sieve_frontier *f, const sieve_url *u, const char *e, sieve_hash h,
                             bool to_ram)
{
    int rc = to_ram ? sieve_fifo_reserve(f->queue, entry_len(u)) : SIEVE_OK;
    if (rc != SIEVE_OK)
        return rc;
    rc = sieve_seen_add_hashed(f->seen, u->url, u->len, h);
    if (rc == SIEVE_SEEN)
        f->st.seen++;
    if (rc != SIEVE_OK)
        return rc; /* seen, or the exact set out of memory: nothing changed */
    if (to_ram)
        sieve_fifo_push(f->queue, e, entry_len(u), u->depth);
    f->st.enqueued++;
    return SIEVE_OK;
}

/* Per-host queues: a push may need a new host, so it cannot be reserved;
 * the URL is queued before it is marked, and an append that fails
 * changes nothing. A URL bound for the spill needs no host queue, so
 * there the seen-set's own test-and-set decides, in one probe. */
static int offer_hosts_locked(sieve_frontier *f, const sieve_url *u, const char *e, sieve_hash h,
                              double now, bool to_ram, bool *deferred)
{
    size_t n = entry_len(u);
    int rc;
    if (to_ram) {
        if (sieve_seen_contains_hashed(f->seen, u->url, u->len, h)) {
            f->st.seen++;
            return SIEVE_SEEN;
        }
        uint32_t id;
        rc = f->runs == NULL
                 ? hosts_push(f->hosts, e, n, n - u->len, u->depth, now)
                 : hosts_push_within(f->hosts, e, n, n - u->len, u->depth, now, f->window, &id);
        if (rc == HOSTS_DEFER) {
            rc = frontier_defer_locked(f, id, e, n, u->depth);
            *deferred = rc == SIEVE_OK;
        }
        if (rc != SIEVE_OK)
            return rc;
        rc = sieve_seen_add_hashed(f->seen, u->url, u->len, h);
    } else if ((rc = sieve_seen_add_hashed(f->seen, u->url, u->len, h)) == SIEVE_SEEN) {
        f->st.seen++;
        return SIEVE_SEEN;
    }
    if (rc < 0) {
        /* Queued or spilled but not marked: it may be fetched twice, never lost. */
        sieve_log(&f->logger, SIEVE_LOG_ERROR, "seen-set: %s; a URL may be fetched twice",
                  sieve_strerror(rc));
    }
    f->st.enqueued++;
    return SIEVE_OK;
}

/* Offers a URL, to the queue in memory or, past the budget, to the spill:
 * once one URL waits in the journal, every later one does too, so that
 * memory holds only URLs older than any on disk and each host's come out
 * in the order pushed. One bound for memory whose host is past its
 * window is set aside behind it instead (runs.h). */
static int offer_locked(sieve_frontier *f, const sieve_url *u, sieve_hash h, double now,
                        bool *spilled)
{
    uint64_t cost = entry_len(u) + SIEVE_QUEUE_ENTRY_COST;
    bool to_ram = f->budget == 0 || (f->spilled == 0 && f->ram_bytes + cost <= f->budget);
    bool deferred = false;
    const char *e = to_ram ? frontier_entry_locked(f, u) : NULL;
    int rc = to_ram && e == NULL ? SIEVE_ENOMEM
             : f->hosts != NULL  ? offer_hosts_locked(f, u, e, h, now, to_ram, &deferred)
                                 : offer_fifo_locked(f, u, e, h, to_ram);
    *spilled = rc == SIEVE_OK && !to_ram;
    if (rc == SIEVE_OK) {
        if (!to_ram)
            f->spilled++;
        else if (!deferred)
            f->ram_bytes += cost;
    }
    return rc;
}

/* Wakes the pops blocked in pop() (one, or all) and tells the embedder's
 * on_wake, for callers that wait elsewhere. Lock held. */
void frontier_wake_locked(sieve_frontier *f, bool all)
{
    if (f->waiters > 0) {
        if (all)
            pthread_cond_broadcast(&f->wake);
        else
            pthread_cond_signal(&f->wake);
    }
    if (f->on_wake != NULL)
        f->on_wake(f->wake_ud);
}

/* Called with the lock held after URLs were enqueued. */
static void after_enqueue_locked(sieve_frontier *f, uint64_t added, pending_log *pl)
{
    if (added > 0)
        frontier_wake_locked(f, added > 1);
    if (added == 0 || sieve_seen_get_kind(f->seen) != SIEVE_SEEN_BLOOM)
        return;
    if (f->grow) {
        /* A growing set keeps its rate bounded: report growth, no warning. */
        unsigned layers = sieve_seen_layers(f->seen);
        if (layers != f->layers)
            pl->grew_to = f->layers = layers;
        return;
    }
    double count = sieve_seen_estimated_count(f->seen);
    if (count < f->warn_at || isinf(f->warn_at))
        return;
    /* A full array's estimate is infinite, and doubling never passes it:
     * one last warning, then none. */
    if (isinf(count))
        f->warn_at = INFINITY;
    else
        while (f->warn_at <= count)
            f->warn_at *= 2;
    pl->warn = 1;
    pl->count = count;
    pl->fp_rate = sieve_seen_estimated_fp_rate(f->seen);
    pl->capacity = sieve_seen_capacity(f->seen);
}

static void emit_pending(sieve_frontier *f, const pending_log *pl)
{
    if (pl->grew_to > 0)
        sieve_log(&f->logger, SIEVE_LOG_INFO, "seen-set grew to %u Bloom layers", pl->grew_to);
    if (!pl->warn)
        return;
    if (isinf(pl->count)) {
        sieve_log(&f->logger, SIEVE_LOG_WARN,
                  "seen-set full (capacity %llu): every bit is set, so every new URL now looks "
                  "seen and is left out; raise the capacity or use the grow policy",
                  (unsigned long long)pl->capacity);
        return;
    }
    sieve_log(&f->logger, SIEVE_LOG_WARN,
              "seen-set estimated count %.0f passed its capacity %llu: estimated "
              "false-positive rate now %.3g; raise the capacity or use the grow policy",
              pl->count, (unsigned long long)pl->capacity, pl->fp_rate);
}

int sieve_frontier_push(sieve_frontier *f, const char *url, size_t len, uint32_t depth)
{
    sieve_url u = {.url = url, .len = len, .depth = depth};
    int result;
    int rc = sieve_frontier_push_batch(f, &u, 1, &result);
    return rc < 0 ? rc : result;
}

/* Data a URL may carry: at most SIEVE_URL_DATA_MAX bytes, and there. */
int frontier_check_data(const sieve_url *u)
{
    if (u->data_len > SIEVE_URL_DATA_MAX)
        return SIEVE_ETOOLONG;
    return u->data == NULL && u->data_len > 0 ? SIEVE_EINVAL : SIEVE_OK;
}

/* Validates and hashes urls[0..n) outside the lock. */
static void prepare(const sieve_frontier *f, const sieve_url *urls, size_t n, int *status,
                    sieve_hash *hash)
{
    for (size_t i = 0; i < n; i++) {
        status[i] = check_url(f, urls[i].url, urls[i].len);
        if (status[i] == SIEVE_OK)
            status[i] = frontier_check_data(&urls[i]);
        if (status[i] == SIEVE_OK)
            hash[i] = sieve_seen_hash(f->seen, urls[i].url, urls[i].len);
    }
}

/* Journals the URLs a push step enqueued. If that fails they are in
 * memory only, so the frontier closes before anyone can pop them: the
 * state on disk stays as the last complete record left it, and their
 * page, never done, is fetched again after a restart. */
static bool journal_locked(sieve_frontier *f, const sieve_url *urls, size_t n, int *status,
                           const bool *to_disk, size_t spill_from, int *failed)
{
    /* A temporary state only holds the spill: a URL queued in memory is
     * not written at all, so a queue within its budget costs no I/O. */
    bool all = !fstate_temporary(f->state);
    int take[BATCH_STEP];
    for (size_t i = 0; i < n; i++)
        take[i] = status[i] == SIEVE_OK && (all || to_disk[i]);
    int rc = fstate_log_pushes(f->state, urls, take, n, spill_from);
    if (rc == SIEVE_OK)
        return true;
    for (size_t i = 0; i < n; i++)
        if (take[i])
            status[i] = rc;
    *failed = rc;
    f->st.closed = 1;
    frontier_wake_locked(f, true);
    return false;
}

/* Pushes at most BATCH_STEP URLs under one lock; returns how many were
 * enqueued, and sets *failed if an append (SIEVE_ENOMEM) or the journal
 * (SIEVE_EIO) failed. */
static uint64_t push_step(sieve_frontier *f, const sieve_url *urls, size_t n, int *status,
                          int *failed)
{
    sieve_hash hash[BATCH_STEP];
    prepare(f, urls, n, status, hash);
    pending_log pl = {0};
    uint64_t added = 0;
    double now = f->hosts != NULL ? frontier_now_s() : 0;
    pthread_mutex_lock(&f->lock);
    for (size_t i = 0; i < n; i++)
        if (status[i] == SIEVE_OK)
            sieve_seen_prefetch(f->seen, hash[i]);
    size_t spill_from = SIZE_MAX; /* the push that began a spill */
    bool to_disk[BATCH_STEP];     /* pushes left in the journal only */
    for (size_t i = 0; i < n; i++) {
        f->st.pushed++;
        if (status[i] != SIEVE_OK) {
            f->st.invalid++;
            continue;
        }
        bool began = f->spilled == 0;
        status[i] = offer_locked(f, &urls[i], hash[i], now, &to_disk[i]);
        if (to_disk[i] && began)
            spill_from = i;
        if (status[i] == SIEVE_OK)
            added++;
        else if (status[i] == SIEVE_ENOMEM)
            *failed = SIEVE_ENOMEM;
    }
    if (f->state != NULL && added > 0 &&
        !journal_locked(f, urls, n, status, to_disk, spill_from, failed))
        added = 0;
    after_enqueue_locked(f, added, &pl);
    pthread_mutex_unlock(&f->lock);
    emit_pending(f, &pl);
    return added;
}

int sieve_frontier_push_batch(sieve_frontier *f, const sieve_url *urls, size_t n, int *results)
{
    if (f == NULL || (urls == NULL && n > 0))
        return SIEVE_EINVAL;
    uint64_t added = 0;
    int failed = 0;
    int scratch[BATCH_STEP];
    for (size_t at = 0; at < n; at += BATCH_STEP) {
        size_t step = n - at < BATCH_STEP ? n - at : BATCH_STEP;
        int *status = results != NULL ? results + at : scratch;
        added += push_step(f, urls + at, step, status, &failed);
    }
    if (failed)
        return failed;
    return added > INT32_MAX ? INT32_MAX : (int)added;
}

int sieve_frontier_mark_seen(sieve_frontier *f, const char *url, size_t len)
{
    int rc = check_url(f, url, len);
    if (rc != SIEVE_OK)
        return rc;
    sieve_hash h = sieve_seen_hash(f->seen, url, len);
    pthread_mutex_lock(&f->lock);
    rc = sieve_seen_add_hashed(f->seen, url, len, h);
    pthread_mutex_unlock(&f->lock);
    return rc;
}
