/* test-frontier.c - the frontier's contract, one thread at a time. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
    cfg.seen.fp_rate = 0.01; /* the rate these tests' sizes were chosen for */
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
    char abuf[256], bbuf[256], buf[256];
    sieve_url a, b, u;
    ck_assert_int_eq(sieve_frontier_pop(f, abuf, sizeof abuf, &a, 0), SIEVE_OK);
    ck_assert_str_eq(a.url, "http://a.test/");
    ck_assert_uint_eq(a.len, strlen("http://a.test/"));
    ck_assert_uint_eq(a.depth, 0);
    ck_assert_int_eq(sieve_frontier_pop(f, bbuf, sizeof bbuf, &b, 0), SIEVE_OK);
    ck_assert_str_eq(b.url, "http://b.test/x");
    ck_assert_uint_eq(b.depth, 3);
    /* Two URLs in flight and none queued: not over yet. */
    ck_assert_int_eq(sieve_frontier_pop(f, buf, sizeof buf, &u, 0), SIEVE_EAGAIN);
    ck_assert_int_eq(sieve_frontier_pop(f, buf, sizeof buf, &u, 20), SIEVE_ETIMEDOUT);
    ck_assert_int_eq(sieve_frontier_done(f, &b), SIEVE_OK);
    ck_assert_int_eq(sieve_frontier_done(f, &a), SIEVE_OK);
    ck_assert_int_eq(sieve_frontier_done(f, &a), SIEVE_ESTATE);
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

/* http(s):// takes an eight-byte shortcut; anything else the general
 * path, which tells another scheme (SIEVE_ESCHEME) from no URL at all. */
START_TEST(schemes_are_checked_on_both_paths)
{
    sieve_frontier *f = make(SIEVE_SEEN_EXACT, 1000, 0, NULL);
    const char *good[] = {"http://a/",  "https://a/", "HTTP://a/",
                          "HtTpS://B/", "http://a",   "https://b"};
    const char *other[] = {"httpx://a/", "ftp://a/",   "h:x",         "a+b-c.d:x",
                           "file:///x",  "mailto:a@b", "javascript:", "ws://a/",
                           "httpss://a", "htt://a/",   "shttp://a/",  "http+s://a/"};
    const char *bad[] = {"http:",  "https:",   "http",        "https",      "http;//a/",
                         "-x:y",   "a b:c",    "1a:b",        ":x",         "https:/ a",
                         "http:x", "https:/a", "http://",     "https://",   "https!//a/",
                         "http:/", "HTTP:/a/", "http:\x0f/x", "http\x1a//x"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        ck_assert_msg(push_str(f, good[i], 0) == SIEVE_OK, "refused '%s'", good[i]);
    for (size_t i = 0; i < sizeof other / sizeof *other; i++)
        ck_assert_msg(push_str(f, other[i], 0) == SIEVE_ESCHEME, "'%s' not SIEVE_ESCHEME",
                      other[i]);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_msg(push_str(f, bad[i], 0) == SIEVE_EURL, "'%s' not SIEVE_EURL", bad[i]);
    sieve_frontier_free(f);
}
END_TEST

/* A URL of another scheme is neither enqueued nor marked seen, whichever
 * call offers it. */
START_TEST(other_schemes_are_refused_by_every_push)
{
    sieve_frontier *f = make(_i ? SIEVE_SEEN_EXACT : SIEVE_SEEN_BLOOM, 1000, 0, NULL);
    const char *ftp = "ftp://a.test/file";
    ck_assert_int_eq(push_str(f, ftp, 0), SIEVE_ESCHEME);
    ck_assert_int_eq(sieve_frontier_mark_seen(f, ftp, strlen(ftp)), SIEVE_ESCHEME);
    sieve_url batch[3] = {
        {.url = "mailto:x@a.test", .len = 15},
        {.url = "http://a.test/", .len = 14},
        {.url = ftp, .len = strlen(ftp)},
    };
    int results[3];
    ck_assert_int_eq(sieve_frontier_push_batch(f, batch, 3, results), 1);
    ck_assert_int_eq(results[0], SIEVE_ESCHEME);
    ck_assert_int_eq(results[1], SIEVE_OK);
    ck_assert_int_eq(results[2], SIEVE_ESCHEME);
    sieve_frontier_stats st;
    sieve_frontier_stats_get(f, &st);
    ck_assert_uint_eq(st.pushed, 4);
    ck_assert_uint_eq(st.invalid, 3);
    ck_assert_uint_eq(st.enqueued, 1);
    ck_assert_uint_eq(st.queue_len, 1);
    ck_assert_double_eq_tol(st.est_count, 1.0, 0.1); /* only the http URL */
    sieve_frontier_free(f);
}
END_TEST

/* done() answers one pop once. Loop 0: one FIFO; loop 1: per-host. */
static sieve_frontier *make_for_done(int per_host)
{
    sieve_frontier_config cfg;
    sieve_frontier_config_init(&cfg);
    cfg.seen.kind = SIEVE_SEEN_EXACT;
    cfg.politeness.enabled = per_host;
    cfg.politeness.max_conns = 1000;
    cfg.politeness.delay_s = 0;
    sieve_frontier *f = NULL;
    ck_assert_int_eq(sieve_frontier_new(&f, &cfg), SIEVE_OK);
    return f;
}

/* Checks that nothing was reported done and one URL is still in flight. */
static void assert_one_in_flight(sieve_frontier *f)
{
    sieve_frontier_stats st;
    sieve_frontier_stats_get(f, &st);
    ck_assert_uint_eq(st.in_flight, 1);
    ck_assert_uint_eq(st.done, 0);
}

START_TEST(done_refuses_a_url_it_did_not_hand_out)
{
    sieve_frontier *f = make_for_done(_i);
    ck_assert_int_eq(push_str(f, "http://a.test/1", 0), SIEVE_OK);
    ck_assert_int_eq(push_str(f, "http://a.test/2", 0), SIEVE_OK);
    char buf[64];
    sieve_url u;
    ck_assert_int_eq(sieve_frontier_pop(f, buf, sizeof buf, &u, 0), SIEVE_OK);
    ck_assert_str_eq(u.url, "http://a.test/1");

    /* never popped: a fresh struct, and the queued URL with u's ticket */
    sieve_url never = {.url = "http://a.test/2", .len = 15};
    ck_assert_int_eq(sieve_frontier_done(f, &never), SIEVE_ESTATE);
    never.ticket = u.ticket;
    never.host = u.host;
    ck_assert_int_eq(sieve_frontier_done(f, &never), SIEVE_ESTATE);
    /* forged: other bytes, length, host or ticket */
    sieve_url forged = u;
    forged.url = "http://a.test/X";
    ck_assert_int_eq(sieve_frontier_done(f, &forged), SIEVE_ESTATE);
    forged = u, forged.len--;
    ck_assert_int_eq(sieve_frontier_done(f, &forged), SIEVE_ESTATE);
    forged = u, forged.host++;
    ck_assert_int_eq(sieve_frontier_done(f, &forged), SIEVE_ESTATE);
    forged = u, forged.ticket ^= 1;
    ck_assert_int_eq(sieve_frontier_done(f, &forged), SIEVE_ESTATE);
    forged = u, forged.ticket += UINT64_C(1) << 32;
    ck_assert_int_eq(sieve_frontier_done(f, &forged), SIEVE_ESTATE);
    forged = u, forged.ticket = 0;
    ck_assert_int_eq(sieve_frontier_done(f, &forged), SIEVE_ESTATE);
    ck_assert_int_eq(sieve_frontier_requeue(f, &forged), SIEVE_ESTATE);
    ck_assert_int_eq(sieve_frontier_done(f, NULL), SIEVE_EINVAL);
    assert_one_in_flight(f);
    /* none of that ended the crawl */
    char other[64];
    sieve_url v;
    ck_assert_int_eq(sieve_frontier_pop(f, other, sizeof other, &v, 0), SIEVE_OK);
    ck_assert_int_eq(sieve_frontier_pop(f, other, sizeof other, &v, 0), SIEVE_EAGAIN);
    sieve_frontier_free(f);
}
END_TEST

START_TEST(done_accepts_a_copy_once)
{
    sieve_frontier *f = make_for_done(_i);
    ck_assert_int_eq(push_str(f, "http://a.test/1", 0), SIEVE_OK);
    char buf[64];
    sieve_url u;
    ck_assert_int_eq(sieve_frontier_pop(f, buf, sizeof buf, &u, 0), SIEVE_OK);
    /* the struct copied and the bytes moved to a buffer of one's own */
    char own[64];
    memcpy(own, buf, u.len + 1);
    memset(buf, 0, sizeof buf);
    sieve_url copy = u;
    copy.url = own;
    ck_assert_int_eq(sieve_frontier_done(f, &copy), SIEVE_OK);
    ck_assert_int_eq(sieve_frontier_done(f, &copy), SIEVE_ESTATE);
    ck_assert_int_eq(sieve_frontier_requeue(f, &copy), SIEVE_ESTATE);
    /* nor does the free slot's next ticket answer for it */
    copy.ticket += UINT64_C(1) << 32;
    ck_assert_int_eq(sieve_frontier_done(f, &copy), SIEVE_ESTATE);
    sieve_frontier_stats st;
    sieve_frontier_stats_get(f, &st);
    ck_assert_uint_eq(st.in_flight, 0);
    ck_assert_uint_eq(st.done, 1);
    ck_assert_int_eq(sieve_frontier_pop(f, buf, sizeof buf, &u, -1), SIEVE_EDRAINED);
    sieve_frontier_free(f);
}
END_TEST

/* A requeued URL comes back with a new ticket: the old one is spent, though
 * its bytes and host are the same and its slot is reused. */
START_TEST(requeue_spends_the_ticket)
{
    sieve_frontier *f = make_for_done(1);
    ck_assert_int_eq(push_str(f, "http://a.test/1", 0), SIEVE_OK);
    char buf[64], again[64];
    sieve_url u, w;
    ck_assert_int_eq(sieve_frontier_pop(f, buf, sizeof buf, &u, 0), SIEVE_OK);
    sieve_url forged = u;
    forged.url = "http://a.test/2";
    ck_assert_int_eq(sieve_frontier_requeue(f, &forged), SIEVE_ESTATE);
    assert_one_in_flight(f);
    ck_assert_int_eq(sieve_frontier_requeue(f, &u), SIEVE_OK);
    ck_assert_int_eq(sieve_frontier_requeue(f, &u), SIEVE_ESTATE);
    ck_assert_int_eq(sieve_frontier_pop(f, again, sizeof again, &w, 0), SIEVE_OK);
    ck_assert_str_eq(w.url, u.url);
    ck_assert(w.ticket != u.ticket);
    ck_assert_int_eq(sieve_frontier_done(f, &u), SIEVE_ESTATE);
    assert_one_in_flight(f);
    ck_assert_int_eq(sieve_frontier_done(f, &w), SIEVE_OK);
    ck_assert_int_eq(sieve_frontier_pop(f, again, sizeof again, &w, -1), SIEVE_EDRAINED);
    sieve_frontier_free(f);
}
END_TEST

/* Many URLs in flight at once (the table of tickets grows while they are)
 * are answered in any order, each once. */
START_TEST(many_in_flight_are_answered_in_any_order)
{
    enum { N = 500 };
    sieve_frontier *f = make_for_done(_i);
    static char bufs[N][64];
    static sieve_url u[N];
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < N; i++) {
            char url[64];
            snprintf(url, sizeof url, "http://h%d.test/%d/%d", i % 7, round, i);
            ck_assert_int_eq(push_str(f, url, 0), SIEVE_OK);
        }
        for (int i = 0; i < N; i++)
            ck_assert_int_eq(sieve_frontier_pop(f, bufs[i], sizeof bufs[i], &u[i], 0), SIEVE_OK);
        for (int i = 0; i < N; i++) {
            int j = (i * 7919) % N; /* a permutation: N and 7919 are coprime */
            ck_assert_int_eq(sieve_frontier_done(f, &u[j]), SIEVE_OK);
        }
        for (int i = 0; i < N; i++)
            ck_assert_int_eq(sieve_frontier_done(f, &u[i]), SIEVE_ESTATE);
    }
    sieve_frontier_stats st;
    sieve_frontier_stats_get(f, &st);
    ck_assert_uint_eq(st.done, 2 * N);
    ck_assert_uint_eq(st.in_flight, 0);
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

/* A filter far past its capacity ends with every bit set, and its
 * estimated count is infinite: the warnings stop with one that says it is
 * full, and pushes go on (doubling the next warning's count never passes
 * infinity: a push once spun under the lock). */
START_TEST(a_full_seen_set_warns_once_more_and_pushes_go_on)
{
    capture cap = {0};
    sieve_frontier *f = make(SIEVE_SEEN_BLOOM, 10, SIEVE_OVERFLOW_WARN, &cap);
    char url[64];
    sieve_frontier_stats st;
    int i = 0;
    for (; i < 1000000; i++) {
        int n = snprintf(url, sizeof url, "http://full.test/%d", i);
        sieve_frontier_push(f, url, (size_t)n, 0);
        sieve_frontier_stats_get(f, &st);
        if (isinf(st.est_count))
            break;
    }
    ck_assert_msg(isinf(st.est_count), "the filter never filled: est %.0f", st.est_count);
    ck_assert_ptr_nonnull(strstr(cap.last_warning, "seen-set full"));
    int warnings = cap.count[SIEVE_LOG_WARN];
    ck_assert_int_ge(warnings, 2); /* the doublings before, then full */
    for (int k = 0; k < 1000; k++) {
        int n = snprintf(url, sizeof url, "http://full.test/more/%d", k);
        /* every URL looks seen now, and is said to be */
        ck_assert_int_eq(sieve_frontier_push(f, url, (size_t)n, 0), SIEVE_SEEN);
    }
    ck_assert_int_eq(cap.count[SIEVE_LOG_WARN], warnings);
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

START_TEST(defaults_are_documented_values)
{
    sieve_frontier_config cfg;
    sieve_frontier_config_init(&cfg);
    ck_assert_uint_eq(cfg.max_url_len, SIEVE_URL_MAX);
    ck_assert_uint_eq(SIEVE_URL_MAX, 8192);
    ck_assert(cfg.logger.fn == NULL);
    ck_assert_double_eq(cfg.seen.fp_rate, 1e-4);
    ck_assert(!cfg.politeness.enabled);
    cfg.seen.kind = SIEVE_SEEN_EXACT;
    sieve_frontier *f = NULL;
    ck_assert_int_eq(sieve_frontier_new(&f, &cfg), SIEVE_OK);
    static char url[SIEVE_URL_MAX + 2];
    memset(url, 'a', sizeof url);
    memcpy(url, "http://a.test/", 14);
    ck_assert_int_eq(sieve_frontier_push(f, url, SIEVE_URL_MAX + 1, 0), SIEVE_ETOOLONG);
    ck_assert_int_eq(sieve_frontier_push(f, url, SIEVE_URL_MAX, 0), SIEVE_OK);
    static char buf[SIEVE_URL_MAX + 1];
    sieve_url u;
    ck_assert_int_eq(sieve_frontier_pop(f, buf, sizeof buf, &u, 0), SIEVE_OK);
    ck_assert_uint_eq(u.len, SIEVE_URL_MAX);
    sieve_frontier_free(f);
}
END_TEST

/* Runs a frontier past its capacity with the given logger and returns what
 * reached stderr meanwhile (a static buffer). */
static const char *stderr_of_an_overflow(const sieve_logger *lg)
{
    sieve_frontier_config cfg;
    sieve_frontier_config_init(&cfg);
    cfg.seen.capacity = 100;
    if (lg != NULL)
        cfg.logger = *lg;
    sieve_frontier *f = NULL;
    ck_assert_int_eq(sieve_frontier_new(&f, &cfg), SIEVE_OK);
    FILE *tmp = tmpfile();
    ck_assert_ptr_nonnull(tmp);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    ck_assert_int_ge(saved, 0);
    ck_assert_int_eq(dup2(fileno(tmp), STDERR_FILENO), STDERR_FILENO);
    char url[64];
    for (int i = 0; i < 1000; i++) {
        int n = snprintf(url, sizeof url, "http://o.test/%d", i);
        sieve_frontier_push(f, url, (size_t)n, 0);
    }
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    sieve_frontier_stats st;
    sieve_frontier_stats_get(f, &st);
    ck_assert_double_gt(st.est_count, 400); /* the capacity was passed twice over */
    sieve_frontier_free(f);
    static char out[4096];
    rewind(tmp);
    size_t n = fread(out, 1, sizeof out - 1, tmp);
    out[n] = '\0';
    fclose(tmp);
    return out;
}

/* Library code never prints on its own: the warnings go nowhere until a
 * logger is set, and to stderr with sieve_logger_default(). */
START_TEST(the_default_logger_prints_nothing)
{
    ck_assert_str_eq(stderr_of_an_overflow(NULL), "");
    sieve_logger lg = sieve_logger_default();
    const char *out = stderr_of_an_overflow(&lg);
    ck_assert_msg(strstr(out, "sieve: warning: seen-set estimated count") != NULL, "stderr: '%s'",
                  out);
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
    /* what only a frontier on a directory takes */
    for (int i = 0; i < 3; i++) {
        sieve_frontier_config_init(&cfg);
        uint64_t *v[] = {&cfg.queue_memory, &cfg.segment_bytes, &cfg.checkpoint_bytes};
        *v[i] = 1u << 20;
        ck_assert_int_eq(sieve_frontier_new(&f, &cfg), SIEVE_EINVAL);
        ck_assert_ptr_null(f);
    }
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

/* on_wake fires at every event that can make an empty try_pop() succeed,
 * and try_pop() says how long a host's delay keeps it back. */
static void count_wake(void *ud)
{
    (*(int *)ud)++;
}

START_TEST(wake_hook_and_try_pop_tell_when_to_look_again)
{
    int wakes = 0;
    sieve_frontier_config cfg;
    sieve_frontier_config_init(&cfg);
    cfg.politeness =
        (sieve_politeness){.enabled = true, .max_conns = 1, .delay_s = 0.5, .max_delay_s = 30};
    cfg.on_wake = count_wake;
    cfg.wake_ud = &wakes;
    sieve_frontier *f;
    ck_assert_int_eq(sieve_frontier_new(&f, &cfg), SIEVE_OK);
    char buf[256];
    sieve_url u, v;
    double ready_in = -1;
    ck_assert_int_eq(sieve_frontier_try_pop(f, buf, sizeof buf, &u, &ready_in), SIEVE_EDRAINED);

    ck_assert_int_eq(push_str(f, "http://a.test/1", 0), SIEVE_OK);
    ck_assert_int_eq(wakes, 1);
    ck_assert_int_eq(push_str(f, "http://a.test/1", 0), SIEVE_SEEN);
    ck_assert_int_eq(wakes, 1); /* nothing new: no wake */
    ck_assert_int_eq(push_str(f, "http://a.test/2", 0), SIEVE_OK);
    ck_assert_int_eq(wakes, 2);
    ck_assert_int_eq(sieve_frontier_try_pop(f, buf, sizeof buf, &u, &ready_in), SIEVE_OK);
    /* one connection per host: nothing until done(), and no timer helps */
    ck_assert_int_eq(sieve_frontier_try_pop(f, buf + 128, 128, &v, &ready_in), SIEVE_EAGAIN);
    ck_assert(isinf(ready_in));
    ck_assert_int_eq(sieve_frontier_done(f, &u), SIEVE_OK);
    ck_assert_int_eq(wakes, 3);
    /* the host's delay: ready in about half a second */
    ck_assert_int_eq(sieve_frontier_try_pop(f, buf, sizeof buf, &u, &ready_in), SIEVE_EAGAIN);
    ck_assert(ready_in > 0.2 && ready_in <= 0.5);

    ck_assert_int_eq(sieve_frontier_hold_host(f, "b.test", 6, true), SIEVE_OK);
    ck_assert_int_eq(wakes, 3);
    ck_assert_int_eq(sieve_frontier_hold_host(f, "b.test", 6, false), SIEVE_OK);
    ck_assert_int_eq(wakes, 4);
    sieve_frontier_close(f);
    ck_assert_int_eq(wakes, 5);
    ck_assert_int_eq(sieve_frontier_try_pop(f, buf, sizeof buf, &u, &ready_in), SIEVE_ECLOSED);
    sieve_frontier_free(f);
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
    tcase_add_loop_test(tc, other_schemes_are_refused_by_every_push, 0, 2);
    tcase_add_loop_test(tc, done_refuses_a_url_it_did_not_hand_out, 0, 2);
    tcase_add_loop_test(tc, done_accepts_a_copy_once, 0, 2);
    tcase_add_test(tc, requeue_spends_the_ticket);
    tcase_add_loop_test(tc, many_in_flight_are_answered_in_any_order, 0, 2);
    tcase_add_test(tc, pop_with_small_buffer_keeps_the_url);
    tcase_add_test(tc, mark_seen_blocks_later_pushes);
    tcase_add_test(tc, batch_push_equals_single_pushes);
    tcase_add_test(tc, close_ends_pops_but_keeps_pushes);
    tcase_add_test(tc, capacity_warning_is_logged_once_at_the_crossing);
    tcase_add_test(tc, a_full_seen_set_warns_once_more_and_pushes_go_on);
    tcase_add_test(tc, grow_policy_grows_instead_of_warning);
    tcase_add_test(tc, defaults_are_documented_values);
    tcase_add_test(tc, the_default_logger_prints_nothing);
    tcase_add_test(tc, bad_arguments_are_refused);
    tcase_add_test(tc, wake_hook_and_try_pop_tell_when_to_look_again);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
