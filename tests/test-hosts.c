/* test-hosts.c - per-host scheduling through the frontier's API. */
#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sieve/sieve.h"

static sieve_frontier *make(unsigned max_conns, double delay)
{
    sieve_frontier_config cfg;
    sieve_frontier_config_init(&cfg);
    cfg.seen.kind = SIEVE_SEEN_EXACT;
    cfg.politeness.enabled = true;
    cfg.politeness.max_conns = max_conns;
    cfg.politeness.delay_s = delay;
    sieve_frontier *f = NULL;
    ck_assert_int_eq(sieve_frontier_new(&f, &cfg), SIEVE_OK);
    return f;
}

static void push(sieve_frontier *f, const char *url)
{
    ck_assert_int_eq(sieve_frontier_push(f, url, strlen(url), 0), SIEVE_OK);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Pops without waiting and checks the URL. */
static sieve_url take(sieve_frontier *f, char *buf, size_t cap, const char *want)
{
    sieve_url u;
    int rc = sieve_frontier_pop(f, buf, cap, &u, 0);
    ck_assert_msg(rc == SIEVE_OK, "wanted %s, got %s", want, sieve_strerror(rc));
    ck_assert_str_eq(u.url, want);
    return u;
}

START_TEST(each_host_is_taken_in_turn_and_waits_its_delay)
{
    sieve_frontier *f = make(1, 100.0);
    push(f, "http://a.test/1");
    push(f, "http://a.test/2");
    push(f, "http://b.test/1");
    push(f, "http://c.test/1");
    push(f, "http://b.test/2");
    char b1[64], b2[64], b3[64], b4[64];
    take(f, b1, sizeof b1, "http://a.test/1");
    take(f, b2, sizeof b2, "http://b.test/1");
    take(f, b3, sizeof b3, "http://c.test/1");
    sieve_url u;
    /* a and b have URLs, but their delay has not passed */
    ck_assert_int_eq(sieve_frontier_pop(f, b4, sizeof b4, &u, 0), SIEVE_EAGAIN);
    ck_assert_int_eq(sieve_frontier_pop(f, b4, sizeof b4, &u, 30), SIEVE_ETIMEDOUT);
    sieve_frontier_stats st;
    sieve_frontier_stats_get(f, &st);
    ck_assert_uint_eq(st.hosts, 3);
    ck_assert_uint_eq(st.queue_len, 2);
    ck_assert_uint_eq(st.in_flight, 3);
    sieve_frontier_free(f);
}
END_TEST

START_TEST(connections_per_host_are_capped)
{
    sieve_frontier *f = make(2, 0.0);
    for (int i = 1; i <= 4; i++) {
        char url[32];
        snprintf(url, sizeof url, "http://a.test/%d", i);
        push(f, url);
    }
    push(f, "http://b.test/1");
    char x[64], y[64], z[64], w[64];
    /* b has waited longer than a's second URL, so it goes second */
    sieve_url ua = take(f, x, sizeof x, "http://a.test/1");
    take(f, y, sizeof y, "http://b.test/1");
    take(f, z, sizeof z, "http://a.test/2");
    /* a is at its limit of two, b has nothing left */
    sieve_url u;
    ck_assert_int_eq(sieve_frontier_pop(f, w, sizeof w, &u, 0), SIEVE_EAGAIN);
    ck_assert_int_eq(sieve_frontier_done(f, &ua), SIEVE_OK);
    take(f, w, sizeof w, "http://a.test/3");
    sieve_frontier_free(f);
}
END_TEST

START_TEST(request_starts_to_a_host_are_spaced_by_the_delay)
{
    const double delay = 0.05;
    sieve_frontier *f = make(8, delay);
    for (int i = 0; i < 5; i++) {
        char url[32];
        snprintf(url, sizeof url, "http://a.test/%d", i);
        push(f, url);
    }
    /* A start happens inside pop(), between the times taken around it: the
     * end of a pop and the beginning of the one before bound two starts'
     * distance from above, whatever the scheduler does between them. */
    double before_last = 0;
    for (int i = 0; i < 5; i++) {
        char buf[64];
        sieve_url u;
        double before = now();
        ck_assert_int_eq(sieve_frontier_pop(f, buf, sizeof buf, &u, -1), SIEVE_OK);
        double after = now();
        if (i > 0)
            ck_assert_msg(after - before_last >= delay * 0.999, "starts at most %.4f s apart",
                          after - before_last);
        before_last = before;
        ck_assert_int_eq(sieve_frontier_done(f, &u), SIEVE_OK);
    }
    sieve_frontier_free(f);
}
END_TEST

START_TEST(a_busy_host_does_not_hold_back_the_others)
{
    sieve_frontier *f = make(1, 0.0);
    push(f, "http://slow.test/1");
    push(f, "http://slow.test/2");
    for (int i = 0; i < 3; i++) {
        char url[32];
        snprintf(url, sizeof url, "http://fast.test/%d", i);
        push(f, url);
    }
    char s1[64], buf[64];
    take(f, s1, sizeof s1, "http://slow.test/1"); /* never done in this test */
    for (int i = 0; i < 3; i++) {
        char want[32];
        snprintf(want, sizeof want, "http://fast.test/%d", i);
        sieve_url u = take(f, buf, sizeof buf, want);
        ck_assert_int_eq(sieve_frontier_done(f, &u), SIEVE_OK);
    }
    sieve_url u;
    ck_assert_int_eq(sieve_frontier_pop(f, buf, sizeof buf, &u, 0), SIEVE_EAGAIN);
    sieve_frontier_free(f);
}
END_TEST

START_TEST(ports_are_hosts_of_their_own)
{
    sieve_frontier *f = make(1, 100.0);
    push(f, "http://a.test:8001/x");
    push(f, "http://a.test:8002/x");
    push(f, "http://a.test:8001/y");
    char x[64], y[64];
    take(f, x, sizeof x, "http://a.test:8001/x");
    take(f, y, sizeof y, "http://a.test:8002/x");
    sieve_frontier_stats st;
    sieve_frontier_stats_get(f, &st);
    ck_assert_uint_eq(st.hosts, 2);
    sieve_frontier_free(f);
}
END_TEST

START_TEST(a_host_delay_can_be_set_for_one_host)
{
    sieve_frontier *f = make(4, 0.0);
    ck_assert_int_eq(sieve_frontier_set_host_delay(f, "b.test", 6, 100.0), SIEVE_OK);
    ck_assert_int_eq(sieve_frontier_set_host_delay(f, "b.test", 6, -1.0), SIEVE_EINVAL);
    push(f, "http://b.test/1");
    push(f, "http://b.test/2");
    push(f, "http://a.test/1");
    push(f, "http://a.test/2");
    char b1[64], a1[64], a2[64], none[64];
    take(f, b1, sizeof b1, "http://b.test/1");
    take(f, a1, sizeof a1, "http://a.test/1");
    take(f, a2, sizeof a2, "http://a.test/2");
    sieve_url u;
    ck_assert_int_eq(sieve_frontier_pop(f, none, sizeof none, &u, 0), SIEVE_EAGAIN);
    sieve_frontier_free(f);

    sieve_frontier_config cfg;
    sieve_frontier_config_init(&cfg);
    ck_assert_int_eq(sieve_frontier_new(&f, &cfg), SIEVE_OK);
    ck_assert_int_eq(sieve_frontier_set_host_delay(f, "b.test", 6, 1.0), SIEVE_ESTATE);
    sieve_frontier_free(f);
}
END_TEST

START_TEST(the_end_is_detected_with_per_host_queues)
{
    sieve_frontier *f = make(1, 0.0);
    push(f, "http://a.test/1");
    char buf[64];
    sieve_url u = take(f, buf, sizeof buf, "http://a.test/1");
    sieve_url other = u;
    other.host = 12345;
    ck_assert_int_eq(sieve_frontier_done(f, &other), SIEVE_ESTATE);
    ck_assert_int_eq(sieve_frontier_done(f, &u), SIEVE_OK);
    ck_assert_int_eq(sieve_frontier_pop(f, buf, sizeof buf, &u, -1), SIEVE_EDRAINED);
    sieve_frontier_free(f);
}
END_TEST

/* A done() whose host was changed to another busy host's frees neither. */
START_TEST(done_frees_only_the_host_of_the_popped_url)
{
    sieve_frontier *f = make(1, 0.0);
    push(f, "http://a.test/1");
    push(f, "http://b.test/1");
    push(f, "http://b.test/2");
    char x[64], y[64], z[64];
    sieve_url ua = take(f, x, sizeof x, "http://a.test/1");
    sieve_url ub = take(f, y, sizeof y, "http://b.test/1");
    ck_assert_uint_ne(ua.host, ub.host);
    sieve_url swapped = ua;
    swapped.host = ub.host;
    ck_assert_int_eq(sieve_frontier_done(f, &swapped), SIEVE_ESTATE);
    sieve_url u;
    ck_assert_int_eq(sieve_frontier_pop(f, z, sizeof z, &u, 0), SIEVE_EAGAIN); /* b still busy */
    ck_assert_int_eq(sieve_frontier_done(f, &ub), SIEVE_OK);
    take(f, z, sizeof z, "http://b.test/2");
    ck_assert_int_eq(sieve_frontier_done(f, &ua), SIEVE_OK);
    sieve_frontier_free(f);
}
END_TEST

START_TEST(a_requeued_url_comes_back_first_and_a_held_host_waits)
{
    sieve_frontier *f = make(1, 0.0);
    push(f, "http://a.test/1");
    push(f, "http://a.test/2");
    push(f, "http://b.test/1");
    char x[64], y[64];
    sieve_url u = take(f, x, sizeof x, "http://a.test/1");
    ck_assert_int_eq(sieve_frontier_hold_host(f, "a.test", 6, true), SIEVE_OK);
    ck_assert_int_eq(sieve_frontier_requeue(f, &u), SIEVE_OK);
    ck_assert_int_eq(sieve_frontier_requeue(f, &u), SIEVE_ESTATE); /* not in flight */
    /* a is held: only b comes out */
    sieve_url v = take(f, y, sizeof y, "http://b.test/1");
    ck_assert_int_eq(sieve_frontier_pop(f, x, sizeof x, &u, 0), SIEVE_EAGAIN);
    ck_assert_int_eq(sieve_frontier_done(f, &v), SIEVE_OK);
    ck_assert_int_eq(sieve_frontier_hold_host(f, "a.test", 6, false), SIEVE_OK);
    u = take(f, x, sizeof x, "http://a.test/1"); /* before a.test/2 */
    ck_assert_int_eq(sieve_frontier_done(f, &u), SIEVE_OK);
    u = take(f, x, sizeof x, "http://a.test/2");
    ck_assert_int_eq(sieve_frontier_done(f, &u), SIEVE_OK);
    ck_assert_int_eq(sieve_frontier_pop(f, x, sizeof x, &u, -1), SIEVE_EDRAINED);
    sieve_frontier_stats st;
    sieve_frontier_stats_get(f, &st);
    /* a requeued URL is not counted as popped twice */
    ck_assert_uint_eq(st.popped, 3);
    ck_assert_uint_eq(st.done, 3);
    sieve_frontier_free(f);
}
END_TEST

/* Pops url, waiting up to wait_s for its host's delay. */
static sieve_url take_after(sieve_frontier *f, char *buf, size_t cap, const char *url,
                            double wait_s)
{
    sieve_url u;
    ck_assert_int_eq(sieve_frontier_pop(f, buf, cap, &u, (int)(wait_s * 1000)), SIEVE_OK);
    ck_assert_str_eq(u.url, url);
    return u;
}

/* Giving a URL back counts as a request to its host: what was done in
 * its place (a robots.txt fetch) was one. */
START_TEST(a_requeue_restarts_the_hosts_delay)
{
    sieve_frontier *f = make(2, 0.3);
    push(f, "http://a.test/1");
    char x[64];
    sieve_url u = take(f, x, sizeof x, "http://a.test/1");
    struct timespec nap = {.tv_sec = 0, .tv_nsec = 200 * 1000 * 1000};
    nanosleep(&nap, NULL);
    ck_assert_int_eq(sieve_frontier_requeue(f, &u), SIEVE_OK);
    double ready_in = 0;
    ck_assert_int_eq(sieve_frontier_try_pop(f, x, sizeof x, &u, &ready_in), SIEVE_EAGAIN);
    ck_assert_msg(ready_in > 0.25 && ready_in <= 0.3, "ready in %.3f s", ready_in);
    /* a pause longer than the delay holds the host that long */
    u = take_after(f, x, sizeof x, "http://a.test/1", 0.5);
    ck_assert_int_eq(sieve_frontier_requeue_after(f, &u, 5), SIEVE_OK);
    ck_assert_int_eq(sieve_frontier_try_pop(f, x, sizeof x, &u, &ready_in), SIEVE_EAGAIN);
    ck_assert_msg(ready_in > 4.5 && ready_in <= 5, "ready in %.3f s", ready_in);
    ck_assert_int_eq(sieve_frontier_requeue_after(f, &u, -1), SIEVE_EINVAL);
    sieve_frontier_free(f);
}
END_TEST

/* A paused host gives no URL until its pause ends, its URLs kept, while
 * other hosts go on; a shorter pause does not cut a longer one short. */
START_TEST(a_paused_host_waits_and_others_go_on)
{
    sieve_frontier *f = make(2, 0);
    push(f, "http://a.test/1");
    push(f, "http://b.test/1");
    ck_assert_int_eq(sieve_frontier_pause_host(f, "a.test", 6, 5), SIEVE_OK);
    ck_assert_int_eq(sieve_frontier_pause_host(f, "a.test", 6, 1), SIEVE_OK);
    char x[64];
    sieve_url u = take(f, x, sizeof x, "http://b.test/1");
    ck_assert_int_eq(sieve_frontier_done(f, &u), SIEVE_OK);
    double ready_in = 0;
    ck_assert_int_eq(sieve_frontier_try_pop(f, x, sizeof x, &u, &ready_in), SIEVE_EAGAIN);
    ck_assert_msg(ready_in > 4.5 && ready_in <= 5, "ready in %.3f s", ready_in);
    sieve_frontier_stats st;
    sieve_frontier_stats_get(f, &st);
    ck_assert_uint_eq(st.queue_len, 1);
    /* a host not seen yet is paused before its first URL */
    ck_assert_int_eq(sieve_frontier_pause_host(f, "c.test", 6, 5), SIEVE_OK);
    push(f, "http://c.test/1");
    ck_assert_int_eq(sieve_frontier_try_pop(f, x, sizeof x, &u, &ready_in), SIEVE_EAGAIN);
    ck_assert_int_eq(sieve_frontier_pause_host(f, "a.test", 6, -1), SIEVE_EINVAL);
    sieve_frontier_free(f);

    sieve_frontier_config cfg;
    sieve_frontier_config_init(&cfg);
    ck_assert_int_eq(sieve_frontier_new(&f, &cfg), SIEVE_OK);
    ck_assert_int_eq(sieve_frontier_pause_host(f, "a.test", 6, 1), SIEVE_ESTATE);
    sieve_frontier_free(f);
}
END_TEST

/* A URL to retry later waits off its host: the host gives its next URL
 * at once, even at its connection limit; the waiting URL counts as queued,
 * keeps the frontier from draining, and comes back first when due. */
START_TEST(a_url_retried_later_waits_off_its_host)
{
    sieve_frontier *f = make(1, 0);
    push(f, "http://a.test/1");
    push(f, "http://a.test/2");
    char x[64];
    sieve_url u = take(f, x, sizeof x, "http://a.test/1");
    double t0 = now();
    ck_assert_int_eq(sieve_frontier_retry_later(f, &u, 0.3), SIEVE_OK);
    ck_assert_int_eq(sieve_frontier_done(f, &u), SIEVE_ESTATE); /* no longer in flight */
    sieve_url v = take(f, x, sizeof x, "http://a.test/2");
    ck_assert_int_eq(sieve_frontier_done(f, &v), SIEVE_OK);
    sieve_frontier_stats st;
    sieve_frontier_stats_get(f, &st);
    ck_assert_uint_eq(st.queue_len, 1);
    double ready_in = 0;
    ck_assert_int_eq(sieve_frontier_try_pop(f, x, sizeof x, &v, &ready_in), SIEVE_EAGAIN);
    ck_assert_msg(ready_in > 0.2 && ready_in <= 0.3, "ready in %.3f s", ready_in);
    u = take_after(f, x, sizeof x, "http://a.test/1", 1);
    ck_assert_msg(now() - t0 >= 0.29, "back after %.3f s", now() - t0);
    ck_assert_int_eq(sieve_frontier_done(f, &u), SIEVE_OK);
    ck_assert_int_eq(sieve_frontier_pop(f, x, sizeof x, &u, 0), SIEVE_EDRAINED);
    ck_assert_int_eq(sieve_frontier_retry_later(f, &u, 1), SIEVE_ESTATE);
    sieve_frontier_free(f);
}
END_TEST

/* A crawl that meets 100,000 hosts one after the other keeps only the few
 * with work: memory follows the hosts busy now, not every host seen. */
START_TEST(idle_hosts_are_forgotten)
{
    sieve_frontier *f = make(1, 0);
    push(f, "http://busy.test/0");
    char x[64], url[64];
    sieve_frontier_stats st;
    uint64_t most = 0;
    for (int i = 1; i <= 100000; i++) {
        snprintf(url, sizeof url, "http://h%d.test/", i);
        push(f, url);
        snprintf(url, sizeof url, "http://busy.test/%d", i);
        push(f, url);
        for (int k = 0; k < 2; k++) {
            sieve_url u;
            ck_assert_int_eq(sieve_frontier_pop(f, x, sizeof x, &u, 0), SIEVE_OK);
            ck_assert_int_eq(sieve_frontier_done(f, &u), SIEVE_OK);
        }
        sieve_frontier_stats_get(f, &st);
        if (st.hosts > most)
            most = st.hosts;
    }
    ck_assert_msg(most <= 16, "%llu hosts held at once", (unsigned long long)most);
    /* 100,000 hosts held would take tens of megabytes */
    ck_assert_msg(st.queue_bytes < 1024 * 1024, "%llu bytes", (unsigned long long)st.queue_bytes);
    /* the busy host kept its order throughout */
    sieve_url u = take(f, x, sizeof x, "http://busy.test/100000");
    ck_assert_int_eq(sieve_frontier_done(f, &u), SIEVE_OK);
    ck_assert_int_eq(sieve_frontier_pop(f, x, sizeof x, &u, 0), SIEVE_EDRAINED);
    sieve_frontier_free(f);
}
END_TEST

/* Pops and finishes n URLs of other hosts, giving the idle sweep its
 * chances. */
static void churn(sieve_frontier *f, const char *host, int n)
{
    static int serial;
    char x[64], url[64];
    for (int i = 0; i < n; i++) {
        snprintf(url, sizeof url, "http://%s/%d", host, serial++);
        push(f, url);
        sieve_url u;
        ck_assert_int_eq(sieve_frontier_pop(f, x, sizeof x, &u, 0), SIEVE_OK);
        ck_assert_int_eq(sieve_frontier_done(f, &u), SIEVE_OK);
    }
}

/* A host is forgotten only once its delay is over: until then a new URL
 * of it still waits for that delay. */
START_TEST(a_host_is_not_forgotten_before_its_delay_is_over)
{
    sieve_frontier *f = make(1, 0.3);
    push(f, "http://a.test/1");
    char x[64];
    sieve_url u = take(f, x, sizeof x, "http://a.test/1");
    ck_assert_int_eq(sieve_frontier_done(f, &u), SIEVE_OK);
    for (int i = 0; i < 50; i++) {
        char host[32];
        snprintf(host, sizeof host, "c%d.test", i);
        churn(f, host, 1);
    }
    push(f, "http://a.test/2");
    double ready_in = 0;
    ck_assert_int_eq(sieve_frontier_try_pop(f, x, sizeof x, &u, &ready_in), SIEVE_EAGAIN);
    ck_assert_msg(ready_in > 0.1, "ready in %.3f s", ready_in);
    take_after(f, x, sizeof x, "http://a.test/2", 1);
    sieve_frontier_free(f);
}
END_TEST

/* A host whose only URL waits for a retry is not idle: the URL comes back
 * through it however many other hosts came and went meanwhile. */
START_TEST(a_host_waiting_for_a_retry_is_kept)
{
    sieve_frontier *f = make(1, 0);
    push(f, "http://a.test/1");
    char x[64];
    sieve_url u = take(f, x, sizeof x, "http://a.test/1");
    ck_assert_int_eq(sieve_frontier_retry_later(f, &u, 0.3), SIEVE_OK);
    double t0 = now();
    while (now() - t0 < 0.15) /* all before a.test/1 is due */
        churn(f, "b.test", 100);
    u = take_after(f, x, sizeof x, "http://a.test/1", 1);
    ck_assert_int_eq(sieve_frontier_done(f, &u), SIEVE_OK);
    ck_assert_int_eq(sieve_frontier_pop(f, x, sizeof x, &u, 0), SIEVE_EDRAINED);
    sieve_frontier_free(f);
}
END_TEST

START_TEST(bad_politeness_is_refused)
{
    sieve_frontier_config cfg;
    sieve_frontier_config_init(&cfg);
    cfg.politeness.enabled = true;
    cfg.politeness.max_conns = 0;
    sieve_frontier *f = NULL;
    ck_assert_int_eq(sieve_frontier_new(&f, &cfg), SIEVE_EINVAL);
    cfg.politeness.max_conns = 1;
    cfg.politeness.delay_s = NAN;
    ck_assert_int_eq(sieve_frontier_new(&f, &cfg), SIEVE_EINVAL);
    cfg.politeness.delay_s = 0;
    cfg.politeness.partitions = SIEVE_PARTITIONS_MAX + 1;
    ck_assert_int_eq(sieve_frontier_new(&f, &cfg), SIEVE_EINVAL);
    ck_assert_ptr_null(f);
}
END_TEST

#define PART_HOSTS 64
#define PART_EACH  4

/* A frontier with two partitions, PART_EACH URLs of each of PART_HOSTS
 * hosts pushed round and round, no delay and no connection limit. */
static sieve_frontier *make_parted(void)
{
    sieve_frontier_config cfg;
    sieve_frontier_config_init(&cfg);
    cfg.seen.kind = SIEVE_SEEN_EXACT;
    cfg.politeness.enabled = true;
    cfg.politeness.max_conns = PART_HOSTS * PART_EACH;
    cfg.politeness.delay_s = 0;
    cfg.politeness.partitions = 2;
    sieve_frontier *f = NULL;
    ck_assert_int_eq(sieve_frontier_new(&f, &cfg), SIEVE_OK);
    for (int i = 0; i < PART_EACH; i++)
        for (int h = 0; h < PART_HOSTS; h++) {
            char url[64];
            snprintf(url, sizeof url, "http://h%d.test/%d", h, i);
            push(f, url);
        }
    return f;
}

/* Pops every URL from part, nothing done, and writes the host of each
 * pop, in order, to seq. */
static void pop_all_from(sieve_frontier *f, unsigned part, int *seq)
{
    for (int i = 0; i < PART_HOSTS * PART_EACH; i++) {
        char buf[64];
        sieve_url u;
        ck_assert_int_eq(sieve_frontier_try_pop_from(f, part, buf, sizeof buf, &u, NULL), SIEVE_OK);
        ck_assert_int_eq(sscanf(u.url, "http://h%d.test/", &seq[i]), 1);
    }
    char buf[64];
    sieve_url u;
    ck_assert_int_eq(sieve_frontier_pop_from(f, part, buf, sizeof buf, &u, 0), SIEVE_EAGAIN);
}

/* Where seq splits in two runs of pops whose hosts are disjoint: every
 * URL of the hosts of the first run comes before any of the second's.
 * 0 if there is no such split. */
static int split_of(const int *seq)
{
    int n = PART_HOSTS * PART_EACH, last[PART_HOSTS];
    for (int i = 0; i < n; i++)
        last[seq[i]] = i;
    int reach = 0; /* the last pop of any host seen so far */
    for (int i = 0; i < n - 1; i++) {
        if (last[seq[i]] > reach)
            reach = last[seq[i]];
        if (reach == i)
            return i + 1;
    }
    return 0;
}

START_TEST(a_pop_from_a_partition_takes_its_hosts_first)
{
    sieve_frontier *f = make_parted();
    int seq0[PART_HOSTS * PART_EACH], seq1[PART_HOSTS * PART_EACH];
    pop_all_from(f, 0, seq0);
    sieve_frontier_free(f);
    f = make_parted();
    pop_all_from(f, 1, seq1);
    sieve_frontier_free(f);
    /* Part 0's hosts, every URL of them, then part 1's (taken because
     * nothing else was ready); from part 1, the other way round. */
    int k = split_of(seq0);
    ck_assert_msg(k > 0, "a pop from part 0 mixed the hosts of the two parts");
    int n = PART_HOSTS * PART_EACH;
    ck_assert_int_eq(split_of(seq1), n - k);
    bool in_first[PART_HOSTS] = {false};
    for (int i = 0; i < k; i++)
        in_first[seq0[i]] = true;
    for (int i = 0; i < n - k; i++)
        ck_assert_msg(!in_first[seq1[i]], "host h%d is in both parts", seq1[i]);
}
END_TEST

START_TEST(a_partition_with_nothing_ready_takes_from_another)
{
    sieve_frontier *f = NULL;
    sieve_frontier_config cfg;
    sieve_frontier_config_init(&cfg);
    cfg.politeness.enabled = true;
    cfg.politeness.delay_s = 0;
    cfg.politeness.partitions = 2;
    ck_assert_int_eq(sieve_frontier_new(&f, &cfg), SIEVE_OK);
    push(f, "http://a.test/1");
    push(f, "http://a.test/2");
    char b0[64], b1[64];
    sieve_url u;
    /* one host, in one of the parts: both parts' pops get its URLs */
    ck_assert_int_eq(sieve_frontier_try_pop_from(f, 0, b0, sizeof b0, &u, NULL), SIEVE_OK);
    ck_assert_str_eq(u.url, "http://a.test/1");
    ck_assert_int_eq(sieve_frontier_pop_from(f, 1, b1, sizeof b1, &u, 0), SIEVE_OK);
    ck_assert_str_eq(u.url, "http://a.test/2");
    ck_assert_int_eq(sieve_frontier_pop_from(f, 2, b1, sizeof b1, &u, 0), SIEVE_EINVAL);
    ck_assert_int_eq(sieve_frontier_try_pop_from(f, 2, b1, sizeof b1, &u, NULL), SIEVE_EINVAL);
    sieve_frontier_free(f);
    /* without per-host scheduling there is one part */
    cfg.politeness.enabled = false;
    ck_assert_int_eq(sieve_frontier_new(&f, &cfg), SIEVE_OK);
    push(f, "http://a.test/1");
    ck_assert_int_eq(sieve_frontier_pop_from(f, 1, b1, sizeof b1, &u, 0), SIEVE_EINVAL);
    ck_assert_int_eq(sieve_frontier_pop_from(f, 0, b1, sizeof b1, &u, 0), SIEVE_OK);
    sieve_frontier_free(f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("hosts");
    TCase *tc = tcase_create("politeness");
    tcase_add_test(tc, each_host_is_taken_in_turn_and_waits_its_delay);
    tcase_add_test(tc, connections_per_host_are_capped);
    tcase_add_test(tc, request_starts_to_a_host_are_spaced_by_the_delay);
    tcase_add_test(tc, a_busy_host_does_not_hold_back_the_others);
    tcase_add_test(tc, ports_are_hosts_of_their_own);
    tcase_add_test(tc, a_host_delay_can_be_set_for_one_host);
    tcase_add_test(tc, the_end_is_detected_with_per_host_queues);
    tcase_add_test(tc, done_frees_only_the_host_of_the_popped_url);
    tcase_add_test(tc, a_requeued_url_comes_back_first_and_a_held_host_waits);
    tcase_add_test(tc, a_requeue_restarts_the_hosts_delay);
    tcase_add_test(tc, a_paused_host_waits_and_others_go_on);
    tcase_add_test(tc, a_url_retried_later_waits_off_its_host);
    tcase_add_test(tc, idle_hosts_are_forgotten);
    tcase_add_test(tc, a_host_is_not_forgotten_before_its_delay_is_over);
    tcase_add_test(tc, a_host_waiting_for_a_retry_is_kept);
    tcase_add_test(tc, bad_politeness_is_refused);
    tcase_add_test(tc, a_pop_from_a_partition_takes_its_hosts_first);
    tcase_add_test(tc, a_partition_with_nothing_ready_takes_from_another);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
