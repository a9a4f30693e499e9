/* test-robots.c - robots.txt parsing and matching against RFC 9309.
 *
 * The RFC's own examples come first (section 5 files, the section 2.2.2
 * percent-encoding table, the section 2.2.3 special characters), then a
 * table of tricky inputs, one loop iteration each so a failure names its
 * row. The matcher is also checked against a brute-force reference on
 * random small patterns and paths: the greedy one-backtrack algorithm is
 * easy to get subtly wrong, a dynamic-programming table is not. */
#include <check.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sieve/sieve.h"

static sieve_robots *parse_n(const char *body, size_t len, const char *product)
{
    sieve_robots *r = NULL;
    ck_assert_int_eq(sieve_robots_parse(&r, body, len, product), SIEVE_OK);
    ck_assert_ptr_nonnull(r);
    return r;
}

static sieve_robots *parse(const char *body, const char *product)
{
    return parse_n(body, strlen(body), product);
}

static bool allowed(const sieve_robots *r, const char *path)
{
    return sieve_robots_allowed(r, path, strlen(path));
}

#define EXPECT(r, path, want)                                                                      \
    ck_assert_msg(allowed((r), (path)) == (want), "%s: expected %s", (path),                       \
                  (want) ? "allowed" : "disallowed")

/* ---- RFC 9309 section 5 ---- */

static const char rfc_simple[] = "User-Agent: *\n"
                                 "Disallow: *.gif$\n"
                                 "Disallow: /example/\n"
                                 "Allow: /publications/\n"
                                 "\n"
                                 "User-Agent: foobot\n"
                                 "Disallow:/\n"
                                 "Allow:/example/page.html\n"
                                 "Allow:/example/allowed.gif\n"
                                 "\n"
                                 "User-Agent: barbot\n"
                                 "User-Agent: bazbot\n"
                                 "Disallow: /example/page.html\n"
                                 "\n"
                                 "User-Agent: quxbot\n"
                                 "\n";

START_TEST(rfc_simple_example_star)
{
    sieve_robots *r = parse(rfc_simple, "otherbot");
    EXPECT(r, "/", true);
    EXPECT(r, "/example/", false);
    EXPECT(r, "/example/page.html", false);
    EXPECT(r, "/publications/", true);
    EXPECT(r, "/publications/a.html", true);
    EXPECT(r, "/images/a.gif", false);
    EXPECT(r, "/a.gif", false);
    EXPECT(r, "/a.gif?size=2", true);
    EXPECT(r, "/a.gifs", true);
    sieve_robots_stats st;
    sieve_robots_stats_get(r, &st);
    ck_assert_uint_eq(st.groups, 4);
    ck_assert(!st.matched_product);
    ck_assert(st.matched_star);
    ck_assert_uint_eq(st.rules, 3);
    sieve_robots_free(r);
}
END_TEST

START_TEST(rfc_simple_example_foobot)
{
    sieve_robots *r = parse(rfc_simple, "foobot");
    EXPECT(r, "/", false);
    EXPECT(r, "/publications/", false);
    EXPECT(r, "/example/page.html", true);
    EXPECT(r, "/example/allowed.gif", true);
    EXPECT(r, "/example/other.gif", false);
    EXPECT(r, "/robots.txt", true);
    sieve_robots_stats st;
    sieve_robots_stats_get(r, &st);
    ck_assert(st.matched_product);
    ck_assert(!st.matched_star);
    ck_assert_uint_eq(st.rules, 3);
    sieve_robots_free(r);
}
END_TEST

START_TEST(rfc_simple_example_barbot_bazbot)
{
    static const char *const bots[] = {"barbot", "bazbot", "BazBot"};
    for (size_t i = 0; i < 3; i++) {
        sieve_robots *r = parse(rfc_simple, bots[i]);
        EXPECT(r, "/example/page.html", false);
        EXPECT(r, "/example/page.html?x=1", false);
        /* The "*" group's rules do not apply to a bot with its own group. */
        EXPECT(r, "/example/other.html", true);
        EXPECT(r, "/a.gif", true);
        sieve_robots_free(r);
    }
}
END_TEST

START_TEST(rfc_simple_example_quxbot)
{
    /* quxbot's group has no rules: everything is allowed, and the "*"
     * group does not apply either. */
    sieve_robots *r = parse(rfc_simple, "quxbot");
    EXPECT(r, "/", true);
    EXPECT(r, "/example/page.html", true);
    EXPECT(r, "/a.gif", true);
    sieve_robots_stats st;
    sieve_robots_stats_get(r, &st);
    ck_assert(st.matched_product);
    ck_assert_uint_eq(st.rules, 0);
    sieve_robots_free(r);
}
END_TEST

START_TEST(rfc_longest_match_example)
{
    sieve_robots *r = parse("User-Agent: foobot\n"
                            "Allow: /example/page/\n"
                            "Disallow: /example/page/disallowed.gif\n",
                            "foobot");
    EXPECT(r, "/example/page/", true);
    EXPECT(r, "/example/page/allowed.gif", true);
    EXPECT(r, "/example/page/disallowed.gif", false);
    EXPECT(r, "/example/", true);
    sieve_robots_free(r);
}
END_TEST

/* ---- RFC 9309 sections 2.2.2 and 2.2.3: percent-encoding ---- */

/* A file with one Disallow rule for everyone. */
static sieve_robots *disallow_one(const char *pattern)
{
    char body[512];
    snprintf(body, sizeof body, "User-agent: *\nDisallow: %s\n", pattern);
    return parse(body, "sieve");
}

struct pct_case {
    const char *pattern;
    const char *path;
    bool blocked;
};

static const struct pct_case pct_cases[] = {
    /* Table 1 of section 2.2.2. */
    {"/foo/bar?baz=quz", "/foo/bar?baz=quz", true},
    {"/foo/bar?baz=https://quz", "/foo/bar?baz=https://quz", true},
    {"/foo/bar?baz=https%3A%2F%2Fquz", "/foo/bar?baz=https%3a%2f%2fquz", true},
    {"/foo/bar/\xE3\x83\x84", "/foo/bar/%E3%83%84", true},
    {"/foo/bar/\xE3\x83\x84", "/foo/bar/%e3%83%84", true},
    {"/foo/bar/\xE3\x83\x84", "/foo/bar/\xE3\x83\x84", true},
    {"/foo/bar/%E3%83%84", "/foo/bar/\xE3\x83\x84", true},
    {"/foo/bar/%E3%83%84", "/foo/bar/%E3%83%84", true},
    {"/foo/bar/%62%61%7A", "/foo/bar/baz", true},
    {"/foo/bar/baz", "/foo/bar/%62%61%7A", true},
    {"/foo/bar/%62%61%7A", "/foo/bar/%62%61%7a", true},
    /* Reserved characters and their escapes name different resources
     * (RFC 3986 section 6.2.2.2): kept apart. */
    {"/foo/bar?baz=https://quz", "/foo/bar?baz=https%3A%2F%2Fquz", false},
    {"/a%2Fb", "/a/b", false},
    {"/a/b", "/a%2Fb", false},
    {"/a%2Fb", "/a%2fb", true},
    {"/%7Ejoe", "/~joe", true},
    {"/~joe", "/%7ejoe", true},
    {"/~joe", "/%7Ejoe/index.html", true},
    /* Section 2.2.3: literal '*' and '$' are written %2A and %24. */
    {"/path/file-with-a-%2A.html", "/path/file-with-a-*.html", true},
    {"/path/file-with-a-%2A.html", "/path/file-with-a-%2A.html", true},
    {"/path/file-with-a-%2A.html", "/path/file-with-a-x.html", false},
    {"/path/foo-%24", "/path/foo-$", true},
    {"/path/foo-%24", "/path/foo-", false},
    /* Spaces and a stray '%' are compared in their escaped form. */
    {"/a b", "/a%20b", true},
    {"/100%", "/100%25", true},
    {"/100%25", "/100%", true},
};

START_TEST(rfc_percent_encoding)
{
    const struct pct_case *c = &pct_cases[_i];
    sieve_robots *r = disallow_one(c->pattern);
    ck_assert_msg(allowed(r, c->path) == !c->blocked, "pattern '%s', path '%s': expected %s",
                  c->pattern, c->path, c->blocked ? "disallowed" : "allowed");
    sieve_robots_free(r);
}
END_TEST

START_TEST(rfc_special_characters)
{
    sieve_robots *r = parse("User-agent: *\n"
                            "Disallow: /\n"
                            "Allow: / # comment\n"
                            "Disallow: /this/path/exactly$\n"
                            "Disallow: /this/*/exactly\n",
                            "sieve");
    /* "Allow: /" ties "Disallow: /" and wins. */
    EXPECT(r, "/anything", true);
    EXPECT(r, "/this/path/exactly", false);
    EXPECT(r, "/this/path/exactly/", false); /* caught by the '*' rule */
    EXPECT(r, "/this/path/exactlyx", false);
    EXPECT(r, "/this/a/b/exactly", false);
    EXPECT(r, "/this/path/exact", true);
    sieve_robots_free(r);
}
END_TEST

/* ---- tricky inputs ---- */

struct tricky {
    const char *what;
    const char *body;
    const char *path;
    bool allowed; /* for product "foobot" */
};

#define LONG_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

static const struct tricky tricky_cases[] = {
    {"empty file", "", "/x", true},
    {"only comments", "# User-agent: *\n# Disallow: /\n", "/x", true},
    {"only blank lines", "\n\r\n\r  \t\n", "/x", true},
    {"BOM", "\xEF\xBB\xBFUser-agent: *\nDisallow: /x\n", "/x", false},
    {"BOM, other path", "\xEF\xBB\xBFUser-agent: *\nDisallow: /x\n", "/y", true},
    {"CRLF", "User-agent: *\r\nDisallow: /x$\r\n", "/x", false},
    {"CRLF, anchor is not eaten by CR", "User-agent: *\r\nDisallow: /x$\r\n", "/xy", true},
    {"lone CR", "User-agent: *\rDisallow: /x\rAllow: /x/y\r", "/x/z", false},
    {"lone CR, second rule", "User-agent: *\rDisallow: /x\rAllow: /x/y\r", "/x/y", true},
    {"no final line end", "User-agent: *\nDisallow: /x", "/x", false},
    {"mixed-case fields", "USER-AGENT: FooBot\nDISALLOW: /a\nallow: /a/b\n", "/a/c", false},
    {"mixed-case fields, allow", "USER-AGENT: FooBot\nDISALLOW: /a\nallow: /a/b\n", "/a/b", true},
    {"blanks around name and value", "  user-agent :  foobot  \n\t disallow\t:\t/a  # c\n", "/a",
     false},
    {"comment cuts the value", "User-agent: *\nDisallow: /a#b\n", "/ab", false},
    {"line without colon ignored", "User-agent: *\nDisallow /x\nDisallow: /y\n", "/x", true},
    {"line without colon, next line kept", "User-agent: *\nDisallow /x\nDisallow: /y\n", "/y",
     false},
    {"unknown field ignored", "User-agent: *\nNoindex: /x\nDisallow: /y\n", "/x", true},
    {"misspelling not required", "User-agent: *\nDissallow: /x\n", "/x", true},
    {"rule before any group ignored", "Disallow: /\nUser-agent: foobot\nDisallow: /x\n", "/y",
     true},
    {"several groups naming us, first",
     "User-agent: foobot\nDisallow: /a\n\n"
     "User-agent: other\nDisallow: /b\n\n"
     "User-agent: FOOBOT\nDisallow: /c\n",
     "/a", false},
    {"several groups naming us, last",
     "User-agent: foobot\nDisallow: /a\n\n"
     "User-agent: other\nDisallow: /b\n\n"
     "User-agent: FOOBOT\nDisallow: /c\n",
     "/c", false},
    {"several groups naming us, not the other",
     "User-agent: foobot\nDisallow: /a\n\n"
     "User-agent: other\nDisallow: /b\n\n"
     "User-agent: FOOBOT\nDisallow: /c\n",
     "/b", true},
    {"ours and *: only ours", "User-agent: *\nDisallow: /\n\nUser-agent: foobot\nDisallow: /p\n",
     "/q", true},
    {"ours and *: ours", "User-agent: *\nDisallow: /\n\nUser-agent: foobot\nDisallow: /p\n", "/p",
     false},
    {"consecutive user-agents form one group", "User-agent: a\nUser-agent: foobot\nDisallow: /x\n",
     "/x", false},
    {"user-agent after rules starts a group",
     "User-agent: foobot\nDisallow: /x\nUser-agent: other\nDisallow: /y\n", "/y", true},
    {"sitemap does not split the agents",
     "User-agent: other\nSitemap: http://h/s.xml\nUser-agent: foobot\nDisallow: /x\n", "/x", false},
    {"product token with version", "User-agent: FooBot/2.1 (+http://h/bot)\nDisallow: /\n", "/x",
     false},
    {"longer token is another bot", "User-agent: foobotx\nDisallow: /\n", "/x", true},
    {"shorter token is another bot", "User-agent: foo\nDisallow: /\n", "/x", true},
    {"star with trailing text", "User-agent: *  all\nDisallow: /\n", "/x", false},
    {"star glued to a name is not star", "User-agent: *bot\nDisallow: /\n", "/x", true},
    {"no applicable group", "User-agent: other\nDisallow: /\n", "/x", true},
    {"empty disallow means nothing", "User-agent: *\nDisallow:\n", "/x", true},
    {"empty disallow, blanks", "User-agent: *\nDisallow:   # nothing\n", "/", true},
    {"empty allow means nothing", "User-agent: *\nDisallow: /\nAllow:\n", "/x", false},
    {"*.php$ matches .php", "User-agent: *\nDisallow: /*.php$\n", "/a.php", false},
    {"*.php$ matches deep .php", "User-agent: *\nDisallow: /*.php$\n", "/a/b/c.php", false},
    {"*.php$ not with a query", "User-agent: *\nDisallow: /*.php$\n", "/a.php?x", true},
    {"*.php$ not .phps", "User-agent: *\nDisallow: /*.php$\n", "/a.phps", true},
    {"*.php without $ takes a query", "User-agent: *\nDisallow: /*.php\n", "/a.php?x", false},
    {"/fish* matches /fish", "User-agent: *\nDisallow: /fish*\n", "/fish", false},
    {"/fish* matches /fishheads", "User-agent: *\nDisallow: /fish*\n", "/fishheads/x", false},
    {"/fish* is case-sensitive", "User-agent: *\nDisallow: /fish*\n", "/Fish", true},
    {"/fish matches /fish.html", "User-agent: *\nDisallow: /fish\n", "/fish.html", false},
    {"/fish$ only /fish", "User-agent: *\nDisallow: /fish$\n", "/fish", false},
    {"/fish$ not /fish/", "User-agent: *\nDisallow: /fish$\n", "/fish/", true},
    {"/* matches all", "User-agent: *\nDisallow: /*\n", "/anything?at=all", false},
    {"/* matches /", "User-agent: *\nDisallow: /*\n", "/", false},
    {"* alone matches all", "User-agent: *\nDisallow: *\n", "/x", false},
    {"$ alone matches nothing", "User-agent: *\nDisallow: $\n", "/", true},
    {"$ alone, empty path", "User-agent: *\nDisallow: $\n", "", true},
    {"/$ only the root", "User-agent: *\nDisallow: /$\n", "/", false},
    {"/$ and the empty path", "User-agent: *\nDisallow: /$\n", "", false},
    {"/$ not below the root", "User-agent: *\nDisallow: /$\n", "/a", true},
    {"$ inside a pattern is literal", "User-agent: *\nDisallow: /a$b\n", "/a$b", false},
    {"$ inside a pattern, prefix", "User-agent: *\nDisallow: /a$b\n", "/a", true},
    {"** behaves as *", "User-agent: *\nDisallow: /a**b$\n", "/axxb", false},
    {"* then $", "User-agent: *\nDisallow: /a*$\n", "/a/b/c", false},
    {"query wildcard", "User-agent: *\nDisallow: /*?\n", "/a?b=1", false},
    {"query wildcard, no query", "User-agent: *\nDisallow: /*?\n", "/a", true},
    {"pathological wildcards, no match", "User-agent: *\nDisallow: /*a*a*a*a*a*a*a*a*a*a*b\n",
     "/" LONG_A LONG_A LONG_A LONG_A "c", true},
    {"pathological wildcards, match at the end",
     "User-agent: *\nDisallow: /*a*a*a*a*a*a*a*a*a*a*b$\n", "/" LONG_A LONG_A LONG_A LONG_A "b",
     false},
    {"longest wins: allow longer", "User-agent: *\nAllow: /p\nDisallow: /\n", "/page", true},
    {"longest wins: disallow longer", "User-agent: *\nAllow: /page\nDisallow: /*.htm\n",
     "/page.htm", false},
    {"longest wins regardless of order", "User-agent: *\nDisallow: /a/b\nAllow: /a\n", "/a/b/c",
     false},
    {"tie: allow wins", "User-agent: *\nAllow: /folder\nDisallow: /folder\n", "/folder/x", true},
    {"tie: allow wins, other order", "User-agent: *\nDisallow: /folder\nAllow: /folder\n",
     "/folder/x", true},
    {"wildcards count as bytes: tie", "User-agent: *\nDisallow: /*x\nAllow: /ab\n", "/abx", true},
    {"wildcards count as bytes: longer", "User-agent: *\nDisallow: /*bx\nAllow: /ab\n", "/abx",
     false},
    {"anchor counts toward length", "User-agent: *\nAllow: /$\nDisallow: /\n", "/", true},
    {"anchor rule does not reach below", "User-agent: *\nAllow: /$\nDisallow: /\n", "/page", false},
    {"robots.txt always allowed", "User-agent: *\nDisallow: /\n", "/robots.txt", true},
    {"robots.txt, escaped", "User-agent: *\nDisallow: /\n", "/robots%2Etxt", true},
    {"robots.txt, not other names", "User-agent: *\nDisallow: /\n", "/robots.txt.bak", false},
    {"no leading slash in pattern", "User-agent: *\nDisallow: fish\n", "/fish", true},
};

START_TEST(tricky_inputs)
{
    const struct tricky *c = &tricky_cases[_i];
    sieve_robots *r = parse(c->body, "foobot");
    ck_assert_msg(allowed(r, c->path) == c->allowed, "%s: path '%s': expected %s", c->what, c->path,
                  c->allowed ? "allowed" : "disallowed");
    sieve_robots_free(r);
}
END_TEST

/* ---- limits ---- */

struct text {
    char *p;
    size_t len, cap;
};

static void text_add(struct text *t, const char *s, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        t->cap = (t->len + n + 1) * 2;
        t->p = realloc(t->p, t->cap);
        ck_assert_ptr_nonnull(t->p);
    }
    memcpy(t->p + t->len, s, n);
    t->len += n;
    t->p[t->len] = '\0';
}

static void text_str(struct text *t, const char *s)
{
    text_add(t, s, strlen(s));
}

static void text_fill(struct text *t, char c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        text_add(t, &c, 1);
}

START_TEST(very_long_lines)
{
    struct text t = {0};
    text_str(&t, "User-agent: *\n# ");
    text_fill(&t, 'x', 300000);
    text_str(&t, "\nDisallow: /x\nDisallow: /");
    text_fill(&t, 'a', 200000);
    text_str(&t, "\nDisallow: /");
    text_fill(&t, 'b', SIEVE_ROBOTS_MAX_PATTERN - 1); /* exactly at the cap */
    text_str(&t, "\nDisallow: /");
    text_fill(&t, 'c', SIEVE_ROBOTS_MAX_PATTERN); /* one past it */
    text_str(&t, "\n");
    sieve_robots *r = parse_n(t.p, t.len, "sieve");
    sieve_robots_stats st;
    sieve_robots_stats_get(r, &st);
    ck_assert_uint_eq(st.rules, 2);
    ck_assert_uint_eq(st.rules_dropped, 2);
    ck_assert(!st.truncated);
    EXPECT(r, "/x", false);
    EXPECT(r, "/aaaa", true);
    EXPECT(r, "/ccc", true);

    /* The kept cap-length pattern matches a path that long and longer. */
    struct text path = {0};
    text_str(&path, "/");
    text_fill(&path, 'b', SIEVE_ROBOTS_MAX_PATTERN - 1);
    ck_assert(!sieve_robots_allowed(r, path.p, path.len));
    ck_assert(sieve_robots_allowed(r, path.p, path.len - 1));
    text_fill(&path, 'b', 20000); /* past the on-stack normalization buffer */
    ck_assert(!sieve_robots_allowed(r, path.p, path.len));
    sieve_robots_free(r);
    free(path.p);
    free(t.p);
}
END_TEST

START_TEST(more_rules_than_the_cap)
{
    struct text t = {0};
    text_str(&t, "User-agent: sieve\n");
    char line[64];
    for (int i = 0; i < SIEVE_ROBOTS_MAX_RULES + 5; i++) {
        snprintf(line, sizeof line, "Disallow: /r%d$\n", i);
        text_str(&t, line);
    }
    sieve_robots *r = parse_n(t.p, t.len, "sieve");
    sieve_robots_stats st;
    sieve_robots_stats_get(r, &st);
    ck_assert_uint_eq(st.rules, SIEVE_ROBOTS_MAX_RULES);
    ck_assert_uint_eq(st.rules_dropped, 5);
    EXPECT(r, "/r0", false);
    EXPECT(r, "/r9999", false);
    EXPECT(r, "/r10000", true);
    EXPECT(r, "/r10004", true);
    EXPECT(r, "/other", true);
    sieve_robots_free(r);
    free(t.p);
}
END_TEST

/* A body longer than the limit: the line crossing it and all after it
 * are ignored. */
START_TEST(body_cut_at_the_limit)
{
    struct text t = {0};
    text_str(&t, "User-agent: *\nDisallow: /\n");
    while (t.len < SIEVE_ROBOTS_MAX_BYTES - 100)
        text_str(&t, "# filler line of the file\n");
    text_fill(&t, '#', SIEVE_ROBOTS_MAX_BYTES - 9 - t.len - 1);
    text_str(&t, "\n");
    size_t cut_line = t.len;
    ck_assert_uint_eq(cut_line, SIEVE_ROBOTS_MAX_BYTES - 9);
    text_str(&t, "Allow: /public\n"); /* the first 9 bytes are "Allow: /p" */
    text_str(&t, "Allow: /late\n");
    sieve_robots *r = parse_n(t.p, t.len, "sieve");
    sieve_robots_stats st;
    sieve_robots_stats_get(r, &st);
    ck_assert(st.truncated);
    ck_assert_uint_eq(st.bytes, cut_line);
    EXPECT(r, "/public", false);
    EXPECT(r, "/pxx", false);
    EXPECT(r, "/late", false);
    sieve_robots_free(r);

    /* Exactly the limit, ending with a line end: nothing is cut. */
    t.len = cut_line;
    text_fill(&t, '#', 8);
    text_str(&t, "\n");
    ck_assert_uint_eq(t.len, SIEVE_ROBOTS_MAX_BYTES);
    r = parse_n(t.p, t.len, "sieve");
    sieve_robots_stats_get(r, &st);
    ck_assert(!st.truncated);
    ck_assert_uint_eq(st.bytes, SIEVE_ROBOTS_MAX_BYTES);
    sieve_robots_free(r);
    free(t.p);
}
END_TEST

/* ---- Crawl-delay and Sitemap ---- */

struct delay_case {
    const char *body;
    double want; /* negative: absent */
};

static const struct delay_case delay_cases[] = {
    {"User-agent: *\nCrawl-delay: 10\n", 10},
    {"User-agent: *\nCrawl-delay: 0.5\n", 0.5},
    {"User-agent: *\ncrawl-DELAY :  2.25  # seconds\n", 2.25},
    {"User-agent: *\nCrawl-delay: 0\n", 0},
    {"User-agent: *\nDisallow: /x\n", -1},
    {"", -1},
    {"User-agent: *\nCrawl-delay: 10s\n", -1},
    {"User-agent: *\nCrawl-delay: -1\n", -1},
    {"User-agent: *\nCrawl-delay: abc\n", -1},
    {"User-agent: *\nCrawl-delay:\n", -1},
    {"User-agent: *\nCrawl-delay: .\n", -1},
    {"User-agent: *\nCrawl-delay: 1.2.3\n", -1},
    {"User-agent: *\nCrawl-delay: 1e3\n", -1},
    {"Crawl-delay: 7\nUser-agent: *\n", -1},
    {"User-agent: *\nCrawl-delay: 5\n\nUser-agent: sieve\nCrawl-delay: 2\n", 2},
    {"User-agent: *\nCrawl-delay: 5\n\nUser-agent: sieve\nDisallow: /x\n", -1},
    {"User-agent: other\nCrawl-delay: 5\n", -1},
    {"User-agent: sieve\nCrawl-delay: 3\n\nUser-agent: sieve\nCrawl-delay: 4\n", 4},
    {"User-agent: sieve\nCrawl-delay: abc\nCrawl-delay: 1\n", 1},
};

START_TEST(crawl_delay)
{
    const struct delay_case *c = &delay_cases[_i];
    sieve_robots *r = parse(c->body, "sieve");
    double got = sieve_robots_crawl_delay(r);
    if (c->want < 0)
        ck_assert_msg(got < 0, "row %d: expected no delay, got %g", _i, got);
    else
        ck_assert_msg(got == c->want, "row %d: expected %g, got %g", _i, c->want, got);
    sieve_robots_free(r);
}
END_TEST

START_TEST(sitemaps)
{
    sieve_robots *r = parse("Sitemap: http://h/s1.xml\n"
                            "User-agent: other\n"
                            "SITEMAP:http://h/s2.xml   # comment\n"
                            "Disallow: /\n"
                            "sitemap: \n"
                            "\tSitemap :  https://h/s3.xml?a=b\r\n",
                            "sieve");
    const char *const *urls = NULL;
    ck_assert_uint_eq(sieve_robots_sitemaps(r, &urls), 3);
    ck_assert_str_eq(urls[0], "http://h/s1.xml");
    ck_assert_str_eq(urls[1], "http://h/s2.xml");
    ck_assert_str_eq(urls[2], "https://h/s3.xml?a=b");
    ck_assert_uint_eq(sieve_robots_sitemaps(r, NULL), 3);
    sieve_robots_stats st;
    sieve_robots_stats_get(r, &st);
    ck_assert_uint_eq(st.sitemaps, 3);
    ck_assert_uint_eq(st.sitemaps_dropped, 1);
    EXPECT(r, "/x", true); /* the Disallow was for "other" */
    sieve_robots_free(r);
}
END_TEST

START_TEST(sitemap_caps)
{
    struct text t = {0};
    char line[64];
    for (int i = 0; i < SIEVE_ROBOTS_MAX_SITEMAPS + 5; i++) {
        if (i == 10) {
            text_str(&t, "Sitemap: http://h/");
            text_fill(&t, 'x', SIEVE_ROBOTS_MAX_SITEMAP_LEN);
            text_str(&t, "\n");
        }
        snprintf(line, sizeof line, "Sitemap: http://h/%d.xml\n", i);
        text_str(&t, line);
    }
    sieve_robots *r = parse_n(t.p, t.len, "sieve");
    const char *const *urls = NULL;
    ck_assert_uint_eq(sieve_robots_sitemaps(r, &urls), SIEVE_ROBOTS_MAX_SITEMAPS);
    ck_assert_str_eq(urls[0], "http://h/0.xml");
    ck_assert_str_eq(urls[10], "http://h/10.xml");
    ck_assert_str_eq(urls[SIEVE_ROBOTS_MAX_SITEMAPS - 1], "http://h/999.xml");
    sieve_robots_stats st;
    sieve_robots_stats_get(r, &st);
    ck_assert_uint_eq(st.sitemaps_dropped, 6);
    sieve_robots_free(r);
    free(t.p);
}
END_TEST

/* Bytes after a NUL are still read: the body is a length, not a string. */
START_TEST(nul_bytes)
{
    static const char body[] = "User-agent: *\nDisallow: /b\0c\nDisallow: /a\n";
    sieve_robots *r = parse_n(body, sizeof body - 1, "sieve");
    EXPECT(r, "/a", false);
    ck_assert(!sieve_robots_allowed(r, "/b\0c", 4));
    ck_assert(sieve_robots_allowed(r, "/b", 2));
    sieve_robots_free(r);
}
END_TEST

/* One handle queried from several threads at once gives every thread the
 * answers a single thread gets. */
struct share_arg {
    const sieve_robots *r;
    int wrong;
};

static void *share_worker(void *p)
{
    struct share_arg *a = p;
    char path[32];
    for (int i = 0; i < 20000; i++) {
        int d = 10 + i % 90; /* two digits: "/d5" is a prefix of 50..59 only */
        int n = snprintf(path, sizeof path, "/d%d/x%s", d, i % 3 ? "" : ".gif");
        bool want = d >= 50 && i % 3 != 0;
        if (sieve_robots_allowed(a->r, path, (size_t)n) != want)
            a->wrong++;
    }
    return NULL;
}

START_TEST(shared_between_threads)
{
    sieve_robots *r = parse("User-agent: *\nDisallow: /*.gif$\nDisallow: /d\nAllow: /d5\n"
                            "Allow: /d6\nAllow: /d7\nAllow: /d8\nAllow: /d9\n",
                            "sieve");
    pthread_t th[4];
    struct share_arg args[4];
    for (int t = 0; t < 4; t++) {
        args[t] = (struct share_arg){r, 0};
        ck_assert_int_eq(pthread_create(&th[t], NULL, share_worker, &args[t]), 0);
    }
    for (int t = 0; t < 4; t++) {
        pthread_join(th[t], NULL);
        ck_assert_int_eq(args[t].wrong, 0);
    }
    sieve_robots_free(r);
}
END_TEST

/* ---- fixed handles and arguments ---- */

START_TEST(allow_all_and_disallow_all)
{
    sieve_robots *a = NULL, *d = NULL;
    ck_assert_int_eq(sieve_robots_allow_all(&a), SIEVE_OK);
    ck_assert_int_eq(sieve_robots_disallow_all(&d), SIEVE_OK);
    static const char *const paths[] = {"/", "", "/x", "/a/b?c=d", "*", "/robots.txt.bak"};
    for (size_t i = 0; i < 6; i++) {
        EXPECT(a, paths[i], true);
        EXPECT(d, paths[i], false);
    }
    EXPECT(a, "/robots.txt", true);
    EXPECT(d, "/robots.txt", true);
    ck_assert(sieve_robots_crawl_delay(a) < 0);
    ck_assert(sieve_robots_crawl_delay(d) < 0);
    const char *const *urls = NULL;
    ck_assert_uint_eq(sieve_robots_sitemaps(d, &urls), 0);
    sieve_robots_stats st;
    sieve_robots_stats_get(d, &st);
    ck_assert_uint_eq(st.rules, 0);
    ck_assert_uint_eq(st.bytes, 0);
    sieve_robots_free(a);
    sieve_robots_free(d);
}
END_TEST

START_TEST(bad_arguments)
{
    sieve_robots *r = NULL;
    ck_assert_int_eq(sieve_robots_parse(NULL, "", 0, "sieve"), SIEVE_EINVAL);
    ck_assert_int_eq(sieve_robots_parse(&r, NULL, 5, "sieve"), SIEVE_EINVAL);
    ck_assert_int_eq(sieve_robots_parse(&r, "", 0, NULL), SIEVE_EINVAL);
    ck_assert_int_eq(sieve_robots_parse(&r, "", 0, ""), SIEVE_EINVAL);
    ck_assert_int_eq(sieve_robots_parse(&r, "", 0, "sieve/1.0"), SIEVE_EINVAL);
    ck_assert_int_eq(sieve_robots_parse(&r, "", 0, "si eve"), SIEVE_EINVAL);
    ck_assert_int_eq(sieve_robots_parse(&r, "", 0, "*"), SIEVE_EINVAL);
    ck_assert_ptr_null(r);
    ck_assert_int_eq(sieve_robots_allow_all(NULL), SIEVE_EINVAL);
    ck_assert_int_eq(sieve_robots_disallow_all(NULL), SIEVE_EINVAL);

    ck_assert_int_eq(sieve_robots_parse(&r, NULL, 0, "my_bot-"), SIEVE_OK);
    ck_assert(sieve_robots_allowed(r, NULL, 0));
    ck_assert(!sieve_robots_allowed(r, NULL, 3));
    ck_assert(!sieve_robots_allowed(NULL, "/", 1));
    sieve_robots_free(r);
    sieve_robots_free(NULL);
}
END_TEST

/* ---- the matcher against a reference ---- */

/* Reference: does pattern p (bytes 'a', 'b', '*'; anchored or not) match
 * s? Dynamic programming over (pattern prefix, path prefix). */
static bool ref_match(const char *p, size_t pl, bool anchored, const char *s, size_t sl)
{
    bool m[16][64]; /* m[i][j]: p[0..i) matches s[0..j) exactly */
    ck_assert(pl < 16 && sl < 64);
    for (size_t i = 0; i <= pl; i++)
        for (size_t j = 0; j <= sl; j++) {
            if (i == 0)
                m[i][j] = j == 0;
            else if (p[i - 1] == '*')
                m[i][j] = m[i - 1][j] || (j > 0 && m[i][j - 1]);
            else
                m[i][j] = j > 0 && m[i - 1][j - 1] && p[i - 1] == s[j - 1];
        }
    if (anchored)
        return m[pl][sl];
    for (size_t j = 0; j <= sl; j++)
        if (m[pl][j])
            return true;
    return false;
}

static uint64_t rng_next(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* A cache counts what rules hold: more rules, more bytes, and the fixed
 * answers count too. */
START_TEST(stats_count_the_memory_rules_hold)
{
    sieve_robots *small, *big, *all;
    const char *one = "User-agent: *\nDisallow: /a\n";
    ck_assert_int_eq(sieve_robots_parse(&small, one, strlen(one), "sieve"), SIEVE_OK);
    char text[64 * 1024];
    size_t n = (size_t)snprintf(text, sizeof text, "User-agent: *\n");
    for (int i = 0; i < 1000; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "Disallow: /dir%d/\n", i);
    ck_assert_int_eq(sieve_robots_parse(&big, text, n, "sieve"), SIEVE_OK);
    ck_assert_int_eq(sieve_robots_allow_all(&all), SIEVE_OK);
    sieve_robots_stats s1, s2, s3;
    sieve_robots_stats_get(small, &s1);
    sieve_robots_stats_get(big, &s2);
    sieve_robots_stats_get(all, &s3);
    ck_assert_uint_gt(s3.memory, 0);
    ck_assert_uint_gt(s1.memory, s3.memory);
    ck_assert_uint_ge(s2.memory, s1.memory + 1000 * 6); /* at least each pattern's bytes */
    sieve_robots_free(small);
    sieve_robots_free(big);
    sieve_robots_free(all);
}
END_TEST

START_TEST(matcher_agrees_with_reference)
{
    uint64_t x = 0x9E3779B97F4A7C15u;
    static const char alpha[] = "ab*";
    for (int iter = 0; iter < 20000; iter++) {
        /* One to three rules, each "/" then up to 8 of a, b, '*'. */
        int nrules = 1 + (int)(rng_next(&x) % 3);
        char pats[3][16];
        size_t plen[3];
        bool anch[3], allow[3];
        char body[256] = "User-agent: *\n";
        for (int k = 0; k < nrules; k++) {
            plen[k] = 1 + rng_next(&x) % 9;
            pats[k][0] = '/';
            for (size_t i = 1; i < plen[k]; i++)
                pats[k][i] = alpha[rng_next(&x) % 3];
            pats[k][plen[k]] = '\0';
            anch[k] = rng_next(&x) % 3 == 0;
            allow[k] = rng_next(&x) % 2 == 0;
            char line[64];
            snprintf(line, sizeof line, "%s: %s%s\n", allow[k] ? "Allow" : "Disallow", pats[k],
                     anch[k] ? "$" : "");
            strcat(body, line);
        }
        char path[64];
        size_t sl = 1 + rng_next(&x) % 40;
        path[0] = '/';
        for (size_t i = 1; i < sl; i++)
            path[i] = "ab"[rng_next(&x) % 2];
        path[sl] = '\0';

        /* The expected verdict: longest matching pattern, Allow on a tie. */
        size_t best = 0;
        bool found = false, want = true;
        for (int k = 0; k < nrules; k++) {
            if (!ref_match(pats[k], plen[k], anch[k], path, sl))
                continue;
            size_t spec = plen[k] + anch[k];
            if (!found || spec > best) {
                best = spec;
                want = allow[k];
                found = true;
            } else if (spec == best && allow[k]) {
                want = true;
            }
        }
        sieve_robots *r = parse(body, "sieve");
        bool got = sieve_robots_allowed(r, path, sl);
        sieve_robots_free(r);
        if (got != want)
            ck_abort_msg("iteration %d: %s path %s: got %d, want %d", iter, body, path, got, want);
    }
}
END_TEST

/* A second reference, written differently: does p[i..) match s[j..)?
 * Recursion on the first pattern byte, each (i, j) answered once. */
typedef struct memo {
    const char *p, *s;
    size_t pl, sl;
    bool anchored;
    signed char seen[32][256]; /* 0 unknown, 1 no, 2 yes */
} memo;

static bool memo_match(memo *m, size_t i, size_t j)
{
    if (m->seen[i][j])
        return m->seen[i][j] == 2;
    bool r;
    if (i == m->pl)
        r = !m->anchored || j == m->sl;
    else if (m->p[i] == '*')
        r = memo_match(m, i + 1, j) || (j < m->sl && memo_match(m, i, j + 1));
    else
        r = j < m->sl && m->p[i] == m->s[j] && memo_match(m, i + 1, j + 1);
    m->seen[i][j] = r ? 2 : 1;
    return r;
}

START_TEST(matcher_agrees_with_memoized_reference)
{
    /* Long runs of one letter with a few others, so that runs occur in
     * part before they occur whole, and many wildcards. */
    uint64_t x = 0xD1B54A32D192ED03u;
    static memo m;
    for (int iter = 0; iter < 20000; iter++) {
        char pat[32], path[256], body[128];
        size_t pl = 2 + rng_next(&x) % 29, sl = 1 + rng_next(&x) % 255;
        bool anchored = rng_next(&x) % 2;
        pat[0] = '/';
        for (size_t i = 1; i < pl; i++) {
            uint64_t r = rng_next(&x) % 8;
            pat[i] = r < 4 ? 'a' : r < 6 ? '*' : "bc"[r % 2];
        }
        pat[pl] = '\0';
        path[0] = '/';
        for (size_t i = 1; i < sl; i++)
            path[i] = rng_next(&x) % 6 ? 'a' : "bc"[rng_next(&x) % 2];
        path[sl] = '\0';
        m = (memo){.p = pat, .s = path, .pl = pl, .sl = sl, .anchored = anchored};
        bool match = memo_match(&m, 0, 0);
        snprintf(body, sizeof body, "User-agent: *\nDisallow: %s%s\n", pat, anchored ? "$" : "");
        sieve_robots *r = parse(body, "sieve");
        bool got = sieve_robots_allowed(r, path, sl);
        sieve_robots_free(r);
        if (got == match)
            ck_abort_msg("iteration %d: %s$? %d path %s: allowed %d", iter, pat, anchored, path,
                         got);
    }
}
END_TEST

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

START_TEST(wildcards_cost_linear_time)
{
    /* As many rules as 500 KB hold of a long run after a '*' that almost
     * matches everywhere in the path: the matcher that retried one byte
     * further after the last '*' took a second per 16 KB path, so about
     * three minutes for these fifty checks. */
    size_t cap = SIEVE_ROBOTS_MAX_BYTES, l = 0;
    char *body = malloc(cap);
    ck_assert_ptr_nonnull(body);
    l += (size_t)snprintf(body, cap, "User-agent: *\n");
    for (int k = 0; k < 120; k++) {
        l += (size_t)snprintf(body + l, cap - l, "Disallow: /*%d*", k);
        memset(body + l, 'a', 4000);
        l += 4000;
        l += (size_t)snprintf(body + l, cap - l, "b\n");
    }
    ck_assert_uint_lt(l, cap);
    sieve_robots *r = parse_n(body, l, "sieve");
    sieve_robots_stats st;
    sieve_robots_stats_get(r, &st);
    ck_assert_uint_eq(st.rules, 120);
    size_t n = 64 * 1024;
    char *path = malloc(n + 1);
    ck_assert_ptr_nonnull(path);
    memcpy(path, "/0123456789", 11);
    memset(path + 11, 'a', n - 11);
    double t = cpu_seconds();
    for (int i = 0; i < 25; i++) {
        ck_assert(sieve_robots_allowed(r, path, n));
        path[n - 1] = 'b';
        ck_assert(!sieve_robots_allowed(r, path, n));
        path[n - 1] = 'a';
    }
    t = cpu_seconds() - t;
    ck_assert_msg(t < 20, "50 checks took %.1f s of CPU", t);
    sieve_robots_free(r);

    /* Many wildcards with short runs. */
    r = parse("User-agent: *\nDisallow: /*a*a*a*a*a*a*a*a*a*a*a*a*a*b\n", "sieve");
    t = cpu_seconds();
    ck_assert(sieve_robots_allowed(r, path, n));
    path[n - 1] = 'b';
    ck_assert(!sieve_robots_allowed(r, path, n));
    t = cpu_seconds() - t;
    ck_assert_msg(t < 5, "took %.1f s of CPU", t);
    sieve_robots_free(r);
    free(path);
    free(body);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("robots");
    TCase *rfc = tcase_create("rfc9309");
    tcase_add_test(rfc, rfc_simple_example_star);
    tcase_add_test(rfc, rfc_simple_example_foobot);
    tcase_add_test(rfc, rfc_simple_example_barbot_bazbot);
    tcase_add_test(rfc, rfc_simple_example_quxbot);
    tcase_add_test(rfc, rfc_longest_match_example);
    tcase_add_loop_test(rfc, rfc_percent_encoding, 0,
                        (int)(sizeof pct_cases / sizeof pct_cases[0]));
    tcase_add_test(rfc, rfc_special_characters);
    suite_add_tcase(su, rfc);

    TCase *tc = tcase_create("core");
    tcase_add_loop_test(tc, tricky_inputs, 0, (int)(sizeof tricky_cases / sizeof tricky_cases[0]));
    tcase_add_test(tc, very_long_lines);
    tcase_add_test(tc, more_rules_than_the_cap);
    tcase_add_test(tc, body_cut_at_the_limit);
    tcase_add_loop_test(tc, crawl_delay, 0, (int)(sizeof delay_cases / sizeof delay_cases[0]));
    tcase_add_test(tc, sitemaps);
    tcase_add_test(tc, sitemap_caps);
    tcase_add_test(tc, nul_bytes);
    tcase_add_test(tc, shared_between_threads);
    tcase_add_test(tc, allow_all_and_disallow_all);
    tcase_add_test(tc, bad_arguments);
    tcase_add_test(tc, matcher_agrees_with_reference);
    tcase_add_test(tc, matcher_agrees_with_memoized_reference);
    tcase_add_test(tc, wildcards_cost_linear_time);
    tcase_add_test(tc, stats_count_the_memory_rules_hold);
    suite_add_tcase(su, tc);

    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
