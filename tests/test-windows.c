/* test-windows.c - per-host windows of a frontier whose queue spills: a
 * host whose URLs fill its window has the rest set aside on disk (runs),
 * so a held or slow host never holds back the others' URLs, and each
 * host's URLs still come out in the order pushed; after a kill as well.
 * Real files in a fresh directory; kills are real (a forked child
 * SIGKILLs itself). */
#include <check.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sieve/frontier.h"
#include "sieve/status.h"
#include "state-fixture.h"

/* URL i: the first FILLER go to the other hosts and fill memory, the
 * next SLOW to slow.test, the rest to the other hosts again. */
enum { OTHERS = 20, FILLER = 2000, SLOW = 4000, AFTER = 6000, N = FILLER + SLOW + AFTER };
#define SLOW_HOST "slow.test"

static bool is_slow(int i)
{
    return i >= FILLER && i < FILLER + SLOW;
}

static int host_of(int i)
{
    return is_slow(i) ? OTHERS : i % OTHERS;
}

static size_t url_of(char *buf, size_t cap, int i)
{
    if (is_slow(i))
        return (size_t)snprintf(buf, cap, "http://" SLOW_HOST "/page/%d", i);
    return (size_t)snprintf(buf, cap, "http://h%d.test/page/%d", i % OTHERS, i);
}

static sieve_frontier_config config(uint64_t budget)
{
    sieve_frontier_config cfg = state_config(true);
    cfg.seen.kind = SIEVE_SEEN_EXACT; /* no false positive to account for */
    cfg.queue_memory = budget;
    return cfg;
}

static void push_range(sieve_frontier *f, int from, int to)
{
    for (int i = from; i < to; i++) {
        char u[64];
        size_t n = url_of(u, sizeof u, i);
        ck_assert_int_eq(sieve_frontier_push(f, u, n, (uint32_t)i), SIEVE_OK);
    }
}

static void hold_slow(sieve_frontier *f, bool hold)
{
    ck_assert_int_eq(sieve_frontier_hold_host(f, SLOW_HOST, strlen(SLOW_HOST), hold), SIEVE_OK);
}

/* Pops whatever is ready, each with done() but every skip-th (0: none),
 * left in flight; checks each URL comes once (got) and, where strict,
 * each host's in the order pushed (since forget_order()). Writes the done ones' numbers to fd
 * (-1: none). Stops after max pops or when nothing is ready. */
static int last[OTHERS + 1]; /* each host's URL popped last, for the strict order */

static void forget_order(void)
{
    for (int h = 0; h <= OTHERS; h++)
        last[h] = -1;
}

static int pop_ready(sieve_frontier *f, char *got, bool strict, int max, int skip, int fd)
{
    char buf[128];
    sieve_url u;
    int n = 0, rc;
    while (n < max && (rc = sieve_frontier_pop(f, buf, sizeof buf, &u, 0)) == SIEVE_OK) {
        int i = (int)u.depth;
        ck_assert_int_lt(i, N);
        ck_assert_msg(!got[i], "URL %d again", i);
        got[i] = 1;
        int h = host_of(i);
        ck_assert_msg(!strict || i > last[h], "host %d: %d after %d", h, i, last[h]);
        last[h] = i;
        n++;
        if (skip > 0 && n % skip == 0)
            continue;
        ck_assert_int_eq(sieve_frontier_done(f, &u), SIEVE_OK);
        if (fd >= 0)
            ck_assert_int_eq(write(fd, &i, sizeof i), sizeof i);
    }
    return n;
}

static int count(const char *got, bool slow)
{
    int n = 0;
    for (int i = 0; i < N; i++)
        n += got[i] && is_slow(i) == slow;
    return n;
}

/* Releases the held host: all its URLs come, in order, and nothing more;
 * frees f. */
static void release_slow_and_drain(sieve_frontier *f, char *got)
{
    hold_slow(f, false);
    pop_ready(f, got, true, N, 0, -1);
    ck_assert_int_eq(count(got, true), SLOW);
    char buf[128];
    sieve_url u;
    ck_assert_int_eq(sieve_frontier_pop(f, buf, sizeof buf, &u, 0), SIEVE_EDRAINED);
    sieve_frontier_free(f);
}

/* The spill holds the held host's URLs first, then the others': every one
 * of the others' is popped while it is held, then its own, in order. */
START_TEST(a_held_host_first_in_the_spill_holds_back_no_other)
{
    sieve_frontier_config cfg = config(64 * 1024);
    sieve_frontier *f;
    ck_assert_msg(sieve_frontier_open(&f, dir, &cfg) == SIEVE_OK, "%s", logged);
    forget_order();
    hold_slow(f, true);
    push_range(f, 0, N);
    sieve_frontier_stats st;
    sieve_frontier_stats_get(f, &st);
    ck_assert_uint_gt(st.spilled, SLOW + AFTER / 2); /* the held host's URLs are in the spill */
    static char got[N];
    memset(got, 0, sizeof got);
    pop_ready(f, got, true, N, 0, -1);
    ck_assert_int_eq(count(got, false), N - SLOW);
    ck_assert_int_eq(count(got, true), 0);
    sieve_frontier_stats_get(f, &st);
    ck_assert_uint_gt(st.deferred, SLOW / 2);
    fprintf(stderr, "held host: %llu URLs set aside, the queue holds %llu bytes of memory\n",
            (unsigned long long)st.deferred, (unsigned long long)st.queue_bytes);
    /* the budget, the deferral's buffers (three of at most 16 KiB here)
     * and the hosts' records */
    ck_assert_uint_le(st.queue_bytes, 64 * 1024 + 64 * 1024);
    release_slow_and_drain(f, got);
}
END_TEST

/* The same, killed after a checkpoint taken while the held host's URLs
 * were set aside, and more work after it: reopened (and the host held
 * again), every URL of the others not done comes back once, then all of
 * the held host's, in order. */
START_TEST(a_kill_while_a_host_is_held_loses_nothing)
{
    sieve_frontier_config cfg = config(64 * 1024);
    cfg.seen.kind = SIEVE_SEEN_BLOOM; /* checkpoints */
    cfg.seen.fp_rate = 1e-9;
    cfg.checkpoint_bytes = 4096;
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        sieve_frontier *f;
        if (sieve_frontier_open(&f, dir, &cfg) != SIEVE_OK)
            _exit(3);
        forget_order();
        hold_slow(f, true);
        push_range(f, 0, N);
        static char got[N];
        pop_ready(f, got, true, 3000, 7, fds[1]);
        sieve_frontier_stats st;
        sieve_frontier_stats_get(f, &st);
        if (st.deferred == 0 || sieve_frontier_sync(f) != SIEVE_OK)
            _exit(4);
        pop_ready(f, got, true, 2000, 7, fds[1]);
        kill(getpid(), SIGKILL);
        _exit(5);
    }
    close(fds[1]);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFSIGNALED(status), "child status %d", status);
    static char done[N];
    int ndone = 0, d;
    while (read(fds[0], &d, sizeof d) == sizeof d) {
        ck_assert(!is_slow(d));
        done[d] = 1;
        ndone++;
    }
    close(fds[0]);
    ck_assert_int_gt(ndone, 4000);
    char path[128];
    snprintf(path, sizeof path, "%s/CHECKPOINT", dir);
    ck_assert_int_eq(access(path, F_OK), 0);

    sieve_frontier *f;
    ck_assert_msg(sieve_frontier_open(&f, dir, &cfg) == SIEVE_OK, "%s", logged);
    forget_order();
    hold_slow(f, true);
    static char got[N];
    memcpy(got, done, sizeof got); /* a done URL that came back would be "again" */
    pop_ready(f, got, false, N, 0, -1);
    ck_assert_int_eq(count(got, false), N - SLOW);
    ck_assert_int_eq(count(got, true), 0);
    release_slow_and_drain(f, got);
}
END_TEST

static int entries(const char *path)
{
    DIR *d = opendir(path);
    int n = 0;
    for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;)
        n += e->d_name[0] != '.';
    if (d != NULL)
        closedir(d);
    return n;
}

/* Without a spill, a push for a host past its window is set aside too
 * (here in a temporary directory, removed with the frontier), and comes
 * back in its order. */
START_TEST(a_push_past_its_hosts_window_waits_on_disk)
{
    setenv("TMPDIR", dir, 1);
    sieve_frontier_config cfg = config(256 << 10); /* a window of 32 KiB */
    sieve_frontier *f;
    ck_assert_int_eq(sieve_frontier_open(&f, NULL, &cfg), SIEVE_OK);
    unsetenv("TMPDIR");
    forget_order();
    static char got[N];
    memset(got, 0, sizeof got);
    push_range(f, FILLER, FILLER + SLOW / 2); /* 2,000 URLs of about 35 bytes */
    ck_assert_int_eq(pop_ready(f, got, true, 100, 0, -1), 100);
    push_range(f, FILLER + SLOW / 2, FILLER + SLOW);   /* behind those set aside */
    for (int i = FILLER; i < FILLER + SLOW; i += 97) { /* seen: nothing more */
        char u[64];
        size_t n = url_of(u, sizeof u, i);
        ck_assert_int_eq(sieve_frontier_push(f, u, n, (uint32_t)i), SIEVE_SEEN);
    }
    sieve_frontier_stats st;
    sieve_frontier_stats_get(f, &st);
    ck_assert_uint_eq(st.spilled, 0);
    ck_assert_uint_gt(st.deferred, 0);
    ck_assert_uint_eq(st.queue_len, SLOW - 100);
    ck_assert_int_eq(entries(dir), 1); /* the temporary state */
    ck_assert_int_eq(pop_ready(f, got, true, N, 0, -1), SLOW - 100);
    sieve_frontier_free(f);
    ck_assert_int_eq(entries(dir), 0);
}
END_TEST

/* A host whose URLs in memory ran out while more wait on disk is not
 * idle: the sweep that forgets idle hosts, run by the pops of hosts that
 * come and go, keeps it, and all its URLs come back in order. */
START_TEST(a_host_with_urls_set_aside_is_never_forgotten)
{
    setenv("TMPDIR", dir, 1);
    sieve_frontier_config cfg = config(64 * 1024);
    sieve_frontier *f;
    ck_assert_int_eq(sieve_frontier_open(&f, NULL, &cfg), SIEVE_OK);
    unsetenv("TMPDIR");
    push_range(f, FILLER, FILLER + SLOW);
    int next = FILLER, passing = 0;
    char buf[128];
    sieve_url u;
    while (next < FILLER + SLOW) {
        char url[64];
        int n = snprintf(url, sizeof url, "http://passing%d.test/", passing++);
        ck_assert_int_eq(sieve_frontier_push(f, url, (size_t)n, UINT32_MAX), SIEVE_OK);
        for (int k = 0; k < 2; k++) {
            ck_assert_int_eq(sieve_frontier_pop(f, buf, sizeof buf, &u, 0), SIEVE_OK);
            if (u.depth != UINT32_MAX)
                ck_assert_int_eq((int)u.depth, next++);
            ck_assert_int_eq(sieve_frontier_done(f, &u), SIEVE_OK);
        }
    }
    sieve_frontier_free(f);
}
END_TEST

/* ---- retries past their share of the budget ---- */

enum { RETRIES = 2000 };

/* Pops what is ready for up to wait_s, each URL r%d.test once (got) and
 * done; returns how many. */
static int pop_retried(sieve_frontier *f, char *got, double wait_s)
{
    char buf[128];
    sieve_url u;
    int n = 0;
    while (sieve_frontier_pop(f, buf, sizeof buf, &u, wait_s) == SIEVE_OK) {
        ck_assert_uint_lt(u.depth, RETRIES);
        ck_assert_msg(!got[u.depth], "URL %u again", u.depth);
        got[u.depth] = 1;
        ck_assert_int_eq(sieve_frontier_done(f, &u), SIEVE_OK);
        n++;
    }
    return n;
}

/* An outage over many hosts: every URL, each of its own host, is given
 * back for a retry. The retry heap takes an eighth of the budget; the
 * rest wait on disk behind their hosts' other URLs, the hosts resting
 * for the wait. None comes back before it, each comes back once after,
 * and those not done by a checkpoint come back from it. */
START_TEST(retries_past_their_share_wait_on_disk)
{
    sieve_frontier_config cfg = config(64 * 1024); /* 8 KiB of retries */
    sieve_frontier *f;
    ck_assert_int_eq(sieve_frontier_open(&f, dir, &cfg), SIEVE_OK);
    for (int i = 0; i < RETRIES; i++) {
        char url[64];
        int n = snprintf(url, sizeof url, "http://r%d.test/", i);
        ck_assert_int_eq(sieve_frontier_push(f, url, (size_t)n, (uint32_t)i), SIEVE_OK);
    }
    char buf[128];
    sieve_url u;
    for (int i = 0; i < RETRIES; i++) {
        ck_assert_int_eq(sieve_frontier_pop(f, buf, sizeof buf, &u, 0), SIEVE_OK);
        ck_assert_int_eq(sieve_frontier_retry_later(f, &u, 0.5), SIEVE_OK);
    }
    sieve_frontier_stats st;
    sieve_frontier_stats_get(f, &st);
    ck_assert_uint_eq(st.queue_len, RETRIES);
    ck_assert_uint_eq(st.in_flight, 0);
    /* a waiting URL costs its entry (15 bytes at least) and 48 more */
    ck_assert_uint_ge(st.deferred, RETRIES - 8192 / (15 + 48));
    ck_assert_uint_lt(st.deferred, RETRIES);
    ck_assert_int_eq(sieve_frontier_pop(f, buf, sizeof buf, &u, 0), SIEVE_EAGAIN);
    static char got[RETRIES];
    memset(got, 0, sizeof got);
    usleep(600 * 1000);
    int n = 0;
    while (n < RETRIES / 2 && sieve_frontier_pop(f, buf, sizeof buf, &u, 0) == SIEVE_OK) {
        ck_assert_msg(!got[u.depth], "URL %u again", u.depth);
        got[u.depth] = 1;
        ck_assert_int_eq(sieve_frontier_done(f, &u), SIEVE_OK);
        n++;
    }
    ck_assert_int_eq(n, RETRIES / 2);
    sieve_frontier_free(f); /* a checkpoint */
    ck_assert_int_eq(sieve_frontier_open(&f, dir, &cfg), SIEVE_OK);
    ck_assert_int_eq(pop_retried(f, got, 0.2), RETRIES - RETRIES / 2);
    ck_assert_int_eq(sieve_frontier_pop(f, buf, sizeof buf, &u, 0), SIEVE_EDRAINED);
    sieve_frontier_free(f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("windows");
    TCase *tc = tcase_create("windows");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, a_held_host_first_in_the_spill_holds_back_no_other);
    tcase_add_test(tc, a_kill_while_a_host_is_held_loses_nothing);
    tcase_add_test(tc, a_push_past_its_hosts_window_waits_on_disk);
    tcase_add_test(tc, a_host_with_urls_set_aside_is_never_forgotten);
    tcase_add_test(tc, retries_past_their_share_wait_on_disk);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
