/* warc-archive.h - the archive as its fetches see it (warc.c,
 * warc-fetch.c, warc-batch.c): its state, the records being built, and
 * the calls that append them. Not exported. */
#ifndef SIEVE_WARC_ARCHIVE_H
#define SIEVE_WARC_ARCHIVE_H

#include <arpa/inet.h>
#include <pthread.h>
#include <stdatomic.h>

#include "warc-internal.h"

#define TRAILER "\r\n\r\n"

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
    uint64_t behind;     /* the write-behind thread took the file up to here */
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

    /* Fetches ended, kept with their buffers for the next ones
     * (warc-fetch.c), under their own lock. */
    pthread_mutex_t spare_lock;
    sieve_warc_fetch *spares;
    unsigned n_spares;

    /* The write-behind thread (warc-behind.c); it waits on behind_cond
     * under the lock. */
    pthread_t behind_thread;
    pthread_cond_t behind_cond;
    bool behind_running, behind_stop;
    _Atomic uint64_t written_behind;
    atomic_int behind_errno; /* the first of its syncs that failed: 0 for none */

    /* gzip: deflate streams for blocks and for headers, reused. */
    warc_zpool blocks, heads;
    warc_zq *zq; /* gzip: the compression threads; NULL: the feeder compresses */
};

/* One record of a fetch as it is built. */
struct rec {
    warc_buf head;
    bool head_done;    /* a blank line ended the head */
    size_t line_len;   /* bytes of the head's current line */
    char last;         /* its last byte */
    bool started;      /* the head went into the spool; body bytes follow */
    bool closing;      /* the feeder asked for it to be closed */
    bool closed;       /* trailer written, spool finished, digests made */
    bool spool_failed; /* and the failure was logged */
    sieve_sha1 block, payload;
    uint64_t head_len, body_len;
    warc_spool spool;
    char block_digest[WARC_DIGEST_SIZE];
    char payload_digest[WARC_DIGEST_SIZE];
    /* The WARC header, as stored (gzip: header, compressed text), and the
     * gzip trailer. */
    warc_buf out;
    unsigned char gz_trailer[8];
};

/* One fetch: its two records as they are built (warc-fetch.c), and its
 * place in a batch (warc-batch.c). */
enum phase { REQ_HEAD, REQ_BODY, RESP_HEAD, RESP_BODY };

struct sieve_warc_fetch {
    sieve_warc *w;
    warc_buf uri;
    warc_buf scratch; /* a head rewritten, then a WARC header's text */
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

/* ---- warc.c ---- */

void warc_rec_init(sieve_warc *w, struct rec *r);
/* Empties r for a new record of the same archive, keeping its digest
 * contexts and its buffers of no more than keep bytes. */
void warc_rec_reuse(struct rec *r, size_t keep);
void warc_rec_free(struct rec *r);
/* Bytes a finished record takes in the file. */
uint64_t warc_rec_stored(const sieve_warc *w, const struct rec *r);
/* Makes r's WARC header (and its gzip framing) from its text. */
int warc_rec_frame(sieve_warc *w, struct rec *r, const warc_buf *text);
/* Under the lock: appends finished records where the file ends, headers
 * and spools kept in memory in writev()s, spooled files copied in
 * between. Does not move w->size. */
int warc_emit(sieve_warc *w, struct rec *const *recs, int n);
/* Under the lock: cuts the file back to where a failed append began. */
void warc_cut_back(sieve_warc *w, uint64_t at);
/* Under the lock: closes the current file and opens the series' next. */
int warc_rotate(sieve_warc *w);

/* ---- warc-behind.c ---- */

/* Starts the write-behind thread, unless o.write_behind is 0. SIEVE_OK or
 * SIEVE_ENOMEM. */
int warc_behind_start(sieve_warc *w);
/* Under the lock, after an append: wakes the thread when a write is due. */
void warc_behind_kick(sieve_warc *w);
/* Not under the lock: ends the thread, if there is one. */
void warc_behind_stop(sieve_warc *w);
/* SIEVE_EIO, with errno set, once a sync of the thread's has failed;
 * SIEVE_OK before. Thread-safe. */
int warc_behind_failed(sieve_warc *w);

/* ---- warc-fetch.c ---- */

/* The job a .gz archive's compression threads run (warc-zq.c), and what
 * a fetch runs itself without them. */
int warc_fetch_run_op(void *ctx, warc_zq_stream *s, int op, const void *data, size_t len);
/* Frees the spare fetches, when the archive goes. */
void warc_fetch_free_spares(sieve_warc *w);
/* Makes both records' headers against the file whose warcinfo is id. */
int warc_fetch_frame(sieve_warc_fetch *f, const char *id, const char *truncated);
/* Fills loc: a record at offset of the current file, length bytes. */
void warc_locate(const sieve_warc *w, sieve_warc_location *loc, uint64_t offset, uint64_t length);
/* Ends f for a callback: its last job queued (run, without compression
 * threads), or f freed and the failure returned. */
int warc_fetch_end_for_callback(sieve_warc_fetch *f, const char *truncated,
                                sieve_warc_written_fn written, void *ud);
/* The fetch's jobs have all run: the caller hears how (rc), and f goes. */
void warc_fetch_report(sieve_warc_fetch *f, int rc);

#endif
