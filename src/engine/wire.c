/* wire.c - each transfer as it went over the network, for the embedder's
 * wire callbacks (sieve/crawl.h): the request head as sent, the response
 * head lines and the body as received, and the transfer's end.
 *
 * Where curl shows them: the request head only through its debug
 * callback (CURLINFO_HEADER_OUT), which needs CURLOPT_VERBOSE, so both are
 * set only for an embedder that asked for on_request; the response head
 * through the header callback, which the engine always sets since it
 * reads Content-Encoding there; the body through the write callback
 * (xfer.c), raw because curl is told not to decode (decode.c says why).
 * Proxy tunnels are not the fetch's: a CONNECT request is not handed on,
 * and curl keeps the proxy's answer to itself
 * (CURLOPT_SUPPRESS_CONNECT_HEADERS).
 *
 * Every transfer that starts gets an id, and exactly one on_transfer_end:
 * from the kind's finish, or from xfer_release() for a transfer dropped
 * by an abort, so an embedder's per-transfer state is always released. */
#include <string.h>
#include <strings.h>
#include <time.h>

#include "worker.h"
#include "xfer.h"

/* Stops the transfer after a wire callback refused. */
static bool refused(xfer *x, int rc)
{
    if (rc == SIEVE_OK)
        return false;
    xfer_fail(x, SIEVE_OUTCOME_STOPPED, "stopped by a wire callback");
    return true;
}

static void read_ip(xfer *x)
{
    char *ip = NULL;
    curl_easy_getinfo(x->easy, CURLINFO_PRIMARY_IP, &ip);
    if (ip != NULL && ip[0] != '\0' && strlen(ip) < sizeof x->ip) {
        strcpy(x->ip, ip);
        x->t.remote_ip = x->ip;
    }
}

static int on_debug(CURL *e, curl_infotype type, char *data, size_t n, void *ud)
{
    (void)e;
    xfer *x = ud;
    if (type != CURLINFO_HEADER_OUT || x->fail != NULL)
        return 0;
    if (n >= 8 && memcmp(data, "CONNECT ", 8) == 0)
        return 0; /* the proxy tunnel's request */
    read_ip(x);
    /* Curl ignores what this returns: a refusal stops the transfer at
     * its next header or body byte, which see x->fail. */
    refused(x, x->c->cb.on_request(x->c->ud, &x->t, data, n));
    return 0;
}

#define TEXT_OF(n)         #n
#define TEXT(n)            TEXT_OF(n)
#define WIRE_HEAD_MAX_TEXT TEXT(WIRE_HEAD_MAX)

static bool starts_with(const char *s, size_t n, const char *prefix)
{
    size_t p = strlen(prefix);
    return n >= p && strncasecmp(s, prefix, p) == 0;
}

/* At the end of a head: a status curl takes but HTTP has not (600 to
 * 999), or a switch of protocols the crawler never asks for (curl then
 * reads the new protocol's bytes as the body), fails the transfer. */
static bool head_status_valid(xfer *x)
{
    long code = 0;
    curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &code);
    if (code == 101)
        xfer_fail(x, SIEVE_OUTCOME_PROTOCOL, "a switch of protocols (101) not asked for");
    else if (code > 599)
        xfer_fail(x, SIEVE_OUTCOME_PROTOCOL, "a status past 599, which HTTP does not define");
    return x->fail == NULL;
}

/* Keeps a Location header's value, blanks and line end trimmed. */
static void keep_location(xfer *x, const char *v, size_t n)
{
    while (n > 0 && (*v == ' ' || *v == '\t'))
        v++, n--;
    while (n > 0 && (v[n - 1] == '\r' || v[n - 1] == '\n' || v[n - 1] == ' ' || v[n - 1] == '\t'))
        n--;
    if (n > SIEVE_URL_MAX) {
        x->location_len = SIZE_MAX;
        return;
    }
    memcpy(x->location, v, n);
    x->location[n] = '\0';
    x->location_len = n;
}

/* A Content-Length curl would take but RFC 9112 refuses: past 2^63 - 1
 * (curl 7.88 then reads to the end of the connection and calls the
 * body whole), or a second one that differs from the first (curl takes
 * the last). Its digits alone; curl refuses the rest itself. */
static bool length_valid(xfer *x, const char *v, size_t n)
{
    while (n > 0 && (*v == ' ' || *v == '\t'))
        v++, n--;
    int64_t len = 0;
    for (; n > 0 && *v >= '0' && *v <= '9'; v++, n--) {
        if (len > (INT64_MAX - 9) / 10) {
            xfer_fail(x, SIEVE_OUTCOME_PROTOCOL, "a Content-Length past 2^63 - 1");
            return false;
        }
        len = len * 10 + (*v - '0');
    }
    if (x->head_length >= 0 && x->head_length != len) {
        xfer_fail(x, SIEVE_OUTCOME_PROTOCOL, "two Content-Length headers that differ");
        return false;
    }
    x->head_length = len;
    return true;
}

/* Transfer codings other than chunked (gzip, compress, ...): curl
 * passes them through undone, and the coded bytes would be taken for the
 * body. The engine asks for none (no TE header). */
static bool coding_chunked(xfer *x, const char *v, size_t n)
{
    for (size_t i = 0; i < n;) {
        while (i < n &&
               (v[i] == ' ' || v[i] == '\t' || v[i] == ',' || v[i] == '\r' || v[i] == '\n'))
            i++;
        size_t start = i;
        while (i < n && v[i] != ',' && v[i] != ' ' && v[i] != '\t' && v[i] != '\r' && v[i] != '\n')
            i++;
        if (i > start && !(i - start == 7 && strncasecmp(v + start, "chunked", 7) == 0)) {
            xfer_fail(x, SIEVE_OUTCOME_ENCODING, "transfer coding not supported (not chunked)");
            return false;
        }
    }
    return true;
}

/* Each header line: the content coding is read here, and the line goes to
 * the embedder. A status line starts a new response (after a 1xx); the
 * blank line ends it. curl hands the trailer fields of a chunked body to
 * this callback too, after the body: they are no part of the head (an
 * archive stores the head before the body), so they stop here.
 *
 * A head is cut at WIRE_HEAD_MAX, below curl's own total (300 KiB in
 * curl 7.88), whose error curl reports as a receive error like any
 * broken connection: a server that sends an endless head is then said to
 * be too large, and is not asked again. */
static size_t on_header(char *data, size_t size, size_t nmemb, void *ud)
{
    xfer *x = ud;
    size_t n = size * nmemb;
    if (x->fail != NULL)
        return 0;
    bool status_line = starts_with(data, n, "HTTP/");
    if ((x->in_head || status_line) && (x->head_bytes += n) > WIRE_HEAD_MAX) {
        xfer_fail(x, SIEVE_OUTCOME_TOO_LARGE,
                  "response head larger than " WIRE_HEAD_MAX_TEXT " bytes");
        return 0;
    }
    if (status_line) {
        x->coding = DECODE_IDENTITY;
        x->in_head = true;
        x->location_len = 0;
        x->head_length = -1;
    } else if (!x->in_head) {
        return n; /* a trailer */
    } else if (data[0] == '\r' || data[0] == '\n') {
        x->in_head = false; /* the blank line, passed on below */
        if (!head_status_valid(x))
            return 0;
    } else if (starts_with(data, n, "content-encoding:")) {
        x->coding = decode_coding_add(x->coding, data + 17, n - 17);
    } else if (starts_with(data, n, "location:")) {
        keep_location(x, data + 9, n - 9);
    } else if ((starts_with(data, n, "content-length:") && !length_valid(x, data + 15, n - 15)) ||
               (starts_with(data, n, "transfer-encoding:") &&
                !coding_chunked(x, data + 18, n - 18))) {
        return 0;
    }
    const sieve_crawl_callbacks *cb = &x->c->cb;
    if (cb->on_response_head != NULL && refused(x, cb->on_response_head(x->c->ud, &x->t, data, n)))
        return 0;
    return n;
}

/* Before the head's blank line, or before its first line came whole: the
 * one place curl 7.88 runs out of memory that a server controls. */
bool wire_head_line_too_long(const xfer *x, CURLcode result)
{
    return result == CURLE_OUT_OF_MEMORY && (x->in_head || x->head_bytes == 0);
}

void wire_setup(xfer *x)
{
    CURL *e = x->easy;
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(e, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1L);
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, DECODE_ACCEPT);
    curl_easy_setopt(e, CURLOPT_HTTP_CONTENT_DECODING, 0L);
    if (x->c->cb.on_request != NULL) {
        curl_easy_setopt(e, CURLOPT_DEBUGFUNCTION, on_debug);
        curl_easy_setopt(e, CURLOPT_DEBUGDATA, x);
        curl_easy_setopt(e, CURLOPT_VERBOSE, 1L);
    }
}

static int64_t wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void wire_start(xfer *x)
{
    sieve_crawler *c = x->c;
    x->t = (sieve_crawl_transfer){
        .id = atomic_fetch_add(&c->n.transfers, 1) + 1,
        .url = x->url,
        .worker = x->w->index,
        .kind = x->kind == &xfer_robots    ? SIEVE_FETCH_ROBOTS
                : x->kind == &xfer_sitemap ? SIEVE_FETCH_SITEMAP
                                           : SIEVE_FETCH_PAGE,
        .started_us = wall_us(),
    };
    x->wire_ended = false;
    x->coding = DECODE_IDENTITY;
    x->in_head = false;
    x->head_bytes = 0;
    x->location_len = 0;
    x->head_length = -1;
    x->dec = NULL;
    x->digest[0] = '\0';
    x->ip[0] = '\0';
    /* without one (not asked for, or out of memory) the record has none */
    x->body_digest.running = false;
    if (c->o.payload_digest)
        sieve_sha1_start(&x->body_digest);
}

bool wire_body(xfer *x, const char *data, size_t n)
{
    sieve_sha1_add(&x->body_digest, data, n);
    x->t.wire_bytes += n;
    const sieve_crawl_callbacks *cb = &x->c->cb;
    return cb->on_response_body == NULL ||
           !refused(x, cb->on_response_body(x->c->ud, &x->t, data, n));
}

/* Why the body did not come whole, as WARC-Truncated says it; NULL when
 * it did (or when no response came, so there is no body to cut). */
static const char *truncation(const xfer *x, CURLcode result)
{
    if (x->status == 0)
        return NULL;
    if (x->fail_outcome == SIEVE_OUTCOME_TOO_LARGE || wire_head_line_too_long(x, result))
        return "length"; /* a head past its limit */
    switch (result) {
    case CURLE_OK: /* the connection closed in the head, or in a compressed body */
        return x->in_head || (x->dec != NULL && !decoder_complete(x->dec)) ? "disconnect" : NULL;
    case CURLE_WRITE_ERROR:
        return x->cut_length ? "length" : "unspecified"; /* we stopped it */
    case CURLE_OPERATION_TIMEDOUT:
        return "time";
    case CURLE_ABORTED_BY_CALLBACK:
        return "unspecified";
    default:
        return "disconnect";
    }
}

void wire_end(xfer *x, CURLcode result, bool aborted)
{
    if (x->wire_ended)
        return;
    x->wire_ended = true;
    if (x->t.remote_ip == NULL)
        read_ip(x);
    if (x->status == 0)
        curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &x->status);
    x->t.truncated = truncation(x, result);
    x->t.aborted = aborted;
    x->t.has_record = !aborted && !x->t.retried && x->kind != &xfer_robots;
    if (x->body_digest.running)
        sieve_sha1_end(&x->body_digest, x->digest);
    if (x->c->cb.on_transfer_end != NULL) {
        x->in_transfer_end = true;
        x->c->cb.on_transfer_end(x->c->ud, &x->t);
        x->in_transfer_end = false;
    }
}
