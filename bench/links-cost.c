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
 * sieve_links_* divided by the pages are the cost per page. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int extract(const sieve_canon *c, const char *url, const char *p, size_t len, totals *t)
{
    sieve_links_opts o = {.canon = c};
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
    if (argc < 3 || (strcmp(argv[1], "light") == 0 && argc < 4)) {
        fprintf(stderr, "usage: links-cost dense|dense-light|dense-heavy N\n"
                        "       links-cost light DIR N\n");
        return 2;
    }
    const char *mode = argv[1];
    long n = atol(argv[argc - 1]);
    sieve_links_global_init();
    sieve_canon *c;
    if (n <= 0 || sieve_canon_new(&c, NULL) != SIEVE_OK)
        return 2;
    totals t = {0};
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
        for (long i = 0; t.pages < n && i < s.pages && rc == SIEVE_OK; i++) {
            long links;
            size_t bytes;
            if (want >= 0 && dense_shape(&s, i, &links, &bytes) != (want == 1))
                continue;
            dense_write(&pg, &s, i);
            snprintf(url, sizeof url, "http://127.0.0.1:%d/d/%ld/%ld.html", PORT, i / DENSE_PER_DIR,
                     i);
            rc = pg.failed ? SIEVE_ENOMEM : extract(c, url, pg.p, pg.len, &t);
        }
        dense_page_free(&pg);
    }
    sieve_canon_free(c);
    printf("%s: %ld pages, %llu bytes, %llu links delivered (%llu URL bytes)\n", mode, t.pages,
           t.bytes, t.links, t.url_bytes);
    if (rc != SIEVE_OK)
        fprintf(stderr, "links-cost: %s\n", sieve_strerror(rc));
    return rc == SIEVE_OK ? 0 : 1;
}
