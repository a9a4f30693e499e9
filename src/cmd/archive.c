/* archive.c - `sieve crawl --warc`: the crawl's transfers as WARC records.
 *
 * The command is a client of the engine like any embedder: everything
 * here comes through the public wire callbacks of sieve/crawl.h. Each
 * transfer (pages, sitemaps, robots.txt and its redirects) gets one
 * sieve_warc_fetch, kept in the transfer's user slot from its first
 * callback: the request head goes in as curl sent it, the response head
 * and body as they came (chunked coding removed, gzip kept), and the
 * fetch ends in on_transfer_end, which writes the request and response
 * records with the truncation the engine reports. The record that
 * follows (on_record) takes the response's file and offset for its JSON
 * line. Bodies are never held: the WARC writer hashes, compresses and
 * spools them as they come (sieve/warc.h); for a .gz archive its own
 * threads compress, and the worker waits for them only when the writer's
 * queue is full.
 *
 * A fetch ends without waiting for its records to be written
 * (sieve_warc_fetch_end_async()): a transfer with a record holds it back
 * (sieve_crawl_transfer_hold()), and the writer's callback, once the
 * records are in the file, puts their place in the transfer's state and
 * releases the hold. Only then does on_record write the JSON line, and
 * the engine report the URL done: a kill in between loses nothing, the
 * URL is fetched again. A plain archive writes at once, and its callback
 * releases the hold before on_transfer_end returns.
 *
 * A transfer with no request head (a DNS or connect failure) or no
 * response head (a connection that closed first) leaves no record: WARC
 * has nothing to store for it, and its JSON line says what happened. An
 * aborted transfer (stop() after the grace) is dropped too: its URL was
 * not reported done, so a resumed crawl fetches it again. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "archive.h"
#include "index-file.h"
#include "sieve/warc.h"

struct archive {
    sieve_warc *w;
    sieve_logger lg;
    atomic_uint errors; /* the writer's error messages, told through forward() */
    atomic_int failure; /* the first write that failed after its fetch's end */
    /* Each worker's fetches since it last waited (made on its first), only
     * ever touched by that worker's thread, then by archive_close(). */
    sieve_warc_batch *batches[SIEVE_CRAWL_MAX_WORKERS];
};

/* One transfer's fetch, in its user slot. */
typedef struct fetch {
    sieve_warc_fetch *f; /* NULL once ended, or when it could not be made */
    char tail[4];        /* the request's last bytes, to see where its head ends */
    size_t tail_len;
    bool head_done;         /* a whole request head went in */
    bool responded;         /* a response head line went in */
    archive *a;             /* for the writer's callback */
    sieve_crawl_hold *hold; /* the transfer's record, until the records are written */
    archive_place at;       /* where the response went, once written */
} fetch;

/* ---- opening ---- */

/* Removes the files of an earlier archive of the same name. */
static int replace_old(const archive_config *cfg)
{
    char **files;
    size_t n;
    int rc = sieve_warc_files(cfg->path, cfg->max_bytes > 0, &files, &n);
    for (size_t i = 0; rc == SIEVE_OK && i < n; i++) {
        if (unlink(files[i]) != 0 && errno != ENOENT) {
            sieve_log(&cfg->logger, SIEVE_LOG_ERROR, "--warc: cannot replace %s: %s", files[i],
                      strerror(errno));
            rc = SIEVE_EIO;
        }
    }
    sieve_warc_files_free(files);
    return rc;
}

/* The writer's messages go to the command's logger, counted: an open that
 * failed and said why needs no second line. */
static void forward(void *ctx, sieve_log_level level, const char *msg)
{
    archive *a = ctx;
    if (level == SIEVE_LOG_ERROR) /* from the writer's threads too */
        atomic_fetch_add_explicit(&a->errors, 1, memory_order_relaxed);
    if (a->lg.fn != NULL)
        a->lg.fn(a->lg.ctx, level, msg);
}

int archive_open(archive **out, const archive_config *cfg)
{
    *out = NULL;
    if (!cfg->resume) {
        int rc = replace_old(cfg);
        if (rc != SIEVE_OK)
            return rc;
    }
    archive *a = calloc(1, sizeof *a);
    if (a == NULL)
        return SIEVE_ENOMEM;
    a->lg = cfg->logger;
    sieve_warc_options o;
    sieve_warc_options_init(&o);
    o.max_bytes = cfg->max_bytes;
    o.gzip_level = cfg->gzip_level;
    /* resuming, the last file is cut back to its last whole fetch and
     * kept; the crawl goes on in the next numbered file */
    o.mode = cfg->resume ? SIEVE_WARC_NEXT : SIEVE_WARC_CREATE;
    o.info = cfg->info;
    o.n_info = cfg->n_info;
    o.logger = (sieve_logger){.fn = forward, .ctx = a, .level = cfg->logger.level};
    int rc = sieve_warc_open(&a->w, cfg->path, &o);
    if (rc != SIEVE_OK) {
        if (atomic_load_explicit(&a->errors, memory_order_relaxed) == 0)
            sieve_log(&cfg->logger, SIEVE_LOG_ERROR, "--warc: %s: %s%s%s", cfg->path,
                      sieve_strerror(rc), rc == SIEVE_EIO ? ": " : "",
                      rc == SIEVE_EIO ? strerror(errno) : "");
        free(a);
        return rc;
    }
    *out = a;
    return SIEVE_OK;
}

/* ---- the wire ---- */

/* A fetch's error: said once, and the fetch dropped. */
static int failed(archive *a, fetch *s, const sieve_crawl_transfer *t, int rc)
{
    sieve_log(&a->lg, SIEVE_LOG_ERROR, "--warc: %s: %s", t->url, sieve_strerror(rc));
    sieve_warc_fetch_abort(s->f);
    s->f = NULL;
    return rc;
}

static int begin(archive *a, fetch *s, const sieve_crawl_transfer *t)
{
    sieve_warc_fetch_info fi = {
        .target_uri = t->url,
        .ip_address = t->remote_ip,
        .date_us = t->started_us,
    };
    *s = (fetch){0};
    int rc = sieve_warc_fetch_begin(a->w, &fi, &s->f);
    return rc == SIEVE_OK ? rc : failed(a, s, t, rc);
}

/* Whether the request head ends with data: CRLF CRLF, across pieces. */
static bool ends_head(fetch *s, const char *data, size_t len)
{
    char last[8];
    size_t keep = len >= 4 ? 0 : s->tail_len < 4 - len ? s->tail_len : 4 - len;
    memcpy(last, s->tail + s->tail_len - keep, keep);
    size_t take = len < 4 ? len : 4;
    memcpy(last + keep, data + len - take, take);
    s->tail_len = keep + take;
    memcpy(s->tail, last, s->tail_len);
    return s->tail_len == 4 && memcmp(s->tail, "\r\n\r\n", 4) == 0;
}

int archive_request(archive *a, sieve_crawl_transfer *t, const char *data, size_t len)
{
    fetch *s = t->user;
    if (s == NULL) {
        if ((s = calloc(1, sizeof *s)) == NULL)
            return SIEVE_ENOMEM;
        t->user = s;
        int rc = begin(a, s, t);
        if (rc != SIEVE_OK)
            return rc;
    } else if (s->head_done) {
        /* curl sent the request again on a new connection: the first
         * attempt had no response, the archive keeps the one that counts */
        sieve_warc_fetch_abort(s->f);
        int rc = begin(a, s, t);
        if (rc != SIEVE_OK)
            return rc;
    }
    if (s->f == NULL)
        return SIEVE_OK;
    s->head_done = ends_head(s, data, len);
    int rc = sieve_warc_fetch_request_head(s->f, data, len);
    return rc == SIEVE_OK ? rc : failed(a, s, t, rc);
}

int archive_response_head(archive *a, sieve_crawl_transfer *t, const char *line, size_t len)
{
    fetch *s = t->user;
    if (s == NULL || s->f == NULL)
        return SIEVE_OK; /* no request went in: nothing to pair it with */
    s->responded = true;
    int rc = sieve_warc_fetch_response_head(s->f, line, len);
    return rc == SIEVE_OK ? rc : failed(a, s, t, rc);
}

int archive_response_body(archive *a, sieve_crawl_transfer *t, const char *data, size_t len)
{
    fetch *s = t->user;
    if (s == NULL || s->f == NULL)
        return SIEVE_OK;
    int rc = sieve_warc_fetch_response_body(s->f, data, len);
    return rc == SIEVE_OK ? rc : failed(a, s, t, rc);
}

/* A failed write: said, and kept for archive_close(). */
static void write_failed(archive *a, const char *url, int rc)
{
    sieve_log(&a->lg, SIEVE_LOG_ERROR, "--warc: %s: %s", url != NULL ? url : "a fetch",
              sieve_strerror(rc));
    int none = SIEVE_OK;
    atomic_compare_exchange_strong(&a->failure, &none, rc);
}

static void place(fetch *s, const sieve_warc_fetch_result *res)
{
    s->at.name = res->response.name;
    s->at.offset = res->response.offset;
    snprintf(s->at.digest, sizeof s->at.digest, "%s", res->payload_digest);
}

/* The fetch's records are written (SIEVE_OK), there was nothing to write
 * (SIEVE_ESTATE: a head cut short, and the record goes on without a
 * place), or writing failed: then a held record is dropped with s, its
 * URL not done. */
static void settle(fetch *s, int rc, const sieve_warc_fetch_result *res)
{
    bool ok = rc == SIEVE_OK || rc == SIEVE_ESTATE;
    if (rc == SIEVE_OK)
        place(s, res);
    sieve_crawl_hold *hold = s->hold;
    if (hold == NULL || !ok)
        free(s); /* no record follows, or it is dropped */
    /* s is the record's from here on: on_record may free it at once */
    if (hold != NULL)
        sieve_crawl_hold_release(hold, ok ? SIEVE_OK : rc);
}

/* The writer's callback, once the records are in the file (or failed). */
static void written(void *ud, int rc, const sieve_warc_fetch_result *res)
{
    fetch *s = ud;
    if (rc != SIEVE_OK && rc != SIEVE_ESTATE)
        write_failed(s->a, NULL, rc);
    settle(s, rc, res);
}

/* The batch of the worker running t; NULL when none can be made. */
static sieve_warc_batch *batch_of(archive *a, const sieve_crawl_transfer *t)
{
    if (t->worker >= SIEVE_CRAWL_MAX_WORKERS)
        return NULL;
    sieve_warc_batch **b = &a->batches[t->worker];
    if (*b == NULL && sieve_warc_batch_new(a->w, b) != SIEVE_OK)
        *b = NULL;
    return *b;
}

/* Ends the fetch without waiting for its records, the transfer's record
 * held until they are written. */
static int end_fetch(archive *a, fetch *s, sieve_crawl_transfer *t)
{
    sieve_warc_fetch *f = s->f;
    s->f = NULL;
    s->a = a;
    if (t->has_record && sieve_crawl_transfer_hold(t, &s->hold) != SIEVE_OK) {
        /* no hold: the records are written before the record goes */
        sieve_warc_fetch_result res;
        int rc = sieve_warc_fetch_end(f, t->truncated, &res);
        if (rc == SIEVE_OK)
            place(s, &res);
        else if (rc != SIEVE_ESTATE)
            write_failed(a, t->url, rc);
        return rc == SIEVE_ESTATE ? SIEVE_OK : rc;
    }
    /* A plain archive appends a held record's fetch at the worker's next
     * wait (archive_wait), with the others that ended before it. A fetch
     * without a record (robots.txt, an attempt to be retried) goes at
     * once: nothing waits for it, and its URL's next attempt, on any
     * worker, must find it in the archive first. */
    sieve_warc_batch *b = t->has_record ? batch_of(a, t) : NULL;
    int rc = b != NULL ? sieve_warc_fetch_end_batched(f, t->truncated, b, written, s)
                       : sieve_warc_fetch_end_async(f, t->truncated, written, s);
    bool ok = rc == SIEVE_OK || rc == SIEVE_ESTATE;
    if (!t->has_record || !ok)
        t->user = NULL; /* s goes with the callback, or now */
    if (rc == SIEVE_OK)
        return rc;
    /* nothing was written, and the callback will not come */
    if (!ok)
        write_failed(a, t->url, rc);
    settle(s, rc, NULL);
    return ok ? SIEVE_OK : rc;
}

int archive_transfer_end(archive *a, sieve_crawl_transfer *t)
{
    fetch *s = t->user;
    if (s != NULL && s->f != NULL && !t->aborted && s->responded)
        return end_fetch(a, s, t);
    if (s != NULL && s->f != NULL) {
        sieve_warc_fetch_abort(s->f);
        s->f = NULL;
    }
    if (s != NULL && !t->has_record) {
        free(s);
        t->user = NULL;
    }
    return SIEVE_OK;
}

void archive_take(archive *a, const sieve_crawl_transfer *t, archive_place *at)
{
    (void)a;
    fetch *s = t->user;
    *at = s != NULL ? s->at : (archive_place){0};
    free(s);
}

void archive_wait(archive *a, unsigned worker)
{
    if (worker < SIEVE_CRAWL_MAX_WORKERS && a->batches[worker] != NULL)
        sieve_warc_batch_flush(a->batches[worker]); /* failures go to the callbacks */
}

int archive_sync(archive *a)
{
    return sieve_warc_sync(a->w);
}

void archive_stats(archive *a, sieve_warc_stats *out)
{
    sieve_warc_get_stats(a->w, out);
}

int archive_close(archive *a)
{
    if (a == NULL)
        return SIEVE_OK;
    /* empty: every fetch in a batch holds a record, and a worker waits
     * for its held records before it ends */
    for (unsigned i = 0; i < SIEVE_CRAWL_MAX_WORKERS; i++)
        sieve_warc_batch_free(a->batches[i]);
    int rc = sieve_warc_close(a->w); /* the last callbacks come before it returns */
    int failure = atomic_load(&a->failure);
    free(a);
    return rc != SIEVE_OK ? rc : failure;
}

/* ---- the index ---- */

int archive_index(const archive_config *cfg, const char *out_path)
{
    char **files;
    size_t n;
    int rc = sieve_warc_files(cfg->path, cfg->max_bytes > 0, &files, &n);
    if (rc != SIEVE_OK)
        return rc;
    rc = index_file_write((const char *const *)files, n, out_path, "--cdxj: ", &cfg->logger);
    if (rc == SIEVE_ETRUNCATED)
        rc = SIEVE_OK; /* a torn record someone else left: said, and left out */
    sieve_warc_files_free(files);
    return rc;
}
