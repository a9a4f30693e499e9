/* statedir.c - the state directory's lock and its checked small files.
 *
 * The lock is flock(2) on DIR/LOCK: held by an open file description, so
 * it goes with the process however it ends, and a second statedir_lock()
 * in the same process is refused like one in another. The file is never
 * removed (removing it would let two processes lock two different files
 * of one name); its content is only the holder's pid, for the message a
 * refused process prints. The holder writes it after taking the lock, so
 * a process refused in that instant may find it empty.
 *
 * A file is a 32-byte header and the data, integers little-endian:
 *
 *     off size field
 *       0    8 kind: 7 characters and a NUL ("SIEVEST" by default)
 *       8    4 header format version (1)
 *      12    4 the data's format version, the caller's
 *      16    8 data length
 *      24    8 XXH3-64 of bytes 0..23, then of the data
 *      32    . data
 *
 * Reading trusts nothing: the kind and the header version come first (a
 * file of another kind or a newer layout is named as such), then the
 * length against the file's real size, before anything is allocated, then
 * the checksum, and only then the data's version, so that a flipped bit is
 * reported as damage rather than as a version. Writes go to NAME.tmp,
 * fsync, rename over NAME, fsync of the directory: a crash leaves the old
 * file or the new one, and a leftover NAME.tmp is overwritten by the next
 * write. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "bytes.h"
#include "io.h"
#include "statedir.h"

#define HEADER_SIZE    32u
#define HEADER_VERSION 1u
#define OFF_HVERSION   8u
#define OFF_VERSION    12u
#define OFF_LENGTH     16u
#define OFF_CHECKSUM   24u
#define KIND_LEN       7u
#define NAME_MAX_LEN   200u
#define MSG_SIZE       768
#define ADVICE         "remove %s to start over, or restore it from a backup"

struct statedir {
    char *path;
    int dirfd;
    int lockfd;
    char msg[MSG_SIZE];
};

static void say(char *msg, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void say(char *msg, size_t cap, const char *fmt, ...)
{
    if (msg == NULL || cap == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, cap, fmt, ap);
    va_end(ap);
}

/* ---- the lock ---- */

/* The pid in a LOCK file, 0 if there is none yet. */
static long read_pid(int fd)
{
    char buf[32];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    char *end;
    long pid = strtol(buf, &end, 10);
    return end != buf && (*end == '\n' || *end == '\0') && pid > 0 ? pid : 0;
}

static int take_lock(statedir *sd, char *msg, size_t cap)
{
    sd->lockfd = openat(sd->dirfd, STATEDIR_LOCK_NAME, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (sd->lockfd < 0) {
        say(msg, cap, "%s/%s: %s", sd->path, STATEDIR_LOCK_NAME, strerror(errno));
        return SIEVE_EIO;
    }
    int rc;
    while ((rc = flock(sd->lockfd, LOCK_EX | LOCK_NB)) != 0 && errno == EINTR)
        ;
    if (rc != 0 && errno == EWOULDBLOCK) {
        long pid = read_pid(sd->lockfd);
        if (pid > 0)
            say(msg, cap, "%s is in use by process %ld", sd->path, pid);
        else
            say(msg, cap, "%s is in use by another process", sd->path);
        return SIEVE_ESTATE;
    }
    if (rc != 0) {
        say(msg, cap, "%s/%s: locking: %s", sd->path, STATEDIR_LOCK_NAME, strerror(errno));
        return SIEVE_EIO;
    }
    char pid[32];
    int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(sd->lockfd, 0) != 0 || pwrite(sd->lockfd, pid, (size_t)n, 0) != n) {
        say(msg, cap, "%s/%s: writing the pid: %s", sd->path, STATEDIR_LOCK_NAME, strerror(errno));
        return SIEVE_EIO;
    }
    return SIEVE_OK;
}

int statedir_lock(statedir **out, const char *dir, char *msg, size_t cap)
{
    say(msg, cap, "%s", "");
    if (out == NULL || dir == NULL || *dir == '\0')
        return SIEVE_EINVAL;
    *out = NULL;
    statedir *sd = calloc(1, sizeof *sd);
    if (sd == NULL || (sd->path = strdup(dir)) == NULL) {
        free(sd);
        return SIEVE_ENOMEM;
    }
    sd->lockfd = sd->dirfd = -1;
    int rc = SIEVE_OK;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        say(msg, cap, "%s: creating the directory: %s", dir, strerror(errno));
        rc = SIEVE_EIO;
    } else if ((sd->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
        say(msg, cap, "%s: opening the directory: %s", dir, strerror(errno));
        rc = SIEVE_EIO;
    } else {
        rc = take_lock(sd, msg, cap);
    }
    if (rc != SIEVE_OK) {
        int e = errno;
        if (sd->lockfd >= 0)
            close(sd->lockfd); /* releases the lock only if we took it */
        if (sd->dirfd >= 0)
            close(sd->dirfd);
        free(sd->path);
        free(sd);
        errno = e;
        return rc;
    }
    *out = sd;
    return SIEVE_OK;
}

void statedir_unlock(statedir *sd)
{
    if (sd == NULL)
        return;
    /* Still the holder here: a stale pid would mislead the next refusal. */
    if (ftruncate(sd->lockfd, 0) != 0) {
        /* Nothing to do: the lock goes with the descriptor all the same. */
    }
    close(sd->lockfd);
    close(sd->dirfd);
    free(sd->path);
    free(sd);
}

const char *statedir_path(const statedir *sd)
{
    return sd->path;
}

const char *statedir_message(const statedir *sd)
{
    return sd->msg;
}

/* ---- files ---- */

static bool valid_name(const char *name)
{
    size_t n = name == NULL ? 0 : strlen(name);
    if (n == 0 || n > NAME_MAX_LEN || strchr(name, '/') != NULL)
        return false;
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || strcmp(name, STATEDIR_LOCK_NAME) == 0)
        return false;
    return !(n >= 4 && strcmp(name + n - 4, ".tmp") == 0);
}

static bool valid_kind(const char *kind)
{
    return strlen(kind) == KIND_LEN;
}

static uint64_t file_checksum(const unsigned char *hdr, const void *data, size_t len)
{
    XXH3_state_t st;
    XXH3_INITSTATE(&st);
    XXH3_64bits_reset(&st);
    XXH3_64bits_update(&st, hdr, OFF_CHECKSUM);
    XXH3_64bits_update(&st, data, len);
    return XXH3_64bits_digest(&st);
}

static void encode_header(unsigned char *p, const char *kind, uint32_t version, const void *data,
                          size_t len)
{
    memset(p, 0, HEADER_SIZE);
    memcpy(p, kind, KIND_LEN);
    le_put32(p + OFF_HVERSION, HEADER_VERSION);
    le_put32(p + OFF_VERSION, version);
    le_put64(p + OFF_LENGTH, len);
    le_put64(p + OFF_CHECKSUM, file_checksum(p, data, len));
}

/* Writes, syncs and closes tmp in the directory. */
static int write_tmp(statedir *sd, const char *tmp, const unsigned char *hdr, const void *data,
                     size_t len)
{
    int fd = openat(sd->dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0)
        return -1;
    int rc = io_write_all(fd, hdr, HEADER_SIZE);
    if (rc == 0 && len > 0)
        rc = io_write_all(fd, data, len);
    if (rc == 0)
        rc = fsync(fd);
    int e = errno;
    if (close(fd) != 0 && rc == 0) {
        rc = -1;
        e = errno;
    }
    errno = e;
    return rc;
}

int statedir_write(statedir *sd, const char *name, const char *kind, uint32_t version,
                   const void *data, size_t len)
{
    if (kind == NULL)
        kind = STATEDIR_KIND_GENERIC;
    if (sd == NULL || !valid_name(name) || !valid_kind(kind) || (data == NULL && len > 0))
        return SIEVE_EINVAL;
    if (len > STATEDIR_DATA_MAX)
        return SIEVE_ETOOLONG;
    sd->msg[0] = '\0';
    unsigned char hdr[HEADER_SIZE];
    char tmp[NAME_MAX_LEN + 8];
    snprintf(tmp, sizeof tmp, "%s.tmp", name);
    encode_header(hdr, kind, version, data, len);
    if (write_tmp(sd, tmp, hdr, data, len) != 0 || renameat(sd->dirfd, tmp, sd->dirfd, name) != 0) {
        int e = errno;
        say(sd->msg, MSG_SIZE, "%s/%s: writing: %s", sd->path, name, strerror(e));
        unlinkat(sd->dirfd, tmp, 0);
        errno = e;
        return SIEVE_EIO;
    }
    if (fsync(sd->dirfd) != 0 && errno != EINVAL) {
        int e = errno;
        say(sd->msg, MSG_SIZE, "%s: syncing the directory after writing %s: %s", sd->path, name,
            strerror(e));
        errno = e;
        return SIEVE_EIO;
    }
    return SIEVE_OK;
}

/* Names a file's refusal, with what to do about it. */
static int refuse(statedir *sd, const char *name, int rc, const char *what)
{
    say(sd->msg, MSG_SIZE, "%s/%s: %s; " ADVICE, sd->path, name, what, sd->path);
    return rc;
}

/* The header's checks that need no data: SIEVE_OK with the data length. */
static int check_header(statedir *sd, const char *name, const unsigned char *hdr, uint64_t size,
                        const char *kind, uint64_t *len)
{
    char what[160];
    if (memcmp(hdr, kind, KIND_LEN + 1) != 0) {
        char found[KIND_LEN + 1];
        for (unsigned i = 0; i < KIND_LEN; i++)
            found[i] = hdr[i] >= 0x20 && hdr[i] < 0x7f ? (char)hdr[i] : '?';
        found[KIND_LEN] = '\0';
        snprintf(what, sizeof what, "not a %s file (it starts with \"%s\")", kind, found);
        return refuse(sd, name, SIEVE_EFORMAT, what);
    }
    uint32_t hv = le_get32(hdr + OFF_HVERSION);
    if (hv != HEADER_VERSION) {
        snprintf(what, sizeof what, "header format version %" PRIu32 ", this build reads %u", hv,
                 HEADER_VERSION);
        return refuse(sd, name, SIEVE_EVERSION, what);
    }
    *len = le_get64(hdr + OFF_LENGTH);
    uint64_t held = size - HEADER_SIZE;
    if (*len != held) {
        snprintf(what, sizeof what,
                 "the header says %" PRIu64 " bytes of data, the file holds %" PRIu64 ": %s", *len,
                 held, *len > held ? "cut short or damaged" : "damaged");
        return refuse(sd, name, *len > held ? SIEVE_ETRUNCATED : SIEVE_EFORMAT, what);
    }
    if (*len > STATEDIR_DATA_MAX)
        return refuse(sd, name, SIEVE_EFORMAT, "larger than a state file may be");
    return SIEVE_OK;
}

/* Checks and reads the open file fd of size bytes. */
static int read_checked(statedir *sd, const char *name, int fd, uint64_t size, const char *kind,
                        uint32_t version, void **data, size_t *len)
{
    unsigned char hdr[HEADER_SIZE];
    char what[160];
    size_t have = size < HEADER_SIZE ? (size_t)size : HEADER_SIZE;
    int rc = io_read_all(fd, hdr, have);
    if (rc != SIEVE_OK)
        return rc;
    if (have < HEADER_SIZE) {
        size_t cmp = have < KIND_LEN + 1 ? have : KIND_LEN + 1;
        snprintf(what, sizeof what, "cut short: %zu bytes, less than a header", have);
        if (memcmp(hdr, kind, cmp) == 0)
            return refuse(sd, name, SIEVE_ETRUNCATED, what);
        snprintf(what, sizeof what, "not a %s file", kind);
        return refuse(sd, name, SIEVE_EFORMAT, what);
    }
    uint64_t n;
    rc = check_header(sd, name, hdr, size, kind, &n);
    if (rc != SIEVE_OK)
        return rc;
    unsigned char *buf = malloc((size_t)n + 1);
    if (buf == NULL)
        return SIEVE_ENOMEM;
    rc = io_read_all(fd, buf, (size_t)n);
    if (rc == SIEVE_ETRUNCATED) /* it shrank as we read */
        rc = refuse(sd, name, rc, "cut short while being read");
    else if (rc == SIEVE_OK && le_get64(hdr + OFF_CHECKSUM) != file_checksum(hdr, buf, (size_t)n))
        rc = refuse(sd, name, SIEVE_ECHECKSUM, "checksum mismatch: the file is damaged");
    else if (rc == SIEVE_OK && le_get32(hdr + OFF_VERSION) != version) {
        snprintf(what, sizeof what, "format version %" PRIu32 ", this build reads %" PRIu32,
                 le_get32(hdr + OFF_VERSION), version);
        rc = refuse(sd, name, SIEVE_EVERSION, what);
    }
    if (rc != SIEVE_OK) {
        free(buf);
        return rc;
    }
    buf[n] = '\0';
    *data = buf;
    *len = (size_t)n;
    return SIEVE_OK;
}

int statedir_read(statedir *sd, const char *name, const char *kind, uint32_t version, void **data,
                  size_t *len)
{
    if (kind == NULL)
        kind = STATEDIR_KIND_GENERIC;
    if (sd == NULL || !valid_name(name) || !valid_kind(kind) || data == NULL || len == NULL)
        return SIEVE_EINVAL;
    sd->msg[0] = '\0';
    *data = NULL;
    *len = 0;
    struct stat st;
    int fd = openat(sd->dirfd, name, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) != 0) {
        int e = errno;
        say(sd->msg, MSG_SIZE, "%s/%s: %s", sd->path, name, strerror(e));
        if (fd >= 0)
            close(fd);
        errno = e;
        return SIEVE_EIO;
    }
    int rc;
    if (!S_ISREG(st.st_mode))
        rc = refuse(sd, name, SIEVE_EFORMAT, "not a regular file");
    else
        rc = read_checked(sd, name, fd, (uint64_t)st.st_size, kind, version, data, len);
    int e = errno;
    if (rc == SIEVE_EIO)
        say(sd->msg, MSG_SIZE, "%s/%s: reading: %s", sd->path, name, strerror(e));
    close(fd);
    errno = e;
    return rc;
}
