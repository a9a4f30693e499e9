/* journal.h - the durable frontier's append-only log (internal).
 *
 * A journal is a directory of numbered segment files holding typed
 * records. A record handed to journal_append() is in the kernel when the
 * call returns, so it survives a kill -9 of the process; journal_sync()
 * makes what was appended survive a power loss as well. Opening a journal
 * cuts a torn tail left by a crash and refuses any other damage with a
 * message naming the file, the offset and what is wrong. journal.c
 * describes the format.
 *
 * Threads: the writer's calls (append, sync, drop, close) come from one
 * thread at a time; each reader is used by one thread at a time, and
 * readers may run in other threads while the writer appends. */
#ifndef SIEVE_JOURNAL_H
#define SIEVE_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sieve/status.h"

/* Largest payload of one record. */
#define JOURNAL_PAYLOAD_MAX (1u << 20)

/* Segment sizes: the default, and the bounds journal_open() accepts. */
#define JOURNAL_SEGMENT_DEFAULT (64ull << 20)
#define JOURNAL_SEGMENT_MIN     256ull
#define JOURNAL_SEGMENT_MAX     (1ull << 40)

/* Record types are the caller's, from 1 to 255; 0 is the journal's own. */
#define JOURNAL_TYPE_MIN 1u

/* journal_read()'s answer at the tail: nothing more to read for now. */
#define JOURNAL_END SIEVE_EAGAIN

typedef struct journal journal;
typedef struct journal_reader journal_reader;

/* Where a record starts: its segment's number and its byte offset in that
 * segment. Positions of records grow in the order they were appended. */
typedef struct journal_pos {
    uint32_t segment;
    uint64_t offset;
} journal_pos;

/* What journal_open() repaired: a torn tail cut, or a last segment whose
 * header a crash left incomplete, rewritten. */
typedef struct journal_recovery {
    bool repaired;      /* false: the journal was clean, the rest is zero */
    journal_pos at;     /* the new tail, where the damage began */
    uint64_t bytes_cut; /* bytes removed from the end of the last segment */
    char what[256];     /* the file, the offset and what was found there */
} journal_recovery;

/* One record of a batch. */
typedef struct journal_record {
    uint8_t type;
    const void *payload;
    size_t len;
} journal_record;

/* <0, 0 or >0 as a is before, at or after b. */
int journal_pos_cmp(journal_pos a, journal_pos b);

/* Opens the journal in directory dir, creating dir (one level) and the
 * first segment if missing. segment_max_bytes (0: the default) bounds a
 * segment's size; a record larger than that gets a segment of its own.
 * Checks every segment's header and the end record of every segment but
 * the last, and reads the last one through. A torn tail there is cut and
 * described in *rec (may be NULL); other damage (a bad record with valid
 * data after it, a segment missing from the sequence, a bad header, an
 * unknown version) is refused: SIEVE_EFORMAT, SIEVE_ECHECKSUM,
 * SIEVE_ETRUNCATED or SIEVE_EVERSION, with a message in msg (cap bytes,
 * may be NULL). SIEVE_EIO with errno for system errors, SIEVE_EINVAL for
 * arguments. One journal_open() per directory at a time: the state
 * directory's lock (statedir.h) sees to it. */
int journal_open(journal **out, const char *dir, uint64_t segment_max_bytes, journal_recovery *rec,
                 char *msg, size_t cap);

/* Closes the files and frees j; readers must be closed first. Does not
 * sync: call journal_sync() first where a power loss matters. SIEVE_EIO if
 * closing a file failed. */
int journal_close(journal *j);

/* Appends one record in one write(2); *pos (may be NULL) gets its position.
 * SIEVE_EINVAL for type 0, SIEVE_ETOOLONG above JOURNAL_PAYLOAD_MAX.
 * SIEVE_EIO with errno (ENOSPC, EFBIG...) leaves the journal as it was
 * before the call; EFBIG comes instead of death by SIGXFSZ only when the
 * process ignores that signal. */
int journal_append(journal *j, uint8_t type, const void *payload, size_t len, journal_pos *pos);

/* Appends n records with as few write(2)s as its buffer allows. pos (n
 * entries, may be NULL) gets their positions. *written (may be NULL) gets
 * how many were appended: n on success; on SIEVE_EIO the journal ends
 * after the last complete record, and those before it stay. Argument
 * errors are found before anything is written. */
int journal_append_batch(journal *j, const journal_record *recs, size_t n, journal_pos *pos,
                         size_t *written);

/* Bytes a record of a payload of len bytes takes in a segment. */
#define JOURNAL_RECORD_SIZE(len) ((size_t)(len) + 9u)

/* Encodes a record whose payload is head (n bytes) then body (m bytes),
 * its checksum included, at p, which holds JOURNAL_RECORD_SIZE(n + m)
 * bytes; returns that size. type is 1..255 and n + m at most
 * JOURNAL_PAYLOAD_MAX: the caller's to see to. A writer that keeps
 * records waiting packs them this way, so that they go out from its own
 * buffer with journal_append_packed() and are copied nowhere else. */
size_t journal_encode(unsigned char *p, uint8_t type, const void *head, size_t n, const void *body,
                      size_t m);

/* journal_encode() in two steps: the record without its checksum, then
 * journal_seal() on it, which adds the checksum and returns the record's
 * size. A writer that packs many records at once seals them after the
 * last: hashing bytes just stored waits for the stores to drain (the
 * loads span several of them, so none forwards), and a page of links
 * later they are plain reads. */
size_t journal_encode_unsealed(unsigned char *p, uint8_t type, const void *head, size_t n,
                               const void *body, size_t m);
size_t journal_seal(unsigned char *p);

/* Reads back a record journal_encode() wrote at p, of which avail bytes
 * are at hand: its size, with *type, *payload (inside p) and *len; 0 if
 * avail does not hold the whole record; SIZE_MAX if it is not one (a
 * length past JOURNAL_PAYLOAD_MAX, or a checksum that does not match).
 * For files that keep journal records outside a journal. */
size_t journal_decode(const unsigned char *p, size_t avail, uint8_t *type,
                      const unsigned char **payload, uint32_t *len);

/* Appends the records journal_encode() wrote one after the other into buf
 * (len bytes), in one write(2) per segment they go to, from buf itself.
 * If mark is the offset in buf of one of them (SIZE_MAX: none), *mark_pos
 * gets its position. SIEVE_EIO with errno leaves the journal ending after
 * the last complete record, as journal_append_batch() does. */
int journal_append_packed(journal *j, const unsigned char *buf, size_t len, size_t mark,
                          journal_pos *mark_pos);

/* Makes everything appended so far durable: fdatasync of the segment being
 * written (full segments were synced, and the directory with them, when
 * the next one was created). SIEVE_EIO with errno. */
int journal_sync(journal *j);

/* A new descriptor of the segment being written: fdatasync() on it, even
 * in another thread while appends go on, makes durable everything
 * appended before this call (full segments were synced when the next
 * began). The caller closes it. -1 with errno. */
int journal_dup_fd(journal *j);

/* Deletes the segments numbered below segment, oldest first, and syncs the
 * directory. segment may not be above the tail's; the tail's when its
 * segment is not made yet keeps the sealed one before it. Readers must
 * have left those segments. */
int journal_drop_before(journal *j, uint32_t segment);

/* The first record's position (of the oldest segment), and the tail: where
 * the next record will go, unless a rotation moves it. */
journal_pos journal_begin(journal *j);
journal_pos journal_tail(journal *j);

/* The last failure's explanation (the file, the offset, errno's text); ""
 * when there was none. Valid until the next call on j. */
const char *journal_message(const journal *j);

/* Opens a reader at from: journal_begin(), a record's position, a reader's
 * journal_reader_tell() or journal_tail(). SIEVE_EINVAL for a position in
 * a dropped segment or past the tail. */
int journal_reader_open(journal *j, journal_pos from, journal_reader **out);

/* Reads the next record: SIEVE_OK with its type, its payload (valid until
 * the next call on r) and length, and its position (each out may be
 * NULL); JOURNAL_END at the tail (call again once more is appended). A
 * damaged record gives SIEVE_ECHECKSUM, SIEVE_EFORMAT or SIEVE_ETRUNCATED
 * and journal_reader_message() says where; the reader stays at it. */
int journal_read(journal_reader *r, uint8_t *type, const void **payload, uint32_t *len,
                 journal_pos *pos);

/* The position of the record the next journal_read() returns. */
journal_pos journal_reader_tell(const journal_reader *r);

/* The last failure's explanation, "" when there was none. */
const char *journal_reader_message(const journal_reader *r);

void journal_reader_close(journal_reader *r);

#endif
