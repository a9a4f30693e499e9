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
#include "sieve/status.h"
#include "url-internal.h"

/* Chunks smaller than this are gathered before libxml2 sees them. */
#define STAGE_MIN 512
/* Largest piece handed to libxml2 at once, so max_pending is checked
 * often even when one feed brings megabytes. */
#define PIECE_MAX (1024 * 1024)
/* Text runs shorter than this go to libxml2: a cut costs a call. */
#define SKIP_MIN 32
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
    bool in_text;       /* libxml2 is idle in text: skip to the next '<' */
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
    lx->max_pending = opts->max_pending ? opts->max_pending : SIEVE_LINKS_MAX_PENDING;
    lx->flush_at = STAGE_MIN;
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

/* Hands len bytes to libxml2 but for the text runs it would only read. */
static void parse_skipping_text(sieve_links *lx, const char *p, size_t len)
{
    while (len && !lx->err && !lx->stopped) {
        if (lx->in_text) {
            size_t n = text_run(p, len);
            lx->st.text_skipped += n;
            p += n;
            len -= n;
            if (!len)
                return;
            lx->in_text = false;
        }
        int verdict;
        size_t n = limit_piece(lx, p, next_cut(lx, p, len), &verdict);
        if (n)
            hand(lx, p, n, 0);
        if (verdict != PIECE_OK && !lx->err) {
            end_page(lx, verdict);
            return;
        }
        p += n;
        len -= n;
        lx->in_text = !lx->err && idle_in_text(lx);
    }
}

/* Parses the staged bytes, then len bytes at p, in pieces small enough to
 * check max_pending between them. */
static int flush(sieve_links *lx, const char *p, size_t len)
{
    if (lx->stage_len) {
        parse_skipping_text(lx, lx->stage, lx->stage_len);
        lx->stage_len = 0;
    }
    while (len && !lx->err && !lx->stopped) {
        size_t n = len > PIECE_MAX ? PIECE_MAX : len;
        parse_skipping_text(lx, p, n);
        p += n;
        len -= n;
    }
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
        parse_skipping_text(lx, lx->stage, lx->stage_len);
    lx->stage_len = 0;
    if (!lx->err && !lx->stopped)
        hand(lx, "", 0, 1);
    return lx->err;
}

void sieve_links_stats_get(const sieve_links *lx, sieve_links_stats *st)
{
    *st = lx->st;
}

const char *sieve_links_page_url(const sieve_links *lx)
{
    return lx->page;
}
