/* test-framing.c - responses whose HTTP framing is broken: a head the
 * connection cuts, a status HTTP does not define, a protocol switch never
 * asked for, chunked framing that does not parse, a trailer too long. Each
 * must end in a record that names the failure, be tried again only if it
 * may pass, and never be taken for a page or a redirect.
 *
 * libcurl is lenient with all of these in its own way (a head cut short
 * ends the transfer without an error, a status of 999 is taken), and no
 * HTTP library serves them on purpose, so the server here is a plain
 * socket on 127.0.0.1 that writes each canned response byte for byte and
 * closes the connection. */
#include <check.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sieve/crawl.h"

enum { MAX_RECORDS = 64, MAX_ENDS = 128, MAX_PATHS = 256 };

#define CHUNKED "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n"
#define PAGE    "<html><body>a page</body></html>"

/* ---- the server: a canned response a path ---- */

typedef struct canned {
    const char *path;
    const char *response; /* NULL: built by the route's code below */
} canned;

static const canned routes[] = {
    {"/", NULL},
    /* the connection closes inside the head */
    {"/cut-head", "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"},
    {"/cut-redirect", "HTTP/1.1 301 Moved Permanently\r\nLocation: /never\r\n"},
    {"/s999", "HTTP/1.1 999 Weird\r\nContent-Length: 32\r\n\r\n" PAGE},
    {"/s101",
     "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
     "\x81\x05hello\x81\x05hello"},
    {"/s501", "HTTP/1.1 501 Not Implemented\r\nContent-Length: 32\r\n\r\n" PAGE},
    {"/s503", "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 32\r\n\r\n" PAGE},
    {"/bad-chunk", CHUNKED "zz\r\n" PAGE "\r\n0\r\n\r\n"},
    {"/huge-chunk", CHUNKED "ffffffffffffffffffff\r\n" PAGE "\r\n0\r\n\r\n"},
    {"/big-trailer", NULL},
    {"/fine", "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 32\r\n\r\n" PAGE},
    {"/fine-chunked", CHUNKED "20\r\n" PAGE "\r\n0\r\nX-Trail: small\r\n\r\n"},
    /* lengths and codings curl takes and HTTP does not */
    {"/length-huge", "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
                     "Content-Length: 99999999999999999999\r\n\r\n" PAGE},
    {"/length-twice", "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 5\r\n"
                      "Content-Length: 32\r\n\r\n" PAGE},
    {"/length-same", "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 32\r\n"
                     "Content-Length: 32\r\n\r\n" PAGE},
    {"/te-gzip", "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
                 "Transfer-Encoding: gzip, chunked\r\n\r\n20\r\n" PAGE "\r\n0\r\n\r\n"},
    /* redirects whose bodies fail: corrupt gzip, a coding we do not read,
     * cut short */
    {"/moved-gzip", "HTTP/1.1 301 Moved Permanently\r\nLocation: /target-1\r\n"
                    "Content-Encoding: gzip\r\nContent-Length: 10\r\n\r\nnot gzip!!"},
    {"/moved-br", "HTTP/1.1 302 Found\r\nLocation: /target-2\r\nContent-Encoding: br\r\n"
                  "Content-Length: 10\r\n\r\nnot brotli"},
    {"/moved-cut", "HTTP/1.1 301 Moved Permanently\r\nLocation: /target-3\r\n"
                   "Content-Length: 1000\r\n\r\nshort"},
    /* links the extractor refuses, one or two of each kind, and one it
     * takes */
    {"/links", "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 196\r\n\r\n"
               "<a href='javascript:void(0)'>1</a><a href='mailto:x@example.org'>2</a>"
               "<a href='http://[::1'>3</a><a rel='nofollow' href='/nofollowed'>4</a>"
               "<a href='/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/'>5</a>"},
};

static int listener;
static unsigned port;
static pthread_t server;
static atomic_bool stopping;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char requested[MAX_PATHS][64];
static int n_requested;

static void send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

/* Reads the request head and answers it; the connection then closes. */
static void answer(int fd)
{
    char req[4096];
    size_t got = 0;
    while (got < sizeof req - 1) {
        ssize_t r = recv(fd, req + got, sizeof req - 1 - got, 0);
        if (r <= 0)
            return;
        got += (size_t)r;
        req[got] = '\0';
        if (strstr(req, "\r\n\r\n") != NULL)
            break;
    }
    char path[64] = "";
    if (sscanf(req, "GET %63s ", path) != 1)
        return;
    pthread_mutex_lock(&log_lock);
    if (n_requested < MAX_PATHS)
        snprintf(requested[n_requested++], sizeof requested[0], "%s", path);
    pthread_mutex_unlock(&log_lock);
    for (size_t i = 0; i < sizeof routes / sizeof *routes; i++) {
        if (strcmp(path, routes[i].path) != 0)
            continue;
        if (routes[i].response != NULL) {
            send_all(fd, routes[i].response, strlen(routes[i].response));
        } else if (strcmp(path, "/") == 0) { /* a link to every other route */
            char body[2048] = "<html><body>", r[2200];
            for (size_t k = 1; k < sizeof routes / sizeof *routes; k++)
                snprintf(body + strlen(body), sizeof body - strlen(body), "<a href=\"%s\">%zu</a> ",
                         routes[k].path, k);
            strcat(body, "</body></html>");
            int n = snprintf(r, sizeof r,
                             "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
                             "Content-Length: %zu\r\n\r\n%s",
                             strlen(body), body);
            send_all(fd, r, (size_t)n);
        } else { /* /big-trailer: a whole body, then 8,000 bytes of trailer */
            static char r[9000];
            int n = snprintf(r, sizeof r, "%s20\r\n%s\r\n0\r\nX-Trail: %8000d\r\n\r\n", CHUNKED,
                             PAGE, 7);
            send_all(fd, r, (size_t)n);
        }
        return;
    }
    static const char missing[] = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
    send_all(fd, missing, sizeof missing - 1);
}

static void *serve(void *arg)
{
    (void)arg;
    while (!atomic_load(&stopping)) {
        int fd = accept(listener, NULL, NULL);
        if (fd < 0)
            continue;
        answer(fd);
        shutdown(fd, SHUT_WR);
        close(fd);
    }
    return NULL;
}

static int requests_for(const char *path)
{
    pthread_mutex_lock(&log_lock);
    int n = 0;
    for (int i = 0; i < n_requested; i++)
        n += strcmp(requested[i], path) == 0;
    pthread_mutex_unlock(&log_lock);
    return n;
}

static void setup(void)
{
    n_requested = 0;
    atomic_store(&stopping, false);
    listener = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(listener, 0);
    int one = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    ck_assert_int_eq(bind(listener, (struct sockaddr *)&sa, sizeof sa), 0);
    ck_assert_int_eq(listen(listener, 64), 0);
    socklen_t len = sizeof sa;
    getsockname(listener, (struct sockaddr *)&sa, &len);
    port = ntohs(sa.sin_port);
    ck_assert_int_eq(pthread_create(&server, NULL, serve, NULL), 0);
}

static void teardown(void)
{
    atomic_store(&stopping, true);
    /* a connection of our own wakes the accept() */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
                             .sin_port = htons((uint16_t)port)};
    connect(fd, (struct sockaddr *)&sa, sizeof sa);
    close(fd);
    pthread_join(server, NULL);
    close(listener);
}

/* ---- the crawl, as the callbacks saw it ---- */

typedef struct rec {
    char path[64];
    long status;
    sieve_crawl_outcome outcome;
    unsigned attempts;
    char error[128];
    char final_url[128];
} rec;

typedef struct seen_crawl {
    pthread_mutex_t mu;
    rec r[MAX_RECORDS];
    int nr;
    char truncated[MAX_ENDS][2][64]; /* each transfer: its path, its WARC-Truncated reason */
    int ne;
} seen_crawl;

static const char *path_of(const char *url)
{
    const char *p = strstr(url, "://");
    p = p != NULL ? strchr(p + 3, '/') : NULL;
    return p != NULL ? p : "";
}

static int on_record(void *ud, const sieve_crawl_record *r)
{
    seen_crawl *s = ud;
    pthread_mutex_lock(&s->mu);
    if (s->nr < MAX_RECORDS) {
        rec *x = &s->r[s->nr++];
        snprintf(x->path, sizeof x->path, "%s", path_of(r->url));
        x->status = r->status;
        x->outcome = r->outcome;
        x->attempts = r->attempts;
        snprintf(x->error, sizeof x->error, "%s", r->error != NULL ? r->error : "");
        snprintf(x->final_url, sizeof x->final_url, "%s", path_of(r->final_url));
    }
    pthread_mutex_unlock(&s->mu);
    return SIEVE_OK;
}

static void on_transfer_end(void *ud, sieve_crawl_transfer *t)
{
    seen_crawl *s = ud;
    pthread_mutex_lock(&s->mu);
    if (s->ne < MAX_ENDS) {
        snprintf(s->truncated[s->ne][0], sizeof s->truncated[0][0], "%s", path_of(t->url));
        snprintf(s->truncated[s->ne][1], sizeof s->truncated[0][1], "%s",
                 t->truncated != NULL ? t->truncated : "");
        s->ne++;
    }
    pthread_mutex_unlock(&s->mu);
}

static seen_crawl *crawl(sieve_crawl_stats *st)
{
    sieve_crawl_options o;
    sieve_crawl_options_init(&o);
    o.workers = 1;
    o.concurrency = 4;
    o.delay_s = 0;
    o.ignore_robots = true;
    o.proxy = "";
    o.timeout_s = 5;
    o.retries = 2;
    o.retry_wait_s = 0.01;
    o.retry_max_wait_s = 0.05;
    seen_crawl *s = calloc(1, sizeof *s);
    pthread_mutex_init(&s->mu, NULL);
    sieve_crawler *c;
    ck_assert_int_eq(sieve_crawler_new(&c, &o), SIEVE_OK);
    sieve_crawl_callbacks cb = {.on_record = on_record, .on_transfer_end = on_transfer_end};
    sieve_crawler_set_callbacks(c, &cb, s);
    char seed[64];
    snprintf(seed, sizeof seed, "http://127.0.0.1:%u/", port);
    ck_assert_int_eq(sieve_crawler_add_seed(c, seed, SIZE_MAX), SIEVE_OK);
    ck_assert_int_eq(sieve_crawler_run(c), SIEVE_OK);
    if (st != NULL)
        sieve_crawler_stats_get(c, st);
    sieve_crawler_free(c);
    pthread_mutex_destroy(&s->mu);
    return s;
}

static const rec *record_of(const seen_crawl *s, const char *path)
{
    const rec *found = NULL;
    for (int i = 0; i < s->nr; i++) {
        if (strcmp(s->r[i].path, path) == 0) {
            ck_assert_msg(found == NULL, "%s: two records", path);
            found = &s->r[i];
        }
    }
    ck_assert_msg(found != NULL, "%s: no record", path);
    return found;
}

/* The record of path: its outcome, its attempts, and an error naming the
 * failure (containing words, unless NULL: none). */
static void assert_record(const seen_crawl *s, const char *path, sieve_crawl_outcome outcome,
                          unsigned attempts, const char *words)
{
    const rec *r = record_of(s, path);
    ck_assert_msg(r->outcome == outcome && r->attempts == attempts,
                  "%s: outcome %s, %u attempts (%s); want %s, %u", path,
                  sieve_crawl_outcome_name(r->outcome), r->attempts, r->error,
                  sieve_crawl_outcome_name(outcome), attempts);
    ck_assert_int_eq(requests_for(path), (int)attempts);
    if (words == NULL)
        ck_assert_msg(r->error[0] == '\0', "%s: error '%s'", path, r->error);
    else
        ck_assert_msg(strstr(r->error, words) != NULL, "%s: error '%s', not about '%s'", path,
                      r->error, words);
}

/* Every transfer of path ended with WARC-Truncated reason why ("": none). */
static void assert_truncated(const seen_crawl *s, const char *path, const char *why)
{
    int n = 0;
    for (int i = 0; i < s->ne; i++) {
        if (strcmp(s->truncated[i][0], path) != 0)
            continue;
        n++;
        ck_assert_msg(strcmp(s->truncated[i][1], why) == 0, "%s: truncated '%s', want '%s'", path,
                      s->truncated[i][1], why);
    }
    ck_assert_msg(n > 0, "%s: no transfer", path);
}

/* A head the connection cut is no response: tried again (it may pass),
 * then recorded as a network failure, its body marked cut; a redirect cut
 * so is not followed. */
START_TEST(a_head_cut_short_is_no_response)
{
    seen_crawl *s = crawl(NULL);
    assert_record(s, "/cut-head", SIEVE_OUTCOME_NETWORK, 3, "inside the response head");
    assert_truncated(s, "/cut-head", "disconnect");
    assert_record(s, "/cut-redirect", SIEVE_OUTCOME_NETWORK, 3, "inside the response head");
    ck_assert_str_eq(record_of(s, "/cut-redirect")->final_url, "/cut-redirect");
    ck_assert_int_eq(requests_for("/never"), 0);
    /* whole responses around them are pages */
    assert_record(s, "/fine", SIEVE_OUTCOME_OK, 1, NULL);
    assert_truncated(s, "/fine", "");
    assert_record(s, "/fine-chunked", SIEVE_OUTCOME_OK, 1, NULL);
    free(s);
}
END_TEST

/* A status HTTP does not define, and a protocol switch the crawler never
 * asks for, are not valid answers: protocol, asked once. 501 cannot
 * pass either; 503 may. */
START_TEST(statuses_that_are_no_answer)
{
    seen_crawl *s = crawl(NULL);
    assert_record(s, "/s999", SIEVE_OUTCOME_PROTOCOL, 1, "past 599");
    ck_assert_int_eq(record_of(s, "/s999")->status, 999);
    assert_record(s, "/s101", SIEVE_OUTCOME_PROTOCOL, 1, "switch of protocols");
    assert_record(s, "/s501", SIEVE_OUTCOME_HTTP_5XX, 1, NULL);
    assert_record(s, "/s503", SIEVE_OUTCOME_HTTP_5XX, 3, NULL);
    free(s);
}
END_TEST

/* A redirect's body is no part of it: one that fails (corrupt, in a
 * coding not read, cut short) leaves the redirect standing, followed and
 * not tried again, its body marked cut in an archive. */
START_TEST(a_redirect_stands_whatever_its_body)
{
    seen_crawl *s = crawl(NULL);
    static const char *const moved[] = {"/moved-gzip", "/moved-br", "/moved-cut"};
    static const char *const target[] = {"/target-1", "/target-2", "/target-3"};
    for (int i = 0; i < 3; i++) {
        assert_record(s, moved[i], SIEVE_OUTCOME_OK, 1, NULL);
        ck_assert_str_eq(record_of(s, moved[i])->final_url, target[i]);
        ck_assert_int_eq(requests_for(target[i]), 1);
    }
    assert_truncated(s, "/moved-cut", "disconnect");
    free(s);
}
END_TEST

/* Links the extractor refuses are left out like those the scope refuses,
 * and counted so, each by its reason: none goes unsaid. */
START_TEST(refused_links_are_counted)
{
    sieve_crawl_stats st;
    seen_crawl *s = crawl(&st);
    assert_record(s, "/links", SIEVE_OUTCOME_OK, 1, NULL);
    ck_assert_uint_eq(st.not_http, 2);
    ck_assert_uint_eq(st.malformed, 1);
    ck_assert_uint_eq(st.nofollow, 1);
    ck_assert_uint_eq(st.trap, 1);
    ck_assert_int_eq(requests_for("/nofollowed"), 0);
    free(s);
}
END_TEST

/* A Content-Length past 2^63 - 1, or two that differ, is not valid
 * HTTP (two the same are); a transfer coding other than chunked is one
 * the engine does not read, not a body. */
START_TEST(lengths_and_codings_curl_takes)
{
    seen_crawl *s = crawl(NULL);
    assert_record(s, "/length-huge", SIEVE_OUTCOME_PROTOCOL, 1, "Content-Length");
    assert_record(s, "/length-twice", SIEVE_OUTCOME_PROTOCOL, 1, "Content-Length");
    assert_record(s, "/length-same", SIEVE_OUTCOME_OK, 1, NULL);
    assert_record(s, "/te-gzip", SIEVE_OUTCOME_ENCODING, 1, "transfer coding");
    free(s);
}
END_TEST

/* Broken chunked framing is not valid HTTP, and a trailer past curl's
 * limit is too large: neither is a network failure to try again. */
START_TEST(broken_chunks_are_protocol_failures)
{
    seen_crawl *s = crawl(NULL);
    assert_record(s, "/bad-chunk", SIEVE_OUTCOME_PROTOCOL, 1, "chunked");
    assert_record(s, "/huge-chunk", SIEVE_OUTCOME_PROTOCOL, 1, "chunked");
    assert_record(s, "/big-trailer", SIEVE_OUTCOME_TOO_LARGE, 1, "chunked trailer");
    free(s);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("framing");
    TCase *tc = tcase_create("framing");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, a_head_cut_short_is_no_response);
    tcase_add_test(tc, statuses_that_are_no_answer);
    tcase_add_test(tc, broken_chunks_are_protocol_failures);
    tcase_add_test(tc, refused_links_are_counted);
    tcase_add_test(tc, a_redirect_stands_whatever_its_body);
    tcase_add_test(tc, lengths_and_codings_curl_takes);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
