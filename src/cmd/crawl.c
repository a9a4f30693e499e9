/* crawl.c - `sieve crawl`: wires the frontier, the scope, the workers and
 * the output together, runs the crawl and prints its summary.
 *
 * Exit status: 0 when the crawl ran out of URLs (or reached --max-pages),
 * 1 when it could not run or its output broke, 2 for bad arguments, and
 * 128 + the signal number when SIGINT or SIGTERM cut it short. */
#include <errno.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "crawl-options.h"
#include "crawl.h"
#include "progress.h"
#include "record.h"
#include "robots-cache.h"
#include "seeds.h"
#include "sieve/links.h"
#include "worker.h"

void crawl_fail(crawl *c, const char *why)
{
    if (!atomic_exchange(&c->failed, true)) {
        fprintf(stderr, "sieve: %s: %s; stopping\n", why, strerror(errno));
        sieve_frontier_close(c->frontier);
    }
}

/* curl's share interface wants a lock per data kind; DNS is all we share. */
static pthread_mutex_t share_locks[CURL_LOCK_DATA_LAST];

static void share_lock(CURL *h, curl_lock_data data, curl_lock_access a, void *u)
{
    (void)h, (void)a, (void)u;
    pthread_mutex_lock(&share_locks[data]);
}

static void share_unlock(CURL *h, curl_lock_data data, void *u)
{
    (void)h, (void)u;
    pthread_mutex_unlock(&share_locks[data]);
}

static CURLSH *make_share(void)
{
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_init(&share_locks[i], NULL);
    CURLSH *sh = curl_share_init();
    if (sh == NULL)
        return NULL;
    curl_share_setopt(sh, CURLSHOPT_LOCKFUNC, share_lock);
    curl_share_setopt(sh, CURLSHOPT_UNLOCKFUNC, share_unlock);
    curl_share_setopt(sh, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    return sh;
}

static int add_seed(void *ctx, const char *url, const sieve_canon_info *info)
{
    crawl *c = ctx;
    if (scope_add_seed(c->scope, url + info->host_off, info->host_len) != SIEVE_OK)
        return -1;
    int rc = sieve_frontier_push(c->frontier, url, info->len, crawl_tag(0, 0, false));
    return rc < 0 ? -1 : 0;
}

static int make_canon(const crawl_opts *o, sieve_canon **out)
{
    sieve_canon_config cc;
    sieve_canon_config_init(&cc);
    cc.max_len = o->max_url_len;
    cc.max_segments = o->max_segments;
    cc.max_repeat = o->max_repeat;
    cc.strip_params = o->strip_params;
    cc.n_strip_params = o->n_strip_params;
    cc.sort_query = o->sort_query;
    return sieve_canon_new(out, &cc);
}

/* Builds the crawl's parts; returns 0 or the exit status to leave with. */
static int setup(crawl *c, const crawl_opts *o)
{
    char err[512] = "";
    int rc = make_canon(o, &c->canon);
    if (rc != SIEVE_OK) {
        fprintf(stderr, "sieve crawl: URL rules: %s\n", sieve_strerror(rc));
        return rc == SIEVE_EINVAL ? EXIT_USAGE : EXIT_FAILURE_RUN;
    }
    rc = scope_new(&c->scope, o, err, sizeof err);
    if (rc != SIEVE_OK) {
        fprintf(stderr, "sieve crawl: %s\n", err[0] ? err : sieve_strerror(rc));
        return rc == SIEVE_EINVAL ? EXIT_USAGE : EXIT_FAILURE_RUN;
    }
    sieve_frontier_config fc;
    sieve_frontier_config_init(&fc);
    fc.seen = o->seen;
    fc.max_url_len = o->max_url_len;
    fc.politeness = (sieve_politeness){.enabled = o->host_connections > 0,
                                       .max_conns = o->host_connections,
                                       .delay_s = o->delay_s,
                                       .max_delay_s = o->max_crawl_delay_s};
    rc = sieve_frontier_new(&c->frontier, &fc);
    if (rc != SIEVE_OK) {
        fprintf(stderr, "sieve crawl: frontier: %s\n", sieve_strerror(rc));
        return rc == SIEVE_EINVAL ? EXIT_USAGE : EXIT_FAILURE_RUN;
    }
    /* A server that failed is asked again after a minute (or the expiry,
     * if shorter). */
    double retry = o->robots_expiry_s < 60 ? o->robots_expiry_s : 60;
    if (robots_cache_new(&c->robots, o->robots_expiry_s, retry) != SIEVE_OK) {
        fprintf(stderr, "sieve crawl: out of memory\n");
        return EXIT_FAILURE_RUN;
    }
    if (o->ignore_robots)
        fprintf(stderr, "sieve: warning: --ignore-robots: robots.txt is neither fetched nor "
                        "obeyed\n");
    c->share = make_share();
    if (c->share == NULL) {
        fprintf(stderr, "sieve crawl: cannot set up curl\n");
        return EXIT_FAILURE_RUN;
    }
    if (record_writer_open(&c->out, o->output) != 0) {
        fprintf(stderr, "sieve crawl: %s: %s\n", o->output, strerror(errno));
        return EXIT_FAILURE_RUN;
    }
    return 0;
}

static void teardown(crawl *c)
{
    sieve_frontier_free(c->frontier);
    scope_free(c->scope);
    sieve_canon_free(c->canon);
    robots_cache_free(c->robots);
    if (c->share != NULL)
        curl_share_cleanup(c->share);
}

/* Starts the workers, waits for them, and returns how many ran. */
static unsigned run_workers(crawl *c)
{
    unsigned n = c->opts->workers;
    pthread_t *th = calloc(n, sizeof *th);
    worker **w = calloc(n, sizeof *w);
    unsigned started = 0;
    for (unsigned i = 0; th != NULL && w != NULL && i < n; i++) {
        w[i] = worker_new(c);
        if (w[i] == NULL || pthread_create(&th[i], NULL, worker_run, w[i]) != 0) {
            worker_free(w[i]);
            break;
        }
        started++;
    }
    if (started == 0) {
        fprintf(stderr, "sieve crawl: cannot start a worker\n");
        sieve_frontier_close(c->frontier);
    }
    for (unsigned i = 0; i < started; i++) {
        pthread_join(th[i], NULL);
        worker_free(w[i]);
    }
    free(th);
    free(w);
    return started;
}

static void summary(crawl *c, double secs, int sig)
{
    sieve_frontier_stats st;
    sieve_frontier_stats_get(c->frontier, &st);
    uint64_t fetched = atomic_load(&c->n.fetched);
    fprintf(stderr,
            "sieve: %s after %.1f s: %llu pages (%.0f/s), %llu errors, %.1f MB, "
            "%llu links (%llu new)\n",
            sig                          ? "interrupted"
            : atomic_load(&c->limit_hit) ? "page limit reached"
                                         : "crawl done",
            secs, (unsigned long long)fetched, secs > 0 ? (double)fetched / secs : 0.0,
            (unsigned long long)atomic_load(&c->n.errors), (double)atomic_load(&c->n.bytes) / 1e6,
            (unsigned long long)atomic_load(&c->n.links),
            (unsigned long long)atomic_load(&c->n.links_new));
    fprintf(stderr,
            "sieve: frontier: %llu URLs queued, %llu left; seen-set ~%.0f URLs in %llu bytes, "
            "estimated false-positive rate %.2g\n",
            (unsigned long long)st.enqueued, (unsigned long long)st.queue_len, st.est_count,
            (unsigned long long)st.seen_bytes, st.est_fp_rate);
    fprintf(stderr, "sieve: robots.txt: %llu fetched, %llu URLs not fetched because of it\n",
            (unsigned long long)atomic_load(&c->n.robots_fetched),
            (unsigned long long)atomic_load(&c->n.refused_robots));
    fprintf(stderr,
            "sieve: sitemaps: %llu queued, %llu left out; %llu page entries, %llu not a "
            "crawlable URL\n",
            (unsigned long long)atomic_load(&c->n.sitemaps),
            (unsigned long long)atomic_load(&c->n.sitemaps_left_out),
            (unsigned long long)atomic_load(&c->n.sitemap_pages),
            (unsigned long long)atomic_load(&c->n.sitemap_bad));
    fprintf(stderr, "sieve: links left out:");
    for (int v = 1; v < SCOPE_VERDICTS; v++)
        fprintf(stderr, " %s %llu%s", scope_verdict_name((scope_verdict)v),
                (unsigned long long)atomic_load(&c->n.refused[v]),
                v + 1 < SCOPE_VERDICTS ? "," : "\n");
}

int cmd_crawl(int argc, char **argv)
{
    crawl_opts o;
    crawl_opts_init(&o);
    int prc = crawl_opts_parse(&o, argc, argv);
    if (prc != 0) {
        crawl_opts_free(&o);
        return prc > 0 ? EXIT_OK : EXIT_USAGE;
    }
    /* IDN hosts are converted from the locale's charset. */
    setlocale(LC_CTYPE, "C.UTF-8");
    signal(SIGPIPE, SIG_IGN);
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        fprintf(stderr, "sieve crawl: cannot initialize curl\n");
        return EXIT_FAILURE_RUN;
    }
    sieve_links_global_init();

    crawl c = {.opts = &o};
    int status = EXIT_FAILURE_RUN;
    int rc = setup(&c, &o);
    if (rc != 0) {
        status = rc;
        goto out;
    }
    long seeds = seeds_load(o.seeds, o.n_seeds, c.canon, add_seed, &c, stderr);
    if (seeds <= 0) {
        if (seeds == 0)
            fprintf(stderr, "sieve crawl: no valid seed\n");
        status = seeds == 0 ? EXIT_USAGE : EXIT_FAILURE_RUN;
        goto out;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    progress *p = progress_start(&c);
    if (p == NULL) {
        fprintf(stderr, "sieve crawl: cannot start the signal thread\n");
        goto out;
    }
    unsigned ran = run_workers(&c);
    int sig = progress_stop(p);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    summary(&c, (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9, sig);
    if (record_writer_close(c.out) != 0 && !atomic_load(&c.failed))
        crawl_fail(&c, "cannot write the output");
    c.out = NULL;
    if (sig != 0)
        status = 128 + sig;
    else if (ran > 0 && !atomic_load(&c.failed))
        status = EXIT_OK;
out:
    if (c.out != NULL)
        record_writer_close(c.out);
    teardown(&c);
    crawl_opts_free(&o);
    curl_global_cleanup();
    return status;
}
