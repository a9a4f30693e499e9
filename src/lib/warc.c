/* warc.c - the WARC archive: files, rotation, fetches and the one lock.
 *
 * A fetch is two records, request and response, each built the same way
 * (struct rec): its HTTP head is collected in memory until it is complete,
 * then rewritten (Transfer-Encoding renamed, see sieve/warc.h) and, with
 * the body after it, hashed and spooled as it arrives (warc-spool.c:
 * memory, then a temporary file; deflated for .gz archives). A record's
 * WARC header is made only at sieve_warc_fetch_end(), when its length and
 * digests are known. The request record is closed - its spool finished,
 * its deflate state freed - as soon as the response begins, so a fetch in
 * flight holds one deflate state at most.
 *
 * Jobs. The feeding calls only parse heads and count bytes; what stores
 * the bytes is a job (submit(): bytes of a record, a record's close, the
 * fetch's end), run by run_op(). A plain archive, or a .gz one with
 * gzip_inline, runs each job at once in the feeding thread. A .gz
 * archive hands them to its compression threads (warc-zq.c), which run
 * one fetch's jobs in order, one thread at a time, so every record is one
 * deflate stream fed in order. Compression moved there because a crawl
 * worker runs many transfers: deflating a page in it held all of them up
 * for the time (zlib level 6 takes twice the CPU of the rest of the
 * crawl's work on a page, bench/results/warc.txt), while a thread of the
 * archive's own runs alongside the workers, on a core they leave idle
 * while they wait on the network. The price is a copy of each
 * piece into a queue of bounded bytes. sieve_warc_fetch_end() waits for
 * its fetch's jobs, since it returns where the records went;
 * sieve_warc_fetch_end_async() does not: the thread that runs the last
 * job calls the caller back with the records' places and frees the
 * fetch, so a crawl worker goes on with its transfers meanwhile.
 *
 * Locking. The archive's mutex is taken once per fetch, by whoever runs
 * its end job, to append the two finished records with writev() and
 * copy_file_range(). The headers are made before, against the file that
 * was current then (its warcinfo ID goes into them), read without the
 * lock: each file's identity is published once, whole, and never changed
 * (struct file_id). Taking the lock a second time for it made two workers
 * wait on each other's appends twice as often, and a wait on a futex puts
 * the worker to sleep with its transfers. If the file changed in between -
 * another thread rotated - the small headers are remade under the lock,
 * which happens once per file. Hashing, spooling and compressing take no
 * lock.
 * Batches. A fetch ended into a batch (sieve_warc_fetch_end_batched())
 * is sealed and framed at once and appended at the batch's flush, with
 * the others, under one lock and in as few writev()s as the iovec array
 * allows: a write(2) to ext4 cost 5.6 to 6.1 us of CPU for one fetch of
 * 8.3 KB here, 2.6 to 2.9 us a fetch when eight went together
 * (bench/results/warc.txt, set 9). A rotation between two fetches of a
 * batch writes those before it first, so every place a callback reports
 * is in the file it names.
 * Deflate streams come from a pool and go back to it reset (warc-spool.c
 * says why).
 *
 * Durability. Each record is appended with plain write(2)s into the file's
 * descriptor (no stdio buffer), so once fetch_end() returns (or the
 * callback of fetch_end_async() is called) its records are in the kernel and survive the process
 * being killed. A failed append is cut back with ftruncate(), so a full disk leaves no torn record
 * behind. sync() and close() fsync; a rotation fsyncs the file it leaves.
 * Opening in append mode first reads the file through (warc-read.c) to
 * find its last complete record, and cuts a torn tail there. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "warc-internal.h"

#define FORMAT      "WARC File Format 1.1"
#define CONFORMS_TO "http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"
#define TRAILER     "\r\n\r\n"
#define ORIG_PREFIX "X-Archive-Orig-"

/* Which file a fetch's headers name, as they were made: one per file
 * opened, never changed once published, freed with the archive. */
typedef struct file_id {
    uint64_t generation;
    char warcinfo_id[SIEVE_WARC_ID_SIZE];
    struct file_id *older;
} file_id;

struct sieve_warc {
    pthread_mutex_t lock;
    sieve_warc_options o; /* strings below are our copies */
    char *software;
    char **info;
    char *tmp_dir;

    char *path; /* as given */
    warc_series names;
    bool series, gzip;

    /* Under the lock: */
    int fd;
    uint64_t size;       /* of the current file: where the next record goes */
    unsigned seq;        /* the series number of the current file */
    uint64_t fetches;    /* fetches in the current file */
    uint64_t generation; /* files opened so far */
    char warcinfo_id[SIEVE_WARC_ID_SIZE];
    char **paths; /* every file opened, for the locations */
    size_t n_paths;
    file_id *ids; /* every identity published, the newest first */
    /* The newest of ids, read without the lock; NULL until the first file
     * is open, and while it is, when no copy could be made: a fetch then
     * frames its headers under the lock. */
    _Atomic(const file_id *) current;

    /* gzip: deflate streams for blocks and for headers, reused. */
    warc_zpool blocks, heads;
    warc_zq *zq; /* gzip: the compression threads; NULL: the feeder compresses */
};

/* One record of a fetch as it is built. */
struct rec {
    warc_buf head;
    bool head_done;  /* a blank line ended the head */
    size_t line_len; /* bytes of the head's current line */
    char last;       /* its last byte */
    bool started;    /* the head went into the spool; body bytes follow */
    bool closing;    /* the feeder asked for it to be closed */
    bool closed;     /* trailer written, spool finished, digests made */
    warc_sha1 block, payload;
    uint64_t head_len, body_len;
    warc_spool spool;
    char block_digest[WARC_DIGEST_SIZE];
    char payload_digest[WARC_DIGEST_SIZE];
    /* The WARC header, as stored (gzip: header, compressed text), and the
     * gzip trailer. */
    warc_buf out;
    unsigned char gz_trailer[8];
};

enum phase { REQ_HEAD, REQ_BODY, RESP_HEAD, RESP_BODY };

struct sieve_warc_fetch {
    sieve_warc *w;
    char *uri;
    char ip[INET6_ADDRSTRLEN];
    char date[WARC_DATE_SIZE];
    char req_id[SIEVE_WARC_ID_SIZE], resp_id[SIEVE_WARC_ID_SIZE];
    enum phase phase;
    int err; /* sticky */
    struct rec req, resp;
    /* The jobs of a .gz archive's compression threads, and what the last
     * one (OP_END) leaves for sieve_warc_fetch_end(). */
    warc_zq_stream zs;
    const char *truncated; /* NULL, or truncated_buf */
    char truncated_buf[65];
    sieve_warc_fetch_result placed;
    sieve_warc_written_fn written; /* sieve_warc_fetch_end_async()'s */
    void *written_ud;
    /* Ended into a batch: framed against this file (0: none), and the
     * next fetch of the batch. */
    sieve_warc_batch *batch;
    uint64_t framed;
    sieve_warc_fetch *next;
};

/* A batch flushes by itself at these, so that a caller that never waits
 * holds little. */
#define BATCH_FETCHES 32
#define BATCH_BYTES   (1u << 20)

struct sieve_warc_batch {
    sieve_warc *w;
    sieve_warc_fetch *head, **tail;
    unsigned n;
    uint64_t bytes; /* of records kept in memory */
};

/* Jobs on a fetch's records: bytes to store (of the response's record
 * with OP_RESPONSE, of the payload with OP_PAYLOAD), a record to close,
 * or the fetch to append. */
enum { OP_RESPONSE = 1, OP_PAYLOAD = 2, OP_CLOSE = 4, OP_END = 8 };

/* ---- options ---- */

void sieve_warc_options_init(sieve_warc_options *o)
{
    memset(o, 0, sizeof *o);
    o->mode = SIEVE_WARC_CREATE;
    o->gzip_level = SIEVE_WARC_GZIP_LEVEL;
    o->gzip_threads = SIEVE_WARC_GZIP_THREADS;
    o->gzip_queue_bytes = SIEVE_WARC_GZIP_QUEUE;
    o->spool_memory = SIEVE_WARC_SPOOL_MEMORY;
}

/* An info field: "name: value", one line. */
static bool info_ok(const char *s)
{
    if (!s || strpbrk(s, "\r\n"))
        return false;
    const char *colon = strstr(s, ": ");
    return colon && colon > s;
}

static int check_options(const sieve_warc_options *o)
{
    if (o->gzip_level < 1 || o->gzip_level > 9 || o->spool_memory < 4096)
        return SIEVE_EINVAL;
    if (o->gzip_threads > 64 || o->gzip_queue_bytes == 0)
        return SIEVE_EINVAL;
    if (o->mode != SIEVE_WARC_CREATE && o->mode != SIEVE_WARC_APPEND && o->mode != SIEVE_WARC_NEXT)
        return SIEVE_EINVAL;
    if (o->mode == SIEVE_WARC_NEXT && !o->series && !o->max_bytes)
        return SIEVE_EINVAL;
    if (o->software && strpbrk(o->software, "\r\n"))
        return SIEVE_EINVAL;
    if (o->n_info && !o->info)
        return SIEVE_EINVAL;
    for (size_t i = 0; i < o->n_info; i++)
        if (!info_ok(o->info[i]))
            return SIEVE_EINVAL;
    return SIEVE_OK;
}

/* ---- writing ---- */

static int writev_all(int fd, struct iovec *iov, int n)
{
    while (n > 0) {
        ssize_t done = writev(fd, iov, n);
        if (done < 0 && errno == EINTR)
            continue;
        if (done < 0)
            return SIEVE_EIO;
        while (n > 0 && (size_t)done >= iov->iov_len) {
            done -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + done;
            iov->iov_len -= (size_t)done;
        }
    }
    return SIEVE_OK;
}

/* Bytes a finished record takes in the file. */
static uint64_t rec_stored(const sieve_warc *w, const struct rec *r)
{
    return r->out.len + r->spool.size + (w->gzip ? 8 : 0);
}

/* Appends finished records at the file's position: headers and spools
 * kept in memory in one writev(), spooled files copied in between. */
static int emit(sieve_warc *w, struct rec *const *recs, int n)
{
    struct iovec iov[64];
    int k = 0, rc = SIEVE_OK;
    for (int i = 0; i < n && !rc; i++) {
        struct rec *r = recs[i];
        if (k + 3 > (int)(sizeof iov / sizeof iov[0])) {
            rc = writev_all(w->fd, iov, k);
            k = 0;
            if (rc)
                break;
        }
        iov[k++] = (struct iovec){r->out.data, r->out.len};
        if (r->spool.fd >= 0) {
            rc = writev_all(w->fd, iov, k);
            k = 0;
            if (!rc)
                rc = warc_spool_copy_to(&r->spool, w->fd);
        } else if (r->spool.mem_len) {
            iov[k++] = (struct iovec){r->spool.mem, r->spool.mem_len};
        }
        if (w->gzip)
            iov[k++] = (struct iovec){r->gz_trailer, 8};
    }
    if (!rc && k)
        rc = writev_all(w->fd, iov, k);
    return rc;
}

/* Cuts the file back to where a failed append began. */
static void cut_back(sieve_warc *w, uint64_t at)
{
    int e = errno;
    if (ftruncate(w->fd, (off_t)at) != 0 || lseek(w->fd, (off_t)at, SEEK_SET) < 0)
        sieve_log(&w->o.logger, SIEVE_LOG_ERROR, "warc: cannot cut %s back to %llu: %s",
                  w->paths[w->n_paths - 1], (unsigned long long)at, strerror(errno));
    errno = e;
}

/* Makes r's WARC header (and its gzip framing) from its text. */
static int rec_frame(sieve_warc *w, struct rec *r, const warc_buf *text)
{
    if (!w->gzip) {
        r->out.len = 0;
        return warc_buf_add(&r->out, text->data, text->len);
    }
    return warc_gzip_head(text->data, text->len, &w->heads, &r->spool, &r->out, r->gz_trailer);
}

/* ---- records of a fetch ---- */

static void rec_init(sieve_warc *w, struct rec *r)
{
    memset(r, 0, sizeof *r);
    warc_spool_init(&r->spool, w->tmp_dir, w->o.spool_memory, w->gzip ? &w->blocks : NULL);
}

static void rec_free(struct rec *r)
{
    warc_buf_free(&r->head);
    warc_buf_free(&r->out);
    warc_sha1_free(&r->block);
    warc_sha1_free(&r->payload);
    warc_spool_free(&r->spool);
}

/* The payload digest of an empty payload: a request's, as a crawler's
 * GET has no body, and a response's without one. Its SHA-1 context is
 * made only when a payload byte comes: making, starting and freeing one
 * took as long as hashing a kilobyte. */
#define EMPTY_SHA1 "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"
_Static_assert(sizeof EMPTY_SHA1 == WARC_DIGEST_SIZE, "a digest's text");

/* Stores bytes of the block: hashed, then spooled (and deflated). */
static int rec_store(struct rec *r, const void *data, size_t len, bool payload)
{
    if (payload && len && !r->payload.ctx && warc_sha1_init(&r->payload))
        return SIEVE_ENOMEM;
    warc_sha1_update(&r->block, data, len);
    if (payload)
        warc_sha1_update(&r->payload, data, len);
    return warc_spool_write(&r->spool, data, len);
}

/* Ends the block: trailer, spool finished, digests made. */
static int rec_seal(struct rec *r)
{
    int rc = warc_spool_write(&r->spool, TRAILER, 4);
    if (!rc)
        rc = warc_spool_finish(&r->spool);
    if (rc)
        return rc;
    warc_sha1_final(&r->block, r->block_digest);
    if (r->payload.ctx)
        warc_sha1_final(&r->payload, r->payload_digest);
    else
        memcpy(r->payload_digest, EMPTY_SHA1, sizeof EMPTY_SHA1);
    r->closed = true;
    return SIEVE_OK;
}

static int run_op(void *ctx, warc_zq_stream *s, int op, const void *data, size_t len);

/* Hands a job to the compression threads, or runs it here without them. */
static int submit(sieve_warc_fetch *f, int op, const void *data, size_t len)
{
    if (f->w->zq)
        return warc_zq_push(f->w->zq, &f->zs, op, data, len);
    return run_op(f->w, &f->zs, op, data, len);
}

/* Feeds bytes of the block: counted here, stored by whoever runs the job. */
static int rec_put(sieve_warc_fetch *f, struct rec *r, const void *data, size_t len, bool payload)
{
    if (payload)
        r->body_len += len;
    else
        r->head_len += len;
    int op = (r == &f->resp ? OP_RESPONSE : 0) | (payload ? OP_PAYLOAD : 0);
    return submit(f, op, data, len);
}

/* Collects head bytes up to the blank line that ends the head; returns
 * how many of len it took, or a negative status. */
static long head_take(struct rec *r, const char *data, size_t len)
{
    size_t i = 0;
    while (i < len && !r->head_done) {
        /* a line at a time: byte by byte, this took half a microsecond a page */
        const char *nl = memchr(data + i, '\n', len - i);
        size_t n = nl ? (size_t)(nl - (data + i)) : len - i;
        if (n) {
            r->line_len += n;
            r->last = data[i + n - 1];
        }
        i += n;
        if (!nl)
            break;
        r->head_done = r->line_len == 0 || (r->line_len == 1 && r->last == '\r');
        r->line_len = 0;
        r->last = '\n';
        i++;
    }
    if (r->head.len + i > SIEVE_WARC_MAX_HEAD)
        return SIEVE_ETOOLONG;
    int rc = warc_buf_add(&r->head, data, i);
    return rc ? rc : (long)i;
}

/* Feeds head bytes; after a complete head, more bytes start a new head
 * (interim responses are dropped) where replace allows it. */
static int head_feed(struct rec *r, const char *data, size_t len, bool replace)
{
    while (len) {
        if (r->head_done) {
            if (!replace)
                return SIEVE_ESTATE;
            r->head.len = 0;
            r->head_done = false;
            r->line_len = 0;
        }
        long took = head_take(r, data, len);
        if (took < 0)
            return (int)took;
        data += took;
        len -= (size_t)took;
    }
    return SIEVE_OK;
}

/* Ends the head: completes its blank line, renames Transfer-Encoding, and
 * stores it as the start of the block. */
static int rec_start(sieve_warc_fetch *f, struct rec *r)
{
    bool response = r == &f->resp;
    if (r->started)
        return SIEVE_OK;
    if (r->head.len == 0)
        return SIEVE_ESTATE;
    int rc = SIEVE_OK;
    if (!r->head_done)
        rc = warc_buf_add(&r->head, r->line_len ? "\r\n\r\n" : "\r\n", r->line_len ? 4 : 2);
    if (rc)
        return rc;
    if (response && strncmp(r->head.data, "HTTP/", 5) != 0)
        return SIEVE_EINVAL;
    if ((rc = warc_sha1_init(&r->block)))
        return rc;
    r->started = true;
    /* Rewritten whole, then fed as one piece: one job, not one a line. */
    warc_buf out = {0};
    const char *p = r->head.data, *end = p + r->head.len;
    bool first = true;
    while (p < end && !rc) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
        if (!first && warc_line_is(p, n, "Transfer-Encoding"))
            rc = warc_buf_add(&out, ORIG_PREFIX, strlen(ORIG_PREFIX));
        if (!rc)
            rc = warc_buf_add(&out, p, n);
        p += n;
        first = false;
    }
    warc_buf_free(&r->head);
    if (!rc)
        rc = rec_put(f, r, out.data, out.len, false);
    warc_buf_free(&out);
    return rc;
}

/* Asks for the block's end (rec_seal), once. */
static int rec_close(sieve_warc_fetch *f, struct rec *r)
{
    if (r->closing)
        return SIEVE_OK;
    int rc = rec_start(f, r);
    if (!rc)
        rc = submit(f, OP_CLOSE | (r == &f->resp ? OP_RESPONSE : 0), NULL, 0);
    if (!rc)
        r->closing = true;
    return rc;
}

/* ---- the warcinfo record ---- */

static int warcinfo_text(const sieve_warc *w, warc_buf *block)
{
    int rc = warc_buf_addf(block,
                           "software: %s\r\nformat: " FORMAT "\r\nconformsTo: " CONFORMS_TO "\r\n",
                           w->software);
    for (size_t i = 0; i < w->o.n_info && !rc; i++)
        rc = warc_buf_addf(block, "%s\r\n", w->info[i]);
    return rc;
}

/* Writes the warcinfo record that starts (or resumes) the current file. */
static int write_warcinfo(sieve_warc *w, const char *name)
{
    warc_buf block = {0}, text = {0};
    struct rec r;
    rec_init(w, &r);
    char date[WARC_DATE_SIZE];
    warc_format_date(warc_now_us(), date);
    int rc = warc_new_id(w->warcinfo_id);
    if (!rc)
        rc = warcinfo_text(w, &block);
    if (!rc)
        rc = warc_sha1_init(&r.block);
    if (!rc) {
        warc_sha1_update(&r.block, block.data, block.len);
        warc_sha1_final(&r.block, r.block_digest);
        rc = warc_spool_write(&r.spool, block.data, block.len);
    }
    if (!rc)
        rc = warc_spool_write(&r.spool, TRAILER, 4);
    if (!rc)
        rc = warc_spool_finish(&r.spool);
    if (!rc)
        rc = warc_buf_addf(&text,
                           "WARC/1.1\r\nWARC-Type: warcinfo\r\nWARC-Record-ID: <%s>\r\n"
                           "WARC-Date: %s\r\nWARC-Filename: %s\r\nWARC-Block-Digest: %s\r\n"
                           "Content-Type: application/warc-fields\r\nContent-Length: %zu\r\n\r\n",
                           w->warcinfo_id, date, name, r.block_digest, block.len);
    if (!rc)
        rc = rec_frame(w, &r, &text);
    if (!rc) {
        struct rec *one = &r;
        rc = emit(w, &one, 1);
        if (rc)
            cut_back(w, w->size);
        else
            w->size += rec_stored(w, &r);
    }
    rec_free(&r);
    warc_buf_free(&block);
    warc_buf_free(&text);
    return rc;
}

/* ---- files ---- */

static int fsync_dir(const char *path)
{
    char *dir = warc_dir_of(path);
    if (!dir)
        return SIEVE_ENOMEM;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(dir);
    if (fd < 0)
        return SIEVE_EIO;
    int rc = fsync(fd) == 0 || errno == EINVAL ? SIEVE_OK : SIEVE_EIO;
    close(fd);
    return rc;
}

/* Where the last of the complete records before end starts, if it is a
 * request: a fetch's two records are appended together, so a request
 * whose response is not there was parted from it by a kill. *start is
 * end when the last record is no request. */
static int lone_request(const char *path, uint64_t end, uint64_t *start)
{
    warc_reader *r;
    int rc = warc_reader_open(&r, path);
    if (rc)
        return rc;
    warc_rec rec;
    *start = end;
    while (warc_reader_next(r, &rec, NULL, NULL) == SIEVE_OK && rec.offset < end)
        *start = strstr(rec.header, "\r\nWARC-Type: request\r\n") ? rec.offset : end;
    warc_reader_free(r);
    return SIEVE_OK;
}

/* Checks an existing file for append: where its last complete fetch
 * ends, cutting a torn tail and a request left without its response.
 * Sets *size. */
static int prepare_append(sieve_warc *w, const char *path, int fd, uint64_t *size)
{
    uint64_t end = 0, records = 0, start = 0;
    int rc = sieve_warc_complete_end(path, &end, &records);
    bool parted = (rc == SIEVE_OK || rc == SIEVE_ETRUNCATED) && records > 0 &&
                  lone_request(path, end, &start) == SIEVE_OK && start < end;
    if (rc == SIEVE_ETRUNCATED || parted) {
        struct stat st;
        fstat(fd, &st);
        uint64_t keep = parted ? start : end;
        sieve_log(&w->o.logger, SIEVE_LOG_WARN,
                  "warc: %s: cutting a torn fetch: the %llu bytes after offset %llu%s", path,
                  (unsigned long long)((uint64_t)st.st_size - keep), (unsigned long long)keep,
                  parted ? " (a request record whose response is missing, and what follows)" : "");
        if (ftruncate(fd, (off_t)keep) != 0)
            return SIEVE_EIO;
        end = keep;
        rc = SIEVE_OK;
    } else if (rc == SIEVE_EFORMAT) {
        sieve_log(&w->o.logger, SIEVE_LOG_ERROR,
                  "warc: %s: not a WARC file after offset %llu; not appending to it", path,
                  (unsigned long long)end);
    }
    *size = end;
    return rc;
}

/* Publishes the current file's identity for the fetches' headers. Under
 * the lock (or before any fetch). */
static void publish_id(sieve_warc *w)
{
    file_id *id = malloc(sizeof *id);
    if (!id) {
        atomic_store_explicit(&w->current, NULL, memory_order_release);
        return;
    }
    id->generation = w->generation;
    memcpy(id->warcinfo_id, w->warcinfo_id, sizeof id->warcinfo_id);
    id->older = w->ids;
    w->ids = id;
    atomic_store_explicit(&w->current, id, memory_order_release);
}

/* Opens path as the current file: created (O_EXCL) unless appending, then
 * its warcinfo record. */
static int open_file(sieve_warc *w, char *path, bool append)
{
    int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (append ? 0 : O_EXCL);
    int fd = open(path, flags, 0644);
    if (fd < 0) {
        int e = errno;
        sieve_log(&w->o.logger, SIEVE_LOG_ERROR, "warc: cannot create %s: %s", path, strerror(e));
        free(path);
        errno = e;
        return SIEVE_EIO;
    }
    uint64_t size = 0;
    int rc = append ? prepare_append(w, path, fd, &size) : SIEVE_OK;
    char **paths = rc ? NULL : realloc(w->paths, (w->n_paths + 1) * sizeof *paths);
    if (!rc && !paths)
        rc = SIEVE_ENOMEM;
    if (!rc && lseek(fd, (off_t)size, SEEK_SET) < 0)
        rc = SIEVE_EIO;
    if (rc) {
        close(fd);
        free(path);
        return rc;
    }
    w->paths = paths;
    w->paths[w->n_paths++] = path;
    w->fd = fd;
    w->size = size;
    w->fetches = 0;
    w->generation++;
    if (size == 0)
        fsync_dir(path); /* the new name itself must survive a crash */
    rc = write_warcinfo(w, warc_last_component(path));
    if (rc)
        sieve_log(&w->o.logger, SIEVE_LOG_ERROR, "warc: cannot write to %s: %s", path,
                  strerror(errno));
    publish_id(w);
    return rc;
}

static int close_file(sieve_warc *w)
{
    if (w->fd < 0)
        return SIEVE_OK;
    int rc = fsync(w->fd) == 0 ? SIEVE_OK : SIEVE_EIO;
    if (close(w->fd) != 0)
        rc = SIEVE_EIO;
    w->fd = -1;
    return rc;
}

static int rotate(sieve_warc *w)
{
    char *path = warc_series_name(&w->names, w->seq + 1);
    if (!path)
        return SIEVE_ENOMEM;
    int rc = close_file(w);
    if (rc)
        sieve_log(&w->o.logger, SIEVE_LOG_ERROR, "warc: syncing %s failed: %s",
                  w->paths[w->n_paths - 1], strerror(errno));
    w->seq++;
    int orc = open_file(w, path, false);
    return orc ? orc : rc;
}

static int open_first(sieve_warc *w)
{
    bool append = w->o.mode == SIEVE_WARC_APPEND;
    if (!w->series) {
        char *p = strdup(w->path);
        return p ? open_file(w, p, append) : SIEVE_ENOMEM;
    }
    unsigned top = w->o.mode == SIEVE_WARC_CREATE ? 0 : warc_series_highest(&w->names);
    w->seq = w->o.mode == SIEVE_WARC_NEXT || top == 0 ? top + 1 : top;
    char *p = warc_series_name(&w->names, w->seq);
    return p ? open_file(w, p, append) : SIEVE_ENOMEM;
}

static int copy_strings(sieve_warc *w, const sieve_warc_options *o)
{
    char version[64];
    snprintf(version, sizeof version, "sieve/%s", SIEVE_VERSION);
    w->software = strdup(o->software ? o->software : version);
    w->tmp_dir = o->tmp_dir ? strdup(o->tmp_dir) : warc_dir_of(w->path);
    w->info = calloc(o->n_info + 1, sizeof *w->info);
    if (!w->software || !w->tmp_dir || !w->info)
        return SIEVE_ENOMEM;
    for (size_t i = 0; i < o->n_info; i++)
        if (!(w->info[i] = strdup(o->info[i])))
            return SIEVE_ENOMEM;
    return SIEVE_OK;
}

static void warc_free(sieve_warc *w)
{
    for (size_t i = 0; w->info && i < w->o.n_info; i++)
        free(w->info[i]);
    free(w->info);
    for (size_t i = 0; i < w->n_paths; i++)
        free(w->paths[i]);
    free(w->paths);
    while (w->ids) {
        file_id *older = w->ids->older;
        free(w->ids);
        w->ids = older;
    }
    free(w->software);
    free(w->tmp_dir);
    free(w->path);
    warc_series_free(&w->names);
    warc_zq_stop(w->zq);
    warc_zpool_free(&w->blocks);
    warc_zpool_free(&w->heads);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

static unsigned compress_threads(const sieve_warc_options *o)
{
    if (o->gzip_threads)
        return o->gzip_threads;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 64 ? 64 : (unsigned)n;
}

int sieve_warc_open(sieve_warc **out, const char *path, const sieve_warc_options *o)
{
    sieve_warc_options defaults;
    if (!o) {
        sieve_warc_options_init(&defaults);
        o = &defaults;
    }
    if (!out || !path || !*path)
        return SIEVE_EINVAL;
    *out = NULL;
    int rc = check_options(o);
    if (rc)
        return rc;
    if (!warc_sha1_md())
        return SIEVE_ENOMEM;
    sieve_warc *w = calloc(1, sizeof *w);
    if (!w)
        return SIEVE_ENOMEM;
    pthread_mutex_init(&w->lock, NULL);
    warc_zpool_init(&w->blocks, o->gzip_level, 15, 8);
    warc_zpool_init(&w->heads, o->gzip_level, WARC_HEAD_WINDOW_BITS, WARC_HEAD_MEM_LEVEL);
    w->o = *o;
    w->fd = -1;
    w->series = o->series || o->max_bytes > 0;
    w->gzip = warc_ends_with(path, ".gz");
    w->path = strdup(path);
    rc = w->path ? warc_series_init(&w->names, w->path) : SIEVE_ENOMEM;
    if (!rc)
        rc = copy_strings(w, o);
    if (!rc)
        rc = open_first(w);
    if (!rc && w->gzip && !o->gzip_inline)
        rc = warc_zq_start(&w->zq, compress_threads(o), o->gzip_queue_bytes, run_op, w);
    if (rc) {
        int e = errno;
        close_file(w);
        warc_free(w);
        errno = e;
        return rc;
    }
    *out = w;
    return SIEVE_OK;
}

int sieve_warc_sync(sieve_warc *w)
{
    if (!w)
        return SIEVE_EINVAL;
    pthread_mutex_lock(&w->lock);
    int rc = w->fd >= 0 && fsync(w->fd) != 0 ? SIEVE_EIO : SIEVE_OK;
    pthread_mutex_unlock(&w->lock);
    return rc;
}

void sieve_warc_get_stats(sieve_warc *w, sieve_warc_stats *out)
{
    memset(out, 0, sizeof *out);
    if (!w || !w->zq)
        return;
    warc_zq_stats st;
    warc_zq_get_stats(w->zq, &st);
    out->queue_full_waits = st.full_waits;
    out->queue_full_us = st.full_wait_ns / 1000;
    out->end_wait_us = st.end_wait_ns / 1000;
    out->compress_cpu_us = st.cpu_ns / 1000;
}

int sieve_warc_close(sieve_warc *w)
{
    if (!w)
        return SIEVE_OK;
    /* The threads first: what they still hold is appended before the
     * file's last fsync. */
    warc_zq_stop(w->zq);
    w->zq = NULL;
    int rc = close_file(w);
    if (rc)
        sieve_log(&w->o.logger, SIEVE_LOG_ERROR, "warc: closing %s failed: %s",
                  w->paths[w->n_paths - 1], strerror(errno));
    warc_free(w);
    return rc;
}

/* ---- fetches ---- */

/* A target URI: non-empty, no blanks or control bytes (it is one header
 * line). */
static bool uri_ok(const char *s)
{
    if (!s || !*s)
        return false;
    for (; *s; s++)
        if ((unsigned char)*s <= ' ' || *s == 0x7f)
            return false;
    return true;
}

static int ip_ok(const char *ip)
{
    unsigned char buf[16];
    return inet_pton(AF_INET, ip, buf) == 1 || inet_pton(AF_INET6, ip, buf) == 1;
}

int sieve_warc_fetch_begin(sieve_warc *w, const sieve_warc_fetch_info *info, sieve_warc_fetch **out)
{
    if (!out)
        return SIEVE_EINVAL;
    *out = NULL;
    if (!w || !info || !uri_ok(info->target_uri))
        return SIEVE_EINVAL;
    if (info->ip_address &&
        (strlen(info->ip_address) >= INET6_ADDRSTRLEN || !ip_ok(info->ip_address)))
        return SIEVE_EINVAL;
    sieve_warc_fetch *f = calloc(1, sizeof *f);
    if (!f)
        return SIEVE_ENOMEM;
    f->w = w;
    f->uri = strdup(info->target_uri);
    if (info->ip_address)
        strcpy(f->ip, info->ip_address);
    warc_format_date(info->date_us ? info->date_us : warc_now_us(), f->date);
    rec_init(w, &f->req);
    rec_init(w, &f->resp);
    int rc = f->uri ? SIEVE_OK : SIEVE_ENOMEM;
    if (!rc)
        rc = warc_new_id(f->req_id);
    if (!rc)
        rc = warc_new_id(f->resp_id);
    if (rc) {
        sieve_warc_fetch_abort(f);
        return rc;
    }
    *out = f;
    return SIEVE_OK;
}

/* Records the first error of a fetch; every later call returns it. */
static int fail(sieve_warc_fetch *f, int rc)
{
    if (rc && !f->err)
        f->err = rc;
    return f->err ? f->err : rc;
}

int sieve_warc_fetch_request_head(sieve_warc_fetch *f, const void *data, size_t len)
{
    if (!f || (!data && len))
        return SIEVE_EINVAL;
    if (f->err)
        return f->err;
    if (f->phase != REQ_HEAD)
        return SIEVE_ESTATE;
    return fail(f, head_feed(&f->req, data, len, false));
}

int sieve_warc_fetch_request_body(sieve_warc_fetch *f, const void *data, size_t len)
{
    if (!f || (!data && len))
        return SIEVE_EINVAL;
    if (f->err)
        return f->err;
    if (f->phase != REQ_HEAD && f->phase != REQ_BODY)
        return SIEVE_ESTATE;
    if (f->phase == REQ_HEAD) {
        int rc = rec_start(f, &f->req);
        if (rc)
            return rc == SIEVE_ESTATE ? rc : fail(f, rc);
        f->phase = REQ_BODY;
    }
    return fail(f, rec_put(f, &f->req, data, len, true));
}

int sieve_warc_fetch_response_head(sieve_warc_fetch *f, const void *data, size_t len)
{
    if (!f || (!data && len))
        return SIEVE_EINVAL;
    if (f->err)
        return f->err;
    if (f->phase == RESP_BODY)
        return SIEVE_ESTATE;
    if (f->phase != RESP_HEAD) {
        /* The request is over: close it now, which frees its deflate state. */
        int rc = rec_close(f, &f->req);
        if (rc)
            return rc == SIEVE_ESTATE ? rc : fail(f, rc);
        f->phase = RESP_HEAD;
    }
    return fail(f, head_feed(&f->resp, data, len, true));
}

int sieve_warc_fetch_response_body(sieve_warc_fetch *f, const void *data, size_t len)
{
    if (!f || (!data && len))
        return SIEVE_EINVAL;
    if (f->err)
        return f->err;
    if (f->phase != RESP_HEAD && f->phase != RESP_BODY)
        return SIEVE_ESTATE;
    if (f->phase == RESP_HEAD) {
        int rc = rec_start(f, &f->resp);
        if (rc)
            return rc == SIEVE_ESTATE ? rc : fail(f, rc);
        f->phase = RESP_BODY;
    }
    return fail(f, rec_put(f, &f->resp, data, len, true));
}

/* A WARC-Truncated reason: a token of letters, digits and '-'. */
static bool reason_ok(const char *s)
{
    if (!*s || strlen(s) > 64)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '-'))
            return false;
    return true;
}

/* The WARC header of one of the fetch's records. */
static int header_text(const sieve_warc_fetch *f, bool response, const char *warcinfo_id,
                       const char *truncated, warc_buf *t)
{
    const struct rec *r = response ? &f->resp : &f->req;
    const char *type = response ? "response" : "request";
    bool ip = f->ip[0] != '\0', cut = response && truncated;
    char length[21];
    t->len = 0;
    return warc_buf_cat(t, "WARC/1.1\r\nWARC-Type: ", type, "\r\nWARC-Record-ID: <",
                        response ? f->resp_id : f->req_id, ">\r\nWARC-Date: ", f->date,
                        "\r\nWARC-Target-URI: ", f->uri, "\r\n", ip ? "WARC-IP-Address: " : "",
                        ip ? f->ip : "", ip ? "\r\n" : "", "WARC-Warcinfo-ID: <", warcinfo_id,
                        ">\r\nWARC-Concurrent-To: <", response ? f->req_id : f->resp_id, ">\r\n",
                        cut ? "WARC-Truncated: " : "", cut ? truncated : "", cut ? "\r\n" : "",
                        "WARC-Block-Digest: ", r->block_digest,
                        "\r\nWARC-Payload-Digest: ", r->payload_digest,
                        "\r\nContent-Type: application/http; msgtype=", type,
                        "\r\nContent-Length: ", warc_u64_text(r->head_len + r->body_len, length),
                        "\r\n\r\n", (const char *)NULL);
}

/* Makes both records' headers against the file whose warcinfo is id. */
static int frame_both(sieve_warc_fetch *f, const char *id, const char *truncated)
{
    warc_buf t = {0};
    int rc = header_text(f, false, id, truncated, &t);
    if (!rc)
        rc = rec_frame(f->w, &f->req, &t);
    if (!rc)
        rc = header_text(f, true, id, truncated, &t);
    if (!rc)
        rc = rec_frame(f->w, &f->resp, &t);
    warc_buf_free(&t);
    return rc;
}

static void locate(const sieve_warc *w, sieve_warc_location *loc, uint64_t offset, uint64_t length)
{
    loc->path = w->paths[w->n_paths - 1];
    loc->name = warc_last_component(loc->path);
    loc->offset = offset;
    loc->length = length;
}

/* Under the lock: rotates if needed, then appends both records. */
static int append_fetch(sieve_warc_fetch *f, uint64_t generation, const char *truncated,
                        sieve_warc_fetch_result *res)
{
    sieve_warc *w = f->w;
    uint64_t total = rec_stored(w, &f->req) + rec_stored(w, &f->resp);
    int rc = SIEVE_OK;
    if (w->fd < 0)
        return SIEVE_EIO; /* a rotation failed earlier */
    if (w->o.max_bytes && w->fetches > 0 && w->size + total > w->o.max_bytes)
        rc = rotate(w);
    if (!rc && w->generation != generation)
        rc = frame_both(f, w->warcinfo_id, truncated);
    if (rc)
        return rc;
    struct rec *both[2] = {&f->req, &f->resp};
    uint64_t start = w->size;
    rc = emit(w, both, 2);
    if (rc) {
        sieve_log(&w->o.logger, SIEVE_LOG_ERROR, "warc: writing to %s failed: %s",
                  w->paths[w->n_paths - 1], strerror(errno));
        cut_back(w, start);
        return rc;
    }
    uint64_t req_len = rec_stored(w, &f->req), resp_len = rec_stored(w, &f->resp);
    w->size += req_len + resp_len;
    w->fetches++;
    /* Lengths as CDX indexes count them: without a plain record's
     * closing CRLF CRLF. */
    unsigned gap = w->gzip ? 0 : 4;
    if (res) {
        locate(w, &res->request, start, req_len - gap);
        locate(w, &res->response, start + req_len, resp_len - gap);
    }
    return SIEVE_OK;
}

/* The fetch's last job: closes the response, makes both headers against
 * the current file and appends the records. In a compression thread when
 * there are some, since the headers are deflated too. */
static int end_fetch(sieve_warc_fetch *f)
{
    sieve_warc *w = f->w;
    int rc = rec_seal(&f->resp);
    const file_id *id = atomic_load_explicit(&w->current, memory_order_acquire);
    /* generation 0 is no file's: without an identity, framed under the lock */
    uint64_t generation = id ? id->generation : 0;
    if (!rc && id)
        rc = frame_both(f, id->warcinfo_id, f->truncated);
    if (!rc && f->batch) {
        f->framed = generation; /* appended at the batch's flush */
        return rc;
    }
    if (!rc) {
        pthread_mutex_lock(&w->lock);
        rc = append_fetch(f, generation, f->truncated, &f->placed);
        pthread_mutex_unlock(&w->lock);
    }
    return rc;
}

/* The fetch a job stream belongs to. */
static sieve_warc_fetch *fetch_of(warc_zq_stream *s)
{
    return (sieve_warc_fetch *)((char *)s - offsetof(sieve_warc_fetch, zs));
}

static int run_op(void *ctx, warc_zq_stream *s, int op, const void *data, size_t len)
{
    (void)ctx;
    sieve_warc_fetch *f = fetch_of(s);
    if (op & OP_END)
        return end_fetch(f);
    struct rec *r = op & OP_RESPONSE ? &f->resp : &f->req;
    if (op & OP_CLOSE)
        return rec_seal(r);
    return rec_store(r, data, len, op & OP_PAYLOAD);
}

/* Checks the fetch can end and queues its last job (run at once without
 * compression threads). */
static int end_submit(sieve_warc_fetch *f, const char *truncated)
{
    int rc = f->err;
    if (!rc && truncated && !reason_ok(truncated))
        rc = SIEVE_EINVAL;
    if (!rc && (f->phase < RESP_HEAD || (f->phase == RESP_HEAD && f->resp.head.len == 0)))
        rc = SIEVE_ESTATE;
    if (!rc)
        rc = rec_start(f, &f->resp);
    if (!rc && truncated) {
        snprintf(f->truncated_buf, sizeof f->truncated_buf, "%s", truncated);
        f->truncated = f->truncated_buf;
    }
    if (!rc)
        rc = submit(f, OP_END, NULL, 0);
    return rc;
}

static void fill_result(const sieve_warc_fetch *f, sieve_warc_fetch_result *res)
{
    res->request = f->placed.request;
    res->response = f->placed.response;
    memcpy(res->request_id, f->req_id, sizeof res->request_id);
    memcpy(res->response_id, f->resp_id, sizeof res->response_id);
    res->body_bytes = f->resp.body_len;
    memcpy(res->payload_digest, f->resp.payload_digest, sizeof res->payload_digest);
}

int sieve_warc_fetch_end(sieve_warc_fetch *f, const char *truncated, sieve_warc_fetch_result *res)
{
    if (!f)
        return SIEVE_EINVAL;
    int rc = end_submit(f, truncated);
    /* The caller's record of the page names where the records are: they
     * must be written when this returns. */
    if (!rc && f->w->zq)
        rc = warc_zq_wait(f->w->zq, &f->zs);
    if (!rc && res)
        fill_result(f, res);
    sieve_warc_fetch_abort(f);
    return rc;
}

/* The fetch's jobs have all run: the caller hears how, and f goes. */
static void report_written(sieve_warc_fetch *f, int rc)
{
    sieve_warc_fetch_result res;
    if (!rc)
        fill_result(f, &res);
    sieve_warc_written_fn fn = f->written;
    void *ud = f->written_ud;
    rec_free(&f->req);
    rec_free(&f->resp);
    free(f->uri);
    free(f);
    fn(ud, rc, rc ? NULL : &res);
}

static void stream_idle(void *ctx, warc_zq_stream *s)
{
    (void)ctx;
    sieve_warc_fetch *f = fetch_of(s);
    report_written(f, s->err);
}

/* Ends f for a callback: its last job queued (run, without compression
 * threads), or f freed and the failure returned. */
static int end_for_callback(sieve_warc_fetch *f, const char *truncated,
                            sieve_warc_written_fn written, void *ud)
{
    int rc = end_submit(f, truncated);
    if (rc) {
        sieve_warc_fetch_abort(f);
        return rc;
    }
    f->written = written;
    f->written_ud = ud;
    return SIEVE_OK;
}

int sieve_warc_fetch_end_async(sieve_warc_fetch *f, const char *truncated,
                               sieve_warc_written_fn written, void *ud)
{
    if (!f || !written) {
        sieve_warc_fetch_abort(f);
        return SIEVE_EINVAL;
    }
    int rc = end_for_callback(f, truncated, written, ud);
    if (rc)
        return rc;
    if (f->w->zq)
        warc_zq_finish(f->w->zq, &f->zs, stream_idle);
    else
        report_written(f, SIEVE_OK); /* the last job ran in submit() */
    return SIEVE_OK;
}

/* ---- batches ---- */

int sieve_warc_batch_new(sieve_warc *w, sieve_warc_batch **out)
{
    if (!out)
        return SIEVE_EINVAL;
    *out = NULL;
    if (!w)
        return SIEVE_EINVAL;
    sieve_warc_batch *b = calloc(1, sizeof *b);
    if (!b)
        return SIEVE_ENOMEM;
    b->w = w;
    b->tail = &b->head;
    *out = b;
    return SIEVE_OK;
}

int sieve_warc_fetch_end_batched(sieve_warc_fetch *f, const char *truncated, sieve_warc_batch *b,
                                 sieve_warc_written_fn written, void *ud)
{
    if (!f || !written || !b || b->w != f->w) {
        sieve_warc_fetch_abort(f);
        return SIEVE_EINVAL;
    }
    if (f->w->zq)
        return sieve_warc_fetch_end_async(f, truncated, written, ud);
    f->batch = b;
    int rc = end_for_callback(f, truncated, written, ud);
    if (rc)
        return rc;
    *b->tail = f;
    b->tail = &f->next;
    b->n++;
    b->bytes += f->req.out.len + f->req.spool.mem_len + f->resp.out.len + f->resp.spool.mem_len;
    if (b->n >= BATCH_FETCHES || b->bytes >= BATCH_BYTES)
        sieve_warc_batch_flush(b); /* a failure goes to the callbacks */
    return SIEVE_OK;
}

/* Under the lock: appends recs[0..n), the records of the fetches from
 * `from` up to `to` that have not failed, in one go where the file ends;
 * each of those fetches gets the outcome in its err. */
static int append_group(sieve_warc *w, sieve_warc_fetch *from, const sieve_warc_fetch *to,
                        struct rec *const *recs, int n)
{
    if (n == 0)
        return SIEVE_OK;
    uint64_t start = w->size;
    int rc = emit(w, recs, n);
    if (rc) {
        sieve_log(&w->o.logger, SIEVE_LOG_ERROR, "warc: writing to %s failed: %s",
                  w->paths[w->n_paths - 1], strerror(errno));
        cut_back(w, start);
    } else {
        for (int i = 0; i < n; i++)
            w->size += rec_stored(w, recs[i]);
        w->fetches += (uint64_t)n / 2;
    }
    for (sieve_warc_fetch *f = from; f != to; f = f->next)
        if (!f->err)
            f->err = rc;
    return rc;
}

/* Under the lock: appends the batch's fetches in order, in groups that a
 * rotation ends; every fetch's outcome goes into its err. */
static void append_batch(sieve_warc *w, sieve_warc_fetch *list)
{
    struct rec *recs[2 * BATCH_FETCHES];
    int n = 0;
    unsigned gap = w->gzip ? 0 : 4; /* as append_fetch() counts lengths */
    uint64_t end = w->size;
    sieve_warc_fetch *from = list;
    for (sieve_warc_fetch *f = list; f; f = f->next) {
        uint64_t req_len = rec_stored(w, &f->req), resp_len = rec_stored(w, &f->resp);
        if (w->fd >= 0 && w->o.max_bytes && w->fetches + (uint64_t)n / 2 > 0 &&
            end + req_len + resp_len > w->o.max_bytes) {
            append_group(w, from, f, recs, n);
            n = 0;
            from = f;
            rotate(w); /* a failure leaves no file: the rest fail below */
            end = w->size;
        }
        if (w->fd < 0)
            f->err = SIEVE_EIO;
        else if (f->framed != w->generation)
            f->err = frame_both(f, w->warcinfo_id, f->truncated);
        if (f->err)
            continue;
        /* the headers may have changed length with the file's identity */
        req_len = rec_stored(w, &f->req);
        resp_len = rec_stored(w, &f->resp);
        locate(w, &f->placed.request, end, req_len - gap);
        locate(w, &f->placed.response, end + req_len, resp_len - gap);
        end += req_len + resp_len;
        recs[n++] = &f->req;
        recs[n++] = &f->resp;
    }
    append_group(w, from, NULL, recs, n);
}

int sieve_warc_batch_flush(sieve_warc_batch *b)
{
    if (!b)
        return SIEVE_EINVAL;
    sieve_warc_fetch *list = b->head;
    if (!list)
        return SIEVE_OK;
    b->head = NULL;
    b->tail = &b->head;
    b->n = 0;
    b->bytes = 0;
    pthread_mutex_lock(&b->w->lock);
    append_batch(b->w, list);
    pthread_mutex_unlock(&b->w->lock);
    int first = SIEVE_OK;
    while (list) {
        sieve_warc_fetch *next = list->next;
        if (!first)
            first = list->err;
        report_written(list, list->err);
        list = next;
    }
    return first;
}

void sieve_warc_batch_free(sieve_warc_batch *b)
{
    if (!b)
        return;
    sieve_warc_batch_flush(b);
    free(b);
}

void sieve_warc_fetch_abort(sieve_warc_fetch *f)
{
    if (!f)
        return;
    if (f->w->zq)
        warc_zq_drop(f->w->zq, &f->zs); /* its jobs no longer have a fetch */
    rec_free(&f->req);
    rec_free(&f->resp);
    free(f->uri);
    free(f);
}
