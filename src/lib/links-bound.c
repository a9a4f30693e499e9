/* links-bound.c - the link extractor's bounds on libxml2's work: counted
 * attributes, tag lengths and what libxml2 holds, so that a page costs
 * time linear in its size (see links-internal.h for the files around). */
#include <libxml/HTMLparser.h>
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bytes.h"
#include "links-internal.h"
#include "sieve/status.h"

/* Bounding libxml2's work. libxml2 2.9 checks each attribute of a start
 * tag against all the earlier ones, and looks for the element an end tag
 * closes through its whole stack of open elements: a tag of n attributes
 * costs n * n / 2 string comparisons, and so do n stray end tags under n
 * open elements. A page of one megabyte could take minutes. Both are
 * bounded by counts, never by time, so a page's cost is linear in its
 * size whatever the load of the machine.
 *
 * Depth: an element that would be deeper than SIEVE_LINKS_MAX_DEPTH takes
 * its parent's place on libxml2's stack (lx_limit_depth() in links.c), much as
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
 * makes no ASCII out of others. libxml2 reads UTF-8 (a page in another
 * charset is decoded before, links-decode.c), or ISO-8859-1 from an
 * undeclared page's first byte that is not UTF-8, and never switches on a
 * <meta> (links-sniff.c). Should it ever read through another converter,
 * the bytes are handed over CONV_PIECE at a time, each adding at most
 * half as many attributes to a tag, and the page ends once the tag libxml2
 * holds has too many attributes to take another piece or is longer than
 * CONV_TAG_MAX. */

enum { TAG_GOES_ON, TAG_ATTR, TAG_ENDS };

/* Where an attribute may start: a blank, the end, a name, or bytes that
 * libxml2 skips up to the next blank. */
static int tag_before_attr(struct tag_scan *t, unsigned char c)
{
    if (lx_is_blank(c)) {
        t->state = TAG_BEFORE_ATTR;
        return TAG_GOES_ON;
    }
    /* A NUL ends libxml2's reading of the tag as its end of input would. */
    if (c == '>' || c == '\0') {
        t->state = TAG_END;
        return TAG_ENDS;
    }
    if (!lx_name_start(c)) {
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
        if (lx_name_start(c)) {
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
        if (lx_name_char(c) && t->len < NAME_CUT) {
            t->len++;
            return TAG_GOES_ON;
        }
        if (t->state == TAG_ATTR_NAME && lx_is_blank(c)) {
            t->state = TAG_AFTER_NAME;
            return TAG_GOES_ON;
        }
        /* fall through */
    case TAG_AFTER_NAME:
        if (t->state != TAG_NAME && c == '=') {
            t->state = TAG_BEFORE_VALUE;
            return TAG_GOES_ON;
        }
        if (t->state == TAG_AFTER_NAME && lx_is_blank(c))
            return TAG_GOES_ON;
        return tag_before_attr(t, c);
    case TAG_BEFORE_VALUE:
        if (lx_is_blank(c))
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
        if (lx_is_blank(c) || c == '>' || c == '\0')
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
    return lx_is_blank(c) || c == '"' || c == '\'';
}

/* Whether c may start an attribute wherever it stands, prev and run being
 * the byte before it and the name characters that end there: a name start
 * after a blank or a quote, or a name character that libxml2's cut at
 * NAME_CUT makes one. Updates prev and run. */
static inline bool loose_attr(unsigned char c, unsigned char *prev, size_t *run)
{
    bool start = false;
    if (lx_name_char(c)) {
        ++*run;
        start = *run == 1 ? lx_name_start(c) && is_sep(*prev) : *run % NAME_CUT == 1;
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

/* The converters libxml2 is given (links.c): its own UTF-8 reader, and
 * ISO-8859-1 past an undeclared page's first byte that is not UTF-8. */
static bool keeps_ascii(const char *name)
{
    return strcasecmp(name, "UTF-8") == 0 || strcasecmp(name, "ISO-8859-1") == 0;
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
            for (size_t k = i; k > 0 && lx_name_char(p[k - 1]) && ev != TAG_ENDS; k--)
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
        while (k > i && lx_name_char(p[k - 1]))
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
size_t lx_limit_piece(sieve_links *lx, const char *p, size_t len, int *verdict)
{
    *verdict = PIECE_OK;
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
void lx_hand(sieve_links *lx, const char *p, size_t len, int terminate)
{
    lx_parse(lx, p, len, terminate);
    count_held(lx);
}

/* A limit ends the page: with the tag libxml2 holds closed right before
 * its first attribute too many, or where it stands. */
void lx_end_page(sieve_links *lx, int verdict)
{
    lx->stopped = true;
    lx->st.cut = true;
    if (verdict == PIECE_CLOSE) {
        lx->st.cut_reason = "a tag has too many attributes";
        lx_hand(lx, ">", 1, 1);
    } else {
        lx->st.cut_reason = readable(lx) ? "a tag has too many attributes"
                                         : "a tag is too long to count in this charset";
    }
}
