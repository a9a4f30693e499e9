/* xfer.h - one transfer slot of a worker, and the kinds of transfer.
 *
 * A worker owns a fixed set of slots, each with its curl easy handle
 * made once (connection reuse, and no per-URL setup). What a transfer
 * does with its response depends on what it fetches, and that is its
 * kind: a table of three functions, as curl has one handler table per
 * protocol. The worker knows only the table:
 *
 *   begin   the response's headers are in (first body byte, or the end of
 *           a response without one): decide how to read the body;
 *   body    a chunk of the decoded body: return n to go on, 0 to stop
 *           (the reason in x->fail);
 *   finish  the transfer ended with result: record it, push what it found,
 *           and release the slot with xfer_release().
 *
 * Kinds: page (fetch-page.c) parses HTML and follows redirects through the
 * frontier; robots (fetch-robots.c) keeps robots.txt whole and admits the
 * page that waited for it; sitemap (fetch-sitemap.c) streams entries. */
#ifndef SIEVE_XFER_H
#define SIEVE_XFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>

#include "decode.h"
#include "engine.h"
#include "sieve/links.h"
#include "sha1.h"
#include "sieve/sitemap.h"

typedef struct worker worker;
typedef struct xfer xfer;

typedef struct xfer_kind {
    const char *name;
    void (*begin)(xfer *x);
    size_t (*body)(xfer *x, const char *data, size_t n);
    void (*finish)(xfer *x, CURLcode result);
} xfer_kind;

extern const xfer_kind xfer_page, xfer_robots, xfer_sitemap;

/* Links found by a transfer wait here and go to the frontier in batches:
 * one lock per batch instead of one per link. */
#define OUTLINK_BATCH 64
#define OUTLINK_STORE ((SIEVE_URL_MAX + 1) * 4)

struct xfer {
    worker *w;
    sieve_crawler *c;
    CURL *easy;
    const xfer_kind *kind;
    bool busy;
    bool robots_slot; /* one of the worker's robots.txt slots */
    char url[SIEVE_URL_MAX + 1];
    sieve_url popped;             /* as the frontier gave it, for done(); its data in via */
    char via[SIEVE_URL_DATA_MAX]; /* where the URL came from (via.h) */
    uint32_t depth, hops;
    unsigned retries; /* made before this transfer: its record's attempts - 1 */
    double started;   /* clock_now() at the start */
    char errbuf[CURL_ERROR_SIZE];
    const char *fail;                 /* our own reason for stopping it, if any (xfer_fail()) */
    sieve_crawl_outcome fail_outcome; /* and what kind of failure that is */
    bool cut_length;                  /* a kind stopped the body at its byte limit */
    bool begun;                       /* kind->begin() has run */
    long status;
    const char *content_type; /* curl's, valid until the slot is reused */
    int parse_rc;
    uint64_t bytes;
    uint64_t links_found, links_new;
    bool links_lost;                   /* a push failed: the page may not be reported done */
    char final_url[SIEVE_URL_MAX + 1]; /* a redirect's target */

    /* the wire (wire.c): the transfer as the embedder's wire callbacks see
     * it, and the body's content coding, undone here for the kinds */
    sieve_crawl_transfer t;
    bool wire_ended;        /* on_transfer_end has been called */
    bool in_transfer_end;   /* on_transfer_end is running: a hold may be taken */
    sieve_crawl_hold *hold; /* the embedder holds the record back (hold.c) */
    decode_coding coding;   /* of the response, from its Content-Encoding */
    bool in_head;           /* between a status line and its blank line */
    size_t head_bytes;      /* response head bytes so far, 1xx heads included */
    /* the head's Location as sent, for a redirect whose body failed: curl
     * gives its own only for a transfer that ended well */
    char location[SIEVE_URL_MAX + 1];
    size_t location_len;    /* SIZE_MAX: longer than a URL may be */
    int64_t head_length;    /* the head's Content-Length; -1: none yet */
    decoder *dec;           /* NULL: identity, or no body yet */
    sieve_sha1 body_digest; /* of the body as received */
    char digest[SIEVE_SHA1_TEXT_SIZE];
    char ip[48];

    /* the kinds' own state */
    sieve_links *lx;        /* page: the HTML link extractor, for 2xx HTML */
    bool lx_header_only;    /* page: lx reads a Refresh header, not the body */
    sieve_links_memo *memo; /* the worker's: links already pushed (may be NULL) */
    bool pass_body;         /* page, sitemap: bytes go to the body callback */
    sieve_sitemap *sm;      /* sitemap: its parser */
    char *body;             /* robots: the file, kept whole up to the parser's limit */
    size_t body_len;
    sieve_url waiting; /* robots: the page that waits for it */
    char waiting_url[SIEVE_URL_MAX + 1];
    char waiting_via[SIEVE_URL_DATA_MAX];

    /* links waiting to be pushed, their text and data packed in store */
    sieve_url batch[OUTLINK_BATCH];
    uint64_t batch_key[OUTLINK_BATCH]; /* their memo keys, 0 for none */
    size_t nbatch, store_used;
    const void *via_from; /* what the data of the batch's last link was copied from */
    char store[OUTLINK_STORE];
};

/* Makes the slot's curl handle, with the options every transfer shares. */
int xfer_setup(xfer *x);

/* Starts slot x fetching x->url as kind; the caller has filled x->url and
 * the tag fields. On a failure to start, finishes it at once. */
void xfer_start(xfer *x, const xfer_kind *kind);

/* Frees the slot for another transfer. */
void xfer_release(xfer *x);

/* Sets x->status and x->content_type from curl, once. */
void xfer_read_headers(xfer *x);

/* The record of a finished URL goes to the embedder: see record.c. error
 * NULL means it was fetched whole. Returns false if the embedder could not
 * keep it (the crawl is failing then). */
bool xfer_record(xfer *x, const char *final_url, const char *error, sieve_crawl_outcome outcome);

/* record.c: x's record, as xfer_record() would hand it over, pointing
 * into the slot; counts what the transfer found. */
void xfer_record_make(xfer *x, const char *final_url, const char *error,
                      sieve_crawl_outcome outcome, sieve_crawl_record *r);

/* record.c: counts a record and hands it to on_record; false as for
 * xfer_record(). */
bool record_deliver(sieve_crawler *c, const sieve_crawl_record *r);

/* The slot whose transfer t is (t is always a slot's). */
static inline xfer *xfer_of_transfer(sieve_crawl_transfer *t)
{
    return (xfer *)(void *)((char *)t - offsetof(xfer, t));
}

/* Ends a page or sitemap fetch: follows a redirect, pushes the links,
 * writes the record, tells the frontier the URL is done and frees the
 * slot, in that order. If a push or the record failed, the URL is not
 * reported done: a resume fetches it again. */
void xfer_end_fetch(xfer *x, CURLcode result);

/* Whether status is a redirect the crawl follows (301, 302, 303, 307, 308). */
bool xfer_is_redirect(long status);

/* The error text of a transfer that ended with result, or NULL. */
const char *xfer_error(const xfer *x, CURLcode result);

/* Stops the transfer for a reason of our own: why for the record, and
 * the kind of failure it is. */
void xfer_fail(xfer *x, sieve_crawl_outcome outcome, const char *why);

/* The first thing each kind's finish does: a compressed body whose stream
 * did not end is a truncated body, even when curl saw the transfer end
 * cleanly (the kind must not take it for a complete one). */
void xfer_body_end(xfer *x, CURLcode result);

/* What a failure (result from curl) in a body's chunked framing is: not
 * valid HTTP (protocol) or a trailer too long (too_large), neither a
 * network failure to try again; SIEVE_OUTCOME_OK if it is none. */
sieve_crawl_outcome xfer_chunk_outcome(const xfer *x, CURLcode result);

/* wire.c: the most response head bytes a transfer takes (1xx heads
 * included); more, and it fails as too large. */
#define WIRE_HEAD_MAX 262144

/* wire.c: whether a failure (result from curl) is curl refusing a head
 * line longer than it buffers (100 KiB), which curl 7.88 reports as out
 * of memory: the head is then too large, like one past WIRE_HEAD_MAX. */
bool wire_head_line_too_long(const xfer *x, CURLcode result);

/* wire.c: the slot's curl options for the wire callbacks and decoding. */
void wire_setup(xfer *x);

/* wire.c: a new transfer: its identity, its digest. */
void wire_start(xfer *x);

/* wire.c: a chunk of the body as received: digested, counted, handed to
 * on_response_body. False (with x->fail set) when the callback refused. */
bool wire_body(xfer *x, const char *data, size_t n);

/* wire.c: the transfer is over (result from curl): sets what the
 * transfer's end tells and calls on_transfer_end, once. aborted: no record
 * follows, the transfer was cut by stop() or a failure. */
void wire_end(xfer *x, CURLcode result, bool aborted);

/* record.c: the outcome of a record whose error is error (NULL: none). */
sieve_crawl_outcome xfer_outcome(const xfer *x, CURLcode result, const char *error);

/* Hands a chunk of a 2xx body to the embedder's body callback; returns
 * false (with x->fail set) when the callback asks to stop. */
bool xfer_pass_body(xfer *x, const char *data, size_t n);

/* outlinks.c: queues a canonical URL found by x with its frontier tag and
 * its data (via.h: where it came from, via_len bytes) if the scope and the
 * link filter take it; returns whether it was queued. The URL reaches the
 * frontier with the next outlinks_flush(), and then its memo key
 * (sieve/links.h; 0 for none) goes into the worker's memo. */
bool outlinks_offer(xfer *x, const char *url, const sieve_canon_info *info, uint32_t tag,
                    uint64_t key, const void *via, size_t via_len);

/* Pushes the URLs x has queued. */
void outlinks_flush(xfer *x);

/* fetch-sitemap.c: a robots.txt at robots_url listed these sitemaps. */
void sitemaps_seed(sieve_crawler *c, const char *robots_url, const sieve_robots *rules);

#endif
