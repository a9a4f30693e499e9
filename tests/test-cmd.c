/* test-cmd.c - the command side of `sieve crawl`: option errors that name
 * their option, values with line breaks refused, an output file that is a
 * seed file refused, `-o -`, SIGHUP reopening the outputs without losing a
 * line, --stats JSON lines, and the exit statuses 3 (no seed fetched) and
 * 4 (an output that cannot be written). Against sieve-web on a free
 * loopback port. */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "sieve/crawl.h"

static const char *sieve_bin;
static char tmpdir[64];
static pid_t web_pid;
static char base[64];

static void path_in_tmp(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "%s/%s", tmpdir, name);
}

static void make_tmpdir(void)
{
    sieve_bin = getenv("SIEVE_BIN");
    ck_assert_msg(sieve_bin != NULL && getenv("SIEVE_WEB") != NULL,
                  "SIEVE_BIN and SIEVE_WEB must name the programs");
    strcpy(tmpdir, "/tmp/sieve-cmd-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void remove_tmpdir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
}

/* A web of 300 pages without the hostile ones: a polite crawl of it with
 * one connection and --delay 0.02 takes several seconds. */
static void start_web(void)
{
    make_tmpdir();
    const char *extra[] = {"--pages", "300", "--no-hostile", NULL};
    unsigned port;
    web_pid = harness_web_start(tmpdir, "127.0.0.1", extra, &port);
    snprintf(base, sizeof base, "http://127.0.0.1:%u/", port);
}

static void stop_web(void)
{
    harness_web_stop(web_pid);
    remove_tmpdir();
}

/* Runs sieve with argv (NULL-ended, without the program), stdout and
 * stderr into files of the temporary folder; returns the exit status and
 * the stderr text in *log (freed by the caller). */
static int run(const char *const *args, const char *out, char **log)
{
    char err[128];
    path_in_tmp(err, sizeof err, "stderr.txt");
    char *argv[64] = {(char *)sieve_bin};
    int n = 1;
    for (; *args != NULL; args++)
        argv[n++] = (char *)*args;
    argv[n] = NULL;
    int st = harness_wait(harness_spawn(argv, out, err));
    *log = harness_slurp(err);
    return st;
}

/* ---- a strict JSON checker, one value per line ---- */

static const char *json_value(const char *p);

static const char *json_ws(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

static const char *json_string(const char *p)
{
    if (*p++ != '"')
        return NULL;
    for (; *p != '"'; p++) {
        if ((unsigned char)*p < 0x20)
            return NULL;
        if (*p == '\\') {
            p++;
            if (*p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!strchr("0123456789abcdefABCDEF", p[i]) || p[i] == '\0')
                        return NULL;
                p += 4;
            } else if (*p == '\0' || !strchr("\"\\/bfnrt", *p)) {
                return NULL;
            }
        }
    }
    return p + 1;
}

static const char *json_number(const char *p)
{
    char *end;
    if (*p != '-' && (*p < '0' || *p > '9'))
        return NULL;
    strtod(p, &end);
    return end == p ? NULL : end;
}

static const char *json_seq(const char *p, char close, bool object)
{
    p = json_ws(p + 1);
    if (*p == close)
        return p + 1;
    for (;;) {
        if (object) {
            p = json_string(json_ws(p));
            if (p == NULL || *(p = json_ws(p)) != ':')
                return NULL;
            p++;
        }
        p = json_value(p);
        if (p == NULL)
            return NULL;
        p = json_ws(p);
        if (*p == close)
            return p + 1;
        if (*p++ != ',')
            return NULL;
    }
}

static const char *json_value(const char *p)
{
    p = json_ws(p);
    if (*p == '{')
        return json_seq(p, '}', true);
    if (*p == '[')
        return json_seq(p, ']', false);
    if (*p == '"')
        return json_string(p);
    for (const char *const *w = (const char *const[]){"true", "false", "null", NULL}; *w; w++)
        if (strncmp(p, *w, strlen(*w)) == 0)
            return p + strlen(*w);
    return json_number(p);
}

/* Checks that text is JSON objects, one a line, each line ending in a
 * newline; returns the number of lines. */
static size_t json_lines(const char *text, const char *what)
{
    size_t n = 0;
    for (const char *line = text; *line != '\0'; n++) {
        const char *nl = strchr(line, '\n');
        ck_assert_msg(nl != NULL, "%s: line %zu has no newline: %s", what, n + 1, line);
        ck_assert_msg(*line == '{', "%s: line %zu is no object: %.*s", what, n + 1,
                      (int)(nl - line), line);
        const char *end = json_value(line);
        ck_assert_msg(end == nl, "%s: line %zu is not one JSON value: %.*s", what, n + 1,
                      (int)(nl - line), line);
        line = nl + 1;
    }
    return n;
}

static size_t count_lines(const char *path)
{
    FILE *fp = fopen(path, "r");
    if (fp == NULL)
        return 0;
    size_t n = 0;
    for (int c; (c = getc(fp)) != EOF;)
        n += c == '\n';
    fclose(fp);
    return n;
}

/* Waits until path holds at least n lines, at most 20 s. */
static void wait_for_lines(const char *path, size_t n)
{
    for (int i = 0; i < 400 && count_lines(path) < n; i++)
        usleep(50 * 1000);
    ck_assert_msg(count_lines(path) >= n, "%s: fewer than %zu lines after 20 s", path, n);
}

/* The number after "key": in text (the first one), or -1. */
static long long number_after(const char *text, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(text, pat);
    return p == NULL ? -1 : strtoll(p + strlen(pat), NULL, 10);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The number of distinct "url" values in JSON lines (the text is cut up). */
static size_t distinct_urls(char *text)
{
    char **urls = NULL;
    size_t n = 0;
    for (char *p = text; (p = strstr(p, "{\"url\":\"")) != NULL;) {
        p += 8;
        char *end = strchr(p, '"');
        ck_assert_ptr_nonnull(end);
        *end = '\0';
        urls = realloc(urls, (n + 1) * sizeof *urls);
        ck_assert_ptr_nonnull(urls);
        urls[n++] = p;
        p = end + 1;
    }
    qsort(urls, n, sizeof *urls, cmp_str);
    size_t distinct = 0;
    for (size_t i = 0; i < n; i++)
        distinct += i == 0 || strcmp(urls[i], urls[i - 1]) != 0;
    free(urls);
    return distinct;
}

/* "N pages" of the summary line. */
static long long summary_pages(const char *log)
{
    const char *p = strstr(log, " s: ");
    return p == NULL ? -1 : strtoll(p + 4, NULL, 10);
}

/* ---- arguments ---- */

static void assert_refused(const char *const *args, const char *want)
{
    char *log;
    int st = run(args, NULL, &log);
    ck_assert_msg(st == 2, "%s: exit %d, not 2: %s", args[1], st, log);
    ck_assert_msg(strstr(log, want) != NULL, "'%s' not in: %s", want, log);
    free(log);
}

/* A URL nobody serves: a crawl that started by mistake ends quickly
 * with status 3, never 2. */
#define NOWHERE "http://127.0.0.1:9/"

START_TEST(option_errors_name_the_option)
{
    static const struct {
        const char *opt, *value, *want;
    } cases[] = {
        {"--fp-rate", "1e-300", "sieve crawl: --fp-rate: '1e-300'"},
        {"--fp-rate", "2", "sieve crawl: --fp-rate:"},
        {"-w", "257", "sieve crawl: --workers: '257'"},
        {"--workers", "0", "sieve crawl: --workers:"},
        {"-c", "4097", "sieve crawl: --concurrency: '4097'"},
        {"--max-page-bytes", "10X", "sieve crawl: --max-page-bytes:"},
        {"--max-page-bytes", "0", "sieve crawl: --max-page-bytes:"},
        {"--delay", "-1", "sieve crawl: --delay:"},
        {"--delay", "0x10", "sieve crawl: --delay: '0x10'"},
        {"--max-pages", "0x10", "sieve crawl: --max-pages: '0x10'"},
        {"--queue-memory", "0x1p4M", "sieve crawl: --queue-memory: '0x1p4M'"},
        {"--timeout", "0", "sieve crawl: --timeout:"},
        {"--stop-grace", "soon", "sieve crawl: --stop-grace:"},
        {"--scope", "planet", "sieve crawl: --scope: 'planet' is not one of: host domain any"},
        {"--deny", "(", "sieve crawl: --deny: '('"},
        {"--low-speed", "5", "sieve crawl: --low-speed:"},
        {"--accept", ".pdf,,.ps", "sieve crawl: --accept:"},
        {"--reject", "pdf", "sieve crawl: --reject: 'pdf'"},
        {"--header", "NoColon", "sieve crawl: --header:"},
        {"--user", "nopassword", "sieve crawl: --user:"},
        {"--cookie", "/nonexistent/cookies.txt", "sieve crawl: --cookie:"},
        {"--netrc-file", "/nonexistent/netrc", "sieve crawl: --netrc-file:"},
        {"--max-url-len", "8", "sieve crawl: --max-url-len:"},
        {"--stats-interval", "5", "sieve crawl: --stats-interval: needs --stats"},
        {"--stats", "-", "sieve crawl: --stats: standard output holds the records already"},
        {"--bogus", "1", "sieve crawl: unknown option '--bogus'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *args[] = {"crawl", "-q", "--connect-timeout", "1", cases[i].opt, cases[i].value,
                              NOWHERE, NULL};
        assert_refused(args, cases[i].want);
    }
    const char *missing[] = {"crawl", NOWHERE, "--workers", NULL};
    assert_refused(missing, "sieve crawl: --workers: needs an argument");
    const char *flag_arg[] = {"crawl", "--quiet=yes", NOWHERE, NULL};
    assert_refused(flag_arg, "sieve crawl: --quiet: takes no argument");
    const char *none[] = {"crawl", "-q", NULL};
    assert_refused(none, "sieve crawl: no seed file or URL given");
}
END_TEST

START_TEST(values_with_line_breaks_are_refused)
{
    static const struct {
        const char *opt, *value;
    } cases[] = {
        {"--header", "X-A: b\r\nX-B: c"},
        {"--header", "X-A: b\n"},
        {"--user-agent", "sieve\r\nX-B: c"},
        {"--proxy", "http://p\n/"},
        {"--user", "u:p\rw"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char want[128];
        snprintf(want, sizeof want, "sieve crawl: %s: value contains a line break", cases[i].opt);
        const char *args[] = {"crawl", "-q", cases[i].opt, cases[i].value, NOWHERE, NULL};
        assert_refused(args, want);
    }
}
END_TEST

START_TEST(an_output_that_is_a_seed_file_is_refused)
{
    static const char seeds_text[] = "http://127.0.0.1:9/\n";
    char seeds[128], hard[128], soft[128], dotted[160], sub[128];
    path_in_tmp(seeds, sizeof seeds, "seeds.txt");
    path_in_tmp(hard, sizeof hard, "hard.txt");
    path_in_tmp(soft, sizeof soft, "soft.txt");
    path_in_tmp(sub, sizeof sub, "sub");
    snprintf(dotted, sizeof dotted, "%s/../seeds.txt", sub);
    FILE *fp = fopen(seeds, "w");
    ck_assert_ptr_nonnull(fp);
    fputs(seeds_text, fp);
    fclose(fp);
    ck_assert_int_eq(link(seeds, hard), 0);
    ck_assert_int_eq(symlink(seeds, soft), 0);
    ck_assert_int_eq(mkdir(sub, 0755), 0);
    const char *outs[] = {seeds, hard, soft, dotted};
    for (size_t i = 0; i < 4; i++) {
        const char *args[] = {"crawl", "-q", "-o", outs[i], seeds, NULL};
        assert_refused(args, "sieve crawl: --output: ");
        const char *stats[] = {"crawl", "-q", "--stats", outs[i], hard, NULL};
        assert_refused(stats, "sieve crawl: --stats: ");
    }
    char *left = harness_slurp(seeds);
    ck_assert_str_eq(left, seeds_text);
    free(left);
}
END_TEST

/* ---- output ---- */

START_TEST(dash_output_is_standard_output)
{
    char out[128], cwd_dash[8] = "-";
    path_in_tmp(out, sizeof out, "stdout.txt");
    bool dash_before = access(cwd_dash, F_OK) == 0;
    const char *args[] = {"crawl", "-q", "--delay", "0", "--max-pages", "5", "-o", "-", base, NULL};
    char *log;
    int st = run(args, out, &log);
    ck_assert_msg(st == 0, "exit %d: %s", st, log);
    char *records = harness_slurp(out);
    ck_assert_uint_eq(json_lines(records, "stdout"), 5);
    ck_assert_ptr_nonnull(strstr(records, "{\"url\":\"http://127.0.0.1:"));
    ck_assert_int_eq(access(cwd_dash, F_OK) == 0, dash_before); /* no file named "-" */
    free(records);
    free(log);
}
END_TEST

/* Records carry the body's SHA-1 unless --no-digest leaves it out. */
START_TEST(no_digest_leaves_the_digest_out)
{
    char out[128];
    path_in_tmp(out, sizeof out, "stdout.txt");
    for (int off = 0; off < 2; off++) {
        const char *args[] = {"crawl", "-q",          "--delay",
                              "0",     "--max-pages", "5",
                              "-o",    "-",           off ? "--no-digest" : "-q",
                              base,    NULL};
        char *log;
        int st = run(args, out, &log);
        ck_assert_msg(st == 0, "exit %d: %s", st, log);
        char *records = harness_slurp(out);
        ck_assert_uint_eq(json_lines(records, "stdout"), 5);
        size_t with = 0;
        for (const char *p = records; (p = strstr(p, "\"digest\":\"sha1:")) != NULL; p++)
            with++;
        ck_assert_uint_eq(with, off ? 0 : 5);
        if (off)
            ck_assert_ptr_nonnull(strstr(records, "\"digest\":null"));
        free(records);
        free(log);
    }
}
END_TEST

START_TEST(sighup_reopens_the_output_without_losing_a_line)
{
    char out[128], err[128], first[128], second[128];
    path_in_tmp(out, sizeof out, "records.jsonl");
    path_in_tmp(err, sizeof err, "stderr.txt");
    path_in_tmp(first, sizeof first, "records.jsonl.1");
    path_in_tmp(second, sizeof second, "records.jsonl.2");
    char *argv[] = {
        (char *)sieve_bin, "crawl", "-q", "-w", "1",  "-c", "1", "--host-connections", "1",
        "--delay",         "0.02",  "-o", out,  base, NULL};
    pid_t pid = harness_spawn(argv, NULL, err);
    /* rotate twice, as logrotate would: rename, then SIGHUP */
    wait_for_lines(out, 3);
    ck_assert_int_eq(rename(out, first), 0);
    ck_assert_int_eq(kill(pid, SIGHUP), 0);
    wait_for_lines(out, 3);
    ck_assert_int_eq(rename(out, second), 0);
    ck_assert_int_eq(kill(pid, SIGHUP), 0);
    wait_for_lines(out, 1);
    int st = harness_wait(pid);
    char *log = harness_slurp(err);
    ck_assert_msg(st == 0, "exit %d: %s", st, log);
    ck_assert_ptr_nonnull(strstr(log, "crawl done"));
    const char *parts[] = {first, second, out};
    size_t total = 0;
    char *all = calloc(1, 1);
    for (int i = 0; i < 3; i++) {
        char *text = harness_slurp(parts[i]);
        size_t n = json_lines(text, parts[i]);
        ck_assert_msg(n > 0, "%s is empty", parts[i]);
        total += n;
        all = realloc(all, strlen(all) + strlen(text) + 1);
        strcat(all, text);
        free(text);
    }
    ck_assert_msg((long long)total == summary_pages(log), "%zu lines in the files, %s", total, log);
    /* each URL once: nothing written twice either */
    ck_assert_msg(distinct_urls(all) == total, "a line was written twice");
    free(all);
    free(log);
}
END_TEST

/* A seen-set far too small fills up: 20,000 seeds into a Bloom filter
 * sized for one URL set every bit. The crawl goes on and ends, says so
 * once, and its stats stay JSON (the infinite estimate is null). */
START_TEST(a_full_seen_set_is_said_once_and_the_crawl_ends)
{
    char out[128], stats[128], seeds[128];
    path_in_tmp(out, sizeof out, "records.jsonl");
    path_in_tmp(stats, sizeof stats, "stats.jsonl");
    path_in_tmp(seeds, sizeof seeds, "seeds.txt");
    FILE *fp = fopen(seeds, "w");
    ck_assert_ptr_nonnull(fp);
    for (int i = 0; i < 20000; i++)
        fprintf(fp, "%sp/x%d\n", base, i);
    ck_assert_int_eq(fclose(fp), 0);
    const char *args[] = {"crawl",   "--delay", "0",  "--capacity", "1",   "--max-pages", "1",
                          "--stats", stats,     "-o", out,          seeds, NULL};
    char *log;
    int st = run(args, NULL, &log);
    ck_assert_msg(st == 0, "exit %d: %.500s", st, log);
    const char *full = strstr(log, "warning: seen-set full (capacity 1)");
    ck_assert_msg(full != NULL, "%.500s", log);
    const char *again = strstr(full + strlen("warning: seen-set full"), "seen-set full (capacity");
    ck_assert_msg(again == NULL, "said twice: %.500s", full);
    ck_assert_msg(strstr(log, "seen-set full (every bit set) in ") != NULL, "%.500s", log);
    char *text = harness_slurp(stats);
    json_lines(text, "stats");
    ck_assert_msg(strstr(text, "\"est_count\":null") != NULL, "%.500s", text);
    free(text);
    free(log);
}
END_TEST

START_TEST(stats_are_json_lines_with_the_counters)
{
    char out[128], stats[128];
    path_in_tmp(out, sizeof out, "records.jsonl");
    path_in_tmp(stats, sizeof stats, "stats.jsonl");
    const char *args[] = {
        "crawl",   "-q",   "-w",          "1",   "-c",      "1",   "--host-connections", "1",
        "--delay", "0.01", "--max-pages", "150", "--stats", stats, "--stats-interval",   "0.3",
        "-o",      out,    base,          NULL};
    char *log;
    int st = run(args, NULL, &log);
    ck_assert_msg(st == 0, "exit %d: %s", st, log);
    char *text = harness_slurp(stats);
    size_t n = json_lines(text, "stats");
    ck_assert_msg(n >= 3, "%zu stats lines: %s", n, text);
    /* the last object is the crawl's end: its counts are the records' */
    const char *last = text;
    for (const char *p = text; (p = strchr(p, '\n')) != NULL && p[1] != '\0'; p++)
        last = p + 1;
    ck_assert_int_eq(number_after(last, "fetched"), (long long)count_lines(out));
    ck_assert_int_eq(number_after(last, "fetched"), 150);
    ck_assert_ptr_nonnull(strstr(last, "\"time\":\"20"));
    ck_assert_ptr_nonnull(strstr(last, "\"page_limit_hit\":true"));
    ck_assert_ptr_nonnull(strstr(last, "\"frontier\":{\"pushed\":"));
    /* the outcomes, in the last object and the summary, are the records' */
    char *records = harness_slurp(out);
    const char *outs = strstr(last, "\"outcomes\":{");
    ck_assert_ptr_nonnull(outs);
    const char *summary = strstr(log, "sieve: outcomes:");
    ck_assert_msg(summary != NULL, "%s", log);
    long long total = 0;
    for (int i = 0; i < SIEVE_OUTCOMES; i++) {
        const char *name = sieve_crawl_outcome_name((sieve_crawl_outcome)i);
        char rec[64], said[64];
        snprintf(rec, sizeof rec, "\"outcome\":\"%s\"", name);
        long long k = 0;
        for (const char *p = records; (p = strstr(p, rec)) != NULL; p++)
            k++;
        ck_assert_int_eq(number_after(outs, name), k);
        snprintf(said, sizeof said, " %s %lld", name, k);
        ck_assert_msg(k == 0 || strstr(summary, said) != NULL, "%s: %s", said, summary);
        total += k;
    }
    ck_assert_int_eq(total, 150);
    free(records);
    /* what ran: -w 1 -c 1 */
    ck_assert_int_eq(number_after(last, "workers"), 1);
    ck_assert_int_eq(number_after(last, "concurrency"), 1);
    ck_assert_msg(strstr(log, "sieve: transfers: 1 workers x 1 at most") != NULL, "%s", log);
    /* and the counts grow from one object to the next */
    long long prev = -1;
    for (const char *p = text; *p != '\0'; p = strchr(p, '\n') + 1) {
        long long f = number_after(p, "fetched");
        ck_assert_int_ge(f, prev);
        prev = f;
    }
    free(text);
    free(log);
}
END_TEST

/* ---- exit statuses ---- */

START_TEST(a_seed_that_refuses_connections_exits_3)
{
    /* a port that was just free: sieve-web found it, and has stopped */
    const char *extra[] = {"--pages", "1", NULL};
    unsigned port;
    harness_web_stop(harness_web_start(tmpdir, "127.0.0.1", extra, &port));
    char url[64], out[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/", port);
    path_in_tmp(out, sizeof out, "records.jsonl");
    const char *args[] = {"crawl", "-q", "--connect-timeout", "5", "-o", out, url, NULL};
    char *log;
    int st = run(args, NULL, &log);
    ck_assert_msg(st == 3, "exit %d: %s", st, log);
    ck_assert_ptr_nonnull(strstr(log, "no seed could be fetched"));
    char *records = harness_slurp(out);
    ck_assert_uint_ge(json_lines(records, "records"), 1);
    ck_assert_ptr_null(strstr(records, "\"error\":null"));
    /* robots.txt could not be had, so the seed was not fetched */
    ck_assert_ptr_nonnull(strstr(records, "\"outcome\":\"robots\""));
    const char *files[] = {out};
    harness_check_records(files, 1);
    free(records);
    free(log);
}
END_TEST

START_TEST(an_output_that_cannot_be_written_exits_4)
{
    const char *records[] = {"crawl", "-q", "--delay",   "0",  "--max-pages",
                             "50",    "-o", "/dev/full", base, NULL};
    const char *stats[] = {"crawl", "-q",        "--delay", "0",         "--max-pages", "50",
                           "-o",    "/dev/null", "--stats", "/dev/full", base,          NULL};
    const char *const *cases[] = {records, stats};
    for (size_t i = 0; i < 2; i++) {
        char *log;
        int st = run(cases[i], NULL, &log);
        ck_assert_msg(st == 4, "case %zu: exit %d: %s", i, st, log);
        ck_assert_msg(strstr(log, "/dev/full: write error: ") != NULL, "case %zu: %s", i, log);
        ck_assert_msg(strstr(log, "crawl done") == NULL, "case %zu: %s", i, log);
        free(log);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cmd");
    TCase *args = tcase_create("arguments");
    tcase_add_checked_fixture(args, make_tmpdir, remove_tmpdir);
    tcase_add_test(args, option_errors_name_the_option);
    tcase_add_test(args, values_with_line_breaks_are_refused);
    tcase_add_test(args, an_output_that_is_a_seed_file_is_refused);
    tcase_add_test(args, a_seed_that_refuses_connections_exits_3);
    suite_add_tcase(s, args);
    TCase *out = tcase_create("output");
    tcase_add_checked_fixture(out, start_web, stop_web);
    tcase_add_test(out, dash_output_is_standard_output);
    tcase_add_test(out, no_digest_leaves_the_digest_out);
    tcase_add_test(out, sighup_reopens_the_output_without_losing_a_line);
    tcase_add_test(out, stats_are_json_lines_with_the_counters);
    tcase_add_test(out, a_full_seen_set_is_said_once_and_the_crawl_ends);
    tcase_add_test(out, an_output_that_cannot_be_written_exits_4);
    suite_add_tcase(s, out);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
