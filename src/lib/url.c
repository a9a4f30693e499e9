/* url.c - URL canonicalization on top of libcurl's URL API (CURLU).
 *
 * Parsing, resolution of relative references, dot-segment removal, IPv4
 * and IDN host normalization and default-port removal are libcurl's: the
 * canonical URL is what the fetcher's own parser understands, and there
 * is no second URL grammar here to disagree with it. This file only does
 * what CURLU does not:
 *
 *   1. a pre-pass over the reference (prepare()): the HTML href rules
 *      (trim, drop tab/CR/LF), a backslash before the query read as '/'
 *      (as browsers read it), percent-encoding of bytes that are never
 *      literal in a canonical URL, and "%" -> "%25" where no escape
 *      follows, so that curl never sees a half escape;
 *   2. the "" and "#frag" references, which curl 7.88 resolves against the
 *      base's directory instead of the base itself (RFC 3986 5.2.2);
 *   3. a post-pass over the parts curl hands back: lower-case host, upper
 *      case escapes, decoded unreserved escapes, the query filter, the trap
 *      guards, and the assembly of the output without userinfo and
 *      fragment.
 *
 * Decoding happens after curl has parsed, never before, because decoding
 * can change how a reference parses ("%6Aavascript:x" is a relative path,
 * "javascript:x" is not). When decoding turns a segment into "." or ".."
 * (from "%2E"), the path goes through curl once more to remove it.
 *
 * Cost: one CURLU per call, one parse (two for a relative reference: curl
 * re-reads the base), one small allocation per part fetched. Against a
 * base parsed once for a page (sieve_canon_parse_base()), most relative
 * references are joined to it here, as curl would join them, and parsed
 * once (url-base.c says how). curl is not handed the
 * fragment where leaving it out provably changes nothing
 * (sieve_canon_fragment_at()). The scratch buffers live on the stack
 * unless a URL is unusually long. */
#include <ctype.h>
#include <curl/curl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bytes.h"
#include "sieve/status.h"
#include "sieve/url.h"
#include "url-impl.h"
#include "url-internal.h"

struct sieve_canon {
    size_t max_len;
    unsigned max_segments;
    unsigned max_repeat;
    bool sort_query;
    size_t n_strip;
    char **strip; /* lower-cased copies of the patterns */
};

/* ---- character classes ---- */

static unsigned char lower(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c;
}

/* Bytes never literal in a canonical URL: controls, space, DEL and
 * "<>`{}|^, one bit each in a 128-bit map. Non-ASCII bytes are left to
 * curl: in a host they are an IDN, elsewhere curl encodes them. */
static inline bool must_encode(unsigned char c)
{
    static const uint64_t map[2] = {UINT64_C(0x50000005ffffffff), UINT64_C(0xb800000140000000)};
    return c < 0x80 && (map[c >> 6] >> (c & 63) & 1);
}

static bool is_c0_or_space(unsigned char c)
{
    return c <= 0x20;
}

static void put_escape(sbuf *b, unsigned char c)
{
    static const char hex[] = "0123456789ABCDEF";
    char e[3] = {'%', hex[c >> 4], hex[c & 15]};
    sb_put(b, e, 3);
}

/* ---- pass 1: the reference as written ---- */

/* Whether s[0..n) holds a byte from 0x80 up. */
static bool has_non_ascii(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] >= 0x80)
            return true;
    return false;
}

/* The length of a scheme curl would see at s (its Curl_is_absolute_url():
 * at most 40 scheme characters, then ':'), or 0 for a relative reference. */
static size_t curl_scheme_len(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && i < 40 &&
           (isalnum((unsigned char)s[i]) || s[i] == '+' || s[i] == '-' || s[i] == '.'))
        i++;
    return i > 0 && i < n && s[i] == ':' ? i : 0;
}

size_t sieve_canon_fragment_at(const char *ref, size_t n, bool http_base)
{
    /* Far below curl's 8 MB input limit even with every byte escaped, so
     * the fragment cannot be what makes curl refuse a URL. */
    if (n > 64 * 1024)
        return n;
    const char *hash = memchr(ref, '#', n);
    size_t k = hash ? (size_t)(hash - ref) : n, i = 0;
    while (i < k && is_c0_or_space((unsigned char)ref[i]))
        i++;
    /* A blank just before the '#' would be trimmed from the cut reference
     * but is encoded in the whole one; a tab, CR or LF, dropped, could
     * join the letters of a scheme; fragment-only references have their
     * own rule (parse()). */
    if (i == k || k == n || is_c0_or_space((unsigned char)ref[k - 1]) ||
        memchr(ref + i, '\t', k - i) || memchr(ref + i, '\n', k - i) ||
        memchr(ref + i, '\r', k - i))
        return n;
    /* Only file: parses differently without its fragment ("file:/#x" is
     * long enough, "file:/" is not): an absolute reference is cut when it
     * is http(s), a relative one when its base is. */
    size_t sl = curl_scheme_len(ref + i, k - i);
    if (sl == 0)
        return http_base ? k : n;
    return (sl == 4 || sl == 5) && strncasecmp(ref + i, "https", sl) == 0 ? k : n;
}

/* Where the backslashes that browsers read as '/' end: at the query or
 * the fragment (0 when s has none, so that no byte is looked at twice). */
static size_t backslashes_end(const char *s, size_t n)
{
    if (!memchr(s, '\\', n))
        return 0;
    size_t i = 0;
    while (i < n && s[i] != '?' && s[i] != '#')
        i++;
    return i;
}

/* Trims, drops tab/CR/LF, encodes must_encode() bytes and lone '%', and
 * reads a backslash before the query as '/', as browsers do in http(s)
 * URLs (only those are accepted, so no other scheme needs its own rule).
 * The result is NUL-terminated in b. Returns whether a byte from 0x80 up
 * is left in it, for curl to encode. */
static bool prepare(sbuf *b, const char *s, size_t n)
{
    bool non_ascii = false;
    while (n && is_c0_or_space((unsigned char)s[0])) {
        s++;
        n--;
    }
    while (n && is_c0_or_space((unsigned char)s[n - 1]))
        n--;
    /* Rare enough for a copy of their own, which keeps them out of the
     * loop every byte of every link goes through. */
    char *slashed = NULL;
    size_t slashes = backslashes_end(s, n);
    if (slashes > 0) {
        if (!(slashed = malloc(n))) {
            b->failed = true;
            return false;
        }
        memcpy(slashed, s, n);
        for (size_t i = 0; i < slashes; i++)
            if (slashed[i] == '\\')
                slashed[i] = '/';
        s = slashed;
    }
    size_t run = 0; /* start of the bytes not yet copied, all plain */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        non_ascii |= c >= 0x80;
        if (c != '%' && !must_encode(c))
            continue;
        sb_put(b, s + run, i - run);
        run = i + 1;
        if (c == '\t' || c == '\n' || c == '\r')
            continue;
        if (c == '%' && i + 2 < n && hex_value((unsigned char)s[i + 1]) >= 0 &&
            hex_value((unsigned char)s[i + 2]) >= 0)
            sb_putc(b, '%');
        else if (c == '%')
            sb_put(b, "%25", 3);
        else
            put_escape(b, c);
    }
    sb_put(b, s + run, n - run);
    sb_putc(b, '\0');
    if (slashed) /* free(NULL) is a call too, in the loop over every link */
        free(slashed);
    return non_ascii;
}

/* ---- pass 3: the parts curl returns ---- */

/* Appends s[0..n) with escapes normalized: unreserved decoded, the rest
 * upper-cased, a stray '%' encoded. */
static void put_normalized(sbuf *b, const char *s, size_t n)
{
    size_t run = 0; /* start of the bytes not yet copied, all plain */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c != '%' && c < 0x80 && !must_encode(c))
            continue;
        sb_put(b, s + run, i - run);
        run = i + 1;
        if (c != '%') {
            put_escape(b, c);
            continue;
        }
        int hi = i + 2 < n ? hex_value((unsigned char)s[i + 1]) : -1;
        int lo = hi >= 0 ? hex_value((unsigned char)s[i + 2]) : -1;
        if (lo < 0) {
            sb_put(b, "%25", 3);
            continue;
        }
        unsigned char d = (unsigned char)(hi * 16 + lo);
        if (is_unreserved(d))
            sb_putc(b, (char)d);
        else
            put_escape(b, d);
        i += 2;
        run = i + 1;
    }
    sb_put(b, s + run, n - run);
}

/* Whether path (normalized) holds a "." or ".." segment. */
static bool has_dot_segment(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] != '/' || i + 1 >= n || p[i + 1] != '.')
            continue;
        size_t j = i + 2;
        if (j < n && p[j] == '.')
            j++;
        if (j == n || p[j] == '/')
            return true;
    }
    return false;
}

/* Applies the segment count and repeat guards to a path starting with '/'. */
static int check_segments(const sieve_canon *c, const char *p, size_t n)
{
    unsigned segs = 0, run = 0;
    const char *prev = NULL;
    size_t prev_len = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && p[j] != '/')
            j++;
        const char *seg = p + i + 1;
        size_t len = j - i - 1;
        segs++;
        if (prev && len == prev_len && memcmp(seg, prev, len) == 0)
            run++;
        else
            run = 1;
        if (c->max_repeat && run > c->max_repeat)
            return SIEVE_EREPEAT;
        prev = seg;
        prev_len = len;
        i = j;
    }
    if (c->max_segments && segs > c->max_segments)
        return SIEVE_ESEGMENTS;
    return SIEVE_OK;
}

/* Case-insensitive glob match where '*' matches any run of bytes; pat is
 * lower-case. Iterative, remembering only the last star: linear enough
 * for the short names and patterns of a query string. */
static bool glob_match(const char *pat, const char *s, size_t n)
{
    const char *star = NULL;
    size_t si = 0, mark = 0;
    while (si < n) {
        if (*pat == '*') {
            star = ++pat;
            mark = si;
        } else if (*pat && *pat == (char)lower((unsigned char)s[si])) {
            pat++;
            si++;
        } else if (star) {
            pat = star;
            si = ++mark;
        } else {
            return false;
        }
    }
    while (*pat == '*')
        pat++;
    return *pat == '\0';
}

typedef struct param {
    size_t off, len;  /* in the normalized query buffer */
    size_t name_len;  /* bytes before the first '=' */
    size_t index;     /* original position: makes the sort stable */
    const char *base; /* the buffer, for the comparator */
} param;

static int param_cmp(const void *a, const void *b)
{
    const param *x = a, *y = b;
    size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
    int r = memcmp(x->base + x->off, y->base + y->off, n);
    if (r)
        return r;
    if (x->name_len != y->name_len)
        return x->name_len < y->name_len ? -1 : 1;
    return x->index < y->index ? -1 : 1;
}

static bool stripped(const sieve_canon *c, const char *name, size_t n)
{
    for (size_t i = 0; i < c->n_strip; i++)
        if (glob_match(c->strip[i], name, n))
            return true;
    return false;
}

/* Appends "?query" to out, filtered and sorted; nothing when no parameter
 * survives. q is the normalized query. */
static int put_query(const sieve_canon *c, sbuf *out, const char *q, size_t n)
{
    size_t count = 1;
    for (size_t i = 0; i < n; i++)
        count += q[i] == '&';
    param stack[64];
    param *ps = count <= 64 ? stack : malloc(count * sizeof *ps);
    if (!ps)
        return SIEVE_ENOMEM;
    size_t np = 0;
    for (size_t i = 0; i <= n;) {
        size_t j = i;
        while (j < n && q[j] != '&')
            j++;
        if (j > i) {
            size_t k = i;
            while (k < j && q[k] != '=')
                k++;
            if (!stripped(c, q + i, k - i)) {
                ps[np] = (param){.off = i, .len = j - i, .name_len = k - i, .index = np, .base = q};
                np++;
            }
        }
        i = j + 1;
    }
    if (c->sort_query && np > 1)
        qsort(ps, np, sizeof *ps, param_cmp);
    for (size_t i = 0; i < np; i++) {
        sb_putc(out, i ? '&' : '?');
        sb_put(out, q + ps[i].off, ps[i].len);
    }
    if (ps != stack)
        free(ps);
    return SIEVE_OK;
}

/* ---- the canonicalizer ---- */

void sieve_canon_config_init(sieve_canon_config *cfg)
{
    *cfg = (sieve_canon_config){
        .max_len = SIEVE_CANON_MAX_LEN,
        .max_segments = SIEVE_CANON_MAX_SEGMENTS,
        .max_repeat = SIEVE_CANON_MAX_REPEAT,
    };
}

void sieve_canon_free(sieve_canon *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n_strip; i++)
        free(c->strip[i]);
    free(c->strip);
    free(c);
}

int sieve_canon_new(sieve_canon **out, const sieve_canon_config *cfg)
{
    sieve_canon_config def;
    if (!out)
        return SIEVE_EINVAL;
    *out = NULL;
    if (!cfg) {
        sieve_canon_config_init(&def);
        cfg = &def;
    }
    if (cfg->max_len < 16 || cfg->max_len > SIEVE_CANON_MAX_LEN_LIMIT ||
        (cfg->n_strip_params && !cfg->strip_params))
        return SIEVE_EINVAL;
    for (size_t i = 0; i < cfg->n_strip_params; i++)
        if (!cfg->strip_params[i] || !cfg->strip_params[i][0])
            return SIEVE_EINVAL;
    sieve_canon *c = calloc(1, sizeof *c);
    if (!c)
        return SIEVE_ENOMEM;
    c->max_len = cfg->max_len;
    c->max_segments = cfg->max_segments;
    c->max_repeat = cfg->max_repeat;
    c->sort_query = cfg->sort_query;
    if (cfg->n_strip_params) {
        c->strip = calloc(cfg->n_strip_params, sizeof *c->strip);
        if (!c->strip)
            goto nomem;
        for (; c->n_strip < cfg->n_strip_params; c->n_strip++) {
            char *p = strdup(cfg->strip_params[c->n_strip]);
            if (!p)
                goto nomem;
            for (char *q = p; *q; q++)
                *q = (char)lower((unsigned char)*q);
            c->strip[c->n_strip] = p;
        }
    }
    *out = c;
    return SIEVE_OK;
nomem:
    sieve_canon_free(c);
    return SIEVE_ENOMEM;
}

size_t sieve_canon_max_len(const sieve_canon *c)
{
    return c->max_len;
}

int url_map_curl(CURLUcode rc)
{
    switch (rc) {
    case CURLUE_OK:
        return SIEVE_OK;
    case CURLUE_OUT_OF_MEMORY:
        return SIEVE_ENOMEM;
    case CURLUE_UNSUPPORTED_SCHEME:
        return SIEVE_ESCHEME;
    default:
        return SIEVE_EURL;
    }
}

/* Whether a host curl accepted is one a canonical URL may carry: an IPv6
 * literal, or a name of letters, digits, '-', '.' and '_'. curl decodes
 * escapes in hosts and lets some odd bytes through ("a%25b" becomes
 * "a%b"), which would not survive a second canonicalization. */
static bool host_ok(const char *h)
{
    if (h[0] == '[')
        return true;
    for (; *h; h++) {
        unsigned char c = (unsigned char)*h;
        if (!(is_unreserved(c) && c != '~'))
            return false;
    }
    return true;
}

/* The parts of a parsed URL, each owned by curl. */
typedef struct parts {
    char *scheme, *host, *port, *path, *query;
} parts;

static void parts_free(parts *p)
{
    curl_free(p->scheme);
    curl_free(p->host);
    curl_free(p->port);
    curl_free(p->path);
    curl_free(p->query);
}

/* curl normalizes an IPv4 host ("0x7f.1" -> "127.0.0.1") before it
 * decodes escapes in it, so "%32" comes back as "2", which a second
 * canonicalization would turn into "0.0.0.2". A host that could still be
 * an IPv4 number goes through curl once more; real names rarely look like
 * one, so this costs nothing on common URLs. Reuses u: the other parts
 * have been fetched. */
/* True for a dotted quad as curl writes it: four decimal numbers 0..255
 * without leading zeros. A second pass would return it unchanged. */
static bool canonical_ipv4(const char *h)
{
    for (int part = 0; part < 4; part++) {
        if (!isdigit((unsigned char)h[0]))
            return false;
        unsigned v = 0, digits = 0;
        while (isdigit((unsigned char)*h) && digits < 4)
            v = v * 10 + (unsigned)(*h++ - '0'), digits++;
        if (v > 255 || (digits > 1 && h[-(int)digits] == '0'))
            return false;
        if (part < 3 && *h++ != '.')
            return false;
    }
    return *h == '\0';
}

static int numeric_host_again(CURLU *u, parts *p)
{
    if (canonical_ipv4(p->host))
        return SIEVE_OK;
    size_t n = strlen(p->host);
    for (size_t i = 0; i < n; i++)
        if (!strchr("0123456789abcdefABCDEFxX.", p->host[i]))
            return SIEVE_OK;
    char buf[SCRATCH];
    if (n + 9 > sizeof buf)
        return SIEVE_EURL;
    memcpy(buf, "http://", 7);
    memcpy(buf + 7, p->host, n);
    memcpy(buf + 7 + n, "/", 2);
    char *again = NULL;
    if (curl_url_set(u, CURLUPART_URL, buf, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &again, 0) != CURLUE_OK)
        return SIEVE_EURL;
    curl_free(p->host);
    p->host = again;
    return SIEVE_OK;
}

/* Fetches the parts; SIEVE_ESCHEME unless http(s). The host comes back in
 * punycode; the IDN conversion is the one step that can fail on a URL curl
 * accepted (invalid UTF-8, or a non-UTF-8 locale). */
static int get_parts(CURLU *u, parts *p)
{
    CURLUcode rc = curl_url_get(u, CURLUPART_SCHEME, &p->scheme, 0);
    if (rc)
        return url_map_curl(rc);
    if (strcasecmp(p->scheme, "http") != 0 && strcasecmp(p->scheme, "https") != 0)
        return SIEVE_ESCHEME;
    /* curl 7.88 reports a failed IDN conversion as out of memory: a host
     * that cannot be converted is a bad host either way. */
    rc = curl_url_get(u, CURLUPART_HOST, &p->host, CURLU_PUNYCODE);
    if (rc || !p->host[0] || !host_ok(p->host))
        return SIEVE_EURL;
    rc = curl_url_get(u, CURLUPART_PORT, &p->port, CURLU_NO_DEFAULT_PORT);
    if (rc && rc != CURLUE_NO_PORT)
        return url_map_curl(rc);
    rc = curl_url_get(u, CURLUPART_PATH, &p->path, 0);
    if (rc)
        return url_map_curl(rc);
    rc = curl_url_get(u, CURLUPART_QUERY, &p->query, 0);
    if (rc && rc != CURLUE_NO_QUERY)
        return url_map_curl(rc);
    return numeric_host_again(u, p);
}

/* Normalizes path into b; when decoding exposed a dot segment, lets curl
 * remove it by parsing "http://h" + path in the same handle. */
static int normalize_path(CURLU *u, sbuf *b, const char *path)
{
    size_t n = strlen(path);
    if (n == 0 || path[0] != '/')
        sb_putc(b, '/');
    put_normalized(b, path, n);
    if (b->failed)
        return SIEVE_ENOMEM;
    if (!has_dot_segment(b->p, b->len))
        return SIEVE_OK;
    char stack[SCRATCH];
    sbuf t;
    sb_init(&t, stack, sizeof stack);
    sb_put(&t, "http://h", 8);
    sb_put(&t, b->p, b->len);
    sb_putc(&t, '\0');
    char *clean = NULL;
    int st = t.failed ? SIEVE_ENOMEM : url_map_curl(curl_url_set(u, CURLUPART_URL, t.p, 0));
    if (st == SIEVE_OK)
        st = url_map_curl(curl_url_get(u, CURLUPART_PATH, &clean, 0));
    sb_free(&t);
    if (st == SIEVE_OK) {
        b->len = 0;
        sb_put(b, clean, strlen(clean));
        st = b->failed ? SIEVE_ENOMEM : SIEVE_OK;
    }
    curl_free(clean);
    return st;
}

/* Assembles scheme://host[:port]path[?query] into out and checks guards. */
static int assemble(const sieve_canon *c, CURLU *u, parts *p, sbuf *out, sieve_canon_info *info)
{
    bool https = strcasecmp(p->scheme, "https") == 0;
    sb_put(out, https ? "https://" : "http://", https ? 8 : 7);
    size_t host_off = out->len, host_len = strlen(p->host);
    if (sb_reserve(out, host_len)) {
        for (size_t i = 0; i < host_len; i++)
            out->p[out->len + i] = (char)lower((unsigned char)p->host[i]);
        out->len += host_len;
    }
    if (p->port) {
        sb_putc(out, ':');
        sb_put(out, p->port, strlen(p->port));
    }
    char stack[SCRATCH];
    sbuf path;
    sb_init(&path, stack, sizeof stack);
    int st = normalize_path(u, &path, p->path);
    if (st == SIEVE_OK)
        st = check_segments(c, path.p, path.len);
    sb_put(out, path.p, path.len);
    sb_free(&path);
    if (st != SIEVE_OK)
        return st;
    if (p->query && p->query[0]) {
        char qstack[SCRATCH];
        sbuf q;
        sb_init(&q, qstack, sizeof qstack);
        put_normalized(&q, p->query, strlen(p->query));
        st = q.failed ? SIEVE_ENOMEM : put_query(c, out, q.p, q.len);
        sb_free(&q);
        if (st != SIEVE_OK)
            return st;
    }
    if (out->failed)
        return SIEVE_ENOMEM;
    if (out->len > c->max_len)
        return SIEVE_ETOOLONG;
    info->len = out->len;
    info->host_off = host_off;
    info->host_len = host_len;
    info->https = https;
    return SIEVE_OK;
}

static int canon(const sieve_canon *c, const char *base, const sieve_canon_base *base_b,
                 const char *ref, size_t ref_len, char *out, size_t cap, sieve_canon_info *info);

int sieve_canon_url(const sieve_canon *c, const char *base, const char *ref, size_t ref_len,
                    char *out, size_t cap, sieve_canon_info *info)
{
    return canon(c, base, NULL, ref, ref_len, out, cap, info);
}

int sieve_canon_url_unguarded(const sieve_canon *c, const char *base, const char *ref,
                              size_t ref_len, char *out, size_t cap)
{
    if (!c)
        return SIEVE_EINVAL;
    sieve_canon loose = *c;
    loose.max_segments = loose.max_repeat = 0;
    return canon(&loose, base, NULL, ref, ref_len, out, cap, NULL);
}

int sieve_canon_url_parsed(const sieve_canon *c, const sieve_canon_base *base, const char *ref,
                           size_t ref_len, char *out, size_t cap, sieve_canon_info *info)
{
    return canon(c, NULL, base, ref, ref_len, out, cap, info);
}

static int canon(const sieve_canon *c, const char *base, const sieve_canon_base *base_b,
                 const char *ref, size_t ref_len, char *out, size_t cap, sieve_canon_info *info)
{
    sieve_canon_info scratch_info;
    if (!info)
        info = &scratch_info;
    *info = (sieve_canon_info){0};
    if (!c || (!ref && ref_len) || !out)
        return SIEVE_EINVAL;
    if (ref_len > 4 * c->max_len)
        return SIEVE_ETOOLONG;
    char stack[SCRATCH], ostack[SCRATCH];
    sbuf r, o;
    sb_init(&r, stack, sizeof stack);
    sb_init(&o, ostack, sizeof ostack);
    /* curl never returns the fragment: it need not parse it. Only its
     * bytes from 0x80 up still count, to pass curl the same flags. */
    bool http_base = base_b != NULL || base == NULL || strncasecmp(base, "http://", 7) == 0 ||
                     strncasecmp(base, "https://", 8) == 0;
    size_t cut = ref ? sieve_canon_fragment_at(ref, ref_len, http_base) : 0;
    bool non_ascii = prepare(&r, ref ? ref : "", cut);
    if (cut < ref_len && !non_ascii)
        non_ascii = has_non_ascii(ref + cut, ref_len - cut);
    CURLU *u = NULL;
    parts p = {0};
    int st = r.failed ? SIEVE_ENOMEM : url_parse_ref(&u, base, base_b, r.p, non_ascii);
    if (st == SIEVE_OK)
        st = get_parts(u, &p);
    if (st == SIEVE_OK)
        st = assemble(c, u, &p, &o, info);
    if (st == SIEVE_OK) {
        if (o.len + 1 > cap) {
            st = SIEVE_ERANGE;
        } else {
            memcpy(out, o.p, o.len);
            out[o.len] = '\0';
        }
    }
    if (st != SIEVE_OK && st != SIEVE_ERANGE)
        *info = (sieve_canon_info){0};
    parts_free(&p);
    curl_url_cleanup(u);
    sb_free(&r);
    sb_free(&o);
    return st;
}

int sieve_canon_host(const char *url, char *out, size_t cap, size_t *outlen)
{
    if (outlen)
        *outlen = 0;
    if (!url || !out)
        return SIEVE_EINVAL;
    CURLU *u = curl_url();
    if (!u)
        return SIEVE_ENOMEM;
    char *scheme = NULL, *host = NULL;
    int st = url_map_curl(curl_url_set(u, CURLUPART_URL, url, 0));
    if (st == SIEVE_OK)
        st = url_map_curl(curl_url_get(u, CURLUPART_SCHEME, &scheme, 0));
    if (st == SIEVE_OK && strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0)
        st = SIEVE_ESCHEME;
    if (st == SIEVE_OK && curl_url_get(u, CURLUPART_HOST, &host, CURLU_PUNYCODE) != CURLUE_OK)
        st = SIEVE_EURL;
    if (st == SIEVE_OK) {
        size_t n = strlen(host);
        if (outlen)
            *outlen = n;
        if (n + 1 > cap) {
            st = SIEVE_ERANGE;
        } else {
            for (size_t i = 0; i < n; i++)
                out[i] = (char)lower((unsigned char)host[i]);
            out[n] = '\0';
        }
    }
    curl_free(scheme);
    curl_free(host);
    curl_url_cleanup(u);
    return st;
}
