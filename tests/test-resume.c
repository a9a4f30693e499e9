/* test-resume.c - `sieve crawl --state` killed with SIGKILL at random
 * instants and run again each time, against sieve-web on 127.0.0.1, with
 * a queue budget small enough that most of the queue is on disk, and
 * checkpoints every few pages.
 *
 * At the end every URL of the web's ground truth has a record, no record
 * names a URL outside it, every line of the output is whole, every record
 * but the seed's names a page that links to its URL, and the URLs
 * recorded more than once are at most the kills times the transfers that
 * can be in flight. The random seed is printed; SIEVE_TEST_SEED=N replays
 * a run. */
#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "via-check.h"

enum { KILLS = 12, WORKERS = 2, CONCURRENCY = 4 };

static char tmpdir[64];

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The "url" of each line of text, which must all be whole JSON lines. */
static char **urls_of(char *text, size_t *n)
{
    size_t cap = 1024;
    char **u = malloc(cap * sizeof *u);
    *n = 0;
    for (char *line = strtok(text, "\n"); line != NULL; line = strtok(NULL, "\n")) {
        size_t len = strlen(line);
        ck_assert_msg(len > 2 && line[0] == '{' && line[len - 1] == '}', "a torn line: %s", line);
        const char *p = strstr(line, "{\"url\":\"");
        ck_assert_ptr_nonnull(p);
        p += 8;
        if (*n == cap)
            u = realloc(u, (cap *= 2) * sizeof *u);
        u[(*n)++] = strndup(p, strcspn(p, "\""));
    }
    qsort(u, *n, sizeof *u, cmp_str);
    return u;
}

/* Checks the records in out against the web's ground truth: every URL
 * recorded, none outside it, every line whole. Returns how many records
 * repeat a URL. */
static size_t records_against_truth(const char *out, unsigned port, const char *const *web_args)
{
    size_t n_truth;
    char **truth = harness_web_truth(tmpdir, "127.0.0.1", port, web_args, &n_truth);
    char *text = harness_slurp(out);
    size_t n;
    char **got = urls_of(text, &n);
    size_t twice = 0, i = 0, j = 0;
    while (i < n_truth || j < n) {
        int cmp = i == n_truth ? 1 : j == n ? -1 : strcmp(truth[i], got[j]);
        ck_assert_msg(cmp >= 0, "never recorded: %s", truth[i]);
        ck_assert_msg(cmp <= 0, "recorded, not in the truth: %s", got[j]);
        size_t same = 0;
        while (j < n && strcmp(got[j], truth[i]) == 0)
            j++, same++;
        twice += same - 1;
        i++;
    }
    fprintf(stderr, "test-resume: %zu URLs, %zu records\n", n_truth, n);
    for (size_t k = 0; k < n; k++)
        free(got[k]);
    free(got);
    free(text);
    harness_lines_free(truth);
    return twice;
}

/* Every record in out names where its URL came from, as the web's graph
 * says it may (via-check.h): the seed nothing, every other URL a page
 * that links to it, whichever run queued it. */
static void records_name_their_referrers(const char *out, unsigned port,
                                         const char *const *web_args, const char *seed)
{
    size_t n_edges, n = 0, with_referrer = 0;
    char **edges = harness_web_edges(tmpdir, "127.0.0.1", port, web_args, &n_edges);
    char *text = harness_slurp(out);
    const char *seeds[] = {seed, NULL};
    for (char *line = strtok(text, "\n"); line != NULL; line = strtok(NULL, "\n"), n++) {
        const char *bad = via_check_line(edges, n_edges, seeds, line);
        ck_assert_msg(bad == NULL, "%s", bad);
        with_referrer += strstr(line, "\"referrer\":null") == NULL;
    }
    ck_assert_uint_eq(with_referrer, n - 1);
    free(text);
    harness_lines_free(edges);
}

START_TEST(killed_crawls_resume_to_the_whole_truth)
{
    const char *sieve = getenv("SIEVE_BIN");
    ck_assert_ptr_nonnull(sieve);
    unsigned seed = getenv("SIEVE_TEST_SEED") ? (unsigned)atoi(getenv("SIEVE_TEST_SEED"))
                                              : (unsigned)time(NULL) ^ (unsigned)getpid();
    fprintf(stderr, "test-resume: seed %u (SIEVE_TEST_SEED=%u replays it)\n", seed, seed);
    srand(seed);

    strcpy(tmpdir, "/tmp/sieve-resume-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
    const char *web_args[] = {"--pages", "600", "--drip-ms", "20", NULL};
    unsigned port;
    pid_t web = harness_web_start(tmpdir, "127.0.0.1", web_args, &port);
    char url[64], state[128], out[128], err[128], w[8], c[8];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/", port);
    snprintf(state, sizeof state, "%s/state", tmpdir);
    snprintf(out, sizeof out, "%s/records.jsonl", tmpdir);
    snprintf(err, sizeof err, "%s/stderr.txt", tmpdir);
    snprintf(w, sizeof w, "%d", WORKERS);
    snprintf(c, sizeof c, "%d", CONCURRENCY);
    /* a small queue budget: most of the queue waits on disk, so the kills
     * also land while it is read back; and checkpoints every few pages, so
     * they land in checkpoints and in resumes that start from one */
    char *argv[] = {(char *)sieve,
                    "crawl",
                    "-q",
                    "--delay",
                    "0",
                    "-w",
                    w,
                    "-c",
                    c,
                    "--queue-memory",
                    "4K",
                    "--capacity",
                    "20000",
                    "--checkpoint-interval",
                    "0.05",
                    "--checkpoint-bytes",
                    "8K",
                    "--retries", /* the broken page waits for its retries */
                    "1",         /* off its host; the slow one times out twice */
                    "--retry-wait",
                    "0.05",
                    "--state",
                    state,
                    "-o",
                    out,
                    url,
                    NULL};

    int kills = 0;
    for (int k = 0; k < KILLS; k++) {
        pid_t pid = harness_spawn(argv, NULL, err);
        /* from a few ms to half a second: in the middle of anything */
        struct timespec t = {.tv_sec = 0, .tv_nsec = (long)(5 + rand() % 500) * 1000000L};
        nanosleep(&t, NULL);
        kill(pid, SIGKILL);
        int st = harness_wait(pid);
        if (st == 128 + SIGKILL) {
            kills++;
        } else {
            char *log = harness_slurp(err);
            ck_assert_msg(st == 0, "run %d: exit %d: %s", k, st, log);
            free(log);
        }
    }
    ck_assert_int_ge(kills, 10);
    int st = harness_wait(harness_spawn(argv, NULL, err));
    char *log = harness_slurp(err);
    ck_assert_msg(st == 0, "the last run: exit %d: %s", st, log);
    free(log);
    /* once done, a rerun does nothing */
    st = harness_wait(harness_spawn(argv, NULL, err));
    ck_assert_int_eq(st, 0);

    size_t twice = records_against_truth(out, port, web_args);
    records_name_their_referrers(out, port, web_args, url);
    fprintf(stderr, "test-resume: %d kills, %zu fetched again\n", kills, twice);
    ck_assert_uint_le(twice, (size_t)kills * WORKERS * CONCURRENCY);
    harness_web_stop(web);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* Runs argv with files limited to limit bytes and SIGXFSZ at its
 * default (death), as a shell's ulimit -f leaves it: the crawl itself must
 * turn the limit into a clear error. Returns the exit status. */
static int run_with_file_limit(char *const argv[], const char *err, rlim_t limit)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        struct rlimit rl = {.rlim_cur = limit, .rlim_max = limit};
        int fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || dup2(fd, 2) < 0 || setrlimit(RLIMIT_FSIZE, &rl) != 0)
            _exit(99);
        int null = open("/dev/null", O_WRONLY);
        if (null < 0 || dup2(null, 1) < 0)
            _exit(99);
        signal(SIGXFSZ, SIG_DFL);
        execv(argv[0], argv);
        _exit(98);
    }
    return harness_wait(pid);
}

/* A full disk, here a file size limit that the output or the journal
 * reaches first: the crawl stops with exit status 4 and a message naming
 * what could not be written; run again with room, it completes, and the
 * records hold the whole truth. */
START_TEST(a_full_disk_stops_the_crawl_and_it_resumes)
{
    const char *sieve = getenv("SIEVE_BIN");
    ck_assert_ptr_nonnull(sieve);
    strcpy(tmpdir, "/tmp/sieve-resume-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
    const char *web_args[] = {"--pages", "600", NULL};
    unsigned port;
    pid_t web = harness_web_start(tmpdir, "127.0.0.1", web_args, &port);
    char url[64], state[128], out[128], err[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/", port);
    snprintf(state, sizeof state, "%s/state", tmpdir);
    snprintf(out, sizeof out, "%s/records.jsonl", tmpdir);
    snprintf(err, sizeof err, "%s/stderr.txt", tmpdir);
    char *argv[] = {(char *)sieve, "crawl",   "-q",        "--delay", "0",
                    "--capacity",  "20000",   "--retries", "1",       "--retry-wait",
                    "0.05",        "--state", state,       "-o",      out,
                    url,           NULL};
    /* the output reaches 32 KiB first, then the journal 160 KiB */
    rlim_t limits[] = {32 * 1024, 160 * 1024};
    for (size_t k = 0; k < sizeof limits / sizeof limits[0]; k++) {
        int st = run_with_file_limit(argv, err, limits[k]);
        char *log = harness_slurp(err);
        ck_assert_msg(st == 4, "limit %llu: exit %d: %s", (unsigned long long)limits[k], st, log);
        ck_assert_msg(strstr(log, "File too large") != NULL, "limit %llu: %s",
                      (unsigned long long)limits[k], log);
        free(log);
    }
    int st = harness_wait(harness_spawn(argv, NULL, err));
    char *log = harness_slurp(err);
    ck_assert_msg(st == 0, "the run with room: exit %d: %s", st, log);
    free(log);
    records_against_truth(out, port, web_args);
    harness_web_stop(web);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("resume");
    TCase *tc = tcase_create("kill");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, killed_crawls_resume_to_the_whole_truth);
    tcase_add_test(tc, a_full_disk_stops_the_crawl_and_it_resumes);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
