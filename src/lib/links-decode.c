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
 * lone lead byte, still counts. The five bytes iconv leaves undefined in
 * windows-1252 are the C1 controls of the same value there, as the
 * standard's index has them.
 *
 * libxml2 then reads UTF-8 only, which also lets links-squeeze.c keep
 * text and unneeded tags from it on such pages as on UTF-8 ones.
 *
 * Bytes go through a fixed input buffer, so that a sequence cut by the
 * end of one feed is completed by the next, and the UTF-8 out through a
 * fixed output buffer: a decoder holds INPUT_CAP + OUTPUT_CAP bytes
 * whatever the page. */
#include <errno.h>
#include <iconv.h>
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
    size_t unit;      /* bytes skipped past a rejected sequence */
    bool c1_controls; /* windows-1252: 0x81, 0x8d, 0x8f, 0x90, 0x9d are U+0081... */
    size_t in_len;    /* bytes waiting in in */
    size_t out_len;   /* bytes waiting in out */
    char in[INPUT_CAP];
    char out[OUTPUT_CAP];
};

int lx_decoder_new(lx_decoder **out, const char *conv)
{
    *out = NULL;
    lx_decoder *d = malloc(sizeof *d);
    if (!d)
        return SIEVE_ENOMEM;
    d->cd = iconv_open("UTF-8", conv);
    if (d->cd == (iconv_t)-1) {
        int e = errno;
        free(d);
        return e == ENOMEM ? SIEVE_ENOMEM : SIEVE_EINVAL;
    }
    d->unit = strncmp(conv, "UTF-16", 6) == 0 ? 2 : 1;
    d->c1_controls = strcmp(conv, "WINDOWS-1252") == 0;
    d->in_len = d->out_len = 0;
    *out = d;
    return SIEVE_OK;
}

void lx_decoder_free(lx_decoder *d)
{
    if (!d)
        return;
    iconv_close(d->cd);
    free(d);
}

static void flush_out(lx_decoder *d, sieve_links *lx)
{
    if (d->out_len)
        lx_feed_text(lx, d->out, d->out_len);
    d->out_len = 0;
}

/* Puts the UTF-8 for a byte iconv rejected: its C1 control in
 * windows-1252, U+FFFD otherwise. */
static void put_rejected(lx_decoder *d, sieve_links *lx, unsigned char b)
{
    if (OUTPUT_CAP - d->out_len < 3)
        flush_out(d, lx);
    char *o = d->out + d->out_len;
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
