/* warc-batch.c - fetches appended together (sieve_warc_fetch_end_batched()).
 *
 * A fetch ended into a batch is sealed and framed at once (warc-fetch.c)
 * and appended at the batch's flush, with the others, under one lock and
 * in as few writev()s as the iovec array allows: a write(2) to ext4 cost
 * 5.6 to 6.1 us of CPU for one fetch of 8.3 KB here, 2.6 to 2.9 us a
 * fetch when eight went together (bench/results/warc.txt, set 9). A
 * rotation between two fetches of a batch writes those before it first,
 * so every place a callback reports is in the file it names.
 *
 * A batch belongs to one thread at a time (in a crawl, a worker, which
 * flushes it before each of its waits); the archive's lock is taken only
 * in the flush. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "warc-archive.h"

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
    int rc = warc_fetch_end_for_callback(f, truncated, written, ud);
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
    int rc = warc_emit(w, recs, n);
    if (rc) {
        sieve_log(&w->o.logger, SIEVE_LOG_ERROR, "warc: writing to %s failed: %s",
                  w->paths[w->n_paths - 1], strerror(errno));
        warc_cut_back(w, start);
    } else {
        for (int i = 0; i < n; i++)
            w->size += warc_rec_stored(w, recs[i]);
        w->fetches += (uint64_t)n / 2;
        warc_behind_kick(w);
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
        uint64_t req_len = warc_rec_stored(w, &f->req), resp_len = warc_rec_stored(w, &f->resp);
        if (w->fd >= 0 && w->o.max_bytes && w->fetches + (uint64_t)n / 2 > 0 &&
            end + req_len + resp_len > w->o.max_bytes) {
            append_group(w, from, f, recs, n);
            n = 0;
            from = f;
            warc_rotate(w); /* a failure leaves no file: the rest fail below */
            end = w->size;
        }
        if (w->fd < 0)
            f->err = SIEVE_EIO;
        else if (f->framed != w->generation)
            f->err = warc_fetch_frame(f, w->warcinfo_id, f->truncated);
        if (f->err)
            continue;
        /* the headers may have changed length with the file's identity */
        req_len = warc_rec_stored(w, &f->req);
        resp_len = warc_rec_stored(w, &f->resp);
        warc_locate(w, &f->placed.request, end, req_len - gap);
        warc_locate(w, &f->placed.response, end + req_len, resp_len - gap);
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
        warc_fetch_report(list, list->err);
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
