/* sieve/robots.h - robots.txt: which paths of a host we may fetch (RFC 9309).
 *
 * sieve_robots_parse() reads a robots.txt body once and keeps only what
 * applies to one product token (the crawler's name, e.g. "sieve"):
 *
 *   - the rules of every group whose user-agent line names the token,
 *     compared without regard to ASCII case ("Sieve/1.0" names "sieve":
 *     only the leading letters, '-' and '_' of the line count), merged;
 *   - else the rules of every "*" group, merged;
 *   - else no rules at all: everything is allowed.
 *
 * A group is one or more consecutive user-agent lines and the rules after
 * them; a user-agent line after a rule (Allow, Disallow, Crawl-delay)
 * starts a new group, while Sitemap and unknown lines neither start nor
 * end one. Rules before the first user-agent line are ignored. Field
 * names are case-insensitive; a UTF-8 BOM, CRLF, CR or LF line ends,
 * '#' comments, blank space around names and values are all accepted;
 * lines without ':' and unknown fields are ignored.
 *
 * Matching. Allow and Disallow values are patterns: '*' matches any run of
 * bytes, a '$' at the very end anchors the pattern to the end of the path
 * (elsewhere '$' is a literal), and otherwise a pattern matches every path
 * it is a prefix of. The matching rule with the longest pattern (in bytes,
 * after the normalization below, '*' and '$' included) decides; on a tie
 * Allow wins; no match means allowed. An empty Allow or Disallow value is
 * no rule. Patterns match from the path's first byte, so one that starts
 * with neither '/' nor '*' matches nothing. "/robots.txt" itself is
 * always allowed.
 *
 * Percent-encoding. Patterns and paths are compared after one
 * normalization, the one sieve_canon_url() applies to URLs: escapes of
 * unreserved characters (ALPHA DIGIT - . _ ~) are decoded ("/%7Ejoe" is
 * "/~joe"), other escapes are upper-cased ("%2f" is "%2F", and stays
 * distinct from "/"), a '%' that starts no escape is "%25", and spaces,
 * controls, non-ASCII bytes and " # < > \ ^ ` { | } are percent-encoded
 * (a UTF-8 pattern matches its percent-encoded URL). Because '*' and '$'
 * are special in patterns, RFC 9309 writes them literally as %2A and %24:
 * a '*' or '$' in a path is therefore compared as its escape.
 *
 * Limits, so that a hostile file costs bounded time and memory: only the
 * first SIEVE_ROBOTS_MAX_BYTES bytes are read (RFC 9309 asks for at least
 * 500 KiB); at most SIEVE_ROBOTS_MAX_RULES rules are kept, patterns longer
 * than SIEVE_ROBOTS_MAX_PATTERN bytes are dropped, at most
 * SIEVE_ROBOTS_MAX_SITEMAPS sitemap URLs of at most
 * SIEVE_ROBOTS_MAX_SITEMAP_LEN bytes are kept. sieve_robots_stats_get() counts
 * what was dropped. Matching one path costs O(path + pattern) per rule,
 * whatever the wildcards, and stops at the first rule that matches in
 * longest-first order.
 *
 * Fetch outcomes (RFC 9309 section 2.3.1): a 2xx body goes to
 * sieve_robots_parse(); a 4xx answer means everything is allowed
 * (sieve_robots_allow_all()); a 5xx answer or an unreachable host means
 * everything is disallowed (sieve_robots_disallow_all()).
 *
 * A sieve_robots is read-only once created: any number of threads may
 * query one at the same time. */
#ifndef SIEVE_ROBOTS_H
#define SIEVE_ROBOTS_H

#include <stdbool.h>
#include <stddef.h>

#include "sieve/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sieve_robots sieve_robots;

/* Bytes of a robots.txt body that are parsed; the rest is ignored. */
#define SIEVE_ROBOTS_MAX_BYTES 512000

/* Most Allow/Disallow rules kept for our product token. */
#define SIEVE_ROBOTS_MAX_RULES 10000

/* Longest pattern kept, in bytes after normalization. */
#define SIEVE_ROBOTS_MAX_PATTERN 4096

/* Most Sitemap URLs kept, and the longest one, in bytes. */
#define SIEVE_ROBOTS_MAX_SITEMAPS    1000
#define SIEVE_ROBOTS_MAX_SITEMAP_LEN 2048

/* What parsing kept and dropped. */
typedef struct sieve_robots_stats {
    size_t bytes;            /* bytes parsed */
    bool truncated;          /* the body was cut: see sieve_robots_parse() */
    size_t groups;           /* groups in the file, for any user agent */
    bool matched_product;    /* a group names our product token */
    bool matched_star;       /* no group names us; "*" groups apply */
    size_t rules;            /* rules kept */
    size_t rules_dropped;    /* rules that apply to us, beyond the caps */
    size_t sitemaps;         /* sitemap URLs kept */
    size_t sitemaps_dropped; /* sitemap URLs beyond the caps, or empty */
    size_t memory;           /* bytes the parsed rules hold, for caches to count */
} sieve_robots_stats;

/* Parses len bytes of a robots.txt body for the product token product (a
 * NUL-terminated, non-empty run of ASCII letters, '-' and '_', e.g.
 * "sieve"). body need not be NUL-terminated and may be NULL when len is 0
 * (an empty file: everything is allowed). Any bytes are accepted: content
 * that is not robots.txt yields no rules.
 *
 * A body of SIEVE_ROBOTS_MAX_BYTES bytes or more is taken as cut short,
 * whether here or by the caller's fetch limit: it is parsed up to the last
 * line end within the first SIEVE_ROBOTS_MAX_BYTES bytes, and the partial
 * line after it is dropped (a cut "Allow: /public/page" would otherwise
 * allow "/p"). Returns SIEVE_OK and sets *out, SIEVE_EINVAL for a NULL
 * out, a NULL body with len > 0 or a bad product token, SIEVE_ENOMEM. */
SIEVE_API int sieve_robots_parse(sieve_robots **out, const void *body, size_t len,
                                 const char *product);

/* A handle that allows every path: for a robots.txt answered with a 4xx
 * status. SIEVE_OK and *out set, SIEVE_EINVAL for a NULL out,
 * SIEVE_ENOMEM. */
SIEVE_API int sieve_robots_allow_all(sieve_robots **out);

/* A handle that disallows every path but "/robots.txt": for a robots.txt
 * answered with a 5xx status or not reachable. Returns as
 * sieve_robots_allow_all(). */
SIEVE_API int sieve_robots_disallow_all(sieve_robots **out);

/* Frees r. NULL is a no-op. */
SIEVE_API void sieve_robots_free(sieve_robots *r);

/* True when we may fetch path_and_query (len bytes, need not be
 * NUL-terminated): the URL's path plus its query, without scheme, host or
 * fragment, e.g. "/a/b?x=1" for "http://h/a/b?x=1#top". An empty one is
 * taken as "/". It may be canonical (sieve_canon_url() output) or not:
 * both sides are normalized alike. Thread-safe. Returns false for a NULL r
 * or path with len > 0, and, conservatively, when memory to normalize a
 * path of more than a few KiB cannot be allocated. */
SIEVE_API bool sieve_robots_allowed(const sieve_robots *r, const char *path_and_query, size_t len);

/* The Crawl-delay for our group (or the "*" groups), in seconds, or a
 * negative value when there is none. Values must be a plain decimal number
 * ("10", "0.5"); anything else ("10s", "-1", "abc") is ignored. When the
 * applicable groups give several, the largest wins. Negative for handles
 * from sieve_robots_allow_all() and sieve_robots_disallow_all(). */
SIEVE_API double sieve_robots_crawl_delay(const sieve_robots *r);

/* Sets *urls to the Sitemap values of the file, in file order, each
 * NUL-terminated, and returns their number. Sitemap lines are global:
 * they count wherever they stand. Values are kept as written (trimmed, up
 * to a '#'), not checked to be URLs; duplicates are kept, values with
 * control bytes are dropped. The array lives
 * as long as r. urls may be NULL to get the count only. */
SIEVE_API size_t sieve_robots_sitemaps(const sieve_robots *r, const char *const **urls);

/* Fills *st with what parsing kept and dropped (all zero for the
 * allow_all and disallow_all handles). */
SIEVE_API void sieve_robots_stats_get(const sieve_robots *r, sieve_robots_stats *st);

#ifdef __cplusplus
}
#endif
#endif
