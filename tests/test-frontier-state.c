/* test-frontier-state.c - a frontier opened on a state directory: what a
 * kill leaves is exactly the URLs pushed and not done, in their order; a
 * second opener, other settings, a full disk and damaged files are
 * refused or recovered, never silently reset.
 *
 * Kills are real: a forked child works on the frontier and SIGKILLs
 * itself, and the parent opens what it left. */
#include <check.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pthread.h>

#include "sieve/frontier.h"
#include "sieve/status.h"
#include "state-fixture.h"

static sieve_frontier_config config(int per_host)
{
    sieve_frontier_config cfg = state_config(per_host);
    cfg.state_meaning = "scope=host";
    return cfg;
}

static sieve_frontier *open_state(int per_host)
{
    sieve_frontier_config cfg = config(per_host);
    sieve_frontier *f = NULL;
    int rc = sieve_frontier_open(&f, dir, &cfg);
    ck_assert_msg(rc == SIEVE_OK, "open: %s: %s", sieve_strerror(rc), logged);
    return f;
}

static void url_of(char *buf, size_t cap, int i)
{
    snprintf(buf, cap, "http://h%d.test/page/%d", i % 7, i);
}

static void push_range(sieve_frontier *f, int from, int to)
{
    for (int i = from; i < to; i++) {
        char u[64];
        url_of(u, sizeof u, i);
        ck_assert_int_eq(sieve_frontier_push(f, u, strlen(u), (uint32_t)i), SIEVE_OK);
    }
}

/* Pops everything left and returns the URL numbers, in pop order. */
static int drain(sieve_frontier *f, int *got, int cap)
{
    int n = 0;
    char buf[128];
    sieve_url u;
    while (sieve_frontier_pop(f, buf, sizeof buf, &u, 0) == SIEVE_OK) {
        ck_assert_int_lt(n, cap);
        got[n++] = (int)u.depth;
        ck_assert_int_eq(sieve_frontier_done(f, &u), SIEVE_OK);
    }
    return n;
}

/* A child pushes 0..299, pops 100 of them, reports done those whose
 * number is not 1 mod 5 (telling the parent which through a pipe), and is
 * killed. Reopened: every URL not reported done comes back, once, and no
 * other; every URL pushed is still seen. */
START_TEST(a_kill_leaves_exactly_what_was_not_done)
{
    int per_host = _i;
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        sieve_frontier_config cfg = config(per_host);
        sieve_frontier *f;
        if (sieve_frontier_open(&f, dir, &cfg) != SIEVE_OK)
            _exit(3);
        push_range(f, 0, 300);
        char buf[100][128];
        sieve_url u[100];
        for (int i = 0; i < 100; i++)
            if (sieve_frontier_pop(f, buf[i], sizeof buf[i], &u[i], 0) != SIEVE_OK)
                _exit(4);
        for (int i = 0; i < 100; i++) {
            if (u[i].depth % 5 == 1)
                continue;
            if (sieve_frontier_done(f, &u[i]) != SIEVE_OK)
                _exit(5);
            int done = (int)u[i].depth;
            if (write(fds[1], &done, sizeof done) != sizeof done)
                _exit(6);
        }
        kill(getpid(), SIGKILL);
        _exit(6);
    }
    close(fds[1]);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "child status %d", status);
    char done[300] = {0};
    int ndone = 0, d;
    while (read(fds[0], &d, sizeof d) == sizeof d) {
        ck_assert(d >= 0 && d < 300);
        done[d] = 1;
        ndone++;
    }
    close(fds[0]);
    ck_assert_int_ge(ndone, 50); /* most of the 100 popped */

    sieve_frontier *f = open_state(per_host);
    sieve_frontier_stats st;
    sieve_frontier_stats_get(f, &st);
    /* which 100 were popped depends on the scheduling: count them */
    static int got[400];
    int n = drain(f, got, 400);
    ck_assert_uint_eq(st.recovered, (uint64_t)n);
    char seen[300] = {0};
    for (int i = 0; i < n; i++) {
        ck_assert_int_lt(got[i], 300);
        ck_assert_msg(!seen[got[i]], "URL %d came back twice", got[i]);
        ck_assert_msg(!done[got[i]], "URL %d was done and came back", got[i]);
        seen[got[i]] = 1;
    }
    ck_assert_int_eq(n, 300 - ndone); /* so every URL not done came back */
    for (int i = 0; i < 300; i++) {
        char u[64];
        url_of(u, sizeof u, i);
        ck_assert_int_eq(sieve_frontier_push(f, u, strlen(u), 0), SIEVE_SEEN);
    }
    sieve_frontier_free(f);
}
END_TEST

/* Without per-host scheduling the order is the push order exactly. */
START_TEST(recovered_urls_keep_their_order)
{
    sieve_frontier *f = open_state(0);
    push_range(f, 0, 50);
    sieve_frontier_free(f); /* a clean close is a kill as far as the state goes */
    f = open_state(0);
    push_range(f, 50, 80);
    sieve_frontier_free(f);
    f = open_state(0);
    int got[100];
    ck_assert_int_eq(drain(f, got, 100), 80);
    for (int i = 0; i < 80; i++)
        ck_assert_int_eq(got[i], i);
    sieve_frontier_free(f);
    /* all done: a rerun finds nothing to do */
    f = open_state(0);
    char buf[64];
    sieve_url u;
    ck_assert_int_eq(sieve_frontier_pop(f, buf, sizeof buf, &u, 0), SIEVE_EDRAINED);
    ck_assert_int_eq(sieve_frontier_sync(f), SIEVE_OK);
    sieve_frontier_free(f);
}
END_TEST

START_TEST(a_second_opener_is_refused)
{
    sieve_frontier *f = open_state(1);
    sieve_frontier_config cfg = config(1);
    sieve_frontier *g = NULL;
    ck_assert_int_eq(sieve_frontier_open(&g, dir, &cfg), SIEVE_ESTATE);
    ck_assert_ptr_null(g);
    ck_assert_msg(strstr(logged, "in use") != NULL, "%s", logged);
    sieve_frontier_free(f);
    f = open_state(1); /* free() released it */
    sieve_frontier_free(f);
}
END_TEST

START_TEST(other_settings_are_refused_with_what_differs)
{
    sieve_frontier *f = open_state(0);
    push_range(f, 0, 3);
    sieve_frontier_free(f);
    sieve_frontier_config cfg = config(0);
    cfg.seen.fp_rate = 0.01;
    ck_assert_int_eq(sieve_frontier_open(&f, dir, &cfg), SIEVE_EMISMATCH);
    ck_assert_msg(strstr(logged, "seen.fp_rate=0.01") && strstr(logged, "seen.fp_rate=0.0001"),
                  "%s", logged);
    cfg = config(0);
    cfg.state_meaning = "scope=domain";
    ck_assert_int_eq(sieve_frontier_open(&f, dir, &cfg), SIEVE_EMISMATCH);
    ck_assert_msg(strstr(logged, "scope=domain") && strstr(logged, "scope=host"), "%s", logged);
    /* Without its STATE the settings are unknown: refused too, not taken
     * for a new directory. */
    char state[96];
    snprintf(state, sizeof state, "%s/STATE", dir);
    ck_assert_int_eq(unlink(state), 0);
    ck_assert_int_eq(sieve_frontier_open(&f, dir, &cfg), SIEVE_EFORMAT);
    ck_assert_msg(strstr(logged, "STATE is missing"), "%s", logged);
    ck_assert_int_ne(access(state, F_OK), 0);
}
END_TEST

/* A full disk (here a file size limit): the push fails with SIEVE_EIO and
 * the frontier closes; what was journaled before is all there on the next
 * open, which can push again. */
START_TEST(a_full_disk_stops_and_the_state_resumes)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        sieve_frontier_config cfg = config(1);
        sieve_frontier *f;
        if (sieve_frontier_open(&f, dir, &cfg) != SIEVE_OK)
            _exit(3);
        struct rlimit rl = {.rlim_cur = 8192, .rlim_max = RLIM_INFINITY};
        setrlimit(RLIMIT_FSIZE, &rl);
        int rc = SIEVE_OK, i = 0;
        for (; i < 10000 && rc == SIEVE_OK; i++) {
            char u[64];
            url_of(u, sizeof u, i);
            rc = sieve_frontier_push(f, u, strlen(u), (uint32_t)i);
        }
        char buf[64];
        sieve_url u;
        int closed = sieve_frontier_pop(f, buf, sizeof buf, &u, 0) == SIEVE_ECLOSED;
        _exit(rc == SIEVE_EIO && errno == EFBIG && closed ? 0 : 10);
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
    sieve_frontier *f = open_state(1);
    sieve_frontier_stats st;
    sieve_frontier_stats_get(f, &st);
    ck_assert_uint_gt(st.recovered, 10);
    uint64_t before = st.recovered;
    push_range(f, 20000, 20010);
    static int got[12000];
    ck_assert_int_eq(drain(f, got, 12000), (int)before + 10);
    sieve_frontier_free(f);
}
END_TEST

/* Damage that is not a torn tail is refused, naming the file. */
START_TEST(damaged_state_files_are_refused)
{
    sieve_frontier *f = open_state(0);
    push_range(f, 0, 20);
    sieve_frontier_free(f);
    char path[128];
    snprintf(path, sizeof path, "%s/STATE", dir);
    FILE *fp = fopen(path, "r+");
    ck_assert_ptr_nonnull(fp);
    fseek(fp, -3, SEEK_END);
    fputc('#', fp);
    fclose(fp);
    sieve_frontier_config cfg = config(0);
    ck_assert_int_eq(sieve_frontier_open(&f, dir, &cfg), SIEVE_ECHECKSUM);
    ck_assert_msg(strstr(logged, "STATE") != NULL, "%s", logged);
}
END_TEST

/* The last journal record cut short (a kill in the middle of a write):
 * cut with a warning, every whole record kept. */
/* Ten URLs pushed, the state closed, and the journal's last record cut
 * short; with or without the checkpoint the close wrote. */
static void tear_after_ten(bool keep_checkpoint)
{
    sieve_frontier *f = open_state(0);
    push_range(f, 0, 10);
    sieve_frontier_free(f);
    char path[128];
    snprintf(path, sizeof path, "%s/CHECKPOINT", dir);
    if (!keep_checkpoint)
        ck_assert_int_eq(unlink(path), 0);
    snprintf(path, sizeof path, "%s/journal/00000001.log", dir);
    struct stat sb;
    ck_assert_int_eq(stat(path, &sb), 0);
    ck_assert_int_eq(truncate(path, sb.st_size - 5), 0);
}

START_TEST(a_torn_journal_tail_is_cut)
{
    tear_after_ten(false); /* free() checkpoints; a kill would have left none */
    sieve_frontier *f = open_state(0);
    ck_assert_msg(strstr(logged, "journal") != NULL, "%s", logged);
    int got[20];
    ck_assert_int_eq(drain(f, got, 20), 9);
    sieve_frontier_free(f);
}
END_TEST

/* A journal that ends before its checkpoint's position lost records that
 * were synced: no crash does that, so it is refused, not cut. */
START_TEST(a_journal_cut_before_its_checkpoint_is_refused)
{
    tear_after_ten(true);
    sieve_frontier *f;
    sieve_frontier_config cfg = config(0);
    ck_assert_int_eq(sieve_frontier_open(&f, dir, &cfg), SIEVE_ETRUNCATED);
    ck_assert_msg(strstr(logged, "checkpoint") != NULL, "%s", logged);
}
END_TEST

static off_t file_size(const char *path)
{
    struct stat sb;
    ck_assert_int_eq(stat(path, &sb), 0);
    return sb.st_size;
}

static void copy_file(const char *from, const char *to)
{
    char cmd[400];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", from, to);
    ck_assert_int_eq(system(cmd), 0);
}

/* A state with a checkpoint whose list holds URLs: 300 pushed, 100 popped
 * and half of those done, then a clean close. */
static void state_with_a_checkpoint(void)
{
    sieve_frontier *f = open_state(1);
    push_range(f, 0, 300);
    char buf[128];
    sieve_url u;
    for (int i = 0; i < 100; i++) {
        ck_assert_int_eq(sieve_frontier_pop(f, buf, sizeof buf, &u, 0), SIEVE_OK);
        if (i % 2 == 0)
            ck_assert_int_eq(sieve_frontier_done(f, &u), SIEVE_OK);
    }
    sieve_frontier_free(f);
}

/* CHECKPOINT cut at several offsets (in its header, its seen-set, its
 * list) and with a byte flipped at each: every time refused with its name,
 * never a crash and never an open that silently dropped it. Restored, it
 * opens with every URL not done. */
START_TEST(a_damaged_checkpoint_is_refused)
{
    state_with_a_checkpoint();
    char path[128], keep[140];
    snprintf(path, sizeof path, "%s/CHECKPOINT", dir);
    snprintf(keep, sizeof keep, "%s.good", path);
    copy_file(path, keep);
    off_t size = file_size(path);
    ck_assert_int_gt(size, 128 + 8);
    off_t at[] = {0, 7, 12, 60, 127, 128, 129, size / 2, size - 40, size - 1};
    sieve_frontier_config cfg = config(1);
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
        for (int flip = 0; flip < 2; flip++) {
            copy_file(keep, path);
            if (flip) {
                FILE *fp = fopen(path, "r+");
                ck_assert_ptr_nonnull(fp);
                fseek(fp, at[i], SEEK_SET);
                int c = fgetc(fp);
                fseek(fp, at[i], SEEK_SET);
                fputc(c ^ 0x10, fp);
                fclose(fp);
            } else {
                ck_assert_int_eq(truncate(path, at[i]), 0);
            }
            logged[0] = '\0';
            sieve_frontier *f = NULL;
            int rc = sieve_frontier_open(&f, dir, &cfg);
            ck_assert_msg(rc == SIEVE_ETRUNCATED || rc == SIEVE_ECHECKSUM || rc == SIEVE_EFORMAT,
                          "%s at %lld: %s", flip ? "flipped" : "cut", (long long)at[i],
                          sieve_strerror(rc));
            ck_assert_ptr_null(f);
            ck_assert_msg(strstr(logged, "CHECKPOINT") != NULL, "%s", logged);
        }
    }
    copy_file(keep, path);
    sieve_frontier *f = open_state(1);
    int got[300];
    ck_assert_int_eq(drain(f, got, 300), 250);
    sieve_frontier_free(f);
}
END_TEST

/* Journal segments before a checkpoint's position are deleted; without
 * the checkpoint that stands in for them, the state is refused. */
START_TEST(checkpoints_give_back_the_journal)
{
    sieve_frontier_config cfg = config(1);
    cfg.segment_bytes = 4096;
    sieve_frontier *f;
    ck_assert_int_eq(sieve_frontier_open(&f, dir, &cfg), SIEVE_OK);
    push_range(f, 0, 2000);
    ck_assert_int_eq(sieve_frontier_sync(f), SIEVE_OK); /* the pushes written out */
    char jdir[128], cmd[200];
    snprintf(jdir, sizeof jdir, "%s/journal", dir);
    snprintf(cmd, sizeof cmd, "test $(ls '%s' | wc -l) -gt 10", jdir);
    ck_assert_int_eq(system(cmd), 0);
    int got[2000];
    ck_assert_int_eq(drain(f, got, 2000), 2000);
    ck_assert_int_eq(sieve_frontier_sync(f), SIEVE_OK);
    sieve_frontier_free(f);
    snprintf(cmd, sizeof cmd, "test $(ls '%s' | wc -l) -le 2", jdir);
    ck_assert_int_eq(system(cmd), 0);
    f = open_state(1);
    char buf[64];
    sieve_url u;
    ck_assert_int_eq(sieve_frontier_pop(f, buf, sizeof buf, &u, 0), SIEVE_EDRAINED);
    sieve_frontier_free(f);
    char path[128];
    snprintf(path, sizeof path, "%s/CHECKPOINT", dir);
    ck_assert_int_eq(unlink(path), 0);
    ck_assert_int_eq(sieve_frontier_open(&f, dir, &cfg), SIEVE_EFORMAT);
    ck_assert_msg(strstr(logged, "CHECKPOINT") != NULL, "%s", logged);
}
END_TEST

/* A URL waiting to be retried is queued as far as a checkpoint goes: the
 * journal that pushed it may be given back, and the URL survives. */
START_TEST(a_url_waiting_for_its_retry_is_kept_by_checkpoints)
{
    sieve_frontier_config cfg = config(1);
    cfg.segment_bytes = 4096;
    sieve_frontier *f;
    ck_assert_int_eq(sieve_frontier_open(&f, dir, &cfg), SIEVE_OK);
    push_range(f, 0, 1);
    char buf[64];
    sieve_url u;
    ck_assert_int_eq(sieve_frontier_pop(f, buf, sizeof buf, &u, 0), SIEVE_OK);
    ck_assert_int_eq(sieve_frontier_retry_later(f, &u, 60), SIEVE_OK);
    push_range(f, 1, 2000); /* journal segments enough to give some back */
    int got[2000];
    ck_assert_int_eq(drain(f, got, 2000), 1999);
    ck_assert_int_eq(sieve_frontier_pop(f, buf, sizeof buf, &u, 0), SIEVE_EAGAIN);
    sieve_frontier_free(f); /* a checkpoint, the journal given back */
    char cmd[200];
    snprintf(cmd, sizeof cmd, "test $(ls '%s/journal' | wc -l) -le 2", dir);
    ck_assert_int_eq(system(cmd), 0);
    f = open_state(1);
    ck_assert_int_eq(drain(f, got, 2000), 1);
    ck_assert_int_eq(got[0], 0);
    sieve_frontier_free(f);
}
END_TEST

/* ---- the queue's memory budget: the spill ---- */

enum { HOSTS = 10000 };

/* The hosts spill_url() spreads URLs over: HOSTS, or a few, so that
 * their windows fill (test-windows.c). */
static uint64_t spill_hosts = HOSTS;

/* URL number i: host i % spill_hosts, and its number on that host. */
static size_t spill_url(char *buf, size_t cap, uint64_t i)
{
    return (size_t)snprintf(buf, cap, "http://host%llu.test/item/%llu",
                            (unsigned long long)(i % spill_hosts),
                            (unsigned long long)(i / spill_hosts));
}

/* Pushes n URLs in batches of 64, as a crawler does; refused[i] (may be
 * NULL) marks those the Bloom filter took for seen (a false positive:
 * such a URL is not queued). Returns how many were queued. */
static uint64_t push_spill(sieve_frontier *f, uint64_t from, uint64_t n, unsigned char *refused)
{
    char text[64][64];
    sieve_url u[64];
    int res[64];
    uint64_t queued = 0;
    for (uint64_t at = from; at < from + n;) {
        size_t k = 0;
        for (; k < 64 && at < from + n; k++, at++) {
            size_t len = spill_url(text[k], sizeof text[k], at);
            u[k] = (sieve_url){.url = text[k], .len = len, .depth = (uint32_t)at};
        }
        int rc = sieve_frontier_push_batch(f, u, k, res);
        ck_assert_int_ge(rc, 0);
        queued += (uint64_t)rc;
        for (size_t i = 0; i < k; i++) {
            ck_assert(res[i] == SIEVE_OK || res[i] == SIEVE_SEEN);
            if (refused != NULL && res[i] == SIEVE_SEEN)
                refused[u[i].depth] = 1;
        }
    }
    return queued;
}

static long resident_bytes(void)
{
    FILE *fp = fopen("/proc/self/statm", "r");
    long pages = 0, rss = 0;
    if (fp != NULL && fscanf(fp, "%ld %ld", &pages, &rss) != 2)
        rss = 0;
    if (fp != NULL)
        fclose(fp);
    return rss * sysconf(_SC_PAGESIZE);
}

/* Pops every URL with done(), checking each host's URLs come in the order
 * pushed (passing over those refused) and each URL once; returns how many. */
static uint64_t drain_in_order(sieve_frontier *f, uint64_t n_pushed, uint64_t *next_of_host,
                               const unsigned char *refused)
{
    char buf[128];
    sieve_url u;
    uint64_t n = 0;
    int rc;
    while ((rc = sieve_frontier_pop(f, buf, sizeof buf, &u, 0)) == SIEVE_OK) {
        uint64_t i = u.depth;
        ck_assert_uint_lt(i, n_pushed);
        uint64_t host = i % HOSTS;
        while (next_of_host[host] < n_pushed && refused[next_of_host[host]])
            next_of_host[host] += HOSTS;
        ck_assert_msg(i == next_of_host[host], "host %llu: got %llu, wanted %llu",
                      (unsigned long long)host, (unsigned long long)i,
                      (unsigned long long)next_of_host[host]);
        next_of_host[host] += HOSTS;
        ck_assert_int_eq(sieve_frontier_done(f, &u), SIEVE_OK);
        n++;
    }
    ck_assert_int_eq(rc, SIEVE_EDRAINED);
    return n;
}

/* SIEVE_SPILL_URLS (default 10 million) URLs over ten thousand hosts
 * through a 16 MiB budget: each comes out once, in its host's order, and
 * the process's resident memory grows by no more than the budget, the
 * seen-set and 24 MiB (per-host queues and the journal's buffers). */
START_TEST(a_budget_keeps_the_queue_on_disk_and_in_order)
{
    uint64_t n =
        getenv("SIEVE_SPILL_URLS") ? strtoull(getenv("SIEVE_SPILL_URLS"), NULL, 10) : 10000000;
    sieve_frontier_config cfg = config(1);
    cfg.seen.capacity = n;
    cfg.queue_memory = 16u << 20;
    long before = resident_bytes();
    sieve_frontier *f;
    int rc = sieve_frontier_open(&f, dir, &cfg);
    ck_assert_msg(rc == SIEVE_OK, "%s", logged);
    unsigned char *refused = calloc(n, 1);
    uint64_t queued = push_spill(f, 0, n, refused);
    ck_assert_uint_ge(queued, n - n / 1000); /* p = 1e-4, far from a thousandth */
    sieve_frontier_stats st;
    sieve_frontier_stats_get(f, &st);
    ck_assert_uint_eq(st.queue_len, queued);
    /* a URL here costs at least 32 bytes: no more than budget / 32 fit */
    ck_assert_uint_ge(st.spilled + (16u << 20) / 32, queued);
    long grown = resident_bytes() - before;
    long allowed = (long)(16u << 20) + (long)st.seen_bytes + (24l << 20);
    fprintf(stderr, "spill: %llu URLs, %llu on disk, resident +%.1f MiB (seen-set %.1f MiB)\n",
            (unsigned long long)n, (unsigned long long)st.spilled, grown / 1048576.0,
            st.seen_bytes / 1048576.0);
    /* A sanitizer's allocator keeps freed memory aside and shadows it: the
     * bound holds for the plain build, which CI runs too. */
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
    ck_assert_msg(grown <= allowed, "resident memory grew by %ld bytes, over %ld", grown, allowed);
#else
    (void)allowed;
#endif
    uint64_t *next = calloc(HOSTS, sizeof *next);
    for (uint64_t h = 0; h < HOSTS; h++)
        next[h] = h;
    ck_assert_uint_eq(drain_in_order(f, n, next, refused), queued);
    sieve_frontier_free(f);
    free(next);
    free(refused);
}
END_TEST

/* Pops and finishes everything left, checking that no URL comes back that
 * was done, refused by the seen-set (refused may be NULL) or popped
 * already (got, marked here); returns how many. */
static int drain_once(sieve_frontier *f, const char *done, const unsigned char *refused, char *got)
{
    char buf[128];
    sieve_url u;
    int n = 0;
    while (sieve_frontier_pop(f, buf, sizeof buf, &u, 0) == SIEVE_OK) {
        ck_assert_msg(!done[u.depth] && !got[u.depth] && (refused == NULL || !refused[u.depth]),
                      "URL %u again", u.depth);
        got[u.depth] = 1;
        n++;
        ck_assert_int_eq(sieve_frontier_done(f, &u), SIEVE_OK);
    }
    return n;
}

/* In a child: pops n URLs, reports done all but every in_flight_every-th
 * (0: none), writing the numbers of the done ones to fd, and dies by
 * SIGKILL. */
static void pop_and_die(sieve_frontier *f, int n, int in_flight_every, int fd)
{
    char buf[128];
    sieve_url u;
    for (int i = 0; i < n; i++) {
        if (sieve_frontier_pop(f, buf, sizeof buf, &u, 0) != SIEVE_OK)
            _exit(4);
        if (in_flight_every > 0 && i % in_flight_every == 0)
            continue; /* left in flight */
        if (sieve_frontier_done(f, &u) != SIEVE_OK)
            _exit(5);
        int d = (int)u.depth;
        if (write(fd, &d, sizeof d) != sizeof d)
            _exit(6);
    }
    kill(getpid(), SIGKILL);
    _exit(7);
}

/* Waits for a child that must have died by a signal. */
static void wait_killed(pid_t pid)
{
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFSIGNALED(status), "child status %d", status);
}

/* A kill after a checkpoint, while the spill was being read and done;
 * then a stop before the head has passed those done URLs (its checkpoint
 * keeps H where it was); then a resume. The second checkpoint must still
 * know those URLs done and counted in the spill: none comes back, and
 * every URL not done does, the spill's last ones too. */
START_TEST(a_checkpoint_before_the_head_passes_done_urls_loses_nothing)
{
    enum { N = 20000, POPPED = 6000 };
    sieve_frontier_config cfg = config(1); /* a Bloom seen-set: checkpoints */
    cfg.queue_memory = 64 * 1024;
    cfg.checkpoint_bytes = 4096;
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        sieve_frontier *f;
        if (sieve_frontier_open(&f, dir, &cfg) != SIEVE_OK)
            _exit(3);
        unsigned char refused[N] = {0};
        push_spill(f, 0, N, refused);
        for (int i = 0; i < N; i++) { /* false positives, not queued */
            int r = refused[i] ? -1 - i : 0;
            if (r != 0 && write(fds[1], &r, sizeof r) != sizeof r)
                _exit(6);
        }
        if (sieve_frontier_sync(f) != SIEVE_OK) /* the checkpoint, H early in the spill */
            _exit(4);
        pop_and_die(f, POPPED, 0, fds[1]); /* past memory, into the spill */
    }
    close(fds[1]);
    wait_killed(pid);
    static char done[N + 1];
    static unsigned char refused[N + 1];
    int d, nrefused = 0;
    while (read(fds[0], &d, sizeof d) == sizeof d) {
        if (d < 0)
            refused[-1 - d] = 1, nrefused++;
        else
            done[d] = 1;
    }
    close(fds[0]);

    /* _i = 1: the head reads on past the done URLs first */
    int more = _i == 1 ? 1000 : 0;
    sieve_frontier *f;
    ck_assert_int_eq(sieve_frontier_open(&f, dir, &cfg), SIEVE_OK);
    push_spill(f, N, 1, NULL); /* something new, so that free() checkpoints */
    char buf[128];
    sieve_url u;
    for (int i = 0; i < more; i++) {
        ck_assert_int_eq(sieve_frontier_pop(f, buf, sizeof buf, &u, 0), SIEVE_OK);
        ck_assert_msg(!done[u.depth], "URL %u again", u.depth);
        done[u.depth] = 1;
        ck_assert_int_eq(sieve_frontier_done(f, &u), SIEVE_OK);
    }
    sieve_frontier_free(f);

    ck_assert_int_eq(sieve_frontier_open(&f, dir, &cfg), SIEVE_OK);
    sieve_frontier_stats st;
    sieve_frontier_stats_get(f, &st);
    ck_assert_uint_eq(st.recovered, N + 1 - POPPED - more - nrefused);
    static char got[N + 1];
    int n = drain_once(f, done, refused, got);
    ck_assert_int_eq(n, N + 1 - POPPED - more - nrefused);
    sieve_frontier_free(f);
}
END_TEST

/* A kill while most of the queue is on disk: everything not done comes
 * back, each host's URLs that were never popped in their order. */
START_TEST(a_kill_with_a_spill_loses_nothing)
{
    enum { N = 20000 };
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        sieve_frontier_config cfg = config(1);
        cfg.seen.kind = SIEVE_SEEN_EXACT;
        cfg.queue_memory = 64 * 1024;
        sieve_frontier *f;
        if (sieve_frontier_open(&f, dir, &cfg) != SIEVE_OK)
            _exit(3);
        push_spill(f, 0, N, NULL);
        pop_and_die(f, 3000, 3, fds[1]);
    }
    close(fds[1]);
    wait_killed(pid);
    static char done[N];
    int ndone = 0, d;
    while (read(fds[0], &d, sizeof d) == sizeof d) {
        done[d] = 1;
        ndone++;
    }
    close(fds[0]);
    ck_assert_int_eq(ndone, 2000);

    sieve_frontier_config cfg = config(1);
    cfg.seen.kind = SIEVE_SEEN_EXACT;
    cfg.queue_memory = 64 * 1024;
    sieve_frontier *f;
    ck_assert_int_eq(sieve_frontier_open(&f, dir, &cfg), SIEVE_OK);
    sieve_frontier_stats st;
    sieve_frontier_stats_get(f, &st);
    ck_assert_uint_eq(st.recovered, N - 2000);
    ck_assert_uint_gt(st.spilled, 0);
    static char got[N];
    int n = drain_once(f, done, NULL, got);
    ck_assert_int_eq(n, N - 2000);
    sieve_frontier_free(f);
}
END_TEST

/* One batch of pushes is one chain of front-coded records across small
 * segments; reopened with a budget, the queue spills part way, and for
 * some budgets the spill begins with the first record of a segment. Its
 * reader, moved up to that record, once read past it: the URL was never
 * popped, the spill counted one more URL than it held, and the checkpoint
 * of that count made the state unopenable. Every budget over a range that
 * holds such starts must give back every URL, and open again after. */
START_TEST(a_spill_that_begins_a_segment_loses_nothing)
{
    enum { N = 200 };
    char src[96], cmd[256];
    snprintf(src, sizeof src, "%s/src", dir);
    sieve_frontier_config cfg = config(0);
    cfg.segment_bytes = 1024;
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        sieve_frontier *f;
        if (sieve_frontier_open(&f, src, &cfg) != SIEVE_OK)
            _exit(3);
        sieve_url urls[N];
        char text[N][64];
        for (int i = 0; i < N; i++) {
            snprintf(text[i], sizeof text[i], "http://a.test/dir/%d", i);
            urls[i] = (sieve_url){.url = text[i], .len = strlen(text[i]), .depth = (uint32_t)i};
        }
        if (sieve_frontier_push_batch(f, urls, N, NULL) != N || sieve_frontier_sync(f) != SIEVE_OK)
            _exit(4);
        kill(getpid(), SIGKILL);
    }
    wait_killed(pid);
    unsigned spilled = 0;
    for (uint64_t budget = 2000; budget <= 2400; budget += 2) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s/run' && cp -a '%s' '%s/run'", dir, src, dir);
        ck_assert_int_eq(system(cmd), 0);
        snprintf(cmd, sizeof cmd, "%s/run", dir);
        cfg.queue_memory = budget;
        for (int open = 0; open < 2; open++) {
            sieve_frontier *f;
            int rc = sieve_frontier_open(&f, cmd, &cfg);
            ck_assert_msg(rc == SIEVE_OK, "budget %llu, open %d: %s: %s",
                          (unsigned long long)budget, open, sieve_strerror(rc), logged);
            sieve_frontier_stats st;
            sieve_frontier_stats_get(f, &st);
            spilled += st.spilled > 0;
            int got[N];
            int n = drain(f, got, N);
            ck_assert_msg(n == (open ? 0 : N), "budget %llu, open %d: %d URLs of %d: %s",
                          (unsigned long long)budget, open, n, N, logged);
            sieve_frontier_free(f);
        }
    }
    ck_assert_uint_gt(spilled, 100);
}
END_TEST

/* Pops n URLs, leaving every third in flight and reporting the others
 * done, their numbers written to fd. */
static void pop_some(sieve_frontier *f, int n, int fd)
{
    char buf[128];
    sieve_url u;
    for (int i = 0; i < n; i++) {
        if (sieve_frontier_pop(f, buf, sizeof buf, &u, 0) != SIEVE_OK)
            _exit(4);
        if (i % 3 == 0)
            continue;
        if (sieve_frontier_done(f, &u) != SIEVE_OK)
            _exit(5);
        int d = (int)u.depth;
        if (write(fd, &d, sizeof d) != sizeof d)
            _exit(6);
    }
}

/* A checkpoint taken while most of the queue is on disk and URLs are in
 * flight, more work after it, then a kill: everything not done comes back
 * once, from the checkpoint's list and the journal after it. */
START_TEST(a_kill_after_a_checkpoint_loses_nothing)
{
    enum { N1 = 30000, N2 = 10000, N = N1 + N2 };
    static unsigned char refused[N];
    int fds[2], rfds[2];
    ck_assert_int_eq(pipe(fds), 0);
    ck_assert_int_eq(pipe(rfds), 0);
    sieve_frontier_config cfg = config(1);
    cfg.queue_memory = 64 * 1024;
    cfg.segment_bytes = 256 * 1024;
    cfg.checkpoint_bytes = 256 * 1024;
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        sieve_frontier *f;
        if (sieve_frontier_open(&f, dir, &cfg) != SIEVE_OK)
            _exit(3);
        push_spill(f, 0, N1, refused);
        pop_some(f, 2000, fds[1]);
        if (sieve_frontier_sync(f) != SIEVE_OK)
            _exit(7);
        push_spill(f, N1, N2, refused);
        pop_some(f, 2000, fds[1]);
        for (int i = 0; i < N; i++)
            if (refused[i] && write(rfds[1], &i, sizeof i) != sizeof i)
                _exit(6);
        kill(getpid(), SIGKILL);
        _exit(8);
    }
    close(fds[1]);
    close(rfds[1]);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFSIGNALED(status), "child status %d", status);
    static char done[N];
    int ndone = 0, nrefused = 0, d;
    while (read(fds[0], &d, sizeof d) == sizeof d) {
        done[d] = 1;
        ndone++;
    }
    while (read(rfds[0], &d, sizeof d) == sizeof d) {
        refused[d] = 1;
        nrefused++;
    }
    close(fds[0]);
    close(rfds[0]);
    ck_assert_int_eq(ndone, 2 * 1333);
    char path[128];
    snprintf(path, sizeof path, "%s/CHECKPOINT", dir);
    ck_assert_int_eq(access(path, F_OK), 0);

    logged[0] = '\0';
    sieve_frontier *f;
    ck_assert_msg(sieve_frontier_open(&f, dir, &cfg) == SIEVE_OK, "%s", logged);
    sieve_frontier_stats st;
    sieve_frontier_stats_get(f, &st);
    ck_assert_uint_eq(st.recovered, (uint64_t)(N - nrefused - ndone));
    ck_assert_uint_eq(st.done, (uint64_t)ndone);
    ck_assert_uint_gt(st.spilled, 0);
    static char got[N];
    int n = drain_once(f, done, refused, got);
    ck_assert_int_eq(n, N - nrefused - ndone);
    sieve_frontier_free(f);
}
END_TEST

/* No state directory: the spill goes to a temporary one (under $TMPDIR,
 * here the test's directory), removed when the frontier is freed. */
START_TEST(an_in_memory_frontier_spills_to_a_temporary_directory)
{
    setenv("TMPDIR", dir, 1);
    sieve_frontier_config cfg = config(1);
    cfg.seen.kind = SIEVE_SEEN_EXACT;
    cfg.queue_memory = 16 * 1024;
    sieve_frontier *f;
    ck_assert_int_eq(sieve_frontier_open(&f, NULL, &cfg), SIEVE_OK);
    unsetenv("TMPDIR");
    enum { N = 30000 };
    ck_assert_uint_eq(push_spill(f, 0, N, NULL), N);
    sieve_frontier_stats st;
    sieve_frontier_stats_get(f, &st);
    ck_assert_uint_gt(st.spilled, N / 2);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "test -n \"$(ls -A '%s')\"", dir);
    ck_assert_int_eq(system(cmd), 0); /* the spill is there */
    uint64_t *next = calloc(HOSTS, sizeof *next);
    for (uint64_t h = 0; h < HOSTS; h++)
        next[h] = h;
    static unsigned char none[N];
    ck_assert_uint_eq(drain_in_order(f, N, next, none), N);
    sieve_frontier_free(f);
    free(next);
    snprintf(cmd, sizeof cmd, "test -z \"$(ls -A '%s')\"", dir);
    ck_assert_int_eq(system(cmd), 0); /* and gone */
}
END_TEST

static int count_entries(const char *path)
{
    char cmd[200];
    snprintf(cmd, sizeof cmd, "exit $(ls -A '%s' | wc -l)", path);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A killed process leaves its temporary spill behind; the next temporary
 * frontier removes it, but not the spill of a frontier still open. */
START_TEST(spills_left_by_killed_processes_are_removed)
{
    setenv("TMPDIR", dir, 1);
    sieve_frontier_config cfg = config(1);
    cfg.seen.kind = SIEVE_SEEN_EXACT;
    cfg.queue_memory = 16 * 1024;
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        sieve_frontier *f;
        if (sieve_frontier_open(&f, NULL, &cfg) != SIEVE_OK)
            _exit(3);
        push_spill(f, 0, 5000, NULL);
        kill(getpid(), SIGKILL);
        _exit(4);
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFSIGNALED(status));
    sieve_frontier *alive, *next;
    ck_assert_int_eq(sieve_frontier_open(&alive, NULL, &cfg), SIEVE_OK);
    ck_assert_int_eq(count_entries(dir), 2);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "touch -d '-2 minutes' '%s'/sieve-queue-*", dir);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(sieve_frontier_open(&next, NULL, &cfg), SIEVE_OK);
    unsetenv("TMPDIR");
    ck_assert_int_eq(count_entries(dir), 2); /* the open one's and the new one's */
    sieve_frontier_free(alive);
    sieve_frontier_free(next);
    ck_assert_int_eq(count_entries(dir), 0);
}
END_TEST

/* Pushers and poppers in threads over a small budget (and so a spill that
 * starts and stops): every URL popped exactly once. The second run has a
 * Bloom seen-set and a thread taking checkpoints all along, which copy the
 * queue and the seen-set while the others work. For ThreadSanitizer. */
enum { T_PUSHERS = 3, T_PER_PUSHER = 30000 };

typedef struct shared {
    sieve_frontier *f;
    atomic_int pushers_left;
    atomic_int poppers_left;
    unsigned char *popped;
    unsigned char *refused;
    atomic_int syncs;
} shared;

static void *pusher(void *arg)
{
    shared *sh = ((void **)arg)[0];
    uint64_t first = (uint64_t)(uintptr_t)((void **)arg)[1];
    push_spill(sh->f, first, T_PER_PUSHER, sh->refused);
    atomic_fetch_sub(&sh->pushers_left, 1);
    return NULL;
}

static void *popper(void *arg)
{
    shared *sh = arg;
    char buf[128];
    sieve_url u;
    for (;;) {
        /* Read before the pop: a drained queue seen before the last push
         * and a count of pushers read after it would end this popper
         * with URLs still queued. */
        bool pushed_all = atomic_load(&sh->pushers_left) == 0;
        int rc = sieve_frontier_pop(sh->f, buf, sizeof buf, &u, 20);
        if (rc == SIEVE_OK) {
            __atomic_fetch_add(&sh->popped[u.depth], 1, __ATOMIC_RELAXED);
            sieve_frontier_done(sh->f, &u);
        } else if (rc == SIEVE_EDRAINED && pushed_all) {
            atomic_fetch_sub(&sh->poppers_left, 1);
            return NULL;
        }
    }
}

static void *syncer(void *arg)
{
    shared *sh = arg;
    while (atomic_load(&sh->poppers_left) > 0) {
        ck_assert_int_eq(sieve_frontier_sync(sh->f), SIEVE_OK);
        atomic_fetch_add(&sh->syncs, 1);
        usleep(2000);
    }
    return NULL;
}

START_TEST(threads_through_a_spill_pop_each_url_once)
{
    int checkpoints = _i > 0;
    sieve_frontier_config cfg = config(1);
    cfg.seen.kind = checkpoints ? SIEVE_SEEN_BLOOM : SIEVE_SEEN_EXACT;
    cfg.queue_memory = 32 * 1024;
    /* then over three hosts: most URLs go past their host's window, and
     * the checkpoints list them from their runs while pops take them */
    spill_hosts = _i == 2 ? 3 : HOSTS;
    cfg.segment_bytes = 256 * 1024;
    shared sh = {.pushers_left = T_PUSHERS, .poppers_left = 2};
    ck_assert_int_eq(sieve_frontier_open(&sh.f, dir, &cfg), SIEVE_OK);
    sh.popped = calloc(T_PUSHERS * T_PER_PUSHER, 1);
    sh.refused = calloc(T_PUSHERS * T_PER_PUSHER, 1);
    pthread_t th[T_PUSHERS + 3];
    void *args[T_PUSHERS][2];
    for (int i = 0; i < T_PUSHERS; i++) {
        args[i][0] = &sh;
        args[i][1] = (void *)(uintptr_t)((uint64_t)i * T_PER_PUSHER);
        pthread_create(&th[i], NULL, pusher, args[i]);
    }
    for (int i = 0; i < 2; i++)
        pthread_create(&th[T_PUSHERS + i], NULL, popper, &sh);
    int n = T_PUSHERS + 2;
    if (checkpoints)
        pthread_create(&th[n++], NULL, syncer, &sh);
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < T_PUSHERS * T_PER_PUSHER; i++)
        ck_assert_msg(sh.popped[i] == !sh.refused[i], "URL %d popped %d times", i, sh.popped[i]);
    if (checkpoints) {
        ck_assert_int_gt(atomic_load(&sh.syncs), 0);
        char path[128];
        snprintf(path, sizeof path, "%s/CHECKPOINT", dir);
        ck_assert_int_eq(access(path, F_OK), 0);
    }
    sieve_frontier_free(sh.f);
    free(sh.popped);
    free(sh.refused);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("frontier-state");
    TCase *tc = tcase_create("state");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, a_kill_leaves_exactly_what_was_not_done, 0, 2);
    tcase_add_test(tc, recovered_urls_keep_their_order);
    tcase_add_test(tc, a_second_opener_is_refused);
    tcase_add_test(tc, other_settings_are_refused_with_what_differs);
    tcase_add_test(tc, a_full_disk_stops_and_the_state_resumes);
    tcase_add_test(tc, damaged_state_files_are_refused);
    tcase_add_test(tc, a_torn_journal_tail_is_cut);
    tcase_add_test(tc, a_journal_cut_before_its_checkpoint_is_refused);
    tcase_add_test(tc, a_damaged_checkpoint_is_refused);
    tcase_add_test(tc, checkpoints_give_back_the_journal);
    tcase_add_test(tc, a_url_waiting_for_its_retry_is_kept_by_checkpoints);
    tcase_add_loop_test(tc, a_checkpoint_before_the_head_passes_done_urls_loses_nothing, 0, 2);
    tcase_add_test(tc, a_kill_with_a_spill_loses_nothing);
    tcase_add_test(tc, a_spill_that_begins_a_segment_loses_nothing);
    tcase_add_test(tc, a_kill_after_a_checkpoint_loses_nothing);
    tcase_add_test(tc, an_in_memory_frontier_spills_to_a_temporary_directory);
    tcase_add_test(tc, spills_left_by_killed_processes_are_removed);
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, a_budget_keeps_the_queue_on_disk_and_in_order);
    TCase *threads = tcase_create("threads");
    tcase_add_checked_fixture(threads, setup, teardown);
    tcase_set_timeout(threads, 300);
    tcase_add_loop_test(threads, threads_through_a_spill_pop_each_url_once, 0, 3);
    suite_add_tcase(s, threads);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
