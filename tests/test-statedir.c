/* test-statedir.c - the state directory: one owner at a time, in this
 * process or another, the refusal naming the owner's pid; checked files
 * read back exactly as written, and a file cut short, altered anywhere, of
 * another kind or version is refused with what to do, never returned. */
#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "statedir.h"

#define HEADER 32

static char root[64];

static void make_root(void)
{
    strcpy(root, "/tmp/sieve-statedir-XXXXXX");
    if (mkdtemp(root) == NULL)
        abort();
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    return remove(path);
}

static void remove_root(void)
{
    nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static const char *at(const char *name)
{
    static char bufs[4][256];
    static int next;
    char *b = bufs[next++ % 4];
    snprintf(b, 256, "%s/%s", root, name);
    return b;
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    rewind(f);
    unsigned char *data = malloc(*len + 1);
    ck_assert_ptr_nonnull(data);
    ck_assert_uint_eq(fread(data, 1, *len, f), *len);
    fclose(f);
    return data;
}

static void spill(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, len, f), len);
    ck_assert_int_eq(fclose(f), 0);
}

static statedir *lock_ok(const char *dir)
{
    statedir *sd = NULL;
    char msg[512];
    int rc = statedir_lock(&sd, dir, msg, sizeof msg);
    ck_assert_msg(rc == SIEVE_OK, "%s: %s", sieve_strerror(rc), msg);
    return sd;
}

static void expect_in_use(const char *dir, long pid)
{
    statedir *sd = NULL;
    char msg[512], want[512];
    ck_assert_int_eq(statedir_lock(&sd, dir, msg, sizeof msg), SIEVE_ESTATE);
    ck_assert_ptr_null(sd);
    snprintf(want, sizeof want, "%s is in use by process %ld", dir, pid);
    ck_assert_str_eq(msg, want);
}

/* ---- the lock ---- */

START_TEST(lock_creates_the_directory_and_names_its_holder)
{
    const char *dir = at("state");
    statedir *sd = lock_ok(dir);
    ck_assert_str_eq(statedir_path(sd), dir);
    char lockfile[300];
    snprintf(lockfile, sizeof lockfile, "%s/LOCK", dir);
    size_t len;
    char *pid = (char *)slurp(lockfile, &len);
    pid[len] = '\0';
    ck_assert_int_eq(atol(pid), (long)getpid());
    free(pid);

    /* A second lock in this process is refused like one in another. */
    expect_in_use(dir, (long)getpid());
    statedir_unlock(sd);
    char *after = (char *)slurp(lockfile, &len);
    ck_assert_uint_eq(len, 0);
    free(after);
    sd = lock_ok(dir);
    statedir_unlock(sd);

    /* A path under a missing parent is an error, not a refusal. */
    char msg[512];
    ck_assert_int_eq(statedir_lock(&sd, at("no/such/dir"), msg, sizeof msg), SIEVE_EIO);
    ck_assert_int_eq(errno, ENOENT);
    ck_assert_ptr_nonnull(strstr(msg, "no/such/dir"));
}
END_TEST

START_TEST(lock_is_refused_to_a_child_process)
{
    const char *dir = at("parent-holds");
    statedir *sd = lock_ok(dir);
    long parent = (long)getpid();
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        statedir *other = NULL;
        char msg[512], want[512];
        snprintf(want, sizeof want, "%s is in use by process %ld", dir, parent);
        int rc = statedir_lock(&other, dir, msg, sizeof msg);
        _exit(rc == SIEVE_ESTATE && strcmp(msg, want) == 0 ? 0 : 1);
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* The child's attempt took nothing from the holder. */
    expect_in_use(dir, parent);
    statedir_unlock(sd);
}
END_TEST

START_TEST(lock_held_by_a_child_is_released_when_it_dies)
{
    const char *dir = at("child-holds");
    int ready[2];
    ck_assert_int_eq(pipe(ready), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        statedir *sd = NULL;
        if (statedir_lock(&sd, dir, NULL, 0) != SIEVE_OK)
            _exit(1);
        if (write(ready[1], "k", 1) != 1)
            _exit(2);
        pause(); /* until killed: the lock must go with the process */
        _exit(3);
    }
    close(ready[1]);
    char c;
    ck_assert_int_eq(read(ready[0], &c, 1), 1);
    close(ready[0]);
    expect_in_use(dir, (long)pid);
    ck_assert_int_eq(kill(pid, SIGKILL), 0);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFSIGNALED(status));
    statedir *sd = lock_ok(dir);
    statedir_unlock(sd);
}
END_TEST

/* ---- files ---- */

static void write_ok(statedir *sd, const char *name, const char *kind, uint32_t version,
                     const void *data, size_t len)
{
    int rc = statedir_write(sd, name, kind, version, data, len);
    ck_assert_msg(rc == SIEVE_OK, "%s: %s", sieve_strerror(rc), statedir_message(sd));
}

static void expect_content(statedir *sd, const char *name, const char *kind, uint32_t version,
                           const void *want, size_t want_len)
{
    void *data = NULL;
    size_t len = 0;
    int rc = statedir_read(sd, name, kind, version, &data, &len);
    ck_assert_msg(rc == SIEVE_OK, "%s: %s", sieve_strerror(rc), statedir_message(sd));
    ck_assert_uint_eq(len, want_len);
    ck_assert_mem_eq(data, want, len);
    ck_assert_uint_eq(((unsigned char *)data)[len], 0);
    free(data);
}

/* Reads a file that must be refused: returns the status, and checks the
 * message names the file and says what to do. */
static int refused(statedir *sd, const char *name, const char *kind, uint32_t version)
{
    void *data = (void *)1;
    size_t len = 7;
    int rc = statedir_read(sd, name, kind, version, &data, &len);
    ck_assert_msg(rc < 0, "%s read back", name);
    ck_assert_ptr_null(data);
    ck_assert_uint_eq(len, 0);
    char file[300], advice[400];
    snprintf(file, sizeof file, "%s/%s", statedir_path(sd), name);
    snprintf(advice, sizeof advice, "remove %s to start over, or restore it from a backup",
             statedir_path(sd));
    ck_assert_msg(strstr(statedir_message(sd), file) != NULL, "message: %s", statedir_message(sd));
    ck_assert_msg(strstr(statedir_message(sd), advice) != NULL, "message: %s",
                  statedir_message(sd));
    return rc;
}

static size_t fill(unsigned char *buf, size_t len, unsigned seed)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = (unsigned char)(i * 2654435761u >> 11 ^ seed);
    return len;
}

START_TEST(files_round_trip_and_replace)
{
    static unsigned char buf[200000];
    statedir *sd = lock_ok(at("files"));
    size_t sizes[] = {0, 1, 31, 32, 1000, sizeof buf};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        fill(buf, sizes[i], (unsigned)i);
        write_ok(sd, "checkpoint", "SIEVECP", 3, buf, sizes[i]);
        expect_content(sd, "checkpoint", "SIEVECP", 3, buf, sizes[i]);
        ck_assert_int_eq(access(at("files/checkpoint.tmp"), F_OK), -1);
    }
    write_ok(sd, "STATE", NULL, 1, "generic", 7);
    expect_content(sd, "STATE", STATEDIR_KIND_GENERIC, 1, "generic", 7);
    size_t len;
    unsigned char *raw = slurp(at("files/STATE"), &len);
    ck_assert_uint_eq(len, HEADER + 7);
    ck_assert_mem_eq(raw, "SIEVEST", 8);
    free(raw);

    /* A temporary file left by a crash changes nothing and is replaced. */
    spill(at("files/STATE.tmp"), "half", 4);
    expect_content(sd, "STATE", NULL, 1, "generic", 7);
    write_ok(sd, "STATE", NULL, 1, "again", 5);
    expect_content(sd, "STATE", NULL, 1, "again", 5);
    ck_assert_int_eq(access(at("files/STATE.tmp"), F_OK), -1);

    void *data;
    ck_assert_int_eq(statedir_read(sd, "absent", NULL, 1, &data, &len), SIEVE_EIO);
    ck_assert_int_eq(errno, ENOENT);
    const char *bad[] = {"", "LOCK", "a/b", ".", "..", "x.tmp"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ck_assert_int_eq(statedir_write(sd, bad[i], NULL, 1, "x", 1), SIEVE_EINVAL);
        ck_assert_int_eq(statedir_read(sd, bad[i], NULL, 1, &data, &len), SIEVE_EINVAL);
    }
    ck_assert_int_eq(statedir_write(sd, "k", "SHORT", 1, "x", 1), SIEVE_EINVAL);
    ck_assert_int_eq(statedir_write(sd, "k", "TOOLONGX", 1, "x", 1), SIEVE_EINVAL);
    statedir_unlock(sd);
}
END_TEST

START_TEST(cut_files_are_refused)
{
    unsigned char buf[300];
    statedir *sd = lock_ok(at("cut"));
    write_ok(sd, "ckpt", "SIEVECP", 1, buf, fill(buf, sizeof buf, 5));
    size_t len;
    unsigned char *raw = slurp(at("cut/ckpt"), &len);
    for (size_t cut = 0; cut < len; cut++) {
        spill(at("cut/ckpt"), raw, cut);
        ck_assert_int_eq(refused(sd, "ckpt", "SIEVECP", 1), SIEVE_ETRUNCATED);
    }
    /* Bytes after the data are no file this writer made. */
    unsigned char *longer = malloc(len + 1);
    memcpy(longer, raw, len);
    longer[len] = 0;
    spill(at("cut/ckpt"), longer, len + 1);
    ck_assert_int_eq(refused(sd, "ckpt", "SIEVECP", 1), SIEVE_EFORMAT);
    free(longer);
    free(raw);
    statedir_unlock(sd);
}
END_TEST

START_TEST(every_bit_flip_is_refused)
{
    unsigned char buf[100];
    statedir *sd = lock_ok(at("flip"));
    write_ok(sd, "ckpt", "SIEVECP", 2, buf, fill(buf, sizeof buf, 9));
    size_t len;
    unsigned char *raw = slurp(at("flip/ckpt"), &len);
    for (size_t bit = 0; bit < 8 * len; bit++) {
        raw[bit / 8] ^= (unsigned char)(1u << bit % 8);
        spill(at("flip/ckpt"), raw, len);
        int rc = refused(sd, "ckpt", "SIEVECP", 2);
        raw[bit / 8] ^= (unsigned char)(1u << bit % 8);
        size_t byte = bit / 8;
        if (byte < 8) /* the kind */
            ck_assert_int_eq(rc, SIEVE_EFORMAT);
        else if (byte < 12) /* the header's own version */
            ck_assert_int_eq(rc, SIEVE_EVERSION);
        else if (byte >= 16 && byte < 24) /* the length */
            ck_assert(rc == SIEVE_ETRUNCATED || rc == SIEVE_EFORMAT);
        else /* the data's version, the checksum, the data */
            ck_assert_int_eq(rc, SIEVE_ECHECKSUM);
    }
    spill(at("flip/ckpt"), raw, len);
    expect_content(sd, "ckpt", "SIEVECP", 2, buf, sizeof buf);
    free(raw);
    statedir_unlock(sd);
}
END_TEST

START_TEST(other_kinds_and_versions_are_refused)
{
    statedir *sd = lock_ok(at("kinds"));
    write_ok(sd, "ckpt", "SIEVECP", 2, "data", 4);
    ck_assert_int_eq(refused(sd, "ckpt", "SIEVEXX", 2), SIEVE_EFORMAT);
    ck_assert_ptr_nonnull(strstr(statedir_message(sd), "not a SIEVEXX file"));
    ck_assert_int_eq(refused(sd, "ckpt", NULL, 2), SIEVE_EFORMAT);
    ck_assert_int_eq(refused(sd, "ckpt", "SIEVECP", 3), SIEVE_EVERSION);
    ck_assert_ptr_nonnull(strstr(statedir_message(sd), "format version 2, this build reads 3"));
    spill(at("kinds/text"), "just some text that is long enough for a header\n", 49);
    ck_assert_int_eq(refused(sd, "text", "SIEVECP", 2), SIEVE_EFORMAT);
    ck_assert_int_eq(mkdir(at("kinds/dir"), 0777), 0);
    ck_assert_int_eq(refused(sd, "dir", "SIEVECP", 2), SIEVE_EFORMAT);
    expect_content(sd, "ckpt", "SIEVECP", 2, "data", 4);
    statedir_unlock(sd);
}
END_TEST

/* A write the file system refuses (RLIMIT_FSIZE standing for a full disk)
 * leaves the old file whole and no temporary file. */
START_TEST(a_failed_write_keeps_the_old_file)
{
    static unsigned char buf[20000];
    statedir *sd = lock_ok(at("full"));
    write_ok(sd, "ckpt", "SIEVECP", 1, "old", 3);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl;
        getrlimit(RLIMIT_FSIZE, &rl);
        rl.rlim_cur = 10000;
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
            _exit(1);
        int rc = statedir_write(sd, "ckpt", "SIEVECP", 1, buf, fill(buf, sizeof buf, 1));
        if (rc != SIEVE_EIO || errno != EFBIG)
            _exit(2);
        _exit(strstr(statedir_message(sd), "File too large") != NULL ? 0 : 3);
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: step %d",
                  WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    expect_content(sd, "ckpt", "SIEVECP", 1, "old", 3);
    ck_assert_int_eq(access(at("full/ckpt.tmp"), F_OK), -1);
    statedir_unlock(sd);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("statedir");
    TCase *tc = tcase_create("core");
    tcase_add_unchecked_fixture(tc, make_root, remove_root);
    tcase_add_test(tc, lock_creates_the_directory_and_names_its_holder);
    tcase_add_test(tc, lock_is_refused_to_a_child_process);
    tcase_add_test(tc, lock_held_by_a_child_is_released_when_it_dies);
    tcase_add_test(tc, files_round_trip_and_replace);
    tcase_add_test(tc, cut_files_are_refused);
    tcase_add_test(tc, every_bit_flip_is_refused);
    tcase_add_test(tc, other_kinds_and_versions_are_refused);
    tcase_add_test(tc, a_failed_write_keeps_the_old_file);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
