/* test-url.c - URL canonicalization: RFC 3986 resolution and normalization,
 * refusals, trap guards, query filtering, odd hosts, hostile input. */
#include <check.h>
#include <locale.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sieve/sieve.h"
#include "url-internal.h"

#define RFC_BASE "http://a/b/c/d;p?q"

static sieve_canon *dflt;

static void setup(void)
{
    ck_assert_int_eq(sieve_canon_new(&dflt, NULL), SIEVE_OK);
}

static void teardown(void)
{
    sieve_canon_free(dflt);
    dflt = NULL;
}

typedef struct row {
    const char *ref;
    const char *want; /* NULL: expect status */
    int status;
} row;

/* Canonicalizes ref with c and checks the outcome; on success also checks
 * that the result is a fixed point (canonicalizing it again changes
 * nothing) and that info describes it. */
static void expect(const sieve_canon *c, const char *base, const char *ref, size_t len,
                   const char *want, int status)
{
    char out[SIEVE_CANON_MAX_LEN + 1];
    sieve_canon_info info;
    int st = sieve_canon_url(c, base, ref, len, out, sizeof out, &info);
    if (!want) {
        ck_assert_msg(st == status, "ref \"%s\": status %d (%s), want %d (%s)", ref, st,
                      sieve_strerror(st), status, sieve_strerror(status));
        return;
    }
    ck_assert_msg(st == SIEVE_OK, "ref \"%s\": status %d (%s), want %s", ref, st,
                  sieve_strerror(st), want);
    ck_assert_msg(strcmp(out, want) == 0, "ref \"%s\": got \"%s\", want \"%s\"", ref, out, want);
    ck_assert_uint_eq(info.len, strlen(want));
    ck_assert_int_eq(info.https, strncmp(want, "https:", 6) == 0);
    char again[SIEVE_CANON_MAX_LEN + 1];
    ck_assert_int_eq(sieve_canon_url(c, NULL, out, info.len, again, sizeof again, NULL), SIEVE_OK);
    ck_assert_str_eq(again, out);
}

static void expect_s(const sieve_canon *c, const char *base, const char *ref, const char *want,
                     int status)
{
    expect(c, base, ref, strlen(ref), want, status);
}

static void run_rows(const sieve_canon *c, const char *base, const row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++)
        expect_s(c, base, rows[i].ref, rows[i].want, rows[i].status);
}

#define RUN(c, base, rows) run_rows(c, base, rows, sizeof rows / sizeof rows[0])

/* RFC 3986 5.4.1, with fragments removed from the expected results. */
START_TEST(rfc3986_normal_examples)
{
    static const row rows[] = {
        {"g:h", NULL, SIEVE_ESCHEME},     {"g", "http://a/b/c/g", 0},
        {"./g", "http://a/b/c/g", 0},     {"g/", "http://a/b/c/g/", 0},
        {"/g", "http://a/g", 0},          {"//g", "http://g/", 0},
        {"?y", "http://a/b/c/d;p?y", 0},  {"g?y", "http://a/b/c/g?y", 0},
        {"#s", "http://a/b/c/d;p?q", 0},  {"g#s", "http://a/b/c/g", 0},
        {"g?y#s", "http://a/b/c/g?y", 0}, {";x", "http://a/b/c/;x", 0},
        {"g;x", "http://a/b/c/g;x", 0},   {"g;x?y#s", "http://a/b/c/g;x?y", 0},
        {"", "http://a/b/c/d;p?q", 0},    {".", "http://a/b/c/", 0},
        {"./", "http://a/b/c/", 0},       {"..", "http://a/b/", 0},
        {"../", "http://a/b/", 0},        {"../g", "http://a/b/g", 0},
        {"../..", "http://a/", 0},        {"../../", "http://a/", 0},
        {"../../g", "http://a/g", 0},
    };
    RUN(dflt, RFC_BASE, rows);
}
END_TEST

/* The base's fragment takes no part in resolution (RFC 3986 5.2.2), even
 * when it holds a '/' that curl 7.88 would cut the base at. */
START_TEST(base_fragment_is_ignored)
{
    static const row rows[] = {
        {"g", "http://a/b/g", 0},
        {"?y", "http://a/b/c?y", 0},
        {"g/h", "http://a/b/g/h", 0},
        {"../g", "http://a/g", 0},
        {"./", "http://a/b/", 0},
        {"", "http://a/b/c", 0},
        {"#t", "http://a/b/c", 0},
        {"/g", "http://a/g", 0},
        {"g\xc3\xa9", "http://a/b/g%C3%A9", 0},
    };
    static const char *const bases[] = {"http://a/b/c#sec/x", "http://a/b/c#/", "http://a/b/c#"};
    char want[256], got[256];
    for (size_t b = 0; b < sizeof bases / sizeof *bases; b++) {
        RUN(dflt, bases[b], rows);
        sieve_canon_base *parsed = sieve_canon_parse_base(bases[b]);
        ck_assert_ptr_nonnull(parsed);
        for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
            size_t n = strlen(rows[r].ref);
            ck_assert_int_eq(
                sieve_canon_url_parsed(dflt, parsed, rows[r].ref, n, got, sizeof got, NULL),
                SIEVE_OK);
            ck_assert_int_eq(
                sieve_canon_url(dflt, bases[b], rows[r].ref, n, want, sizeof want, NULL), SIEVE_OK);
            ck_assert_msg(strcmp(got, want) == 0, "%s + %s: %s, not %s", bases[b], rows[r].ref, got,
                          want);
        }
        sieve_canon_base_free(parsed);
    }
}
END_TEST

/* RFC 3986 5.4.2; "http:g" is read strictly, as a malformed absolute URL. */
START_TEST(rfc3986_abnormal_examples)
{
    static const row rows[] = {
        {"../../../g", "http://a/g", 0},
        {"../../../../g", "http://a/g", 0},
        {"/./g", "http://a/g", 0},
        {"/../g", "http://a/g", 0},
        {"g.", "http://a/b/c/g.", 0},
        {".g", "http://a/b/c/.g", 0},
        {"g..", "http://a/b/c/g..", 0},
        {"..g", "http://a/b/c/..g", 0},
        {"./../g", "http://a/b/g", 0},
        {"./g/.", "http://a/b/c/g/", 0},
        {"g/./h", "http://a/b/c/g/h", 0},
        {"g/../h", "http://a/b/c/h", 0},
        {"g;x=1/./y", "http://a/b/c/g;x=1/y", 0},
        {"g;x=1/../y", "http://a/b/c/y", 0},
        {"g?y/./x", "http://a/b/c/g?y/./x", 0},
        {"g?y/../x", "http://a/b/c/g?y/../x", 0},
        {"g#s/./x", "http://a/b/c/g", 0},
        {"g#s/../x", "http://a/b/c/g", 0},
        {"http:g", NULL, SIEVE_EURL},
    };
    RUN(dflt, RFC_BASE, rows);
}
END_TEST

/* A base given as a string may carry raw non-ASCII bytes or spaces even
 * when the reference has none: they are encoded. */
START_TEST(raw_bytes_in_the_base_are_encoded)
{
    static const row rows[] = {
        {"y", "http://example.com/caf%C3%A9/y", 0},
        {"?q", "http://example.com/caf%C3%A9/x?q", 0},
        {"", "http://example.com/caf%C3%A9/x", 0},
        {"../z\xc3\xa9", "http://example.com/z%C3%A9", 0},
    };
    RUN(dflt, "http://example.com/caf\xc3\xa9/x", rows);
    static const row spaced[] = {
        {"y", "http://example.com/a%20b/y", 0},
        {"#f", "http://example.com/a%20b/x", 0},
    };
    RUN(dflt, "http://example.com/a b/x", spaced);
}
END_TEST

/* RFC 3986 section 6.2.2 and 6.2.3. */
START_TEST(normalizes_case_escapes_ports_and_paths)
{
    static const row rows[] = {
        {"HTTP://www.Example.COM/Path", "http://www.example.com/Path", 0},
        {"HtTpS://EXAMPLE.com", "https://example.com/", 0},
        {"http://example.com/%7euser/%7Efoo", "http://example.com/~user/~foo", 0},
        {"http://example.com/%41%62%2d%2E%5f%30", "http://example.com/Ab-._0", 0},
        {"http://example.com/a%2fb%3f%c3%a9", "http://example.com/a%2Fb%3F%C3%A9", 0},
        {"http://example.com/q?x=%7e%2b%26", "http://example.com/q?x=~%2B%26", 0},
        {"http://example.com/100%", "http://example.com/100%25", 0},
        {"http://example.com/%zz%4", "http://example.com/%25zz%254", 0},
        {"http://example.com/a b?c d", "http://example.com/a%20b?c%20d", 0},
        {"http://example.com/caf\xc3\xa9", "http://example.com/caf%C3%A9", 0},
        {"http://example.com/<\"{}|^`>", "http://example.com/%3C%22%7B%7D%7C%5E%60%3E", 0},
        {"http://example.com", "http://example.com/", 0},
        {"http://example.com?q", "http://example.com/?q", 0},
        {"http://example.com:80/", "http://example.com/", 0},
        {"https://example.com:443/", "https://example.com/", 0},
        {"http://example.com:443/", "http://example.com:443/", 0},
        {"https://example.com:80/", "https://example.com:80/", 0},
        {"http://example.com:8080", "http://example.com:8080/", 0},
        {"http://example.com:/", "http://example.com/", 0},
        {"http://example.com:99999/", NULL, SIEVE_EURL},
        {"http://example.com:8x/", NULL, SIEVE_EURL},
        {"http://example.com/a/./b/../c", "http://example.com/a/c", 0},
        {"http://example.com/a/b/../../../c", "http://example.com/c", 0},
        /* Decoding can make a dot segment: it is removed too. */
        {"http://example.com/a/%2e%2E/b", "http://example.com/b", 0},
        {"http://example.com/a/%2E/b/%2e", "http://example.com/a/b/", 0},
        /* Userinfo is dropped. */
        {"http://user:pass@example.com/x", "http://example.com/x", 0},
        {"http://user@example.com/", "http://example.com/", 0},
        /* An empty query and empty parameters go. */
        {"http://example.com/?", "http://example.com/", 0},
        {"http://example.com/?&&", "http://example.com/", 0},
        {"http://example.com/?a=1&&b=2&", "http://example.com/?a=1&b=2", 0},
    };
    RUN(dflt, NULL, rows);
}
END_TEST

START_TEST(escapes_are_decoded_after_parsing)
{
    /* "%6Aavascript:x" is a relative path, not a javascript: URL. */
    expect_s(dflt, RFC_BASE, "%6Aavascript:x", "http://a/b/c/javascript:x", 0);
    expect_s(dflt, RFC_BASE, "%2e%2e/g", "http://a/b/g", 0);
}
END_TEST

START_TEST(fragments_are_removed)
{
    static const row rows[] = {
        {"http://example.com/a#frag", "http://example.com/a", 0},
        {"http://example.com/a?b#c?d", "http://example.com/a?b", 0},
        {"http://example.com/a#", "http://example.com/a", 0},
        {"#", RFC_BASE, 0},
        {"#top", RFC_BASE, 0},
        {"g#a#b", "http://a/b/c/g", 0},
    };
    RUN(dflt, RFC_BASE, rows);
    expect_s(dflt, NULL, "#top", NULL, SIEVE_EURL);
}
END_TEST

/* What curl is given stops before the fragment, when that provably
 * changes nothing: a reference with any fragment canonicalizes as the
 * same reference without one, through a base string or a parsed base. */
START_TEST(fragments_are_not_parsed)
{
    static const char *const bases[] = {RFC_BASE, "http://[::1]:8080/a/b",
                                        "https://xn--bcher-kva.de/a?q", NULL};
    static const char *const refs[] = {
        "g",
        "./g",
        "../../../g",
        "/g",
        "//h:81/p",
        "?y",
        "g?y=1&x",
        "g;x=1/../y",
        "%7e%2E%2e",
        "\xc3\xa9/x",
        "http://h/x",
        "HTTPS://H:443/x/../y",
        "x%4",
        "x%",
        "a\tb",
        ("//b\xc3\xbc" /* split: \xbc would swallow the c */
         "cher.de/x"),
        "mailto:x",
        "ftp://h/",
    };
    static const char *const tails[] = {"#s", "#\xc3\xa9", "#a#b", "#//x?y", "#"};
    char want[256], got[256], ref[64];
    for (size_t b = 0; b < sizeof bases / sizeof *bases; b++) {
        sieve_canon_base *parsed = bases[b] ? sieve_canon_parse_base(bases[b]) : NULL;
        for (size_t r = 0; r < sizeof refs / sizeof *refs; r++) {
            int st =
                sieve_canon_url(dflt, bases[b], refs[r], strlen(refs[r]), want, sizeof want, NULL);
            for (size_t t = 0; t < sizeof tails / sizeof *tails; t++) {
                size_t n = (size_t)snprintf(ref, sizeof ref, "%s%s", refs[r], tails[t]);
                size_t cut = sieve_canon_fragment_at(ref, n, true);
                ck_assert(cut == strlen(refs[r]) || cut == n);
                ck_assert_int_eq(sieve_canon_url(dflt, bases[b], ref, n, got, sizeof got, NULL),
                                 st);
                if (st == SIEVE_OK)
                    ck_assert_str_eq(got, want);
                if (!parsed)
                    continue;
                ck_assert_int_eq(
                    sieve_canon_url_parsed(dflt, parsed, ref, n, got, sizeof got, NULL), st);
                if (st == SIEVE_OK)
                    ck_assert_str_eq(got, want);
            }
        }
        sieve_canon_base_free(parsed);
    }
    ck_assert_uint_eq(sieve_canon_fragment_at("../g?y#s", 8, true), 6);
    ck_assert_uint_eq(sieve_canon_fragment_at("HTTPS://H/#s", 12, false), 10);
    /* Cuts that would change the result are not made. */
    ck_assert_uint_eq(sieve_canon_fragment_at("a #x", 4, true), 4);
    ck_assert_uint_eq(sieve_canon_fragment_at("fi\tle:/#x", 9, true), 9);
    ck_assert_uint_eq(sieve_canon_fragment_at("file:/#x", 8, true), 8);
    ck_assert_uint_eq(sieve_canon_fragment_at("g#x", 3, false), 3);
    ck_assert_uint_eq(sieve_canon_fragment_at("http://h/#x", 11, false), 9);
    ck_assert_uint_eq(sieve_canon_fragment_at(" #x", 3, true), 3);
    expect_s(dflt, RFC_BASE, "a #x", "http://a/b/c/a%20", 0);
    expect_s(dflt, RFC_BASE, "a\t#x", "http://a/b/c/a", 0);
    expect_s(dflt, RFC_BASE, "fi\tle:/#x", NULL, SIEVE_ESCHEME);
    expect_s(dflt, NULL, "file:/#x", NULL, SIEVE_ESCHEME);
    expect_s(dflt, NULL, "file:/", NULL, SIEVE_EURL);
    expect_s(dflt, "file:///a/b", "///h:#x", NULL, SIEVE_ESCHEME);
    ck_assert_ptr_null(sieve_canon_parse_base("file:///a/b"));
}
END_TEST

/* A relative reference joined to a parsed base, as curl 7.88 would join
 * it but without asking curl, canonicalizes exactly as through the base
 * string, whatever the base's shape: a query, no path, "//" in the path,
 * a port, an IPv6 or IDN host. */
START_TEST(references_joined_to_a_parsed_base_match_curls_join)
{
    static const char *const bases[] = {"http://a/b/c/d;p?q",  "http://a",
                                        "http://a/",           "http://a?x=/y",
                                        "http://a/b/",         "http://a//b/c",
                                        "http://a/b//",        "https://a:8443/x/y",
                                        "http://[::1]:81/a/b", "http://xn--bcher-kva.de/a/b?q=1/2",
                                        "http://a/%7Ex/y%20z", "http://a/b/c?",
                                        "http://a/b?q#f",      "http://a:80/b",
                                        "http://A/B/C"};
    static const char *const refs[] = {
        "g",      "g/",       "/g",         "/g/h?i=j",     "g?y/z",   "g;x=1/../y", "g/./h",
        "g/../h", "/./g",     "/../g",      "/g/../../h",   "g:h",     "a/b:c",      "g%20h",
        "g%2Fh",  "/%7Eu",    "g~x",        "g!$&'()*+,;=", "/@x",     "g@h:1/x",    "-g",
        "_g",     "g#s",      "/g#s",       "g[1]",         "/g|h",    "g\\h",       "g^h",
        "g`h",    "g{h}",     "/g\"h",      "g<h>",         "..g",     ".g",         "g..",
        "/",      "/?",       "g?",         "g#",           "1g:x",    "+g",         "g.html",
        "./g",    "../g",     "../../../g", "./",           "../",     ".",          "..",
        "g h",    "/g h?i j", "\xc3\xa9",   "/\xc3\xa9",    "./../?y", ".//g",       "../..//g",
        "./?y",   "../?y",    "./..",       "./../g/./h"};
    char want[512], got[512];
    for (size_t b = 0; b < sizeof bases / sizeof *bases; b++) {
        sieve_canon_base *parsed = sieve_canon_parse_base(bases[b]);
        ck_assert_msg(parsed != NULL, "%s", bases[b]);
        for (size_t r = 0; r < sizeof refs / sizeof *refs; r++) {
            size_t n = strlen(refs[r]);
            int st = sieve_canon_url(dflt, bases[b], refs[r], n, want, sizeof want, NULL);
            int got_st = sieve_canon_url_parsed(dflt, parsed, refs[r], n, got, sizeof got, NULL);
            ck_assert_msg(got_st == st, "%s + %s: %d, not %d", bases[b], refs[r], got_st, st);
            if (st == SIEVE_OK)
                ck_assert_msg(strcmp(got, want) == 0, "%s + %s: %s, not %s", bases[b], refs[r], got,
                              want);
        }
        sieve_canon_base_free(parsed);
    }
}
END_TEST

START_TEST(whitespace_follows_html_href_rules)
{
    static const row rows[] = {
        {"  http://example.com/a  ", "http://example.com/a", 0},
        {"\t\n\r\f http://example.com/\x01", "http://example.com/", 0},
        {"http://exa\tmple.com/a\nb\r/c", "http://example.com/ab/c", 0},
        {"ja\nva\tscript:alert(1)", NULL, SIEVE_ESCHEME},
        {" g ", "http://a/b/c/g", 0},
        {"a\x01z", "http://a/b/c/a%01z", 0},
        {" \t\n", RFC_BASE, 0},
    };
    RUN(dflt, RFC_BASE, rows);
    expect_s(dflt, NULL, "  \t\n ", NULL, SIEVE_EEMPTY);
    expect_s(dflt, NULL, "", NULL, SIEVE_EEMPTY);
}
END_TEST

/* Browsers read a backslash as '/' in an http(s) URL, up to its query;
 * curl keeps it, and the links written so ("..\\img\\a.png", common on
 * sites made on Windows) led nowhere. */
START_TEST(backslashes_before_the_query_are_slashes)
{
    static const row rows[] = {
        {"..\\img\\a.png", "http://a/b/img/a.png", 0},
        {"g\\h", "http://a/b/c/g/h", 0},
        {"\\g\\..\\h", "http://a/h", 0},
        {"\\\\other.example\\x", "http://other.example/x", 0},
        {"http:\\\\example.org\\p", "http://example.org/p", 0},
        {"http://example.com\\p\\q", "http://example.com/p/q", 0},
        {"a\\b?q=\\x#f\\g", "http://a/b/c/a/b?q=\\x", 0},
        {"a?\\b", "http://a/b/c/a?\\b", 0},
        {"mailto:a\\b", NULL, SIEVE_ESCHEME},
    };
    RUN(dflt, RFC_BASE, rows);
}
END_TEST

START_TEST(only_http_and_https_are_accepted)
{
    static const row rows[] = {
        {"javascript:void(0)", NULL, SIEVE_ESCHEME},
        {"JavaScript:alert(1)", NULL, SIEVE_ESCHEME},
        {"mailto:someone@example.com", NULL, SIEVE_ESCHEME},
        {"data:text/html,<b>x</b>", NULL, SIEVE_ESCHEME},
        {"tel:+15555550100", NULL, SIEVE_ESCHEME},
        {"ftp://example.com/file", NULL, SIEVE_ESCHEME},
        {"file:///etc/passwd", NULL, SIEVE_ESCHEME},
        {"ws://example.com/", NULL, SIEVE_ESCHEME},
        {"about:blank", NULL, SIEVE_ESCHEME},
        {"http://example.com/", "http://example.com/", 0},
        {"https://example.com/", "https://example.com/", 0},
    };
    RUN(dflt, RFC_BASE, rows);
    /* A relative reference takes the base's scheme. */
    expect_s(dflt, "ftp://example.com/a/", "b", NULL, SIEVE_ESCHEME);
}
END_TEST

START_TEST(bases_and_malformed_input)
{
    expect_s(dflt, NULL, "g", NULL, SIEVE_EURL);
    expect_s(dflt, NULL, "/g", NULL, SIEVE_EURL);
    expect_s(dflt, "not a url", "g", NULL, SIEVE_EURL);
    expect_s(dflt, "not a url", "http://example.com/x", "http://example.com/x", 0);
    expect_s(dflt, "https://example.com/a/b", "//other.org/x", "https://other.org/x", 0);
    expect_s(dflt, NULL, "http://", NULL, SIEVE_EURL);
    expect_s(dflt, NULL, "http://exa mple.com/", NULL, SIEVE_EURL);
    expect_s(dflt, NULL, "http://[::1/", NULL, SIEVE_EURL);
    /* An embedded NUL is a control byte like any other. */
    expect(dflt, NULL, "http://x.org/a\0b", 16, "http://x.org/a%00b", 0);
    char out[8];
    ck_assert_int_eq(sieve_canon_url(NULL, NULL, "http://x/", 9, out, 8, NULL), SIEVE_EINVAL);
    ck_assert_int_eq(sieve_canon_url(dflt, NULL, NULL, 3, out, 8, NULL), SIEVE_EINVAL);
    ck_assert_int_eq(sieve_canon_url(dflt, NULL, "http://x/", 9, NULL, 8, NULL), SIEVE_EINVAL);
}
END_TEST

START_TEST(small_buffer_reports_needed_length)
{
    char out[64];
    sieve_canon_info info;
    const char *u = "http://example.com/abc";
    ck_assert_int_eq(sieve_canon_url(dflt, NULL, u, strlen(u), out, strlen(u), &info),
                     SIEVE_ERANGE);
    ck_assert_uint_eq(info.len, strlen(u));
    ck_assert_int_eq(sieve_canon_url(dflt, NULL, u, strlen(u), out, strlen(u) + 1, &info),
                     SIEVE_OK);
    ck_assert_str_eq(out, u);
}
END_TEST

/* Builds "http://h.io" + a path of n segments named by pick(i). */
static void build_path(char *buf, size_t cap, unsigned n, const char *(*pick)(unsigned))
{
    size_t len = (size_t)snprintf(buf, cap, "http://h.io");
    for (unsigned i = 0; i < n; i++)
        len += (size_t)snprintf(buf + len, cap - len, "/%s", pick(i));
}

static const char *distinct(unsigned i)
{
    static const char *names[] = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k",
                                  "l", "m", "n", "o", "p", "q", "r", "s", "t", "u", "v"};
    return names[i % 22];
}

static const char *same(unsigned i)
{
    (void)i;
    return "x";
}

START_TEST(trap_guard_segments)
{
    char url[256];
    build_path(url, sizeof url, 20, distinct);
    expect_s(dflt, NULL, url, url, 0);
    build_path(url, sizeof url, 21, distinct);
    expect_s(dflt, NULL, url, NULL, SIEVE_ESEGMENTS);
    /* A trailing slash adds an empty segment. */
    build_path(url, sizeof url, 19, distinct);
    strcat(url, "/");
    expect_s(dflt, NULL, url, url, 0);
    build_path(url, sizeof url, 20, distinct);
    strcat(url, "/");
    expect_s(dflt, NULL, url, NULL, SIEVE_ESEGMENTS);
    /* Dot segments are removed before counting. */
    char want[256];
    build_path(want, sizeof want, 20, distinct);
    strcat(want, "/");
    build_path(url, sizeof url, 20, distinct);
    strcat(url, "/u/../");
    expect_s(dflt, NULL, url, NULL, SIEVE_ESEGMENTS);
    build_path(url, sizeof url, 22, distinct);
    strcat(url, "/../..");
    build_path(want, sizeof want, 20, distinct);
    strcat(want, "/");
    expect_s(dflt, NULL, url, NULL, SIEVE_ESEGMENTS);
    build_path(url, sizeof url, 22, distinct);
    strcat(url, "/../../..");
    build_path(want, sizeof want, 19, distinct);
    strcat(want, "/");
    expect_s(dflt, NULL, url, want, 0);
}
END_TEST

START_TEST(trap_guard_repeats)
{
    char url[256];
    build_path(url, sizeof url, 2, same);
    expect_s(dflt, NULL, url, url, 0);
    build_path(url, sizeof url, 3, same);
    expect_s(dflt, NULL, url, NULL, SIEVE_EREPEAT);
    expect_s(dflt, NULL, "http://h.io/a/x/x/b/x/x/c", "http://h.io/a/x/x/b/x/x/c", 0);
    expect_s(dflt, NULL, "http://h.io/a/x/x/x/", NULL, SIEVE_EREPEAT);
    expect_s(dflt, NULL, "http://h.io/a/b/a/b/a/b", "http://h.io/a/b/a/b/a/b", 0);
    /* Compared after escapes are normalized. */
    expect_s(dflt, NULL, "http://h.io/x/%78/%78", NULL, SIEVE_EREPEAT);
    /* "/a////b" has three empty segments in a row, "/a///b" two. */
    expect_s(dflt, NULL, "http://h.io/a////b", NULL, SIEVE_EREPEAT);
    expect_s(dflt, NULL, "http://h.io/a///b", "http://h.io/a///b", 0);
}
END_TEST

START_TEST(trap_guard_length)
{
    sieve_canon_config cfg;
    sieve_canon_config_init(&cfg);
    cfg.max_len = 32;
    sieve_canon *c;
    ck_assert_int_eq(sieve_canon_new(&c, &cfg), SIEVE_OK);
    ck_assert_uint_eq(sieve_canon_max_len(c), 32);
    const char *at = "http://example.com/abcdefghijklm"; /* 32 bytes */
    ck_assert_uint_eq(strlen(at), 32);
    expect_s(c, NULL, at, at, 0);
    expect_s(c, NULL, "http://example.com/abcdefghijklmn", NULL, SIEVE_ETOOLONG);
    /* Measured on the result: the input may be longer. */
    expect_s(c, NULL, "HTTP://EXAMPLE.COM:80/a/../abcdefghijklm#fragment", at, 0);
    /* Inputs beyond 4 * max_len are refused before parsing. */
    char big[200];
    memset(big, ' ', sizeof big);
    memcpy(big, "http://e.io/", 12);
    expect(c, NULL, big, 128, "http://e.io/", 0);
    expect(c, NULL, big, 129, NULL, SIEVE_ETOOLONG);
    sieve_canon_free(c);
}
END_TEST

START_TEST(guards_can_be_disabled)
{
    sieve_canon_config cfg;
    sieve_canon_config_init(&cfg);
    cfg.max_segments = 0;
    cfg.max_repeat = 0;
    sieve_canon *c;
    ck_assert_int_eq(sieve_canon_new(&c, &cfg), SIEVE_OK);
    char url[256];
    build_path(url, sizeof url, 40, same);
    expect_s(c, NULL, url, url, 0);
    sieve_canon_free(c);
}
END_TEST

START_TEST(strip_params_and_sort_query)
{
    static const char *const pats[] = {"utm_*", "sessionid", "*_ref"};
    sieve_canon_config cfg;
    sieve_canon_config_init(&cfg);
    cfg.strip_params = pats;
    cfg.n_strip_params = 3;
    sieve_canon *strip, *sort;
    ck_assert_int_eq(sieve_canon_new(&strip, &cfg), SIEVE_OK);
    cfg.sort_query = true;
    ck_assert_int_eq(sieve_canon_new(&sort, &cfg), SIEVE_OK);

    const char *u = "http://e.io/p?utm_source=x&id=1&SessionID=2&UTM_Medium&sessionid2=3"
                    "&a_ref=4&ref=5&utm%5Fcampaign=6";
    expect_s(strip, NULL, u, "http://e.io/p?id=1&sessionid2=3&ref=5", 0);
    expect_s(strip, NULL, "http://e.io/p?utm_a=1&sessionid=2", "http://e.io/p", 0);
    expect_s(strip, NULL, "http://e.io/p?xutm_a=1&utm=2", "http://e.io/p?xutm_a=1&utm=2", 0);
    /* Without patterns, nothing is stripped and the order is kept. */
    expect_s(dflt, NULL, "http://e.io/?utm_a=1&b=2&a=3", "http://e.io/?utm_a=1&b=2&a=3", 0);

    /* Sorting is by name and stable: repeated names keep their order. */
    expect_s(sort, NULL, "http://e.io/?b=2&a=1&c&a=0&ab=9&utm_x=1",
             "http://e.io/?a=1&a=0&ab=9&b=2&c", 0);
    expect_s(sort, NULL, "http://e.io/?z=1&y", "http://e.io/?y&z=1", 0);
    sieve_canon_free(strip);
    sieve_canon_free(sort);

    const char *const bad[] = {"ok", ""};
    cfg.strip_params = bad;
    cfg.n_strip_params = 2;
    ck_assert_int_eq(sieve_canon_new(&strip, &cfg), SIEVE_EINVAL);
    cfg.strip_params = NULL;
    ck_assert_int_eq(sieve_canon_new(&strip, &cfg), SIEVE_EINVAL);
    cfg.n_strip_params = 0;
    cfg.max_len = 15;
    ck_assert_int_eq(sieve_canon_new(&strip, &cfg), SIEVE_EINVAL);
    cfg.max_len = SIEVE_CANON_MAX_LEN_LIMIT + 1;
    ck_assert_int_eq(sieve_canon_new(&strip, &cfg), SIEVE_EINVAL);
}
END_TEST

START_TEST(idn_and_odd_hosts)
{
    static const row rows[] = {
        {"http://b\xc3\xbc"
         "cher.de/",
         "http://xn--bcher-kva.de/", 0},
        {"http://B\xc3\x9c"
         "CHER.DE/x",
         "http://xn--bcher-kva.de/x", 0},
        {"http://XN--BCHER-KVA.de/", "http://xn--bcher-kva.de/", 0},
        {"http://\xff.com/", NULL, SIEVE_EURL},
        {"http://0x7f.1/", "http://127.0.0.1/", 0},
        {"http://127.0.0.1:8080/", "http://127.0.0.1:8080/", 0},
        {"http://%65xample.com/", "http://example.com/", 0},
        {"http://%32/", "http://0.0.0.2/", 0},
        {"http://%31%32%37.1/", "http://127.0.0.1/", 0},
        {"http://example.com./", "http://example.com./", 0},
        {"http://exa_mple.com/", "http://exa_mple.com/", 0},
        {"http://a b.com/", NULL, SIEVE_EURL},
        {"http://a%25b.com/", NULL, SIEVE_EURL},
        {"http://a~b.com/", NULL, SIEVE_EURL},
        {"http://a%2Fb.com/", NULL, SIEVE_EURL},
    };
    RUN(dflt, NULL, rows);
}
END_TEST

START_TEST(ipv6_literal_hosts)
{
    expect_s(dflt, NULL, "http://[2001:DB8::1]:80/x", "http://[2001:db8::1]/x", 0);
    expect_s(dflt, NULL, "https://[::1]:8443", "https://[::1]:8443/", 0);
    expect_s(dflt, "http://[::1]/a/b", "../c", "http://[::1]/c", 0);
    expect_s(dflt, NULL, "http://[::g]/", NULL, SIEVE_EURL);
    char out[64];
    sieve_canon_info info;
    const char *u = "http://[2001:DB8::1]:8080/x";
    ck_assert_int_eq(sieve_canon_url(dflt, NULL, u, strlen(u), out, sizeof out, &info), SIEVE_OK);
    ck_assert_uint_eq(info.host_off, 7);
    ck_assert_uint_eq(info.host_len, strlen("[2001:db8::1]"));
    ck_assert_int_eq(memcmp(out + info.host_off, "[2001:db8::1]", info.host_len), 0);
}
END_TEST

START_TEST(host_of_a_url)
{
    char h[64];
    size_t n;
    ck_assert_int_eq(sieve_canon_host("http://u:p@WWW.Example.COM:8080/x?y", h, sizeof h, &n),
                     SIEVE_OK);
    ck_assert_str_eq(h, "www.example.com");
    ck_assert_uint_eq(n, 15);
    ck_assert_int_eq(sieve_canon_host("https://[::1]/", h, sizeof h, &n), SIEVE_OK);
    ck_assert_str_eq(h, "[::1]");
    ck_assert_int_eq(sieve_canon_host("http://b\xc3\xbc"
                                      "cher.de/",
                                      h, sizeof h, &n),
                     SIEVE_OK);
    ck_assert_str_eq(h, "xn--bcher-kva.de");
    ck_assert_int_eq(sieve_canon_host("ftp://example.com/", h, sizeof h, &n), SIEVE_ESCHEME);
    ck_assert_int_eq(sieve_canon_host("mailto:a@b.c", h, sizeof h, &n), SIEVE_ESCHEME);
    ck_assert_int_eq(sieve_canon_host("/relative", h, sizeof h, &n), SIEVE_EURL);
    ck_assert_int_eq(sieve_canon_host("http://example.com/", h, 5, &n), SIEVE_ERANGE);
    ck_assert_uint_eq(n, 11);
    ck_assert_int_eq(sieve_canon_host(NULL, h, 5, &n), SIEVE_EINVAL);

    /* info from sieve_canon_url gives the same host without a parse. */
    char out[64];
    sieve_canon_info info;
    const char *u = "HTTPS://user@Sub.Example.org:444/p";
    ck_assert_int_eq(sieve_canon_url(dflt, NULL, u, strlen(u), out, sizeof out, &info), SIEVE_OK);
    ck_assert_str_eq(out, "https://sub.example.org:444/p");
    ck_assert_int_eq(sieve_canon_host(out, h, sizeof h, &n), SIEVE_OK);
    ck_assert_uint_eq(info.host_len, n);
    ck_assert_int_eq(memcmp(out + info.host_off, h, n), 0);
}
END_TEST

START_TEST(megabyte_input_fails_cleanly)
{
    size_t n = 1024 * 1024;
    char *big = malloc(n + 1);
    ck_assert_ptr_nonnull(big);
    memcpy(big, "http://example.com/", 19);
    memset(big + 19, 'a', n - 19);
    big[n] = '\0';
    char out[SIEVE_CANON_MAX_LEN + 1];
    ck_assert_int_eq(sieve_canon_url(dflt, NULL, big, n, out, sizeof out, NULL), SIEVE_ETOOLONG);
    ck_assert_int_eq(sieve_canon_url(dflt, RFC_BASE, big + 19, n - 19, out, sizeof out, NULL),
                     SIEVE_ETOOLONG);

    /* With the largest max_len the parser itself sees it. */
    sieve_canon_config cfg;
    sieve_canon_config_init(&cfg);
    cfg.max_len = SIEVE_CANON_MAX_LEN_LIMIT;
    sieve_canon *c;
    ck_assert_int_eq(sieve_canon_new(&c, &cfg), SIEVE_OK);
    char *res = malloc(n + 1);
    ck_assert_ptr_nonnull(res);
    sieve_canon_info info;
    ck_assert_int_eq(sieve_canon_url(c, NULL, big, n, res, n + 1, &info), SIEVE_OK);
    ck_assert_uint_eq(info.len, n);
    ck_assert_int_eq(memcmp(res, big, n), 0);
    /* One byte more than max_len once the spaces are encoded. */
    memset(big + 19, ' ', 10);
    ck_assert_int_eq(sieve_canon_url(c, NULL, big, n, res, n + 1, &info), SIEVE_ETOOLONG);
    /* Every byte value, 1 MB of them. */
    for (size_t i = 0; i < n; i++)
        big[i] = (char)(i * 7919 % 251);
    int st = sieve_canon_url(c, RFC_BASE, big, n, res, n + 1, &info);
    ck_assert(st == SIEVE_OK || st < 0);
    if (st == SIEVE_OK) {
        /* The bytes hold a '#': what follows it is gone. */
        ck_assert_uint_lt(info.len, 4096);
        ck_assert_ptr_null(memchr(res, '#', info.len));
        ck_assert_int_eq(memcmp(res, "http://a/b/c/", 13), 0);
    }
    free(res);
    free(big);
    sieve_canon_free(c);
}
END_TEST

/* One canonicalizer, several threads: each must see the single-thread
 * results. */
static const char *const shared_refs[] = {
    "g", "../g", "HTTP://X.ORG:80/%7e", "javascript:x", "//h/a/b/../c?z=1#f", "http://h/a/a/a",
};

static void *worker(void *arg)
{
    const char(*want)[SIEVE_CANON_MAX_LEN + 1] = arg;
    char out[SIEVE_CANON_MAX_LEN + 1];
    for (int round = 0; round < 2000; round++) {
        for (size_t i = 0; i < sizeof shared_refs / sizeof *shared_refs; i++) {
            int st = sieve_canon_url(dflt, RFC_BASE, shared_refs[i], strlen(shared_refs[i]), out,
                                     sizeof out, NULL);
            if (strcmp(st == SIEVE_OK ? out : sieve_strerror(st), want[i]) != 0)
                return (void *)1;
        }
    }
    return NULL;
}

START_TEST(one_canon_many_threads)
{
    enum { N = sizeof shared_refs / sizeof *shared_refs };
    static char want[N][SIEVE_CANON_MAX_LEN + 1];
    char out[SIEVE_CANON_MAX_LEN + 1];
    for (size_t i = 0; i < N; i++) {
        int st = sieve_canon_url(dflt, RFC_BASE, shared_refs[i], strlen(shared_refs[i]), out,
                                 sizeof out, NULL);
        snprintf(want[i], sizeof want[i], "%s", st == SIEVE_OK ? out : sieve_strerror(st));
    }
    ck_assert_str_eq(want[0], "http://a/b/c/g");
    ck_assert_str_eq(want[4], "http://h/a/c?z=1");
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, worker, want), 0);
    for (int i = 0; i < 4; i++) {
        void *r;
        pthread_join(t[i], &r);
        ck_assert_ptr_null(r);
    }
}
END_TEST

int main(void)
{
    /* libcurl converts IDN hosts from the locale's charset. */
    setlocale(LC_CTYPE, "C.UTF-8");
    Suite *s = suite_create("url");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, rfc3986_normal_examples);
    tcase_add_test(tc, rfc3986_abnormal_examples);
    tcase_add_test(tc, base_fragment_is_ignored);
    tcase_add_test(tc, normalizes_case_escapes_ports_and_paths);
    tcase_add_test(tc, raw_bytes_in_the_base_are_encoded);
    tcase_add_test(tc, escapes_are_decoded_after_parsing);
    tcase_add_test(tc, fragments_are_removed);
    tcase_add_test(tc, fragments_are_not_parsed);
    tcase_add_test(tc, references_joined_to_a_parsed_base_match_curls_join);
    tcase_add_test(tc, whitespace_follows_html_href_rules);
    tcase_add_test(tc, backslashes_before_the_query_are_slashes);
    tcase_add_test(tc, only_http_and_https_are_accepted);
    tcase_add_test(tc, bases_and_malformed_input);
    tcase_add_test(tc, small_buffer_reports_needed_length);
    tcase_add_test(tc, trap_guard_segments);
    tcase_add_test(tc, trap_guard_repeats);
    tcase_add_test(tc, trap_guard_length);
    tcase_add_test(tc, guards_can_be_disabled);
    tcase_add_test(tc, strip_params_and_sort_query);
    tcase_add_test(tc, idn_and_odd_hosts);
    tcase_add_test(tc, ipv6_literal_hosts);
    tcase_add_test(tc, host_of_a_url);
    tcase_add_test(tc, megabyte_input_fails_cleanly);
    tcase_add_test(tc, one_canon_many_threads);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
