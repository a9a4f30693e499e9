/* fuzz-links.c - libFuzzer target: arbitrary bytes as an HTML page, fed
 * in chunks whose sizes come from the input's first byte, and once more
 * whole; an ASCII page also as ISO-8859-1, which is decoded to UTF-8
 * before libxml2 reads it (links-decode.c). The page is fed once more
 * with a Content-Type charset label its first byte picks: a multi-byte,
 * stateful or wide encoding, or a label browsers do not know
 * (links-charset.c). Without a label the page's own <meta> or byte order
 * mark decides (links-sniff.c).
 *
 * With SIEVE_FUZZ_STRICT=1 in the environment the runs must also find the
 * same links. That holds for the pages the tests use, but not for
 * every malformed page: libxml2 2.9's look-ahead for a tag's '>' counts
 * quotes its attribute parser does not (a '"' inside an unquoted value),
 * so with quotes out of balance a tag may be parsed when its bytes
 * arrive or only at the end, which can change what follows. Skipping
 * text cuts the page after a '>', which is chunking too: the same holds.
 *
 * The whole page must also give the same links whether libxml2 sees every
 * byte or the squeezed page (links-internal.h), when it is ASCII and its
 * tags are plain (no quote libxml2's attribute parser does not read as
 * one).
 *
 * Every run must also keep within the limits that bound libxml2's work:
 * no tag read with more than SIEVE_LINKS_MAX_ATTRS attributes, no element
 * stack deeper than SIEVE_LINKS_MAX_DEPTH. */
#include <locale.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "links-internal.h"
#include "sieve/sieve.h"

static sieve_canon *canon;
static bool strict;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    setlocale(LC_CTYPE, "C.UTF-8");
    sieve_links_global_init();
    const char *s = getenv("SIEVE_FUZZ_STRICT");
    strict = s && strcmp(s, "1") == 0;
    if (sieve_canon_new(&canon, NULL) != SIEVE_OK)
        abort();
    return 0;
}

/* An order-sensitive digest of the links delivered. */
typedef struct digest {
    uint64_t h;
    uint64_t n;
} digest;

static void on_link(void *ctx, const sieve_link *l)
{
    digest *d = ctx;
    const char *s = l->url ? l->url : "";
    d->n++;
    d->h = d->h * 1099511628211u ^ (uint64_t)(l->status + 100);
    for (; *s; s++)
        d->h = (d->h ^ (uint8_t)*s) * 1099511628211u;
}

static bool has_high_byte(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] >= 0x80)
            return true;
    return false;
}

/* Whether the tags read as libxml2 2.9 reads plain ones: names, '=',
 * values quoted or not, no quote in an unquoted value and nothing its
 * attribute parser skips as bogus. Its look-ahead for a tag's '>' counts
 * every quote, the attribute parser only those around values, so with
 * other quotes the tag ends where the calls into libxml2 happen to end
 * (see above), and hiding moves those ends. */
static bool name_char(uint8_t c)
{
    return ((c | 0x20) - 'a') < 26u || (c >= '0' && c <= '9') || c == ':' || c == '-' || c == '_' ||
           c == '.';
}

static bool blank(uint8_t c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool tags_are_plain(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] != '<' || i + 1 == n || ((p[i + 1] | 0x20) - 'a') >= 26u)
            continue;
        for (i++; i < n && name_char(p[i]);)
            i++;
        bool sep = true; /* an attribute may start here */
        while (i < n && p[i] != '>') {
            if (blank(p[i])) {
                sep = true;
                i++;
                continue;
            }
            if (p[i] == '/' && i + 1 < n && p[i + 1] == '>') {
                i++;
                break;
            }
            if (!sep || !name_char(p[i]) || (p[i] >= '0' && p[i] <= '9') || p[i] == '-')
                return false;
            while (i < n && name_char(p[i]))
                i++;
            while (i < n && blank(p[i]))
                i++;
            sep = true;
            if (i == n || p[i] != '=')
                continue;
            for (i++; i < n && blank(p[i]);)
                i++;
            if (i < n && (p[i] == '"' || p[i] == '\'')) {
                const uint8_t *q = memchr(p + i + 1, p[i], n - i - 1);
                if (!q)
                    return false;
                i = (size_t)(q - p) + 1;
                sep = true;
            } else {
                for (; i < n && !blank(p[i]) && p[i] != '>'; i++)
                    if (p[i] == '"' || p[i] == '\'')
                        return false;
            }
        }
    }
    return true;
}

static digest run_hiding(const uint8_t *data, size_t size, size_t step, const char *charset,
                         enum sieve_links_hiding h)
{
    digest d = {14695981039346656037u, 0};
    sieve_links_opts o = {.canon = canon, .report_errors = true, .charset = charset};
    sieve_links *lx;
    if (sieve_links_new(&lx, "http://example.com/dir/page.html", &o, on_link, &d) != SIEVE_OK)
        abort();
    sieve_links_set_hiding(lx, h);
    for (size_t off = 0; off < size; off += step)
        sieve_links_feed(lx, data + off, size - off < step ? size - off : step);
    sieve_links_finish(lx);
    /* The bounds that keep libxml2's work linear hold on any page. */
    sieve_links_stats st;
    sieve_links_stats_get(lx, &st);
    if (st.attrs_max > SIEVE_LINKS_MAX_ATTRS || st.depth_max > SIEVE_LINKS_MAX_DEPTH ||
        st.cut != (st.cut_reason != NULL))
        abort();
    sieve_links_free(lx);
    return d;
}

static digest run(const uint8_t *data, size_t size, size_t step, const char *charset)
{
    return run_hiding(data, size, step, charset, SIEVE_LINKS_HIDE_ALL);
}

/* Labels for the third run: each converter a caller's label can pick that
 * reads bytes differently, and some that are ignored. */
static const char *const labels[16] = {
    "utf-8",        "latin1", "windows-1251", "shift_jis", "euc-kr",      "gbk",
    "big5",         "euc-jp", "iso-2022-jp",  "utf-16",    "unicodefffe", "koi8-u",
    "iso-8859-8-i", "ibm866", "IBM037",       "utf-32",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t step = (size_t)(data[0] % 16) + 1;
    digest a = run(data + 1, size - 1, step, NULL);
    digest b = run(data + 1, size - 1, size, NULL);
    run(data + 1, size - 1, step, labels[data[0] >> 4]);
    /* What the extractor hides from libxml2 changes no link: the page
     * whole, libxml2 shown every byte or the squeezed page. ASCII only: at
     * a byte that is not UTF-8 libxml2 switches to ISO-8859-1 for the
     * bytes not yet pushed, so how many it had decides what later values
     * decode to, with or without hiding. */
    uint8_t *page = malloc(size);
    if (!page)
        abort();
    /* Both fed at once: the extractor drops NUL bytes, which would cut the
     * page into as many feeds. */
    size_t n = 0;
    for (size_t i = 1; i < size; i++)
        if (data[i])
            page[n++] = data[i];
    if (!has_high_byte(page, n) && tags_are_plain(page, n)) {
        digest all = run_hiding(page, n, n ? n : 1, "utf-8", SIEVE_LINKS_HIDE_NOTHING);
        digest some = run_hiding(page, n, n ? n : 1, "utf-8", SIEVE_LINKS_HIDE_ALL);
        if (all.n != some.n || all.h != some.h)
            abort();
    }
    free(page);
    if (!strict)
        return 0;
    /* The charset is decided before libxml2 reads a byte, and decoding
     * goes on past bytes it rejects: chunking must not matter. */
    if (a.n != b.n || a.h != b.h)
        abort();
    /* Nor must decoding: an ASCII page read as ISO-8859-1 has the same
     * links. */
    if (has_high_byte(data + 1, size - 1))
        return 0;
    digest c = run(data + 1, size - 1, size, "ISO-8859-1");
    if (b.n != c.n || b.h != c.h)
        abort();
    return 0;
}
