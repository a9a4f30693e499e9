/* test-frontier-threads.c - the frontier under many threads at once.
 *
 * These tests also run under ThreadSanitizer in CI: they assert what the
 * lock must guarantee (no URL enqueued twice, none lost, every waiter
 * woken), not how fast it goes. */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sieve/sieve.h"

enum { THREADS = 8, PER_THREAD = 20000, STRIDE = PER_THREAD / 2 };

/* Thread t pushes URLs [t*STRIDE, t*STRIDE + PER_THREAD): each URL but the
 * first and last STRIDE is pushed by two threads, and all threads start
 * together, so the same URL is often offered at the same moment. */
#define DISTINCT ((THREADS - 1) * STRIDE + PER_THREAD)

typedef struct pusher {
    sieve_frontier *f;
    int id;
    int use_batch;
    pthread_barrier_t *start;
    long enqueued;
} pusher;

static int url_of(char *buf, size_t cap, long i)
{
    return snprintf(buf, cap, "http://host%ld.test/page/%ld", i % 101, i);
}

static long parse_url(const char *u)
{
    const char *p = strrchr(u, '/');
    return p == NULL ? -1 : strtol(p + 1, NULL, 10);
}

static void *push_range(void *arg)
{
    pusher *p = arg;
    char store[16][64];
    sieve_url batch[16];
    int results[16];
    pthread_barrier_wait(p->start);
    long first = (long)p->id * STRIDE;
    for (long i = first; i < first + PER_THREAD; i += 16) {
        for (int j = 0; j < 16; j++) {
            int n = url_of(store[j], sizeof store[j], i + j);
            batch[j] = (sieve_url){.url = store[j], .len = (size_t)n, .depth = 1};
        }
        if (p->use_batch) {
            int rc = sieve_frontier_push_batch(p->f, batch, 16, results);
            ck_assert_int_ge(rc, 0);
            p->enqueued += rc;
        } else {
            for (int j = 0; j < 16; j++)
                p->enqueued += sieve_frontier_push(p->f, batch[j].url, batch[j].len, 1) == SIEVE_OK;
        }
    }
    return NULL;
}

static sieve_frontier *make(sieve_seen_kind kind)
{
    sieve_frontier_config cfg;
    sieve_frontier_config_init(&cfg);
    cfg.seen.kind = kind;
    cfg.seen.capacity = DISTINCT;
    cfg.seen.fp_rate = 0.001;
    sieve_frontier *f = NULL;
    ck_assert_int_eq(sieve_frontier_new(&f, &cfg), SIEVE_OK);
    return f;
}

/* Runs the pushers; returns how many URLs were enqueued in all, after
 * checking that popping yields each of them exactly once. */
static long push_overlapping(sieve_frontier *f)
{
    pthread_t th[THREADS];
    pusher p[THREADS];
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, THREADS);
    for (int t = 0; t < THREADS; t++) {
        p[t] = (pusher){.f = f, .id = t, .use_batch = t % 2, .start = &start};
        ck_assert_int_eq(pthread_create(&th[t], NULL, push_range, &p[t]), 0);
    }
    long enqueued = 0;
    for (int t = 0; t < THREADS; t++) {
        pthread_join(th[t], NULL);
        enqueued += p[t].enqueued;
    }
    pthread_barrier_destroy(&start);

    unsigned char *popped = calloc(DISTINCT, 1);
    char buf[128];
    sieve_url u;
    long n = 0;
    while (sieve_frontier_pop(f, buf, sizeof buf, &u, 0) == SIEVE_OK) {
        long i = parse_url(u.url);
        ck_assert(i >= 0 && i < DISTINCT);
        ck_assert_msg(popped[i] == 0, "URL %ld enqueued twice", i);
        popped[i] = 1;
        n++;
        sieve_frontier_done(f, &u);
    }
    free(popped);
    ck_assert_int_eq(n, enqueued);
    return enqueued;
}

START_TEST(exact_set_enqueues_each_url_exactly_once)
{
    sieve_frontier *f = make(SIEVE_SEEN_EXACT);
    ck_assert_int_eq(push_overlapping(f), DISTINCT);
    sieve_frontier_stats st;
    sieve_frontier_stats_get(f, &st);
    ck_assert_uint_eq(st.pushed, (uint64_t)THREADS * PER_THREAD);
    ck_assert_uint_eq(st.seen, (uint64_t)THREADS * PER_THREAD - DISTINCT);
    sieve_frontier_free(f);
}
END_TEST

START_TEST(bloom_enqueues_each_url_at_most_once)
{
    sieve_frontier *f = make(SIEVE_SEEN_BLOOM);
    long n = push_overlapping(f);
    ck_assert_int_le(n, DISTINCT);
    /* p = 0.001: losing more than 1% would mean a broken filter */
    ck_assert_int_ge(n, DISTINCT - DISTINCT / 100);
    sieve_frontier_free(f);
}
END_TEST

/* A crawl of a synthetic web: page i links to 3 pages; workers pop, push
 * the links, report done, and must all stop by themselves once every page
 * is handled, with every page handled exactly once. */
enum { PAGES = 30000 };

/* Reports u done as a careless worker would: first with a changed copy
 * (another page's bytes, then a spent ticket), then for real, then again.
 * Only the real one may count, or the crawl would end early. */
static void done_with_strays(sieve_frontier *f, const sieve_url *u)
{
    char other[64];
    sieve_url forged = *u;
    forged.url = other;
    forged.len = (size_t)snprintf(other, sizeof other, "%.*s0", (int)u->len, u->url);
    ck_assert_int_eq(sieve_frontier_done(f, &forged), SIEVE_ESTATE);
    forged = *u;
    forged.ticket -= UINT64_C(1) << 32;
    ck_assert_int_eq(sieve_frontier_done(f, &forged), SIEVE_ESTATE);
    ck_assert_int_eq(sieve_frontier_done(f, u), SIEVE_OK);
    ck_assert_int_eq(sieve_frontier_done(f, u), SIEVE_ESTATE);
}

typedef struct crawl {
    sieve_frontier *f;
    unsigned char *visits;
    pthread_mutex_t visits_lock;
} crawl;

static void *worker(void *arg)
{
    crawl *c = arg;
    char buf[128];
    sieve_url u;
    int rc;
    while ((rc = sieve_frontier_pop(c->f, buf, sizeof buf, &u, -1)) == SIEVE_OK) {
        long i = parse_url(u.url);
        pthread_mutex_lock(&c->visits_lock);
        c->visits[i]++;
        pthread_mutex_unlock(&c->visits_lock);
        char store[3][64];
        sieve_url links[3];
        long to[3] = {(2 * i + 1) % PAGES, (2 * i + 2) % PAGES, (i * 7919 + 13) % PAGES};
        for (int j = 0; j < 3; j++) {
            int n = url_of(store[j], sizeof store[j], to[j]);
            links[j] = (sieve_url){.url = store[j], .len = (size_t)n, .depth = u.depth + 1};
        }
        ck_assert_int_ge(sieve_frontier_push_batch(c->f, links, 3, NULL), 0);
        done_with_strays(c->f, &u);
    }
    ck_assert_int_eq(rc, SIEVE_EDRAINED);
    return NULL;
}

START_TEST(workers_detect_the_end_of_the_crawl)
{
    crawl c = {.f = make(SIEVE_SEEN_EXACT), .visits = calloc(PAGES, 1)};
    pthread_mutex_init(&c.visits_lock, NULL);
    char seed[64];
    int n = url_of(seed, sizeof seed, 0);
    ck_assert_int_eq(sieve_frontier_push(c.f, seed, (size_t)n, 0), SIEVE_OK);
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, worker, &c);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    for (long i = 0; i < PAGES; i++)
        ck_assert_msg(c.visits[i] == 1, "page %ld visited %d times", i, c.visits[i]);
    sieve_frontier_stats st;
    sieve_frontier_stats_get(c.f, &st);
    ck_assert_uint_eq(st.done, PAGES);
    ck_assert_uint_eq(st.in_flight, 0);
    pthread_mutex_destroy(&c.visits_lock);
    free(c.visits);
    sieve_frontier_free(c.f);
}
END_TEST

/* The same crawl with per-host scheduling: no host ever has more than
 * max_conns URLs in flight, and still every page is handled once. */
enum { HOSTS = 40, MAX_CONNS = 2 };

typedef struct polite_crawl {
    sieve_frontier *f;
    atomic_int in_flight[HOSTS];
    atomic_int worst;
    atomic_int visits[PAGES];
} polite_crawl;

static void *polite_worker(void *arg)
{
    polite_crawl *c = arg;
    char buf[128];
    sieve_url u;
    int rc;
    while ((rc = sieve_frontier_pop(c->f, buf, sizeof buf, &u, -1)) == SIEVE_OK) {
        long i = parse_url(u.url);
        int host = (int)(i % 101 % HOSTS);
        int now = atomic_fetch_add(&c->in_flight[host], 1) + 1;
        int worst = atomic_load(&c->worst);
        while (now > worst && !atomic_compare_exchange_weak(&c->worst, &worst, now))
            ;
        atomic_fetch_add(&c->visits[i], 1);
        char store[3][64];
        sieve_url links[3];
        long to[3] = {(2 * i + 1) % PAGES, (2 * i + 2) % PAGES, (i * 7919 + 13) % PAGES};
        for (int j = 0; j < 3; j++) {
            int n = snprintf(store[j], sizeof store[j], "http://host%ld.test/page/%ld",
                             to[j] % 101 % HOSTS, to[j]);
            links[j] = (sieve_url){.url = store[j], .len = (size_t)n, .depth = u.depth + 1};
        }
        ck_assert_int_ge(sieve_frontier_push_batch(c->f, links, 3, NULL), 0);
        atomic_fetch_sub(&c->in_flight[host], 1);
        done_with_strays(c->f, &u);
    }
    ck_assert_int_eq(rc, SIEVE_EDRAINED);
    return NULL;
}

START_TEST(per_host_limits_hold_under_many_threads)
{
    sieve_frontier_config cfg;
    sieve_frontier_config_init(&cfg);
    cfg.seen.kind = SIEVE_SEEN_EXACT;
    cfg.politeness.enabled = true;
    cfg.politeness.max_conns = MAX_CONNS;
    cfg.politeness.delay_s = 0;
    polite_crawl *c = calloc(1, sizeof *c);
    ck_assert_int_eq(sieve_frontier_new(&c->f, &cfg), SIEVE_OK);
    const char *seed = "http://host0.test/page/0";
    ck_assert_int_eq(sieve_frontier_push(c->f, seed, strlen(seed), 0), SIEVE_OK);
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, polite_worker, c);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    for (long i = 0; i < PAGES; i++)
        ck_assert_msg(atomic_load(&c->visits[i]) == 1, "page %ld visited %d times", i,
                      atomic_load(&c->visits[i]));
    ck_assert_int_le(atomic_load(&c->worst), MAX_CONNS);
    ck_assert_int_ge(atomic_load(&c->worst), 1);
    sieve_frontier_stats st;
    sieve_frontier_stats_get(c->f, &st);
    ck_assert_uint_le(st.hosts, HOSTS); /* the idle ones are forgotten */
    sieve_frontier_free(c->f);
    free(c);
}
END_TEST

typedef struct blocked {
    sieve_frontier *f;
    int rc;
} blocked;

static void *block_in_pop(void *arg)
{
    blocked *b = arg;
    char buf[64];
    sieve_url u;
    b->rc = sieve_frontier_pop(b->f, buf, sizeof buf, &u, -1);
    return NULL;
}

START_TEST(close_wakes_every_blocked_pop)
{
    sieve_frontier *f = make(SIEVE_SEEN_EXACT);
    /* One URL in flight keeps the frontier from being drained, so the
     * other pops block until close(). */
    ck_assert_int_eq(sieve_frontier_push(f, "http://a.test/", 14, 0), SIEVE_OK);
    char buf[64];
    sieve_url u;
    ck_assert_int_eq(sieve_frontier_pop(f, buf, sizeof buf, &u, 0), SIEVE_OK);
    pthread_t th[THREADS];
    blocked b[THREADS];
    for (int t = 0; t < THREADS; t++) {
        b[t] = (blocked){.f = f, .rc = 1};
        pthread_create(&th[t], NULL, block_in_pop, &b[t]);
    }
    sieve_frontier_close(f);
    for (int t = 0; t < THREADS; t++) {
        pthread_join(th[t], NULL);
        ck_assert_int_eq(b[t].rc, SIEVE_ECLOSED);
    }
    sieve_frontier_free(f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("frontier-threads");
    TCase *tc = tcase_create("threads");
    tcase_set_timeout(tc, 280);
    tcase_add_test(tc, exact_set_enqueues_each_url_exactly_once);
    tcase_add_test(tc, bloom_enqueues_each_url_at_most_once);
    tcase_add_test(tc, workers_detect_the_end_of_the_crawl);
    tcase_add_test(tc, per_host_limits_hold_under_many_threads);
    tcase_add_test(tc, close_wakes_every_blocked_pop);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
