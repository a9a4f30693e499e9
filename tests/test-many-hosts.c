/* test-many-hosts.c - a crawl over many hosts pays for each host once:
 * connections are kept and used again when the crawl comes back to their
 * host, and a host name is looked up again only after its lifetime.
 *
 * One real HTTP server (libmicrohttpd) on 127.0.0.1 answers for every
 * name under .test (fake-dns.h resolves them to 127.0.0.1 and counts the
 * lookups) and counts the connections it accepts. The seed page, on
 * 127.0.0.1, links to PAGES pages on each of HOSTS hosts, the hosts taken
 * in turn, so the crawl goes round all of them before it comes back to
 * one. Work is counted, not timed. */
#include <check.h>
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sieve/crawl.h"

#include "fake-dns.h"

enum { HOSTS = 100, PAGES = 4, TTL_PAGES = 8, RULED = 20, CHAIN = 16 };

static struct MHD_Daemon *server;
static unsigned port;
static atomic_int connections; /* accepted since setup() */
static atomic_int requests;
static atomic_int robots_asked[RULED]; /* robots.txt requests to r<N>.test */
static atomic_int private_asked;       /* requests robots.txt disallows */
static _Atomic double slow_at[2];      /* when slow.test's /s2 and /s3 were asked */

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    (void)cls, (void)c, (void)socket_context;
    if (code == MHD_CONNECTION_NOTIFY_STARTED)
        atomic_fetch_add(&connections, 1);
}

static enum MHD_Result answer(struct MHD_Connection *c, unsigned status, const char *body,
                              bool close)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(r, "Content-Type", "text/html");
    if (close)
        MHD_add_response_header(r, "Connection", "close");
    enum MHD_Result rc = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return rc;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The hosts whose robots.txt says something: r<N>.test disallow /private,
 * slow.test asks for a Crawl-delay of 0.4 s. */
static enum MHD_Result robots_txt(struct MHD_Connection *c, const char *host, bool close)
{
    int n;
    if (sscanf(host, "r%d.test", &n) == 1 && n >= 0 && n < RULED) {
        atomic_fetch_add(&robots_asked[n], 1);
        return answer(c, 200, "User-agent: *\nDisallow: /private\n", close);
    }
    if (strncmp(host, "slow.test:", 10) == 0)
        return answer(c, 200, "User-agent: *\nCrawl-delay: 0.4\n", close);
    return answer(c, 404, "none", close);
}

/* "/": PAGES links to each of the HOSTS hosts h<N>.test, in turns.
 * "/spread": TTL_PAGES links to ttl.test, whose every answer closes its
 * connection, so each of its pages needs the name again.
 * "/ruled": PAGES rounds over the RULED hosts r<N>.test, a page and a
 * page under /private on each.
 * "/late": slow.test/s1, then a chain of CHAIN pages 50 ms each, whose
 * last links to slow.test/s2 and /s3.
 * Anything else is a page without links; robots.txt is 404 but for
 * robots_txt()'s hosts. */
static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_len, void **state)
{
    (void)cls, (void)method, (void)version, (void)upload, (void)upload_len;
    /* A response queued at the first call, before MHD knows the request
     * has no body, makes it close the connection: answer at the second. */
    static int headers_read;
    if (*state == NULL) {
        *state = &headers_read;
        return MHD_YES;
    }
    atomic_fetch_add(&requests, 1);
    const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");
    bool close = host != NULL && strncmp(host, "ttl.test:", 9) == 0;
    if (strcmp(url, "/robots.txt") == 0)
        return robots_txt(c, host != NULL ? host : "", close);
    static char body[HOSTS * PAGES * 48 + 64];
    size_t n = 0;
    int i;
    if (strncmp(url, "/private", 8) == 0)
        atomic_fetch_add(&private_asked, 1);
    if (strcmp(url, "/ruled") == 0) {
        for (int p = 0; p < PAGES; p++)
            for (int h = 0; h < RULED; h++)
                n += (size_t)snprintf(body + n, sizeof body - n,
                                      "<a href=\"http://r%d.test:%u/p%d\">x</a>"
                                      "<a href=\"http://r%d.test:%u/private%d\">x</a>\n",
                                      h, port, p, h, port, p);
        return answer(c, 200, body, false);
    }
    if (strcmp(url, "/late") == 0) {
        snprintf(body, sizeof body,
                 "<a href=\"http://slow.test:%u/s1\">x</a><a href=\"/chain0\">x</a>", port);
        return answer(c, 200, body, false);
    }
    if (sscanf(url, "/chain%d", &i) == 1) {
        struct timespec pause = {0, 50 * 1000 * 1000};
        nanosleep(&pause, NULL);
        if (i + 1 < CHAIN)
            snprintf(body, sizeof body, "<a href=\"/chain%d\">x</a>", i + 1);
        else
            snprintf(body, sizeof body,
                     "<a href=\"http://slow.test:%u/s2\">x</a>"
                     "<a href=\"http://slow.test:%u/s3\">x</a>",
                     port, port);
        return answer(c, 200, body, false);
    }
    if (sscanf(url, "/s%d", &i) == 1 && (i == 2 || i == 3))
        atomic_store(&slow_at[i - 2], now_s());
    if (strcmp(url, "/") == 0) {
        for (int p = 0; p < PAGES; p++)
            for (int h = 0; h < HOSTS; h++)
                n += (size_t)snprintf(body + n, sizeof body - n,
                                      "<a href=\"http://h%d.test:%u/p%d\">x</a>\n", h, port, p);
        return answer(c, 200, body, false);
    }
    if (strcmp(url, "/spread") == 0) {
        for (int p = 0; p < TTL_PAGES; p++)
            n += (size_t)snprintf(body + n, sizeof body - n,
                                  "<a href=\"http://ttl.test:%u/q%d\">x</a>\n", port, p);
        return answer(c, 200, body, false);
    }
    return answer(c, 200, "<html><body>leaf</body></html>", close);
}

static void setup_counts(void)
{
    atomic_store(&connections, 0);
    atomic_store(&requests, 0);
    atomic_store(&private_asked, 0);
    for (int h = 0; h < RULED; h++)
        atomic_store(&robots_asked[h], 0);
}

static void setup(void)
{
    fake_dns_reset();
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    server =
        MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
                             MHD_USE_AUTO | MHD_USE_ERROR_LOG,
                         0, NULL, NULL, handle, NULL, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                         MHD_OPTION_NOTIFY_CONNECTION, on_connection, NULL, MHD_OPTION_END);
    ck_assert_ptr_nonnull(server);
    port = MHD_get_daemon_info(server, MHD_DAEMON_INFO_BIND_PORT)->port;
    setup_counts();
}

static void teardown(void)
{
    MHD_stop_daemon(server);
}

static int on_record(void *ud, const sieve_crawl_record *r)
{
    int *ok = ud;
    if (r->status == 200)
        (*ok)++;
    return SIEVE_OK;
}

/* Crawls from path on 127.0.0.1; returns the pages fetched with 200. */
static int crawl(sieve_crawl_options *o, const char *path)
{
    o->scope = SIEVE_SCOPE_ANY;
    o->allow_private = true; /* the .test names are 127.0.0.1, and no seed names them */
    o->retries = 0;
    sieve_crawler *c;
    ck_assert_int_eq(sieve_crawler_new(&c, o), SIEVE_OK);
    int ok = 0;
    sieve_crawl_callbacks cb = {.on_record = on_record};
    sieve_crawler_set_callbacks(c, &cb, &ok);
    char seed[64];
    snprintf(seed, sizeof seed, "http://127.0.0.1:%u%s", port, path);
    ck_assert_int_eq(sieve_crawler_add_seed(c, seed, SIZE_MAX), SIEVE_OK);
    ck_assert_int_eq(sieve_crawler_run(c), SIEVE_OK);
    sieve_crawler_free(c);
    return ok;
}

/* One worker of 4 transfers, one connection a host, no delay. */
static void one_worker(sieve_crawl_options *o)
{
    sieve_crawl_options_init(o);
    o->workers = 1;
    o->concurrency = 4;
    o->delay_s = 0;
    o->host_connections = 1;
}

/* 100 hosts of 4 pages each, one worker of 4 transfers: 502 requests
 * (robots.txt included). Every host is left for the 99 others before its
 * next page, so a worker that keeps only curl's default of 16 idle
 * connections has closed each host's connection by then, and opens about
 * one a request. Kept, a host's connections serve all its requests. */
START_TEST(connections_are_used_again_across_many_hosts)
{
    sieve_crawl_options o;
    one_worker(&o);
    ck_assert_int_eq(crawl(&o, "/"), 1 + HOSTS * PAGES);
    int conns = atomic_load(&connections), reqs = atomic_load(&requests);
    ck_assert_int_eq(reqs, 2 + HOSTS * (PAGES + 1));
    for (int h = 0; h < HOSTS; h += 33) {
        char name[32];
        snprintf(name, sizeof name, "h%d.test", h);
        ck_assert_msg(fake_dns_lookups(name) >= 1,
                      "%s was not resolved through this program's getaddrinfo()", name);
    }
    /* one a host, the seed's, and some slack for a host whose connection
     * was busy when its next request came */
    ck_assert_msg(conns <= HOSTS + 1 + HOSTS / 10, "%d connections for %d requests", conns, reqs);
}
END_TEST

/* ttl.test closes every connection, so each of its requests looks for
 * the name in curl's DNS cache. With a lifetime of a second and pages
 * half a second apart (robots.txt and 8 pages over 3.5 s), the name is
 * looked up again after its lifetime, and not for every request; with a
 * lifetime of a minute, once. */
START_TEST(a_host_name_is_looked_up_again_after_its_lifetime)
{
    sieve_crawl_options o;
    sieve_crawl_options_init(&o);
    o.workers = 1;
    o.concurrency = 2;
    o.delay_s = 0.5;
    o.dns_ttl_s = 1;
    ck_assert_int_eq(crawl(&o, "/spread"), 1 + TTL_PAGES);
    int short_lived = fake_dns_lookups("ttl.test");
    ck_assert_msg(short_lived >= 2 && short_lived < 1 + TTL_PAGES,
                  "ttl.test looked up %d times for %d requests", short_lived, 1 + TTL_PAGES);

    fake_dns_reset();
    o.delay_s = 0.1;
    o.dns_ttl_s = 60;
    ck_assert_int_eq(crawl(&o, "/spread"), 1 + TTL_PAGES);
    ck_assert_int_eq(fake_dns_lookups("ttl.test"), 1);
}
END_TEST

/* With room for the rules of every host, each robots.txt is asked once.
 * With room for none, a host's rules go once its waiting URL has used
 * them, so its next URL asks again; and no URL ever goes out without
 * its host's rules applied. */
START_TEST(robots_rules_beyond_their_memory_are_asked_again)
{
    sieve_crawl_options o;
    one_worker(&o);
    ck_assert_int_eq(crawl(&o, "/ruled"), 1 + RULED * PAGES);
    for (int h = 0; h < RULED; h++)
        ck_assert_int_eq(atomic_load(&robots_asked[h]), 1);

    setup_counts();
    o.robots_memory = 1;
    ck_assert_int_eq(crawl(&o, "/ruled"), 1 + RULED * PAGES);
    ck_assert_int_eq(atomic_load(&private_asked), 0);
    for (int h = 0; h < RULED; h++)
        ck_assert_msg(atomic_load(&robots_asked[h]) >= PAGES,
                      "r%d.test's robots.txt asked %d times", h, atomic_load(&robots_asked[h]));
}
END_TEST

/* slow.test asks for 0.4 s between requests. Its first page is done long
 * before the chain ends, so the frontier forgets the host, delay and all;
 * the rules the crawl still holds set the delay again when the host comes
 * back, and its two last pages go out 0.4 s apart. */
START_TEST(a_crawl_delay_outlives_its_idle_host)
{
    sieve_crawl_options o;
    one_worker(&o);
    ck_assert_int_eq(crawl(&o, "/late"), 1 + 3 + CHAIN);
    double gap = atomic_load(&slow_at[1]) - atomic_load(&slow_at[0]);
    ck_assert_msg(gap >= 0.35, "slow.test's last pages %.3f s apart", gap);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("many-hosts");
    TCase *tc = tcase_create("many-hosts");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, connections_are_used_again_across_many_hosts);
    tcase_add_test(tc, a_host_name_is_looked_up_again_after_its_lifetime);
    tcase_add_test(tc, robots_rules_beyond_their_memory_are_asked_again);
    tcase_add_test(tc, a_crawl_delay_outlives_its_idle_host);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
