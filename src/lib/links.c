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
 * Each link goes straight through sieve_canon_url() into one buffer of
 * max_len + 1 bytes that lives as long as the extractor: nothing is kept
 * per link, so a page with a million links costs what a page with one
 * does. */
#include <libxml/HTMLparser.h>
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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
}

static void on_link(sieve_links *lx, const char *tag, const char *value, const xmlChar **atts)
{
    lx->st.found++;
    bool has_rel;
    const char *rel = attr(atts, "rel", &has_rel);
    bool nofollow = has_rel && rel_nofollow(rel);
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
    link.status =
        lx->base_u != NULL
            ? sieve_canon_url_parsed(lx->canon, lx->base_u, value, n, lx->out, lx->cap, &link.info)
            : sieve_canon_url(lx->canon, lx->base, value, n, lx->out, lx->cap, &link.info);
    count(lx, link.status);
    if (link.status == SIEVE_OK) {
        link.url = lx->out;
        link.url_len = link.info.len;
    } else if (!lx->report_errors) {
        return;
    }
    lx->fn(lx->ctx, &link);
}

static void on_start(void *ud, const xmlChar *name, const xmlChar **atts)
{
    sieve_links *lx = ud;
    const char *tag = (const char *)name;
    if (!tag || lx->err)
        return;
    bool has;
    if (!lx->base_seen && strcmp(tag, "base") == 0) {
        const char *href = attr(atts, "href", &has);
        if (has)
            on_base(lx, href);
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
    lx->keep_nul = opts->charset && (strstr(opts->charset, "16") || strstr(opts->charset, "32") ||
                                     strncasecmp(opts->charset, "ucs", 3) == 0);
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
    htmlParseChunk(lx->ctxt, p, (int)len, terminate);
    if (lx->ctxt->errNo == XML_ERR_NO_MEMORY) {
        lx->err = SIEVE_ENOMEM;
        return;
    }
    read_past_root_end(lx->ctxt, terminate);
    /* libxml2 holds a tag until its '>' (a script until "</"): bound it. */
    const xmlParserInput *in = lx->ctxt->input;
    size_t pending = in && in->cur ? (size_t)(in->end - in->cur) : 0;
    if (pending > lx->max_pending && !terminate)
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

/* Hands len bytes to libxml2 but for the text runs it would only read. */
static void parse_skipping_text(sieve_links *lx, const char *p, size_t len)
{
    while (len && !lx->err) {
        if (lx->in_text) {
            size_t n = text_run(p, len);
            lx->st.text_skipped += n;
            p += n;
            len -= n;
            if (!len)
                return;
            lx->in_text = false;
        }
        size_t n = next_cut(lx, p, len);
        parse(lx, p, n, 0);
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
    while (len && !lx->err) {
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
    if (lx->err || len == 0)
        return lx->err;
    /* libxml2 ends an attribute value at a NUL byte, but its look-ahead
     * does not, so where a NUL falls in a chunk would change the links.
     * HTML ignores NULs in markup anyway: they are dropped, except in
     * UTF-16 and UTF-32 pages, where they are part of every character. */
    const char *p = data;
    const char *nul = lx->keep_nul ? NULL : memchr(p, 0, len);
    while (nul && !lx->err) {
        if (nul > p)
            feed_bytes(lx, p, (size_t)(nul - p));
        len -= (size_t)(nul - p) + 1;
        p = nul + 1;
        nul = memchr(p, 0, len);
    }
    if (len && !lx->err)
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
    if (lx->err)
        return lx->err;
    parse(lx, lx->stage ? lx->stage : "", lx->stage_len, 1);
    lx->stage_len = 0;
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
