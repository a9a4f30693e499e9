/* test-fetch-options.c - what the engine sends: extra headers, cookies in
 * and out, credentials to their own origin only, a proxy, .netrc, and
 * responses stopped by content type; and that a stalled transfer, a slow
 * robots.txt or a slow DNS answer holds up no other.
 *
 * Two real HTTP servers (libmicrohttpd) run in this process on 127.0.0.1,
 * on two ports, so they are two origins. Each request's target and the
 * headers that matter are logged, and the tests read that log after a
 * crawl with the engine. Names under .test (fake-dns.h) are more hosts
 * on 127.0.0.1: one of them, SLOW_NAME, has its answer held back. */
#include <check.h>
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sieve/crawl.h"

#include "fake-dns.h"

/* ---- a DNS answer held back ----
 *
 * Names under .test resolve to 127.0.0.1 through fake-dns.c's
 * getaddrinfo(). SLOW_NAME's lookups wait, in libcurl's resolver thread,
 * until the test releases them (dns_release()), or DNS_HOLD_MAX_S at
 * most. */
#define SLOW_NAME      "slow.test"
#define DNS_HOLD_MAX_S 20

static struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool released;
    bool waiting;   /* a resolution of SLOW_NAME is being held now */
    int held;       /* resolutions of SLOW_NAME that were held */
    bool timed_out; /* one was let go by DNS_HOLD_MAX_S, not by the test */
} dns = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};

static void dns_hold(const char *name)
{
    if (strcmp(name, SLOW_NAME) != 0)
        return;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += DNS_HOLD_MAX_S;
    pthread_mutex_lock(&dns.lock);
    dns.held++;
    dns.waiting = true;
    while (!dns.released && !dns.timed_out)
        if (pthread_cond_timedwait(&dns.cond, &dns.lock, &until) == ETIMEDOUT)
            dns.timed_out = true;
    dns.waiting = false;
    pthread_mutex_unlock(&dns.lock);
}

/* Whether SLOW_NAME was held, and (*timed_out) whether a hold ran out. */
static bool dns_was_held(bool *timed_out)
{
    pthread_mutex_lock(&dns.lock);
    bool held = dns.held > 0;
    *timed_out = dns.timed_out;
    pthread_mutex_unlock(&dns.lock);
    return held;
}

static void dns_release(void)
{
    pthread_mutex_lock(&dns.lock);
    dns.released = true;
    pthread_cond_broadcast(&dns.cond);
    pthread_mutex_unlock(&dns.lock);
}

enum { MAX_SEEN = 64 };

typedef struct seen_request {
    char origin; /* 'A' or 'B': which server */
    char target[256];
    char host[128];
    char auth[256];
    char cookie[256];
    char custom[64];
} seen_request;

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static seen_request seen[MAX_SEEN];
static int nseen;
static struct MHD_Daemon *server_a, *server_b;
static unsigned port_a, port_b;

static void copy_header(struct MHD_Connection *c, const char *name, char *dst, size_t cap)
{
    const char *v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
    snprintf(dst, cap, "%s", v != NULL ? v : "");
}

static enum MHD_Result answer(struct MHD_Connection *c, unsigned status, const char *type,
                              const char *body, const char *set_cookie)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(r, "Content-Type", type);
    if (set_cookie != NULL)
        MHD_add_response_header(r, "Set-Cookie", set_cookie);
    enum MHD_Result rc = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return rc;
}

/* A 200 with a Refresh header. */
static enum MHD_Result refreshing(struct MHD_Connection *c, const char *type, const char *body,
                                  const char *refresh)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(r, "Content-Type", type);
    MHD_add_response_header(r, "Refresh", refresh);
    enum MHD_Result rc = MHD_queue_response(c, 200, r);
    MHD_destroy_response(r);
    return rc;
}

enum { STALL_BYTES = 40, STALL_GAP_US = 250000, LEAVES = 200 };

/* /stall: a byte every quarter second, ten seconds in all. */
static ssize_t stall_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)cls, (void)max;
    if (pos >= STALL_BYTES)
        return MHD_CONTENT_READER_END_OF_STREAM;
    if (pos > 0)
        usleep(STALL_GAP_US);
    buf[0] = 'x';
    return 1;
}

/* /many: links to /stall and to LEAVES leaf pages. */
static enum MHD_Result many(struct MHD_Connection *c)
{
    static char body[LEAVES * 32 + 128];
    size_t n = (size_t)snprintf(body, sizeof body, "<html><body><a href=\"/stall\">s</a>\n");
    for (int i = 0; i < LEAVES; i++)
        n += (size_t)snprintf(body + n, sizeof body - n, "<a href=\"/leaf/%d\">l</a>\n", i);
    return answer(c, 200, "text/html", body, NULL);
}

/* /leaves: a link to B's /b first, on B's host named host, then LEAVES
 * leaf pages of A. */
static enum MHD_Result leaves_page(struct MHD_Connection *c, const char *host)
{
    static char body[LEAVES * 32 + 128];
    size_t n =
        (size_t)snprintf(body, sizeof body, "<a href=\"http://%s:%u/b\">b</a>\n", host, port_b);
    for (int i = 0; i < LEAVES; i++)
        n += (size_t)snprintf(body + n, sizeof body - n, "<a href=\"/leaf/%d\">l</a>\n", i);
    return answer(c, 200, "text/html", body, NULL);
}

/* With slow_robots, B's robots.txt is /stall's ten seconds of bytes (no
 * rule in them: all is allowed), far more than A's pages take even under
 * a sanitizer on a loaded machine. */
static atomic_bool slow_robots;

/* A response of STALL_BYTES dripped out by stall_reader(). */
static enum MHD_Result dripped(struct MHD_Connection *c, const char *type)
{
    struct MHD_Response *r =
        MHD_create_response_from_callback(STALL_BYTES, 1, stall_reader, NULL, NULL);
    MHD_add_response_header(r, "Content-Type", type);
    enum MHD_Result rc = MHD_queue_response(c, 200, r);
    MHD_destroy_response(r);
    return rc;
}

/* /cut: a link, a tag of 5,000 attributes, then a link the parse limits
 * must keep from being read. */
static enum MHD_Result cut_page(struct MHD_Connection *c)
{
    static char body[5000 * 12 + 256];
    size_t n = (size_t)snprintf(body, sizeof body, "<html><body><a href=\"/a\">a</a><p");
    for (int i = 0; i < 5000; i++)
        n += (size_t)snprintf(body + n, sizeof body - n, " x%d=1", i);
    snprintf(body + n, sizeof body - n, "><a href=\"/after-the-cut\">b</a></body></html>");
    return answer(c, 200, "text/html", body, NULL);
}

/* Server A: "/" links to /a, to /img.png and to B's /b; sets a cookie.
 * Server B: "/b", a page with no links. Both answer robots.txt with 404. */
static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_len, void **state)
{
    (void)method, (void)version, (void)upload, (void)upload_len, (void)state;
    char which = *(const char *)cls;
    pthread_mutex_lock(&log_lock);
    if (nseen < MAX_SEEN) {
        seen_request *s = &seen[nseen++];
        s->origin = which;
        snprintf(s->target, sizeof s->target, "%s", url);
        copy_header(c, "Host", s->host, sizeof s->host);
        copy_header(c, "Authorization", s->auth, sizeof s->auth);
        copy_header(c, "Cookie", s->cookie, sizeof s->cookie);
        copy_header(c, "X-Sieve-Test", s->custom, sizeof s->custom);
    }
    pthread_mutex_unlock(&log_lock);
    if (strstr(url, "robots.txt") != NULL && which == 'B' && atomic_load(&slow_robots))
        return dripped(c, "text/plain");
    if (strstr(url, "robots.txt") != NULL)
        return answer(c, 404, "text/plain", "none", NULL);
    if (strcmp(url, "/leaves") == 0)
        return leaves_page(c, "127.0.0.1");
    if (strcmp(url, "/leaves-slow-dns") == 0)
        return leaves_page(c, SLOW_NAME);
    if (strcmp(url, "/many") == 0)
        return many(c);
    if (strcmp(url, "/cut") == 0)
        return cut_page(c);
    if (strcmp(url, "/nofollow-meta") == 0)
        return answer(c, 200, "text/html",
                      "<html><head><meta name=\"robots\" content=\"noindex, nofollow\">"
                      "</head><body><a href=\"/from-meta\">x</a></body></html>",
                      NULL);
    if (strcmp(url, "/nofollow-header") == 0) {
        const char *page = "<html><body><a href=\"/from-header\">x</a></body></html>";
        struct MHD_Response *r =
            MHD_create_response_from_buffer(strlen(page), (void *)page, MHD_RESPMEM_MUST_COPY);
        MHD_add_response_header(r, "Content-Type", "text/html");
        MHD_add_response_header(r, "X-Robots-Tag", "otherbot: noindex");
        MHD_add_response_header(r, "X-Robots-Tag", "sieve: nofollow");
        enum MHD_Result rc = MHD_queue_response(c, 200, r);
        MHD_destroy_response(r);
        return rc;
    }
    if (strcmp(url, "/refresh") == 0)
        return answer(c, 200, "text/html",
                      "<a href=\"/refresh-header\">h</a>"
                      "<a href=\"/refresh-meta\">m</a>"
                      "<a href=\"/refresh-plain\">p</a>",
                      NULL);
    if (strcmp(url, "/refresh-meta") == 0)
        return answer(c, 200, "text/html",
                      "<meta http-equiv=\"refresh\" content=\"0; url=/from-refresh-meta\">", NULL);
    if (strcmp(url, "/labels") == 0)
        return answer(c, 200, "text/html",
                      "<a href=\"/label-ibm037\">e</a><a href=\"/label-latin1\">l</a>"
                      "<a href=\"/meta-gb2312\">g</a><a href=\"/label-gbk\">k</a>",
                      NULL);
    /* gb2312 is GBK, whose 0x81 0x40 GB2312 lacks */
    if (strcmp(url, "/meta-gb2312") == 0)
        return answer(c, 200, "text/html",
                      "<meta charset=\"gb2312\"><p>\x81\x40</p><a href=\"/after-gbk-char\">x</a>",
                      NULL);
    /* 0x81 0x7f is no GBK character: one U+FFFD, and the page goes on */
    if (strcmp(url, "/label-gbk") == 0)
        return answer(c, 200, "text/html; charset=gbk",
                      "<p>\x81\x7f</p><a href=\"/after-bad-pair\">x</a>", NULL);
    if (strcmp(url, "/label-ibm037") == 0)
        return answer(c, 200, "text/html; charset=IBM037", "<a href=\"/from-ibm037\">x</a>", NULL);
    if (strcmp(url, "/label-latin1") == 0)
        return answer(c, 200, "text/html; charset=\"latin1\"", "<a href=\"/euro-\x80\">x</a>",
                      NULL);
    if (strcmp(url, "/refresh-header") == 0)
        return refreshing(c, "text/html", "<html><body>moved</body></html>",
                          "5;url=/from-refresh-header");
    if (strcmp(url, "/refresh-plain") == 0)
        return refreshing(c, "text/plain", "<a href=\"/not-from-plain\">not a link</a>",
                          "0; url=/from-refresh-plain");
    if (strcmp(url, "/internal") == 0) {
        /* "localhost" is the same server by another name, which no seed
         * names */
        char body[256];
        snprintf(body, sizeof body, "<a href=\"http://localhost:%u/leaf/1\">l</a>", port_a);
        return answer(c, 200, "text/html", body, NULL);
    }
    if (strcmp(url, "/nofollow") == 0)
        return answer(c, 200, "text/html",
                      "<a href=\"/nofollow-meta\">m</a><a href=\"/nofollow-header\">h</a>", NULL);
    if (strcmp(url, "/stall") == 0)
        return dripped(c, "text/html");
    if (strstr(url, "img.png") != NULL)
        return answer(c, 200, "image/png", "not really a png", NULL);
    if (which == 'A' && (strcmp(url, "/") == 0 || strstr(url, "://") != NULL)) {
        char body[512];
        snprintf(body, sizeof body,
                 "<html><body><a href=\"/a\">a</a> <a href=\"/img.png\">i</a> "
                 "<a href=\"http://127.0.0.1:%u/b\">b</a></body></html>",
                 port_b);
        return answer(c, 200, "text/html", body, "sid=s3cr3t; Path=/");
    }
    return answer(c, 200, "text/html", "<html><body>leaf</body></html>", NULL);
}

static struct MHD_Daemon *start_server(const char *which, unsigned *port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    struct MHD_Daemon *d =
        MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
                             MHD_USE_AUTO | MHD_USE_ERROR_LOG,
                         0, NULL, NULL, handle, (void *)which, MHD_OPTION_SOCK_ADDR,
                         (struct sockaddr *)&sa, MHD_OPTION_END);
    ck_assert_ptr_nonnull(d);
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    *port = info->port;
    return d;
}

static void setup(void)
{
    nseen = 0;
    fake_dns_set_hook(dns_hold);
    fake_dns_reset();
    server_a = start_server("A", &port_a);
    server_b = start_server("B", &port_b);
}

static void teardown(void)
{
    MHD_stop_daemon(server_a);
    MHD_stop_daemon(server_b);
}

enum { OUTCOMES = 256 };

typedef struct outcome {
    int n;
    char url[OUTCOMES][256];
    char error[OUTCOMES][128];
} outcome;

static int on_record(void *ud, const sieve_crawl_record *r)
{
    outcome *o = ud;
    if (o->n < OUTCOMES) {
        snprintf(o->url[o->n], sizeof o->url[o->n], "%s", r->url);
        snprintf(o->error[o->n], sizeof o->error[o->n], "%s", r->error ? r->error : "");
        o->n++;
    }
    return SIEVE_OK;
}

static sieve_crawl_options base_options(void)
{
    sieve_crawl_options o;
    sieve_crawl_options_init(&o);
    o.workers = 1;
    o.concurrency = 4;
    o.delay_s = 0;
    o.scope = SIEVE_SCOPE_ANY;
    return o;
}

static int crawl_with(const sieve_crawl_options *o, const char *seed,
                      int (*record)(void *, const sieve_crawl_record *), outcome *out)
{
    sieve_crawler *c;
    ck_assert_int_eq(sieve_crawler_new(&c, o), SIEVE_OK);
    sieve_crawl_callbacks cb = {.on_record = record};
    sieve_crawler_set_callbacks(c, &cb, out);
    ck_assert_int_eq(sieve_crawler_add_seed(c, seed, SIZE_MAX), SIEVE_OK);
    int rc = sieve_crawler_run(c);
    sieve_crawler_free(c);
    return rc;
}

static int crawl(const sieve_crawl_options *o, const char *seed, outcome *out)
{
    return crawl_with(o, seed, on_record, out);
}

static const seen_request *find(char origin, const char *target)
{
    for (int i = 0; i < nseen; i++)
        if (seen[i].origin == origin && strcmp(seen[i].target, target) == 0)
            return &seen[i];
    return NULL;
}

/* "Basic dTpw" is "u:p" in base64. */
#define AUTH_UP "Basic dTpw"

START_TEST(headers_and_credentials_stay_with_their_origin)
{
    sieve_crawl_options o = base_options();
    const char *headers[] = {"X-Sieve-Test: yes"};
    o.headers = headers;
    o.n_headers = 1;
    char seed[128];
    snprintf(seed, sizeof seed, "http://u:p@127.0.0.1:%u/", port_a);
    outcome out = {0};
    ck_assert_int_eq(crawl(&o, seed, &out), SIEVE_OK);
    const seen_request *root = find('A', "/"), *a = find('A', "/a"), *b = find('B', "/b");
    ck_assert_ptr_nonnull(root);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert_str_eq(root->auth, AUTH_UP);
    ck_assert_str_eq(a->auth, AUTH_UP);
    ck_assert_str_eq(b->auth, ""); /* another origin: never sent */
    ck_assert_str_eq(root->custom, "yes");
    ck_assert_str_eq(b->custom, "yes");
    /* no record shows the credentials */
    for (int i = 0; i < out.n; i++)
        ck_assert_msg(strstr(out.url[i], "u:p") == NULL, "%s", out.url[i]);
}
END_TEST

START_TEST(user_option_goes_to_the_seed_origins_only)
{
    sieve_crawl_options o = base_options();
    o.user = "u:p";
    char seed[128];
    snprintf(seed, sizeof seed, "http://127.0.0.1:%u/", port_a);
    outcome out = {0};
    ck_assert_int_eq(crawl(&o, seed, &out), SIEVE_OK);
    ck_assert_str_eq(find('A', "/a")->auth, AUTH_UP);
    ck_assert_str_eq(find('B', "/b")->auth, "");
}
END_TEST

START_TEST(cookies_are_sent_back_and_written_to_the_jar)
{
    char dir[] = "/tmp/sieve-cookies-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char in[128], jar[128];
    snprintf(in, sizeof in, "%s/in.txt", dir);
    snprintf(jar, sizeof jar, "%s/jar.txt", dir);
    FILE *fp = fopen(in, "w");
    ck_assert_ptr_nonnull(fp);
    /* Netscape format: domain, subdomains, path, secure, expiry, name, value */
    fprintf(fp, "127.0.0.1\tFALSE\t/\tFALSE\t0\tpre\tloaded\n");
    fclose(fp);
    sieve_crawl_options o = base_options();
    o.cookie_file = in;
    o.cookie_jar = jar;
    char seed[128];
    snprintf(seed, sizeof seed, "http://127.0.0.1:%u/", port_a);
    outcome out = {0};
    ck_assert_int_eq(crawl(&o, seed, &out), SIEVE_OK);
    ck_assert_msg(strstr(find('A', "/")->cookie, "pre=loaded") != NULL, "%s",
                  find('A', "/")->cookie);
    ck_assert_msg(strstr(find('A', "/a")->cookie, "sid=s3cr3t") != NULL, "%s",
                  find('A', "/a")->cookie);
    char buf[4096] = "";
    fp = fopen(jar, "r");
    ck_assert_ptr_nonnull(fp);
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    buf[n] = '\0';
    fclose(fp);
    ck_assert_msg(strstr(buf, "sid\ts3cr3t") != NULL, "%s", buf);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(netrc_credentials_are_used)
{
    char path[] = "/tmp/sieve-netrc-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    const char *text = "machine 127.0.0.1 login u password p\n";
    ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    sieve_crawl_options o = base_options();
    o.netrc = true;
    o.netrc_file = path;
    o.scope = SIEVE_SCOPE_HOST;
    char seed[128];
    snprintf(seed, sizeof seed, "http://127.0.0.1:%u/", port_a);
    outcome out = {0};
    ck_assert_int_eq(crawl(&o, seed, &out), SIEVE_OK);
    ck_assert_str_eq(find('A', "/a")->auth, AUTH_UP);
    unlink(path);
}
END_TEST

/* The seed names a host that is never resolved: the proxy (server A)
 * gets the whole URL and answers for it. */
START_TEST(requests_go_through_the_proxy)
{
    sieve_crawl_options o = base_options();
    char proxy[64];
    snprintf(proxy, sizeof proxy, "http://127.0.0.1:%u", port_a);
    o.proxy = proxy;
    o.scope = SIEVE_SCOPE_HOST;
    outcome out = {0};
    ck_assert_int_eq(crawl(&o, "http://proxied.invalid/", &out), SIEVE_OK);
    int through = 0;
    for (int i = 0; i < nseen; i++)
        through += seen[i].origin == 'A' && strcmp(seen[i].host, "proxied.invalid") == 0;
    ck_assert_int_ge(through, 2); /* robots.txt and the page, at least */
    for (int i = 0; i < out.n; i++)
        if (strcmp(out.url[i], "http://proxied.invalid/") == 0)
            ck_assert_str_eq(out.error[i], "");
}
END_TEST

START_TEST(rejected_content_types_are_not_read)
{
    sieve_crawl_options o = base_options();
    const char *reject[] = {"image/*"};
    o.reject = reject;
    o.n_reject = 1;
    char seed[128];
    snprintf(seed, sizeof seed, "http://127.0.0.1:%u/", port_a);
    outcome out = {0};
    ck_assert_int_eq(crawl(&o, seed, &out), SIEVE_OK);
    int found = 0;
    for (int i = 0; i < out.n; i++) {
        if (strstr(out.url[i], "img.png") != NULL) {
            ck_assert_str_eq(out.error[i], "content type rejected");
            found = 1;
        }
    }
    ck_assert(found);
}
END_TEST

START_TEST(header_values_with_line_breaks_are_refused)
{
    sieve_crawl_options o = base_options();
    const char *headers[] = {"X-A: 1\r\nX-Injected: 2"};
    o.headers = headers;
    o.n_headers = 1;
    sieve_crawler *c = NULL;
    ck_assert_int_eq(sieve_crawler_new(&c, &o), SIEVE_EINVAL);
    o.n_headers = 0;
    o.user_agent = "sieve\nX-Injected: 1";
    ck_assert_int_eq(sieve_crawler_new(&c, &o), SIEVE_EINVAL);
    ck_assert_ptr_null(c);
}
END_TEST

/* One of two connections to the host stalls for ten seconds, dripping a
 * byte every quarter second; the host has a 10 ms delay. The other
 * connection must go on fetching at the pace of the delay: every leaf
 * comes before the stalled page ends. A worker that waited on a fixed
 * clock (100 ms) instead of the frontier's next ready time would fetch
 * about ten pages a second and fall far short. */
START_TEST(a_stalled_transfer_holds_up_nothing)
{
    sieve_crawl_options o = base_options();
    o.delay_s = 0.01;
    o.host_connections = 2;
    o.ignore_robots = true;
    char seed[128];
    snprintf(seed, sizeof seed, "http://127.0.0.1:%u/many", port_a);
    outcome *out = calloc(1, sizeof *out);
    ck_assert_int_eq(crawl(&o, seed, out), SIEVE_OK);
    ck_assert_int_eq(out->n, LEAVES + 2);
    int stall_at = -1, leaves = 0;
    for (int i = 0; i < out->n; i++) {
        if (strstr(out->url[i], "/stall") != NULL)
            stall_at = i;
        leaves += strstr(out->url[i], "/leaf/") != NULL && out->error[i][0] == '\0';
    }
    ck_assert_int_eq(leaves, LEAVES);
    ck_assert_msg(stall_at == out->n - 1, "the stalled page ended as record %d of %d: %s", stall_at,
                  out->n, stall_at >= 0 ? out->error[stall_at] : "none");
    free(out);
}
END_TEST

/* B's robots.txt takes ten seconds to arrive; while its page
 * waits for it, A's pages go on: all of them are recorded before B's, and
 * B's comes once its robots.txt allows it. A worker that waited for a
 * robots.txt (or a DNS answer, which libcurl resolves in a thread of its
 * own, the same way) would record B's page first. */
START_TEST(a_slow_robots_txt_holds_up_no_other_host)
{
    atomic_store(&slow_robots, true);
    sieve_crawl_options o = base_options();
    char seed[128];
    snprintf(seed, sizeof seed, "http://127.0.0.1:%u/leaves", port_a);
    outcome *out = calloc(1, sizeof *out);
    int rc = crawl(&o, seed, out);
    atomic_store(&slow_robots, false);
    ck_assert_int_eq(rc, SIEVE_OK);
    ck_assert_int_eq(out->n, LEAVES + 2);
    ck_assert_msg(strstr(out->url[out->n - 1], "/b") != NULL && out->error[out->n - 1][0] == '\0',
                  "last record: %s (%s)", out->url[out->n - 1], out->error[out->n - 1]);
    ck_assert_ptr_nonnull(find('B', "/robots.txt"));
    free(out);
}
END_TEST

/* Records of A's pages in all, and those that came while a resolution of
 * SLOW_NAME was held. */
static int a_records, while_held;

/* Counts A's records, and releases SLOW_NAME once all of A's pages
 * (/leaves-slow-dns and its LEAVES leaves) are recorded. */
static int on_record_dns(void *ud, const sieve_crawl_record *r)
{
    on_record(ud, r);
    if (strstr(r->url, SLOW_NAME) != NULL)
        return SIEVE_OK;
    pthread_mutex_lock(&dns.lock);
    while_held += dns.waiting;
    pthread_mutex_unlock(&dns.lock);
    if (++a_records == LEAVES + 1) {
        /* the request log, full of A's, keeps what B gets from now on */
        pthread_mutex_lock(&log_lock);
        nseen = 0;
        pthread_mutex_unlock(&log_lock);
        dns_release();
    }
    return SIEVE_OK;
}

/* Crawls from A's /leaves-slow-dns, whose first link is B's /b on the host
 * SLOW_NAME, held until every page of A is recorded; checks that the hold
 * took effect and that the test, not DNS_HOLD_MAX_S, ended it: A's pages
 * came while the name was held. */
static void crawl_past_slow_dns(const sieve_crawl_options *o, outcome *out)
{
    char seed[128];
    snprintf(seed, sizeof seed, "http://127.0.0.1:%u/leaves-slow-dns", port_a);
    ck_assert_int_eq(crawl_with(o, seed, on_record_dns, out), SIEVE_OK);
    bool timed_out;
    ck_assert_msg(dns_was_held(&timed_out),
                  "%s was never resolved through this program's getaddrinfo()", SLOW_NAME);
    ck_assert_msg(!timed_out, "%s was held %d s: A's pages did not come meanwhile (%d did)",
                  SLOW_NAME, DNS_HOLD_MAX_S, while_held);
    ck_assert_int_eq(out->n, LEAVES + 2);
    ck_assert_int_eq(a_records, LEAVES + 1);
    /* most of A's pages: the first few may come before B's transfer
     * starts resolving */
    ck_assert_int_ge(while_held, LEAVES / 2);
}

/* One worker; B's host name resolves only once all of A's pages are in.
 * A's pages are fetched while the resolution waits, and B's robots.txt
 * and page come after it. A worker that waited for a name (a synchronous
 * resolution in its own thread) would record nothing while it is held. */
START_TEST(a_slow_dns_answer_holds_up_no_other_host)
{
    sieve_crawl_options o = base_options();
    o.allow_private = true; /* SLOW_NAME is 127.0.0.1, and no seed names it */
    outcome *out = calloc(1, sizeof *out);
    crawl_past_slow_dns(&o, out);
    ck_assert_msg(strstr(out->url[out->n - 1], SLOW_NAME) != NULL && out->error[out->n - 1][0] == 0,
                  "last record: %s (%s)", out->url[out->n - 1], out->error[out->n - 1]);
    const seen_request *robots = find('B', "/robots.txt"), *page = find('B', "/b");
    ck_assert_ptr_nonnull(robots);
    ck_assert_ptr_nonnull(page);
    ck_assert_msg(strncmp(page->host, SLOW_NAME ":", strlen(SLOW_NAME) + 1) == 0, "Host: %s",
                  page->host);
    free(out);
}
END_TEST

/* The same with one transfer a worker: B's robots.txt, waiting for its
 * name, takes one of the worker's robots.txt slots, and A's pages go on
 * in the transfer slot. Fetched in that slot, the robots.txt would hold
 * every page of A back until the name came. */
START_TEST(a_robots_txt_fetch_takes_no_transfer_slot)
{
    sieve_crawl_options o = base_options();
    o.allow_private = true;
    o.concurrency = 1;
    outcome *out = calloc(1, sizeof *out);
    crawl_past_slow_dns(&o, out);
    ck_assert_msg(strstr(out->url[out->n - 1], SLOW_NAME) != NULL && out->error[out->n - 1][0] == 0,
                  "last record: %s (%s)", out->url[out->n - 1], out->error[out->n - 1]);
    free(out);
}
END_TEST

/* The same, with a connect timeout far shorter than the hold and A's
 * leaves spread over a second by the host delay: B's robots.txt gives up
 * on its name while A's pages are still coming (and B's page is then not
 * crawled for now). curl, unless told to exit quickly, waits for the
 * resolver thread of a transfer it ends, and the worker with it: A's pages
 * would stop until the hold ran out. */
START_TEST(a_dns_answer_past_the_connect_timeout_holds_up_nothing)
{
    sieve_crawl_options o = base_options();
    o.allow_private = true;
    o.connect_timeout_s = 0.2;
    o.delay_s = 0.005;
    o.retries = 0; /* asked again, robots.txt would come once the name did */
    outcome *out = calloc(1, sizeof *out);
    crawl_past_slow_dns(&o, out);
    int b = -1;
    for (int i = 0; i < out->n; i++)
        if (strstr(out->url[i], SLOW_NAME) != NULL)
            b = i;
    ck_assert_int_ge(b, 0);
    ck_assert_msg(strstr(out->error[b], "robots.txt unavailable") != NULL, "%s", out->error[b]);
    ck_assert_msg(b < out->n - 1, "B's page was recorded last, after A's");
    free(out);
}
END_TEST

/* A crawl without robots.txt from path on server A; the caller frees it. */
static outcome *crawl_a(const char *path)
{
    sieve_crawl_options o = base_options();
    o.ignore_robots = true;
    char seed[128];
    snprintf(seed, sizeof seed, "http://127.0.0.1:%u%s", port_a, path);
    outcome *out = calloc(1, sizeof *out);
    ck_assert_int_eq(crawl(&o, seed, out), SIEVE_OK);
    return out;
}

/* A page cut by the link extractor's limits keeps the links before the
 * cut, and its record says it was cut. */
START_TEST(a_page_cut_by_parse_limits_says_so)
{
    outcome *out = crawl_a("/cut");
    int cut = -1, a = 0;
    for (int i = 0; i < out->n; i++) {
        if (strstr(out->url[i], "/cut") != NULL)
            cut = i;
        a += strstr(out->url[i], "/a") != NULL;
        ck_assert_msg(strstr(out->url[i], "after-the-cut") == NULL, "a link after the cut");
    }
    ck_assert_int_ge(cut, 0);
    ck_assert_msg(strstr(out->error[cut], "links cut") != NULL, "%s", out->error[cut]);
    ck_assert_int_eq(a, 1);
    free(out);
}
END_TEST

/* A robots meta tag and an X-Robots-Tag header with nofollow keep their
 * page's links from being followed, unless follow_nofollow is set. */
START_TEST(robots_meta_and_header_nofollow)
{
    for (int follow = 0; follow < 2; follow++) {
        sieve_crawl_options o = base_options();
        o.ignore_robots = true;
        o.follow_nofollow = follow;
        char seed[128];
        snprintf(seed, sizeof seed, "http://127.0.0.1:%u/nofollow", port_a);
        outcome *out = calloc(1, sizeof *out);
        ck_assert_int_eq(crawl(&o, seed, out), SIEVE_OK);
        int meta = 0, header = 0, pages = 0;
        for (int i = 0; i < out->n; i++) {
            meta += strstr(out->url[i], "/from-meta") != NULL;
            header += strstr(out->url[i], "/from-header") != NULL;
            pages += strstr(out->url[i], "/nofollow-") != NULL;
        }
        ck_assert_int_eq(pages, 2);
        ck_assert_int_eq(meta, follow);
        ck_assert_int_eq(header, follow);
        free(out);
    }
}
END_TEST

/* A page that sends its reader on, by a meta refresh or a Refresh header,
 * has its target crawled, one level deeper; a Refresh header on a page
 * that is not HTML too, and that page's body is never read for links. */
START_TEST(refreshes_are_followed)
{
    outcome *out = crawl_a("/refresh");
    int meta = 0, header = 0, plain = 0, text_links = 0;
    for (int i = 0; i < out->n; i++) {
        meta += strstr(out->url[i], "/from-refresh-meta") != NULL;
        header += strstr(out->url[i], "/from-refresh-header") != NULL;
        plain += strstr(out->url[i], "/from-refresh-plain") != NULL;
        text_links += strstr(out->url[i], "/not-from-plain") != NULL;
    }
    ck_assert_int_eq(meta, 1);
    ck_assert_int_eq(header, 1);
    ck_assert_int_eq(plain, 1);
    ck_assert_int_eq(text_links, 0);
    ck_assert_int_eq(out->n, 7);
    free(out);
}
END_TEST

/* A Content-Type's charset is read as browsers read it: a label they do
 * not know is ignored (an ASCII page labelled IBM037 still has its link),
 * and latin1 is windows-1252, whose 0x80 is the euro sign. So is a
 * <meta>'s, and a byte sequence the charset lacks ends no page. */
START_TEST(charset_labels_are_read_as_browsers_read_them)
{
    outcome *out = crawl_a("/labels");
    int ebcdic = 0, euro = 0, gbk_char = 0, bad_pair = 0;
    for (int i = 0; i < out->n; i++) {
        ebcdic += strstr(out->url[i], "/from-ibm037") != NULL;
        euro += strstr(out->url[i], "/euro-%E2%82%AC") != NULL;
        gbk_char += strstr(out->url[i], "/after-gbk-char") != NULL;
        bad_pair += strstr(out->url[i], "/after-bad-pair") != NULL;
    }
    ck_assert_int_eq(ebcdic, 1);
    ck_assert_int_eq(euro, 1);
    ck_assert_int_eq(gbk_char, 1);
    ck_assert_int_eq(bad_pair, 1);
    free(out);
}
END_TEST

/* A link to a host that resolves to a loopback address, and that no seed
 * names, is not connected to, and its record says it was blocked; with
 * allow_private it is fetched. A seed's own loopback host always is. */
START_TEST(internal_addresses_are_blocked_unless_asked)
{
    for (int allow = 0; allow < 2; allow++) {
        sieve_crawl_options o = base_options();
        o.allow_private = allow;
        char seed[128];
        snprintf(seed, sizeof seed, "http://127.0.0.1:%u/internal", port_a);
        outcome *out = calloc(1, sizeof *out);
        nseen = 0;
        ck_assert_int_eq(crawl(&o, seed, out), SIEVE_OK);
        int leaf = -1, root = -1;
        for (int i = 0; i < out->n; i++) {
            if (strstr(out->url[i], "localhost") != NULL)
                leaf = i;
            if (strstr(out->url[i], "/internal") != NULL)
                root = i;
        }
        ck_assert_int_ge(root, 0);
        ck_assert_str_eq(out->error[root], "");
        ck_assert_int_ge(leaf, 0);
        if (allow) {
            ck_assert_msg(out->error[leaf][0] == '\0', "%s", out->error[leaf]);
        } else {
            ck_assert_msg(strstr(out->error[leaf], "blocked") != NULL, "%s", out->error[leaf]);
            /* and nothing reached the server for it */
            for (int i = 0; i < nseen; i++)
                ck_assert_msg(strstr(seen[i].host, "localhost") == NULL, "%s", seen[i].target);
        }
        free(out);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fetch-options");
    TCase *tc = tcase_create("fetch-options");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, headers_and_credentials_stay_with_their_origin);
    tcase_add_test(tc, user_option_goes_to_the_seed_origins_only);
    tcase_add_test(tc, cookies_are_sent_back_and_written_to_the_jar);
    tcase_add_test(tc, netrc_credentials_are_used);
    tcase_add_test(tc, requests_go_through_the_proxy);
    tcase_add_test(tc, rejected_content_types_are_not_read);
    tcase_add_test(tc, header_values_with_line_breaks_are_refused);
    tcase_add_test(tc, a_stalled_transfer_holds_up_nothing);
    tcase_add_test(tc, a_slow_robots_txt_holds_up_no_other_host);
    tcase_add_test(tc, a_slow_dns_answer_holds_up_no_other_host);
    tcase_add_test(tc, a_robots_txt_fetch_takes_no_transfer_slot);
    tcase_add_test(tc, a_dns_answer_past_the_connect_timeout_holds_up_nothing);
    tcase_add_test(tc, a_page_cut_by_parse_limits_says_so);
    tcase_add_test(tc, robots_meta_and_header_nofollow);
    tcase_add_test(tc, refreshes_are_followed);
    tcase_add_test(tc, charset_labels_are_read_as_browsers_read_them);
    tcase_add_test(tc, internal_addresses_are_blocked_unless_asked);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
