/* test-warc.c - the WARC writer, reader and CDXJ indexer: archives plain
 * and gzipped, rotation, append and resume, torn tails cut at every
 * offset, a 10 MiB body in bounded memory, several threads writing at
 * once, the index's offsets, warcio's SURT keys, and warcio (the
 * Webrecorder project's JavaScript reader) as an independent judge.
 *
 * Records are checked against what the test fed, with digests computed
 * here (libcrypto's one-shot SHA1() and a base32 of the test's own), and
 * read back at the offsets the writer and the index report through a
 * reader of the test's own (zlib's gzip inflate, a header parse), not
 * only through the library's reader. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include <openssl/sha.h>

#include "cdxj-sort.h"
#include "sieve/warc.h"
#include "warc-internal.h"

#if defined(__SANITIZE_ADDRESS__)
#define SIEVE_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SIEVE_TEST_ASAN 1
#endif
#endif
#if SIEVE_TEST_ASAN
size_t __sanitizer_get_current_allocated_bytes(void);
#else
#include <malloc.h>
#endif

/* ---- scratch directories ---- */

static char dir[256];

static void make_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/test-warc-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void remove_dir(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static char *path_in(const char *name)
{
    static char p[4][512];
    static int i;
    i = (i + 1) % 4;
    snprintf(p[i], sizeof p[i], "%s/%s", dir, name);
    return p[i];
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static uint64_t file_size(const char *path)
{
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    return (uint64_t)st.st_size;
}

/* ---- digests, computed here ---- */

static void b32(const unsigned char *in, char *out)
{
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    uint64_t acc = 0;
    int bits = 0, k = 0;
    for (int i = 0; i < 20; i++) {
        acc = acc << 8 | in[i];
        bits += 8;
        while (bits >= 5) {
            out[k++] = a[(acc >> (bits - 5)) & 31];
            bits -= 5;
        }
    }
    out[k] = '\0';
}

static void sha1_of(const void *data, size_t len, char out[38])
{
    unsigned char md[20];
    SHA1(data, len, md);
    memcpy(out, "sha1:", 5);
    b32(md, out + 5);
}

/* ---- a body that can be told from any other ---- */

static unsigned char *pattern(size_t len, unsigned seed)
{
    unsigned char *p = malloc(len ? len : 1);
    ck_assert_ptr_nonnull(p);
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < len; i++) {
        x = x * 1103515245u + 12345u;
        p[i] = (unsigned char)("<a href=x>text</a> \n"[(x >> 16) % 20] ^ ((x >> 28) & 1));
    }
    return p;
}

/* ---- writing fetches ---- */

typedef struct fetch_spec {
    const char *url;
    const char *req_head;          /* NULL: a GET for the URL */
    const char *const *resp_lines; /* NULL: 200 text/html */
    const unsigned char *body;
    size_t body_len;
    size_t chunk; /* body fed in pieces of this many bytes; 0: at once */
    const char *truncated;
} fetch_spec;

static const char *const default_lines[] = {"HTTP/1.1 200 OK\r\n",
                                            "Content-Type: text/html; charset=utf-8\r\n",
                                            "Server: test\r\n", "\r\n", NULL};

/* A fetch fed as s says, not ended yet. */
static sieve_warc_fetch *feed_spec(sieve_warc *w, const fetch_spec *s)
{
    sieve_warc_fetch_info fi = {.target_uri = s->url, .ip_address = "127.0.0.1"};
    sieve_warc_fetch *f;
    ck_assert_int_eq(sieve_warc_fetch_begin(w, &fi, &f), SIEVE_OK);
    char req[1024];
    const char *rh = s->req_head;
    if (!rh) {
        snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: */*\r\n\r\n",
                 s->url);
        rh = req;
    }
    ck_assert_int_eq(sieve_warc_fetch_request_head(f, rh, strlen(rh)), SIEVE_OK);
    for (const char *const *l = s->resp_lines ? s->resp_lines : default_lines; *l; l++)
        ck_assert_int_eq(sieve_warc_fetch_response_head(f, *l, strlen(*l)), SIEVE_OK);
    size_t chunk = s->chunk ? s->chunk : (s->body_len ? s->body_len : 1);
    for (size_t off = 0; off < s->body_len; off += chunk) {
        size_t n = s->body_len - off < chunk ? s->body_len - off : chunk;
        ck_assert_int_eq(sieve_warc_fetch_response_body(f, s->body + off, n), SIEVE_OK);
    }
    return f;
}

static int put_fetch(sieve_warc *w, const fetch_spec *s, sieve_warc_fetch_result *res)
{
    return sieve_warc_fetch_end(feed_spec(w, s), s->truncated, res);
}

static sieve_warc *open_archive(const char *path, const sieve_warc_options *o)
{
    sieve_warc *w = NULL;
    int rc = sieve_warc_open(&w, path, o);
    ck_assert_msg(rc == SIEVE_OK, "open %s: %s", path, sieve_strerror(rc));
    return w;
}

/* ---- reading a record at an offset, with the test's own code ---- */

typedef struct raw_rec {
    char *header; /* through the blank line */
    unsigned char *block;
    size_t block_len;
} raw_rec;

static void raw_free(raw_rec *r)
{
    free(r->header);
    free(r->block);
}

/* The bytes of [off, off+len) of a file. */
static unsigned char *slice(const char *path, uint64_t off, uint64_t len)
{
    unsigned char *b = malloc(len + 1);
    ck_assert_ptr_nonnull(b);
    int fd = open(path, O_RDONLY);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(pread(fd, b, len, (off_t)off), (ssize_t)len);
    close(fd);
    return b;
}

/* Inflates exactly one gzip member that must span all of in. */
static unsigned char *gunzip_member(const unsigned char *in, size_t len, size_t *out_len)
{
    size_t cap = 1 << 16;
    unsigned char *out = malloc(cap);
    z_stream z = {0};
    ck_assert_int_eq(inflateInit2(&z, 16 + MAX_WBITS), Z_OK);
    z.next_in = (unsigned char *)in;
    z.avail_in = (unsigned)len;
    int zr;
    do {
        if (z.total_out == cap) {
            cap *= 2;
            out = realloc(out, cap);
        }
        z.next_out = out + z.total_out;
        z.avail_out = (unsigned)(cap - z.total_out);
        zr = inflate(&z, Z_NO_FLUSH);
        ck_assert_msg(zr == Z_OK || zr == Z_STREAM_END, "inflate: %d", zr);
    } while (zr != Z_STREAM_END);
    ck_assert_uint_eq(z.avail_in, 0); /* the member ends where its length says */
    *out_len = z.total_out;
    inflateEnd(&z);
    return out;
}

/* Parses the record stored at [off, off+len) (the CDX length: plain
 * records without their closing CRLF CRLF). */
static raw_rec read_at(const char *path, uint64_t off, uint64_t len, bool gz)
{
    size_t n = gz ? len : len + 4;
    unsigned char *stored = slice(path, off, n);
    unsigned char *rec = stored;
    size_t rec_len = n;
    if (gz) {
        rec = gunzip_member(stored, n, &rec_len);
        free(stored);
    }
    ck_assert_msg(rec_len > 9 && memcmp(rec, "WARC/1.1\r\n", 10) == 0, "no record at %llu",
                  (unsigned long long)off);
    unsigned char *end = memmem(rec, rec_len, "\r\n\r\n", 4);
    ck_assert_ptr_nonnull(end);
    raw_rec r = {0};
    size_t hlen = (size_t)(end - rec) + 4;
    r.header = strndup((char *)rec, hlen);
    const char *cl = strcasestr(r.header, "\r\nContent-Length: ");
    ck_assert_ptr_nonnull(cl);
    r.block_len = strtoull(cl + 18, NULL, 10);
    ck_assert_uint_eq(hlen + r.block_len + 4, rec_len); /* nothing before or after */
    ck_assert(memcmp(rec + hlen + r.block_len, "\r\n\r\n", 4) == 0);
    r.block = malloc(r.block_len + 1);
    memcpy(r.block, rec + hlen, r.block_len);
    r.block[r.block_len] = '\0';
    free(rec);
    return r;
}

/* A header field's value (first occurrence), copied into a static slot. */
static const char *field(const char *header, const char *name)
{
    static char v[8][4096];
    static int i;
    i = (i + 1) % 8;
    char key[128];
    snprintf(key, sizeof key, "\r\n%s: ", name);
    const char *p = strcasestr(header, key);
    if (!p)
        return NULL;
    p += strlen(key);
    size_t n = strcspn(p, "\r");
    ck_assert_uint_lt(n, sizeof v[i]);
    memcpy(v[i], p, n);
    v[i][n] = '\0';
    return v[i];
}

/* Checks the response record at res against what was fed. */
static void check_response(const sieve_warc_fetch_result *res, const fetch_spec *s, bool gz)
{
    raw_rec q = read_at(res->request.path, res->request.offset, res->request.length, gz);
    raw_rec r = read_at(res->response.path, res->response.offset, res->response.length, gz);
    ck_assert_str_eq(field(q.header, "WARC-Type"), "request");
    ck_assert_str_eq(field(r.header, "WARC-Type"), "response");
    char id[64];
    snprintf(id, sizeof id, "<%s>", res->response_id);
    ck_assert_str_eq(field(r.header, "WARC-Record-ID"), id);
    ck_assert_str_eq(field(q.header, "WARC-Concurrent-To"), id);
    snprintf(id, sizeof id, "<%s>", res->request_id);
    ck_assert_str_eq(field(q.header, "WARC-Record-ID"), id);
    ck_assert_str_eq(field(r.header, "WARC-Concurrent-To"), id);
    ck_assert_str_eq(field(r.header, "WARC-Target-URI"), s->url);
    ck_assert_str_eq(field(q.header, "WARC-Target-URI"), s->url);
    ck_assert_str_eq(field(r.header, "WARC-IP-Address"), "127.0.0.1");
    ck_assert_str_eq(field(r.header, "Content-Type"), "application/http; msgtype=response");
    ck_assert_str_eq(field(q.header, "Content-Type"), "application/http; msgtype=request");
    ck_assert_str_eq(field(q.header, "WARC-Date"), field(r.header, "WARC-Date"));
    ck_assert_str_eq(field(q.header, "WARC-Warcinfo-ID"), field(r.header, "WARC-Warcinfo-ID"));
    if (s->truncated)
        ck_assert_str_eq(field(r.header, "WARC-Truncated"), s->truncated);
    else
        ck_assert_ptr_null(field(r.header, "WARC-Truncated"));
    /* The block: the head, then the body exactly as fed. */
    char d[38];
    sha1_of(r.block, r.block_len, d);
    ck_assert_str_eq(field(r.header, "WARC-Block-Digest"), d);
    sha1_of(s->body, s->body_len, d);
    ck_assert_str_eq(field(r.header, "WARC-Payload-Digest"), d);
    ck_assert_str_eq(res->payload_digest, d);
    ck_assert_uint_ge(r.block_len, s->body_len);
    size_t head_len = r.block_len - s->body_len;
    ck_assert(memcmp(r.block + head_len - 4, "\r\n\r\n", 4) == 0);
    ck_assert(s->body_len == 0 || memcmp(r.block + head_len, s->body, s->body_len) == 0);
    ck_assert_uint_eq(res->body_bytes, s->body_len);
    sha1_of(q.block, q.block_len, d);
    ck_assert_str_eq(field(q.header, "WARC-Block-Digest"), d);
    sha1_of("", 0, d);
    ck_assert_str_eq(field(q.header, "WARC-Payload-Digest"), d);
    raw_free(&q);
    raw_free(&r);
}

/* ---- reading a whole file with the library's reader ---- */

typedef struct block_sink {
    unsigned char *data;
    size_t len, cap;
} block_sink;

static bool collect(void *ctx, const void *data, size_t len)
{
    block_sink *b = ctx;
    if (b->len + len > b->cap) {
        b->cap = (b->len + len) * 2;
        b->data = realloc(b->data, b->cap);
        ck_assert_ptr_nonnull(b->data);
    }
    memcpy(b->data + b->len, data, len);
    b->len += len;
    return true;
}

typedef struct file_summary {
    unsigned warcinfo, requests, responses;
    unsigned orphans; /* requests left without their response by a kill */
    uint64_t end;
} file_summary;

/* Reads every record of path: each parses, its digests match its block,
 * each request is followed by the response it names (or, where a kill
 * tore the response away, by the warcinfo of a resumed crawl), all records
 * name the file's warcinfo record, and the warcinfo comes first. */
static file_summary check_file(const char *path)
{
    warc_reader *r;
    ck_assert_int_eq(warc_reader_open(&r, path), SIEVE_OK);
    file_summary s = {0};
    warc_rec rec;
    block_sink b = {0};
    char info_id[128] = "", pending_resp[128] = "", pending_req[128] = "", pending_uri[4096];
    int rc;
    while ((b.len = 0, rc = warc_reader_next(r, &rec, collect, &b)) == SIEVE_OK) {
        char *h = strndup(rec.header, rec.header_len);
        const char *type = field(h, "WARC-Type");
        ck_assert_ptr_nonnull(type);
        ck_assert_uint_eq(rec.content_length, b.len);
        char d[38];
        sha1_of(b.data, b.len, d);
        ck_assert_str_eq(field(h, "WARC-Block-Digest"), d);
        const char *date = field(h, "WARC-Date");
        ck_assert_uint_eq(strlen(date), 27);
        ck_assert(date[4] == '-' && date[10] == 'T' && date[19] == '.' && date[26] == 'Z');
        const char *id = field(h, "WARC-Record-ID");
        ck_assert_uint_eq(strlen(id), 47);
        ck_assert(strncmp(id, "<urn:uuid:", 10) == 0 && id[24] == '4');
        if (strcmp(type, "warcinfo") == 0) {
            ck_assert_str_eq(field(h, "Content-Type"), "application/warc-fields");
            ck_assert(memmem(b.data, b.len, "format: WARC File Format 1.1\r\n", 30));
            ck_assert(memmem(b.data, b.len, "software: ", 10));
            s.orphans += pending_resp[0] != '\0';
            pending_resp[0] = '\0';
            snprintf(info_id, sizeof info_id, "%s", id);
            s.warcinfo++;
        } else {
            ck_assert_msg(s.warcinfo > 0, "%s: a record before the warcinfo", path);
            ck_assert_str_eq(field(h, "WARC-Warcinfo-ID"), info_id);
            const unsigned char *eoh = memmem(b.data, b.len, "\r\n\r\n", 4);
            ck_assert_ptr_nonnull(eoh);
            size_t hl = (size_t)(eoh - b.data) + 4;
            sha1_of(b.data + hl, b.len - hl, d);
            ck_assert_str_eq(field(h, "WARC-Payload-Digest"), d);
            if (strcmp(type, "request") == 0) {
                ck_assert_str_eq(pending_resp, "");
                snprintf(pending_resp, sizeof pending_resp, "%s", field(h, "WARC-Concurrent-To"));
                snprintf(pending_req, sizeof pending_req, "%s", id);
                snprintf(pending_uri, sizeof pending_uri, "%s", field(h, "WARC-Target-URI"));
                s.requests++;
            } else {
                ck_assert_str_eq(type, "response");
                ck_assert_str_eq(id, pending_resp);
                ck_assert_str_eq(field(h, "WARC-Concurrent-To"), pending_req);
                ck_assert_str_eq(field(h, "WARC-Target-URI"), pending_uri);
                /* No reader must de-chunk the stored body again. */
                char *head = strndup((char *)b.data, hl);
                ck_assert_ptr_null(strcasestr(head, "\nTransfer-Encoding:"));
                free(head);
                pending_resp[0] = '\0';
                s.responses++;
            }
        }
        free(h);
    }
    ck_assert_msg(rc == SIEVE_EDRAINED, "%s: %s at %llu", path, sieve_strerror(rc),
                  (unsigned long long)warc_reader_end(r));
    ck_assert_str_eq(pending_resp, "");
    s.end = warc_reader_end(r);
    ck_assert_uint_eq(s.end, file_size(path));
    warc_reader_free(r);
    free(b.data);
    return s;
}

/* ---- the index ---- */

/* Writes the index of paths to a string. */
static char *index_of(const char *const *paths, size_t n, int expect)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    ck_assert_int_eq(sieve_warc_index(paths, n, f, NULL), expect);
    fclose(f);
    return text;
}

/* A JSON string member's value in an index line (no escapes in ours). */
static const char *json(const char *line, const char *name)
{
    static char v[4][4096];
    static int i;
    i = (i + 1) % 4;
    char key[64];
    snprintf(key, sizeof key, "\"%s\":\"", name);
    const char *p = strstr(line, key);
    if (!p)
        return NULL;
    p += strlen(key);
    size_t n = strcspn(p, "\"");
    memcpy(v[i], p, n);
    v[i][n] = '\0';
    return v[i];
}

/* Every line is sorted after the one before, and points at a response
 * record of its URL; returns the count of lines. */
static unsigned check_index(const char *text, bool gz)
{
    unsigned lines = 0;
    const char *prev = NULL;
    size_t prev_len = 0;
    for (const char *l = text; *l;) {
        size_t n = strcspn(l, "\n");
        char *line = strndup(l, n);
        if (prev) {
            int c = memcmp(prev, line, prev_len < n ? prev_len : n);
            ck_assert(c < 0 || (c == 0 && prev_len < n));
        }
        const char *sp = strchr(line, ' ');
        ck_assert_ptr_nonnull(sp);
        ck_assert_uint_eq(strspn(sp + 1, "0123456789"), 14);
        const char *file = json(line, "filename");
        char *fpath = strdup(path_in(file));
        uint64_t off = strtoull(json(line, "offset"), NULL, 10);
        uint64_t len = strtoull(json(line, "length"), NULL, 10);
        raw_rec r = read_at(fpath, off, len, gz);
        ck_assert_str_eq(field(r.header, "WARC-Type"), "response");
        ck_assert_str_eq(field(r.header, "WARC-Target-URI"), json(line, "url"));
        ck_assert_str_eq(field(r.header, "WARC-Payload-Digest") + 5, json(line, "digest"));
        raw_free(&r);
        free(fpath);
        prev = l;
        prev_len = n;
        lines++;
        free(line);
        l += n + (l[n] == '\n');
    }
    return lines;
}

/* ---- tests ---- */

/* What a crawl meets: bodies of 0 and 1 bytes, a page, a gzip-encoded
 * body, a chunked one, a cut one, a body in small pieces. */
static void write_variety(const char *name, bool gz, bool gzip_inline)
{
    make_dir();
    char *path = strdup(path_in(name));
    sieve_warc_options o;
    sieve_warc_options_init(&o);
    o.gzip_inline = gzip_inline;
    const char *info[] = {"operator: test", "sieve-options: --max-depth 3 --delay 0"};
    o.info = info;
    o.n_info = 2;
    o.spool_memory = 4096; /* the 7 KB page spools to a file */
    sieve_warc *w = open_archive(path, &o);

    unsigned char *page = pattern(7000, 1), *one = pattern(1, 2);
    /* A body gzipped by the "server": stored as sent. */
    unsigned char gzbody[8192];
    z_stream z = {0};
    ck_assert_int_eq(deflateInit2(&z, 6, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY), Z_OK);
    z.next_in = page;
    z.avail_in = 7000;
    z.next_out = gzbody;
    z.avail_out = sizeof gzbody;
    ck_assert_int_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
    size_t gzlen = z.total_out;
    deflateEnd(&z);
    static const char *const gz_lines[] = {"HTTP/1.1 200 OK\r\n", "Content-Type: text/html\r\n",
                                           "Content-Encoding: gzip\r\n", "\r\n", NULL};
    static const char *const chunked_lines[] = {"HTTP/1.1 200 OK\r\n",
                                                "Content-Type: text/plain\r\n",
                                                "Transfer-Encoding: chunked\r\n",
                                                "Vary: Accept-Encoding\r\n",
                                                "\r\n",
                                                NULL};
    static const char *const interim_lines[] = {
        "HTTP/1.1 100 Continue\r\n",   "\r\n", "HTTP/1.1 404 Not Found\r\n",
        "Content-Type: text/html\r\n", "\r\n", NULL};
    fetch_spec specs[] = {
        {.url = "http://127.0.0.1:8917/empty", .body = (unsigned char *)"", .body_len = 0},
        {.url = "http://127.0.0.1:8917/one", .body = one, .body_len = 1},
        {.url = "http://127.0.0.1:8917/p/1.html", .body = page, .body_len = 7000},
        {.url = "http://127.0.0.1:8917/gz",
         .resp_lines = gz_lines,
         .body = gzbody,
         .body_len = gzlen},
        {.url = "http://127.0.0.1:8917/chunked",
         .resp_lines = chunked_lines,
         .body = page,
         .body_len = 3000,
         .chunk = 7},
        {.url = "http://127.0.0.1:8917/cut", .body = page, .body_len = 5000, .truncated = "length"},
        {.url = "http://127.0.0.1:8917/interim",
         .resp_lines = interim_lines,
         .body = one,
         .body_len = 1},
        {.url = "http://WWW.Example.com:80/a/./b/../c?z=1&a=2", .body = one, .body_len = 1},
    };
    size_t n = sizeof specs / sizeof specs[0];
    sieve_warc_fetch_result res[8];
    for (size_t i = 0; i < n; i++) {
        ck_assert_int_eq(put_fetch(w, &specs[i], &res[i]), SIEVE_OK);
        ck_assert_str_eq(res[i].response.path, path);
        ck_assert_str_eq(res[i].response.name, name);
        ck_assert_uint_eq(res[i].response.offset,
                          res[i].request.offset + res[i].request.length + (gz ? 0 : 4));
    }
    ck_assert_int_eq(sieve_warc_sync(w), SIEVE_OK);
    /* Records are readable at once, before the archive is closed (the
     * locations' paths last until then). */
    for (size_t i = 0; i < n; i++)
        check_response(&res[i], &specs[i], gz);
    ck_assert_int_eq(sieve_warc_close(w), SIEVE_OK);
    file_summary s = check_file(path);
    ck_assert_uint_eq(s.warcinfo, 1);
    ck_assert_uint_eq(s.orphans, 0);
    ck_assert_uint_eq(s.responses, n);

    /* The stored heads: chunking renamed, content coding kept, the
     * interim response gone. */
    raw_rec r = read_at(path, res[4].response.offset, res[4].response.length, gz);
    ck_assert_ptr_nonnull(
        strstr((char *)r.block, "\r\nX-Archive-Orig-Transfer-Encoding: chunked\r\n"));
    raw_free(&r);
    r = read_at(path, res[3].response.offset, res[3].response.length, gz);
    ck_assert_ptr_nonnull(strstr((char *)r.block, "\r\nContent-Encoding: gzip\r\n"));
    raw_free(&r);
    r = read_at(path, res[6].response.offset, res[6].response.length, gz);
    ck_assert(strncmp((char *)r.block, "HTTP/1.1 404 Not Found\r\n", 24) == 0);
    raw_free(&r);
    raw_rec info_rec = read_at(path, 0, res[0].request.offset - (gz ? 0 : 4), gz);
    ck_assert_ptr_nonnull(strstr((char *)info_rec.block, "sieve-options: --max-depth 3"));
    ck_assert_str_eq(field(info_rec.header, "WARC-Filename"), name);
    raw_free(&info_rec);

    const char *paths[] = {path};
    char *idx = index_of(paths, 1, SIEVE_OK);
    ck_assert_uint_eq(check_index(idx, gz), n);
    ck_assert(strstr(idx, "\ncom,example,www)/a/c?a=2&z=1 ") ||
              strncmp(idx, "com,example,www)/a/c?a=2&z=1 ", 29) == 0);
    ck_assert_ptr_nonnull(strstr(idx, "\"mime\":\"text/html\",\"status\":\"404\""));
    free(idx);
    free(page);
    free(one);
    free(path);
    remove_dir();
}

/* Payload digests where there is a payload and where there is none: a
 * request with a body (a POST), a response without one, both ways. */
static void payloads(const char *name)
{
    make_dir();
    sieve_warc *w = open_archive(path_in(name), NULL);
    static const char post[] = "POST /form HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                               "Content-Length: 7\r\n\r\n",
                      get[] = "GET /none HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
                      ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n",
                      empty[] = "HTTP/1.1 204 No Content\r\n\r\n";
    for (int i = 0; i < 2; i++) {
        sieve_warc_fetch_info fi = {.target_uri =
                                        i ? "http://127.0.0.1/none" : "http://127.0.0.1/form"};
        sieve_warc_fetch *f;
        sieve_warc_fetch_result res;
        ck_assert_int_eq(sieve_warc_fetch_begin(w, &fi, &f), SIEVE_OK);
        const char *req = i ? get : post, *resp = i ? empty : ok;
        ck_assert_int_eq(sieve_warc_fetch_request_head(f, req, strlen(req)), SIEVE_OK);
        if (!i)
            ck_assert_int_eq(sieve_warc_fetch_request_body(f, "a=1&b=2", 7), SIEVE_OK);
        ck_assert_int_eq(sieve_warc_fetch_response_head(f, resp, strlen(resp)), SIEVE_OK);
        if (!i)
            ck_assert_int_eq(sieve_warc_fetch_response_body(f, "hi", 2), SIEVE_OK);
        ck_assert_int_eq(sieve_warc_fetch_end(f, NULL, &res), SIEVE_OK);
        char d[38];
        sha1_of((const unsigned char *)(i ? "" : "hi"), i ? 0 : 2, d);
        ck_assert_str_eq(res.payload_digest, d);
    }
    ck_assert_int_eq(sieve_warc_close(w), SIEVE_OK);
    /* every record's payload digest checked against its block */
    file_summary fs = check_file(path_in(name));
    ck_assert_uint_eq(fs.requests, 2);
    ck_assert_uint_eq(fs.responses, 2);
    remove_dir();
}

START_TEST(payload_digests)
{
    payloads("payloads.warc");
    payloads("payloads.warc.gz");
}
END_TEST

/* A fetch that ends is kept for the next one with its buffers: nothing
 * of it may show in the records of the fetch after it - not its address,
 * truncation or length, not a digest a fetch aborted midway had begun. */
static void spares(const char *name)
{
    make_dir();
    sieve_warc *w = open_archive(path_in(name), NULL);
    unsigned char *big = pattern(100000, 3);
    static const char get[] = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
                      ok[] =
                          "HTTP/1.1 200 OK\r\nServer: a-long-server-name-for-a-long-head\r\n\r\n",
                      empty[] = "HTTP/1.1 204 No Content\r\n\r\n";
    struct {
        const char *url, *ip, *truncated;
        size_t body_len; /* of big */
        bool abort;
    } runs[] = {
        {"http://127.0.0.1/big", "10.1.2.3", "length", 100000, false},
        {"http://127.0.0.1/aborted", "10.1.2.4", NULL, 5000, true},
        {"http://127.0.0.1/e", NULL, NULL, 0, false},
        {"http://127.0.0.1/small", "::1", NULL, 10, false},
        {"http://127.0.0.1/aborted-before-the-response", NULL, NULL, 0, true},
        {"http://127.0.0.1/after", NULL, NULL, 20, false},
    };
    for (int round = 0; round < 3; round++) {
        for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
            sieve_warc_fetch_info fi = {.target_uri = runs[i].url, .ip_address = runs[i].ip};
            sieve_warc_fetch *f;
            ck_assert_int_eq(sieve_warc_fetch_begin(w, &fi, &f), SIEVE_OK);
            ck_assert_int_eq(sieve_warc_fetch_request_head(f, get, strlen(get)), SIEVE_OK);
            if (runs[i].abort && runs[i].body_len == 0) {
                sieve_warc_fetch_abort(f);
                continue;
            }
            const char *resp = runs[i].body_len ? ok : empty;
            ck_assert_int_eq(sieve_warc_fetch_response_head(f, resp, strlen(resp)), SIEVE_OK);
            for (size_t off = 0; off < runs[i].body_len; off += 4096) {
                size_t n = runs[i].body_len - off < 4096 ? runs[i].body_len - off : 4096;
                ck_assert_int_eq(sieve_warc_fetch_response_body(f, big + off, n), SIEVE_OK);
            }
            if (runs[i].abort) {
                sieve_warc_fetch_abort(f);
                continue;
            }
            sieve_warc_fetch_result res;
            ck_assert_int_eq(sieve_warc_fetch_end(f, runs[i].truncated, &res), SIEVE_OK);
            raw_rec r = read_at(res.response.path, res.response.offset, res.response.length, false);
            ck_assert_str_eq(field(r.header, "WARC-Target-URI"), runs[i].url);
            if (runs[i].ip)
                ck_assert_str_eq(field(r.header, "WARC-IP-Address"), runs[i].ip);
            else
                ck_assert_ptr_null(field(r.header, "WARC-IP-Address"));
            if (runs[i].truncated)
                ck_assert_str_eq(field(r.header, "WARC-Truncated"), runs[i].truncated);
            else
                ck_assert_ptr_null(field(r.header, "WARC-Truncated"));
            size_t head_len = strlen(resp);
            ck_assert_uint_eq(r.block_len, head_len + runs[i].body_len);
            ck_assert(memcmp(r.block, resp, head_len) == 0);
            ck_assert(memcmp(r.block + head_len, big, runs[i].body_len) == 0);
            char d[38];
            sha1_of(big, runs[i].body_len, d);
            ck_assert_str_eq(field(r.header, "WARC-Payload-Digest"), d);
            ck_assert_str_eq(res.payload_digest, d);
            ck_assert_uint_eq(res.body_bytes, runs[i].body_len);
            raw_free(&r);
        }
    }
    ck_assert_int_eq(sieve_warc_close(w), SIEVE_OK);
    /* every record parses, and its digests match its block */
    file_summary fs = check_file(path_in(name));
    ck_assert_uint_eq(fs.responses, 12);
    ck_assert_uint_eq(fs.orphans, 0);
    free(big);
    remove_dir();
}

START_TEST(spare_fetches_start_clean)
{
    spares("spares.warc");
}
END_TEST

static uint64_t files_size(char *const *paths, int n)
{
    uint64_t sum = 0;
    for (int i = 0; i < n; i++)
        sum += file_size(paths[i]);
    return sum;
}

/* The write-behind thread follows the appends: of each file (the archive
 * rotates every half megabyte), every whole step of write_behind bytes is
 * handed to the disk, and only bytes of the files. With 0 there is no such
 * thread. */
static void write_behind(uint64_t step)
{
    make_dir();
    sieve_warc_options o;
    sieve_warc_options_init(&o);
    o.write_behind = step;
    o.max_bytes = 512 * 1024;
    sieve_warc *w = open_archive(path_in("behind.warc"), &o);
    unsigned char *page = pattern(7000, 4);
    char *paths[16];
    int n = 0;
    sieve_warc_stats st = {0};
    for (int i = 0; i < 300; i++) {
        char url[64];
        snprintf(url, sizeof url, "http://127.0.0.1/b/%d", i);
        fetch_spec spec = {.url = url, .body = page, .body_len = 7000};
        sieve_warc_fetch_result res;
        ck_assert_int_eq(put_fetch(w, &spec, &res), SIEVE_OK);
        if (n == 0 || strcmp(paths[n - 1], res.response.path) != 0) {
            ck_assert_int_lt(n, 16);
            paths[n++] = strdup(res.response.path);
        }
        /* The thread runs on its own time: it is given a minute at most
         * to take each file up to its last whole step, before the next
         * append (which may rotate). */
        uint64_t size = files_size(paths, n);
        sieve_warc_get_stats(w, &st);
        for (int t = 0; step && t < 60000 && st.written_behind + n * step < size; t++) {
            usleep(1000);
            sieve_warc_get_stats(w, &st);
        }
        if (step)
            ck_assert_uint_ge(st.written_behind + n * step, size);
        ck_assert_uint_le(st.written_behind, size);
    }
    ck_assert_int_ge(n, 4);
    if (step)
        ck_assert_uint_gt(st.written_behind, 0);
    else
        ck_assert_uint_eq(st.written_behind, 0);
    ck_assert_int_eq(sieve_warc_close(w), SIEVE_OK);
    unsigned responses = 0;
    for (int i = 0; i < n; i++) {
        responses += check_file(paths[i]).responses;
        free(paths[i]);
    }
    ck_assert_uint_eq(responses, 300);
    free(page);
    remove_dir();
}

START_TEST(write_behind_follows_appends)
{
    write_behind(64 * 1024);
    write_behind(0);
}
END_TEST

START_TEST(plain_archive)
{
    write_variety("crawl.warc", false, false);
}
END_TEST

START_TEST(gzip_archive)
{
    write_variety("crawl.warc.gz", true, false);
}
END_TEST

/* Without compression threads the feeding thread compresses: the same
 * archive. */
START_TEST(gzip_archive_inline)
{
    write_variety("crawl.warc.gz", true, true);
}
END_TEST

/* The records of a callback of sieve_warc_fetch_end_async(), and the
 * thread it came from. */
typedef struct async_end {
    int calls, status;
    pthread_t thread;
    sieve_warc_fetch_result res;
} async_end;

static void async_written(void *ud, int status, const sieve_warc_fetch_result *res)
{
    async_end *e = ud;
    e->calls++;
    e->status = status;
    e->thread = pthread_self();
    if (res != NULL)
        e->res = *res;
}

/* A fetch fed whole, not ended yet. */
static sieve_warc_fetch *fed(sieve_warc *w, const char *url, bool respond)
{
    sieve_warc_fetch_info fi = {.target_uri = url, .ip_address = "127.0.0.1"};
    sieve_warc_fetch *f;
    ck_assert_int_eq(sieve_warc_fetch_begin(w, &fi, &f), SIEVE_OK);
    const char *req = "GET / HTTP/1.1\r\n\r\n", *head = "HTTP/1.1 200 OK\r\n\r\n";
    ck_assert_int_eq(sieve_warc_fetch_request_head(f, req, strlen(req)), SIEVE_OK);
    if (respond) {
        ck_assert_int_eq(sieve_warc_fetch_response_head(f, head, strlen(head)), SIEVE_OK);
        ck_assert_int_eq(sieve_warc_fetch_response_body(f, "hello", 5), SIEVE_OK);
    }
    return f;
}

/* An archive that writes in the feeding thread (plain, or .gz without
 * compression threads) calls back before sieve_warc_fetch_end_async()
 * returns, in that thread, with the records where it says; a fetch that
 * cannot end is refused at once, and its callback never comes. */
static void end_async_at_once(const char *name, bool gzip_inline)
{
    make_dir();
    sieve_warc_options o;
    sieve_warc_options_init(&o);
    o.gzip_inline = gzip_inline;
    sieve_warc *w = open_archive(path_in(name), &o);
    async_end e = {0};
    ck_assert_int_eq(
        sieve_warc_fetch_end_async(fed(w, "http://127.0.0.1/a", true), "length", async_written, &e),
        SIEVE_OK);
    ck_assert_int_eq(e.calls, 1);
    ck_assert_int_eq(e.status, SIEVE_OK);
    ck_assert(pthread_equal(e.thread, pthread_self()));
    fetch_spec s = {.url = "http://127.0.0.1/a",
                    .body = (const unsigned char *)"hello",
                    .body_len = 5,
                    .truncated = "length"};
    check_response(&e.res, &s, gzip_inline);

    async_end none = {0};
    ck_assert_int_eq(
        sieve_warc_fetch_end_async(fed(w, "http://127.0.0.1/b", false), NULL, async_written, &none),
        SIEVE_ESTATE);
    ck_assert_int_eq(sieve_warc_fetch_end_async(fed(w, "http://127.0.0.1/c", true), "bad reason",
                                                async_written, &none),
                     SIEVE_EINVAL);
    ck_assert_int_eq(
        sieve_warc_fetch_end_async(fed(w, "http://127.0.0.1/d", true), NULL, NULL, NULL),
        SIEVE_EINVAL);
    ck_assert_int_eq(sieve_warc_fetch_end_async(NULL, NULL, async_written, &none), SIEVE_EINVAL);
    ck_assert_int_eq(none.calls, 0);
    ck_assert_int_eq(sieve_warc_close(w), SIEVE_OK);
    file_summary fs = check_file(path_in(name));
    ck_assert_uint_eq(fs.responses, 1);
    remove_dir();
}

START_TEST(end_async_plain)
{
    end_async_at_once("async.warc", false);
}
END_TEST

START_TEST(end_async_gzip_inline)
{
    end_async_at_once("async.warc.gz", true);
}
END_TEST

/* ---- batches ---- */

enum { BATCHED = 40 };

/* Fetches of a batch: their specs and what their callbacks said. */
typedef struct batch_run {
    char urls[BATCHED][64];
    fetch_spec specs[BATCHED];
    async_end ends[BATCHED];
    unsigned char *body;
} batch_run;

static void batch_spec(batch_run *b, int i, size_t body_len)
{
    snprintf(b->urls[i], sizeof b->urls[i], "http://127.0.0.1:8917/batch/%d", i);
    b->specs[i] = (fetch_spec){.url = b->urls[i],
                               .body = b->body,
                               .body_len = body_len,
                               .chunk = 3000,
                               .truncated = i % 5 == 4 ? "length" : NULL};
}

static void batch_end(sieve_warc *w, sieve_warc_batch *bt, batch_run *b, int i, size_t body_len)
{
    batch_spec(b, i, body_len);
    ck_assert_int_eq(sieve_warc_fetch_end_batched(feed_spec(w, &b->specs[i]), b->specs[i].truncated,
                                                  bt, async_written, &b->ends[i]),
                     SIEVE_OK);
}

/* Fetches ended into a batch are written at its flush, not before, where
 * their callbacks say, with a body spooled to a file among them; 32
 * fetches flush by themselves; freeing flushes; a fetch's errors come at
 * once, as for sieve_warc_fetch_end_async(). */
static void batch_writes(bool gz)
{
    make_dir();
    const char *name = gz ? "batch.warc.gz" : "batch.warc";
    sieve_warc_options o;
    sieve_warc_options_init(&o);
    o.gzip_inline = gz;
    o.spool_memory = 4096;
    sieve_warc *w = open_archive(path_in(name), &o);
    sieve_warc_batch *bt;
    ck_assert_int_eq(sieve_warc_batch_new(w, &bt), SIEVE_OK);
    batch_run *b = calloc(1, sizeof *b);
    b->body = pattern(50000, 9);
    uint64_t empty = file_size(path_in(name));
    for (int i = 0; i < 3; i++)
        batch_end(w, bt, b, i, i == 1 ? 50000 : 700 + (size_t)i);
    ck_assert_uint_eq(file_size(path_in(name)), empty);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(b->ends[i].calls, 0);
    ck_assert_int_eq(sieve_warc_batch_flush(bt), SIEVE_OK);
    ck_assert_int_eq(sieve_warc_batch_flush(bt), SIEVE_OK); /* empty */
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(b->ends[i].calls, 1);
        ck_assert_int_eq(b->ends[i].status, SIEVE_OK);
        ck_assert(pthread_equal(b->ends[i].thread, pthread_self()));
        check_response(&b->ends[i].res, &b->specs[i], gz);
    }
    /* 32 at most wait: the 32nd ends them all. */
    for (int i = 3; i < 35; i++) {
        batch_end(w, bt, b, i, 500);
        ck_assert_int_eq(b->ends[3].calls, i == 34 ? 1 : 0);
    }
    for (int i = 3; i < 35; i++)
        check_response(&b->ends[i].res, &b->specs[i], gz);
    batch_end(w, bt, b, 35, 10);
    /* refused at once, its callback never called */
    async_end none = {0};
    ck_assert_int_eq(sieve_warc_fetch_end_batched(fed(w, "http://127.0.0.1/x", false), NULL, bt,
                                                  async_written, &none),
                     SIEVE_ESTATE);
    ck_assert_int_eq(sieve_warc_fetch_end_batched(fed(w, "http://127.0.0.1/y", true), NULL, NULL,
                                                  async_written, &none),
                     SIEVE_EINVAL);
    ck_assert_int_eq(none.calls, 0);
    ck_assert_int_eq(b->ends[35].calls, 0);
    sieve_warc_batch_free(bt);
    ck_assert_int_eq(b->ends[35].calls, 1);
    check_response(&b->ends[35].res, &b->specs[35], gz);
    ck_assert_int_eq(sieve_warc_close(w), SIEVE_OK);
    file_summary fs = check_file(path_in(name));
    ck_assert_uint_eq(fs.responses, 36);
    ck_assert_uint_eq(fs.orphans, 0);
    free(b->body);
    free(b);
    remove_dir();
}

START_TEST(batch_plain)
{
    batch_writes(false);
}
END_TEST

START_TEST(batch_gzip_inline)
{
    batch_writes(true);
}
END_TEST

/* One batch, many files: a rotation falls between its fetches, never
 * inside one, and each fetch's place names the file it went to. A batch
 * of another archive is refused. */
START_TEST(batch_rotates)
{
    make_dir();
    sieve_warc_options o;
    sieve_warc_options_init(&o);
    o.max_bytes = 6000;
    sieve_warc *w = open_archive(path_in("r.warc"), &o),
               *other = open_archive(path_in("o.warc"), NULL);
    sieve_warc_batch *bt, *obt;
    ck_assert_int_eq(sieve_warc_batch_new(w, &bt), SIEVE_OK);
    ck_assert_int_eq(sieve_warc_batch_new(other, &obt), SIEVE_OK);
    async_end none = {0};
    ck_assert_int_eq(sieve_warc_fetch_end_batched(fed(w, "http://127.0.0.1/z", true), NULL, obt,
                                                  async_written, &none),
                     SIEVE_EINVAL);
    batch_run *b = calloc(1, sizeof *b);
    b->body = pattern(4000, 10);
    for (int i = 0; i < 10; i++)
        batch_end(w, bt, b, i, 1500 + 100 * (size_t)i);
    ck_assert_int_eq(sieve_warc_batch_flush(bt), SIEVE_OK);
    unsigned files = 0;
    for (int i = 0; i < 10; i++) {
        ck_assert_int_eq(b->ends[i].status, SIEVE_OK);
        check_response(&b->ends[i].res, &b->specs[i], false);
        files += i == 0 || strcmp(b->ends[i].res.response.name, b->ends[i - 1].res.response.name);
    }
    ck_assert_uint_ge(files, 3);
    sieve_warc_batch_free(bt);
    sieve_warc_batch_free(obt);
    ck_assert_int_eq(sieve_warc_close(w), SIEVE_OK);
    ck_assert_int_eq(sieve_warc_close(other), SIEVE_OK);
    unsigned responses = 0;
    for (unsigned seq = 1; seq <= files; seq++) {
        char n[64];
        snprintf(n, sizeof n, "r-%05u.warc", seq);
        file_summary s = check_file(path_in(n));
        ck_assert_uint_eq(s.warcinfo, 1);
        ck_assert_uint_eq(s.orphans, 0);
        ck_assert_msg(s.end <= o.max_bytes || s.responses == 1, "%s: %llu bytes", n,
                      (unsigned long long)s.end);
        responses += s.responses;
    }
    ck_assert_uint_eq(responses, 10);
    free(b->body);
    free(b);
    remove_dir();
}
END_TEST

/* A batch whose write fails (the file size limit, as a full disk would)
 * leaves no part of it in the file: every fetch of it hears SIEVE_EIO,
 * and the archive goes on once there is room. */
/* A rotation whose new file takes no warcinfo record (the file size
 * limit here, a full disk elsewhere): no fetch goes into that file, now
 * or once there is room again; they fail, and the files before it stay
 * whole. */
START_TEST(a_rotation_without_its_warcinfo_takes_no_fetch)
{
    make_dir();
    signal(SIGXFSZ, SIG_IGN);
    sieve_warc_options o;
    sieve_warc_options_init(&o);
    o.max_bytes = 4000;
    sieve_warc *w = open_archive(path_in("r.warc"), &o);
    unsigned char *body = pattern(3000, 9);
    fetch_spec s = {.url = "http://127.0.0.1:8917/r", .body = body, .body_len = 3000};
    sieve_warc_fetch_result res;
    ck_assert_int_eq(put_fetch(w, &s, &res), SIEVE_OK);
    ck_assert_str_eq(res.response.name, "r-00001.warc");
    struct rlimit saved, rl;
    getrlimit(RLIMIT_FSIZE, &saved);
    rl = saved;
    rl.rlim_cur = 64; /* the first file is past it already: only the new one meets it */
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
    ck_assert_int_eq(put_fetch(w, &s, &res), SIEVE_EIO);
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &saved), 0);
    ck_assert_int_eq(put_fetch(w, &s, &res), SIEVE_EIO);
    ck_assert_int_eq(sieve_warc_close(w), SIEVE_OK);
    file_summary fs = check_file(path_in("r-00001.warc"));
    ck_assert_uint_eq(fs.responses, 1);
    ck_assert_uint_le(file_size(path_in("r-00002.warc")), 64);
    free(body);
    remove_dir();
}
END_TEST

/* A block past the spool's memory whose temporary file cannot be made:
 * the feed fails, and the logger is told once which fetch, where and
 * why, as for an append that fails. */
typedef struct said {
    unsigned n;
    char last[512];
} said;

static void say_into(void *ctx, sieve_log_level level, const char *msg)
{
    said *s = ctx;
    (void)level;
    s->n++;
    snprintf(s->last, sizeof s->last, "%s", msg);
}

/* A spool in a directory of another file system (tmpfs beside an
 * archive on disk): copy_file_range() refuses to cross file systems
 * (EXDEV), and the block is copied through a buffer instead. */
START_TEST(a_spool_on_another_file_system_is_copied)
{
    make_dir();
    struct stat a, b;
    ck_assert_int_eq(stat(dir, &a), 0);
    if (stat("/dev/shm", &b) != 0 || a.st_dev == b.st_dev) {
        remove_dir();
        return; /* no second file system here: big_body covers the rest */
    }
    sieve_warc_options o;
    sieve_warc_options_init(&o);
    o.spool_memory = 4096;
    o.tmp_dir = "/dev/shm";
    sieve_warc *w = open_archive(path_in("x.warc"), &o);
    unsigned char *body = pattern(300000, 9);
    fetch_spec s = {
        .url = "http://127.0.0.1:8917/x", .body = body, .body_len = 300000, .chunk = 7000};
    sieve_warc_fetch_result res;
    ck_assert_int_eq(put_fetch(w, &s, &res), SIEVE_OK);
    check_response(&res, &s, false);
    ck_assert_int_eq(sieve_warc_close(w), SIEVE_OK);
    check_file(path_in("x.warc"));
    free(body);
    remove_dir();
}
END_TEST

START_TEST(a_spool_that_fails_says_where_and_why)
{
    make_dir();
    said heard = {0};
    sieve_warc_options o;
    sieve_warc_options_init(&o);
    o.spool_memory = 4096;
    char *nowhere = strdup(path_in("no-such-dir"));
    o.tmp_dir = nowhere;
    o.logger = (sieve_logger){.fn = say_into, .ctx = &heard, .level = SIEVE_LOG_WARN};
    sieve_warc *w = open_archive(path_in("s.warc"), &o);
    sieve_warc_fetch_info fi = {.target_uri = "http://127.0.0.1:8917/spool",
                                .ip_address = "127.0.0.1"};
    sieve_warc_fetch *f;
    ck_assert_int_eq(sieve_warc_fetch_begin(w, &fi, &f), SIEVE_OK);
    static const char req[] = "GET /spool HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    ck_assert_int_eq(sieve_warc_fetch_request_head(f, req, sizeof req - 1), SIEVE_OK);
    static const char head[] = "HTTP/1.1 200 OK\r\nContent-Length: 20000\r\n\r\n";
    ck_assert_int_eq(sieve_warc_fetch_response_head(f, head, sizeof head - 1), SIEVE_OK);
    unsigned char *body = pattern(20000, 3);
    int rc = SIEVE_OK;
    for (size_t off = 0; off < 20000 && rc == SIEVE_OK; off += 1000)
        rc = sieve_warc_fetch_response_body(f, body + off, 1000);
    ck_assert_int_eq(rc, SIEVE_EIO);
    ck_assert_int_eq(sieve_warc_fetch_response_body(f, body, 1000), SIEVE_EIO);
    sieve_warc_fetch_abort(f);
    ck_assert_uint_eq(heard.n, 1);
    ck_assert_msg(strstr(heard.last, "http://127.0.0.1:8917/spool") &&
                      strstr(heard.last, nowhere) && strstr(heard.last, strerror(ENOENT)),
                  "%s", heard.last);
    ck_assert_int_eq(sieve_warc_close(w), SIEVE_OK);
    free(body);
    free(nowhere);
    remove_dir();
}
END_TEST

START_TEST(batch_write_fails)
{
    make_dir();
    signal(SIGXFSZ, SIG_IGN);
    sieve_warc *w = open_archive(path_in("f.warc"), NULL);
    sieve_warc_batch *bt;
    ck_assert_int_eq(sieve_warc_batch_new(w, &bt), SIEVE_OK);
    batch_run *b = calloc(1, sizeof *b);
    b->body = pattern(3000, 11);
    batch_end(w, bt, b, 0, 3000);
    ck_assert_int_eq(sieve_warc_batch_flush(bt), SIEVE_OK);
    uint64_t before = file_size(path_in("f.warc"));
    for (int i = 1; i < 4; i++)
        batch_end(w, bt, b, i, 3000);
    struct rlimit saved, rl;
    getrlimit(RLIMIT_FSIZE, &saved);
    rl = saved;
    rl.rlim_cur = before + 5000; /* room for one fetch and a part of the next */
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
    ck_assert_int_eq(sieve_warc_batch_flush(bt), SIEVE_EIO);
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &saved), 0);
    for (int i = 1; i < 4; i++) {
        ck_assert_int_eq(b->ends[i].calls, 1);
        ck_assert_int_eq(b->ends[i].status, SIEVE_EIO);
    }
    ck_assert_uint_eq(file_size(path_in("f.warc")), before);
    batch_end(w, bt, b, 4, 3000);
    ck_assert_int_eq(sieve_warc_batch_flush(bt), SIEVE_OK);
    check_response(&b->ends[4].res, &b->specs[4], false);
    sieve_warc_batch_free(bt);
    ck_assert_int_eq(sieve_warc_close(w), SIEVE_OK);
    file_summary fs = check_file(path_in("f.warc"));
    ck_assert_uint_eq(fs.responses, 2);
    ck_assert_uint_eq(fs.orphans, 0);
    free(b->body);
    free(b);
    remove_dir();
}
END_TEST

/* Rotation: numbered files, none past the limit unless one fetch alone
 * is larger, a warcinfo first in each, fetches never split; NEXT starts
 * the next number, APPEND goes on with the last. */
static void rotation(bool gz)
{
    make_dir();
    const char *name = gz ? "crawl.warc.gz" : "crawl.warc";
    sieve_warc_options o;
    sieve_warc_options_init(&o);
    o.max_bytes = 20000;
    sieve_warc *w = open_archive(path_in(name), &o);
    unsigned char *body = pattern(4000, 3), *big = pattern(60000, 4);
    char url[128];
    unsigned fetches = 0;
    for (int i = 0; i < 30; i++, fetches++) {
        snprintf(url, sizeof url, "http://127.0.0.1:8917/r/%d", i);
        fetch_spec s = {
            .url = url, .body = i == 12 ? big : body, .body_len = i == 12 ? 60000 : 4000};
        sieve_warc_fetch_result res;
        ck_assert_int_eq(put_fetch(w, &s, &res), SIEVE_OK);
        ck_assert_str_eq(res.request.path, res.response.path);
        check_response(&res, &s, gz);
    }
    ck_assert_int_eq(sieve_warc_close(w), SIEVE_OK);
    ck_assert(!exists(path_in(name)));
    unsigned files = 0, responses = 0;
    const char *paths[64];
    for (unsigned seq = 1; seq < 64; seq++) {
        char n[64];
        snprintf(n, sizeof n, "crawl-%05u%s", seq, gz ? ".warc.gz" : ".warc");
        if (!exists(path_in(n)))
            break;
        paths[files++] = strdup(path_in(n));
        file_summary s = check_file(paths[files - 1]);
        ck_assert_uint_eq(s.warcinfo, 1);
        ck_assert_uint_eq(s.orphans, 0);
        ck_assert_uint_ge(s.responses, 1);
        ck_assert_msg(s.end <= o.max_bytes || s.responses == 1, "%s: %llu bytes, %u fetches", n,
                      (unsigned long long)s.end, s.responses);
        responses += s.responses;
    }
    ck_assert_uint_ge(files, gz ? 2 : 6);
    ck_assert_uint_eq(responses, fetches);
    char *idx = index_of(paths, files, SIEVE_OK);
    ck_assert_uint_eq(check_index(idx, gz), fetches);
    free(idx);

    /* NEXT: a new number after the last. */
    o.mode = SIEVE_WARC_NEXT;
    w = open_archive(path_in(name), &o);
    fetch_spec s = {.url = "http://127.0.0.1:8917/next", .body = body, .body_len = 10};
    sieve_warc_fetch_result res;
    ck_assert_int_eq(put_fetch(w, &s, &res), SIEVE_OK);
    char want[64];
    snprintf(want, sizeof want, "crawl-%05u%s", files + 1, gz ? ".warc.gz" : ".warc");
    ck_assert_str_eq(res.response.name, want);
    ck_assert_int_eq(sieve_warc_close(w), SIEVE_OK);
    /* APPEND: the same last file, with a second warcinfo. */
    o.mode = SIEVE_WARC_APPEND;
    w = open_archive(path_in(name), &o);
    ck_assert_int_eq(put_fetch(w, &s, &res), SIEVE_OK);
    ck_assert_str_eq(res.response.name, want);
    ck_assert_int_eq(sieve_warc_close(w), SIEVE_OK);
    file_summary last = check_file(path_in(want));
    ck_assert_uint_eq(last.warcinfo, 2);
    ck_assert_uint_eq(last.orphans, 0);
    ck_assert_uint_eq(last.responses, 2);
    /* APPEND to a file at max_bytes: what it holds counts, and the first
     * new fetch starts the next file. */
    uint64_t max = o.max_bytes;
    o.max_bytes = file_size(path_in(want)) + 1;
    w = open_archive(path_in(name), &o);
    ck_assert_int_eq(put_fetch(w, &s, &res), SIEVE_OK);
    char after[64];
    snprintf(after, sizeof after, "crawl-%05u%s", files + 2, gz ? ".warc.gz" : ".warc");
    ck_assert_str_eq(res.response.name, after);
    ck_assert_int_eq(sieve_warc_close(w), SIEVE_OK);
    o.max_bytes = max;
    /* CREATE refuses to overwrite. */
    o.mode = SIEVE_WARC_CREATE;
    sieve_warc *none;
    errno = 0;
    ck_assert_int_eq(sieve_warc_open(&none, path_in(name), &o), SIEVE_EIO);
    ck_assert_int_eq(errno, EEXIST);
    for (unsigned i = 0; i < files; i++)
        free((char *)paths[i]);
    free(body);
    free(big);
    remove_dir();
}

START_TEST(rotation_plain)
{
    rotation(false);
}
END_TEST

START_TEST(rotation_gzip)
{
    rotation(true);
}
END_TEST

/* ---- torn tails ---- */

static void copy_prefix(const char *from, const char *to, uint64_t len)
{
    unsigned char *b = slice(from, 0, len);
    int fd = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, b, len), (ssize_t)len);
    close(fd);
    free(b);
}

/* Cuts the archive at every offset of its last record: each cut is a
 * torn tail ending at that record's start; appending cuts it and the file
 * reads whole again. */
static void torn_tail(bool gz)
{
    make_dir();
    const char *name = gz ? "t.warc.gz" : "t.warc";
    char *path = strdup(path_in(name));
    sieve_warc *w = open_archive(path, NULL);
    unsigned char *body = pattern(300, 5);
    sieve_warc_fetch_result res, res3;
    for (int i = 0; i < 3; i++) {
        fetch_spec s = {.url = "http://127.0.0.1:8917/t", .body = body, .body_len = 300};
        ck_assert_int_eq(put_fetch(w, &s, &res), SIEVE_OK);
    }
    res3 = res;
    ck_assert_int_eq(sieve_warc_close(w), SIEVE_OK);
    uint64_t size = file_size(path), last = res.response.offset;
    uint64_t end, records;
    ck_assert_int_eq(sieve_warc_complete_end(path, &end, &records), SIEVE_OK);
    ck_assert_uint_eq(end, size);
    ck_assert_uint_eq(records, 7);

    char *cut = strdup(path_in(gz ? "cut.warc.gz" : "cut.warc"));
    sieve_warc_options o;
    sieve_warc_options_init(&o);
    o.mode = SIEVE_WARC_APPEND;
    for (uint64_t at = last; at < size; at++) {
        copy_prefix(path, cut, at);
        int rc = sieve_warc_complete_end(cut, &end, &records);
        ck_assert_msg(rc == (at == last ? SIEVE_OK : SIEVE_ETRUNCATED), "cut at %llu: %s",
                      (unsigned long long)at, sieve_strerror(rc));
        ck_assert_uint_eq(end, last);
        ck_assert_uint_eq(records, 6);
        if (at % (gz ? 1 : 3) != 0)
            continue;
        /* The resume: cut, then go on. */
        w = open_archive(cut, &o);
        fetch_spec s = {.url = "http://127.0.0.1:8917/after", .body = body, .body_len = 30};
        ck_assert_int_eq(put_fetch(w, &s, &res), SIEVE_OK);
        ck_assert_int_eq(sieve_warc_close(w), SIEVE_OK);
        file_summary fs = check_file(cut);
        ck_assert_uint_eq(fs.warcinfo, 2);
        ck_assert_uint_eq(fs.responses, 3);
        ck_assert_uint_eq(fs.orphans, 0); /* the torn response's request was cut too */
    }

    /* Every prefix of the first record (the warcinfo) is torn too, its
     * first byte alone included: a gzip file's 0x1f is not yet told
     * from a plain one by its magic. */
    uint64_t first = res3.request.offset;
    for (uint64_t at = 1; at < size; at++) {
        copy_prefix(path, cut, at);
        int rc = sieve_warc_complete_end(cut, &end, &records);
        if (rc == SIEVE_OK && records > 0) {
            first = at;
            break;
        }
        ck_assert_msg(rc == SIEVE_ETRUNCATED, "first record cut at %llu: %s",
                      (unsigned long long)at, sieve_strerror(rc));
        ck_assert_uint_eq(end, 0);
    }
    ck_assert_uint_lt(first, res3.request.offset);

    /* NEXT, as a resumed crawl opens: the torn fetch (its response cut
     * short, its request whole) is cut from the file, which keeps every
     * other byte, and the fetches go on in a new numbered file. */
    uint64_t third = res3.request.offset;
    const char *ext = gz ? ".warc.gz" : ".warc";
    char next1[64], next2[64];
    snprintf(next1, sizeof next1, "cut-00001%s", ext);
    snprintf(next2, sizeof next2, "cut-00002%s", ext);
    copy_prefix(path, cut, last + 7);
    unsigned char *before = slice(cut, 0, third);
    o.mode = SIEVE_WARC_NEXT;
    for (int k = 0; k < 2; k++) {
        w = open_archive(cut, &o);
        fetch_spec s = {.url = "http://127.0.0.1:8917/next", .body = body, .body_len = 30};
        ck_assert_int_eq(put_fetch(w, &s, &res), SIEVE_OK);
        ck_assert_str_eq(res.response.name, k == 0 ? next1 : next2);
        ck_assert_int_eq(sieve_warc_close(w), SIEVE_OK);
        ck_assert_uint_eq(file_size(cut), third);
        unsigned char *after = slice(cut, 0, third);
        ck_assert_int_eq(memcmp(before, after, third), 0);
        free(after);
        file_summary fs = check_file(cut);
        ck_assert_uint_eq(fs.warcinfo, 1);
        ck_assert_uint_eq(fs.responses, 2);
        ck_assert_uint_eq(fs.orphans, 0);
        fs = check_file(path_in(k == 0 ? next1 : next2));
        ck_assert_uint_eq(fs.warcinfo, 1);
        ck_assert_uint_eq(fs.responses, 1);
    }
    free(before);
    /* A kill right after the next file was made, before its warcinfo was
     * out, left it empty: that file takes the fetches, none is left
     * empty. So does a lone file, cut to nothing. */
    char next3[64], next4[64];
    snprintf(next3, sizeof next3, "cut-00003%s", ext);
    snprintf(next4, sizeof next4, "cut-00004%s", ext);
    copy_prefix(path, path_in(next3), 0);
    w = open_archive(cut, &o);
    fetch_spec after_kill = {.url = "http://127.0.0.1:8917/next", .body = body, .body_len = 30};
    ck_assert_int_eq(put_fetch(w, &after_kill, &res), SIEVE_OK);
    ck_assert_str_eq(res.response.name, next3);
    ck_assert_int_eq(sieve_warc_close(w), SIEVE_OK);
    ck_assert(!exists(path_in(next4)));
    file_summary f3 = check_file(path_in(next3));
    ck_assert_uint_eq(f3.warcinfo, 1);
    ck_assert_uint_eq(f3.responses, 1);
    char *lone = strdup(path_in(gz ? "lone.warc.gz" : "lone.warc"));
    copy_prefix(path, lone, 7); /* a torn first record: cut to nothing */
    w = open_archive(lone, &o);
    ck_assert_int_eq(put_fetch(w, &after_kill, &res), SIEVE_OK);
    ck_assert_str_eq(res.response.name, gz ? "lone.warc.gz" : "lone.warc");
    ck_assert_int_eq(sieve_warc_close(w), SIEVE_OK);
    ck_assert_uint_eq(check_file(lone).responses, 1);
    unlink(lone);
    free(lone);
    char **files;
    size_t nf;
    ck_assert_int_eq(sieve_warc_files(cut, false, &files, &nf), SIEVE_OK);
    ck_assert_uint_eq(nf, 4);
    ck_assert_str_eq(files[0], cut);
    ck_assert_str_eq(files[2], path_in(next2));
    ck_assert_str_eq(files[3], path_in(next3));
    sieve_warc_files_free(files);
    unlink(path_in(next1));
    unlink(path_in(next2));
    unlink(path_in(next3));
    o.mode = SIEVE_WARC_APPEND;

    /* Not a torn record: garbage after the last record is kept, and
     * append refuses the file. */
    copy_prefix(path, cut, size);
    int fd = open(cut, O_WRONLY | O_APPEND);
    ck_assert_int_eq(write(fd, "GARBAGE\r\n", 9), 9);
    close(fd);
    ck_assert_int_eq(sieve_warc_complete_end(cut, &end, &records), SIEVE_EFORMAT);
    ck_assert_uint_eq(end, size);
    sieve_warc *none;
    ck_assert_int_eq(sieve_warc_open(&none, cut, &o), SIEVE_EFORMAT);
    ck_assert_uint_eq(file_size(cut), size + 9);
    if (gz) {
        /* An empty gzip member holds no record: refused, the records
         * before it kept; and so is a file that starts with one. */
        static const unsigned char empty_member[20] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 3};
        copy_prefix(path, cut, size);
        fd = open(cut, O_WRONLY | O_APPEND);
        ck_assert_int_eq(write(fd, empty_member, sizeof empty_member), sizeof empty_member);
        close(fd);
        ck_assert_int_eq(sieve_warc_complete_end(cut, &end, &records), SIEVE_EFORMAT);
        ck_assert_uint_eq(end, size);
        ck_assert_uint_eq(records, 7);
        fd = open(cut, O_WRONLY | O_TRUNC);
        ck_assert_int_eq(write(fd, empty_member, sizeof empty_member), sizeof empty_member);
        close(fd);
        ck_assert_int_eq(sieve_warc_complete_end(cut, &end, &records), SIEVE_EFORMAT);
        ck_assert_uint_eq(end, 0);
        ck_assert_uint_eq(records, 0);
    }
    /* Zeros after a crash are a torn tail. */
    copy_prefix(path, cut, size);
    ck_assert_int_eq(truncate(cut, (off_t)size + 4096), 0);
    ck_assert_int_eq(sieve_warc_complete_end(cut, &end, &records), SIEVE_ETRUNCATED);
    ck_assert_uint_eq(end, size);
    /* A Content-Length that would wrap a 64-bit offset back into the file
     * is a record running past its end, not a loop. */
    if (!gz) {
        copy_prefix(path, cut, size);
        static const char huge[] = "WARC/1.1\r\nWARC-Type: resource\r\n"
                                   "Content-Length: 18446744073709551515\r\n\r\nx";
        fd = open(cut, O_WRONLY | O_APPEND);
        ck_assert_int_eq(write(fd, huge, sizeof huge - 1), (ssize_t)sizeof huge - 1);
        close(fd);
        ck_assert_int_eq(sieve_warc_complete_end(cut, &end, &records), SIEVE_ETRUNCATED);
        ck_assert_uint_eq(end, size);
        ck_assert_uint_eq(records, 7);
    }
    /* The index leaves a torn record out and says so. */
    copy_prefix(path, cut, size - 10);
    const char *paths[] = {cut};
    char *idx = index_of(paths, 1, SIEVE_ETRUNCATED);
    ck_assert_uint_eq(check_index(idx, gz), 2);
    free(idx);
    free(body);
    free(cut);
    free(path);
    remove_dir();
}

START_TEST(torn_tail_plain)
{
    torn_tail(false);
}
END_TEST

START_TEST(torn_tail_gzip)
{
    torn_tail(true);
}
END_TEST

/* ---- blank lines between records ---- */

/* Writes data to fd as one gzip member. */
static void write_member(int fd, const void *data, size_t len)
{
    z_stream z = {0};
    ck_assert_int_eq(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
    size_t cap = deflateBound(&z, len);
    unsigned char *out = malloc(cap);
    z.next_in = (unsigned char *)data;
    z.avail_in = (unsigned)len;
    z.next_out = out;
    z.avail_out = (unsigned)cap;
    ck_assert_int_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
    ck_assert_int_eq(write(fd, out, z.total_out), (ssize_t)z.total_out);
    deflateEnd(&z);
    free(out);
}

/* Some writers end a record with more than CRLF CRLF. Copied with two
 * more CRLFs after each record (inside its member, for gzip; between
 * records, for a plain file), the archive still reads whole, each
 * record's offset at its start and its length its own. */
static void blank_lines(bool gz)
{
    make_dir();
    char *path = strdup(path_in(gz ? "b.warc.gz" : "b.warc"));
    char *loose = strdup(path_in(gz ? "loose.warc.gz" : "loose.warc"));
    sieve_warc *w = open_archive(path, NULL);
    unsigned char *body = pattern(300, 9);
    sieve_warc_fetch_result res;
    for (int i = 0; i < 2; i++) {
        fetch_spec f = {.url = "http://127.0.0.1:8917/b", .body = body, .body_len = 300};
        ck_assert_int_eq(put_fetch(w, &f, &res), SIEVE_OK);
    }
    ck_assert_int_eq(sieve_warc_close(w), SIEVE_OK);

    warc_reader *r;
    ck_assert_int_eq(warc_reader_open(&r, path), SIEVE_OK);
    int fd = open(loose, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ck_assert_int_ge(fd, 0);
    uint64_t starts[8];
    int n = 0, rc;
    warc_rec rec;
    block_sink b = {0};
    while ((b.len = 0, rc = warc_reader_next(r, &rec, collect, &b)) == SIEVE_OK) {
        ck_assert_int_lt(n, 8);
        starts[n++] = (uint64_t)lseek(fd, 0, SEEK_CUR);
        bool last = !gz && n == 5; /* a plain file's end is its last record's */
        size_t len = rec.header_len + b.len + (last ? 4 : 8);
        unsigned char *whole = malloc(len);
        memcpy(whole, rec.header, rec.header_len);
        memcpy(whole + rec.header_len, b.data, b.len);
        memcpy(whole + rec.header_len + b.len, "\r\n\r\n\r\n\r\n", last ? 4 : 8);
        if (gz)
            write_member(fd, whole, len);
        else
            ck_assert_int_eq(write(fd, whole, len), (ssize_t)len);
        free(whole);
    }
    ck_assert_int_eq(rc, SIEVE_EDRAINED);
    ck_assert_int_eq(n, 5);
    warc_reader_free(r);
    close(fd);

    file_summary sum = check_file(loose);
    ck_assert_uint_eq(sum.responses, 2);
    ck_assert_int_eq(warc_reader_open(&r, loose), SIEVE_OK);
    for (int i = 0; i < n; i++) {
        ck_assert_int_eq(warc_reader_next(r, &rec, NULL, NULL), SIEVE_OK);
        ck_assert_uint_eq(rec.offset, starts[i]);
        uint64_t to = i + 1 < n ? starts[i + 1] - (gz ? 0 : 4) : file_size(loose);
        ck_assert_uint_eq(rec.length, to - starts[i]);
    }
    ck_assert_int_eq(warc_reader_next(r, &rec, NULL, NULL), SIEVE_EDRAINED);
    warc_reader_free(r);
    free(b.data);
    free(body);
    free(path);
    free(loose);
}

START_TEST(blank_lines_plain)
{
    blank_lines(false);
}
END_TEST

START_TEST(blank_lines_gzip)
{
    blank_lines(true);
}
END_TEST

/* ---- memory ---- */

static size_t heap_in_use(void)
{
#if SIEVE_TEST_ASAN
    return __sanitizer_get_current_allocated_bytes();
#else
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
#endif
}

/* A 10 MiB body never sits in memory: the heap stays within the spool
 * buffer and zlib's state while it streams and after. */
static void big_body(bool gz)
{
    make_dir();
    enum { BODY = 10 << 20, CHUNK = 64 << 10 };
    unsigned char *body = pattern(BODY, 6);
    const char *name = gz ? "big.warc.gz" : "big.warc";
    sieve_warc *w = open_archive(path_in(name), NULL);
    sieve_warc_fetch_info fi = {.target_uri = "http://127.0.0.1:8917/big",
                                .ip_address = "127.0.0.1"};
    sieve_warc_fetch *f;
    /* A block past the spool's memory streams through a deflate state
     * that the archive keeps for the next one: one such block first, so
     * that what follows measures the big body alone. */
    fetch_spec warm = {.url = "http://127.0.0.1:8917/warm", .body = body, .body_len = 300 << 10};
    sieve_warc_fetch_result warm_res;
    if (gz)
        ck_assert_int_eq(put_fetch(w, &warm, &warm_res), SIEVE_OK);
    size_t before = heap_in_use();
    ck_assert_int_eq(sieve_warc_fetch_begin(w, &fi, &f), SIEVE_OK);
    const char *req = "GET /big HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    ck_assert_int_eq(sieve_warc_fetch_request_head(f, req, strlen(req)), SIEVE_OK);
    const char *head = "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n\r\n";
    ck_assert_int_eq(sieve_warc_fetch_response_head(f, head, strlen(head)), SIEVE_OK);
    size_t peak = 0;
    for (size_t off = 0; off < BODY; off += CHUNK) {
        ck_assert_int_eq(sieve_warc_fetch_response_body(f, body + off, CHUNK), SIEVE_OK);
        size_t now = heap_in_use();
        if (now > peak)
            peak = now;
    }
    sieve_warc_fetch_result res;
    ck_assert_int_eq(sieve_warc_fetch_end(f, NULL, &res), SIEVE_OK);
    size_t after = heap_in_use();
    /* The spool's 256 KiB, a deflate state (about 270 KiB) and digests. */
    ck_assert_msg(peak < before + (1u << 20), "heap grew by %zu bytes while streaming",
                  peak - before);
    ck_assert_msg(after < before + (64u << 10), "heap kept %zu bytes", after - before);
    fetch_spec s = {.url = fi.target_uri, .body = body, .body_len = BODY};
    check_response(&res, &s, gz);
    ck_assert_int_eq(sieve_warc_close(w), SIEVE_OK);
    if (gz)
        ck_assert_uint_lt(res.response.length, BODY * 3 / 4);
    free(body);
    remove_dir();
}

START_TEST(big_body_plain)
{
    big_body(false);
}
END_TEST

START_TEST(big_body_gzip)
{
    big_body(true);
}
END_TEST

/* A .gz block that fits the spool is kept and deflated with its header,
 * one that outgrows it is streamed (the bytes kept so far first): blocks
 * on either side of the limit, text and random bytes, at once and in
 * pieces that cross it, all read back whole with their digests. */
static void blocks_at_the_limit(bool gzip_inline)
{
    make_dir();
    enum { LIMIT = 4096, HEAD = 74 }; /* default_lines: 74 bytes */
    sieve_warc_options o;
    sieve_warc_options_init(&o);
    o.gzip_inline = gzip_inline;
    o.spool_memory = LIMIT;
    sieve_warc *w = open_archive(path_in("limit.warc.gz"), &o);
    unsigned char *noise = malloc(2 * LIMIT);
    uint32_t x = 7;
    for (size_t i = 0; i < 2 * LIMIT; i++) {
        x = x * 1103515245u + 12345u;
        noise[i] = (unsigned char)(x >> 23);
    }
    unsigned char *text = pattern(2 * LIMIT, 3);
    const size_t blocks[] = {1 + HEAD + 4, LIMIT - 1, LIMIT, LIMIT + 1, 2 * LIMIT};
    const size_t chunks[] = {0, 1000, 7};
    int n = 0;
    for (size_t b = 0; b < sizeof blocks / sizeof *blocks; b++)
        for (size_t c = 0; c < sizeof chunks / sizeof *chunks; c++)
            for (int random = 0; random < 2; random++) {
                char url[64];
                snprintf(url, sizeof url, "http://127.0.0.1:8917/limit/%d", n++);
                fetch_spec sp = {.url = url,
                                 .body = random ? noise : text,
                                 .body_len = blocks[b] - HEAD - 4,
                                 .chunk = chunks[c]};
                sieve_warc_fetch_result res;
                ck_assert_int_eq(put_fetch(w, &sp, &res), SIEVE_OK);
                check_response(&res, &sp, true);
                if (!random && blocks[b] >= LIMIT) /* deflated, header and all */
                    ck_assert_uint_lt(res.response.length, blocks[b]);
            }
    ck_assert_int_eq(sieve_warc_close(w), SIEVE_OK);
    free(noise);
    free(text);
    remove_dir();
}

START_TEST(gzip_blocks_at_the_spool_limit)
{
    blocks_at_the_limit(true);
    blocks_at_the_limit(false);
}
END_TEST

/* ---- threads ---- */

enum { THREADS = 6, PER_THREAD = 150 };

typedef struct worker_arg {
    sieve_warc *w;
    int id;
    int failures;
    bool batched;      /* ends fetches into a batch of the thread's own */
    async_end written; /* the batch's last callback, and how many came */
} worker_arg;

static size_t thread_body_len(int t, int i)
{
    /* Mostly pages, now and then one that spools to a file. */
    return (size_t)(i % 37 == 0 ? 300000 : (t * 131 + i * 977) % 9000);
}

static void *writer_thread(void *p)
{
    worker_arg *a = p;
    char url[128];
    sieve_warc_batch *b = NULL;
    if (a->batched && sieve_warc_batch_new(a->w, &b) != SIEVE_OK)
        a->failures++;
    for (int i = 0; i < PER_THREAD; i++) {
        size_t len = thread_body_len(a->id, i);
        unsigned char *body = pattern(len, (unsigned)(a->id * 1000 + i));
        snprintf(url, sizeof url, "http://127.0.0.1:8917/t%d/%d", a->id, i);
        sieve_warc_fetch_info fi = {.target_uri = url};
        sieve_warc_fetch *f;
        const char *req = "GET / HTTP/1.1\r\n\r\n", *head = "HTTP/1.1 200 OK\r\n\r\n";
        int rc = sieve_warc_fetch_begin(a->w, &fi, &f);
        if (!rc)
            rc = sieve_warc_fetch_request_head(f, req, strlen(req));
        if (!rc)
            rc = sieve_warc_fetch_response_head(f, head, strlen(head));
        for (size_t off = 0; !rc && off < len; off += 4096)
            rc = sieve_warc_fetch_response_body(f, body + off, len - off < 4096 ? len - off : 4096);
        if (!rc && b)
            rc = sieve_warc_fetch_end_batched(f, NULL, b, async_written, &a->written);
        else if (!rc)
            rc = sieve_warc_fetch_end(f, NULL, NULL);
        else
            sieve_warc_fetch_abort(f);
        a->failures += rc != SIEVE_OK;
        free(body);
        if (b && i % 5 == 4)
            a->failures += sieve_warc_batch_flush(b) != SIEVE_OK;
    }
    sieve_warc_batch_free(b);
    return NULL;
}

/* Bodies by URL, to check what the threads wrote. */
static bool body_matches(const char *uri, const unsigned char *block, size_t len)
{
    int t, i;
    if (sscanf(uri, "http://127.0.0.1:8917/t%d/%d", &t, &i) != 2)
        return false;
    size_t bl = thread_body_len(t, i);
    static const char head[] = "HTTP/1.1 200 OK\r\n\r\n";
    if (len != sizeof head - 1 + bl || memcmp(block, head, sizeof head - 1) != 0)
        return false;
    unsigned char *want = pattern(bl, (unsigned)(t * 1000 + i));
    bool same = memcmp(block + sizeof head - 1, want, bl) == 0;
    free(want);
    return same;
}

/* Syncs the archive over and over until told to stop: sync runs outside
 * the archive's lock, beside the appends. */
typedef struct sync_arg {
    sieve_warc *w;
    atomic_bool stop;
    int syncs, failures;
} sync_arg;

static void *sync_thread(void *p)
{
    sync_arg *a = p;
    while (!atomic_load(&a->stop)) {
        a->failures += sieve_warc_sync(a->w) != SIEVE_OK;
        a->syncs++;
    }
    return NULL;
}

static void threads(bool gz, bool batched, uint64_t write_behind)
{
    make_dir();
    sieve_warc_options o;
    sieve_warc_options_init(&o);
    o.max_bytes = 2u << 20;
    o.write_behind = write_behind;
    o.gzip_level = 1;
    const char *name = gz ? "mt.warc.gz" : "mt.warc";
    sieve_warc *w = open_archive(path_in(name), &o);
    pthread_t th[THREADS], syncer;
    worker_arg args[THREADS];
    sync_arg sa = {.w = w};
    ck_assert_int_eq(pthread_create(&syncer, NULL, sync_thread, &sa), 0);
    for (int t = 0; t < THREADS; t++) {
        args[t] = (worker_arg){.w = w, .id = t, .batched = batched};
        ck_assert_int_eq(pthread_create(&th[t], NULL, writer_thread, &args[t]), 0);
    }
    for (int t = 0; t < THREADS; t++) {
        pthread_join(th[t], NULL);
        ck_assert_int_eq(args[t].failures, 0);
        if (batched) {
            ck_assert_int_eq(args[t].written.calls, PER_THREAD);
            ck_assert_int_eq(args[t].written.status, SIEVE_OK);
            ck_assert(pthread_equal(args[t].written.thread, th[t]));
        }
    }
    atomic_store(&sa.stop, true);
    pthread_join(syncer, NULL);
    ck_assert_int_gt(sa.syncs, 0);
    ck_assert_int_eq(sa.failures, 0);
    sieve_warc_stats st;
    sieve_warc_get_stats(w, &st);
    ck_assert_int_eq(sieve_warc_close(w), SIEVE_OK);
    unsigned responses = 0;
    uint64_t stored = 0;
    for (unsigned seq = 1;; seq++) {
        char n[64];
        snprintf(n, sizeof n, "mt-%05u%s", seq, gz ? ".warc.gz" : ".warc");
        if (!exists(path_in(n)))
            break;
        char *p = strdup(path_in(n));
        stored += file_size(p);
        file_summary fs = check_file(p);
        ck_assert_uint_eq(fs.orphans, 0);
        responses += fs.responses;
        /* Each response holds its own URL's body. */
        warc_reader *r;
        ck_assert_int_eq(warc_reader_open(&r, p), SIEVE_OK);
        warc_rec rec;
        block_sink b = {0};
        while ((b.len = 0, warc_reader_next(r, &rec, collect, &b)) == SIEVE_OK) {
            char *h = strndup(rec.header, rec.header_len);
            if (strcmp(field(h, "WARC-Type"), "response") == 0)
                ck_assert_msg(body_matches(field(h, "WARC-Target-URI"), b.data, b.len),
                              "%s: wrong body", field(h, "WARC-Target-URI"));
            free(h);
        }
        warc_reader_free(r);
        free(b.data);
        free(p);
    }
    ck_assert_uint_eq(responses, THREADS * PER_THREAD);
    /* Only bytes that were appended went to the disk behind: a rotation
     * starts the count of the new file afresh. */
    ck_assert_uint_le(st.written_behind, stored);
    if (!write_behind)
        ck_assert_uint_eq(st.written_behind, 0);
    remove_dir();
}

/* Small write-behind steps, rotations and six appending threads: the
 * thread that writes behind works on files that rotate under it. */
START_TEST(threads_plain_write_behind)
{
    threads(false, true, 64 * 1024);
}
END_TEST

START_TEST(threads_plain)
{
    threads(false, false, SIEVE_WARC_WRITE_BEHIND);
}
END_TEST

START_TEST(threads_gzip)
{
    threads(true, false, SIEVE_WARC_WRITE_BEHIND);
}
END_TEST

/* Each thread with a batch of its own, flushed every five fetches, into
 * one archive that rotates. */
START_TEST(threads_plain_batched)
{
    threads(false, true, SIEVE_WARC_WRITE_BEHIND);
}
END_TEST

/* ---- compression threads ---- */

/* Feeders that each keep several fetches open at once, their pieces
 * interleaved, as a crawl worker's transfers are: each fetch's result is
 * kept for checking once the feeders are done. */
enum { ZQ_FEEDERS = 4, ZQ_OPEN = 4, ZQ_PER_FEEDER = 48 };

/* How the feeders end their fetches: waiting for the records
 * (sieve_warc_fetch_end()), or not (sieve_warc_fetch_end_async()), and
 * then the test waits for every callback before it closes, or closes at
 * once, with records still to compress. */
typedef enum zq_end { ZQ_WAIT, ZQ_ASYNC, ZQ_ASYNC_CLOSE } zq_end;

typedef struct zq_fetch {
    char url[96];
    unsigned char *body;
    size_t body_len;
    sieve_warc_fetch_result res;
    int rc;
    int written_rc;   /* the written callback's status */
    atomic_int calls; /* of the written callback */
    bool in_file;     /* the records were in the file when it was called */
} zq_fetch;

typedef struct zq_feeder {
    sieve_warc *w;
    int id;
    zq_fetch *fetches; /* ZQ_PER_FEEDER of them */
    bool abort_some;   /* abort every third fetch after feeding half of it */
    zq_end end;
} zq_feeder;

static size_t zq_body_len(int t, int i)
{
    /* Pages, empty bodies now and then, and some that spool to a file. */
    return (size_t)(i % 11 == 5 ? 200000 : i % 13 == 0 ? 0 : (t * 577 + i * 1291) % 12000);
}

static bool zq_aborted(const zq_feeder *a, int i)
{
    return a->abort_some && i % 3 == 1;
}

/* The fetches of a feeder that aborts some that end. */
static unsigned zq_ended(void)
{
    zq_feeder a = {.abort_some = true};
    unsigned n = 0;
    for (int i = 0; i < ZQ_PER_FEEDER; i++)
        n += !zq_aborted(&a, i);
    return n;
}

/* sieve_warc_fetch_end_async()'s callback: the records must be in the
 * file already. */
static void zq_written(void *ud, int status, const sieve_warc_fetch_result *res)
{
    zq_fetch *z = ud;
    z->written_rc = status;
    if (res != NULL) {
        z->res = *res;
        struct stat st;
        z->in_file = stat(res->response.path, &st) == 0 &&
                     (uint64_t)st.st_size >= res->response.offset + res->response.length;
    }
    atomic_fetch_add(&z->calls, 1);
}

static void *zq_feed(void *p)
{
    zq_feeder *a = p;
    for (int first = 0; first < ZQ_PER_FEEDER; first += ZQ_OPEN) {
        sieve_warc_fetch *f[ZQ_OPEN];
        size_t off[ZQ_OPEN] = {0};
        for (int k = 0; k < ZQ_OPEN; k++) {
            zq_fetch *z = &a->fetches[first + k];
            sieve_warc_fetch_info fi = {.target_uri = z->url, .ip_address = "127.0.0.1"};
            z->rc = sieve_warc_fetch_begin(a->w, &fi, &f[k]);
            char req[160];
            snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", z->url);
            if (!z->rc)
                z->rc = sieve_warc_fetch_request_head(f[k], req, strlen(req));
            for (const char *const *l = default_lines; !z->rc && *l; l++)
                z->rc = sieve_warc_fetch_response_head(f[k], *l, strlen(*l));
        }
        /* Round-robin pieces of 1 to 5 KB, as transfers deliver them. */
        for (bool more = true; more;) {
            more = false;
            for (int k = 0; k < ZQ_OPEN; k++) {
                zq_fetch *z = &a->fetches[first + k];
                size_t piece = 1000 + (size_t)((first + k) * 397 + (int)off[k]) % 4000;
                if (z->rc || off[k] >= z->body_len)
                    continue;
                if (piece > z->body_len - off[k])
                    piece = z->body_len - off[k];
                z->rc = sieve_warc_fetch_response_body(f[k], z->body + off[k], piece);
                off[k] += piece;
                more = more || off[k] < z->body_len;
            }
        }
        for (int k = 0; k < ZQ_OPEN; k++) {
            zq_fetch *z = &a->fetches[first + k];
            if (zq_aborted(a, first + k))
                sieve_warc_fetch_abort(f[k]);
            else if (!z->rc && a->end == ZQ_WAIT)
                z->rc = sieve_warc_fetch_end(f[k], NULL, &z->res);
            else if (!z->rc)
                z->rc = sieve_warc_fetch_end_async(f[k], NULL, zq_written, z);
        }
    }
    return NULL;
}

/* Waits until every fetch that ended has had its one callback. */
static void zq_wait_callbacks(zq_feeder *args)
{
    for (int tries = 0; tries < 60000; tries++) {
        bool all = true;
        for (int t = 0; t < ZQ_FEEDERS && all; t++)
            for (int i = 0; i < ZQ_PER_FEEDER && all; i++)
                all = zq_aborted(&args[t], i) || atomic_load(&args[t].fetches[i].calls) > 0;
        if (all)
            return;
        usleep(1000);
    }
    ck_abort_msg("a written callback never came");
}

/* Each fetch that ended had exactly one callback, its records in the
 * file by then; an aborted one had none. */
static void zq_check_callbacks(const zq_feeder *a)
{
    for (int i = 0; i < ZQ_PER_FEEDER; i++) {
        const zq_fetch *z = &a->fetches[i];
        int want = zq_aborted(a, i) ? 0 : 1;
        ck_assert_msg(atomic_load(&z->calls) == want, "%s: %d callbacks", z->url,
                      atomic_load(&z->calls));
        ck_assert_msg(!want || z->in_file, "%s: called back before its records were written",
                      z->url);
        ck_assert_msg(z->written_rc == SIEVE_OK, "%s: %s", z->url, sieve_strerror(z->written_rc));
    }
}

/* Opens name in a new scratch directory with o (the test's settings:
 * gzip_threads compression threads, level 1), runs the feeders on it and
 * checks every fetch's records, read back at their locations (payload byte
 * for byte, both digests), before it closes. With ZQ_ASYNC_CLOSE it
 * closes the archive as soon as the feeders are done, checks the
 * callbacks and returns NULL. */
static sieve_warc *zq_run(const char *name, sieve_warc_options *o, unsigned gzip_threads,
                          bool abort_some, zq_end end)
{
    make_dir();
    o->gzip_threads = gzip_threads;
    o->gzip_level = 1;
    sieve_warc *w = open_archive(path_in(name), o);
    pthread_t th[ZQ_FEEDERS];
    zq_feeder args[ZQ_FEEDERS];
    for (int t = 0; t < ZQ_FEEDERS; t++) {
        args[t] = (zq_feeder){.w = w, .id = t, .abort_some = abort_some, .end = end};
        args[t].fetches = calloc(ZQ_PER_FEEDER, sizeof(zq_fetch));
        for (int i = 0; i < ZQ_PER_FEEDER; i++) {
            zq_fetch *z = &args[t].fetches[i];
            snprintf(z->url, sizeof z->url, "http://127.0.0.1:8917/zq%d/%d", t, i);
            z->body_len = zq_body_len(t, i);
            z->body = pattern(z->body_len, (unsigned)(t * 1000 + i + 7));
        }
        ck_assert_int_eq(pthread_create(&th[t], NULL, zq_feed, &args[t]), 0);
    }
    for (int t = 0; t < ZQ_FEEDERS; t++)
        pthread_join(th[t], NULL);
    if (end == ZQ_ASYNC_CLOSE) {
        ck_assert_int_eq(sieve_warc_close(w), SIEVE_OK);
        w = NULL;
    } else if (end == ZQ_ASYNC) {
        zq_wait_callbacks(args);
    }
    for (int t = 0; t < ZQ_FEEDERS; t++) {
        if (end != ZQ_WAIT)
            zq_check_callbacks(&args[t]);
        for (int i = 0; i < ZQ_PER_FEEDER; i++) {
            zq_fetch *z = &args[t].fetches[i];
            ck_assert_msg(z->rc == SIEVE_OK, "%s: %s", z->url, sieve_strerror(z->rc));
            if (w != NULL && !zq_aborted(&args[t], i)) {
                fetch_spec s = {.url = z->url, .body = z->body, .body_len = z->body_len};
                check_response(&z->res, &s, true);
            }
            free(z->body);
        }
        free(args[t].fetches);
    }
    return w;
}

/* The responses in the files of a series (or the one file), each file
 * checked whole: a warcinfo first, every request followed by its
 * response. */
static unsigned zq_files(const char *stem, bool series, uint64_t max_bytes)
{
    unsigned responses = 0;
    for (unsigned seq = 1;; seq++) {
        char n[64];
        snprintf(n, sizeof n, series ? "%s-%05u.warc.gz" : "%s.warc.gz", stem, seq);
        if (!exists(path_in(n)))
            break;
        file_summary fs = check_file(path_in(n));
        ck_assert_uint_eq(fs.warcinfo, 1);
        ck_assert_uint_eq(fs.orphans, 0);
        ck_assert_uint_eq(fs.requests, fs.responses);
        if (max_bytes)
            ck_assert_msg(fs.end <= max_bytes || fs.responses == 1, "%s: %llu bytes, %u fetches", n,
                          (unsigned long long)fs.end, fs.responses);
        responses += fs.responses;
        if (!series)
            break;
    }
    return responses;
}

/* Closes w and checks its files (a series of at most max_bytes each,
 * past the fifth, when max_bytes is set) hold want fetches, whole. */
static void zq_close(sieve_warc *w, const char *stem, uint64_t max_bytes, unsigned want)
{
    ck_assert_int_eq(sieve_warc_close(w), SIEVE_OK);
    if (max_bytes) {
        char fifth[64];
        snprintf(fifth, sizeof fifth, "%s-00005.warc.gz", stem);
        ck_assert(exists(path_in(fifth)));
    }
    ck_assert_uint_eq(zq_files(stem, max_bytes > 0, max_bytes), want);
    remove_dir();
}

/* Several feeders, several open fetches each, three compression threads:
 * every record whole and where it was said to be. _i = 1: ends that do
 * not wait, some fetches aborted; every ended fetch's callback comes
 * once, with its records already in the file where it says they are. */
START_TEST(threads_gzip_compressors)
{
    sieve_warc_options o;
    sieve_warc_options_init(&o);
    o.spool_memory = 16384;
    bool async = _i == 1;
    sieve_warc *w = zq_run("zq.warc.gz", &o, 3, async, async ? ZQ_ASYNC : ZQ_WAIT);
    zq_close(w, "zq", 0, ZQ_FEEDERS * (async ? zq_ended() : ZQ_PER_FEEDER));
}
END_TEST

/* A queue of one byte: every piece waits for the one before it to be
 * compressed, the archive is the same, and the waits are counted. */
START_TEST(threads_gzip_backpressure)
{
    sieve_warc_options o;
    sieve_warc_options_init(&o);
    o.gzip_queue_bytes = 1;
    sieve_warc *w = zq_run("bp.warc.gz", &o, 2, false, ZQ_WAIT);
    sieve_warc_stats st;
    sieve_warc_get_stats(w, &st);
    ck_assert_uint_gt(st.queue_full_waits, 0);
    ck_assert_int_eq(sieve_warc_close(w), SIEVE_OK);
    ck_assert_uint_eq(zq_files("bp", false, 0), ZQ_FEEDERS * ZQ_PER_FEEDER);
    /* A plain archive has no queue to wait for. */
    w = open_archive(path_in("bp.warc"), &o);
    sieve_warc_get_stats(w, &st);
    ck_assert_uint_eq(st.queue_full_waits + st.queue_full_us + st.end_wait_us, 0);
    ck_assert_int_eq(sieve_warc_close(w), SIEVE_OK);
    remove_dir();
}
END_TEST

/* Rotation decided by compression threads: no file past its limit unless
 * one fetch alone is larger, no fetch split across two. */
START_TEST(threads_gzip_rotation)
{
    sieve_warc_options o;
    sieve_warc_options_init(&o);
    o.max_bytes = 40000;
    sieve_warc *w = zq_run("rot.warc.gz", &o, 3, false, ZQ_WAIT);
    zq_close(w, "rot", o.max_bytes, ZQ_FEEDERS * ZQ_PER_FEEDER);
}
END_TEST

/* Fetches aborted with their pieces still queued or being compressed,
 * then close at once: it runs what is queued, joins its threads, and the
 * archive holds exactly the fetches that ended. */
START_TEST(threads_gzip_abort_and_close)
{
    sieve_warc_options o;
    sieve_warc_options_init(&o);
    o.gzip_queue_bytes = 64 << 10;
    sieve_warc *w = zq_run("ab.warc.gz", &o, 2, true, ZQ_WAIT);
    /* One more, its body still queued as the archive closes... */
    sieve_warc_fetch_info fi = {.target_uri = "http://127.0.0.1:8917/left"};
    sieve_warc_fetch *f;
    ck_assert_int_eq(sieve_warc_fetch_begin(w, &fi, &f), SIEVE_OK);
    const char *req = "GET /left HTTP/1.1\r\n\r\n", *head = "HTTP/1.1 200 OK\r\n\r\n";
    ck_assert_int_eq(sieve_warc_fetch_request_head(f, req, strlen(req)), SIEVE_OK);
    ck_assert_int_eq(sieve_warc_fetch_response_head(f, head, strlen(head)), SIEVE_OK);
    unsigned char *body = pattern(1 << 20, 9);
    ck_assert_int_eq(sieve_warc_fetch_response_body(f, body, 1 << 20), SIEVE_OK);
    sieve_warc_fetch_abort(f); /* ...which is dropped, as the contract asks */
    ck_assert_int_eq(sieve_warc_close(w), SIEVE_OK);
    free(body);
    ck_assert_uint_eq(zq_files("ab", false, 0), ZQ_FEEDERS * zq_ended());
    remove_dir();
}
END_TEST

/* Closed with ended fetches still waiting for a compression thread (one
 * thread, a queue that never makes a feeder wait): close writes them all,
 * and every callback has come and returned when close returns. */
START_TEST(threads_gzip_close_with_ends_pending)
{
    sieve_warc_options o;
    sieve_warc_options_init(&o);
    o.gzip_queue_bytes = 256u << 20;
    ck_assert_ptr_null(zq_run("cl.warc.gz", &o, 1, false, ZQ_ASYNC_CLOSE));
    ck_assert_uint_eq(zq_files("cl", false, 0), ZQ_FEEDERS * ZQ_PER_FEEDER);
    remove_dir();
}
END_TEST

/* ---- SURT keys, as warcio's getSurt() makes them ---- */

START_TEST(surt_keys)
{
    /* Expected values printed by warcio 2.4.11's getSurt(). */
    static const char *const cases[][2] = {
        {"http://www.Example.com:80/a/../b?z=1&a=2#frag", "com,example)/b?a=2&z=1"},
        {"https://WWW.example.com/", "com,example,www)/"},
        {"http://www2.example.com/x", "com,example)/x"},
        {"https://example.org:8443/x y", "org,example:8443)/x%20y"},
        {"http://user:pw@Example.COM:0080/%7Euser/./a/b/..?q=%41&b=\"x\"&a",
         "com,example)/%7euser/a/?a&b=%22x%22&q=%41"},
        {"http://example.com", "com,example)/"},
        {"http://example.com/a b/<c>?x y=1&'z", "com,example)/a%20b/%3Cc%3E?%27z&x%20y=1"},
        {"http://[::1]:8080/p", "[::1]:8080)/p"},
        {"http://example.com/a/b/.", "com,example)/a/b/"},
        {"http://example.com/a/%2E%2e/c", "com,example)/c"},
        {"http://example.com/?", "com,example)/"},
        {"http://example.com/a?b&a&&c", "com,example)/a?&a&b&c"},
        {"https://example.com:443/x", "com,example)/x"},
        {"http://example.com:443/x", "com,example:443)/x"},
        {"http://example.com\\\\a\\\\b", "com,example)//a//b"},
        {"ftp://example.com/", "ftp://example.com/"},
        {"http://exa mple.com/", "http://exa mple.com/"},
        {"http://example.com:99999/", "http://example.com:99999/"},
        {"http://www.example.com./a", ",com,example)/a"},
        {"http://example.com/caf\xc3\xa9?q=\xc3\xa9", "com,example)/caf%C3%A9?q=%C3%A9"},
        {"http://wwwx.example.com/", "com,example,wwwx)/"},
        {"http://127.0.0.1:8917/p/1.html", "1,0,0,127:8917)/p/1.html"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *k = warc_surt(cases[i][0]);
        ck_assert_msg(strcmp(k, cases[i][1]) == 0, "%s: %s, not %s", cases[i][0], k, cases[i][1]);
        free(k);
    }
}
END_TEST

/* The index of paths with the sort's budget and fan-in, as a string. */
static char *index_with(const char *const *paths, size_t n, size_t budget, size_t fanin)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    ck_assert_int_eq(warc_index_sorted(paths, n, f, NULL, budget, fanin), SIEVE_OK);
    fclose(f);
    return text;
}

static size_t entries_in(const char *path)
{
    DIR *d = opendir(path);
    ck_assert_ptr_nonnull(d);
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

START_TEST(index_sorts_in_runs)
{
    make_dir();
    static const unsigned char body[] = "<html><body>a page</body></html>";
    const char *names[] = {"a.warc", "b.warc.gz"};
    for (int k = 0; k < 2; k++) {
        sieve_warc_options o;
        sieve_warc_options_init(&o);
        sieve_warc *w = open_archive(path_in(names[k]), &o);
        for (int i = 0; i < (k ? 100 : 300); i++) {
            char url[128];
            /* spread over keys, so that every run holds lines of all */
            snprintf(url, sizeof url, "http://h%d.example.com/p/%d?q=%d", (i * 7919) % 13,
                     (i * 104729) % 301, i);
            fetch_spec s = {.url = url, .body = body, .body_len = sizeof body - 1};
            ck_assert_int_eq(put_fetch(w, &s, NULL), SIEVE_OK);
        }
        ck_assert_int_eq(sieve_warc_close(w), SIEVE_OK);
    }
    /* a file given twice is indexed twice: equal lines must all stay */
    const char *paths[] = {path_in(names[0]), path_in(names[1]), path_in(names[0])};
    char *whole = index_with(paths, 3, CDXJ_SORT_BUDGET, CDXJ_SORT_FANIN);
    size_t lines = 0;
    char *copy = strdup(whole), *save = NULL, *prev = NULL;
    for (char *l = strtok_r(copy, "\n", &save); l; prev = l, l = strtok_r(NULL, "\n", &save)) {
        ck_assert_msg(!prev || strcmp(prev, l) <= 0, "line %zu is out of order", lines + 1);
        lines++;
    }
    free(copy);
    ck_assert_uint_eq(lines, 700);
    /* a budget of one byte makes every line a run of its own */
    size_t fds = entries_in("/proc/self/fd");
    const size_t budgets[] = {1, 700, 5000, 40000};
    const size_t fanins[] = {2, 3, 64};
    for (size_t b = 0; b < 4; b++) {
        for (size_t f = 0; f < 3; f++) {
            char *runs = index_with(paths, 3, budgets[b], fanins[f]);
            ck_assert_msg(strcmp(runs, whole) == 0, "budget %zu, fan-in %zu: another index",
                          budgets[b], fanins[f]);
            free(runs);
        }
    }
    /* the runs were unnamed files beside the archives: none is left,
     * nor open */
    ck_assert_uint_eq(entries_in(dir), 2);
    ck_assert_uint_eq(entries_in("/proc/self/fd"), fds);
    free(whole);
    remove_dir();
}
END_TEST

/* A server may answer with a status line and no header lines, in bare
 * line feeds ("HTTP/1.0 200 OK\n\n"), and curl takes it: the record
 * stores that head as it came, and its index line has the status and no
 * mime. The head's blank line is at the status line's own end, which
 * once made the length of its header lines SIZE_MAX; the pointer that
 * wrapped around gave the same line here, so it is clang's UBSan in the
 * fuzz build, on fuzz/corpus/warc/plain-heads, that catches it again. */
START_TEST(a_head_without_header_lines_is_indexed)
{
    make_dir();
    static const char *const lines[] = {"HTTP/1.0 200 OK\n", "\n", NULL};
    static const unsigned char body[] = "no header lines";
    sieve_warc_options o;
    sieve_warc_options_init(&o);
    sieve_warc *w = open_archive(path_in("bare.warc"), &o);
    fetch_spec spec = {.url = "http://example.com/bare",
                       .resp_lines = lines,
                       .body = body,
                       .body_len = sizeof body - 1};
    sieve_warc_fetch_result res;
    ck_assert_int_eq(put_fetch(w, &spec, &res), SIEVE_OK);
    ck_assert_int_eq(sieve_warc_close(w), SIEVE_OK);
    const char *paths[] = {path_in("bare.warc")};
    char *text = index_of(paths, 1, SIEVE_OK);
    char want[512];
    snprintf(want, sizeof want,
             "{\"url\":\"http://example.com/bare\",\"status\":\"200\",\"digest\":\"%s\","
             "\"length\":\"%" PRIu64 "\",\"offset\":\"%" PRIu64 "\",\"filename\":\"bare.warc\"}\n",
             res.payload_digest + 5, res.response.length, res.response.offset);
    const char *line = strchr(text, '{');
    ck_assert_ptr_nonnull(line);
    ck_assert_str_eq(line, want);
    ck_assert(strncmp(text, "com,example)/bare ", 18) == 0);
    free(text);
    remove_dir();
}
END_TEST

START_TEST(a_sort_run_that_cannot_be_written_fails)
{
    cdxj_sort *s;
    ck_assert_int_eq(cdxj_sort_new(&s, 1, 2, "/nonexistent/sieve-test"), SIEVE_OK);
    ck_assert_int_eq(cdxj_sort_add(s, "b 1 {}"), SIEVE_OK); /* a line alone stays */
    ck_assert_int_eq(cdxj_sort_add(s, "a 1 {}"), SIEVE_EIO);
    cdxj_sort_free(s);
    ck_assert_int_eq(cdxj_sort_new(&s, 1, 1, "/tmp"), SIEVE_EINVAL);
    ck_assert_int_eq(cdxj_sort_new(&s, 0, 2, "/tmp"), SIEVE_EINVAL);
}
END_TEST

/* ---- the contract ---- */

START_TEST(argument_errors)
{
    make_dir();
    sieve_warc *w;
    sieve_warc_options o;
    sieve_warc_options_init(&o);
    ck_assert_int_eq(sieve_warc_open(&w, "", &o), SIEVE_EINVAL);
    ck_assert_int_eq(sieve_warc_open(NULL, "x.warc", &o), SIEVE_EINVAL);
    o.gzip_level = 10;
    ck_assert_int_eq(sieve_warc_open(&w, path_in("a.warc"), &o), SIEVE_EINVAL);
    sieve_warc_options_init(&o);
    const char *bad_info[] = {"no colon"};
    o.info = bad_info;
    o.n_info = 1;
    ck_assert_int_eq(sieve_warc_open(&w, path_in("a.warc"), &o), SIEVE_EINVAL);
    const char *crlf_info[] = {"a: b\r\nWARC-Type: forged"};
    o.info = crlf_info;
    ck_assert_int_eq(sieve_warc_open(&w, path_in("a.warc"), &o), SIEVE_EINVAL);
    ck_assert(!exists(path_in("a.warc")));
    errno = 0;
    ck_assert_int_eq(sieve_warc_open(&w, "/nonexistent-dir/a.warc", NULL), SIEVE_EIO);
    ck_assert_int_eq(errno, ENOENT);

    w = open_archive(path_in("a.warc"), NULL);
    sieve_warc_fetch *f;
    sieve_warc_fetch_info fi = {.target_uri = "http://x/ y"};
    ck_assert_int_eq(sieve_warc_fetch_begin(w, &fi, &f), SIEVE_EINVAL);
    fi.target_uri = "http://x/\r\nWARC-Type: forged";
    ck_assert_int_eq(sieve_warc_fetch_begin(w, &fi, &f), SIEVE_EINVAL);
    fi.target_uri = "http://x/";
    fi.ip_address = "not an address";
    ck_assert_int_eq(sieve_warc_fetch_begin(w, &fi, &f), SIEVE_EINVAL);
    fi.ip_address = "::1";
    fi.date_us = 1795514400123456; /* 2026-11-24T10:00:00.123456Z */

    /* Out of order. */
    ck_assert_int_eq(sieve_warc_fetch_begin(w, &fi, &f), SIEVE_OK);
    ck_assert_int_eq(sieve_warc_fetch_response_body(f, "x", 1), SIEVE_ESTATE);
    ck_assert_int_eq(sieve_warc_fetch_response_head(f, "HTTP/1.1 200 OK\r\n\r\n", 19),
                     SIEVE_ESTATE); /* no request yet */
    ck_assert_int_eq(sieve_warc_fetch_end(f, NULL, NULL), SIEVE_ESTATE);

    ck_assert_int_eq(sieve_warc_fetch_begin(w, &fi, &f), SIEVE_OK);
    ck_assert_int_eq(sieve_warc_fetch_request_head(f, "GET / HTTP/1.1\r\n\r\n", 18), SIEVE_OK);
    ck_assert_int_eq(sieve_warc_fetch_request_head(f, "X: y\r\n", 6), SIEVE_ESTATE);
    ck_assert_int_eq(sieve_warc_fetch_end(f, NULL, NULL), SIEVE_ESTATE); /* no response */

    /* A response that is no HTTP response. */
    ck_assert_int_eq(sieve_warc_fetch_begin(w, &fi, &f), SIEVE_OK);
    ck_assert_int_eq(sieve_warc_fetch_request_head(f, "GET / HTTP/1.1\r\n\r\n", 18), SIEVE_OK);
    ck_assert_int_eq(sieve_warc_fetch_response_head(f, "garbage\r\n\r\n", 11), SIEVE_OK);
    ck_assert_int_eq(sieve_warc_fetch_response_body(f, "x", 1), SIEVE_EINVAL);
    ck_assert_int_eq(sieve_warc_fetch_response_body(f, "x", 1), SIEVE_EINVAL); /* sticks */
    ck_assert_int_eq(sieve_warc_fetch_end(f, NULL, NULL), SIEVE_EINVAL);

    /* A bad truncation reason writes nothing. */
    ck_assert_int_eq(sieve_warc_fetch_begin(w, &fi, &f), SIEVE_OK);
    ck_assert_int_eq(sieve_warc_fetch_request_head(f, "GET / HTTP/1.1\r\n\r\n", 18), SIEVE_OK);
    ck_assert_int_eq(sieve_warc_fetch_response_head(f, "HTTP/1.1 200 OK\r\n\r\n", 19), SIEVE_OK);
    uint64_t size = file_size(path_in("a.warc"));
    ck_assert_int_eq(sieve_warc_fetch_end(f, "a b", NULL), SIEVE_EINVAL);
    ck_assert_uint_eq(file_size(path_in("a.warc")), size);

    /* A head with no blank line is completed; the date is the caller's. */
    ck_assert_int_eq(sieve_warc_fetch_begin(w, &fi, &f), SIEVE_OK);
    ck_assert_int_eq(sieve_warc_fetch_request_head(f, "GET / HTTP/1.1\r\nHost: x", 23), SIEVE_OK);
    ck_assert_int_eq(sieve_warc_fetch_response_head(f, "HTTP/1.1 204 No Content", 23), SIEVE_OK);
    sieve_warc_fetch_result res;
    ck_assert_int_eq(sieve_warc_fetch_end(f, "time", &res), SIEVE_OK);
    raw_rec r = read_at(res.response.path, res.response.offset, res.response.length, false);
    ck_assert_str_eq((char *)r.block, "HTTP/1.1 204 No Content\r\n\r\n");
    ck_assert_str_eq(field(r.header, "WARC-Date"), "2026-11-24T10:00:00.123456Z");
    ck_assert_str_eq(field(r.header, "WARC-IP-Address"), "::1");
    ck_assert_str_eq(field(r.header, "WARC-Truncated"), "time");
    raw_free(&r);
    r = read_at(res.request.path, res.request.offset, res.request.length, false);
    ck_assert_str_eq((char *)r.block, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    raw_free(&r);

    sieve_warc_fetch_abort(NULL);
    ck_assert_int_eq(sieve_warc_close(w), SIEVE_OK);
    ck_assert_int_eq(sieve_warc_close(NULL), SIEVE_OK);
    check_file(path_in("a.warc"));
    uint64_t end;
    ck_assert_int_eq(sieve_warc_complete_end(NULL, &end, NULL), SIEVE_EINVAL);
    ck_assert_int_eq(sieve_warc_complete_end(path_in("none.warc"), &end, NULL), SIEVE_EIO);
    ck_assert_int_eq(sieve_warc_index(NULL, 0, stdout, NULL), SIEVE_OK);
    ck_assert_int_eq(sieve_warc_index(NULL, 1, stdout, NULL), SIEVE_EINVAL);
    remove_dir();
}
END_TEST

/* ---- warcio, an independent reader ---- */

/* Writes into cmd the start of the command that runs warcio's check
 * ("bash SCRIPT PREFIX MJS", from the environment meson gives the test)
 * and returns its length. */
static int warcio_command(char *cmd, size_t size)
{
    const char *script = getenv("WARCIO_CHECK");
    const char *prefix = getenv("WARCIO_PREFIX");
    const char *mjs = getenv("WARCIO_CHECK_MJS");
    ck_assert_msg(script && prefix && mjs, "WARCIO_CHECK, WARCIO_PREFIX, WARCIO_CHECK_MJS unset");
    int len = snprintf(cmd, size, "bash '%s' '%s' '%s'", script, prefix, mjs);
    ck_assert_int_lt(len, (int)size);
    return len;
}

/* Runs a command warcio_command() began; warcio must agree. */
static void warcio_run(const char *cmd)
{
    int st = system(cmd);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "warcio disagrees (status %d)", st);
}

/* Writes archives of every kind, indexes them, and has warcio parse each
 * record, check its digests, and index them for comparison. */
START_TEST(warcio_agrees)
{
    make_dir();
    unsigned char *page = pattern(7000, 7), *big = pattern(1 << 20, 8);
    static const char *const chunked_lines[] = {"HTTP/1.1 200 OK\r\n",
                                                "Content-Type: text/plain; charset=x\r\n",
                                                "Transfer-Encoding: chunked\r\n", "\r\n", NULL};
    static const char *const redirect_lines[] = {"HTTP/1.1 301 Moved Permanently\r\n",
                                                 "Location: /p/2.html\r\n", "\r\n", NULL};
    const char *urls[] = {"http://127.0.0.1:8917/p/1.html",
                          "http://www.Example.com/a/./b/../c?z=1&a=2",
                          "https://WWW.Example.org:443/x%7e?b=%22&a", "http://example.net:8080/",
                          "http://www3.example.net/caf\xc3\xa9?q=a\"b<c>'d\\"};
    const char *names[] = {"a.warc", "b.warc.gz", "s.warc.gz"};
    char cmd[8192];
    int len = warcio_command(cmd, sizeof cmd);
    len += snprintf(cmd + len, sizeof cmd - (size_t)len, " '%s/ours.cdxj'", dir);
    const char *paths[16];
    size_t np = 0;
    for (int k = 0; k < 3; k++) {
        sieve_warc_options o;
        sieve_warc_options_init(&o);
        o.max_bytes = k == 2 ? 400000 : 0;
        sieve_warc *w = open_archive(path_in(names[k]), &o);
        for (int i = 0; i < 10; i++) {
            fetch_spec s = {.url = urls[i % 5],
                            .body = i == 3 ? big : page,
                            .body_len = i == 3 ? (1 << 20) : (size_t)(i * 700),
                            .resp_lines = i == 1   ? chunked_lines
                                          : i == 4 ? redirect_lines
                                                   : NULL,
                            .truncated = i == 5 ? "length" : NULL};
            ck_assert_int_eq(put_fetch(w, &s, NULL), SIEVE_OK);
        }
        ck_assert_int_eq(sieve_warc_close(w), SIEVE_OK);
    }
    for (int k = 0; k < 3; k++) {
        if (k < 2) {
            paths[np++] = strdup(path_in(names[k]));
            continue;
        }
        for (unsigned seq = 1;; seq++) {
            char n[64];
            snprintf(n, sizeof n, "s-%05u.warc.gz", seq);
            if (!exists(path_in(n)))
                break;
            paths[np++] = strdup(path_in(n));
        }
    }
    ck_assert_uint_ge(np, 4);
    for (size_t i = 0; i < np; i++)
        len += snprintf(cmd + len, sizeof cmd - (size_t)len, " '%s'", paths[i]);
    FILE *out = fopen(path_in("ours.cdxj"), "w");
    ck_assert_int_eq(sieve_warc_index(paths, np, out, NULL), SIEVE_OK);
    fclose(out);
    warcio_run(cmd);
    for (size_t i = 0; i < np; i++)
        free((char *)paths[i]);
    free(page);
    free(big);
    remove_dir();
}
END_TEST

/* Appends a record: "WARC/1.0", the fields given (each ending in CRLF),
 * the Content-Length of block, the block, and the CRLF CRLF after it. */
static void put_record(FILE *f, const char *fields, const char *block)
{
    fprintf(f, "WARC/1.0\r\n%sContent-Length: %zu\r\n\r\n%s\r\n\r\n", fields, strlen(block), block);
}

/* Records as other writers make them, which sieve never writes: revisit,
 * resource and metadata records, a WARC 1.0 <URI>, dates without
 * fractions, a sha256 digest, types and statuses that need JSON escapes.
 * warcio must make the same index of them. */
START_TEST(warcio_agrees_on_other_writers_records)
{
    make_dir();
    FILE *f = fopen(path_in("other.warc"), "w");
    ck_assert_ptr_nonnull(f);
    put_record(f,
               "WARC-Type: warcinfo\r\nWARC-Date: 2026-11-24T10:00:00Z\r\n"
               "WARC-Record-ID: <urn:uuid:00000000-0000-4000-8000-000000000001>\r\n"
               "Content-Type: application/warc-fields\r\n",
               "software: another crawler\r\n");
    put_record(f,
               "WARC-Type: response\r\nWARC-Date: 2026-11-24T10:00:01Z\r\n"
               "WARC-Target-URI: <http://www.example.com/a/b?y=2&x=1>\r\n"
               "WARC-Payload-Digest: sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\r\n"
               "Content-Type: application/http; msgtype=response\r\n",
               "HTTP/1.0 404 Not Found\r\nContent-Type: text/html; x=\"a\\b\"\r\n\r\nnot here");
    put_record(f,
               "WARC-Type: revisit\r\nWARC-Date: 2026-11-24T10:00:02Z\r\n"
               "WARC-Target-URI: http://example.com/again\r\n"
               "WARC-Profile: http://netpreserve.org/warc/1.0/revisit/identical-payload-digest\r\n"
               "WARC-Payload-Digest: sha1:BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB\r\n"
               "Content-Type: application/http; msgtype=response\r\n",
               "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n");
    put_record(f,
               "WARC-Type: resource\r\nWARC-Date: 2026-11-24T10:00:03.5Z\r\n"
               "WARC-Target-URI: http://example.com/img.png\r\n"
               "WARC-Payload-Digest: sha256:cafe:tail\r\nContent-Type: image/png\r\n",
               "\x89PNG");
    put_record(f,
               "WARC-Type: metadata\r\nWARC-Date: 2026-11-24T10:00:04Z\r\n"
               "WARC-Target-URI: http://example.com/img.png\r\n"
               "Content-Type: application/warc-fields\r\n",
               "outlink: http://example.com/\r\n");
    put_record(f,
               "WARC-Type: metadata\r\nWARC-Date: 2026-11-24T10:00:05Z\r\n"
               "WARC-Target-URI: metadata://example.com/notes\r\n"
               "Content-Type: text/plain\r\n",
               "a note");
    put_record(f,
               "WARC-Type: request\r\nWARC-Date: 2026-11-24T10:00:06Z\r\n"
               "WARC-Target-URI: http://example.com/\r\n"
               "Content-Type: application/http; msgtype=request\r\n",
               "GET / HTTP/1.1\r\nHost: example.com\r\n\r\n");
    put_record(
        f,
        "WARC-Type: response\r\nWARC-Date: 2026-11-24T10:00:07Z\r\n"
        "WARC-Target-URI: https://EXAMPLE.org:443/%7Ex/../y?b&a\r\n"
        "Content-Type: application/http; msgtype=response\r\n",
        "HTTP/1.1 302 Found\r\nLocation: /z\r\nContent-Type: Text/HTML;charset=UTF-8\r\n\r\n");
    put_record(f,
               "WARC-Type: response\r\nWARC-Date: 2026-11-24T10:00:08Z\r\n"
               "WARC-Target-URI: http://example.com/q?a=\"b\\c\"&t=x\ty\x01z\x7f\r\n"
               "Content-Type: application/http; msgtype=response\r\n",
               "HTTP/1.1 200 OK\r\nContent-Type: text/x\\\"y\x02\r\n\r\n");
    ck_assert_int_eq(fclose(f), 0);
    const char *paths[] = {path_in("other.warc")};
    FILE *out = fopen(path_in("ours.cdxj"), "w");
    ck_assert_int_eq(sieve_warc_index(paths, 1, out, NULL), SIEVE_OK);
    fclose(out);
    char cmd[4096];
    int len = warcio_command(cmd, sizeof cmd);
    snprintf(cmd + len, sizeof cmd - (size_t)len, " --index-only '%s' '%s'", path_in("ours.cdxj"),
             paths[0]);
    warcio_run(cmd);
    remove_dir();
}
END_TEST

/* WARC-Date is UTC with microseconds, as gmtime_r() has it, over four
 * centuries of leap years and both sides of 1970. */
START_TEST(dates_are_utc)
{
    int64_t samples[] = {0,
                         -1,
                         86399999999LL,
                         951782400000000LL /* 2000-02-29 */,
                         4107542399999999LL /* 2100-02-28 23:59:59 */,
                         -2208988800000000LL,
                         253402300799999999LL /* 9999-12-31 */};
    uint64_t x = 88172645463325252ULL;
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int64_t us = i < 7 ? samples[i] : (int64_t)(x % 253402300800000000ULL) - 2208988800000000LL;
        char got[WARC_DATE_SIZE], want[64];
        warc_format_date(us, got);
        time_t sec = (time_t)(us / 1000000);
        long frac = (long)(us % 1000000);
        if (frac < 0)
            frac += 1000000, sec--;
        struct tm tm;
        gmtime_r(&sec, &tm);
        snprintf(want, sizeof want, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
        ck_assert_msg(strcmp(got, want) == 0, "%lld us: %s, want %s", (long long)us, got, want);
    }
}
END_TEST

/* Header pieces joined without printf: every piece in order, numbers
 * as %llu writes them, a long piece past any fixed buffer. */
START_TEST(header_pieces)
{
    uint64_t samples[] = {0, 7, 10, 99, 1000000, 4294967296ULL, UINT64_MAX};
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
        char got[21], want[32];
        snprintf(want, sizeof want, "%llu", (unsigned long long)samples[i]);
        ck_assert_str_eq(warc_u64_text(samples[i], got), want);
    }
    char *long_uri = malloc(10001);
    memset(long_uri, 'u', 10000);
    long_uri[10000] = '\0';
    warc_buf b = {0};
    ck_assert_int_eq(warc_buf_add(&b, "WARC/1.1\r\n", 10), SIEVE_OK);
    ck_assert_int_eq(warc_buf_cat(&b, "A: ", "", long_uri, "\r\n", (const char *)NULL), SIEVE_OK);
    ck_assert_int_eq(warc_buf_cat(&b, (const char *)NULL), SIEVE_OK);
    ck_assert_uint_eq(b.len, 10 + 3 + 10000 + 2);
    ck_assert(memcmp(b.data, "WARC/1.1\r\nA: u", 14) == 0);
    ck_assert(memcmp(b.data + b.len - 3, "u\r\n", 3) == 0);
    ck_assert_uint_eq(b.data[b.len], '\0');
    warc_buf_free(&b);
    free(long_uri);
}
END_TEST

/* Heads fed in pieces of any size, a line's CR and LF apart among them,
 * are stored as whole heads: an interim response dropped, the final one
 * kept, its Transfer-Encoding renamed; the request as it was sent. */
START_TEST(heads_in_any_pieces)
{
    make_dir();
    sieve_warc *w = open_archive(path_in("pieces.warc"), NULL);
    const char *req = "GET /p HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: */*\r\n\r\n";
    const char *resp = "HTTP/1.1 100 Continue\r\n\r\n"
                       "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nab: c\r\n\r\n";
    const char *stored = "HTTP/1.1 200 OK\r\nX-Archive-Orig-Transfer-Encoding: chunked\r\n"
                         "ab: c\r\n\r\nhello";
    static const size_t sizes[] = {1, 2, 3, 5, 7, 64};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        sieve_warc_fetch_info fi = {.target_uri = "http://127.0.0.1/p", .ip_address = "127.0.0.1"};
        sieve_warc_fetch *f;
        ck_assert_int_eq(sieve_warc_fetch_begin(w, &fi, &f), SIEVE_OK);
        for (size_t off = 0; off < strlen(req); off += sizes[k]) {
            size_t n = strlen(req) - off < sizes[k] ? strlen(req) - off : sizes[k];
            ck_assert_int_eq(sieve_warc_fetch_request_head(f, req + off, n), SIEVE_OK);
        }
        for (size_t off = 0; off < strlen(resp); off += sizes[k]) {
            size_t n = strlen(resp) - off < sizes[k] ? strlen(resp) - off : sizes[k];
            ck_assert_int_eq(sieve_warc_fetch_response_head(f, resp + off, n), SIEVE_OK);
        }
        ck_assert_int_eq(sieve_warc_fetch_response_body(f, "hello", 5), SIEVE_OK);
        sieve_warc_fetch_result res;
        ck_assert_int_eq(sieve_warc_fetch_end(f, NULL, &res), SIEVE_OK);
        raw_rec q = read_at(res.request.path, res.request.offset, res.request.length, false);
        raw_rec r = read_at(res.response.path, res.response.offset, res.response.length, false);
        ck_assert_uint_eq(q.block_len, strlen(req));
        ck_assert_msg(memcmp(q.block, req, q.block_len) == 0, "pieces of %zu: request %.*s",
                      sizes[k], (int)q.block_len, (const char *)q.block);
        ck_assert_uint_eq(r.block_len, strlen(stored));
        ck_assert_msg(memcmp(r.block, stored, r.block_len) == 0, "pieces of %zu: response %.*s",
                      sizes[k], (int)r.block_len, (const char *)r.block);
        raw_free(&q);
        raw_free(&r);
    }
    ck_assert_int_eq(sieve_warc_close(w), SIEVE_OK);
    remove_dir();
}
END_TEST

/* Record IDs are version 4 UUIDs, never twice, in a child of fork()
 * neither. */
START_TEST(ids_are_fresh_across_forks)
{
    char a[SIEVE_WARC_ID_SIZE], b[SIEVE_WARC_ID_SIZE];
    ck_assert_int_eq(warc_new_id(a), SIEVE_OK);
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    pid_t pid = fork();
    if (pid == 0) {
        char c[SIEVE_WARC_ID_SIZE];
        _exit(warc_new_id(c) == SIEVE_OK && write(fds[1], c, sizeof c) == (ssize_t)sizeof c ? 0
                                                                                            : 1);
    }
    char child[SIEVE_WARC_ID_SIZE];
    ck_assert_int_eq(read(fds[0], child, sizeof child), (ssize_t)sizeof child);
    waitpid(pid, NULL, 0);
    ck_assert_int_eq(warc_new_id(b), SIEVE_OK);
    ck_assert_str_ne(child, b);
    ck_assert_str_ne(a, b);
    ck_assert_uint_eq(strlen(a), 45);
    ck_assert_int_eq(a[23], '4');
    ck_assert(strchr("89ab", a[28]) != NULL);
    close(fds[0]);
    close(fds[1]);
}
END_TEST

static void touch(const char *path)
{
    FILE *fp = fopen(path, "w");
    ck_assert_ptr_nonnull(fp);
    fclose(fp);
}

/* An archive's files as the writer names them: the plain file, or the
 * series' numbered files by number, other names left out. */
START_TEST(files_of_an_archive)
{
    make_dir();
    char **f;
    size_t n = 99;
    ck_assert_int_eq(sieve_warc_files(path_in("a.warc.gz"), false, &f, &n), SIEVE_OK);
    ck_assert_uint_eq(n, 0);
    ck_assert_ptr_null(f[0]);
    sieve_warc_files_free(f);
    touch(path_in("a.warc.gz"));
    ck_assert_int_eq(sieve_warc_files(path_in("a.warc.gz"), false, &f, &n), SIEVE_OK);
    ck_assert_uint_eq(n, 1);
    ck_assert_str_eq(f[0], path_in("a.warc.gz"));
    sieve_warc_files_free(f);

    const char *names[] = {"a-00010.warc.gz",  "a-00002.warc.gz", "a-00001.warc.gz",
                           "a-123456.warc.gz", "a-0003.warc.gz",  "a-00004.warc",
                           "b-00005.warc.gz",  "a-0000x.warc.gz", "a-00006.warc.gz.tmp"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        touch(path_in(names[i]));
    ck_assert_int_eq(sieve_warc_files(path_in("a.warc.gz"), true, &f, &n), SIEVE_OK);
    const char *want[] = {"a-00001.warc.gz", "a-00002.warc.gz", "a-00010.warc.gz",
                          "a-123456.warc.gz"};
    ck_assert_uint_eq(n, 4);
    for (size_t i = 0; i < n; i++)
        ck_assert_str_eq(f[i], path_in(want[i]));
    ck_assert_ptr_null(f[n]);
    sieve_warc_files_free(f);
    /* the plain file first, then what resumed crawls added after it */
    ck_assert_int_eq(sieve_warc_files(path_in("a.warc.gz"), false, &f, &n), SIEVE_OK);
    ck_assert_uint_eq(n, 5);
    ck_assert_str_eq(f[0], path_in("a.warc.gz"));
    for (size_t i = 1; i < n; i++)
        ck_assert_str_eq(f[i], path_in(want[i - 1]));
    sieve_warc_files_free(f);
    /* a series the writer goes on with is one of these: the highest, while
     * it holds no record (these are empty), then the next number */
    sieve_warc_options o;
    sieve_warc_options_init(&o);
    o.series = true;
    o.mode = SIEVE_WARC_NEXT;
    sieve_warc *w;
    for (int k = 0; k < 2; k++) {
        ck_assert_int_eq(sieve_warc_open(&w, path_in("a.warc.gz"), &o), SIEVE_OK);
        ck_assert_int_eq(sieve_warc_close(w), SIEVE_OK);
        ck_assert_int_eq(sieve_warc_files(path_in("a.warc.gz"), true, &f, &n), SIEVE_OK);
        ck_assert_uint_eq(n, 4 + k);
        ck_assert_str_eq(f[3 + k], path_in(k == 0 ? "a-123456.warc.gz" : "a-123457.warc.gz"));
        ck_assert_uint_gt(file_size(f[3 + k]), 0);
        sieve_warc_files_free(f);
    }
    ck_assert_int_eq(sieve_warc_files("", true, &f, &n), SIEVE_EINVAL);
    ck_assert_int_eq(sieve_warc_files("x.warc", true, NULL, &n), SIEVE_EINVAL);
    remove_dir();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("warc");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, payload_digests);
    tcase_add_test(tc, spare_fetches_start_clean);
    tcase_add_test(tc, write_behind_follows_appends);
    tcase_add_test(tc, plain_archive);
    tcase_add_test(tc, gzip_archive);
    tcase_add_test(tc, gzip_archive_inline);
    tcase_add_test(tc, end_async_plain);
    tcase_add_test(tc, end_async_gzip_inline);
    tcase_add_test(tc, batch_plain);
    tcase_add_test(tc, batch_gzip_inline);
    tcase_add_test(tc, batch_rotates);
    tcase_add_test(tc, batch_write_fails);
    tcase_add_test(tc, a_spool_that_fails_says_where_and_why);
    tcase_add_test(tc, a_spool_on_another_file_system_is_copied);
    tcase_add_test(tc, a_rotation_without_its_warcinfo_takes_no_fetch);
    tcase_add_test(tc, rotation_plain);
    tcase_add_test(tc, rotation_gzip);
    tcase_add_test(tc, torn_tail_plain);
    tcase_add_test(tc, torn_tail_gzip);
    tcase_add_test(tc, blank_lines_plain);
    tcase_add_test(tc, blank_lines_gzip);
    tcase_add_test(tc, big_body_plain);
    tcase_add_test(tc, big_body_gzip);
    tcase_add_test(tc, gzip_blocks_at_the_spool_limit);
    tcase_add_test(tc, surt_keys);
    tcase_add_test(tc, index_sorts_in_runs);
    tcase_add_test(tc, a_sort_run_that_cannot_be_written_fails);
    tcase_add_test(tc, a_head_without_header_lines_is_indexed);
    tcase_add_test(tc, argument_errors);
    tcase_add_test(tc, files_of_an_archive);
    tcase_add_test(tc, dates_are_utc);
    tcase_add_test(tc, header_pieces);
    tcase_add_test(tc, heads_in_any_pieces);
    tcase_add_test(tc, ids_are_fresh_across_forks);
    suite_add_tcase(s, tc);
    TCase *th = tcase_create("threads");
    tcase_set_timeout(th, 240);
    tcase_add_test(th, threads_plain);
    tcase_add_test(th, threads_gzip);
    tcase_add_test(th, threads_plain_batched);
    tcase_add_test(th, threads_plain_write_behind);
    tcase_add_loop_test(th, threads_gzip_compressors, 0, 2);
    tcase_add_test(th, threads_gzip_backpressure);
    tcase_add_test(th, threads_gzip_rotation);
    tcase_add_test(th, threads_gzip_abort_and_close);
    tcase_add_test(th, threads_gzip_close_with_ends_pending);
    suite_add_tcase(s, th);
    TCase *wi = tcase_create("warcio");
    tcase_set_timeout(wi, 240);
    tcase_add_test(wi, warcio_agrees);
    tcase_add_test(wi, warcio_agrees_on_other_writers_records);
    suite_add_tcase(s, wi);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
