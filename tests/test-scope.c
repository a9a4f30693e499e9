/* test-scope.c - the crawl's boundary (src/cmd/scope.c): seed hosts or
 * registrable domains (the public suffix list through libpsl), --allow
 * and --deny, --max-depth and the per-host quota.
 *
 * Hosts here are names that are never resolved: the scope judges URLs by
 * their text, before any fetch, so no network is involved. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "crawl.h"
#include "scope.h"

static crawl_opts opts(scope_kind kind)
{
    crawl_opts o;
    memset(&o, 0, sizeof o);
    o.scope = kind;
    o.max_depth = -1;
    return o;
}

static scope *make(const crawl_opts *o, const char *const *seeds)
{
    scope *s;
    char err[256] = "";
    ck_assert_msg(scope_new(&s, o, err, sizeof err) == SIEVE_OK, "%s", err);
    for (; *seeds != NULL; seeds++)
        ck_assert_int_eq(scope_add_seed(s, *seeds, strlen(*seeds)), SIEVE_OK);
    return s;
}

/* Judges http://HOST/PATH at depth. */
static scope_verdict judge(scope *s, const char *host, const char *path, uint32_t depth)
{
    char url[512];
    snprintf(url, sizeof url, "http://%s%s", host, path);
    return scope_check(s, url, url + 7, strlen(host), depth);
}

START_TEST(host_scope_keeps_to_the_seed_hosts)
{
    crawl_opts o = opts(SCOPE_HOST);
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
    crawl_opts o = opts(SCOPE_DOMAIN);
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
    crawl_opts o = opts(SCOPE_ANY);
    const char *seeds[] = {"www.example.co.uk", NULL};
    scope *s = make(&o, seeds);
    ck_assert_int_eq(judge(s, "elsewhere.example.net", "/", 5), SCOPE_IN);
    scope_free(s);
}
END_TEST

START_TEST(depth_deny_and_allow)
{
    crawl_opts o = opts(SCOPE_HOST);
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

START_TEST(bad_expressions_are_refused_with_their_text)
{
    crawl_opts o = opts(SCOPE_HOST);
    const char *deny[] = {"(unclosed"};
    o.deny = deny;
    o.n_deny = 1;
    scope *s = NULL;
    char err[256] = "";
    ck_assert_int_eq(scope_new(&s, &o, err, sizeof err), SIEVE_EINVAL);
    ck_assert_ptr_null(s);
    ck_assert_msg(strstr(err, "--deny") && strstr(err, "(unclosed"), "%s", err);
}
END_TEST

/* The quota counts URLs reserved per host; a release (the frontier had
 * seen the URL) gives the slot back. */
START_TEST(per_host_quota_counts_and_releases)
{
    crawl_opts o = opts(SCOPE_ANY);
    o.max_pages_per_host = 2;
    const char *seeds[] = {NULL};
    scope *s = make(&o, seeds);
    ck_assert_int_eq(judge(s, "a.example", "/1", 1), SCOPE_IN);
    ck_assert_int_eq(judge(s, "a.example", "/2", 1), SCOPE_IN);
    ck_assert_int_eq(judge(s, "a.example", "/3", 1), SCOPE_HOST_FULL);
    ck_assert_int_eq(judge(s, "b.example", "/1", 1), SCOPE_IN);
    scope_release(s, "a.example", strlen("a.example"));
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
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
