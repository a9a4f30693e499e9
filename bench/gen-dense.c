/* gen-dense.c - writes the dense site that `bench/crawl.sh --site dense`
 * serves and crawls: pages shaped like a real documentation site's, with
 * a heavy tail of megabyte pages (bench/dense-page.h says what the
 * distributions are and where each figure comes from).
 *
 * usage: gen-dense DIR PAGES PORT [SEED]
 *
 * The site has PAGES pages at /d/D/I.html (D = I / 1000), an /index.html
 * that links to the first, and links to PAGES / 100 (at least 1) missing
 * pages under /gone/ (404s). Each page links to the next one first, so
 * every page is reachable from /index.html; the last links back to it.
 *
 * On success the program prints one line, the exact counts a complete
 * crawl must request, in the format of gen-site:
 *
 *   pages P files 0 missing M urls U
 *
 * where P counts the HTML pages (index included), M the distinct missing
 * URLs linked, and U = P + M; and on stderr what the site is made of
 * (quantiles of page bytes and links, shares of fragment-only and
 * repeated links, heavy pages, total bytes). Exit status 1 on an I/O
 * error, 2 on bad arguments. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dense-page.h"
#include "site-io.h"

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

static size_t quantile(const size_t *v, long n, double q)
{
    return v[(long)(q * (double)(n - 1))];
}

/* Page bytes and links: what a site holds, for the stderr summary. */
typedef struct tally {
    size_t *bytes, *links;
    size_t all_links, frag_only, repeated, refused;
    unsigned long long all_bytes;
    long heavy;
} tally;

static void summary(tally *t, long pages)
{
    qsort(t->bytes, (size_t)pages, sizeof *t->bytes, cmp_size);
    qsort(t->links, (size_t)pages, sizeof *t->links, cmp_size);
    fprintf(stderr,
            "gen-dense: %ld pages, %.1f MB; bytes median %zu p90 %zu p99 %zu max %zu; "
            "links median %zu p90 %zu p99 %zu max %zu, %.1f a page; %ld heavy pages; "
            "links fragment-only %.1f%%, repeated %.1f%%, refused %.1f%%\n",
            pages, (double)t->all_bytes / 1e6, quantile(t->bytes, pages, 0.5),
            quantile(t->bytes, pages, 0.9), quantile(t->bytes, pages, 0.99), t->bytes[pages - 1],
            quantile(t->links, pages, 0.5), quantile(t->links, pages, 0.9),
            quantile(t->links, pages, 0.99), t->links[pages - 1],
            (double)t->all_links / (double)pages, t->heavy,
            100.0 * (double)t->frag_only / (double)t->all_links,
            100.0 * (double)t->repeated / (double)t->all_links,
            100.0 * (double)t->refused / (double)t->all_links);
}

static int generate(const char *dir, const dense_site *s, unsigned char *missing_used, tally *t)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/d", dir);
    if (make_dir(dir) != 0 || make_dir(path) != 0)
        return -1;
    for (long d = 0; d <= (s->pages - 1) / DENSE_PER_DIR; d++) {
        snprintf(path, sizeof path, "%s/d/%ld", dir, d);
        if (make_dir(path) != 0)
            return -1;
    }
    char index[512];
    int n = snprintf(index, sizeof index,
                     "<!DOCTYPE html>\n<html><head><title>Dense crawl bench</title></head><body>\n"
                     "<h1>Dense crawl bench: %ld pages</h1>\n<a href=\"d/0/0.html\">start</a>\n"
                     "</body></html>\n",
                     s->pages);
    snprintf(path, sizeof path, "%s/index.html", dir);
    if (write_file(path, index, (size_t)n) != 0)
        return -1;
    dense_page pg = {0};
    int rc = 0;
    for (long i = 0; i < s->pages && rc == 0; i++) {
        dense_write(&pg, s, i);
        if (pg.failed) {
            errno = ENOMEM;
            rc = -1;
            break;
        }
        for (size_t k = 0; k < pg.nrec; k++) {
            if (pg.rec[k].kind == DENSE_MISSING)
                missing_used[pg.rec[k].id] = 1;
            t->refused += pg.rec[k].kind == DENSE_REFUSED;
        }
        long links;
        size_t bytes;
        t->heavy += dense_shape(s, i, &links, &bytes);
        t->bytes[i] = pg.len;
        t->links[i] = pg.nrec;
        t->all_bytes += pg.len;
        t->all_links += pg.nrec;
        t->frag_only += pg.frag_only;
        t->repeated += pg.repeated;
        snprintf(path, sizeof path, "%s/d/%ld/%ld.html", dir, i / DENSE_PER_DIR, i);
        rc = write_file(path, pg.p, pg.len);
    }
    dense_page_free(&pg);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: gen-dense DIR PAGES PORT [SEED]\n");
        return 2;
    }
    dense_site s = {0};
    s.pages = parse_long(argv[2], 1, 10000000);
    s.port = parse_long(argv[3], 1, 65535);
    long seed = argc == 5 ? parse_long(argv[4], 0, 1L << 30) : 1;
    if (s.pages < 0 || s.port < 0 || seed < 0) {
        fprintf(stderr, "gen-dense: PAGES must be 1..1e7, PORT 1..65535, SEED 0..2^30\n");
        return 2;
    }
    s.seed = (uint64_t)seed;
    s.missing = s.pages / 100 > 0 ? s.pages / 100 : 1;
    unsigned char *missing_used = calloc((size_t)s.missing, 1);
    tally t = {.bytes = calloc((size_t)s.pages, sizeof(size_t)),
               .links = calloc((size_t)s.pages, sizeof(size_t))};
    if (!missing_used || !t.bytes || !t.links) {
        fprintf(stderr, "gen-dense: out of memory\n");
        return 1;
    }
    if (generate(argv[1], &s, missing_used, &t) != 0) {
        fprintf(stderr, "gen-dense: %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    long missing = 0;
    for (long k = 0; k < s.missing; k++)
        missing += missing_used[k];
    summary(&t, s.pages);
    printf("pages %ld files 0 missing %ld urls %ld\n", s.pages + 1, missing, s.pages + 1 + missing);
    free(missing_used);
    free(t.bytes);
    free(t.links);
    return 0;
}
