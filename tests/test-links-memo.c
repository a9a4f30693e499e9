/* test-links-memo.c - the memo of links pushed before: its keys tell apart
 * exactly what resolves apart, and an extractor given one skips what it
 * holds and nothing else. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sieve/sieve.h"

static sieve_canon *canon;

static void setup(void)
{
    ck_assert_int_eq(sieve_canon_new(&canon, NULL), SIEVE_OK);
}

static void teardown(void)
{
    sieve_canon_free(canon);
    canon = NULL;
}

enum { MAX_LINKS = 16 };

/* What one page gave: each delivered link's URL and key, and the stats. */
typedef struct got {
    int n;
    char url[MAX_LINKS][256];
    uint64_t key[MAX_LINKS];
    sieve_links_stats st;
} got;

static void on_link(void *ctx, const sieve_link *l)
{
    got *g = ctx;
    ck_assert_int_lt(g->n, MAX_LINKS);
    snprintf(g->url[g->n], sizeof g->url[g->n], "%s", l->status == SIEVE_OK ? l->url : "!");
    g->key[g->n++] = l->key;
}

static got extract(const char *page, const char *html, const sieve_links_memo *memo)
{
    got g = {0};
    sieve_links_opts o = {.canon = canon, .memo = memo, .report_errors = true};
    sieve_links *lx;
    ck_assert_int_eq(sieve_links_new(&lx, page, &o, on_link, &g), SIEVE_OK);
    ck_assert_int_eq(sieve_links_feed(lx, html, strlen(html)), SIEVE_OK);
    ck_assert_int_eq(sieve_links_finish(lx), SIEVE_OK);
    sieve_links_stats_get(lx, &g.st);
    sieve_links_free(lx);
    return g;
}

/* One href on one page: its key, and the URL it resolves to ("!" when
 * refused). */
static uint64_t key_of(const char *page, const char *href, char *url, size_t cap)
{
    char html[512];
    snprintf(html, sizeof html, "<a href=\"%s\">x</a>", href);
    got g = extract(page, html, NULL);
    ck_assert_int_eq(g.n, 1);
    if (url != NULL)
        snprintf(url, cap, "%s", g.url[0]);
    return g.key[0];
}

START_TEST(memo_contract)
{
    sieve_links_memo *m;
    ck_assert_int_eq(sieve_links_memo_new(NULL, 8), SIEVE_EINVAL);
    ck_assert_int_eq(sieve_links_memo_new(&m, 0), SIEVE_EINVAL);
    ck_assert_int_eq(sieve_links_memo_new(&m, (size_t)SIEVE_LINKS_MEMO_MAX + 1), SIEVE_EINVAL);
    ck_assert(!sieve_links_memo_has(NULL, 42));
    sieve_links_memo_add(NULL, 42); /* a no-op */
    ck_assert_int_eq(sieve_links_memo_new(&m, 1), SIEVE_OK);
    sieve_links_memo_add(m, 0);
    ck_assert(!sieve_links_memo_has(m, 0));
    sieve_links_memo_add(m, 42);
    ck_assert(sieve_links_memo_has(m, 42));
    ck_assert(!sieve_links_memo_has(m, 43));
    /* one slot: a newer key takes the older one's place */
    sieve_links_memo_add(m, 43);
    ck_assert(sieve_links_memo_has(m, 43));
    ck_assert(!sieve_links_memo_has(m, 42));
    sieve_links_memo_free(m);
    sieve_links_memo_free(NULL);
}
END_TEST

static const char *const pages[] = {
    "http://example.com/a/one.html",     "http://example.com/a/two.html?q=1",
    "http://example.com/b/three.html",   "http://other.example/a/one.html",
    "https://example.com/a/one.html",    "http://example.com/a/b/deep.html",
    "http://example.com:8080/a/one.html"};

static const char *const hrefs[] = {"x.html",
                                    "./x.html",
                                    "../x.html",
                                    "b/x.html",
                                    "/r.html",
                                    "/a/x.html",
                                    "//cdn.example/x",
                                    "http://abs.example/x",
                                    "HTTPS://abs.example/x",
                                    "?page=2",
                                    "#top",
                                    "",
                                    "x.html#frag",
                                    "mailto:a@example.com",
                                    "javascript:void(0)"};

enum { NPAGES = sizeof pages / sizeof *pages, NHREFS = sizeof hrefs / sizeof *hrefs };

/* Over every page and href: equal keys come only with equal URLs, and
 * the keys are shared where the href depends on no more than the pages
 * share. */
START_TEST(keys_follow_what_an_href_resolves_against)
{
    static uint64_t key[NPAGES][NHREFS];
    static char url[NPAGES][NHREFS][256];
    for (int p = 0; p < NPAGES; p++)
        for (int h = 0; h < NHREFS; h++) {
            key[p][h] = key_of(pages[p], hrefs[h], url[p][h], sizeof url[p][h]);
            ck_assert_msg(key[p][h] != 0, "no key for %s on %s", hrefs[h], pages[p]);
        }
    for (int p = 0; p < NPAGES; p++)
        for (int h = 0; h < NHREFS; h++)
            for (int q = 0; q < NPAGES; q++)
                for (int i = 0; i < NHREFS; i++)
                    if (key[p][h] == key[q][i] && strcmp(url[p][h], "!") != 0)
                        ck_assert_msg(strcmp(url[p][h], url[q][i]) == 0,
                                      "%s on %s and %s on %s share a key: %s, %s", hrefs[h],
                                      pages[p], hrefs[i], pages[q], url[p][h], url[q][i]);
    /* shared: a relative path within a directory, whatever the page's query */
    ck_assert(key[0][0] == key[1][0]);
    ck_assert(key[0][1] == key[1][1]);
    /* a root-relative path on one origin, in every directory */
    ck_assert(key[0][4] == key[2][4] && key[0][4] == key[5][4]);
    /* "//host" under one scheme, on every origin */
    ck_assert(key[0][6] == key[3][6] && key[0][6] == key[6][6]);
    /* an absolute URL everywhere */
    for (int p = 1; p < NPAGES; p++)
        ck_assert(key[p][7] == key[0][7]);
    /* not shared: the same relative path in another directory, on another
     * origin, under another scheme or port */
    ck_assert(key[0][0] != key[2][0] && key[0][0] != key[3][0] && key[0][0] != key[4][0] &&
              key[0][0] != key[6][0] && key[0][0] != key[5][0]);
    ck_assert(key[0][4] != key[3][4] && key[0][4] != key[4][4] && key[0][4] != key[6][4]);
    ck_assert(key[0][6] != key[4][6]);
    /* a query or a fragment depends on the whole page URL */
    ck_assert(key[0][9] != key[1][9]);
    ck_assert(key[0][10] != key[1][10]);
    /* a fragment-only href is the page itself, as "" is */
    ck_assert(key[0][10] == key[0][11]);
    /* an href with leading blanks has none */
    ck_assert(key_of(pages[0], " x.html", NULL, 0) == 0);
}
END_TEST

/* A second page of the same directory delivers only what the memo lacks;
 * a page in another directory is not fooled by the same relative href. */
START_TEST(an_extractor_skips_what_the_memo_holds)
{
    sieve_links_memo *m;
    ck_assert_int_eq(sieve_links_memo_new(&m, 1024), SIEVE_OK);
    got one = extract("http://example.com/a/one.html",
                      "<a href=\"x.html\">x</a><a href=\"/r.html\">r</a>"
                      "<a href=\"http://abs.example/\">a</a>",
                      m);
    ck_assert_int_eq(one.n, 3);
    ck_assert_uint_eq(one.st.known, 0);
    for (int i = 0; i < one.n; i++)
        sieve_links_memo_add(m, one.key[i]);

    got two = extract("http://example.com/a/two.html",
                      "<a href=\"x.html\">x</a><a href=\"/r.html\">r</a>"
                      "<a href=\"new.html\">n</a><a href=\"http://abs.example/\">a</a>",
                      m);
    ck_assert_int_eq(two.n, 1);
    ck_assert_str_eq(two.url[0], "http://example.com/a/new.html");
    ck_assert_uint_eq(two.st.known, 3);
    ck_assert_uint_eq(two.st.found, 4);
    ck_assert_uint_eq(two.st.passed, 1);

    got three = extract("http://example.com/b/three.html",
                        "<a href=\"x.html\">x</a><a href=\"/r.html\">r</a>", m);
    ck_assert_int_eq(three.n, 1);
    ck_assert_str_eq(three.url[0], "http://example.com/b/x.html");
    ck_assert_uint_eq(three.st.known, 1);
    sieve_links_memo_free(m);
}
END_TEST

/* A <base href> moves the relative links after it to another directory:
 * they get keys of that directory. */
START_TEST(a_base_href_changes_the_keys_after_it)
{
    sieve_links_memo *m;
    ck_assert_int_eq(sieve_links_memo_new(&m, 1024), SIEVE_OK);
    sieve_links_memo_add(m, key_of("http://example.com/a/one.html", "x.html", NULL, 0));
    got g = extract("http://example.com/a/one.html",
                    "<a href=\"x.html\">x</a><base href=\"/c/\"><a href=\"x.html\">x</a>", m);
    ck_assert_int_eq(g.n, 1);
    ck_assert_str_eq(g.url[0], "http://example.com/c/x.html");
    ck_assert(g.key[0] == key_of("http://example.com/c/page.html", "x.html", NULL, 0));
    ck_assert_uint_eq(g.st.known, 1);
    sieve_links_memo_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("links-memo");
    TCase *tc = tcase_create("links-memo");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, memo_contract);
    tcase_add_test(tc, keys_follow_what_an_href_resolves_against);
    tcase_add_test(tc, an_extractor_skips_what_the_memo_holds);
    tcase_add_test(tc, a_base_href_changes_the_keys_after_it);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
