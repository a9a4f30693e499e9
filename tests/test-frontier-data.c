/* test-frontier-data.c - the data a URL carries through the frontier
 * (sieve_url.data) comes back with it from everywhere a URL waits: the
 * queue and the per-host queues, a requeue and a retry's wait, the spill
 * on disk, a checkpoint, and the journal after a kill; a URL without data
 * is kept as it was before URLs carried any; data past the bound is
 * refused; a state written before data existed is read.
 *
 * URL i carries data of its own: none, two NUL-ended strings, or binary
 * bytes with NULs anywhere, so that every URL popped says by itself
 * whether its data came back whole. Kills are real: a forked child works
 * on the frontier and SIGKILLs itself, and the parent opens what it left. */
#include <check.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sieve/fifo.h"
#include "sieve/frontier.h"
#include "sieve/status.h"
#include "state-fixture.h"
#include "statedir.h"

enum { N = 3000 };

/* A Bloom filter (checkpoints are taken of it only) whose rate makes a
 * false positive in N pushes unlikely; the tests count on none. */
static sieve_frontier_config config(bool per_host)
{
    sieve_frontier_config cfg = state_config(per_host);
    cfg.seen.fp_rate = 1e-9;
    return cfg;
}

static size_t url_of(char *buf, size_t cap, int i)
{
    return (size_t)snprintf(buf, cap, "http://h%d.test/p/%d", i % 7, i);
}

/* URL i's data: none for every third, two NUL-ended strings, or up to 49
 * binary bytes, NULs included, last byte too. */
static size_t data_of(unsigned char *buf, int i)
{
    switch (i % 3) {
    case 0:
        return 0;
    case 1: {
        int n = sprintf((char *)buf, "http://h0.test/ref/%d", i);
        return (size_t)(n + 1 + sprintf((char *)buf + n + 1, "first/%d", i) + 1);
    }
    default: {
        size_t n = 1 + (size_t)i % 49;
        for (size_t k = 0; k < n; k++)
            buf[k] = (unsigned char)((size_t)i * 7 + k * 13);
        return n;
    }
    }
}

/* Pushes URLs from..to-1 with their data, in batches of 64. */
static void push_range(sieve_frontier *f, int from, int to)
{
    static char urls[64][64];
    static unsigned char data[64][64];
    sieve_url batch[64];
    int results[64];
    for (int at = from; at < to; at += 64) {
        size_t n = 0;
        for (int i = at; i < to && n < 64; i++, n++) {
            size_t dl = data_of(data[n], i);
            batch[n] = (sieve_url){.url = urls[n],
                                   .len = url_of(urls[n], sizeof urls[n], i),
                                   .depth = (uint32_t)i,
                                   .data = dl > 0 ? data[n] : NULL,
                                   .data_len = dl};
        }
        ck_assert_int_eq(sieve_frontier_push_batch(f, batch, n, results), (int)n);
    }
}

/* Checks a popped URL against the data its number says it carries, and
 * returns its number. */
static int check_popped(const sieve_url *u, const char *buf)
{
    int i = (int)u->depth;
    char want[64];
    size_t len = url_of(want, sizeof want, i);
    ck_assert_uint_eq(u->len, len);
    ck_assert_int_eq(memcmp(u->url, want, len), 0);
    ck_assert_int_eq(u->url[len], '\0');
    unsigned char data[64];
    size_t dl = data_of(data, i);
    ck_assert_msg(u->data_len == dl, "URL %d: %zu bytes of data, not %zu", i, u->data_len, dl);
    if (dl == 0) {
        ck_assert_ptr_null(u->data);
        ck_assert_ptr_eq(u->url, buf);
    } else {
        ck_assert_ptr_eq(u->data, buf);
        ck_assert_msg(memcmp(u->data, data, dl) == 0, "URL %d: its data differ", i);
    }
    return i;
}

/* Pops every URL ready, checks it, reports it done and marks it in got;
 * returns how many. */
static int drain(sieve_frontier *f, char *got)
{
    static char buf[SIEVE_POP_BUF_MAX];
    sieve_url u;
    int n = 0;
    while (sieve_frontier_pop(f, buf, sizeof buf, &u, 0) == SIEVE_OK) {
        int i = check_popped(&u, buf);
        ck_assert_msg(!got[i], "URL %d popped twice", i);
        got[i] = 1;
        ck_assert_int_eq(sieve_frontier_done(f, &u), SIEVE_OK);
        n++;
    }
    return n;
}

/* drain() into a fresh record of what was popped. */
static int drain_all(sieve_frontier *f)
{
    static char got[N];
    memset(got, 0, sizeof got);
    return drain(f, got);
}

/* ---- in memory ---- */

START_TEST(data_comes_back_with_each_url)
{
    sieve_frontier_config cfg = config(_i);
    sieve_frontier *f;
    ck_assert_int_eq(sieve_frontier_new(&f, &cfg), SIEVE_OK);
    push_range(f, 0, N);
    ck_assert_int_eq(drain_all(f), N);
    sieve_frontier_free(f);
}
END_TEST

/* A URL without data takes the bytes it took before URLs carried any:
 * the queue holds what a FIFO of the bare URLs holds, and its pop needs
 * no room beyond the URL's. */
START_TEST(a_url_without_data_costs_what_it_did)
{
    sieve_frontier_config cfg = config(false);
    sieve_frontier *f;
    ck_assert_int_eq(sieve_frontier_new(&f, &cfg), SIEVE_OK);
    sieve_fifo *q;
    ck_assert_int_eq(sieve_fifo_new(&q), SIEVE_OK);
    for (int i = 0; i < N; i++) {
        char u[64];
        size_t len = url_of(u, sizeof u, i);
        ck_assert_int_eq(sieve_frontier_push(f, u, len, 0), SIEVE_OK);
        ck_assert_int_eq(sieve_fifo_push(q, u, len, 0), SIEVE_OK);
    }
    sieve_frontier_stats st;
    sieve_frontier_stats_get(f, &st);
    ck_assert_uint_eq(st.queue_bytes, sieve_fifo_bytes(q));
    char want[64], buf[64];
    size_t len = url_of(want, sizeof want, 0);
    sieve_url u;
    ck_assert_int_eq(sieve_frontier_pop(f, buf, len + 1, &u, 0), SIEVE_OK);
    ck_assert_str_eq(buf, want);
    ck_assert_ptr_eq(u.url, buf);
    ck_assert_ptr_null(u.data);
    ck_assert_uint_eq(u.data_len, 0);
    sieve_fifo_free(q);
    sieve_frontier_free(f);
}
END_TEST

/* A push refused as seen drops its data: the first push's come back. */
START_TEST(a_seen_url_keeps_the_data_of_its_first_push)
{
    sieve_frontier_config cfg = config(true);
    sieve_frontier *f;
    ck_assert_int_eq(sieve_frontier_new(&f, &cfg), SIEVE_OK);
    sieve_url a = {.url = "http://a.test/", .len = 14, .data = "first", .data_len = 5};
    sieve_url b = a;
    b.data = "second";
    b.data_len = 6;
    int rc;
    ck_assert_int_eq(sieve_frontier_push_batch(f, &a, 1, &rc), 1);
    ck_assert_int_eq(sieve_frontier_push_batch(f, &b, 1, &rc), 0);
    ck_assert_int_eq(rc, SIEVE_SEEN);
    char buf[64];
    sieve_url u;
    ck_assert_int_eq(sieve_frontier_pop(f, buf, sizeof buf, &u, 0), SIEVE_OK);
    ck_assert_uint_eq(u.data_len, 5);
    ck_assert_int_eq(memcmp(u.data, "first", 5), 0);
    ck_assert_int_eq(sieve_frontier_pop(f, buf, sizeof buf, &u, 0), SIEVE_EAGAIN);
    sieve_frontier_free(f);
}
END_TEST

/* Data past SIEVE_URL_DATA_MAX, or data_len without data, is refused and
 * leaves the URL unseen; the most data with the longest URL fits a pop
 * buffer of SIEVE_POP_BUF_MAX, and a smaller buffer takes nothing. */
START_TEST(data_beyond_the_bound_is_refused)
{
    sieve_frontier_config cfg = config(true);
    sieve_frontier *f;
    ck_assert_int_eq(sieve_frontier_new(&f, &cfg), SIEVE_OK);
    static char url[SIEVE_URL_MAX], data[SIEVE_URL_DATA_MAX + 1], buf[SIEVE_POP_BUF_MAX];
    memcpy(url, "http://a.test/", 14);
    memset(url + 14, 'x', sizeof url - 14);
    memset(data, 0, sizeof data);
    sieve_url u = {.url = url, .len = sizeof url, .data = data, .data_len = sizeof data};
    int rc;
    ck_assert_int_eq(sieve_frontier_push_batch(f, &u, 1, &rc), 0);
    ck_assert_int_eq(rc, SIEVE_ETOOLONG);
    u.data = NULL;
    u.data_len = 1;
    ck_assert_int_eq(sieve_frontier_push_batch(f, &u, 1, &rc), 0);
    ck_assert_int_eq(rc, SIEVE_EINVAL);
    u.data = data;
    u.data_len = SIEVE_URL_DATA_MAX;
    ck_assert_int_eq(sieve_frontier_push_batch(f, &u, 1, &rc), 1);
    sieve_url out;
    ck_assert_int_eq(sieve_frontier_pop(f, buf, sizeof buf - 1, &out, 0), SIEVE_ERANGE);
    ck_assert_int_eq(sieve_frontier_pop(f, buf, sizeof buf, &out, 0), SIEVE_OK);
    ck_assert_uint_eq(out.len, SIEVE_URL_MAX);
    ck_assert_uint_eq(out.data_len, SIEVE_URL_DATA_MAX);
    ck_assert_int_eq(memcmp(out.url, url, sizeof url), 0);
    /* a requeue with data too long: refused, still in flight */
    out.data_len = SIEVE_URL_DATA_MAX + 1;
    ck_assert_int_eq(sieve_frontier_requeue(f, &out), SIEVE_ETOOLONG);
    ck_assert_int_eq(sieve_frontier_done(f, &out), SIEVE_OK);
    sieve_frontier_free(f);
}
END_TEST

/* A URL given back, by requeue() or to wait for a retry, keeps its data,
 * even when the caller moved the URL and its data to buffers of its own. */
START_TEST(requeue_and_retry_keep_the_data)
{
    sieve_frontier_config cfg = config(true);
    sieve_frontier *f;
    ck_assert_int_eq(sieve_frontier_new(&f, &cfg), SIEVE_OK);
    push_range(f, 1, 3); /* 1: strings, 2: binary */
    static char buf[SIEVE_POP_BUF_MAX];
    char url[64], data[64];
    for (int round = 0; round < 2; round++) {
        sieve_url u;
        ck_assert_int_eq(sieve_frontier_pop(f, buf, sizeof buf, &u, 0), SIEVE_OK);
        int i = check_popped(&u, buf);
        memcpy(url, u.url, u.len);
        memcpy(data, u.data, u.data_len);
        u.url = url;
        u.data = data;
        memset(buf, 0, sizeof buf);
        if (round == 0)
            ck_assert_int_eq(sieve_frontier_requeue(f, &u), SIEVE_OK);
        else
            ck_assert_int_eq(sieve_frontier_retry_later(f, &u, 0.05), SIEVE_OK);
        memset(data, 0, sizeof data);
        sieve_url again;
        int rc;
        do /* the other URL may come first */
            rc = sieve_frontier_pop(f, buf, sizeof buf, &again, 2000);
        while (rc == SIEVE_OK && (int)again.depth != i &&
               sieve_frontier_requeue(f, &again) == SIEVE_OK);
        ck_assert_int_eq(rc, SIEVE_OK);
        check_popped(&again, buf);
        ck_assert_int_eq(sieve_frontier_requeue(f, &again), SIEVE_OK);
    }
    ck_assert_int_eq(drain_all(f), 2);
    sieve_frontier_free(f);
}
END_TEST

/* ---- on disk ---- */

/* A queue budget of 4 KiB: nearly every URL waits in the journal and is
 * read back with its data, in the order pushed. _i = 0: the temporary
 * spill of an in-memory frontier; 1: a state directory. */
START_TEST(data_survives_the_spill)
{
    sieve_frontier_config cfg = config(false);
    cfg.queue_memory = 4096;
    ck_assert_int_eq(setenv("TMPDIR", dir, 1), 0);
    sieve_frontier *f;
    ck_assert_int_eq(sieve_frontier_open(&f, _i ? dir : NULL, &cfg), SIEVE_OK);
    push_range(f, 0, N);
    sieve_frontier_stats st;
    sieve_frontier_stats_get(f, &st);
    ck_assert_uint_gt(st.spilled, N / 2);
    static char buf[SIEVE_POP_BUF_MAX];
    sieve_url u;
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(sieve_frontier_pop(f, buf, sizeof buf, &u, 0), SIEVE_OK);
        ck_assert_int_eq(check_popped(&u, buf), i);
        ck_assert_int_eq(sieve_frontier_done(f, &u), SIEVE_OK);
    }
    sieve_frontier_free(f);
}
END_TEST

/* The URLs queued, in flight and waiting for a retry at a checkpoint come
 * back with their data from the checkpoint alone: the journal's segments
 * before it are gone. */
START_TEST(data_survives_a_checkpoint)
{
    sieve_frontier_config cfg = config(true);
    cfg.segment_bytes = 4096;
    sieve_frontier *f;
    ck_assert_int_eq(sieve_frontier_open(&f, dir, &cfg), SIEVE_OK);
    push_range(f, 0, N);
    static char buf[10][SIEVE_POP_BUF_MAX];
    sieve_url u[10];
    for (int k = 0; k < 10; k++)
        ck_assert_int_eq(sieve_frontier_pop(f, buf[k], sizeof buf[k], &u[k], 0), SIEVE_OK);
    ck_assert_int_eq(sieve_frontier_retry_later(f, &u[0], 600), SIEVE_OK);
    ck_assert_int_eq(sieve_frontier_requeue(f, &u[1]), SIEVE_OK);
    sieve_frontier_free(f); /* a checkpoint; u[2..9] were in flight */
    char path[128];
    snprintf(path, sizeof path, "%s/journal/00000001.log", dir);
    ck_assert_msg(access(path, F_OK) != 0, "the checkpoint left the first segment");
    ck_assert_int_eq(sieve_frontier_open(&f, dir, &cfg), SIEVE_OK);
    ck_assert_int_eq(drain_all(f), N);
    sieve_frontier_free(f);
}
END_TEST

/* A child pushes, pops, reports some done, leaves some in flight and is
 * killed: what comes back is every URL not done, with its data. _i = 0:
 * the journal alone; 1: a checkpoint midway and a queue that spills. */
START_TEST(data_survives_a_kill)
{
    sieve_frontier_config cfg = config(true);
    if (_i) {
        cfg.queue_memory = 16 * 1024;
        cfg.segment_bytes = 16 * 1024;
        cfg.checkpoint_bytes = 16 * 1024;
    }
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        sieve_frontier *f;
        if (sieve_frontier_open(&f, dir, &cfg) != SIEVE_OK)
            _exit(3);
        push_range(f, 0, N / 2);
        if (sieve_frontier_sync(f) != SIEVE_OK)
            _exit(4);
        push_range(f, N / 2, N);
        static char buf[SIEVE_POP_BUF_MAX];
        sieve_url u;
        for (int k = 0; k < 500; k++) {
            if (sieve_frontier_pop(f, buf, sizeof buf, &u, 0) != SIEVE_OK)
                _exit(5);
            if (k % 4 == 0)
                continue; /* in flight at the kill */
            int d = (int)u.depth;
            if (sieve_frontier_done(f, &u) != SIEVE_OK || write(fds[1], &d, sizeof d) != sizeof d)
                _exit(6);
        }
        kill(getpid(), SIGKILL);
        _exit(7);
    }
    close(fds[1]);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFSIGNALED(status), "child status %d", status);
    static char got[N];
    memset(got, 0, sizeof got);
    int ndone = 0, d;
    while (read(fds[0], &d, sizeof d) == sizeof d) {
        got[d] = 1;
        ndone++;
    }
    close(fds[0]);
    ck_assert_int_eq(ndone, 375);
    sieve_frontier *f;
    ck_assert_msg(sieve_frontier_open(&f, dir, &cfg) == SIEVE_OK, "%s", logged);
    ck_assert_int_eq(drain(f, got), N - ndone);
    sieve_frontier_free(f);
}
END_TEST

/* Rewrites dir's STATE with format version v, the same text. */
static void rewrite_state_version(uint32_t from, uint32_t v)
{
    statedir *sd;
    ck_assert_int_eq(statedir_lock(&sd, dir, NULL, 0), SIEVE_OK);
    void *text;
    size_t len;
    ck_assert_int_eq(statedir_read(sd, "STATE", "SIEVEFS", from, &text, &len), SIEVE_OK);
    ck_assert_int_eq(statedir_write(sd, "STATE", "SIEVEFS", v, text, len), SIEVE_OK);
    free(text);
    statedir_unlock(sd);
}

/* A state of format version 1, written before URLs carried data, is read
 * (its URLs come back without any) and marked version 2, which a build of
 * version 1 refuses; a later version is refused with what this build
 * reads. */
START_TEST(a_state_from_before_data_is_read)
{
    sieve_frontier_config cfg = config(true);
    sieve_frontier *f;
    ck_assert_int_eq(sieve_frontier_open(&f, dir, &cfg), SIEVE_OK);
    for (int i = 0; i < 30; i += 3) { /* the URLs without data */
        char u[64];
        ck_assert_int_eq(sieve_frontier_push(f, u, url_of(u, sizeof u, i), (uint32_t)i), SIEVE_OK);
    }
    sieve_frontier_free(f);
    rewrite_state_version(2, 1);
    ck_assert_msg(sieve_frontier_open(&f, dir, &cfg) == SIEVE_OK, "%s", logged);
    ck_assert_int_eq(drain_all(f), 10);
    sieve_frontier_free(f);
    rewrite_state_version(2, 3); /* it was marked 2 */
    ck_assert_int_eq(sieve_frontier_open(&f, dir, &cfg), SIEVE_EVERSION);
    ck_assert_msg(strstr(logged, "format version 3, this build reads 2") != NULL, "%s", logged);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("frontier-data");
    TCase *mem = tcase_create("memory");
    tcase_add_loop_test(mem, data_comes_back_with_each_url, 0, 2);
    tcase_add_test(mem, a_url_without_data_costs_what_it_did);
    tcase_add_test(mem, a_seen_url_keeps_the_data_of_its_first_push);
    tcase_add_test(mem, data_beyond_the_bound_is_refused);
    tcase_add_test(mem, requeue_and_retry_keep_the_data);
    suite_add_tcase(s, mem);
    TCase *disk = tcase_create("disk");
    tcase_add_checked_fixture(disk, setup, teardown);
    tcase_set_timeout(disk, 120);
    tcase_add_loop_test(disk, data_survives_the_spill, 0, 2);
    tcase_add_test(disk, data_survives_a_checkpoint);
    tcase_add_loop_test(disk, data_survives_a_kill, 0, 2);
    tcase_add_test(disk, a_state_from_before_data_is_read);
    suite_add_tcase(s, disk);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
