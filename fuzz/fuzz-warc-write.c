/* fuzz-warc-write.c - libFuzzer target: the WARC writer fed as an
 * embedder feeds it, then its archive read back and checked.
 *
 * The input is a program for the writer (sieve/warc.h): two fetches may
 * be open at once, and each step begins one, feeds its request or its
 * response (head or body bytes from the input, a body piece repeated to
 * reach the spool's file), ends it (at once, asynchronously or into a
 * batch, with or without a truncation reason), aborts it, flushes the
 * batch or syncs the archive - in any order, so that calls out of order
 * and bad arguments are part of the program. The archive is plain or
 * gzip (compressed by the feeding thread, or by a thread of its own), a
 * single file or a series rotated after a few kilobytes.
 *
 * The oracle is a model of what each fetch that ended well must have
 * written: its response's payload is the body bytes fed, its digests are
 * the SHA-1 of what is stored, its request names its response. Once the
 * archive is closed, every file must read back whole (the library's own
 * reader), every record's block digest must match its block, each fetch
 * reported written must be there once with its payload and digests, no
 * other fetch may be, and the CDXJ index must be made. Then, as the
 * input's last byte says, the last file is cut short as a kill leaves it
 * and the archive resumed: every whole fetch before the cut must stay
 * byte for byte, the rest go, and every file read whole. The files live
 * in /dev/shm where there is one, so that the syncs are cheap.
 *
 * The input: a configuration byte, then steps of an operation byte, a
 * length byte and that many data bytes. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scratch.h"
#include "sha1.h"
#include "sieve/warc.h"
#include "warc-internal.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Fetches one input may end; later begins are ignored. */
#define MAX_FETCHES 64

enum { BEGIN, REQ_HEAD, REQ_BODY, RESP_HEAD, RESP_BODY, END, ABORT, FLUSH };

/* What a fetch that ends well must have left in the archive. */
typedef struct expect {
    char req_digest[SIEVE_SHA1_TEXT_SIZE];  /* request payload */
    char resp_digest[SIEVE_SHA1_TEXT_SIZE]; /* response payload */
    uint64_t body_bytes;
    bool pending;   /* ended, its callback not yet come */
    bool written;   /* its callback said written */
    bool found;     /* its response record was read back */
    bool req_found; /* and its request record */
    char req_id[SIEVE_WARC_ID_SIZE], resp_id[SIEVE_WARC_ID_SIZE];
} expect;

/* A fetch being fed, with the model of its payloads. */
typedef struct slot {
    sieve_warc_fetch *f;
    sieve_sha1 req, resp;
    uint64_t body_bytes;
} slot;

static char dir[64], plain_path[96], gz_path[96];
static expect expects[MAX_FETCHES];
static size_t n_expects;

static void remove_archive(const char *path)
{
    char **files;
    for (int series = 0; series < 2; series++) {
        if (sieve_warc_files(path, series, &files, NULL) != SIEVE_OK)
            abort();
        for (char **f = files; *f != NULL; f++)
            unlink(*f);
        sieve_warc_files_free(files);
    }
}

static void remove_dir(void)
{
    remove_archive(plain_path);
    remove_archive(gz_path);
    rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    scratch_dir(dir, sizeof dir, "fuzz-warc-write");
    snprintf(plain_path, sizeof plain_path, "%s/a.warc", dir);
    snprintf(gz_path, sizeof gz_path, "%s/a.warc.gz", dir);
    atexit(remove_dir);
    return 0;
}

/* The written() callback of an asynchronous or batched end. */
static void written(void *ud, int status, const sieve_warc_fetch_result *res)
{
    expect *e = ud;
    if (!e->pending || (status == SIEVE_OK) != (res != NULL))
        abort();
    e->pending = false;
    if (status != SIEVE_OK)
        return;
    if (res->body_bytes != e->body_bytes || strcmp(res->payload_digest, e->resp_digest) != 0)
        abort();
    memcpy(e->req_id, res->request_id, sizeof e->req_id);
    memcpy(e->resp_id, res->response_id, sizeof e->resp_id);
    e->written = true;
}

/* A NUL-terminated copy of the step's data, in buf. */
static const char *text(const uint8_t *p, size_t n, char *buf)
{
    memcpy(buf, p, n);
    buf[n] = '\0';
    return buf;
}

static void begin(sieve_warc *w, slot *s, unsigned flags, const uint8_t *p, size_t n)
{
    char uri[256], ip[256];
    if (s->f != NULL || n_expects == MAX_FETCHES)
        return;
    sieve_warc_fetch_info fi = {
        .target_uri = n ? text(p, n, uri) : "http://example.com/a?b=1",
        .ip_address = flags & 1   ? "192.0.2.1"
                      : flags & 2 ? "2001:db8::1"
                                  : NULL,
        .date_us = flags & 4 ? 0 : 1795000000000000 + (int64_t)flags,
    };
    if (flags & 8)
        fi.ip_address = text(p, n, ip); /* most often no address at all */
    if (sieve_warc_fetch_begin(w, &fi, &s->f) != SIEVE_OK)
        return;
    s->body_bytes = 0;
    if (sieve_sha1_start(&s->req) != SIEVE_OK || sieve_sha1_start(&s->resp) != SIEVE_OK)
        abort();
}

/* Ends s's fetch as flags say; its expectation stands if the writer took
 * it. */
static void end(slot *s, sieve_warc_batch *b, unsigned style, unsigned flags, const uint8_t *p,
                size_t n)
{
    static const char *const reasons[] = {NULL, "length", "time"};
    char why[256];
    const char *truncated = (flags & 3) < 3 ? reasons[flags & 3] : text(p, n, why);
    expect *e = &expects[n_expects];
    *e = (expect){.body_bytes = s->body_bytes};
    sieve_sha1_end(&s->req, e->req_digest);
    sieve_sha1_end(&s->resp, e->resp_digest);
    sieve_warc_fetch *f = s->f;
    s->f = NULL;
    int rc;
    if (style == 0) {
        sieve_warc_fetch_result res;
        rc = sieve_warc_fetch_end(f, truncated, &res);
        if (rc == SIEVE_OK) {
            e->pending = true;
            written(e, rc, &res);
        }
    } else {
        e->pending = true;
        rc = style == 1 ? sieve_warc_fetch_end_async(f, truncated, written, e)
                        : sieve_warc_fetch_end_batched(f, truncated, b, written, e);
        if (rc != SIEVE_OK)
            e->pending = false; /* no callback comes */
    }
    n_expects++;
}

/* Runs the input's steps on an open archive. */
static void run(sieve_warc *w, sieve_warc_batch *b, unsigned style, const uint8_t *p, size_t n)
{
    slot slots[2] = {0};
    static uint8_t piece[16 * 255];
    while (n >= 2) {
        unsigned op = p[0] & 7, flags = p[0] >> 4;
        slot *s = &slots[p[0] >> 3 & 1];
        size_t len = p[1] < n - 2 ? p[1] : n - 2;
        const uint8_t *d = p + 2;
        p += 2 + len;
        n -= 2 + len;
        if (op == BEGIN)
            begin(w, s, flags, d, len);
        else if (op == FLUSH)
            flags & 1 ? sieve_warc_sync(w) : sieve_warc_batch_flush(b);
        else if (s->f == NULL)
            continue;
        else if (op == REQ_HEAD)
            sieve_warc_fetch_request_head(s->f, d, len);
        else if (op == REQ_BODY && sieve_warc_fetch_request_body(s->f, d, len) == SIEVE_OK)
            sieve_sha1_add(&s->req, d, len);
        else if (op == RESP_HEAD)
            sieve_warc_fetch_response_head(s->f, d, len);
        else if (op == RESP_BODY) {
            size_t k = 0; /* the piece, repeated 1 to 16 times */
            for (unsigned i = 0; i <= flags; i++, k += len)
                memcpy(piece + k, d, len);
            if (sieve_warc_fetch_response_body(s->f, piece, k) == SIEVE_OK) {
                sieve_sha1_add(&s->resp, piece, k);
                s->body_bytes += k;
            }
        } else if (op == END)
            end(s, b, style, flags, d, len);
        else if (op == ABORT) {
            sieve_warc_fetch_abort(s->f);
            s->f = NULL;
        }
    }
    for (int i = 0; i < 2; i++) {
        sieve_warc_fetch_abort(slots[i].f);
        sieve_sha1_free(&slots[i].req);
        sieve_sha1_free(&slots[i].resp);
    }
}

/* ---- reading back ---- */

typedef struct block {
    warc_buf bytes;
    sieve_sha1 digest;
} block;

static bool take_block(void *ctx, const void *data, size_t len)
{
    block *b = ctx;
    sieve_sha1_add(&b->digest, data, len);
    if (warc_buf_add(&b->bytes, data, len) != SIEVE_OK)
        abort();
    return true;
}

static bool field_is(const warc_rec *rec, const char *name, const char *want, warc_buf *v)
{
    return warc_field(rec->header, rec->header_len, name, v) && strcmp(v->data, want) == 0;
}

/* Whether a record's field value names id: "<urn:uuid:...>". */
static bool names(const char *value, const char *id)
{
    size_t n = strlen(id);
    return value[0] == '<' && strncmp(value + 1, id, n) == 0 && strcmp(value + 1 + n, ">") == 0;
}

static expect *by_id(const char *value, bool response)
{
    for (size_t i = 0; i < n_expects; i++)
        if (expects[i].written && names(value, response ? expects[i].resp_id : expects[i].req_id))
            return &expects[i];
    return NULL;
}

/* Checks one record against the model. */
static void check_record(const warc_rec *rec, block *b)
{
    char digest[SIEVE_SHA1_TEXT_SIZE];
    warc_buf v = {0}, id = {0};
    sieve_sha1_end(&b->digest, digest);
    if (!field_is(rec, "WARC-Block-Digest", digest, &v) ||
        !warc_field(rec->header, rec->header_len, "WARC-Record-ID", &id))
        abort();
    bool response = field_is(rec, "WARC-Type", "response", &v);
    if (response || field_is(rec, "WARC-Type", "request", &v)) {
        expect *e = by_id(id.data, response);
        if (e == NULL || (response ? e->found : e->req_found))
            abort(); /* a fetch not reported written, or twice */
        e->req_found |= !response;
        const char *payload = response ? e->resp_digest : e->req_digest;
        if (!field_is(rec, "WARC-Payload-Digest", payload, &v) ||
            !warc_field(rec->header, rec->header_len, "WARC-Concurrent-To", &v) ||
            !names(v.data, response ? e->req_id : e->resp_id))
            abort();
        if (response) {
            /* the payload is the block's tail, after an HTTP head */
            sieve_sha1 tail = {0};
            size_t at = b->bytes.len - e->body_bytes;
            if (b->bytes.len < e->body_bytes || b->bytes.len - e->body_bytes < 5 ||
                memcmp(b->bytes.data, "HTTP/", 5) != 0 || sieve_sha1_start(&tail) != SIEVE_OK)
                abort();
            sieve_sha1_add(&tail, b->bytes.data + at, e->body_bytes);
            sieve_sha1_end(&tail, digest);
            sieve_sha1_free(&tail);
            if (strcmp(digest, e->resp_digest) != 0)
                abort();
            e->found = true;
        }
    }
    warc_buf_free(&v);
    warc_buf_free(&id);
}

/* Reads one file of the archive whole. */
static void check_file(const char *path)
{
    struct stat st;
    uint64_t end = 0;
    if (stat(path, &st) != 0 || sieve_warc_complete_end(path, &end, NULL) != SIEVE_OK ||
        end != (uint64_t)st.st_size)
        abort();
    warc_reader *r;
    if (warc_reader_open(&r, path) != SIEVE_OK)
        abort();
    block b = {0};
    warc_rec rec;
    int rc;
    for (;;) {
        b.bytes.len = 0;
        if (sieve_sha1_start(&b.digest) != SIEVE_OK)
            abort();
        if ((rc = warc_reader_next(r, &rec, take_block, &b)) != SIEVE_OK)
            break;
        check_record(&rec, &b);
    }
    if (rc != SIEVE_EDRAINED)
        abort();
    sieve_sha1_free(&b.digest);
    warc_buf_free(&b.bytes);
    warc_reader_free(r);
}

static void check_archive(const char *path, bool series)
{
    char **files;
    size_t n;
    if (sieve_warc_files(path, series, &files, &n) != SIEVE_OK || n == 0)
        abort();
    for (size_t i = 0; i < n; i++)
        check_file(files[i]);
    for (size_t i = 0; i < n_expects; i++)
        if (expects[i].pending || expects[i].written != expects[i].found ||
            expects[i].written != expects[i].req_found)
            abort(); /* a callback that never came, or a fetch lost */
    FILE *devnull = fopen("/dev/null", "w");
    if (devnull == NULL ||
        sieve_warc_index((const char *const *)files, n, devnull, NULL) != SIEVE_OK)
        abort();
    fclose(devnull);
    sieve_warc_files_free(files);
}

/* ---- a kill, and a resume ---- */

/* The bytes of the file at path, malloc'd, and their count. */
static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    struct stat st;
    if (f == NULL || fstat(fileno(f), &st) != 0)
        abort();
    unsigned char *p = malloc((size_t)st.st_size + 1);
    if (p == NULL || fread(p, 1, (size_t)st.st_size, f) != (size_t)st.st_size)
        abort();
    fclose(f);
    *n = (size_t)st.st_size;
    return p;
}

/* Where the last whole fetch of the file at path ends, were it cut at
 * cut: past the last record that ends by then, less a request whose
 * response was cut (the two go in together). */
static uint64_t kept_after_cut(const char *path, uint64_t cut)
{
    warc_reader *r;
    if (warc_reader_open(&r, path) != SIEVE_OK)
        abort();
    warc_rec rec;
    warc_buf type = {0};
    uint64_t kept = 0;
    while (warc_reader_next(r, &rec, NULL, NULL) == SIEVE_OK && warc_reader_end(r) <= cut)
        if (!warc_field(rec.header, rec.header_len, "WARC-Type", &type) ||
            strcmp(type.data, "request") != 0)
            kept = warc_reader_end(r);
    warc_buf_free(&type);
    warc_reader_free(r);
    return kept;
}

/* The archive's last file cut short at a point the input picks, as a
 * kill leaves it, then resumed (SIEVE_WARC_NEXT, as a resumed crawl
 * opens its archive): the file must keep every whole fetch byte for byte
 * and lose the rest, and every file must then read whole. */
static void check_resume(const char *path, const sieve_warc_options *o, unsigned pick)
{
    char **files;
    size_t n, size;
    if (sieve_warc_files(path, o->series, &files, &n) != SIEVE_OK || n == 0)
        abort();
    char last[128];
    snprintf(last, sizeof last, "%s", files[n - 1]);
    sieve_warc_files_free(files);
    unsigned char *before = slurp(last, &size);
    uint64_t cut = (uint64_t)size * pick / 128, kept = kept_after_cut(last, cut);
    if (truncate(last, (off_t)cut) != 0)
        abort();
    sieve_warc_options ro = *o;
    ro.mode = SIEVE_WARC_NEXT;
    sieve_warc *w;
    if (sieve_warc_open(&w, path, &ro) != SIEVE_OK || sieve_warc_close(w) != SIEVE_OK)
        abort();
    uint64_t end = 0;
    unsigned char *after = slurp(last, &size);
    if (sieve_warc_complete_end(last, &end, NULL) != SIEVE_OK || end != size)
        abort();
    /* a file left with no whole record takes the new warcinfo itself */
    if (kept > 0 && (size != kept || memcmp(before, after, kept) != 0))
        abort();
    free(before);
    free(after);
    /* the files resumes add to a single one are numbered as a series' */
    if (sieve_warc_files(path, true, &files, &n) != SIEVE_OK)
        abort();
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (stat(files[i], &st) != 0 || sieve_warc_complete_end(files[i], &end, NULL) != SIEVE_OK ||
            end != (uint64_t)st.st_size)
            abort();
    }
    sieve_warc_files_free(files);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    unsigned config = data[0];
    bool gz = config & 1, series = config & 2;
    const char *path = gz ? gz_path : plain_path;
    sieve_warc_options o;
    sieve_warc_options_init(&o);
    o.series = series;
    o.max_bytes = series ? 1024u << (config >> 5 & 3) : 0; /* 1 to 8 KiB */
    /* Mostly no threads, so that the program's order is the run's; with
     * them the callbacks of asynchronous ends come from a compression
     * thread, and sieve_warc_close() joins it before the checks. */
    o.gzip_inline = !(config & 128);
    o.gzip_threads = 1;
    o.gzip_level = 1;
    o.spool_memory = config & 16 ? 4096 : SIEVE_WARC_SPOOL_MEMORY;
    o.write_behind = 0;
    remove_archive(path);
    sieve_warc *w;
    sieve_warc_batch *b;
    if (sieve_warc_open(&w, path, &o) != SIEVE_OK || sieve_warc_batch_new(w, &b) != SIEVE_OK)
        abort();
    n_expects = 0;
    unsigned style = config >> 2 & 3; /* end, end_async, end_batched (twice as often) */
    run(w, b, style > 2 ? 2 : style, data + 1, size - 1);
    sieve_warc_batch_free(b);
    if (sieve_warc_close(w) != SIEVE_OK)
        abort();
    check_archive(path, series);
    if (data[size - 1] & 1) /* the last byte picks a kill, and where */
        check_resume(path, &o, data[size - 1] >> 1);
    remove_archive(path);
    return 0;
}
