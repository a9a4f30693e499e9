/* sieve/url.h - URL canonicalization: one spelling per crawlable resource.
 *
 * The seen-set compares bytes, so two spellings of one URL would be
 * fetched twice and a crawler trap would be followed for ever. Every link
 * goes through sieve_canon_url() before it reaches the frontier: it is
 * resolved against its base, parsed by libcurl's URL API (the same parser
 * that later fetches it), and written back in one canonical form:
 *
 *   - leading and trailing C0 controls and spaces are trimmed and every
 *     tab, CR and LF inside is removed, as browsers do with href values;
 *   - the scheme and host are lower-cased, a non-ASCII host becomes its
 *     punycode (IDNA) form, an IPv4 host written in hex or octal becomes
 *     dotted decimal, the default port (80, 443) is dropped; a host that
 *     is neither an IP literal nor made of letters, digits, '-', '.' and
 *     '_' is refused;
 *   - dot segments are removed, an empty path becomes "/";
 *   - percent-escapes of unreserved characters (ALPHA DIGIT - . _ ~) are
 *     decoded, other escapes are upper-cased, a '%' that starts no escape
 *     becomes "%25"; spaces, controls, non-ASCII bytes and " < > ` { } |
 *     ^ in the path and query are percent-encoded;
 *   - the fragment is removed;
 *   - userinfo ("user:pass@") is dropped: a crawler must never replay
 *     credentials it found in a page, and without them the URL still names
 *     the same host;
 *   - in the query, empty parameters ("a&&b") and an empty query ("?")
 *     are dropped, parameters whose name matches a strip pattern are
 *     removed, and with sort_query the rest are sorted by name (stable, so
 *     repeated names keep their order).
 *
 * Only http and https URLs are accepted. Trap guards refuse URLs longer
 * than max_len, with more than max_segments path segments, or with the
 * same segment more than max_repeat times in a row (/a/b/b/b/).
 *
 * Relative references follow RFC 3986 section 5 strictly: "http:g" is a
 * malformed absolute URL, not a relative one.
 *
 * IDN hosts: libcurl converts them with libidn2 from the charset of the
 * process locale, so a program that crawls non-ASCII hosts must select a
 * UTF-8 LC_CTYPE (setlocale(LC_CTYPE, "C.UTF-8") or "") before it
 * canonicalizes; otherwise such hosts are refused with SIEVE_EURL.
 *
 * A sieve_canon is read-only after sieve_canon_new(): any number of
 * threads may use one at the same time. */
#ifndef SIEVE_URL_H
#define SIEVE_URL_H

#include <stdbool.h>
#include <stddef.h>

#include "sieve/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sieve_canon sieve_canon;

/* Defaults of sieve_canon_config. */
#define SIEVE_CANON_MAX_LEN      2048
#define SIEVE_CANON_MAX_SEGMENTS 20
#define SIEVE_CANON_MAX_REPEAT   2

/* Largest max_len accepted by sieve_canon_new(). */
#define SIEVE_CANON_MAX_LEN_LIMIT (1024 * 1024)

typedef struct sieve_canon_config {
    size_t max_len;        /* longest canonical URL in bytes, 16 .. 1 MiB;
                              default 2048 */
    unsigned max_segments; /* most path segments ("/a/b/" has 3); 0: no
                              limit; default 20 */
    unsigned max_repeat;   /* most equal path segments in a row; 0: no
                              limit; default 2 */
    /* Query parameter names to drop: patterns where '*' matches any run
     * of bytes, compared without regard to ASCII case ("utm_*",
     * "sessionid"). Copied by sieve_canon_new(). Default none. */
    const char *const *strip_params;
    size_t n_strip_params;
    bool sort_query; /* sort query parameters by name; default false */
} sieve_canon_config;

/* Where the parts of a canonical URL lie in the output buffer. */
typedef struct sieve_canon_info {
    size_t len;      /* length of the URL, without its NUL; on SIEVE_ERANGE
                        the length that did not fit */
    size_t host_off; /* offset of the host (IPv6 hosts keep their []) */
    size_t host_len;
    bool https; /* scheme is https */
} sieve_canon_info;

/* Fills cfg with the defaults above. */
SIEVE_API void sieve_canon_config_init(sieve_canon_config *cfg);

/* Creates a canonicalizer from cfg (NULL: defaults). SIEVE_EINVAL for a
 * max_len outside 16 .. SIEVE_CANON_MAX_LEN_LIMIT, a NULL or empty strip
 * pattern; SIEVE_ENOMEM. */
SIEVE_API int sieve_canon_new(sieve_canon **out, const sieve_canon_config *cfg);

/* Frees c. NULL is a no-op. */
SIEVE_API void sieve_canon_free(sieve_canon *c);

/* The configured max_len: an output buffer of max_len + 1 bytes always
 * suffices. */
SIEVE_API size_t sieve_canon_max_len(const sieve_canon *c);

/* Resolves the reference ref (ref_len bytes, need not be NUL-terminated)
 * against base (a NUL-terminated absolute URL, or NULL when ref must be
 * absolute) and writes the canonical URL, NUL-terminated, into out (cap
 * bytes). info may be NULL. An empty ref or one that is only a fragment
 * ("#top") names base itself. Thread-safe. Returns:
 *   SIEVE_OK
 *   SIEVE_EEMPTY    ref is empty or blank and there is no base
 *   SIEVE_ESCHEME   the result is not http or https (javascript:, mailto:,
 *                   data:, tel:, ftp:, file:, ...)
 *   SIEVE_ETOOLONG  ref is longer than 4 * max_len, or the result is
 *                   longer than max_len
 *   SIEVE_ESEGMENTS the path has more than max_segments segments
 *   SIEVE_EREPEAT   a path segment repeats more than max_repeat times
 *   SIEVE_EURL      ref (or base, when ref is relative) is not a valid URL,
 *                   or ref is relative and base is NULL
 *   SIEVE_ERANGE    cap is too small; info->len tells the size needed
 *   SIEVE_EINVAL    c, ref (with ref_len > 0) or out is NULL
 *   SIEVE_ENOMEM */
SIEVE_API int sieve_canon_url(const sieve_canon *c, const char *base, const char *ref,
                              size_t ref_len, char *out, size_t cap, sieve_canon_info *info);

/* Writes the host of the absolute http(s) URL url, lower-cased and in
 * punycode, NUL-terminated, into out (cap bytes) and its length into
 * *outlen (may be NULL). IPv6 hosts keep their brackets. Returns SIEVE_OK,
 * SIEVE_ESCHEME, SIEVE_EURL, SIEVE_ERANGE (*outlen tells the length that
 * did not fit), SIEVE_EINVAL for NULL arguments, SIEVE_ENOMEM. */
SIEVE_API int sieve_canon_host(const char *url, char *out, size_t cap, size_t *outlen);

#ifdef __cplusplus
}
#endif
#endif
