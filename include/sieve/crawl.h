/* sieve/crawl.h - the crawl engine: seeds in, pages and records out.
 *
 * A sieve_crawler fetches the web from its seeds: `workers` threads each
 * drive up to `concurrency` transfers through one curl multi handle, take
 * URLs from a frontier with per-host scheduling, pass each URL's host
 * through its robots.txt, parse HTML while it streams in, and push every
 * link that the scope (and the embedder's link filter) accepts. Every
 * fetched URL ends in one record, handed to the on_record callback.
 *
 *     sieve_crawl_options o;
 *     sieve_crawl_options_init(&o);
 *     o.delay_s = 0;                     // a web of one's own
 *     sieve_crawler *c;
 *     if (sieve_crawler_new(&c, &o) == SIEVE_OK) {
 *         sieve_crawl_callbacks cb = {.on_record = print_record};
 *         sieve_crawler_set_callbacks(c, &cb, NULL);
 *         sieve_crawler_add_seed(c, "http://127.0.0.1:8080/", SIZE_MAX);
 *         int rc = sieve_crawler_run(c);  // blocks until the crawl ends
 *         sieve_crawler_free(c);
 *     }
 *
 * Threads. run() blocks the calling thread and starts the worker threads;
 * every callback is called on a worker thread, several at once when there
 * are several workers, so callbacks must be thread-safe. A callback holds
 * up the other transfers of its worker while it runs: a slow one slows
 * the crawl, never corrupts it. From inside a callback only stop(),
 * stats_get() and the callback's own arguments may be used.
 *
 * Bodies. The engine asks for gzip or deflate (Accept-Encoding: gzip,
 * deflate) and decodes them itself with zlib, so that the wire callbacks
 * get each body as the server sent it and everything else - on_body, link
 * extraction, max_page_bytes, the record's bytes - gets it decoded. A
 * body in another content coding (br, zstd: sent only by a server that
 * ignores Accept-Encoding) is not read; its outcome is
 * SIEVE_OUTCOME_ENCODING. A compressed stream that stops before its end
 * is a truncated body whatever the connection said, and the links of the
 * element it stopped in are never used.
 *
 * Errors. Functions return SIEVE_OK or a negative SIEVE_E* status
 * (sieve/status.h); the sentence that says what was wrong goes to the
 * logger given in the options. The engine never prints, never exits and
 * keeps no global state besides libcurl's and libxml2's, which
 * sieve_crawler_new() initializes once per process.
 *
 * Two crawlers in one process are independent. */
#ifndef SIEVE_CRAWL_H
#define SIEVE_CRAWL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sieve/export.h"
#include "sieve/frontier.h"
#include "sieve/log.h"
#include "sieve/seen.h"
#include "sieve/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sieve_crawler sieve_crawler;

/* The most worker threads a crawl may have. */
#define SIEVE_CRAWL_MAX_WORKERS 256

/* Which links the crawl follows, by their origin. */
typedef enum sieve_scope {
    SIEVE_SCOPE_HOST = 0,   /* the seeds' origins: scheme, host and port */
    SIEVE_SCOPE_DOMAIN = 1, /* the seeds' registrable domains (public suffix list) */
    SIEVE_SCOPE_ANY = 2,    /* anywhere */
} sieve_scope;

/* Every setting of a crawl. sieve_crawl_options_init() fills the defaults
 * named here; strings and arrays are copied by sieve_crawler_new(). */
typedef struct sieve_crawl_options {
    /* Fetching */
    unsigned workers;           /* threads; default: number of cores
                                   (1 .. SIEVE_CRAWL_MAX_WORKERS) */
    unsigned concurrency;       /* transfers per worker; default 32 (1 .. 4096).
                                   Besides them, each worker fetches up to
                                   16x as many robots.txt files (256 at most)
                                   of hosts met for the first time */
    unsigned max_redirects;     /* redirect hops followed from a URL; default 10 */
    double connect_timeout_s;   /* default 10 */
    double timeout_s;           /* one whole transfer; default 60 */
    long low_speed_bytes;       /* abort a transfer slower than this many bytes/s ... */
    long low_speed_time_s;      /* ... for this long; default 100 B/s for 15 s */
    uint64_t max_page_bytes;    /* body bytes kept per page, decompressed; default 10 MiB */
    const char *user_agent;     /* default "sieve/VERSION (web crawler)" */
    const char *const *headers; /* extra request headers, "Name: value"; default none */
    size_t n_headers;
    const char *proxy;       /* proxy URL; NULL: libcurl's proxy environment variables */
    const char *cookie_file; /* cookies read at the start (Netscape format); default none */
    const char *cookie_jar;  /* cookies written at the end (Netscape format); default none */
    const char *user;        /* "user:password" sent to the seeds' origins only */
    bool netrc;              /* credentials from a .netrc file, per host */
    const char *netrc_file;  /* NULL: ~/.netrc */
    double stop_grace_s;     /* after stop(), transfers in flight get this long; default 5 */
    double dns_ttl_s;        /* a resolved host name is used this long, in whole seconds
                              * rounded up, then looked up again; default 60 */
    /* Retries: a fetch that found no server, timed out, lost its
     * connection midway or got 429, 500, 502, 503 or 504 is tried again, up to retries
     * more times (0 .. 7), after retry_wait_s doubled with each retry,
     * with jitter; it waits off its host, whose other URLs go on. The
     * whole host rests when it asks to (429, 503: its Retry-After, else
     * the same doubling pause) or fails 3 times in a row, longer with
     * each further failure, its URLs kept. Every wait is capped at
     * retry_max_wait_s. A robots.txt that could not be had is tried
     * again the same way, its host's URLs waiting (RFC 9309: it allows
     * nothing meanwhile); once its tries are spent, the host's URLs are
     * refused for a minute, each record naming the cause. */
    unsigned retries;        /* default 3 */
    double retry_wait_s;     /* default 2 */
    double retry_max_wait_s; /* default 600; a retry_wait_s above it is cut to it */

    /* Politeness */
    unsigned host_connections; /* a host's transfers at once; 0: no limit, no delay; default 2 */
    double delay_s;            /* between two request starts to a host; default 1 */
    double max_crawl_delay_s;  /* cap on a robots.txt Crawl-delay; default 30 */
    bool ignore_robots;        /* neither fetch nor obey robots.txt; default false */
    double robots_expiry_s;    /* a robots.txt is kept this long; default 86400 */
    uint64_t robots_memory;    /* the most bytes hosts' robots.txt rules take; past it
                                  those used least recently are dropped, and fetched
                                  again if needed; 0: no limit; default 32 MiB */
    bool sitemaps;             /* seed hosts from robots.txt Sitemap lines; default true */
    uint64_t max_sitemaps;     /* sitemap files queued in a crawl; default 10000 */

    /* Links and scope */
    bool follow_nofollow; /* follow rel="nofollow" links too; default false */
    /* A host that resolves to a loopback, private (RFC 1918, fc00::/7),
     * link-local (169.254/16, fe80::/10) or unspecified address is not
     * connected to, and its record's outcome is "blocked", unless a seed
     * names that host or allow_private is set (a web of one's own spread
     * over several local hosts). Not checked through a proxy. */
    bool allow_private;
    sieve_scope scope;        /* default SIEVE_SCOPE_HOST */
    const char *const *allow; /* POSIX extended regexes: follow only URLs matching one */
    size_t n_allow;
    const char *const *deny; /* follow no URL matching one */
    size_t n_deny;
    /* Suffixes (".pdf") or content types ("image/png", or "image/" and a
     * '*' for every image type). A link
     * whose path ends in a rejected suffix is not queued; a response of a
     * rejected type is stopped after its headers. With accept, the same
     * holds for what is not accepted, except that HTML is always fetched
     * and parsed so the crawl can go on through it (as wget does). */
    const char *const *accept;
    size_t n_accept;
    const char *const *reject;
    size_t n_reject;
    long max_depth;                  /* links followed from a seed; -1 (default): no limit */
    uint64_t max_pages;              /* fetches in the crawl; 0 (default): no limit */
    uint64_t max_pages_per_host;     /* URLs queued per host; 0 (default): no limit */
    const char *const *strip_params; /* query parameters dropped ('*' wildcards) */
    size_t n_strip_params;
    bool sort_query;       /* sort query parameters by name; default false */
    size_t max_url_len;    /* trap guard: longest URL followed; default 2048, at most
                              SIEVE_URL_MAX (sieve/frontier.h) */
    unsigned max_segments; /* trap guard: most path segments; default 20 */
    unsigned max_repeat;   /* trap guard: most equal segments in a row; default 2 */

    /* Frontier */
    sieve_seen_config seen; /* the seen-set; defaults of sieve_seen_config_init() */

    /* Durable state (sieve_frontier_open): the frontier's journal lives in
     * state_dir, so a crawl killed at any instant resumes from it with
     * the same options (the seeds given again are added), and only the
     * URLs in flight at the kill are fetched twice. Options that change
     * what the state means (the seen-set, scope, allow, deny, max_depth,
     * the URL rules) must be those it was made with. */
    const char *state_dir;        /* NULL (default): the frontier lives in memory */
    uint64_t queue_memory;        /* the most bytes of queued URLs in memory (each
                                     URL's length plus 8); the rest waits on disk,
                                     in state_dir or else in a temporary directory
                                     removed at the end; 0: no limit; default 64 MiB */
    double checkpoint_interval_s; /* seconds between two syncs of the state and
                                     the outputs (on_sync); default 10 */
    uint64_t checkpoint_bytes;    /* journal growth that makes a sync also write
                                     the state's checkpoint (the seen-set and the
                                     queue in memory), so that a resume need not
                                     read the journal before it; 0 (default): as
                                     much as the checkpoint takes, at least 1 MiB */

    /* Records: each record's payload_digest is the SHA-1 of its body as
     * received, computed as the body streams in; default true. An
     * embedder that archives the bodies gets the same digest from its
     * archive, and may spare the crawl this second pass. */
    bool payload_digest;

    sieve_logger logger; /* where the engine's messages go; default: dropped */
} sieve_crawl_options;

/* What a record or a transfer is about. */
typedef enum sieve_fetch_kind {
    SIEVE_FETCH_PAGE = 0,    /* a page (any URL found by a link, a redirect or a seed) */
    SIEVE_FETCH_SITEMAP = 1, /* a sitemap a robots.txt or a sitemap index named */
    SIEVE_FETCH_ROBOTS = 2,  /* a robots.txt, or one hop of its redirects: transfers
                                only, never in a record */
} sieve_fetch_kind;

/* How a record's URL ended: "ok" or the kind of failure, so that a
 * consumer can count failures without reading the error texts.
 * sieve_crawl_outcome_name() gives the word `sieve crawl` writes. */
typedef enum sieve_crawl_outcome {
    SIEVE_OUTCOME_OK = 0,    /* "ok": a response came whole (1xx, 2xx, 3xx) */
    SIEVE_OUTCOME_HTTP_4XX,  /* "http_4xx": a 4xx response, read whole */
    SIEVE_OUTCOME_HTTP_5XX,  /* "http_5xx": a 5xx response, read whole */
    SIEVE_OUTCOME_DNS,       /* "dns": the host (or proxy) name did not resolve */
    SIEVE_OUTCOME_CONNECT,   /* "connect": no connection to the server */
    SIEVE_OUTCOME_TIMEOUT,   /* "timeout": timeout_s, or slower than low_speed */
    SIEVE_OUTCOME_TLS,       /* "tls": handshake or certificate failure */
    SIEVE_OUTCOME_NETWORK,   /* "network": the connection failed while sending or
                                receiving, or closed before a response or inside
                                its head */
    SIEVE_OUTCOME_PROTOCOL,  /* "protocol": not a valid HTTP response (a status
                                past 599, a protocol switch not asked for, broken
                                chunked framing, a Content-Length past 2^63 - 1
                                or two that differ) */
    SIEVE_OUTCOME_TRUNCATED, /* "truncated": the body ended before its end (its
                                length, its last chunk, or its compressed stream's
                                end never came) */
    SIEVE_OUTCOME_TOO_LARGE, /* "too_large": cut at max_page_bytes, or a
                                response head past 256 KiB (or with a line
                                past curl's 100 KiB): not tried again */
    SIEVE_OUTCOME_ENCODING,  /* "encoding": a content coding other than gzip or
                                deflate, a transfer coding other than chunked,
                                or corrupt compressed data */
    SIEVE_OUTCOME_REDIRECT,  /* "redirect": a redirect without a usable target, or
                                past max_redirects */
    SIEVE_OUTCOME_ROBOTS,    /* "robots": not fetched: robots.txt disallows it, or
                                could not be had */
    SIEVE_OUTCOME_REJECTED,  /* "rejected": stopped after the head, its content
                                type rejected by accept or reject */
    SIEVE_OUTCOME_PARSE,     /* "parse": the body could not be parsed (a sitemap that
                                is none, a page past the parser's limits) */
    SIEVE_OUTCOME_STOPPED,   /* "stopped": a body or wire callback stopped it */
    SIEVE_OUTCOME_ERROR,     /* "error": anything else (out of memory, ...) */
    SIEVE_OUTCOME_BLOCKED,   /* "blocked": its host resolved to an address the crawl
                                does not reach (see allow_private) */
    SIEVE_OUTCOMES           /* how many there are: not an outcome */
} sieve_crawl_outcome;

/* One transfer: a request and its response, as the wire callbacks see it.
 * The engine owns it; it lives from the transfer's first callback to its
 * on_transfer_end (and the on_record that may follow). */
typedef struct sieve_crawl_transfer {
    uint64_t id;           /* unique in the crawl, from 1, in the order transfers start */
    const char *url;       /* the URL requested */
    sieve_fetch_kind kind; /* page, sitemap, or robots.txt */
    unsigned worker;       /* the worker that runs it, from 0 (see on_wait) */
    int64_t started_us;    /* wall clock at the start, microseconds since 1970 UTC */
    const char *remote_ip; /* the server's (or proxy's) address; NULL until a request
                              went out */
    void *user;            /* the embedder's: NULL at the start, set by any callback,
                              read by the later ones */

    /* Set before on_transfer_end: */
    uint64_t wire_bytes;   /* body bytes received: transfer coding removed,
                              content coding kept */
    const char *truncated; /* NULL: the body came whole (or there was none); else
                              why not, as a WARC 1.1 WARC-Truncated reason:
                              "length" (max_page_bytes, robots.txt's 500 KiB, or a
                              response head too large),
                              "time" (timeout_s, low_speed), "disconnect" (the
                              connection or the compressed stream ended early),
                              "unspecified" (stopped on purpose: rejected type,
                              a callback, a parse error) */
    bool aborted;          /* ended by stop()'s abort or a failed run: no record */
    bool retried;          /* failed, and its URL will be tried again: no record */
    bool has_record;       /* on_record follows for this transfer */
} sieve_crawl_transfer;

/* One fetched URL, or one URL the crawl decided not to fetch (error says
 * why). The same fields as a line of `sieve crawl`'s output. Valid only
 * during the on_record call. */
typedef struct sieve_crawl_record {
    const char *url;          /* canonical URL */
    const char *final_url;    /* a redirect's target; else url */
    long status;              /* HTTP status; 0 when no response came */
    const char *content_type; /* NULL: none */
    uint64_t bytes;           /* body bytes received, decompressed */
    uint32_t depth;           /* links followed from a seed */
    uint64_t links_found;     /* links (or sitemap entries) in the body; 1 for a
                                 redirect followed: its target */
    uint64_t links_new;       /* of those, queued: in scope and not seen before */
    double elapsed_ms;        /* from the transfer's start to its end */
    const char *error;        /* NULL: fetched whole; else why not */
    sieve_fetch_kind kind;

    /* The record as the wire saw it. */
    int64_t started_us;         /* wall clock when the fetch started (or the URL
                                   was refused), microseconds since 1970 UTC */
    uint64_t wire_bytes;        /* body bytes received: transfer coding removed,
                                   content coding kept (bytes counts them decoded) */
    const char *remote_ip;      /* NULL: no connection was made */
    const char *payload_digest; /* "sha1:" and the base32 SHA-1 of those wire bytes,
                                   as WARC-Payload-Digest; NULL: no response, or
                                   options.payload_digest false */
    sieve_crawl_outcome outcome;
    unsigned attempts;                    /* requests made for the URL: 1 + the retries
                                             (options.retries), 0 when refused before any */
    const sieve_crawl_transfer *transfer; /* the transfer, with the user data its
                                             wire callbacks set; NULL when the URL
                                             was not fetched */

    /* Where the URL came from. referrer: the page it was found on (the
     * sitemap for a sitemap's entry, robots.txt for a sitemap it lists);
     * for a URL reached through redirects, the page whose link began the
     * chain; NULL for a seed and a seed's redirect targets. A URL found on
     * several pages names the one it was first queued from. first_url:
     * for a URL queued as a redirect's target, the URL first requested,
     * where the chain began; NULL when no redirect led to it. */
    const char *referrer;
    const char *first_url;
} sieve_crawl_record;

/* A piece of a body as it arrives, decompressed. Chunks of one transfer
 * come in order, on one thread; the first has offset 0. */
typedef struct sieve_crawl_body {
    const char *url;          /* the URL fetched */
    long status;              /* its HTTP status */
    const char *content_type; /* NULL: none */
    const char *data;
    size_t len;
    uint64_t offset; /* bytes of this body before data */
} sieve_crawl_body;

/* A link found on a page, canonical, in scope and about to be pushed. */
typedef struct sieve_crawl_link {
    const char *url; /* canonical */
    size_t len;
    const char *page; /* the page it was found on (or the redirect's source) */
    uint32_t depth;   /* its depth if queued */
} sieve_crawl_link;

/* What a link filter decides. */
typedef enum sieve_link_verdict {
    SIEVE_LINK_KEEP = 0,    /* push it as it is */
    SIEVE_LINK_DROP = 1,    /* do not push it */
    SIEVE_LINK_REWRITE = 2, /* push the URL written into the buffer instead */
} sieve_link_verdict;

/* Callbacks; any may be NULL. Each gets the user data given to
 * sieve_crawler_set_callbacks(). */
typedef struct sieve_crawl_callbacks {
    /* One per record, after the URL's links are pushed and before the URL
     * is reported done to the frontier: with a state_dir, a record written
     * (write(2), not left in a user-space buffer) before this returns
     * survives a kill, and a URL whose record was not written is fetched
     * again on resume. Return SIEVE_OK, or a negative status to stop the
     * crawl (as stop() does); run() then returns that status. */
    int (*on_record)(void *ud, const sieve_crawl_record *r);
    /* Each chunk of every 2xx body, pages and sitemaps. Return SIEVE_OK to
     * go on, anything else to stop this transfer (its record then says
     * "stopped by the body callback"). */
    int (*on_body)(void *ud, const sieve_crawl_body *b);

    /* The wire: each transfer as it went over the network - every page,
     * sitemap and robots.txt request, redirects included - enough to
     * archive it (WARC). For one transfer they come in this order, all
     * on the worker thread that runs it, never two at once:
     *
     *   on_request        the request head as sent (request line, header
     *                     lines, blank line), in one piece or more; a piece
     *                     after a complete head starts a new one: curl sent
     *                     the request again on a new connection after a
     *                     reused one failed before any response, and the
     *                     later request replaces the earlier.
     *   on_response_head  each header line as received, CRLF included,
     *                     status line first, blank line last; an interim
     *                     1xx response comes whole before the final one.
     *                     Trailer fields after a chunked body are not
     *                     passed on: they are no part of the head.
     *   on_response_body  the body as received, for every status: transfer
     *                     coding (chunked) removed, content coding (gzip)
     *                     kept, byte for byte what the server sent.
     *   on_transfer_end   once for every transfer that started, whatever
     *                     happened to it (wire_bytes, truncated, aborted
     *                     and has_record are set).
     *   on_record         right after, if has_record (pages and sitemaps;
     *                     robots.txt and aborted transfers have none); or,
     *                     if on_transfer_end held the record back
     *                     (sieve_crawl_transfer_hold()), after the hold's
     *                     release, on the same worker thread, when the
     *                     transfer's slot may already run another.
     *
     * A transfer that fails early skips the calls it did not reach (a DNS
     * failure gets only on_transfer_end). t->user is the embedder's slot
     * for its own state of the transfer; the record's `transfer` points
     * to the same struct. Return SIEVE_OK to go on; anything else stops
     * this transfer (its record says "stopped by a wire callback") - use
     * stop() to stop the crawl. Setting on_request costs curl's verbose
     * mode (CURLOPT_DEBUGFUNCTION is how curl shows a request as sent). */
    int (*on_request)(void *ud, sieve_crawl_transfer *t, const char *data, size_t len);
    int (*on_response_head)(void *ud, sieve_crawl_transfer *t, const char *line, size_t len);
    int (*on_response_body)(void *ud, sieve_crawl_transfer *t, const char *data, size_t len);
    void (*on_transfer_end)(void *ud, sieve_crawl_transfer *t);

    /* Each link before it is pushed. For SIEVE_LINK_REWRITE write a URL
     * (absolute, NUL-terminated, at most cap bytes with its NUL) into buf;
     * it is canonicalized and checked against the scope again, and not
     * filtered again. */
    sieve_link_verdict (*on_link)(void *ud, const sieve_crawl_link *l, char *buf, size_t cap);
    /* With a state_dir: every checkpoint_interval_s and at the end of the
     * run, on run()'s thread, just before the state is synced to disk.
     * Make the outputs durable here (fsync): a power loss then loses at
     * most what came after the last sync. Return SIEVE_OK, or a negative
     * status to stop the crawl with it. */
    int (*on_sync)(void *ud);
    /* A worker (t->worker of its transfers) is about to wait for the
     * network, on its own thread. Whatever the embedder gathered from that
     * worker's transfers to do at once is done here: an archive appends the
     * records of the transfers that ended since the last wait together,
     * where appending each alone would cost a write(2) a page. Holds it
     * releases here (on this thread or another) are delivered before the
     * worker waits. Called often: it must not block on the network. */
    void (*on_wait)(void *ud, unsigned worker);
} sieve_crawl_callbacks;

/* A record held back by the embedder, from the end of its transfer to
 * sieve_crawl_hold_release(). */
typedef struct sieve_crawl_hold sieve_crawl_hold;

/* From on_transfer_end only, for its transfer t when t->has_record: the
 * embedder still has work to finish for t off this thread (an archive
 * whose threads write t's records later), and the record must wait for
 * it. The worker then goes on with its other transfers, keeping t's
 * record, its transfer (t->user included) and its URL; on_record is
 * called only after sieve_crawl_hold_release(), on the worker's thread,
 * and the URL is reported done to the frontier only after on_record
 * returns: a crawl killed before the release fetches the URL again on
 * resume. A worker with `concurrency` records held starts no new
 * transfer until one is released (the transfers it has in flight then
 * may be held too: fewer than 2 x concurrency in all). Returns SIEVE_OK
 * and sets *out; SIEVE_ESTATE outside on_transfer_end, for a transfer
 * without a record, or for a second hold; SIEVE_ENOMEM; SIEVE_EINVAL for
 * NULL arguments. */
SIEVE_API int sieve_crawl_transfer_hold(sieve_crawl_transfer *t, sieve_crawl_hold **out);

/* Ends a hold, once, from any thread (from inside on_transfer_end too):
 * status SIEVE_OK when the work is done, and the record goes on as above;
 * a negative status when it failed: the record is dropped, the URL is not
 * reported done (a resume fetches it again), and the run fails with that
 * status, as for a failed on_record. Every hold must be released, even
 * after stop(): run() does not return before. h is freed by the engine. */
SIEVE_API void sieve_crawl_hold_release(sieve_crawl_hold *h, int status);

/* Counters, readable at any time from any thread. */
typedef struct sieve_crawl_stats {
    uint64_t started;           /* pages and sitemaps begun; one tried again counts once */
    uint64_t fetched;           /* records delivered */
    uint64_t errors;            /* records with an error */
    uint64_t aborted;           /* transfers cut by stop() after the grace: no record */
    uint64_t retries;           /* fetches that failed and were tried again */
    uint64_t failing_hosts;     /* hosts whose last fetch failed: waiting to retry */
    uint64_t in_flight;         /* transfers now running, robots.txt included */
    uint64_t held;              /* records held back now (sieve_crawl_transfer_hold()) */
    uint64_t held_max;          /* the most held back at once */
    uint64_t bytes;             /* body bytes received, decompressed */
    uint64_t links;             /* links found */
    uint64_t links_new;         /* links queued */
    uint64_t off_site;          /* links not followed: outside the scope */
    uint64_t denied;            /* ... matching a deny expression */
    uint64_t not_allowed;       /* ... matching no allow expression */
    uint64_t too_deep;          /* ... beyond max_depth */
    uint64_t host_full;         /* ... their host reached max_pages_per_host */
    uint64_t rejected;          /* ... rejected by suffix */
    uint64_t filtered;          /* ... dropped by the link filter (or rewritten into no URL) */
    uint64_t nofollow;          /* ... rel=nofollow, or a robots meta tag's nofollow */
    uint64_t not_http;          /* ... not http(s): javascript:, mailto:, ... */
    uint64_t trap;              /* ... too long, too many or repeated segments */
    uint64_t malformed;         /* ... no valid URL */
    uint64_t robots_fetched;    /* robots.txt requests */
    uint64_t robots_denied;     /* URLs not fetched because of robots.txt */
    uint64_t sitemaps;          /* sitemap files queued */
    uint64_t sitemaps_left_out; /* not queued: max_sitemaps, or nested too deep */
    uint64_t sitemap_pages;     /* page entries read from sitemaps */
    uint64_t sitemap_bad;       /* entries that are no crawlable URL */
    uint64_t outcomes[SIEVE_OUTCOMES]; /* records delivered, by outcome */
    unsigned workers;                  /* worker threads that started (0 before run()) */
    unsigned concurrency;              /* transfers each of them may run at once */
    bool page_limit_hit;               /* max_pages was reached */
    bool stopped;                      /* stop() was called */
    sieve_frontier_stats frontier;
} sieve_crawl_stats;

/* Fills o with the defaults named in sieve_crawl_options. */
SIEVE_API void sieve_crawl_options_init(sieve_crawl_options *o);

/* The word for an outcome, as sieve_crawl_outcome names it ("ok",
 * "http_4xx", ...); "error" for a value outside the enum. */
SIEVE_API const char *sieve_crawl_outcome_name(sieve_crawl_outcome o);

/* Creates a crawler from o (copied; o may be freed afterwards).
 * SIEVE_EINVAL for a setting outside its range or a regex that does not
 * compile (the logger is told which); the errors of sieve_frontier_new();
 * SIEVE_ENOMEM; SIEVE_EIO when libcurl cannot be initialized. */
SIEVE_API int sieve_crawler_new(sieve_crawler **out, const sieve_crawl_options *o);

/* Sets the callbacks (copied) and their user data. Call before run(). */
SIEVE_API void sieve_crawler_set_callbacks(sieve_crawler *c, const sieve_crawl_callbacks *cb,
                                           void *ud);

/* Adds a seed: an absolute http(s) URL of len bytes (SIZE_MAX: url is
 * NUL-terminated). Its origin joins the scope; credentials in its userinfo
 * ("http://user:pw@host/") are sent to that origin only, and never appear
 * in a record. Call before run(). SIEVE_OK; SIEVE_SEEN for a seed already
 * given; the errors of sieve_canon_url() for a URL that cannot be crawled
 * (SIEVE_ESCHEME, SIEVE_EURL, SIEVE_ETOOLONG, ...); SIEVE_ESTATE once
 * run() has started; SIEVE_ENOMEM. */
SIEVE_API int sieve_crawler_add_seed(sieve_crawler *c, const char *url, size_t len);

/* Crawls until the frontier is empty with nothing in flight, max_pages is
 * reached, or stop() is called. Blocks; call it once. Returns SIEVE_OK
 * when the crawl ran to its end (single pages that failed are counted in
 * the stats, they are not errors of the run); SIEVE_ECLOSED when stop()
 * cut it short; the status an on_record callback returned to stop it;
 * SIEVE_ENOMEM or SIEVE_EIO (logged) when the workers could not run;
 * SIEVE_ESTATE on a second call. */
SIEVE_API int sieve_crawler_run(sieve_crawler *c);

/* Asks the crawl to stop: no new fetch starts, and the transfers in
 * flight get stop_grace_s to finish, with their records; then they are
 * aborted without a record, and their URLs are not reported done. A second
 * call aborts them at once. Safe from any thread and from a signal
 * handler (it only stores a flag and writes to a pipe). */
SIEVE_API void sieve_crawler_stop(sieve_crawler *c);

/* Fills *st. Safe from any thread, at any time, callbacks included. */
SIEVE_API void sieve_crawler_stats_get(sieve_crawler *c, sieve_crawl_stats *st);

/* Frees the crawler. Not while run() is running. NULL is a no-op. */
SIEVE_API void sieve_crawler_free(sieve_crawler *c);

#ifdef __cplusplus
}
#endif
#endif
