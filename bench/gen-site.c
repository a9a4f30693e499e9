/* gen-site.c - writes the static site that bench/crawl.sh serves and crawls.
 *
 * usage: gen-site DIR PAGES PORT [HOSTS]
 *
 * The site has PAGES pages at /s/D/I.html (D = I / 1000, so no directory
 * holds more than 1000 files), an /index.html that links to the first, 100
 * text and 100 PNG files under /f/, and links to pages under /gone/ that do
 * not exist (404s). Each page is about 7 KB and has exactly 20 links:
 *
 *   - the next page (I + 1; the last one links back to /index.html), so
 *     every page is reachable from /index.html whatever the random links;
 *   - 15 random pages, each written in one of six forms: relative to the
 *     page's own directory ("17.html", "./17.html", "../4/4017.html"),
 *     root-relative ("/s/4/4017.html"), absolute
 *     ("http://127.0.0.1:PORT/s/4/4017.html") or relative or absolute with a
 *     "#fragment", so a crawler must resolve and canonicalize them to see
 *     that they name the same URL;
 *   - a fragment-only link to the page itself ("#top");
 *   - the home page, "../../index.html" or absolute;
 *   - one .txt or .png file (they exist);
 *   - on every fifth page a missing page (one of PAGES / 100, at least 1,
 *     under /gone/), otherwise one more random page.
 *
 * The links sit in the body text between paragraphs of filler words, as in
 * a real page, so a parser must read the whole document to find them.
 *
 * Everything is drawn from a splitmix64 generator seeded with the page
 * number, so the same PAGES and PORT give the same site byte for byte.
 * The absolute links carry the port, so the site must be written again for
 * another port.
 *
 * With HOSTS (bench/hosts.sh), the same site is spread over HOSTS host
 * names, h00000.test to h<HOSTS-1>.test (the crawler is made to resolve
 * them to 127.0.0.1): page, file or missing page number K is on host K
 * modulo HOSTS, the index on h00000.test, and every link is absolute, so
 * that it names the right host. One tree serves them all (nginx's root
 * is the same whatever the Host) and a robots.txt that allows everything
 * is written. Every random draw is the one the single-host site makes,
 * so sites of any HOSTS have the same pages, links and sizes, but for
 * which host each URL is on.
 *
 * On success the program prints one line, the exact counts a complete
 * crawl must request:
 *
 *   pages P files F missing M urls U
 *
 * where P counts the HTML pages (index included), F the distinct files that
 * some page links to, M the distinct missing URLs linked, and U = P + F + M;
 * with HOSTS, " hosts H" follows (robots.txt, one a host, is not in U).
 * It exits 1 on an I/O error and 2 on bad arguments. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "site-io.h"

#define PER_DIR    1000
#define NFILES     100 /* of each kind, .txt and .png */
#define PAGE_BYTES 7000
#define NLINKS     20
#define BUF_BYTES  16384

typedef struct {
    char *buf;
    size_t len;
} out;

typedef struct {
    const char *dir;
    long pages, port, missing;
    long hosts;                  /* 0: one host, 127.0.0.1 */
    unsigned char *file_used;    /* 2 * NFILES flags */
    unsigned char *missing_used; /* missing flags */
} site;

static uint64_t next_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void put(out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->buf + o->len, BUF_BYTES - o->len, fmt, ap);
    va_end(ap);
    if (n > 0 && (size_t)n < BUF_BYTES - o->len)
        o->len += (size_t)n;
}

static const char *const words[] = {
    "frontier", "queue",   "bloom",    "filter",  "crawler", "page",   "link",    "anchor",
    "server",   "request", "response", "header",  "latency", "socket", "thread",  "worker",
    "memory",   "bytes",   "hash",     "seen",    "index",   "static", "content", "text",
    "river",    "stone",   "window",   "garden",  "morning", "silver", "harbour", "lantern",
    "the",      "a",       "of",       "and",     "to",      "in",     "with",    "over",
    "quietly",  "again",   "between",  "through", "beyond",  "under",  "before",  "after",
};

/* About `bytes` of paragraph text. */
static void filler(out *o, uint64_t *rng, size_t bytes)
{
    size_t stop = o->len + bytes;
    put(o, "<p>");
    while (o->len < stop) {
        const char *w = words[next_rand(rng) % (sizeof words / sizeof words[0])];
        size_t n = strlen(w);
        if (o->len + n + 1 >= BUF_BYTES)
            break;
        memcpy(o->buf + o->len, w, n);
        o->buf[o->len + n] = ' ';
        o->len += n + 1;
    }
    put(o, "</p>\n");
}

/* The scheme, host and port of URL number k (a page, a file, a missing
 * page). */
static void put_origin(out *o, const site *s, long k)
{
    if (s->hosts == 0)
        put(o, "http://127.0.0.1:%ld", s->port);
    else
        put(o, "http://h%05ld.test:%ld", k % s->hosts, s->port);
}

/* The href of page j as seen from page i, in form `form` (0..5); with
 * hosts, always absolute. */
static void page_href(out *o, const site *s, long i, long j, unsigned form, uint64_t *rng)
{
    long di = i / PER_DIR, dj = j / PER_DIR;
    unsigned frag = (unsigned)(next_rand(rng) % 9);
    if (s->hosts > 0)
        form = form >= 4 ? 5 : 3;
    switch (form) {
    case 0:
    case 4:
        if (di == dj)
            put(o, "%ld.html", j);
        else
            put(o, "../%ld/%ld.html", dj, j);
        break;
    case 1:
        if (di == dj)
            put(o, "./%ld.html", j);
        else
            put(o, "./../%ld/%ld.html", dj, j);
        break;
    case 2:
        put(o, "/s/%ld/%ld.html", dj, j);
        break;
    default:
        put_origin(o, s, j);
        put(o, "/s/%ld/%ld.html", dj, j);
        break;
    }
    if (form >= 4)
        put(o, "#s%u", frag);
}

static void anchor_page(out *o, const site *s, long i, long j, uint64_t *rng)
{
    put(o, "<a href=\"");
    page_href(o, s, i, j, (unsigned)(next_rand(rng) % 6), rng);
    put(o, "\">page %ld</a>\n", j);
}

static void anchor_file(out *o, site *s, uint64_t *rng)
{
    unsigned k = (unsigned)(next_rand(rng) % (2 * NFILES));
    const char *ext = k < NFILES ? "txt" : "png";
    s->file_used[k] = 1;
    if (next_rand(rng) % 2 && s->hosts == 0) {
        put(o, "<a href=\"../../f/%u.%s\">file</a>\n", k % NFILES, ext);
    } else {
        put(o, "<a href=\"");
        put_origin(o, s, k);
        put(o, "/f/%u.%s\">file</a>\n", k % NFILES, ext);
    }
}

static void anchor_missing(out *o, site *s, uint64_t *rng)
{
    long k = (long)(next_rand(rng) % (uint64_t)s->missing);
    s->missing_used[k] = 1;
    put(o, "<a href=\"");
    if (s->hosts > 0)
        put_origin(o, s, k);
    put(o, "/gone/%ld.html\">gone</a>\n", k);
}

/* A link to the home page: rel as on the single-host site; with hosts,
 * or if rel is NULL, absolute (rel NULL: with a fragment). */
static void anchor_home(out *o, const site *s, const char *rel)
{
    put(o, "<a href=\"");
    if (rel != NULL && s->hosts == 0) {
        put(o, "%s", rel);
    } else {
        put_origin(o, s, 0);
        put(o, "/index.html%s", rel == NULL ? "#top" : "");
    }
    put(o, "\">home</a>\n");
}

/* Page i: the head, then the 20 links, each after a stretch of filler. */
static int write_page(site *s, long i, char *buf)
{
    out o = {buf, 0};
    uint64_t rng = (uint64_t)i * 0x2545f4914f6cdd1dULL + 1;
    put(&o,
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Page %ld</title>"
        "</head>\n<body><h1 id=\"top\">Page %ld</h1>\n",
        i, i);
    const size_t per_link = (PAGE_BYTES - 200) / NLINKS - 40;
    for (int k = 0; k < NLINKS; k++) {
        filler(&o, &rng, per_link);
        if (k == 0 && i + 1 < s->pages)
            anchor_page(&o, s, i, i + 1, &rng);
        else if (k == 0)
            anchor_home(&o, s, "/index.html");
        else if (k == 16)
            put(&o, "<a href=\"#top\">top</a>\n");
        else if (k == 17 && next_rand(&rng) % 2)
            anchor_home(&o, s, "../../index.html");
        else if (k == 17)
            anchor_home(&o, s, NULL);
        else if (k == 18)
            anchor_file(&o, s, &rng);
        else if (k == 19 && i % 5 == 0)
            anchor_missing(&o, s, &rng);
        else
            anchor_page(&o, s, i, (long)(next_rand(&rng) % (uint64_t)s->pages), &rng);
    }
    put(&o, "</body></html>\n");
    char path[4096];
    snprintf(path, sizeof path, "%s/s/%ld/%ld.html", s->dir, i / PER_DIR, i);
    return write_file(path, o.buf, o.len);
}

static int write_index(const site *s, char *buf)
{
    out o = {buf, 0};
    put(&o,
        "<!DOCTYPE html>\n<html><head><title>Crawl bench</title></head><body>\n"
        "<h1>Crawl bench: %ld pages</h1>\n<a href=\"s/0/0.html\">start</a>\n<a href=\"",
        s->pages);
    put_origin(&o, s, 0); /* page 0 is on the index's host */
    put(&o, "/s/0/0.html#top\">start again</a>\n</body></html>\n");
    char path[4096];
    snprintf(path, sizeof path, "%s/index.html", s->dir);
    if (write_file(path, o.buf, o.len) != 0)
        return -1;
    if (s->hosts == 0)
        return 0;
    /* every host has rules to fetch, and none keeps a page out */
    static const char robots[] = "User-agent: *\nAllow: /\n";
    snprintf(path, sizeof path, "%s/robots.txt", s->dir);
    return write_file(path, robots, sizeof robots - 1);
}

/* A valid 1x1 grey PNG: what a crawler meets when a link is not HTML. */
static const unsigned char png[] = {
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48,
    0x44, 0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00, 0x00, 0x00,
    0x00, 0x3a, 0x7e, 0x9b, 0x55, 0x00, 0x00, 0x00, 0x0a, 0x49, 0x44, 0x41, 0x54, 0x78,
    0x9c, 0x63, 0x68, 0x00, 0x00, 0x00, 0x82, 0x00, 0x81, 0x77, 0xcd, 0x72, 0xb6, 0x00,
    0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
};

static int write_files(const site *s, char *buf)
{
    char path[4096];
    for (unsigned k = 0; k < NFILES; k++) {
        int n = snprintf(buf, BUF_BYTES, "Plain text file %u.\n<a href=\"/not-a-link\">\n", k);
        snprintf(path, sizeof path, "%s/f/%u.txt", s->dir, k);
        if (write_file(path, buf, (size_t)n) != 0)
            return -1;
        snprintf(path, sizeof path, "%s/f/%u.png", s->dir, k);
        if (write_file(path, (const char *)png, sizeof png) != 0)
            return -1;
    }
    return 0;
}

static int make_dirs(const site *s)
{
    char path[4096];
    if (make_dir(s->dir) != 0)
        return -1;
    snprintf(path, sizeof path, "%s/s", s->dir);
    if (make_dir(path) != 0)
        return -1;
    snprintf(path, sizeof path, "%s/f", s->dir);
    if (make_dir(path) != 0)
        return -1;
    for (long d = 0; d <= (s->pages - 1) / PER_DIR; d++) {
        snprintf(path, sizeof path, "%s/s/%ld", s->dir, d);
        if (make_dir(path) != 0)
            return -1;
    }
    return 0;
}

static long count(const unsigned char *flags, long n)
{
    long c = 0;
    for (long i = 0; i < n; i++)
        c += flags[i];
    return c;
}

static int generate(site *s)
{
    char *buf = malloc(BUF_BYTES);
    if (buf == NULL || make_dirs(s) != 0 || write_index(s, buf) != 0 || write_files(s, buf) != 0) {
        free(buf);
        return -1;
    }
    for (long i = 0; i < s->pages; i++) {
        if (write_page(s, i, buf) != 0) {
            free(buf);
            return -1;
        }
    }
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: gen-site DIR PAGES PORT [HOSTS]\n");
        return 2;
    }
    site s = {.dir = argv[1]};
    s.pages = parse_long(argv[2], 1, 100000000);
    s.port = parse_long(argv[3], 1, 65535);
    s.hosts = argc == 5 ? parse_long(argv[4], 1, 100000) : 0;
    if (s.pages < 0 || s.port < 0 || s.hosts < 0) {
        fprintf(stderr, "gen-site: PAGES must be 1..1e8, PORT 1..65535 and HOSTS 1..1e5\n");
        return 2;
    }
    s.missing = s.pages / 100 > 0 ? s.pages / 100 : 1;
    s.file_used = calloc(2 * NFILES, 1);
    s.missing_used = calloc((size_t)s.missing, 1);
    if (s.file_used == NULL || s.missing_used == NULL) {
        fprintf(stderr, "gen-site: out of memory\n");
        return 1;
    }
    if (generate(&s) != 0) {
        fprintf(stderr, "gen-site: %s: %s\n", s.dir, strerror(errno));
        return 1;
    }
    long files = count(s.file_used, 2 * NFILES), missing = count(s.missing_used, s.missing);
    printf("pages %ld files %ld missing %ld urls %ld", s.pages + 1, files, missing,
           s.pages + 1 + files + missing);
    if (s.hosts > 0)
        printf(" hosts %ld", s.hosts);
    printf("\n");
    free(s.file_used);
    free(s.missing_used);
    return 0;
}
