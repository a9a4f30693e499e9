/* origin.h - where the parts of an absolute URL lie, for the engine's one
 * way of naming a host.
 *
 * The engine handles canonical URLs only (sieve_canon_url), so the
 * scheme is lower case, the default port is gone and "scheme://" is
 * always there: an origin is then a prefix of the URL, and two URLs have
 * the same origin exactly when those prefixes are equal. The frontier
 * keys its per-host queues by the authority alone (host and port), so
 * http and https of one server share its politeness. */
#ifndef SIEVE_ORIGIN_H
#define SIEVE_ORIGIN_H

#include <stddef.h>
#include <string.h>

typedef struct url_parts {
    size_t auth_off; /* the authority: host, and ":port" if not the default */
    size_t auth_len;
    const char *path; /* from the first '/' (or "/" when the URL has none) */
} url_parts;

static inline url_parts url_split(const char *url)
{
    const char *p = strstr(url, "://");
    p = p != NULL ? p + 3 : url;
    size_t n = strcspn(p, "/?#");
    return (url_parts){
        .auth_off = (size_t)(p - url), .auth_len = n, .path = p[n] != '\0' ? p + n : "/"};
}

/* Length of the origin ("scheme://authority") at the start of url. */
static inline size_t url_origin_len(const char *url)
{
    url_parts p = url_split(url);
    return p.auth_off + p.auth_len;
}

#endif
