/* decode.c - gzip and deflate bodies, inflated with zlib as they stream.
 *
 * Why the engine and not curl: the embedder's wire callbacks must get the
 * body as it came (a WARC archive keeps the content coding), and curl
 * hands over either the raw or the decoded bytes, not both. So curl
 * decodes nothing and every chunk is inflated here, into a fixed buffer
 * that goes to the sink 16 KiB at a time: a body of any size, a
 * compression bomb included, costs the buffer and zlib's window, and the
 * byte limit (the sink's) stops it after the limit's worth of output.
 *
 * Truncation. A gzip stream ends with a CRC and a length, a zlib one with
 * an Adler-32, so the decoder knows whether it saw the whole stream;
 * decoder_complete() says so, and a body whose stream never ended is a
 * truncated body even when the connection ended cleanly.
 *
 * Leniency, as browsers and curl have it: "deflate" is RFC 1950's zlib
 * format, but some servers send raw deflate data, told apart by the zlib
 * header's check bits; after a gzip member another member may follow,
 * and bytes after the last stream that start no member are ignored. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <zlib.h>

#include "decode.h"

#define DECODE_OUT (16 * 1024)

struct decoder {
    z_stream z;
    decode_coding coding;
    bool inited;   /* inflateInit2() done */
    bool fed;      /* a byte of the body came in */
    bool ended;    /* the current stream reached its end */
    bool trailing; /* past the last stream: the rest is ignored */
    unsigned members;
    unsigned char first; /* deflate: the first byte, until the second tells the format */
    bool have_first;
    char out[DECODE_OUT];
};

/* ---- Content-Encoding ---- */

static bool token_is(const char *p, size_t n, const char *word)
{
    return strlen(word) == n && strncasecmp(p, word, n) == 0;
}

decode_coding decode_coding_add(decode_coding so_far, const char *value, size_t len)
{
    const char *p = value, *end = value + len;
    while (p < end) {
        while (p < end && strchr(" \t\r\n,", *p) != NULL)
            p++;
        const char *t = p;
        while (p < end && strchr(" \t\r\n,;", *p) == NULL)
            p++;
        size_t n = (size_t)(p - t);
        while (p < end && *p != ',') /* parameters: none are defined */
            p++;
        if (n == 0 || token_is(t, n, "identity"))
            continue;
        decode_coding c = token_is(t, n, "gzip") || token_is(t, n, "x-gzip") ? DECODE_GZIP
                          : token_is(t, n, "deflate")                        ? DECODE_DEFLATE
                                                                             : DECODE_UNSUPPORTED;
        /* one coding at most: a stack of them is not asked for */
        so_far = so_far == DECODE_IDENTITY ? c : DECODE_UNSUPPORTED;
    }
    return so_far;
}

/* ---- the decoder ---- */

decoder *decoder_new(decode_coding coding)
{
    if (coding != DECODE_GZIP && coding != DECODE_DEFLATE)
        return NULL;
    decoder *d = malloc(sizeof *d);
    if (d == NULL)
        return NULL;
    memset(&d->z, 0, sizeof d->z);
    d->coding = coding;
    d->inited = d->fed = d->ended = d->trailing = d->have_first = false;
    d->members = 0;
    return d;
}

/* zlib's header: compression method 8, a window of at most 32 KiB, and
 * the first two bytes a multiple of 31 (RFC 1950 2.2). */
static bool zlib_header(unsigned char b0, unsigned char b1)
{
    return (b0 & 0x0f) == 8 && (b0 >> 4) <= 7 && ((unsigned)b0 << 8 | b1) % 31 == 0;
}

static decode_status start(decoder *d, unsigned char b0, unsigned char b1)
{
    int bits = d->coding == DECODE_GZIP ? 16 + MAX_WBITS
               : zlib_header(b0, b1)    ? MAX_WBITS
                                        : -MAX_WBITS;
    int rc = inflateInit2(&d->z, bits);
    if (rc != Z_OK)
        return rc == Z_MEM_ERROR ? DECODE_NOMEM : DECODE_CORRUPT;
    d->inited = true;
    d->members = 1;
    return DECODE_OK;
}

/* After a stream's end: another gzip member, or the end of what is read. */
static void next_stream(decoder *d, unsigned char next)
{
    if (d->coding == DECODE_GZIP && next == 0x1f) {
        inflateReset(&d->z);
        d->ended = false;
        d->members++;
    } else {
        d->trailing = true;
    }
}

static decode_status inflate_all(decoder *d, const unsigned char *in, size_t n, decode_sink sink,
                                 void *ctx)
{
    while (n > 0 && !d->trailing) {
        if (d->ended) {
            next_stream(d, in[0]);
            continue;
        }
        uInt chunk = n > UINT_MAX ? UINT_MAX : (uInt)n;
        d->z.next_in = (unsigned char *)in;
        d->z.avail_in = chunk;
        do {
            d->z.next_out = (unsigned char *)d->out;
            d->z.avail_out = sizeof d->out;
            int rc = inflate(&d->z, Z_NO_FLUSH);
            if (rc == Z_MEM_ERROR)
                return DECODE_NOMEM;
            if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT || rc == Z_STREAM_ERROR) {
                /* a later "member" that is no gzip header: trailing bytes */
                if (d->members > 1 && d->z.total_in <= 2 && d->z.total_out == 0) {
                    d->trailing = true;
                    d->ended = true;
                    return DECODE_OK;
                }
                return DECODE_CORRUPT;
            }
            size_t got = sizeof d->out - d->z.avail_out;
            if (got > 0 && sink(ctx, d->out, got) < got)
                return DECODE_STOP;
            if (rc == Z_STREAM_END) {
                d->ended = true;
                break;
            }
        } while (d->z.avail_in > 0 || d->z.avail_out == 0);
        size_t used = chunk - d->z.avail_in;
        in += used;
        n -= used;
    }
    return DECODE_OK;
}

decode_status decoder_feed(decoder *d, const char *data, size_t n, decode_sink sink, void *ctx)
{
    const unsigned char *in = (const unsigned char *)data;
    if (n == 0 || d->trailing)
        return DECODE_OK;
    d->fed = true;
    if (!d->inited) {
        if (d->coding == DECODE_DEFLATE && !d->have_first && n == 1) {
            d->first = in[0]; /* the format shows in two bytes */
            d->have_first = true;
            return DECODE_OK;
        }
        unsigned char b0 = d->have_first ? d->first : in[0];
        unsigned char b1 = d->have_first ? in[0] : in[1];
        decode_status st = start(d, b0, b1);
        if (st == DECODE_OK && d->have_first)
            st = inflate_all(d, &d->first, 1, sink, ctx);
        if (st != DECODE_OK)
            return st;
    }
    return inflate_all(d, in, n, sink, ctx);
}

bool decoder_complete(const decoder *d)
{
    return !d->fed || d->ended;
}

void decoder_free(decoder *d)
{
    if (d == NULL)
        return;
    if (d->inited)
        inflateEnd(&d->z);
    free(d);
}
