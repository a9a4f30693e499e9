/* test-runs.c - URLs deferred behind their hosts' windows (runs.c): each
 * host's come back in the order deferred, across the buffer and many run
 * files; run files go once read, unless a listing keeps them; a changed
 * file is refused with its name. Real files in a fresh directory. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runs.h"
#include "sieve/status.h"
#include "state-fixture.h"

enum { HOSTS = 3, PER_HOST = 1000 };

static char runs_dir[128];

static runs *open_runs(size_t buffer)
{
    snprintf(runs_dir, sizeof runs_dir, "%s/runs", dir);
    char msg[256];
    runs *r;
    ck_assert_int_eq(runs_open(&r, runs_dir, buffer, msg, sizeof msg), SIEVE_OK);
    return r;
}

static int run_files(void)
{
    DIR *d = opendir(runs_dir);
    int n = 0;
    for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;)
        n += strstr(e->d_name, ".run") != NULL;
    if (d != NULL)
        closedir(d);
    return n;
}

/* URL i of host h: its tag is i, and its text says both. */
static void defer_all(runs *r)
{
    for (int i = 0; i < PER_HOST; i++)
        for (uint32_t h = 0; h < HOSTS; h++) {
            char url[64];
            int n = snprintf(url, sizeof url, "http://h%u.test/%d", h, i);
            ck_assert_int_eq(runs_defer(r, h, url, (size_t)n, (uint32_t)i), SIEVE_OK);
        }
}

typedef struct seen_order {
    int next[HOSTS];
    int calls;
} seen_order;

static int check_next(void *ud, uint32_t host, const char *e, size_t len, uint32_t tag)
{
    seen_order *o = ud;
    char want[64];
    int n = snprintf(want, sizeof want, "http://h%u.test/%d", host, o->next[host]);
    ck_assert_uint_lt(host, HOSTS);
    ck_assert_uint_eq(tag, (uint32_t)o->next[host]);
    ck_assert_msg(len == (size_t)n && memcmp(e, want, len) == 0, "got %.*s, wanted %s", (int)len, e,
                  want);
    o->next[host]++;
    o->calls++;
    return SIEVE_OK;
}

/* A small buffer makes many runs; takes of any size give each host's URLs
 * in order, one at least each time, and read run files go. */
START_TEST(each_host_gets_its_urls_back_in_order)
{
    runs *r = open_runs(2048);
    defer_all(r);
    ck_assert_uint_eq(runs_total(r), HOSTS * PER_HOST);
    ck_assert_int_gt(run_files(), 10);
    seen_order o = {.calls = 0};
    size_t sizes[] = {0, 1, 100, 5000, 1 << 20};
    for (int round = 0; runs_total(r) > 0; round++) {
        for (uint32_t h = 0; h < HOSTS; h++) {
            size_t taken, before = runs_count(r, h);
            ck_assert_int_eq(runs_take(r, h, sizes[round % 5], check_next, &o, &taken), SIEVE_OK);
            ck_assert_uint_eq(runs_count(r, h), before - taken);
            ck_assert(before == 0 || taken > 0);
        }
    }
    for (uint32_t h = 0; h < HOSTS; h++)
        ck_assert_int_eq(o.next[h], PER_HOST);
    ck_assert_int_eq(run_files(), 0);
    runs_free(r);
    ck_assert_int_eq(access(runs_dir, F_OK), -1); /* gone with its files */
}
END_TEST

/* What a listing notes comes out whole, each host's in order, though the
 * URLs are taken back meanwhile; its runs stay until it ends. */
START_TEST(a_listing_keeps_its_runs_while_they_are_taken)
{
    runs *r = open_runs(2048);
    defer_all(r);
    runs_list *l;
    ck_assert_int_eq(runs_list_begin(r, &l), SIEVE_OK);
    int files = run_files();
    seen_order taken_back = {.calls = 0};
    for (uint32_t h = 0; h < HOSTS; h++) {
        size_t taken;
        ck_assert_int_eq(runs_take(r, h, 1 << 20, check_next, &taken_back, &taken), SIEVE_OK);
        while (runs_count(r, h) > 0)
            ck_assert_int_eq(runs_take(r, h, 1 << 20, check_next, &taken_back, &taken), SIEVE_OK);
    }
    ck_assert_int_eq(run_files(), files);
    seen_order listed = {.calls = 0};
    ck_assert_int_eq(runs_list_walk(l, check_next, &listed), SIEVE_OK);
    ck_assert_int_eq(listed.calls, HOSTS * PER_HOST);
    runs_list_end(r, l);
    ck_assert_int_eq(run_files(), 0);
    runs_free(r);
}
END_TEST

/* Defers host h's next n URLs. */
static void defer_some(runs *r, uint32_t h, int *next, int n)
{
    for (int k = 0; k < n; k++, ++*next) {
        char url[64];
        int len = snprintf(url, sizeof url, "http://h%u.test/%d", h, *next);
        ck_assert_int_eq(runs_defer(r, h, url, (size_t)len, (uint32_t)*next), SIEVE_OK);
    }
}

/* A URL deferred after a take comes after what was left, for every host,
 * whether the host's earlier URLs were taken back from the buffer or
 * from runs. */
START_TEST(urls_deferred_between_takes_keep_their_place)
{
    runs *r = open_runs(1 << 20); /* runs only when listed */
    seen_order o = {.calls = 0};
    int next[HOSTS] = {0};
    size_t taken;
    for (int round = 0; round < 50; round++) {
        /* host 0's chain fills, empties and fills again before the others
         * defer anything: the run must still hold each host's once */
        defer_some(r, 0, &next[0], 7);
        ck_assert_int_eq(runs_take(r, 0, 1 << 20, check_next, &o, &taken), SIEVE_OK);
        defer_some(r, 0, &next[0], 7);
        for (uint32_t h = 1; h < HOSTS; h++)
            defer_some(r, h, &next[h], 14);
        ck_assert_int_eq(runs_take(r, 1, 50, check_next, &o, &taken), SIEVE_OK);
        if (round % 10 == 9) { /* some of them in runs, some in the buffer */
            /* a listing gives what is left, host 1's part read partly */
            seen_order listed = o;
            listed.calls = 0;
            runs_list *l;
            ck_assert_int_eq(runs_list_begin(r, &l), SIEVE_OK);
            ck_assert_int_eq(runs_list_walk(l, check_next, &listed), SIEVE_OK);
            runs_list_end(r, l);
            for (uint32_t h = 0; h < HOSTS; h++)
                ck_assert_int_eq(listed.next[h], next[h]);
        }
    }
    for (uint32_t h = 0; h < HOSTS; h++) {
        while (runs_count(r, h) > 0)
            ck_assert_int_eq(runs_take(r, h, 50, check_next, &o, &taken), SIEVE_OK);
        ck_assert_int_eq(o.next[h], next[h]);
    }
    runs_free(r);
}
END_TEST

/* Host 0 waits (its first part read partly) while host 1's URLs come and
 * go through hundreds of runs: the runs that host 0 alone keeps alive are
 * compacted, so their files stay within a few times what is unread, and
 * host 0's URLs still come back in order, a listing too. */
START_TEST(runs_kept_alive_by_a_waiting_host_are_compacted)
{
    runs *r = open_runs(4096);
    seen_order o = {.calls = 0};
    int next[HOSTS] = {0};
    size_t taken;
    defer_some(r, 0, &next[0], 3);
    defer_some(r, 1, &next[1], 400); /* host 1 reads from runs, a backlog behind */
    runs_list *l;
    ck_assert_int_eq(runs_list_begin(r, &l), SIEVE_OK); /* the first run, written */
    runs_list_end(r, l);
    ck_assert_int_eq(runs_take(r, 0, 1, check_next, &o, &taken), SIEVE_OK);
    ck_assert_uint_eq(taken, 1); /* the next is coded against it */
    uint64_t most = 0;
    for (int round = 0; round < 2000; round++) {
        defer_some(r, 0, &next[0], 1);
        defer_some(r, 1, &next[1], 20);
        ck_assert_int_eq(runs_take(r, 1, 20 * 28, check_next, &o, &taken), SIEVE_OK);
        if (runs_file_bytes(r) > most)
            most = runs_file_bytes(r);
        ck_assert_msg(runs_file_bytes(r) <= 2 * runs_unread_bytes(r) + 6 * 4096 + 4096,
                      "round %d: %llu bytes of runs for %llu unread", round,
                      (unsigned long long)runs_file_bytes(r),
                      (unsigned long long)runs_unread_bytes(r));
    }
    /* far more went through the runs than they held at most */
    ck_assert_uint_lt(most * 8, (uint64_t)next[1] * 20);
    seen_order listed = o;
    ck_assert_int_eq(runs_list_begin(r, &l), SIEVE_OK);
    ck_assert_int_eq(runs_list_walk(l, check_next, &listed), SIEVE_OK);
    runs_list_end(r, l);
    ck_assert_int_eq(listed.next[0], next[0]);
    while (runs_count(r, 0) > 0)
        ck_assert_int_eq(runs_take(r, 0, 300, check_next, &o, &taken), SIEVE_OK);
    ck_assert_int_eq(o.next[0], next[0]);
    ck_assert_int_eq(o.next[1], next[1]);
    ck_assert_int_eq(run_files(), 0);
    runs_free(r);
}
END_TEST

static int ignore(void *ud, uint32_t host, const char *e, size_t len, uint32_t tag)
{
    (void)ud, (void)host, (void)e, (void)len, (void)tag;
    return SIEVE_OK;
}

/* A run file changed under the process is refused with its name. */
START_TEST(a_changed_run_file_is_refused_with_its_name)
{
    runs *r = open_runs(2048);
    defer_all(r);
    char path[200];
    snprintf(path, sizeof path, "%s/00000001.run", runs_dir);
    FILE *fp = fopen(path, "r+b");
    ck_assert_ptr_nonnull(fp);
    ck_assert_int_eq(fseek(fp, 40, SEEK_SET), 0);
    fputc('X', fp);
    fclose(fp);
    size_t taken;
    ck_assert_int_eq(runs_take(r, 0, 1 << 20, ignore, NULL, &taken), SIEVE_EFORMAT);
    ck_assert_ptr_nonnull(strstr(runs_message(r), "00000001.run"));
    runs_free(r);
}
END_TEST

/* Runs a killed process left are scratch: an open removes them. */
START_TEST(an_open_removes_runs_left_behind)
{
    runs *r = open_runs(2048);
    defer_all(r);
    ck_assert_int_gt(run_files(), 0);
    char msg[256];
    runs *again;
    ck_assert_int_eq(runs_open(&again, runs_dir, 2048, msg, sizeof msg), SIEVE_OK);
    ck_assert_int_eq(run_files(), 0);
    runs_free(again);
    runs_free(r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("runs");
    TCase *tc = tcase_create("runs");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, each_host_gets_its_urls_back_in_order);
    tcase_add_test(tc, a_listing_keeps_its_runs_while_they_are_taken);
    tcase_add_test(tc, urls_deferred_between_takes_keep_their_place);
    tcase_add_test(tc, runs_kept_alive_by_a_waiting_host_are_compacted);
    tcase_add_test(tc, a_changed_run_file_is_refused_with_its_name);
    tcase_add_test(tc, an_open_removes_runs_left_behind);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
