/* bench-run.c - one measurement of `sieve bench`: a contestant fills a
 * fresh frontier with n URLs in a forked child, which reports back what it
 * cost.
 *
 * One process per measurement. Each contestant, at each n and p, runs in a
 * forked child that builds its own URL stream, fills a fresh frontier,
 * measures, and sends a fixed-size result back through a pipe. A child
 * starts from the parent's small heap, so its resident-memory growth is its
 * own: memory another contestant freed cannot be reused and hide growth.
 * Each contestant is run --reps times, each time in a new child; ns per
 * push is the median over those runs.
 *
 * What is timed. URLs are generated into a reusable batch buffer, then only
 * the push calls are timed with CLOCK_MONOTONIC (two clock reads per 64
 * URLs). The time therefore includes everything a push costs, hashing,
 * locking, probing, enqueueing, journaling, page faults on first touch of
 * the filter, table or queue (no memory is touched in advance), but not URL
 * generation.
 *
 * Queue. The seen-set benchmark (Q_DRAINED) pops what it pushes: after each
 * batch, untimed, it pops every queued URL and reports it done, keeping one
 * URL in flight so the frontier never judges the crawl over. The queue then
 * stays within a chunk or two, and the resident growth (RSS after filling
 * minus RSS before creating the frontier) measures the seen-set and what
 * the allocator adds to it. The whole frontier's contestants (Q_RAM,
 * Q_DISK) pop nothing: every URL pushed stays queued, per host, and the
 * resident growth is the seen-set plus the queue in memory plus the hosts.
 * Q_DISK's frontier is opened on a directory of its own with a
 * queue_memory budget; past it, URLs stay in the journal. Its directory's
 * size is the disk it takes; then another child, a new process as after a
 * restart, drops the state's pages from the page cache, times
 * sieve_frontier_open() on it, and times it again with the cache warm; the
 * directory is removed before the next rep. Q_NONE is the Bloom filter
 * alone, fed with sieve_bloom_add_batch(): the test-and-set a push cannot
 * do without, against which the frontier's push is compared.
 *
 * False positives (absent). After filling, a fresh sieve_seen of the same
 * configuration is filled with the same URLs (same bits as the frontier's)
 * and queried with --absent URLs that were never pushed; the share it calls
 * seen is the rate a crawler sees once the filter is full (Q_NONE queries
 * its own filter). The other measure, URLs lost during filling, is the
 * report's (bench-report.c). */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "rss.h"
#include "urlgen.h"

/* One child's work. */
typedef struct job {
    const options *opt;
    const contestant *c;
    uint64_t n;
    double p;
    unsigned rep;
    bool fp_check;
    const char *dir; /* Q_DISK: the state directory */
    bool reopen;     /* Q_DISK: reopen the state the fill left, not fill */
    uint64_t expect; /* reopen: the URLs the fill enqueued */
} job;

/* ---- small helpers ---------------------------------------------------- */

double bench_now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t elapsed_ns(const struct timespec *a, const struct timespec *b)
{
    return (uint64_t)((int64_t)(b->tv_sec - a->tv_sec) * 1000000000 + (b->tv_nsec - a->tv_nsec));
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- the child: fill one frontier and measure ------------------------- */

static void progress(const job *j, const char *phase, uint64_t done, uint64_t total)
{
    char n[32], line[160];
    int len = snprintf(line, sizeof line, "\r%s n=%s p=%g rep %u/%u %3u%% ", phase,
                       bench_fmt_count(n, sizeof n, j->n), j->p, j->rep + 1, j->opt->reps,
                       (unsigned)(total ? done * 100 / total : 100));
    if (len > 0 && write(STDERR_FILENO, line, (size_t)len) < 0) {
        /* progress is best effort */
    }
}

static void config_for(const job *j, sieve_frontier_config *cfg)
{
    sieve_frontier_config_init(cfg);
    cfg->seen.kind = j->c->kind;
    cfg->seen.layout = j->c->layout;
    cfg->seen.capacity = j->n;
    cfg->seen.fp_rate = j->p;
    cfg->seen.overflow = SIEVE_OVERFLOW_WARN;
    cfg->max_url_len = URLGEN_LINE_MAX;
    /* the whole frontier: per-host queues, as a polite crawl keeps them */
    cfg->politeness.enabled = j->c->queue == Q_RAM || j->c->queue == Q_DISK;
    if (j->c->queue == Q_DISK)
        cfg->queue_memory = j->opt->queue_memory;
    /* Past capacity a Bloom frontier warns; the estimate hovers around n at
     * the end of a fill, and a warning would only garble the table. */
    cfg->logger.level = SIEVE_LOG_ERROR;
}

/* Records a failure: status is a sieve status, or 0 to report errno. */
static int fail(result *r, const char *what, int status)
{
    r->status = -1;
    snprintf(r->error, sizeof r->error, "%s: %s", what,
             status == 0 || status == SIEVE_EIO ? strerror(errno) : sieve_strerror(status));
    return -1;
}

static int open_present(const job *j, urlgen **g)
{
    if (j->opt->urls != NULL)
        return urlgen_open_file(g, j->opt->urls);
    return urlgen_open_synthetic(g, j->opt->seed, j->opt->hosts, URLGEN_PRESENT);
}

/* Pops every queued URL and reports it done, keeping the first one popped
 * in flight so the frontier never sees an empty queue with nothing in
 * flight, which would end the crawl. */
static int drain(sieve_frontier *f, char *buf, size_t cap, bool *holding, sieve_url *held,
                 char *held_buf)
{
    for (;;) {
        sieve_url u;
        int rc = sieve_frontier_pop(f, buf, cap, &u, 0);
        if (rc == SIEVE_EAGAIN || rc == SIEVE_EDRAINED) /* nothing queued now */
            return SIEVE_OK;
        if (rc != SIEVE_OK)
            return rc;
        if (!*holding) {
            /* done() wants the URL as pop() gave it: keep its bytes. */
            memcpy(held_buf, u.url, u.len + 1);
            *held = u;
            held->url = held_buf;
            *holding = true;
            continue;
        }
        rc = sieve_frontier_done(f, &u);
        if (rc != SIEVE_OK)
            return rc;
    }
}

/* Pushes one batch and returns the nanoseconds the push calls took, or sets
 * *status to SIEVE_ENOMEM. URLs refused one by one (empty, too long, not a
 * URL) are counted by the frontier and are not errors here. */
static uint64_t timed_push(sieve_frontier *f, const contestant *c, const urlgen_batch *b,
                           size_t count, int *status)
{
    struct timespec t0, t1;
    int rc = 0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (c->batch) {
        rc = sieve_frontier_push_batch(f, b->urls, count, NULL);
    } else {
        for (size_t i = 0; i < count && rc != SIEVE_ENOMEM; i++)
            rc = sieve_frontier_push(f, b->urls[i].url, b->urls[i].len, b->urls[i].depth);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    /* push() refuses a bad URL on its own and goes on; push_batch() only
     * fails as a whole */
    *status = rc == SIEVE_ENOMEM || (c->batch && rc < 0) ? rc : SIEVE_OK;
    return elapsed_ns(&t0, &t1);
}

static void note_lengths(result *r, const urlgen_batch *b, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        uint64_t len = b->urls[i].len;
        r->url_bytes += len;
        if (r->url_min == 0 || len < r->url_min)
            r->url_min = len;
        if (len > r->url_max)
            r->url_max = len;
    }
}

/* bloom+disk syncs its state every this many pushes. */
#define SYNC_EVERY (UINT64_C(1) << 20)

static int fill(const job *j, sieve_frontier *f, urlgen *g, urlgen_batch *b, char *popbuf,
                result *r)
{
    bool holding = false;
    sieve_url held = {0};
    static char held_buf[URLGEN_LINE_MAX + 1];
    double last = 0;
    bool spilling = false; /* Q_DISK: the queue has reached its budget */
    for (uint64_t done = 0; done < j->n;) {
        size_t want = j->n - done < URLGEN_BATCH ? (size_t)(j->n - done) : URLGEN_BATCH;
        long got = urlgen_next(g, b, want);
        if (got <= 0) {
            if (got == 0)
                errno = ENODATA;
            return fail(r, "reading URLs", 0);
        }
        note_lengths(r, b, (size_t)got);
        int rc;
        uint64_t ns = timed_push(f, j->c, b, (size_t)got, &rc);
        if (rc != SIEVE_OK)
            return fail(r, "push", rc);
        r->push_ns += ns;
        if (spilling) {
            r->spill_push_ns += ns;
            r->spill_pushed += (uint64_t)got;
        } else if (j->c->queue == Q_DISK) {
            sieve_frontier_stats st;
            sieve_frontier_stats_get(f, &st);
            spilling = st.spilled > 0;
        }
        done += (uint64_t)got;
        /* As a crawl syncs its state every few seconds, which takes a
         * checkpoint whenever the journal has grown past what one costs;
         * not timed, like the URL stream. */
        if (j->c->queue == Q_DISK && done % SYNC_EVERY < URLGEN_BATCH &&
            (rc = sieve_frontier_sync(f)) != SIEVE_OK)
            return fail(r, "sync", rc);
        if (j->c->queue == Q_DRAINED &&
            (rc = drain(f, popbuf, URLGEN_LINE_MAX + 1, &holding, &held, held_buf)) != SIEVE_OK)
            return fail(r, "pop", rc);
        if (j->opt->progress && done % 65536 < URLGEN_BATCH) {
            double t = bench_now_seconds();
            if (t - last >= 0.25) {
                progress(j, j->c->name, done, j->n);
                last = t;
            }
        }
    }
    r->pushed = j->n;
    if (holding && sieve_frontier_done(f, &held) != SIEVE_OK)
        return fail(r, "done", SIEVE_ESTATE);
    /* Pushes are written with the next done() or sync: a crawl's pages'
     * dones write theirs, so a last sync stands in for them here. */
    int rc;
    if (j->c->queue == Q_DISK && (rc = sieve_frontier_sync(f)) != SIEVE_OK)
        return fail(r, "sync", rc);
    return 0;
}

typedef bool (*contains_fn)(const void *set, const char *url, size_t len);

static bool seen_contains(const void *set, const char *url, size_t len)
{
    return sieve_seen_contains((const sieve_seen *)set, url, len);
}

static bool bloom_contains(const void *set, const char *url, size_t len)
{
    return sieve_bloom_contains((const sieve_bloom *)set, url, len);
}

/* Asks set about the --absent never-pushed URLs; done URLs of total are
 * behind, for the progress line. */
static void query_absent(const job *j, const void *set, contains_fn contains, result *r,
                         uint64_t done, uint64_t total)
{
    char url[URLGEN_SYNTH_MAX];
    double last = 0;
    for (uint64_t i = 0; i < j->opt->absent; i++) {
        size_t len = urlgen_synthetic(j->opt->seed, j->opt->hosts, URLGEN_ABSENT, i, url);
        r->absent_hits += contains(set, url, len);
        if (j->opt->progress && i % 65536 == 0 && bench_now_seconds() - last >= 0.25) {
            progress(j, "absent check", done + i, total);
            last = bench_now_seconds();
        }
    }
    r->absent_queries = j->opt->absent;
}

/* Fills a sieve_seen of the frontier's configuration with the same URLs
 * and counts how many never-pushed URLs it calls seen. */
static int absent_check(const job *j, const sieve_frontier_config *cfg, urlgen_batch *b, result *r)
{
    sieve_seen *s;
    int rc = sieve_seen_new(&s, &cfg->seen);
    if (rc != SIEVE_OK)
        return fail(r, "creating the seen-set for the absent check", rc);
    urlgen *g;
    if (open_present(j, &g) != 0) {
        sieve_seen_free(s);
        return fail(r, "opening the URL stream", 0);
    }
    uint64_t total = j->n + j->opt->absent;
    double last = 0;
    for (uint64_t done = 0; done < j->n && rc >= 0;) {
        size_t want = j->n - done < URLGEN_BATCH ? (size_t)(j->n - done) : URLGEN_BATCH;
        long got = urlgen_next(g, b, want);
        if (got <= 0) {
            if (got == 0)
                errno = ENODATA;
            urlgen_close(g);
            sieve_seen_free(s);
            return fail(r, "reading URLs again", 0);
        }
        for (long i = 0; i < got && rc >= 0; i++)
            rc = sieve_seen_add(s, b->urls[i].url, b->urls[i].len);
        done += (uint64_t)got;
        if (j->opt->progress && done % 65536 < URLGEN_BATCH && bench_now_seconds() - last >= 0.25) {
            progress(j, "absent check", done, total);
            last = bench_now_seconds();
        }
    }
    urlgen_close(g);
    if (rc < 0) {
        sieve_seen_free(s);
        return fail(r, "refilling the seen-set", rc);
    }
    query_absent(j, s, seen_contains, r, j->n, total);
    sieve_seen_free(s);
    return 0;
}

/* Q_NONE: the Bloom filter alone, the frontier's seen-set configuration,
 * fed with sieve_bloom_add_batch() 64 keys a call, timed as a push is. */
static void filter_run(const job *j, urlgen *g, urlgen_batch *b, result *r)
{
    sieve_seen_config sc;
    sieve_seen_config_init(&sc);
    sieve_bloom *bl;
    int rc = sieve_bloom_new(&bl, j->n, j->p, j->c->layout, sc.seed);
    if (rc != SIEVE_OK) {
        fail(r, "creating the Bloom filter", rc);
        return;
    }
    sieve_key keys[URLGEN_BATCH];
    double last = 0;
    for (uint64_t done = 0; done < j->n;) {
        size_t want = j->n - done < URLGEN_BATCH ? (size_t)(j->n - done) : URLGEN_BATCH;
        long got = urlgen_next(g, b, want);
        if (got <= 0) {
            if (got == 0)
                errno = ENODATA;
            fail(r, "reading URLs", 0);
            break;
        }
        note_lengths(r, b, (size_t)got);
        for (long i = 0; i < got; i++)
            keys[i] = (sieve_key){b->urls[i].url, b->urls[i].len};
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        r->enqueued += sieve_bloom_add_batch(bl, keys, (size_t)got, NULL);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        r->push_ns += elapsed_ns(&t0, &t1);
        done += (uint64_t)got;
        if (j->opt->progress && done % 65536 < URLGEN_BATCH && bench_now_seconds() - last >= 0.25) {
            progress(j, j->c->name, done, j->n);
            last = bench_now_seconds();
        }
    }
    if (r->status == 0) {
        sieve_bloom_info info;
        sieve_bloom_info_get(bl, &info);
        r->pushed = j->n;
        r->seen = j->n - r->enqueued;
        r->seen_bytes = info.bytes;
        r->est_fp_rate = info.est_fp_rate;
        if (rss_current(&r->rss_after) != 0 || rss_peak(&r->rss_peak) != 0)
            fail(r, "reading /proc/self", 0);
        else if (j->fp_check)
            query_absent(j, bl, bloom_contains, r, 0, j->opt->absent);
    }
    sieve_bloom_free(bl);
}

static void take_stats(sieve_frontier *f, result *r)
{
    sieve_frontier_stats st;
    sieve_frontier_stats_get(f, &st);
    r->enqueued = st.enqueued;
    r->seen = st.seen;
    r->invalid = st.invalid;
    r->seen_bytes = st.seen_bytes;
    r->est_fp_rate = st.est_fp_rate;
    r->spilled = st.spilled;
    r->queue_bytes = st.queue_bytes;
    r->hosts_seen = st.hosts;
}

/* Fills a fresh frontier, measures, then (rep 0 of a Bloom contestant)
 * runs the absent check. Buffers are allocated and touched before the
 * resident baseline is read, so only the frontier's memory counts. */
static void child_run(const job *j, result *r)
{
    double t0 = bench_now_seconds();
    memset(r, 0, sizeof *r);
    urlgen_batch b;
    urlgen *g = NULL;
    sieve_frontier *f = NULL;
    sieve_frontier_config cfg;
    config_for(j, &cfg);
    if (j->c->queue == Q_DISK) /* say why the state directory failed, if it does */
        cfg.logger = sieve_logger_default(), cfg.logger.level = SIEVE_LOG_ERROR;
    char *popbuf = calloc(1, URLGEN_LINE_MAX + 1);
    if (popbuf == NULL ||
        urlgen_batch_init(&b, j->opt->urls != NULL ? URLGEN_LINE_MAX : URLGEN_SYNTH_MAX) != 0) {
        free(popbuf);
        fail(r, "allocating buffers", SIEVE_ENOMEM);
        return;
    }
    int rc;
    if (open_present(j, &g) != 0)
        fail(r, "opening the URL stream", 0);
    else if (rss_current(&r->rss_before) != 0)
        fail(r, "reading /proc/self/statm", 0);
    else if (j->c->queue == Q_NONE)
        filter_run(j, g, &b, r);
    else if ((rc = j->c->queue == Q_DISK ? sieve_frontier_open(&f, j->dir, &cfg)
                                         : sieve_frontier_new(&f, &cfg)) != SIEVE_OK)
        fail(r, "creating the frontier", rc);
    else if (fill(j, f, g, &b, popbuf, r) == 0) {
        take_stats(f, r);
        if (rss_current(&r->rss_after) != 0 || rss_peak(&r->rss_peak) != 0)
            fail(r, "reading /proc/self", 0);
    }
    /* bloom+disk's frontier is left as a kill leaves it, without the last
     * checkpoint free() takes, so that the reopen measured is the one
     * after a crash: the last checkpoint and the journal after it. */
    if (f != NULL && j->c->queue != Q_DISK)
        sieve_frontier_free(f);
    urlgen_close(g);
    if (r->status == 0 && j->c->queue == Q_DISK &&
        bench_tree_size(j->dir, &r->disk_bytes, &r->disk_size) != 0)
        fail(r, "measuring the state directory", 0);
    if (r->status == 0 && j->fp_check && j->c->queue != Q_NONE)
        absent_check(j, &cfg, &b, r);
    urlgen_batch_free(&b);
    free(popbuf);
    r->seconds = bench_now_seconds() - t0;
}

/* ---- reopening a state: Q_DISK ---------------------------------------- */

static uint64_t tree_allocated, tree_apparent;

static int add_size(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)path, (void)ftw;
    if (type == FTW_F) {
        tree_allocated += (uint64_t)st->st_blocks * 512;
        tree_apparent += (uint64_t)st->st_size;
    }
    return 0;
}

int bench_tree_size(const char *path, uint64_t *allocated, uint64_t *apparent)
{
    tree_allocated = tree_apparent = 0;
    if (nftw(path, add_size, 16, FTW_PHYS) != 0)
        return -1;
    *allocated = tree_allocated;
    *apparent = tree_apparent;
    return 0;
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st, (void)type, (void)ftw;
    return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

int bench_remove_tree(const char *path)
{
    return nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Writes a file's pages out and drops them from the page cache, so that
 * the next read of it comes from the disk. */
static int drop_cached(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st, (void)ftw;
    if (type != FTW_F)
        return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fdatasync(fd) == 0 && posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0 ? 0 : -1;
    close(fd);
    return rc;
}

/* Opens the state j->dir the fill left, times it, and checks it queued
 * again every URL the fill enqueued (expect): first with the state's pages
 * out of the page cache, as after a reboot, then again with them cached,
 * as after a kill. */
static void reopen_run(const job *j, result *r)
{
    double t0 = bench_now_seconds();
    memset(r, 0, sizeof *r);
    sieve_frontier_config cfg;
    config_for(j, &cfg);
    cfg.logger = sieve_logger_default();
    cfg.logger.level = SIEVE_LOG_ERROR;
    if (nftw(j->dir, drop_cached, 16, FTW_PHYS) != 0) {
        fail(r, "dropping the state from the page cache", 0);
        return;
    }
    for (int pass = 0; pass < 2; pass++) {
        sieve_frontier *f;
        uint64_t before, after;
        if (rss_current(&before) != 0) {
            fail(r, "reading /proc/self/statm", 0);
            return;
        }
        double t = bench_now_seconds();
        int rc = sieve_frontier_open(&f, j->dir, &cfg);
        t = bench_now_seconds() - t;
        if (rc != SIEVE_OK) {
            fail(r, "reopening the state", rc);
            return;
        }
        sieve_frontier_stats st;
        sieve_frontier_stats_get(f, &st);
        if (rss_current(&after) != 0)
            fail(r, "reading /proc/self/statm", 0);
        sieve_frontier_free(f);
        if (r->status != 0)
            return;
        if (st.recovered != j->expect) {
            r->status = -1;
            snprintf(r->error, sizeof r->error, "reopening queued %llu URLs again, not %llu",
                     (unsigned long long)st.recovered, (unsigned long long)j->expect);
            return;
        }
        if (pass == 0) {
            r->open_s = t;
            r->open_rss = after - before;
            r->recovered = st.recovered;
            r->open_spilled = st.spilled;
        } else {
            r->open_warm_s = t;
        }
    }
    r->seconds = bench_now_seconds() - t0;
}

/* ---- the parent: run children, collect results ------------------------- */

static bool write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        p += w;
        len -= (size_t)w;
    }
    return true;
}

static size_t read_all(int fd, void *buf, size_t len)
{
    char *p = buf;
    size_t got = 0;
    while (got < len) {
        ssize_t r = read(fd, p + got, len - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    return got;
}

/* Runs one job in a child. Returns 0 with *r filled, or -1 with a reason in
 * r->error (the child failed, crashed or was killed). */
static int run_job(const job *j, result *r)
{
    memset(r, 0, sizeof *r);
    int fds[2];
    if (pipe(fds) != 0) {
        snprintf(r->error, sizeof r->error, "pipe: %s", strerror(errno));
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(r->error, sizeof r->error, "fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        close(fds[0]);
        result mine;
        if (j->reopen)
            reopen_run(j, &mine);
        else
            child_run(j, &mine);
        _exit(write_all(fds[1], &mine, sizeof mine) ? 0 : 1);
    }
    close(fds[1]);
    size_t got = read_all(fds[0], r, sizeof *r);
    close(fds[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    if (got == sizeof *r && WIFEXITED(st) && WEXITSTATUS(st) == 0)
        return r->status == 0 ? 0 : -1;
    if (WIFSIGNALED(st))
        snprintf(r->error, sizeof r->error, "killed by signal %d (%s)%s", WTERMSIG(st),
                 strsignal(WTERMSIG(st)),
                 WTERMSIG(st) == SIGKILL ? ", perhaps by the kernel for lack of memory" : "");
    else
        snprintf(r->error, sizeof r->error, "the measuring process exited without a result");
    return -1;
}

static void clear_progress(const options *opt)
{
    if (opt->progress)
        fputs("\r\033[K", stderr);
}

/* A new directory for one rep's state under opt->dir. */
static int make_state_dir(const options *opt, int c, uint64_t n, double p, unsigned rep, char *path,
                          size_t cap)
{
    char nb[32];
    snprintf(path, cap, "%s/%s-n%s-p%g-rep%u", opt->dir, bench_contestants[c].name,
             bench_fmt_count(nb, sizeof nb, n), p, rep + 1);
    if (bench_remove_tree(path) != 0 && errno != ENOENT) /* left by an interrupted run */
        return -1;
    return mkdir(path, 0700);
}

void bench_samples_start(summary *s, bench_samples *acc)
{
    memset(s, 0, sizeof *s);
    memset(acc, 0, sizeof *acc);
    s->ran = true;
}

bool bench_run_rep(const options *opt, int c, uint64_t n, double p, unsigned rep, summary *s,
                   bench_samples *acc)
{
    const contestant *ct = &bench_contestants[c];
    job j = {opt, ct, n, p, rep, false, NULL, false, 0};
    j.fp_check = rep == 0 && ct->kind == SIEVE_SEEN_BLOOM && opt->absent > 0;
    char dir[4096];
    result r, ro;
    int rc = 0;
    if (ct->queue == Q_DISK) {
        if (make_state_dir(opt, c, n, p, rep, dir, sizeof dir) != 0) {
            rc = -1;
            r.seconds = 0;
            snprintf(r.error, sizeof r.error, "cannot make the state directory %.120s: %s", dir,
                     strerror(errno));
        }
        j.dir = dir;
    }
    if (rc == 0)
        rc = run_job(&j, &r);
    s->seconds += r.seconds;
    if (rc == 0 && ct->queue == Q_DISK) {
        job reopen = j;
        reopen.reopen = true;
        reopen.expect = r.enqueued;
        if (opt->progress)
            progress(&reopen, "reopen", 0, 1);
        rc = run_job(&reopen, &ro);
        s->seconds += ro.seconds;
        if (rc != 0)
            snprintf(r.error, sizeof r.error, "%s", ro.error);
        r.open_s = ro.open_s;
        r.open_warm_s = ro.open_warm_s;
        r.open_rss = ro.open_rss;
        r.recovered = ro.recovered;
        r.open_spilled = ro.open_spilled;
    }
    if (ct->queue == Q_DISK && bench_remove_tree(dir) != 0 && errno != ENOENT)
        fprintf(stderr, "sieve bench: cannot remove %s: %s\n", dir, strerror(errno));
    clear_progress(opt);
    if (rc != 0) {
        snprintf(s->error, sizeof s->error, "%s n=%llu rep %u: %s", ct->name, (unsigned long long)n,
                 rep + 1, r.error);
        fprintf(stderr, "sieve bench: %s\n", s->error);
        return false;
    }
    if (rep == 0)
        s->first = r;
    unsigned i = acc->count++;
    acc->ns[i] = r.pushed ? (double)r.push_ns / (double)r.pushed : 0;
    acc->spill_ns[i] = r.spill_pushed ? (double)r.spill_push_ns / (double)r.spill_pushed : 0;
    acc->rss[i] = (double)r.rss_after - (double)r.rss_before;
    acc->open_s[i] = r.open_s;
    acc->open_warm[i] = r.open_warm_s;
    return true;
}

void bench_samples_finish(summary *s, bench_samples *acc)
{
    unsigned n = acc->count;
    if (n == 0 || s->error[0] != '\0')
        return;
    s->ok = true;
    s->rss_growth_median = median(acc->rss, n);
    s->open_median = median(acc->open_s, n);
    s->open_warm_median = median(acc->open_warm, n);
    s->spill_ns_median = median(acc->spill_ns, n);
    s->ns_median = median(acc->ns, n); /* sorts ns */
    s->ns_min = acc->ns[0];
    s->ns_max = acc->ns[n - 1];
}
