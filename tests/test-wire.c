/* test-wire.c - the engine's wire callbacks (sieve/crawl.h): each
 * transfer's request as sent, response head and body as received, its end
 * and its record; and the content decoding the engine does itself.
 *
 * A real HTTP server (libmicrohttpd) runs in this process on 127.0.0.1
 * and serves bodies the test builds at the start, so every byte the
 * callbacks report can be compared with what was sent: gzip, zlib and raw
 * deflate pages, a gzip stream cut inside a tag, corrupt gzip, a coding
 * the engine did not ask for, a body shorter than its Content-Length, a
 * compression bomb, error pages, redirects, and a robots.txt behind a
 * redirect. Callbacks only record; the checks run once run() is over. */
#include <check.h>
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "sieve/crawl.h"

/* ---- what the server sends ---- */

typedef struct served {
    const char *path;
    unsigned status;
    const char *type;
    const char *encoding; /* Content-Encoding, or NULL */
    const char *location; /* redirects */
    char *body;           /* the bytes sent */
    size_t len;
    char *plain; /* what they decode to, when they do */
    size_t plain_len;
    enum { WHOLE, CHUNKED, SHORT, STALL } how;
} served;

enum { SHORT_CLAIMED = 1000, SHORT_SENT = 100, BOMB = 1 << 20, MAX_PAGE = 64 * 1024 };

static served site[32];
static size_t n_site;

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char requested[256][128];
static size_t n_requested;

static struct MHD_Daemon *server;
static unsigned port;
static char base[64];

static char *dup_bytes(const void *p, size_t n)
{
    char *d = malloc(n + 1);
    memcpy(d, p, n);
    d[n] = '\0';
    return d;
}

/* in deflated in the format windowBits asks for (zlib's convention),
 * flushed with flush at its end. */
static char *pack(const char *in, size_t n, int window_bits, int flush, size_t *out_len)
{
    z_stream z = {0};
    ck_assert_int_eq(deflateInit2(&z, 6, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY), Z_OK);
    size_t cap = deflateBound(&z, n) + 64;
    unsigned char *out = malloc(cap);
    z.next_in = (unsigned char *)in;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    int rc = deflate(&z, flush);
    ck_assert(rc == Z_STREAM_END || (flush != Z_FINISH && rc == Z_OK));
    *out_len = cap - z.avail_out;
    deflateEnd(&z);
    return (char *)out;
}

static served *add(const char *path, unsigned status, const char *type, const char *body)
{
    served *s = &site[n_site++];
    *s = (served){.path = path, .status = status, .type = type, .how = WHOLE};
    s->len = strlen(body);
    s->body = dup_bytes(body, s->len);
    s->plain = dup_bytes(body, s->len);
    s->plain_len = s->len;
    return s;
}

/* A page whose body goes out encoded with windowBits (16 + 15: gzip,
 * 15: zlib, -15: raw deflate). */
static served *add_packed(const char *path, const char *encoding, int window_bits, const char *html)
{
    served *s = add(path, 200, "text/html", html);
    free(s->body);
    s->body = pack(html, strlen(html), window_bits, Z_FINISH, &s->len);
    s->encoding = encoding;
    return s;
}

static void build_site(void)
{
    n_site = 0;
    served *s = add("/robots.txt", 301, "text/html", "<p>moved</p>\n");
    s->location = "/robots-2.txt";
    add("/robots-2.txt", 200, "text/plain", "User-agent: *\nDisallow: /private\n");
    add("/", 200, "text/html",
        "<html><body><a href=\"/plain\">p</a> <a href=\"/gz\">g</a> <a href=\"/deflate\">d</a> "
        "<a href=\"/rawdeflate\">r</a> <a href=\"/gz-cut\">c</a> <a href=\"/gz-bad\">b</a> "
        "<a href=\"/br\">br</a> <a href=\"/missing\">m</a> <a href=\"/fail\">f</a> "
        "<a href=\"/big\">big</a> <a href=\"/private/x\">x</a> <a href=\"/redirect\">re</a> "
        "<a href=\"/short\">s</a> <a href=\"/trailer\">t</a></body></html>\n");
    add("/plain", 200, "text/html", "<html><body><a href=\"/leaf/plain\">l</a></body></html>\n");
    add_packed("/gz", "gzip", 16 + 15, "<html><body><a href=\"/leaf/gz\">l</a></body></html>\n");
    add_packed("/deflate", "deflate", 15,
               "<html><body><a href=\"/leaf/deflate\">l</a></body></html>\n");
    add_packed("/rawdeflate", "deflate", -15,
               "<html><body><a href=\"/leaf/raw\">l</a></body></html>\n");

    /* A gzip stream that stops inside a tag, flushed so that what was sent
     * inflates to exactly the text before the cut; the HTTP body itself
     * ends cleanly (chunked, with its last chunk). */
    static char cut_text[8192];
    size_t n =
        (size_t)snprintf(cut_text, sizeof cut_text, "<html><body><a href=\"/leaf/cut-a\">a</a><p>");
    while (n < 6000)
        n += (size_t)snprintf(cut_text + n, sizeof cut_text - n, "filler text %zu ", n);
    n += (size_t)snprintf(cut_text + n, sizeof cut_text - n, "</p><a href=\"/leaf/cut-b");
    s = add("/gz-cut", 200, "text/html", cut_text);
    free(s->body);
    s->body = pack(cut_text, n, 16 + 15, Z_SYNC_FLUSH, &s->len);
    s->encoding = "gzip";
    s->how = CHUNKED;

    static const char bad[] = "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03this is no deflate data";
    s = add("/gz-bad", 200, "text/html", "");
    free(s->body);
    s->body = dup_bytes(bad, sizeof bad - 1);
    s->len = sizeof bad - 1;
    s->encoding = "gzip";

    s = add("/br", 200, "text/html", "not brotli at all, and not asked for");
    s->encoding = "br";
    add("/missing", 404, "text/html", "<html><body>not here</body></html>\n");
    add("/fail", 500, "text/html", "<html><body>it broke</body></html>\n");

    char *bomb = malloc(BOMB + 32);
    memset(bomb, 'a', BOMB + 32);
    memcpy(bomb, "<html><body>", 12);
    bomb[BOMB] = '\0';
    add_packed("/big", "gzip", 16 + 15, bomb);
    free(bomb);

    s = add("/redirect", 302, "text/html", "<p>see /plain</p>\n");
    s->location = "/plain";
    s = add("/short", 200, "text/html", "");
    free(s->body);
    s->body = malloc(SHORT_SENT);
    memset(s->body, 'x', SHORT_SENT);
    s->len = SHORT_SENT;
    s->how = SHORT;
    s = add("/trailer", 200, "text/html",
            "<html><body>a chunked body with a trailer</body></html>");
    s->how = CHUNKED;
    s = add("/stall", 200, "text/html", "<html><body>");
    s->how = STALL;
    add("/leaf/plain", 200, "text/html", "<p>leaf</p>");
}

static void free_site(void)
{
    for (size_t i = 0; i < n_site; i++) {
        free(site[i].body);
        free(site[i].plain);
    }
    n_site = 0;
}

static const served *find_served(const char *path)
{
    for (size_t i = 0; i < n_site; i++)
        if (strcmp(site[i].path, path) == 0)
            return &site[i];
    return NULL;
}

static ssize_t read_body(void *cls, uint64_t pos, char *buf, size_t max)
{
    const served *s = cls;
    if (s->how == STALL) {
        if (pos >= 12) {
            usleep(100000);
            buf[0] = ' ';
            return pos < 400 ? 1 : MHD_CONTENT_READER_END_OF_STREAM;
        }
    }
    if (pos >= s->len)
        return s->how == SHORT ? MHD_CONTENT_READER_END_WITH_ERROR
                               : MHD_CONTENT_READER_END_OF_STREAM;
    size_t n = s->len - pos < max ? s->len - (size_t)pos : max;
    memcpy(buf, s->body + pos, n);
    return (ssize_t)n;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_len, void **state)
{
    (void)cls, (void)method, (void)version, (void)upload, (void)upload_len, (void)state;
    pthread_mutex_lock(&log_lock);
    if (n_requested < 256)
        snprintf(requested[n_requested++], sizeof requested[0], "%s", url);
    pthread_mutex_unlock(&log_lock);
    const served *s = find_served(url);
    static const char none[] = "no such page";
    struct MHD_Response *r;
    unsigned status = 404;
    if (s == NULL) {
        r = MHD_create_response_from_buffer(sizeof none - 1, (void *)none, MHD_RESPMEM_PERSISTENT);
    } else {
        status = s->status;
        if (s->how == WHOLE)
            r = MHD_create_response_from_buffer(s->len, s->body, MHD_RESPMEM_PERSISTENT);
        else
            r = MHD_create_response_from_callback(s->how == SHORT     ? SHORT_CLAIMED
                                                  : s->how == CHUNKED ? MHD_SIZE_UNKNOWN
                                                                      : MHD_SIZE_UNKNOWN,
                                                  s->how == STALL ? 1 : 4096, read_body, (void *)s,
                                                  NULL);
        MHD_add_response_header(r, "Content-Type", s->type);
        if (s->encoding != NULL)
            MHD_add_response_header(r, "Content-Encoding", s->encoding);
        if (s->location != NULL)
            MHD_add_response_header(r, "Location", s->location);
        if (strcmp(url, "/trailer") == 0)
            MHD_add_response_footer(r, "X-Checksum", "42");
    }
    enum MHD_Result rc = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return rc;
}

static bool was_requested(const char *prefix)
{
    bool found = false;
    pthread_mutex_lock(&log_lock);
    for (size_t i = 0; i < n_requested && !found; i++)
        found = strncmp(requested[i], prefix, strlen(prefix)) == 0;
    pthread_mutex_unlock(&log_lock);
    return found;
}

static void setup(void)
{
    build_site();
    n_requested = 0;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    server = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
                                  MHD_USE_AUTO | MHD_USE_ERROR_LOG,
                              0, NULL, NULL, handle, NULL, MHD_OPTION_SOCK_ADDR,
                              (struct sockaddr *)&sa, MHD_OPTION_END);
    ck_assert_ptr_nonnull(server);
    port = MHD_get_daemon_info(server, MHD_DAEMON_INFO_BIND_PORT)->port;
    snprintf(base, sizeof base, "http://127.0.0.1:%u", port);
}

static void teardown(void)
{
    MHD_stop_daemon(server);
    free_site();
}

/* ---- what the callbacks see ---- */

typedef struct buf {
    char *p;
    size_t len, cap;
} buf;

static void buf_add(buf *b, const char *p, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->p = realloc(b->p, b->cap);
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
    b->p[b->len] = '\0';
}

enum stage { NONE, REQUEST, HEAD, BODY, ENDED, RECORDED };

/* One transfer, as its callbacks saw it. */
typedef struct tlog {
    uint64_t id;
    sieve_fetch_kind kind;
    char path[128];
    pthread_t thread;
    bool bad_thread, bad_order, bad_ip, bad_id;
    enum stage stage;
    int requests, ends, records;
    buf req, head, body, decoded;
    char *truncated;
    bool aborted, has_record;
    uint64_t wire_bytes;
    /* its record */
    sieve_crawl_outcome outcome;
    long status;
    uint64_t bytes, rec_wire_bytes;
    unsigned attempts;
    char *digest, *error, *final_url, *remote_ip;
} tlog;

typedef struct ctx {
    pthread_mutex_t mu;
    tlog *t[64];
    size_t n;
    /* records of URLs never fetched */
    char *refused[16];
    sieve_crawl_outcome refused_outcome[16];
    unsigned refused_attempts[16];
    bool refused_transfer[16];
    size_t n_refused;
    const char *refuse_head; /* on_response_head refuses this path */
    sieve_crawler *c;
    atomic_bool stall_started; /* the /stall body is coming */
} ctx;

static const char *path_of(const char *url)
{
    return strncmp(url, base, strlen(base)) == 0 ? url + strlen(base) : url;
}

/* The transfer's log: made at its first callback, kept in t->user. */
static tlog *log_of(ctx *x, sieve_crawl_transfer *t)
{
    tlog *l = t->user;
    if (l != NULL) {
        if (!pthread_equal(l->thread, pthread_self()))
            l->bad_thread = true;
        if (l->id != t->id)
            l->bad_id = true;
        return l;
    }
    l = calloc(1, sizeof *l);
    l->id = t->id;
    l->kind = t->kind;
    snprintf(l->path, sizeof l->path, "%s", path_of(t->url));
    l->thread = pthread_self();
    pthread_mutex_lock(&x->mu);
    ck_assert_uint_lt(x->n, 64);
    x->t[x->n++] = l;
    pthread_mutex_unlock(&x->mu);
    t->user = l;
    return l;
}

static void advance(tlog *l, enum stage s)
{
    if (s < l->stage)
        l->bad_order = true;
    l->stage = s;
}

static int on_request(void *ud, sieve_crawl_transfer *t, const char *data, size_t len)
{
    tlog *l = log_of(ud, t);
    advance(l, REQUEST);
    l->requests++;
    buf_add(&l->req, data, len);
    if (t->remote_ip == NULL || strcmp(t->remote_ip, "127.0.0.1") != 0)
        l->bad_ip = true;
    return SIEVE_OK;
}

static int on_response_head(void *ud, sieve_crawl_transfer *t, const char *line, size_t len)
{
    ctx *x = ud;
    tlog *l = log_of(x, t);
    advance(l, HEAD);
    buf_add(&l->head, line, len);
    return x->refuse_head != NULL && strcmp(l->path, x->refuse_head) == 0 ? 1 : SIEVE_OK;
}

static int on_response_body(void *ud, sieve_crawl_transfer *t, const char *data, size_t len)
{
    ctx *x = ud;
    tlog *l = log_of(x, t);
    advance(l, BODY);
    buf_add(&l->body, data, len);
    if (strcmp(l->path, "/stall") == 0)
        atomic_store(&x->stall_started, true);
    return SIEVE_OK;
}

static void on_transfer_end(void *ud, sieve_crawl_transfer *t)
{
    tlog *l = log_of(ud, t);
    advance(l, ENDED);
    l->ends++;
    l->truncated = t->truncated != NULL ? strdup(t->truncated) : NULL;
    l->aborted = t->aborted;
    l->has_record = t->has_record;
    l->wire_bytes = t->wire_bytes;
}

static int on_body(void *ud, const sieve_crawl_body *b)
{
    ctx *x = ud;
    pthread_mutex_lock(&x->mu);
    tlog *l = NULL;
    for (size_t i = 0; i < x->n; i++)
        if (strcmp(x->t[i]->path, path_of(b->url)) == 0 && x->t[i]->kind != SIEVE_FETCH_ROBOTS)
            l = x->t[i];
    pthread_mutex_unlock(&x->mu);
    ck_assert_ptr_nonnull(l);
    buf_add(&l->decoded, b->data, b->len);
    return SIEVE_OK;
}

static int on_record(void *ud, const sieve_crawl_record *r)
{
    ctx *x = ud;
    if (r->transfer == NULL) {
        pthread_mutex_lock(&x->mu);
        size_t i = x->n_refused++;
        x->refused[i] = strdup(path_of(r->url));
        x->refused_outcome[i] = r->outcome;
        x->refused_attempts[i] = r->attempts;
        pthread_mutex_unlock(&x->mu);
        return SIEVE_OK;
    }
    tlog *l = r->transfer->user;
    ck_assert_ptr_nonnull(l);
    advance(l, RECORDED);
    l->records++;
    l->outcome = r->outcome;
    l->status = r->status;
    l->bytes = r->bytes;
    l->rec_wire_bytes = r->wire_bytes;
    l->attempts = r->attempts;
    l->digest = r->payload_digest ? strdup(r->payload_digest) : NULL;
    l->error = r->error ? strdup(r->error) : NULL;
    l->final_url = strdup(path_of(r->final_url));
    l->remote_ip = r->remote_ip ? strdup(r->remote_ip) : NULL;
    return SIEVE_OK;
}

static void ctx_init(ctx *x)
{
    memset(x, 0, sizeof *x);
    pthread_mutex_init(&x->mu, NULL);
}

static void ctx_free(ctx *x)
{
    for (size_t i = 0; i < x->n; i++) {
        tlog *l = x->t[i];
        free(l->req.p), free(l->head.p), free(l->body.p), free(l->decoded.p);
        free(l->truncated), free(l->digest), free(l->error), free(l->final_url);
        free(l->remote_ip);
        free(l);
    }
    for (size_t i = 0; i < x->n_refused; i++)
        free(x->refused[i]);
    sieve_crawler_free(x->c);
    pthread_mutex_destroy(&x->mu);
}

static void options(sieve_crawl_options *o)
{
    sieve_crawl_options_init(o);
    o->workers = 2;
    o->concurrency = 4;
    o->delay_s = 0;
    o->host_connections = 4;
    o->timeout_s = 20;
    o->max_page_bytes = MAX_PAGE;
    o->stop_grace_s = 0;
    o->proxy = "";  /* no proxy from the environment */
    o->retries = 0; /* one transfer per URL; test-retries has the retried ones */
}

static void crawler(ctx *x, const sieve_crawl_options *o, const char *seed_path)
{
    ck_assert_int_eq(sieve_crawler_new(&x->c, o), SIEVE_OK);
    sieve_crawl_callbacks cb = {
        .on_record = on_record,
        .on_body = on_body,
        .on_request = on_request,
        .on_response_head = on_response_head,
        .on_response_body = on_response_body,
        .on_transfer_end = on_transfer_end,
    };
    sieve_crawler_set_callbacks(x->c, &cb, x);
    char seed[128];
    snprintf(seed, sizeof seed, "%s%s", base, seed_path);
    ck_assert_int_eq(sieve_crawler_add_seed(x->c, seed, SIZE_MAX), SIEVE_OK);
}

static const tlog *transfer_of(const ctx *x, const char *path, sieve_fetch_kind kind)
{
    for (size_t i = 0; i < x->n; i++)
        if (strcmp(x->t[i]->path, path) == 0 && x->t[i]->kind == kind)
            return x->t[i];
    return NULL;
}

static void sha1_base32(const void *data, size_t n, char out[38])
{
    unsigned char md[20];
    unsigned len = 0;
    EVP_Digest(data, n, md, &len, EVP_sha1(), NULL);
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    strcpy(out, "sha1:");
    unsigned acc = 0;
    int bits = 0;
    size_t o = 5;
    for (size_t i = 0; i < 20; i++) {
        acc = acc << 8 | md[i];
        bits += 8;
        while (bits >= 5) {
            out[o++] = alphabet[(acc >> (bits - 5)) & 31];
            bits -= 5;
        }
    }
    out[o] = '\0';
}

/* The request head: a GET of the path, asking for gzip and deflate only. */
static void assert_request(const tlog *l)
{
    char line[256];
    snprintf(line, sizeof line, "GET %s HTTP/1.1\r\n", l->path);
    ck_assert_msg(l->requests == 1, "%s: %d request heads", l->path, l->requests);
    ck_assert_msg(l->req.len > 0 && strncmp(l->req.p, line, strlen(line)) == 0,
                  "%s: request head %s", l->path, l->req.p);
    ck_assert_msg(strstr(l->req.p, "\r\nAccept-Encoding: gzip, deflate\r\n") != NULL,
                  "%s: request head %s", l->path, l->req.p);
    ck_assert_msg(l->req.len >= 4 && strcmp(l->req.p + l->req.len - 4, "\r\n\r\n") == 0,
                  "%s: request head does not end with a blank line", l->path);
}

/* The response as it was sent: status line first, blank line last, the
 * body byte for byte, and its digest. */
static void assert_response_as_sent(const tlog *l, const served *s, bool whole_body)
{
    char status[64];
    snprintf(status, sizeof status, "HTTP/1.1 %u ", s->status);
    ck_assert_msg(l->head.len > 0 && strncmp(l->head.p, status, strlen(status)) == 0, "%s: head %s",
                  l->path, l->head.p);
    ck_assert_msg(strcmp(l->head.p + l->head.len - 4, "\r\n\r\n") == 0 &&
                      strstr(l->head.p, "\r\n\r\n") == l->head.p + l->head.len - 4,
                  "%s: the head's blank line is not its end", l->path);
    if (s->encoding != NULL) {
        char ce[64];
        snprintf(ce, sizeof ce, "\r\nContent-Encoding: %s\r\n", s->encoding);
        ck_assert_msg(strstr(l->head.p, ce) != NULL, "%s: head %s", l->path, l->head.p);
    }
    ck_assert_uint_eq(l->wire_bytes, l->body.len);
    if (whole_body)
        ck_assert_msg(l->body.len == s->len && memcmp(l->body.p, s->body, s->len) == 0,
                      "%s: %zu body bytes on the wire, %zu sent", l->path, l->body.len, s->len);
}

static void assert_one_life(const tlog *l)
{
    ck_assert_msg(l->ends == 1, "%s: %d ends", l->path, l->ends);
    ck_assert_msg(!l->bad_order, "%s: callbacks out of order", l->path);
    ck_assert_msg(!l->bad_thread, "%s: callbacks on several threads", l->path);
    ck_assert_msg(!l->bad_id, "%s: the id changed", l->path);
    ck_assert_msg(!l->bad_ip, "%s: remote_ip is not 127.0.0.1", l->path);
    ck_assert_msg(l->records == (l->has_record ? 1 : 0), "%s: %d records, has_record %d", l->path,
                  l->records, l->has_record);
    if (l->has_record) {
        ck_assert_msg(l->attempts == 1, "%s: %u attempts", l->path, l->attempts);
        ck_assert_uint_eq(l->rec_wire_bytes, l->wire_bytes);
        ck_assert_msg(l->remote_ip != NULL && strcmp(l->remote_ip, "127.0.0.1") == 0,
                      "%s: remote_ip %s", l->path, l->remote_ip);
        char want[38];
        sha1_base32(l->body.p != NULL ? l->body.p : "", l->body.len, want);
        ck_assert_msg(l->digest != NULL && strcmp(l->digest, want) == 0, "%s: digest %s, want %s",
                      l->path, l->digest, want);
    }
}

static void assert_outcome(const ctx *x, const char *path, sieve_crawl_outcome outcome,
                           const char *truncated)
{
    const tlog *l = transfer_of(x, path, SIEVE_FETCH_PAGE);
    ck_assert_msg(l != NULL, "no transfer of %s", path);
    ck_assert_msg(l->records == 1, "%s: %d records", path, l->records);
    ck_assert_msg(l->outcome == outcome, "%s: outcome %s, want %s (error %s)", path,
                  sieve_crawl_outcome_name(l->outcome), sieve_crawl_outcome_name(outcome),
                  l->error);
    ck_assert_msg((l->outcome == SIEVE_OUTCOME_OK || l->outcome == SIEVE_OUTCOME_HTTP_4XX ||
                   l->outcome == SIEVE_OUTCOME_HTTP_5XX) == (l->error == NULL),
                  "%s: outcome %s, error %s", path, sieve_crawl_outcome_name(l->outcome), l->error);
    ck_assert_msg(truncated == NULL ? l->truncated == NULL
                                    : l->truncated != NULL && strcmp(l->truncated, truncated) == 0,
                  "%s: truncated %s, want %s", path, l->truncated, truncated);
}

/* Every transfer: one life, in order, on one thread; what went over the
 * wire is what the server sent; decoding, outcomes and truncation as the
 * header promises. */
START_TEST(each_transfer_is_seen_as_it_went_over_the_wire)
{
    ctx x;
    ctx_init(&x);
    sieve_crawl_options o;
    options(&o);
    crawler(&x, &o, "/");
    ck_assert_int_eq(sieve_crawler_run(x.c), SIEVE_OK);

    /* ids: unique, from 1 */
    for (size_t i = 0; i < x.n; i++) {
        ck_assert_uint_ge(x.t[i]->id, 1);
        ck_assert_uint_le(x.t[i]->id, x.n);
        for (size_t j = 0; j < i; j++)
            ck_assert_uint_ne(x.t[i]->id, x.t[j]->id);
        assert_one_life(x.t[i]);
    }

    /* robots.txt: two hops, each a transfer of its own, without a record */
    const tlog *r1 = transfer_of(&x, "/robots.txt", SIEVE_FETCH_ROBOTS);
    const tlog *r2 = transfer_of(&x, "/robots-2.txt", SIEVE_FETCH_ROBOTS);
    ck_assert_ptr_nonnull(r1);
    ck_assert_ptr_nonnull(r2);
    ck_assert(!r1->has_record && !r2->has_record);
    ck_assert_uint_lt(r1->id, r2->id);
    assert_request(r1);
    assert_request(r2);
    assert_response_as_sent(r1, find_served("/robots.txt"), true);
    assert_response_as_sent(r2, find_served("/robots-2.txt"), true);
    /* and its rules hold: /private/x is refused without a transfer */
    ck_assert_uint_eq(x.n_refused, 1);
    ck_assert_str_eq(x.refused[0], "/private/x");
    ck_assert_int_eq(x.refused_outcome[0], SIEVE_OUTCOME_ROBOTS);
    ck_assert_uint_eq(x.refused_attempts[0], 0);
    ck_assert(!was_requested("/private"));

    /* bodies that came whole, as sent and decoded */
    const char *whole[] = {"/",        "/plain", "/gz",       "/deflate",    "/rawdeflate",
                           "/missing", "/fail",  "/redirect", "/leaf/plain", "/trailer"};
    for (size_t i = 0; i < sizeof whole / sizeof *whole; i++) {
        const tlog *l = transfer_of(&x, whole[i], SIEVE_FETCH_PAGE);
        const served *s = find_served(whole[i]);
        ck_assert_msg(l != NULL, "no transfer of %s", whole[i]);
        assert_request(l);
        assert_response_as_sent(l, s, true);
        ck_assert_msg(l->truncated == NULL, "%s: truncated %s", l->path, l->truncated);
        if (s->status == 200) {
            ck_assert_msg(l->decoded.len == s->plain_len &&
                              memcmp(l->decoded.p, s->plain, s->plain_len) == 0,
                          "%s: on_body got %zu bytes, the page has %zu", l->path, l->decoded.len,
                          s->plain_len);
            ck_assert_uint_eq(l->bytes, s->plain_len);
        }
    }
    assert_outcome(&x, "/", SIEVE_OUTCOME_OK, NULL);
    assert_outcome(&x, "/gz", SIEVE_OUTCOME_OK, NULL);
    assert_outcome(&x, "/deflate", SIEVE_OUTCOME_OK, NULL);
    assert_outcome(&x, "/rawdeflate", SIEVE_OUTCOME_OK, NULL);
    assert_outcome(&x, "/missing", SIEVE_OUTCOME_HTTP_4XX, NULL);
    assert_outcome(&x, "/fail", SIEVE_OUTCOME_HTTP_5XX, NULL);
    assert_outcome(&x, "/redirect", SIEVE_OUTCOME_OK, NULL);
    ck_assert_str_eq(transfer_of(&x, "/redirect", SIEVE_FETCH_PAGE)->final_url, "/plain");
    /* links of decoded pages are followed */
    ck_assert(was_requested("/leaf/plain"));
    ck_assert(was_requested("/leaf/gz"));
    ck_assert(was_requested("/leaf/deflate"));
    ck_assert(was_requested("/leaf/raw"));

    /* a gzip stream cut inside a tag: truncated, though the HTTP body
     * ended cleanly; the link before the cut stands, the cut one is never
     * used */
    const tlog *cut = transfer_of(&x, "/gz-cut", SIEVE_FETCH_PAGE);
    ck_assert_ptr_nonnull(cut);
    assert_response_as_sent(cut, find_served("/gz-cut"), true);
    assert_outcome(&x, "/gz-cut", SIEVE_OUTCOME_TRUNCATED, "disconnect");
    ck_assert(was_requested("/leaf/cut-a"));
    ck_assert(!was_requested("/leaf/cut-b"));

    /* corrupt gzip, a coding not asked for: not decoded, not read on */
    assert_outcome(&x, "/gz-bad", SIEVE_OUTCOME_ENCODING, "unspecified");
    assert_outcome(&x, "/br", SIEVE_OUTCOME_ENCODING, "unspecified");
    ck_assert_uint_eq(transfer_of(&x, "/br", SIEVE_FETCH_PAGE)->decoded.len, 0);
    ck_assert_uint_eq(transfer_of(&x, "/br", SIEVE_FETCH_PAGE)->body.len, 0);

    /* a compression bomb stops at the byte limit, counted decoded */
    const tlog *big = transfer_of(&x, "/big", SIEVE_FETCH_PAGE);
    assert_outcome(&x, "/big", SIEVE_OUTCOME_TOO_LARGE, "length");
    ck_assert_uint_le(big->bytes, MAX_PAGE);
    ck_assert_uint_le(big->decoded.len, MAX_PAGE);
    ck_assert_uint_lt(big->wire_bytes, find_served("/big")->len + 1);

    /* a body shorter than its Content-Length */
    const tlog *sh = transfer_of(&x, "/short", SIEVE_FETCH_PAGE);
    assert_outcome(&x, "/short", SIEVE_OUTCOME_TRUNCATED, "disconnect");
    ck_assert_uint_eq(sh->wire_bytes, SHORT_SENT);

    /* a chunked body's trailer is no part of the head */
    const tlog *tr = transfer_of(&x, "/trailer", SIEVE_FETCH_PAGE);
    ck_assert_ptr_null(strstr(tr->head.p, "X-Checksum"));
    ck_assert_ptr_nonnull(strstr(tr->head.p, "\r\nTransfer-Encoding: chunked\r\n"));
    assert_outcome(&x, "/trailer", SIEVE_OUTCOME_OK, NULL);

    /* nothing else was fetched, and every page once */
    size_t pages = 0;
    for (size_t i = 0; i < x.n; i++)
        pages += x.t[i]->kind == SIEVE_FETCH_PAGE;
    ck_assert_uint_eq(pages, 19);
    ck_assert_uint_eq(x.n, pages + 2);
    ctx_free(&x);
}
END_TEST

/* A wire callback that refuses stops its transfer only: the record says
 * so, and the crawl goes on. */
START_TEST(a_refusing_wire_callback_stops_one_transfer)
{
    ctx x;
    ctx_init(&x);
    x.refuse_head = "/plain";
    sieve_crawl_options o;
    options(&o);
    crawler(&x, &o, "/");
    ck_assert_int_eq(sieve_crawler_run(x.c), SIEVE_OK);
    assert_outcome(&x, "/plain", SIEVE_OUTCOME_STOPPED, "unspecified");
    const tlog *l = transfer_of(&x, "/plain", SIEVE_FETCH_PAGE);
    ck_assert(l->error != NULL && strstr(l->error, "wire callback") != NULL);
    ck_assert(!was_requested("/leaf/plain"));
    assert_outcome(&x, "/gz", SIEVE_OUTCOME_OK, NULL);
    for (size_t i = 0; i < x.n; i++)
        assert_one_life(x.t[i]);
    ctx_free(&x);
}
END_TEST

static void *stop_when_stalled(void *arg)
{
    ctx *x = arg;
    while (!atomic_load(&x->stall_started))
        usleep(10000);
    sieve_crawler_stop(x->c);
    return NULL;
}

/* A transfer cut by stop() after the grace still gets its end, marked
 * aborted, and no record. */
START_TEST(an_aborted_transfer_ends_without_a_record)
{
    ctx x;
    ctx_init(&x);
    sieve_crawl_options o;
    options(&o);
    o.ignore_robots = true;
    crawler(&x, &o, "/stall");
    pthread_t th;
    pthread_create(&th, NULL, stop_when_stalled, &x);
    ck_assert_int_eq(sieve_crawler_run(x.c), SIEVE_ECLOSED);
    pthread_join(th, NULL);
    ck_assert_uint_eq(x.n, 1);
    const tlog *l = x.t[0];
    ck_assert_str_eq(l->path, "/stall");
    ck_assert_int_eq(l->ends, 1);
    ck_assert(l->aborted);
    ck_assert(!l->has_record);
    ck_assert_int_eq(l->records, 0);
    ck_assert_uint_gt(l->body.len, 0);
    ck_assert_uint_eq(l->wire_bytes, l->body.len);
    ctx_free(&x);
}
END_TEST

/* payload_digest off: the records carry none, the rest is the same. */
START_TEST(records_without_digests_when_not_asked)
{
    ctx x;
    ctx_init(&x);
    sieve_crawl_options o;
    options(&o);
    o.payload_digest = false;
    crawler(&x, &o, "/");
    ck_assert_int_eq(sieve_crawler_run(x.c), SIEVE_OK);
    size_t records = 0;
    for (size_t i = 0; i < x.n; i++) {
        const tlog *l = x.t[i];
        if (l->records == 0)
            continue;
        records++;
        ck_assert_msg(l->digest == NULL, "%s: digest %s", l->path, l->digest);
        ck_assert_uint_eq(l->rec_wire_bytes, l->body.len);
    }
    ck_assert_uint_eq(records, 19);
    ctx_free(&x);
}
END_TEST

/* The outcome names are the documented words. */
START_TEST(outcome_names)
{
    ck_assert_str_eq(sieve_crawl_outcome_name(SIEVE_OUTCOME_OK), "ok");
    ck_assert_str_eq(sieve_crawl_outcome_name(SIEVE_OUTCOME_HTTP_4XX), "http_4xx");
    ck_assert_str_eq(sieve_crawl_outcome_name(SIEVE_OUTCOME_TOO_LARGE), "too_large");
    ck_assert_str_eq(sieve_crawl_outcome_name(SIEVE_OUTCOME_ERROR), "error");
    ck_assert_str_eq(sieve_crawl_outcome_name((sieve_crawl_outcome)999), "error");
    for (int i = SIEVE_OUTCOME_OK; i <= SIEVE_OUTCOME_ERROR; i++) {
        const char *n = sieve_crawl_outcome_name((sieve_crawl_outcome)i);
        ck_assert(n[0] != '\0');
        for (int j = SIEVE_OUTCOME_OK; j < i; j++)
            ck_assert_str_ne(n, sieve_crawl_outcome_name((sieve_crawl_outcome)j));
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("wire");
    TCase *tc = tcase_create("wire");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, each_transfer_is_seen_as_it_went_over_the_wire);
    tcase_add_test(tc, a_refusing_wire_callback_stops_one_transfer);
    tcase_add_test(tc, an_aborted_transfer_ends_without_a_record);
    tcase_add_test(tc, records_without_digests_when_not_asked);
    tcase_add_test(tc, outcome_names);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
