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
 * names, unquoted attributes, recovery from broken markup. It reads UTF-8
 * only: the charset is decided first, as browsers decide it (links-sniff.c),
 * and a page in another is decoded before libxml2 sees it (links-decode.c);
 * an undeclared page that is not UTF-8 falls back to ISO-8859-1. Its
 * attribute values reach us as UTF-8.
 *
 * Each link goes through sieve_canon_url() into one buffer of max_len + 1
 * bytes that lives as long as the extractor, except that a page's hrefs
 * are canonicalized once each (links-href.c); a fragment-only href
 * ("#top", a seventh of the links on a documentation site) names the base
 * itself.
 *
 * The extractor's other files: links-href.c resolves hrefs, links-bound.c keeps libxml2's work
 * linear in the page, links-squeeze.c keeps from libxml2 what no link depends on, links-charset.c
 * reads a charset label as browsers do, links-sniff.c finds the page's charset, links-decode.c
 * decodes other charsets to UTF-8; links-internal.h has the state they share. */
#include <libxml/HTMLparser.h>
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sieve/links.h"
#include "links-internal.h"
#include "sieve/status.h"
#include "url-internal.h"

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

/* The URL of a refresh's content ("5; url=/next"), read as the HTML
 * standard's declarative refresh reads it: *len bytes from the pointer
 * returned, or NULL when the content names no page (a bare delay refreshes
 * the page itself) or is no refresh at all. */
static const char *refresh_url(const char *content, size_t *len)
{
    const char *p = content;
    while (is_html_space(*p))
        p++;
    if ((*p < '0' || *p > '9') && *p != '.')
        return NULL;
    while ((*p >= '0' && *p <= '9') || *p == '.')
        p++;
    if (*p != ';' && *p != ',' && !is_html_space(*p))
        return NULL; /* the end (this page again), or no refresh */
    while (is_html_space(*p))
        p++;
    if (*p == ';' || *p == ',')
        p++;
    while (is_html_space(*p))
        p++;
    if (strncasecmp(p, "url", 3) == 0) {
        const char *q = p + 3;
        while (is_html_space(*q))
            q++;
        if (*q == '=') {
            for (q++; is_html_space(*q); q++)
                ;
            p = q;
        }
    }
    const char *end = NULL;
    if (*p == '"' || *p == '\'') {
        end = strchr(p + 1, *p);
        p++;
    }
    *len = end ? (size_t)(end - p) : strlen(p);
    return *len > 0 ? p : NULL;
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
 * A base that does not resolve to an http(s) URL (or one longer than a
 * URL may be) leaves the page URL in place, as HTML falls back to the
 * document URL. The trap guards are for the links: a base with many or
 * repeated segments still places them. */
static void on_base(sieve_links *lx, const char *href)
{
    lx->base_seen = true;
    size_t n = strnlen(href, lx->max_ref + 1);
    if (sieve_canon_url_unguarded(lx->canon, lx->page, href, n, lx->out, lx->cap) != SIEVE_OK)
        return;
    memcpy(lx->base, lx->out, strlen(lx->out) + 1);
    lx_memo_seeds(lx);
    lx->st.base_used = strcmp(lx->base, lx->page) != 0;
    sieve_canon_base_free(lx->base_u);
    lx->base_u = sieve_canon_parse_base(lx->base);
    lx_hrefs_clear(&lx->hrefs);
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
    /* A page in another charset writes non-ASCII in a query in its own
     * charset, as browsers send it (links-decode.c). */
    if (n <= lx->max_ref)
        n = lx_query_encode(lx->dec, value, n, &value);
    /* A value too long to canonicalize is refused by its length alone. */
    if (n > lx->max_ref)
        link.status = sieve_canon_url(lx->canon, lx->base, value, n, lx->out, lx->cap, &link.info);
    else
        lx_resolve(lx, value, n, &link);
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

/* See "Bounding libxml2's work" in links-bound.c: an element deeper than
 * SIEVE_LINKS_MAX_DEPTH takes its parent's place on libxml2's stack. It
 * stays the current element, which is all that libxml2's reading of what
 * follows depends on (script and style). */
void lx_limit_depth(sieve_links *lx)
{
    htmlParserCtxtPtr c = lx->ctxt;
    if (c == NULL)
        return; /* a Refresh header, read before the page */
    if (c->nameNr > SIEVE_LINKS_MAX_DEPTH) {
        c->nameTab[c->nameNr - 2] = c->nameTab[c->nameNr - 1];
        c->nameTab[--c->nameNr] = NULL;
        lx->st.depth_capped++;
    }
    if ((size_t)c->nameNr > lx->st.depth_max)
        lx->st.depth_max = (size_t)c->nameNr;
}

/* ---- bare link tags (see links-squeeze.c) ---- */

static bool bare_room(sieve_links *lx, size_t bytes)
{
    struct lx_bares *b = &lx->bares;
    if (b->next == b->n) /* all taken: start over */
        b->n = b->next = b->used = 0;
    if (b->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 64;
        struct lx_bare *e = realloc(b->e, cap * sizeof *e);
        if (!e)
            return false;
        b->e = e;
        b->cap = cap;
    }
    if (b->used + bytes > b->size) {
        size_t size = b->size ? b->size : 4096;
        while (size < b->used + bytes)
            size *= 2;
        char *a = size <= UINT32_MAX ? realloc(b->arena, size) : NULL;
        if (!a)
            return false;
        b->arena = a;
        b->size = size;
    }
    return true;
}

bool lx_bare_push(sieve_links *lx, const unsigned char *const v[LX_BARE_ATTRS],
                  const size_t len[LX_BARE_ATTRS])
{
    size_t bytes = 0;
    for (int k = 0; k < LX_BARE_ATTRS; k++)
        bytes += v[k] ? len[k] + 1 : 0;
    if (!bare_room(lx, bytes)) {
        lx->err = SIEVE_ENOMEM;
        return false;
    }
    struct lx_bares *b = &lx->bares;
    struct lx_bare *e = &b->e[b->n++];
    for (int k = 0; k < LX_BARE_ATTRS; k++) {
        e->off[k] = UINT32_MAX;
        if (!v[k])
            continue;
        e->off[k] = (uint32_t)b->used;
        memcpy(b->arena + b->used, v[k], len[k]);
        b->arena[b->used + len[k]] = '\0';
        b->used += len[k] + 1;
    }
    return true;
}

/* The attributes of a bare link tag, as libxml2 would have reported them
 * (names lower case, the first of each), in atts; how many. */
static size_t bare_take(sieve_links *lx, const char *atts[2 * LX_BARE_ATTRS + 1])
{
    static const char *const names[LX_BARE_ATTRS] = {"href", "src", "rel"};
    struct lx_bares *b = &lx->bares;
    const struct lx_bare *e = &b->e[b->next++];
    size_t n = 0;
    for (int k = 0; k < LX_BARE_ATTRS; k++) {
        if (e->off[k] == UINT32_MAX)
            continue;
        atts[2 * n] = names[k];
        atts[2 * n + 1] = b->arena + e->off[k];
        n++;
    }
    atts[2 * n] = NULL;
    return n;
}

/* A meta tag: a robots meta tag (for all crawlers, or for this one) may
 * say nofollow, and a refresh may send the reader on. Returns the URL of
 * such a refresh, to be freed, or NULL. */
static char *on_meta(sieve_links *lx, const xmlChar **atts)
{
    bool has;
    const char *mname = attr(atts, "name", &has);
    const char *content = attr(atts, "content", &has);
    const char *equiv = attr(atts, "http-equiv", &has);
    if (content == NULL)
        return NULL;
    if (mname != NULL && (strcasecmp(mname, "robots") == 0 || strcasecmp(mname, "sieve") == 0) &&
        meta_says_nofollow(content))
        lx->st.meta_nofollow = true;
    size_t n;
    const char *url =
        equiv != NULL && strcasecmp(equiv, "refresh") == 0 ? refresh_url(content, &n) : NULL;
    if (url == NULL)
        return NULL;
    char *value = strndup(url, n);
    if (value == NULL)
        lx->err = SIEVE_ENOMEM;
    return value;
}

static void on_start(void *ud, const xmlChar *name, const xmlChar **atts)
{
    sieve_links *lx = ud;
    const char *tag = (const char *)name;
    lx_limit_depth(lx);
    /* A link tag the squeeze handed bare: its values wait in order. */
    const char *bare[2 * LX_BARE_ATTRS + 1];
    if (!atts && tag && lx->bares.next < lx->bares.n && link_attr(tag)) {
        bare_take(lx, bare);
        atts = (const xmlChar **)bare;
    }
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
    /* One call of on_link(), which the compiler then inlines. */
    char *refresh = NULL;
    const char *value;
    if (strcmp(tag, "meta") == 0) {
        /* a refresh that sends the reader on: a link like any other */
        if ((value = refresh = on_meta(lx, atts)) == NULL)
            return;
    } else {
        const char *an = link_attr(tag);
        if (!an)
            return;
        value = attr(atts, an, &has);
        if (!has)
            return;
    }
    on_link(lx, tag, value, atts);
    free(refresh);
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
    lx_decoder_free(lx->dec);
    free(lx->page);
    free(lx->base);
    sieve_canon_base_free(lx->base_u);
    lx_hrefs_free(&lx->hrefs);
    free(lx->out);
    free(lx->stage);
    free(lx->squeezed);
    free(lx->bares.e);
    free(lx->bares.arena);
    free(lx);
}

/* Creates the push parser for a page in the charset of converter conv
 * (NULL: undeclared). libxml2 reads UTF-8 only: a page in another
 * charset is decoded first (links-decode.c), and one whose converter
 * iconv does not have is read as undeclared, as a label browsers do not
 * know is. The charset was decided before (links-sniff.c), so libxml2
 * ignores what the page's <meta> tags say. */
static int make_parser(sieve_links *lx, const char *conv)
{
    if (conv && strcmp(conv, "UTF-8") != 0) {
        int rc = lx_decoder_new(&lx->dec, conv);
        if (rc == SIEVE_ENOMEM)
            return rc;
        conv = rc == SIEVE_OK ? "UTF-8" : NULL;
    }
    /* "UTF-8" gets libxml2's own converter, which lets bytes through as
     * they are. */
    xmlCharEncodingHandlerPtr enc = conv ? xmlFindCharEncodingHandler(conv) : NULL;
    lx->sax.startElement = on_start;
    lx->ctxt = htmlCreatePushParserCtxt(&lx->sax, lx, NULL, 0, NULL, XML_CHAR_ENCODING_NONE);
    if (!lx->ctxt) {
        if (enc)
            xmlCharEncCloseFunc(enc);
        return SIEVE_ENOMEM;
    }
    int opt = HTML_PARSE_NONET | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING | HTML_PARSE_RECOVER |
              HTML_PARSE_IGNORE_ENC;
    if (enc) {
        if (xmlSwitchToEncoding(lx->ctxt, enc) != 0)
            return SIEVE_EINVAL;
    } else {
        /* Read undeclared pages as UTF-8, as most of the web is. Without
         * this, libxml2 2.9 switches to ISO-8859-1 at the first non-ASCII
         * byte. Invalid UTF-8 still falls back to ISO-8859-1 from the bad
         * byte on (lx_parse()). */
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
    lx->memo = opts->memo;
    lx->max_pending = opts->max_pending ? opts->max_pending : SIEVE_LINKS_MAX_PENDING;
    lx->flush_at = STAGE_MIN;
    lx->hiding = SIEVE_LINKS_HIDE_ALL;
    lx->given_conv = opts->charset ? lx_charset_conv(opts->charset) : NULL;
    lx->deciding = true;
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
        lx_memo_seeds(lx);
        lx->base_u = sieve_canon_parse_base(lx->base); /* NULL: the slower path */
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
static void parse_piece(sieve_links *lx, const char *p, size_t len, int terminate)
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
     * the skipping (links-squeeze.c) takes from it: drop them here, or its buffer
     * would grow with the page. */
    if (in && in->cur && in->cur - in->base > SHRINK_AT)
        xmlParserInputShrink(lx->ctxt->input);
    /* Parse again once as many new bytes as are pending have come: the
     * rescans then cost no more than the bytes themselves. */
    lx->flush_at = pending > STAGE_MIN ? pending : STAGE_MIN;
}

/* Whether the n bytes at p are all UTF-8 continuation bytes. */
static bool continuations(const unsigned char *p, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if ((p[k] & 0xc0) != 0x80)
            return false;
    return true;
}

/* Where libxml2 2.9 would meet the first byte that is not UTF-8
 * (lx_utf8_seq()) in the len bytes at p: the offset of the sequence it
 * cannot read (0 also for one begun in the bytes before), or len for
 * none. A sequence that the end of p cuts off waits in lx->u8_cut for
 * the bytes that complete it. */
static size_t first_not_utf8(sieve_links *lx, const unsigned char *p, size_t len)
{
    size_t i = 0;
    if (lx->u8_cut_len > 0) {
        unsigned char seq[4];
        size_t had = lx->u8_cut_len, want = lx_utf8_len(lx->u8_cut[0]);
        size_t take = want - had < len ? want - had : len;
        memcpy(seq, lx->u8_cut, had);
        memcpy(seq + had, p, take);
        lx->u8_cut_len = 0;
        if (had + take < want && continuations(seq + 1, had + take - 1)) {
            memcpy(lx->u8_cut, seq, had + take);
            lx->u8_cut_len = had + take;
            return len;
        }
        if (lx_utf8_seq(seq, had + take) != want)
            return 0;
        i = take;
    }
    while (i < len) {
        uint64_t w;
        while (i + 8 <= len && (memcpy(&w, p + i, 8), (w & UINT64_C(0x8080808080808080)) == 0))
            i += 8;
        while (i < len && p[i] < 0x80)
            i++;
        if (i == len)
            break;
        size_t n = lx_utf8_seq(p + i, len - i);
        if (n > 0) {
            i += n;
            continue;
        }
        size_t want = lx_utf8_len(p[i]);
        if (want == 0 || len - i >= want || !continuations(p + i + 1, len - i - 1))
            return i;
        memcpy(lx->u8_cut, p + i, len - i);
        lx->u8_cut_len = len - i;
        break;
    }
    return len;
}

/* Hands bytes to libxml2. An undeclared page is read as UTF-8 up to its
 * first byte that is not, and as ISO-8859-1 from that byte on. libxml2
 * 2.9 switches there itself, but then reads the byte from the converted
 * buffer, its first half only: inside an attribute value, "/caf\xe9"
 * came out as "/caf%C3%83". So the switch is made here, before that byte
 * is handed over, and libxml2 converts it with the bytes it holds. */
void lx_parse(sieve_links *lx, const char *p, size_t len, int terminate)
{
    const xmlParserInput *in = lx->ctxt->input;
    if (len && in && in->buf && !in->buf->encoder) {
        size_t bad = first_not_utf8(lx, (const unsigned char *)p, len);
        if (bad < len) {
            if (bad > 0)
                parse_piece(lx, p, bad, 0);
            if (lx->err)
                return;
            in = lx->ctxt->input;
            if (in && in->buf && !in->buf->encoder)
                xmlSwitchEncoding(lx->ctxt, XML_CHAR_ENCODING_8859_1);
            p += bad;
            len -= bad;
        }
    }
    parse_piece(lx, p, len, terminate);
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
        size_t took = lx_parse_skipping_text(lx, p, n, false);
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

int sieve_links_refresh(sieve_links *lx, const char *value, size_t len)
{
    if (!lx || (!value && len))
        return SIEVE_EINVAL;
    if (lx->finished)
        return SIEVE_ESTATE;
    if (lx->err || lx->stopped)
        return lx->err;
    char *content = strndup(value ? value : "", len);
    if (!content)
        return lx->err = SIEVE_ENOMEM;
    /* The meta tag the header stands for, read where the page's are. */
    const xmlChar *atts[] = {BAD_CAST "http-equiv", BAD_CAST "refresh", BAD_CAST "content",
                             BAD_CAST content, NULL};
    on_start(lx, BAD_CAST "meta", atts);
    free(content);
    return lx->err;
}

void lx_feed_text(sieve_links *lx, const char *p, size_t len)
{
    /* libxml2 ends an attribute value at a NUL byte, but its look-ahead
     * does not, so where a NUL falls in a chunk would change the links.
     * HTML ignores NULs in markup anyway: they are dropped (a UTF-16
     * page's are dropped once it is decoded). */
    const char *nul = memchr(p, 0, len);
    while (nul && !lx->err && !lx->stopped) {
        if (nul > p)
            feed_bytes(lx, p, (size_t)(nul - p));
        len -= (size_t)(nul - p) + 1;
        p = nul + 1;
        nul = memchr(p, 0, len);
    }
    if (len && !lx->err && !lx->stopped)
        feed_bytes(lx, p, len);
}

/* Takes bytes of the page as they came. */
static void feed_page(sieve_links *lx, const void *data, size_t len, bool final)
{
    if (lx->dec)
        lx_decode(lx->dec, data, len, final, lx);
    else if (len)
        lx_feed_text(lx, data, len);
}

/* Whether the bytes waiting tell the page's charset: a byte order mark,
 * else the caller's label, else a <meta> in the first LX_SNIFF_MAX bytes
 * (all of them, or the page's end, to know there is none). The <meta>'s
 * converter is kept for decide(): the prescan runs once a feed. */
static bool known(sieve_links *lx)
{
    if (lx_sniff_bom_possible(lx->sniff, lx->sniff_len))
        return false;
    size_t bom;
    if (lx_sniff_bom(lx->sniff, lx->sniff_len, &bom) || lx->given_conv)
        return true;
    lx->meta_conv = lx_sniff_meta(lx->sniff, lx->sniff_len);
    return lx->sniff_len == LX_SNIFF_MAX || lx->meta_conv;
}

/* The charset is known: the parser is made and the bytes that waited go.
 * At the page's end known() may not have run on all of them. */
static void decide(sieve_links *lx, bool end)
{
    size_t bom;
    const char *conv = lx_sniff_bom(lx->sniff, lx->sniff_len, &bom);
    if (!conv)
        conv = lx->given_conv;
    if (!conv)
        conv = end ? lx_sniff_meta(lx->sniff, lx->sniff_len) : lx->meta_conv;
    lx->deciding = false;
    int rc = make_parser(lx, conv);
    if (rc) {
        lx->err = rc;
        return;
    }
    feed_page(lx, lx->sniff + bom, lx->sniff_len - bom, false);
}

int sieve_links_feed(sieve_links *lx, const void *data, size_t len)
{
    if (!lx || (!data && len))
        return SIEVE_EINVAL;
    if (lx->finished)
        return SIEVE_ESTATE;
    if (lx->err || len == 0 || lx->stopped)
        return lx->err;
    const unsigned char *p = data;
    if (lx->deciding) {
        size_t n = LX_SNIFF_MAX - lx->sniff_len < len ? LX_SNIFF_MAX - lx->sniff_len : len;
        memcpy(lx->sniff + lx->sniff_len, p, n);
        lx->sniff_len += n;
        p += n;
        len -= n;
        if (!known(lx))
            return SIEVE_OK;
        decide(lx, false);
    }
    if (len && !lx->err && !lx->stopped)
        feed_page(lx, p, len, false);
    return lx->err;
}

int sieve_links_finish(sieve_links *lx)
{
    if (!lx)
        return SIEVE_EINVAL;
    if (lx->finished)
        return lx->err;
    if (lx->deciding && !lx->err)
        decide(lx, true);
    lx->finished = true;
    if (lx->err || lx->stopped)
        return lx->err;
    if (lx->dec)
        lx_decode(lx->dec, NULL, 0, true, lx);
    if (lx->err || lx->stopped)
        return lx->err;
    /* The staged bytes are counted like any others before the last call. */
    if (lx->stage_len)
        lx_parse_skipping_text(lx, lx->stage, lx->stage_len, true);
    lx->stage_len = 0;
    if (!lx->err && !lx->stopped)
        lx_hand(lx, "", 0, 1);
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
