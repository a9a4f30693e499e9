/* links-decode.c - a page in another charset than UTF-8, decoded to
 * UTF-8 before libxml2 reads it.
 *
 * Why not libxml2's own converters: behind one, libxml2 2.9 stops the page
 * at the first byte sequence the converter rejects - a byte GBK leaves
 * undefined, a lone UTF-16 surrogate, even 0x81 in windows-1252 - and
 * every link after it was lost without a word. Browsers decode such bytes
 * as U+FFFD and read on (the Encoding Standard's decoders), and so does
 * this: iconv converts, and where it rejects a sequence one U+FFFD goes
 * out and the next byte (the next code unit in UTF-16) is tried again, so
 * an ASCII byte that a broken sequence swallowed, such as the '<' after a
 * lone lead byte, still counts. A few lone bytes that iconv rejects are
 * characters in the standard, and put_rejected() writes those: the five
 * bytes undefined in windows-1252 are the C1 controls of the same value,
 * 0x80 is the euro sign in gb18030 (and so on GBK pages) and U+0080 in
 * Shift_JIS.
 *
 * libxml2 then reads UTF-8 only, which also lets links-squeeze.c keep
 * text and unneeded tags from it on such pages as on UTF-8 ones.
 *
 * Queries. The URL standard parses a page's links with the page's
 * encoding: non-ASCII in a query goes out in that charset, percent-
 * encoded (a character it lacks as "&#N;"), so a search link on a
 * Shift_JIS site names what the site expects. lx_query_encode() does
 * that with a second iconv converter, opened on a page's first such link.
 *
 * Bytes go through a fixed input buffer, so that a sequence cut by the
 * end of one feed is completed by the next, and the UTF-8 out through a
 * fixed output buffer: a decoder holds INPUT_CAP + OUTPUT_CAP bytes
 * whatever the page, and its encoded href at most twelve bytes for each
 * byte of the longest href it was given (which max_ref bounds). */
#include <errno.h>
#include <iconv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "links-internal.h"
#include "sieve/status.h"

#define INPUT_CAP  4096
#define OUTPUT_CAP 8192
/* A sequence iconv calls incomplete but that is longer than this is
 * broken: no encoding here has sequences (or escapes) that long. */
#define SEQ_MAX 16

struct lx_decoder {
    iconv_t cd;
    const char *conv;  /* the page's charset, by iconv's name */
    iconv_t query;     /* UTF-8 to it, for queries; opened when first needed */
    bool query_failed; /* iconv could not open that: queries stay UTF-8 */
    char *qbuf;        /* the last href with its query encoded */
    size_t qcap;
    size_t unit;         /* bytes skipped past a rejected sequence */
    bool c1_controls;    /* windows-1252: 0x81, 0x8d, 0x8f, 0x90, 0x9d are U+0081... */
    const char *byte_80; /* what a lone 0x80 is, in UTF-8, where iconv rejects it */
    size_t in_len;       /* bytes waiting in in */
    size_t out_len;      /* bytes waiting in out */
    char in[INPUT_CAP];
    char out[OUTPUT_CAP];
};

int lx_decoder_new(lx_decoder **out, const char *conv)
{
    *out = NULL;
    lx_decoder *d = malloc(sizeof *d);
    if (!d)
        return SIEVE_ENOMEM;
    /* The standard decodes GBK as GB18030, four-byte sequences too; its
     * encoder for GBK pages writes two-byte GBK only (queries below). */
    d->cd = iconv_open("UTF-8", strcmp(conv, "GBK") == 0 ? "GB18030" : conv);
    if (d->cd == (iconv_t)-1) {
        int e = errno;
        free(d);
        return e == ENOMEM ? SIEVE_ENOMEM : SIEVE_EINVAL;
    }
    d->conv = conv;
    d->query = (iconv_t)-1;
    d->query_failed = false;
    d->qbuf = NULL;
    d->qcap = 0;
    d->unit = strncmp(conv, "UTF-16", 6) == 0 ? 2 : 1;
    d->c1_controls = strcmp(conv, "WINDOWS-1252") == 0;
    d->byte_80 = strcmp(conv, "GBK") == 0 || strcmp(conv, "GB18030") == 0 ? "\xe2\x82\xac"
                 : strcmp(conv, "WINDOWS-31J") == 0                       ? "\xc2\x80"
                                                                          : NULL;
    d->in_len = d->out_len = 0;
    *out = d;
    return SIEVE_OK;
}

void lx_decoder_free(lx_decoder *d)
{
    if (!d)
        return;
    iconv_close(d->cd);
    if (d->query != (iconv_t)-1)
        iconv_close(d->query);
    free(d->qbuf);
    free(d);
}

static void flush_out(lx_decoder *d, sieve_links *lx)
{
    if (d->out_len)
        lx_feed_text(lx, d->out, d->out_len);
    d->out_len = 0;
}

/* Puts the UTF-8 for a byte iconv rejected: the character the standard
 * has for it alone (see the top), U+FFFD otherwise. */
static void put_rejected(lx_decoder *d, sieve_links *lx, unsigned char b)
{
    if (OUTPUT_CAP - d->out_len < 3)
        flush_out(d, lx);
    char *o = d->out + d->out_len;
    if (b == 0x80 && d->byte_80) {
        size_t n = strlen(d->byte_80);
        memcpy(o, d->byte_80, n);
        d->out_len += n;
        return;
    }
    if (d->c1_controls && (b == 0x81 || b == 0x8d || b == 0x8f || b == 0x90 || b == 0x9d)) {
        o[0] = (char)0xc2;
        o[1] = (char)b;
        d->out_len += 2;
        return;
    }
    memcpy(o, "\xef\xbf\xbd", 3);
    d->out_len += 3;
}

/* Converts what waits in the input buffer; an incomplete sequence at its
 * end stays there for the next bytes. */
static void convert(lx_decoder *d, sieve_links *lx)
{
    char *ip = d->in;
    size_t il = d->in_len;
    while (il > 0 && !lx->err && !lx->stopped) {
        char *op = d->out + d->out_len;
        size_t ol = OUTPUT_CAP - d->out_len;
        size_t r = iconv(d->cd, &ip, &il, &op, &ol);
        d->out_len = OUTPUT_CAP - ol;
        if (r != (size_t)-1)
            break;
        if (errno == E2BIG) {
            flush_out(d, lx);
        } else if (errno == EINVAL && il < SEQ_MAX) {
            break;
        } else {
            /* EILSEQ, or an incomplete sequence too long to be one */
            size_t skip = d->unit < il ? d->unit : il;
            put_rejected(d, lx, (unsigned char)ip[0]);
            ip += skip;
            il -= skip;
        }
    }
    memmove(d->in, ip, il);
    d->in_len = il;
}

void lx_decode(lx_decoder *d, const void *data, size_t len, bool final, sieve_links *lx)
{
    const char *p = data;
    while (len > 0 && !lx->err && !lx->stopped) {
        size_t n = INPUT_CAP - d->in_len < len ? INPUT_CAP - d->in_len : len;
        memcpy(d->in + d->in_len, p, n);
        d->in_len += n;
        p += n;
        len -= n;
        convert(d, lx);
    }
    if (final && !lx->err && !lx->stopped) {
        /* A sequence the page's end cut off is one U+FFFD, and a stateful
         * encoding (ISO-2022-JP) returns to its initial state. */
        if (d->in_len > 0)
            put_rejected(d, lx, 0);
        d->in_len = 0;
        if (OUTPUT_CAP - d->out_len < SEQ_MAX)
            flush_out(d, lx);
        char *op = d->out + d->out_len;
        size_t ol = OUTPUT_CAP - d->out_len;
        iconv(d->cd, NULL, NULL, &op, &ol);
        d->out_len = OUTPUT_CAP - ol;
    }
    if (!lx->err && !lx->stopped)
        flush_out(d, lx);
}

/* ---- queries ---- */

/* Bytes the URL standard percent-encodes in a query of an http(s) URL
 * (the special-query percent-encode set), and any byte from 0x80 up. */
static bool query_escaped(unsigned char c)
{
    return c <= 0x20 || c >= 0x7f || c == '"' || c == '#' || c == '<' || c == '>' || c == '\'';
}

static void put_escaped(char **o, unsigned char c)
{
    static const char hex[] = "0123456789ABCDEF";
    if (!query_escaped(c)) {
        *(*o)++ = (char)c;
        return;
    }
    *(*o)++ = '%';
    *(*o)++ = hex[c >> 4];
    *(*o)++ = hex[c & 15];
}

/* The code point of the UTF-8 sequence at p (n bytes, valid). */
static unsigned long code_point(const unsigned char *p, size_t n)
{
    unsigned long v = p[0] & (0x7fu >> n);
    for (size_t k = 1; k < n; k++)
        v = v << 6 | (p[k] & 0x3fu);
    return n == 1 ? p[0] : v;
}

/* Encodes the UTF-8 query q (n bytes) in the page's charset, escaped,
 * at o; returns the end. A character the charset lacks becomes "&#N;"
 * with its '#' escaped, as the standard's encoder writes it. o has room
 * for 12 bytes a byte of q. */
static char *encode_query(lx_decoder *d, const unsigned char *q, size_t n, char *o)
{
    char buf[64];
    iconv(d->query, NULL, NULL, NULL, NULL);
    size_t i = 0;
    while (i < n) {
        size_t len = lx_utf8_seq(q + i, n - i);
        if (q[i] < 0x80)
            len = 1;
        if (len == 0) { /* libxml2 hands over UTF-8; this never happens */
            put_escaped(&o, q[i++]);
            continue;
        }
        char *in = (char *)(q + i), *out = buf;
        size_t il = len, ol = sizeof buf;
        if (iconv(d->query, &in, &il, &out, &ol) == (size_t)-1) {
            o += sprintf(o, "&%%23%lu;", code_point(q + i, len));
        } else {
            for (char *b = buf; b < out; b++)
                put_escaped(&o, (unsigned char)*b);
        }
        i += len;
    }
    /* a stateful charset (ISO-2022-JP) returns to ASCII at the end */
    char *out = buf;
    size_t ol = sizeof buf;
    iconv(d->query, NULL, NULL, &out, &ol);
    for (char *b = buf; b < out; b++)
        put_escaped(&o, (unsigned char)*b);
    return o;
}

size_t lx_query_encode(lx_decoder *d, const char *value, size_t n, const char **out)
{
    *out = value;
    /* UTF-16 pages' queries are UTF-8 (the standard's output encoding). */
    if (!d || d->unit == 2 || d->query_failed)
        return n;
    const char *hash = memchr(value, '#', n);
    size_t end = hash ? (size_t)(hash - value) : n;
    const char *q = memchr(value, '?', end);
    if (!q)
        return n;
    size_t start = (size_t)(q - value) + 1;
    size_t k = start;
    while (k < end && (unsigned char)value[k] < 0x80)
        k++;
    if (k == end)
        return n;
    if (d->query == (iconv_t)-1) {
        d->query = iconv_open(d->conv, "UTF-8");
        if (d->query == (iconv_t)-1) {
            d->query_failed = true;
            return n;
        }
    }
    size_t need = start + 12 * (end - start) + (n - end) + 16;
    if (need > d->qcap) {
        char *b = realloc(d->qbuf, need);
        if (!b)
            return n; /* left in UTF-8: a link all the same */
        d->qbuf = b;
        d->qcap = need;
    }
    memcpy(d->qbuf, value, start);
    char *o = encode_query(d, (const unsigned char *)value + start, end - start, d->qbuf + start);
    memcpy(o, value + end, n - end);
    o += n - end;
    *o = '\0';
    *out = d->qbuf;
    return (size_t)(o - d->qbuf);
}
