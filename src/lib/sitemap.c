/* sitemap.c - sitemaps (sitemaps.org) parsed as they stream in.
 *
 * Three layers, each fed by the one before:
 *
 *   raw      the bytes as fed. The first two tell gzip (1f 8b) from
 *            plain; gzip goes through zlib's inflate, which needs only its
 *            32 KiB window, into a fixed output buffer. Every inflated
 *            buffer is handed on before the next is made, so a gzip bomb
 *            costs time up to max_bytes and no memory at all.
 *   content  the (inflated) bytes, counted against max_bytes. Until the
 *            format is known, a UTF-8 BOM and blanks are skipped and the
 *            first bytes are held: '<' starts XML, "http://" or
 *            "https://" a text sitemap, anything else is not a sitemap.
 *   format   XML goes to libxml2's push parser (sitemap-xml.c); text is
 *            split at '\n'.
 *
 * Detection is byte by byte and the text splitter keeps its state between
 * feeds, and the XML parser sees the same pieces whatever the feeds
 * (sitemap-xml.c), so the whole parser delivers the same entries for any
 * chunking.
 *
 * A location is collected into one buffer of max_loc + 1 bytes: leading
 * blanks are skipped, bytes past max_loc are dropped and only remembered
 * (as "too long") if they are not blanks, so a location that never ends
 * costs max_loc bytes, and trailing blanks are trimmed at the end. */
#include <libxml/parser.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

#include "sieve/links.h"
#include "sieve/status.h"
#include "sitemap-internal.h"

/* Inflate output buffer. */
#define INFLATE_OUT (16 * 1024)

/* Most input handed to zlib at once: its avail_in is an unsigned int. */
#define INFLATE_IN_MAX (1u << 30)

static bool is_blank(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Ends the parse with err (the first error wins). */
void sm_stop(sieve_sitemap *s, int err)
{
    if (!s->err) {
        s->err = err;
        s->st.truncated = err == SIEVE_ETOOLONG;
    }
    if (s->xml)
        xmlStopParser(s->xml);
}

/* ---- collecting text ---- */

void sm_text_reset(struct text *t)
{
    t->len = 0;
    t->over = false;
}

void sm_text_add(struct text *t, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (t->len == 0 && is_blank(c))
            continue;
        if (t->len < t->cap)
            t->buf[t->len++] = (char)c;
        else if (!is_blank(c))
            t->over = true;
    }
}

/* Trims trailing blanks and terminates; returns the length. */
static size_t text_end(struct text *t)
{
    while (t->len && is_blank((unsigned char)t->buf[t->len - 1]))
        t->len--;
    t->buf[t->len] = '\0';
    return t->len;
}

static bool has_control(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c < 0x20 || c == 0x7f)
            return true;
    }
    return false;
}

/* One entry ends: deliver it, or count why not. lastmod may be NULL. */
void sm_emit(sieve_sitemap *s, struct text *lastmod)
{
    if (s->entries >= s->max_entries) {
        sm_stop(s, SIEVE_ETOOLONG);
        return;
    }
    s->entries++;
    size_t n = text_end(&s->loc);
    if (s->loc.over) {
        s->st.too_long++;
        return;
    }
    if (n == 0) {
        s->st.empty++;
        return;
    }
    if (has_control(s->loc.buf, n)) {
        s->st.invalid++;
        return;
    }
    sieve_sitemap_entry e = {.kind = s->kind, .loc = s->loc.buf, .loc_len = n};
    if (lastmod && !lastmod->over) {
        size_t m = text_end(lastmod);
        if (m && !has_control(lastmod->buf, m)) {
            e.lastmod = lastmod->buf;
            e.lastmod_len = m;
        }
    }
    if (s->kind == SIEVE_SITEMAP_PAGE)
        s->st.pages++;
    else
        s->st.sitemaps++;
    s->fn(s->ctx, &e);
}

/* ---- text sitemaps ---- */

static void text_line_end(sieve_sitemap *s)
{
    if (s->loc.len || s->loc.over)
        sm_emit(s, NULL);
    sm_text_reset(&s->loc);
}

/* Returns the bytes consumed: all of them, or up to the line end at
 * which a limit stopped the parse. */
static size_t text_push(sieve_sitemap *s, const char *p, size_t n)
{
    size_t done = 0;
    while (done < n && !s->err) {
        const char *nl = memchr(p + done, '\n', n - done);
        size_t k = nl ? (size_t)(nl - (p + done)) : n - done;
        sm_text_add(&s->loc, p + done, k);
        if (!nl)
            return n;
        text_line_end(s);
        done += k + 1;
    }
    return done;
}

/* ---- content: format detection, byte limit ---- */

static bool head_is_prefix(const sieve_sitemap *s, const char *word)
{
    return s->head_len <= strlen(word) && strncasecmp(s->head, word, s->head_len) == 0;
}

/* Reads bytes until the format is known; returns how many it consumed
 * (the '<' that starts XML is left for the XML parser; a byte that shows
 * the content is not a sitemap is the last one consumed). */
static size_t detect(sieve_sitemap *s, const char *p, size_t n)
{
    static const unsigned char bom[3] = {0xef, 0xbb, 0xbf};
    size_t i;
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        size_t at = s->skipped++;
        if (at < 3 && at == s->bom && c == bom[at]) {
            s->bom++;
            continue;
        }
        if (s->bom == 1 || s->bom == 2)
            break; /* a BOM cut short: not a sitemap */
        if (s->head_len == 0 && is_blank(c))
            continue;
        if (s->head_len == 0 && c == '<') {
            s->ct = CT_XML;
            int st = sm_xml_start(s);
            if (st != SIEVE_OK)
                sm_stop(s, st);
            return i;
        }
        s->head[s->head_len++] = (char)c;
        bool http = head_is_prefix(s, "http://"), https = head_is_prefix(s, "https://");
        if (!http && !https)
            break; /* neither '<' nor a URL: not a sitemap */
        if ((http && s->head_len == 7) || (https && s->head_len == 8)) {
            s->ct = CT_TEXT;
            s->st.format = SIEVE_SITEMAP_TEXT;
            s->kind = SIEVE_SITEMAP_PAGE;
            text_push(s, s->head, s->head_len);
            return i + 1;
        }
    }
    if (i == n)
        return n;
    sm_stop(s, SIEVE_EFORMAT);
    return i + 1;
}

static void content(sieve_sitemap *s, const char *p, size_t n)
{
    if (s->err)
        return;
    uint64_t room = s->max_bytes - s->st.bytes_out;
    bool over = n > room;
    if (over)
        n = (size_t)room;
    /* Only consumed bytes count, so that bytes_out does not depend on how
     * the input after a stop was chunked. */
    while (n && !s->err) {
        size_t k;
        if (s->ct == CT_DETECT)
            k = detect(s, p, n);
        else if (s->ct == CT_XML)
            k = sm_xml_push(s, p, n);
        else
            k = text_push(s, p, n);
        s->st.bytes_out += k;
        p += k;
        n -= k;
    }
    if (over && !s->err)
        sm_stop(s, SIEVE_ETOOLONG);
}

static void content_finish(sieve_sitemap *s)
{
    switch (s->ct) {
    case CT_DETECT:
        sm_stop(s, SIEVE_EFORMAT);
        break;
    case CT_TEXT:
        text_line_end(s);
        break;
    case CT_XML:
        sm_xml_hand(s, s->stage, s->stage_len, 1);
        s->stage_len = 0;
        if (!s->err && s->st.format == SIEVE_SITEMAP_UNKNOWN)
            sm_stop(s, SIEVE_EFORMAT);
        break;
    }
}

/* ---- raw: gzip ---- */

static int gz_start(sieve_sitemap *s)
{
    s->zout = malloc(INFLATE_OUT);
    if (!s->zout)
        return SIEVE_ENOMEM;
    /* 16 + MAX_WBITS: a gzip wrapper, not zlib's. */
    int r = inflateInit2(&s->z, 16 + MAX_WBITS);
    if (r != Z_OK)
        return r == Z_MEM_ERROR ? SIEVE_ENOMEM : SIEVE_EINVAL;
    s->z_ready = true;
    s->st.gzip = true;
    return SIEVE_OK;
}

/* A stream error: corrupt data, or bytes after a member that do not start
 * another one, which are ignored as gzip(1) does. */
static void gz_error(sieve_sitemap *s, int r)
{
    if (r == Z_MEM_ERROR)
        sm_stop(s, SIEVE_ENOMEM);
    else if (s->z_members > 0 && s->z.total_out == 0)
        s->z_trailing = true;
    else
        sm_stop(s, SIEVE_EFORMAT);
}

static void gz_feed(sieve_sitemap *s, const unsigned char *p, unsigned n)
{
    s->z.next_in = (Bytef *)p;
    s->z.avail_in = n;
    while (!s->err && !s->z_trailing) {
        if (s->z_end) {
            if (s->z.avail_in == 0)
                return;
            inflateReset(&s->z); /* another member follows */
            s->z_end = false;
        }
        s->z.next_out = s->zout;
        s->z.avail_out = INFLATE_OUT;
        int r = inflate(&s->z, Z_NO_FLUSH);
        size_t got = INFLATE_OUT - s->z.avail_out;
        if (got)
            content(s, (const char *)s->zout, got);
        if (r == Z_STREAM_END) {
            s->z_end = true;
            s->z_members++;
        } else if (r == Z_BUF_ERROR || (r == Z_OK && s->z.avail_out != 0)) {
            return; /* all input taken, all output given */
        } else if (r != Z_OK) {
            gz_error(s, r);
        }
    }
}

static void gz_feed_all(sieve_sitemap *s, const unsigned char *p, size_t n)
{
    while (n && !s->err && !s->z_trailing) {
        unsigned k = n > INFLATE_IN_MAX ? INFLATE_IN_MAX : (unsigned)n;
        gz_feed(s, p, k);
        p += k;
        n -= k;
    }
}

/* ---- public ---- */

void sieve_sitemap_global_init(void)
{
    sieve_links_global_init();
}

void sieve_sitemap_free(sieve_sitemap *s)
{
    if (!s)
        return;
    if (s->xml) {
        /* Entity declarations may have been kept in a stub document. */
        if (s->xml->myDoc)
            xmlFreeDoc(s->xml->myDoc);
        xmlFreeParserCtxt(s->xml);
    }
    if (s->z_ready)
        inflateEnd(&s->z);
    free(s->zout);
    free(s->stage);
    free(s->loc.buf);
    free(s);
}

int sieve_sitemap_new(sieve_sitemap **out, const sieve_sitemap_opts *opts, sieve_sitemap_fn fn,
                      void *ctx)
{
    if (!out)
        return SIEVE_EINVAL;
    *out = NULL;
    sieve_sitemap_opts o = opts ? *opts : (sieve_sitemap_opts){0};
    if (!fn || o.max_loc > SIEVE_SITEMAP_MAX_LOC_LIMIT)
        return SIEVE_EINVAL;
    xmlInitParser();
    sieve_sitemap *s = calloc(1, sizeof *s);
    if (!s)
        return SIEVE_ENOMEM;
    s->fn = fn;
    s->ctx = ctx;
    s->max_entries = o.max_entries ? o.max_entries : SIEVE_SITEMAP_MAX_ENTRIES;
    s->max_bytes = o.max_bytes ? o.max_bytes : SIEVE_SITEMAP_MAX_BYTES;
    s->max_pending = o.max_pending ? o.max_pending : SIEVE_SITEMAP_MAX_PENDING;
    s->loc.cap = o.max_loc ? o.max_loc : SIEVE_SITEMAP_MAX_LOC;
    s->loc.buf = malloc(s->loc.cap + 1);
    s->lastmod.cap = SIEVE_SITEMAP_MAX_LASTMOD;
    s->lastmod.buf = s->lastmod_buf;
    if (!s->loc.buf) {
        sieve_sitemap_free(s);
        return SIEVE_ENOMEM;
    }
    *out = s;
    return SIEVE_OK;
}

static void raw_gzip(sieve_sitemap *s)
{
    s->raw = RAW_GZIP;
    int st = gz_start(s);
    if (st != SIEVE_OK) {
        sm_stop(s, st);
        return;
    }
    static const unsigned char magic1 = 0x1f;
    gz_feed(s, &magic1, 1);
}

int sieve_sitemap_feed(sieve_sitemap *s, const void *data, size_t len)
{
    if (!s || (!data && len))
        return SIEVE_EINVAL;
    if (s->finished)
        return SIEVE_ESTATE;
    if (s->err || len == 0)
        return s->err;
    s->st.bytes_in += len;
    const unsigned char *p = data;
    while (len && !s->err) {
        switch (s->raw) {
        case RAW_START:
            s->raw = p[0] == 0x1f ? RAW_MAGIC1 : RAW_PLAIN;
            if (s->raw == RAW_MAGIC1) {
                p++;
                len--;
            }
            break;
        case RAW_MAGIC1: /* the 1f waits for the byte after it */
            if (p[0] == 0x8b) {
                raw_gzip(s);
            } else {
                s->raw = RAW_PLAIN;
                content(s, "\x1f", 1);
            }
            break;
        case RAW_PLAIN:
            content(s, (const char *)p, len);
            len = 0;
            break;
        case RAW_GZIP:
            gz_feed_all(s, p, len);
            len = 0;
            break;
        }
    }
    return s->err;
}

int sieve_sitemap_finish(sieve_sitemap *s)
{
    if (!s)
        return SIEVE_EINVAL;
    if (s->finished || s->err) {
        s->finished = true;
        return s->err;
    }
    s->finished = true;
    if (s->raw == RAW_MAGIC1)
        content(s, "\x1f", 1);
    if (s->raw == RAW_GZIP && !s->z_end && !s->z_trailing) {
        s->err = SIEVE_ETRUNCATED;
        return s->err;
    }
    if (!s->err)
        content_finish(s);
    return s->err;
}

void sieve_sitemap_stats_get(const sieve_sitemap *s, sieve_sitemap_stats *st)
{
    *st = s->st;
}
