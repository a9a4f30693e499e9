/* sieve/warc.h - WARC 1.1 archives of fetches, and their CDXJ index.
 *
 * A sieve_warc writes what a crawl fetched as WARC 1.1 records (ISO
 * 28500:2017), the format web archives replay: per fetch, a request record
 * (the HTTP request as sent) and a response record (the HTTP response as
 * received), each naming the other in WARC-Concurrent-To, written next to
 * each other; every file starts with a warcinfo record. It needs no crawl:
 * any program that speaks HTTP can feed it.
 *
 *     sieve_warc_options o;
 *     sieve_warc_options_init(&o);
 *     o.max_bytes = 1000000000;              // crawl-00001.warc.gz, -00002, ...
 *     sieve_warc *w;
 *     sieve_warc_open(&w, "crawl.warc.gz", &o);
 *     sieve_warc_fetch_info fi = {.target_uri = url, .ip_address = "192.0.2.1"};
 *     sieve_warc_fetch *f;
 *     sieve_warc_fetch_begin(w, &fi, &f);
 *     sieve_warc_fetch_request_head(f, req, req_len);   // as sent
 *     sieve_warc_fetch_response_head(f, line, n);       // each header line
 *     sieve_warc_fetch_response_body(f, chunk, n);      // each body chunk
 *     sieve_warc_fetch_result res;
 *     sieve_warc_fetch_end(f, NULL, &res);              // res.response: where
 *     sieve_warc_close(w);
 *
 * What is stored. The response block is the status line and header lines
 * as received, then the body. The body must be given without its
 * transfer coding (de-chunked, as curl delivers it), and any
 * Transfer-Encoding header line is stored renamed to
 * X-Archive-Orig-Transfer-Encoding, so that no reader de-chunks it again.
 * The content coding is kept: a body the server sent with
 * Content-Encoding: gzip must be fed still gzipped, as it came over the
 * wire, and its Content-Encoding header stays, so the archive replays the
 * exact bytes. WARC-Payload-Digest is the SHA-1 of the body as stored
 * (encoded, de-chunked); WARC-Block-Digest that of the whole block. Both
 * are "sha1:" and the digest in base32, as other WARC tools write them.
 * The same rules hold for the request and its body. A .gz archive
 * computes both digests in its compression threads, on the same bytes.
 *
 * Record fields: WARC-Type, WARC-Record-ID (a random UUID v4 from
 * getrandom()), WARC-Date (UTC with microseconds, as WARC 1.1 allows:
 * 2026-11-24T10:00:00.123456Z), WARC-Target-URI, WARC-IP-Address (when
 * given), WARC-Warcinfo-ID (the warcinfo record of the record's file),
 * WARC-Concurrent-To, WARC-Truncated (when the caller says the body was
 * cut), WARC-Block-Digest, WARC-Payload-Digest, Content-Type
 * (application/http; msgtype=request or msgtype=response) and
 * Content-Length. The warcinfo record carries software, format ("WARC File
 * Format 1.1"), conformsTo and the caller's own fields (the options of the
 * crawl, say).
 *
 * Files. A name ending in ".gz" is written as one gzip member per record,
 * so a reader can seek to any record's offset and inflate it alone; any
 * other name is plain. With max_bytes (or series) the archive is a series
 * of numbered files: "crawl.warc.gz" becomes crawl-00001.warc.gz,
 * crawl-00002.warc.gz, ... (five digits before the extension), a new one
 * started before a fetch whose two records would take the current file
 * past max_bytes. A fetch's records are never split across files, and a
 * fetch larger than max_bytes gets a file of its own.
 *
 * Streaming. A body of any size costs a fixed amount of memory: a record's
 * header holds its length and digests, which are known only at its end, so
 * the block is hashed as it is fed and spooled - kept in memory up to
 * spool_memory bytes, then in an unlinked temporary file - and written
 * after its header at sieve_warc_fetch_end(). For .gz files a block of
 * up to spool_memory bytes is kept as fed and deflated with its header
 * once that is made (libdeflate, faster than a stream), a larger one is
 * deflated as it comes, so a record holds up to spool_memory bytes as fed
 * and, while it is deflated, twice as much again (the block beside its
 * header for libdeflate, and the output); on their way to the
 * compression threads
 * the bytes take at most 32 KiB per fetch being fed plus gzip_queue_bytes
 * for the whole archive.
 *
 * Threads. One archive may be fed by any number of threads at once, each
 * with fetches of its own: a fetch belongs to one thread at a time, and
 * the archive's lock is held only to append a finished fetch's two
 * records, so records never interleave. A .gz archive compresses on
 * threads of its own (gzip_threads): the feeding calls copy each piece
 * into a queue of at most gzip_queue_bytes and return, waiting only when
 * the queue is full (counted, see sieve_warc_stats()); the archive's
 * threads hash, compress and spool it, one fetch's pieces in order on one
 * thread at a time. sieve_warc_fetch_end() waits for its own fetch's
 * pieces, appends its records from a compression thread and returns
 * when they are written, as for a plain archive;
 * sieve_warc_fetch_end_async() returns at once and is called back when
 * they are.
 *
 * Durability. Records are appended with write(2), whole, so a killed
 * process leaves every record it finished readable (at most the one being
 * appended is torn); sieve_warc_sync() and sieve_warc_close() also fsync,
 * for a crash of the machine. So that such an fsync finds little left to
 * write, a thread of the archive's fdatasync()s the file each time
 * write_behind bytes were appended: the fsync at the end of a crawl had
 * been 6% of its time (bench/results/warc.txt, sets 14 and 25). A
 * rotation's fsync and a checkpoint's are as short. A sync of that
 * thread's that fails makes every later sieve_warc_sync(), rotation and
 * sieve_warc_close() fail too (SIEVE_EIO), since the kernel reports such
 * an error once.
 * A resumed crawl opens its archive with SIEVE_WARC_NEXT, which cuts a
 * torn last fetch from the last file and goes on in a new one, or with
 * SIEVE_WARC_APPEND, which goes on in the last file after that cut;
 * sieve_warc_complete_end() tells where a file's last complete record
 * ends without changing it.
 *
 * The CDXJ index, sieve_warc_index(), reads archives back (plain or gzip
 * members) and writes the lines pywb replays from, as warcio's cdx-index
 * makes them, sorted.
 *
 * Errors: functions return SIEVE_OK or a negative status (sieve/status.h);
 * the sentence saying what failed goes to the options' logger. */
#ifndef SIEVE_WARC_H
#define SIEVE_WARC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sieve/export.h"
#include "sieve/log.h"
#include "sieve/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sieve_warc sieve_warc;
typedef struct sieve_warc_fetch sieve_warc_fetch;

/* How sieve_warc_open() treats files already there. */
typedef enum sieve_warc_mode {
    /* A new archive: fails with SIEVE_EIO (errno EEXIST) when the file (a
     * series' first file) already exists. */
    SIEVE_WARC_CREATE = 0,
    /* Goes on with the file (a series' last file): a torn last record is
     * cut (and logged), and so is a request record left without its
     * response (a fetch's two records are appended together, so only a
     * kill parts them), then a new warcinfo record and the new fetches are
     * appended. Creates the file when there is none. Fails with
     * SIEVE_EFORMAT, changing nothing, when the file holds something that
     * is not a WARC record before its end. */
    SIEVE_WARC_APPEND = 1,
    /* Resumes without rewriting a complete record: the archive's last file
     * (a series' highest; else path, or its highest numbered file after
     * an earlier resume) loses a torn fetch at its end, as under
     * SIEVE_WARC_APPEND, and is closed; the new fetches go to a new file
     * numbered after it ("crawl-00001.warc.gz" after "crawl.warc.gz").
     * A last file left with no whole record (a kill before its warcinfo
     * was written) takes the new fetches itself, so no file of the
     * archive stays empty. Without any file, the archive starts as under
     * SIEVE_WARC_CREATE. */
    SIEVE_WARC_NEXT = 2,
} sieve_warc_mode;

/* Default gzip level (zlib's). */
#define SIEVE_WARC_GZIP_LEVEL 6

/* gzip_threads: one compression thread per online core. A thread
 * deflates about 60 MB/s at level 6, and a crawl's workers, one per core,
 * receive pages faster than that; as many threads as workers compress as
 * fast as the workers did when each compressed its own pages. */
#define SIEVE_WARC_GZIP_THREADS 0

/* Default bound of the bytes waiting for the compression threads. */
#define SIEVE_WARC_GZIP_QUEUE (256u * 1024)

/* Default bytes of a record kept in memory before it spools to a file. */
#define SIEVE_WARC_SPOOL_MEMORY (256u * 1024)

/* Default bytes appended between two starts of writing the archive to the
 * disk in the background (see Durability). */
#define SIEVE_WARC_WRITE_BEHIND (16u << 20)

/* Longest HTTP head (status or request line and headers) accepted. */
#define SIEVE_WARC_MAX_HEAD (1u << 20)

/* Room for a record ID with its NUL: "urn:uuid:" and 36 characters. */
#define SIEVE_WARC_ID_SIZE 46

/* Room for a digest with its NUL: "sha1:" and 32 base32 characters. */
#define SIEVE_WARC_DIGEST_SIZE 38

typedef struct sieve_warc_options {
    uint64_t max_bytes;      /* rotate before a fetch would take a file past this;
                                0 (default): no rotation */
    bool series;             /* numbered file names even without max_bytes */
    sieve_warc_mode mode;    /* default SIEVE_WARC_CREATE */
    int gzip_level;          /* .gz files: 1 (fast) .. 9 (small); default 6 */
    unsigned gzip_threads;   /* .gz files: threads that compress, 1 .. 64; default
                                SIEVE_WARC_GZIP_THREADS (0): one per core */
    bool gzip_inline;        /* .gz files: no threads, the feeding thread compresses
                                as it feeds (a program with one thread) */
    size_t gzip_queue_bytes; /* .gz files: bytes fed and not yet compressed at
                                most, before a feeding call waits; default
                                SIEVE_WARC_GZIP_QUEUE; at least 1 */
    const char *software;    /* warcinfo "software"; default "sieve/VERSION" */
    const char *const *info; /* more warcinfo fields, each "name: value" */
    size_t n_info;
    const char *tmp_dir;   /* where blocks spool; default: the archive's directory */
    size_t spool_memory;   /* default SIEVE_WARC_SPOOL_MEMORY; at least 4096 */
    uint64_t write_behind; /* a thread of the archive's makes the file durable
                              each time this many bytes were appended;
                              default SIEVE_WARC_WRITE_BEHIND; 0: no thread */
    sieve_logger logger;   /* default: messages dropped */
} sieve_warc_options;

/* What one fetch is about. */
typedef struct sieve_warc_fetch_info {
    const char *target_uri; /* the URL fetched: required, no spaces or control
                               bytes */
    const char *ip_address; /* the server's IPv4 or IPv6 address; NULL: none */
    int64_t date_us;        /* when the request was sent, microseconds since
                               1970 UTC; 0: now */
} sieve_warc_fetch_info;

/* Where a record was stored. */
typedef struct sieve_warc_location {
    const char *path; /* the file, as the archive named it; valid until
                         sieve_warc_close() */
    const char *name; /* its last component, inside path */
    uint64_t offset;  /* of the record's first byte (.gz: of its gzip member) */
    uint64_t length;  /* .gz: the member's bytes (compressed); plain: the
                         record's bytes up to its block's end - the CRLF
                         CRLF after it is not counted, as CDX indexes
                         (warcio, pywb) count, so the next record starts
                         4 bytes later */
} sieve_warc_location;

/* What sieve_warc_fetch_end() wrote. */
typedef struct sieve_warc_fetch_result {
    sieve_warc_location request;
    sieve_warc_location response;
    char request_id[SIEVE_WARC_ID_SIZE]; /* "urn:uuid:..." */
    char response_id[SIEVE_WARC_ID_SIZE];
    uint64_t body_bytes;                         /* response body bytes stored */
    char payload_digest[SIEVE_WARC_DIGEST_SIZE]; /* the response's WARC-Payload-Digest */
} sieve_warc_fetch_result;

/* What feeding a .gz archive waited for, and what the archive wrote
 * behind, since it was opened. */
typedef struct sieve_warc_stats {
    uint64_t queue_full_waits; /* feeding calls that waited for room in the queue */
    uint64_t queue_full_us;    /* how long, together, in microseconds */
    uint64_t end_wait_us;      /* sieve_warc_fetch_end() waiting for its fetch's
                                  compression, together, in microseconds */
    uint64_t compress_cpu_us;  /* CPU time of the compression threads, in
                                  microseconds: what compressing cost */
    uint64_t written_behind;   /* bytes the write-behind thread made durable */
} sieve_warc_stats;

/* Fills o with the defaults named in sieve_warc_options. */
SIEVE_API void sieve_warc_options_init(sieve_warc_options *o);

/* Opens an archive at path (see Files above for the series' names) and
 * writes its warcinfo record. o may be NULL for the defaults; it is
 * copied. Returns SIEVE_OK and sets *out; SIEVE_EINVAL for a NULL or empty
 * path, a gzip_level outside 1..9, gzip_threads over 64, gzip_queue_bytes 0,
 * spool_memory below 4096, SIEVE_WARC_NEXT
 * without a series, or an info field with a line break or without ": ";
 * SIEVE_EIO (errno set) when a file cannot be made or written, EEXIST
 * under SIEVE_WARC_CREATE; SIEVE_EFORMAT (see SIEVE_WARC_APPEND);
 * SIEVE_ENOMEM. */
SIEVE_API int sieve_warc_open(sieve_warc **out, const char *path, const sieve_warc_options *o);

/* Flushes what the archive wrote to the disk (fsync). Fetches still open
 * are not written yet. Thread-safe. SIEVE_OK or SIEVE_EIO. */
SIEVE_API int sieve_warc_sync(sieve_warc *w);

/* Fills *out with what feeding w waited for (zero for a plain archive,
 * or gzip_inline) and what it wrote behind. Thread-safe. */
SIEVE_API void sieve_warc_get_stats(sieve_warc *w, sieve_warc_stats *out);

/* Syncs, closes and frees the archive, after joining its compression
 * threads. Every fetch must have ended or been aborted first. Returns SIEVE_OK, or SIEVE_EIO when
 * the last sync or close failed (the archive is freed all the same). NULL is a no-op. */
SIEVE_API int sieve_warc_close(sieve_warc *w);

/* The files of the archive that sieve_warc_open(path) writes, as they are
 * on disk now, in order: path itself if it exists (unless series), then
 * every numbered file of it present ("crawl-00001.warc.gz", ...), by
 * number: a series' files (series true, as with max_bytes or the series
 * option), or those that resumed crawls (SIEVE_WARC_NEXT) added to a
 * single file. Paths keep path's
 * directory. Sets *out to a NULL-terminated array (free it with
 * sieve_warc_files_free()) and *n (may be NULL) to its count. Returns
 * SIEVE_OK (an empty array when there is none, or the directory cannot
 * be read); SIEVE_EINVAL for a NULL or empty path or NULL out;
 * SIEVE_ENOMEM. */
SIEVE_API int sieve_warc_files(const char *path, bool series, char ***out, size_t *n);

/* Frees an array from sieve_warc_files(). NULL is a no-op. */
SIEVE_API void sieve_warc_files_free(char **files);

/* Starts recording a fetch; info is copied. Thread-safe. Returns SIEVE_OK
 * and sets *out; SIEVE_EINVAL for a missing or malformed target_uri or
 * ip_address; SIEVE_EIO when getrandom() fails; SIEVE_ENOMEM. */
SIEVE_API int sieve_warc_fetch_begin(sieve_warc *w, const sieve_warc_fetch_info *info,
                                     sieve_warc_fetch **out);

/* The request as sent: its request line and header lines, in pieces of
 * any size (a blank line ends them; one is added if missing), then its
 * body, if any, without transfer coding. Call the head before the body,
 * and both before the response. SIEVE_OK; SIEVE_EINVAL for NULL
 * arguments; SIEVE_ESTATE out of order; SIEVE_ETOOLONG for a head over
 * SIEVE_WARC_MAX_HEAD; SIEVE_EIO or SIEVE_ENOMEM from spooling. An error
 * sticks: every later call on the fetch returns it. */
SIEVE_API int sieve_warc_fetch_request_head(sieve_warc_fetch *f, const void *data, size_t len);
SIEVE_API int sieve_warc_fetch_request_body(sieve_warc_fetch *f, const void *data, size_t len);

/* The response as received: the status line and header lines, in pieces
 * of any size (one header line at a time, as curl hands them, is fine).
 * When a new head starts after a complete one (a blank line ended it) and
 * before any body byte, the earlier one - an interim 1xx response, or a
 * proxy's answer to CONNECT - is dropped: feeding every header line curl
 * sees keeps the final response's. The head must start with "HTTP/"
 * (SIEVE_EINVAL otherwise, checked when the head is complete). Errors as
 * for the request. */
SIEVE_API int sieve_warc_fetch_response_head(sieve_warc_fetch *f, const void *data, size_t len);

/* The next len bytes of the response body: de-chunked, still
 * content-encoded (see What is stored). Errors as for the request. */
SIEVE_API int sieve_warc_fetch_response_body(sieve_warc_fetch *f, const void *data, size_t len);

/* Ends the fetch: appends its request and response records, next to each
 * other, to the archive (rotating first if needed), fills *res (may be
 * NULL), and frees f whatever it returns. truncated is NULL for a body
 * received whole, or the reason it was cut, written into WARC-Truncated:
 * "length" (a size limit), "time", "disconnect" or "unspecified" (WARC
 * 1.1's), or another token of letters, digits and '-'. Thread-safe with
 * other fetches. Returns SIEVE_OK; SIEVE_EINVAL for a NULL f or a bad
 * truncated (nothing written); SIEVE_ESTATE when the request or response
 * head is missing (nothing written); the fetch's sticky error; SIEVE_EIO
 * when the append failed (the file is cut back to where the fetch began,
 * so no torn record stays; the archive goes on). When it returns, the
 * records are in the kernel (written), whichever thread compressed them. */
SIEVE_API int sieve_warc_fetch_end(sieve_warc_fetch *f, const char *truncated,
                                   sieve_warc_fetch_result *res);

/* How sieve_warc_fetch_end_async() tells its caller the fetch's records
 * were written: status SIEVE_OK and res (valid during the call) as
 * sieve_warc_fetch_end() fills it, or an error of sieve_warc_fetch_end()
 * and res NULL (nothing of the fetch is in the archive then). */
typedef void (*sieve_warc_written_fn)(void *ud, int status, const sieve_warc_fetch_result *res);

/* Ends the fetch as sieve_warc_fetch_end() does, without waiting for its
 * records to be written: a .gz archive with compression threads writes
 * them once those threads have compressed the fetch, and then calls
 * written(ud, ...) from the thread that wrote them; any other archive
 * writes them now and calls written() before this returns. Either way
 * written() is called once, when the records are in the kernel (a kill
 * after it loses none of them), and the fetch is freed by then. Returns
 * SIEVE_OK when written() will be called; else nothing is written, f is
 * freed, written() is never called, and the status is one of
 * sieve_warc_fetch_end()'s (SIEVE_EINVAL also for a NULL written).
 * Thread-safe with other fetches. Every fetch ended this way has been
 * written, and its callback has returned, when sieve_warc_close()
 * returns. */
SIEVE_API int sieve_warc_fetch_end_async(sieve_warc_fetch *f, const char *truncated,
                                         sieve_warc_written_fn written, void *ud);

/* A batch: fetches ended into it wait there and are appended together, at
 * sieve_warc_batch_flush(), with one lock and as few write(2)s as their
 * bytes allow. A write(2) costs more than its bytes: 5.6 to 6.1 us of CPU
 * for one fetch of 8.3 KB to ext4, 2.6 to 2.9 us a fetch when eight went
 * in one (bench/results/warc.txt, set 9). A thread that ends many fetches
 * between two waits (a crawl worker, whose transfers end several at a
 * time) flushes its batch before it waits and pays that once. A batch
 * belongs to one thread at a time; several batches may feed one archive
 * at once. */
typedef struct sieve_warc_batch sieve_warc_batch;

/* A batch for w, empty. SIEVE_OK and *out; SIEVE_EINVAL; SIEVE_ENOMEM. */
SIEVE_API int sieve_warc_batch_new(sieve_warc *w, sieve_warc_batch **out);

/* Ends the fetch as sieve_warc_fetch_end_async() does, its records left
 * in b until the batch is flushed: written() is called, on the flushing
 * thread, once they are in the kernel. A batch flushes by itself, before
 * this returns, once it holds 32 fetches or 1 MiB of records kept in
 * memory, so what it holds stays small. A .gz archive with compression
 * threads appends from those threads, as for sieve_warc_fetch_end_async(),
 * and b is not used. Returns as sieve_warc_fetch_end_async() does (also
 * SIEVE_EINVAL when b belongs to another archive). */
SIEVE_API int sieve_warc_fetch_end_batched(sieve_warc_fetch *f, const char *truncated,
                                           sieve_warc_batch *b, sieve_warc_written_fn written,
                                           void *ud);

/* Appends every fetch in b, in the order ended, rotating between them
 * where max_bytes says so, then calls their written() callbacks and
 * empties b. A fetch whose append failed gets SIEVE_EIO in its callback,
 * and the file is cut back to where that write began (the fetches before
 * it in the batch stay, those after it fail too); the archive goes on.
 * Returns SIEVE_OK, the first failure, or SIEVE_EINVAL for NULL. An empty
 * batch costs nothing. */
SIEVE_API int sieve_warc_batch_flush(sieve_warc_batch *b);

/* Flushes b, then frees it. Every batch of an archive is freed before
 * sieve_warc_close(). NULL is a no-op. */
SIEVE_API void sieve_warc_batch_free(sieve_warc_batch *b);

/* Drops a fetch without writing anything, and frees it (waiting, for a
 * .gz archive, for a piece of it being compressed). NULL is a no-op. */
SIEVE_API void sieve_warc_fetch_abort(sieve_warc_fetch *f);

/* Reads the WARC file at path (plain, or gzip members of one record each,
 * told by its first bytes) from its start and sets *end to the offset
 * just past its last complete record, and *records (may be NULL) to the
 * count of complete records. Returns SIEVE_OK when the file ends there;
 * SIEVE_ETRUNCATED when it goes on with an incomplete record (a torn tail
 * a resume may cut at *end); SIEVE_EFORMAT when what follows *end is not
 * the start of a WARC record (cutting there would lose data); SIEVE_EIO;
 * SIEVE_EINVAL for NULL arguments. Digests are not checked. It reads the
 * whole file (a .gz file is inflated). */
SIEVE_API int sieve_warc_complete_end(const char *path, uint64_t *end, uint64_t *records);

/* Writes to out the CDXJ index of the WARC files paths[0..n-1] (plain or
 * gzip members, any writer's that keeps one record per member), sorted
 * bytewise, one line per response, revisit, resource or metadata record
 * (request and warcinfo records, and application/warc-fields metadata,
 * are not indexed), as warcio's cdx-index writes them:
 *
 *   com,example)/a?b=1&c=2 20261124100000 {"url":"http://example.com/a?c=2&b=1",
 *     "mime":"text/html","status":"200","digest":"<base32 sha1>",
 *     "length":"1234","offset":"5678","filename":"crawl-00001.warc.gz"}
 *
 * (one line), the key in warcio's SURT form: "www" (and "www2", ...)
 * dropped, lower-cased, host labels reversed and comma-joined, a port
 * other than the default, ')', the path, the query's parameters sorted.
 * A torn last record is left out and logged. Returns SIEVE_OK; SIEVE_ETRUNCATED
 * when a file ended in a torn record (the index holds the rest);
 * SIEVE_EFORMAT, SIEVE_EIO (a file could not be read, or out written):
 * nothing is written then; SIEVE_ENOMEM; SIEVE_EINVAL. The lines (about
 * 300 bytes a record) are sorted in at most 64 MiB of memory; a larger
 * index is sorted in runs, unnamed temporary files beside the first
 * archive (in $TMPDIR, or /tmp, when that directory cannot be written),
 * then merged: it needs free disk space a little over its own size
 * there, and SIEVE_EIO says when that failed. lg may be NULL. */
SIEVE_API int sieve_warc_index(const char *const *paths, size_t n, FILE *out,
                               const sieve_logger *lg);

#ifdef __cplusplus
}
#endif
#endif
