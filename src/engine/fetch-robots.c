/* fetch-robots.c - the robots kind: a host's robots.txt, fetched in the
 * slot of the first URL popped for that host, which waits in the slot.
 *
 * robots.txt is the one body kept whole, up to what the parser reads:
 * RFC 9309 lets a crawler stop at 500 KiB. What the answer means follows
 * RFC 9309 2.3.1: a 2xx body is parsed, 4xx means no rules, and 5xx or
 * an unreachable server means nothing is allowed for now (kept only a
 * short while, see ENGINE_ROBOTS_RETRY_S). curl follows its redirects. */
#include <stdlib.h>
#include <string.h>

#include "gate.h"
#include "xfer.h"

static void robots_begin(xfer *x)
{
    xfer_read_headers(x);
}

static size_t robots_body(xfer *x, const char *data, size_t n)
{
    if (x->body == NULL && (x->body = malloc(SIEVE_ROBOTS_MAX_BYTES)) == NULL) {
        x->fail = "out of memory";
        return 0;
    }
    size_t room = SIEVE_ROBOTS_MAX_BYTES - x->body_len;
    size_t take = n < room ? n : room;
    memcpy(x->body + x->body_len, data, take);
    x->body_len += take;
    return n < room ? n : 0; /* past the limit: stop, the rest is not read */
}

static void robots_finish(xfer *x, CURLcode result)
{
    sieve_crawler *c = x->c;
    if (!x->begun)
        xfer_read_headers(x);
    bool cut = result == CURLE_WRITE_ERROR && x->fail == NULL; /* over the size limit */
    bool answered = result == CURLE_OK || cut;
    sieve_robots *rules = NULL;
    bool temporary = false, parsed = false;
    if (answered && x->status >= 200 && x->status <= 299) {
        parsed = sieve_robots_parse(&rules, x->body, x->body_len, "sieve") == SIEVE_OK;
    } else if (answered && x->status >= 400 && x->status <= 499) {
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
    xfer_release(x);
    gate_robots_known(x->w, &x->waiting, rules, x->started, temporary);
}

const xfer_kind xfer_robots = {
    .name = "robots",
    .begin = robots_begin,
    .body = robots_body,
    .finish = robots_finish,
};
