/* fuzz-response.c - libFuzzer target: whole HTTP responses through the
 * crawl engine, from the socket to the record.
 *
 * A server thread on 127.0.0.1 answers every connection with the input's
 * bytes, written in chunks whose size comes from the input's first byte,
 * and the engine crawls it: libcurl reads the status line, the headers
 * and the body as it would from any server, and the engine's header
 * checks, content decoding, charset, link extraction, redirects and
 * record all run on what arrives. The first byte also picks a frame: the
 * input as the whole response, or after a 200 status line with an HTML
 * content type (plain, chunked, or with a charset parameter the input
 * finishes), so that the fuzzer reaches the body without first finding
 * a valid status line.
 *
 * Every record and body chunk the engine hands over is read through, so
 * that a field pointing at freed or foreign memory shows under
 * AddressSanitizer. No network is used beyond loopback. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sieve/crawl.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int listener = -1;
static unsigned port;

static const char *const frames[] = {
    "",
    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n",
    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n",
    "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=",
};

typedef struct serve {
    const char *frame;
    const uint8_t *body;
    size_t body_len, chunk;
    atomic_bool done;
} serve;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    signal(SIGPIPE, SIG_IGN);
    listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (listener < 0 || bind(listener, (struct sockaddr *)&a, sizeof a) != 0 ||
        listen(listener, 16) != 0 || getsockname(listener, (struct sockaddr *)&a, &len) != 0) {
        perror("fuzz-response: a listening socket on 127.0.0.1");
        abort();
    }
    port = ntohs(a.sin_port);
    return 0;
}

/* Reads the request up to its blank line (or what comes in 200 ms). */
static void read_request(int fd)
{
    char buf[4096];
    size_t have = 0;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    while (have < sizeof buf - 1 && poll(&p, 1, 200) > 0) {
        ssize_t n = read(fd, buf + have, sizeof buf - 1 - have);
        if (n <= 0)
            return;
        have += (size_t)n;
        buf[have] = '\0';
        if (strstr(buf, "\r\n\r\n") != NULL)
            return;
    }
}

static void write_all(int fd, const void *data, size_t len, size_t chunk)
{
    const char *p = data;
    while (len > 0) {
        size_t n = len < chunk ? len : chunk;
        ssize_t w = write(fd, p, n);
        if (w <= 0)
            return;
        p += w;
        len -= (size_t)w;
    }
}

/* Answers every connection with the frame and the body until done. */
static void *server(void *arg)
{
    serve *s = arg;
    while (!atomic_load(&s->done)) {
        struct pollfd p = {.fd = listener, .events = POLLIN};
        if (poll(&p, 1, 2) <= 0)
            continue;
        int fd = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        read_request(fd);
        write_all(fd, s->frame, strlen(s->frame), s->chunk);
        write_all(fd, s->body, s->body_len, s->chunk);
        shutdown(fd, SHUT_WR);
        close(fd);
    }
    return NULL;
}

static volatile size_t sink; /* what reading the records adds up to */

static size_t len_of(const char *s)
{
    return s != NULL ? strlen(s) : 0;
}

static int on_record(void *ud, const sieve_crawl_record *r)
{
    (void)ud;
    sink += len_of(r->url) + len_of(r->final_url) + len_of(r->content_type) + len_of(r->error) +
            len_of(r->remote_ip) + len_of(r->payload_digest) + len_of(r->referrer) +
            len_of(r->first_url) + len_of(sieve_crawl_outcome_name(r->outcome)) +
            (size_t)r->status + r->bytes;
    return SIEVE_OK;
}

static int on_body(void *ud, const sieve_crawl_body *b)
{
    (void)ud;
    size_t sum = len_of(b->content_type);
    for (size_t i = 0; i < b->len; i++)
        sum += (unsigned char)b->data[i];
    sink += sum;
    return SIEVE_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 1 << 16)
        return 0;
    serve s = {
        .frame = frames[data[0] % 4],
        .body = data + 1,
        .body_len = size - 1,
        .chunk = (size_t)(data[0] >> 2) * (data[0] >> 2) + 1,
    };
    pthread_t th;
    if (pthread_create(&th, NULL, server, &s) != 0)
        abort();

    sieve_crawl_options o;
    sieve_crawl_options_init(&o);
    o.workers = 1;
    o.concurrency = 2;
    o.host_connections = 0;
    o.delay_s = 0;
    o.ignore_robots = true;
    o.sitemaps = false;
    o.max_pages = 3; /* the seed and a redirect or two, to the same server */
    o.connect_timeout_s = 1;
    o.timeout_s = 2;
    o.stop_grace_s = 0.1;
    o.retries = 1; /* a 5xx or a cut body is tried again: once, and soon */
    o.retry_wait_s = 0.001;
    o.retry_max_wait_s = 0.001;
    o.queue_memory = 0; /* no spill directory per input */
    sieve_crawler *c;
    if (sieve_crawler_new(&c, &o) != SIEVE_OK)
        abort();
    sieve_crawl_callbacks cb = {.on_record = on_record, .on_body = on_body};
    sieve_crawler_set_callbacks(c, &cb, NULL);
    char url[64];
    int n = snprintf(url, sizeof url, "http://127.0.0.1:%u/", port);
    if (sieve_crawler_add_seed(c, url, (size_t)n) != SIEVE_OK)
        abort();
    int rc = sieve_crawler_run(c);
    if (rc != SIEVE_OK && rc != SIEVE_ECLOSED)
        abort(); /* a response is no reason for the crawl itself to fail */
    sieve_crawler_free(c);
    atomic_store(&s.done, true);
    pthread_join(th, NULL);
    return 0;
}
