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
        size_t n = lx_plain_comment_end((const unsigned char *)c, (size_t)(end - c));
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
        size_t d, e = lx_raw_to_end(p, len, (const unsigned char *)raw, strlen(raw), &d);
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
            size_t t = lx_text_run(s + i, len - i);
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
                : memcmp(p + i, "<!--", 4) == 0 ? lx_plain_comment(p + i, len - i)
                                                : NOT_PLAIN;
            if (n != NOT_PLAIN && n != NEED_MORE) {
                lx->st.text_skipped += n;
                i += n;
                continue;
            }
        } else if (p[i + 1] == '/') {
            n = lx_plain_end_tag(p + i, len - i, &name_len);
            if (n != NOT_PLAIN && n != NEED_MORE) {
                if (lx_tag_kind(p + i + 2, name_len) == KIND_LINK) {
                    memcpy(out + o, p + i, n);
                    o += n;
                } else {
                    lx->st.text_skipped += n;
                }
                i += n;
                continue;
            }
        } else if (lx_ascii_letter(p[i + 1])) {
            enum lx_tag_kind kind;
            bool closed;
            struct lx_tag_links tl;
            n = lx_plain_start_tag(p + i, len - i, &kind, &closed, out + o, &k, &tl);
            if (n != NOT_PLAIN && n != NEED_MORE && kind == KIND_RAW && !closed) {
                /* The data and the end tag that ends it, or nothing. */
                size_t nl = 1, d;
                while (lx_name_char(p[i + 1 + nl]))
                    nl++;
                size_t e = lx_raw_to_end(p + i + n, len - i - n, p + i + 1, nl, &d);
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
        size_t n =
            lx_plain_comment_end((const unsigned char *)c, rest < CARRY_MAX ? rest : CARRY_MAX);
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
            size_t n = lx_text_run(p, len);
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
