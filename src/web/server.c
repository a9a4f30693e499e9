/* server.c - libmicrohttpd glue: request -> route -> response.
 *
 * The server runs one thread per connection (MHD's internal mode). That
 * lets the slow page simply sleep between bytes and the endless page write
 * as fast as the client reads, without suspend/resume bookkeeping, while a
 * keep-alive connection still serves thousands of requests per second.
 * Everything the handler reads is the immutable configuration, so there is
 * no locking; the only shared mutable words are the stop flag (read by the
 * long-running bodies so shutdown is prompt) and two request counters.
 * Blocking in a connection's own thread is also how --delay-ms and the
 * hanging robots.txt work: the handler sleeps in 50 ms slices and gives
 * up when the server stops, so shutdown stays prompt however many
 * requests are held.
 *
 * Each request carries a small context from the moment its request line
 * is parsed (MHD's URI log callback) to the moment its response ends
 * (MHD's completed callback): the arrival time and the target, which the
 * access log writes with the end time and the status (log.c).
 *
 * Absolute links and Location headers use the Host header the client sent
 * (when it is a plausible authority), so the same web works on any port
 * and through any loopback name. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "web.h"

struct web_server {
    struct web_config cfg;
    struct MHD_Daemon *daemon;
    unsigned port;
    char default_host[32];
    int log_fd; /* the access log, or -1 */
    atomic_int stopping;
    atomic_ullong requests;
    atomic_ullong robots_requests;
};

/* One request, from its request line to the end of its response. */
struct web_request {
    uint64_t start_us;
    unsigned status;  /* status queued, 0 while none is */
    int headers_seen; /* the handler has had its first call */
    char target[];    /* the request target as sent */
};

static const char html_type[] = "text/html; charset=utf-8";
static const char text_type[] = "text/plain; charset=utf-8";

/* The Host header if it is a plausible authority, else our own. */
static const char *client_host(struct web_server *s, struct MHD_Connection *c)
{
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
    if (!h || !*h || strlen(h) > 255)
        return s->default_host;
    for (const char *p = h; *p; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]", *p))
            return s->default_host;
    return h;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, struct MHD_Response *resp,
                             const char *type)
{
    if (!resp)
        return MHD_NO;
    if (type)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    enum MHD_Result rc = MHD_queue_response(c, status, resp);
    MHD_destroy_response(resp);
    return rc;
}

static enum MHD_Result send_copy(struct MHD_Connection *c, unsigned status, const char *body,
                                 size_t len, const char *type)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(len, (void *)(uintptr_t)body, MHD_RESPMEM_MUST_COPY);
    return reply(c, status, resp, type);
}

static enum MHD_Result send_buf(struct MHD_Connection *c, unsigned status, struct web_buf *b,
                                const char *type, const char *encoding);

/* A rendered body, gzipped first under --gzip when the client accepts it. */
static enum MHD_Result send_rendered(struct web_server *s, struct MHD_Connection *c,
                                     unsigned status, struct web_buf *b, const char *type)
{
    const char *ae =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING);
    if (!s->cfg.gzip || b->oom || !web_accepts_gzip(ae))
        return send_buf(c, status, b, type, NULL);
    struct web_buf packed;
    web_buf_init(&packed);
    int rc = web_gzip(b->data ? b->data : "", b->len, &packed);
    web_buf_free(b);
    if (rc != 0) {
        web_buf_free(&packed);
        return MHD_NO;
    }
    return send_buf(c, status, &packed, type, "gzip");
}

/* Hands a rendered buffer to MHD, which frees it. */
static enum MHD_Result send_buf(struct MHD_Connection *c, unsigned status, struct web_buf *b,
                                const char *type, const char *encoding)
{
    if (b->oom) {
        web_buf_free(b);
        return MHD_NO;
    }
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(b->len, b->data ? b->data : "", MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        web_buf_free(b);
        return MHD_NO;
    }
    if (encoding)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_ENCODING, encoding);
    return reply(c, status, resp, type);
}

static const char not_found[] = "<!DOCTYPE html>\n<html><head><title>404</title></head>"
                                "<body><h1>Not found</h1></body></html>\n";

static ssize_t read_huge(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct web_server *s = cls;
    if (atomic_load(&s->stopping))
        return MHD_CONTENT_READER_END_WITH_ERROR;
    size_t n = web_huge_fill(pos, buf, max);
    return n ? (ssize_t)n : MHD_CONTENT_READER_END_OF_STREAM;
}

static ssize_t read_endless(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct web_server *s = cls;
    if (atomic_load(&s->stopping))
        return MHD_CONTENT_READER_END_WITH_ERROR;
    return (ssize_t)web_endless_fill(pos, buf, max);
}

/* Sleeps ms milliseconds in slices, waking early when the server stops. */
static int nap(struct web_server *s, unsigned ms)
{
    while (ms > 0 && !atomic_load(&s->stopping)) {
        unsigned slice = ms < 50 ? ms : 50;
        struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)slice * 1000000L};
        nanosleep(&ts, NULL);
        ms -= slice;
    }
    return atomic_load(&s->stopping) ? -1 : 0;
}

/* Holds a request that gets no answer: returns once the client has hung
 * up or the server is stopping. Watching for the hang-up frees the thread
 * as soon as a client gives up, instead of at shutdown. */
static void hold(struct web_server *s, struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    int fd = ci ? ci->connect_fd : -1;
    while (!atomic_load(&s->stopping)) {
        if (fd < 0) {
            nap(s, 50);
            continue;
        }
        /* Only hang-up events: POLLIN would spin on a pipelined request. */
        struct pollfd p = {.fd = fd, .events = POLLRDHUP};
        int n = poll(&p, 1, 50);
        if (n > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)))
            return;
        if (n < 0 && errno != EINTR)
            return;
    }
}

static ssize_t read_slow(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct web_server *s = cls;
    size_t len = strlen(web_slow_body);
    if (pos >= len)
        return MHD_CONTENT_READER_END_OF_STREAM;
    if (max == 0 || (pos > 0 && nap(s, s->cfg.drip_ms) != 0))
        return MHD_CONTENT_READER_END_WITH_ERROR;
    buf[0] = web_slow_body[pos];
    return 1;
}

static enum MHD_Result send_stream(struct web_server *s, struct MHD_Connection *c, uint64_t size,
                                   MHD_ContentReaderCallback reader)
{
    /* A block size of 1 for the drip, so MHD sends each byte as it comes. */
    size_t block = reader == read_slow ? 1 : 64 * 1024;
    struct MHD_Response *resp = MHD_create_response_from_callback(size, block, reader, s, NULL);
    return reply(c, MHD_HTTP_OK, resp, html_type);
}

static enum MHD_Result send_redirect(struct MHD_Connection *c, const struct web_route *r,
                                     const char *host)
{
    char location[128];
    if (r->location_abs)
        snprintf(location, sizeof location, "http://%s%s", host, r->target);
    else
        snprintf(location, sizeof location, "%s", r->location ? r->location : r->target);
    static const char body[] = "<!DOCTYPE html>\n<html><body>Moved.</body></html>\n";
    struct MHD_Response *resp = MHD_create_response_from_buffer(
        sizeof body - 1, (void *)(uintptr_t)body, MHD_RESPMEM_PERSISTENT);
    if (resp)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_LOCATION, location);
    return reply(c, (unsigned)r->status, resp, html_type);
}

static enum MHD_Result send_gzip_page(struct web_server *s, struct MHD_Connection *c,
                                      const struct web_route *r, const char *host)
{
    struct web_buf page, packed;
    web_buf_init(&page);
    web_buf_init(&packed);
    if (web_render(&s->cfg, r, host, &page) != 0) {
        web_buf_free(&page);
        return MHD_NO;
    }
    const char *ae =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING);
    if (!web_accepts_gzip(ae))
        return send_buf(c, MHD_HTTP_OK, &page, html_type, NULL);
    int rc = web_gzip(page.data, page.len, &packed);
    web_buf_free(&page);
    if (rc != 0) {
        web_buf_free(&packed);
        return MHD_NO;
    }
    return send_buf(c, MHD_HTTP_OK, &packed, html_type, "gzip");
}

static enum MHD_Result send_robots(struct web_server *s, struct MHD_Connection *c, const char *host)
{
    static const char missing[] = "No robots.txt here.\n";
    static const char failed[] = "robots.txt failed.\n";
    struct web_route moved = {.kind = WEB_REDIRECT, .location_abs = 1, .status = 301};
    switch (s->cfg.robots) {
    case WEB_ROBOTS_FILE:
        return reply(c, MHD_HTTP_OK,
                     MHD_create_response_from_buffer(s->cfg.robots_len,
                                                     (void *)(uintptr_t)s->cfg.robots_body,
                                                     MHD_RESPMEM_PERSISTENT),
                     text_type);
    case WEB_ROBOTS_404:
        return send_copy(c, MHD_HTTP_NOT_FOUND, missing, sizeof missing - 1, text_type);
    case WEB_ROBOTS_500:
        return send_copy(c, MHD_HTTP_INTERNAL_SERVER_ERROR, failed, sizeof failed - 1, text_type);
    case WEB_ROBOTS_HANG:
        /* MHD_NO closes the connection without a byte sent. */
        hold(s, c);
        return MHD_NO;
    case WEB_ROBOTS_REDIRECT:
        snprintf(moved.target, sizeof moved.target, "/robots-moved.txt");
        return send_redirect(c, &moved, host);
    case WEB_ROBOTS_ALLOW:
        break;
    }
    struct web_buf b;
    web_buf_init(&b);
    web_robots_render_allow(&s->cfg, host, &b);
    return send_rendered(s, c, MHD_HTTP_OK, &b, text_type);
}

/* The sitemaps carry no Content-Encoding, the gzip one included: it is a
 * compressed file, which the crawler inflates itself. */
static enum MHD_Result send_sitemap(struct web_server *s, struct MHD_Connection *c,
                                    const struct web_route *r, const char *host)
{
    struct web_buf b;
    const char *type = NULL;
    web_buf_init(&b);
    if (web_sitemap_render(&s->cfg, r, host, &b, &type) != 0) {
        web_buf_free(&b);
        return MHD_NO;
    }
    return send_buf(c, MHD_HTTP_OK, &b, type, NULL);
}

static enum MHD_Result respond(struct web_server *s, struct MHD_Connection *c,
                               const struct web_route *r, const char *host)
{
    struct web_buf b;
    web_buf_init(&b);
    /* The latency a distant host would add, before any byte is sent. */
    if (s->cfg.delay_ms > 0 && web_kind_parsed(r->kind) && nap(s, s->cfg.delay_ms) != 0)
        return MHD_NO;
    switch (r->kind) {
    case WEB_NOT_FOUND:
        return send_copy(c, MHD_HTTP_NOT_FOUND, not_found, sizeof not_found - 1, html_type);
    case WEB_ERROR:
        return send_copy(c, MHD_HTTP_INTERNAL_SERVER_ERROR, not_found, sizeof not_found - 1,
                         html_type);
    case WEB_ROBOTS:
        return send_robots(s, c, host);
    case WEB_ROBOTS_MOVED:
        return send_copy(c, MHD_HTTP_OK, web_robots_allow, strlen(web_robots_allow), text_type);
    case WEB_REDIRECT:
        return send_redirect(c, r, host);
    case WEB_FILE_TXT:
        web_render_text_file(&s->cfg, r->id, &b);
        return send_rendered(s, c, MHD_HTTP_OK, &b, text_type);
    case WEB_FILE_PNG:
        return reply(c, MHD_HTTP_OK,
                     MHD_create_response_from_buffer(web_png_len, (void *)(uintptr_t)web_png,
                                                     MHD_RESPMEM_PERSISTENT),
                     "image/png");
    case WEB_ENDLESS:
        return send_stream(s, c, MHD_SIZE_UNKNOWN, read_endless);
    case WEB_HUGE:
        return send_stream(s, c, WEB_HUGE_SIZE, read_huge);
    case WEB_SLOW:
        return send_stream(s, c, strlen(web_slow_body), read_slow);
    case WEB_GZIP:
        return send_gzip_page(s, c, r, host);
    case WEB_SITEMAP_INDEX:
    case WEB_SITEMAP_XML:
    case WEB_SITEMAP_GZ:
    case WEB_SITEMAP_TEXT:
        return send_sitemap(s, c, r, host);
    case WEB_TEXT_HTML:
        if (web_render(&s->cfg, r, host, &b) != 0)
            break;
        return send_rendered(s, c, MHD_HTTP_OK, &b, text_type);
    default:
        if (web_render(&s->cfg, r, host, &b) != 0)
            break;
        return send_rendered(s, c, MHD_HTTP_OK, &b, html_type);
    }
    web_buf_free(&b);
    return MHD_NO;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload_data,
                              size_t *upload_data_size, void **req_cls)
{
    struct web_server *s = cls;
    struct web_request *q = *req_cls;
    (void)version;
    (void)upload_data;
    if (!q)
        return MHD_NO; /* its context could not be allocated */
    /* Answer on the second call, once MHD has the whole request: a
     * response queued on the first call makes MHD close the connection,
     * which would cost keep-alive. */
    if (!q->headers_seen) {
        q->headers_seen = 1;
        return MHD_YES;
    }
    if (*upload_data_size != 0) {
        *upload_data_size = 0; /* bodies are ignored */
        return MHD_YES;
    }
    atomic_fetch_add(&s->requests, 1);
    enum MHD_Result rc;
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) {
        static const char body[] = "GET and HEAD only.\n";
        struct MHD_Response *resp = MHD_create_response_from_buffer(
            sizeof body - 1, (void *)(uintptr_t)body, MHD_RESPMEM_PERSISTENT);
        if (resp)
            MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
        rc = reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, resp, text_type);
    } else {
        struct web_route r;
        web_route(&s->cfg, url, &r);
        if (r.kind == WEB_ROBOTS)
            atomic_fetch_add(&s->robots_requests, 1);
        rc = respond(s, c, &r, client_host(s, c));
    }
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_HTTP_STATUS);
    if (rc == MHD_YES && ci)
        q->status = ci->http_status;
    return rc;
}

/* MHD's URI log callback: the request line is in, so the request starts
 * here. The context it returns becomes the handler's *req_cls. */
static void *request_begin(void *cls, const char *uri, struct MHD_Connection *c)
{
    (void)cls;
    (void)c;
    size_t len = strlen(uri);
    struct web_request *q = malloc(sizeof *q + len + 1);
    if (!q)
        return NULL;
    q->start_us = web_now_us();
    q->status = 0;
    q->headers_seen = 0;
    memcpy(q->target, uri, len + 1);
    return q;
}

/* MHD's completed callback: the response has ended, sent whole or not. */
static void request_end(void *cls, struct MHD_Connection *c, void **req_cls,
                        enum MHD_RequestTerminationCode toe)
{
    struct web_server *s = cls;
    struct web_request *q = *req_cls;
    (void)toe;
    if (!q)
        return;
    /* Errors MHD answers itself (a 400 for a bad request) never reach the
     * handler; their status is MHD's. */
    if (q->status == 0) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_HTTP_STATUS);
        if (ci)
            q->status = ci->http_status;
    }
    /* A failed write cannot be reported to anyone mid-request; a test
     * reading the log sees the missing line. */
    if (s->log_fd >= 0)
        (void)web_log_request(s->log_fd, q->start_us, web_now_us(), q->status, q->target);
    free(q);
    *req_cls = NULL;
}

/* Accepts 127.0.0.0/8 and "localhost" only: this server is for tests. */
static int parse_loopback(const char *addr, struct in_addr *out)
{
    if (strcmp(addr, "localhost") == 0)
        addr = "127.0.0.1";
    if (inet_pton(AF_INET, addr, out) != 1)
        return -1;
    return (ntohl(out->s_addr) >> 24) == 127 ? 0 : -1;
}

int web_server_start(const struct web_config *cfg, const char *addr, struct web_server **out,
                     char *err, size_t errlen)
{
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)cfg->port);
    if (cfg->port > 65535 || parse_loopback(addr, &sa.sin_addr) != 0) {
        snprintf(err, errlen, "'%s' is not a loopback IPv4 address (127.0.0.0/8)", addr);
        return -1;
    }
    struct web_server *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    s->cfg = *cfg;
    s->log_fd = -1;
    atomic_init(&s->stopping, 0);
    atomic_init(&s->requests, 0);
    atomic_init(&s->robots_requests, 0);
    if (cfg->access_log) {
        s->log_fd = open(cfg->access_log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (s->log_fd < 0) {
            snprintf(err, errlen, "cannot open the access log '%s': %s", cfg->access_log,
                     strerror(errno));
            free(s);
            return -1;
        }
    }
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
                     MHD_USE_AUTO | MHD_USE_ERROR_LOG;
    s->daemon = MHD_start_daemon(flags, (uint16_t)cfg->port, NULL, NULL, handle, s,
                                 MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                                 MHD_OPTION_CONNECTION_LIMIT, 1000u, MHD_OPTION_CONNECTION_TIMEOUT,
                                 60u, MHD_OPTION_URI_LOG_CALLBACK, request_begin, s,
                                 MHD_OPTION_NOTIFY_COMPLETED, request_end, s, MHD_OPTION_END);
    if (!s->daemon) {
        snprintf(err, errlen, "cannot listen on %s:%u (in use?)", addr, cfg->port);
        if (s->log_fd >= 0)
            close(s->log_fd);
        free(s);
        return -1;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info && info->port ? info->port : cfg->port;
    char ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof ip);
    snprintf(s->default_host, sizeof s->default_host, "%s:%u", ip, s->port);
    *out = s;
    return 0;
}

unsigned web_server_port(const struct web_server *s)
{
    return s->port;
}

unsigned long long web_server_requests(const struct web_server *s)
{
    return atomic_load(&s->requests);
}

unsigned long long web_server_robots_requests(const struct web_server *s)
{
    return atomic_load(&s->robots_requests);
}

void web_server_stop(struct web_server *s)
{
    if (!s)
        return;
    atomic_store(&s->stopping, 1);
    /* Ends every request, logging each, before the log closes. */
    MHD_stop_daemon(s->daemon);
    if (s->log_fd >= 0)
        close(s->log_fd);
    free(s);
}
