/* test-io.c - whole reads and writes (src/lib/io.c): interrupted and
 * short calls are carried on to the last byte, the end of a file is told
 * from an error, and a write that fails part way says how much it wrote,
 * which the journal needs to cut a torn record back. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <unistd.h>

#include "io.h"
#include "sieve/status.h"

/* Both threads take signals: a lock-free atomic counts them. */
static atomic_int alarms;

static void on_alarm(int sig)
{
    int e = errno;
    (void)sig;
    atomic_fetch_add(&alarms, 1);
    errno = e;
}

/* A timer that interrupts blocked reads and writes: no SA_RESTART, so
 * they return EINTR, or a short count when some bytes had moved. */
static void start_interrupting(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigemptyset(&sa.sa_mask);
    ck_assert_int_eq(sigaction(SIGALRM, &sa, NULL), 0);
    struct itimerval t = {{0, 100}, {0, 100}};
    ck_assert_int_eq(setitimer(ITIMER_REAL, &t, NULL), 0);
}

static void stop_interrupting(void)
{
    struct itimerval t;
    memset(&t, 0, sizeof t);
    setitimer(ITIMER_REAL, &t, NULL);
    signal(SIGALRM, SIG_IGN);
}

static unsigned char *pattern(size_t n, unsigned seed)
{
    unsigned char *p = malloc(n);
    ck_assert_ptr_nonnull(p);
    uint32_t x = seed;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        p[i] = (unsigned char)(x >> 16);
    }
    return p;
}

#define PIPE_BYTES (8u << 20)
#define PIECE      (4096u + 17u) /* not a multiple of the pipe's pages */

/* One side of the pipe: whole, or in pieces with a pause after each; with
 * SIGALRM blocked in it or not, so that the timer's signals go to the
 * other thread. */
struct side {
    int fd;
    unsigned char *data;
    bool pieces, deaf;
    int rc;
};

static void *write_side(void *arg)
{
    struct side *w = arg;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGALRM);
    pthread_sigmask(w->deaf ? SIG_BLOCK : SIG_UNBLOCK, &set, NULL);
    w->rc = SIEVE_OK;
    for (size_t at = 0; at < PIPE_BYTES && w->rc == SIEVE_OK;) {
        size_t n = !w->pieces ? PIPE_BYTES : PIPE_BYTES - at < PIECE ? PIPE_BYTES - at : PIECE;
        w->rc = io_write_all(w->fd, w->data + at, n);
        at += n;
        if (w->pieces)
            usleep(20);
    }
    close(w->fd);
    return NULL;
}

static int read_side(struct side *r)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGALRM);
    pthread_sigmask(r->deaf ? SIG_BLOCK : SIG_UNBLOCK, &set, NULL);
    for (size_t at = 0; at < PIPE_BYTES;) {
        size_t n = !r->pieces ? PIPE_BYTES : PIPE_BYTES - at < PIECE ? PIPE_BYTES - at : PIECE;
        int rc = io_read_all(r->fd, r->data + at, n);
        if (rc != SIEVE_OK)
            return rc;
        at += n;
        if (r->pieces)
            usleep(20);
    }
    return SIEVE_OK;
}

/* A pipe holds 64 KiB. The side the timer's signals go to asks for all
 * that is left in one call, and the other side, slowed down, moves the
 * bytes a piece at a time, so that the signals find the first blocked
 * both after some bytes of a call have moved (a short count) and before
 * any have (EINTR). */
static void round_trip(bool interrupt_writer)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    unsigned char *data = pattern(PIPE_BYTES, 7);
    unsigned char *got = malloc(PIPE_BYTES);
    ck_assert_ptr_nonnull(got);
    struct side w = {fds[1], data, !interrupt_writer, !interrupt_writer, -1};
    struct side r = {fds[0], got, interrupt_writer, interrupt_writer, -1};
    atomic_store(&alarms, 0);
    start_interrupting();
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, write_side, &w), 0);
    int rc = read_side(&r);
    if (rc != SIEVE_OK) { /* let a blocked writer go before failing */
        signal(SIGPIPE, SIG_IGN);
        close(fds[0]);
    }
    pthread_join(t, NULL);
    stop_interrupting();
    ck_assert_int_eq(rc, SIEVE_OK);
    ck_assert_int_eq(w.rc, SIEVE_OK);
    ck_assert_int_eq(memcmp(got, data, PIPE_BYTES), 0);
    /* the writer closed its end: the next read finds the end, not an error */
    unsigned char one;
    ck_assert_int_eq(io_read_all(fds[0], &one, 1), SIEVE_ETRUNCATED);
    /* the timer did break in, or the test proved nothing */
    ck_assert_int_gt(atomic_load(&alarms), 10);
    close(fds[0]);
    free(data);
    free(got);
}

START_TEST(pipe_round_trip_interrupting_the_writer)
{
    round_trip(true);
}
END_TEST

START_TEST(pipe_round_trip_interrupting_the_reader)
{
    round_trip(false);
}
END_TEST

static int temp_file(char *path)
{
    strcpy(path, "/tmp/sieve-io-XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    return fd;
}

START_TEST(pread_is_short_only_at_the_end)
{
    char path[32];
    int fd = temp_file(path);
    unsigned char *data = pattern(10000, 3);
    ck_assert_int_eq(io_pwrite_all(fd, data, 10000, 0), SIEVE_OK);
    unsigned char buf[4096];
    ck_assert_int_eq(io_pread(fd, buf, sizeof buf, 8000), 2000);
    ck_assert_int_eq(memcmp(buf, data + 8000, 2000), 0);
    ck_assert_int_eq(io_pread_all(fd, buf, sizeof buf, 8000), SIEVE_ETRUNCATED);
    ck_assert_int_eq(io_pread_all(fd, buf, 2000, 8000), SIEVE_OK);
    ck_assert_int_eq(memcmp(buf, data + 8000, 2000), 0);
    ck_assert_int_eq(io_pread(fd, buf, sizeof buf, 10000), 0);
    errno = 0;
    ck_assert_int_eq(io_pread(fd, buf, sizeof buf, UINT64_MAX), -1);
    ck_assert_int_eq(errno, EINVAL);
    /* io_read_all() reads from the file's position */
    ck_assert_int_eq(lseek(fd, 9000, SEEK_SET), 9000);
    ck_assert_int_eq(io_read_all(fd, buf, 1000), SIEVE_OK);
    ck_assert_int_eq(memcmp(buf, data + 9000, 1000), 0);
    ck_assert_int_eq(io_read_all(fd, buf, 1), SIEVE_ETRUNCATED);
    close(fd);
    unlink(path);
    free(data);
}
END_TEST

/* A file size limit stops a write part way, as a full disk does: the
 * count says where the file ends, and the error is kept in errno. */
START_TEST(a_write_cut_short_says_how_far_it_got)
{
    char path[32];
    int fd = temp_file(path);
    unsigned char *data = pattern(8000, 5);
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit old, lim;
    ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
    lim = old;
    lim.rlim_cur = 5000;
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);

    errno = 0;
    ck_assert_uint_eq(io_pwrite(fd, data, 8000, 0), 5000);
    ck_assert_int_eq(errno, EFBIG);
    errno = 0;
    ck_assert_int_eq(io_pwrite_all(fd, data, 100, 4950), SIEVE_EIO);
    ck_assert_int_eq(errno, EFBIG);
    ck_assert_int_eq(lseek(fd, 4000, SEEK_SET), 4000);
    errno = 0;
    ck_assert_int_eq(io_write_all(fd, data, 2000), SIEVE_EIO);
    ck_assert_int_eq(errno, EFBIG);

    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
    unsigned char back[5000];
    ck_assert_int_eq(io_pread_all(fd, back, 5000, 0), SIEVE_OK);
    ck_assert_int_eq(memcmp(back, data, 4000), 0);
    ck_assert_int_eq(memcmp(back + 4000, data, 1000), 0);
    close(fd);
    unlink(path);
    free(data);
}
END_TEST

START_TEST(errors_come_back_with_errno)
{
    char path[32];
    int fd = temp_file(path);
    close(fd);
    fd = open(path, O_RDONLY);
    ck_assert_int_ge(fd, 0);
    unsigned char b[16] = {0};
    errno = 0;
    ck_assert_uint_eq(io_pwrite(fd, b, sizeof b, 0), 0);
    ck_assert_int_eq(errno, EBADF);
    errno = 0;
    ck_assert_int_eq(io_write_all(fd, b, sizeof b), SIEVE_EIO);
    ck_assert_int_eq(errno, EBADF);
    close(fd);
    fd = open(path, O_WRONLY);
    ck_assert_int_ge(fd, 0);
    errno = 0;
    ck_assert_int_eq(io_read_all(fd, b, sizeof b), SIEVE_EIO);
    ck_assert_int_eq(errno, EBADF);
    errno = 0;
    ck_assert_int_eq(io_pread(fd, b, sizeof b, 0), -1);
    ck_assert_int_eq(errno, EBADF);
    ck_assert_int_eq(io_pread_all(fd, b, sizeof b, 0), SIEVE_EIO);
    /* nothing asked, nothing done, whatever the descriptor */
    ck_assert_int_eq(io_write_all(-1, b, 0), SIEVE_OK);
    ck_assert_int_eq(io_read_all(-1, b, 0), SIEVE_OK);
    ck_assert_uint_eq(io_pwrite(-1, b, 0, 0), 0);
    close(fd);
    unlink(path);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("io");
    TCase *tc = tcase_create("io");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, pipe_round_trip_interrupting_the_writer);
    tcase_add_test(tc, pipe_round_trip_interrupting_the_reader);
    tcase_add_test(tc, pread_is_short_only_at_the_end);
    tcase_add_test(tc, a_write_cut_short_says_how_far_it_got);
    tcase_add_test(tc, errors_come_back_with_errno);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
