/* url-base.c - references resolved against their base: a page's base
 * parsed once (sieve_canon_parse_base()) and the common relative links
 * joined to it here, as curl would join them, or the base and the
 * reference handed to curl as they are. url.c prepares the reference
 * before and normalizes what curl parsed after. */
#include <stdint.h>
#include <strings.h>

#include "sieve/status.h"
#include "url-impl.h"

/* A base parsed once for a page's links. A relative reference given to
 * a handle that holds a base costs curl 7.88 a copy of the handle, the
 * whole base written out again with its printf, and a string join
 * (concat_url() in its urlapi.c) before it parses the joined URL. Where
 * that join only cuts the base and appends the reference - a path from
 * the root, or a relative path, after any "./" and "../" that the join
 * itself strips, all of it printable ASCII - the join is made here, on
 * the base as curl writes it, cut as concat_url() cuts it, and curl is
 * handed the absolute URL it would have built: the same string, parsed by
 * the same function with the same flags, in a new handle. */
struct sieve_canon_base {
    CURLU *u;
    char *url;         /* the base as curl_url_get() writes it */
    size_t origin_len; /* what a path from the root is appended to */
    size_t dir_len;    /* what a relative path is appended to, before its
                          '/': the base without its query and last '/' */
    size_t path_at;    /* where the path begins after its first '/', or
                          SIZE_MAX when that cut left none */
};

/* A base keeps no fragment: curl 7.88's concat_url() cuts the base at its
 * query and last '/', not minding a fragment, so "g" against
 * "http://a/b/c#s/x" would land inside "#s/". RFC 3986 (5.2.2) never takes
 * the base's fragment. True, so that it can sit in a chain of checks. */
static bool drop_fragment(CURLU *u)
{
    (void)curl_url_set(u, CURLUPART_FRAGMENT, NULL, 0);
    return true;
}

/* Cuts url (the base as curl writes it) as concat_url() cuts it. */
static void base_cuts(sieve_canon_base *b)
{
    const char *url = b->url, *host = strstr(url, "//");
    host = host ? host + 2 : url;
    /* "/path": up to the first '/' after the host, or a '?' before it */
    const char *slash = strchr(host, '/'), *query = strchr(host, '?');
    const char *cut = slash != NULL ? (query != NULL && query < slash ? query : slash) : query;
    b->origin_len = cut != NULL ? (size_t)(cut - url) : strlen(url);
    /* "path": without the query, up to the last '/' */
    size_t end = query != NULL ? (size_t)(query - url) : strlen(url);
    size_t at = (size_t)(host - url);
    size_t last = end;
    while (last > at && url[last - 1] != '/')
        last--;
    b->dir_len = last > at ? last - 1 : end;
    const char *first = memchr(host, '/', b->dir_len - at);
    b->path_at = first != NULL ? (size_t)(first - url) + 1 : SIZE_MAX;
}

sieve_canon_base *sieve_canon_parse_base(const char *base)
{
    sieve_canon_base *b = calloc(1, sizeof *b);
    char *scheme = NULL;
    /* Only http(s): url.c's canon() cuts fragments knowing that. */
    bool ok = b != NULL && (b->u = curl_url()) != NULL &&
              curl_url_set(b->u, CURLUPART_URL, base, CURLU_URLENCODE) == CURLUE_OK &&
              drop_fragment(b->u) &&
              curl_url_get(b->u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
              (strcasecmp(scheme, "http") == 0 || strcasecmp(scheme, "https") == 0) &&
              curl_url_get(b->u, CURLUPART_URL, &b->url, 0) == CURLUE_OK;
    curl_free(scheme);
    if (!ok) {
        sieve_canon_base_free(b);
        return NULL;
    }
    base_cuts(b);
    return b;
}

void sieve_canon_base_free(sieve_canon_base *b)
{
    if (b == NULL)
        return;
    curl_url_cleanup(b->u);
    curl_free(b->url);
    free(b);
}

enum join { JOIN_NONE, JOIN_ORIGIN, JOIN_DIR };

/* Which cut of the base a prepared reference is joined to, if
 * concat_url() would only append it: no scheme, no "//", not a query or
 * a fragment alone. url.c's prepare() leaves no byte for the join to
 * encode; checked all the same, since the join must never encode. */
static enum join join_kind(const char *r)
{
    enum join k;
    if (r[0] == '/')
        k = r[1] == '/' ? JOIN_NONE : JOIN_ORIGIN;
    else if (r[0] == '\0' || r[0] == '?' || r[0] == '#' || r[strcspn(r, ":/?#")] == ':')
        k = JOIN_NONE;
    else
        k = JOIN_DIR;
    for (const unsigned char *p = (const unsigned char *)r; k != JOIN_NONE && *p; p++)
        if (*p <= 0x20 || *p >= 0x7f)
            k = JOIN_NONE;
    return k;
}

/* Writes into j what concat_url() makes of b and a relative path r. */
static void join_dir(sbuf *j, const sieve_canon_base *b, const char *r)
{
    const char *url = b->url;
    size_t len = b->dir_len;
    unsigned up = 0;
    if (r[0] == '.' && r[1] == '/')
        r += 2;
    for (; r[0] == '.' && r[1] == '.' && r[2] == '/'; r += 3)
        up++;
    for (; b->path_at != SIZE_MAX && up > 0; up--) {
        while (len > b->path_at && url[len - 1] != '/')
            len--;
        if (len == b->path_at)
            break; /* no '/' left: the path is cut to nothing */
        len--;
    }
    sb_put(j, url, len);
    bool path_emptied = b->path_at != SIZE_MAX && len == b->path_at;
    if (!(r[0] == '/' || r[0] == '?' || path_emptied))
        sb_putc(j, '/');
    sb_put(j, r, strlen(r));
}

/* Parses the base joined with ref as one absolute URL in a new handle. */
static int parse_joined(CURLU **pu, const sieve_canon_base *b, enum join k, const char *ref)
{
    char stack[SCRATCH];
    sbuf j;
    sb_init(&j, stack, sizeof stack);
    if (k == JOIN_ORIGIN) {
        sb_put(&j, b->url, b->origin_len);
        sb_put(&j, ref, strlen(ref));
    } else {
        join_dir(&j, b, ref);
    }
    sb_putc(&j, '\0');
    CURLU *u = *pu = j.failed ? NULL : curl_url();
    int st = u == NULL ? SIEVE_ENOMEM : url_map_curl(curl_url_set(u, CURLUPART_URL, j.p, 0));
    sb_free(&j);
    return st;
}

/* Parses the prepared reference, resolving it against base when needed.
 * With b, a base parsed once for a whole page, the reference is joined to
 * it here or resolved on a copy of its handle: one parse per link instead
 * of two. */
int url_parse_ref(CURLU **pu, const char *base, const sieve_canon_base *b, const char *ref,
                  bool ref_non_ascii)
{
    /* A prepared reference leaves curl only bytes from 0x80 up to encode,
     * and CURLU_URLENCODE costs a copy one byte at a time: asked for only
     * when needed. A base string is as the caller gave it: always. */
    const unsigned fl = ref_non_ascii ? CURLU_URLENCODE : 0;
    /* curl parses an absolute URL into a new handle even on one that holds
     * a base: such a reference (38% of the links on the crawl benchmark's
     * pages) needs neither a copy of the base nor the base parsed. */
    if (strncasecmp(ref, "http://", 7) == 0 || strncasecmp(ref, "https://", 8) == 0) {
        base = NULL;
        b = NULL;
    }
    if (b != NULL) {
        enum join k = ref_non_ascii ? JOIN_NONE : join_kind(ref);
        if (k != JOIN_NONE)
            return parse_joined(pu, b, k, ref);
        *pu = curl_url_dup(b->u);
        if (*pu == NULL)
            return SIEVE_ENOMEM;
        if (ref[0] == '\0' || ref[0] == '#')
            return SIEVE_OK;
        return url_map_curl(curl_url_set(*pu, CURLUPART_URL, ref, fl));
    }
    CURLU *u = *pu = curl_url();
    if (u == NULL)
        return SIEVE_ENOMEM;
    if (ref[0] == '\0' || ref[0] == '#') {
        /* Names the base itself; curl would take the base's directory. */
        if (!base)
            return ref[0] ? SIEVE_EURL : SIEVE_EEMPTY;
        return url_map_curl(curl_url_set(u, CURLUPART_URL, base, CURLU_URLENCODE));
    }
    if (base && curl_url_set(u, CURLUPART_URL, base, CURLU_URLENCODE) != CURLUE_OK)
        base = NULL; /* an absolute ref does not need it; a relative one fails below */
    else if (base)
        drop_fragment(u);
    return url_map_curl(curl_url_set(u, CURLUPART_URL, ref, fl));
}
