/* links.c - link extraction with libxml2's HTML push parser.
 *
 * Why a push parser with SAX: the page arrives in pieces from curl and
 * most of it is text we do not want. htmlParseChunk() consumes what it can
 * and keeps only an incomplete tail, and with a SAX handler that listens
 * to start tags alone no tree is ever built, so memory is the size of the
 * largest tag, not of the page. The parser only hands over a start tag
 * once it has seen its closing '>', which is what makes the links the same
 * however the page is cut into chunks.
 *
 * libxml2 does the HTML work we must not get wrong ourselves: entity
 * decoding in attribute values (&amp;), case-folding of tag and attribute
 * names, unquoted attributes, recovery from broken markup, and charset
 * detection (BOM, <meta charset>; an undeclared page that is not UTF-8
 * falls back to ISO-8859-1). Its attribute values reach us as UTF-8.
 *
 * Each link goes through sieve_canon_url() into one buffer of max_len + 1
 * bytes that lives as long as the extractor, except that a page's hrefs
 * are canonicalized once each: real pages repeat their links (navigation,
 * the same type named in every signature of an API reference), and a
 * fragment-only href ("#top", a seventh of the links on a documentation
 * site) names the base itself. Each result is kept in a small per-page
 * table keyed by the href as libxml2 delivers it; the table is bounded
 * (HREF_MAX entries, HREF_ARENA_MAX bytes, then it starts over), so a page
 * with a million links costs no more memory than one with a few
 * thousand. */
#include <libxml/HTMLparser.h>
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <xxhash.h>

#include "bytes.h"
#include "sieve/links.h"
#include "links-internal.h"
#include "sieve/status.h"
#include "url-internal.h"

/* Chunks smaller than this are gathered before libxml2 sees them. */
#define STAGE_MIN 512
/* Largest piece handed to libxml2 at once, so max_pending is checked
 * often even when one feed brings megabytes. */
#define PIECE_MAX (1024 * 1024)
/* Text runs shorter than this go to libxml2: a cut costs a call. */
#define SKIP_MIN 32
/* Most bytes of an unfinished tag, comment or script a feed may hold back
 * for the next, to squeeze them whole. */
#define CARRY_MAX (16 * 1024)
/* Most attributes of a tag the squeeze reads; a tag with more goes to
 * libxml2 as it is, where the limit on attributes applies. */
#define PLAIN_ATTRS_MAX 256
/* Bytes libxml2 may keep of what it has already read. */
#define SHRINK_AT 4096
/* libxml2 cuts tag and attribute names at this many characters and reads
 * on as if a new attribute started (HTML_PARSER_BUFFER_SIZE). */
#define NAME_CUT 100
/* Bytes a call hands to libxml2 when a converter the extractor cannot read
 * through stands in between: at most half as many attributes. */
#define CONV_PIECE 1024
/* Longest start tag libxml2 may hold behind such a converter. */
#define CONV_TAG_MAX (16 * 1024)
/* Most distinct hrefs, and bytes of hrefs and URLs, a page's table keeps
 * before it starts over: about 220 KiB at most. */
#define HREF_MAX       2048
#define HREF_ARENA_MAX (128 * 1024)
/* A <meta> charset is honoured in this many first bytes of the page... */
#define SWITCH_WINDOW (64 * 1024)
/* ...which reach libxml2 this many at a time. */
#define SWITCH_PIECE 512

/* A start tag read as libxml2's htmlParseStartTag() reads it. */
enum tag_state {
    TAG_OPEN,         /* after the '<' */
    TAG_NAME,         /* in the element name */
    TAG_BEFORE_ATTR,  /* where an attribute may start */
    TAG_ATTR_NAME,    /* in an attribute name */
    TAG_AFTER_NAME,   /* blanks after it */
    TAG_BEFORE_VALUE, /* after its '=' */
    TAG_DQ,           /* in a "value" */
    TAG_SQ,           /* in a 'value' */
    TAG_UNQUOTED,     /* in a value without quotes */
    TAG_SKIP,         /* skipping what is no attribute, up to a blank */
    TAG_BOGUS,        /* no element name: skipping up to the '>' */
    TAG_END,          /* after the '>' */
};

struct tag_scan {
    enum tag_state state;
    size_t len;   /* characters of the current name */
    size_t attrs; /* attributes so far */
};

/* What libxml2 held after the last call, counted before the next. */
struct held {
    bool tag;          /* a start tag whose end it has not seen */
    struct tag_scan t; /* that tag, up to the last byte held */
    size_t tag_bytes;  /* its bytes */
    size_t loose;      /* attribute starts it may yet read elsewhere */
};

/* How an href resolves against the base, for its memo key. */
enum memo_kind { MEMO_ABSOLUTE, MEMO_SCHEME, MEMO_ORIGIN, MEMO_DIR, MEMO_FULL, MEMO_KINDS };

/* One href met on the page and what canonicalization made of it: its
 * bytes, then the URL's, in the arena. */
struct href {
    uint64_t hash;
    uint32_t key_off, key_len, url_len; /* the URL follows the key */
    uint32_t host_off, host_len;
    int status;
    bool https;
};

struct href_table {
    struct href *e;  /* entries, in the order met */
    uint32_t n, cap; /* entries used, allocated */
    uint32_t *slot;  /* open addressing: entry index + 1, 0 empty */
    uint32_t mask;   /* slots - 1; slots >= 2 * cap */
    char *arena;
    size_t used, size;
};

struct sieve_links {
    htmlParserCtxtPtr ctxt;
    htmlSAXHandler sax;
    const sieve_canon *canon;
    sieve_link_fn fn;
    void *ctx;
    bool follow_nofollow;
    bool report_errors;
    bool base_seen; /* the first <base href> was met (used or not) */
    bool finished;
    bool in_text;   /* libxml2 is idle in text: skip to the next '<' */
    int hiding;     /* enum sieve_links_hiding */
    char *squeezed; /* what a squeeze hands to libxml2 */
    size_t squeezed_cap;
    int err;            /* sticky failure: SIEVE_ENOMEM, SIEVE_ETOOLONG */
    size_t max_pending; /* most unparsed bytes libxml2 may hold */
    size_t pending;     /* unparsed bytes it held after the last call */
    char *stage;        /* small chunks wait here until flush_at bytes */
    size_t stage_len, stage_cap;
    size_t flush_at;
    bool keep_nul;  /* a wide charset was given: NUL bytes are text */
    size_t max_ref; /* longest attribute value worth canonicalizing */
    char *page;     /* canonical page URL */
    char *base;     /* current base: page or resolved <base href> */
    CURLU *base_u;  /* the same, parsed once for all the links after it */
    char *out;      /* max_len + 1 bytes for each link's URL */
    size_t cap;
    struct held held;                       /* what libxml2 holds unparsed, as counted */
    unsigned char prev;                     /* last byte handed to libxml2 */
    size_t run;                             /* name characters it ended with */
    bool stopped;                           /* a limit ended the page: the rest is ignored */
    struct href_table hrefs;                /* this page's hrefs, canonicalized */
    const sieve_links_memo *memo;           /* links handled before, by key */
    uint64_t seed[MEMO_KINDS];              /* the base's parts, hashed, by href kind */
    const xmlCharEncodingHandler *enc_seen; /* the converter last checked */
    bool enc_keeps_ascii;                   /* and whether it keeps ASCII */
    sieve_links_stats st;
};

/* The attribute that carries the link of each element we follow. */
static const char *link_attr(const char *tag)
{
    if (strcmp(tag, "a") == 0 || strcmp(tag, "area") == 0)
        return "href";
    if (strcmp(tag, "frame") == 0 || strcmp(tag, "iframe") == 0)
        return "src";
    return NULL;
}

static bool is_html_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
}

/* Whether the rel token list holds "nofollow", in any case. */
static bool rel_nofollow(const char *rel)
{
    const char *p = rel;
    while (*p) {
        while (is_html_space(*p))
            p++;
        const char *tok = p;
        while (*p && !is_html_space(*p))
            p++;
        if (p - tok == 8 && strncasecmp(tok, "nofollow", 8) == 0)
            return true;
    }
    return false;
}

/* Whether a robots meta content ("noindex, nofollow") says nofollow or
 * none, in any case. */
static bool meta_says_nofollow(const char *content)
{
    const char *p = content;
    while (*p) {
        while (*p == ',' || is_html_space(*p))
            p++;
        const char *tok = p;
        while (*p && *p != ',' && !is_html_space(*p))
            p++;
        size_t n = (size_t)(p - tok);
        if ((n == 8 && strncasecmp(tok, "nofollow", 8) == 0) ||
            (n == 4 && strncasecmp(tok, "none", 4) == 0))
            return true;
    }
    return false;
}

/* Looks up an attribute by name; *found tells a valueless attribute from
 * an absent one. libxml2 already lower-cases HTML attribute names. */
static const char *attr(const xmlChar **atts, const char *name, bool *found)
{
    *found = false;
    for (size_t i = 0; atts && atts[i]; i += 2) {
        if (strcasecmp((const char *)atts[i], name) == 0) {
            *found = true;
            return atts[i + 1] ? (const char *)atts[i + 1] : "";
        }
    }
    return NULL;
}

static void count(sieve_links *lx, int status)
{
    switch (status) {
    case SIEVE_OK:
        lx->st.passed++;
        break;
    case SIEVE_ESCHEME:
        lx->st.scheme++;
        break;
    case SIEVE_ETOOLONG:
    case SIEVE_ESEGMENTS:
    case SIEVE_EREPEAT:
        lx->st.trap++;
        break;
    case SIEVE_ENOMEM:
        lx->err = SIEVE_ENOMEM;
        lx->st.invalid++;
        break;
    default:
        lx->st.invalid++;
        break;
    }
}

static void hrefs_free(struct href_table *t)
{
    free(t->e);
    free(t->slot);
    free(t->arena);
    *t = (struct href_table){0};
}

/* Empties the table, keeping its memory: the base changed, or it is full. */
static void hrefs_clear(struct href_table *t)
{
    t->n = 0;
    t->used = 0;
    if (t->slot)
        memset(t->slot, 0, ((size_t)t->mask + 1) * sizeof *t->slot);
}

static const struct href *hrefs_find(const struct href_table *t, const char *key, size_t len,
                                     uint64_t hash)
{
    if (!t->slot)
        return NULL;
    for (uint32_t i = (uint32_t)hash & t->mask;; i = (i + 1) & t->mask) {
        uint32_t k = t->slot[i];
        if (k == 0)
            return NULL;
        const struct href *e = &t->e[k - 1];
        if (e->hash == hash && e->key_len == len && memcmp(t->arena + e->key_off, key, len) == 0)
            return e;
    }
}

/* Room for one more entry of `bytes` arena bytes; false when memory ran
 * out (the link is then simply not kept). */
static bool hrefs_room(struct href_table *t, size_t bytes)
{
    if (t->n == HREF_MAX || t->used + bytes > HREF_ARENA_MAX) {
        if (bytes > HREF_ARENA_MAX)
            return false;
        hrefs_clear(t);
    }
    if (t->n == t->cap) {
        uint32_t cap = t->cap ? 2 * t->cap : 32;
        struct href *e = realloc(t->e, cap * sizeof *e);
        uint32_t *slot = calloc(2 * (size_t)cap, sizeof *slot);
        if (!e || !slot) {
            free(slot);
            if (e)
                t->e = e;
            return false;
        }
        t->e = e;
        t->cap = cap;
        free(t->slot);
        t->slot = slot;
        t->mask = 2 * cap - 1;
        for (uint32_t k = 0; k < t->n; k++) {
            uint32_t i = (uint32_t)t->e[k].hash & t->mask;
            while (t->slot[i])
                i = (i + 1) & t->mask;
            t->slot[i] = k + 1;
        }
    }
    if (t->used + bytes > t->size) {
        size_t size = t->size ? t->size : 4096;
        while (size < t->used + bytes)
            size *= 2;
        char *a = realloc(t->arena, size);
        if (!a)
            return false;
        t->arena = a;
        t->size = size;
    }
    return true;
}

static void hrefs_add(struct href_table *t, const char *key, size_t len, uint64_t hash,
                      const sieve_link *link)
{
    size_t url_len = link->status == SIEVE_OK ? link->url_len : 0;
    if (!hrefs_room(t, len + url_len))
        return;
    struct href *e = &t->e[t->n];
    *e = (struct href){.hash = hash,
                       .key_off = (uint32_t)t->used,
                       .key_len = (uint32_t)len,
                       .url_len = (uint32_t)url_len,
                       .host_off = (uint32_t)link->info.host_off,
                       .host_len = (uint32_t)link->info.host_len,
                       .status = link->status,
                       .https = link->info.https};
    memcpy(t->arena + t->used, key, len);
    if (url_len > 0) /* a refused link has no URL */
        memcpy(t->arena + t->used + len, link->url, url_len);
    t->used += len + url_len;
    uint32_t i = (uint32_t)hash & t->mask;
    while (t->slot[i])
        i = (i + 1) & t->mask;
    t->slot[i] = ++t->n;
}

/* ---- memo keys (see sieve_links_memo in sieve/links.h) ----
 *
 * What part of the base an href resolves against depends on how it
 * starts, as curl's URL API resolves it: nothing for an absolute http(s)
 * URL, the scheme for "//host", the origin for "/path", the directory
 * (up to the path's last '/') for a relative path, and the whole base for
 * "?query", a fragment, an empty href and anything else with a ':' before
 * its first '/', '?' or '#' (a scheme of some other kind). Each kind seeds
 * the href's hash with that part's hash, so equal keys mean the same
 * href against the same part. */
static void memo_seeds(sieve_links *lx)
{
    const char *b = lx->base; /* canonical: scheme://authority/path[?query] */
    size_t n = strlen(b), scheme = strcspn(b, ":");
    size_t origin = scheme + 3 + strcspn(b + scheme + 3, "/?#");
    size_t full = strcspn(b, "#"), dir = origin;
    for (size_t i = origin; i < full && b[i] != '?'; i++)
        if (b[i] == '/')
            dir = i + 1;
    if (scheme + 3 > n)
        origin = dir = full = n;
    lx->seed[MEMO_ABSOLUTE] = 1;
    lx->seed[MEMO_SCHEME] = XXH3_64bits(b, scheme) + MEMO_SCHEME;
    lx->seed[MEMO_ORIGIN] = XXH3_64bits(b, origin) + MEMO_ORIGIN;
    lx->seed[MEMO_DIR] = XXH3_64bits(b, dir) + MEMO_DIR;
    lx->seed[MEMO_FULL] = XXH3_64bits(b, full) + MEMO_FULL;
}

static bool starts_http(const char *v)
{
    return strncasecmp(v, "http://", 7) == 0 || strncasecmp(v, "https://", 8) == 0;
}

/* The memo key of href v (n bytes, fragment_only() already applied: an
 * empty key stands for the base), or 0 when it has none. */
static uint64_t memo_key(const sieve_links *lx, const char *v, size_t n)
{
    enum memo_kind k;
    if (n == 0 || v[0] == '?')
        k = MEMO_FULL;
    else if ((unsigned char)v[0] <= 0x20)
        return 0; /* trimmed by canonicalization: keep it simple */
    else if (v[0] == '/')
        k = v[1] == '/' ? MEMO_SCHEME : MEMO_ORIGIN;
    else if (starts_http(v))
        k = MEMO_ABSOLUTE;
    else
        k = v[strcspn(v, ":/?#")] == ':' ? MEMO_FULL : MEMO_DIR;
    uint64_t key = XXH3_64bits_withSeed(v, n, lx->seed[k]);
    return key != 0 ? key : 1;
}

/* Whether an href names the base itself: nothing but a fragment once the
 * blanks and controls that canonicalization trims are gone. */
static bool fragment_only(const char *v)
{
    while (*v && (unsigned char)*v <= 0x20)
        v++;
    return *v == '\0' || *v == '#';
}

/* Canonicalizes value (n bytes) into link, or takes what this page's
 * table holds for it. Every fragment-only href shares the entry of "". */
static void resolve(sieve_links *lx, const char *value, size_t n, sieve_link *link)
{
    const char *key = value;
    if (fragment_only(value))
        key = "", n = 0;
    link->key = memo_key(lx, key, n);
    if (sieve_links_memo_has(lx->memo, link->key)) {
        link->status = SIEVE_SEEN;
        return;
    }
    uint64_t hash = XXH3_64bits(key, n);
    const struct href *e = hrefs_find(&lx->hrefs, key, n, hash);
    if (e) {
        link->status = e->status;
        if (e->status == SIEVE_OK) {
            memcpy(lx->out, lx->hrefs.arena + e->key_off + e->key_len, e->url_len);
            lx->out[e->url_len] = '\0';
        }
        link->info = (sieve_canon_info){
            .len = e->url_len, .host_off = e->host_off, .host_len = e->host_len, .https = e->https};
        return;
    }
    link->status =
        lx->base_u != NULL
            ? sieve_canon_url_parsed(lx->canon, lx->base_u, key, n, lx->out, lx->cap, &link->info)
            : sieve_canon_url(lx->canon, lx->base, key, n, lx->out, lx->cap, &link->info);
    if (link->status == SIEVE_ENOMEM)
        return;
    if (link->status == SIEVE_OK) {
        link->url = lx->out;
        link->url_len = link->info.len;
    }
    hrefs_add(&lx->hrefs, key, n, hash, link);
}

/* The first <base> with an href fixes the base for the links after it.
 * A base that does not resolve to an http(s) URL leaves the page URL in
 * place, as HTML falls back to the document URL. */
static void on_base(sieve_links *lx, const char *href)
{
    lx->base_seen = true;
    size_t n = strnlen(href, lx->max_ref + 1);
    if (sieve_canon_url(lx->canon, lx->page, href, n, lx->out, lx->cap, NULL) != SIEVE_OK)
        return;
    memcpy(lx->base, lx->out, strlen(lx->out) + 1);
    memo_seeds(lx);
    lx->st.base_used = strcmp(lx->base, lx->page) != 0;
    curl_url_cleanup(lx->base_u);
    lx->base_u = sieve_canon_parse_base(lx->base);
    hrefs_clear(&lx->hrefs);
}

static void on_link(sieve_links *lx, const char *tag, const char *value, const xmlChar **atts)
{
    lx->st.found++;
    bool has_rel;
    const char *rel = attr(atts, "rel", &has_rel);
    bool nofollow = lx->st.meta_nofollow || (has_rel && rel_nofollow(rel));
    if (nofollow && !lx->follow_nofollow) {
        lx->st.nofollow++;
        return;
    }
    /* strnlen bounds the work on a huge attribute: canon refuses it by
     * length alone. */
    size_t n = strnlen(value, lx->max_ref + 1);
    sieve_link link = {.raw = n > lx->max_ref ? NULL : value,
                       .raw_len = n > lx->max_ref ? 0 : n,
                       .tag = tag,
                       .nofollow = nofollow};
    /* A value too long to canonicalize is refused by its length alone. */
    if (n > lx->max_ref)
        link.status = sieve_canon_url(lx->canon, lx->base, value, n, lx->out, lx->cap, &link.info);
    else
        resolve(lx, value, n, &link);
    if (link.status == SIEVE_SEEN) { /* in the memo */
        lx->st.known++;
        return;
    }
    count(lx, link.status);
    if (link.status == SIEVE_OK) {
        link.url = lx->out;
        link.url_len = link.info.len;
    } else if (!lx->report_errors) {
        return;
    }
    lx->fn(lx->ctx, &link);
}

/* See "Bounding libxml2's work" below: an element deeper than
 * SIEVE_LINKS_MAX_DEPTH takes its parent's place on libxml2's stack. It
 * stays the current element, which is all that libxml2's reading of what
 * follows depends on (script and style). */
static void limit_depth(sieve_links *lx)
{
    htmlParserCtxtPtr c = lx->ctxt;
    if (c->nameNr > SIEVE_LINKS_MAX_DEPTH) {
        c->nameTab[c->nameNr - 2] = c->nameTab[c->nameNr - 1];
        c->nameTab[--c->nameNr] = NULL;
        lx->st.depth_capped++;
    }
    if ((size_t)c->nameNr > lx->st.depth_max)
        lx->st.depth_max = (size_t)c->nameNr;
}

static void on_start(void *ud, const xmlChar *name, const xmlChar **atts)
{
    sieve_links *lx = ud;
    const char *tag = (const char *)name;
    limit_depth(lx);
    size_t n = 0;
    while (atts && atts[2 * n])
        n++;
    if (n > lx->st.attrs_max)
        lx->st.attrs_max = n;
    if (!tag || lx->err)
        return;
    bool has;
    if (!lx->base_seen && strcmp(tag, "base") == 0) {
        const char *href = attr(atts, "href", &has);
        if (has)
            on_base(lx, href);
        return;
    }
    if (strcmp(tag, "meta") == 0) {
        /* the robots meta tag: for all crawlers, or for this one */
        const char *mname = attr(atts, "name", &has);
        const char *content = attr(atts, "content", &has);
        if (mname != NULL && content != NULL &&
            (strcasecmp(mname, "robots") == 0 || strcasecmp(mname, "sieve") == 0) &&
            meta_says_nofollow(content))
            lx->st.meta_nofollow = true;
        return;
    }
    const char *an = link_attr(tag);
    if (!an)
        return;
    const char *value = attr(atts, an, &has);
    if (has)
        on_link(lx, tag, value, atts);
}

static void quiet(void *ctx, const char *msg, ...)
{
    (void)ctx;
    (void)msg;
}

void sieve_links_global_init(void)
{
    xmlInitParser();
    /* Charset conversion errors bypass the parser's NOERROR option and go
     * to libxml2's generic handler, which prints to stderr: a crawler
     * would print one for every page with a broken encoding. */
    xmlThrDefSetGenericErrorFunc(NULL, quiet);
    xmlSetGenericErrorFunc(NULL, quiet);
}

void sieve_links_free(sieve_links *lx)
{
    if (!lx)
        return;
    if (lx->ctxt)
        htmlFreeParserCtxt(lx->ctxt);
    free(lx->page);
    free(lx->base);
    curl_url_cleanup(lx->base_u);
    hrefs_free(&lx->hrefs);
    free(lx->out);
    free(lx->stage);
    free(lx->squeezed);
    free(lx);
}

/* Creates the push parser; a caller-given charset overrides the page's. */
static int make_parser(sieve_links *lx, const char *charset)
{
    xmlCharEncodingHandlerPtr enc = NULL;
    if (charset) {
        /* Any spelling of UTF-8 gets libxml2's own converter, which lets
         * bytes through as they are; "utf8" would otherwise go to iconv. */
        if (xmlParseCharEncoding(charset) == XML_CHAR_ENCODING_UTF8)
            charset = "UTF-8";
        enc = xmlFindCharEncodingHandler(charset);
        if (!enc)
            return SIEVE_EINVAL;
    }
    lx->sax.startElement = on_start;
    lx->ctxt = htmlCreatePushParserCtxt(&lx->sax, lx, NULL, 0, NULL, XML_CHAR_ENCODING_NONE);
    if (!lx->ctxt) {
        if (enc)
            xmlCharEncCloseFunc(enc);
        return SIEVE_ENOMEM;
    }
    int opt = HTML_PARSE_NONET | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING | HTML_PARSE_RECOVER;
    if (enc) {
        opt |= HTML_PARSE_IGNORE_ENC;
        if (xmlSwitchToEncoding(lx->ctxt, enc) != 0)
            return SIEVE_EINVAL;
    } else {
        /* Read undeclared pages as UTF-8, as most of the web is. Without
         * this, libxml2 2.9 switches to ISO-8859-1 at the first non-ASCII
         * byte, guessing from an http-equiv it may or may not have in its
         * buffer yet - a result that would depend on the chunking. A
         * <meta charset> still switches, and invalid UTF-8 still falls
         * back to ISO-8859-1 from the bad byte on. */
        lx->ctxt->charset = XML_CHAR_ENCODING_UTF8;
    }
    htmlCtxtUseOptions(lx->ctxt, opt);
    return SIEVE_OK;
}

/* Whether a charset label names a UTF-16 or UTF-32 encoding, whose NUL
 * bytes are parts of characters. Labels are matched whole, ignoring case
 * and surrounding blanks, as the WHATWG Encoding Standard matches them
 * (its UTF-16 labels, and the UTF-32 and UCS-4 names iconv knows): a
 * substring test would take ISO-8859-16 for UTF-16. */
static bool is_wide_charset(const char *label)
{
    static const char *const wide[] = {
        "utf-16",          "utf-16le",        "utf-16be",    "unicode",
        "csunicode",       "ucs-2",           "unicodefeff", "unicodefffe",
        "iso-10646-ucs-2", "utf-32",          "utf-32le",    "utf-32be",
        "ucs-4",           "iso-10646-ucs-4", "ucs4",        "ucs2",
    };
    while (*label == ' ' || *label == '\t' || *label == '\n' || *label == '\r' || *label == '\f')
        label++;
    size_t n = strlen(label);
    while (n > 0 && strchr(" \t\n\r\f", label[n - 1]) != NULL)
        n--;
    for (size_t i = 0; i < sizeof wide / sizeof *wide; i++)
        if (strlen(wide[i]) == n && strncasecmp(label, wide[i], n) == 0)
            return true;
    return false;
}

int sieve_links_new(sieve_links **out, const char *page_url, const sieve_links_opts *opts,
                    sieve_link_fn fn, void *ctx)
{
    if (!out)
        return SIEVE_EINVAL;
    *out = NULL;
    if (!page_url || !opts || !opts->canon || !fn)
        return SIEVE_EINVAL;
    xmlInitParser();
    sieve_links *lx = calloc(1, sizeof *lx);
    if (!lx)
        return SIEVE_ENOMEM;
    lx->canon = opts->canon;
    lx->fn = fn;
    lx->ctx = ctx;
    lx->follow_nofollow = opts->follow_nofollow;
    lx->report_errors = opts->report_errors;
    lx->memo = opts->memo;
    lx->max_pending = opts->max_pending ? opts->max_pending : SIEVE_LINKS_MAX_PENDING;
    lx->flush_at = STAGE_MIN;
    lx->hiding = SIEVE_LINKS_HIDE_ALL;
    lx->keep_nul = opts->charset != NULL && is_wide_charset(opts->charset);
    lx->cap = sieve_canon_max_len(opts->canon) + 1;
    lx->max_ref = 4 * sieve_canon_max_len(opts->canon);
    lx->page = malloc(lx->cap);
    lx->base = malloc(lx->cap);
    lx->out = malloc(lx->cap);
    int st = lx->page && lx->base && lx->out ? SIEVE_OK : SIEVE_ENOMEM;
    if (st == SIEVE_OK)
        st =
            sieve_canon_url(opts->canon, NULL, page_url, strlen(page_url), lx->page, lx->cap, NULL);
    if (st == SIEVE_OK) {
        memcpy(lx->base, lx->page, lx->cap);
        memo_seeds(lx);
        lx->base_u = sieve_canon_parse_base(lx->base); /* NULL: the slower path */
        st = make_parser(lx, opts->charset);
    }
    if (st != SIEVE_OK) {
        sieve_links_free(lx);
        return st;
    }
    *out = lx;
    return SIEVE_OK;
}

/* libxml2's push parser ends the document at the end tag that empties its
 * element stack - </html>, or a stray </div> before any element - and
 * drops every byte after it, while browsers read on (pages often carry
 * scripts and links after </html>). So when the parser has entered its
 * epilog, or left it because something other than a comment followed,
 * put it back into content state and let it go on with the bytes it
 * holds. Each round consumes input or stops, so the loop ends. */
static void read_past_root_end(htmlParserCtxtPtr c, int terminate)
{
    for (;;) {
        bool epilog = c->instate == XML_PARSER_EPILOG;
        /* At the end every state becomes EOF: bytes left unparsed tell. */
        bool ended = c->instate == XML_PARSER_EOF && (c->errNo == XML_ERR_DOCUMENT_END ||
                                                      (terminate && c->errNo != XML_ERR_NO_MEMORY));
        if ((!epilog && !ended) || !c->input)
            return;
        const xmlChar *at = c->input->cur;
        if (!terminate) {
            c->instate = XML_PARSER_CONTENT;
            c->errNo = XML_ERR_OK;
        }
        if (at == c->input->end)
            return;
        c->instate = XML_PARSER_CONTENT;
        c->errNo = XML_ERR_OK;
        c->checkIndex = 0;
        htmlParseChunk(c, NULL, 0, terminate);
        if (c->input->cur == at)
            return;
    }
}

/* One call into libxml2. checkIndex is where its next look-ahead for a
 * tag's '>' resumes; libxml2 2.9 saves it without the quote state, so a
 * chunk that ends inside a quoted attribute value makes every later
 * look-ahead fail and the rest of the page waits for the end. Clearing it
 * rescans the pending tag from its start; flush_at (below) keeps that
 * rescanning linear. */
static void parse(sieve_links *lx, const char *p, size_t len, int terminate)
{
    lx->ctxt->checkIndex = 0;
    lx->st.bytes_parsed += len;
    htmlParseChunk(lx->ctxt, p, (int)len, terminate);
    if (lx->ctxt->errNo == XML_ERR_NO_MEMORY) {
        lx->err = SIEVE_ENOMEM;
        return;
    }
    read_past_root_end(lx->ctxt, terminate);
    /* libxml2 holds a tag until its '>' (a script until "</"): bound it. */
    const xmlParserInput *in = lx->ctxt->input;
    size_t pending = in && in->cur ? (size_t)(in->end - in->cur) : 0;
    if (pending > lx->max_pending && !terminate && !lx->finished)
        lx->err = SIEVE_ETOOLONG;
    lx->pending = pending;
    /* libxml2 drops the bytes it has read only while it reads text, which
     * the skipping above takes from it: drop them here, or its buffer
     * would grow with the page. */
    if (in && in->cur && in->cur - in->base > SHRINK_AT)
        xmlParserInputShrink(lx->ctxt->input);
    /* Parse again once as many new bytes as are pending have come: the
     * rescans then cost no more than the bytes themselves. */
    lx->flush_at = pending > STAGE_MIN ? pending : STAGE_MIN;
}

/* Skipping text. Most of a page is text, and libxml2 2.9 reads text one
 * character at a time through a function call and copies it out, all for
 * a characters callback we do not have: two thirds of its instructions
 * on the crawl benchmark's pages. Yet once libxml2 has consumed every byte it was given
 * and sits in element content outside script and style, what follows up
 * to the next '<' can only be character data. Nothing about links depends
 * on it: text never opens or closes an element that carries a link, and
 * libxml2's only other use of it, implying a <p>, <body> or <html>, leaves
 * every later start tag reported as before. So such runs are not handed to
 * libxml2 at all. It still parses every tag, comment and script; the skip
 * decides nothing about markup, and stops where libxml2 would notice
 * something: a '<', or bytes that are not UTF-8 (libxml2 switches to
 * ISO-8859-1 there, which changes how later attribute values decode). */

/* Whether the bytes libxml2 reads are the bytes pushed: UTF-8 with no
 * converter, or with libxml2's own UTF-8 one, which copies them as they
 * are (and holds none back). */
static bool reads_bytes_as_is(const xmlParserInput *in)
{
    if (!in || !in->buf)
        return false;
    const xmlCharEncodingHandler *enc = in->buf->encoder;
    return !enc || (enc->input && strcmp(enc->name, "UTF-8") == 0 &&
                    (!in->buf->raw || xmlBufUse(in->buf->raw) == 0));
}

/* Whether libxml2 holds no byte and sits in content outside script and
 * style, reading the bytes as they come. */
static bool idle_in_text(const sieve_links *lx)
{
    const htmlParserCtxt *c = lx->ctxt;
    const xmlParserInput *in = c->input;
    if (c->instate != XML_PARSER_CONTENT || !reads_bytes_as_is(in) || in->cur != in->end)
        return false;
    return !c->name ||
           !(xmlStrEqual(c->name, BAD_CAST "script") || xmlStrEqual(c->name, BAD_CAST "style"));
}

/* The script or style element whose data libxml2 sits idle in, having
 * read every byte it was given; NULL if none. */
static const char *idle_in_raw(const sieve_links *lx)
{
    const htmlParserCtxt *c = lx->ctxt;
    const xmlParserInput *in = c->input;
    if (c->instate != XML_PARSER_CONTENT || !c->name || !reads_bytes_as_is(in) ||
        in->cur != in->end)
        return NULL;
    return xmlStrEqual(c->name, BAD_CAST "script") || xmlStrEqual(c->name, BAD_CAST "style")
               ? (const char *)c->name
               : NULL;
}

/* Length of the run at p of ASCII bytes other than '<'. */
static size_t ascii_run(const unsigned char *p, size_t len)
{
    size_t i = 0;
    for (; i + 16 <= len; i += 16) {
        bytes16 v = bytes16_load(p + i);
        if (bytes16_any((bytes16)((v == '<') | (v >= 0x80))))
            break;
    }
    while (i < len && p[i] != '<' && p[i] < 0x80)
        i++;
    return i;
}

/* Length of the UTF-8 sequence at p as libxml2's reader accepts it (no
 * overlong form, at most four bytes), or 0 for one it would take for a
 * sign of another charset, or that len cuts off. */
static size_t utf8_seq(const unsigned char *p, size_t len)
{
    static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
    unsigned c = p[0];
    size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
    if (c < 0xc0 || c >= 0xf8 || len < n)
        return 0;
    uint32_t v = c & (0x7fu >> n);
    for (size_t k = 1; k < n; k++) {
        if ((p[k] & 0xc0) != 0x80)
            return 0;
        v = v << 6 | (p[k] & 0x3fu);
    }
    return v >= least[n] ? n : 0;
}

/* Length of the text at s that libxml2 would only read as characters. */
static size_t text_run(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    for (;;) {
        i += ascii_run(p + i, len - i);
        if (i == len || p[i] == '<')
            return i;
        size_t n = utf8_seq(p + i, len - i);
        if (n == 0)
            return i;
        i += n;
    }
}

/* Where the next call into libxml2 should end: just after a '>' that a
 * run of SKIP_MIN bytes or more without '<' follows, so that if the '>'
 * closed a tag the run can be skipped; len if there is none, or if a
 * converter turns the bytes into other ones. Each call rescans a tag
 * libxml2 holds, so the first cut comes no sooner than as many bytes as
 * it holds: the rescans cost no more than the bytes. */
static size_t next_cut(const sieve_links *lx, const char *p, size_t len)
{
    if (!reads_bytes_as_is(lx->ctxt->input))
        return len;
    const char *q = p + (lx->pending < len ? lx->pending : len), *end = p + len;
    while (q < end) {
        const char *gt = memchr(q, '>', (size_t)(end - q));
        if (!gt)
            break;
        /* Mostly a tag follows within a few bytes: a loop finds its '<'
         * sooner than a second memchr(). */
        const char *c = gt + 1;
        while (c < end && *c != '<' && c - gt <= SKIP_MIN)
            c++;
        if (c - gt > SKIP_MIN)
            return (size_t)(gt + 1 - p);
        q = c;
    }
    return len;
}

/* Where the next call should end while the squeeze waits for libxml2 to
 * sit idle: after the first '>', which mostly ends a tag, so that the
 * squeeze takes over at the next byte. Never inside a comment: libxml2 2.9
 * takes "<!-->" and "<!--->" for comments that end at the next "-->" it
 * has, and reads them to the end of the call when it has none. So the cut
 * goes after the end htmlParseComment() finds for every "<!--" before it,
 * in a tag or not, or nowhere if the bytes do not hold one (nor while
 * libxml2 holds the start of one). Where libxml2's reading of a page
 * depends on where calls end (quotes its look-ahead counts and its
 * attribute parser does not), the squeeze changes nothing, but these cuts
 * are call ends too, as next_cut()'s are. */
static size_t plain_comment_end(const unsigned char *p, size_t len);

static size_t sync_cut(const sieve_links *lx, const char *p, size_t len)
{
    const htmlParserCtxt *ctxt = lx->ctxt;
    const xmlParserInput *in = ctxt->input;
    if (!reads_bytes_as_is(in) ||
        (in->end - in->cur >= 2 && in->cur[0] == '<' && in->cur[1] == '!'))
        return len;
    /* Nor in script or style data: cut after "</x>", htmlParseScript()
     * reads the data to the end of the call and the next bytes as an end
     * tag. */
    if (ctxt->instate == XML_PARSER_CONTENT && ctxt->name &&
        (xmlStrEqual(ctxt->name, BAD_CAST "script") || xmlStrEqual(ctxt->name, BAD_CAST "style")))
        return len;
    const char *q = p + (lx->pending < len ? lx->pending : len), *end = p + len;
    const char *gt = memchr(q, '>', (size_t)(end - q));
    if (!gt)
        return len;
    /* Past the end of every comment that starts before the cut. */
    size_t x = (size_t)(gt + 1 - p);
    for (const char *c = p;; c++) {
        const char *lim = p + x + 3 < end ? p + x + 3 : end;
        c = c < lim ? memmem(c, (size_t)(lim - c), "<!--", 4) : NULL;
        if (!c || c >= p + x)
            return x;
        size_t n = plain_comment_end((const unsigned char *)c, (size_t)(end - c));
        if (!n)
            return len;
        if ((size_t)(c - p) + n > x)
            x = (size_t)(c - p) + n;
    }
}

/* Bounding libxml2's work. libxml2 2.9 checks each attribute of a start
 * tag against all the earlier ones, and looks for the element an end tag
 * closes through its whole stack of open elements: a tag of n attributes
 * costs n * n / 2 string comparisons, and so do n stray end tags under n
 * open elements. A page of one megabyte could take minutes. Both are
 * bounded by counts, never by time, so a page's cost is linear in its
 * size whatever the load of the machine.
 *
 * Depth: an element that would be deeper than SIEVE_LINKS_MAX_DEPTH takes
 * its parent's place on libxml2's stack (limit_depth() above), much as
 * browsers stop nesting past some depth (Chrome at 512).
 *
 * Attributes: the extractor counts a start tag's attributes before
 * libxml2 sees the tag's end, the way htmlParseStartTag() reads them:
 * names of letters, digits and ":-_." cut every NAME_CUT characters,
 * quoted values, unquoted values up to a blank or '>', and anything else
 * skipped up to a blank. Where a tag starts only libxml2 knows for sure,
 * so after each call the start tag it holds, if any, is counted from its
 * '<' in libxml2's own buffer, and the bytes of the next call are read on
 * through that tag up to its end. Past the end, tags may start anywhere:
 * the bytes are counted without regard to quotes, taking every name start
 * after a blank or a quote, and every NAME_CUT-th name character, for an
 * attribute. That counts too many (words of quoted values) but never too
 * few, and a call is cut before the start that would pass
 * SIEVE_LINKS_MAX_ATTRS, so that a tag it falls in is held and counted
 * exactly at the next call. A tag whose exact count passes the limit is
 * closed with a '>' right before its first attribute too many, and the
 * page ends there (stats.cut).
 *
 * Charsets: this reads the bytes as libxml2 will only when they reach it
 * as they are or through a converter that leaves ASCII bytes alone and
 * makes no ASCII out of others (ISO-8859-*, windows-125*, the EUC and
 * other CJK multibyte charsets). Behind any other (UTF-16, UTF-7, EBCDIC)
 * the bytes are handed over CONV_PIECE at a time, each adding at most
 * half as many attributes to a tag, and the page ends once the tag libxml2
 * holds has too many attributes to take another piece or is longer than
 * CONV_TAG_MAX. Until the page has declared its charset, a <meta> can
 * switch to such a converter in the middle of a call: for that the first
 * SWITCH_WINDOW bytes go SWITCH_PIECE at a time, and a <meta> after them
 * no longer switches. */

enum { TAG_GOES_ON, TAG_ATTR, TAG_ENDS };

/* libxml2's IS_BLANK_CH. */
static bool is_blank(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* What may start an HTML name for libxml2 (htmlParseHTMLName)... */
static bool name_start(unsigned char c)
{
    return (unsigned)((c | 0x20) - 'a') < 26 || c == '_' || c == ':' || c == '.';
}

/* ...and continue it. */
static bool name_char(unsigned char c)
{
    return name_start(c) || (unsigned)(c - '0') < 10 || c == '-';
}

/* Where an attribute may start: a blank, the end, a name, or bytes that
 * libxml2 skips up to the next blank. */
static int tag_before_attr(struct tag_scan *t, unsigned char c)
{
    if (is_blank(c)) {
        t->state = TAG_BEFORE_ATTR;
        return TAG_GOES_ON;
    }
    /* A NUL ends libxml2's reading of the tag as its end of input would. */
    if (c == '>' || c == '\0') {
        t->state = TAG_END;
        return TAG_ENDS;
    }
    if (!name_start(c)) {
        t->state = TAG_SKIP;
        return TAG_GOES_ON;
    }
    t->state = TAG_ATTR_NAME;
    t->len = 1;
    t->attrs++;
    return TAG_ATTR;
}

/* Reads the next byte of a start tag. */
static int tag_step(struct tag_scan *t, unsigned char c)
{
    switch (t->state) {
    case TAG_OPEN:
        if (name_start(c)) {
            t->state = TAG_NAME;
            t->len = 1;
            return TAG_GOES_ON;
        }
        t->state = TAG_BOGUS;
        /* fall through */
    case TAG_BOGUS:
        if (c != '>' && c != '\0')
            return TAG_GOES_ON;
        t->state = TAG_END;
        return TAG_ENDS;
    case TAG_NAME:
    case TAG_ATTR_NAME:
        if (name_char(c) && t->len < NAME_CUT) {
            t->len++;
            return TAG_GOES_ON;
        }
        if (t->state == TAG_ATTR_NAME && is_blank(c)) {
            t->state = TAG_AFTER_NAME;
            return TAG_GOES_ON;
        }
        /* fall through */
    case TAG_AFTER_NAME:
        if (t->state != TAG_NAME && c == '=') {
            t->state = TAG_BEFORE_VALUE;
            return TAG_GOES_ON;
        }
        if (t->state == TAG_AFTER_NAME && is_blank(c))
            return TAG_GOES_ON;
        return tag_before_attr(t, c);
    case TAG_BEFORE_VALUE:
        if (is_blank(c))
            return TAG_GOES_ON;
        if (c == '"' || c == '\'') {
            t->state = c == '"' ? TAG_DQ : TAG_SQ;
            return TAG_GOES_ON;
        }
        if (c == '>' || c == '\0')
            return tag_before_attr(t, c);
        t->state = TAG_UNQUOTED;
        return TAG_GOES_ON;
    case TAG_DQ:
    case TAG_SQ:
        if (c == (t->state == TAG_DQ ? '"' : '\''))
            t->state = TAG_BEFORE_ATTR;
        else if (c == '\0')
            return tag_before_attr(t, c);
        return TAG_GOES_ON;
    case TAG_UNQUOTED:
    case TAG_SKIP:
        if (is_blank(c) || c == '>' || c == '\0')
            return tag_before_attr(t, c);
        return TAG_GOES_ON;
    case TAG_BEFORE_ATTR:
        return tag_before_attr(t, c);
    case TAG_END:
        break;
    }
    return TAG_ENDS;
}

static bool is_sep(unsigned char c)
{
    return is_blank(c) || c == '"' || c == '\'';
}

/* Whether c may start an attribute wherever it stands, prev and run being
 * the byte before it and the name characters that end there: a name start
 * after a blank or a quote, or a name character that libxml2's cut at
 * NAME_CUT makes one. Updates prev and run. */
static inline bool loose_attr(unsigned char c, unsigned char *prev, size_t *run)
{
    bool start = false;
    if (name_char(c)) {
        ++*run;
        start = *run == 1 ? name_start(c) && is_sep(*prev) : *run % NAME_CUT == 1;
    } else {
        *run = 0;
    }
    *prev = c;
    return start;
}

/* The attributes that libxml2's cut at NAME_CUT starts in a run of name
 * characters as it grows from `from` to `to` characters. */
static size_t name_cuts(size_t from, size_t to)
{
    return (to ? (to - 1) / NAME_CUT : 0) - (from ? (from - 1) / NAME_CUT : 0);
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define VEQ(v, c) ((bytes16)((v) == (c)))
/* loose_attr() over the 16 bytes at p, as one count. */
static size_t loose_attrs16(const unsigned char *p, unsigned char *prev, size_t *run)
{
    bytes16 v = bytes16_load(p), low = v | 0x20;
    bytes16 start = (bytes16)((bytes16)(low - 'a') < 26) | VEQ(v, '_') | VEQ(v, ':') | VEQ(v, '.');
    bytes16 name = start | (bytes16)((bytes16)(v - '0') < 10) | VEQ(v, '-');
    bytes16 sep =
        VEQ(v, ' ') | VEQ(v, '\t') | VEQ(v, '\n') | VEQ(v, '\r') | VEQ(v, '"') | VEQ(v, '\'');
    uint64_t st[2], nm[2], sp[2];
    memcpy(st, &start, 16);
    memcpy(nm, &name, 16);
    memcpy(sp, &sep, 16);
    /* Each byte's separator mask moved onto the byte after it. */
    uint64_t after0 = sp[0] << 8 | (is_sep(*prev) ? 0xffu : 0), after1 = sp[1] << 8 | sp[0] >> 56;
    /* Bytes are 0 or 0xff: their low bits, summed by one multiply. */
    const uint64_t ones = 0x0101010101010101u;
    size_t n = (size_t)((((st[0] & after0) & ones) * ones) >> 56) +
               (size_t)((((st[1] & after1) & ones) * ones) >> 56);
    uint64_t other0 = ~nm[0], other1 = ~nm[1];
    if (!(other0 | other1)) {
        if (*run + 16 > NAME_CUT)
            n += name_cuts(*run, *run + 16);
        *run += 16;
    } else {
        size_t lead =
            other0 ? (size_t)__builtin_ctzll(other0) / 8 : 8 + (size_t)__builtin_ctzll(other1) / 8;
        if (*run + lead > NAME_CUT)
            n += name_cuts(*run, *run + lead);
        *run =
            other1 ? (size_t)__builtin_clzll(other1) / 8 : 8 + (size_t)__builtin_clzll(other0) / 8;
    }
    *prev = p[15];
    return n;
}
#else
static size_t loose_attrs16(const unsigned char *p, unsigned char *prev, size_t *run)
{
    size_t n = 0;
    for (size_t i = 0; i < 16; i++)
        n += loose_attr(p[i], prev, run);
    return n;
}
#endif

/* Counts what libxml2 holds after a call: the start tag whose end it
 * waits for, exactly, and the attributes it may read elsewhere in what it
 * holds. Script and style data, a comment, an end tag, a processing
 * instruction and text hold no tag until the bytes that end them come (a
 * look-ahead found none), so the rest is counted only after a start tag
 * its look-ahead read past, and in a DOCTYPE, which libxml2 may end at a
 * '>' before the one its look-ahead waits for. */
static void count_held(sieve_links *lx)
{
    struct held *h = &lx->held;
    const htmlParserCtxt *c = lx->ctxt;
    const xmlParserInput *in = c->input;
    *h = (struct held){0};
    if (!in || !in->cur || in->cur >= in->end)
        return;
    const unsigned char *p = in->cur, *end = in->end;
    size_t n = (size_t)(end - p);
    if (c->instate == XML_PARSER_START_TAG && p[0] == '<') {
        h->t.state = TAG_OPEN;
        for (p++; p < end; p++) {
            if (tag_step(&h->t, *p) == TAG_ENDS)
                break;
        }
        if (p == end) {
            h->tag = true;
            h->tag_bytes = n;
            return;
        }
        p++;
    } else {
        bool script = c->name && (xmlStrEqual(c->name, BAD_CAST "script") ||
                                  xmlStrEqual(c->name, BAD_CAST "style"));
        bool text = p[0] != '<' && !memchr(p, '<', n);
        bool other =
            p[0] == '<' && (n < 4 || p[1] == '/' || p[1] == '?' || memcmp(p, "<!--", 4) == 0);
        if (script || text || other)
            return;
    }
    unsigned char prev = p > in->cur ? p[-1] : lx->prev;
    size_t run = 0;
    for (; p < end; p++)
        h->loose += loose_attr(*p, &prev, &run);
}

/* Charsets whose converters leave ASCII bytes alone and make no ASCII of
 * other bytes, by the names libxml2 and iconv know them. */
static bool keeps_ascii(const char *name)
{
    static const char *const prefix[] = {
        "UTF-8",     "UTF8",        "ASCII",       "US-ASCII",    "ISO-8859-", "ISO8859-",
        "ISO_8859-", "WINDOWS-125", "CP125",       "WINDOWS-874", "KOI8-",     "MACINTOSH",
        "TIS-620",   "EUC",         "GB2312",      "GBK",         "GB18030",   "BIG5",
        "CP936",     "CP949",       "CP950",       "UHC",         "SHIFT_JIS", "SHIFT-JIS",
        "SJIS",      "CP932",       "WINDOWS-31J",
    };
    if (strncasecmp(name, "LATIN", 5) == 0 && name[5] >= '1' && name[5] <= '9')
        return true;
    for (size_t i = 0; i < sizeof prefix / sizeof *prefix; i++)
        if (strncasecmp(name, prefix[i], strlen(prefix[i])) == 0)
            return true;
    return false;
}

/* Whether libxml2 reads the bytes as they are pushed, or through a
 * converter that keeps ASCII: then the extractor can count them. */
static bool readable(sieve_links *lx)
{
    const xmlParserInput *in = lx->ctxt->input;
    const xmlCharEncodingHandler *enc = in && in->buf ? in->buf->encoder : NULL;
    if (!enc)
        return true;
    if (enc != lx->enc_seen) {
        lx->enc_seen = enc;
        lx->enc_keeps_ascii = keeps_ascii(enc->name);
    }
    return lx->enc_keeps_ascii;
}

enum { PIECE_OK, PIECE_CLOSE, PIECE_STOP };

/* Counts len bytes at p on from what libxml2 holds: through the start tag
 * it holds, exactly, then loosely. Returns how many may go in one call. */
static size_t count_piece(sieve_links *lx, const unsigned char *p, size_t len, int *verdict)
{
    const struct held *h = &lx->held;
    size_t i = 0;
    if (h->tag) {
        struct tag_scan t = h->t;
        int ev = TAG_GOES_ON;
        for (; i < len && ev != TAG_ENDS; i++) {
            ev = tag_step(&t, p[i]);
            if (ev == TAG_ATTR && t.attrs > SIEVE_LINKS_MAX_ATTRS) {
                *verdict = PIECE_CLOSE;
                break;
            }
        }
        if (i > 0) {
            /* The tag ends at a '>' (or NUL); otherwise it holds them all. */
            lx->prev = p[i - 1];
            lx->run = 0;
            for (size_t k = i; k > 0 && name_char(p[k - 1]) && ev != TAG_ENDS; k--)
                lx->run++;
        }
        if (*verdict != PIECE_OK)
            return i;
    }
    size_t room = h->loose < SIEVE_LINKS_MAX_ATTRS ? SIEVE_LINKS_MAX_ATTRS - h->loose : 0;
    size_t rest = len - i;
    if (rest && rest / 2 + (lx->run + rest) / NAME_CUT + 2 <= room) {
        /* Starts after a separator are two bytes apart at least, cuts a
         * hundred: these bytes cannot pass the limit. Only carry on. */
        size_t k = len;
        while (k > i && name_char(p[k - 1]))
            k--;
        lx->run = k == i ? lx->run + rest : len - k;
        lx->prev = p[len - 1];
        return len;
    }
    unsigned char prev = lx->prev;
    size_t run = lx->run, n = 0;
    while (len - i >= 16) {
        unsigned char prev0 = prev;
        size_t run0 = run, k = loose_attrs16(p + i, &prev, &run);
        if (n + k > room) {
            prev = prev0;
            run = run0;
            break;
        }
        n += k;
        i += 16;
    }
    for (; i < len; i++) {
        unsigned char prev0 = prev;
        size_t run0 = run;
        if (loose_attr(p[i], &prev, &run) && ++n > room) {
            prev = prev0;
            run = run0;
            break;
        }
    }
    /* Only what libxml2 already holds can leave no room at all. */
    if (i == 0 && len)
        *verdict = PIECE_STOP;
    lx->prev = prev;
    lx->run = run;
    return i;
}

/* How many of the len bytes at p the next call may hand to libxml2;
 * *verdict tells whether the page must end after them, and how. */
static size_t limit_piece(sieve_links *lx, const char *p, size_t len, int *verdict)
{
    *verdict = PIECE_OK;
    htmlParserCtxtPtr c = lx->ctxt;
    if (!(c->options & HTML_PARSE_IGNORE_ENC) && !c->input->encoding) {
        if (lx->st.bytes_parsed + lx->st.text_skipped >= SWITCH_WINDOW)
            c->options |= HTML_PARSE_IGNORE_ENC;
        else if (len > SWITCH_PIECE)
            len = SWITCH_PIECE;
    }
    if (readable(lx))
        return count_piece(lx, (const unsigned char *)p, len, verdict);
    const struct held *h = &lx->held;
    size_t most = h->tag && h->t.attrs > h->loose ? h->t.attrs : h->loose;
    if (most + CONV_PIECE / 2 > SIEVE_LINKS_MAX_ATTRS || h->tag_bytes > CONV_TAG_MAX) {
        *verdict = PIECE_STOP;
        return 0;
    }
    return len < CONV_PIECE ? len : CONV_PIECE;
}

/* One call into libxml2, and the count of what it holds after it. */
static void hand(sieve_links *lx, const char *p, size_t len, int terminate)
{
    parse(lx, p, len, terminate);
    count_held(lx);
}

/* A limit ends the page: with the tag libxml2 holds closed right before
 * its first attribute too many, or where it stands. */
static void end_page(sieve_links *lx, int verdict)
{
    lx->stopped = true;
    lx->st.cut = true;
    if (verdict == PIECE_CLOSE) {
        lx->st.cut_reason = "a tag has too many attributes";
        hand(lx, ">", 1, 1);
    } else {
        lx->st.cut_reason = readable(lx) ? "a tag has too many attributes"
                                         : "a tag is too long to count in this charset";
    }
}

/* Squeezing markup. Skipping text alone leaves libxml2 most of a dense
 * page: the attributes of every tag (class, id, data-*, aria-*: 40% of the
 * bytes of an API reference, and a third of libxml2's instructions, as
 * bench/README.md measures), the short runs of text between inline tags,
 * scripts, styles and comments. None of them changes a link. So while
 * libxml2 is known to sit idle in element content (as for skipping text),
 * the extractor reads on itself through markup whose reading by libxml2
 * 2.9 it can tell for sure, and hands libxml2 a squeezed copy:
 *
 *   - text, of any length, valid UTF-8: left out;
 *   - a start tag: the tag with no attribute, but for the href, src and
 *     rel of a, area, frame and iframe, kept byte for byte in their order;
 *     <base> and <meta> whole (a <meta> may switch the charset, so the
 *     squeeze stops after it and asks libxml2 where it stands);
 *   - script and style data, up to the end tag htmlParseScript() stops at
 *     ("</" and the element's name, in any case): left out, the end tag
 *     kept;
 *   - a comment, up to where htmlParseComment() ends it (the first "-->"
 *     or "--!>" after "<!--"): left out;
 *   - an end tag: kept.
 *
 * Plain means: names of libxml2's name characters shorter than NAME_CUT,
 * values quoted or unquoted without quotes, at most PLAIN_ATTRS_MAX
 * attributes, valid UTF-8 throughout
 * (a bad byte makes libxml2 switch to ISO-8859-1). Anything else - a
 * processing instruction, a DOCTYPE, "<!x", a stray quote, an end tag that
 * does not end a script, a byte that is not UTF-8 - ends the squeeze, and
 * libxml2 reads it as it comes, as it did before; the next time it sits
 * idle in content the squeeze starts again. A construct cut by the end of
 * the bytes at hand is held back (up to CARRY_MAX bytes) and squeezed with
 * the next feed, so where the page is cut into chunks changes nothing.
 * The structure libxml2 builds is the same: the same start and end tags in
 * the same order, only without the attributes, text and data it would
 * have read and dropped. */

enum { NOT_PLAIN = 0 };
/* A scanner's answer: the construct goes on past the bytes at hand. */
#define NEED_MORE SIZE_MAX

static bool ascii_letter(unsigned char c)
{
    return (unsigned)((c | 0x20) - 'a') < 26;
}

/* Length of the run at p of valid UTF-8, '<' included. */
static size_t utf8_run(const unsigned char *p, size_t len)
{
    size_t i = 0;
    for (;;) {
        for (; i + 16 <= len; i += 16)
            if (bytes16_any((bytes16)(bytes16_load(p + i) >= 0x80)))
                break;
        while (i < len && p[i] < 0x80)
            i++;
        if (i == len)
            return i;
        size_t n = utf8_seq(p + i, len - i);
        if (n == 0)
            return i;
        i += n;
    }
}

enum tag_kind { KIND_OTHER, KIND_LINK, KIND_WHOLE, KIND_META, KIND_RAW };

static bool name_is(const unsigned char *p, size_t n, const char *name)
{
    return strlen(name) == n && strncasecmp((const char *)p, name, n) == 0;
}

static enum tag_kind tag_kind(const unsigned char *p, size_t n)
{
    if (name_is(p, n, "a") || name_is(p, n, "area") || name_is(p, n, "frame") ||
        name_is(p, n, "iframe"))
        return KIND_LINK;
    if (name_is(p, n, "meta"))
        return KIND_META;
    if (name_is(p, n, "base"))
        return KIND_WHOLE;
    if (name_is(p, n, "script") || name_is(p, n, "style"))
        return KIND_RAW;
    return KIND_OTHER;
}

/* Reads the start tag at p ('<' and an ASCII letter) as htmlParseStartTag()
 * does, if it is plain, and writes to out what libxml2 is handed instead:
 * its length in *out_len. Returns the tag's length, NOT_PLAIN, or
 * NEED_MORE. *name and *name_len give its name; *closed tells "/>". */
static size_t plain_start_tag(const unsigned char *p, size_t len, enum tag_kind *kind, bool *closed,
                              char *out, size_t *out_len)
{
    size_t i = 1;
    while (i < len && name_char(p[i]))
        i++;
    if (i - 1 >= NAME_CUT)
        return NOT_PLAIN;
    *kind = tag_kind(p + 1, i - 1);
    *closed = false;
    size_t o = i, attrs = 0;
    memcpy(out, p, i);
    for (;;) {
        while (i < len && is_blank(p[i]))
            i++;
        if (i == len)
            return NEED_MORE;
        if (p[i] == '>')
            break;
        if (p[i] == '/') {
            if (i + 1 == len)
                return NEED_MORE;
            if (p[i + 1] != '>')
                return NOT_PLAIN;
            *closed = true;
            i++;
            break;
        }
        if (!name_start(p[i]) || ++attrs > PLAIN_ATTRS_MAX)
            return NOT_PLAIN;
        size_t a = i;
        while (i < len && name_char(p[i]))
            i++;
        if (i == len)
            return NEED_MORE;
        if (i - a >= NAME_CUT)
            return NOT_PLAIN;
        size_t name_len = i - a, j = i;
        while (j < len && is_blank(p[j]))
            j++;
        if (j == len)
            return NEED_MORE;
        if (p[j] == '=') {
            for (j++; j < len && is_blank(p[j]);)
                j++;
            if (j == len)
                return NEED_MORE;
            if (p[j] == '"' || p[j] == '\'') {
                const unsigned char *q = memchr(p + j + 1, p[j], len - j - 1);
                if (!q)
                    return len - j > CARRY_MAX ? NOT_PLAIN : NEED_MORE;
                size_t v = (size_t)(q - p) - j - 1;
                if (utf8_run(p + j + 1, v) != v)
                    return NOT_PLAIN;
                j = (size_t)(q - p) + 1;
            } else {
                /* htmlParseHTMLAttribute() reads it up to a blank or '>'
                 * ("x/>" is the value "x/"); a quote in it would throw
                 * libxml2's look-ahead for the '>' out of step. */
                size_t v = j;
                while (j < len && !is_blank(p[j]) && p[j] != '>' && p[j] != '"' && p[j] != '\'')
                    j++;
                if (j == len)
                    return len - v > CARRY_MAX ? NOT_PLAIN : NEED_MORE;
                if (j == v || p[j] == '"' || p[j] == '\'' || utf8_run(p + v, j - v) != j - v)
                    return NOT_PLAIN;
            }
        } else if (!is_blank(p[i]) && p[i] != '>' && p[i] != '/') {
            return NOT_PLAIN;
        }
        if (*kind == KIND_LINK &&
            (name_is(p + a, name_len, "href") || name_is(p + a, name_len, "src") ||
             name_is(p + a, name_len, "rel"))) {
            out[o++] = ' ';
            memcpy(out + o, p + a, j - a);
            o += j - a;
        }
        i = j;
    }
    if (*kind == KIND_WHOLE || *kind == KIND_META) {
        memcpy(out, p, i + 1);
        *out_len = i + 1;
        return i + 1;
    }
    /* A blank before "/>", which a kept unquoted value would otherwise
     * take for its own. */
    if (*closed) {
        out[o++] = ' ';
        out[o++] = '/';
    }
    out[o++] = '>';
    *out_len = o;
    return i + 1;
}

/* Length of the plain end tag at p ("</", a name, blanks, '>'), its name's
 * length in *name_len; NOT_PLAIN or NEED_MORE. */
static size_t plain_end_tag(const unsigned char *p, size_t len, size_t *name_len)
{
    if (len < 3)
        return NEED_MORE;
    if (!ascii_letter(p[2]))
        return NOT_PLAIN;
    size_t i = 3;
    while (i < len && name_char(p[i]))
        i++;
    *name_len = i - 2;
    if (*name_len >= NAME_CUT)
        return NOT_PLAIN;
    while (i < len && is_blank(p[i]))
        i++;
    if (i == len)
        return NEED_MORE;
    return p[i] == '>' ? i + 1 : NOT_PLAIN;
}

/* Length of the comment at p ("<!--") as htmlParseComment() reads it: up
 * to the first "-->" or "--!>" that starts after the "<!--"; 0 when the
 * len bytes do not hold its end. */
static size_t plain_comment_end(const unsigned char *p, size_t len)
{
    for (size_t i = 4; i + 3 <= len; i++) {
        const unsigned char *d = memchr(p + i, '-', len - i);
        if (!d || (size_t)(d - p) + 3 > len)
            break;
        i = (size_t)(d - p);
        if (p[i + 1] == '-' && p[i + 2] == '>')
            return i + 3;
        if (p[i + 1] == '-' && p[i + 2] == '!' && i + 3 < len && p[i + 3] == '>')
            return i + 4;
    }
    return 0;
}

/* The same, when the comment is plain; NOT_PLAIN or NEED_MORE. */
static size_t plain_comment(const unsigned char *p, size_t len)
{
    size_t n = plain_comment_end(p, len);
    if (n == 0)
        return len > CARRY_MAX ? NOT_PLAIN : NEED_MORE;
    size_t body = n - 4 - (p[n - 2] == '!' ? 4 : 3);
    return utf8_run(p + 4, body) == body ? n : NOT_PLAIN;
}

/* Length of script or style data at p, up to where htmlParseScript() stops
 * for the element name of name_len bytes at name: "</" and the name, in any
 * case; NOT_PLAIN or NEED_MORE. */
static size_t plain_raw(const unsigned char *p, size_t len, const unsigned char *name,
                        size_t name_len)
{
    for (size_t i = 0;;) {
        const unsigned char *lt = memchr(p + i, '<', len - i);
        if (!lt)
            break;
        i = (size_t)(lt - p);
        if (i + 2 + name_len > len)
            break;
        if (p[i + 1] == '/' &&
            strncasecmp((const char *)p + i + 2, (const char *)name, name_len) == 0)
            return utf8_run(p, i) == i ? i : NOT_PLAIN;
        i++;
    }
    return len > CARRY_MAX ? NOT_PLAIN : NEED_MORE;
}

/* Script or style data at p and the end tag that ends it: returns the end
 * tag's length, the data's in *data; NOT_PLAIN or NEED_MORE. */
static size_t raw_to_end(const unsigned char *p, size_t len, const unsigned char *name,
                         size_t name_len, size_t *data)
{
    size_t d = plain_raw(p, len, name, name_len), end_len = 0;
    if (d == NOT_PLAIN || d == NEED_MORE)
        return d;
    size_t e = plain_end_tag(p + d, len - d, &end_len);
    /* "</scriptx>" ends the data, but libxml2 reads on in the script. */
    if (e != NOT_PLAIN && e != NEED_MORE && end_len != name_len)
        return NOT_PLAIN;
    *data = d;
    return e;
}

/* Hands libxml2 the n bytes at p, counted as any others are; false if the
 * page ended. */
static bool hand_counted(sieve_links *lx, const char *p, size_t n)
{
    while (n && !lx->err && !lx->stopped) {
        int verdict;
        size_t k = limit_piece(lx, p, n, &verdict);
        if (k)
            hand(lx, p, k, 0);
        if (verdict != PIECE_OK && !lx->err)
            end_page(lx, verdict);
        p += k;
        n -= k;
    }
    return !lx->err && !lx->stopped;
}

/* Squeezes the len bytes at s, libxml2 sitting idle in content, or in the
 * data of the script or style element named raw, as far as they are plain.
 * Returns how many were read; *held tells that the rest starts with a
 * construct cut by the end of the bytes. */
static size_t squeeze(sieve_links *lx, const char *s, size_t len, const char *raw, bool *held)
{
    const unsigned char *p = (const unsigned char *)s;
    *held = false;
    /* A kept attribute gets a blank before it, which the page may not
     * have had: room for twice the bytes. */
    if (lx->squeezed_cap < 2 * len) {
        char *q = realloc(lx->squeezed, 2 * len);
        if (!q) {
            lx->err = SIEVE_ENOMEM;
            return 0;
        }
        lx->squeezed = q;
        lx->squeezed_cap = 2 * len;
    }
    char *out = lx->squeezed;
    size_t i = 0, o = 0, n = 0;
    if (raw) {
        size_t d, e = raw_to_end(p, len, (const unsigned char *)raw, strlen(raw), &d);
        if (e == NOT_PLAIN || e == NEED_MORE) {
            *held = e == NEED_MORE && len <= CARRY_MAX;
            return 0;
        }
        memcpy(out, p + d, e);
        lx->st.text_skipped += d;
        o = e;
        i = d + e;
    }
    while (i < len) {
        if (p[i] != '<') {
            size_t t = text_run(s + i, len - i);
            lx->st.text_skipped += t;
            i += t;
            if (i < len && p[i] != '<')
                break;
            continue;
        }
        size_t k, name_len;
        if (len - i < 2) {
            n = NEED_MORE;
        } else if (p[i + 1] == '!') {
            n = len - i < 4                     ? NEED_MORE
                : memcmp(p + i, "<!--", 4) == 0 ? plain_comment(p + i, len - i)
                                                : NOT_PLAIN;
            if (n != NOT_PLAIN && n != NEED_MORE) {
                lx->st.text_skipped += n;
                i += n;
                continue;
            }
        } else if (p[i + 1] == '/') {
            n = plain_end_tag(p + i, len - i, &name_len);
            if (n != NOT_PLAIN && n != NEED_MORE) {
                memcpy(out + o, p + i, n);
                o += n;
                i += n;
                continue;
            }
        } else if (ascii_letter(p[i + 1])) {
            enum tag_kind kind;
            bool closed;
            n = plain_start_tag(p + i, len - i, &kind, &closed, out + o, &k);
            if (n != NOT_PLAIN && n != NEED_MORE && kind == KIND_RAW && !closed) {
                /* The data and the end tag that ends it, or nothing. */
                size_t nl = 1, d;
                while (name_char(p[i + 1 + nl]))
                    nl++;
                size_t e = raw_to_end(p + i + n, len - i - n, p + i + 1, nl, &d);
                if (e == NOT_PLAIN || e == NEED_MORE) {
                    n = e;
                } else {
                    memcpy(out + o + k, p + i + n + d, e);
                    lx->st.text_skipped += (n > k ? n - k : 0) + d;
                    o += k + e;
                    i += n + d + e;
                    continue;
                }
            }
            if (n != NOT_PLAIN && n != NEED_MORE) {
                /* A tag may come out longer ("<br/>" as "<br />"). */
                lx->st.text_skipped += n > k ? n - k : 0;
                o += k;
                i += n;
                if (kind == KIND_META)
                    break;
                continue;
            }
        } else if (p[i + 1] != '?') {
            /* libxml2 reads a '<' that starts nothing as text. */
            lx->st.text_skipped++;
            i++;
            continue;
        } else {
            n = NOT_PLAIN;
        }
        *held = n == NEED_MORE && len - i <= CARRY_MAX;
        break;
    }
    if (o && !hand_counted(lx, out, o))
        return len;
    return i;
}

/* How many of the n bytes at p end in a cut-off "</script" or "</style"
 * of three bytes or more. libxml2 2.9 ends script data at "</" followed by
 * the element's name, but it looks for the name in what it has: handed
 * "</scr" at the end of a call, it takes the bytes for data, and "ipt>" in
 * the next for more data, so the script would run on over the links after
 * it. Such bytes wait for the next call. */
static size_t raw_end_tail(const char *p, size_t n)
{
    static const char *const ends[] = {"</script", "</style"};
    for (size_t k = n < 7 ? n : 7; k >= 3; k--) {
        for (size_t e = 0; e < 2; e++)
            if (k < strlen(ends[e]) && strncasecmp(p + n - k, ends[e], k) == 0)
                return k;
    }
    return 0;
}

/* Hands len bytes to libxml2 but for what it would only read and drop;
 * returns how many it took, the rest being held back for the next feed
 * (never when final). */
static size_t parse_skipping_text(sieve_links *lx, const char *p, size_t len, bool final)
{
    size_t all = len;
    while (len && !lx->err && !lx->stopped) {
        /* Until the charset is settled a <meta> may switch it in the
         * middle of a call: text is skipped, nothing squeezed. */
        bool settled =
            lx->ctxt->input->encoding || (lx->ctxt->options & HTML_PARSE_IGNORE_ENC) != 0;
        bool squeezing = lx->hiding == SIEVE_LINKS_HIDE_ALL && settled;
        const char *raw = squeezing && !lx->in_text ? idle_in_raw(lx) : NULL;
        if (squeezing && (lx->in_text || raw)) {
            bool held;
            size_t n = squeeze(lx, p, len, raw, &held);
            p += n;
            len -= n;
            if (!len || lx->err || lx->stopped)
                break;
            if (held && !final)
                return all - len;
            lx->in_text = idle_in_text(lx);
            if ((lx->in_text || idle_in_raw(lx)) && n)
                continue;
        }
        if (lx->in_text) {
            size_t n = text_run(p, len);
            lx->st.text_skipped += n;
            p += n;
            len -= n;
            if (!len)
                break;
            lx->in_text = false;
        }
        int verdict;
        /* Shown every byte, libxml2 gets them as they come, uncut. */
        size_t cut = squeezing                                ? sync_cut(lx, p, len)
                     : lx->hiding == SIEVE_LINKS_HIDE_NOTHING ? len
                                                              : next_cut(lx, p, len);
        size_t n = limit_piece(lx, p, cut, &verdict);
        size_t tail = final || verdict != PIECE_OK ? 0 : raw_end_tail(p, n);
        if (tail == n && n == len)
            return all - len;
        if (tail < n)
            n -= tail;
        if (n)
            hand(lx, p, n, 0);
        if (verdict != PIECE_OK && !lx->err) {
            end_page(lx, verdict);
            break;
        }
        p += n;
        len -= n;
        lx->in_text = !lx->err && idle_in_text(lx) && lx->hiding != SIEVE_LINKS_HIDE_NOTHING;
    }
    return all;
}

/* Parses the staged bytes with len bytes at p, in pieces small enough to
 * check max_pending between them; what the last piece holds back is
 * staged again. */
static int flush(sieve_links *lx, const char *p, size_t len)
{
    if (lx->stage_len && len) {
        /* Held-back bytes are read again with what follows them. */
        if (lx->stage_len + len > lx->stage_cap) {
            char *q = realloc(lx->stage, lx->stage_len + len);
            if (!q)
                return lx->err = SIEVE_ENOMEM;
            lx->stage = q;
            lx->stage_cap = lx->stage_len + len;
        }
        memcpy(lx->stage + lx->stage_len, p, len);
        lx->stage_len += len;
        p = lx->stage;
        len = lx->stage_len;
    }
    bool staged = p == lx->stage;
    while (len && !lx->err && !lx->stopped) {
        size_t n = len > PIECE_MAX ? PIECE_MAX : len;
        /* A piece holds back at most CARRY_MAX bytes, which the next
         * piece starts with: only the last one leaves bytes over. */
        size_t took = parse_skipping_text(lx, p, n, false);
        p += took;
        len -= took;
        if (took < n && len == n - took)
            break;
    }
    size_t left = lx->err || lx->stopped ? 0 : len;
    if (left && !staged) {
        if (left > lx->stage_cap) {
            char *q = realloc(lx->stage, left);
            if (!q)
                return lx->err = SIEVE_ENOMEM;
            lx->stage = q;
            lx->stage_cap = left;
        }
        memcpy(lx->stage, p, left);
    } else if (left) {
        memmove(lx->stage, p, left);
    }
    /* The held bytes are read again at the next flush: wait for as many
     * new ones, which keeps the rereading linear. */
    if (left && lx->flush_at < 2 * left)
        lx->flush_at = 2 * left;
    lx->stage_len = left;
    return lx->err;
}

/* Stages or parses len bytes that hold no NUL. */
static int feed_bytes(sieve_links *lx, const char *data, size_t len)
{
    if (lx->stage_len + len >= lx->flush_at)
        return flush(lx, data, len);
    if (lx->stage_len + len > lx->stage_cap) {
        size_t cap = lx->flush_at;
        char *p = realloc(lx->stage, cap);
        if (!p)
            return lx->err = SIEVE_ENOMEM;
        lx->stage = p;
        lx->stage_cap = cap;
    }
    memcpy(lx->stage + lx->stage_len, data, len);
    lx->stage_len += len;
    return SIEVE_OK;
}

int sieve_links_feed(sieve_links *lx, const void *data, size_t len)
{
    if (!lx || (!data && len))
        return SIEVE_EINVAL;
    if (lx->finished)
        return SIEVE_ESTATE;
    if (lx->err || len == 0 || lx->stopped)
        return lx->err;
    /* libxml2 ends an attribute value at a NUL byte, but its look-ahead
     * does not, so where a NUL falls in a chunk would change the links.
     * HTML ignores NULs in markup anyway: they are dropped, except in
     * UTF-16 and UTF-32 pages, where they are part of every character. */
    const char *p = data;
    const char *nul = lx->keep_nul ? NULL : memchr(p, 0, len);
    while (nul && !lx->err && !lx->stopped) {
        if (nul > p)
            feed_bytes(lx, p, (size_t)(nul - p));
        len -= (size_t)(nul - p) + 1;
        p = nul + 1;
        nul = memchr(p, 0, len);
    }
    if (len && !lx->err && !lx->stopped)
        feed_bytes(lx, p, len);
    return lx->err;
}

int sieve_links_finish(sieve_links *lx)
{
    if (!lx)
        return SIEVE_EINVAL;
    if (lx->finished)
        return lx->err;
    lx->finished = true;
    if (lx->err || lx->stopped)
        return lx->err;
    /* The staged bytes are counted like any others before the last call. */
    if (lx->stage_len)
        parse_skipping_text(lx, lx->stage, lx->stage_len, true);
    lx->stage_len = 0;
    if (!lx->err && !lx->stopped)
        hand(lx, "", 0, 1);
    return lx->err;
}

void sieve_links_set_hiding(sieve_links *lx, enum sieve_links_hiding h)
{
    lx->hiding = h;
}

void sieve_links_stats_get(const sieve_links *lx, sieve_links_stats *st)
{
    *st = lx->st;
}

const char *sieve_links_page_url(const sieve_links *lx)
{
    return lx->page;
}
