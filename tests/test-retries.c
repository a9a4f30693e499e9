/* test-retries.c - failures that may pass are tried again: no server,
 * timeouts, 429 and 5xx; the pause falls on the whole host, grows while
 * the host keeps failing, honours Retry-After up to its cap, and resets
 * when the host answers; every URL still ends in one record that counts
 * its attempts, and each attempt is a transfer of its own on the wire.
 *
 * Real HTTP servers (libmicrohttpd) run in this process on 127.0.0.1; each
 * request's server, path and time are logged, and the tests read that log
 * after a crawl with the engine. */
#include <check.h>
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "sieve/crawl.h"

enum { MAX_SEEN = 128, MAX_RECORDS = 32, MAX_ENDS = 64 };

typedef struct seen_request {
    char server; /* 'A', 'B' or 'C' */
    char path[64];
    double at; /* monotonic seconds */
} seen_request;

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static seen_request seen[MAX_SEEN];
static int nseen;
static struct MHD_Daemon *server_a, *server_b, *server_c;
static unsigned port_a, port_b, port_c;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Logs the request; returns how many requests for the same path of the
 * same server came before it. */
static int log_request(char server, const char *path)
{
    pthread_mutex_lock(&log_lock);
    int before = 0;
    for (int i = 0; i < nseen; i++)
        before += seen[i].server == server && strcmp(seen[i].path, path) == 0;
    if (nseen < MAX_SEEN) {
        seen[nseen].server = server;
        snprintf(seen[nseen].path, sizeof seen[nseen].path, "%s", path);
        seen[nseen].at = now_s();
        nseen++;
    }
    pthread_mutex_unlock(&log_lock);
    return before;
}

static int requests_for(char server, const char *path)
{
    pthread_mutex_lock(&log_lock);
    int n = 0;
    for (int i = 0; i < nseen; i++)
        n += seen[i].server == server && strcmp(seen[i].path, path) == 0;
    pthread_mutex_unlock(&log_lock);
    return n;
}

static enum MHD_Result answer(struct MHD_Connection *c, unsigned status, const char *body,
                              const char *retry_after)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(r, "Content-Type", "text/html");
    if (retry_after != NULL)
        MHD_add_response_header(r, "Retry-After", retry_after);
    enum MHD_Result rc = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return rc;
}

static const char leaf[] = "<html><body>fine</body></html>";

/* A 200 whose head carries lines header lines of len bytes each. */
static enum MHD_Result answer_tall(struct MHD_Connection *c, int lines, size_t len)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(leaf), (void *)leaf, MHD_RESPMEM_PERSISTENT);
    char *value = malloc(len + 1);
    memset(value, 'v', len);
    value[len] = '\0';
    for (int i = 0; i < lines; i++) {
        char name[32];
        snprintf(name, sizeof name, "X-Filler-%d", i);
        MHD_add_response_header(r, name, value);
    }
    free(value);
    enum MHD_Result rc = MHD_queue_response(c, 200, r);
    MHD_destroy_response(r);
    return rc;
}

/* A: each kind of failure. */
static enum MHD_Result serve_a(struct MHD_Connection *c, const char *path, int before)
{
    if (strcmp(path, "/") == 0)
        return answer(c, 200,
                      "<html><body><a href=\"/flaky\">f</a> <a href=\"/down\">d</a> "
                      "<a href=\"/slow\">s</a> <a href=\"/gone\">g</a></body></html>",
                      NULL);
    if (strcmp(path, "/mixed") == 0)
        return answer(c, 200,
                      "<a href=\"/down\">d</a> <a href=\"/l1\">1</a> <a href=\"/l2\">2</a> "
                      "<a href=\"/l3\">3</a> <a href=\"/l4\">4</a>",
                      NULL);
    if (strcmp(path, "/fives") == 0)
        return answer(c, 200,
                      "<a href=\"/x1\">1</a> <a href=\"/x2\">2</a> <a href=\"/x3\">3</a> "
                      "<a href=\"/x4\">4</a> <a href=\"/x5\">5</a>",
                      NULL);
    if (strncmp(path, "/x", 2) == 0)
        return answer(c, 500, "broken", NULL);
    if (strcmp(path, "/robots.txt") == 0) /* down, then busy, then there */
        return before == 0   ? answer(c, 503, "down", NULL)
               : before == 1 ? answer(c, 429, "slow down", "1")
                             : answer(c, 200, "User-agent: *\nDisallow: /gone\n", NULL);
    if (strcmp(path, "/flaky") == 0) /* busy twice, then fine */
        return answer(c, before < 2 ? 503 : 200, before < 2 ? "busy" : leaf, NULL);
    if (strcmp(path, "/down") == 0)
        return answer(c, 500, "broken", NULL);
    if (strcmp(path, "/slow") == 0 && before == 0)
        usleep(1500000); /* past the crawl's timeout, once */
    if (strcmp(path, "/gone") == 0)
        return answer(c, 404, "no such page", NULL);
    if (strcmp(path, "/long-line") == 0) /* past curl's 100 KiB a line */
        return answer_tall(c, 1, 150000);
    if (strcmp(path, "/tall-head") == 0) /* past curl's 300 KiB a head */
        return answer_tall(c, 400, 1000);
    return answer(c, 200, leaf, NULL);
}

/* B: a server that asks for a long rest. */
static enum MHD_Result serve_b(struct MHD_Connection *c, const char *path)
{
    if (strcmp(path, "/") == 0)
        return answer(c, 200, "<a href=\"/busy\">b</a> <a href=\"/next\">n</a>", NULL);
    if (strcmp(path, "/busy") == 0)
        return answer(c, 429, "slow down", "100");
    if (strcmp(path, "/robots.txt") == 0)
        return answer(c, 501, "no", NULL);
    return answer(c, 200, leaf, NULL);
}

/* C: a server whose pages all fail, but one. */
static enum MHD_Result serve_c(struct MHD_Connection *c, const char *path)
{
    if (strcmp(path, "/") == 0)
        return answer(c, 200,
                      "<a href=\"/f1\">1</a> <a href=\"/f2\">2</a> <a href=\"/f3\">3</a> "
                      "<a href=\"/ok\">ok</a> <a href=\"/f4\">4</a>",
                      NULL);
    if (strcmp(path, "/robots.txt") == 0)
        return answer(c, 503, "down for maintenance", NULL);
    if (strcmp(path, "/ok") == 0)
        return answer(c, 200, leaf, NULL);
    return answer(c, 503, "unavailable", NULL);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **state)
{
    (void)method, (void)version, (void)upload, (void)upload_size, (void)state;
    char server = *(const char *)cls;
    int before = log_request(server, url);
    switch (server) {
    case 'A':
        return serve_a(c, url, before);
    case 'B':
        return serve_b(c, url);
    default:
        return serve_c(c, url);
    }
}

static struct MHD_Daemon *start_server(const char *which, unsigned *port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_AUTO |
            MHD_USE_ERROR_LOG,
        0, NULL, NULL, handle, (void *)which, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)1 << 20, MHD_OPTION_END);
    ck_assert_ptr_nonnull(d);
    *port = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT)->port;
    return d;
}

static void setup(void)
{
    nseen = 0;
    server_a = start_server("A", &port_a);
    server_b = start_server("B", &port_b);
    server_c = start_server("C", &port_c);
}

static void teardown(void)
{
    MHD_stop_daemon(server_a);
    MHD_stop_daemon(server_b);
    MHD_stop_daemon(server_c);
}

/* A port of 127.0.0.1 bound to a socket that never listens: a connection
 * to it is refused, and while *fd stays open no other socket takes it. */
static unsigned refusing_port(int *fd)
{
    *fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    ck_assert_int_eq(bind(*fd, (struct sockaddr *)&sa, sizeof sa), 0);
    socklen_t len = sizeof sa;
    getsockname(*fd, (struct sockaddr *)&sa, &len);
    return ntohs(sa.sin_port);
}

/* A loopback port nothing listens on: bound, then closed. */
static unsigned closed_port(void)
{
    int fd;
    unsigned port = refusing_port(&fd);
    close(fd);
    return port;
}

/* ---- the crawl, as the callbacks saw it ---- */

typedef struct rec {
    char url[128];
    long status;
    sieve_crawl_outcome outcome;
    unsigned attempts;
    char error[96];
} rec;

typedef struct end {
    char url[128];
    bool retried, has_record;
    char truncated[16];
} end;

typedef struct seen_crawl {
    pthread_mutex_t mu;
    rec r[MAX_RECORDS];
    int nr;
    end e[MAX_ENDS];
    int ne;
    sieve_crawl_stats st;
    sieve_crawler *c;      /* while it runs */
    uint64_t deferred_max; /* the frontier's deferred URLs, the most a transfer's end saw */
} seen_crawl;

static int on_record(void *ud, const sieve_crawl_record *r)
{
    seen_crawl *s = ud;
    pthread_mutex_lock(&s->mu);
    if (s->nr < MAX_RECORDS) {
        rec *x = &s->r[s->nr++];
        snprintf(x->url, sizeof x->url, "%s", r->url);
        x->status = r->status;
        x->outcome = r->outcome;
        x->attempts = r->attempts;
        snprintf(x->error, sizeof x->error, "%s", r->error != NULL ? r->error : "");
    }
    pthread_mutex_unlock(&s->mu);
    return SIEVE_OK;
}

static void on_transfer_end(void *ud, sieve_crawl_transfer *t)
{
    seen_crawl *s = ud;
    pthread_mutex_lock(&s->mu);
    if (s->ne < MAX_ENDS) {
        end *x = &s->e[s->ne++];
        snprintf(x->url, sizeof x->url, "%s", t->url);
        x->retried = t->retried;
        x->has_record = t->has_record;
        snprintf(x->truncated, sizeof x->truncated, "%s", t->truncated ? t->truncated : "");
    }
    sieve_crawl_stats st;
    sieve_crawler_stats_get(s->c, &st);
    if (st.frontier.deferred > s->deferred_max)
        s->deferred_max = st.frontier.deferred;
    pthread_mutex_unlock(&s->mu);
}

static sieve_crawl_options base_options(void)
{
    sieve_crawl_options o;
    sieve_crawl_options_init(&o);
    o.workers = 1;
    o.concurrency = 4;
    o.delay_s = 0;
    o.host_connections = 1; /* one request at a time per host: the gaps are the pauses */
    o.ignore_robots = true;
    o.scope = SIEVE_SCOPE_ANY;
    o.proxy = "";
    return o;
}

static void crawl(const sieve_crawl_options *o, const char *const *seeds, seen_crawl *s)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->mu, NULL);
    sieve_crawler *c;
    ck_assert_int_eq(sieve_crawler_new(&c, o), SIEVE_OK);
    s->c = c;
    sieve_crawl_callbacks cb = {.on_record = on_record, .on_transfer_end = on_transfer_end};
    sieve_crawler_set_callbacks(c, &cb, s);
    for (; *seeds != NULL; seeds++)
        ck_assert_int_eq(sieve_crawler_add_seed(c, *seeds, SIZE_MAX), SIEVE_OK);
    ck_assert_int_eq(sieve_crawler_run(c), SIEVE_OK);
    sieve_crawler_stats_get(c, &s->st);
    s->c = NULL;
    sieve_crawler_free(c);
    pthread_mutex_destroy(&s->mu);
}

/* A crawl from the page path of the server on port, with retries more
 * tries after waits from wait_s up to max_s; the caller frees it. */
static seen_crawl *crawl_from(sieve_crawl_options o, unsigned retries, double wait_s, double max_s,
                              unsigned port, const char *path)
{
    o.retries = retries;
    o.retry_wait_s = wait_s;
    o.retry_max_wait_s = max_s;
    char seed[64];
    snprintf(seed, sizeof seed, "http://127.0.0.1:%u%s", port, path);
    const char *seeds[] = {seed, NULL};
    seen_crawl *s = malloc(sizeof *s);
    crawl(&o, seeds, s);
    return s;
}

/* A crawl from two pages of the server on port; the caller frees it. */
static seen_crawl *crawl_two(const sieve_crawl_options *o, unsigned port, const char *one,
                             const char *two)
{
    char a[64], b[64];
    snprintf(a, sizeof a, "http://127.0.0.1:%u%s", port, one);
    snprintf(b, sizeof b, "http://127.0.0.1:%u%s", port, two);
    const char *seeds[] = {a, b, NULL};
    seen_crawl *s = malloc(sizeof *s);
    crawl(o, seeds, s);
    return s;
}

/* The one record of the URL of server port and path. */
static const rec *record_of(const seen_crawl *s, unsigned port, const char *path)
{
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%u%s", port, path);
    const rec *found = NULL;
    for (int i = 0; i < s->nr; i++) {
        if (strcmp(s->r[i].url, url) == 0) {
            ck_assert_msg(found == NULL, "%s: two records", url);
            found = &s->r[i];
        }
    }
    ck_assert_msg(found != NULL, "%s: no record", url);
    return found;
}

static void assert_record(const seen_crawl *s, unsigned port, const char *path, long status,
                          sieve_crawl_outcome outcome, unsigned attempts)
{
    const rec *r = record_of(s, port, path);
    ck_assert_msg(r->status == status && r->outcome == outcome && r->attempts == attempts,
                  "%s: status %ld, outcome %s, %u attempts; want %ld, %s, %u", path, r->status,
                  sieve_crawl_outcome_name(r->outcome), r->attempts, status,
                  sieve_crawl_outcome_name(outcome), attempts);
}

/* The times of server's requests after its first one ("/"), in order. */
static int request_times(char server, double *at, int cap)
{
    int n = 0;
    for (int i = 0; i < nseen && n < cap; i++)
        if (seen[i].server == server && strcmp(seen[i].path, "/") != 0)
            at[n++] = seen[i].at;
    return n;
}

/* ---- tests ---- */

/* A URL busy twice is fetched on its third attempt; one always broken,
 * or on a port that refuses connections, ends after 1 + retries attempts
 * with its failure; one that timed out once comes on its second; a 404
 * is no failure that passes, and is asked for once. */
START_TEST(failures_that_may_pass_are_tried_again)
{
    sieve_crawl_options o = base_options();
    o.retries = 2;
    o.retry_wait_s = 0.02;
    o.retry_max_wait_s = 0.2;
    o.timeout_s = 0.5;
    char seed[64], refused[64];
    snprintf(seed, sizeof seed, "http://127.0.0.1:%u/", port_a);
    unsigned dead = closed_port();
    snprintf(refused, sizeof refused, "http://127.0.0.1:%u/", dead);
    const char *seeds[] = {seed, refused, NULL};
    seen_crawl *s = malloc(sizeof *s);
    crawl(&o, seeds, s);

    assert_record(s, port_a, "/flaky", 200, SIEVE_OUTCOME_OK, 3);
    ck_assert_int_eq(requests_for('A', "/flaky"), 3);
    assert_record(s, port_a, "/down", 500, SIEVE_OUTCOME_HTTP_5XX, 3);
    ck_assert_int_eq(requests_for('A', "/down"), 3);
    assert_record(s, port_a, "/slow", 200, SIEVE_OUTCOME_OK, 2);
    assert_record(s, port_a, "/gone", 404, SIEVE_OUTCOME_HTTP_4XX, 1);
    ck_assert_int_eq(requests_for('A', "/gone"), 1);
    assert_record(s, dead, "/", 0, SIEVE_OUTCOME_CONNECT, 3);
    ck_assert_int_eq(s->nr, 6);
    ck_assert_uint_eq(s->st.retries, 2 + 2 + 1 + 2);
    ck_assert_uint_eq(s->st.started, 6);

    /* every attempt is a transfer on the wire; only the last has a record */
    char down[64];
    snprintf(down, sizeof down, "http://127.0.0.1:%u/down", port_a);
    int tries = 0, retried = 0, with_record = 0;
    for (int i = 0; i < s->ne; i++) {
        if (strcmp(s->e[i].url, down) != 0)
            continue;
        tries++;
        retried += s->e[i].retried;
        with_record += s->e[i].has_record;
        ck_assert(s->e[i].retried != s->e[i].has_record);
    }
    ck_assert_int_eq(tries, 3);
    ck_assert_int_eq(retried, 2);
    ck_assert_int_eq(with_record, 1);
    free(s);
}
END_TEST

/* An outage over more hosts than the retries' share of the queue's memory
 * holds (ports that refuse connections, a budget of 2 KiB: 256 bytes of
 * retries, three URLs): the retries past it wait on disk, their hosts
 * resting, and every URL still ends in one record after all its tries. */
START_TEST(retries_past_their_memory_share_end_in_records)
{
    enum { DEAD = 20 };
    sieve_crawl_options o = base_options();
    o.concurrency = 8;
    o.retries = 2;
    o.retry_wait_s = 0.05;
    o.retry_max_wait_s = 0.2;
    o.queue_memory = 2048;
    char urls[DEAD][64];
    const char *seeds[DEAD + 1];
    unsigned ports[DEAD];
    int fds[DEAD]; /* held, so that the ports differ (closed, one could come back) */
    for (int i = 0; i < DEAD; i++) {
        ports[i] = refusing_port(&fds[i]);
        snprintf(urls[i], sizeof urls[i], "http://127.0.0.1:%u/", ports[i]);
        seeds[i] = urls[i];
    }
    seeds[DEAD] = NULL;
    seen_crawl *s = malloc(sizeof *s);
    crawl(&o, seeds, s);
    ck_assert_uint_gt(s->deferred_max, 0);
    ck_assert_int_eq(s->nr, DEAD);
    for (int i = 0; i < DEAD; i++)
        assert_record(s, ports[i], "/", 0, SIEVE_OUTCOME_CONNECT, 3);
    ck_assert_uint_eq(s->st.retries, 2 * DEAD);
    free(s);
    for (int i = 0; i < DEAD; i++)
        close(fds[i]);
}
END_TEST

/* A 429 with Retry-After: 100 (more than retry_max_wait_s) rests the whole
 * host for the cap: the host's next URL, another one, waits as long. */
START_TEST(retry_after_rests_the_whole_host_up_to_the_cap)
{
    double t0 = now_s();
    seen_crawl *s = crawl_from(base_options(), 0, 0.01, 1, port_b, "/");
    double took = now_s() - t0;

    assert_record(s, port_b, "/busy", 429, SIEVE_OUTCOME_HTTP_4XX, 1);
    assert_record(s, port_b, "/next", 200, SIEVE_OUTCOME_OK, 1);
    double at[8];
    ck_assert_int_eq(request_times('B', at, 8), 2);
    ck_assert_msg(at[1] - at[0] >= 0.9, "the host's next request came %.3f s after the 429",
                  at[1] - at[0]);
    ck_assert_msg(took < 20, "the crawl took %.1f s: Retry-After was not capped", took);
    free(s);
}
END_TEST

/* Every page of C but one answers 503. Each failure in a row doubles the
 * host's pause (drawn in its upper half), the page that answers resets
 * it, and no URL is lost: each ends in a record of its attempts. */
START_TEST(a_failing_host_is_set_aside_longer_and_its_urls_kept)
{
    seen_crawl *s = crawl_from(base_options(), 1, 0.05, 10, port_c, "/");

    const char *failing[] = {"/f1", "/f2", "/f3", "/f4"};
    for (int i = 0; i < 4; i++)
        assert_record(s, port_c, failing[i], 503, SIEVE_OUTCOME_HTTP_5XX, 2);
    assert_record(s, port_c, "/ok", 200, SIEVE_OUTCOME_OK, 1);
    ck_assert_int_eq(s->nr, 6);
    ck_assert_uint_eq(s->st.failing_hosts, 1); /* /f4 failed last */

    /* f1 f1 f2 f2 f3 f3 ok f4 f4: six failures in a row, a success, two */
    double at[16];
    ck_assert_int_eq(request_times('C', at, 16), 9);
    for (int k = 1; k <= 6; k++) {
        double least = 0.05 * (1 << (k - 1)) / 2;
        ck_assert_msg(at[k] - at[k - 1] >= least * 0.95, "pause %d: %.3f s, want at least %.3f", k,
                      at[k] - at[k - 1], least);
    }
    /* after /ok, /f4's failure is the host's first again: 25-50 ms, where
     * a seventh failure in a row would have waited 1.6 s or more */
    ck_assert_msg(at[8] - at[7] < 0.8, "the pause after a success was %.3f s", at[8] - at[7]);
    free(s);
}
END_TEST

/* One broken page (500) does not slow its host: its retry waits off the
 * host, whose other pages are all fetched meanwhile. */
START_TEST(a_broken_page_does_not_hold_up_its_host)
{
    seen_crawl *s = crawl_from(base_options(), 1, 1, 5, port_a, "/mixed");
    assert_record(s, port_a, "/down", 500, SIEVE_OUTCOME_HTTP_5XX, 2);
    double first = -1, again = -1, last_leaf = -1;
    for (int i = 0; i < nseen; i++) {
        if (strcmp(seen[i].path, "/down") == 0)
            *(first < 0 ? &first : &again) = seen[i].at;
        else if (strncmp(seen[i].path, "/l", 2) == 0)
            last_leaf = seen[i].at;
    }
    ck_assert_msg(last_leaf < again, "a page waited for the broken one's retry");
    ck_assert_msg(again - first >= 0.5, "retried after %.3f s", again - first);
    ck_assert_uint_eq(s->st.failing_hosts, 1);
    free(s);
}
END_TEST

/* A host that fails BACKOFF_SET_ASIDE (3) times in a row rests though it
 * never asked to, for longer after each further failure. */
START_TEST(a_host_failing_in_a_row_rests)
{
    seen_crawl *s = crawl_from(base_options(), 0, 0.2, 10, port_a, "/fives");
    const char *pages[] = {"/x1", "/x2", "/x3", "/x4", "/x5"};
    for (int i = 0; i < 5; i++)
        assert_record(s, port_a, pages[i], 500, SIEVE_OUTCOME_HTTP_5XX, 1);
    double at[8];
    int n = 0;
    for (int i = 0; i < nseen && n < 8; i++)
        if (strncmp(seen[i].path, "/x", 2) == 0)
            at[n++] = seen[i].at;
    ck_assert_int_eq(n, 5);
    /* the third failure rests the host 0.4-0.8 s, the fourth 0.8-1.6 s */
    ck_assert_msg(at[3] - at[2] >= 0.38, "after 3 failures: %.3f s", at[3] - at[2]);
    ck_assert_msg(at[4] - at[3] >= 0.76, "after 4 failures: %.3f s", at[4] - at[3]);
    ck_assert_msg(at[1] - at[0] < at[3] - at[2], "the host rested after its first failure");
    free(s);
}
END_TEST

/* Retries give their page back to max_pages: a URL tried three times is
 * one page. */
START_TEST(a_url_tried_again_counts_once_against_max_pages)
{
    sieve_crawl_options o = base_options();
    o.max_pages = 1;
    seen_crawl *s = crawl_from(o, 2, 0.01, 0.05, port_a, "/flaky");
    ck_assert_int_eq(s->nr, 1);
    assert_record(s, port_a, "/flaky", 200, SIEVE_OUTCOME_OK, 3);
    free(s);
}
END_TEST

/* A server that sends a head without end is not asked again: a head past
 * the engine's limit, or with a line longer than curl buffers, is too
 * large, whatever error curl gives for it. */
START_TEST(an_oversized_head_is_too_large_and_not_asked_again)
{
    sieve_crawl_options o = base_options();
    o.retries = 2;
    o.retry_wait_s = 0.01;
    o.retry_max_wait_s = 0.05;
    seen_crawl *s = crawl_two(&o, port_a, "/long-line", "/tall-head");
    assert_record(s, port_a, "/long-line", 200, SIEVE_OUTCOME_TOO_LARGE, 1);
    assert_record(s, port_a, "/tall-head", 200, SIEVE_OUTCOME_TOO_LARGE, 1);
    ck_assert_int_eq(requests_for('A', "/long-line"), 1);
    ck_assert_int_eq(requests_for('A', "/tall-head"), 1);
    ck_assert_str_eq(record_of(s, port_a, "/long-line")->error,
                     "a response head line longer than 102400 bytes");
    ck_assert_str_eq(record_of(s, port_a, "/tall-head")->error,
                     "response head larger than 262144 bytes");
    /* an archive marks both cut at a limit, as WARC-Truncated: length */
    for (int i = 0; i < s->ne; i++)
        if (strstr(s->e[i].url, "/long-line") || strstr(s->e[i].url, "/tall-head"))
            ck_assert_msg(strcmp(s->e[i].truncated, "length") == 0, "%s: truncated '%s'",
                          s->e[i].url, s->e[i].truncated);
    free(s);
}
END_TEST

/* robots.txt is never retried: a 5xx means "unreachable" (RFC 9309
 * 2.3.1.4), the host's pages are not fetched for now, and the file was
 * asked for once. */
/* A robots.txt that answers 503 is asked again with the page's retries,
 * its host resting between tries; once they are spent, the page that
 * waited and the host's other URL are refused, each record naming why,
 * and none is fetched. A transient failure used to refuse them at once,
 * as "disallowed" for all but the first. */
START_TEST(a_robots_txt_down_is_asked_again_then_its_host_refused)
{
    sieve_crawl_options o = base_options();
    o.ignore_robots = false;
    o.retries = 3;
    o.retry_wait_s = 0.05;
    o.retry_max_wait_s = 0.2;
    seen_crawl *s = crawl_two(&o, port_c, "/", "/ok");

    ck_assert_int_eq(requests_for('C', "/robots.txt"), 4);
    ck_assert_int_eq(requests_for('C', "/"), 0);
    ck_assert_int_eq(requests_for('C', "/ok"), 0);
    assert_record(s, port_c, "/", 0, SIEVE_OUTCOME_ROBOTS, 0);
    assert_record(s, port_c, "/ok", 0, SIEVE_OUTCOME_ROBOTS, 0);
    const char *want = "robots.txt unavailable after 4 tries (HTTP 503): host not crawled for now";
    ck_assert_str_eq(record_of(s, port_c, "/")->error, want);
    ck_assert_str_eq(record_of(s, port_c, "/ok")->error, want);
    ck_assert_uint_eq(s->st.retries, 3);
    ck_assert_uint_eq(s->st.robots_fetched, 4);

    /* each try waited at least the first half of its doubling wait */
    double at[8];
    int n = 0;
    for (int i = 0; i < nseen && n < 8; i++)
        if (seen[i].server == 'C')
            at[n++] = seen[i].at;
    ck_assert_int_eq(n, 4);
    for (int i = 1; i < n; i++) {
        double least = 0.05 * (1 << (i - 1)) / 2;
        least = least < 0.1 ? least : 0.1;
        ck_assert_msg(at[i] - at[i - 1] >= least - 0.005, "try %d came %.3f s after the one before",
                      i + 1, at[i] - at[i - 1]);
    }

    /* every try is a transfer on the wire, the last one not retried */
    int tries = 0, retried = 0;
    for (int i = 0; i < s->ne; i++) {
        if (strstr(s->e[i].url, "/robots.txt") == NULL)
            continue;
        tries++;
        retried += s->e[i].retried;
        ck_assert(!s->e[i].has_record);
    }
    ck_assert_int_eq(tries, 4);
    ck_assert_int_eq(retried, 3);
    free(s);
}
END_TEST

/* A robots.txt down once, then busy (429), then there is asked until it
 * is had, and its rules then apply: the pages it allows are fetched, the
 * one it disallows is not. 429 used to count as "no rules at all". */
START_TEST(a_robots_txt_that_comes_back_is_obeyed)
{
    sieve_crawl_options o = base_options();
    o.ignore_robots = false;
    seen_crawl *s = crawl_from(o, 2, 0.01, 0.05, port_a, "/");
    ck_assert_int_eq(requests_for('A', "/robots.txt"), 3);
    assert_record(s, port_a, "/", 200, SIEVE_OUTCOME_OK, 1);
    assert_record(s, port_a, "/flaky", 200, SIEVE_OUTCOME_OK, 3);
    assert_record(s, port_a, "/gone", 0, SIEVE_OUTCOME_ROBOTS, 0);
    ck_assert_str_eq(record_of(s, port_a, "/gone")->error, "disallowed by robots.txt");
    ck_assert_int_eq(requests_for('A', "/gone"), 0);
    free(s);
}
END_TEST

/* A server that will not answer at all: robots.txt is tried as a page
 * would be, and the record names curl's reason. A failure that will not
 * pass (501) is not asked again. */
START_TEST(a_robots_txt_failure_names_its_cause)
{
    sieve_crawl_options o = base_options();
    o.ignore_robots = false;
    unsigned dead = closed_port();
    seen_crawl *s = crawl_from(o, 1, 0.01, 0.05, dead, "/");
    assert_record(s, dead, "/", 0, SIEVE_OUTCOME_ROBOTS, 0);
    const char *error = record_of(s, dead, "/")->error;
    ck_assert_msg(strncmp(error, "robots.txt unavailable after 2 tries (", 38) == 0 &&
                      strstr(error, "onnect") != NULL,
                  "%s", error);
    ck_assert_uint_eq(s->st.robots_fetched, 2);
    free(s);

    s = crawl_from(o, 3, 0.01, 0.05, port_b, "/not-implemented");
    ck_assert_int_eq(requests_for('B', "/robots.txt"), 1);
    ck_assert_str_eq(record_of(s, port_b, "/not-implemented")->error,
                     "robots.txt unavailable (HTTP 501): host not crawled for now");
    free(s);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("retries");
    TCase *tc = tcase_create("retries");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, failures_that_may_pass_are_tried_again);
    tcase_add_test(tc, retry_after_rests_the_whole_host_up_to_the_cap);
    tcase_add_test(tc, a_failing_host_is_set_aside_longer_and_its_urls_kept);
    tcase_add_test(tc, a_broken_page_does_not_hold_up_its_host);
    tcase_add_test(tc, a_host_failing_in_a_row_rests);
    tcase_add_test(tc, a_url_tried_again_counts_once_against_max_pages);
    tcase_add_test(tc, a_robots_txt_down_is_asked_again_then_its_host_refused);
    tcase_add_test(tc, a_robots_txt_that_comes_back_is_obeyed);
    tcase_add_test(tc, a_robots_txt_failure_names_its_cause);
    tcase_add_test(tc, an_oversized_head_is_too_large_and_not_asked_again);
    tcase_add_test(tc, retries_past_their_memory_share_end_in_records);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
