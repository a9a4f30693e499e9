/* record.c - one record per URL the crawl is done with, handed to the
 * embedder's on_record callback, and counted; and the outcome that sums
 * up each record, so that failures can be counted by kind. */
#include <time.h>

#include "clock.h"
#include "gate.h"
#include "via.h"
#include "xfer.h"

static const char *const outcome_names[] = {
    [SIEVE_OUTCOME_OK] = "ok",
    [SIEVE_OUTCOME_HTTP_4XX] = "http_4xx",
    [SIEVE_OUTCOME_HTTP_5XX] = "http_5xx",
    [SIEVE_OUTCOME_DNS] = "dns",
    [SIEVE_OUTCOME_CONNECT] = "connect",
    [SIEVE_OUTCOME_TIMEOUT] = "timeout",
    [SIEVE_OUTCOME_TLS] = "tls",
    [SIEVE_OUTCOME_NETWORK] = "network",
    [SIEVE_OUTCOME_PROTOCOL] = "protocol",
    [SIEVE_OUTCOME_TRUNCATED] = "truncated",
    [SIEVE_OUTCOME_TOO_LARGE] = "too_large",
    [SIEVE_OUTCOME_ENCODING] = "encoding",
    [SIEVE_OUTCOME_REDIRECT] = "redirect",
    [SIEVE_OUTCOME_ROBOTS] = "robots",
    [SIEVE_OUTCOME_REJECTED] = "rejected",
    [SIEVE_OUTCOME_PARSE] = "parse",
    [SIEVE_OUTCOME_STOPPED] = "stopped",
    [SIEVE_OUTCOME_ERROR] = "error",
    [SIEVE_OUTCOME_BLOCKED] = "blocked",
};

const char *sieve_crawl_outcome_name(sieve_crawl_outcome o)
{
    size_t n = sizeof outcome_names / sizeof *outcome_names;
    return (unsigned)o < n && outcome_names[o] != NULL ? outcome_names[o] : "error";
}

/* The kind of failure behind one of curl's results. */
static sieve_crawl_outcome curl_outcome(CURLcode result)
{
    switch (result) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
        return SIEVE_OUTCOME_DNS;
    case CURLE_COULDNT_CONNECT:
        return SIEVE_OUTCOME_CONNECT;
    case CURLE_OPERATION_TIMEDOUT:
        return SIEVE_OUTCOME_TIMEOUT;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_SHUTDOWN_FAILED:
    case CURLE_USE_SSL_FAILED:
        return SIEVE_OUTCOME_TLS;
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
        return SIEVE_OUTCOME_NETWORK;
    case CURLE_PARTIAL_FILE:
        return SIEVE_OUTCOME_TRUNCATED;
    case CURLE_WEIRD_SERVER_REPLY:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_UNSUPPORTED_PROTOCOL:
        return SIEVE_OUTCOME_PROTOCOL;
    case CURLE_BAD_CONTENT_ENCODING:
        return SIEVE_OUTCOME_ENCODING;
#if CURL_AT_LEAST_VERSION(8, 6, 0)
    case CURLE_TOO_LARGE: /* a head past curl's limits */
        return SIEVE_OUTCOME_TOO_LARGE;
#endif
    default:
        return SIEVE_OUTCOME_ERROR;
    }
}

sieve_crawl_outcome xfer_outcome(const xfer *x, CURLcode result, const char *error)
{
    if (x->fail != NULL)
        return x->fail_outcome;
    if (wire_head_line_too_long(x, result))
        return SIEVE_OUTCOME_TOO_LARGE;
    sieve_crawl_outcome chunk = xfer_chunk_outcome(x, result);
    if (chunk != SIEVE_OUTCOME_OK)
        return chunk;
    if (error != NULL)
        return curl_outcome(result);
    return x->status >= 500   ? SIEVE_OUTCOME_HTTP_5XX
           : x->status >= 400 ? SIEVE_OUTCOME_HTTP_4XX
                              : SIEVE_OUTCOME_OK;
}

/* Hands a record to the embedder; false if it could not keep it (a full
 * disk, say), and then the crawl fails and the URL must not be reported
 * done, or a resume would never record it. */
bool record_deliver(sieve_crawler *c, const sieve_crawl_record *r)
{
    atomic_fetch_add(&c->n.fetched, 1);
    if ((unsigned)r->outcome < SIEVE_OUTCOMES)
        atomic_fetch_add(&c->n.outcomes[r->outcome], 1);
    if (r->error != NULL)
        atomic_fetch_add(&c->n.errors, 1);
    if (c->cb.on_record == NULL)
        return true;
    int rc = c->cb.on_record(c->ud, r);
    if (rc != SIEVE_OK)
        engine_fail(c, rc < 0 ? rc : SIEVE_ECLOSED);
    return rc == SIEVE_OK;
}

void xfer_record_make(xfer *x, const char *final_url, const char *error,
                      sieve_crawl_outcome outcome, sieve_crawl_record *out)
{
    sieve_crawler *c = x->c;
    atomic_fetch_add(&c->n.bytes, x->bytes);
    atomic_fetch_add(&c->n.links, x->links_found);
    atomic_fetch_add(&c->n.links_new, x->links_new);
    *out = (sieve_crawl_record){
        .url = x->url,
        .final_url = final_url,
        .status = x->status,
        .content_type = x->content_type,
        .bytes = x->bytes,
        .depth = x->depth,
        .links_found = x->links_found,
        .links_new = x->links_new,
        .elapsed_ms = (clock_now() - x->started) * 1e3,
        .error = error,
        .kind = x->kind == &xfer_sitemap ? SIEVE_FETCH_SITEMAP : SIEVE_FETCH_PAGE,
        .started_us = x->t.started_us,
        .wire_bytes = x->t.wire_bytes,
        .remote_ip = x->t.remote_ip,
        .payload_digest = x->status > 0 && x->digest[0] != '\0' ? x->digest : NULL,
        .outcome = outcome,
        .attempts = x->retries + 1,
        .transfer = &x->t,
    };
    via_read(&x->popped, &out->referrer, &out->first_url);
}

bool xfer_record(xfer *x, const char *final_url, const char *error, sieve_crawl_outcome outcome)
{
    sieve_crawl_record r;
    xfer_record_make(x, final_url, error, outcome, &r);
    return record_deliver(x->c, &r);
}

void gate_refuse(sieve_crawler *c, const sieve_url *u, const char *why, sieve_crawl_outcome outcome)
{
    /* Not a fetch: its max_pages reservation goes back. Kept, refusals
     * could use up the reservations with fewer pages started, and the
     * workers would wait for pages that never start. */
    if (c->o.max_pages > 0)
        atomic_fetch_sub(&c->n.reserved, 1);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    sieve_crawl_record r = {
        .url = u->url,
        .final_url = u->url,
        .depth = u->depth & TAG_DEPTH_MASK,
        .error = why,
        .kind = (u->depth & TAG_SITEMAP_BIT) ? SIEVE_FETCH_SITEMAP : SIEVE_FETCH_PAGE,
        .started_us = (int64_t)now.tv_sec * 1000000 + now.tv_nsec / 1000,
        .outcome = outcome,
    };
    via_read(u, &r.referrer, &r.first_url);
    if (record_deliver(c, &r))
        engine_done(c, u);
}
