/* robots-gate.c - every popped URL passes its host's robots.txt.
 *
 * The first URL of a host claims the host in the robots cache and fetches
 * its robots.txt in that URL's transfer slot; with per-host scheduling the
 * host is held in the frontier meanwhile, and the URL goes back to the
 * front of its host's queue afterwards, so the robots.txt request keeps
 * the host's K and D like any other. URLs of a host whose robots.txt is
 * being fetched go back to the (held) host's queue, or, without per-host
 * scheduling, wait parked in the worker. A URL robots.txt refuses gets a
 * record saying so and is never fetched. */
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "robots-cache.h"
#include "worker-internal.h"

/* robots.txt is the one body kept whole, up to what the parser reads:
 * RFC 9309 lets a crawler stop at 500 KiB. */
size_t gate_keep_body(xfer *x, const char *data, size_t n)
{
    if (x->body == NULL && (x->body = malloc(SIEVE_ROBOTS_MAX_BYTES)) == NULL) {
        x->fail = "out of memory";
        return 0;
    }
    size_t room = SIEVE_ROBOTS_MAX_BYTES - x->body_len;
    memcpy(x->body + x->body_len, data, n < room ? n : room);
    x->body_len += n < room ? n : room;
    return n < room ? n : 0; /* past the limit: stop, the rest is not read */
}

/* The authority of a canonical URL and where its path starts. */
static void split_url(const char *url, const char **host, size_t *host_len, const char **path)
{
    const char *p = strstr(url, "://");
    p = p ? p + 3 : url;
    size_t n = strcspn(p, "/?#");
    *host = p;
    *host_len = n;
    *path = p[n] ? p + n : "/";
}

/* Writes the record of a URL that is not fetched, and releases it. */
static void refuse(worker *w, const sieve_url *u, const char *why)
{
    crawl *c = w->c;
    record r = {
        .url = u->url, .final_url = u->url, .depth = u->depth & CRAWL_DEPTH_MASK, .error = why};
    if (record_write(c->out, &r) != 0)
        crawl_fail(c, "cannot write the output");
    atomic_fetch_add(&c->n.refused_robots, 1);
    sieve_frontier_done(c->frontier, u);
}

static int park(worker *w, const sieve_url *u, double not_before, bool waiting)
{
    if (w->npark == w->cap_park) {
        unsigned cap = w->cap_park ? w->cap_park * 2 : 16;
        parked *p = realloc(w->park, cap * sizeof *p);
        if (p == NULL)
            return -1;
        w->park = p;
        w->cap_park = cap;
    }
    char *copy = strdup(u->url);
    if (copy == NULL)
        return -1;
    parked *p = &w->park[w->npark++];
    *p = (parked){.u = *u, .not_before = not_before, .waiting = waiting};
    p->u.url = copy;
    return 0;
}

/* The delay the frontier keeps between two requests to a host. */
static double host_delay(const crawl_opts *o, const sieve_robots *rules)
{
    if (o->host_connections == 0) /* no per-host scheduling */
        return 0;
    double d = o->delay_s, cd = rules != NULL ? sieve_robots_crawl_delay(rules) : -1;
    if (cd > o->max_crawl_delay_s)
        cd = o->max_crawl_delay_s;
    return cd > d ? cd : d;
}

/* A URL whose host's robots.txt is known: fetch it when its host's delay
 * since the robots.txt request has passed, or refuse it. */
static void decide(worker *w, const sieve_url *u, const sieve_robots *rules, double fetched_at)
{
    const char *host, *path;
    size_t host_len;
    split_url(u->url, &host, &host_len, &path);
    if (!sieve_robots_allowed(rules, path, strlen(path))) {
        refuse(w, u, "disallowed by robots.txt");
        return;
    }
    double when = fetched_at + host_delay(w->c->opts, rules);
    if (when > worker_now() || w->active == w->nslots) {
        if (park(w, u, when, false) != 0)
            refuse(w, u, "out of memory");
        return;
    }
    worker_start_page(w, u);
}

/* The first URL of a host fetches its robots.txt, in the URL's slot. */
static void start_robots(worker *w, const sieve_url *u, const char *host, size_t host_len)
{
    xfer *x = worker_free_slot(w);
    memcpy(x->page, u->url, u->len + 1);
    x->page_url = *u;
    x->page_url.url = x->page;
    const char *scheme_end = strstr(u->url, "://");
    int n = snprintf(x->url, sizeof x->url, "%.*s://%.*s/robots.txt", (int)(scheme_end - u->url),
                     u->url, (int)host_len, host);
    if (n < 0 || (size_t)n >= sizeof x->url) {
        refuse(w, u, "URL too long");
        return;
    }
    x->robots = true;
    worker_begin(w, x);
}

/* Gives a popped URL back to the frontier, and its --max-pages
 * reservation with it: it will be popped, and counted, again. */
static int give_back(worker *w, const sieve_url *u)
{
    int rc = sieve_frontier_requeue(w->c->frontier, u);
    if (rc == SIEVE_OK && w->c->opts->max_pages > 0)
        atomic_fetch_sub(&w->c->n.reserved, 1);
    return rc;
}

/* Routes a popped URL through its host's robots.txt. */
void gate_dispatch(worker *w, const sieve_url *u)
{
    crawl *c = w->c;
    if (c->opts->ignore_robots) {
        worker_start_page(w, u);
        return;
    }
    const char *host, *path;
    size_t host_len;
    split_url(u->url, &host, &host_len, &path);
    const sieve_robots *rules;
    double fetched_at;
    bool polite = c->opts->host_connections > 0;
    switch (robots_cache_lookup(c->robots, host, host_len, worker_now(), &rules, &fetched_at)) {
    case ROBOTS_READY:
        if (!polite)
            decide(w, u, rules, fetched_at);
        else if (sieve_robots_allowed(rules, path, strlen(path)))
            worker_start_page(w, u); /* popped at its host's turn: go now */
        else
            refuse(w, u, "disallowed by robots.txt");
        break;
    case ROBOTS_FETCH:
        /* No other URL of the host goes out until its robots.txt is in. */
        if (polite)
            sieve_frontier_hold_host(c->frontier, host, host_len, true);
        start_robots(w, u, host, host_len);
        break;
    case ROBOTS_WAIT:
        /* Back to the (held) host's queue; without per-host scheduling,
         * wait here. */
        if ((!polite || give_back(w, u) != SIEVE_OK) && park(w, u, 0, true) != 0)
            refuse(w, u, "out of memory");
        break;
    }
}

/* Starts or refuses the parked URLs that can go now. */
void gate_run_parked(worker *w)
{
    crawl *c = w->c;
    double now = worker_now();
    unsigned kept = 0;
    for (unsigned i = 0; i < w->npark; i++) {
        parked p = w->park[i];
        const sieve_robots *rules = NULL;
        double fetched_at = 0;
        bool go = w->active < w->nslots && !atomic_load(&c->abort_now);
        if (go && p.waiting) {
            const char *host, *path;
            size_t host_len;
            split_url(p.u.url, &host, &host_len, &path);
            robots_state st =
                robots_cache_lookup(c->robots, host, host_len, now, &rules, &fetched_at);
            if (st == ROBOTS_FETCH) {
                /* the fetch it waited for failed to store: fetch it here */
                start_robots(w, &p.u, host, host_len);
                free((char *)p.u.url);
                continue;
            }
            go = st == ROBOTS_READY;
        }
        if (atomic_load(&c->abort_now)) {
            refuse(w, &p.u, "interrupted");
            free((char *)p.u.url);
            continue;
        }
        if (!go || (!p.waiting && p.not_before > now)) {
            w->park[kept++] = p;
            continue;
        }
        if (p.waiting)
            decide(w, &p.u, rules, fetched_at);
        else
            worker_start_page(w, &p.u);
        free((char *)p.u.url);
    }
    w->npark = kept;
}

/* A robots.txt transfer ended: keep what it says (RFC 9309 2.3.1), then
 * decide about the page that was waiting for it. */
void gate_finish_robots(worker *w, xfer *x, CURLcode result)
{
    crawl *c = w->c;
    long status = 0;
    curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
    bool cut = result == CURLE_WRITE_ERROR && x->fail == NULL; /* over the size limit */
    sieve_robots *rules = NULL;
    bool temporary = false;
    bool parsed = false;
    if ((result == CURLE_OK || cut) && status >= 200 && status <= 299) {
        parsed = sieve_robots_parse(&rules, x->body, x->body_len, "sieve") == SIEVE_OK;
    } else if ((result == CURLE_OK || cut) && status >= 400 && status <= 499) {
        sieve_robots_allow_all(&rules);
    } else {
        /* 5xx, a redirect loop or an unreachable server: nothing for now */
        sieve_robots_disallow_all(&rules);
        temporary = true;
    }
    free(x->body);
    x->body = NULL;
    x->busy = 0;
    const char *host, *path;
    size_t host_len;
    split_url(x->page, &host, &host_len, &path);
    double delay = host_delay(c->opts, rules);
    if (delay > c->opts->delay_s)
        sieve_frontier_set_host_delay(c->frontier, host, host_len, delay);
    const sieve_robots *stored = rules;
    robots_cache_store(c->robots, host, host_len, rules, x->started, worker_now(), temporary);
    atomic_fetch_add(&c->n.robots_fetched, 1);
    if (parsed)
        sitemaps_seed(c, x->url, stored);
    bool polite = c->opts->host_connections > 0;
    bool allowed = stored != NULL && sieve_robots_allowed(stored, path, strlen(path));
    if (stored == NULL)
        refuse(w, &x->page_url, "robots.txt: out of memory");
    else if (temporary && !allowed)
        refuse(w, &x->page_url, "robots.txt unavailable: host not crawled for now");
    else if (!allowed)
        refuse(w, &x->page_url, "disallowed by robots.txt");
    else if (!polite)
        decide(w, &x->page_url, stored, x->started);
    else if (give_back(w, &x->page_url) != SIEVE_OK)
        worker_start_page(w, &x->page_url); /* cannot wait its turn: go now */
    /* The page waits for its host's next turn, after the robots.txt
     * request, like any other request to the host. */
    if (polite)
        sieve_frontier_hold_host(c->frontier, host, host_len, false);
}
