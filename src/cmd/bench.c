/* bench.c - `sieve bench`: the memory and speed of the Bloom frontier
 * against the exact (hash-set) frontier, on the same URL stream.
 *
 * Contestants. bloom: the blocked Bloom filter, fed with push_batch() in
 * batches of 64 URLs (a page's links arrive together). classic: the classic
 * Bloom layout, fed one URL at a time with push(). exact: the hash set, fed
 * with push_batch(). Every frontier is sized for the n URLs it receives.
 *
 * One process per measurement. Each contestant, at each n and p, runs in a
 * forked child that builds its own URL stream, fills a fresh frontier,
 * measures, and sends a fixed-size result back through a pipe. A child
 * starts from the parent's small heap, so its resident-memory growth is its
 * own: memory another contestant freed cannot be reused and hide growth.
 * Each contestant is run --reps times (3 by default), each time in a new
 * child; ns per push is the median over those runs.
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
 * False positives, measured two ways. Lost: every URL of the stream is
 * distinct, so the exact frontier enqueues all of them, and each URL the
 * Bloom frontier refused was a false positive during filling (the rate
 * climbs as the filter fills, so this is an average over fill levels).
 * Absent: after filling, a fresh sieve_seen of the same configuration is
 * filled with the same URLs (same bits as the frontier's) and queried with
 * --absent URLs (1,000,000 by default) that were never pushed; the share
 * it calls seen is the rate a crawler sees once the filter is full. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "rss.h"
#include "sieve/sieve.h"
#include "urlgen.h"

#define LIST_MAX           16
#define REPS_DEFAULT       3
#define ABSENT_DEFAULT     1000000
#define SEED_DEFAULT       1
#define MIN_EXACT_PER_URL  100 /* bytes per URL the exact set needs, at least */
#define EXACT_KEY_OVERHEAD 40  /* per URL beyond its bytes: prefix, slot, slack */
#define MEM_SLACK          (64u << 20)

typedef struct contestant {
    const char *name;
    sieve_seen_kind kind;
    sieve_bloom_layout layout;
    bool batch; /* push_batch(), else push() one URL at a time */
} contestant;

enum { C_BLOOM, C_CLASSIC, C_EXACT, NCONTESTANTS };

static const contestant contestants[NCONTESTANTS] = {
    [C_BLOOM] = {"bloom", SIEVE_SEEN_BLOOM, SIEVE_BLOOM_BLOCKED, true},
    [C_CLASSIC] = {"classic", SIEVE_SEEN_BLOOM, SIEVE_BLOOM_CLASSIC, false},
    [C_EXACT] = {"exact", SIEVE_SEEN_EXACT, SIEVE_BLOOM_BLOCKED, true},
};

typedef struct options {
    uint64_t n[LIST_MAX];
    size_t n_count;
    double p[LIST_MAX];
    size_t p_count;
    uint64_t seed;
    unsigned reps;
    uint64_t absent;
    const char *urls, *csv, *plot;
    bool force;
    bool progress; /* stderr is a terminal */
} options;

/* One child's work. */
typedef struct job {
    const options *opt;
    const contestant *c;
    uint64_t n;
    double p;
    unsigned rep;
    bool fp_check;
} job;

/* What a child sends back. Plain data, written and read whole. */
typedef struct result {
    int status; /* 0, or -1 with error set */
    char error[200];
    uint64_t pushed, enqueued, seen, invalid;
    uint64_t seen_bytes;
    uint64_t rss_before, rss_after, rss_peak;
    uint64_t push_ns;
    uint64_t url_bytes, url_min, url_max;
    double est_fp_rate;
    uint64_t absent_queries, absent_hits;
    double seconds;
} result;

/* The runs of one contestant at one (n, p), summarized. */
typedef struct summary {
    bool ran, ok;
    char error[240];
    result first; /* rep 0: memory, counts, the absent check */
    double ns_median, ns_min, ns_max;
    double rss_growth_median;
    double seconds; /* all reps */
} summary;

/* ---- small helpers ---------------------------------------------------- */

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t elapsed_ns(const struct timespec *a, const struct timespec *b)
{
    return (uint64_t)((int64_t)(b->tv_sec - a->tv_sec) * 1000000000 + (b->tv_nsec - a->tv_nsec));
}

/* "1e7" for round powers-of-ten multiples from 1e4 up, else the digits. */
static const char *fmt_count(char *buf, size_t cap, uint64_t n)
{
    unsigned e = 0;
    uint64_t m = n;
    while (m >= 10 && m % 10 == 0) {
        m /= 10;
        e++;
    }
    if (e >= 4 && m < 10)
        snprintf(buf, cap, "%llue%u", (unsigned long long)m, e);
    else
        snprintf(buf, cap, "%llu", (unsigned long long)n);
    return buf;
}

static const char *fmt_bytes(char *buf, size_t cap, double bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    unsigned u = 0;
    double v = bytes < 0 ? -bytes : bytes;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    snprintf(buf, cap, u == 0 ? "%s%.0f %s" : "%s%.1f %s", bytes < 0 ? "-" : "", v, units[u]);
    return buf;
}

static const char *fmt_duration(char *buf, size_t cap, double s)
{
    if (s < 60)
        snprintf(buf, cap, "%.1fs", s);
    else
        snprintf(buf, cap, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
    return buf;
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

static bool same_rate(double a, double b)
{
    return fabs(a - b) <= 1e-9 * b;
}

/* ---- arguments -------------------------------------------------------- */

static void usage(FILE *out)
{
    fprintf(out,
            "usage: sieve bench [OPTIONS]\n"
            "\n"
            "Fills a Bloom frontier (blocked layout, push_batch), a classic-layout Bloom\n"
            "frontier (push one at a time) and an exact hash-set frontier with the same\n"
            "URLs, and reports for each the seen-set's bytes, resident memory growth,\n"
            "nanoseconds per push and measured false-positive rates, then checks the\n"
            "targets: bloom <= 1.25 bytes/URL at p=0.01 and <= 2.75 at p=1e-4 with a\n"
            "measured rate <= p (n=1e8); at p=0.01, exact/bloom bytes >= 50 (n >= 1e7) and\n"
            "classic/bloom ns per push >= 4 (n=1e8).\n"
            "\n"
            "options:\n"
            "  --n LIST        URL counts, e.g. 1e5,1e6,1e7 (the default) or 1e8\n"
            "  --fp-rate LIST  Bloom false-positive rates, e.g. 0.01,0.0001 (default 0.01)\n"
            "  --urls FILE     push the URLs of FILE (one a line) instead of synthetic ones;\n"
            "                  --n defaults to the number of URLs in it\n"
            "  --seed N        seed of the synthetic URL stream (default %d)\n"
            "  --reps N        runs per contestant; ns/push is their median (default %d)\n"
            "  --absent N      never-pushed URLs queried for the false-positive rate\n"
            "                  (default %d; 0 skips the check)\n"
            "  --csv FILE      also write one CSV row per (n, p, contestant)\n"
            "  --plot FILE     draw bytes per URL and ns per push against n with gnuplot;\n"
            "                  FILE ends in .svg or .png\n"
            "  --force         run even if the estimated memory need exceeds what is available\n"
            "  --help          show this help\n"
            "\n"
            "Exit status: 0 when every run completed (whatever the targets say), 1 if a run\n"
            "or the plot failed, 2 for bad arguments or a run too large for this machine.\n",
            SEED_DEFAULT, REPS_DEFAULT, ABSENT_DEFAULT);
}

/* Parses a count such as "100000", "1e5" or "2.5e6": an integer in [min, max]. */
static bool parse_count(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    if (*s == '\0' || *s == '-' || *s == '+')
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end == '\0' && errno == 0) {
        if (v < min || v > max)
            return false;
        *out = v;
        return true;
    }
    errno = 0;
    double d = strtod(s, &end);
    if (*end != '\0' || errno != 0 || !(d >= (double)min) || !(d <= (double)max) || d != floor(d))
        return false;
    *out = (uint64_t)d;
    return true;
}

static bool parse_rate(const char *s, double *out)
{
    char *end;
    errno = 0;
    double d = strtod(s, &end);
    if (*s == '\0' || *end != '\0' || errno != 0 || !(d > 0 && d < 1))
        return false;
    *out = d;
    return true;
}

/* Splits a comma-separated list and parses each item as a count (rates when
 * counts is NULL). Returns the number of items, or 0 on any bad item. */
static size_t parse_list(const char *arg, uint64_t *counts, double *rates)
{
    size_t n = 0;
    const char *p = arg;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);
        char item[64];
        if (n == LIST_MAX || len == 0 || len >= sizeof item)
            return 0;
        memcpy(item, p, len);
        item[len] = '\0';
        bool ok = counts != NULL ? parse_count(item, 1, URLGEN_INDEX_LIMIT, &counts[n])
                                 : parse_rate(item, &rates[n]);
        if (!ok)
            return 0;
        n++;
        if (comma == NULL)
            return n;
        p = comma + 1;
    }
}

static int bad_arg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int bad_arg(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "sieve bench: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nTry 'sieve bench --help'.\n");
    va_end(ap);
    return EXIT_USAGE;
}

/* Returns -1 to go on, or the exit status to return now. */
static int parse_args(int argc, char **argv, options *opt)
{
    enum { O_N = 256, O_P, O_URLS, O_SEED, O_REPS, O_ABSENT, O_CSV, O_PLOT, O_FORCE, O_HELP };
    static const struct option longopts[] = {
        {"n", required_argument, NULL, O_N},
        {"fp-rate", required_argument, NULL, O_P},
        {"urls", required_argument, NULL, O_URLS},
        {"seed", required_argument, NULL, O_SEED},
        {"reps", required_argument, NULL, O_REPS},
        {"absent", required_argument, NULL, O_ABSENT},
        {"csv", required_argument, NULL, O_CSV},
        {"plot", required_argument, NULL, O_PLOT},
        {"force", no_argument, NULL, O_FORCE},
        {"help", no_argument, NULL, O_HELP},
        {NULL, 0, NULL, 0},
    };
    memset(opt, 0, sizeof *opt);
    opt->seed = SEED_DEFAULT;
    opt->reps = REPS_DEFAULT;
    opt->absent = ABSENT_DEFAULT;

    optind = 1;
    opterr = 0;
    int ch;
    uint64_t v;
    while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (ch) {
        case O_N:
            opt->n_count = parse_list(optarg, opt->n, NULL);
            if (opt->n_count == 0)
                return bad_arg("--n wants up to 16 comma-separated whole numbers from 1 to 2^40, "
                               "like 1e5,1e6: got '%s'",
                               optarg);
            break;
        case O_P:
            opt->p_count = parse_list(optarg, NULL, opt->p);
            if (opt->p_count == 0)
                return bad_arg("--fp-rate wants up to 16 comma-separated rates strictly between "
                               "0 and 1, like 0.01,0.0001: got '%s'",
                               optarg);
            break;
        case O_URLS:
            opt->urls = optarg;
            break;
        case O_SEED:
            if (!parse_count(optarg, 0, UINT64_MAX, &opt->seed))
                return bad_arg("--seed wants a whole number: got '%s'", optarg);
            break;
        case O_REPS:
            if (!parse_count(optarg, 1, 100, &v))
                return bad_arg("--reps wants a whole number from 1 to 100: got '%s'", optarg);
            opt->reps = (unsigned)v;
            break;
        case O_ABSENT:
            if (!parse_count(optarg, 0, UINT64_C(1000000000), &opt->absent))
                return bad_arg("--absent wants a whole number from 0 to 1e9: got '%s'", optarg);
            break;
        case O_CSV:
            opt->csv = optarg;
            break;
        case O_PLOT:
            opt->plot = optarg;
            break;
        case O_FORCE:
            opt->force = true;
            break;
        case 'h':
        case O_HELP:
            usage(stdout);
            return EXIT_OK;
        default:
            if (optopt != 0 && optopt < 256)
                fprintf(stderr, "sieve bench: option -%c is unknown\n", optopt);
            else if (optopt != 0)
                fprintf(stderr, "sieve bench: %s needs an argument\n", argv[optind - 1]);
            else
                fprintf(stderr, "sieve bench: option %s is unknown or needs an argument\n",
                        argv[optind - 1]);
            fprintf(stderr, "Try 'sieve bench --help'.\n");
            return EXIT_USAGE;
        }
    }
    if (optind < argc)
        return bad_arg("unexpected argument '%s'", argv[optind]);
    if (opt->p_count == 0) {
        opt->p[0] = 0.01;
        opt->p_count = 1;
    }
    opt->progress = isatty(STDERR_FILENO) == 1;
    return -1;
}

/* ---- the child: fill one frontier and measure ------------------------- */

static void progress(const job *j, const char *phase, uint64_t done, uint64_t total)
{
    char n[32], line[160];
    int len = snprintf(line, sizeof line, "\r%s n=%s p=%g rep %u/%u %3u%% ", phase,
                       fmt_count(n, sizeof n, j->n), j->p, j->rep + 1, j->opt->reps,
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
    return urlgen_open_synthetic(g, j->opt->seed, URLGEN_PRESENT);
}

/* Pops every queued URL and reports it done, keeping the first one popped
 * in flight so the frontier never sees an empty queue with nothing in
 * flight, which would end the crawl. */
static int drain(sieve_frontier *f, char *buf, size_t cap, bool *holding)
{
    for (;;) {
        sieve_url u;
        int rc = sieve_frontier_pop(f, buf, cap, &u, 0);
        if (rc == SIEVE_EAGAIN || rc == SIEVE_EDRAINED) /* nothing queued now */
            return SIEVE_OK;
        if (rc != SIEVE_OK)
            return rc;
        if (!*holding) {
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
        rc = drain(f, popbuf, URLGEN_LINE_MAX + 1, &holding);
        if (rc != SIEVE_OK)
            return fail(r, "pop", rc);
        if (j->opt->progress && done % 65536 < URLGEN_BATCH) {
            double t = now_seconds();
            if (t - last >= 0.25) {
                progress(j, j->c->name, done, j->n);
                last = t;
            }
        }
    }
    r->pushed = j->n;
    /* No per-host scheduling here, so the held URL's host is irrelevant. */
    sieve_url held = {0};
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
        if (j->opt->progress && done % 65536 < URLGEN_BATCH && now_seconds() - last >= 0.25) {
            progress(j, "absent check", done, total);
            last = now_seconds();
        }
    }
    urlgen_close(g);
    if (rc < 0) {
        sieve_seen_free(s);
        return fail(r, "refilling the seen-set", rc);
    }
    char url[URLGEN_SYNTH_MAX];
    for (uint64_t i = 0; i < j->opt->absent; i++) {
        size_t len = urlgen_synthetic(j->opt->seed, URLGEN_ABSENT, i, url);
        r->absent_hits += sieve_seen_contains(s, url, len);
        if (j->opt->progress && i % 65536 == 0 && now_seconds() - last >= 0.25) {
            progress(j, "absent check", j->n + i, total);
            last = now_seconds();
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
    double t0 = now_seconds();
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
    r->seconds = now_seconds() - t0;
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

static void run_contestant(const options *opt, int c, uint64_t n, double p, summary *s)
{
    double ns[100], rss[100];
    memset(s, 0, sizeof *s);
    s->ran = true;
    for (unsigned rep = 0; rep < opt->reps; rep++) {
        job j = {opt, &contestants[c], n, p, rep, false};
        j.fp_check = rep == 0 && contestants[c].kind == SIEVE_SEEN_BLOOM && opt->absent > 0;
        result r;
        int rc = run_job(&j, &r);
        s->seconds += r.seconds;
        if (rc != 0) {
            clear_progress(opt);
            snprintf(s->error, sizeof s->error, "%s n=%llu rep %u: %s", contestants[c].name,
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

/* ---- output ------------------------------------------------------------ */

static void print_command(FILE *out, int argc, char **argv)
{
    fputs("sieve bench", out);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool plain = *a != '\0' && strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                             "0123456789_-+=.,/:%@") == strlen(a);
        if (plain) {
            fprintf(out, " %s", a);
            continue;
        }
        fputs(" '", out);
        for (; *a != '\0'; a++)
            fputs(*a == '\'' ? "'\\''" : (char[]){*a, '\0'}, out);
        fputc('\'', out);
    }
    fputc('\n', out);
}

static void cpu_model(char *buf, size_t cap)
{
    snprintf(buf, cap, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL)
        return;
    char line[256];
    while (fgets(line, sizeof line, f) != NULL) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon != NULL) {
            colon += 1 + strspn(colon + 1, " \t");
            colon[strcspn(colon, "\n")] = '\0';
            snprintf(buf, cap, "%s", colon);
            break;
        }
    }
    fclose(f);
}

static void print_preamble(const options *opt, int argc, char **argv, uint64_t avail)
{
    char cpu[128], b1[32], b2[32], date[64];
    time_t t = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S %z", localtime(&t));
    cpu_model(cpu, sizeof cpu);
    print_command(stdout, argc, argv);
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    double load[1] = {-1};
    getloadavg(load, 1);
    printf("libsieve %s; %s, %ld CPUs, %s RAM, %s available; load %.2f; %s\n", sieve_version(), cpu,
           sysconf(_SC_NPROCESSORS_ONLN), fmt_bytes(b1, sizeof b1, (double)pages * (double)page),
           fmt_bytes(b2, sizeof b2, (double)avail), load[0], date);
    if (opt->urls != NULL)
        printf("URLs: the lines of %s; absent URLs: synthetic, seed %llu\n", opt->urls,
               (unsigned long long)opt->seed);
    else
        printf("URLs: synthetic, seed %llu, %d hosts (Zipf-like), all distinct\n",
               (unsigned long long)opt->seed, URLGEN_HOSTS);
    printf("\n"
           "seen-set   bytes the seen-set accounts for (sieve_frontier_stats.seen_bytes)\n"
           "RSS        resident memory after filling minus before creating the frontier,\n"
           "           median of the runs; the queue is drained as it fills, so this is\n"
           "           the seen-set plus allocator overhead\n"
           "ns/push    median over %u runs (each a fresh process) of the time spent in push\n"
           "           calls divided by URLs pushed; URL generation excluded, page faults\n"
           "           included; bloom and exact push batches of %d, classic one at a time\n"
           "lost       URLs the exact frontier enqueued and this one refused as seen\n"
           "FP absent  share of %llu never-pushed URLs the filled seen-set calls seen\n"
           "           (a separate seen-set of the same configuration, refilled)\n"
           "FP model   the seen-set's own estimate of its false-positive rate when full\n"
           "exact does not depend on p: it runs once per n, its row repeats per p\n\n",
           opt->reps, URLGEN_BATCH, (unsigned long long)opt->absent);
    printf("%8s %8s %-10s %10s %7s %10s %7s %8s %10s %9s %9s %9s\n", "n", "p", "contestant",
           "seen-set", "B/URL", "RSS", "B/URL", "ns/push", "lost", "lost rate", "FP absent",
           "FP model");
}

static void print_row(uint64_t n, double p, int c, const summary *s, const summary *exact)
{
    char nb[32], b1[32], b2[32], pb[32], lost[32], lrate[32], fpa[32], fpm[32];
    const result *r = &s->first;
    snprintf(pb, sizeof pb, c == C_EXACT ? "-" : "%g", p);
    printf("%8s %8s %-10s ", fmt_count(nb, sizeof nb, n), pb, contestants[c].name);
    if (!s->ok) {
        printf("failed: %s\n", s->error);
        return;
    }
    snprintf(lost, sizeof lost, "-");
    snprintf(lrate, sizeof lrate, "-");
    snprintf(fpa, sizeof fpa, "-");
    snprintf(fpm, sizeof fpm, "-");
    if (c != C_EXACT && exact->ok) {
        int64_t l = (int64_t)(exact->first.enqueued - r->enqueued);
        snprintf(lost, sizeof lost, "%lld", (long long)l);
        snprintf(lrate, sizeof lrate, "%.3g", (double)l / (double)exact->first.enqueued);
    }
    if (r->absent_queries > 0)
        snprintf(fpa, sizeof fpa, "%.5g", (double)r->absent_hits / (double)r->absent_queries);
    if (c != C_EXACT)
        snprintf(fpm, sizeof fpm, "%.3g", r->est_fp_rate);
    printf("%10s %7.3f %10s %7.3f %8.1f %10s %9s %9s %9s\n",
           fmt_bytes(b1, sizeof b1, (double)r->seen_bytes), (double)r->seen_bytes / (double)n,
           fmt_bytes(b2, sizeof b2, s->rss_growth_median), s->rss_growth_median / (double)n,
           s->ns_median, lost, lrate, fpa, fpm);
}

static void csv_header(FILE *f)
{
    fputs("n,fp_rate,contestant,layout,push,reps,pushed,enqueued,invalid,seen_bytes,"
          "bytes_per_url,rss_growth_bytes,rss_bytes_per_url,rss_peak_growth_bytes,"
          "ns_per_push_median,ns_per_push_min,ns_per_push_max,lost,lost_rate,absent_queries,"
          "absent_fp,absent_fp_rate,model_fp_rate,mean_url_len,seconds\n",
          f);
}

static void csv_row(FILE *f, const options *opt, uint64_t n, double p, int c, const summary *s,
                    const summary *exact)
{
    const contestant *ct = &contestants[c];
    const result *r = &s->first;
    fprintf(f, "%llu,%.17g,%s,%s,%s,%u,", (unsigned long long)n, p, ct->name,
            ct->kind == SIEVE_SEEN_EXACT        ? "hashset"
            : ct->layout == SIEVE_BLOOM_BLOCKED ? "blocked"
                                                : "classic",
            ct->batch ? "push_batch" : "push", opt->reps);
    if (!s->ok) {
        fprintf(f, ",,,,,,,,,,,,,,,,,,%.3f\n", s->seconds);
        return;
    }
    fprintf(f, "%llu,%llu,%llu,%llu,%.6f,%.0f,%.6f,%llu,%.3f,%.3f,%.3f,",
            (unsigned long long)r->pushed, (unsigned long long)r->enqueued,
            (unsigned long long)r->invalid, (unsigned long long)r->seen_bytes,
            (double)r->seen_bytes / (double)n, s->rss_growth_median,
            s->rss_growth_median / (double)n, (unsigned long long)(r->rss_peak - r->rss_before),
            s->ns_median, s->ns_min, s->ns_max);
    if (c != C_EXACT && exact->ok) {
        int64_t l = (int64_t)(exact->first.enqueued - r->enqueued);
        fprintf(f, "%lld,%.9g,", (long long)l, (double)l / (double)exact->first.enqueued);
    } else if (c == C_EXACT) {
        fputs("0,0,", f);
    } else {
        fputs(",,", f);
    }
    if (r->absent_queries > 0)
        fprintf(f, "%llu,%llu,%.9g,", (unsigned long long)r->absent_queries,
                (unsigned long long)r->absent_hits,
                (double)r->absent_hits / (double)r->absent_queries);
    else
        fputs(",,,", f);
    fprintf(f, "%.9g,%.2f,%.3f\n", r->est_fp_rate, (double)r->url_bytes / (double)r->pushed,
            s->seconds);
}

/* ---- targets ----------------------------------------------------------- */

typedef struct tally {
    unsigned pass, fail, info;
} tally;

static void target_line(tally *t, bool stated, bool pass, uint64_t n, double p, const char *what,
                        const char *measured)
{
    char nb[32];
    const char *verdict = pass ? "PASS" : "FAIL";
    if (stated)
        pass ? t->pass++ : t->fail++;
    else
        t->info++;
    printf("%s %6s %8g  %-40s %-26s %s\n", stated ? "*" : " ", fmt_count(nb, sizeof nb, n), p, what,
           measured, verdict);
}

static void print_targets(const options *opt, summary (*res)[LIST_MAX][NCONTESTANTS])
{
    tally t = {0, 0, 0};
    char m[64];
    printf("\nTargets: ratios from this run. PASS/FAIL is shown for every n and p run; '*'\n"
           "marks where the issue states the target (bytes and FP rate at n=1e8 for p=0.01\n"
           "and 1e-4, size ratio at n >= 1e7 and speed ratio at n=1e8, both for p=0.01 and\n"
           "shown for other p as information); only those count in the verdict below.\n\n");
    printf("  %6s %8s  %-40s %-26s %s\n", "n", "p", "target", "measured", "verdict");
    for (size_t i = 0; i < opt->n_count; i++) {
        uint64_t n = opt->n[i];
        bool at_1e8 = n >= UINT64_C(100000000);
        for (size_t k = 0; k < opt->p_count; k++) {
            double p = opt->p[k];
            const summary *bl = &res[i][k][C_BLOOM], *cl = &res[i][k][C_CLASSIC];
            const summary *ex = &res[i][k][C_EXACT];
            if (!bl->ok)
                continue;
            double bpu = (double)bl->first.seen_bytes / (double)n;
            double limit = same_rate(p, 0.01) ? 1.25 : same_rate(p, 1e-4) ? 2.75 : 0;
            if (limit > 0) {
                char what[64];
                snprintf(what, sizeof what, "bloom seen-set <= %.2f bytes/URL", limit);
                snprintf(m, sizeof m, "%.3f bytes/URL", bpu);
                target_line(&t, at_1e8, bpu <= limit, n, p, what, m);
            }
            if (bl->first.absent_queries > 0) {
                double q = (double)bl->first.absent_queries;
                double fp = (double)bl->first.absent_hits / q;
                /* the binomial 95% half-width: how far sampling alone moves it */
                double half = 1.96 * sqrt(fp * (1 - fp) / q);
                snprintf(m, sizeof m, "%.5g +- %.2g", fp, half);
                target_line(&t, at_1e8 && limit > 0, fp <= p, n, p,
                            "bloom FP rate (absent URLs) <= p", m);
                if (fp > p && fp - half <= p)
                    printf("%-20s(above p by less than its sampling error: rerun with a "
                           "larger --absent)\n",
                           "");
            }
            if (ex->ok) {
                double ratio = (double)ex->first.seen_bytes / (double)bl->first.seen_bytes;
                snprintf(m, sizeof m, "%.1fx", ratio);
                target_line(&t, n >= UINT64_C(10000000) && same_rate(p, 0.01), ratio >= 50, n, p,
                            "exact / bloom seen-set bytes >= 50x", m);
            }
            if (cl->ok && bl->ns_median > 0) {
                double ratio = cl->ns_median / bl->ns_median;
                snprintf(m, sizeof m, "%.2fx (%.1f / %.1f ns)", ratio, cl->ns_median,
                         bl->ns_median);
                target_line(&t, at_1e8 && same_rate(p, 0.01), ratio >= 4, n, p,
                            "classic push / bloom push_batch >= 4x", m);
            }
        }
    }
    if (t.pass + t.fail == 0)
        printf("\nNo target was checked at its stated n (run --n 1e8 for all of them).\n");
    else
        printf("\nTargets at their stated n: %u PASS, %u FAIL.\n", t.pass, t.fail);
}

/* ---- plot -------------------------------------------------------------- */

static bool in_path(const char *prog)
{
    const char *path = getenv("PATH");
    if (path == NULL || *path == '\0')
        path = "/usr/bin:/bin";
    while (*path != '\0') {
        size_t len = strcspn(path, ":");
        char full[4096];
        /* an empty entry means the current directory */
        int w = len == 0 ? snprintf(full, sizeof full, "./%s", prog)
                         : snprintf(full, sizeof full, "%.*s/%s", (int)len, path, prog);
        if (w > 0 && (size_t)w < sizeof full && access(full, X_OK) == 0)
            return true;
        path += len + (path[len] == ':');
    }
    return false;
}

static const char *plot_terminal(const char *file)
{
    size_t len = strlen(file);
    if (len > 4 && strcmp(file + len - 4, ".svg") == 0)
        return "svg size 1100,460 dynamic background rgb 'white' font 'sans,11'";
    if (len > 4 && strcmp(file + len - 4, ".png") == 0)
        return "pngcairo size 1100,460 font 'sans,10'";
    return NULL;
}

/* gnuplot strings in single quotes: a quote is written twice. */
static void gp_quoted(FILE *gp, const char *s)
{
    fputc('\'', gp);
    for (; *s != '\0'; s++) {
        if (*s == '\'')
            fputc('\'', gp);
        fputc(*s, gp);
    }
    fputc('\'', gp);
}

/* One plot command: a line per contestant and p (exact once), filtered out
 * of the CSV; missing points are skipped without breaking a line. */
static void gp_plot(FILE *gp, const options *opt, const char *csv, int column)
{
    const char *sep = "plot ";
    for (int c = 0; c < NCONTESTANTS; c++) {
        for (size_t k = 0; k < opt->p_count; k++) {
            if (c == C_EXACT && k > 0)
                break;
            fputs(sep, gp);
            gp_quoted(gp, csv);
            fprintf(gp,
                    " skip 1 using 1:(strcol(3) eq '%s' && $2 == %.17g ? $%d : NaN) "
                    "with linespoints lw 2 title '%s",
                    contestants[c].name, opt->p[k], column, contestants[c].name);
            if (c != C_EXACT)
                fprintf(gp, " p=%g", opt->p[k]);
            fputc('\'', gp);
            sep = ", \\\n     ";
        }
    }
    fputc('\n', gp);
}

static int plot(const options *opt, const char *csv)
{
    FILE *gp = popen("gnuplot", "w");
    if (gp == NULL) {
        fprintf(stderr, "sieve bench: cannot run gnuplot: %s\n", strerror(errno));
        return EXIT_FAILURE_RUN;
    }
    uint64_t lo = opt->n[0], hi = opt->n[0];
    for (size_t i = 1; i < opt->n_count; i++) {
        lo = opt->n[i] < lo ? opt->n[i] : lo;
        hi = opt->n[i] > hi ? opt->n[i] : hi;
    }
    fprintf(gp, "set terminal %s\nset output ", plot_terminal(opt->plot));
    gp_quoted(gp, opt->plot);
    /* a margin on both sides, and a range even when a single n was run */
    fprintf(gp, "\nset xrange [%g:%g]", (double)lo / 2, (double)hi * 2);
    fputs("\nset datafile separator ','\n"
          "set datafile missing NaN\n"
          "set logscale x\nset grid\n"
          "set xlabel 'URLs pushed (n)'\n"
          "set format x '10^{%T}'\n"
          "set multiplot layout 1,2\n"
          "set logscale y\nset ylabel 'bytes per URL (seen-set)'\n"
          "set title 'seen-set memory'\nset key center right\n",
          gp);
    gp_plot(gp, opt, csv, 11);
    fputs("unset logscale y\nset yrange [0:*]\nset ylabel 'ns per push (median)'\n"
          "set title 'push time'\nset key top left box opaque\n",
          gp);
    gp_plot(gp, opt, csv, 15);
    fputs("unset multiplot\n", gp);
    int st = pclose(gp);
    if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "sieve bench: gnuplot failed to draw %s\n", opt->plot);
        return EXIT_FAILURE_RUN;
    }
    printf("\nPlot written to %s\n", opt->plot);
    return EXIT_OK;
}

/* ---- memory check ------------------------------------------------------ */

/* The most any one child will hold: the exact set at the largest n, or a
 * Bloom filter if larger. 0 (after a message) if a filter cannot be made. */
static uint64_t memory_need(const options *opt, double exact_per_url)
{
    uint64_t need = 0;
    for (size_t i = 0; i < opt->n_count; i++) {
        double exact = (double)opt->n[i] * exact_per_url;
        if (exact > (double)need)
            need = (uint64_t)exact;
        for (size_t k = 0; k < opt->p_count; k++) {
            for (int layout = SIEVE_BLOOM_BLOCKED; layout <= SIEVE_BLOOM_CLASSIC; layout++) {
                uint64_t m;
                unsigned kk;
                int rc =
                    sieve_bloom_plan(opt->n[i], opt->p[k], (sieve_bloom_layout)layout, &m, &kk);
                if (rc != SIEVE_OK) {
                    fprintf(stderr, "sieve bench: no Bloom filter for n=%llu at p=%g: %s\n",
                            (unsigned long long)opt->n[i], opt->p[k], sieve_strerror(rc));
                    return 0;
                }
                if (m / 8 > need)
                    need = m / 8;
            }
        }
    }
    return need + MEM_SLACK;
}

/* Validates --urls against --n and returns the exact set's bytes per URL. */
static int check_url_file(options *opt, double *exact_per_url)
{
    *exact_per_url = MIN_EXACT_PER_URL;
    if (opt->urls == NULL) {
        if (opt->n_count == 0) {
            static const uint64_t defaults[] = {100000, 1000000, 10000000};
            memcpy(opt->n, defaults, sizeof defaults);
            opt->n_count = 3;
        }
        return -1;
    }
    urlgen_file_info info;
    char err[512];
    if (urlgen_scan_file(opt->urls, &info, err, sizeof err) != 0) {
        fprintf(stderr, "sieve bench: %s\n", err);
        return EXIT_USAGE;
    }
    if (info.count == 0) {
        fprintf(stderr, "sieve bench: %s holds no URL\n", opt->urls);
        return EXIT_USAGE;
    }
    if (opt->n_count == 0) {
        opt->n[0] = info.count;
        opt->n_count = 1;
    }
    for (size_t i = 0; i < opt->n_count; i++) {
        if (opt->n[i] > info.count) {
            fprintf(stderr, "sieve bench: --n %llu exceeds the %llu URLs in %s\n",
                    (unsigned long long)opt->n[i], (unsigned long long)info.count, opt->urls);
            return EXIT_USAGE;
        }
    }
    double per_url = (double)info.bytes / (double)info.count + EXACT_KEY_OVERHEAD;
    if (per_url > *exact_per_url)
        *exact_per_url = per_url;
    return -1;
}

static int check_memory(const options *opt, double exact_per_url, uint64_t *avail)
{
    uint64_t need = memory_need(opt, exact_per_url);
    if (need == 0)
        return EXIT_USAGE;
    *avail = 0;
    if (mem_available(avail) != 0) {
        fprintf(stderr, "sieve bench: cannot read the available memory: %s\n", strerror(errno));
        return opt->force ? -1 : EXIT_FAILURE_RUN;
    }
    if (need <= *avail || opt->force)
        return -1;
    char b1[32], b2[32];
    fprintf(stderr,
            "sieve bench: this run needs about %s (the exact set at ~%.0f bytes/URL, or the "
            "largest Bloom filter) but only %s is available.\n"
            "Use a smaller --n, or --force to run anyway.\n",
            fmt_bytes(b1, sizeof b1, (double)need), exact_per_url,
            fmt_bytes(b2, sizeof b2, (double)*avail));
    return EXIT_USAGE;
}

/* ---- main -------------------------------------------------------------- */

static int open_csv(const options *opt, FILE **csv, char *tmp_path, size_t cap)
{
    *csv = NULL;
    tmp_path[0] = '\0';
    if (opt->csv != NULL) {
        *csv = fopen(opt->csv, "w");
        if (*csv == NULL) {
            fprintf(stderr, "sieve bench: cannot write %s: %s\n", opt->csv, strerror(errno));
            return EXIT_FAILURE_RUN;
        }
    } else if (opt->plot != NULL) {
        const char *dir = getenv("TMPDIR");
        snprintf(tmp_path, cap, "%s/sieve-bench-XXXXXX", dir != NULL && *dir ? dir : "/tmp");
        int fd = mkstemp(tmp_path);
        if (fd < 0 || (*csv = fdopen(fd, "w")) == NULL) {
            fprintf(stderr, "sieve bench: cannot create a temporary file: %s\n", strerror(errno));
            if (fd >= 0)
                close(fd);
            tmp_path[0] = '\0';
            return EXIT_FAILURE_RUN;
        }
    }
    if (*csv != NULL)
        csv_header(*csv);
    return -1;
}

static int check_plot(const options *opt)
{
    if (opt->plot == NULL)
        return -1;
    if (plot_terminal(opt->plot) == NULL) {
        fprintf(stderr, "sieve bench: --plot %s: the file name must end in .svg or .png\n",
                opt->plot);
        return EXIT_USAGE;
    }
    if (!in_path("gnuplot")) {
        fprintf(stderr, "sieve bench: --plot needs gnuplot, which is not installed (not found "
                        "in PATH); install it or drop --plot\n");
        return EXIT_FAILURE_RUN;
    }
    return -1;
}

int cmd_bench(int argc, char **argv)
{
    options opt;
    double exact_per_url;
    uint64_t avail;
    int rc = parse_args(argc, argv, &opt);
    if (rc < 0)
        rc = check_url_file(&opt, &exact_per_url);
    if (rc < 0)
        rc = check_plot(&opt);
    if (rc < 0)
        rc = check_memory(&opt, exact_per_url, &avail);
    if (rc >= 0)
        return rc;

    FILE *csv;
    char tmp_csv[4096];
    rc = open_csv(&opt, &csv, tmp_csv, sizeof tmp_csv);
    if (rc >= 0)
        return rc;
    summary(*res)[LIST_MAX][NCONTESTANTS] = calloc(LIST_MAX, sizeof *res);
    if (res == NULL) {
        fprintf(stderr, "sieve bench: out of memory\n");
        return EXIT_FAILURE_RUN;
    }

    double start = now_seconds();
    bool failed = false;
    print_preamble(&opt, argc, argv, avail);
    for (size_t i = 0; i < opt.n_count; i++) {
        uint64_t n = opt.n[i];
        summary exact;
        run_contestant(&opt, C_EXACT, n, opt.p[0], &exact);
        failed |= !exact.ok;
        for (size_t k = 0; k < opt.p_count; k++) {
            res[i][k][C_EXACT] = exact;
            for (int c = C_BLOOM; c <= C_CLASSIC; c++) {
                run_contestant(&opt, c, n, opt.p[k], &res[i][k][c]);
                failed |= !res[i][k][c].ok;
            }
            for (int c = 0; c < NCONTESTANTS; c++) {
                print_row(n, opt.p[k], c, &res[i][k][c], &exact);
                if (csv != NULL)
                    csv_row(csv, &opt, n, opt.p[k], c, &res[i][k][c], &exact);
            }
            fflush(stdout);
            if (csv != NULL)
                fflush(csv);
        }
    }
    print_targets(&opt, res);

    char b1[32];
    double load[1] = {-1};
    getloadavg(load, 1);
    printf("\nMean URL length %.1f bytes (%llu to %llu); finished in %s, load %.2f.\n",
           res[0][0][C_EXACT].ok ? (double)res[0][0][C_EXACT].first.url_bytes /
                                       (double)res[0][0][C_EXACT].first.pushed
                                 : 0.0,
           (unsigned long long)res[0][0][C_EXACT].first.url_min,
           (unsigned long long)res[0][0][C_EXACT].first.url_max,
           fmt_duration(b1, sizeof b1, now_seconds() - start), load[0]);
    if (csv != NULL && (ferror(csv) || fclose(csv) != 0)) {
        fprintf(stderr, "sieve bench: writing %s failed\n", opt.csv ? opt.csv : tmp_csv);
        failed = true;
    }
    if (opt.plot != NULL && plot(&opt, opt.csv != NULL ? opt.csv : tmp_csv) != EXIT_OK)
        failed = true;
    if (tmp_csv[0] != '\0')
        unlink(tmp_csv);
    free(res);
    return failed ? EXIT_FAILURE_RUN : EXIT_OK;
}
