/* fetch-robots.c - the robots kind: a host's robots.txt, fetched for the
 * first URL popped for that host, which waits in the transfer's slot (one
 * of the worker's robots.txt slots when one is free, worker.c).
 *
 * robots.txt is the one body kept whole, up to what the parser reads:
 * RFC 9309 lets a crawler stop at 500 KiB. What the answer means follows
 * RFC 9309 2.3.1: a 2xx body is parsed, 4xx means no rules, and 5xx or
 * an unreachable server means nothing is allowed for now (kept only a
 * short while, see ENGINE_ROBOTS_RETRY_S).
 *
 * Redirects are followed here, five hops as RFC 9309 asks, each hop a
 * transfer of its own in the same slot: curl would follow them itself,
 * but would keep the redirects' bodies from the wire callbacks, so an
 * archive of them would not hold what the server sent. */
#include <stdlib.h>
#include <string.h>

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
    bool temporary = false, parsed = false;
    if (answered && x->status >= 200 && x->status <= 299) {
        parsed = sieve_robots_parse(&rules, x->body, x->body_len, "sieve") == SIEVE_OK;
    } else if ((answered && x->status >= 400 && x->status <= 499) ||
               x->fail_outcome == SIEVE_OUTCOME_BLOCKED) {
        /* no rules; a blocked host's pages are then blocked one by one,
         * each with a record that says so */
        sieve_robots_allow_all(&rules);
    } else {
        /* 5xx, a redirect loop or an unreachable server: nothing for now */
        sieve_robots_disallow_all(&rules);
        temporary = true;
    }
    free(x->body);
    x->body = NULL;
    atomic_fetch_add(&c->n.robots_fetched, 1);
    if (parsed)
        sitemaps_seed(c, x->url, rules);
    wire_end(x, result, false);
    xfer_release(x);
    gate_robots_known(x->w, &x->waiting, rules, temporary);
}

const xfer_kind xfer_robots = {
    .name = "robots",
    .begin = robots_begin,
    .body = robots_body,
    .finish = robots_finish,
};
