/* worker.c - a fetch worker.
 *
 * Each worker thread owns a curl multi handle and a fixed set of transfer
 * slots. It tops the slots up from the frontier (blocking only when it has
 * nothing in flight, so an idle worker sleeps until there is work or the
 * crawl is over), lets curl drive every transfer, and finishes each one
 * by writing its record and telling the frontier it is done.
 *
 * Streaming. Bodies are never buffered: curl's write callback feeds each
 * chunk to the page's link extractor (libxml2's push parser), whose
 * callback checks each link against the scope and appends it to a small
 * per-transfer batch that goes to the frontier 64 links at a time. The
 * byte limit is counted in the write callback, after decompression.
 *
 * Redirects go through the frontier. curl is told not to follow them;
 * a 3xx response's target is canonicalized and pushed like a link (same
 * depth, one more hop), so the seen-set decides whether it is fetched. A
 * page reachable by several redirects, or also linked directly, is then
 * fetched once, and a redirect loop ends at its first repeated URL.
 *
 * Every popped URL first passes its host's robots.txt (robots-gate.c),
 * which may fetch that file in the URL's slot. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "record.h"
#include "scope.h"
#include "sieve/links.h"
#include "worker-internal.h"
#include "worker.h"

static double ms_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) * 1e3 + (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

void worker_flush_links(xfer *x)
{
    if (x->nbatch == 0)
        return;
    crawl *c = x->w->c;
    int results[LINK_BATCH];
    sieve_frontier_push_batch(c->frontier, x->batch, x->nbatch, results);
    for (size_t i = 0; i < x->nbatch; i++) {
        if (results[i] == SIEVE_OK) {
            x->links_new++;
        } else {
            const char *u = x->batch[i].url;
            scope_release(c->scope, u + x->host_off[i], x->host_len[i]);
        }
    }
    x->nbatch = 0;
    x->store_used = 0;
}

bool worker_offer(xfer *x, const char *url, const sieve_canon_info *info, uint32_t tag)
{
    crawl *c = x->w->c;
    size_t len = info->len;
    scope_verdict v =
        scope_check(c->scope, url, url + info->host_off, info->host_len, tag & CRAWL_DEPTH_MASK);
    if (v != SCOPE_IN) {
        atomic_fetch_add(&c->n.refused[v], 1);
        return false;
    }
    if (x->nbatch == LINK_BATCH || x->store_used + len + 1 > sizeof x->store)
        worker_flush_links(x);
    char *dst = x->store + x->store_used;
    memcpy(dst, url, len + 1);
    x->store_used += len + 1;
    x->host_off[x->nbatch] = info->host_off;
    x->host_len[x->nbatch] = info->host_len;
    x->batch[x->nbatch++] = (sieve_url){.url = dst, .len = len, .depth = tag};
    return true;
}

static void on_link(void *ctx, const sieve_link *l)
{
    xfer *x = ctx;
    worker_offer(x, l->url, &l->info, crawl_tag(x->depth + 1, 0, false));
}

static int is_html_type(const char *ct)
{
    if (ct == NULL)
        return 0;
    size_t n = strcspn(ct, "; \t");
    return (n == 9 && strncasecmp(ct, "text/html", 9) == 0) ||
           (n == 21 && strncasecmp(ct, "application/xhtml+xml", 21) == 0);
}

/* The charset parameter of a Content-Type, copied into buf, or NULL. */
static const char *charset_of(const char *ct, char *buf, size_t cap)
{
    const char *p = ct == NULL ? NULL : strcasestr(ct, "charset=");
    if (p == NULL)
        return NULL;
    p += 8;
    if (*p == '"')
        p++;
    size_t n = strcspn(p, "\"; \t");
    if (n == 0 || n >= cap)
        return NULL;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return buf;
}

/* First body bytes: the headers are in, so decide whether to parse. Only
 * successful HTML responses are parsed; links in error pages are not
 * followed. */
static void sniff(xfer *x)
{
    x->sniffed = 1;
    curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &x->status);
    if (x->status < 200 || x->status > 299)
        return;
    if (x->sitemap) {
        sitemap_begin(x);
        return;
    }
    char *ct = NULL;
    curl_easy_getinfo(x->easy, CURLINFO_CONTENT_TYPE, &ct);
    if (!is_html_type(ct))
        return;
    char cs[64];
    sieve_links_opts lo = {
        .canon = x->w->c->canon,
        .charset = charset_of(ct, cs, sizeof cs),
        .follow_nofollow = x->w->c->opts->follow_nofollow,
    };
    x->parse_rc = sieve_links_new(&x->lx, x->url, &lo, on_link, x);
    if (x->parse_rc != SIEVE_OK && lo.charset != NULL) {
        /* An unknown charset name: let the parser detect the encoding. */
        lo.charset = NULL;
        x->parse_rc = sieve_links_new(&x->lx, x->url, &lo, on_link, x);
    }
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *ud)
{
    xfer *x = ud;
    size_t n = size * nmemb;
    crawl *c = x->w->c;
    if (atomic_load(&c->abort_now)) {
        x->fail = "interrupted";
        return 0;
    }
    if (x->robots)
        return gate_keep_body(x, data, n);
    if (!x->sniffed)
        sniff(x);
    /* A sitemap may be larger than a page: its parser has its own limit. */
    uint64_t limit = c->opts->max_page_bytes;
    if (x->sitemap && limit < SIEVE_SITEMAP_MAX_BYTES)
        limit = SIEVE_SITEMAP_MAX_BYTES;
    if (n > limit - x->bytes) {
        x->fail = "page exceeds the byte limit";
        return 0;
    }
    x->bytes += n;
    if (x->lx != NULL && x->parse_rc == SIEVE_OK)
        x->parse_rc = sieve_links_feed(x->lx, data, n);
    else if (x->sm != NULL)
        return sitemap_body(x, data, n);
    return n;
}

static int setup_easy(worker *w, xfer *x)
{
    const crawl_opts *o = w->c->opts;
    x->easy = curl_easy_init();
    if (x->easy == NULL)
        return -1;
    CURL *e = x->easy;
    curl_easy_setopt(e, CURLOPT_PRIVATE, x);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->errbuf);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(e, CURLOPT_USERAGENT, o->user_agent);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, o->connect_timeout_ms);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, o->timeout_ms);
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, o->low_speed_bytes);
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, o->low_speed_time_s);
    curl_easy_setopt(e, CURLOPT_SHARE, w->c->share);
    return 0;
}

worker *worker_new(crawl *c)
{
    worker *w = calloc(1, sizeof *w);
    if (w == NULL)
        return NULL;
    w->c = c;
    w->nslots = c->opts->concurrency;
    w->slots = calloc(w->nslots, sizeof *w->slots);
    w->multi = curl_multi_init();
    if (w->slots == NULL || w->multi == NULL) {
        worker_free(w);
        return NULL;
    }
    curl_multi_setopt(w->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)w->nslots);
    for (unsigned i = 0; i < w->nslots; i++) {
        w->slots[i].w = w;
        if (setup_easy(w, &w->slots[i]) != 0) {
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
    for (unsigned i = 0; i < w->npark; i++)
        free((char *)w->park[i].u.url);
    free(w->park);
    for (unsigned i = 0; w->slots != NULL && i < w->nslots; i++) {
        free(w->slots[i].body);
        sieve_links_free(w->slots[i].lx);
        sieve_sitemap_free(w->slots[i].sm);
        if (w->slots[i].easy != NULL)
            curl_easy_cleanup(w->slots[i].easy);
    }
    if (w->multi != NULL)
        curl_multi_cleanup(w->multi);
    free(w->slots);
    free(w);
}

xfer *worker_free_slot(worker *w)
{
    for (unsigned i = 0; i < w->nslots; i++)
        if (!w->slots[i].busy)
            return &w->slots[i];
    return NULL;
}

static void finish(worker *w, xfer *x, CURLcode result);

double worker_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Starts the transfer of x->url in slot x, prepared by the caller. */
void worker_begin(worker *w, xfer *x)
{
    x->busy = 1;
    x->fail = NULL;
    x->errbuf[0] = '\0';
    x->sniffed = 0;
    x->status = 0;
    x->parse_rc = SIEVE_OK;
    x->bytes = x->links_found = x->links_new = 0;
    x->nbatch = x->store_used = 0;
    x->body_len = 0;
    clock_gettime(CLOCK_MONOTONIC, &x->start);
    x->started = worker_now();
    curl_easy_setopt(x->easy, CURLOPT_URL, x->url);
    /* robots.txt redirects are followed by curl (RFC 9309: at least five);
     * a page's redirects go through the frontier. */
    curl_easy_setopt(x->easy, CURLOPT_FOLLOWLOCATION, x->robots ? 1L : 0L);
    curl_easy_setopt(x->easy, CURLOPT_MAXREDIRS, 5L);
    if (curl_multi_add_handle(w->multi, x->easy) != CURLM_OK) {
        x->fail = "cannot start the transfer";
        finish(w, x, CURLE_FAILED_INIT);
        return;
    }
    w->active++;
}

void worker_start_page(worker *w, const sieve_url *u)
{
    xfer *x = worker_free_slot(w);
    memcpy(x->url, u->url, u->len + 1);
    x->robots = false;
    x->popped = *u;
    x->popped.url = x->url;
    x->depth = u->depth & CRAWL_DEPTH_MASK;
    x->sitemap = (u->depth & CRAWL_SITEMAP_BIT) != 0;
    x->hops = u->depth >> CRAWL_HOPS_SHIFT;
    atomic_fetch_add(&w->c->n.started, 1);
    worker_begin(w, x);
}

/* A 3xx answer: its target is queued like a link, one hop further. */
static const char *follow_redirect(xfer *x, char *final, size_t cap)
{
    crawl *c = x->w->c;
    char *loc = NULL;
    curl_easy_getinfo(x->easy, CURLINFO_REDIRECT_URL, &loc);
    if (loc == NULL)
        return NULL;
    sieve_canon_info info;
    int rc = sieve_canon_url(c->canon, x->url, loc, strlen(loc), final, cap, &info);
    if (rc != SIEVE_OK)
        return sieve_strerror(rc);
    if (x->hops + 1 > c->opts->max_redirects)
        return "too many redirects";
    worker_offer(x, final, &info, crawl_tag(x->depth, x->hops + 1, x->sitemap));
    return NULL;
}

static void finish(worker *w, xfer *x, CURLcode result)
{
    if (x->robots) {
        gate_finish_robots(w, x, result);
        return;
    }
    crawl *c = w->c;
    if (!x->sniffed)
        curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &x->status);
    char *ct = NULL;
    curl_easy_getinfo(x->easy, CURLINFO_CONTENT_TYPE, &ct);
    if (x->lx != NULL) {
        /* A body cut short may end inside a tag; finishing would read that
         * tag as libxml2 recovers it, and "/many/1.html" cut after "/m"
         * would become a link to "/m". Links already delivered came from
         * complete tags, so only a complete body is finished. */
        if (x->parse_rc == SIEVE_OK && result == CURLE_OK && x->fail == NULL)
            x->parse_rc = sieve_links_finish(x->lx);
        sieve_links_stats st;
        sieve_links_stats_get(x->lx, &st);
        x->links_found = st.found;
        sieve_links_free(x->lx);
        x->lx = NULL;
    }
    if (x->sm != NULL)
        sitemap_end(x, x->parse_rc == SIEVE_OK && result == CURLE_OK && x->fail == NULL);
    const char *error = x->fail;
    static _Thread_local char target[CRAWL_URL_MAX + 1];
    const char *final_url = x->url;
    if (error == NULL && result != CURLE_OK)
        error = x->errbuf[0] ? x->errbuf : curl_easy_strerror(result);
    if (error == NULL && x->status >= 300 && x->status <= 399) {
        error = follow_redirect(x, target, sizeof target);
        if (error == NULL)
            final_url = target;
    }
    if (error == NULL && x->parse_rc != SIEVE_OK)
        error = sieve_strerror(x->parse_rc);
    worker_flush_links(x);

    record r = {
        .url = x->url,
        .final_url = final_url,
        .status = x->status,
        .content_type = ct,
        .bytes = x->bytes,
        .depth = x->depth,
        .links_found = x->links_found,
        .links_new = x->links_new,
        .elapsed_ms = ms_since(&x->start),
        .error = error,
    };
    if (record_write(c->out, &r) != 0)
        crawl_fail(c, "cannot write the output");
    atomic_fetch_add(&c->n.fetched, 1);
    atomic_fetch_add(&c->n.bytes, x->bytes);
    atomic_fetch_add(&c->n.links, x->links_found);
    atomic_fetch_add(&c->n.links_new, x->links_new);
    if (error != NULL)
        atomic_fetch_add(&c->n.errors, 1);
    x->busy = 0;
    sieve_frontier_done(c->frontier, &x->popped);
}

/* Takes URLs from the frontier into free slots. Blocks only when nothing
 * is in flight here. Returns 0 while the crawl goes on, 1 once the
 * frontier says there will be no more work. */
static int top_up(worker *w)
{
    crawl *c = w->c;
    const crawl_opts *o = c->opts;
    while (w->active < w->nslots) {
        /* A pop needs one of the --max-pages reservations. The frontier is
         * not closed when they run out: a worker blocked in pop() may hold
         * one of the last, and must still get its URL. */
        if (o->max_pages > 0 && atomic_fetch_add(&c->n.reserved, 1) >= o->max_pages) {
            atomic_fetch_sub(&c->n.reserved, 1);
            /* Over only once the pages have started: a URL waiting for
             * its host's robots.txt holds a reservation it may give back. */
            if (atomic_load(&c->n.started) < o->max_pages)
                return 0;
            atomic_store(&c->limit_hit, true);
            return 1;
        }
        sieve_url u;
        int rc = sieve_frontier_pop(c->frontier, w->popbuf, sizeof w->popbuf, &u,
                                    w->active == 0 && w->npark == 0 ? -1 : 0);
        if (rc != SIEVE_OK && o->max_pages > 0)
            atomic_fetch_sub(&c->n.reserved, 1);
        if (rc == SIEVE_OK)
            gate_dispatch(w, &u);
        else if (rc == SIEVE_EAGAIN || rc == SIEVE_ETIMEDOUT)
            return 0;
        else
            return 1; /* drained or closed */
    }
    return 0;
}

static void reap(worker *w)
{
    CURLMsg *m;
    int left;
    while ((m = curl_multi_info_read(w->multi, &left)) != NULL) {
        if (m->msg != CURLMSG_DONE)
            continue;
        xfer *x = NULL;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&x);
        CURLcode result = m->data.result;
        curl_multi_remove_handle(w->multi, m->easy_handle);
        w->active--;
        finish(w, x, result);
    }
}

/* Second signal: end every transfer now, each with its record. */
static void abort_all(worker *w)
{
    for (unsigned i = 0; i < w->nslots; i++) {
        xfer *x = &w->slots[i];
        if (!x->busy)
            continue;
        curl_multi_remove_handle(w->multi, x->easy);
        w->active--;
        x->fail = "interrupted";
        finish(w, x, CURLE_ABORTED_BY_CALLBACK);
    }
}

void *worker_run(void *arg)
{
    worker *w = arg;
    crawl *c = w->c;
    int no_more = 0;
    while (!no_more || w->active > 0 || w->npark > 0) {
        if (w->npark > 0)
            gate_run_parked(w);
        if (!no_more)
            no_more = top_up(w);
        if (w->active == 0) {
            /* Nothing to drive, yet not over: parked URLs, or --max-pages
             * reservations that may come back. */
            if (!no_more || w->npark > 0)
                curl_multi_poll(w->multi, NULL, 0, 20, NULL);
            continue;
        }
        int running;
        curl_multi_perform(w->multi, &running);
        reap(w);
        if (atomic_load(&c->abort_now)) {
            abort_all(w);
            continue;
        }
        if (w->active > 0)
            curl_multi_poll(w->multi, NULL, 0, w->npark > 0 ? 20 : 100, NULL);
    }
    return NULL;
}
