/* warc-fetch.c - a fetch: its request and response records, fed as
 * the transfer goes, then appended to the archive (warc.c), alone or in a
 * batch (warc-batch.c).
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
 * fetch's end), run by warc_fetch_run_op(). A plain archive, or a .gz one with
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
 * Spares. A fetch's records allocate a dozen buffers and three digest
 * contexts, and a crawl makes one fetch a page: a fetch that ends goes to
 * the archive's spares with what it allocated (buffers of up to SPARE_KEEP
 * bytes), and the next one begins with them. malloc and free were a
 * fifth of the instructions a plain archive added to a page besides its
 * digests (bench/results/warc.txt, set 13). A .gz archive's fetches end
 * in its compression threads and are kept all the same, under the same
 * lock: once a page's block was deflated whole, that made a .gz crawl
 * 1.07 times as fast (bench/results/warc.txt, set 28). */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "warc-archive.h"

#define ORIG_PREFIX "X-Archive-Orig-"

/* Spares an archive keeps at most, and the largest buffer a spare keeps. */
#define SPARES     64
#define SPARE_KEEP (32 * 1024)

/* Jobs on a fetch's records: bytes to store (of the response's record
 * with OP_RESPONSE, of the payload with OP_PAYLOAD), a record to close,
 * or the fetch to append. */
enum { OP_RESPONSE = 1, OP_PAYLOAD = 2, OP_CLOSE = 4, OP_END = 8 };

/* ---- records of a fetch ---- */

/* The payload digest of an empty payload: a request's, as a crawler's
 * GET has no body, and a response's without one. Its SHA-1 is started
 * only when a payload byte comes: making, starting and freeing a context
 * took as long as hashing a kilobyte. */
#define EMPTY_SHA1 "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"
_Static_assert(sizeof EMPTY_SHA1 == WARC_DIGEST_SIZE, "a digest's text");

/* Stores bytes of the block: hashed, then spooled (and deflated). */
static int rec_store(struct rec *r, const void *data, size_t len, bool payload)
{
    if (payload && len && !r->payload.running && sieve_sha1_start(&r->payload))
        return SIEVE_ENOMEM;
    sieve_sha1_add(&r->block, data, len);
    if (payload)
        sieve_sha1_add(&r->payload, data, len);
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
    sieve_sha1_end(&r->block, r->block_digest);
    if (r->payload.running)
        sieve_sha1_end(&r->payload, r->payload_digest);
    else
        memcpy(r->payload_digest, EMPTY_SHA1, sizeof EMPTY_SHA1);
    r->closed = true;
    return SIEVE_OK;
}

/* Hands a job to the compression threads, or runs it here without them. */
static int submit(sieve_warc_fetch *f, int op, const void *data, size_t len)
{
    if (f->w->zq)
        return warc_zq_push(f->w->zq, &f->zs, op, data, len);
    return warc_fetch_run_op(f->w, &f->zs, op, data, len);
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
    if ((rc = sieve_sha1_start(&r->block)))
        return rc;
    r->started = true;
    /* Rewritten whole, then fed as one piece: one job, not one a line. */
    warc_buf *out = &f->scratch;
    out->len = 0;
    const char *p = r->head.data, *end = p + r->head.len;
    bool first = true;
    while (p < end && !rc) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
        if (!first && warc_line_is(p, n, "Transfer-Encoding"))
            rc = warc_buf_add(out, ORIG_PREFIX, strlen(ORIG_PREFIX));
        if (!rc)
            rc = warc_buf_add(out, p, n);
        p += n;
        first = false;
    }
    r->head.len = 0;
    if (!rc)
        rc = rec_put(f, r, out->data, out->len, false);
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

/* A spare fetch, or a new one. */
static sieve_warc_fetch *fetch_new(sieve_warc *w)
{
    pthread_mutex_lock(&w->spare_lock);
    sieve_warc_fetch *f = w->spares;
    if (f) {
        w->spares = f->next;
        w->n_spares--;
        f->next = NULL;
    }
    pthread_mutex_unlock(&w->spare_lock);
    if (f)
        return f;
    if (!(f = calloc(1, sizeof *f)))
        return NULL;
    f->w = w;
    warc_rec_init(w, &f->req);
    warc_rec_init(w, &f->resp);
    return f;
}

static void fetch_destroy(sieve_warc_fetch *f)
{
    warc_rec_free(&f->req);
    warc_rec_free(&f->resp);
    warc_buf_free(&f->uri);
    warc_buf_free(&f->scratch);
    free(f);
}

/* f is over: it becomes a spare, emptied, or goes. */
static void fetch_release(sieve_warc_fetch *f)
{
    sieve_warc *w = f->w;
    sieve_warc_fetch kept = {
        .w = w, .uri = f->uri, .scratch = f->scratch, .req = f->req, .resp = f->resp};
    warc_buf_reuse(&kept.uri, SPARE_KEEP);
    warc_buf_reuse(&kept.scratch, SPARE_KEEP);
    warc_rec_reuse(&kept.req, SPARE_KEEP);
    warc_rec_reuse(&kept.resp, SPARE_KEEP);
    *f = kept;
    pthread_mutex_lock(&w->spare_lock);
    bool keep = w->n_spares < SPARES;
    if (keep) {
        f->next = w->spares;
        w->spares = f;
        w->n_spares++;
    }
    pthread_mutex_unlock(&w->spare_lock);
    if (!keep)
        fetch_destroy(f);
}

void warc_fetch_free_spares(sieve_warc *w)
{
    while (w->spares) {
        sieve_warc_fetch *next = w->spares->next;
        fetch_destroy(w->spares);
        w->spares = next;
    }
    w->n_spares = 0;
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
    sieve_warc_fetch *f = fetch_new(w);
    if (!f)
        return SIEVE_ENOMEM;
    int rc = warc_buf_add(&f->uri, info->target_uri, strlen(info->target_uri));
    if (info->ip_address)
        strcpy(f->ip, info->ip_address);
    warc_format_date(info->date_us ? info->date_us : warc_now_us(), f->date);
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
                        "\r\nWARC-Target-URI: ", f->uri.data, "\r\n", ip ? "WARC-IP-Address: " : "",
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
int warc_fetch_frame(sieve_warc_fetch *f, const char *id, const char *truncated)
{
    warc_buf *t = &f->scratch;
    int rc = header_text(f, false, id, truncated, t);
    if (!rc)
        rc = warc_rec_frame(f->w, &f->req, t);
    if (!rc)
        rc = header_text(f, true, id, truncated, t);
    if (!rc)
        rc = warc_rec_frame(f->w, &f->resp, t);
    return rc;
}

void warc_locate(const sieve_warc *w, sieve_warc_location *loc, uint64_t offset, uint64_t length)
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
    uint64_t total = warc_rec_stored(w, &f->req) + warc_rec_stored(w, &f->resp);
    int rc = SIEVE_OK;
    if (w->fd < 0)
        return SIEVE_EIO; /* a rotation failed earlier */
    if (w->o.max_bytes && w->fetches > 0 && w->size + total > w->o.max_bytes)
        rc = warc_rotate(w);
    if (!rc && w->generation != generation)
        rc = warc_fetch_frame(f, w->warcinfo_id, truncated);
    if (rc)
        return rc;
    struct rec *both[2] = {&f->req, &f->resp};
    uint64_t start = w->size;
    rc = warc_emit(w, both, 2);
    if (rc) {
        sieve_log(&w->o.logger, SIEVE_LOG_ERROR, "warc: writing to %s failed: %s",
                  w->paths[w->n_paths - 1], strerror(errno));
        warc_cut_back(w, start);
        return rc;
    }
    uint64_t req_len = warc_rec_stored(w, &f->req), resp_len = warc_rec_stored(w, &f->resp);
    w->size += req_len + resp_len;
    w->fetches++;
    warc_behind_kick(w);
    /* Lengths as CDX indexes count them: without a plain record's
     * closing CRLF CRLF. */
    unsigned gap = w->gzip ? 0 : 4;
    if (res) {
        warc_locate(w, &res->request, start, req_len - gap);
        warc_locate(w, &res->response, start + req_len, resp_len - gap);
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
        rc = warc_fetch_frame(f, id->warcinfo_id, f->truncated);
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

int warc_fetch_run_op(void *ctx, warc_zq_stream *s, int op, const void *data, size_t len)
{
    (void)ctx;
    sieve_warc_fetch *f = fetch_of(s);
    if (op & OP_END)
        return end_fetch(f);
    struct rec *r = op & OP_RESPONSE ? &f->resp : &f->req;
    int rc = op & OP_CLOSE ? rec_seal(r) : rec_store(r, data, len, op & OP_PAYLOAD);
    /* Only a block past the spool's memory meets the disk before the end:
     * said once, with where and why, as an append that fails is. */
    if (rc == SIEVE_EIO && !r->spool_failed) {
        int e = errno;
        r->spool_failed = true;
        sieve_log(&f->w->o.logger, SIEVE_LOG_ERROR,
                  "warc: %s: the %s block went past %zu bytes of memory, and its temporary file "
                  "in %s failed: %s",
                  f->uri.data, op & OP_RESPONSE ? "response" : "request", r->spool.limit,
                  f->w->tmp_dir, strerror(e));
        errno = e;
    }
    return rc;
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
void warc_fetch_report(sieve_warc_fetch *f, int rc)
{
    sieve_warc_fetch_result res;
    if (!rc)
        fill_result(f, &res);
    sieve_warc_written_fn fn = f->written;
    void *ud = f->written_ud;
    fetch_release(f);
    fn(ud, rc, rc ? NULL : &res);
}

static void stream_idle(void *ctx, warc_zq_stream *s)
{
    (void)ctx;
    sieve_warc_fetch *f = fetch_of(s);
    warc_fetch_report(f, s->err);
}

/* Ends f for a callback: its last job queued (run, without compression
 * threads), or f freed and the failure returned. */
int warc_fetch_end_for_callback(sieve_warc_fetch *f, const char *truncated,
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
    int rc = warc_fetch_end_for_callback(f, truncated, written, ud);
    if (rc)
        return rc;
    if (f->w->zq)
        warc_zq_finish(f->w->zq, &f->zs, stream_idle);
    else
        warc_fetch_report(f, SIEVE_OK); /* the last job ran in submit() */
    return SIEVE_OK;
}

void sieve_warc_fetch_abort(sieve_warc_fetch *f)
{
    if (!f)
        return;
    if (f->w->zq)
        warc_zq_drop(f->w->zq, &f->zs); /* its jobs no longer have a fetch */
    fetch_release(f);
}
