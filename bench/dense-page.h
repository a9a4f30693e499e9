/* dense-page.h - the pages of the dense benchmark site, written into
 * memory, with a record of every link written: shared by the site
 * generator (bench/gen-dense.c), the cost driver (bench/links-cost.c) and
 * the extraction test (tests/test-links-dense.c), so that all three see
 * the same bytes.
 *
 * The light site of bench/gen-site.c is what sieve and wget2 run even on.
 * Real sites are heavier, and where a crawler spends its CPU is decided by
 * the heavy tail. The shape below is that of the documentation site
 * measured in issue 14 (about 21,600 pages served by nginx, 2 million
 * links): most pages small, a tail of API-reference and index pages of
 * megabytes. Where a figure comes from:
 *
 *   measured on that site (issue 14):
 *     - median page about 5 KB with about 15 links;
 *     - a tail of pages of 1-3 MB with 10,000-25,000 links;
 *     - about a seventh of all links fragment-only (#anchors);
 *     - the same link repeated many times on a page; inline scripts and
 *       styles.
 *   Opera's MAMA survey of 3.5 million pages ("MAMA: the average Web page",
 *   dev.opera.com, 2008): the average document holds at least one
 *   character entity, about a dozen comments, and markup is about 62% of
 *   its characters. The filler below keeps markup at roughly half of the
 *   bytes outside scripts and styles, and writes entities and comments.
 *   the project's own choices (no source gives them):
 *     - heavy pages are 1% of the pages (the brief range was 1-2%; at 1%
 *       the site has about 190 links a page on average, against the
 *       measured site's 93, so it errs on the heavy side);
 *     - light pages: links log-normal with median 15 and sigma 0.8 (3 to
 *       400), bytes per link log-normal with median 333 and sigma 0.5, so
 *       bytes have median 5 KB; at least 60 bytes of markup a link plus
 *       the head;
 *     - heavy pages: links uniform in 10,000..25,000, 100..120 bytes a
 *       link, so 1.0-3.0 MB;
 *     - of the links that are not fragment-only: 1% javascript: or mailto:
 *       (refused by a crawler), then 30% (light) or 60% (heavy) repeat
 *       the href of an earlier link of the page byte for byte (picked
 *       uniformly among the earlier links, so popular ones get more
 *       popular), the rest name a new page: 15% one of the site's first
 *       50 pages (the hubs every page links to), 40% a neighbour within
 *       50 of the page, 45% any page;
 *     - a new href is relative (60%: "17.html", "./17.html",
 *       "../4/4017.html", "../../d/4/4017.html"), root-relative (25%) or
 *       absolute (15%), 30% with a "#fragment" (a few with "&#45;" for
 *       its '-'), 2% with blanks around it (trimmed by a parser). No
 *       character reference is written in a path: wget2 1.99 does not
 *       decode them in href values (it asked for "/d/0/107&" where a page
 *       said "107&#46;html"), so such links would only send it to 404s a
 *       browser never asks for;
 *     - every tenth page links one of PAGES/100 missing pages (404);
 *     - about 8% of a light page's bytes are an inline <style> and 7% an
 *       inline <script> (20 KB and 30 KB on a heavy page); elements carry
 *       class, id, data-* and aria-* attributes; text carries &amp;,
 *       &lt;, &nbsp;, &#8212; and &rarr;.
 *
 * Every draw comes from a splitmix64 generator seeded with the site seed
 * and the page number, so a page is the same byte for byte for the same
 * PAGES, PORT and seed, whichever program writes it. */
#ifndef SIEVE_BENCH_DENSE_PAGE_H
#define SIEVE_BENCH_DENSE_PAGE_H

#include <math.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DENSE_PER_DIR 1000
#define DENSE_HUBS    50

typedef struct dense_site {
    long pages, port, missing;
    uint64_t seed;
} dense_site;

/* Where a link written on a page leads, once resolved. */
enum dense_kind {
    DENSE_PAGE,    /* page id */
    DENSE_INDEX,   /* /index.html */
    DENSE_MISSING, /* /gone/id.html */
    DENSE_REFUSED, /* javascript: or mailto: */
};

typedef struct dense_rec {
    enum dense_kind kind;
    long id;
} dense_rec;

typedef struct dense_page {
    char *p; /* the page's bytes */
    size_t len, cap;
    dense_rec *rec; /* one per <a> written, in order */
    size_t nrec, rec_cap;
    size_t *href_off, *href_len; /* earlier hrefs, for repeats */
    size_t frag_only, repeated;  /* counts, for the statistics */
    bool failed;                 /* out of memory */
} dense_page;

static inline uint64_t dense_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static inline double dense_unit(uint64_t *s)
{
    return (double)(dense_rand(s) >> 11) / 9007199254740992.0;
}

static inline long dense_below(uint64_t *s, long n)
{
    return n > 0 ? (long)(dense_rand(s) % (uint64_t)n) : 0;
}

/* Log-normal with the given median and sigma (Box-Muller). */
static inline double dense_lognormal(uint64_t *s, double median, double sigma)
{
    double u1 = dense_unit(s), u2 = dense_unit(s);
    double z = sqrt(-2.0 * log(1.0 - u1)) * cos(2.0 * 3.14159265358979323846 * u2);
    return median * exp(sigma * z);
}

static inline void dense_grow(dense_page *pg, size_t more)
{
    if (pg->failed || pg->len + more <= pg->cap)
        return;
    size_t cap = pg->cap ? pg->cap : 65536;
    while (cap < pg->len + more)
        cap *= 2;
    char *p = realloc(pg->p, cap);
    if (!p) {
        pg->failed = true;
        return;
    }
    pg->p = p;
    pg->cap = cap;
}

static inline void dense_put(dense_page *pg, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static inline void dense_put(dense_page *pg, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char small[512];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof small)
        return;
    dense_grow(pg, (size_t)n + 1);
    if (pg->failed)
        return;
    memcpy(pg->p + pg->len, small, (size_t)n + 1);
    pg->len += (size_t)n;
}

static inline void dense_bytes(dense_page *pg, const char *s, size_t n)
{
    dense_grow(pg, n + 1);
    if (pg->failed)
        return;
    memcpy(pg->p + pg->len, s, n);
    pg->len += n;
    pg->p[pg->len] = '\0';
}

static inline void dense_record(dense_page *pg, enum dense_kind kind, long id, size_t off,
                                size_t len)
{
    if (pg->failed)
        return;
    if (pg->nrec == pg->rec_cap) {
        size_t cap = pg->rec_cap ? 2 * pg->rec_cap : 64;
        dense_rec *r = realloc(pg->rec, cap * sizeof *r);
        size_t *o = realloc(pg->href_off, cap * sizeof *o);
        if (o)
            pg->href_off = o;
        size_t *l = realloc(pg->href_len, cap * sizeof *l);
        if (l)
            pg->href_len = l;
        if (r)
            pg->rec = r;
        if (!r || !o || !l) {
            pg->failed = true;
            return;
        }
        pg->rec_cap = cap;
    }
    pg->rec[pg->nrec] = (dense_rec){kind, id};
    pg->href_off[pg->nrec] = off;
    pg->href_len[pg->nrec] = len;
    pg->nrec++;
}

static inline void dense_page_free(dense_page *pg)
{
    free(pg->p);
    free(pg->rec);
    free(pg->href_off);
    free(pg->href_len);
    *pg = (dense_page){0};
}

/* Whether page i is one of the heavy tail, and its link and byte
 * targets. */
static inline bool dense_shape(const dense_site *s, long i, long *links, size_t *bytes)
{
    uint64_t r = s->seed ^ ((uint64_t)i * 0xd1b54a32d192ed03ULL);
    dense_rand(&r);
    bool heavy = dense_unit(&r) < 0.01;
    if (heavy) {
        *links = 10000 + dense_below(&r, 15001);
        *bytes = (size_t)*links * (size_t)(100 + dense_below(&r, 21));
        return true;
    }
    double l = dense_lognormal(&r, 15.0, 0.8);
    *links = l < 3 ? 3 : l > 400 ? 400 : (long)l;
    double b = (double)*links * dense_lognormal(&r, 333.0, 0.5);
    size_t least = (size_t)*links * 60 + 1200;
    *bytes = b < (double)least ? least : (size_t)b;
    return false;
}

static const char *const dense_words[] = {
    "returns",  "the",    "value",    "of",     "a",          "given",  "type",   "and",
    "iterator", "over",   "slice",    "buffer", "string",     "error",  "option", "result",
    "trait",    "method", "function", "module", "implements", "borrow", "clone",  "default",
    "panics",   "if",     "index",    "is",     "out",        "bounds", "safety", "example",
};

static const char *const dense_entities[] = {"&amp;", "&lt;", "&nbsp;", "&#8212;", "&rarr;"};

/* About n bytes of mixed text and inline markup, as between two links. */
static inline void dense_filler(dense_page *pg, uint64_t *r, size_t n, long *section)
{
    size_t stop = pg->len + n;
    while (pg->len < stop && !pg->failed) {
        unsigned k = (unsigned)dense_below(r, 100);
        if (k < 55) {
            dense_put(pg, "%s ", dense_words[dense_below(r, 32)]);
        } else if (k < 60) {
            dense_put(pg, "%s ", dense_entities[dense_below(r, 5)]);
        } else if (k < 78) {
            dense_put(pg, "<span class=\"tok-%s hl\" data-line=\"%ld\">%s</span> ",
                      dense_words[dense_below(r, 32)], dense_below(r, 900),
                      dense_words[dense_below(r, 32)]);
        } else if (k < 90) {
            dense_put(pg, "<code class=\"inline\">%s::%s()</code> ",
                      dense_words[dense_below(r, 32)], dense_words[dense_below(r, 32)]);
        } else if (k < 97) {
            dense_put(pg, "</p>\n<p class=\"docblock\" data-kind=\"para\">");
        } else if (k < 99) {
            ++*section;
            dense_put(pg,
                      "</p>\n<h3 id=\"sec-%ld\" class=\"section-header\" role=\"heading\" "
                      "aria-level=\"3\" data-anchor=\"sec-%ld\" tabindex=\"-1\">Section %ld</h3>\n"
                      "<p class=\"docblock\">",
                      *section, *section, *section);
        } else {
            dense_put(pg, "<!-- generated: %s %ld -->", dense_words[dense_below(r, 32)],
                      dense_below(r, 100000));
        }
    }
}

/* n bytes of inline style or script, made of repeated rules. */
static inline void dense_block(dense_page *pg, uint64_t *r, size_t n, bool script)
{
    size_t stop = pg->len + n;
    dense_put(pg, script ? "<script>\n" : "<style>\n");
    while (pg->len < stop && !pg->failed) {
        long a = dense_below(r, 1000), b = dense_below(r, 1000);
        if (script)
            dense_put(pg,
                      "  if (idx%ld < len && items[%ld] !== \"<\\/span>\") "
                      "{ search.add(\"%s\", %ld); }\n",
                      a, b, dense_words[dense_below(r, 32)], a);
        else
            dense_put(pg,
                      ".tok-%s.hl-%ld > a:hover, .docblock code[data-line=\"%ld\"] "
                      "{ color: #%06lx; margin: 0 %ldpx; }\n",
                      dense_words[dense_below(r, 32)], a, b, (long)(dense_rand(r) & 0xffffff),
                      a % 16);
    }
    dense_put(pg, script ? "</script>\n" : "</style>\n");
}

/* The href of page j as written on page i, in a form drawn from r. */
static inline void dense_href_page(dense_page *pg, const dense_site *s, uint64_t *r, long i, long j)
{
    long di = i / DENSE_PER_DIR, dj = j / DENSE_PER_DIR;
    const char *html = ".html";
    unsigned form = (unsigned)dense_below(r, 20);
    if (form < 6 && di == dj)
        dense_put(pg, "%ld%s", j, html);
    else if (form < 6)
        dense_put(pg, "../%ld/%ld%s", dj, j, html);
    else if (form < 9 && di == dj)
        dense_put(pg, "./%ld%s", j, html);
    else if (form < 9)
        dense_put(pg, "./../%ld/%ld%s", dj, j, html);
    else if (form < 12)
        dense_put(pg, "../../d/%ld/%ld%s", dj, j, html);
    else if (form < 17)
        dense_put(pg, "/d/%ld/%ld%s", dj, j, html);
    else
        dense_put(pg, "http://127.0.0.1:%ld/d/%ld/%ld%s", s->port, dj, j, html);
    if (dense_unit(r) < 0.3) {
        if (dense_below(r, 2))
            dense_put(pg, "#sec%s%ld", dense_unit(r) < 0.03 ? "&#45;" : "-", dense_below(r, 40));
        else
            dense_put(pg, "#method.%s", dense_words[dense_below(r, 32)]);
    }
}

/* With probability p, an earlier link of the page whose href may be
 * written again: not refused, not the page itself (a fragment-only link
 * drawn again is one more fragment-only link, counted as such). -1 for
 * none. */
static inline long dense_earlier(const dense_page *pg, uint64_t *r, long i, double p)
{
    if (pg->nrec == 0 || dense_unit(r) >= p)
        return -1;
    for (long k = dense_below(r, (long)pg->nrec); k >= 0; k--) {
        const dense_rec *e = &pg->rec[k];
        if (e->kind != DENSE_REFUSED && !(e->kind == DENSE_PAGE && e->id == i))
            return k;
    }
    return -1;
}

/* One <a>, its href drawn as the header says; recorded in pg. */
static inline void dense_link(dense_page *pg, const dense_site *s, uint64_t *r, long i, bool heavy,
                              long section)
{
    dense_put(pg, "<a class=\"%s\" ", dense_below(r, 2) ? "fn" : "struct");
    if (dense_below(r, 3) == 0)
        dense_put(pg, "title=\"%s &amp; %s\" ", dense_words[dense_below(r, 32)],
                  dense_words[dense_below(r, 32)]);
    dense_put(pg, "href=\"");
    bool blanks = dense_unit(r) < 0.02;
    if (blanks)
        dense_put(pg, " \n");
    size_t off = pg->len;
    enum dense_kind kind = DENSE_PAGE;
    long id = i, k;
    double u = dense_unit(r);
    if (u < 1.0 / 7) {
        /* fragment-only: the page itself */
        k = dense_below(r, 8);
        if (k == 0)
            dense_put(pg, "#");
        else if (k == 1)
            dense_put(pg, "#top");
        else
            dense_put(pg, "#sec-%ld", dense_below(r, section + 1));
        pg->frag_only++;
    } else if (dense_unit(r) < 0.01) {
        kind = DENSE_REFUSED;
        dense_put(pg, dense_below(r, 2) ? "javascript:void(0)" : "mailto:docs@example.org");
    } else if ((k = dense_earlier(pg, r, i, heavy ? 0.6 : 0.3)) >= 0) {
        dense_grow(pg, pg->href_len[k] + 1);
        if (!pg->failed)
            dense_bytes(pg, pg->p + pg->href_off[k], pg->href_len[k]);
        kind = pg->rec[k].kind;
        id = pg->rec[k].id;
        pg->repeated++;
    } else {
        double v = dense_unit(r);
        long hubs = s->pages < DENSE_HUBS ? s->pages : DENSE_HUBS;
        if (v < 0.15)
            id = dense_below(r, hubs);
        else if (v < 0.55)
            id = (i - 50 + dense_below(r, 101) + s->pages) % s->pages;
        else
            id = dense_below(r, s->pages);
        dense_href_page(pg, s, r, i, id);
    }
    size_t len = pg->len - off;
    if (blanks)
        dense_put(pg, "  ");
    dense_put(pg, "\">%s</a>", dense_words[dense_below(r, 32)]);
    dense_record(pg, kind, id, off, len);
}

/* Writes page i into pg (emptied first). */
static inline void dense_write(dense_page *pg, const dense_site *s, long i)
{
    pg->len = 0;
    pg->nrec = 0;
    pg->frag_only = pg->repeated = 0;
    long links;
    size_t bytes;
    bool heavy = dense_shape(s, i, &links, &bytes);
    uint64_t r = s->seed ^ ((uint64_t)(i + 1) * 0x2545f4914f6cdd1dULL);
    dense_grow(pg, bytes + 4096);
    dense_put(pg,
              "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
              "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1.0\">"
              "<title>Page %ld &mdash; API &amp; guide</title>\n",
              i);
    size_t style = heavy ? 20000 : bytes * 8 / 100, script = heavy ? 30000 : bytes * 7 / 100;
    dense_block(pg, &r, style, false);
    dense_put(pg,
              "</head>\n<body class=\"rustdoc mod\" data-page=\"%ld\">\n"
              "<nav class=\"sidebar\" id=\"top\" role=\"navigation\" aria-label=\"Site\">\n",
              i);
    /* The next page first, so that every page is reachable. */
    if (i + 1 < s->pages) {
        dense_put(pg, "<a href=\"");
        size_t off = pg->len;
        dense_href_page(pg, s, &r, i, i + 1);
        dense_record(pg, DENSE_PAGE, i + 1, off, pg->len - off);
        dense_put(pg, "\" rel=\"next\">next</a>\n");
    } else {
        dense_put(pg, "<a href=\"");
        size_t off = pg->len;
        dense_put(pg, "/index.html");
        dense_record(pg, DENSE_INDEX, 0, off, pg->len - off);
        dense_put(pg, "\">home</a>\n");
    }
    if (i % 10 == 0) {
        long k = dense_below(&r, s->missing);
        dense_put(pg, "<a href=\"");
        size_t off = pg->len;
        dense_put(pg, "/gone/%ld.html", k);
        dense_record(pg, DENSE_MISSING, k, off, pg->len - off);
        dense_put(pg, "\">gone</a>\n");
    }
    dense_put(pg, "</nav>\n<main id=\"main-content\" class=\"content\">\n<p class=\"docblock\">");
    size_t head = pg->len;
    size_t room = bytes > head + script ? bytes - head - script : 0;
    long section = 0, n = (long)pg->nrec;
    for (long k = n; k < links && !pg->failed; k++) {
        dense_link(pg, s, &r, i, heavy, section);
        /* Filled up to where the page should be after this link, so that
         * no overshoot adds up over thousands of links. */
        size_t until = head + (size_t)((double)room * (double)(k + 1) / (double)links);
        if (until > pg->len)
            dense_filler(pg, &r, until - pg->len, &section);
    }
    dense_put(pg, "</p>\n</main>\n");
    dense_block(pg, &r, script, true);
    dense_put(pg, "</body></html>\n");
}

#endif
