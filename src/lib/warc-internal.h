/* warc-internal.h - the pieces the WARC writer, reader and indexer share.
 *
 * warc-record.c   record IDs, dates, numbers (digests: sha1.c)
 * warc-spool.c    a record's block as it is fed: memory, then a temporary
 *                 file, raw or deflated into a gzip member's body
 * warc-zq.c       .gz archives: the compression threads and their bounded
 *                 hand-off queue
 * warc.c          the archive: files, rotation, the lock, appending
 * warc-fetch.c    a fetch's two records as they are fed; batches
 * warc-archive.h  what those two share
 * warc-names.c    the names of an archive's files, numbered in a series
 * warc-read.c     reading records back, plain or gzip members
 * cdxj.c          SURT keys and the CDXJ index
 * cdxj-sort.c     its lines sorted in bounded memory (cdxj-sort.h)
 *
 * None of it is exported; the tests reach it through the static library. */
#ifndef SIEVE_WARC_INTERNAL_H
#define SIEVE_WARC_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

#include "sha1.h"
#include "sieve/warc.h"

/* ---- warc-record.c ---- */

/* "sha1:" and 32 base32 characters, with the NUL. */
#define WARC_DIGEST_SIZE SIEVE_WARC_DIGEST_SIZE
_Static_assert(WARC_DIGEST_SIZE == SIEVE_SHA1_TEXT_SIZE, "a digest's text");

/* "2026-11-24T10:00:00.123456Z" with the NUL. */
#define WARC_DATE_SIZE 28

/* A random (version 4) "urn:uuid:..." from getrandom(). SIEVE_OK or
 * SIEVE_EIO. */
int warc_new_id(char out[SIEVE_WARC_ID_SIZE]);

/* Microseconds since 1970 UTC, now. */
int64_t warc_now_us(void);

/* Formats a time as WARC 1.1's WARC-Date. */
void warc_format_date(int64_t us, char out[WARC_DATE_SIZE]);

/* A growable byte buffer. */
typedef struct warc_buf {
    char *data;
    size_t len, cap;
} warc_buf;

/* Appends len bytes (data NULL: len bytes left for the caller to fill)
 * and keeps a NUL after them. SIEVE_OK or SIEVE_ENOMEM. */
int warc_buf_add(warc_buf *b, const void *data, size_t len);
int warc_buf_addf(warc_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Appends the strings given, up to a NULL: a record's header is made of
 * a dozen of them per record, and formatting them with printf cost more
 * than the rest of making the header. SIEVE_OK or SIEVE_ENOMEM. */
int warc_buf_cat(warc_buf *b, ...);
/* v in decimal, NUL-terminated, into out (21 bytes hold any); returns out. */
char *warc_u64_text(uint64_t v, char out[21]);
void warc_buf_free(warc_buf *b);
/* Empties b, keeping its memory when it is no more than keep bytes. */
void warc_buf_reuse(warc_buf *b, size_t keep);

/* Case-insensitive: does the header line at line (of len bytes) have
 * this name? */
bool warc_line_is(const char *line, size_t len, const char *name);

/* ---- warc-names.c ---- */

/* An archive's path split for its series: base-NNNNN+ext. */
typedef struct warc_series {
    char *base;      /* the path without its extension (malloc'd) */
    const char *ext; /* ".warc.gz", ".warc", ".gz", or "" for any other */
} warc_series;

/* SIEVE_OK or SIEVE_ENOMEM. */
int warc_series_init(warc_series *s, const char *path);
void warc_series_free(warc_series *s);
/* The name of file number seq, malloc'd; NULL when out of memory. */
char *warc_series_name(const warc_series *s, unsigned seq);
/* The highest number of the series in its directory; 0 for none. */
unsigned warc_series_highest(const warc_series *s);

bool warc_ends_with(const char *s, const char *suffix);
/* What follows the last '/', or path. */
const char *warc_last_component(const char *path);
/* The directory of path, malloc'd ("." for a bare name). */
char *warc_dir_of(const char *path);

/* ---- warc-spool.c ---- */

/* Deflate streams kept for reuse. Setting one up costs a quarter of a
 * megabyte of fresh memory, and freeing it gives the memory back to the
 * kernel: per record, that page-faulting and unmapping cost ten times the
 * compression of a 7 KB page. A stream is taken when a block starts and
 * given back, reset, when it ends; the pool keeps as many as were ever in
 * use at once. Thread-safe. */
typedef struct warc_zfree {
    void **v;
    size_t n, cap;
} warc_zfree;

typedef struct warc_zpool {
    pthread_mutex_t lock;
    warc_zfree streams; /* z_stream *, reset */
    /* libdeflate's compressors, for blocks deflated whole (warc-spool.c),
     * kept the same way: one costs some hundreds of kilobytes to set up. */
    warc_zfree whole;
    int level, window_bits, mem_level;
} warc_zpool;

void warc_zpool_init(warc_zpool *p, int level, int window_bits, int mem_level);
/* A stream ready to compress (raw deflate), or NULL when out of memory. */
z_stream *warc_zpool_get(warc_zpool *p);
/* Takes z back, reset; NULL is a no-op. */
void warc_zpool_put(warc_zpool *p, z_stream *z);
void warc_zpool_free(warc_zpool *p);

/* Where a block goes as it is fed: bytes, raw or deflated (then it is the
 * deflate body of a gzip member, see warc-spool.c), kept in memory up to
 * a limit and in an unlinked temporary file beyond it. */
typedef struct warc_spool {
    unsigned char *mem; /* in memory, or the file's write buffer; a kept
                         * block's scratch (warc_gzip_member) */
    size_t mem_len, mem_cap, limit;
    int fd;           /* -1 while everything is in memory */
    uint64_t size;    /* stored bytes, memory and file */
    const char *dir;  /* for the temporary file */
    warc_zpool *pool; /* gzip: where the deflate stream comes from; NULL: raw */
    /* gzip: the block as fed, while it fits the limit, to be deflated
     * whole at the end; past the limit it goes through z instead */
    unsigned char *raw;
    size_t raw_len, raw_cap;
    z_stream *z;  /* gzip, streaming: the block's deflate stream */
    uint32_t crc; /* gzip, streaming: of the bytes fed */
    uint64_t fed; /* bytes fed */
    bool finished;
    bool whole; /* gzip: finished with the block kept, to be deflated with its header */
} warc_spool;

/* dir and pool are kept by reference; pool NULL stores the block raw. */
void warc_spool_init(warc_spool *s, const char *dir, size_t limit, warc_zpool *pool);

/* A temporary file in dir with no name (O_TMPFILE, or a name unlinked at
 * once), read-write: closing it frees its space, and a kill leaves
 * nothing. The fd, or -1 with errno set. */
int warc_open_tmp(const char *dir);

/* SIEVE_OK, SIEVE_EIO or SIEVE_ENOMEM. */
int warc_spool_write(warc_spool *s, const void *data, size_t len);
/* Ends the block: a gzip spool's deflate stream is finished and given
 * back, or its kept block waits for warc_gzip_member(). Then the spool is
 * read-only. */
int warc_spool_finish(warc_spool *s);
/* Appends the stored bytes at fd's position with write(2). SIEVE_OK or
 * SIEVE_EIO. */
int warc_spool_copy_to(warc_spool *s, int fd);
void warc_spool_free(warc_spool *s);
/* Empties s for a new block with the same settings, keeping its buffer
 * when it is no more than keep bytes. */
void warc_spool_reuse(warc_spool *s, size_t keep);

/* The window and memory level of the streams that compress WARC headers:
 * a header is well under a kilobyte, and small tables reset fast. */
#define WARC_HEAD_WINDOW_BITS 10
#define WARC_HEAD_MEM_LEVEL   2

/* One gzip member of a WARC header (text) and a finished spool's block;
 * the trailer goes into trailer[8]. A kept block (body->whole) is
 * deflated with the text, and the whole member but its trailer goes into
 * out, the spool storing nothing. A streamed one is the spool's deflate
 * body: out gets the member's first part (gzip header and the text
 * deflated with a stream from heads, flushed to a byte boundary). */
int warc_gzip_member(const char *text, size_t len, warc_zpool *heads, warc_spool *body,
                     warc_buf *out, unsigned char trailer[8]);

/* ---- warc-zq.c ---- */

/* Bytes of jobs gathered before they are handed to the threads at once: a
 * page's whole fetch, as a rule. A bigger job is split. */
#define WARC_ZQ_PIECE (32u * 1024)

typedef struct warc_zq warc_zq;

/* One stream of jobs (a fetch's), run in order by one thread at a time.
 * Zero it before use; open is its feeder's, the rest the queue's, under
 * its lock. */
typedef struct warc_zq_stream {
    struct piece *open;        /* the feeder's: jobs not handed over yet */
    struct piece *head, *tail; /* handed over, waiting, in order */
    struct warc_zq_stream *next_ready;
    bool listed;  /* on the ready list */
    bool busy;    /* a thread runs its pieces */
    bool waiting; /* a caller waits for it to be idle */
    int err;      /* the first job error: it sticks */
    /* set by warc_zq_finish(): called once the stream is idle */
    void (*on_idle)(void *ctx, struct warc_zq_stream *s);
} warc_zq_stream;

/* Runs one job, in a compression thread: op and the piece's bytes as
 * pushed. Returns SIEVE_OK or the error that sticks to the stream. */
typedef int (*warc_zq_fn)(void *ctx, warc_zq_stream *s, int op, const void *data, size_t len);

typedef struct warc_zq_stats {
    uint64_t full_waits;   /* pushes that waited for room */
    uint64_t full_wait_ns; /* how long they waited, together */
    uint64_t end_wait_ns;  /* time spent in warc_zq_wait() for a stream's jobs */
    uint64_t cpu_ns;       /* CPU time of the threads, waits included */
} warc_zq_stats;

/* Starts threads (at least 1) running fn(ctx, ...) over at most bound
 * queued bytes. SIEVE_OK or SIEVE_ENOMEM. */
int warc_zq_start(warc_zq **out, unsigned threads, size_t bound, warc_zq_fn fn, void *ctx);
/* Copies a job behind the stream's other jobs, to be handed over when
 * its piece is full (or at warc_zq_wait()); a hand-off waits while the
 * queue is full. Returns the stream's sticky error, if any, instead of
 * handing over. */
int warc_zq_push(warc_zq *q, warc_zq_stream *s, int op, const void *data, size_t len);
/* Hands over s's jobs and waits until every one has run; returns its
 * sticky error. */
int warc_zq_wait(warc_zq *q, warc_zq_stream *s);
/* Hands over s's jobs and returns without waiting: once every one has
 * run, on_idle(ctx, s) is called, once, from the thread that ran the
 * last (or from this one, when none is left to run), and s is never
 * touched again by the queue: on_idle may free it. No job may be pushed
 * to s after this. */
void warc_zq_finish(warc_zq *q, warc_zq_stream *s, void (*on_idle)(void *ctx, warc_zq_stream *s));
/* Drops s's jobs not yet run and waits for the one running, if any: then
 * s is the caller's again, to free. */
void warc_zq_drop(warc_zq *q, warc_zq_stream *s);
void warc_zq_get_stats(warc_zq *q, warc_zq_stats *out);
/* Runs what is queued, joins the threads and frees q. NULL is a no-op. */
void warc_zq_stop(warc_zq *q);

/* ---- warc-read.c ---- */

typedef struct warc_reader warc_reader;

/* One record's header, as read; valid until the next call. */
typedef struct warc_rec {
    uint64_t offset, length; /* stored: the record, or its gzip member */
    bool gzip;               /* the file is gzip members */
    uint64_t content_length;
    const char *header; /* the header, version line included, NUL-terminated */
    size_t header_len;
} warc_rec;

/* Receives a record's block, in order, in pieces; returns false when it
 * wants no more of it (the rest is skipped, by seeking where it can). */
typedef bool (*warc_block_fn)(void *ctx, const void *data, size_t len);

int warc_reader_open(warc_reader **out, const char *path);
/* Reads the next record whole, handing its block to fn (may be NULL).
 * SIEVE_OK: *rec filled. SIEVE_EDRAINED: the file ended cleanly.
 * SIEVE_ETRUNCATED: it ends inside a record. SIEVE_EFORMAT: not a WARC
 * record (or a gzip member holding more than one). SIEVE_EIO, SIEVE_ENOMEM.
 * After an error every call returns it again. */
int warc_reader_next(warc_reader *r, warc_rec *rec, warc_block_fn fn, void *ctx);
/* The offset just past the last record read whole. */
uint64_t warc_reader_end(const warc_reader *r);
/* After SIEVE_EFORMAT: what was found there, in words. */
const char *warc_reader_why(const warc_reader *r);
void warc_reader_free(warc_reader *r);

/* Puts into out (emptied first) the value of the header field name
 * (case-insensitive) in a record's header or an HTTP head, trimmed; the
 * values of several fields of that name are joined with ", ", as a WHATWG
 * Headers object joins them. Returns false when the field is absent (or
 * memory ran out). */
bool warc_field(const char *header, size_t header_len, const char *name, warc_buf *out);

/* ---- cdxj.c ---- */

/* The SURT key warcio's cdx-index makes of url, malloc'd; NULL on ENOMEM. */
char *warc_surt(const char *url);

/* sieve_warc_index() with its sort's memory budget and merge fan-in
 * (cdxj-sort.h) given: the tests make them small. */
int warc_index_sorted(const char *const *paths, size_t n, FILE *out, const sieve_logger *lg,
                      size_t budget, size_t fanin);

#endif
