/* fuzz-sitemap.c - libFuzzer target: arbitrary bytes as a sitemap, fed in
 * chunks whose sizes come from the input's first byte, and once more
 * whole. When that byte's high bit is set the rest is gzip-compressed
 * first, so that the inflate path sees XML and text the fuzzer found.
 *
 * Besides memory errors it checks the module's promises: both runs
 * deliver the same entries and end the same way (chunking changes
 * nothing), every location is non-empty, at most max_loc bytes, without
 * control bytes, and the caps on entries and bytes hold. Small limits
 * make the fuzzer reach them. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "sieve/sieve.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const sieve_sitemap_opts opts = {
    .max_entries = 64,
    .max_bytes = 256 * 1024,
    .max_loc = 96,
    .max_pending = 8 * 1024,
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    sieve_sitemap_global_init();
    return 0;
}

/* An order-sensitive digest of the entries delivered. */
typedef struct digest {
    uint64_t h;
    uint64_t n;
} digest;

static void mix(digest *d, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        d->h = (d->h ^ (uint8_t)s[i]) * 1099511628211u;
    d->h = (d->h ^ 0xff) * 1099511628211u;
}

static void on_entry(void *ctx, const sieve_sitemap_entry *e)
{
    digest *d = ctx;
    if (!e->loc || e->loc_len == 0 || e->loc_len > opts.max_loc || strlen(e->loc) != e->loc_len)
        abort();
    for (size_t i = 0; i < e->loc_len; i++)
        if ((uint8_t)e->loc[i] < 0x20 || e->loc[i] == 0x7f)
            abort();
    if (e->lastmod && (e->lastmod_len == 0 || e->lastmod_len > SIEVE_SITEMAP_MAX_LASTMOD ||
                       strlen(e->lastmod) != e->lastmod_len))
        abort();
    d->n++;
    d->h = d->h * 1099511628211u ^ (uint64_t)e->kind;
    mix(d, e->loc, e->loc_len);
    if (e->lastmod)
        mix(d, e->lastmod, e->lastmod_len);
}

typedef struct outcome {
    digest d;
    int status;
    sieve_sitemap_stats st;
} outcome;

static outcome run(const uint8_t *data, size_t size, size_t step)
{
    outcome o = {{14695981039346656037u, 0}, 0, {0}};
    sieve_sitemap *s;
    if (sieve_sitemap_new(&s, &opts, on_entry, &o.d) != SIEVE_OK)
        abort();
    for (size_t off = 0; off < size; off += step)
        sieve_sitemap_feed(s, data + off, size - off < step ? size - off : step);
    o.status = sieve_sitemap_finish(s);
    sieve_sitemap_stats_get(s, &o.st);
    sieve_sitemap_free(s);
    if (o.st.bytes_out > opts.max_bytes || o.d.n != o.st.pages + o.st.sitemaps ||
        o.st.pages + o.st.sitemaps + o.st.too_long + o.st.empty + o.st.invalid > opts.max_entries)
        abort();
    return o;
}

/* Compresses size bytes into a malloc'd gzip stream; NULL on failure. */
static uint8_t *gzip(const uint8_t *data, size_t size, size_t *out_len)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return NULL;
    size_t cap = deflateBound(&z, (uLong)size);
    uint8_t *out = malloc(cap);
    z.next_in = (Bytef *)data;
    z.avail_in = (uInt)size;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    if (!out || deflate(&z, Z_FINISH) != Z_STREAM_END) {
        free(out);
        deflateEnd(&z);
        return NULL;
    }
    *out_len = z.total_out;
    deflateEnd(&z);
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 1024 * 1024)
        return 0;
    size_t step = (size_t)(data[0] % 32) + 1;
    const uint8_t *doc = data + 1;
    size_t len = size - 1;
    uint8_t *z = NULL;
    if (data[0] & 0x80) {
        z = gzip(doc, len, &len);
        if (!z)
            return 0;
        doc = z;
    }
    outcome a = run(doc, len, step);
    outcome b = run(doc, len, len ? len : 1);
    if (a.d.n != b.d.n || a.d.h != b.d.h || a.status != b.status ||
        a.st.bytes_out != b.st.bytes_out || a.st.too_long != b.st.too_long ||
        a.st.empty != b.st.empty || a.st.invalid != b.st.invalid || a.st.format != b.st.format)
        abort();
    free(z);
    return 0;
}
