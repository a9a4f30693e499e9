/* fetch-robots.c - the robots kind: a host's robots.txt, fetched for the
 * first URL popped for that host, which waits in the transfer's slot (one
 * of the worker's robots.txt slots when one is free, worker.c).
 *
 * robots.txt is the one body kept whole, up to what the parser reads:
 * RFC 9309 lets a crawler stop at 500 KiB. What the answer means follows
 * RFC 9309 2.3.1: a 2xx body is parsed, 4xx means no rules, and 5xx or
 * an unreachable server means nothing is allowed for now: the host waits
 * while robots.txt is asked again, as a failing page would be, and is
 * then left alone a short while (gate.c, ENGINE_ROBOTS_RETRY_S). 429 is
 * taken as a server asking for rest, not as "no rules": reading it as
 * leave to crawl everything would answer "too many requests" with more.
 *
 * Redirects are followed here, five hops as RFC 9309 asks, each hop a
 * transfer of its own in the same slot: curl would follow them itself,
 * but would keep the redirects' bodies from the wire callbacks, so an
 * archive of them would not hold what the server sent. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backoff.h"
#include "gate.h"
#include "xfer.h"

/* Redirect hops followed from a robots.txt (RFC 9309 2.3.1.2: at least 5). */
#define ROBOTS_MAX_HOPS 5

static void robots_begin(xfer *x)
{
    xfer_read_headers(x);
}

static size_t robots_body(xfer *x, const char *data, size_t n)
{
    if (x->body == NULL && (x->body = malloc(SIEVE_ROBOTS_MAX_BYTES)) == NULL) {
        xfer_fail(x, SIEVE_OUTCOME_ERROR, "out of memory");
        return 0;
    }
    size_t room = SIEVE_ROBOTS_MAX_BYTES - x->body_len;
    size_t take = n < room ? n : room;
    memcpy(x->body + x->body_len, data, take);
    x->body_len += take;
    if (n < room)
        return n;
    x->cut_length = true; /* past the limit: stop, the rest is not read */
    return 0;
}

/* A redirect's next hop, started in the same slot; false when there is
 * none to follow (the answer then stands as it is). */
static bool follow(xfer *x, CURLcode result)
{
    char *loc = NULL;
    if (x->hops >= ROBOTS_MAX_HOPS || !xfer_is_redirect(x->status) ||
        curl_easy_getinfo(x->easy, CURLINFO_REDIRECT_URL, &loc) != CURLE_OK || loc == NULL)
        return false;
    char next[SIEVE_URL_MAX + 1];
    size_t n = strlen(loc);
    if (n >= sizeof next)
        return false;
    memcpy(next, loc, n + 1); /* loc is the handle's, and the handle is reused */
    wire_end(x, result, false);
    free(x->body);
    x->body = NULL;
    xfer_release(x);
    memcpy(x->url, next, n + 1);
    x->hops++;
    xfer_start(x, &xfer_robots);
    return true;
}

/* robots.txt could not be had: says why in why, and whether the
 * failure may pass, as a page's would. */
static bool why_unavailable(xfer *x, CURLcode result, bool answered, char *why, size_t cap)
{
    sieve_crawl_outcome outcome;
    if (answered && xfer_is_redirect(x->status)) {
        snprintf(why, cap, "more than %d redirects", ROBOTS_MAX_HOPS);
        outcome = SIEVE_OUTCOME_REDIRECT;
    } else if (answered) {
        snprintf(why, cap, "HTTP %ld", x->status);
        outcome = x->status >= 500 ? SIEVE_OUTCOME_HTTP_5XX : SIEVE_OUTCOME_HTTP_4XX;
    } else {
        const char *error = xfer_error(x, result);
        snprintf(why, cap, "%s", error != NULL ? error : "no answer");
        outcome = xfer_outcome(x, result, error);
    }
    return backoff_retryable(outcome, x->status);
}

static void robots_finish(xfer *x, CURLcode result)
{
    sieve_crawler *c = x->c;
    xfer_body_end(x, result);
    if (!x->begun)
        xfer_read_headers(x);
    bool cut = x->cut_length && x->fail == NULL; /* over the size limit */
    bool answered = (result == CURLE_OK && x->fail == NULL) || cut;
    if (answered && follow(x, result))
        return;
    sieve_robots *rules = NULL;
    bool parsed = false, failed = false;
    char why[ROBOTS_WHY_MAX / 2];
    curl_off_t after = 0;
    if (answered && x->status >= 200 && x->status <= 299) {
        parsed = sieve_robots_parse(&rules, x->body, x->body_len, "sieve") == SIEVE_OK;
    } else if ((answered && x->status >= 400 && x->status <= 499 && x->status != 429) ||
               x->fail_outcome == SIEVE_OUTCOME_BLOCKED) {
        /* no rules; a blocked host's pages are then blocked one by one,
         * each with a record that says so */
        sieve_robots_allow_all(&rules);
    } else {
        /* 5xx, 429, a redirect loop or an unreachable server: asked
         * again, or the host is down for a while (gate.c) */
        failed = true;
        bool may_pass = why_unavailable(x, result, answered, why, sizeof why);
        if (x->status > 0)
            curl_easy_getinfo(x->easy, CURLINFO_RETRY_AFTER, &after);
        x->t.retried = gate_robots_again(c, &x->waiting, may_pass);
    }
    long status = x->status;
    free(x->body);
    x->body = NULL;
    atomic_fetch_add(&c->n.robots_fetched, 1);
    if (parsed)
        sitemaps_seed(c, x->url, rules);
    wire_end(x, result, false);
    xfer_release(x);
    if (failed)
        gate_robots_failed(x->w, &x->waiting, why, x->t.retried, status, (double)after);
    else
        gate_robots_known(x->w, &x->waiting, rules);
}

const xfer_kind xfer_robots = {
    .name = "robots",
    .begin = robots_begin,
    .body = robots_body,
    .finish = robots_finish,
};
