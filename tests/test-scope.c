/* test-scope.c - the crawl's boundary (src/engine/scope.c): seed origins
 * or registrable domains (the public suffix list through libpsl), allow
 * and deny expressions, rejected suffixes, max_depth and the per-host
 * quota.
 *
 * Hosts here are names that are never resolved: the scope judges URLs by
 * their text, before any fetch, so no network is involved. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accept.h"
#include "scope.h"

static sieve_crawl_options opts(sieve_scope kind)
{
    sieve_crawl_options o;
    sieve_crawl_options_init(&o);
    o.scope = kind;
    return o;
}

static sieve_canon *canon(void)
{
    static sieve_canon *c;
    if (c == NULL)
        ck_assert_int_eq(sieve_canon_new(&c, NULL), SIEVE_OK);
    return c;
}

/* Canonicalizes url into buf for the scope. */
static sieve_canon_info parse(const char *url, char *buf, size_t cap)
{
    sieve_canon_info info;
    ck_assert_int_eq(sieve_canon_url(canon(), NULL, url, strlen(url), buf, cap, &info), SIEVE_OK);
    return info;
}

/* Seeds are host names (http://HOST/) or whole URLs. */
static scope *make(const sieve_crawl_options *o, const char *const *seeds)
{
    scope *s;
    ck_assert_int_eq(scope_new(&s, o, NULL), SIEVE_OK);
    for (; *seeds != NULL; seeds++) {
        char text[512], url[512];
        snprintf(text, sizeof text, strstr(*seeds, "://") ? "%s" : "http://%s/", *seeds);
        sieve_canon_info info = parse(text, url, sizeof url);
        ck_assert_int_eq(scope_add_seed(s, url, &info), SIEVE_OK);
    }
    return s;
}

/* Judges a URL at depth. */
static scope_verdict judge_url(scope *s, const char *text, uint32_t depth)
{
    char url[512];
    sieve_canon_info info = parse(text, url, sizeof url);
    return scope_check(s, url, &info, depth);
}

/* Judges http://HOST/PATH at depth. */
static scope_verdict judge(scope *s, const char *host, const char *path, uint32_t depth)
{
    char url[512];
    snprintf(url, sizeof url, "http://%s%s", host, path);
    return judge_url(s, url, depth);
}

START_TEST(host_scope_keeps_to_the_seed_hosts)
{
    sieve_crawl_options o = opts(SIEVE_SCOPE_HOST);
    const char *seeds[] = {"www.example.co.uk", "127.0.0.1", NULL};
    scope *s = make(&o, seeds);
    ck_assert_int_eq(judge(s, "www.example.co.uk", "/a", 1), SCOPE_IN);
    ck_assert_int_eq(judge(s, "127.0.0.1", "/a", 1), SCOPE_IN);
    ck_assert_int_eq(judge(s, "blog.example.co.uk", "/a", 1), SCOPE_OFF_SITE);
    ck_assert_int_eq(judge(s, "example.co.uk", "/", 1), SCOPE_OFF_SITE);
    ck_assert_int_eq(judge(s, "127.0.0.2", "/", 1), SCOPE_OFF_SITE);
    scope_free(s);
}
END_TEST

/* Registrable domains come from the public suffix list: co.uk and
 * github.io are suffixes, so example.co.uk and one.github.io are sites of
 * their own; an IP address is its own site. */
START_TEST(domain_scope_keeps_to_registrable_domains)
{
    sieve_crawl_options o = opts(SIEVE_SCOPE_DOMAIN);
    const char *seeds[] = {"www.example.co.uk", "a.b.example.org", "one.github.io", "127.0.0.1",
                           NULL};
    scope *s = make(&o, seeds);
    const char *in[] = {"www.example.co.uk", "blog.example.co.uk", "example.co.uk", "x.example.org",
                        "example.org",       "deep.one.github.io", "127.0.0.1"};
    const char *off[] = {"other.co.uk", "co.uk",          "example.com", "two.github.io",
                         "github.io",   "example.org.uk", "127.0.0.2"};
    for (size_t i = 0; i < sizeof in / sizeof *in; i++)
        ck_assert_msg(judge(s, in[i], "/", 3) == SCOPE_IN, "%s left out", in[i]);
    for (size_t i = 0; i < sizeof off / sizeof *off; i++)
        ck_assert_msg(judge(s, off[i], "/", 3) == SCOPE_OFF_SITE, "%s let in", off[i]);
    scope_free(s);
}
END_TEST

START_TEST(any_scope_takes_every_host)
{
    sieve_crawl_options o = opts(SIEVE_SCOPE_ANY);
    const char *seeds[] = {"www.example.co.uk", NULL};
    scope *s = make(&o, seeds);
    ck_assert_int_eq(judge(s, "elsewhere.example.net", "/", 5), SCOPE_IN);
    scope_free(s);
}
END_TEST

START_TEST(depth_deny_and_allow)
{
    sieve_crawl_options o = opts(SIEVE_SCOPE_HOST);
    const char *allow[] = {"/docs/", "/$"};
    const char *deny[] = {"\\.pdf$"};
    o.allow = allow;
    o.n_allow = 2;
    o.deny = deny;
    o.n_deny = 1;
    o.max_depth = 2;
    const char *seeds[] = {"example.org", NULL};
    scope *s = make(&o, seeds);
    ck_assert_int_eq(judge(s, "example.org", "/docs/a.html", 2), SCOPE_IN);
    ck_assert_int_eq(judge(s, "example.org", "/", 0), SCOPE_IN);
    ck_assert_int_eq(judge(s, "example.org", "/docs/a.html", 3), SCOPE_TOO_DEEP);
    ck_assert_int_eq(judge(s, "example.org", "/docs/a.pdf", 1), SCOPE_DENIED);
    ck_assert_int_eq(judge(s, "example.org", "/blog/a.html", 1), SCOPE_NOT_ALLOWED);
    scope_free(s);
}
END_TEST

static void keep_message(void *ctx, sieve_log_level level, const char *msg)
{
    (void)level;
    snprintf(ctx, 256, "%s", msg);
}

START_TEST(bad_expressions_are_refused_with_their_text)
{
    sieve_crawl_options o = opts(SIEVE_SCOPE_HOST);
    const char *deny[] = {"(unclosed"};
    o.deny = deny;
    o.n_deny = 1;
    char err[256] = "";
    o.logger = (sieve_logger){.fn = keep_message, .ctx = err, .level = SIEVE_LOG_ERROR};
    scope *s = NULL;
    ck_assert_int_eq(scope_new(&s, &o, NULL), SIEVE_EINVAL);
    ck_assert_ptr_null(s);
    ck_assert_msg(strstr(err, "deny") && strstr(err, "(unclosed"), "%s", err);
}
END_TEST

/* A host is an origin: another port or another scheme of a seed's host
 * is another site. */
START_TEST(host_scope_is_the_origin)
{
    sieve_crawl_options o = opts(SIEVE_SCOPE_HOST);
    const char *seeds[] = {"http://127.0.0.1:8080/start", NULL};
    scope *s = make(&o, seeds);
    ck_assert_int_eq(judge_url(s, "http://127.0.0.1:8080/a", 1), SCOPE_IN);
    ck_assert_int_eq(judge_url(s, "http://127.0.0.1:8081/a", 1), SCOPE_OFF_SITE);
    ck_assert_int_eq(judge_url(s, "http://127.0.0.1/a", 1), SCOPE_OFF_SITE);
    ck_assert_int_eq(judge_url(s, "https://127.0.0.1:8080/a", 1), SCOPE_OFF_SITE);
    scope_free(s);
    const char *plain[] = {"http://example.org/", NULL};
    s = make(&o, plain);
    ck_assert_int_eq(judge_url(s, "http://example.org:80/a", 1), SCOPE_IN);
    ck_assert_int_eq(judge_url(s, "http://EXAMPLE.org/b", 1), SCOPE_IN);
    ck_assert_int_eq(judge_url(s, "http://example.org:8080/a", 1), SCOPE_OFF_SITE);
    scope_free(s);
}
END_TEST

/* Rejected suffixes are never queued; with an accept list only accepted
 * suffixes, HTML and suffix-less paths are. */
START_TEST(accept_and_reject_by_suffix)
{
    sieve_crawl_options o = opts(SIEVE_SCOPE_ANY);
    const char *reject[] = {".jpg", "zip", "image/png"};
    o.reject = reject;
    o.n_reject = 3;
    accept_rules *a;
    ck_assert_int_eq(accept_new(&a, &o), SIEVE_OK);
    const char *seeds[] = {NULL};
    scope *s;
    ck_assert_int_eq(scope_new(&s, &o, a), SIEVE_OK);
    (void)seeds;
    ck_assert_int_eq(judge(s, "a.example", "/x.JPG", 1), SCOPE_REJECTED);
    ck_assert_int_eq(judge(s, "a.example", "/x.zip?y=1", 1), SCOPE_REJECTED);
    ck_assert_int_eq(judge(s, "a.example", "/x.zip.html", 1), SCOPE_IN);
    ck_assert_int_eq(judge(s, "a.example", "/x?f=a.jpg", 1), SCOPE_IN);
    ck_assert(!accept_type(a, "image/png; q=1"));
    ck_assert(accept_type(a, "image/gif"));
    scope_free(s);
    accept_free(a);

    const char *accept[] = {"pdf", "image/*"};
    o.n_reject = 0;
    o.accept = accept;
    o.n_accept = 2;
    ck_assert_int_eq(accept_new(&a, &o), SIEVE_OK);
    ck_assert_int_eq(scope_new(&s, &o, a), SIEVE_OK);
    ck_assert_int_eq(judge(s, "a.example", "/doc.pdf", 1), SCOPE_IN);
    ck_assert_int_eq(judge(s, "a.example", "/dir/", 1), SCOPE_IN);
    ck_assert_int_eq(judge(s, "a.example", "/page.html", 1), SCOPE_IN);
    ck_assert_int_eq(judge(s, "a.example", "/readme", 1), SCOPE_IN);
    ck_assert_int_eq(judge(s, "a.example", "/song.mp3", 1), SCOPE_REJECTED);
    ck_assert(accept_type(a, "image/webp"));
    ck_assert(accept_type(a, "text/html; charset=utf-8"));
    ck_assert(!accept_type(a, "audio/mpeg"));
    ck_assert(accept_type(a, NULL));
    scope_free(s);
    accept_free(a);

    const char *empty[] = {""};
    o.accept = empty;
    o.n_accept = 1;
    ck_assert_int_eq(accept_new(&a, &o), SIEVE_EINVAL);
}
END_TEST

/* The quota counts URLs reserved per host; a release (the frontier had
 * seen the URL) gives the slot back. */
START_TEST(per_host_quota_counts_and_releases)
{
    sieve_crawl_options o = opts(SIEVE_SCOPE_ANY);
    o.max_pages_per_host = 2;
    const char *seeds[] = {NULL};
    scope *s = make(&o, seeds);
    ck_assert_int_eq(judge(s, "a.example", "/1", 1), SCOPE_IN);
    ck_assert_int_eq(judge(s, "a.example", "/2", 1), SCOPE_IN);
    ck_assert_int_eq(judge(s, "a.example", "/3", 1), SCOPE_HOST_FULL);
    ck_assert_int_eq(judge(s, "b.example", "/1", 1), SCOPE_IN);
    scope_release(s, "http://a.example/1");
    ck_assert_int_eq(judge(s, "a.example", "/3", 1), SCOPE_IN);
    ck_assert_int_eq(judge(s, "a.example", "/4", 1), SCOPE_HOST_FULL);
    scope_free(s);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("scope");
    TCase *tc = tcase_create("scope");
    tcase_add_test(tc, host_scope_keeps_to_the_seed_hosts);
    tcase_add_test(tc, domain_scope_keeps_to_registrable_domains);
    tcase_add_test(tc, any_scope_takes_every_host);
    tcase_add_test(tc, depth_deny_and_allow);
    tcase_add_test(tc, bad_expressions_are_refused_with_their_text);
    tcase_add_test(tc, per_host_quota_counts_and_releases);
    tcase_add_test(tc, host_scope_is_the_origin);
    tcase_add_test(tc, accept_and_reject_by_suffix);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
