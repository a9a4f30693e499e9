/* options.c - a crawl's settings: their defaults, their ranges, and the
 * engine's own copy of them.
 *
 * Every default and every limit is a named constant here, once; the
 * command shows the defaults by reading an initialized struct, so no
 * number is written twice. Validation names the field that is wrong, in
 * the words of sieve_crawl_options, through the embedder's logger. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "options.h"
#include "sieve/status.h"

#define DEFAULT_CONCURRENCY       32
#define DEFAULT_MAX_REDIRECTS     10
#define DEFAULT_CONNECT_TIMEOUT_S 10.0
#define DEFAULT_TIMEOUT_S         60.0
#define DEFAULT_LOW_SPEED_BYTES   100
#define DEFAULT_LOW_SPEED_TIME_S  15
#define DEFAULT_MAX_PAGE_BYTES    (UINT64_C(10) * 1024 * 1024)
#define DEFAULT_STOP_GRACE_S      5.0
#define DEFAULT_DNS_TTL_S         60.0 /* curl's own default */
#define DEFAULT_HOST_CONNECTIONS  2
#define DEFAULT_DELAY_S           1.0
#define DEFAULT_MAX_CRAWL_DELAY_S 30.0
#define DEFAULT_ROBOTS_EXPIRY_S   86400.0
#define DEFAULT_MAX_SITEMAPS      10000
#define DEFAULT_USER_AGENT        "sieve/" SIEVE_VERSION " (web crawler)"
#define DEFAULT_CHECKPOINT_S      10.0
#define DEFAULT_QUEUE_MEMORY      (UINT64_C(64) << 20)
#define DEFAULT_ROBOTS_MEMORY     (UINT64_C(32) << 20)
#define DEFAULT_RETRIES           3
#define DEFAULT_RETRY_WAIT_S      2.0
#define DEFAULT_RETRY_MAX_WAIT_S  600.0

void sieve_crawl_options_init(sieve_crawl_options *o)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    *o = (sieve_crawl_options){
        .workers = cores > 0 && cores <= OPTIONS_MAX_WORKERS ? (unsigned)cores : 1,
        .concurrency = DEFAULT_CONCURRENCY,
        .max_redirects = DEFAULT_MAX_REDIRECTS,
        .connect_timeout_s = DEFAULT_CONNECT_TIMEOUT_S,
        .timeout_s = DEFAULT_TIMEOUT_S,
        .low_speed_bytes = DEFAULT_LOW_SPEED_BYTES,
        .low_speed_time_s = DEFAULT_LOW_SPEED_TIME_S,
        .max_page_bytes = DEFAULT_MAX_PAGE_BYTES,
        .user_agent = DEFAULT_USER_AGENT,
        .stop_grace_s = DEFAULT_STOP_GRACE_S,
        .dns_ttl_s = DEFAULT_DNS_TTL_S,
        .retries = DEFAULT_RETRIES,
        .retry_wait_s = DEFAULT_RETRY_WAIT_S,
        .retry_max_wait_s = DEFAULT_RETRY_MAX_WAIT_S,
        .host_connections = DEFAULT_HOST_CONNECTIONS,
        .delay_s = DEFAULT_DELAY_S,
        .max_crawl_delay_s = DEFAULT_MAX_CRAWL_DELAY_S,
        .robots_expiry_s = DEFAULT_ROBOTS_EXPIRY_S,
        .robots_memory = DEFAULT_ROBOTS_MEMORY,
        .sitemaps = true,
        .max_sitemaps = DEFAULT_MAX_SITEMAPS,
        .scope = SIEVE_SCOPE_HOST,
        .max_depth = -1,
        .max_url_len = SIEVE_CANON_MAX_LEN,
        .max_segments = SIEVE_CANON_MAX_SEGMENTS,
        .max_repeat = SIEVE_CANON_MAX_REPEAT,
        .checkpoint_interval_s = DEFAULT_CHECKPOINT_S,
        .queue_memory = DEFAULT_QUEUE_MEMORY,
        .payload_digest = true,
    };
    sieve_seen_config_init(&o->seen);
}

static bool has_line_break(const char *s)
{
    return s != NULL && strpbrk(s, "\r\n") != NULL;
}

/* One check: logs "what: why" and fails when bad. */
static bool check(const sieve_crawl_options *o, bool bad, const char *what, const char *why)
{
    if (bad)
        sieve_log(&o->logger, SIEVE_LOG_ERROR, "%s: %s", what, why);
    return !bad;
}

static bool seconds_ok(double s, double max)
{
    return s > 0 && s <= max;
}

int options_validate(const sieve_crawl_options *o)
{
    bool ok = true;
    ok &= check(o, o->workers < 1 || o->workers > OPTIONS_MAX_WORKERS, "workers",
                "must be from 1 to " OPTIONS_STR(OPTIONS_MAX_WORKERS));
    ok &= check(o, o->concurrency < 1 || o->concurrency > OPTIONS_MAX_CONCURRENCY, "concurrency",
                "must be from 1 to " OPTIONS_STR(OPTIONS_MAX_CONCURRENCY));
    ok &= check(o, o->max_redirects > OPTIONS_MAX_REDIRECTS, "max_redirects",
                "must be at most " OPTIONS_STR(OPTIONS_MAX_REDIRECTS));
    ok &= check(o, !seconds_ok(o->connect_timeout_s, OPTIONS_MAX_SECONDS), "connect_timeout_s",
                "must be above 0 and at most a day");
    ok &= check(o, !seconds_ok(o->timeout_s, OPTIONS_MAX_SECONDS), "timeout_s",
                "must be above 0 and at most a day");
    ok &= check(o, !seconds_ok(o->dns_ttl_s, OPTIONS_MAX_SECONDS), "dns_ttl_s",
                "must be above 0 and at most a day");
    ok &= check(o, o->low_speed_bytes < 0 || o->low_speed_time_s < 0, "low_speed",
                "must not be negative");
    ok &= check(o, o->max_page_bytes < 1, "max_page_bytes", "must be at least 1");
    ok &= check(o, o->user_agent == NULL || has_line_break(o->user_agent), "user_agent",
                "must be given, without a line break");
    for (size_t i = 0; i < o->n_headers; i++)
        ok &= check(o,
                    o->headers[i] == NULL || has_line_break(o->headers[i]) ||
                        strchr(o->headers[i], ':') == NULL,
                    "headers", "each must be 'Name: value' on one line");
    ok &= check(o, has_line_break(o->user) || has_line_break(o->proxy), "user or proxy",
                "must not hold a line break");
    ok &= check(o, !(o->stop_grace_s >= 0 && o->stop_grace_s <= OPTIONS_MAX_SECONDS),
                "stop_grace_s", "must be from 0 to a day");
    ok &= check(o, o->retries > OPTIONS_MAX_RETRIES, "retries",
                "must be at most " OPTIONS_STR(OPTIONS_MAX_RETRIES));
    ok &= check(o, !seconds_ok(o->retry_wait_s, OPTIONS_MAX_SECONDS), "retry_wait_s",
                "must be above 0 and at most a day");
    ok &= check(o, !seconds_ok(o->retry_max_wait_s, OPTIONS_MAX_SECONDS), "retry_max_wait_s",
                "must be above 0 and at most a day");
    ok &= check(o, o->host_connections > OPTIONS_MAX_HOST_CONNECTIONS, "host_connections",
                "must be at most " OPTIONS_STR(OPTIONS_MAX_HOST_CONNECTIONS));
    ok &= check(o, !(o->delay_s >= 0 && o->delay_s <= OPTIONS_MAX_SECONDS), "delay_s",
                "must be from 0 to a day");
    ok &= check(o, !(o->max_crawl_delay_s >= 0 && o->max_crawl_delay_s <= OPTIONS_MAX_SECONDS),
                "max_crawl_delay_s", "must be from 0 to a day");
    ok &= check(o, !(o->robots_expiry_s >= 0 && o->robots_expiry_s <= OPTIONS_MAX_SECONDS * 365),
                "robots_expiry_s", "must be from 0 to a year");
    ok &= check(o, o->max_depth < -1 || o->max_depth >= (long)TAG_DEPTH_LIMIT, "max_depth",
                "must be -1 (no limit) or below " OPTIONS_STR(TAG_DEPTH_LIMIT_DEC));
    ok &= check(o, o->max_url_len < 16 || o->max_url_len > SIEVE_URL_MAX, "max_url_len",
                "must be from 16 to " OPTIONS_STR(SIEVE_URL_MAX));
    ok &= check(o, !seconds_ok(o->checkpoint_interval_s, OPTIONS_MAX_SECONDS),
                "checkpoint_interval_s", "must be above 0 and at most a day");
    return ok ? SIEVE_OK : SIEVE_EINVAL;
}

/* ---- the engine's copy: every string and array in one allocation ---- */

typedef struct copier {
    char *buf; /* NULL while sizing */
    size_t used;
} copier;

static void *take(copier *cp, size_t n, size_t align)
{
    cp->used = (cp->used + align - 1) / align * align;
    void *p = cp->buf != NULL ? cp->buf + cp->used : NULL;
    cp->used += n;
    return p;
}

static const char *copy_str(copier *cp, const char *s)
{
    if (s == NULL)
        return NULL;
    size_t n = strlen(s) + 1;
    char *p = take(cp, n, 1);
    if (p != NULL)
        memcpy(p, s, n);
    return p;
}

static const char *const *copy_list(copier *cp, const char *const *list, size_t n)
{
    if (n == 0)
        return NULL;
    const char **p = take(cp, n * sizeof *p, sizeof(void *));
    for (size_t i = 0; i < n; i++) {
        const char *s = copy_str(cp, list[i]);
        if (p != NULL)
            p[i] = s;
    }
    return p;
}

static void copy_all(copier *cp, sieve_crawl_options *dst, const sieve_crawl_options *src)
{
    dst->user_agent = copy_str(cp, src->user_agent);
    dst->proxy = copy_str(cp, src->proxy);
    dst->cookie_file = copy_str(cp, src->cookie_file);
    dst->cookie_jar = copy_str(cp, src->cookie_jar);
    dst->user = copy_str(cp, src->user);
    dst->netrc_file = copy_str(cp, src->netrc_file);
    dst->state_dir = copy_str(cp, src->state_dir);
    dst->headers = copy_list(cp, src->headers, src->n_headers);
    dst->allow = copy_list(cp, src->allow, src->n_allow);
    dst->deny = copy_list(cp, src->deny, src->n_deny);
    dst->accept = copy_list(cp, src->accept, src->n_accept);
    dst->reject = copy_list(cp, src->reject, src->n_reject);
    dst->strip_params = copy_list(cp, src->strip_params, src->n_strip_params);
}

int options_copy(sieve_crawl_options *dst, char **strings, const sieve_crawl_options *src)
{
    *dst = *src;
    copier cp = {0};
    copy_all(&cp, dst, src);
    cp.buf = malloc(cp.used > 0 ? cp.used : 1);
    if (cp.buf == NULL)
        return SIEVE_ENOMEM;
    *strings = cp.buf;
    cp.used = 0;
    copy_all(&cp, dst, src);
    return SIEVE_OK;
}
