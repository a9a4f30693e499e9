/* links-squeeze.c - what the link extractor keeps from libxml2: runs of
 * text it would only read, and in content the markup no link depends on
 * (see links-internal.h for the files around). */
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

/* Length of the text at s that libxml2 would only read as characters. */
static size_t text_run(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    for (;;) {
        i += ascii_run(p + i, len - i);
        if (i == len || p[i] == '<')
            return i;
        size_t n = lx_utf8_seq(p + i, len - i);
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
 *   - a start tag of a, area, frame or iframe: the tag with no attribute
 *     but its href, src and rel, kept byte for byte in their order;
 *     <base> and <meta> whole (a <meta> may switch the charset, so the
 *     squeeze stops after it and asks libxml2 where it stands); any other
 *     start tag: left out;
 *   - a script or style element, its data up to the end tag
 *     htmlParseScript() stops at ("</" and the element's name, in any
 *     case) and that end tag: left out;
 *   - a comment, up to where htmlParseComment() ends it (the first "-->"
 *     or "--!>" after "<!--"): left out;
 *   - an end tag: kept for a, area, frame and iframe, else left out.
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
 * Why the other tags may go: libxml2 2.9 reports every start tag it
 * parses, wherever it stands (it drops only a misplaced html, head or
 * body), and outside script, style and comments it parses every '<' and
 * a letter as a tag, whatever element it sits in. So which link tags it
 * reports, and with which attributes, does not depend on the elements
 * around them, and libxml2 need not build that structure at all: on the
 * dense site this took its own instructions down by a third
 * (bench/README.md). */

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
        size_t n = lx_utf8_seq(p + i, len - i);
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

/* Asked of every tag: most are none of these, which the first letter
 * and the length tell without a string compare. */
static enum tag_kind tag_kind(const unsigned char *p, size_t n)
{
    switch (p[0] | 0x20) {
    case 'a':
        return n == 1 || name_is(p, n, "area") ? KIND_LINK : KIND_OTHER;
    case 'f':
        return name_is(p, n, "frame") ? KIND_LINK : KIND_OTHER;
    case 'i':
        return name_is(p, n, "iframe") ? KIND_LINK : KIND_OTHER;
    case 'm':
        return name_is(p, n, "meta") ? KIND_META : KIND_OTHER;
    case 'b':
        return name_is(p, n, "base") ? KIND_WHOLE : KIND_OTHER;
    case 's':
        return name_is(p, n, "script") || name_is(p, n, "style") ? KIND_RAW : KIND_OTHER;
    default:
        return KIND_OTHER;
    }
}

/* Reads the start tag at p ('<' and an ASCII letter) as htmlParseStartTag()
 * does, if it is plain, and writes to out what libxml2 is handed instead:
 * its length in *out_len. Returns the tag's length, NOT_PLAIN, or
 * NEED_MORE. *name and *name_len give its name; *closed tells "/>". */
/* Bare link tags. Reading the kept link attributes was then most of what
 * libxml2 still did on a dense page: their values a character at a time
 * (xmlNextChar, about 9% of a dense crawl's instructions), copied out,
 * and an attribute array built and freed for every tag. Yet a value of
 * ASCII graphic characters without '&' comes back from libxml2 exactly as
 * it was written: there is no reference to decode and nothing to convert
 * (blanks, controls and other bytes may come back as written too, the
 * tests find; they are left to libxml2 all the same). So a
 * plain link tag whose kept values are all such is handed to libxml2 bare
 * ("<a>", "<iframe />"), and its values wait in a queue
 * (lx_bare_push()) that on_start() reads from when libxml2 reports a link
 * tag without attributes: libxml2 reports start tags in the order it was
 * handed them, and every link tag the squeeze hands bare has its entry.
 * A bare link tag in the page itself comes when the queue is empty, as
 * the bytes libxml2 reads itself come after what it was handed; it has
 * no link, as before. A tag with any other kept value keeps its
 * attributes for libxml2 to read. */

/* A link tag's href, src and rel values as plain_start_tag() read them:
 * the first of each name (libxml2 drops the later ones), and whether the
 * tag may go to libxml2 bare (see "Bare link tags" above). */
struct tag_links {
    const unsigned char *v[LX_BARE_ATTRS]; /* NULL: no such attribute */
    size_t len[LX_BARE_ATTRS];
    bool bare;
};

/* Whether libxml2 would hand back the value's bytes as they are: no
 * character reference to decode, nothing it could read another way. */
static bool value_as_is(const unsigned char *v, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (v[k] <= 0x20 || v[k] >= 0x7f || v[k] == '&')
            return false;
    return true;
}

static size_t plain_start_tag(const unsigned char *p, size_t len, enum tag_kind *kind, bool *closed,
                              char *out, size_t *out_len, struct tag_links *tl)
{
    size_t i = 1;
    while (i < len && lx_name_char(p[i]))
        i++;
    if (i - 1 >= NAME_CUT)
        return NOT_PLAIN;
    *kind = tag_kind(p + 1, i - 1);
    *closed = false;
    size_t o = i, attrs = 0, name_end = i;
    memcpy(out, p, i);
    *tl = (struct tag_links){.bare = true};
    for (;;) {
        while (i < len && lx_is_blank(p[i]))
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
        if (!lx_name_start(p[i]) || ++attrs > PLAIN_ATTRS_MAX)
            return NOT_PLAIN;
        size_t a = i;
        while (i < len && lx_name_char(p[i]))
            i++;
        if (i == len)
            return NEED_MORE;
        if (i - a >= NAME_CUT)
            return NOT_PLAIN;
        size_t name_len = i - a, j = i;
        const unsigned char *value = NULL;
        size_t value_len = 0;
        while (j < len && lx_is_blank(p[j]))
            j++;
        if (j == len)
            return NEED_MORE;
        if (p[j] == '=') {
            for (j++; j < len && lx_is_blank(p[j]);)
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
                value = p + j + 1;
                value_len = v;
                j = (size_t)(q - p) + 1;
            } else {
                /* htmlParseHTMLAttribute() reads it up to a blank or '>'
                 * ("x/>" is the value "x/"); a quote in it would throw
                 * libxml2's look-ahead for the '>' out of step. */
                size_t v = j;
                while (j < len && !lx_is_blank(p[j]) && p[j] != '>' && p[j] != '"' && p[j] != '\'')
                    j++;
                if (j == len)
                    return len - v > CARRY_MAX ? NOT_PLAIN : NEED_MORE;
                if (j == v || p[j] == '"' || p[j] == '\'' || utf8_run(p + v, j - v) != j - v)
                    return NOT_PLAIN;
                value = p + v;
                value_len = j - v;
            }
        } else if (!lx_is_blank(p[i]) && p[i] != '>' && p[i] != '/') {
            return NOT_PLAIN;
        }
        int which = *kind != KIND_LINK                 ? -1
                    : name_is(p + a, name_len, "href") ? LX_BARE_HREF
                    : name_is(p + a, name_len, "src")  ? LX_BARE_SRC
                    : name_is(p + a, name_len, "rel")  ? LX_BARE_REL
                                                       : -1;
        if (which >= 0) {
            out[o++] = ' ';
            memcpy(out + o, p + a, j - a);
            o += j - a;
            if (value == NULL || !value_as_is(value, value_len))
                tl->bare = false;
            else if (tl->v[which] == NULL)
                tl->v[which] = value, tl->len[which] = value_len;
        }
        i = j;
    }
    if (*kind == KIND_WHOLE || *kind == KIND_META) {
        memcpy(out, p, i + 1);
        *out_len = i + 1;
        return i + 1;
    }
    if (*kind == KIND_LINK && tl->bare)
        o = name_end; /* its values go to on_start() another way */
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
    while (i < len && lx_name_char(p[i]))
        i++;
    *name_len = i - 2;
    if (*name_len >= NAME_CUT)
        return NOT_PLAIN;
    while (i < len && lx_is_blank(p[i]))
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
        size_t k = lx_limit_piece(lx, p, n, &verdict);
        if (k)
            lx_hand(lx, p, k, 0);
        if (verdict != PIECE_OK && !lx->err)
            lx_end_page(lx, verdict);
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
                if (tag_kind(p + i + 2, name_len) == KIND_LINK) {
                    memcpy(out + o, p + i, n);
                    o += n;
                } else {
                    lx->st.text_skipped += n;
                }
                i += n;
                continue;
            }
        } else if (ascii_letter(p[i + 1])) {
            enum tag_kind kind;
            bool closed;
            struct tag_links tl;
            n = plain_start_tag(p + i, len - i, &kind, &closed, out + o, &k, &tl);
            if (n != NOT_PLAIN && n != NEED_MORE && kind == KIND_RAW && !closed) {
                /* The data and the end tag that ends it, or nothing. */
                size_t nl = 1, d;
                while (lx_name_char(p[i + 1 + nl]))
                    nl++;
                size_t e = raw_to_end(p + i + n, len - i - n, p + i + 1, nl, &d);
                if (e == NOT_PLAIN || e == NEED_MORE) {
                    n = e;
                } else {
                    lx->st.text_skipped += n + d + e;
                    i += n + d + e;
                    continue;
                }
            }
            if (n != NOT_PLAIN && n != NEED_MORE && kind == KIND_LINK && tl.bare &&
                !lx_bare_push(lx, tl.v, tl.len))
                return i; /* out of memory: lx->err says so */
            if (n != NOT_PLAIN && n != NEED_MORE) {
                if (kind == KIND_OTHER || kind == KIND_RAW)
                    k = 0; /* no link depends on it */
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

/* How many of the n bytes at p end in a cut-off "</script" or "</style",
 * from its '<' on. libxml2 2.9 ends script data at "</" followed by the
 * element's name, but it looks for the name in what it has: handed "</scr"
 * (or "</", or "<") at the end of a call, it takes the bytes for data, and
 * "ipt>" in the next for more data, so the script would run on over the
 * links after it. Such bytes wait for the next call. */
static size_t raw_end_tail(const char *p, size_t n)
{
    static const char *const ends[] = {"</script", "</style"};
    for (size_t k = n < 7 ? n : 7; k >= 1; k--) {
        for (size_t e = 0; e < 2; e++)
            if (k < strlen(ends[e]) && strncasecmp(p + n - k, ends[e], k) == 0)
                return k;
    }
    return 0;
}

/* Where next_cut()'s cut at `cut` should go so that no call ends inside a
 * comment: libxml2 2.9 takes "<!-->" and "<!--->" for comments that end
 * at the next "-->" it has, and reads them to the end of the call when it
 * has none, so the bytes after would be read as markup. The cut
 * goes past the end htmlParseComment() finds for each "<!--" before it, as
 * sync_cut() does; where one has no end in the len bytes, just before it
 * (0 when it starts the bytes: they wait for more). An end is looked for
 * only as far as a carry could hold, which bounds the work a call does: a
 * longer comment goes as it is. */
static size_t cut_outside_comments(const char *p, size_t cut, size_t len)
{
    const char *end = p + len;
    size_t x = cut;
    for (const char *c = p;; c++) {
        const char *lim = p + x + 3 < end ? p + x + 3 : end;
        c = c < lim ? memmem(c, (size_t)(lim - c), "<!--", 4) : NULL;
        if (!c || c >= p + x)
            return x;
        size_t rest = (size_t)(end - c);
        size_t n = plain_comment_end((const unsigned char *)c, rest < CARRY_MAX ? rest : CARRY_MAX);
        if (!n)
            return rest <= CARRY_MAX ? (size_t)(c - p) : x;
        if ((size_t)(c - p) + n > x)
            x = (size_t)(c - p) + n;
        c += n - 1; /* a "<!--" inside a comment starts none */
    }
}

/* Hands len bytes to libxml2 but for what it would only read and drop;
 * returns how many it took, the rest being held back for the next feed
 * (never when final). */
size_t lx_parse_skipping_text(sieve_links *lx, const char *p, size_t len, bool final)
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
        if (!squeezing && lx->hiding != SIEVE_LINKS_HIDE_NOTHING) {
            size_t safe = cut_outside_comments(p, cut, len);
            if (safe == 0 && !final && len <= CARRY_MAX)
                return all - len;
            cut = safe ? safe : cut; /* a comment too long to hold goes as it is */
        }
        size_t n = lx_limit_piece(lx, p, cut, &verdict);
        size_t tail = final || verdict != PIECE_OK ? 0 : raw_end_tail(p, n);
        if (tail == n && n == len)
            return all - len;
        if (tail < n)
            n -= tail;
        if (n)
            lx_hand(lx, p, n, 0);
        if (verdict != PIECE_OK && !lx->err) {
            lx_end_page(lx, verdict);
            break;
        }
        p += n;
        len -= n;
        lx->in_text = !lx->err && idle_in_text(lx) && lx->hiding != SIEVE_LINKS_HIDE_NOTHING;
    }
    return all;
}
