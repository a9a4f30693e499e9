/* test-frontier.c - the frontier's contract, one thread at a time. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sieve/sieve.h"

/* Log capture: counts messages per level and keeps the last warning. */
typedef struct capture {
    int count[4];
    char last_warning[1024];
} capture;

static void capture_log(void *ctx, sieve_log_level level, const char *msg)
{
    capture *c = ctx;
    c->count[level]++;
    if (level == SIEVE_LOG_WARN)
        snprintf(c->last_warning, sizeof c->last_warning, "%s", msg);
}

static sieve_frontier *make(sieve_seen_kind kind, uint64_t capacity, sieve_overflow ov,
                            capture *cap)
{
    sieve_frontier_config cfg;
    sieve_frontier_config_init(&cfg);
    cfg.seen.kind = kind;
    cfg.seen.capacity = capacity;
    cfg.seen.overflow = ov;
    cfg.max_url_len = 200;
    if (cap != NULL)
        cfg.logger = (sieve_logger){.fn = capture_log, .ctx = cap, .level = SIEVE_LOG_DEBUG};
    sieve_frontier *f = NULL;
    ck_assert_int_eq(sieve_frontier_new(&f, &cfg), SIEVE_OK);
    return f;
}

static int push_str(sieve_frontier *f, const char *url, uint32_t depth)
{
    return sieve_frontier_push(f, url, strlen(url), depth);
}

START_TEST(push_then_pop_is_fifo_with_depth)
{
    sieve_frontier *f = make(_i ? SIEVE_SEEN_EXACT : SIEVE_SEEN_BLOOM, 1000, 0, NULL);
    ck_assert_int_eq(push_str(f, "http://a.test/", 0), SIEVE_OK);
    ck_assert_int_eq(push_str(f, "http://b.test/x", 3), SIEVE_OK);
    ck_assert_int_eq(push_str(f, "http://a.test/", 5), SIEVE_SEEN);
    char buf[256];
    sieve_url u;
    ck_assert_int_eq(sieve_frontier_pop(f, buf, sizeof buf, &u, 0), SIEVE_OK);
    ck_assert_str_eq(u.url, "http://a.test/");
    ck_assert_uint_eq(u.len, strlen("http://a.test/"));
    ck_assert_uint_eq(u.depth, 0);
    ck_assert_int_eq(sieve_frontier_pop(f, buf, sizeof buf, &u, 0), SIEVE_OK);
    ck_assert_str_eq(u.url, "http://b.test/x");
    ck_assert_uint_eq(u.depth, 3);
    /* Two URLs in flight and none queued: not over yet. */
    ck_assert_int_eq(sieve_frontier_pop(f, buf, sizeof buf, &u, 0), SIEVE_EAGAIN);
    ck_assert_int_eq(sieve_frontier_pop(f, buf, sizeof buf, &u, 20), SIEVE_ETIMEDOUT);
    ck_assert_int_eq(sieve_frontier_done(f, &u), SIEVE_OK);
    ck_assert_int_eq(sieve_frontier_done(f, &u), SIEVE_OK);
    ck_assert_int_eq(sieve_frontier_done(f, &u), SIEVE_ESTATE);
    ck_assert_int_eq(sieve_frontier_pop(f, buf, sizeof buf, &u, -1), SIEVE_EDRAINED);
    sieve_frontier_stats st;
    sieve_frontier_stats_get(f, &st);
    ck_assert_uint_eq(st.pushed, 3);
    ck_assert_uint_eq(st.seen, 1);
    ck_assert_uint_eq(st.enqueued, 2);
    ck_assert_uint_eq(st.popped, 2);
    ck_assert_uint_eq(st.done, 2);
    ck_assert_uint_eq(st.in_flight, 0);
    ck_assert_uint_eq(st.queue_len, 0);
    sieve_frontier_free(f);
}
END_TEST

START_TEST(invalid_urls_are_refused_and_not_marked)
{
    sieve_frontier *f = make(SIEVE_SEEN_EXACT, 1000, 0, NULL);
    char longurl[300];
    memset(longurl, 'a', sizeof longurl);
    memcpy(longurl, "http://", 7);
    ck_assert_int_eq(sieve_frontier_push(f, "", 0, 0), SIEVE_EEMPTY);
    ck_assert_int_eq(sieve_frontier_push(f, NULL, 0, 0), SIEVE_EEMPTY);
    ck_assert_int_eq(sieve_frontier_push(f, longurl, 201, 0), SIEVE_ETOOLONG);
    ck_assert_int_eq(sieve_frontier_push(f, longurl, 200, 0), SIEVE_OK);
    const char *bad[] = {"no-scheme", "://x",        "1http://x",   "http:",
                         "ht tp://x", "http://a b/", "http://a\n/", "http://a\x7f/"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_msg(push_str(f, bad[i], 0) == SIEVE_EURL, "accepted '%s'", bad[i]);
    ck_assert_int_eq(sieve_frontier_mark_seen(f, "nope", 4), SIEVE_EURL);
    sieve_frontier_stats st;
    sieve_frontier_stats_get(f, &st);
    ck_assert_uint_eq(st.invalid, 3 + sizeof bad / sizeof *bad);
    ck_assert_uint_eq(st.enqueued, 1);
    ck_assert_double_eq(st.est_count, 1.0);
    sieve_frontier_free(f);
}
END_TEST

/* The byte scan reads sixteen bytes at a time and the last sixteen again,
 * with a byte loop below sixteen: try every bad byte at every position of
 * URLs of every length around those boundaries. */
START_TEST(a_bad_byte_anywhere_is_found)
{
    sieve_frontier *f = make(SIEVE_SEEN_EXACT, 1000, 0, NULL);
    char url[80];
    for (size_t len = 9; len <= 72; len++) {
        for (unsigned bad = 0; bad <= 0x7f; bad++) {
            if (bad > 0x20 && bad != 0x7f)
                continue;
            for (size_t at = 7; at < len; at++) {
                memcpy(url, "http://", 7);
                memset(url + 7, 'a', len - 7);
                url[at] = (char)bad;
                ck_assert_msg(sieve_frontier_push(f, url, len, 0) == SIEVE_EURL,
                              "byte 0x%02x at %zu of %zu accepted", bad, at, len);
            }
        }
    }
    /* bytes from 0x80 up (UTF-8 left unescaped by a caller) are not refused */
    for (size_t at = 7; at < 48; at++) {
        memcpy(url, "http://", 7);
        memset(url + 7, 'a', 41);
        url[at] = (char)0xc3;
        ck_assert_int_eq(sieve_frontier_push(f, url, 48, 0), SIEVE_OK);
    }
    sieve_frontier_free(f);
}
END_TEST

/* http and https take a shortcut; every other scheme the general path. */
START_TEST(schemes_are_checked_on_both_paths)
{
    sieve_frontier *f = make(SIEVE_SEEN_EXACT, 1000, 0, NULL);
    const char *good[] = {"http://a/", "https://a/", "httpx://a/", "ftp://a/",
                          "h:x",       "a+b-c.d:x",  "HTTP://a/",  "http:x"};
    const char *bad[] = {"http:", "https:", "http", "https", "http;//a/", "https!//a/",
                         "-x:y",  "a b:c",  "1a:b", ":x",    "https:/ a"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        ck_assert_msg(push_str(f, good[i], 0) == SIEVE_OK, "refused '%s'", good[i]);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_msg(push_str(f, bad[i], 0) == SIEVE_EURL, "accepted '%s'", bad[i]);
    sieve_frontier_free(f);
}
END_TEST

START_TEST(pop_with_small_buffer_keeps_the_url)
{
    sieve_frontier *f = make(SIEVE_SEEN_EXACT, 10, 0, NULL);
    ck_assert_int_eq(push_str(f, "http://example.test/long/path", 1), SIEVE_OK);
    char small[10], big[64];
    sieve_url u;
    ck_assert_int_eq(sieve_frontier_pop(f, small, sizeof small, &u, 0), SIEVE_ERANGE);
    ck_assert_int_eq(sieve_frontier_pop(f, big, 29, &u, 0), SIEVE_ERANGE);
    ck_assert_int_eq(sieve_frontier_pop(f, big, 30, &u, 0), SIEVE_OK);
    ck_assert_str_eq(u.url, "http://example.test/long/path");
    sieve_frontier_free(f);
}
END_TEST

START_TEST(mark_seen_blocks_later_pushes)
{
    sieve_frontier *f = make(SIEVE_SEEN_EXACT, 10, 0, NULL);
    const char *u = "http://x.test/final";
    ck_assert_int_eq(sieve_frontier_mark_seen(f, u, strlen(u)), SIEVE_OK);
    ck_assert_int_eq(sieve_frontier_mark_seen(f, u, strlen(u)), SIEVE_SEEN);
    ck_assert_int_eq(push_str(f, u, 0), SIEVE_SEEN);
    sieve_frontier_free(f);
}
END_TEST

START_TEST(batch_push_equals_single_pushes)
{
    sieve_frontier *a = make(SIEVE_SEEN_BLOOM, 5000, 0, NULL);
    sieve_frontier *b = make(SIEVE_SEEN_BLOOM, 5000, 0, NULL);
    enum { N = 1000 };
    static char store[N][64];
    sieve_url urls[N];
    for (int i = 0; i < N; i++) {
        /* repeats inside the batch and an invalid URL now and then */
        int n = i % 97 == 0 ? snprintf(store[i], 64, "not a url %d", i)
                            : snprintf(store[i], 64, "http://h%d.test/%d", i % 50, i % 700);
        urls[i] = (sieve_url){.url = store[i], .len = (size_t)n, .depth = (uint32_t)i};
    }
    int results[N];
    int enq = sieve_frontier_push_batch(a, urls, N, results);
    int single_enq = 0;
    for (int i = 0; i < N; i++) {
        int rc = sieve_frontier_push(b, urls[i].url, urls[i].len, urls[i].depth);
        ck_assert_int_eq(rc, results[i]);
        single_enq += rc == SIEVE_OK;
    }
    ck_assert_int_eq(enq, single_enq);
    char x[128], y[128];
    sieve_url ux, uy;
    while (sieve_frontier_pop(a, x, sizeof x, &ux, 0) == SIEVE_OK) {
        ck_assert_int_eq(sieve_frontier_pop(b, y, sizeof y, &uy, 0), SIEVE_OK);
        ck_assert_str_eq(x, y);
        ck_assert_uint_eq(ux.depth, uy.depth);
    }
    ck_assert_int_eq(sieve_frontier_pop(b, y, sizeof y, &uy, 0), SIEVE_EAGAIN);
    ck_assert_int_eq(sieve_frontier_push_batch(a, NULL, 0, NULL), 0);
    sieve_frontier_free(a);
    sieve_frontier_free(b);
}
END_TEST

START_TEST(close_ends_pops_but_keeps_pushes)
{
    sieve_frontier *f = make(SIEVE_SEEN_EXACT, 10, 0, NULL);
    ck_assert_int_eq(push_str(f, "http://a.test/", 0), SIEVE_OK);
    sieve_frontier_close(f);
    sieve_frontier_close(f);
    char buf[64];
    sieve_url u;
    ck_assert_int_eq(sieve_frontier_pop(f, buf, sizeof buf, &u, -1), SIEVE_ECLOSED);
    ck_assert_int_eq(push_str(f, "http://b.test/", 0), SIEVE_OK);
    sieve_frontier_stats st;
    sieve_frontier_stats_get(f, &st);
    ck_assert_uint_eq(st.queue_len, 2);
    ck_assert_int_eq(st.closed, 1);
    sieve_frontier_free(f);
}
END_TEST

/* One warning at the first crossing of the capacity, the next at twice it. */
START_TEST(capacity_warning_is_logged_once_at_the_crossing)
{
    capture cap = {0};
    const uint64_t capacity = 10000;
    sieve_frontier *f = make(SIEVE_SEEN_BLOOM, capacity, SIEVE_OVERFLOW_WARN, &cap);
    char url[64];
    sieve_frontier_stats st;
    for (int i = 0; i < 19000; i++) {
        int n = snprintf(url, sizeof url, "http://w.test/%d", i);
        sieve_frontier_push(f, url, (size_t)n, 0);
        sieve_frontier_stats_get(f, &st);
        int expected = st.est_count >= (double)capacity ? 1 : 0;
        ck_assert_msg(cap.count[SIEVE_LOG_WARN] == expected,
                      "after %d pushes, est %.1f: %d warnings", i + 1, st.est_count,
                      cap.count[SIEVE_LOG_WARN]);
    }
    ck_assert_int_eq(cap.count[SIEVE_LOG_WARN], 1);
    ck_assert_ptr_nonnull(strstr(cap.last_warning, "capacity 10000"));
    ck_assert_ptr_nonnull(strstr(cap.last_warning, "false-positive rate"));
    for (int i = 19000; i < 60000; i++) {
        int n = snprintf(url, sizeof url, "http://w.test/%d", i);
        sieve_frontier_push(f, url, (size_t)n, 0);
    }
    sieve_frontier_stats_get(f, &st);
    /* 2x and 4x capacity crossed, 8x not */
    ck_assert_msg(st.est_count > 40000 && st.est_count < 80000, "est %.0f", st.est_count);
    ck_assert_int_eq(cap.count[SIEVE_LOG_WARN], 3);
    sieve_frontier_free(f);
}
END_TEST

START_TEST(grow_policy_grows_instead_of_warning)
{
    capture cap = {0};
    sieve_frontier *f = make(SIEVE_SEEN_BLOOM, 1000, SIEVE_OVERFLOW_GROW, &cap);
    char url[64];
    for (int i = 0; i < 10000; i++) {
        int n = snprintf(url, sizeof url, "http://g.test/%d", i);
        sieve_frontier_push(f, url, (size_t)n, 0);
    }
    sieve_frontier_stats st;
    sieve_frontier_stats_get(f, &st);
    ck_assert_uint_ge(st.layers, 3);
    ck_assert_int_eq(cap.count[SIEVE_LOG_WARN], 0);
    ck_assert_int_eq(cap.count[SIEVE_LOG_INFO], (int)st.layers - 1);
    ck_assert_double_le(st.est_fp_rate, 0.01);
    sieve_frontier_free(f);
}
END_TEST

START_TEST(bad_arguments_are_refused)
{
    sieve_frontier_config cfg;
    sieve_frontier_config_init(&cfg);
    sieve_frontier *f = NULL;
    cfg.max_url_len = 0;
    ck_assert_int_eq(sieve_frontier_new(&f, &cfg), SIEVE_EINVAL);
    sieve_frontier_config_init(&cfg);
    cfg.seen.capacity = 0;
    ck_assert_int_eq(sieve_frontier_new(&f, &cfg), SIEVE_EINVAL);
    ck_assert_ptr_null(f);
    sieve_frontier_config_init(&cfg);
    ck_assert_int_eq(sieve_frontier_new(&f, &cfg), SIEVE_OK);
    char buf[8];
    sieve_url u;
    ck_assert_int_eq(sieve_frontier_pop(f, buf, 0, &u, 0), SIEVE_EINVAL);
    ck_assert_int_eq(sieve_frontier_pop(f, NULL, 8, &u, 0), SIEVE_EINVAL);
    sieve_frontier_free(f);
    sieve_frontier_free(NULL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("frontier");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 240);
    tcase_add_loop_test(tc, push_then_pop_is_fifo_with_depth, 0, 2);
    tcase_add_test(tc, invalid_urls_are_refused_and_not_marked);
    tcase_add_test(tc, a_bad_byte_anywhere_is_found);
    tcase_add_test(tc, schemes_are_checked_on_both_paths);
    tcase_add_test(tc, pop_with_small_buffer_keeps_the_url);
    tcase_add_test(tc, mark_seen_blocks_later_pushes);
    tcase_add_test(tc, batch_push_equals_single_pushes);
    tcase_add_test(tc, close_ends_pops_but_keeps_pushes);
    tcase_add_test(tc, capacity_warning_is_logged_once_at_the_crossing);
    tcase_add_test(tc, grow_policy_grows_instead_of_warning);
    tcase_add_test(tc, bad_arguments_are_refused);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
