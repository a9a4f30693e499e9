/* xfer.c - what every kind of transfer shares: the slot's curl handle,
 * starting a transfer, the write callback that hands bodies to the kind,
 * and the end of a fetch (redirects, record, done).
 *
 * The write callback gets the body as the server sent it: each chunk goes
 * to the wire (wire.c) as it is, then, decoded if the response has a
 * content coding (decode.c), to the kind. The kind's byte limit thus
 * counts decoded bytes, and a chunk the kind refuses stops the transfer
 * however many decoded bytes it still held.
 *
 * Redirects go through the frontier: curl is told not to follow them
 * (robots.txt excepted, RFC 9309 asks for at least five hops); a 301,
 * 302, 303, 307 or 308 response's target is canonicalized and pushed like
 * a link, same depth, one more hop, so the seen-set decides whether it is
 * fetched. A page reachable by several redirects, or also linked, is then
 * fetched once, and a redirect loop ends at its first repeated URL. */
#include <math.h>
#include <string.h>
#include <strings.h>

#include "address.h"
#include "clock.h"
#include "hold.h"
#include "origin.h"
#include "via.h"
#include "worker.h"
#include "xfer.h"

/* The decoded body goes to the kind through this. */
static size_t to_kind(void *ctx, const char *data, size_t n)
{
    xfer *x = ctx;
    return x->kind->body(x, data, n);
}

/* The kind's begin, then the decoder its response's coding needs. */
static bool begin(xfer *x)
{
    x->begun = true;
    x->kind->begin(x);
    if (x->fail != NULL)
        return false;
    if (x->coding == DECODE_UNSUPPORTED) {
        xfer_fail(x, SIEVE_OUTCOME_ENCODING, "content coding not supported (not gzip or deflate)");
        return false;
    }
    if (x->coding != DECODE_IDENTITY && (x->dec = decoder_new(x->coding)) == NULL) {
        xfer_fail(x, SIEVE_OUTCOME_ERROR, "out of memory");
        return false;
    }
    return true;
}

static size_t on_write(char *data, size_t size, size_t nmemb, void *ud)
{
    xfer *x = ud;
    size_t n = size * nmemb;
    if (atomic_load(&x->c->abort_now)) {
        xfer_fail(x, SIEVE_OUTCOME_ERROR, "interrupted");
        return 0;
    }
    if (x->fail != NULL || (!x->begun && !begin(x)) || !wire_body(x, data, n))
        return 0;
    if (x->dec == NULL)
        return x->kind->body(x, data, n);
    switch (decoder_feed(x->dec, data, n, to_kind, x)) {
    case DECODE_OK:
        return n;
    case DECODE_STOP:
        return 0;
    case DECODE_CORRUPT:
        xfer_fail(x, SIEVE_OUTCOME_ENCODING, "corrupt compressed data (Content-Encoding)");
        return 0;
    default:
        xfer_fail(x, SIEVE_OUTCOME_ERROR, "out of memory");
        return 0;
    }
}

/* Options that are the same for every transfer of a slot. */
/* curl is about to connect x to addr: refuse an internal address unless
 * a seed names the host (see address.h). */
static curl_socket_t open_socket(void *ud, curlsocktype purpose, struct curl_sockaddr *addr)
{
    xfer *x = ud;
    if (purpose == CURLSOCKTYPE_IPCXN && address_is_internal(&addr->addr)) {
        size_t len;
        const char *host = address_host_of(x->url, &len);
        if (!sieve_hashset_contains(x->c->seed_hosts, host, len)) {
            xfer_fail(x, SIEVE_OUTCOME_BLOCKED,
                      "blocked: the host resolves to a loopback, private or link-local address "
                      "that no seed names");
            return CURL_SOCKET_BAD;
        }
    }
    return socket(addr->family, addr->socktype, addr->protocol);
}

int xfer_setup(xfer *x)
{
    const sieve_crawl_options *o = &x->c->o;
    CURL *e = x->easy = curl_easy_init();
    if (e == NULL)
        return SIEVE_ENOMEM;
    curl_easy_setopt(e, CURLOPT_PRIVATE, x);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->errbuf);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_USERAGENT, o->user_agent);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)(o->connect_timeout_s * 1000));
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(o->timeout_s * 1000));
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, o->low_speed_bytes);
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, o->low_speed_time_s);
    curl_easy_setopt(e, CURLOPT_SHARE, x->c->share);
#if CURL_AT_LEAST_VERSION(7, 87, 0)
    /* A transfer that ends while its name is still being resolved (the
     * connect timeout, an abort) would otherwise make curl join the
     * resolver thread, and the worker would wait, with all its transfers,
     * until getaddrinfo() gives up: seconds for a name server that does
     * not answer. Told to exit quickly, curl detaches the thread, which
     * frees its own data when getaddrinfo() returns. */
    curl_easy_setopt(e, CURLOPT_QUICK_EXIT, 1L);
#endif
    wire_setup(x);
    /* through a proxy, the address connected to is the proxy's */
    if (!o->allow_private && o->proxy == NULL) {
        curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, open_socket);
        curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, x);
    }
    if (x->c->headers != NULL)
        curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->c->headers);
    if (o->proxy != NULL)
        curl_easy_setopt(e, CURLOPT_PROXY, o->proxy);
    if (o->cookie_file != NULL || o->cookie_jar != NULL)
        curl_easy_setopt(e, CURLOPT_COOKIEFILE, ""); /* the shared jar, loaded once */
    if (o->netrc) {
        curl_easy_setopt(e, CURLOPT_NETRC, (long)CURL_NETRC_OPTIONAL);
        if (o->netrc_file != NULL)
            curl_easy_setopt(e, CURLOPT_NETRC_FILE, o->netrc_file);
    }
    return SIEVE_OK;
}

/* curl sweeps its DNS cache at the end of every transfer whose entries
 * can expire, and a sweep walks every name in the cache (under the shared
 * cache's lock): over a thousand hosts that walk was a fifth of a crawl's
 * time. So names never expire for most transfers, and one transfer a
 * second carries the real lifetime: its sweep drops every name resolved
 * longer ago. A name is then used at most a second or so past its
 * lifetime, and the sweeps cost one walk a second, whatever the rate. */
static long dns_ttl(sieve_crawler *c, double now)
{
    long long ms = (long long)(now * 1000);
    long long next = atomic_load(&c->dns_sweep_ms);
    if (ms < next ||
        !atomic_compare_exchange_strong(&c->dns_sweep_ms, &next, ms + ENGINE_DNS_SWEEP_MS))
        return -1L;
    return (long)ceil(c->o.dns_ttl_s);
}

void xfer_start(xfer *x, const xfer_kind *kind)
{
    sieve_crawler *c = x->c;
    x->kind = kind;
    x->busy = true;
    x->begun = false;
    x->fail = NULL;
    x->fail_outcome = SIEVE_OUTCOME_OK;
    x->cut_length = false;
    x->errbuf[0] = '\0';
    x->status = 0;
    x->content_type = NULL;
    x->parse_rc = SIEVE_OK;
    x->bytes = x->links_found = x->links_new = 0;
    x->links_lost = false;
    x->nbatch = x->store_used = 0;
    x->pass_body = false;
    x->lx_header_only = false;
    x->body_len = 0;
    x->started = clock_now();
    wire_start(x);
    CURL *e = x->easy;
    curl_easy_setopt(e, CURLOPT_URL, x->url);
    /* An http:// URL is fetched with HTTP/1.1 whatever curl is told (the
     * engine asks for no h2c upgrade). Told so, curl no longer weighs
     * multiplexing each time it reuses a connection to the host: with an
     * archive (curl's verbose mode) that check formatted a line a page
     * for the debug callback, 1,300 instructions. */
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION,
                     strncasecmp(x->url, "http:", 5) == 0 ? (long)CURL_HTTP_VERSION_1_1
                                                          : (long)CURL_HTTP_VERSION_2TLS);
    curl_easy_setopt(e, CURLOPT_DNS_CACHE_TIMEOUT, dns_ttl(c, x->started));
    const char *user = NULL, *password = NULL;
    creds_find(c->creds, x->url, &user, &password);
    curl_easy_setopt(e, CURLOPT_USERNAME, user);
    curl_easy_setopt(e, CURLOPT_PASSWORD, password);
    atomic_fetch_add(&c->n.in_flight, 1);
    if (curl_multi_add_handle(x->w->multi, e) != CURLM_OK) {
        xfer_fail(x, SIEVE_OUTCOME_ERROR, "cannot start the transfer");
        kind->finish(x, CURLE_FAILED_INIT);
        return;
    }
    worker_slot_busy(x->w, x, true);
}

void xfer_release(xfer *x)
{
    wire_end(x, CURLE_ABORTED_BY_CALLBACK, true); /* a no-op unless it was dropped */
    decoder_free(x->dec);
    x->dec = NULL;
    x->busy = false;
    atomic_fetch_sub(&x->c->n.in_flight, 1);
}

void xfer_read_headers(xfer *x)
{
    curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &x->status);
    char *ct = NULL;
    curl_easy_getinfo(x->easy, CURLINFO_CONTENT_TYPE, &ct);
    x->content_type = ct;
}

void xfer_fail(xfer *x, sieve_crawl_outcome outcome, const char *why)
{
    x->fail = why;
    x->fail_outcome = outcome;
}

void xfer_body_end(xfer *x, CURLcode result)
{
    if (result != CURLE_OK || x->fail != NULL)
        return;
    /* curl 7.88 ends a transfer whose connection closed inside the head
     * without an error, with the head lines it had: not a response. */
    if (x->in_head)
        xfer_fail(x, SIEVE_OUTCOME_NETWORK, "the connection closed inside the response head");
    else if (x->dec != NULL && !decoder_complete(x->dec))
        xfer_fail(x, SIEVE_OUTCOME_TRUNCATED, "compressed body cut short");
}

/* curl 7.88 reports a body whose chunked framing is broken as a receive
 * error, like a lost connection; its message ends so. Out of memory is
 * its trailer past the bytes curl keeps of it, its one allocation there. */
sieve_crawl_outcome xfer_chunk_outcome(const xfer *x, CURLcode result)
{
    static const char tail[] = " in chunked-encoding";
    size_t n = strlen(x->errbuf), t = sizeof tail - 1;
    if (result != CURLE_RECV_ERROR || n <= t || strcmp(x->errbuf + n - t, tail) != 0)
        return SIEVE_OUTCOME_OK;
    return strncmp(x->errbuf, "Out of memory", 13) == 0 ? SIEVE_OUTCOME_TOO_LARGE
                                                        : SIEVE_OUTCOME_PROTOCOL;
}

const char *xfer_error(const xfer *x, CURLcode result)
{
    if (x->fail != NULL)
        return x->fail;
    if (wire_head_line_too_long(x, result))
        return "a response head line longer than 102400 bytes";
    if (xfer_chunk_outcome(x, result) == SIEVE_OUTCOME_TOO_LARGE)
        return "a chunked trailer longer than curl takes";
    if (result != CURLE_OK)
        return x->errbuf[0] != '\0' ? x->errbuf : curl_easy_strerror(result);
    return NULL;
}

bool xfer_pass_body(xfer *x, const char *data, size_t n)
{
    sieve_crawler *c = x->c;
    sieve_crawl_body b = {
        .url = x->url,
        .status = x->status,
        .content_type = x->content_type,
        .data = data,
        .len = n,
        .offset = x->bytes,
    };
    if (c->cb.on_body(c->ud, &b) == SIEVE_OK)
        return true;
    xfer_fail(x, SIEVE_OUTCOME_STOPPED, "stopped by the body callback");
    return false;
}

bool xfer_is_redirect(long status)
{
    return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

/* A redirect: its target is queued like a link, one hop further. Returns
 * an error for the record, or NULL with the target in x->final_url. */
static const char *follow_redirect(xfer *x)
{
    sieve_crawler *c = x->c;
    char *loc = NULL;
    curl_easy_getinfo(x->easy, CURLINFO_REDIRECT_URL, &loc);
    if (loc == NULL && x->location_len == SIZE_MAX)
        return "URL too long";
    if (loc == NULL && x->location_len > 0)
        loc = x->location; /* curl keeps none after a body that failed */
    if (loc == NULL)
        return "redirect without a Location header";
    sieve_canon_info info;
    int rc = sieve_canon_url(c->canon, x->url, loc, strlen(loc), x->final_url, sizeof x->final_url,
                             &info);
    if (rc != SIEVE_OK)
        return sieve_strerror(rc);
    if (x->hops + 1 > c->o.max_redirects)
        return "too many redirects";
    char via[SIEVE_URL_DATA_MAX];
    size_t via_len = via_redirect(&x->popped, via);
    x->links_found = 1; /* a redirect's one link: links_new counts it if queued */
    outlinks_offer(x, x->final_url, &info,
                   tag_make(x->depth, x->hops + 1, x->kind == &xfer_sitemap), 0, via, via_len);
    return NULL;
}

/* A fetch ended with outcome: an answer forgives the host its failures;
 * a failure that may pass counts against the host, which rests if it must
 * (backoff.c). Returns whether the URL is to be tried again; *host_rests
 * says whether the host was paused. */
static bool host_verdict(xfer *x, sieve_crawl_outcome outcome, bool *host_rests)
{
    sieve_crawler *c = x->c;
    url_parts p = url_split(x->url);
    const char *host = x->url + p.auth_off;
    *host_rests = false;
    if (!backoff_retryable(outcome, x->status)) {
        backoff_succeeded(c->backoff, host, p.auth_len);
        return false;
    }
    curl_off_t after = 0;
    if (x->status > 0)
        curl_easy_getinfo(x->easy, CURLINFO_RETRY_AFTER, &after);
    double rest = backoff_host_failed(c->backoff, host, p.auth_len, x->status, (double)after);
    if (rest > 0)
        *host_rests = sieve_frontier_pause_host(c->frontier, host, p.auth_len, rest) == SIEVE_OK;
    return x->retries < c->o.retries && atomic_load(&c->stops) == 0;
}

/* Gives the URL back with one more retry counted in its tag, and its
 * max_pages reservation with it (a URL tried again counts once): in front
 * of its resting host's queue, or else to wait off its host for its own
 * backoff while the host's other URLs go on. */
static bool give_back_for_retry(xfer *x, bool host_rests)
{
    sieve_crawler *c = x->c;
    sieve_url u = x->popped;
    u.depth = tag_with_retries(u.depth, x->retries + 1);
    int rc = host_rests ? sieve_frontier_requeue(c->frontier, &u)
                        : sieve_frontier_retry_later(c->frontier, &u,
                                                     backoff_url_wait(c->backoff, x->retries + 1));
    if (rc != SIEVE_OK)
        return false;
    atomic_fetch_add(&c->n.retries, 1);
    atomic_fetch_sub(&c->n.started, 1);
    if (c->o.max_pages > 0)
        atomic_fetch_sub(&c->n.reserved, 1);
    return true;
}

/* A redirect whose head came whole but whose body did not (cut short,
 * corrupt, in a coding we do not read): the body of a redirect is no
 * part of it, so the redirect stands. */
static bool only_body_failed(const xfer *x, sieve_crawl_outcome outcome)
{
    return xfer_is_redirect(x->status) && !x->in_head &&
           (outcome == SIEVE_OUTCOME_TRUNCATED || outcome == SIEVE_OUTCOME_ENCODING ||
            outcome == SIEVE_OUTCOME_NETWORK || outcome == SIEVE_OUTCOME_TIMEOUT);
}

void xfer_end_fetch(xfer *x, CURLcode result)
{
    sieve_crawler *c = x->c;
    if (!x->begun)
        xfer_read_headers(x);
    const char *error = xfer_error(x, result);
    sieve_crawl_outcome outcome = xfer_outcome(x, result, error);
    if (error != NULL && only_body_failed(x, outcome)) {
        error = NULL;
        outcome = SIEVE_OUTCOME_OK;
    }
    const char *final_url = x->url;
    if (error == NULL && xfer_is_redirect(x->status)) {
        error = follow_redirect(x);
        if (error == NULL)
            final_url = x->final_url;
        else
            outcome = SIEVE_OUTCOME_REDIRECT;
    }
    if (error == NULL && x->parse_rc != SIEVE_OK) {
        error = sieve_strerror(x->parse_rc);
        outcome = SIEVE_OUTCOME_PARSE;
    }
    /* A page is done only after its links are pushed and its record is
     * out: a crawl judged over by the frontier has nothing left behind.
     * A fetch tried again has no record; the links it found stand. */
    outlinks_flush(x);
    bool host_rests;
    x->t.retried = host_verdict(x, outcome, &host_rests);
    wire_end(x, result, false);
    if (x->t.retried && give_back_for_retry(x, host_rests)) {
        xfer_release(x);
        return;
    }
    if (x->hold != NULL)
        hold_keep(x, final_url, error, outcome);
    else if (xfer_record(x, final_url, error, outcome) && !x->links_lost)
        engine_done(c, &x->popped);
    xfer_release(x);
}
