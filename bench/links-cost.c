/* links-cost.c - what link extraction costs per page, on the dense site's
 * pages and on the light site's, for instruction counts before and after
 * a change (bench/README.md, "Where the CPU goes").
 *
 *   meson setup build-release --buildtype=release && ninja -C build-release
 *   cc -std=c11 -D_GNU_SOURCE -O2 -Iinclude bench/links-cost.c -o /tmp/links-cost \
 *      build-release/src/lib/libsieve-internal.a \
 *      $(pkg-config --libs libxml-2.0 libcurl zlib libxxhash libpsl libcrypto) -lpthread -lm
 *   valgrind --tool=callgrind --toggle-collect='sieve_links_*' /tmp/links-cost dense 500
 *
 * MODE is dense (pages 0..N-1 of the 100,000-page dense site, made in
 * memory by bench/dense-page.h), dense-light or dense-heavy (the first N
 * pages of that site that are light, or heavy), or light DIR (pages
 * 0..N-1 of a site that bench/gen-site.c wrote in DIR). Each page goes to
 * one extractor in chunks of 16 KiB, as curl hands them over. The program
 * prints the pages, bytes and links it saw; the instructions inside
 * sieve_links_* divided by the pages are the cost per page.
 *
 * --strip=WHAT,... (before MODE) removes parts of each dense page before
 * it is fed, to measure what libxml2 spends on them: the difference in
 * instructions against a run without it, over the bytes and the units
 * removed (printed), is their cost per byte and per unit. WHAT is
 * scripts (the contents of <script>), styles (of <style>), comments,
 * attrs (every attribute but href and rel, and all of them on tags other
 * than a, area, frame, iframe, base and meta) or text (what lies between
 * tags). The transform knows the generator's markup only: quoted values
 * with no '>' in them outside scripts and styles.
 *
 * --charset=LABEL gives every page that charset, as a Content-Type's
 * charset parameter would. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dense-page.h"
#include "sieve/links.h"
#include "sieve/status.h"
#include "sieve/url.h"

#define PORT  18080
#define CHUNK 16384

typedef struct totals {
    long pages;
    unsigned long long bytes, links, url_bytes;
} totals;

static void on_link(void *ctx, const sieve_link *l)
{
    totals *t = ctx;
    t->links++;
    t->url_bytes += l->url_len;
}

/* --charset=LABEL: the label each page is given, as a Content-Type's. */
static const char *charset;

static int extract(const sieve_canon *c, const char *url, const char *p, size_t len, totals *t)
{
    sieve_links_opts o = {.canon = c, .charset = charset};
    sieve_links *lx;
    int rc = sieve_links_new(&lx, url, &o, on_link, t);
    for (size_t off = 0; rc == SIEVE_OK && off < len; off += CHUNK)
        rc = sieve_links_feed(lx, p + off, len - off < CHUNK ? len - off : CHUNK);
    if (rc == SIEVE_OK)
        rc = sieve_links_finish(lx);
    sieve_links_free(lx);
    t->pages++;
    t->bytes += len;
    return rc;
}

enum { STRIP_SCRIPTS = 1, STRIP_STYLES = 2, STRIP_COMMENTS = 4, STRIP_ATTRS = 8, STRIP_TEXT = 16 };

/* What --strip took out of the pages. */
typedef struct stripped {
    unsigned long long bytes, units;
} stripped;

static bool starts(const char *p, const char *end, const char *s)
{
    size_t n = strlen(s);
    return (size_t)(end - p) >= n && strncasecmp(p, s, n) == 0;
}

/* Copies the attributes of the tag at p (after its name) that --strip
 * keeps; returns where the tag's '>' is. */
static const char *strip_attrs(const char *p, const char *end, bool links, char **o, stripped *st)
{
    while (p < end && *p != '>') {
        if (*p == ' ' || *p == '\n' || *p == '\t') {
            p++;
            continue;
        }
        const char *a = p;
        while (p < end && *p != '=' && *p != ' ' && *p != '>')
            p++;
        bool keep = links && (starts(a, end, "href=") || starts(a, end, "rel="));
        if (p < end && *p == '=' && p + 1 < end && (p[1] == '"' || p[1] == '\'')) {
            const char *q = memchr(p + 2, p[1], (size_t)(end - p - 2));
            p = q ? q + 1 : end;
        }
        if (keep) {
            *(*o)++ = ' ';
            memcpy(*o, a, (size_t)(p - a));
            *o += p - a;
        } else {
            st->bytes += (size_t)(p - a) + 1;
            st->units++;
        }
    }
    return p;
}

/* The bytes from p to q: counted as taken out when what has flag, else
 * copied to *o. */
static void part(unsigned what, unsigned flag, const char *p, const char *q, char **o, stripped *st)
{
    if (what & flag) {
        st->bytes += (size_t)(q - p);
        st->units++;
    } else {
        memcpy(*o, p, (size_t)(q - p));
        *o += q - p;
    }
}

/* Writes into out (len bytes at least) the page at p without what `what`
 * names; returns its length. */
static size_t strip(unsigned what, const char *p, size_t len, char *out, stripped *st)
{
    const char *end = p + len;
    char *o = out;
    while (p < end) {
        if (*p != '<') {
            const char *lt = memchr(p, '<', (size_t)(end - p));
            const char *q = lt ? lt : end;
            part(what, STRIP_TEXT, p, q, &o, st);
            p = q;
            continue;
        }
        if (starts(p, end, "<!--")) {
            const char *q = memmem(p, (size_t)(end - p), "-->", 3);
            q = q ? q + 3 : end;
            part(what, STRIP_COMMENTS, p, q, &o, st);
            p = q;
            continue;
        }
        bool script = starts(p, end, "<script"), style = starts(p, end, "<style");
        if (p + 1 < end && ((p[1] | 0x20) >= 'a' && (p[1] | 0x20) <= 'z')) {
            const char *n = p + 1;
            while (n < end && *n != ' ' && *n != '>' && *n != '\n')
                n++;
            size_t nl = (size_t)(n - p - 1);
            static const char *const keep[] = {"a", "area", "frame", "iframe", "base", "meta"};
            bool kept = false, links = false;
            for (size_t k = 0; k < 6; k++)
                if (strlen(keep[k]) == nl && strncasecmp(p + 1, keep[k], nl) == 0)
                    kept = true, links = k < 4;
            memcpy(o, p, (size_t)(n - p));
            o += n - p;
            const char *gt;
            if ((what & STRIP_ATTRS) && !(kept && !links)) {
                gt = strip_attrs(n, end, links, &o, st);
            } else {
                gt = memchr(n, '>', (size_t)(end - n));
                gt = gt ? gt : end;
                memcpy(o, n, (size_t)(gt - n));
                o += gt - n;
            }
            if (gt < end)
                *o++ = *gt++;
            p = gt;
            if (script || style) {
                const char *q =
                    memmem(p, (size_t)(end - p), script ? "</script" : "</style", script ? 8 : 7);
                q = q ? q : end;
                part(what, script ? STRIP_SCRIPTS : STRIP_STYLES, p, q, &o, st);
                p = q;
            }
            continue;
        }
        const char *gt = memchr(p, '>', (size_t)(end - p));
        gt = gt ? gt + 1 : end;
        memcpy(o, p, (size_t)(gt - p));
        o += gt - p;
        p = gt;
    }
    return (size_t)(o - out);
}

static unsigned strip_flags(const char *list)
{
    static const char *const names[] = {"scripts", "styles", "comments", "attrs", "text"};
    unsigned f = 0;
    while (*list) {
        size_t n = strcspn(list, ",");
        size_t k = 0;
        while (k < 5 && !(strlen(names[k]) == n && strncmp(list, names[k], n) == 0))
            k++;
        if (k == 5)
            return 0;
        f |= 1u << k;
        list += n + (list[n] == ',');
    }
    return f;
}

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *p = malloc(cap);
    size_t got;
    while (p && (got = fread(p + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap)
            p = realloc(p, cap *= 2);
    }
    fclose(f);
    *len = n;
    return p;
}

int main(int argc, char **argv)
{
    unsigned what = 0;
    for (; argc > 1 && strncmp(argv[1], "--", 2) == 0; argc--, argv++) {
        if (strncmp(argv[1], "--charset=", 10) == 0) {
            charset = argv[1] + 10;
            continue;
        }
        what = strncmp(argv[1], "--strip=", 8) == 0 ? strip_flags(argv[1] + 8) : 0;
        if (!what) {
            fprintf(stderr, "links-cost: --strip takes scripts,styles,comments,attrs,text\n");
            return 2;
        }
    }
    if (argc < 3 || (strcmp(argv[1], "light") == 0 && (argc < 4 || what))) {
        fprintf(stderr, "usage: links-cost [--strip=WHAT,...] [--charset=LABEL] "
                        "dense|dense-light|dense-heavy N\n"
                        "       links-cost [--charset=LABEL] light DIR N\n");
        return 2;
    }
    const char *mode = argv[1];
    long n = atol(argv[argc - 1]);
    sieve_links_global_init();
    sieve_canon *c;
    if (n <= 0 || sieve_canon_new(&c, NULL) != SIEVE_OK)
        return 2;
    totals t = {0};
    stripped cut = {0};
    char url[256], path[4096];
    int rc = SIEVE_OK;
    if (strcmp(mode, "light") == 0) {
        for (long i = 0; i < n && rc == SIEVE_OK; i++) {
            snprintf(path, sizeof path, "%s/s/%ld/%ld.html", argv[2], i / 1000, i);
            snprintf(url, sizeof url, "http://127.0.0.1:%d/s/%ld/%ld.html", PORT, i / 1000, i);
            size_t len;
            char *p = read_all(path, &len);
            if (!p) {
                perror(path);
                return 1;
            }
            rc = extract(c, url, p, len, &t);
            free(p);
        }
    } else {
        dense_site s = {.pages = 100000, .port = PORT, .missing = 1000, .seed = 1};
        int want = strcmp(mode, "dense-light") == 0 ? 0 : strcmp(mode, "dense-heavy") == 0 ? 1 : -1;
        dense_page pg = {0};
        char *buf = NULL;
        for (long i = 0; t.pages < n && i < s.pages && rc == SIEVE_OK; i++) {
            long links;
            size_t bytes;
            if (want >= 0 && dense_shape(&s, i, &links, &bytes) != (want == 1))
                continue;
            dense_write(&pg, &s, i);
            snprintf(url, sizeof url, "http://127.0.0.1:%d/d/%ld/%ld.html", PORT, i / DENSE_PER_DIR,
                     i);
            if (pg.failed) {
                rc = SIEVE_ENOMEM;
            } else if (what) {
                char *b = realloc(buf, pg.len);
                if (!b) {
                    rc = SIEVE_ENOMEM;
                    break;
                }
                buf = b;
                rc = extract(c, url, buf, strip(what, pg.p, pg.len, buf, &cut), &t);
            } else {
                rc = extract(c, url, pg.p, pg.len, &t);
            }
        }
        free(buf);
        dense_page_free(&pg);
    }
    sieve_canon_free(c);
    printf("%s: %ld pages, %llu bytes, %llu links delivered (%llu URL bytes)\n", mode, t.pages,
           t.bytes, t.links, t.url_bytes);
    if (what)
        printf("stripped: %llu bytes in %llu units\n", cut.bytes, cut.units);
    if (rc != SIEVE_OK)
        fprintf(stderr, "links-cost: %s\n", sieve_strerror(rc));
    return rc == SIEVE_OK ? 0 : 1;
}
