/* robots.c - robots.txt parsing and path matching (RFC 9309).
 *
 * One pass, two rule lists. Whether a group names our product token is
 * only known at the end of the file (a "*" group may come first), so the
 * parser keeps the rules of groups naming us and those of "*" groups in
 * two lists and picks one at the end. A group naming both feeds both.
 * Patterns are normalized once, at parse time, into a scratch buffer; the
 * finished handle is one allocation holding the header, the chosen rules,
 * the sitemap pointers and their bytes, so it is compact, has no pointers
 * into the caller's body, and free() is a single call.
 *
 * Matching. RFC 9309 picks the matching rule with the longest pattern,
 * Allow on a tie. Rules are sorted that way (longest first, Allow before
 * Disallow) so the first rule that matches is the answer and the scan
 * stops there. A pattern without '*' is a memcmp; in one with '*' each
 * literal run between the '*' is found at its first occurrence after the
 * run before it (Knuth-Morris-Pratt), which never needs to go back: a
 * rule costs O(path + pattern) whatever its wildcards.
 *
 * Normalization is the one sieve_canon_url() applies to URLs, applied to
 * both sides, so a pattern and a path that name the same resource compare
 * equal byte for byte whether or not the caller's path was canonical.
 * Paths also get '*' and '$' escaped, because in a pattern those two can
 * only be written literally as %2A and %24.
 *
 * Limits: the body is cut at SIEVE_ROBOTS_MAX_BYTES at a line end; each
 * rule list and the sitemap list have caps, and a pattern is at most
 * SIEVE_ROBOTS_MAX_PATTERN bytes. Scratch memory is therefore bounded by
 * a small multiple of the parsed bytes. */
#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bytes.h"
#include "sieve/robots.h"
#include "sieve/status.h"

/* Paths up to this many normalized bytes are normalized on the stack. */
#define PATH_STACK 8192

/* A Crawl-delay value longer than this is not a plain number. */
#define DELAY_MAX_CHARS 32

enum robots_mode { MODE_RULES, MODE_ALLOW_ALL, MODE_DISALLOW_ALL };

struct robots_rule {
    const char *pat; /* normalized, without the anchoring '$' */
    size_t len;      /* bytes of pat */
    size_t spec;     /* specificity: len, plus one for the anchor */
    bool allow;
    bool anchored; /* pattern ended with '$' */
    bool wild;     /* pat holds a '*' */
};

struct sieve_robots {
    enum robots_mode mode;
    const struct robots_rule *rules; /* sorted: spec descending, Allow first */
    size_t n_rules;
    const char *const *sitemaps;
    size_t n_sitemaps;
    double crawl_delay;
    sieve_robots_stats stats;
};

/* ---- scratch state of one parse ---- */

/* A rule while parsing: its pattern is at off in the scratch buffer, which
 * may still move. */
struct prule {
    size_t off;
    size_t len;
    bool allow;
    bool anchored;
    bool wild;
};

struct rulelist {
    struct prule *v;
    size_t n, cap;
    size_t dropped;
    double delay; /* largest valid Crawl-delay, negative if none */
};

struct sitemap_ref {
    size_t off, len;
};

struct parser {
    const char *product;
    size_t product_len;
    bool in_agents;  /* the last group line was a user-agent line */
    bool in_group;   /* a user-agent line has been seen */
    bool group_us;   /* the current group names our product token */
    bool group_star; /* the current group names "*" */
    bool any_us;     /* some group names us */
    bool any_star;   /* some group names "*" */
    struct rulelist us, star;
    char *text; /* scratch: normalized patterns, sitemap values */
    size_t text_len, text_cap;
    struct sitemap_ref *maps;
    size_t n_maps;
    size_t maps_cap;
    size_t maps_dropped;
    size_t groups;
    bool nomem;
};

static bool is_ws(unsigned char c)
{
    return c == ' ' || c == '\t';
}

static bool is_token_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' || c == '_';
}

/* Bytes sieve_canon_url() percent-encodes in a path or query, plus '#'
 * and '\': neither can stand unescaped in a path and query. */
static bool must_encode(unsigned char c)
{
    if (c <= 0x20 || c >= 0x7f)
        return true;
    return c == '"' || c == '#' || c == '<' || c == '>' || c == '\\' || c == '^' || c == '`' ||
           c == '{' || c == '|' || c == '}';
}

static size_t put_escape(char *out, unsigned char c)
{
    static const char hex[] = "0123456789ABCDEF";
    out[0] = '%';
    out[1] = hex[c >> 4];
    out[2] = hex[c & 15];
    return 3;
}

/* Writes the normalized form of s[0..n) to out, which has room for 3 * n
 * bytes, and returns its length. In a pattern '*' stays the wildcard; in
 * a path it is literal and becomes %2A. '$' is always literal here: the
 * caller has already removed a pattern's anchor. */
static size_t normalize(char *out, const char *s, size_t n, bool pattern)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '%') {
            int hi = i + 2 < n ? hex_value((unsigned char)s[i + 1]) : -1;
            int lo = hi >= 0 ? hex_value((unsigned char)s[i + 2]) : -1;
            if (lo < 0) {
                o += put_escape(out + o, '%');
                continue;
            }
            unsigned char v = (unsigned char)(hi << 4 | lo);
            if (is_unreserved(v))
                out[o++] = (char)v;
            else
                o += put_escape(out + o, v);
            i += 2;
        } else if (must_encode(c) || c == '$' || (c == '*' && !pattern)) {
            o += put_escape(out + o, c);
        } else {
            out[o++] = (char)c;
        }
    }
    return o;
}

static const char *trim(const char *s, size_t *n)
{
    size_t len = *n;
    while (len > 0 && is_ws((unsigned char)s[0])) {
        s++;
        len--;
    }
    while (len > 0 && is_ws((unsigned char)s[len - 1]))
        len--;
    *n = len;
    return s;
}

static bool key_is(const char *key, size_t n, const char *name)
{
    return strlen(name) == n && strncasecmp(key, name, n) == 0;
}

/* ---- growable scratch arrays ---- */

static bool grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t ncap = *cap ? *cap : 16;
    while (ncap < need)
        ncap *= 2;
    void *np = realloc(*p, ncap * elem);
    if (!np)
        return false;
    *p = np;
    *cap = ncap;
    return true;
}

/* Reserves n bytes at the end of the scratch text; NULL on ENOMEM. One
 * byte more, so that an empty pattern ("Disallow: $") still gets a real
 * pointer. */
static char *text_reserve(struct parser *p, size_t n)
{
    if (!grow((void **)&p->text, &p->text_cap, p->text_len + n + 1, 1)) {
        p->nomem = true;
        return NULL;
    }
    return p->text + p->text_len;
}

static void list_add(struct parser *p, struct rulelist *l, const struct prule *r)
{
    if (l->n == SIEVE_ROBOTS_MAX_RULES) {
        l->dropped++;
        return;
    }
    if (!grow((void **)&l->v, &l->cap, l->n + 1, sizeof *l->v)) {
        p->nomem = true;
        return;
    }
    l->v[l->n++] = *r;
}

/* ---- line handling ---- */

/* Does this user-agent value name "*" or our product token? RFC 9309
 * matches the product token; a line may carry more ("Sieve/1.0 (+url)"),
 * so only its leading run of token characters counts. */
static void agent_line(struct parser *p, const char *v, size_t n)
{
    if (!p->in_agents) {
        p->in_agents = true;
        p->in_group = true;
        p->group_us = p->group_star = false;
        p->groups++;
    }
    if (n >= 1 && v[0] == '*' && (n == 1 || is_ws((unsigned char)v[1]))) {
        p->group_star = true;
        p->any_star = true;
        return;
    }
    size_t t = 0;
    while (t < n && is_token_char((unsigned char)v[t]))
        t++;
    if (t == p->product_len && strncasecmp(v, p->product, t) == 0) {
        p->group_us = true;
        p->any_us = true;
    }
}

static void rule_line(struct parser *p, bool allow, const char *v, size_t n)
{
    p->in_agents = false;
    if (!p->in_group || (!p->group_us && !p->group_star) || n == 0)
        return;
    struct prule r = {.allow = allow};
    if (v[n - 1] == '$') {
        r.anchored = true;
        n--;
    }
    /* Normalization at most triples and at least thirds the length. */
    bool too_long = n > 3 * (size_t)SIEVE_ROBOTS_MAX_PATTERN;
    if (!too_long) {
        char *out = text_reserve(p, 3 * n);
        if (!out)
            return;
        r.off = p->text_len;
        r.len = normalize(out, v, n, true);
        r.wild = memchr(out, '*', r.len) != NULL;
        too_long = r.len > SIEVE_ROBOTS_MAX_PATTERN;
    }
    if (too_long) {
        p->us.dropped += p->group_us;
        p->star.dropped += p->group_star;
        return;
    }
    p->text_len += r.len;
    if (p->group_us)
        list_add(p, &p->us, &r);
    if (p->group_star)
        list_add(p, &p->star, &r);
}

/* A plain decimal number: digits with at most one '.', at least one
 * digit. Digits are gathered as an integer and scaled once, so values
 * such as "0.5" or "2.25" come out exact. No strtod(): it would follow
 * the process locale's decimal point. */
static bool parse_delay(const char *s, size_t n, double *out)
{
    if (n == 0 || n > DELAY_MAX_CHARS)
        return false;
    double mant = 0, scale = 1;
    bool digits = false, dot = false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] >= '0' && s[i] <= '9') {
            mant = mant * 10 + (s[i] - '0');
            if (dot)
                scale *= 10;
            digits = true;
        } else if (s[i] == '.' && !dot) {
            dot = true;
        } else {
            return false;
        }
    }
    if (!digits)
        return false;
    *out = mant / scale;
    return true;
}

static void delay_line(struct parser *p, const char *v, size_t n)
{
    p->in_agents = false;
    double d;
    if (!p->in_group || !parse_delay(v, n, &d))
        return;
    if (p->group_us && d > p->us.delay)
        p->us.delay = d;
    if (p->group_star && d > p->star.delay)
        p->star.delay = d;
}

static void sitemap_line(struct parser *p, const char *v, size_t n)
{
    bool bad = n == 0 || n > SIEVE_ROBOTS_MAX_SITEMAP_LEN;
    for (size_t i = 0; i < n && !bad; i++)
        bad = (unsigned char)v[i] < 0x20 || v[i] == 0x7f;
    if (bad || p->n_maps == SIEVE_ROBOTS_MAX_SITEMAPS) {
        p->maps_dropped++;
        return;
    }
    if (!grow((void **)&p->maps, &p->maps_cap, p->n_maps + 1, sizeof *p->maps)) {
        p->nomem = true;
        return;
    }
    char *out = text_reserve(p, n);
    if (!out)
        return;
    memcpy(out, v, n);
    p->maps[p->n_maps++] = (struct sitemap_ref){p->text_len, n};
    p->text_len += n;
}

static void parse_line(struct parser *p, const char *s, size_t n)
{
    const char *hash = memchr(s, '#', n);
    if (hash)
        n = (size_t)(hash - s);
    const char *colon = memchr(s, ':', n);
    if (!colon)
        return;
    size_t klen = (size_t)(colon - s);
    size_t vlen = n - klen - 1;
    const char *key = trim(s, &klen);
    const char *val = trim(colon + 1, &vlen);
    if (key_is(key, klen, "user-agent"))
        agent_line(p, val, vlen);
    else if (key_is(key, klen, "allow"))
        rule_line(p, true, val, vlen);
    else if (key_is(key, klen, "disallow"))
        rule_line(p, false, val, vlen);
    else if (key_is(key, klen, "crawl-delay"))
        delay_line(p, val, vlen);
    else if (key_is(key, klen, "sitemap"))
        sitemap_line(p, val, vlen);
}

/* How many bytes of the body to read: all of a short body; of a long one,
 * up to its last line end within the limit. */
static size_t parse_extent(const char *s, size_t len)
{
    if (len < SIEVE_ROBOTS_MAX_BYTES)
        return len;
    size_t n = SIEVE_ROBOTS_MAX_BYTES;
    while (n > 0 && s[n - 1] != '\n' && s[n - 1] != '\r')
        n--;
    return n;
}

static void parse_body(struct parser *p, const char *s, size_t n)
{
    size_t i = 0;
    if (n >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0)
        i = 3;
    while (i < n && !p->nomem) {
        size_t start = i;
        while (i < n && s[i] != '\n' && s[i] != '\r')
            i++;
        parse_line(p, s + start, i - start);
        if (i < n && s[i] == '\r' && i + 1 < n && s[i + 1] == '\n')
            i++;
        i++;
    }
}

/* ---- the finished handle ---- */

static int rule_order(const void *a, const void *b)
{
    const struct robots_rule *x = a, *y = b;
    if (x->spec != y->spec)
        return x->spec > y->spec ? -1 : 1;
    return (int)y->allow - (int)x->allow;
}

static size_t align_up(size_t n)
{
    size_t a = alignof(max_align_t);
    return (n + a - 1) / a * a;
}

/* Copies the chosen list and the sitemaps out of the scratch state into
 * one allocation. */
static sieve_robots *build(const struct parser *p, const struct rulelist *l)
{
    size_t text = 0;
    for (size_t i = 0; i < l->n; i++)
        text += l->v[i].len;
    for (size_t i = 0; i < p->n_maps; i++)
        text += p->maps[i].len + 1;
    size_t rules_off = align_up(sizeof(sieve_robots));
    size_t maps_off = align_up(rules_off + l->n * sizeof(struct robots_rule));
    size_t text_off = maps_off + p->n_maps * sizeof(char *);
    sieve_robots *r = malloc(text_off + text);
    if (!r)
        return NULL;
    char *base = (char *)r;
    struct robots_rule *rules = (struct robots_rule *)(base + rules_off);
    const char **maps = (const char **)(base + maps_off);
    char *t = base + text_off;
    for (size_t i = 0; i < l->n; i++) {
        const struct prule *pr = &l->v[i];
        memcpy(t, p->text + pr->off, pr->len);
        rules[i] = (struct robots_rule){t,         pr->len,      pr->len + pr->anchored,
                                        pr->allow, pr->anchored, pr->wild};
        t += pr->len;
    }
    for (size_t i = 0; i < p->n_maps; i++) {
        memcpy(t, p->text + p->maps[i].off, p->maps[i].len);
        t[p->maps[i].len] = '\0';
        maps[i] = t;
        t += p->maps[i].len + 1;
    }
    qsort(rules, l->n, sizeof *rules, rule_order);
    *r = (sieve_robots){.mode = MODE_RULES,
                        .rules = rules,
                        .n_rules = l->n,
                        .sitemaps = maps,
                        .n_sitemaps = p->n_maps,
                        .crawl_delay = l->delay,
                        .stats.memory = text_off + text};
    return r;
}

static bool valid_product(const char *product)
{
    if (!product || !product[0])
        return false;
    for (const char *c = product; *c; c++)
        if (!is_token_char((unsigned char)*c))
            return false;
    return true;
}

int sieve_robots_parse(sieve_robots **out, const void *body, size_t len, const char *product)
{
    if (!out || (!body && len > 0) || !valid_product(product))
        return SIEVE_EINVAL;
    struct parser p = {.product = product, .product_len = strlen(product)};
    p.us.delay = p.star.delay = -1;
    size_t n = parse_extent(body, len);
    parse_body(&p, body, n);
    const struct rulelist *l = p.any_us ? &p.us : &p.star;
    sieve_robots *r = p.nomem ? NULL : build(&p, l);
    if (r) {
        r->stats = (sieve_robots_stats){.memory = r->stats.memory,
                                        .bytes = n,
                                        .truncated = n < len,
                                        .groups = p.groups,
                                        .matched_product = p.any_us,
                                        .matched_star = !p.any_us && p.any_star,
                                        .rules = l->n,
                                        .rules_dropped = l->dropped,
                                        .sitemaps = p.n_maps,
                                        .sitemaps_dropped = p.maps_dropped};
    }
    free(p.us.v);
    free(p.star.v);
    free(p.maps);
    free(p.text);
    if (!r)
        return SIEVE_ENOMEM;
    *out = r;
    return SIEVE_OK;
}

static int make_fixed(sieve_robots **out, enum robots_mode mode)
{
    if (!out)
        return SIEVE_EINVAL;
    sieve_robots *r = calloc(1, sizeof *r);
    if (!r)
        return SIEVE_ENOMEM;
    r->mode = mode;
    r->crawl_delay = -1;
    r->stats.memory = sizeof *r;
    *out = r;
    return SIEVE_OK;
}

int sieve_robots_allow_all(sieve_robots **out)
{
    return make_fixed(out, MODE_ALLOW_ALL);
}

int sieve_robots_disallow_all(sieve_robots **out)
{
    return make_fixed(out, MODE_DISALLOW_ALL);
}

void sieve_robots_free(sieve_robots *r)
{
    free(r);
}

/* ---- matching ---- */

/* Where seg (len m, 1 < m <= SIEVE_ROBOTS_MAX_PATTERN) first occurs in
 * s[0..n), or n: Knuth-Morris-Pratt, so each byte of s is looked at a
 * bounded number of times however much of seg it matches first. */
static size_t find(const char *seg, size_t m, const char *s, size_t n)
{
    uint16_t fail[SIEVE_ROBOTS_MAX_PATTERN]; /* longest border of seg[0..i] */
    fail[0] = 0;
    for (size_t i = 1, k = 0; i < m; i++) {
        while (k && seg[i] != seg[k])
            k = fail[k - 1];
        k += seg[i] == seg[k];
        fail[i] = (uint16_t)k;
    }
    for (size_t i = 0, k = 0; i < n; i++) {
        if (k == 0) {
            /* Nothing matched yet: memchr() finds the next start faster. */
            const char *c = memchr(s + i, seg[0], n - i);
            if (!c)
                return n;
            i = (size_t)(c - s);
        }
        while (k && s[i] != seg[k])
            k = fail[k - 1];
        if (s[i] == seg[k] && ++k == m)
            return i + 1 - m;
    }
    return n;
}

/* Does the pattern (with '*' wildcards, anchored or not) match s? An
 * unanchored pattern only has to match a prefix of s, as if it ended in
 * '*'. The literal runs between the '*' are matched left to right, each
 * at its first occurrence after the one before: a later occurrence
 * leaves less room to what follows and gains nothing, as '*' matches
 * anything. The run before the first '*' must start s; with the anchor,
 * the run after the last must end it. Each run is found in linear time,
 * so a rule costs O(path + pattern) whatever its wildcards; the greedy
 * matcher that retried one byte further after the last '*' cost
 * O(path * pattern), a second per URL for a hostile file. */
static bool wild_match(const char *pat, size_t plen, bool anchored, const char *s, size_t n)
{
    const char *star = memchr(pat, '*', plen);
    size_t head = (size_t)(star - pat);
    if (n < head || memcmp(s, pat, head) != 0)
        return false;
    size_t at = head;
    const char *p = star + 1, *end = pat + plen;
    for (;;) {
        while (p < end && *p == '*')
            p++;
        const char *next = memchr(p, '*', (size_t)(end - p));
        size_t m = (size_t)((next ? next : end) - p);
        if (!next && anchored)
            return n - at >= m && memcmp(s + n - m, p, m) == 0;
        if (m == 0)
            return true;
        const char *hit = m == 1 ? memchr(s + at, *p, n - at) : NULL;
        size_t off = m == 1 ? (hit ? (size_t)(hit - s) - at : n - at) : find(p, m, s + at, n - at);
        if (off + m > n - at)
            return false;
        at += off + m;
        if (!next)
            return true;
        p = next + 1;
    }
}

static bool rule_matches(const struct robots_rule *r, const char *s, size_t n)
{
    if (r->wild)
        return wild_match(r->pat, r->len, r->anchored, s, n);
    if (r->anchored ? n != r->len : n < r->len)
        return false;
    return memcmp(s, r->pat, r->len) == 0;
}

static bool decide(const sieve_robots *r, const char *s, size_t n)
{
    static const char robots_txt[] = "/robots.txt";
    if (n == sizeof robots_txt - 1 && memcmp(s, robots_txt, n) == 0)
        return true;
    if (r->mode != MODE_RULES)
        return r->mode == MODE_ALLOW_ALL;
    for (size_t i = 0; i < r->n_rules; i++)
        if (rule_matches(&r->rules[i], s, n))
            return r->rules[i].allow;
    return true;
}

bool sieve_robots_allowed(const sieve_robots *r, const char *path_and_query, size_t len)
{
    if (!r || (!path_and_query && len > 0))
        return false;
    if (len == 0) {
        path_and_query = "/";
        len = 1;
    }
    if (len > SIZE_MAX / 3)
        return false;
    char stack[PATH_STACK];
    char *buf = stack;
    if (3 * len > sizeof stack) {
        buf = malloc(3 * len);
        if (!buf)
            return false;
    }
    size_t n = normalize(buf, path_and_query, len, false);
    bool ok = decide(r, buf, n);
    if (buf != stack)
        free(buf);
    return ok;
}

double sieve_robots_crawl_delay(const sieve_robots *r)
{
    return r ? r->crawl_delay : -1;
}

size_t sieve_robots_sitemaps(const sieve_robots *r, const char *const **urls)
{
    if (urls)
        *urls = r ? r->sitemaps : NULL;
    return r ? r->n_sitemaps : 0;
}

void sieve_robots_stats_get(const sieve_robots *r, sieve_robots_stats *st)
{
    if (!st)
        return;
    if (r)
        *st = r->stats;
    else
        memset(st, 0, sizeof *st);
}
