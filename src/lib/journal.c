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
 * Damage is told from a crash by what follows it. A crash can only leave
 * the last segment with a torn tail: a record cut short, or (after a power
 * loss) a final record with a bad checksum. Opening reads the last
 * segment through; at the first bad record it looks for a valid record at
 * any later offset. If there is none the tail is torn and is cut; if there
 * is one the damage is in the middle of the log and opening refuses, since
 * cutting would lose good records. A last segment whose header is a
 * prefix of the one expected (a crash while creating it) is rewritten.
 *
 * Writing: records are encoded into one buffer, allocated at open, and go
 * out with one pwrite(2) per record or per batch (per buffer-full), at the
 * offset the journal keeps, so there is no user-space buffering to lose
 * at a kill. A write that fails part way (ENOSPC, EFBIG) is cut back to
 * its last complete record with ftruncate(), so the next append starts on
 * a record boundary; if even that fails, appends are refused until the
 * journal is reopened, which cuts the torn tail.
 *
 * Reading: a reader has its own descriptor and buffer, and reads the
 * segment being written only up to the tail the writer published (under a
 * mutex) after its last complete write, so it never sees a record in the
 * making nor bytes a failed write will cut. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "bytes.h"
#include "io.h"
#include "journal.h"

#define MAGIC          "SIEVEJL" /* with its NUL: 8 bytes */
#define FORMAT_VERSION 1u
#define HEADER_SIZE    24u
#define OFF_VERSION    8u
#define OFF_SEGMENT    12u
#define OFF_CHECKSUM   16u
#define REC_HEAD       5u /* length and type */
#define REC_OVERHEAD   9u /* head and checksum */
#define TYPE_END       0u
#define END_SIZE       (REC_OVERHEAD + 8u)
#define SEGMENT_LAST   99999999u    /* eight digits in the file name */
#define WRITE_BUF      (256u << 10) /* grown only for a larger record */
#define READ_BUF       (256u << 10)
#define MSG_SIZE       512

_Static_assert(JOURNAL_RECORD_SIZE(0) == REC_OVERHEAD, "journal.h agrees on a record's size");

/* A window of one segment file, refilled with pread(2). */
typedef struct cursor {
    int fd;
    uint64_t limit; /* bytes that may be read: the file's size or the tail */
    unsigned char *buf;
    size_t cap, len;
    uint64_t buf_off; /* file offset of buf[0] */
} cursor;

/* What the bytes at an offset are. */
typedef enum rec_kind {
    REC_OK,       /* a caller's record */
    REC_END,      /* the segment's end record */
    REC_SHORT,    /* the bytes end inside it */
    REC_LENGTH,   /* a length above JOURNAL_PAYLOAD_MAX */
    REC_CHECKSUM, /* its checksum does not match */
    REC_TYPE,     /* type 0 that is no valid end record */
} rec_kind;

typedef struct rec_view {
    uint8_t type;
    uint32_t len;
    const unsigned char *payload;
    uint64_t size; /* bytes on disk */
} rec_view;

struct journal {
    char *dir;
    int dirfd;
    uint64_t seg_max;
    uint32_t first; /* oldest segment kept */
    uint32_t cur;   /* segment being written */
    int fd;         /* cur's descriptor */
    uint64_t size;  /* cur's bytes, all complete records */
    bool sealed;    /* cur has its end record: the next append creates cur + 1 */
    bool broken;    /* a failed write could not be cut back */
    unsigned char *buf;
    size_t buf_cap;
    pthread_mutex_t lock; /* guards the two fields below, for readers */
    uint32_t pub_first;
    journal_pos pub_tail;
    char msg[MSG_SIZE];
};

struct journal_reader {
    journal *j;
    uint32_t seg;
    uint64_t off; /* the next record */
    bool at_tail; /* cur.limit is the published tail, which may grow */
    cursor cur;
    char msg[MSG_SIZE];
};

/* ---- encoding ---- */

static void encode_header(unsigned char *p, uint32_t segment)
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

static void say_n(char *msg, size_t cap, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

static void say_n(char *msg, size_t cap, const char *fmt, va_list ap)
{
    vsnprintf(msg, cap, fmt, ap);
}

/* Formats a message into a handle's buffer. */
static void say(char *msg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(char *msg, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say_n(msg, MSG_SIZE, fmt, ap);
    va_end(ap);
}

/* Describes a repair in the caller's journal_recovery. */
static void tell(journal_recovery *rec, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void tell(journal_recovery *rec, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say_n(rec->what, sizeof rec->what, fmt, ap);
    va_end(ap);
}

static int sync_dirfd(int dirfd)
{
    return fsync(dirfd) == 0 || errno == EINVAL ? 0 : -1; /* EINVAL: not supported there */
}

static void segment_name(char *name, uint32_t segment)
{
    snprintf(name, 16, "%08" PRIu32 ".log", segment);
}

/* ---- reading records ---- */

/* Points *p at bytes [off, off + n) of the cursor's file, reading them if
 * needed. SIEVE_ETRUNCATED if they pass the limit. */
static int cursor_get(cursor *c, uint64_t off, size_t n, const unsigned char **p)
{
    if (off > c->limit || n > c->limit - off)
        return SIEVE_ETRUNCATED;
    if (off >= c->buf_off && off + n <= c->buf_off + c->len) {
        *p = c->buf + (off - c->buf_off);
        return SIEVE_OK;
    }
    if (n > c->cap) { /* n is at most a largest record: checked before the call */
        unsigned char *b = realloc(c->buf, n);
        if (b == NULL)
            return SIEVE_ENOMEM;
        c->buf = b;
        c->cap = n;
    }
    uint64_t avail = c->limit - off;
    size_t want = avail < c->cap ? (size_t)avail : c->cap;
    c->len = 0;
    int rc = io_pread_all(c->fd, c->buf, want, off);
    if (rc != SIEVE_OK)
        return rc;
    c->buf_off = off;
    c->len = want;
    *p = c->buf;
    return SIEVE_OK;
}

/* Reads what is at off. SIEVE_ENOMEM or SIEVE_EIO for failures, else the
 * rec_kind in *kind. */
static int parse_record(cursor *c, uint64_t off, rec_kind *kind, rec_view *v)
{
    const unsigned char *p;
    int rc = cursor_get(c, off, REC_HEAD, &p);
    if (rc == SIEVE_ETRUNCATED) {
        *kind = REC_SHORT;
        return SIEVE_OK;
    }
    if (rc != SIEVE_OK)
        return rc;
    uint32_t len = le_get32(p);
    if (len > JOURNAL_PAYLOAD_MAX) {
        *kind = REC_LENGTH;
        return SIEVE_OK;
    }
    rc = cursor_get(c, off, REC_OVERHEAD + len, &p);
    if (rc == SIEVE_ETRUNCATED) {
        *kind = REC_SHORT;
        return SIEVE_OK;
    }
    if (rc != SIEVE_OK)
        return rc;
    v->type = p[4];
    v->len = len;
    v->payload = p + REC_HEAD;
    v->size = REC_OVERHEAD + len;
    if (le_get32(p + REC_HEAD + len) != (uint32_t)XXH3_64bits(p, REC_HEAD + len))
        *kind = REC_CHECKSUM;
    else if (v->type != TYPE_END)
        *kind = REC_OK;
    else
        *kind = len == 8 && le_get64(v->payload) == off ? REC_END : REC_TYPE;
    return SIEVE_OK;
}

static const char *kind_text(rec_kind k)
{
    switch (k) {
    case REC_SHORT:
        return "record cut short";
    case REC_LENGTH:
        return "record length above the limit";
    case REC_CHECKSUM:
        return "record checksum mismatch";
    case REC_TYPE:
        return "record of type 0 that is not an end record";
    default:
        return "valid record";
    }
}

static int kind_status(rec_kind k)
{
    switch (k) {
    case REC_SHORT:
        return SIEVE_ETRUNCATED;
    case REC_CHECKSUM:
        return SIEVE_ECHECKSUM;
    default:
        return SIEVE_EFORMAT;
    }
}

/* Whether a valid record starts anywhere in [from, limit): what tells
 * damage inside the log from a torn tail. */
static int valid_record_after(cursor *c, uint64_t from, bool *found)
{
    *found = false;
    for (uint64_t p = from; p + REC_OVERHEAD <= c->limit; p++) {
        rec_kind k;
        rec_view v;
        int rc = parse_record(c, p, &k, &v);
        if (rc != SIEVE_OK)
            return rc;
        if (k == REC_OK || k == REC_END) {
            *found = true;
            return SIEVE_OK;
        }
    }
    return SIEVE_OK;
}

/* ---- segment headers ---- */

/* Checks the header of segment number seg, open as fd with size bytes.
 * *torn (may be NULL: then a short header is refused) is set when the
 * file is a strict prefix of the header expected, as a crash while
 * creating it leaves it. */
static int check_header(int fd, const char *path, uint32_t seg, uint64_t size, bool *torn,
                        char *msg)
{
    unsigned char raw[HEADER_SIZE], want[HEADER_SIZE];
    encode_header(want, seg);
    size_t have = size < HEADER_SIZE ? (size_t)size : HEADER_SIZE;
    if (io_pread_all(fd, raw, have, 0) != SIEVE_OK) {
        say(msg, "%s: reading the header: %s", path, strerror(errno));
        return SIEVE_EIO;
    }
    if (have < HEADER_SIZE && torn != NULL && memcmp(raw, want, have) == 0) {
        *torn = true;
        return SIEVE_OK;
    }
    if (have < HEADER_SIZE) {
        say(msg, "%s: offset 0: header cut short (%zu of %u bytes)", path, have, HEADER_SIZE);
        return SIEVE_ETRUNCATED;
    }
    if (memcmp(raw, MAGIC, sizeof(MAGIC)) != 0) {
        say(msg, "%s: offset 0: not a sieve journal segment (bad magic)", path);
        return SIEVE_EFORMAT;
    }
    uint32_t version = le_get32(raw + OFF_VERSION);
    if (version != FORMAT_VERSION) {
        say(msg, "%s: offset %u: journal format version %" PRIu32 ", this build reads %u", path,
            OFF_VERSION, version, FORMAT_VERSION);
        return SIEVE_EVERSION;
    }
    if (le_get64(raw + OFF_CHECKSUM) != XXH3_64bits(raw, OFF_CHECKSUM)) {
        say(msg, "%s: offset %u: header checksum mismatch", path, OFF_CHECKSUM);
        return SIEVE_ECHECKSUM;
    }
    if (le_get32(raw + OFF_SEGMENT) != seg) {
        say(msg, "%s: offset %u: header says segment %" PRIu32, path, OFF_SEGMENT,
            le_get32(raw + OFF_SEGMENT));
        return SIEVE_EFORMAT;
    }
    return SIEVE_OK;
}

/* ---- the writer's state ---- */

static void path_of(const journal *j, uint32_t seg, char *path, size_t cap)
{
    char name[16];
    segment_name(name, seg);
    snprintf(path, cap, "%s/%s", j->dir, name);
}

static int fail_errno(journal *j, uint32_t seg, const char *what)
{
    int e = errno;
    char path[PATH_MAX];
    path_of(j, seg, path, sizeof path);
    say(j->msg, "%s: %s: %s", path, what, strerror(e));
    errno = e;
    return SIEVE_EIO;
}

/* Makes the writer's state visible to readers. */
static void publish(journal *j)
{
    pthread_mutex_lock(&j->lock);
    j->pub_first = j->first;
    if (j->sealed)
        j->pub_tail = (journal_pos){j->cur + 1, HEADER_SIZE};
    else
        j->pub_tail = (journal_pos){j->cur, j->size};
    pthread_mutex_unlock(&j->lock);
}

/* Creates segment seg with its header and syncs the directory; on success
 * it becomes the current segment. */
static int create_segment(journal *j, uint32_t seg)
{
    char name[16];
    unsigned char hdr[HEADER_SIZE];
    if (seg > SEGMENT_LAST) {
        say(j->msg, "%s: segment numbers exhausted", j->dir);
        return SIEVE_EOVERFLOW;
    }
    segment_name(name, seg);
    int fd = openat(j->dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0)
        return fail_errno(j, seg, "creating the segment");
    encode_header(hdr, seg);
    if (io_pwrite(fd, hdr, HEADER_SIZE, 0) != HEADER_SIZE) {
        int rc = fail_errno(j, seg, "writing the header");
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
    if (sync_dirfd(j->dirfd) != 0)
        return fail_errno(j, seg, "syncing the directory after creating the segment");
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
        int rc = fail_errno(j, j->cur, "writing the end record");
        int e = errno;
        if (w > 0 && ftruncate(j->fd, (off_t)j->size) != 0)
            j->broken = true;
        errno = e;
        return rc;
    }
    j->size += END_SIZE;
    j->sealed = true;
    if (fdatasync(j->fd) != 0)
        return fail_errno(j, j->cur, "syncing the full segment");
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
        rc = create_segment(j, j->cur + 1);
    int e = errno;
    publish(j);
    errno = e;
    return rc;
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
        say(j->msg, "%s: listing: %s", j->dir, strerror(errno));
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

static int open_segment(journal *j, uint32_t seg, int flags, uint64_t *size, char *path, size_t cap,
                        char *msg)
{
    char name[16];
    struct stat st;
    segment_name(name, seg);
    path_of(j, seg, path, cap);
    int fd = openat(j->dirfd, name, flags | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) != 0) {
        int e = errno;
        say(msg, "%s: opening: %s", path, strerror(e));
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
    int fd = open_segment(j, seg, O_RDONLY, &size, path, sizeof path, j->msg);
    if (fd < 0)
        return SIEVE_EIO;
    int rc = check_header(fd, path, seg, size, NULL, j->msg);
    unsigned char end[END_SIZE];
    if (rc == SIEVE_OK && size < HEADER_SIZE + END_SIZE) {
        say(j->msg, "%s: offset %" PRIu64 ": ends before its end record; cut short", path, size);
        rc = SIEVE_ETRUNCATED;
    } else if (rc == SIEVE_OK && io_pread_all(fd, end, END_SIZE, size - END_SIZE) != SIEVE_OK) {
        say(j->msg, "%s: reading: %s", path, strerror(errno));
        rc = SIEVE_EIO;
    } else if (rc == SIEVE_OK) {
        uint64_t at = size - END_SIZE;
        bool shaped = le_get32(end) == 8 && end[4] == TYPE_END && le_get64(end + REC_HEAD) == at;
        bool sums = le_get32(end + REC_HEAD + 8) == (uint32_t)XXH3_64bits(end, REC_HEAD + 8);
        if (!shaped || !sums) {
            say(j->msg,
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
    encode_header(hdr, j->cur);
    if (ftruncate(j->fd, 0) != 0 || io_pwrite(j->fd, hdr, HEADER_SIZE, 0) != HEADER_SIZE ||
        fdatasync(j->fd) != 0)
        return fail_errno(j, j->cur, "rewriting the header");
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
        return fail_errno(j, j->cur, "cutting the torn tail");
    rec->repaired = true;
    rec->at = (journal_pos){j->cur, off};
    rec->bytes_cut = size - off;
    tell(rec, "%s: offset %" PRIu64 ": %s, nothing valid after it; cut %" PRIu64 " bytes", path,
         off, kind_text(k), size - off);
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
        rc = parse_record(&c, off, &k, &v);
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
            say(j->msg, "%s: offset %" PRIu64 ": data after the segment's end record", path, off);
            rc = SIEVE_EFORMAT;
            break;
        }
        rc = valid_record_after(&c, off + 1, &after);
        if (rc == SIEVE_OK && after) {
            say(j->msg, "%s: offset %" PRIu64 ": %s, with valid records after it", path, off,
                kind_text(k));
            rc = kind_status(k);
        } else if (rc == SIEVE_OK) {
            rc = cut_tail(j, path, off, size, k, rec);
            break;
        }
    }
    /* The cursor may have grown the buffer for a large record. */
    j->buf = c.buf;
    j->buf_cap = c.cap;
    if (rc == SIEVE_EIO && j->msg[0] == '\0')
        say(j->msg, "%s: reading: %s", path, strerror(errno));
    j->size = off;
    return rc;
}

static int open_last(journal *j, uint32_t seg, journal_recovery *rec)
{
    char path[PATH_MAX];
    uint64_t size;
    j->fd = open_segment(j, seg, O_RDWR, &size, path, sizeof path, j->msg);
    if (j->fd < 0)
        return SIEVE_EIO;
    j->cur = seg;
    bool torn = false;
    int rc = check_header(j->fd, path, seg, size, &torn, j->msg);
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
            path_of(j, segs[i - 1] + 1, path, sizeof path);
            say(j->msg, "%s: missing: segments %08" PRIu32 " and %08" PRIu32 " exist", path,
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
        say(j->msg, "%s: creating the directory: %s", dir, strerror(errno));
        return SIEVE_EIO;
    }
    j->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (j->dirfd < 0) {
        say(j->msg, "%s: opening the directory: %s", dir, strerror(errno));
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
        rc = create_segment(j, 1);
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
    publish(j);
    *out = j;
    return SIEVE_OK;
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
        say(j->msg, "%s: an earlier failed write could not be cut back; reopen the journal",
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
    int rc = fail_errno(j, j->cur, "appending");
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
        publish(j);
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
        publish(j);
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
        return fail_errno(j, j->cur, "syncing");
    return SIEVE_OK;
}

int journal_dup_fd(journal *j)
{
    return fcntl(j->fd, F_DUPFD_CLOEXEC, 0);
}

int journal_drop_before(journal *j, uint32_t segment)
{
    if (j == NULL || segment > j->cur)
        return SIEVE_EINVAL;
    if (segment <= j->first)
        return SIEVE_OK;
    uint32_t from = j->first;
    j->first = segment;
    publish(j); /* new readers are refused there from now on */
    for (uint32_t s = from; s < segment; s++) {
        char name[16];
        segment_name(name, s);
        if (unlinkat(j->dirfd, name, 0) != 0 && errno != ENOENT)
            return fail_errno(j, s, "deleting");
    }
    if (sync_dirfd(j->dirfd) != 0)
        return fail_errno(j, segment, "syncing the directory after deleting segments before");
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

/* ---- readers ---- */

int journal_reader_open(journal *j, journal_pos from, journal_reader **out)
{
    if (j == NULL || out == NULL)
        return SIEVE_EINVAL;
    *out = NULL;
    journal_pos begin = journal_begin(j), tail = journal_tail(j);
    if (journal_pos_cmp(from, begin) < 0 || journal_pos_cmp(from, tail) > 0 ||
        from.offset < HEADER_SIZE)
        return SIEVE_EINVAL;
    journal_reader *r = calloc(1, sizeof *r);
    if (r == NULL || (r->cur.buf = malloc(READ_BUF)) == NULL) {
        free(r);
        return SIEVE_ENOMEM;
    }
    r->cur.cap = READ_BUF;
    r->cur.fd = -1;
    r->j = j;
    r->seg = from.segment;
    r->off = from.offset;
    *out = r;
    return SIEVE_OK;
}

void journal_reader_close(journal_reader *r)
{
    if (r == NULL)
        return;
    if (r->cur.fd >= 0)
        close(r->cur.fd);
    free(r->cur.buf);
    free(r);
}

journal_pos journal_reader_tell(const journal_reader *r)
{
    return (journal_pos){r->seg, r->off};
}

const char *journal_reader_message(const journal_reader *r)
{
    return r->msg;
}

/* Opens the reader's segment, checking its header. */
static int reader_open_segment(journal_reader *r)
{
    char path[PATH_MAX];
    uint64_t size;
    int fd = open_segment(r->j, r->seg, O_RDONLY, &size, path, sizeof path, r->msg);
    if (fd < 0)
        return SIEVE_EIO;
    int rc = check_header(fd, path, r->seg, size, NULL, r->msg);
    if (rc != SIEVE_OK) {
        close(fd);
        return rc;
    }
    r->cur.fd = fd;
    r->cur.len = 0;
    r->cur.limit = size;
    return SIEVE_OK;
}

/* Sets how far the reader may go in its segment: the published tail in
 * the segment being written, the file's end in a full one. JOURNAL_END
 * when the reader is at the tail. */
static int reader_limit(journal_reader *r)
{
    if (r->cur.fd >= 0 && (!r->at_tail || r->off < r->cur.limit))
        return SIEVE_OK; /* a full segment, or what was published is not read yet */
    journal_pos t = journal_tail(r->j);
    if (r->seg > t.segment || (r->seg == t.segment && r->off >= t.offset))
        return JOURNAL_END;
    if (r->cur.fd < 0) {
        int rc = reader_open_segment(r);
        if (rc != SIEVE_OK)
            return rc;
    }
    r->at_tail = r->seg == t.segment;
    if (r->at_tail) {
        r->cur.limit = t.offset;
        return SIEVE_OK;
    }
    /* Full since the reader last looked: its size is final now. */
    struct stat st;
    if (fstat(r->cur.fd, &st) != 0) {
        char path[PATH_MAX];
        path_of(r->j, r->seg, path, sizeof path);
        say(r->msg, "%s: %s", path, strerror(errno));
        return SIEVE_EIO;
    }
    r->cur.limit = (uint64_t)st.st_size;
    return SIEVE_OK;
}

static void reader_next_segment(journal_reader *r)
{
    close(r->cur.fd);
    r->cur.fd = -1;
    r->cur.len = 0;
    r->at_tail = false;
    r->seg++;
    r->off = HEADER_SIZE;
}

int journal_read(journal_reader *r, uint8_t *type, const void **payload, uint32_t *len,
                 journal_pos *pos)
{
    for (;;) {
        int rc = reader_limit(r);
        if (rc != SIEVE_OK)
            return rc;
        rec_kind k;
        rec_view v;
        rc = parse_record(&r->cur, r->off, &k, &v);
        if (rc != SIEVE_OK) {
            char path[PATH_MAX];
            path_of(r->j, r->seg, path, sizeof path);
            say(r->msg, "%s: offset %" PRIu64 ": reading: %s", path, r->off, strerror(errno));
            return rc;
        }
        if (k == REC_END) {
            reader_next_segment(r);
            continue;
        }
        if (k != REC_OK) {
            char path[PATH_MAX];
            path_of(r->j, r->seg, path, sizeof path);
            say(r->msg, "%s: offset %" PRIu64 ": %s", path, r->off, kind_text(k));
            return kind_status(k);
        }
        if (type != NULL)
            *type = v.type;
        if (payload != NULL)
            *payload = v.payload;
        if (len != NULL)
            *len = v.len;
        if (pos != NULL)
            *pos = (journal_pos){r->seg, r->off};
        r->off += v.size;
        return SIEVE_OK;
    }
}
