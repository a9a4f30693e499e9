/* journal.c - append-only segments of checksummed records.
 *
 * A journal is a directory of segments, journal/00000001.log and up,
 * numbered without gaps from the oldest kept to the one being written.
 * All integers are little-endian, written byte by byte:
 *
 *     segment header, 24 bytes
 *       0  8 magic "SIEVEJL\0"
 *       8  4 format version (1)
 *      12  4 segment number, as in the file's name
 *      16  8 XXH3-64 of bytes 0..15
 *
 *     record, 9 bytes + payload, right after the header or the previous one
 *       0  4 payload length, at most JOURNAL_PAYLOAD_MAX
 *       4  1 type, 1..255
 *       5  . payload
 *     5+n  4 low 32 bits of XXH3-64 of bytes 0..4+n
 *
 * A full segment ends with an end record, type 0 with an 8-byte payload
 * holding its own offset; the next segment is created only after it is
 * written and the segment is fdatasync'ed, and the directory is synced
 * once the new file exists. So every segment but the last is complete on
 * disk, which opening checks cheaply by reading its last 17 bytes, and a
 * segment cut at a record boundary cannot pass for whole. A record goes in
 * the current segment if it fits below segment_max_bytes with room for the
 * end record; otherwise the journal rotates first, and a record larger
 * than a segment gets one of its own. Records are never split.
 *
 * Writing: records are encoded into one buffer, allocated at open, and go
 * out with one pwrite(2) per record or per batch (per buffer-full), at the
 * offset the journal keeps, so there is no user-space buffering to lose
 * at a kill. A write that fails part way (ENOSPC, EFBIG) is cut back to
 * its last complete record with ftruncate(), so the next append starts on
 * a record boundary; if even that fails, appends are refused until the
 * journal is reopened, which cuts the torn tail.
 *
 * Opening, and the repair of a crash's torn tail, are in journal-open.c;
 * readers in journal-read.c. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "bytes.h"
#include "io.h"
#include "journal-internal.h"

/* ---- encoding ---- */

void jnl_encode_header(unsigned char *p, uint32_t segment)
{
    memcpy(p, MAGIC, sizeof(MAGIC));
    le_put32(p + OFF_VERSION, FORMAT_VERSION);
    le_put32(p + OFF_SEGMENT, segment);
    le_put64(p + OFF_CHECKSUM, XXH3_64bits(p, OFF_CHECKSUM));
}

size_t journal_encode_unsealed(unsigned char *p, uint8_t type, const void *head, size_t n,
                               const void *body, size_t m)
{
    size_t len = n + m;
    le_put32(p, (uint32_t)len);
    p[4] = type;
    if (n > 0)
        memcpy(p + REC_HEAD, head, n);
    if (m > 0)
        memcpy(p + REC_HEAD + n, body, m);
    return REC_OVERHEAD + len;
}

size_t journal_seal(unsigned char *p)
{
    uint32_t len = le_get32(p);
    le_put32(p + REC_HEAD + len, (uint32_t)XXH3_64bits(p, REC_HEAD + len));
    return REC_OVERHEAD + len;
}

size_t journal_encode(unsigned char *p, uint8_t type, const void *head, size_t n, const void *body,
                      size_t m)
{
    journal_encode_unsealed(p, type, head, n, body, m);
    return journal_seal(p);
}

size_t journal_decode(const unsigned char *p, size_t avail, uint8_t *type,
                      const unsigned char **payload, uint32_t *len)
{
    if (avail < REC_OVERHEAD)
        return 0;
    uint32_t n = le_get32(p);
    if (n > JOURNAL_PAYLOAD_MAX)
        return SIZE_MAX;
    if (avail - REC_OVERHEAD < n)
        return 0;
    if (le_get32(p + REC_HEAD + n) != (uint32_t)XXH3_64bits(p, REC_HEAD + n))
        return SIZE_MAX;
    *type = p[4];
    *payload = p + REC_HEAD;
    *len = n;
    return REC_OVERHEAD + n;
}

/* Writes one record at p; returns its size. */
static size_t encode_record(unsigned char *p, uint8_t type, const void *payload, uint32_t len)
{
    return journal_encode(p, type, payload, len, NULL, 0);
}

/* The size of the encoded record at p. */
static size_t record_size(const unsigned char *p)
{
    return REC_OVERHEAD + le_get32(p);
}

int journal_pos_cmp(journal_pos a, journal_pos b)
{
    if (a.segment != b.segment)
        return a.segment < b.segment ? -1 : 1;
    return a.offset < b.offset ? -1 : a.offset > b.offset;
}

/* ---- messages and small system helpers ---- */

void jnl_vsay(char *msg, size_t cap, const char *fmt, va_list ap)
{
    vsnprintf(msg, cap, fmt, ap);
}

void jnl_say(char *msg, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    jnl_vsay(msg, MSG_SIZE, fmt, ap);
    va_end(ap);
}

int jnl_sync_dirfd(int dirfd)
{
    return fsync(dirfd) == 0 || errno == EINVAL ? 0 : -1; /* EINVAL: not supported there */
}

void jnl_segment_name(char *name, uint32_t segment)
{
    snprintf(name, 16, "%08" PRIu32 ".log", segment);
}

/* ---- the writer's state ---- */

void jnl_path_of(const journal *j, uint32_t seg, char *path, size_t cap)
{
    char name[16];
    jnl_segment_name(name, seg);
    snprintf(path, cap, "%s/%s", j->dir, name);
}

int jnl_fail_errno(journal *j, uint32_t seg, const char *what)
{
    int e = errno;
    char path[PATH_MAX];
    jnl_path_of(j, seg, path, sizeof path);
    jnl_say(j->msg, "%s: %s: %s", path, what, strerror(e));
    errno = e;
    return SIEVE_EIO;
}

void jnl_publish(journal *j)
{
    pthread_mutex_lock(&j->lock);
    j->pub_first = j->first;
    if (j->sealed)
        j->pub_tail = (journal_pos){j->cur + 1, HEADER_SIZE};
    else
        j->pub_tail = (journal_pos){j->cur, j->size};
    pthread_mutex_unlock(&j->lock);
}

int jnl_create_segment(journal *j, uint32_t seg)
{
    char name[16];
    unsigned char hdr[HEADER_SIZE];
    if (seg > SEGMENT_LAST) {
        jnl_say(j->msg, "%s: segment numbers exhausted", j->dir);
        return SIEVE_EOVERFLOW;
    }
    jnl_segment_name(name, seg);
    int fd = openat(j->dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0)
        return jnl_fail_errno(j, seg, "creating the segment");
    jnl_encode_header(hdr, seg);
    if (io_pwrite(fd, hdr, HEADER_SIZE, 0) != HEADER_SIZE) {
        int rc = jnl_fail_errno(j, seg, "writing the header");
        int e = errno;
        close(fd);
        unlinkat(j->dirfd, name, 0);
        errno = e;
        return rc;
    }
    if (j->fd >= 0)
        close(j->fd);
    j->fd = fd;
    j->cur = seg;
    j->size = HEADER_SIZE;
    j->sealed = false;
    if (jnl_sync_dirfd(j->dirfd) != 0)
        return jnl_fail_errno(j, seg, "syncing the directory after creating the segment");
    return SIEVE_OK;
}

/* Writes the current segment's end record and makes the segment durable,
 * so that only the last segment can ever have a torn tail. */
static int seal(journal *j)
{
    unsigned char rec[END_SIZE], off[8];
    le_put64(off, j->size);
    encode_record(rec, TYPE_END, off, 8);
    size_t w = io_pwrite(j->fd, rec, END_SIZE, j->size);
    if (w != END_SIZE) {
        int rc = jnl_fail_errno(j, j->cur, "writing the end record");
        int e = errno;
        if (w > 0 && ftruncate(j->fd, (off_t)j->size) != 0)
            j->broken = true;
        errno = e;
        return rc;
    }
    j->size += END_SIZE;
    j->sealed = true;
    if (fdatasync(j->fd) != 0)
        return jnl_fail_errno(j, j->cur, "syncing the full segment");
    return SIEVE_OK;
}

/* Gets the current segment ready for a record of rec_size bytes. */
static int make_room(journal *j, uint64_t rec_size)
{
    bool empty = j->size == HEADER_SIZE;
    if (!j->sealed && (empty || j->size + rec_size + END_SIZE <= j->seg_max))
        return SIEVE_OK;
    int rc = j->sealed ? SIEVE_OK : seal(j);
    if (rc == SIEVE_OK)
        rc = jnl_create_segment(j, j->cur + 1);
    int e = errno;
    jnl_publish(j);
    errno = e;
    return rc;
}

int journal_close(journal *j)
{
    if (j == NULL)
        return SIEVE_OK;
    int rc = SIEVE_OK;
    if (j->fd >= 0 && close(j->fd) != 0)
        rc = SIEVE_EIO;
    if (j->dirfd >= 0)
        close(j->dirfd);
    pthread_mutex_destroy(&j->lock);
    free(j->buf);
    free(j->dir);
    free(j);
    return rc;
}

/* ---- appending ---- */

static int check_records(journal *j, const journal_record *recs, size_t n)
{
    if (j->broken) {
        jnl_say(j->msg, "%s: an earlier failed write could not be cut back; reopen the journal",
                j->dir);
        return SIEVE_ESTATE;
    }
    for (size_t i = 0; i < n; i++) {
        if (recs[i].type < JOURNAL_TYPE_MIN || (recs[i].payload == NULL && recs[i].len > 0))
            return SIEVE_EINVAL;
        if (recs[i].len > JOURNAL_PAYLOAD_MAX)
            return SIEVE_ETOOLONG;
    }
    return SIEVE_OK;
}

/* Gives the buffer room for one record of size bytes. */
static int reserve(journal *j, size_t size)
{
    if (size <= j->buf_cap)
        return SIEVE_OK;
    unsigned char *b = realloc(j->buf, size);
    if (b == NULL)
        return SIEVE_ENOMEM;
    j->buf = b;
    j->buf_cap = size;
    return SIEVE_OK;
}

/* Encodes records from recs[0] on into the buffer while they fit it and
 * the current segment; returns how many (at least one). */
static size_t fill(journal *j, const journal_record *recs, size_t n, journal_pos *pos, size_t *used)
{
    size_t k = 0, at = 0;
    while (k < n) {
        size_t size = REC_OVERHEAD + recs[k].len;
        bool fits_seg = j->size + at + size + END_SIZE <= j->seg_max;
        if (k > 0 && (at + size > j->buf_cap || !fits_seg))
            break;
        if (pos != NULL)
            pos[k] = (journal_pos){j->cur, j->size + at};
        at += encode_record(j->buf + at, recs[k].type, recs[k].payload, (uint32_t)recs[k].len);
        k++;
    }
    *used = at;
    return k;
}

/* Writes used bytes of encoded records from buf, k of them, at the tail.
 * On a failure the segment is cut back to its last complete record;
 * *done gets the records kept. */
static int write_out(journal *j, const unsigned char *buf, size_t used, size_t k, size_t *done)
{
    size_t w = io_pwrite(j->fd, buf, used, j->size);
    if (w == used) {
        j->size += used;
        *done = k;
        return SIEVE_OK;
    }
    int rc = jnl_fail_errno(j, j->cur, "appending");
    int e = errno;
    size_t keep = 0, i = 0;
    while (keep < w && record_size(buf + keep) <= w - keep) {
        keep += record_size(buf + keep);
        i++;
    }
    if (w > keep && ftruncate(j->fd, (off_t)(j->size + keep)) != 0)
        j->broken = true;
    j->size += keep;
    *done = i;
    errno = e;
    return rc;
}

int journal_append_batch(journal *j, const journal_record *recs, size_t n, journal_pos *pos,
                         size_t *written)
{
    size_t ignored, i = 0;
    if (written == NULL)
        written = &ignored;
    *written = 0;
    if (j == NULL || (recs == NULL && n > 0))
        return SIEVE_EINVAL;
    j->msg[0] = '\0';
    int rc = check_records(j, recs, n);
    while (rc == SIEVE_OK && i < n) {
        size_t used, done = 0;
        rc = reserve(j, REC_OVERHEAD + recs[i].len);
        if (rc == SIEVE_OK)
            rc = make_room(j, REC_OVERHEAD + recs[i].len);
        if (rc != SIEVE_OK)
            break;
        size_t k = fill(j, recs + i, n - i, pos ? pos + i : NULL, &used);
        rc = write_out(j, j->buf, used, k, &done);
        i += done;
        int e = errno;
        jnl_publish(j);
        errno = e;
    }
    *written = i;
    return rc;
}

/* Bytes from buf[0] on, whole records, that go in the current segment
 * (ready for the first by make_room()): the whole of len if it fits. */
static size_t fitting(const journal *j, const unsigned char *buf, size_t len)
{
    if (j->size + len + END_SIZE <= j->seg_max)
        return len;
    size_t at = record_size(buf);
    while (at < len && j->size + at + record_size(buf + at) + END_SIZE <= j->seg_max)
        at += record_size(buf + at);
    return at;
}

int journal_append_packed(journal *j, const unsigned char *buf, size_t len, size_t mark,
                          journal_pos *mark_pos)
{
    if (j == NULL || (buf == NULL && len > 0))
        return SIEVE_EINVAL;
    j->msg[0] = '\0';
    int rc = check_records(j, NULL, 0);
    for (size_t at = 0; rc == SIEVE_OK && at < len;) {
        rc = make_room(j, record_size(buf + at));
        if (rc != SIEVE_OK)
            break;
        size_t n = fitting(j, buf + at, len - at), done;
        if (mark >= at && mark - at < n && mark_pos != NULL)
            *mark_pos = (journal_pos){j->cur, j->size + (mark - at)};
        rc = write_out(j, buf + at, n, 0, &done);
        at += n;
        int e = errno;
        jnl_publish(j);
        errno = e;
    }
    return rc;
}

int journal_append(journal *j, uint8_t type, const void *payload, size_t len, journal_pos *pos)
{
    journal_record r = {.type = type, .payload = payload, .len = len};
    return journal_append_batch(j, &r, 1, pos, NULL);
}

int journal_sync(journal *j)
{
    if (j == NULL)
        return SIEVE_EINVAL;
    if (fdatasync(j->fd) != 0)
        return jnl_fail_errno(j, j->cur, "syncing");
    return SIEVE_OK;
}

int journal_dup_fd(journal *j)
{
    return fcntl(j->fd, F_DUPFD_CLOEXEC, 0);
}

int journal_drop_before(journal *j, uint32_t segment)
{
    if (j == NULL)
        return SIEVE_EINVAL;
    /* A sealed segment's successor is made by the next append (a kill or
     * a full disk came between): the tail names it, and what comes before
     * the tail is the sealed segment, kept. */
    if (j->sealed && segment == j->cur + 1)
        segment = j->cur;
    if (segment > j->cur) {
        jnl_say(j->msg, "%s: segment %" PRIu32 " is past the journal's tail", j->dir, segment);
        return SIEVE_EINVAL;
    }
    if (segment <= j->first)
        return SIEVE_OK;
    uint32_t from = j->first;
    j->first = segment;
    jnl_publish(j); /* new readers are refused there from now on */
    for (uint32_t s = from; s < segment; s++) {
        char name[16];
        jnl_segment_name(name, s);
        if (unlinkat(j->dirfd, name, 0) != 0 && errno != ENOENT)
            return jnl_fail_errno(j, s, "deleting");
    }
    if (jnl_sync_dirfd(j->dirfd) != 0)
        return jnl_fail_errno(j, segment, "syncing the directory after deleting segments before");
    return SIEVE_OK;
}

journal_pos journal_begin(journal *j)
{
    pthread_mutex_lock(&j->lock);
    journal_pos p = {j->pub_first, HEADER_SIZE};
    pthread_mutex_unlock(&j->lock);
    return p;
}

journal_pos journal_tail(journal *j)
{
    pthread_mutex_lock(&j->lock);
    journal_pos p = j->pub_tail;
    pthread_mutex_unlock(&j->lock);
    return p;
}

const char *journal_message(const journal *j)
{
    return j->msg;
}
