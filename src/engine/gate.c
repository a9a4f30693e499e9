/* gate.c - every popped URL passes its host's robots.txt.
 *
 * The first URL of a host claims the host in the robots cache, holds the
 * host in the frontier and fetches its robots.txt, waiting in that
 * transfer's slot (a robots.txt slot, or its own).
 * There is one way to put a URL off: give it back to its host's queue in
 * the frontier (requeue). A URL of a host whose robots.txt is being
 * fetched goes back to the held host; the URL that fetched the file goes
 * back too once the file is in, and the host is released, so the page
 * waits for its host's next turn (the delay after the robots.txt request,
 * as after any other) and no worker keeps URLs of its own. A URL that
 * robots.txt refuses gets a record saying so and is never fetched.
 *
 * A robots.txt that could not be had means nothing is allowed for now
 * (RFC 9309 2.3.1.4). When the failure may pass, the host's URLs wait for
 * it: the URL goes back, the host rests as a failing page's would, and
 * its next URL asks again. Once the crawl's retries are spent, or at once
 * for a failure that will not pass, the host is down for a while and each
 * of its URLs gets a record that names why.
 *
 * The engine always runs the frontier with per-host scheduling, and
 * host_connections 0 means per-host queues with no limit and no delay, so
 * requeue and hold are always there. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "backoff.h"
#include "clock.h"
#include "gate.h"
#include "origin.h"
#include "via.h"

/* Gives a popped URL back to the frontier, and its max_pages reservation
 * with it: it will be popped, and counted, again. */

static int give_back(sieve_crawler *c, const sieve_url *u)
{
    int rc = sieve_frontier_requeue(c->frontier, u);
    if (rc == SIEVE_OK && c->o.max_pages > 0)
        atomic_fetch_sub(&c->n.reserved, 1);
    return rc;
}

static void refuse_robots(sieve_crawler *c, const sieve_url *u, const char *why)
{
    atomic_fetch_add(&c->n.robots_denied, 1);
    gate_refuse(c, u, why, SIEVE_OUTCOME_ROBOTS);
}

/* The first URL of a host fetches its robots.txt, in one of the
 * worker's robots.txt slots if one is free (worker.c says why), else in
 * the slot the URL was popped for. */
static void start_robots(worker *w, const sieve_url *u)
{
    xfer *x = worker_robots_slot(w);
    via_copy(&x->waiting, x->waiting_url, x->waiting_via, u);
    size_t origin = url_origin_len(u->url);
    int n = snprintf(x->url, sizeof x->url, "%.*s/robots.txt", (int)origin, u->url);
    if (n < 0 || (size_t)n >= sizeof x->url) {
        gate_refuse(w->c, u, "URL too long", SIEVE_OUTCOME_ERROR);
        return;
    }
    x->depth = 0;
    x->hops = 0;
    x->retries = 0;
    xfer_start(x, &xfer_robots);
}

/* The delay the frontier keeps between two requests to a host, given its
 * robots.txt Crawl-delay (-1: none). */
static double host_delay(const sieve_crawl_options *o, double crawl_delay)
{
    if (o->host_connections == 0) /* no per-host limits asked for */
        return 0;
    double d = o->delay_s, cd = crawl_delay;
    if (cd > o->max_crawl_delay_s)
        cd = o->max_crawl_delay_s;
    return cd > d ? cd : d;
}

/* The frontier forgets a host that has been idle, its delay with it:
 * each URL of a host that asks for a longer one sets it again (before the
 * URL starts, so that its next request waits the whole delay). */
static void keep_delay(sieve_crawler *c, const char *host, size_t len, double crawl_delay)
{
    double delay = host_delay(&c->o, crawl_delay);
    if (delay > c->o.delay_s)
        sieve_frontier_set_host_delay(c->frontier, host, len, delay);
}

void gate_admit(worker *w, const sieve_url *u)
{
    sieve_crawler *c = w->c;
    if (c->o.ignore_robots) {
        worker_start(w, u);
        return;
    }
    url_parts p = url_split(u->url);
    const char *host = u->url + p.auth_off;
    bool allowed = false;
    double crawl_delay = -1;
    char why[ROBOTS_WHY_MAX];
    switch (robots_cache_lookup(c->robots, host, p.auth_len, clock_now(), p.path, strlen(p.path),
                                &allowed, &crawl_delay, why)) {
    case ROBOTS_DOWN:
        refuse_robots(c, u, why);
        break;
    case ROBOTS_READY:
        keep_delay(c, host, p.auth_len, crawl_delay);
        if (allowed)
            worker_start(w, u); /* popped at its host's turn: go now */
        else
            refuse_robots(c, u, "disallowed by robots.txt");
        break;
    case ROBOTS_FETCH:
        /* No other URL of the host goes out until its robots.txt is in. */
        sieve_frontier_hold_host(c->frontier, host, p.auth_len, true);
        start_robots(w, u);
        break;
    case ROBOTS_WAIT:
        if (give_back(c, u) != SIEVE_OK)
            gate_refuse(c, u, "out of memory: could not wait for robots.txt", SIEVE_OUTCOME_ERROR);
        break;
    }
}

void gate_robots_known(worker *w, const sieve_url *u, sieve_robots *rules)
{
    sieve_crawler *c = w->c;
    url_parts p = url_split(u->url);
    const char *host = u->url + p.auth_off;
    backoff_succeeded(c->backoff, host, p.auth_len);
    keep_delay(c, host, p.auth_len, rules != NULL ? sieve_robots_crawl_delay(rules) : -1);
    /* Judged before the store, which may free the rules (out of memory). */
    bool got = rules != NULL;
    bool allowed = got && sieve_robots_allowed(rules, p.path, strlen(p.path));
    robots_cache_store(c->robots, host, p.auth_len, rules, clock_now(), allowed);
    if (!got)
        gate_refuse(c, u, "robots.txt: out of memory", SIEVE_OUTCOME_ERROR);
    else if (!allowed)
        refuse_robots(c, u, "disallowed by robots.txt");
    else if (give_back(c, u) != SIEVE_OK)
        worker_start(w, u); /* cannot wait its turn: go now */
    sieve_frontier_hold_host(c->frontier, host, p.auth_len, false);
}

bool gate_robots_again(sieve_crawler *c, const sieve_url *u, bool may_pass)
{
    url_parts p = url_split(u->url);
    return may_pass && atomic_load(&c->stops) == 0 &&
           robots_cache_failures(c->robots, u->url + p.auth_off, p.auth_len) < c->o.retries;
}

void gate_robots_failed(worker *w, const sieve_url *u, const char *why, bool again, long status,
                        double retry_after_s)
{
    sieve_crawler *c = w->c;
    url_parts p = url_split(u->url);
    const char *host = u->url + p.auth_off;
    unsigned failures = robots_cache_failures(c->robots, host, p.auth_len);
    if (again) {
        /* The host rests as long as the longer of its own rest (what it
         * asked for, or its failures in a row) and this URL's wait. */
        double rest = backoff_host_failed(c->backoff, host, p.auth_len, status, retry_after_s);
        double wait = backoff_url_wait(c->backoff, failures + 1);
        robots_cache_again(c->robots, host, p.auth_len);
        if (give_back(c, u) == SIEVE_OK) {
            sieve_frontier_pause_host(c->frontier, host, p.auth_len, rest > wait ? rest : wait);
            sieve_frontier_hold_host(c->frontier, host, p.auth_len, false);
            atomic_fetch_add(&c->n.retries, 1);
            return;
        }
        /* Cannot wait (out of memory): down, though it may not be for long. */
    }
    char msg[ROBOTS_WHY_MAX];
    unsigned tries = failures == UINT_MAX ? 1 : failures + 1;
    if (tries > 1)
        snprintf(msg, sizeof msg,
                 "robots.txt unavailable after %u tries (%s): host not crawled for now", tries,
                 why);
    else
        snprintf(msg, sizeof msg, "robots.txt unavailable (%s): host not crawled for now", why);
    robots_cache_down(c->robots, host, p.auth_len, msg, clock_now());
    refuse_robots(c, u, msg);
    sieve_frontier_hold_host(c->frontier, host, p.auth_len, false);
}
