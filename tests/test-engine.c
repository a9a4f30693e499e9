/* test-engine.c - the crawl engine's API (sieve/crawl.h) against sieve-web,
 * the bundled synthetic web, served on free loopback ports for each test.
 *
 * sieve-web prints with --truth the exact set of URLs a correct crawl from
 * "/" fetches under the default trap guards. The tests crawl it through the
 * library, record what the callbacks receive, and compare that with the
 * truth, with the stats, with sieve-web's access log and, for bodies, with
 * what an independent libcurl GET of the same URL returns. Callbacks only
 * record; every check runs on the test's own thread once run() is over. */
#include <check.h>
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sieve/crawl.h>
#include <sieve/status.h>

#include "harness.h"
#include "via-check.h"

enum { PAGES = 300, MAX_WEBS = 2 };

/* A hostile web (slow, endless, huge, gzip, malformed pages...), with the
 * slow page dripping fast enough for the low-speed limit below to cut it
 * within seconds; and a plain web of pages, redirects and files only. */
static const char *const hostile_web[] = {"--pages", "300", "--drip-ms", "300", NULL};
static const char *const plain_web[] = {"--pages", "300", "--no-hostile", NULL};
/* Added to a web: its pages, files and robots.txt in Content-Encoding gzip. */
static const char *const gzip_web[] = {"--gzip", NULL};

/* ---- the webs a test starts ---- */

typedef struct web {
    pid_t pid;
    unsigned port;
    char base[64]; /* "http://127.0.0.1:PORT/" */
    char log[160]; /* its access log */
    char **truth;  /* sorted ground truth */
    size_t truth_n;
    char **edges; /* sorted graph (via-check.h) */
    size_t edges_n;
} web;

static char tmpdir[64];
static web webs[MAX_WEBS];
static size_t n_webs;

static void setup(void)
{
    strcpy(tmpdir, "/tmp/sieve-engine-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
    n_webs = 0;
}

static void teardown(void)
{
    for (size_t i = 0; i < n_webs; i++) {
        harness_web_stop(webs[i].pid);
        harness_lines_free(webs[i].truth);
        harness_lines_free(webs[i].edges);
    }
    n_webs = 0;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
}

/* Starts a sieve-web on 127.0.0.1 with the options extra (and extra2, may
 * be NULL) and an access log; reads its truth and its graph. */
static web *web_start2(const char *const *extra, const char *const *extra2)
{
    ck_assert_uint_lt(n_webs, MAX_WEBS);
    web *w = &webs[n_webs];
    char name[16];
    snprintf(name, sizeof name, "web%zu", n_webs);
    snprintf(w->log, sizeof w->log, "%s/%s-access.log", tmpdir, name);
    const char *argv[32];
    size_t n = 0;
    for (; extra != NULL && *extra != NULL; extra++)
        argv[n++] = *extra;
    for (; extra2 != NULL && *extra2 != NULL; extra2++)
        argv[n++] = *extra2;
    argv[n++] = "--access-log";
    argv[n++] = w->log;
    argv[n] = NULL;
    w->pid = harness_web_start_named(tmpdir, name, "127.0.0.1", argv, &w->port);
    n_webs++;
    snprintf(w->base, sizeof w->base, "http://127.0.0.1:%u/", w->port);
    w->truth = harness_web_truth(tmpdir, "127.0.0.1", w->port, argv, &w->truth_n);
    ck_assert_uint_gt(w->truth_n, 0);
    w->edges = harness_web_edges(tmpdir, "127.0.0.1", w->port, argv, &w->edges_n);
    return w;
}

static web *web_start(const char *const *extra)
{
    return web_start2(extra, NULL);
}

/* The request targets of w's access log, one a line, read once the server
 * has stopped (a line is written when its request ends). */
static char *web_stop_and_read_log(web *w)
{
    harness_web_stop(w->pid);
    w->pid = 0;
    FILE *fp = fopen(w->log, "r");
    if (fp == NULL)
        return strdup("");
    fclose(fp);
    return harness_slurp(w->log);
}

/* Whether a request for a target starting with prefix is in the log. */
static bool log_has_target(const char *log, const char *prefix)
{
    char *copy = strdup(log);
    bool found = false;
    for (char *save = NULL, *line = strtok_r(copy, "\n", &save); line && !found;
         line = strtok_r(NULL, "\n", &save)) {
        char target[4096];
        if (sscanf(line, "%*s %*s %*s %4095s", target) == 1)
            found = strncmp(target, prefix, strlen(prefix)) == 0;
    }
    free(copy);
    return found;
}

/* ---- what the callbacks see ---- */

typedef struct rec {
    char *url, *final_url, *content_type, *error;
    char *referrer, *first_url;
    long status;
    uint64_t bytes, links_found, links_new;
    uint32_t depth;
    sieve_fetch_kind kind;
    uint64_t wire_bytes;
    sieve_crawl_outcome outcome;
} rec;

typedef struct body {
    char *url;
    char *data;
    size_t len, cap;
    long status;
    pthread_t thread;
    bool bad_offset, bad_thread, bad_status;
} body;

typedef enum filter_mode {
    FILTER_NONE,
    FILTER_DROP_P1, /* drop every link containing "/p/1" */
    FILTER_REWRITE, /* /missing/ID.html -> a spelling of /p/ID.html; *.png -> off-site */
} filter_mode;

typedef struct ctx {
    sieve_crawler *c;
    const web *w;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    rec *r;
    size_t n, cap;
    atomic_bool returned; /* run() has returned */
    atomic_size_t late;   /* records delivered after that */
    size_t stop_at;       /* on_record returns stop_status at this record; 0: never */
    int stop_status;

    bool keep_bodies;
    const char *refuse_body; /* on_body stops this URL's transfer */
    atomic_size_t refused_chunks;
    body *b;
    size_t nb, capb;

    filter_mode filter;
    atomic_size_t links, bad_links, drops, rewrites, off_site_rewrites;
} ctx;

static void ctx_init(ctx *x, const web *w)
{
    memset(x, 0, sizeof *x);
    x->w = w;
    pthread_mutex_init(&x->mu, NULL);
    pthread_cond_init(&x->cv, NULL);
}

static void ctx_free(ctx *x)
{
    for (size_t i = 0; i < x->n; i++) {
        free(x->r[i].url);
        free(x->r[i].final_url);
        free(x->r[i].content_type);
        free(x->r[i].error);
        free(x->r[i].referrer);
        free(x->r[i].first_url);
    }
    free(x->r);
    for (size_t i = 0; i < x->nb; i++) {
        free(x->b[i].url);
        free(x->b[i].data);
    }
    free(x->b);
    sieve_crawler_free(x->c);
    pthread_mutex_destroy(&x->mu);
    pthread_cond_destroy(&x->cv);
}

static char *dup_or_null(const char *s)
{
    return s != NULL ? strdup(s) : NULL;
}

static int on_record(void *ud, const sieve_crawl_record *r)
{
    ctx *x = ud;
    if (atomic_load(&x->returned))
        atomic_fetch_add(&x->late, 1);
    pthread_mutex_lock(&x->mu);
    if (x->n == x->cap) {
        x->cap = x->cap ? 2 * x->cap : 256;
        x->r = realloc(x->r, x->cap * sizeof *x->r);
    }
    x->r[x->n] = (rec){.url = dup_or_null(r->url),
                       .final_url = dup_or_null(r->final_url),
                       .content_type = dup_or_null(r->content_type),
                       .error = dup_or_null(r->error),
                       .referrer = dup_or_null(r->referrer),
                       .first_url = dup_or_null(r->first_url),
                       .status = r->status,
                       .bytes = r->bytes,
                       .links_found = r->links_found,
                       .links_new = r->links_new,
                       .depth = r->depth,
                       .kind = r->kind,
                       .wire_bytes = r->wire_bytes,
                       .outcome = r->outcome};
    size_t n = ++x->n;
    pthread_cond_broadcast(&x->cv);
    pthread_mutex_unlock(&x->mu);
    return x->stop_at != 0 && n == x->stop_at ? x->stop_status : SIEVE_OK;
}

static int on_body(void *ud, const sieve_crawl_body *b)
{
    ctx *x = ud;
    if (x->refuse_body != NULL && strcmp(b->url, x->refuse_body) == 0) {
        atomic_fetch_add(&x->refused_chunks, 1);
        return 1;
    }
    if (!x->keep_bodies)
        return SIEVE_OK;
    pthread_mutex_lock(&x->mu);
    body *e = NULL;
    for (size_t i = x->nb; i-- > 0 && e == NULL;)
        if (strcmp(x->b[i].url, b->url) == 0)
            e = &x->b[i];
    if (e == NULL) {
        if (x->nb == x->capb) {
            x->capb = x->capb ? 2 * x->capb : 256;
            x->b = realloc(x->b, x->capb * sizeof *x->b);
        }
        e = &x->b[x->nb++];
        *e = (body){.url = strdup(b->url), .status = b->status, .thread = pthread_self()};
    }
    if (b->offset == 0 && e->len > 0) {
        /* a URL tried again (a timeout, a 5xx) streams its body anew, on
         * whichever worker took it */
        e->len = 0;
        e->thread = pthread_self();
        e->status = b->status;
    }
    if (b->offset != e->len)
        e->bad_offset = true;
    if (!pthread_equal(e->thread, pthread_self()))
        e->bad_thread = true;
    if (b->status < 200 || b->status > 299 || b->status != e->status)
        e->bad_status = true;
    if (e->len + b->len > e->cap) {
        e->cap = (e->len + b->len) * 2;
        e->data = realloc(e->data, e->cap);
    }
    if (b->len > 0)
        memcpy(e->data + e->len, b->data, b->len);
    e->len += b->len;
    pthread_mutex_unlock(&x->mu);
    return SIEVE_OK;
}

/* The page id in "/missing/ID.html" or "/files/ID.png" of url, or -1. */
static long id_after(const char *url, const char *prefix, const char *suffix)
{
    const char *p = strstr(url, prefix);
    if (p == NULL)
        return -1;
    char *end;
    long id = strtol(p + strlen(prefix), &end, 10);
    return end != p + strlen(prefix) && strcmp(end, suffix) == 0 ? id : -1;
}

static sieve_link_verdict on_link(void *ud, const sieve_crawl_link *l, char *buf, size_t cap)
{
    ctx *x = ud;
    atomic_fetch_add(&x->links, 1);
    const char *base = x->w->base;
    if (l->url == NULL || l->len != strlen(l->url) || strncmp(l->url, base, strlen(base)) != 0 ||
        l->page == NULL || strncmp(l->page, base, strlen(base)) != 0)
        atomic_fetch_add(&x->bad_links, 1);
    if (l->url == NULL)
        return SIEVE_LINK_KEEP;
    switch (x->filter) {
    case FILTER_NONE:
        break;
    case FILTER_DROP_P1:
        if (strstr(l->url, "/p/1") != NULL) {
            atomic_fetch_add(&x->drops, 1);
            return SIEVE_LINK_DROP;
        }
        break;
    case FILTER_REWRITE: {
        long id;
        int n = -1;
        /* an existing page, spelled so that only canonicalization makes it
         * the page's canonical URL */
        if ((id = id_after(l->url, "/missing/", ".html")) >= 0)
            n = snprintf(buf, cap, "HTTP://127.0.0.1:%u/p/./x/../%ld.html", x->w->port, id);
        /* another origin: out of the host scope */
        else if ((id = id_after(l->url, "/files/", ".png")) >= 0) {
            n = snprintf(buf, cap, "http://127.0.0.1:1/files/%ld.png", id);
            atomic_fetch_add(&x->off_site_rewrites, 1);
        }
        if (n > 0 && (size_t)n < cap) {
            atomic_fetch_add(&x->rewrites, 1);
            return SIEVE_LINK_REWRITE;
        }
        break;
    }
    }
    return SIEVE_LINK_KEEP;
}

/* ---- crawling ---- */

static void log_to_stderr(void *ud, sieve_log_level level, const char *msg)
{
    (void)ud;
    fprintf(stderr, "engine: %d: %s\n", (int)level, msg);
}

/* Options for a web of our own on loopback: no delay, many connections,
 * test-friendly timeouts, an exact seen-set. */
static void test_options(sieve_crawl_options *o)
{
    sieve_crawl_options_init(o);
    o->workers = 2;
    o->concurrency = 8;
    o->host_connections = 16;
    o->delay_s = 0;
    o->timeout_s = 30;
    o->low_speed_bytes = 1000;
    o->low_speed_time_s = 2;
    o->max_page_bytes = 8000000; /* above the 5.7 MB page of 100,000 links */
    o->retries = 1;              /* the hostile pages that fail are tried again, once */
    o->retry_wait_s = 0.01;      /* and soon */
    o->retry_max_wait_s = 0.1;
    o->seen.kind = SIEVE_SEEN_EXACT;
    o->logger = (sieve_logger){.fn = log_to_stderr, .level = SIEVE_LOG_WARN};
}

/* Creates x's crawler from o with all three callbacks and w's "/" as seed. */
static void crawler_for(ctx *x, const sieve_crawl_options *o)
{
    ck_assert_int_eq(sieve_crawler_new(&x->c, o), SIEVE_OK);
    sieve_crawl_callbacks cb = {.on_record = on_record, .on_body = on_body, .on_link = on_link};
    sieve_crawler_set_callbacks(x->c, &cb, x);
    ck_assert_int_eq(sieve_crawler_add_seed(x->c, x->w->base, SIZE_MAX), SIEVE_OK);
}

static int run(ctx *x)
{
    int rc = sieve_crawler_run(x->c);
    pthread_mutex_lock(&x->mu);
    atomic_store(&x->returned, true);
    pthread_cond_broadcast(&x->cv);
    pthread_mutex_unlock(&x->mu);
    return rc;
}

/* run() on a thread of its own, so the test can act while it runs. */
typedef struct runner {
    ctx *x;
    pthread_t thread;
    int rc;
    atomic_bool done;
} runner;

static void *runner_main(void *arg)
{
    runner *r = arg;
    r->rc = run(r->x);
    atomic_store(&r->done, true);
    return NULL;
}

static void runner_start(runner *r, ctx *x)
{
    r->x = x;
    atomic_store(&r->done, false);
    ck_assert_int_eq(pthread_create(&r->thread, NULL, runner_main, r), 0);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Waits up to limit_s for run() to return: whether it did. */
static bool runner_wait(runner *r, double limit_s)
{
    double end = now_s() + limit_s;
    while (!atomic_load(&r->done) && now_s() < end)
        usleep(10000);
    if (!atomic_load(&r->done))
        return false;
    pthread_join(r->thread, NULL);
    return true;
}

/* Waits up to limit_s until the stats' counter at offset (in_flight,
 * held) reaches n. */
static bool wait_stat(sieve_crawler *c, size_t offset, uint64_t n, double limit_s)
{
    double end = now_s() + limit_s;
    sieve_crawl_stats st;
    do {
        sieve_crawler_stats_get(c, &st);
        uint64_t v;
        memcpy(&v, (const char *)&st + offset, sizeof v);
        if (v >= n)
            return true;
        usleep(5000);
    } while (now_s() < end);
    return false;
}

static bool wait_in_flight(sieve_crawler *c, uint64_t n, double limit_s)
{
    return wait_stat(c, offsetof(sieve_crawl_stats, in_flight), n, limit_s);
}

static bool wait_held(sieve_crawler *c, uint64_t n, double limit_s)
{
    return wait_stat(c, offsetof(sieve_crawl_stats, held), n, limit_s);
}

/* After run() returned: no record may come any more. */
static void assert_no_late_records(ctx *x)
{
    usleep(200 * 1000);
    ck_assert_msg(atomic_load(&x->late) == 0, "%zu records delivered after run() returned",
                  (size_t)atomic_load(&x->late));
}

/* ---- URL sets ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The records' URLs, sorted (pointers into x). */
static const char **sorted_urls(const ctx *x)
{
    const char **u = malloc((x->n + 1) * sizeof *u);
    for (size_t i = 0; i < x->n; i++)
        u[i] = x->r[i].url != NULL ? x->r[i].url : "(null)";
    qsort(u, x->n, sizeof *u, cmp_str);
    return u;
}

/* Asserts that got (n, sorted) holds each URL of want (sorted) exactly
 * once and nothing else; prints the first differences. */
static void assert_same_sets(char *const *want, size_t want_n, const char *const *got, size_t n)
{
    size_t i = 0, j = 0, shown = 0, twice = 0;
    while (i < want_n || j < n) {
        int c = i == want_n ? 1 : j == n ? -1 : strcmp(want[i], got[j]);
        if (c == 0) {
            if (j + 1 < n && strcmp(got[j], got[j + 1]) == 0 && twice++ < 10)
                fprintf(stderr, "delivered twice: %s\n", got[j]);
            i++, j++;
            while (j < n && strcmp(got[j], got[j - 1]) == 0)
                j++;
            continue;
        }
        if (shown++ < 10)
            fprintf(stderr, "%s %s\n", c < 0 ? "missing:" : "extra:  ", c < 0 ? want[i] : got[j]);
        c < 0 ? i++ : j++;
    }
    ck_assert_msg(shown == 0, "%zu differences between the records and the ground truth", shown);
    ck_assert_msg(twice == 0, "%zu URLs delivered more than once", twice);
    ck_assert_uint_eq(want_n, n);
}

/* Asserts that the records' URLs are distinct and all in w's truth. */
static void assert_subset_of_truth(const ctx *x, const web *w)
{
    const char **got = sorted_urls(x);
    for (size_t j = 0; j < x->n; j++) {
        ck_assert_msg(j == 0 || strcmp(got[j], got[j - 1]) != 0, "delivered twice: %s", got[j]);
        ck_assert_msg(bsearch(&got[j], w->truth, w->truth_n, sizeof *w->truth, cmp_str) != NULL,
                      "not in the truth: %s", got[j]);
    }
    free(got);
}

/* Whether url is w's base followed by a path starting with prefix. */
static bool is_path(const web *w, const char *url, const char *prefix)
{
    size_t n = strlen(w->base);
    return strncmp(url, w->base, n) == 0 && strncmp(url + n - 1, prefix, strlen(prefix)) == 0;
}

/* Every record is whole: a canonical URL on the web, a final URL, and
 * either an error or a status, with what a status says. */
static void assert_records_complete(const ctx *x, const web *w)
{
    for (size_t i = 0; i < x->n; i++) {
        const rec *r = &x->r[i];
        ck_assert_ptr_nonnull(r->url);
        ck_assert_msg(is_path(w, r->url, "/"), "record of %s", r->url);
        ck_assert_msg(r->final_url != NULL, "%s: no final_url", r->url);
        ck_assert_msg(r->kind == SIEVE_FETCH_PAGE, "%s: kind %d", r->url, (int)r->kind);
        ck_assert_msg(r->error != NULL || r->status >= 100, "%s: no error and status %ld", r->url,
                      r->status);
        if (is_path(w, r->url, "/p/") && r->error == NULL) {
            ck_assert_msg(r->status == 200, "%s: status %ld", r->url, r->status);
            ck_assert_msg(r->bytes > 0, "%s: 0 bytes", r->url);
            ck_assert_msg(r->content_type != NULL && strncmp(r->content_type, "text/html", 9) == 0,
                          "%s: content type %s", r->url, r->content_type);
            ck_assert_msg(r->links_found >= 5, "%s: %llu links", r->url,
                          (unsigned long long)r->links_found);
            ck_assert_msg(strcmp(r->final_url, r->url) == 0, "%s: final_url %s", r->url,
                          r->final_url);
        }
    }
}

/* Every record names where its URL came from as w's graph says it may
 * (via-check.h): the seed nothing, every other URL a page linking to it. */
static void assert_vias(const ctx *x, const web *w)
{
    const char *seeds[] = {w->base, NULL};
    size_t with_referrer = 0;
    for (size_t i = 0; i < x->n; i++) {
        const rec *r = &x->r[i];
        const char *bad = via_check(w->edges, w->edges_n, seeds, r->url, r->referrer, r->first_url);
        ck_assert_msg(bad == NULL, "%s", bad);
        with_referrer += r->referrer != NULL;
    }
    ck_assert_uint_eq(with_referrer, x->n - 1);
}

/* ---- seeds in, records out ---- */

/* A crawl of the hostile web delivers exactly its truth, each URL once,
 * pages with 200, redirects naming their targets; the stats agree with the
 * records. _i = 0 obeys robots.txt, 1 ignores it, 2 obeys it on a web that
 * sends everything it can gzipped, which the engine decodes itself. */
START_TEST(crawl_delivers_exactly_the_truth)
{
    web *w = web_start2(hostile_web, _i == 2 ? gzip_web : NULL);
    sieve_crawl_options o;
    test_options(&o);
    o.ignore_robots = _i == 1;
    ctx x;
    ctx_init(&x, w);
    crawler_for(&x, &o);
    ck_assert_int_eq(run(&x), SIEVE_OK);
    assert_no_late_records(&x);

    const char **got = sorted_urls(&x);
    assert_same_sets(w->truth, w->truth_n, got, x.n);
    free(got);
    assert_records_complete(&x, w);
    assert_vias(&x, w);

    size_t pages = 0, errors = 0;
    uint64_t bytes = 0, links_new = 0;
    for (size_t i = 0; i < x.n; i++) {
        const rec *r = &x.r[i];
        errors += r->error != NULL;
        bytes += r->bytes;
        links_new += r->links_new;
        if (is_path(w, r->url, "/p/")) {
            pages++;
            ck_assert_msg(r->error == NULL, "%s: %s", r->url, r->error);
            ck_assert_msg(r->outcome == SIEVE_OUTCOME_OK, "%s: outcome %s", r->url,
                          sieve_crawl_outcome_name(r->outcome));
            /* gzipped on the wire, or the same bytes */
            if (_i == 2)
                ck_assert_msg(r->wire_bytes < r->bytes, "%s: %llu bytes on the wire, %llu decoded",
                              r->url, (unsigned long long)r->wire_bytes,
                              (unsigned long long)r->bytes);
            else
                ck_assert_uint_eq(r->wire_bytes, r->bytes);
        }
        if (r->error == NULL)
            ck_assert_msg(r->outcome == (r->status >= 500   ? SIEVE_OUTCOME_HTTP_5XX
                                         : r->status >= 400 ? SIEVE_OUTCOME_HTTP_4XX
                                                            : SIEVE_OUTCOME_OK),
                          "%s: status %ld, outcome %s", r->url, r->status,
                          sieve_crawl_outcome_name(r->outcome));
        else
            ck_assert_msg(r->outcome != SIEVE_OUTCOME_OK, "%s: %s, and outcome ok", r->url,
                          r->error);
        if (is_path(w, r->url, "/missing/"))
            ck_assert_msg(r->status == 404 && r->error == NULL, "%s: %ld %s", r->url, r->status,
                          r->error);
        long id = id_after(r->url, "/r/", "");
        if (id >= 0) {
            char target[128];
            snprintf(target, sizeof target, "%sp/%ld.html", w->base, id);
            ck_assert_msg(r->status == 301, "%s: status %ld", r->url, r->status);
            ck_assert_msg(strcmp(r->final_url, target) == 0, "%s: final_url %s", r->url,
                          r->final_url);
        }
        if (is_path(w, r->url, "/hostile/slow.html") || is_path(w, r->url, "/hostile/endless.html"))
            ck_assert_msg(r->error != NULL, "%s: no error", r->url);
        if (is_path(w, r->url, "/hostile/endless.html"))
            ck_assert_uint_le(r->bytes, o.max_page_bytes);
    }
    ck_assert_uint_eq(pages, PAGES);

    sieve_crawl_stats st;
    sieve_crawler_stats_get(x.c, &st);
    ck_assert_uint_eq(st.fetched, x.n);
    ck_assert_uint_eq(st.errors, errors);
    ck_assert_uint_eq(st.started, st.fetched);
    ck_assert_uint_eq(st.aborted, 0);
    ck_assert_uint_eq(st.in_flight, 0);
    ck_assert_uint_ge(st.bytes, bytes);
    /* every URL but the seed was queued as a new link, and fetched */
    ck_assert_uint_eq(st.links_new + 1, x.n);
    ck_assert_uint_eq(links_new + 1, x.n);
    ck_assert_uint_ge(st.links, st.links_new);
    ck_assert_uint_eq(st.robots_fetched, _i == 1 ? 0 : 1);
    ck_assert_uint_eq(st.robots_denied, 0);
    ck_assert_uint_eq(st.filtered, 0);
    ck_assert(!st.stopped);
    ck_assert(!st.page_limit_hit);
    ck_assert_uint_eq(atomic_load(&x.bad_links), 0);
    ck_assert_uint_ge(atomic_load(&x.links), st.links_new);

    char *log = web_stop_and_read_log(w);
    ck_assert_int_eq(log_has_target(log, "/robots.txt"), _i != 1);
    free(log);
    ctx_free(&x);
}
END_TEST

/* robots.txt kept 1 ms only, so it is fetched again and again: a page
 * popped then waits in its slot while robots.txt is fetched, and the
 * host's others go back to the frontier meanwhile. Each keeps where it
 * came from through both. How often it is fetched depends on how long
 * the crawl's 801 pages take: 25 to 40 times here, 56 under ASan. Kept
 * 10 ms, it was 3 to 10, too close to the bound on a fast machine. */
START_TEST(referrers_survive_waiting_for_robots)
{
    web *w = web_start(plain_web);
    sieve_crawl_options o;
    test_options(&o);
    o.robots_expiry_s = 0.001;
    ctx x;
    ctx_init(&x, w);
    crawler_for(&x, &o);
    ck_assert_int_eq(run(&x), SIEVE_OK);
    const char **got = sorted_urls(&x);
    assert_same_sets(w->truth, w->truth_n, got, x.n);
    free(got);
    assert_vias(&x, w);
    sieve_crawl_stats st;
    sieve_crawler_stats_get(x.c, &st);
    ck_assert_uint_gt(st.robots_fetched, 3);
    ctx_free(&x);
}
END_TEST

/* robots.txt that expires at once, and a host delay: by a page's turn
 * after its host's robots.txt came, the rules have expired. The page must
 * still go, under those rules, instead of fetching robots.txt again for
 * ever; each page then costs one robots.txt at most. */
START_TEST(robots_txt_that_expires_at_once_lets_pages_through)
{
    web *w = web_start(plain_web);
    sieve_crawl_options o;
    test_options(&o);
    o.robots_expiry_s = 0;
    o.delay_s = 0.002;
    ctx x;
    ctx_init(&x, w);
    crawler_for(&x, &o);
    ck_assert_int_eq(run(&x), SIEVE_OK);
    const char **got = sorted_urls(&x);
    assert_same_sets(w->truth, w->truth_n, got, x.n);
    free(got);
    sieve_crawl_stats st;
    sieve_crawler_stats_get(x.c, &st);
    ck_assert_uint_le(st.robots_fetched, st.fetched + 1);
    ctx_free(&x);
}
END_TEST

START_TEST(max_pages_ends_the_crawl)
{
    web *w = web_start(plain_web);
    sieve_crawl_options o;
    test_options(&o);
    o.max_pages = 25;
    ctx x;
    ctx_init(&x, w);
    crawler_for(&x, &o);
    ck_assert_int_eq(run(&x), SIEVE_OK);
    assert_no_late_records(&x);
    ck_assert_uint_eq(x.n, 25);
    assert_subset_of_truth(&x, w);
    assert_records_complete(&x, w);
    sieve_crawl_stats st;
    sieve_crawler_stats_get(x.c, &st);
    ck_assert(st.page_limit_hit);
    ck_assert(!st.stopped);
    ck_assert_uint_eq(st.fetched, 25);
    ctx_free(&x);
}
END_TEST

/* ---- stopping ---- */

/* Calls stop() once the crawl has delivered stop_after records. */
typedef struct stopper {
    ctx *x;
    size_t stop_after;
    pthread_t thread;
} stopper;

static void *stopper_main(void *arg)
{
    stopper *s = arg;
    pthread_mutex_lock(&s->x->mu);
    while (s->x->n < s->stop_after && !atomic_load(&s->x->returned))
        pthread_cond_wait(&s->x->cv, &s->x->mu);
    pthread_mutex_unlock(&s->x->mu);
    sieve_crawler_stop(s->x->c);
    return NULL;
}

/* Another thread stops the crawl after 20 records: run() says so, the
 * transfers in flight end with whole records within the grace, and none
 * comes after run(). */
START_TEST(stop_from_another_thread)
{
    /* every HTML page takes 50 ms: the crawl lasts seconds */
    const char *const slow[] = {"--delay-ms", "50", NULL};
    web *w = web_start2(plain_web, slow);
    sieve_crawl_options o;
    test_options(&o);
    o.concurrency = 2;
    o.host_connections = 4;
    ctx x;
    ctx_init(&x, w);
    crawler_for(&x, &o);
    stopper s = {.x = &x, .stop_after = 20};
    ck_assert_int_eq(pthread_create(&s.thread, NULL, stopper_main, &s), 0);
    int rc = run(&x);
    pthread_join(s.thread, NULL);
    ck_assert_int_eq(rc, SIEVE_ECLOSED);
    assert_no_late_records(&x);
    ck_assert_uint_ge(x.n, 20);
    ck_assert_uint_lt(x.n, w->truth_n);
    assert_subset_of_truth(&x, w);
    assert_records_complete(&x, w);
    for (size_t i = 0; i < x.n; i++)
        ck_assert_msg(x.r[i].error == NULL, "%s: %s", x.r[i].url, x.r[i].error);
    sieve_crawl_stats st;
    sieve_crawler_stats_get(x.c, &st);
    ck_assert(st.stopped);
    ck_assert_uint_eq(st.fetched, x.n);
    ck_assert_uint_eq(st.in_flight, 0);
    /* 50 ms pages and a 5 s grace: every transfer begun ended with a record */
    ck_assert_uint_eq(st.aborted, 0);
    ck_assert_uint_eq(st.started, st.fetched);
    ctx_free(&x);
}
END_TEST

START_TEST(stop_before_run_fetches_nothing)
{
    web *w = web_start(plain_web);
    sieve_crawl_options o;
    test_options(&o);
    ctx x;
    ctx_init(&x, w);
    crawler_for(&x, &o);
    sieve_crawler_stop(x.c);
    ck_assert_int_eq(run(&x), SIEVE_ECLOSED);
    assert_no_late_records(&x);
    ck_assert_uint_eq(x.n, 0);
    sieve_crawl_stats st;
    sieve_crawler_stats_get(x.c, &st);
    ck_assert(st.stopped);
    ck_assert_uint_eq(st.started, 0);
    ck_assert_uint_eq(st.fetched, 0);
    ck_assert_uint_eq(st.in_flight, 0);
    char *log = web_stop_and_read_log(w);
    ck_assert_msg(log[0] == '\0', "requests after stop(): %s", log);
    free(log);
    ctx_free(&x);
}
END_TEST

enum { HANGING = 5 };

/* A crawler whose HANGING seeds all hang: pages held 60 s before their
 * answer, and a page dripping a byte a second; low-speed and timeout
 * limits far away. Waits until all are in flight. */
static void start_hanging_crawl(ctx *x, runner *r, double grace_s)
{
    const char *const hang[] = {"--pages", "50", "--delay-ms", "60000", "--drip-ms", "1000", NULL};
    web *w = web_start(hang);
    sieve_crawl_options o;
    test_options(&o);
    o.ignore_robots = true;
    o.timeout_s = 300;
    o.low_speed_bytes = 1;
    o.low_speed_time_s = 300;
    o.stop_grace_s = grace_s;
    ctx_init(x, w);
    crawler_for(x, &o);
    const char *paths[HANGING - 1] = {"p/0.html", "p/1.html", "p/2.html", "hostile/slow.html"};
    for (size_t i = 0; i < HANGING - 1; i++) {
        char url[128];
        snprintf(url, sizeof url, "%s%s", w->base, paths[i]);
        ck_assert_int_eq(sieve_crawler_add_seed(x->c, url, SIZE_MAX), SIEVE_OK);
    }
    runner_start(r, x);
    ck_assert_msg(wait_in_flight(x->c, HANGING, 30), "the %d transfers never were in flight",
                  HANGING);
}

static void assert_hanging_crawl_aborted(ctx *x, runner *r)
{
    ck_assert_int_eq(r->rc, SIEVE_ECLOSED);
    assert_no_late_records(x);
    ck_assert_uint_eq(x->n, 0);
    sieve_crawl_stats st;
    sieve_crawler_stats_get(x->c, &st);
    ck_assert(st.stopped);
    ck_assert_uint_eq(st.aborted, HANGING);
    ck_assert_uint_eq(st.started, HANGING);
    ck_assert_uint_eq(st.fetched, 0);
    ck_assert_uint_eq(st.in_flight, 0);
}

/* One stop(): the hanging transfers get the grace (1 s), then are aborted
 * without records; run() returns soon after. */
START_TEST(stop_aborts_after_the_grace)
{
    ctx x;
    runner r;
    start_hanging_crawl(&x, &r, 1);
    double t0 = now_s();
    sieve_crawler_stop(x.c);
    ck_assert_msg(runner_wait(&r, 1 + 10), "run() still running %.1f s after stop()", now_s() - t0);
    assert_hanging_crawl_aborted(&x, &r);
    ctx_free(&x);
}
END_TEST

/* A second stop() aborts the transfers in flight at once, long before the
 * grace (120 s) is over. */
START_TEST(second_stop_aborts_at_once)
{
    ctx x;
    runner r;
    start_hanging_crawl(&x, &r, 120);
    sieve_crawler_stop(x.c);
    usleep(1000 * 1000);
    ck_assert_msg(!atomic_load(&r.done), "run() returned within the grace");
    sieve_crawl_stats st;
    sieve_crawler_stats_get(x.c, &st);
    ck_assert(st.stopped);
    ck_assert_uint_eq(st.in_flight, HANGING);
    double t0 = now_s();
    sieve_crawler_stop(x.c);
    ck_assert_msg(runner_wait(&r, 10), "run() still running %.1f s after the second stop()",
                  now_s() - t0);
    assert_hanging_crawl_aborted(&x, &r);
    ctx_free(&x);
}
END_TEST

/* on_record returning a negative status stops the crawl; run() returns it. */
START_TEST(negative_on_record_status_stops_the_crawl)
{
    web *w = web_start(plain_web);
    sieve_crawl_options o;
    test_options(&o);
    o.workers = 1;
    o.concurrency = 4;
    o.host_connections = 4;
    ctx x;
    ctx_init(&x, w);
    x.stop_at = 5;
    x.stop_status = SIEVE_EMISMATCH;
    crawler_for(&x, &o);
    ck_assert_int_eq(run(&x), SIEVE_EMISMATCH);
    assert_no_late_records(&x);
    /* the fifth record stopped it; at most the transfers then in flight
     * (one worker, four at once) end with records */
    ck_assert_uint_ge(x.n, 5);
    ck_assert_uint_le(x.n, 5 + 4);
    assert_subset_of_truth(&x, w);
    sieve_crawl_stats st;
    sieve_crawler_stats_get(x.c, &st);
    ck_assert_uint_eq(st.fetched, x.n);
    ck_assert_uint_eq(st.in_flight, 0);
    ctx_free(&x);
}
END_TEST

/* ---- two crawlers at once ---- */

static void *crawl_thread(void *arg)
{
    ctx *x = arg;
    intptr_t rc = run(x);
    return (void *)rc;
}

START_TEST(two_crawlers_in_two_threads)
{
    const char *const a[] = {"--pages", "200", "--seed", "3", "--no-hostile", NULL};
    const char *const b[] = {"--pages", "250", "--seed", "4", "--no-hostile", NULL};
    web *wa = web_start(a), *wb = web_start(b);
    sieve_crawl_options o;
    test_options(&o);
    ctx xa, xb;
    ctx_init(&xa, wa);
    ctx_init(&xb, wb);
    crawler_for(&xa, &o);
    o.workers = 3; /* a different shape, from the same options struct */
    crawler_for(&xb, &o);
    pthread_t ta, tb;
    ck_assert_int_eq(pthread_create(&ta, NULL, crawl_thread, &xa), 0);
    ck_assert_int_eq(pthread_create(&tb, NULL, crawl_thread, &xb), 0);
    void *ra, *rb;
    pthread_join(ta, &ra);
    pthread_join(tb, &rb);
    ck_assert_int_eq((intptr_t)ra, SIEVE_OK);
    ck_assert_int_eq((intptr_t)rb, SIEVE_OK);
    assert_no_late_records(&xa);
    assert_no_late_records(&xb);
    ctx *xs[] = {&xa, &xb};
    for (int i = 0; i < 2; i++) {
        const char **got = sorted_urls(xs[i]);
        assert_same_sets(xs[i]->w->truth, xs[i]->w->truth_n, got, xs[i]->n);
        free(got);
        assert_records_complete(xs[i], xs[i]->w);
        sieve_crawl_stats st;
        sieve_crawler_stats_get(xs[i]->c, &st);
        ck_assert_uint_eq(st.fetched, xs[i]->n);
    }
    ctx_free(&xa);
    ctx_free(&xb);
}
END_TEST

/* ---- the link filter ---- */

/* Every link containing "/p/1" is dropped: never requested (redirects to
 * such pages included), and counted in stats.filtered. */
START_TEST(dropped_links_are_never_fetched)
{
    web *w = web_start(plain_web);
    sieve_crawl_options o;
    test_options(&o);
    ctx x;
    ctx_init(&x, w);
    x.filter = FILTER_DROP_P1;
    crawler_for(&x, &o);
    ck_assert_int_eq(run(&x), SIEVE_OK);
    assert_no_late_records(&x);
    assert_subset_of_truth(&x, w);
    assert_records_complete(&x, w);
    for (size_t i = 0; i < x.n; i++)
        ck_assert_msg(strstr(x.r[i].url, "/p/1") == NULL, "dropped URL fetched: %s", x.r[i].url);
    ck_assert_uint_gt(x.n, 20);
    ck_assert_uint_gt(atomic_load(&x.drops), 0);
    ck_assert_uint_eq(atomic_load(&x.bad_links), 0);
    sieve_crawl_stats st;
    sieve_crawler_stats_get(x.c, &st);
    ck_assert_uint_eq(st.filtered, atomic_load(&x.drops));
    ck_assert_uint_eq(st.fetched, x.n);
    char *log = web_stop_and_read_log(w);
    ck_assert_msg(!log_has_target(log, "/p/1"), "a dropped URL was requested");
    ck_assert(log_has_target(log, "/p/0.html"));
    free(log);
    ctx_free(&x);
}
END_TEST

/* /missing/ID.html is rewritten to a non-canonical spelling of /p/ID.html
 * (fetched once, under its canonical URL); /files/ID.png to another
 * origin (out of scope, never fetched). The crawl is the truth without
 * both. */
START_TEST(rewritten_links_are_canonicalized_and_scoped)
{
    web *w = web_start(plain_web);
    sieve_crawl_options o;
    test_options(&o);
    ctx x;
    ctx_init(&x, w);
    x.filter = FILTER_REWRITE;
    crawler_for(&x, &o);
    ck_assert_int_eq(run(&x), SIEVE_OK);
    assert_no_late_records(&x);

    char **want = malloc(w->truth_n * sizeof *want);
    size_t want_n = 0, missing = 0, png = 0;
    for (size_t i = 0; i < w->truth_n; i++) {
        if (is_path(w, w->truth[i], "/missing/"))
            missing++;
        else if (id_after(w->truth[i], "/files/", ".png") >= 0)
            png++;
        else
            want[want_n++] = w->truth[i];
    }
    ck_assert_uint_gt(missing, 0);
    ck_assert_uint_gt(png, 0);
    const char **got = sorted_urls(&x);
    assert_same_sets(want, want_n, got, x.n);
    free(got);
    free(want);
    assert_records_complete(&x, w);
    ck_assert_uint_gt(atomic_load(&x.rewrites), 0);
    ck_assert_uint_eq(atomic_load(&x.bad_links), 0);
    sieve_crawl_stats st;
    sieve_crawler_stats_get(x.c, &st);
    /* out of scope once rewritten: counted as off-site, not as dropped */
    ck_assert_uint_gt(atomic_load(&x.off_site_rewrites), 0);
    ck_assert_uint_ge(st.off_site, atomic_load(&x.off_site_rewrites));
    ck_assert_uint_eq(st.filtered, 0);
    char *log = web_stop_and_read_log(w);
    ck_assert_msg(!log_has_target(log, "/missing/"), "a rewritten URL was requested");
    free(log);
    ctx_free(&x);
}
END_TEST

/* ---- the body callback ---- */

typedef struct fetched {
    char *data;
    size_t len;
} fetched;

static size_t fetched_add(char *p, size_t size, size_t n, void *ud)
{
    fetched *f = ud;
    f->data = realloc(f->data, f->len + size * n + 1);
    memcpy(f->data + f->len, p, size * n);
    f->len += size * n;
    return size * n;
}

/* An independent GET of url: the body, decompressed as curl does it for
 * any encoding it supports. */
static fetched curl_get(const char *url, long *status)
{
    fetched f = {0};
    CURL *h = curl_easy_init();
    ck_assert_ptr_nonnull(h);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, fetched_add);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &f);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_PROXY, "");
    CURLcode rc = curl_easy_perform(h);
    ck_assert_msg(rc == CURLE_OK, "GET %s: %s", url, curl_easy_strerror(rc));
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
    curl_easy_cleanup(h);
    return f;
}

static const body *body_of(const ctx *x, const char *url)
{
    for (size_t i = 0; i < x->nb; i++)
        if (strcmp(x->b[i].url, url) == 0)
            return &x->b[i];
    return NULL;
}

/* Chunks come in order from offset 0, on one thread, for 2xx bodies only,
 * and add up to the record's bytes; for a sample of URLs, gzip page
 * included, they are the bytes an independent GET returns. */
START_TEST(body_chunks_are_the_bodies)
{
    web *w = web_start(hostile_web);
    sieve_crawl_options o;
    test_options(&o);
    ctx x;
    ctx_init(&x, w);
    x.keep_bodies = true;
    crawler_for(&x, &o);
    ck_assert_int_eq(run(&x), SIEVE_OK);
    assert_no_late_records(&x);
    ck_assert_uint_eq(x.n, w->truth_n);

    for (size_t i = 0; i < x.nb; i++) {
        const body *b = &x.b[i];
        ck_assert_msg(!b->bad_offset, "%s: a chunk's offset is not the bytes before it", b->url);
        ck_assert_msg(!b->bad_thread, "%s: chunks on several threads", b->url);
        ck_assert_msg(!b->bad_status, "%s: chunk with status %ld", b->url, b->status);
    }
    size_t with_body = 0;
    for (size_t i = 0; i < x.n; i++) {
        const rec *r = &x.r[i];
        const body *b = body_of(&x, r->url);
        if (r->status < 200 || r->status > 299) {
            ck_assert_msg(b == NULL, "%s: status %ld, and body chunks", r->url, r->status);
            continue;
        }
        if (r->error != NULL)
            continue;
        if (r->bytes > 0) {
            ck_assert_msg(b != NULL, "%s: %llu bytes, no chunk", r->url,
                          (unsigned long long)r->bytes);
            ck_assert_msg(b->len == r->bytes, "%s: chunks add up to %zu bytes, record says %llu",
                          r->url, b->len, (unsigned long long)r->bytes);
            with_body++;
        }
    }
    ck_assert_uint_gt(with_body, PAGES);

    /* the sample: pages, the home page, a file, the gzip page and its
     * target, the malformed and invalid UTF-8 pages */
    const char *sample[] = {"",
                            "p/0.html",
                            "p/1.html",
                            "p/2.html",
                            "p/17.html",
                            "p/123.html",
                            "p/299.html",
                            "hostile/",
                            "hostile/gzip.html",
                            "hostile/gzip-target.html",
                            "hostile/malformed.html",
                            "hostile/bad-utf8.html",
                            "hostile/html-as-text.txt"};
    for (size_t i = 0; i < sizeof sample / sizeof *sample; i++) {
        char url[128];
        snprintf(url, sizeof url, "%s%s", w->base, sample[i]);
        const body *b = body_of(&x, url);
        ck_assert_msg(b != NULL, "no body for %s", url);
        long status = 0;
        fetched f = curl_get(url, &status);
        ck_assert_int_eq(status, 200);
        ck_assert_msg(f.len == b->len && memcmp(f.data, b->data, f.len) == 0,
                      "%s: %zu bytes from the engine, %zu from an independent GET", url, b->len,
                      f.len);
        free(f.data);
    }
    /* and one /files/ID.txt the crawl reached */
    bool file_done = false;
    for (size_t i = 0; i < x.n && !file_done; i++) {
        if (id_after(x.r[i].url, "/files/", ".txt") < 0 || x.r[i].status != 200)
            continue;
        const body *b = body_of(&x, x.r[i].url);
        ck_assert_ptr_nonnull(b);
        long status = 0;
        fetched f = curl_get(x.r[i].url, &status);
        ck_assert_msg(f.len == b->len && memcmp(f.data, b->data, f.len) == 0, "%s differs",
                      x.r[i].url);
        free(f.data);
        file_done = true;
    }
    ck_assert(file_done);
    ctx_free(&x);
}
END_TEST

/* on_body refusing a body stops that transfer only: its record says so,
 * the crawl goes on. */
START_TEST(body_callback_stops_one_transfer)
{
    web *w = web_start(plain_web);
    sieve_crawl_options o;
    test_options(&o);
    char url[128];
    /* not p/0.html: the home page reaches the other pages through it */
    snprintf(url, sizeof url, "%sp/5.html", w->base);
    ctx x;
    ctx_init(&x, w);
    x.refuse_body = url;
    crawler_for(&x, &o);
    ck_assert_int_eq(run(&x), SIEVE_OK);
    assert_no_late_records(&x);
    ck_assert_uint_eq(atomic_load(&x.refused_chunks), 1);
    const rec *r = NULL;
    for (size_t i = 0; i < x.n; i++)
        if (strcmp(x.r[i].url, url) == 0)
            r = &x.r[i];
    ck_assert_msg(r != NULL, "no record of %s", url);
    ck_assert_msg(r->error != NULL && strstr(r->error, "body callback") != NULL, "%s: error %s",
                  url, r->error);
    ck_assert_uint_gt(x.n, PAGES / 2);
    assert_subset_of_truth(&x, w);
    sieve_crawl_stats st;
    sieve_crawler_stats_get(x.c, &st);
    ck_assert_uint_ge(st.errors, 1);
    ck_assert_uint_eq(st.fetched, x.n);
    ctx_free(&x);
}
END_TEST

/* ---- argument errors ---- */

typedef struct logbuf {
    pthread_mutex_t mu;
    char text[8192];
    size_t len;
} logbuf;

static void log_to_buf(void *ud, sieve_log_level level, const char *msg)
{
    logbuf *lb = ud;
    pthread_mutex_lock(&lb->mu);
    int n = snprintf(lb->text + lb->len, sizeof lb->text - lb->len, "%d: %s\n", (int)level, msg);
    if (n > 0)
        lb->len += (size_t)n < sizeof lb->text - lb->len ? (size_t)n : 0;
    pthread_mutex_unlock(&lb->mu);
}

START_TEST(options_have_the_documented_defaults)
{
    sieve_crawl_options o;
    memset(&o, 0xa5, sizeof o);
    sieve_crawl_options_init(&o);
    ck_assert_uint_ge(o.workers, 1);
    ck_assert_uint_le(o.workers, 256);
    ck_assert_uint_eq(o.concurrency, 32);
    ck_assert_uint_eq(o.max_redirects, 10);
    ck_assert(o.connect_timeout_s == 10);
    ck_assert(o.timeout_s == 60);
    ck_assert_int_eq(o.low_speed_bytes, 100);
    ck_assert_int_eq(o.low_speed_time_s, 15);
    ck_assert_uint_eq(o.max_page_bytes, 10 * 1024 * 1024);
    ck_assert(o.stop_grace_s == 5);
    ck_assert_uint_eq(o.host_connections, 2);
    ck_assert(o.delay_s == 1);
    ck_assert(o.max_crawl_delay_s == 30);
    ck_assert(!o.ignore_robots);
    ck_assert(o.robots_expiry_s == 86400);
    ck_assert(o.sitemaps);
    ck_assert_uint_eq(o.max_sitemaps, 10000);
    ck_assert(o.payload_digest);
    ck_assert(!o.follow_nofollow);
    ck_assert_int_eq(o.scope, SIEVE_SCOPE_HOST);
    ck_assert_uint_eq(o.n_allow + o.n_deny + o.n_accept + o.n_reject + o.n_headers, 0);
    ck_assert_int_eq(o.max_depth, -1);
    ck_assert_uint_eq(o.max_pages, 0);
    ck_assert_uint_eq(o.max_pages_per_host, 0);
    ck_assert(!o.sort_query);
    ck_assert_uint_eq(o.max_url_len, 2048);
    ck_assert_uint_eq(o.max_segments, 20);
    ck_assert_uint_eq(o.max_repeat, 2);
    ck_assert(o.logger.fn == NULL);
    ck_assert_ptr_null(o.proxy);
    ck_assert_ptr_null(o.user);
    sieve_crawler *c = NULL;
    ck_assert_int_eq(sieve_crawler_new(&c, &o), SIEVE_OK);
    ck_assert_ptr_nonnull(c);
    sieve_crawl_stats st;
    sieve_crawler_stats_get(c, &st);
    ck_assert_uint_eq(st.started + st.fetched + st.in_flight, 0);
    ck_assert(!st.stopped);
    sieve_crawler_free(c);
    sieve_crawler_free(NULL);
}
END_TEST

START_TEST(invalid_options_are_refused)
{
    const char *const bad_allow[] = {"([unclosed"};
    const char *const bad_deny[] = {"/ok/", "a(b"};
    for (int i = 0; i < 7; i++) {
        logbuf lb = {.len = 0};
        pthread_mutex_init(&lb.mu, NULL);
        sieve_crawl_options o;
        sieve_crawl_options_init(&o);
        o.logger = (sieve_logger){.fn = log_to_buf, .ctx = &lb, .level = SIEVE_LOG_DEBUG};
        const char *pattern = NULL;
        switch (i) {
        case 0:
            o.workers = 0;
            break;
        case 1:
            o.workers = 257;
            break;
        case 2:
            o.concurrency = 0;
            break;
        case 3:
            o.concurrency = 4097;
            break;
        case 4:
            o.allow = bad_allow;
            o.n_allow = 1;
            pattern = bad_allow[0];
            break;
        case 5:
            o.deny = bad_deny;
            o.n_deny = 2;
            pattern = bad_deny[1];
            break;
        case 6:
            o.max_url_len = SIEVE_URL_MAX + 1;
            break;
        }
        sieve_crawler *c = NULL;
        int rc = sieve_crawler_new(&c, &o);
        ck_assert_msg(rc == SIEVE_EINVAL, "case %d: %s", i, sieve_strerror(rc));
        ck_assert_msg(lb.len > 0, "case %d: nothing logged", i);
        if (pattern != NULL)
            ck_assert_msg(strstr(lb.text, pattern) != NULL, "case %d: log does not name %s: %s", i,
                          pattern, lb.text);
        if (rc == SIEVE_OK)
            sieve_crawler_free(c);
        pthread_mutex_destroy(&lb.mu);
    }
}
END_TEST

START_TEST(add_seed_errors)
{
    const char *const tiny[] = {"--pages", "5", "--no-hostile", NULL};
    web *w = web_start(tiny);
    sieve_crawl_options o;
    test_options(&o);
    o.max_pages = 3;
    ctx x;
    ctx_init(&x, w);
    crawler_for(&x, &o); /* seeds w->base */
    sieve_crawler *c = x.c;
    char url[128];

    ck_assert_int_eq(sieve_crawler_add_seed(c, "ftp://127.0.0.1/x", SIZE_MAX), SIEVE_ESCHEME);
    ck_assert_int_eq(sieve_crawler_add_seed(c, "mailto:someone@example.org", SIZE_MAX),
                     SIEVE_ESCHEME);
    ck_assert_int_eq(sieve_crawler_add_seed(c, "not a url", SIZE_MAX), SIEVE_EURL);
    ck_assert_int_eq(sieve_crawler_add_seed(c, "http://[::1/", SIZE_MAX), SIEVE_EURL);
    ck_assert_int_lt(sieve_crawler_add_seed(c, "", SIZE_MAX), 0);
    /* the same seed, as given and in another spelling of it */
    ck_assert_int_eq(sieve_crawler_add_seed(c, w->base, SIZE_MAX), SIEVE_SEEN);
    snprintf(url, sizeof url, "HTTP://127.0.0.1:%u/./p/../", w->port);
    ck_assert_int_eq(sieve_crawler_add_seed(c, url, SIZE_MAX), SIEVE_SEEN);
    /* len bytes of a longer string */
    snprintf(url, sizeof url, "%sp/1.htmlXYZ", w->base);
    ck_assert_int_eq(sieve_crawler_add_seed(c, url, strlen(url) - 3), SIEVE_OK);
    url[strlen(url) - 3] = '\0';
    ck_assert_int_eq(sieve_crawler_add_seed(c, url, SIZE_MAX), SIEVE_SEEN);

    ck_assert_int_eq(run(&x), SIEVE_OK);
    assert_no_late_records(&x);
    ck_assert_uint_eq(x.n, 3);
    bool got_p1 = false;
    for (size_t i = 0; i < x.n; i++)
        got_p1 |= strcmp(x.r[i].url, url) == 0;
    /* seeds are fetched before what links add (both seeds are at depth 0) */
    ck_assert_msg(got_p1, "the second seed was not among the first fetches");
    snprintf(url, sizeof url, "%sp/2.html", w->base);
    ck_assert_int_eq(sieve_crawler_add_seed(c, url, SIZE_MAX), SIEVE_ESTATE);
    ck_assert_int_eq(sieve_crawler_run(c), SIEVE_ESTATE);
    ck_assert_uint_eq(x.n, 3);
    ctx_free(&x);
}
END_TEST

/* ---- records held back (sieve_crawl_transfer_hold()) ---- */

/* An embedder that holds back every record, as an archive writing on
 * threads of its own does, and releases the holds from a thread of its
 * own in the order they came, a little later, unless paused. */
typedef struct mark {
    atomic_bool released;
} mark; /* the holder's, freed at its end */

typedef struct holder {
    ctx *x;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    sieve_crawl_hold **q;
    mark **marks;
    size_t n, head, cap;
    bool paused, quit;
    size_t fail_at; /* the hold with this number (from 1) fails with SIEVE_EIO */
    char failed_url[256];
    pthread_t thread;
    atomic_size_t early;     /* records delivered before their release */
    atomic_size_t bad_holds; /* holds refused or allowed against the contract */
} holder;

static void on_transfer_end_hold(void *ud, sieve_crawl_transfer *t)
{
    holder *h = ud;
    sieve_crawl_hold *hold;
    int rc = sieve_crawl_transfer_hold(t, &hold);
    if (!t->has_record) {
        atomic_fetch_add(&h->bad_holds, rc != SIEVE_ESTATE);
        return;
    }
    sieve_crawl_hold *again;
    if (rc != SIEVE_OK || sieve_crawl_transfer_hold(t, &again) != SIEVE_ESTATE) {
        atomic_fetch_add(&h->bad_holds, 1);
        return;
    }
    mark *m = calloc(1, sizeof *m);
    t->user = m;
    pthread_mutex_lock(&h->mu);
    if (h->n == h->cap) {
        h->cap = h->cap ? 2 * h->cap : 256;
        h->q = realloc(h->q, h->cap * sizeof *h->q);
        h->marks = realloc(h->marks, h->cap * sizeof *h->marks);
    }
    if (h->n + 1 == h->fail_at)
        snprintf(h->failed_url, sizeof h->failed_url, "%s", t->url);
    h->marks[h->n] = m;
    h->q[h->n++] = hold;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
}

static int on_record_held(void *ud, const sieve_crawl_record *r)
{
    holder *h = ud;
    mark *m = r->transfer != NULL ? r->transfer->user : NULL;
    if (m == NULL || !atomic_load(&m->released))
        atomic_fetch_add(&h->early, 1);
    return on_record(h->x, r);
}

static void *releaser_main(void *arg)
{
    holder *h = arg;
    pthread_mutex_lock(&h->mu);
    for (;;) {
        while (!h->quit && (h->paused || h->head == h->n))
            pthread_cond_wait(&h->cv, &h->mu);
        if (h->head == h->n)
            break;
        size_t i = h->head++;
        sieve_crawl_hold *hold = h->q[i]; /* the arrays grow under the lock */
        mark *m = h->marks[i];
        pthread_mutex_unlock(&h->mu);
        usleep(500);
        atomic_store(&m->released, true);
        sieve_crawl_hold_release(hold, i + 1 == h->fail_at ? SIEVE_EIO : SIEVE_OK);
        pthread_mutex_lock(&h->mu);
    }
    pthread_mutex_unlock(&h->mu);
    return NULL;
}

static void holder_pause(holder *h, bool paused)
{
    pthread_mutex_lock(&h->mu);
    h->paused = paused;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
}

/* A crawl of a plain web of its own on a thread of its own, concurrency
 * transfers a worker, its records held by h. */
typedef struct held_crawl {
    holder h;
    ctx x;
    sieve_crawl_options o;
    web *w;
    runner r;
} held_crawl;

/* Starts k's crawl; its releaser starts paused when asked to. fail_at:
 * the hold that fails (0: none). */
static void held_crawl_start(held_crawl *k, unsigned concurrency, bool paused, size_t fail_at)
{
    holder *h = &k->h;
    ctx *x = &k->x;
    k->w = web_start(plain_web);
    test_options(&k->o);
    k->o.concurrency = concurrency;
    memset(h, 0, sizeof *h);
    h->x = x;
    h->paused = paused;
    h->fail_at = fail_at;
    pthread_mutex_init(&h->mu, NULL);
    pthread_cond_init(&h->cv, NULL);
    ctx_init(x, k->w);
    ck_assert_int_eq(sieve_crawler_new(&x->c, &k->o), SIEVE_OK);
    sieve_crawl_callbacks cb = {.on_record = on_record_held,
                                .on_transfer_end = on_transfer_end_hold};
    sieve_crawler_set_callbacks(x->c, &cb, h);
    ck_assert_int_eq(sieve_crawler_add_seed(x->c, k->w->base, SIZE_MAX), SIEVE_OK);
    ck_assert_int_eq(pthread_create(&h->thread, NULL, releaser_main, h), 0);
    runner_start(&k->r, x);
}

/* After run(): the releaser has nothing left, every hold came back. */
static void holder_end(holder *h)
{
    pthread_mutex_lock(&h->mu);
    h->quit = true;
    h->paused = false;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
    pthread_join(h->thread, NULL);
    ck_assert_uint_eq(h->head, h->n);
    ck_assert_uint_eq(atomic_load(&h->early), 0);
    ck_assert_uint_eq(atomic_load(&h->bad_holds), 0);
    for (size_t i = 0; i < h->n; i++)
        free(h->marks[i]); /* a dropped record's too */
    free(h->q);
    free(h->marks);
    pthread_mutex_destroy(&h->mu);
    pthread_cond_destroy(&h->cv);
}

/* Lets k's releaser go on, waits for run() to return want, and checks
 * that every hold came back, none too early, and no record came after. */
static void held_crawl_end(held_crawl *k, int want)
{
    holder_pause(&k->h, false);
    ck_assert(runner_wait(&k->r, 120));
    ck_assert_int_eq(k->r.rc, want);
    holder_end(&k->h);
    assert_no_late_records(&k->x);
}

/* Every record held back: while none is released each worker comes to
 * hold one per transfer slot, and starts nothing more; released, each
 * comes after its release, and the crawl delivers exactly the truth. */
START_TEST(held_records_come_after_their_release)
{
    held_crawl k;
    held_crawl_start(&k, 3, true, 0);
    holder *h = &k.h;
    ctx *x = &k.x;
    /* a worker stops at `concurrency` held, and its transfers in flight
     * then (fewer than its slots) are held too */
    uint64_t bound = (uint64_t)k.o.workers * k.o.concurrency;
    uint64_t most = (uint64_t)k.o.workers * (2 * k.o.concurrency - 1);
    ck_assert_msg(wait_held(x->c, bound, 30), "never %llu records held", (unsigned long long)bound);
    usleep(300 * 1000);
    sieve_crawl_stats st, later;
    sieve_crawler_stats_get(x->c, &st);
    ck_assert_uint_ge(st.held, bound);
    ck_assert_uint_le(st.held, most);
    ck_assert_uint_eq(st.in_flight, 0);
    ck_assert_uint_eq(st.fetched, 0);
    ck_assert_uint_eq(st.started, st.held);
    usleep(300 * 1000);
    sieve_crawler_stats_get(x->c, &later);
    ck_assert_uint_eq(later.started, st.started);
    held_crawl_end(&k, SIEVE_OK);
    const char **got = sorted_urls(x);
    assert_same_sets(k.w->truth, k.w->truth_n, got, x->n);
    free(got);
    assert_records_complete(x, k.w);
    assert_vias(x, k.w);
    sieve_crawler_stats_get(x->c, &st);
    ck_assert_uint_eq(st.held, 0);
    ck_assert_uint_ge(st.held_max, later.held);
    ck_assert_uint_le(st.held_max, most);
    ck_assert_uint_eq(st.fetched, x->n);
    ck_assert_uint_eq(h->n, x->n);
    ctx_free(x);
}
END_TEST

/* stop() twice with records held: run() waits for their releases, then
 * delivers them (the embedder's work for them is done), and returns. */
START_TEST(stop_waits_for_held_records)
{
    held_crawl k;
    held_crawl_start(&k, 3, true, 0);
    ck_assert(wait_held(k.x.c, 4, 30));
    sieve_crawler_stop(k.x.c);
    sieve_crawler_stop(k.x.c);
    usleep(300 * 1000);
    ck_assert_msg(!atomic_load(&k.r.done), "run() returned with records held");
    ck_assert_uint_eq(k.x.n, 0);
    held_crawl_end(&k, SIEVE_ECLOSED);
    ck_assert_uint_eq(k.x.n, k.h.n);
    assert_subset_of_truth(&k.x, k.w);
    ctx_free(&k.x);
}
END_TEST

/* A hold released with an error: its record never comes (its URL is not
 * done), and the run fails with that error. */
START_TEST(a_failed_hold_fails_the_run)
{
    held_crawl k;
    held_crawl_start(&k, 8, false, 3);
    held_crawl_end(&k, SIEVE_EIO);
    ck_assert_uint_ge(k.h.n, 3);
    ck_assert_uint_eq(k.x.n, k.h.n - 1);
    for (size_t i = 0; i < k.x.n; i++)
        ck_assert_str_ne(k.x.r[i].url, k.h.failed_url);
    ctx_free(&k.x);
}
END_TEST

/* ---- work gathered until a worker waits (on_wait) ---- */

enum { WAITER_WORKERS = 3 };

/* An embedder that holds every record and releases a worker's holds only
 * when that worker is about to wait, as an archive appending a worker's
 * fetches together does. Each worker's part is touched only by that
 * worker's thread, which the test checks. */
typedef struct waiter {
    ctx *x;
    struct waiter_worker {
        pthread_t thread;
        bool seen;
        sieve_crawl_hold **q;
        size_t n, cap;
        size_t released, waits;
    } w[WAITER_WORKERS];
    atomic_size_t wrong; /* a call on another worker's thread, or out of range */
} waiter;

/* The worker part of index i, checked to be called from its own thread. */
static struct waiter_worker *waiter_worker(waiter *wt, unsigned i)
{
    if (i >= WAITER_WORKERS) {
        atomic_fetch_add(&wt->wrong, 1);
        return NULL;
    }
    struct waiter_worker *ww = &wt->w[i];
    if (!ww->seen) {
        ww->thread = pthread_self();
        ww->seen = true;
    } else if (!pthread_equal(ww->thread, pthread_self())) {
        atomic_fetch_add(&wt->wrong, 1);
    }
    return ww;
}

static void on_transfer_end_gather(void *ud, sieve_crawl_transfer *t)
{
    waiter *wt = ud;
    struct waiter_worker *ww = waiter_worker(wt, t->worker);
    sieve_crawl_hold *hold;
    if (ww == NULL || !t->has_record || sieve_crawl_transfer_hold(t, &hold) != SIEVE_OK)
        return;
    if (ww->n == ww->cap) {
        ww->cap = ww->cap ? 2 * ww->cap : 64;
        ww->q = realloc(ww->q, ww->cap * sizeof *ww->q);
    }
    ww->q[ww->n++] = hold;
}

static void on_wait_release(void *ud, unsigned worker)
{
    waiter *wt = ud;
    struct waiter_worker *ww = waiter_worker(wt, worker);
    if (ww == NULL)
        return;
    ww->waits++;
    for (size_t i = 0; i < ww->n; i++)
        sieve_crawl_hold_release(ww->q[i], SIEVE_OK);
    ww->released += ww->n;
    ww->n = 0;
}

static int on_record_gathered(void *ud, const sieve_crawl_record *r)
{
    waiter *wt = ud;
    if (r->transfer != NULL)
        waiter_worker(wt, r->transfer->worker); /* delivered on its worker */
    return on_record(wt->x, r);
}

/* Records held until their worker's on_wait: each worker's transfers name
 * it, on_wait comes on that worker's thread, and the holds it releases go
 * out before the worker sleeps. The last ones, released when nothing is
 * left in flight to wake the worker, would otherwise wait for the
 * worker's longest sleep (a minute): the crawl of 300 pages, a second or
 * two, would outlast the bound. */
START_TEST(holds_released_in_on_wait_go_out_before_the_wait)
{
    web *w = web_start(plain_web);
    ctx x;
    ctx_init(&x, w);
    sieve_crawl_options o;
    test_options(&o);
    o.workers = WAITER_WORKERS;
    o.concurrency = 4;
    waiter wt = {.x = &x};
    ck_assert_int_eq(sieve_crawler_new(&x.c, &o), SIEVE_OK);
    sieve_crawl_callbacks cb = {.on_record = on_record_gathered,
                                .on_transfer_end = on_transfer_end_gather,
                                .on_wait = on_wait_release};
    sieve_crawler_set_callbacks(x.c, &cb, &wt);
    ck_assert_int_eq(sieve_crawler_add_seed(x.c, w->base, SIZE_MAX), SIEVE_OK);
    runner r;
    runner_start(&r, &x);
    ck_assert_msg(runner_wait(&r, 30), "held records released in on_wait never went out");
    ck_assert_int_eq(r.rc, SIEVE_OK);
    ck_assert_uint_eq(atomic_load(&wt.wrong), 0);
    size_t released = 0;
    for (unsigned i = 0; i < WAITER_WORKERS; i++) {
        ck_assert_uint_eq(wt.w[i].n, 0);
        ck_assert_uint_gt(wt.w[i].waits, 0);
        released += wt.w[i].released;
        free(wt.w[i].q);
    }
    ck_assert_uint_eq(released, x.n);
    const char **got = sorted_urls(&x);
    assert_same_sets(w->truth, w->truth_n, got, x.n);
    free(got);
    assert_records_complete(&x, w);
    assert_no_late_records(&x);
    ctx_free(&x);
}
END_TEST

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    Suite *s = suite_create("engine");

    TCase *tc = tcase_create("crawl");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 240);
    tcase_add_loop_test(tc, crawl_delivers_exactly_the_truth, 0, 3);
    tcase_add_test(tc, referrers_survive_waiting_for_robots);
    tcase_add_test(tc, robots_txt_that_expires_at_once_lets_pages_through);
    tcase_add_test(tc, max_pages_ends_the_crawl);
    tcase_add_test(tc, two_crawlers_in_two_threads);
    tcase_add_test(tc, body_chunks_are_the_bodies);
    tcase_add_test(tc, body_callback_stops_one_transfer);
    suite_add_tcase(s, tc);

    TCase *st = tcase_create("stop");
    tcase_add_checked_fixture(st, setup, teardown);
    tcase_set_timeout(st, 240);
    tcase_add_test(st, stop_from_another_thread);
    tcase_add_test(st, stop_before_run_fetches_nothing);
    tcase_add_test(st, stop_aborts_after_the_grace);
    tcase_add_test(st, second_stop_aborts_at_once);
    tcase_add_test(st, negative_on_record_status_stops_the_crawl);
    suite_add_tcase(s, st);

    TCase *hold = tcase_create("hold");
    tcase_add_checked_fixture(hold, setup, teardown);
    tcase_set_timeout(hold, 240);
    tcase_add_test(hold, held_records_come_after_their_release);
    tcase_add_test(hold, stop_waits_for_held_records);
    tcase_add_test(hold, a_failed_hold_fails_the_run);
    tcase_add_test(hold, holds_released_in_on_wait_go_out_before_the_wait);
    suite_add_tcase(s, hold);

    TCase *lf = tcase_create("link filter");
    tcase_add_checked_fixture(lf, setup, teardown);
    tcase_set_timeout(lf, 240);
    tcase_add_test(lf, dropped_links_are_never_fetched);
    tcase_add_test(lf, rewritten_links_are_canonicalized_and_scoped);
    suite_add_tcase(s, lf);

    TCase *args = tcase_create("arguments");
    tcase_add_checked_fixture(args, setup, teardown);
    tcase_set_timeout(args, 120);
    tcase_add_test(args, options_have_the_documented_defaults);
    tcase_add_test(args, invalid_options_are_refused);
    tcase_add_test(args, add_seed_errors);
    suite_add_tcase(s, args);

    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    curl_global_cleanup();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
