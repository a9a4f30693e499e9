/* hostile.c - CPU seconds of libsieve's parsers on hostile input, and
 * their speed on ordinary input, for before/after figures.
 *
 *   meson setup build && ninja -C build src/lib/libsieve-internal.a
 *   cc -std=c11 -D_GNU_SOURCE -O2 -Iinclude bench/hostile.c -o /tmp/hostile \
 *      build/src/lib/libsieve-internal.a \
 *      $(pkg-config --libs libxml-2.0 libcurl zlib libxxhash libpsl) -lpthread -lm
 *   /tmp/hostile [CASE...]      (no CASE: all of them)
 *
 * CASE is links, sitemap or robots (hostile input), feed-tags, feed-page
 * (both: feed) or feed-sitemap (ordinary input). SKIP_SLOW=1 leaves out
 * the case that took minutes before the limits. A library from before
 * the cut field builds with -DNO_CUT.
 *
 * Each case prints the CPU seconds of this process, so that other work
 * on the machine counts little, and what the parser delivered; the feed
 * cases the best of three runs. For instruction counts, which machine
 * load does not change:
 *
 *   REPS=1 valgrind --tool=callgrind --toggle-collect=sieve_links_feed \
 *      --toggle-collect=sieve_links_finish /tmp/hostile feed-page
 *
 * (sieve_sitemap_feed and sieve_sitemap_finish for feed-sitemap). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sieve/links.h"
#include "sieve/robots.h"
#include "sieve/sitemap.h"
#include "sieve/status.h"
#include "sieve/url.h"

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A growable byte buffer. */
typedef struct buf {
    char *p;
    size_t len, cap;
} buf;

static void put(buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->p = realloc(b->p, b->cap);
        if (!b->p)
            abort();
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void puts_(buf *b, const char *s)
{
    put(b, s, strlen(s));
}

/* Headers from before the limits have no cut field. */
#ifdef NO_CUT
#define STATS_CUT(s) ((const char *)NULL)
#else
#define STATS_CUT(s) ((s).cut ? (s).cut_reason : NULL)
#endif

static sieve_canon *canon;
static unsigned long links_seen;

static void on_link(void *ctx, const sieve_link *l)
{
    (void)ctx;
    (void)l;
    links_seen++;
}

/* Feeds the page in 16 KiB chunks, as curl hands them over. */
static double run_links(const buf *page, const char *name)
{
    sieve_links_opts o = {.canon = canon};
    sieve_links *lx;
    if (sieve_links_new(&lx, "http://example.com/", &o, on_link, NULL) != SIEVE_OK)
        abort();
    links_seen = 0;
    double t = cpu_now();
    int st = SIEVE_OK;
    for (size_t off = 0; off < page->len && st == SIEVE_OK; off += 16384)
        st = sieve_links_feed(lx, page->p + off, page->len - off < 16384 ? page->len - off : 16384);
    int fin = sieve_links_finish(lx);
    t = cpu_now() - t;
    sieve_links_stats s;
    sieve_links_stats_get(lx, &s);
    if (name)
        printf("%-28s %8.3f s cpu  %zu bytes, feed %d finish %d, %lu links%s%s\n", name, t,
               page->len, st, fin, links_seen, STATS_CUT(s) ? ", cut: " : "",
               STATS_CUT(s) ? STATS_CUT(s) : "");
    sieve_links_free(lx);
    return t;
}

static void attrs_page(buf *b, const char *tag, unsigned n, int same)
{
    char a[64];
    puts_(b, "<html><body><a href=/first>x</a>");
    puts_(b, tag);
    puts_(b, " href=/early");
    for (unsigned i = 0; i < n; i++) {
        snprintf(a, sizeof a, same ? " href=a" : " x%u=%u", i, i);
        puts_(b, a);
    }
    puts_(b, ">x</a><a href=/after>y</a></body></html>");
}

static void case_links_attrs(unsigned n, int same)
{
    buf b = {0};
    attrs_page(&b, "<a", n, same);
    char name[64];
    snprintf(name, sizeof name, "links %u %s attrs", n, same ? "dup href" : "distinct");
    run_links(&b, name);
    free(b.p);
}

/* Many tags, each with a few hundred attributes: under any per-tag cap. */
static void case_links_many_tags(void)
{
    buf b = {0};
    char a[64];
    for (unsigned t = 0; t < 2000; t++) {
        puts_(&b, "<a href=/t");
        for (unsigned i = 0; i < 500; i++) {
            snprintf(a, sizeof a, " x%u=1", i);
            puts_(&b, a);
        }
        puts_(&b, ">x</a>\n");
    }
    run_links(&b, "links 2000 tags x 500 attrs");
    free(b.p);
}

/* Deep nesting, then tags that make libxml2 search its element stack. */
static void case_links_deep(const char *close, const char *name)
{
    buf b = {0};
    puts_(&b, "<html><body><a href=/first>x</a>");
    for (unsigned i = 0; i < 100000; i++)
        puts_(&b, "<div>");
    for (unsigned i = 0; i < 100000; i++)
        puts_(&b, close);
    puts_(&b, "<a href=/after>y</a></body></html>");
    run_links(&b, name);
    free(b.p);
}

/* An ordinary page: paragraphs of text with a link every few lines. */
static void ordinary_page(buf *b, size_t size)
{
    char line[256];
    unsigned i = 0;
    puts_(b, "<!DOCTYPE html><html><head><title>t</title></head><body>\n");
    while (b->len < size) {
        snprintf(line, sizeof line,
                 "<p class=\"c%u\">Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do "
                 "<a href=\"/p/%u.html\" title=\"page %u\">link %u</a> eiusmod tempor.</p>\n",
                 i % 7, i, i, i);
        puts_(b, line);
        i++;
    }
    puts_(b, "</body></html>");
}

static void best_of_3(const buf *b, const char *name)
{
    double best = 1e9;
    /* REPS=1 for a run under callgrind, whose counts do not vary. */
    int reps = getenv("REPS") ? atoi(getenv("REPS")) : 3;
    for (int r = 0; r < reps; r++) {
        double t = run_links(b, NULL);
        if (t < best)
            best = t;
    }
    printf("%-28s %8.3f s cpu  %6.1f MB/s best of %d, %lu links\n", name, best, b->len / best / 1e6,
           reps, links_seen);
}

static void case_feed_tags(void)
{
    buf b = {0};
    while (b.len < 10 * 1000 * 1000)
        puts_(&b, "<b>a</b>");
    best_of_3(&b, "feed 10 MB <b>a</b>");
    free(b.p);
}

static void case_feed_page(void)
{
    buf b = {0};
    ordinary_page(&b, 10 * 1000 * 1000);
    best_of_3(&b, "feed 10 MB ordinary page");
    free(b.p);
}

/* ---- sitemaps ---- */

static unsigned long entries;

static void on_entry(void *ctx, const sieve_sitemap_entry *e)
{
    (void)ctx;
    (void)e;
    entries++;
}

static void run_sitemap(const buf *b, const char *name)
{
    sieve_sitemap *s;
    if (sieve_sitemap_new(&s, NULL, on_entry, NULL) != SIEVE_OK)
        abort();
    entries = 0;
    double t = cpu_now();
    int st = SIEVE_OK;
    for (size_t off = 0; off < b->len && st == SIEVE_OK; off += 16384)
        st = sieve_sitemap_feed(s, b->p + off, b->len - off < 16384 ? b->len - off : 16384);
    int fin = sieve_sitemap_finish(s);
    t = cpu_now() - t;
    if (name)
        printf("%-28s %8.3f s cpu  %zu bytes, feed %d finish %d, %lu entries\n", name, t, b->len,
               st, fin, entries);
    sieve_sitemap_free(s);
}

static void case_sitemap_attrs(unsigned n, const char *fmt, const char *name)
{
    buf b = {0};
    char a[64];
    puts_(&b, "<?xml version=\"1.0\"?><urlset><url><loc>http://e.com/1</loc></url><url");
    for (unsigned i = 0; i < n; i++) {
        snprintf(a, sizeof a, fmt, i);
        puts_(&b, a);
    }
    puts_(&b, "><loc>http://e.com/2</loc></url><url><loc>http://e.com/3</loc></url></urlset>");
    run_sitemap(&b, name);
    free(b.p);
}

/* tags elements <url a0=.. a{n-1}=..> in one urlset: as many as fit in
 * max_bytes, each under max_pending. */
static void case_sitemap_many(unsigned tags, unsigned n, const char *name)
{
    buf b = {0};
    char a[64];
    puts_(&b, "<urlset>");
    for (unsigned t = 0; t < tags; t++) {
        puts_(&b, "<url");
        for (unsigned i = 0; i < n; i++) {
            snprintf(a, sizeof a, " a%u=\"1\"", i);
            puts_(&b, a);
        }
        snprintf(a, sizeof a, "><loc>http://e.com/%u</loc></url>\n", t);
        puts_(&b, a);
    }
    puts_(&b, "</urlset>");
    run_sitemap(&b, name);
    free(b.p);
}

/* A DOCTYPE whose ATTLIST gives <url> n attributes by default, then
 * entries that each get them. */
static void case_sitemap_defaults(unsigned n, unsigned entries)
{
    buf b = {0};
    char a[64];
    puts_(&b, "<!DOCTYPE urlset [<!ATTLIST url");
    for (unsigned i = 0; i < n; i++) {
        snprintf(a, sizeof a, " a%u CDATA \"x\"", i);
        puts_(&b, a);
    }
    puts_(&b, ">]><urlset>");
    for (unsigned t = 0; t < entries; t++) {
        snprintf(a, sizeof a, "<url><loc>http://e.com/%u</loc></url>\n", t);
        puts_(&b, a);
    }
    puts_(&b, "</urlset>");
    char name[64];
    snprintf(name, sizeof name, "sitemap %u defaults x %u", n, entries);
    run_sitemap(&b, name);
    free(b.p);
}

/* A DOCTYPE with an enumerated attribute type of n values. */
static void case_sitemap_enum(unsigned n)
{
    buf b = {0};
    char a[64];
    puts_(&b, "<!DOCTYPE urlset [<!ATTLIST url a (");
    for (unsigned i = 0; i < n; i++) {
        snprintf(a, sizeof a, "%sv%u", i ? "|" : "", i);
        puts_(&b, a);
    }
    puts_(&b, ") #IMPLIED>]><urlset><url><loc>http://e.com/1</loc></url></urlset>");
    char name[64];
    snprintf(name, sizeof name, "sitemap enum of %u values", n);
    run_sitemap(&b, name);
    free(b.p);
}

static void case_sitemap_deep(void)
{
    buf b = {0};
    puts_(&b, "<urlset><url><loc>http://e.com/1</loc></url>");
    for (unsigned i = 0; i < 1000000; i++)
        puts_(&b, "<x>");
    run_sitemap(&b, "sitemap 1e6 nested elements");
    free(b.p);
}

/* An ordinary sitemap: 50,000 entries with a lastmod and two alternates,
 * about 16 MB. */
static void case_feed_sitemap(void)
{
    buf b = {0};
    char e[512];
    puts_(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
              "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\" "
              "xmlns:xhtml=\"http://www.w3.org/1999/xhtml\">\n");
    for (unsigned i = 0; i < 50000; i++) {
        snprintf(e, sizeof e,
                 "  <url>\n    <loc>https://www.example.com/products/item-%u.html</loc>\n"
                 "    <lastmod>2024-05-%02u</lastmod>\n"
                 "    <xhtml:link rel=\"alternate\" hreflang=\"de\" "
                 "href=\"https://www.example.com/de/products/item-%u.html\"/>\n"
                 "    <xhtml:link rel=\"alternate\" hreflang=\"fr\" "
                 "href=\"https://www.example.com/fr/products/item-%u.html\"/>\n  </url>\n",
                 i, i % 28 + 1, i, i);
        puts_(&b, e);
    }
    puts_(&b, "</urlset>\n");
    double best = 1e9;
    int reps = getenv("REPS") ? atoi(getenv("REPS")) : 3;
    for (int r = 0; r < reps; r++) {
        double t = cpu_now();
        run_sitemap(&b, NULL);
        t = cpu_now() - t;
        if (t < best)
            best = t;
    }
    printf("%-28s %8.3f s cpu  %6.1f MB/s best of %d, %lu entries\n", "feed 16 MB sitemap", best,
           b.len / best / 1e6, reps, entries);
    free(b.p);
}

/* ---- robots.txt ---- */

static void run_robots(const char *body, size_t blen, const char *path, size_t plen,
                       const char *name)
{
    sieve_robots *r;
    double t = cpu_now();
    if (sieve_robots_parse(&r, body, blen, "sieve") != SIEVE_OK)
        abort();
    double parsed = cpu_now();
    int ok = sieve_robots_allowed(r, path, plen);
    double t2 = cpu_now();
    printf("%-28s %8.3f s cpu parse, %8.3f s cpu match  (%zu-byte path) allowed=%d\n", name,
           parsed - t, t2 - parsed, plen, ok);
    sieve_robots_free(r);
}

static void case_robots(void)
{
    /* The pattern against a long path of 'a's. */
    buf path = {0};
    puts_(&path, "/");
    for (int i = 0; i < 100000; i++)
        puts_(&path, "a");
    const char *rule = "User-agent: *\nDisallow: /*a*a*a*a*a*a*a*a*a*a*a*a*a*b\n";
    run_robots(rule, strlen(rule), path.p, path.len, "robots /*a*a...*b");

    /* The greedy matcher's worst case: a long literal after the last '*'
     * that almost matches everywhere, in as many rules as fit. */
    buf body = {0};
    puts_(&body, "User-agent: *\n");
    for (int r = 0; r < 120; r++) {
        char head[32];
        snprintf(head, sizeof head, "Disallow: /*%d*", r);
        puts_(&body, head);
        for (int i = 0; i < 4000; i++)
            puts_(&body, "a");
        puts_(&body, "b\n");
    }
    buf p2 = {0};
    puts_(&p2, "/0123456789");
    while (p2.len < 16384)
        puts_(&p2, "a");
    run_robots(body.p, body.len, p2.p, p2.len, "robots 120 x /*N*a{4000}b");
    free(body.p);
    free(path.p);
    free(p2.p);
}

static int want(int argc, char **argv, const char *c)
{
    if (argc < 2)
        return 1;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], c) == 0)
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    sieve_links_global_init();
    if (sieve_canon_new(&canon, NULL) != SIEVE_OK)
        return 1;
    if (want(argc, argv, "links")) {
        if (!getenv("SKIP_SLOW"))
            case_links_attrs(100000, 0);
        case_links_attrs(100000, 1);
        case_links_many_tags();
        case_links_deep("</x>", "links 1e5 deep, 1e5 </x>");
        case_links_deep("<body>", "links 1e5 deep, 1e5 <body>");
    }
    if (want(argc, argv, "feed") || want(argc, argv, "feed-tags"))
        case_feed_tags();
    if (want(argc, argv, "feed") || want(argc, argv, "feed-page"))
        case_feed_page();
    if (want(argc, argv, "feed-sitemap"))
        case_feed_sitemap();
    if (want(argc, argv, "sitemap")) {
        /* As many as fit in SIEVE_SITEMAP_MAX_PENDING (256 KiB). */
        case_sitemap_attrs(25000, " a%u=\"1\"", "sitemap 25000 distinct attrs");
        case_sitemap_attrs(25000, " a=\"%u\"", "sitemap 25000 dup attrs");
        case_sitemap_attrs(14000, " xmlns:p%u=\"u\"", "sitemap 14000 ns decls");
        case_sitemap_attrs(25000, " p:a%u=\"1\"", "sitemap 25000 prefixed attrs");
        case_sitemap_deep();
        case_sitemap_many(40, 22000, "sitemap 40 x 22000 attrs");
        case_sitemap_defaults(14000, 10);
        case_sitemap_enum(40000);
    }
    if (want(argc, argv, "robots"))
        case_robots();
    sieve_canon_free(canon);
    return 0;
}
