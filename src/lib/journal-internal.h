/* journal-internal.h - what the journal's three files share (internal):
 * journal.c encodes records and appends them, journal-open.c checks the
 * segments at an open and repairs a crash's torn tail, journal-read.c
 * parses records and reads them back. journal.c describes the format. */
#ifndef SIEVE_JOURNAL_INTERNAL_H
#define SIEVE_JOURNAL_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* ---- journal.c ---- */

/* Writes segment number segment's header, HEADER_SIZE bytes, at p. */
void jnl_encode_header(unsigned char *p, uint32_t segment);

/* Formats a message into msg: cap bytes, or a handle's MSG_SIZE. */
void jnl_vsay(char *msg, size_t cap, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
void jnl_say(char *msg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* fsync(2) of a directory; 0, or -1 with errno. A file system that cannot
 * sync directories (EINVAL) counts as done. */
int jnl_sync_dirfd(int dirfd);

/* A segment's file name, "NNNNNNNN.log", into 16 bytes; and its path. */
void jnl_segment_name(char *name, uint32_t segment);
void jnl_path_of(const journal *j, uint32_t seg, char *path, size_t cap);

/* Puts "PATH: what: strerror(errno)" in j's message; SIEVE_EIO, errno
 * kept. */
int jnl_fail_errno(journal *j, uint32_t seg, const char *what);

/* Makes the writer's first segment and tail visible to readers. */
void jnl_publish(journal *j);

/* Creates segment seg with its header and syncs the directory; on success
 * it becomes the current segment. */
int jnl_create_segment(journal *j, uint32_t seg);

/* ---- journal-open.c ---- */

/* Opens segment seg (flags for openat(2)) and gets its size; the
 * descriptor, or -1 with the path and errno in msg. */
int jnl_open_segment(journal *j, uint32_t seg, int flags, uint64_t *size, char *path, size_t cap,
                     char *msg);

/* Checks the header of segment number seg, open as fd with size bytes.
 * *torn (may be NULL: then a short header is refused) is set when the
 * file is a strict prefix of the header expected, as a crash while
 * creating it leaves it. */
int jnl_check_header(int fd, const char *path, uint32_t seg, uint64_t size, bool *torn, char *msg);

/* ---- journal-read.c ---- */

/* Reads what is at off. SIEVE_ENOMEM or SIEVE_EIO for failures, else the
 * rec_kind in *kind, and for REC_OK and REC_END the record in *v (its
 * payload valid until the cursor moves). */
int jnl_parse_record(cursor *c, uint64_t off, rec_kind *kind, rec_view *v);

/* What a kind of damage is, in words and as a status. */
const char *jnl_kind_text(rec_kind k);
int jnl_kind_status(rec_kind k);

/* Whether a valid record starts anywhere in [from, limit): what tells
 * damage inside the log from a torn tail. */
int jnl_valid_record_after(cursor *c, uint64_t from, bool *found);

#endif
