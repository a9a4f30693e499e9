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
 * locking, probing, page faults on first touch of the filter or table (no
 * memory is touched in advance), but not URL generation.
 *
 * Queue. A crawler pops what it pushes; so does the benchmark. After each
 * batch, untimed, it pops every queued URL and reports it done, keeping one
 * URL in flight so the frontier never judges the crawl over. The queue
 * then stays within a chunk or two, and the resident growth (RSS after
 * filling minus RSS before creating the frontier) measures the seen-set
 * and what the allocator adds to it, to compare with its accounted bytes.
 *
 * False positives (absent). After filling, a fresh sieve_seen of the same
 * configuration is filled with the same URLs (same bits as the frontier's)
 * and queried with --absent URLs that were never pushed; the share it calls
 * seen is the rate a crawler sees once the filter is full. The other
 * measure, URLs lost during filling, is the report's (bench-report.c). */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    return urlgen_open_synthetic(g, j->opt->seed, URLGEN_HOSTS, URLGEN_PRESENT);
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

static int fill(const job *j, sieve_frontier *f, urlgen *g, urlgen_batch *b, char *popbuf,
                result *r)
{
    bool holding = false;
    sieve_url held = {0};
    static char held_buf[URLGEN_LINE_MAX + 1];
    double last = 0;
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
        r->push_ns += timed_push(f, j->c, b, (size_t)got, &rc);
        if (rc != SIEVE_OK)
            return fail(r, "push", rc);
        done += (uint64_t)got;
        rc = drain(f, popbuf, URLGEN_LINE_MAX + 1, &holding, &held, held_buf);
        if (rc != SIEVE_OK)
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
    return 0;
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
    char url[URLGEN_SYNTH_MAX];
    for (uint64_t i = 0; i < j->opt->absent; i++) {
        size_t len = urlgen_synthetic(j->opt->seed, URLGEN_HOSTS, URLGEN_ABSENT, i, url);
        r->absent_hits += sieve_seen_contains(s, url, len);
        if (j->opt->progress && i % 65536 == 0 && bench_now_seconds() - last >= 0.25) {
            progress(j, "absent check", j->n + i, total);
            last = bench_now_seconds();
        }
    }
    r->absent_queries = j->opt->absent;
    sieve_seen_free(s);
    return 0;
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
    else if ((rc = sieve_frontier_new(&f, &cfg)) != SIEVE_OK)
        fail(r, "creating the frontier", rc);
    else if (fill(j, f, g, &b, popbuf, r) == 0) {
        sieve_frontier_stats st;
        sieve_frontier_stats_get(f, &st);
        r->enqueued = st.enqueued;
        r->seen = st.seen;
        r->invalid = st.invalid;
        r->seen_bytes = st.seen_bytes;
        r->est_fp_rate = st.est_fp_rate;
        if (rss_current(&r->rss_after) != 0 || rss_peak(&r->rss_peak) != 0)
            fail(r, "reading /proc/self", 0);
    }
    if (f != NULL)
        sieve_frontier_free(f);
    urlgen_close(g);
    if (r->status == 0 && j->fp_check)
        absent_check(j, &cfg, &b, r);
    urlgen_batch_free(&b);
    free(popbuf);
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

void bench_run_contestant(const options *opt, int c, uint64_t n, double p, summary *s)
{
    double ns[100], rss[100];
    memset(s, 0, sizeof *s);
    s->ran = true;
    for (unsigned rep = 0; rep < opt->reps; rep++) {
        job j = {opt, &bench_contestants[c], n, p, rep, false};
        j.fp_check = rep == 0 && bench_contestants[c].kind == SIEVE_SEEN_BLOOM && opt->absent > 0;
        result r;
        int rc = run_job(&j, &r);
        s->seconds += r.seconds;
        if (rc != 0) {
            clear_progress(opt);
            snprintf(s->error, sizeof s->error, "%s n=%llu rep %u: %s", bench_contestants[c].name,
                     (unsigned long long)n, rep + 1, r.error);
            fprintf(stderr, "sieve bench: %s\n", s->error);
            return;
        }
        if (rep == 0)
            s->first = r;
        ns[rep] = r.pushed ? (double)r.push_ns / (double)r.pushed : 0;
        rss[rep] = (double)r.rss_after - (double)r.rss_before;
    }
    clear_progress(opt);
    s->ok = true;
    s->rss_growth_median = median(rss, opt->reps);
    s->ns_median = median(ns, opt->reps); /* sorts ns */
    s->ns_min = ns[0];
    s->ns_max = ns[opt->reps - 1];
}
