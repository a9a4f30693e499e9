/* engine.c - the public face of the crawl engine (sieve/crawl.h): builds
 * a crawler's parts, adds seeds, runs the workers and stops them.
 *
 * run() starts the workers and then waits on the control pipe, which is
 * the one way anything reaches it: stop() writes to it (a write(2) is
 * async-signal-safe, so a signal handler may call stop()), an exiting
 * worker writes to it, and so does a failure. What happened is read from
 * atomic counters, so a wake-up lost to a full pipe loses nothing. On the
 * first stop run() closes the frontier (no URL is handed out any more)
 * and gives the transfers in flight stop_grace_s; after the grace, or on
 * a second stop, it tells the workers to abort them.
 *
 * Global state: libcurl's and libxml2's, initialized once per process
 * with pthread_once, never torn down (other code in the process may use
 * either library). Everything else lives in the crawler. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "options.h"
#include "origin.h"
#include "worker.h"

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static int global_status;

static void global_init(void)
{
    global_status = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? SIEVE_OK : SIEVE_EIO;
    sieve_links_global_init();
}

void engine_poke(sieve_crawler *c, char why)
{
    ssize_t n = write(c->ctl[1], &why, 1);
    (void)n; /* a full pipe already holds a wake-up */
}

void engine_fail(sieve_crawler *c, int status)
{
    int none = SIEVE_OK;
    atomic_compare_exchange_strong(&c->failure, &none, status);
    sieve_frontier_close(c->frontier);
    atomic_store(&c->abort_now, true);
    engine_poke(c, 'f');
}

void engine_done(sieve_crawler *c, const sieve_url *u)
{
    int rc = sieve_frontier_done(c->frontier, u);
    if (rc == SIEVE_EIO)
        engine_fail(c, rc);
}

/* ---- curl's share interface: a lock per data kind, per crawler ---- */

static void share_lock(CURL *h, curl_lock_data data, curl_lock_access a, void *ud)
{
    (void)h, (void)a;
    sieve_crawler *c = ud;
    pthread_mutex_lock(&c->share_locks[data]);
}

static void share_unlock(CURL *h, curl_lock_data data, void *ud)
{
    (void)h;
    sieve_crawler *c = ud;
    pthread_mutex_unlock(&c->share_locks[data]);
}

static bool cookies_on(const sieve_crawler *c)
{
    return c->o.cookie_file != NULL || c->o.cookie_jar != NULL;
}

static int make_share(sieve_crawler *c)
{
    c->share = curl_share_init();
    if (c->share == NULL)
        return SIEVE_ENOMEM;
    curl_share_setopt(c->share, CURLSHOPT_LOCKFUNC, share_lock);
    curl_share_setopt(c->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
    curl_share_setopt(c->share, CURLSHOPT_USERDATA, c);
    curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    if (cookies_on(c))
        curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_COOKIE);
    return SIEVE_OK;
}

/* Loads the cookie file into the shared jar once, or flushes the jar to
 * the cookie jar file (libcurl's cookie engine does the reading and the
 * writing, in the Netscape format). */
static int cookie_io(sieve_crawler *c, bool load)
{
    const char *path = load ? c->o.cookie_file : c->o.cookie_jar;
    if (path == NULL)
        return SIEVE_OK;
    FILE *fp = fopen(path, load ? "r" : "a");
    if (fp == NULL) {
        sieve_log(&c->o.logger, SIEVE_LOG_ERROR, "%s %s: %s", load ? "cookie file" : "cookie jar",
                  path, strerror(errno));
        return SIEVE_EIO;
    }
    fclose(fp);
    CURL *e = curl_easy_init();
    if (e == NULL)
        return SIEVE_ENOMEM;
    curl_easy_setopt(e, CURLOPT_SHARE, c->share);
    curl_easy_setopt(e, CURLOPT_COOKIEFILE, load ? path : "");
    if (!load)
        curl_easy_setopt(e, CURLOPT_COOKIEJAR, path);
    curl_easy_setopt(e, CURLOPT_COOKIELIST, load ? "RELOAD" : "FLUSH");
    curl_easy_cleanup(e);
    return SIEVE_OK;
}

static int make_headers(sieve_crawler *c)
{
    for (size_t i = 0; i < c->o.n_headers; i++) {
        struct curl_slist *l = curl_slist_append(c->headers, c->o.headers[i]);
        if (l == NULL)
            return SIEVE_ENOMEM;
        c->headers = l;
    }
    return SIEVE_OK;
}

static int make_canon(sieve_crawler *c)
{
    sieve_canon_config cc;
    sieve_canon_config_init(&cc);
    cc.max_len = c->o.max_url_len;
    cc.max_segments = c->o.max_segments;
    cc.max_repeat = c->o.max_repeat;
    cc.strip_params = c->o.strip_params;
    cc.n_strip_params = c->o.n_strip_params;
    cc.sort_query = c->o.sort_query;
    return sieve_canon_new(&c->canon, &cc);
}

/* The options that give a durable state its meaning, besides the
 * seen-set's (the frontier adds those): what decides which URLs exist and
 * how they are spelled. A resume with other values would judge the
 * journal's URLs by other rules. */
static char *state_meaning(const sieve_crawl_options *o)
{
    static const char *const scopes[] = {"host", "domain", "any"};
    size_t cap = 256;
    for (size_t i = 0; i < o->n_allow; i++)
        cap += strlen(o->allow[i]) + 8;
    for (size_t i = 0; i < o->n_deny; i++)
        cap += strlen(o->deny[i]) + 8;
    for (size_t i = 0; i < o->n_strip_params; i++)
        cap += strlen(o->strip_params[i]) + 16;
    char *m = malloc(cap);
    if (m == NULL)
        return NULL;
    size_t n = (size_t)snprintf(m, cap,
                                "scope=%s\nmax_depth=%ld\nmax_url_len=%zu\nmax_segments=%u\n"
                                "max_repeat=%u\nsort_query=%d\n",
                                scopes[o->scope], o->max_depth, o->max_url_len, o->max_segments,
                                o->max_repeat, (int)o->sort_query);
    for (size_t i = 0; i < o->n_allow; i++)
        n += (size_t)snprintf(m + n, cap - n, "allow=%s\n", o->allow[i]);
    for (size_t i = 0; i < o->n_deny; i++)
        n += (size_t)snprintf(m + n, cap - n, "deny=%s\n", o->deny[i]);
    for (size_t i = 0; i < o->n_strip_params; i++)
        n += (size_t)snprintf(m + n, cap - n, "strip_param=%s\n", o->strip_params[i]);
    return m;
}

static int make_frontier(sieve_crawler *c)
{
    const sieve_crawl_options *o = &c->o;
    sieve_frontier_config fc;
    sieve_frontier_config_init(&fc);
    fc.seen = o->seen;
    fc.max_url_len = o->max_url_len;
    fc.logger = o->logger;
    fc.on_wake = worker_frontier_woke;
    fc.wake_ud = c;
    _Static_assert(OPTIONS_MAX_WORKERS <= SIEVE_PARTITIONS_MAX, "a partition for every worker");
    /* Always per-host queues: the gate puts URLs off by giving them back
     * to their host. host_connections 0 asks for no limit and no delay.
     * A partition of the hosts for each worker: each host's URLs go to one
     * worker while it keeps up, so a host gets one worker's connections. */
    bool limited = o->host_connections > 0;
    fc.politeness = (sieve_politeness){.enabled = true,
                                       .max_conns = limited ? o->host_connections : UINT_MAX,
                                       .delay_s = limited ? o->delay_s : 0,
                                       .max_delay_s = o->max_crawl_delay_s,
                                       .partitions = o->workers};
    fc.queue_memory = o->queue_memory;
    if (o->state_dir == NULL && o->queue_memory == 0)
        return sieve_frontier_new(&c->frontier, &fc);
    if (o->state_dir == NULL) /* the queue's spill, in a temporary directory */
        return sieve_frontier_open(&c->frontier, NULL, &fc);
    c->meaning = state_meaning(o);
    if (c->meaning == NULL)
        return SIEVE_ENOMEM;
    fc.state_meaning = c->meaning;
    fc.checkpoint_bytes = o->checkpoint_bytes;
    return sieve_frontier_open(&c->frontier, o->state_dir, &fc);
}

static int make_parts(sieve_crawler *c)
{
    int rc = make_canon(c);
    if (rc == SIEVE_EINVAL)
        sieve_log(&c->o.logger, SIEVE_LOG_ERROR, "URL rules: %s", sieve_strerror(rc));
    if (rc == SIEVE_OK)
        rc = accept_new(&c->accept, &c->o);
    if (rc == SIEVE_OK)
        rc = scope_new(&c->scope, &c->o, c->accept);
    if (rc == SIEVE_OK)
        rc = creds_new(&c->creds);
    if (rc == SIEVE_OK)
        rc = sieve_hashset_new(&c->seed_hosts, 64, SIEVE_HASH_SEED_DEFAULT);
    if (rc == SIEVE_OK) {
        rc = make_frontier(c);
        if (rc != SIEVE_OK && c->o.state_dir == NULL) /* a state's errors are logged */
            sieve_log(&c->o.logger, SIEVE_LOG_ERROR, "frontier: %s", sieve_strerror(rc));
    }
    if (rc == SIEVE_OK) {
        double expiry = c->o.robots_expiry_s;
        rc = robots_cache_new(&c->robots, expiry,
                              expiry < ENGINE_ROBOTS_RETRY_S ? expiry : ENGINE_ROBOTS_RETRY_S,
                              c->o.robots_memory);
    }
    if (rc == SIEVE_OK)
        rc = backoff_new(&c->backoff, c->o.retry_wait_s, c->o.retry_max_wait_s);
    if (rc == SIEVE_OK)
        rc = make_headers(c);
    if (rc == SIEVE_OK)
        rc = make_share(c);
    if (rc == SIEVE_OK)
        rc = cookie_io(c, true);
    if (rc == SIEVE_OK && pipe2(c->ctl, O_CLOEXEC | O_NONBLOCK) != 0)
        rc = SIEVE_EIO;
    return rc;
}

int sieve_crawler_new(sieve_crawler **out, const sieve_crawl_options *o)
{
    if (out == NULL || o == NULL)
        return SIEVE_EINVAL;
    *out = NULL;
    int rc = options_validate(o);
    if (rc != SIEVE_OK)
        return rc;
    pthread_once(&global_once, global_init);
    if (global_status != SIEVE_OK) {
        sieve_log(&o->logger, SIEVE_LOG_ERROR, "cannot initialize libcurl");
        return global_status;
    }
    sieve_crawler *c = calloc(1, sizeof *c);
    if (c == NULL)
        return SIEVE_ENOMEM;
    c->ctl[0] = c->ctl[1] = -1;
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_init(&c->share_locks[i], NULL);
    rc = options_copy(&c->o, &c->strings, o);
    if (rc == SIEVE_OK)
        rc = make_parts(c);
    if (rc != SIEVE_OK) {
        sieve_crawler_free(c);
        return rc;
    }
    *out = c;
    return SIEVE_OK;
}

void sieve_crawler_set_callbacks(sieve_crawler *c, const sieve_crawl_callbacks *cb, void *ud)
{
    c->cb = cb != NULL ? *cb : (sieve_crawl_callbacks){0};
    c->ud = ud;
}

/* Credentials for a seed's origin: its own userinfo, else the user option. */
static int seed_creds(sieve_crawler *c, const char *raw, size_t raw_len, const char *url)
{
    size_t origin = url_origin_len(url);
    if (memchr(raw, '@', raw_len) != NULL && raw_len <= SIEVE_URL_MAX) {
        char text[SIEVE_URL_MAX + 1];
        memcpy(text, raw, raw_len);
        text[raw_len] = '\0';
        CURLU *h = curl_url();
        char *user = NULL, *password = NULL;
        int rc = SIEVE_OK;
        if (h != NULL && curl_url_set(h, CURLUPART_URL, text, 0) == CURLUE_OK &&
            curl_url_get(h, CURLUPART_USER, &user, CURLU_URLDECODE) == CURLUE_OK) {
            curl_url_get(h, CURLUPART_PASSWORD, &password, CURLU_URLDECODE);
            rc = creds_set(c->creds, url, origin, user, password, false);
        }
        curl_free(user);
        curl_free(password);
        curl_url_cleanup(h);
        if (rc != SIEVE_OK)
            return rc;
    }
    if (c->o.user == NULL)
        return SIEVE_OK;
    char user[1024];
    const char *colon = strchr(c->o.user, ':');
    size_t n = colon != NULL ? (size_t)(colon - c->o.user) : strlen(c->o.user);
    snprintf(user, sizeof user, "%.*s", (int)n, c->o.user);
    return creds_set(c->creds, url, origin, user, colon != NULL ? colon + 1 : "", true);
}

int sieve_crawler_add_seed(sieve_crawler *c, const char *url, size_t len)
{
    if (c == NULL || url == NULL)
        return SIEVE_EINVAL;
    if (atomic_load(&c->running))
        return SIEVE_ESTATE;
    if (len == SIZE_MAX)
        len = strlen(url);
    char canon[SIEVE_URL_MAX + 1];
    sieve_canon_info info;
    int rc = sieve_canon_url(c->canon, NULL, url, len, canon, sizeof canon, &info);
    if (rc == SIEVE_OK)
        rc = seed_creds(c, url, len, canon);
    if (rc == SIEVE_OK)
        rc = scope_add_seed(c->scope, canon, &info);
    if (rc == SIEVE_OK) {
        rc = sieve_hashset_add(c->seed_hosts, canon + info.host_off, info.host_len);
        rc = rc == SIEVE_SEEN ? SIEVE_OK : rc;
    }
    if (rc == SIEVE_OK)
        rc = sieve_frontier_push(c->frontier, canon, info.len, tag_make(0, 0, false));
    return rc;
}

/* Makes every worker first, so that the frontier's on_wake may look at
 * all of them from any thread, then starts their threads. Returns how
 * many run. */
static unsigned start_workers(sieve_crawler *c, worker **w)
{
    unsigned made = 0, started = 0;
    while (made < c->o.workers && (w[made] = worker_new(c, made)) != NULL)
        made++;
    c->nworkers = made;
    c->workers = w;
    /* A stack of their own size, not the process's default, which an
     * application may lower for the many short threads curl resolves
     * names in (as the sieve command does). */
    pthread_attr_t attr;
    bool sized = pthread_attr_init(&attr) == 0;
    if (sized)
        pthread_attr_setstacksize(&attr, WORKER_STACK_BYTES);
    while (started < made &&
           pthread_create(&w[started]->thread, sized ? &attr : NULL, worker_run, w[started]) == 0)
        started++;
    if (sized)
        pthread_attr_destroy(&attr);
    if (started < c->o.workers)
        sieve_log(&c->o.logger, SIEVE_LOG_WARN, "%u of %u workers started", started, c->o.workers);
    atomic_store(&c->workers_started, started);
    return started;
}

/* A checkpoint: the embedder's outputs, then the frontier's journal, are
 * made durable, in that order, so that a power loss never leaves a URL
 * reported done whose record is gone. */
static void checkpoint(sieve_crawler *c)
{
    if (c->o.state_dir == NULL)
        return;
    int rc = c->cb.on_sync != NULL ? c->cb.on_sync(c->ud) : SIEVE_OK;
    if (rc == SIEVE_OK)
        rc = sieve_frontier_sync(c->frontier);
    if (rc != SIEVE_OK)
        engine_fail(c, rc < 0 ? rc : SIEVE_EIO);
}

/* Waits on the control pipe until every worker has exited, acting on
 * stops, failures and checkpoints as they come. */
static void supervise(sieve_crawler *c, worker **w, unsigned started, atomic_uint *exited)
{
    double deadline = INFINITY;
    double next_checkpoint =
        c->o.state_dir != NULL ? clock_now() + c->o.checkpoint_interval_s : INFINITY;
    int stops_seen = 0;
    while (atomic_load(exited) < started) {
        double wake_at = deadline < next_checkpoint ? deadline : next_checkpoint;
        int timeout = -1;
        if (wake_at < INFINITY) {
            double left = wake_at - clock_now();
            timeout = left > 0 ? (int)ceil(left * 1000) : 0;
        }
        struct pollfd p = {.fd = c->ctl[0], .events = POLLIN};
        if (poll(&p, 1, timeout) > 0) {
            char buf[64];
            while (read(c->ctl[0], buf, sizeof buf) > 0)
                ;
        }
        if (clock_now() >= next_checkpoint) {
            checkpoint(c);
            next_checkpoint = clock_now() + c->o.checkpoint_interval_s;
        }
        int stops = atomic_load(&c->stops);
        bool abort_now = atomic_load(&c->abort_now) || stops >= 2 || clock_now() >= deadline;
        if (stops > 0 && stops_seen == 0) {
            sieve_frontier_close(c->frontier);
            deadline = clock_now() + c->o.stop_grace_s;
            abort_now |= c->o.stop_grace_s == 0;
        }
        stops_seen = stops;
        if (abort_now) {
            atomic_store(&c->abort_now, true);
            deadline = INFINITY;
        }
        for (unsigned i = 0; i < started; i++)
            worker_wake(w[i]);
    }
}

int sieve_crawler_run(sieve_crawler *c)
{
    if (c == NULL)
        return SIEVE_EINVAL;
    if (atomic_exchange(&c->running, true))
        return SIEVE_ESTATE;
    if (atomic_load(&c->stops) > 0)
        return SIEVE_ECLOSED;
    worker **w = calloc(c->o.workers, sizeof *w);
    if (w == NULL)
        return SIEVE_ENOMEM;
    /* The seeds are journaled with the next done(); a kill before the
     * first would lose them for a resume that names none. */
    checkpoint(c);
    unsigned started = start_workers(c, w);
    if (started > 0)
        supervise(c, w, started, &c->workers_exited);
    else
        sieve_log(&c->o.logger, SIEVE_LOG_ERROR, "cannot start a worker");
    for (unsigned i = 0; i < started; i++)
        pthread_join(w[i]->thread, NULL);
    /* Every thread that could reach the frontier's on_wake has ended. */
    unsigned made = c->nworkers;
    c->nworkers = 0;
    c->workers = NULL;
    for (unsigned i = 0; i < made; i++)
        worker_free(w[i]);
    free(w);
    checkpoint(c);
    if (started == 0)
        return SIEVE_ENOMEM;
    if (cookie_io(c, false) != SIEVE_OK && atomic_load(&c->failure) == SIEVE_OK)
        atomic_store(&c->failure, SIEVE_EIO);
    int failure = atomic_load(&c->failure);
    if (failure != SIEVE_OK)
        return failure;
    return atomic_load(&c->stops) > 0 ? SIEVE_ECLOSED : SIEVE_OK;
}

void sieve_crawler_stop(sieve_crawler *c)
{
    if (c == NULL)
        return;
    atomic_fetch_add(&c->stops, 1);
    engine_poke(c, 's');
}

void sieve_crawler_stats_get(sieve_crawler *c, sieve_crawl_stats *st)
{
    const engine_counters *n = &c->n;
    *st = (sieve_crawl_stats){
        .started = atomic_load(&n->started),
        .fetched = atomic_load(&n->fetched),
        .errors = atomic_load(&n->errors),
        .aborted = atomic_load(&n->aborted),
        .retries = atomic_load(&n->retries),
        .failing_hosts = backoff_failing_hosts(c->backoff),
        .in_flight = atomic_load(&n->in_flight),
        .held = atomic_load(&n->held),
        .held_max = atomic_load(&n->held_max),
        .bytes = atomic_load(&n->bytes),
        .links = atomic_load(&n->links),
        .links_new = atomic_load(&n->links_new),
        .off_site = atomic_load(&n->refused[SCOPE_OFF_SITE]),
        .denied = atomic_load(&n->refused[SCOPE_DENIED]),
        .not_allowed = atomic_load(&n->refused[SCOPE_NOT_ALLOWED]),
        .too_deep = atomic_load(&n->refused[SCOPE_TOO_DEEP]),
        .host_full = atomic_load(&n->refused[SCOPE_HOST_FULL]),
        .rejected = atomic_load(&n->refused[SCOPE_REJECTED]),
        .filtered = atomic_load(&n->filtered),
        .nofollow = atomic_load(&n->nofollow),
        .not_http = atomic_load(&n->not_http),
        .trap = atomic_load(&n->trap),
        .malformed = atomic_load(&n->malformed),
        .robots_fetched = atomic_load(&n->robots_fetched),
        .robots_denied = atomic_load(&n->robots_denied),
        .sitemaps = atomic_load(&n->sitemaps),
        .sitemaps_left_out = atomic_load(&n->sitemaps_left_out),
        .sitemap_pages = atomic_load(&n->sitemap_pages),
        .sitemap_bad = atomic_load(&n->sitemap_bad),
        .workers = atomic_load(&c->workers_started),
        .concurrency = c->o.concurrency,
        .page_limit_hit = atomic_load(&c->limit_hit),
        .stopped = atomic_load(&c->stops) > 0,
    };
    for (int i = 0; i < SIEVE_OUTCOMES; i++)
        st->outcomes[i] = atomic_load(&n->outcomes[i]);
    sieve_frontier_stats_get(c->frontier, &st->frontier);
}

void sieve_crawler_free(sieve_crawler *c)
{
    if (c == NULL)
        return;
    sieve_frontier_free(c->frontier);
    scope_free(c->scope);
    accept_free(c->accept);
    creds_free(c->creds);
    sieve_hashset_free(c->seed_hosts);
    sieve_canon_free(c->canon);
    robots_cache_free(c->robots);
    backoff_free(c->backoff);
    curl_slist_free_all(c->headers);
    if (c->share != NULL)
        curl_share_cleanup(c->share);
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_destroy(&c->share_locks[i]);
    for (int i = 0; i < 2; i++)
        if (c->ctl[i] >= 0)
            close(c->ctl[i]);
    free(c->strings);
    free(c->meaning);
    free(c);
}
