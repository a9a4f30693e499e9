/* test-sitemap.c - sitemap parsing: the three formats and gzip, what a
 * location is, chunking that changes nothing, the limits, and hostile
 * XML (external entities, entity bombs, broken markup). */
#include <check.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "sieve/sieve.h"

/* ---- running a parser ---- */

/* What one run produced: one line per entry, "P loc" or "S loc", with
 * " @lastmod" appended when there is one. */
typedef struct sink {
    char *text;
    size_t len, cap;
    size_t calls;
    int feed_status; /* the first failing feed, or SIEVE_OK */
    int finish_status;
    sieve_sitemap_stats st;
} sink;

static void sink_add(sink *s, const char *str, size_t n)
{
    if (s->len + n + 1 > s->cap) {
        s->cap = (s->len + n + 1) * 2;
        s->text = realloc(s->text, s->cap);
        ck_assert_ptr_nonnull(s->text);
    }
    memcpy(s->text + s->len, str, n);
    s->len += n;
    s->text[s->len] = '\0';
}

static void on_entry(void *ctx, const sieve_sitemap_entry *e)
{
    sink *s = ctx;
    s->calls++;
    ck_assert_ptr_nonnull(e->loc);
    ck_assert_uint_eq(strlen(e->loc), e->loc_len);
    ck_assert_uint_gt(e->loc_len, 0);
    ck_assert(e->kind == SIEVE_SITEMAP_PAGE || e->kind == SIEVE_SITEMAP_SITEMAP);
    sink_add(s, e->kind == SIEVE_SITEMAP_PAGE ? "P " : "S ", 2);
    sink_add(s, e->loc, e->loc_len);
    if (e->lastmod) {
        ck_assert_uint_eq(strlen(e->lastmod), e->lastmod_len);
        sink_add(s, " @", 2);
        sink_add(s, e->lastmod, e->lastmod_len);
    }
    sink_add(s, "\n", 1);
}

static void sink_free(sink *s)
{
    free(s->text);
}

/* Feeds doc in the chunk sizes sizes(i) gives, then finishes. */
typedef size_t (*chunker)(void *st, size_t left);

static sink run_with(const void *doc, size_t len, const sieve_sitemap_opts *opts, chunker next,
                     void *cst)
{
    sink s = {0};
    sink_add(&s, "", 0);
    sieve_sitemap *p;
    ck_assert_int_eq(sieve_sitemap_new(&p, opts, on_entry, &s), SIEVE_OK);
    const char *d = doc;
    size_t off = 0;
    while (off < len) {
        size_t n = next(cst, len - off);
        int st = sieve_sitemap_feed(p, d + off, n);
        if (st != SIEVE_OK && s.feed_status == SIEVE_OK)
            s.feed_status = st;
        off += n;
    }
    s.finish_status = sieve_sitemap_finish(p);
    sieve_sitemap_stats_get(p, &s.st);
    sieve_sitemap_free(p);
    return s;
}

static size_t fixed_step(void *st, size_t left)
{
    size_t step = *(size_t *)st;
    return step == 0 || step > left ? left : step;
}

/* Chunks of step bytes; 0: the whole document at once. */
static sink run(const void *doc, size_t len, const sieve_sitemap_opts *opts, size_t step)
{
    return run_with(doc, len, opts, fixed_step, &step);
}

static sink runs(const char *doc)
{
    return run(doc, strlen(doc), NULL, 0);
}

/* Random chunk sizes from 1 to 64 bytes, sometimes a whole 8 KiB. */
static size_t random_step(void *st, size_t left)
{
    uint64_t *x = st;
    *x = *x * 6364136223846793005u + 1442695040888963407u;
    size_t n = (*x >> 33) % 16 == 0 ? 8192 : (size_t)((*x >> 40) % 64) + 1;
    return n > left ? left : n;
}

static sink run_random(const void *doc, size_t len, uint64_t seed)
{
    return run_with(doc, len, NULL, random_step, &seed);
}

/* Both runs delivered the same entries and ended the same way. */
static void assert_same(const sink *a, const sink *b)
{
    ck_assert_str_eq(a->text, b->text);
    ck_assert_int_eq(a->feed_status, b->feed_status);
    ck_assert_int_eq(a->finish_status, b->finish_status);
    ck_assert_uint_eq(a->st.bytes_out, b->st.bytes_out);
    ck_assert_uint_eq(a->st.too_long, b->st.too_long);
    ck_assert_uint_eq(a->st.empty, b->st.empty);
    ck_assert_uint_eq(a->st.invalid, b->st.invalid);
}

/* ---- building documents ---- */

typedef struct buf {
    char *p;
    size_t len, cap;
} buf;

static void buf_add(buf *b, const void *p, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->p = realloc(b->p, b->cap);
        ck_assert_ptr_nonnull(b->p);
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void buf_str(buf *b, const char *s)
{
    buf_add(b, s, strlen(s));
}

static void buf_rep(buf *b, char c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        buf_add(b, &c, 1);
}

/* A gzip stream written in pieces, so that a bomb needs no big input. */
typedef struct gzw {
    z_stream z;
    buf out;
} gzw;

static void gzw_init(gzw *g)
{
    memset(g, 0, sizeof *g);
    ck_assert_int_eq(deflateInit2(&g->z, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY),
                     Z_OK);
}

static void gzw_run(gzw *g, const void *p, size_t n, int flush)
{
    unsigned char out[65536];
    g->z.next_in = (Bytef *)p;
    g->z.avail_in = (uInt)n;
    int r;
    do {
        g->z.next_out = out;
        g->z.avail_out = sizeof out;
        r = deflate(&g->z, flush);
        ck_assert(r == Z_OK || r == Z_STREAM_END || r == Z_BUF_ERROR);
        buf_add(&g->out, out, sizeof out - g->z.avail_out);
    } while (g->z.avail_out == 0 || (flush == Z_FINISH && r != Z_STREAM_END));
}

static buf gzw_finish(gzw *g)
{
    gzw_run(g, "", 0, Z_FINISH);
    deflateEnd(&g->z);
    return g->out;
}

static buf gz(const void *p, size_t n)
{
    gzw g;
    gzw_init(&g);
    gzw_run(&g, p, n, Z_NO_FLUSH);
    return gzw_finish(&g);
}

#define NS "http://www.sitemaps.org/schemas/sitemap/0.9"

static const char urlset_doc[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<urlset xmlns=\"" NS "\">\n"
    "  <url>\n"
    "    <loc>http://www.example.com/</loc>\n"
    "    <lastmod>2005-01-01</lastmod>\n"
    "    <changefreq>monthly</changefreq>\n"
    "    <priority>0.8</priority>\n"
    "  </url>\n"
    "  <url>\n"
    "    <loc>http://www.example.com/catalog?item=12&amp;desc=vacation_hawaii</loc>\n"
    "    <changefreq>weekly</changefreq>\n"
    "  </url>\n"
    "  <url>\n"
    "    <lastmod>2004-12-23T18:00:15+00:00</lastmod>\n"
    "    <loc>http://www.example.com/catalog?item=73&amp;desc=vacation_new_zealand</loc>\n"
    "  </url>\n"
    "</urlset>\n";

static const char urlset_want[] =
    "P http://www.example.com/ @2005-01-01\n"
    "P http://www.example.com/catalog?item=12&desc=vacation_hawaii\n"
    "P http://www.example.com/catalog?item=73&desc=vacation_new_zealand "
    "@2004-12-23T18:00:15+00:00\n";

static const char index_doc[] = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                                "<sitemapindex xmlns=\"" NS "\">\n"
                                "  <sitemap>\n"
                                "    <loc>http://www.example.com/sitemap1.xml.gz</loc>\n"
                                "    <lastmod>2004-10-01T18:23:17+00:00</lastmod>\n"
                                "  </sitemap>\n"
                                "  <sitemap>\n"
                                "    <loc>http://www.example.com/sitemap2.xml.gz</loc>\n"
                                "  </sitemap>\n"
                                "</sitemapindex>\n";

static const char index_want[] = "S http://www.example.com/sitemap1.xml.gz "
                                 "@2004-10-01T18:23:17+00:00\n"
                                 "S http://www.example.com/sitemap2.xml.gz\n";

static const char text_doc[] = "\xef\xbb\xbf\r\n"
                               "http://www.example.com/a\r\n"
                               "\r\n"
                               "   \t\n"
                               "  https://www.example.com/b?x=1&y=2  \r\n"
                               "\n"
                               "HTTP://www.example.com/c";

static const char text_want[] = "P http://www.example.com/a\n"
                                "P https://www.example.com/b?x=1&y=2\n"
                                "P HTTP://www.example.com/c\n";

/* ---- tests ---- */

START_TEST(urlset_example)
{
    sink s = runs(urlset_doc);
    ck_assert_int_eq(s.finish_status, SIEVE_OK);
    ck_assert_str_eq(s.text, urlset_want);
    ck_assert_uint_eq(s.st.pages, 3);
    ck_assert_uint_eq(s.st.sitemaps, 0);
    ck_assert_int_eq(s.st.format, SIEVE_SITEMAP_URLSET);
    ck_assert(!s.st.gzip);
    ck_assert(!s.st.truncated);
    ck_assert(!s.st.malformed);
    ck_assert_uint_eq(s.st.bytes_in, strlen(urlset_doc));
    ck_assert_uint_eq(s.st.bytes_out, strlen(urlset_doc));
    sink_free(&s);
}
END_TEST

START_TEST(sitemapindex_example)
{
    sink s = runs(index_doc);
    ck_assert_int_eq(s.finish_status, SIEVE_OK);
    ck_assert_str_eq(s.text, index_want);
    ck_assert_uint_eq(s.st.sitemaps, 2);
    ck_assert_uint_eq(s.st.pages, 0);
    ck_assert_int_eq(s.st.format, SIEVE_SITEMAP_INDEX);
    sink_free(&s);
}
END_TEST

START_TEST(namespaces_do_not_matter)
{
    static const char *const docs[] = {
        /* no namespace at all */
        "<urlset><url><loc>http://a.example/1</loc></url></urlset>",
        /* a prefix bound to the sitemap namespace */
        "<sm:urlset xmlns:sm=\"" NS "\"><sm:url><sm:loc>http://a.example/1</sm:loc></sm:url>"
        "</sm:urlset>",
        /* another namespace entirely */
        "<urlset xmlns=\"urn:other\"><url><loc>http://a.example/1</loc></url></urlset>",
        /* a prefix never bound */
        "<x:urlset><x:url><x:loc>http://a.example/1</x:loc></x:url></x:urlset>",
        /* elements of other namespaces around it, as extensions add */
        "<urlset xmlns=\"" NS "\" xmlns:image=\"urn:image\"><url><loc>http://a.example/1</loc>"
        "<image:image><image:loc>http://a.example/img.png</image:loc></image:image></url>"
        "</urlset>",
    };
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        sink s = runs(docs[i]);
        ck_assert_msg(s.finish_status == SIEVE_OK, "doc %zu: %d", i, s.finish_status);
        ck_assert_msg(strcmp(s.text, "P http://a.example/1\n") == 0, "doc %zu: %s", i, s.text);
        sink_free(&s);
    }
}
END_TEST

START_TEST(location_text)
{
    sink s =
        runs("<urlset>"
             /* whitespace and line breaks around it are trimmed */
             "<url><loc>\n\t  http://a.example/1 \r\n </loc></url>"
             /* entities and character references are decoded */
             "<url><loc>http://a.example/2?a=1&amp;b=&lt;&#x41;&#66;&gt;&quot;&apos;</loc></url>"
             /* CDATA, alone or with text around it */
             "<url><loc><![CDATA[http://a.example/3?a=1&b=2]]></loc></url>"
             "<url><loc> http://a.example/<![CDATA[4&]]>x </loc></url>"
             /* a comment inside is skipped */
             "<url><loc>http://a.example/<!-- c -->5</loc></url>"
             /* only the first loc of an entry counts */
             "<url><loc>http://a.example/6</loc><loc>http://a.example/7</loc></url>"
             /* refused: empty, blank, absent, a line break inside */
             "<url><loc></loc></url>"
             "<url><loc> \n </loc></url>"
             "<url><lastmod>2020-01-01</lastmod></url>"
             "<url><loc>http://a.example/\n8</loc></url>"
             /* a lastmod too long or blank is left out */
             "<url><loc>http://a.example/9</loc><lastmod>"
             "0123456789012345678901234567890123456789012345678901234567890123456789"
             "</lastmod></url>"
             "<url><loc>http://a.example/10</loc><lastmod>  </lastmod></url>"
             /* a sitemap element in a urlset is not an entry */
             "<sitemap><loc>http://a.example/11</loc></sitemap>"
             "<loc>http://a.example/12</loc>"
             "</urlset>");
    ck_assert_int_eq(s.finish_status, SIEVE_OK);
    ck_assert_str_eq(s.text, "P http://a.example/1\n"
                             "P http://a.example/2?a=1&b=<AB>\"'\n"
                             "P http://a.example/3?a=1&b=2\n"
                             "P http://a.example/4&x\n"
                             "P http://a.example/5\n"
                             "P http://a.example/6\n"
                             "P http://a.example/9\n"
                             "P http://a.example/10\n");
    ck_assert_uint_eq(s.st.pages, 8);
    ck_assert_uint_eq(s.st.empty, 3);
    ck_assert_uint_eq(s.st.invalid, 1);
    ck_assert_uint_eq(s.st.too_long, 0);
    sink_free(&s);
}
END_TEST

START_TEST(text_sitemaps)
{
    sink s = runs(text_doc);
    ck_assert_int_eq(s.finish_status, SIEVE_OK);
    ck_assert_str_eq(s.text, text_want);
    ck_assert_int_eq(s.st.format, SIEVE_SITEMAP_TEXT);
    ck_assert_uint_eq(s.st.pages, 3);
    sink_free(&s);

    /* A control byte in a line refuses that line only. */
    static const char ctl[] = "https://a.example/1\nhttp://a.example/\0002\nhttp://a.example/3\n";
    s = run(ctl, sizeof ctl - 1, NULL, 0);
    ck_assert_int_eq(s.finish_status, SIEVE_OK);
    ck_assert_str_eq(s.text, "P https://a.example/1\nP http://a.example/3\n");
    ck_assert_uint_eq(s.st.invalid, 1);
    sink_free(&s);
}
END_TEST

START_TEST(gzip_of_each_format)
{
    static const char *const docs[] = {urlset_doc, index_doc, text_doc};
    static const char *const want[] = {urlset_want, index_want, text_want};
    for (size_t i = 0; i < 3; i++) {
        buf z = gz(docs[i], strlen(docs[i]));
        for (size_t step = 0; step < 3; step++) {
            sink s = run(z.p, z.len, NULL, step);
            ck_assert_int_eq(s.finish_status, SIEVE_OK);
            ck_assert_str_eq(s.text, want[i]);
            ck_assert(s.st.gzip);
            ck_assert_uint_eq(s.st.bytes_in, z.len);
            ck_assert_uint_eq(s.st.bytes_out, strlen(docs[i]));
            sink_free(&s);
        }
        free(z.p);
    }
}
END_TEST

START_TEST(gzip_members_trailers_and_damage)
{
    /* Two members, as `cat a.gz b.gz` makes: both are read. */
    const char *a = "http://a.example/1\nhttp://a.ex", *b = "ample/2\nhttp://a.example/3\n";
    buf za = gz(a, strlen(a)), zb = gz(b, strlen(b));
    buf two = {0};
    buf_add(&two, za.p, za.len);
    buf_add(&two, zb.p, zb.len);
    sink s = run(two.p, two.len, NULL, 1);
    ck_assert_int_eq(s.finish_status, SIEVE_OK);
    ck_assert_str_eq(s.text, "P http://a.example/1\nP http://a.example/2\nP http://a.example/3\n");
    sink_free(&s);

    /* Bytes after the last member that start no member are ignored. */
    buf_add(&two, "\0\0\0garbage", 10);
    sink t = run(two.p, two.len, NULL, 0);
    ck_assert_int_eq(t.finish_status, SIEVE_OK);
    ck_assert_uint_eq(t.st.pages, 3);
    sink_free(&t);

    /* Cut short: what was read stands, the cut line is dropped. */
    buf big = {0};
    for (int i = 0; i < 2000; i++) {
        char line[64];
        snprintf(line, sizeof line, "http://a.example/%d\n", i);
        buf_str(&big, line);
    }
    buf zbig = gz(big.p, big.len);
    s = run(zbig.p, zbig.len / 2, NULL, 0);
    ck_assert_int_eq(s.finish_status, SIEVE_ETRUNCATED);
    ck_assert_uint_gt(s.st.pages, 10);
    ck_assert_uint_lt(s.st.pages, 2000);
    ck_assert(strncmp(s.text, "P http://a.example/0\nP http://a.example/1\n", 42) == 0);
    /* Every delivered line is whole. */
    char want[64];
    snprintf(want, sizeof want, "P http://a.example/%u\n", (unsigned)s.st.pages - 1);
    ck_assert_uint_ge(s.len, strlen(want));
    ck_assert_str_eq(s.text + s.len - strlen(want), want);
    sink_free(&s);

    /* Corrupt in the middle: an error, the entries before it stand. */
    zbig.p[zbig.len / 2] ^= 0x55;
    zbig.p[zbig.len / 2 + 1] ^= 0xaa;
    s = run(zbig.p, zbig.len, NULL, 0);
    ck_assert(s.finish_status == SIEVE_EFORMAT || s.finish_status == SIEVE_ETRUNCATED);
    ck_assert_uint_gt(s.st.pages, 0);
    sink_free(&s);

    free(za.p);
    free(zb.p);
    free(two.p);
    free(big.p);
    free(zbig.p);
}
END_TEST

/* A large document with every feature, compared fed at once, a byte at a
 * time and in random pieces. */
START_TEST(chunking_changes_nothing)
{
    buf x = {0};
    buf_str(&x, "\xef\xbb\xbf  \n<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- head -->\n"
                "<urlset xmlns=\"" NS "\">\n");
    for (int i = 0; i < 3000; i++) {
        char e[512];
        snprintf(e, sizeof e,
                 "<url>\n  <loc>%s http://h%d.example/p?a=%d&amp;b=%d%s</loc>\n"
                 "  <lastmod>2024-01-%02d</lastmod><priority>0.%d</priority>\n"
                 "  <!-- comment %d with <tags> inside -->\n</url>\n",
                 i % 7 == 0 ? "<![CDATA[" : "", i, i, i * 7, i % 7 == 0 ? "]]>" : "", i % 28 + 1,
                 i % 10, i);
        buf_str(&x, e);
    }
    buf_str(&x, "</urlset>\n");
    buf t = {0};
    for (int i = 0; i < 3000; i++) {
        char e[128];
        snprintf(e, sizeof e, "%shttp://h%d.example/p?a=%d%s", i % 5 ? "" : "  ", i, i,
                 i % 3 ? "\r\n" : "\n\n");
        buf_str(&t, e);
    }
    buf zx = gz(x.p, x.len), zt = gz(t.p, t.len);
    const buf *docs[] = {&x, &t, &zx, &zt};
    const uint64_t want_pages[] = {3000, 3000, 3000, 3000};
    for (size_t d = 0; d < 4; d++) {
        sink whole = run(docs[d]->p, docs[d]->len, NULL, 0);
        ck_assert_int_eq(whole.finish_status, SIEVE_OK);
        ck_assert_uint_eq(whole.st.pages, want_pages[d]);
        sink bytes = run(docs[d]->p, docs[d]->len, NULL, 1);
        assert_same(&whole, &bytes);
        sink_free(&bytes);
        for (uint64_t seed = 1; seed <= 5; seed++) {
            sink r = run_random(docs[d]->p, docs[d]->len, seed * 7919 + d);
            assert_same(&whole, &r);
            sink_free(&r);
        }
        sink_free(&whole);
    }
    free(x.p);
    free(t.p);
    free(zx.p);
    free(zt.p);
}
END_TEST

/* A urlset of n entries whose locations are padded to about 200 bytes,
 * so that the document passes libxml2's 10 MB look-ahead limit. */
static buf many_entries(size_t n)
{
    buf b = {0};
    buf_str(&b, "<urlset xmlns=\"" NS "\">\n");
    char pad[181];
    memset(pad, 'x', sizeof pad - 1);
    pad[sizeof pad - 1] = '\0';
    for (size_t i = 0; i < n; i++) {
        char e[300];
        snprintf(e, sizeof e, "<url><loc>http://a.example/%zu/%s</loc></url>\n", i, pad);
        buf_str(&b, e);
    }
    buf_str(&b, "</urlset>\n");
    return b;
}

START_TEST(entries_limit)
{
    buf full = many_entries(SIEVE_SITEMAP_MAX_ENTRIES);
    ck_assert_uint_gt(full.len, 10000000);
    sink s = run(full.p, full.len, NULL, 0);
    ck_assert_int_eq(s.finish_status, SIEVE_OK);
    ck_assert_uint_eq(s.st.pages, SIEVE_SITEMAP_MAX_ENTRIES);
    ck_assert(!s.st.truncated);
    sink_free(&s);
    free(full.p);

    buf over = many_entries(SIEVE_SITEMAP_MAX_ENTRIES + 1);
    s = run(over.p, over.len, NULL, 0);
    ck_assert_int_eq(s.finish_status, SIEVE_ETOOLONG);
    ck_assert_uint_eq(s.st.pages, SIEVE_SITEMAP_MAX_ENTRIES);
    ck_assert(s.st.truncated);
    sink_free(&s);
    free(over.p);

    /* A smaller cap, counting refused entries too; text alike. */
    sieve_sitemap_opts o = {.max_entries = 3};
    const char *doc = "<urlset><url><loc>http://a/1</loc></url><url><loc/></url>"
                      "<url><loc>http://a/2</loc></url><url><loc>http://a/3</loc></url></urlset>";
    s = run(doc, strlen(doc), &o, 0);
    ck_assert_int_eq(s.finish_status, SIEVE_ETOOLONG);
    ck_assert_str_eq(s.text, "P http://a/1\nP http://a/2\n");
    ck_assert_uint_eq(s.st.empty, 1);
    sink_free(&s);
    const char *txt = "http://a/1\n\n\nhttp://a/2\nhttp://a/3\nhttp://a/4\n";
    s = run(txt, strlen(txt), &o, 1);
    ck_assert_int_eq(s.finish_status, SIEVE_ETOOLONG);
    ck_assert_str_eq(s.text, "P http://a/1\nP http://a/2\nP http://a/3\n");
    sink_free(&s);
}
END_TEST

/* "<url><loc>" + "http://a/" padded with 'x' to n bytes + tail. */
static void add_loc(buf *b, size_t n, const char *tail)
{
    buf_str(b, "<url><loc>http://a/");
    buf_rep(b, 'x', n - strlen("http://a/"));
    buf_str(b, tail);
}

START_TEST(location_length_limit)
{
    buf b = {0};
    buf_str(&b, "<urlset>");
    add_loc(&b, SIEVE_SITEMAP_MAX_LOC, "</loc></url>");
    add_loc(&b, SIEVE_SITEMAP_MAX_LOC + 1, "</loc></url>");
    add_loc(&b, SIEVE_SITEMAP_MAX_LOC, "     \n\n  </loc></url>"); /* blanks past the limit */
    add_loc(&b, SIEVE_SITEMAP_MAX_LOC - 4, "     y</loc></url>");  /* 2050 bytes */
    add_loc(&b, 10 * 1024 * 1024, "</loc></url>");                 /* 10 MiB */
    buf_str(&b, "<url><loc>http://a/after</loc></url></urlset>");
    sink s = run(b.p, b.len, NULL, 0);
    ck_assert_int_eq(s.finish_status, SIEVE_OK);
    ck_assert_uint_eq(s.st.pages, 3);
    ck_assert_uint_eq(s.st.too_long, 3);
    ck_assert_uint_eq(s.calls, 3);
    ck_assert_str_eq(s.text + s.len - strlen("P http://a/after\n"), "P http://a/after\n");
    sink whole = s;
    s = run(b.p, b.len, NULL, 7);
    assert_same(&whole, &s);
    sink_free(&s);
    sink_free(&whole);

    /* The limit is an option; text lines obey it too. */
    sieve_sitemap_opts o = {.max_loc = 12};
    const char *txt = "http://a/123\nhttp://a/1234\n  http://a/123  \n";
    s = run(txt, strlen(txt), &o, 0);
    ck_assert_int_eq(s.finish_status, SIEVE_OK);
    ck_assert_str_eq(s.text, "P http://a/123\nP http://a/123\n");
    ck_assert_uint_eq(s.st.too_long, 1);
    sink_free(&s);

    /* A location that never ends stops at the byte limit, unstored. */
    b.len = 0;
    buf_str(&b, "<urlset><url><loc>http://a/");
    buf_rep(&b, 'x', 3 * 1024 * 1024);
    o = (sieve_sitemap_opts){.max_bytes = 2 * 1024 * 1024};
    s = run(b.p, b.len, &o, 4096);
    ck_assert_int_eq(s.finish_status, SIEVE_ETOOLONG);
    ck_assert_uint_eq(s.st.bytes_out, 2 * 1024 * 1024);
    ck_assert_uint_eq(s.calls, 0);
    sink_free(&s);
    free(b.p);
}
END_TEST

START_TEST(byte_limit_and_gzip_bomb)
{
    /* 200 MiB of blanks inside a urlset, compressed to a few hundred KiB. */
    const char *head = "<urlset><url><loc>http://a.example/1</loc></url>\n";
    static char blanks[1 << 20];
    memset(blanks, ' ', sizeof blanks);
    gzw g;
    gzw_init(&g);
    gzw_run(&g, head, strlen(head), Z_NO_FLUSH);
    for (int i = 0; i < 200; i++)
        gzw_run(&g, blanks, sizeof blanks, Z_NO_FLUSH);
    gzw_run(&g, "<url><loc>http://a.example/2</loc></url></urlset>", 49, Z_NO_FLUSH);
    buf bomb = gzw_finish(&g);
    ck_assert_uint_lt(bomb.len, 1024 * 1024);

    sink s = run(bomb.p, bomb.len, NULL, 0);
    ck_assert_int_eq(s.feed_status, SIEVE_ETOOLONG);
    ck_assert_int_eq(s.finish_status, SIEVE_ETOOLONG);
    ck_assert_str_eq(s.text, "P http://a.example/1\n");
    ck_assert_uint_eq(s.st.bytes_out, SIEVE_SITEMAP_MAX_BYTES);
    ck_assert_uint_eq(s.st.bytes_in, bomb.len);
    ck_assert(s.st.truncated);
    ck_assert(s.st.gzip);
    sink_free(&s);

    /* The same in small feeds, with a smaller cap. */
    sieve_sitemap_opts o = {.max_bytes = 3 * 1024 * 1024 + 5};
    s = run(bomb.p, bomb.len, &o, 100);
    ck_assert_int_eq(s.finish_status, SIEVE_ETOOLONG);
    ck_assert_str_eq(s.text, "P http://a.example/1\n");
    ck_assert_uint_eq(s.st.bytes_out, 3 * 1024 * 1024 + 5);
    ck_assert_uint_lt(s.st.bytes_in, bomb.len); /* the rest was refused */
    sink_free(&s);
    free(bomb.p);

    /* Uncompressed: a file of exactly max_bytes is read whole, one byte
     * more is not, and its last (cut) line is not delivered. */
    const char *txt = "http://a/1\nhttp://a/2\nhttp://a/3";
    o = (sieve_sitemap_opts){.max_bytes = strlen(txt)};
    s = run(txt, strlen(txt), &o, 0);
    ck_assert_int_eq(s.finish_status, SIEVE_OK);
    ck_assert_uint_eq(s.st.pages, 3);
    sink_free(&s);
    o.max_bytes = strlen(txt) - 1;
    s = run(txt, strlen(txt), &o, 1);
    ck_assert_int_eq(s.finish_status, SIEVE_ETOOLONG);
    ck_assert_str_eq(s.text, "P http://a/1\nP http://a/2\n");
    ck_assert_uint_eq(s.st.bytes_out, strlen(txt) - 1);
    ck_assert(s.st.truncated);
    sink_free(&s);
}
END_TEST

START_TEST(unparsed_tail_is_bounded)
{
    /* A start tag that never ends: libxml2 would hold all of it. */
    buf b = {0};
    buf_str(&b, "<urlset><url><loc>http://a/1</loc></url><url a=\"");
    buf_rep(&b, 'v', 4 * 1024 * 1024);
    sink s = run(b.p, b.len, NULL, 65536);
    ck_assert_int_eq(s.finish_status, SIEVE_ETOOLONG);
    ck_assert_str_eq(s.text, "P http://a/1\n");
    ck_assert(s.st.truncated);
    ck_assert_uint_lt(s.st.bytes_out, 2 * SIEVE_SITEMAP_MAX_PENDING);
    sink_free(&s);
    free(b.p);
}
END_TEST

/* Runs doc in a child process; returns the child's peak RSS growth over
 * ours in KiB and copies what it delivered into out. */
static long run_in_child(const char *doc, char *out, size_t cap)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    struct rusage before;
    getrusage(RUSAGE_SELF, &before);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(fds[0]);
        sink s = runs(doc);
        char msg[4096];
        int n = snprintf(msg, sizeof msg, "%d %llu %llu|%s", s.finish_status,
                         (unsigned long long)s.st.pages, (unsigned long long)s.st.too_long, s.text);
        if (write(fds[1], msg, (size_t)n) != n)
            _exit(2);
        _exit(0);
    }
    close(fds[1]);
    size_t len = 0;
    ssize_t r;
    while (len + 1 < cap && (r = read(fds[0], out + len, cap - 1 - len)) > 0)
        len += (size_t)r;
    out[len] = '\0';
    close(fds[0]);
    int wst;
    struct rusage ru;
    ck_assert_int_eq(wait4(pid, &wst, 0, &ru), pid);
    ck_assert(WIFEXITED(wst) && WEXITSTATUS(wst) == 0);
    return ru.ru_maxrss - before.ru_maxrss;
}

START_TEST(entity_bombs_do_not_expand)
{
    /* Billion laughs: 10^9 "lol"s if expanded. */
    const char *laughs =
        "<?xml version=\"1.0\"?>\n"
        "<!DOCTYPE urlset [\n"
        " <!ENTITY lol \"lol\">\n"
        " <!ENTITY lol1 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">\n"
        " <!ENTITY lol2 \"&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;\">\n"
        " <!ENTITY lol3 \"&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;\">\n"
        " <!ENTITY lol4 \"&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;\">\n"
        " <!ENTITY lol5 \"&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;\">\n"
        " <!ENTITY lol6 \"&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;\">\n"
        " <!ENTITY lol7 \"&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;\">\n"
        " <!ENTITY lol8 \"&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;\">\n"
        " <!ENTITY lol9 \"&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;\">\n"
        "]>\n"
        "<urlset a=\"&lol9;\"><url><loc>http://a.example/&lol9;x</loc></url>"
        "<url><loc>http://a.example/&lol;y</loc></url></urlset>\n";
    char out[4096];
    long grew = run_in_child(laughs, out, sizeof out);
    ck_assert_str_eq(out, "0 2 0|P http://a.example/x\nP http://a.example/y\n");
    ck_assert_msg(grew < 64 * 1024, "peak RSS grew by %ld KiB", grew);

    /* Quadratic blowup: one 64 KiB entity used 20,000 times (1.3 GB). */
    buf q = {0};
    buf_str(&q, "<!DOCTYPE urlset [<!ENTITY a \"");
    buf_rep(&q, 'a', 65536);
    buf_str(&q, "\">]><urlset><url><loc>http://a.example/");
    for (int i = 0; i < 20000; i++)
        buf_str(&q, "&a;");
    buf_str(&q, "</loc></url></urlset>");
    grew = run_in_child(q.p, out, sizeof out);
    ck_assert_str_eq(out, "0 1 0|P http://a.example/\n");
    ck_assert_msg(grew < 64 * 1024, "peak RSS grew by %ld KiB", grew);
    free(q.p);
}
END_TEST

START_TEST(external_entities_are_not_loaded)
{
    char dir[] = "/tmp/sieve-sitemap-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char secret[128], dtd[128];
    snprintf(secret, sizeof secret, "%s/secret.txt", dir);
    snprintf(dtd, sizeof dtd, "%s/evil.dtd", dir);
    FILE *f = fopen(secret, "w");
    ck_assert_ptr_nonnull(f);
    fputs("SECRET", f);
    fclose(f);
    f = fopen(dtd, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "<!ENTITY fromdtd \"SECRET\">\n<!ENTITY %% pe \"<!ENTITY pe2 'SECRET'>\">\n%%pe;\n");
    fclose(f);

    char doc[4][1024];
    /* a general external entity */
    snprintf(doc[0], sizeof doc[0],
             "<!DOCTYPE urlset [<!ENTITY xxe SYSTEM \"file://%s\">]>"
             "<urlset><url><loc>http://a.example/&xxe;x</loc></url></urlset>",
             secret);
    /* an external DTD that declares entities */
    snprintf(doc[1], sizeof doc[1],
             "<!DOCTYPE urlset SYSTEM \"file://%s\">"
             "<urlset><url><loc>http://a.example/&fromdtd;x</loc></url></urlset>",
             dtd);
    /* an external parameter entity pulling the DTD into the internal subset */
    snprintf(doc[2], sizeof doc[2],
             "<!DOCTYPE urlset [<!ENTITY %% ext SYSTEM \"file://%s\"> %%ext;]>"
             "<urlset><url><loc>http://a.example/&fromdtd;&pe2;x</loc></url></urlset>",
             dtd);
    /* an internal entity: declared entities are never expanded */
    snprintf(doc[3], sizeof doc[3],
             "<!DOCTYPE urlset [<!ENTITY in \"SECRET\">]>"
             "<urlset><url><loc>http://a.example/&in;x</loc></url></urlset>");
    for (int i = 0; i < 4; i++) {
        sink s = runs(doc[i]);
        ck_assert_msg(s.finish_status == SIEVE_OK, "doc %d: %d", i, s.finish_status);
        ck_assert_msg(strcmp(s.text, "P http://a.example/x\n") == 0, "doc %d: %s", i, s.text);
        sink_free(&s);
    }
    unlink(secret);
    unlink(dtd);
    rmdir(dir);
}
END_TEST

START_TEST(malformed_xml_keeps_earlier_entries)
{
    static const char *const docs[] = {
        /* cut short, as a dropped connection leaves it */
        "<urlset><url><loc>http://a/1</loc></url><url><loc>http://a/2</loc></url><url><loc>http",
        /* garbage after two entries */
        "<urlset><url><loc>http://a/1</loc></url><url><loc>http://a/2</loc></url>"
        "<<<&&&;;;]]></urlset></urlset><<",
        /* mismatched end tags */
        "<urlset><url><loc>http://a/1</loc></url><url><loc>http://a/2</loc></url>"
        "<url><loc>http://a/3</LOC></URL></urlset>",
        /* content after the root */
        "<urlset><url><loc>http://a/1</loc></url><url><loc>http://a/2</loc></url></urlset>"
        "<urlset><url><loc>http://a/3</loc></url></urlset>",
    };
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        sink s = runs(docs[i]);
        ck_assert_msg(s.finish_status == SIEVE_OK, "doc %zu: %d", i, s.finish_status);
        ck_assert_msg(strncmp(s.text, "P http://a/1\nP http://a/2\n", 26) == 0, "doc %zu: %s", i,
                      s.text);
        ck_assert_msg(s.st.malformed, "doc %zu", i);
        sink f = run(docs[i], strlen(docs[i]), NULL, 1);
        assert_same(&s, &f);
        sink_free(&f);
        sink_free(&s);
    }

    /* An error does not stop entities from being decoded after it. */
    sink r = runs("<urlset><url><loc>http://a/?x=1&y=2</loc></url>"
                  "<url><loc>http://a/?p=1&amp;q=2</loc></url>"
                  "<url><loc>http://a/&undeclared;</loc></url>"
                  "<url><loc>&amp;http://a/?r=1&amp;s=2&#38;t=3</loc></url></urlset>");
    ck_assert_int_eq(r.finish_status, SIEVE_OK);
    ck_assert(r.st.malformed);
    ck_assert_ptr_nonnull(strstr(r.text, "P http://a/?p=1&q=2\n"));
    ck_assert_ptr_nonnull(strstr(r.text, "P http://a/\n"));
    ck_assert_ptr_nonnull(strstr(r.text, "P &http://a/?r=1&s=2&t=3\n"));
    sink_free(&r);

    /* libxml2's push parser keeps no depth limit when it builds no tree
     * (45 MB of "<d>" took 525 MB): nesting past 256 stops the parse. */
    buf b = {0};
    buf_str(&b, "<urlset><url><loc>http://a/1</loc></url><url>");
    for (int i = 0; i < 100000; i++)
        buf_str(&b, "<d>");
    sink s = run(b.p, b.len, NULL, 0);
    ck_assert_int_eq(s.finish_status, SIEVE_ETOOLONG);
    ck_assert_str_eq(s.text, "P http://a/1\n");
    ck_assert(s.st.truncated);
    sink_free(&s);
    free(b.p);
}
END_TEST

/* Bounded cost: see sitemap-xml.c. The tests count what libxml2 was let do
 * (entries delivered, where the parse stopped) rather than time it;
 * bench/hostile.c has the times. */

/* A urlset of n entries, each a <url> with attrs attributes made by fmt
 * from their index. */
static buf attrs_doc(unsigned n, unsigned attrs, const char *fmt)
{
    buf b = {0};
    char a[64];
    buf_str(&b, "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n");
    for (unsigned e = 0; e < n; e++) {
        buf_str(&b, "<url");
        for (unsigned i = 0; i < attrs; i++) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
            snprintf(a, sizeof a, fmt, i);
#pragma GCC diagnostic pop
            buf_str(&b, a);
        }
        snprintf(a, sizeof a, "><loc>http://a/%u</loc></url>\n", e);
        buf_str(&b, a);
    }
    buf_str(&b, "</urlset>");
    return b;
}

START_TEST(attributes_per_element_are_bounded)
{
    /* Elements at the limit, read whole whatever the chunking. */
    buf b = attrs_doc(200, SIEVE_SITEMAP_MAX_ATTRS, "\n a%u=\"x\"");
    sink whole = run(b.p, b.len, NULL, 0);
    ck_assert_int_eq(whole.finish_status, SIEVE_OK);
    ck_assert_uint_eq(whole.st.pages, 200);
    ck_assert(!whole.st.truncated);
    sink one = run(b.p, b.len, NULL, 1), rnd = run_random(b.p, b.len, 7);
    assert_same(&whole, &one);
    assert_same(&whole, &rnd);
    sink_free(&one);
    sink_free(&rnd);
    sink_free(&whole);
    free(b.p);

    /* One element of 25,000 attributes, distinct or not, after an entry:
     * the entry stands, the parse stops at the element. */
    static const char *const fmts[] = {" a%u=\"1\"", " a=\"%u\"", " xmlns:p%u=\"u\""};
    for (size_t f = 0; f < 3; f++) {
        buf d = {0};
        buf_str(&d, "<urlset><url><loc>http://a/first</loc></url>");
        buf e = attrs_doc(1, 25000, fmts[f]);
        buf_add(&d, e.p + 8, e.len - 8);
        free(e.p);
        sink s = run(d.p, d.len, NULL, 0);
        ck_assert_msg(s.finish_status == SIEVE_ETOOLONG, "fmt %zu: %d", f, s.finish_status);
        ck_assert_str_eq(s.text, "P http://a/first\n");
        ck_assert(s.st.truncated);
        sink r = run_random(d.p, d.len, f);
        assert_same(&s, &r);
        sink_free(&r);
        sink_free(&s);
        free(d.p);
    }

    /* Attributes hidden behind an end tag that libxml2 holds until a '>'
     * comes, and read after it in one call. */
    buf h = {0};
    buf_str(&h, "<urlset><url><loc>http://a/first</loc></url></x ");
    h.len--; /* no blank: "</x" then the tag */
    buf_str(&h, "<url");
    for (unsigned i = 0; i < 25000; i++) {
        char a[32];
        snprintf(a, sizeof a, " a%u=\"1\"", i);
        buf_str(&h, a);
    }
    buf_str(&h, "><loc>http://a/2</loc></url></urlset>");
    sink t = run(h.p, h.len, NULL, 4096);
    ck_assert_int_eq(t.finish_status, SIEVE_ETOOLONG);
    ck_assert_str_eq(t.text, "P http://a/first\n");
    sink_free(&t);
    free(h.p);
}
END_TEST

START_TEST(doctype_costs_are_bounded)
{
    /* 14,000 default attributes for <url> took libxml2 0.08 s for every
     * entry: defaults are dropped, and all entries come. */
    buf b = {0};
    char a[64];
    buf_str(&b, "<!DOCTYPE urlset [<!ATTLIST url");
    for (unsigned i = 0; i < 14000; i++) {
        snprintf(a, sizeof a, " a%u CDATA \"x\"", i);
        buf_str(&b, a);
    }
    buf_str(&b, ">]><urlset>");
    for (unsigned e = 0; e < 2000; e++) {
        snprintf(a, sizeof a, "<url><loc>http://a/%u</loc></url>", e);
        buf_str(&b, a);
    }
    buf_str(&b, "</urlset>");
    sink s = run(b.p, b.len, NULL, 0);
    ck_assert_int_eq(s.finish_status, SIEVE_OK);
    ck_assert_uint_eq(s.st.pages, 2000);
    sink_free(&s);
    free(b.p);

    /* An enumeration of 40,000 values took 1.8 s: past 1,024 '|' held,
     * the parse stops. */
    b = (buf){0};
    buf_str(&b, "<!DOCTYPE urlset [<!ATTLIST url a (v0");
    for (unsigned i = 1; i < 40000; i++) {
        snprintf(a, sizeof a, "|v%u", i);
        buf_str(&b, a);
    }
    buf_str(&b, ") #IMPLIED>]><urlset><url><loc>http://a/1</loc></url></urlset>");
    s = run(b.p, b.len, NULL, 1000);
    ck_assert_int_eq(s.finish_status, SIEVE_ETOOLONG);
    ck_assert_uint_eq(s.st.pages, 0);
    ck_assert_uint_lt(s.st.bytes_out, 64 * 1024);
    sink_free(&s);
    free(b.p);
}
END_TEST

START_TEST(namespaces_in_scope_are_bounded)
{
    /* Every prefixed name is looked up through all namespaces in scope:
     * nested elements declaring 200 each stop the parse past 256. */
    buf b = {0};
    char a[64];
    buf_str(&b, "<urlset><url><loc>http://a/1</loc></url>");
    for (unsigned d = 0; d < 5; d++) {
        buf_str(&b, "<x");
        for (unsigned i = 0; i < 200; i++) {
            snprintf(a, sizeof a, " xmlns:n%u_%u=\"u\"", d, i);
            buf_str(&b, a);
        }
        buf_str(&b, ">");
    }
    buf_str(&b, "<url><loc>http://a/2</loc></url>");
    sink s = runs(b.p);
    ck_assert_int_eq(s.finish_status, SIEVE_ETOOLONG);
    ck_assert_str_eq(s.text, "P http://a/1\n");
    sink_free(&s);
    free(b.p);
}
END_TEST

START_TEST(sitemaps_must_keep_ascii)
{
    /* UTF-16 (libxml2 reads it through a converter) is not read. */
    static const char doc[] = "<?xml version=\"1.0\"?><urlset><url><loc>http://a/1</loc></url>"
                              "</urlset>";
    char w[2 * sizeof doc];
    for (size_t i = 0; i < sizeof doc - 1; i++) {
        w[2 * i] = doc[i];
        w[2 * i + 1] = 0;
    }
    sink s = run(w, 2 * (sizeof doc - 1), NULL, 0);
    ck_assert_int_eq(s.finish_status, SIEVE_EFORMAT);
    sink_free(&s);
    /* ISO-8859-1, declared, is. */
    s = runs("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>"
             "<urlset><url><loc>http://a/caf\xe9</loc></url></urlset>");
    ck_assert_int_eq(s.finish_status, SIEVE_OK);
    ck_assert_str_eq(s.text, "P http://a/caf\xc3\xa9\n");
    sink_free(&s);
}
END_TEST

START_TEST(not_a_sitemap)
{
#define CASE(doc, fails)                                                                           \
    {                                                                                              \
        doc, sizeof doc - 1, fails                                                                 \
    }
    /* feed_fails: known not to be a sitemap before the end (XML is parsed
     * in 16 KiB pieces, so a short document is judged at the end). */
    static const struct {
        const char *doc;
        size_t len;
        bool feed_fails;
    } cases[] = {
        CASE("", false),
        CASE(" \r\n\t ", false),
        CASE("hello, world\n", true),
        CASE("htt", false),
        CASE("ftp://a.example/x\n", true),
        CASE("\x1f", false),
        CASE("\x1f\x00\x01", true),
        CASE("\xef\xbb", false),
        CASE("\xef\xbbx<urlset/>", true),
        CASE("\x89PNG\r\n\x1a\n", true),
        CASE("<!DOCTYPE html><html><body><a href=\"/x\">x</a></body></html>", false),
        CASE("<rss version=\"2.0\"><channel><link>http://a/</link></channel></rss>", false),
        CASE("<?xml version=\"1.0\"?>", false),
        CASE("<<<<>>>>", false),
    };
#undef CASE
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (size_t step = 0; step < 2; step++) {
            sink s = run(cases[i].doc, cases[i].len, NULL, step);
            ck_assert_msg(s.finish_status == SIEVE_EFORMAT, "case %zu: %d", i, s.finish_status);
            ck_assert_msg(s.feed_status == (cases[i].feed_fails ? SIEVE_EFORMAT : SIEVE_OK),
                          "case %zu step %zu: feed %d", i, step, s.feed_status);
            ck_assert_uint_eq(s.calls, 0);
            ck_assert_int_eq(s.st.format, SIEVE_SITEMAP_UNKNOWN);
            sink_free(&s);
        }
    }
    /* Garbage, gzip-compressed. */
    buf z = gz("hello, world\n", 13);
    sink s = run(z.p, z.len, NULL, 0);
    ck_assert_int_eq(s.finish_status, SIEVE_EFORMAT);
    ck_assert(s.st.gzip);
    sink_free(&s);
    free(z.p);
}
END_TEST

static void count_entry(void *ctx, const sieve_sitemap_entry *e)
{
    (void)e;
    ++*(int *)ctx;
}

START_TEST(api_contract)
{
    int n = 0;
    sieve_sitemap *p = (sieve_sitemap *)&n;
    ck_assert_int_eq(sieve_sitemap_new(NULL, NULL, count_entry, &n), SIEVE_EINVAL);
    ck_assert_int_eq(sieve_sitemap_new(&p, NULL, NULL, &n), SIEVE_EINVAL);
    ck_assert_ptr_null(p);
    sieve_sitemap_opts o = {.max_loc = SIEVE_SITEMAP_MAX_LOC_LIMIT + 1};
    ck_assert_int_eq(sieve_sitemap_new(&p, &o, count_entry, &n), SIEVE_EINVAL);

    ck_assert_int_eq(sieve_sitemap_new(&p, NULL, count_entry, &n), SIEVE_OK);
    ck_assert_int_eq(sieve_sitemap_feed(NULL, "x", 1), SIEVE_EINVAL);
    ck_assert_int_eq(sieve_sitemap_feed(p, NULL, 1), SIEVE_EINVAL);
    ck_assert_int_eq(sieve_sitemap_feed(p, NULL, 0), SIEVE_OK);
    ck_assert_int_eq(sieve_sitemap_feed(p, "http://a/1\n", 11), SIEVE_OK);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(sieve_sitemap_finish(NULL), SIEVE_EINVAL);
    ck_assert_int_eq(sieve_sitemap_finish(p), SIEVE_OK);
    ck_assert_int_eq(sieve_sitemap_feed(p, "http://a/2\n", 11), SIEVE_ESTATE);
    ck_assert_int_eq(sieve_sitemap_feed(p, NULL, 0), SIEVE_ESTATE);
    ck_assert_int_eq(sieve_sitemap_finish(p), SIEVE_OK);
    ck_assert_int_eq(n, 1);
    sieve_sitemap_free(p);
    sieve_sitemap_free(NULL);

    /* Errors are sticky, and a second finish repeats the first. */
    ck_assert_int_eq(sieve_sitemap_new(&p, NULL, count_entry, &n), SIEVE_OK);
    ck_assert_int_eq(sieve_sitemap_feed(p, "nope", 4), SIEVE_EFORMAT);
    ck_assert_int_eq(sieve_sitemap_feed(p, "http://a/\n", 10), SIEVE_EFORMAT);
    ck_assert_int_eq(sieve_sitemap_finish(p), SIEVE_EFORMAT);
    ck_assert_int_eq(sieve_sitemap_finish(p), SIEVE_EFORMAT);
    ck_assert_int_eq(sieve_sitemap_feed(p, "x", 1), SIEVE_ESTATE);
    sieve_sitemap_free(p);

    /* Freed unfinished, in each format: nothing leaks, nothing more is
     * delivered. */
    const char *docs[] = {"<urlset><url><loc>http://a/x</loc>", "http://a/x", "\x1f\x8b\x08"};
    for (int i = 0; i < 3; i++) {
        n = 0;
        ck_assert_int_eq(sieve_sitemap_new(&p, NULL, count_entry, &n), SIEVE_OK);
        ck_assert_int_eq(sieve_sitemap_feed(p, docs[i], strlen(docs[i])), SIEVE_OK);
        sieve_sitemap_free(p);
        ck_assert_int_eq(n, 0);
    }
}
END_TEST

int main(void)
{
    sieve_sitemap_global_init();
    Suite *s = suite_create("sitemap");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, urlset_example);
    tcase_add_test(tc, sitemapindex_example);
    tcase_add_test(tc, namespaces_do_not_matter);
    tcase_add_test(tc, location_text);
    tcase_add_test(tc, text_sitemaps);
    tcase_add_test(tc, gzip_of_each_format);
    tcase_add_test(tc, gzip_members_trailers_and_damage);
    tcase_add_test(tc, chunking_changes_nothing);
    tcase_add_test(tc, entries_limit);
    tcase_add_test(tc, location_length_limit);
    tcase_add_test(tc, byte_limit_and_gzip_bomb);
    tcase_add_test(tc, unparsed_tail_is_bounded);
    tcase_add_test(tc, entity_bombs_do_not_expand);
    tcase_add_test(tc, external_entities_are_not_loaded);
    tcase_add_test(tc, malformed_xml_keeps_earlier_entries);
    tcase_add_test(tc, attributes_per_element_are_bounded);
    tcase_add_test(tc, doctype_costs_are_bounded);
    tcase_add_test(tc, namespaces_in_scope_are_bounded);
    tcase_add_test(tc, sitemaps_must_keep_ascii);
    tcase_add_test(tc, not_a_sitemap);
    tcase_add_test(tc, api_contract);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
