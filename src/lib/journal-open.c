/* journal-open.c - opening a journal: every segment checked, a crash's
 * torn tail cut.
 *
 * Damage is told from a crash by what follows it. A crash can only leave
 * the last segment with a torn tail: a record cut short, or (after a power
 * loss) a final record with a bad checksum. Opening reads the last
 * segment through; at the first bad record it looks for a valid record at
 * any later offset. If there is none the tail is torn and is cut; if there
 * is one the damage is in the middle of the log and opening refuses, since
 * cutting would lose good records. A last segment whose header is a
 * prefix of the one expected (a crash while creating it) is rewritten.
 * Every message names the file, the offset and what was found there.
 *
 * Segments before the last are checked cheaply: their header, and the end
 * record that sealing wrote (and synced) before the next segment was made.
 * No crash can touch them, so anything wrong there is damage, refused. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "bytes.h"
#include "io.h"
#include "journal-internal.h"

/* Describes a repair in the caller's journal_recovery. */
static void tell(journal_recovery *rec, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void tell(journal_recovery *rec, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    jnl_vsay(rec->what, sizeof rec->what, fmt, ap);
    va_end(ap);
}

/* ---- segment headers ---- */

int jnl_check_header(int fd, const char *path, uint32_t seg, uint64_t size, bool *torn, char *msg)
{
    unsigned char raw[HEADER_SIZE], want[HEADER_SIZE];
    jnl_encode_header(want, seg);
    size_t have = size < HEADER_SIZE ? (size_t)size : HEADER_SIZE;
    if (io_pread_all(fd, raw, have, 0) != SIEVE_OK) {
        jnl_say(msg, "%s: reading the header: %s", path, strerror(errno));
        return SIEVE_EIO;
    }
    if (have < HEADER_SIZE && torn != NULL && memcmp(raw, want, have) == 0) {
        *torn = true;
        return SIEVE_OK;
    }
    if (have < HEADER_SIZE) {
        jnl_say(msg, "%s: offset 0: header cut short (%zu of %u bytes)", path, have, HEADER_SIZE);
        return SIEVE_ETRUNCATED;
    }
    if (memcmp(raw, MAGIC, sizeof(MAGIC)) != 0) {
        jnl_say(msg, "%s: offset 0: not a sieve journal segment (bad magic)", path);
        return SIEVE_EFORMAT;
    }
    uint32_t version = le_get32(raw + OFF_VERSION);
    if (version != FORMAT_VERSION) {
        jnl_say(msg, "%s: offset %u: journal format version %" PRIu32 ", this build reads %u", path,
                OFF_VERSION, version, FORMAT_VERSION);
        return SIEVE_EVERSION;
    }
    if (le_get64(raw + OFF_CHECKSUM) != XXH3_64bits(raw, OFF_CHECKSUM)) {
        jnl_say(msg, "%s: offset %u: header checksum mismatch", path, OFF_CHECKSUM);
        return SIEVE_ECHECKSUM;
    }
    if (le_get32(raw + OFF_SEGMENT) != seg) {
        jnl_say(msg, "%s: offset %u: header says segment %" PRIu32, path, OFF_SEGMENT,
                le_get32(raw + OFF_SEGMENT));
        return SIEVE_EFORMAT;
    }
    return SIEVE_OK;
}

/* ---- opening ---- */

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Parses "NNNNNNNN.log"; 0 for any other name. */
static uint32_t segment_number(const char *name)
{
    uint32_t n = 0;
    for (int i = 0; i < 8; i++) {
        if (name[i] < '0' || name[i] > '9')
            return 0;
        n = n * 10 + (uint32_t)(name[i] - '0');
    }
    return strcmp(name + 8, ".log") == 0 ? n : 0;
}

/* The segment numbers in the directory, sorted. */
static int list_segments(journal *j, uint32_t **out, size_t *count)
{
    int fd = dup(j->dirfd);
    DIR *d = fd < 0 ? NULL : fdopendir(fd);
    if (d == NULL) {
        if (fd >= 0)
            close(fd);
        jnl_say(j->msg, "%s: listing: %s", j->dir, strerror(errno));
        return SIEVE_EIO;
    }
    rewinddir(d);
    uint32_t *v = NULL;
    size_t n = 0, cap = 0;
    int rc = SIEVE_OK;
    struct dirent *e;
    while (rc == SIEVE_OK && (e = readdir(d)) != NULL) {
        uint32_t seg = segment_number(e->d_name);
        if (seg == 0)
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            uint32_t *nv = realloc(v, cap * sizeof *v);
            if (nv == NULL) {
                rc = SIEVE_ENOMEM;
                break;
            }
            v = nv;
        }
        v[n++] = seg;
    }
    closedir(d);
    if (rc != SIEVE_OK) {
        free(v);
        return rc;
    }
    if (n > 0)
        qsort(v, n, sizeof *v, cmp_u32);
    *out = v;
    *count = n;
    return SIEVE_OK;
}

int jnl_open_segment(journal *j, uint32_t seg, int flags, uint64_t *size, char *path, size_t cap,
                     char *msg)
{
    char name[16];
    struct stat st;
    jnl_segment_name(name, seg);
    jnl_path_of(j, seg, path, cap);
    int fd = openat(j->dirfd, name, flags | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) != 0) {
        int e = errno;
        jnl_say(msg, "%s: opening: %s", path, strerror(e));
        if (fd >= 0)
            close(fd);
        errno = e;
        return -1;
    }
    *size = (uint64_t)st.st_size;
    return fd;
}

/* A segment before the last must have its header and its end record. */
static int check_full_segment(journal *j, uint32_t seg)
{
    char path[PATH_MAX];
    uint64_t size;
    int fd = jnl_open_segment(j, seg, O_RDONLY, &size, path, sizeof path, j->msg);
    if (fd < 0)
        return SIEVE_EIO;
    int rc = jnl_check_header(fd, path, seg, size, NULL, j->msg);
    unsigned char end[END_SIZE];
    if (rc == SIEVE_OK && size < HEADER_SIZE + END_SIZE) {
        jnl_say(j->msg, "%s: offset %" PRIu64 ": ends before its end record; cut short", path,
                size);
        rc = SIEVE_ETRUNCATED;
    } else if (rc == SIEVE_OK && io_pread_all(fd, end, END_SIZE, size - END_SIZE) != SIEVE_OK) {
        jnl_say(j->msg, "%s: reading: %s", path, strerror(errno));
        rc = SIEVE_EIO;
    } else if (rc == SIEVE_OK) {
        uint64_t at = size - END_SIZE;
        bool shaped = le_get32(end) == 8 && end[4] == TYPE_END && le_get64(end + REC_HEAD) == at;
        bool sums = le_get32(end + REC_HEAD + 8) == (uint32_t)XXH3_64bits(end, REC_HEAD + 8);
        if (!shaped || !sums) {
            jnl_say(j->msg,
                    "%s: offset %" PRIu64 ": no valid end record at the end of this full "
                    "segment (%s)",
                    path, at, shaped ? "checksum mismatch" : "cut short or damaged");
            rc = shaped ? SIEVE_ECHECKSUM : SIEVE_ETRUNCATED;
        }
    }
    close(fd);
    return rc;
}

/* Rewrites the header of a last segment that a crash left incomplete. */
static int repair_header(journal *j, const char *path, uint64_t size, journal_recovery *rec)
{
    unsigned char hdr[HEADER_SIZE];
    jnl_encode_header(hdr, j->cur);
    if (ftruncate(j->fd, 0) != 0 || io_pwrite(j->fd, hdr, HEADER_SIZE, 0) != HEADER_SIZE ||
        fdatasync(j->fd) != 0)
        return jnl_fail_errno(j, j->cur, "rewriting the header");
    rec->repaired = true;
    rec->at = (journal_pos){j->cur, HEADER_SIZE};
    rec->bytes_cut = size;
    tell(rec, "%s: offset 0: header cut short (%" PRIu64 " of %u bytes); rewritten", path, size,
         HEADER_SIZE);
    j->size = HEADER_SIZE;
    return SIEVE_OK;
}

/* Cuts the last segment at off, where a torn tail begins. */
static int cut_tail(journal *j, const char *path, uint64_t off, uint64_t size, rec_kind k,
                    journal_recovery *rec)
{
    if (ftruncate(j->fd, (off_t)off) != 0 || fdatasync(j->fd) != 0)
        return jnl_fail_errno(j, j->cur, "cutting the torn tail");
    rec->repaired = true;
    rec->at = (journal_pos){j->cur, off};
    rec->bytes_cut = size - off;
    tell(rec, "%s: offset %" PRIu64 ": %s, nothing valid after it; cut %" PRIu64 " bytes", path,
         off, jnl_kind_text(k), size - off);
    return SIEVE_OK;
}

/* Reads the last segment's records from off to the end of its size bytes:
 * finds the tail, cuts a torn one, refuses damage with data after it. */
static int scan_last(journal *j, const char *path, uint64_t size, journal_recovery *rec)
{
    cursor c = {.fd = j->fd, .limit = size, .buf = j->buf, .cap = j->buf_cap};
    uint64_t off = HEADER_SIZE;
    int rc = SIEVE_OK;
    while (rc == SIEVE_OK && off < size) {
        rec_kind k;
        rec_view v;
        bool after = false;
        rc = jnl_parse_record(&c, off, &k, &v);
        if (rc != SIEVE_OK)
            break;
        if (k == REC_OK) {
            off += v.size;
            continue;
        }
        if (k == REC_END && off + v.size == size) {
            j->sealed = true;
            off = size;
            break;
        }
        if (k == REC_END) {
            jnl_say(j->msg, "%s: offset %" PRIu64 ": data after the segment's end record", path,
                    off);
            rc = SIEVE_EFORMAT;
            break;
        }
        rc = jnl_valid_record_after(&c, off + 1, &after);
        if (rc == SIEVE_OK && after) {
            jnl_say(j->msg, "%s: offset %" PRIu64 ": %s, with valid records after it", path, off,
                    jnl_kind_text(k));
            rc = jnl_kind_status(k);
        } else if (rc == SIEVE_OK) {
            rc = cut_tail(j, path, off, size, k, rec);
            break;
        }
    }
    /* The cursor may have grown the buffer for a large record. */
    j->buf = c.buf;
    j->buf_cap = c.cap;
    if (rc == SIEVE_EIO && j->msg[0] == '\0')
        jnl_say(j->msg, "%s: reading: %s", path, strerror(errno));
    j->size = off;
    return rc;
}

static int open_last(journal *j, uint32_t seg, journal_recovery *rec)
{
    char path[PATH_MAX];
    uint64_t size;
    j->fd = jnl_open_segment(j, seg, O_RDWR, &size, path, sizeof path, j->msg);
    if (j->fd < 0)
        return SIEVE_EIO;
    j->cur = seg;
    bool torn = false;
    int rc = jnl_check_header(j->fd, path, seg, size, &torn, j->msg);
    if (rc != SIEVE_OK)
        return rc;
    if (torn)
        return repair_header(j, path, size, rec);
    return scan_last(j, path, size, rec);
}

/* Checks the segments found: no gap, full ones sealed, the last read
 * through. */
static int open_segments(journal *j, const uint32_t *segs, size_t n, journal_recovery *rec)
{
    for (size_t i = 1; i < n; i++) {
        if (segs[i] != segs[i - 1] + 1) {
            char path[PATH_MAX];
            jnl_path_of(j, segs[i - 1] + 1, path, sizeof path);
            jnl_say(j->msg, "%s: missing: segments %08" PRIu32 " and %08" PRIu32 " exist", path,
                    segs[i - 1], segs[i]);
            return SIEVE_EFORMAT;
        }
    }
    j->first = segs[0];
    for (size_t i = 0; i + 1 < n; i++) {
        int rc = check_full_segment(j, segs[i]);
        if (rc != SIEVE_OK)
            return rc;
    }
    return open_last(j, segs[n - 1], rec);
}

static int open_dir(journal *j, const char *dir)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        jnl_say(j->msg, "%s: creating the directory: %s", dir, strerror(errno));
        return SIEVE_EIO;
    }
    j->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (j->dirfd < 0) {
        jnl_say(j->msg, "%s: opening the directory: %s", dir, strerror(errno));
        return SIEVE_EIO;
    }
    return SIEVE_OK;
}

static int open_journal(journal *j, const char *dir, journal_recovery *rec)
{
    int rc = open_dir(j, dir);
    uint32_t *segs = NULL;
    size_t n = 0;
    if (rc == SIEVE_OK)
        rc = list_segments(j, &segs, &n);
    if (rc == SIEVE_OK && n == 0) {
        j->first = 1;
        rc = jnl_create_segment(j, 1);
    } else if (rc == SIEVE_OK) {
        rc = open_segments(j, segs, n, rec);
    }
    free(segs);
    return rc;
}

int journal_open(journal **out, const char *dir, uint64_t segment_max_bytes, journal_recovery *rec,
                 char *msg, size_t cap)
{
    journal_recovery ignored;
    if (rec == NULL)
        rec = &ignored;
    memset(rec, 0, sizeof *rec);
    if (msg != NULL && cap > 0)
        msg[0] = '\0';
    if (segment_max_bytes == 0)
        segment_max_bytes = JOURNAL_SEGMENT_DEFAULT;
    if (out == NULL || dir == NULL || *dir == '\0' || segment_max_bytes < JOURNAL_SEGMENT_MIN ||
        segment_max_bytes > JOURNAL_SEGMENT_MAX)
        return SIEVE_EINVAL;
    *out = NULL;
    journal *j = calloc(1, sizeof *j);
    if (j == NULL || (j->dir = strdup(dir)) == NULL || (j->buf = malloc(WRITE_BUF)) == NULL) {
        if (j != NULL)
            free(j->dir);
        free(j);
        return SIEVE_ENOMEM;
    }
    j->buf_cap = WRITE_BUF;
    j->dirfd = j->fd = -1;
    j->seg_max = segment_max_bytes;
    pthread_mutex_init(&j->lock, NULL);
    int rc = open_journal(j, dir, rec);
    if (rc != SIEVE_OK) {
        int e = errno;
        if (msg != NULL && cap > 0)
            snprintf(msg, cap, "%s", j->msg);
        journal_close(j);
        errno = e;
        return rc;
    }
    jnl_publish(j);
    *out = j;
    return SIEVE_OK;
}
