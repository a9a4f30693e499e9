/* test-seeds.c - the seed lists of `sieve crawl` (src/cmd/seeds.c): every
 * bad line reported with its file and line and skipped, the lines after
 * it still read; long lines and NUL bytes; files that are not regular or
 * too large refused without being read; the adder's status named.
 *
 * The adder here stands in for sieve_crawler_add_seed(): it accepts
 * http:// and https:// URLs, answers SIEVE_SEEN for a repeat, and a few
 * marked URLs get an error status. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "seeds.h"
#include "sieve/status.h"

typedef struct added {
    char *urls[64];
    size_t n;
} added;

static int fake_add(void *ctx, const char *url, size_t len)
{
    added *a = ctx;
    char *s = strndup(url, len);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(strlen(s), len); /* the seeds hold no NUL */
    int rc = SIEVE_OK;
    if (strcmp(s, "http://nomem/") == 0)
        rc = SIEVE_ENOMEM;
    else if (strcmp(s, "http://toolong/") == 0)
        rc = SIEVE_ETOOLONG;
    else if (strncmp(s, "http://", 7) != 0 && strncmp(s, "https://", 8) != 0)
        rc = SIEVE_ESCHEME;
    for (size_t i = 0; rc == SIEVE_OK && i < a->n; i++)
        if (strcmp(a->urls[i], s) == 0)
            rc = SIEVE_SEEN;
    if (rc == SIEVE_OK) {
        ck_assert_uint_lt(a->n, 64);
        a->urls[a->n++] = s;
        return rc;
    }
    free(s);
    return rc;
}

static void added_free(added *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->urls[i]);
}

static char dir[64];

static void setup(void)
{
    strcpy(dir, "/tmp/sieve-seeds-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* Writes len bytes into dir/name; returns the path (static buffer). */
static const char *write_file(const char *name, const char *data, size_t len)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *fp = fopen(path, "wb");
    ck_assert_ptr_nonnull(fp);
    ck_assert_uint_eq(fwrite(data, 1, len, fp), len);
    ck_assert_int_eq(fclose(fp), 0);
    return path;
}

/* Loads the seeds of args; *log gets what was reported. */
static long load(const char *const *args, size_t n, added *a, char **log)
{
    size_t loglen;
    FILE *err = open_memstream(log, &loglen);
    ck_assert_ptr_nonnull(err);
    long rc = seeds_load(args, n, fake_add, a, err);
    fclose(err);
    return rc;
}

static void assert_has(const char *log, const char *what)
{
    ck_assert_msg(strstr(log, what) != NULL, "'%s' not in: %s", what, log);
}

START_TEST(bad_lines_are_reported_and_the_rest_read)
{
    static const char text[] = "# seeds\n"
                               "\n"
                               "http://a.example/\n"
                               "not a url\n"
                               "  http://b.example/  \r\n"
                               "mailto:x@example.org\n"
                               "http://a.example/\n"
                               "\t# indented comment\n"
                               "https://c.example/x";
    const char *path = write_file("seeds.txt", text, sizeof text - 1);
    const char *args[] = {path};
    added a = {0};
    char *log;
    ck_assert_int_eq(load(args, 1, &a, &log), 3);
    ck_assert_uint_eq(a.n, 3);
    ck_assert_str_eq(a.urls[0], "http://a.example/");
    ck_assert_str_eq(a.urls[1], "http://b.example/");   /* spaces and CR removed */
    ck_assert_str_eq(a.urls[2], "https://c.example/x"); /* last line without newline */
    char where[160];
    snprintf(where, sizeof where, "sieve crawl: %s:4: skipped: %s", path,
             sieve_strerror(SIEVE_ESCHEME));
    assert_has(log, where);
    snprintf(where, sizeof where, "%s:6: skipped: ", path);
    assert_has(log, where);
    snprintf(where, sizeof where,
             "%s:7: skipped: already seen (an earlier seed, or a Bloom filter false positive)",
             path);
    assert_has(log, where);
    ck_assert_ptr_null(strstr(log, ":1:"));
    ck_assert_ptr_null(strstr(log, ":8:"));
    free(log);
    added_free(&a);
}
END_TEST

START_TEST(a_nul_byte_spoils_its_line_only)
{
    static const char text[] = "http://a.example/\n"
                               "http://x.example/\0tail\n"
                               "http://b.example/\n"
                               "bad\n";
    const char *path = write_file("nul.txt", text, sizeof text - 1);
    const char *args[] = {path};
    added a = {0};
    char *log;
    ck_assert_int_eq(load(args, 1, &a, &log), 2);
    ck_assert_str_eq(a.urls[0], "http://a.example/");
    ck_assert_str_eq(a.urls[1], "http://b.example/");
    char where[160];
    snprintf(where, sizeof where, "%s:2: skipped: a NUL byte in the line", path);
    assert_has(log, where);
    snprintf(where, sizeof where, "%s:4: skipped: ", path); /* the numbering goes on */
    assert_has(log, where);
    free(log);
    added_free(&a);
}
END_TEST

START_TEST(long_lines_are_reported_with_the_limit)
{
    size_t n = SEED_LINE_MAX + 1 + 1 + SEED_LINE_MAX + 1 + 20;
    char *text = malloc(n);
    ck_assert_ptr_nonnull(text);
    /* line 1: one byte too long; line 2: exactly the limit; line 3: short */
    size_t at = 0;
    memcpy(text, "http://", 7);
    memset(text + 7, 'a', SEED_LINE_MAX + 1 - 7);
    at = SEED_LINE_MAX + 1;
    text[at++] = '\n';
    memcpy(text + at, "http://", 7);
    memset(text + at + 7, 'b', SEED_LINE_MAX - 7);
    at += SEED_LINE_MAX;
    text[at++] = '\n';
    memcpy(text + at, "http://c.example/\n", 18);
    at += 18;
    const char *path = write_file("long.txt", text, at);
    free(text);
    const char *args[] = {path};
    added a = {0};
    char *log;
    ck_assert_int_eq(load(args, 1, &a, &log), 2);
    ck_assert_uint_eq(a.n, 2);
    ck_assert_uint_eq(strlen(a.urls[0]), SEED_LINE_MAX);
    ck_assert_int_eq(a.urls[0][7], 'b');
    ck_assert_str_eq(a.urls[1], "http://c.example/");
    char where[200];
    snprintf(where, sizeof where, "%s:1: skipped: line longer than %d bytes", path, SEED_LINE_MAX);
    assert_has(log, where);
    snprintf(where, sizeof where, "%s:2:", path);
    ck_assert_msg(strstr(log, where) == NULL, "%s", log);
    free(log);
    added_free(&a);
}
END_TEST

START_TEST(files_that_are_not_regular_are_refused_unread)
{
    char fifo[128];
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    const char *cases[] = {"/dev/zero", dir, fifo};
    const char *why[] = {"not a regular file", "a directory", "not a regular file"};
    for (size_t i = 0; i < 3; i++) {
        added a = {0};
        char *log;
        ck_assert_int_eq(load(&cases[i], 1, &a, &log), SEEDS_EARGS);
        ck_assert_uint_eq(a.n, 0);
        assert_has(log, cases[i]);
        assert_has(log, why[i]);
        free(log);
    }
}
END_TEST

START_TEST(files_too_large_are_refused)
{
    char path[128];
    snprintf(path, sizeof path, "%s/huge", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(ftruncate(fd, (off_t)SEED_FILE_MAX + 1), 0); /* sparse */
    close(fd);
    const char *args[] = {path};
    added a = {0};
    char *log;
    ck_assert_int_eq(load(args, 1, &a, &log), SEEDS_EARGS);
    assert_has(log, "larger than a seed file may be (1 GiB)");
    free(log);
    /* at the limit it is read (its NUL bytes make one bad line) */
    fd = open(path, O_WRONLY | O_TRUNC);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(ftruncate(fd, 4096), 0);
    close(fd);
    ck_assert_int_eq(load(args, 1, &a, &log), 0);
    assert_has(log, ":1: skipped: a NUL byte in the line");
    free(log);
}
END_TEST

START_TEST(missing_files_and_url_arguments)
{
    char missing[128];
    snprintf(missing, sizeof missing, "%s/none.txt", dir);
    const char *args[] = {"http://a.example/", "ftp://b.example/", "http://toolong/", missing};
    added a = {0};
    char *log;
    ck_assert_int_eq(load(args, 4, &a, &log), SEEDS_EARGS);
    ck_assert_uint_eq(a.n, 1);
    assert_has(log, "seed 'ftp://b.example/': skipped: ");
    char want[200];
    snprintf(want, sizeof want, "seed 'http://toolong/': skipped: %s",
             sieve_strerror(SIEVE_ETOOLONG));
    assert_has(log, want);
    snprintf(want, sizeof want, "%s: %s", missing, strerror(ENOENT));
    assert_has(log, want);
    free(log);
    added_free(&a);
    /* URLs alone: the count */
    added b = {0};
    ck_assert_int_eq(load(args, 3, &b, &log), 1);
    free(log);
    added_free(&b);
}
END_TEST

START_TEST(an_error_of_the_crawler_stops_the_load)
{
    static const char text[] = "http://a.example/\nhttp://nomem/\nhttp://b.example/\n";
    const char *path = write_file("nomem.txt", text, sizeof text - 1);
    const char *args[] = {path};
    added a = {0};
    char *log;
    ck_assert_int_eq(load(args, 1, &a, &log), SEEDS_EFATAL);
    ck_assert_uint_eq(a.n, 1);
    assert_has(log, sieve_strerror(SIEVE_ENOMEM));
    free(log);
    added_free(&a);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("seeds");
    TCase *tc = tcase_create("seeds");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, bad_lines_are_reported_and_the_rest_read);
    tcase_add_test(tc, a_nul_byte_spoils_its_line_only);
    tcase_add_test(tc, long_lines_are_reported_with_the_limit);
    tcase_add_test(tc, files_that_are_not_regular_are_refused_unread);
    tcase_add_test(tc, files_too_large_are_refused);
    tcase_add_test(tc, missing_files_and_url_arguments);
    tcase_add_test(tc, an_error_of_the_crawler_stops_the_load);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
