/* test-web.c - sieve-web, the synthetic web: its HTTP behaviour and its
 * ground truth.
 *
 * An unchecked fixture starts the server (path in $SIEVE_WEB) in the
 * parent process on port 0 and reads the port it picked from --port-file;
 * the tests run in forked children, so the teardown that kills the server
 * runs even when a test fails. The server also gets PR_SET_PDEATHSIG, so
 * it cannot outlive a crashed test runner.
 *
 * The strongest test crawls the running server over HTTP with an
 * independent little crawler (libcurl's URL parser, a tag scanner, the
 * same guards) and requires its fetched set to equal --truth exactly:
 * the truth is computed from the server's model, the crawl from its
 * bytes, so a disagreement in either shows up.
 *
 * The politeness options (--robots, --access-log, --delay-ms, --host on
 * other loopback addresses) each get a server of their own, started and
 * stopped inside the test. */
#include <check.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <search.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define PAGES "200"

static pid_t server_pid;
static unsigned server_port;
static char tmpdir[] = "/tmp/sieve-web-test-XXXXXX";
static char port_file[64];

static const char *web_binary(void)
{
    const char *p = getenv("SIEVE_WEB");
    if (!p || !*p) {
        fprintf(stderr, "test-web: set SIEVE_WEB to the sieve-web binary\n");
        exit(1);
    }
    return p;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Starts sieve-web with extra arguments (NULL-terminated) on port 0 and
 * waits up to 10 s for its port file; its stderr goes to errfile unless
 * that is NULL. Returns the pid; *port is set. */
static pid_t start_server_to(const char *file, unsigned *port, const char *const *extra,
                             const char *errfile)
{
    const char *argv[16] = {web_binary(), "--port", "0", "--port-file", file};
    int argc = 5;
    for (; extra && *extra && argc < 15; extra++)
        argv[argc++] = *extra;
    argv[argc] = NULL;
    unlink(file);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent)
            _exit(127);
        if (errfile) {
            int fd = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);
            if (fd < 0 || dup2(fd, 2) < 0)
                _exit(127);
            close(fd);
        }
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    for (int i = 0; i < 1000; i++) {
        FILE *f = fopen(file, "r");
        if (f) {
            int ok = fscanf(f, "%u", port) == 1;
            fclose(f);
            if (ok)
                return pid;
        }
        if (waitpid(pid, NULL, WNOHANG) == pid)
            return -1;
        sleep_ms(10);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -1;
}

static pid_t start_server(const char *file, unsigned *port, const char *const *extra)
{
    return start_server_to(file, port, extra, NULL);
}

/* Sends SIGTERM and returns the exit status (-1 if it had to be killed). */
static int stop_server(pid_t pid)
{
    int status;
    kill(pid, SIGTERM);
    for (int i = 0; i < 500; i++) {
        if (waitpid(pid, &status, WNOHANG) == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        sleep_ms(10);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
}

static void web_setup(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        exit(1);
    }
    snprintf(port_file, sizeof port_file, "%s/port", tmpdir);
    static const char *const extra[] = {"--pages", PAGES, "--drip-ms", "5", NULL};
    server_pid = start_server(port_file, &server_port, extra);
    if (server_pid < 0) {
        fprintf(stderr, "test-web: sieve-web did not start\n");
        exit(1);
    }
}

static void web_teardown(void)
{
    if (server_pid > 0)
        stop_server(server_pid);
    unlink(port_file);
    rmdir(tmpdir);
}

/* ---- HTTP ---- */

struct body {
    char *data;
    size_t len;
    size_t cap;
    size_t limit; /* abort the transfer past this many bytes */
};

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
    struct body *b = arg;
    size_t add = size * n;
    if (b->len + add > b->limit)
        return 0;
    if (b->len + add + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + add + 1)
            cap *= 2;
        char *d = realloc(b->data, cap);
        if (!d)
            return 0;
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, add);
    b->len += add;
    b->data[b->len] = '\0';
    return add;
}

struct reply {
    CURLcode rc;
    long status;
    char type[128];
    char encoding[64];
    char location[2100];
    struct body body;
};

static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
    struct reply *r = arg;
    size_t len = size * n;
    if (len > 18 && strncasecmp(p, "Content-Encoding:", 17) == 0)
        snprintf(r->encoding, sizeof r->encoding, "%.*s", (int)(len - 18), p + 18);
    return len;
}

/* Fetches path (or an absolute URL) with handle h. accept is NULL (no
 * Accept-Encoding), "decode" (curl asks for and inflates any coding it
 * knows) or a raw header line sent as is. */
static void fetch_with(CURL *h, const char *path, const char *accept, struct reply *r)
{
    char url[2200];
    if (strncmp(path, "http", 4) == 0)
        snprintf(url, sizeof url, "%s", path);
    else
        snprintf(url, sizeof url, "http://127.0.0.1:%u%s", server_port, path);
    memset(r, 0, sizeof *r);
    r->body.limit = 10u * 1024 * 1024; /* the crawler's default body limit */
    struct curl_slist *hdr = NULL;
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &r->body);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, r);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 10000L);
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    if (accept && strcmp(accept, "decode") == 0) {
        curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
    } else {
        curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, NULL);
        if (accept) {
            hdr = curl_slist_append(NULL, accept);
        }
    }
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    r->rc = curl_easy_perform(h);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
    curl_slist_free_all(hdr);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
    char *s = NULL;
    if (curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &s) == CURLE_OK && s)
        snprintf(r->type, sizeof r->type, "%s", s);
    s = NULL;
    if (curl_easy_getinfo(h, CURLINFO_REDIRECT_URL, &s) == CURLE_OK && s)
        snprintf(r->location, sizeof r->location, "%s", s);
}

static void fetch(const char *path, const char *accept, struct reply *r)
{
    CURL *h = curl_easy_init();
    ck_assert_ptr_nonnull(h);
    fetch_with(h, path, accept, r);
    curl_easy_cleanup(h);
}

static void url_of(const char *path, char *out, size_t n)
{
    snprintf(out, n, "http://127.0.0.1:%u%s", server_port, path);
}

/* ---- the HTTP behaviour ---- */

START_TEST(home_links_the_first_page_and_the_hostile_index)
{
    struct reply r;
    fetch("/", NULL, &r);
    ck_assert_int_eq(r.rc, CURLE_OK);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.type, "text/html; charset=utf-8");
    ck_assert_ptr_nonnull(strstr(r.body.data, "href=\"p/0.html\""));
    ck_assert_ptr_nonnull(strstr(r.body.data, "href=\"hostile/\""));
    free(r.body.data);
}
END_TEST

START_TEST(pages_exist_up_to_the_page_count)
{
    struct reply r;
    fetch("/p/199.html", NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_ptr_nonnull(strstr(r.body.data, "<title>Page 199</title>"));
    free(r.body.data);
    fetch("/p/200.html", NULL, &r);
    ck_assert_int_eq(r.status, 404);
    free(r.body.data);
    fetch("/p/007.html", NULL, &r); /* not the canonical spelling of 7 */
    ck_assert_int_eq(r.status, 404);
    free(r.body.data);
}
END_TEST

START_TEST(pages_are_deterministic)
{
    struct reply a, b;
    fetch("/p/42.html", NULL, &a);
    fetch("/p/42.html", NULL, &b);
    ck_assert_uint_eq(a.body.len, b.body.len);
    ck_assert_int_eq(memcmp(a.body.data, b.body.data, a.body.len), 0);
    free(a.body.data);
    free(b.body.data);
}
END_TEST

START_TEST(redirects_name_their_targets)
{
    char want[128];
    struct reply r;
    fetch("/r/5", NULL, &r);
    ck_assert_int_eq(r.status, 301);
    url_of("/p/5.html", want, sizeof want);
    ck_assert_str_eq(r.location, want);
    free(r.body.data);
    fetch("/r2/5", NULL, &r);
    ck_assert_int_eq(r.status, 302);
    url_of("/r/5", want, sizeof want);
    ck_assert_str_eq(r.location, want);
    free(r.body.data);
    fetch("/loop/a", NULL, &r);
    ck_assert_int_eq(r.status, 301);
    url_of("/loop/b", want, sizeof want);
    ck_assert_str_eq(r.location, want);
    free(r.body.data);
    fetch("/loop/b", NULL, &r);
    url_of("/loop/a", want, sizeof want);
    ck_assert_str_eq(r.location, want);
    free(r.body.data);
}
END_TEST

START_TEST(missing_pages_are_404)
{
    struct reply r;
    fetch("/missing/3.html", NULL, &r);
    ck_assert_int_eq(r.rc, CURLE_OK);
    ck_assert_int_eq(r.status, 404);
    free(r.body.data);
    fetch("/no/such/thing", NULL, &r);
    ck_assert_int_eq(r.status, 404);
    free(r.body.data);
}
END_TEST

START_TEST(files_have_their_content_types)
{
    struct reply r;
    fetch("/files/3.png", NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.type, "image/png");
    ck_assert_uint_ge(r.body.len, 8);
    ck_assert_int_eq(memcmp(r.body.data, "\x89PNG\r\n\x1a\n", 8), 0);
    free(r.body.data);
    fetch("/files/3.txt", NULL, &r);
    ck_assert_str_eq(r.type, "text/plain; charset=utf-8");
    free(r.body.data);
    fetch("/hostile/html-as-text.txt", NULL, &r);
    ck_assert_str_eq(r.type, "text/plain; charset=utf-8");
    ck_assert_ptr_nonnull(strstr(r.body.data, "<a href=\"bait.html\">"));
    free(r.body.data);
}
END_TEST

START_TEST(gzip_only_when_accepted)
{
    struct reply r;
    fetch("/hostile/gzip.html", NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.encoding, "");
    ck_assert_ptr_nonnull(strstr(r.body.data, "gzip-target.html"));
    free(r.body.data);

    fetch("/hostile/gzip.html", "Accept-Encoding: gzip", &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_ptr_nonnull(strstr(r.encoding, "gzip"));
    ck_assert_uint_ge(r.body.len, 2);
    ck_assert_int_eq((unsigned char)r.body.data[0], 0x1f);
    ck_assert_int_eq((unsigned char)r.body.data[1], 0x8b);
    free(r.body.data);

    fetch("/hostile/gzip.html", "Accept-Encoding: gzip;q=0, identity", &r);
    ck_assert_str_eq(r.encoding, "");
    free(r.body.data);

    fetch("/hostile/gzip.html", "decode", &r); /* curl asks and inflates */
    ck_assert_int_eq(r.rc, CURLE_OK);
    ck_assert_ptr_nonnull(strstr(r.body.data, "gzip-target.html"));
    free(r.body.data);
}
END_TEST

START_TEST(huge_page_announces_twenty_mebibytes)
{
    CURL *h = curl_easy_init();
    ck_assert_ptr_nonnull(h);
    char url[128];
    url_of("/hostile/huge.html", url, sizeof url);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    ck_assert_int_eq(curl_easy_perform(h), CURLE_OK);
    curl_off_t len = -1;
    curl_easy_getinfo(h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &len);
    ck_assert_int_eq(len, 20 * 1024 * 1024);
    curl_easy_cleanup(h);
}
END_TEST

START_TEST(endless_page_does_not_end)
{
    struct reply r;
    CURL *h = curl_easy_init();
    ck_assert_ptr_nonnull(h);
    /* The transfer is cut at fetch_with()'s 10 MiB: the stream reaches it. */
    fetch_with(h, "/hostile/endless.html", NULL, &r);
    ck_assert_int_eq(r.rc, CURLE_WRITE_ERROR);
    ck_assert_uint_ge(r.body.len, 10u * 1024 * 1024 - 65536);
    curl_easy_cleanup(h);
    free(r.body.data);
}
END_TEST

START_TEST(slow_page_arrives_whole)
{
    struct reply r;
    fetch("/hostile/slow.html", NULL, &r);
    ck_assert_int_eq(r.rc, CURLE_OK);
    ck_assert_int_eq(r.status, 200);
    ck_assert_ptr_nonnull(strstr(r.body.data, "</html>"));
    free(r.body.data);
}
END_TEST

START_TEST(only_get_and_head)
{
    CURL *h = curl_easy_init();
    char url[128];
    url_of("/", url, sizeof url);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, "x=1");
    struct body b = {.limit = 4096};
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    ck_assert_int_eq(curl_easy_perform(h), CURLE_OK);
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    ck_assert_int_eq(status, 405);
    curl_easy_cleanup(h);
    free(b.data);
}
END_TEST

/* ---- the truth ---- */

struct lines {
    char *text;
    char **line;
    size_t count;
};

/* Runs sieve-web with args and collects its stdout lines. Returns the
 * exit status. */
static int run_web(const char *const *args, struct lines *out)
{
    int fd[2];
    ck_assert_int_eq(pipe(fd), 0);
    const char *argv[16] = {web_binary()};
    int argc = 1;
    for (; *args && argc < 15; args++)
        argv[argc++] = *args;
    argv[argc] = NULL;
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(fd[1]);
    struct body b = {.limit = 512u * 1024 * 1024};
    char chunk[65536];
    ssize_t n;
    while ((n = read(fd[0], chunk, sizeof chunk)) > 0)
        ck_assert_uint_eq(on_data(chunk, 1, (size_t)n, &b), (size_t)n);
    close(fd[0]);
    int status;
    waitpid(pid, &status, 0);
    memset(out, 0, sizeof *out);
    out->text = b.data;
    size_t cap = 0;
    for (char *p = b.data, *nl; p && *p; p = nl + 1) {
        nl = strchr(p, '\n');
        ck_assert_ptr_nonnull(nl);
        *nl = '\0';
        if (out->count == cap) {
            cap = cap ? cap * 2 : 256;
            out->line = realloc(out->line, cap * sizeof *out->line);
            ck_assert_ptr_nonnull(out->line);
        }
        out->line[out->count++] = p;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void lines_free(struct lines *l)
{
    free(l->text);
    free(l->line);
}

static int has_line(const struct lines *l, const char *s)
{
    for (size_t i = 0; i < l->count; i++)
        if (strcmp(l->line[i], s) == 0)
            return 1;
    return 0;
}

static size_t count_containing(const struct lines *l, const char *s)
{
    size_t n = 0;
    for (size_t i = 0; i < l->count; i++)
        n += strstr(l->line[i], s) != NULL;
    return n;
}

START_TEST(truth_is_sorted_unique_and_canonical)
{
    static const char *const args[] = {"--truth", "--port", "8917", "--pages", PAGES, NULL};
    struct lines t;
    ck_assert_int_eq(run_web(args, &t), 0);
    ck_assert_uint_gt(t.count, 200);
    for (size_t i = 1; i < t.count; i++)
        ck_assert_msg(strcmp(t.line[i - 1], t.line[i]) < 0, "not sorted and unique at '%s'",
                      t.line[i]);
    for (size_t i = 0; i < t.count; i++) {
        ck_assert_msg(strncmp(t.line[i], "http://127.0.0.1:8917/", 22) == 0, "'%s'", t.line[i]);
        ck_assert_ptr_null(strchr(t.line[i], '#'));
        ck_assert_ptr_null(strchr(t.line[i], '%'));
        ck_assert_ptr_null(strstr(t.line[i], "/./"));
        ck_assert_ptr_null(strstr(t.line[i], "/../"));
        ck_assert_uint_le(strlen(t.line[i]), 2048);
    }
    ck_assert(has_line(&t, "http://127.0.0.1:8917/"));
    ck_assert(has_line(&t, "http://127.0.0.1:8917/p/0.html"));
    ck_assert(has_line(&t, "http://127.0.0.1:8917/p/199.html"));
    ck_assert(has_line(&t, "http://127.0.0.1:8917/hostile/gzip-target.html"));
    ck_assert(has_line(&t, "http://127.0.0.1:8917/trap/a/a/"));
    ck_assert(!has_line(&t, "http://127.0.0.1:8917/trap/a/a/a/"));
    ck_assert(!has_line(&t, "http://127.0.0.1:8917/hostile/bait.html"));
    ck_assert_uint_eq(count_containing(&t, "/nofollow/"), 0);
    ck_assert_uint_eq(count_containing(&t, "/p/"), 200);
    ck_assert_uint_eq(count_containing(&t, "/deep/"), 19);
    ck_assert_uint_eq(count_containing(&t, "/cal/"), 511);
    ck_assert_uint_eq(count_containing(&t, "/long/"), 6);
    lines_free(&t);
}
END_TEST

START_TEST(truth_depends_on_seed_and_hostile_only_as_asked)
{
    static const char *const a1[] = {"--truth", "--pages", PAGES, "--seed", "7", NULL};
    static const char *const a2[] = {"--truth", "--pages", PAGES, "--seed", "8", NULL};
    static const char *const a3[] = {"--truth", "--pages",      PAGES, "--seed",
                                     "7",       "--no-hostile", NULL};
    struct lines t1, t1b, t2, t3;
    ck_assert_int_eq(run_web(a1, &t1), 0);
    ck_assert_int_eq(run_web(a1, &t1b), 0);
    ck_assert_int_eq(run_web(a2, &t2), 0);
    ck_assert_int_eq(run_web(a3, &t3), 0);
    ck_assert_uint_eq(t1.count, t1b.count);
    for (size_t i = 0; i < t1.count; i++)
        ck_assert_str_eq(t1.line[i], t1b.line[i]);
    int same = t1.count == t2.count;
    for (size_t i = 0; same && i < t1.count; i++)
        same = strcmp(t1.line[i], t2.line[i]) == 0;
    ck_assert_msg(!same, "seeds 7 and 8 gave the same web");
    ck_assert_uint_eq(count_containing(&t3, "/hostile/"), 0);
    ck_assert_uint_eq(count_containing(&t3, "/cal/"), 0);
    ck_assert_uint_eq(count_containing(&t3, "/p/"), 200);
    lines_free(&t1);
    lines_free(&t1b);
    lines_free(&t2);
    lines_free(&t3);
}
END_TEST

/* The truth's URLs at --port 8917. */
#define BASE "http://127.0.0.1:8917/"

/* Whether sorted lines l hold s (a binary search). */
static int has_sorted(const struct lines *l, const char *s)
{
    size_t lo = 0, hi = l->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(l->line[mid], s);
        if (c == 0)
            return 1;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

/* --edges is the truth's graph: sorted and unique, each line "link FROM
 * TO" or "redirect FROM TO" between URLs of the truth (robots.txt names
 * the sitemap), redirects only where the web redirects, and every URL of
 * the truth but "/" led to by one. */
START_TEST(edges_join_the_urls_of_the_truth)
{
    const char *sitemap = _i ? "--sitemap" : NULL;
    const char *const truth[] = {"--truth", "--port", "8917", "--pages", "50", sitemap, NULL};
    const char *const edges[] = {"--edges", "--port", "8917", "--pages", "50", sitemap, NULL};
    struct lines t, e;
    ck_assert_int_eq(run_web(truth, &t), 0);
    ck_assert_int_eq(run_web(edges, &e), 0);
    ck_assert_uint_gt(e.count, t.count);
    char *led_to = calloc(t.count, 1);
    for (size_t i = 0; i < e.count; i++) {
        ck_assert_msg(i == 0 || strcmp(e.line[i - 1], e.line[i]) < 0, "at '%s'", e.line[i]);
        char kind[16], from[2100], to[2100];
        ck_assert_int_eq(sscanf(e.line[i], "%15s %2099s %2099s", kind, from, to), 3);
        ck_assert_msg(strcmp(kind, "link") == 0 || strcmp(kind, "redirect") == 0, "%s", kind);
        if (strcmp(kind, "redirect") == 0)
            ck_assert_msg(strstr(from, "/r/") || strstr(from, "/r2/") || strstr(from, "/loop/"),
                          "%s", e.line[i]);
        ck_assert_msg(has_sorted(&t, from) || (_i && strcmp(from, BASE "robots.txt") == 0), "%s",
                      e.line[i]);
        ck_assert_msg(has_sorted(&t, to), "%s", e.line[i]);
        for (size_t j = 0; j < t.count; j++)
            led_to[j] |= strcmp(t.line[j], to) == 0;
    }
    for (size_t j = 0; j < t.count; j++)
        ck_assert_msg(led_to[j] || strcmp(t.line[j], BASE) == 0, "nothing leads to %s", t.line[j]);
    ck_assert(has_line(&e, "link " BASE "hostile/gzip.html " BASE "hostile/gzip-target.html"));
    ck_assert(has_line(&e, "redirect " BASE "loop/a " BASE "loop/b"));
    ck_assert_int_eq(has_line(&e, "link " BASE "robots.txt " BASE "sitemap.xml"), _i);
    free(led_to);
    lines_free(&t);
    lines_free(&e);
}
END_TEST

START_TEST(truth_refuses_port_zero)
{
    static const char *const args[] = {"--truth", "--port", "0", NULL};
    struct lines t;
    ck_assert_int_eq(run_web(args, &t), 2);
    ck_assert_uint_eq(t.count, 0);
    lines_free(&t);
}
END_TEST

START_TEST(bad_arguments_are_refused)
{
    static const char *const a1[] = {"--host", "10.0.0.1", "--port", "0", NULL};
    static const char *const a2[] = {"--pages", "0", NULL};
    static const char *const a3[] = {"--port", "70000", NULL};
    struct lines t;
    ck_assert_int_eq(run_web(a1, &t), 1);
    lines_free(&t);
    ck_assert_int_eq(run_web(a2, &t), 2);
    lines_free(&t);
    ck_assert_int_eq(run_web(a3, &t), 2);
    lines_free(&t);
}
END_TEST

START_TEST(stops_cleanly_on_sigterm)
{
    char file[96];
    snprintf(file, sizeof file, "%s/port2", tmpdir);
    unsigned port = 0;
    static const char *const extra[] = {"--pages", "10", NULL};
    pid_t pid = start_server(file, &port, extra);
    ck_assert_int_gt(pid, 0);
    ck_assert_uint_gt(port, 0);
    ck_assert_uint_ne(port, server_port);
    ck_assert_int_eq(stop_server(pid), 0);
    unlink(file);
}
END_TEST

/* ---- an independent crawl over HTTP ---- */

static int unreserved(int c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_' || c == '~';
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Appends s with unreserved percent-escapes decoded. */
static void append_decoded(char *out, size_t n, const char *s)
{
    size_t len = strlen(out);
    for (; *s && len + 4 < n; s++) {
        int hi, lo;
        if (s[0] == '%' && (hi = hexval(s[1])) >= 0 && (lo = hexval(s[2])) >= 0) {
            int c = hi * 16 + lo;
            if (unreserved(c)) {
                out[len++] = (char)c;
            } else {
                out[len++] = '%';
                out[len++] = "0123456789ABCDEF"[hi];
                out[len++] = "0123456789ABCDEF"[lo];
            }
            s += 2;
        } else {
            out[len++] = *s;
        }
    }
    out[len] = '\0';
}

/* Resolves href against base and writes the canonical URL to out.
 * Returns 0, or -1 for a link a crawler skips (unparseable, not http). */
static int canonical(const char *base, const char *href, char *out, size_t n)
{
    CURLU *u = curl_url();
    char *scheme = NULL, *host = NULL, *port = NULL, *path = NULL, *query = NULL;
    int rc = -1;
    if (curl_url_set(u, CURLUPART_URL, base, 0) != CURLUE_OK ||
        curl_url_set(u, CURLUPART_URL, href, 0) != CURLUE_OK)
        goto done;
    if (curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
        strcasecmp(scheme, "http") != 0)
        goto done;
    if (curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_PATH, &path, 0) != CURLUE_OK)
        goto done;
    curl_url_get(u, CURLUPART_PORT, &port, CURLU_NO_DEFAULT_PORT);
    curl_url_get(u, CURLUPART_QUERY, &query, 0);
    for (char *p = host; *p; p++)
        *p = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
    snprintf(out, n, "http://%s%s%s", host, port ? ":" : "", port ? port : "");
    append_decoded(out, n, *path ? path : "/");
    if (query) {
        append_decoded(out, n, "?");
        append_decoded(out, n, query);
    }
    rc = 0;
done:
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
    curl_free(path);
    curl_free(query);
    curl_url_cleanup(u);
    return rc;
}

/* The crawler's guards, written again from their definition. */
static int guard_ok(const char *url)
{
    if (strlen(url) > 2048)
        return 0;
    const char *path = strchr(url + 7, '/');
    char prev[2100] = "", seg[2100];
    int segments = 0, run = 0;
    for (const char *p = path; p && *p;) {
        while (*p == '/')
            p++;
        size_t len = strcspn(p, "/?");
        if (len == 0)
            break;
        snprintf(seg, sizeof seg, "%.*s", (int)len, p);
        if (++segments > 20)
            return 0;
        run = strcmp(seg, prev) == 0 ? run + 1 : 1;
        if (run > 2)
            return 0;
        snprintf(prev, sizeof prev, "%s", seg);
        p += len;
    }
    return 1;
}

struct crawl {
    struct hsearch_data seen;
    char **queue;
    size_t count, cap;
};

static void admit(struct crawl *c, const char *url)
{
    if (!guard_ok(url))
        return;
    ENTRY e = {.key = (char *)(uintptr_t)url}, *found;
    if (hsearch_r(e, FIND, &found, &c->seen))
        return;
    ck_assert_uint_lt(c->count, c->cap);
    e.key = strdup(url);
    ck_assert_ptr_nonnull(e.key);
    ck_assert(hsearch_r(e, ENTER, &found, &c->seen));
    c->queue[c->count++] = e.key;
}

/* Copies attribute name="..." of the tag [tag, end) into out. */
static int attribute(const char *tag, const char *end, const char *name, char *out, size_t n)
{
    size_t len = strlen(name);
    for (const char *p = tag; p + len + 2 < end; p++) {
        if ((p[-1] == ' ' || p[-1] == '\n' || p[-1] == '\t') && strncasecmp(p, name, len) == 0 &&
            p[len] == '=' && p[len + 1] == '"') {
            const char *v = p + len + 2;
            const char *q = memchr(v, '"', (size_t)(end - v));
            if (!q || (size_t)(q - v) >= n)
                return 0;
            memcpy(out, v, (size_t)(q - v));
            out[q - v] = '\0';
            return 1;
        }
    }
    return 0;
}

static int has_token(const char *list, const char *token)
{
    size_t n = strlen(token);
    for (const char *p = list; (p = strstr(p, token)); p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' '))
            return 1;
    return 0;
}

/* Finds <a ...> tags in the body (which may hold NUL bytes) and admits
 * their followable targets. */
static void extract(struct crawl *c, const char *base, const struct body *b)
{
    const char *p = b->data, *end = b->data + b->len;
    char href[2100], rel[128], url[2200];
    while ((p = memmem(p, (size_t)(end - p), "<a", 2)) != NULL) {
        p += 2;
        if (p >= end || (*p != ' ' && *p != '\n' && *p != '\t'))
            continue;
        const char *close = memchr(p, '>', (size_t)(end - p));
        if (!close)
            break;
        if (attribute(p, close, "href", href, sizeof href) &&
            !(attribute(p, close, "rel", rel, sizeof rel) && has_token(rel, "nofollow")) &&
            canonical(base, href, url, sizeof url) == 0)
            admit(c, url);
        p = close;
    }
}

static int by_string(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorts the URLs the crawl c fetched and checks they are the truth t. */
static void assert_crawl_is_truth(struct crawl *c, const struct lines *t)
{
    qsort(c->queue, c->count, sizeof *c->queue, by_string);
    for (size_t i = 0; i < c->count && i < t->count; i++)
        ck_assert_msg(strcmp(c->queue[i], t->line[i]) == 0,
                      "crawl and truth differ at %zu: crawl '%s', truth '%s'", i, c->queue[i],
                      t->line[i]);
    ck_assert_uint_eq(c->count, t->count);
}

START_TEST(truth_equals_a_crawl_over_http)
{
    char root[64], port[16];
    snprintf(root, sizeof root, "http://127.0.0.1:%u/", server_port);
    snprintf(port, sizeof port, "%u", server_port);
    const char *const args[] = {"--truth", "--port", port, "--pages", PAGES, NULL};
    struct lines t;
    ck_assert_int_eq(run_web(args, &t), 0);

    struct crawl c = {.cap = 1u << 16};
    c.queue = calloc(c.cap, sizeof *c.queue);
    ck_assert(hcreate_r(c.cap * 2, &c.seen));
    CURL *h = curl_easy_init();
    admit(&c, root);
    for (size_t head = 0; head < c.count; head++) {
        struct reply r;
        fetch_with(h, c.queue[head], "decode", &r);
        if (r.rc == CURLE_OK && r.status / 100 == 3 && r.location[0]) {
            char url[2200];
            if (canonical(c.queue[head], r.location, url, sizeof url) == 0)
                admit(&c, url);
        } else if (r.rc == CURLE_OK && r.status == 200 &&
                   strncasecmp(r.type, "text/html", 9) == 0) {
            extract(&c, c.queue[head], &r.body);
        }
        free(r.body.data);
    }
    curl_easy_cleanup(h);

    assert_crawl_is_truth(&c, &t);
    for (size_t i = 0; i < c.count; i++)
        free(c.queue[i]);
    free(c.queue);
    hdestroy_r(&c.seen);
    lines_free(&t);
}
END_TEST

/* ---- politeness: --robots, --access-log, --delay-ms, other hosts ---- */

/* A server of the test's own, on host (NULL: 127.0.0.1). */
struct own {
    pid_t pid;
    unsigned port;
    char host[32];
    char port_file[128];
    char err_file[128];
    char log_file[128];
};

/* Starts sieve-web --pages 10 plus extra (at most 8 arguments), with
 * stderr to a file, as instance name of this test. */
static void own_start(struct own *o, const char *name, const char *host, const char *const *extra)
{
    memset(o, 0, sizeof *o);
    snprintf(o->host, sizeof o->host, "%s", host ? host : "127.0.0.1");
    snprintf(o->port_file, sizeof o->port_file, "%s/%s.port", tmpdir, name);
    snprintf(o->err_file, sizeof o->err_file, "%s/%s.err", tmpdir, name);
    snprintf(o->log_file, sizeof o->log_file, "%s/%s.log", tmpdir, name);
    const char *args[12] = {"--pages", "10", "--host", o->host};
    int n = 4;
    for (; extra && *extra && n < 11; extra++)
        args[n++] = *extra;
    args[n] = NULL;
    o->pid = start_server_to(o->port_file, &o->port, args, o->err_file);
    ck_assert_msg(o->pid > 0, "sieve-web %s did not start", name);
}

/* Stops the server, which must exit 0 in time, and removes its files. */
static void own_stop(struct own *o)
{
    ck_assert_int_eq(stop_server(o->pid), 0);
    o->pid = 0;
}

static void own_clean(struct own *o)
{
    unlink(o->port_file);
    unlink(o->err_file);
    unlink(o->log_file);
}

static void own_url(const struct own *o, const char *path, char *out, size_t n)
{
    snprintf(out, n, "http://%s:%u%s", o->host, o->port, path);
}

static void own_fetch(const struct own *o, const char *path, struct reply *r)
{
    char url[256];
    own_url(o, path, url, sizeof url);
    fetch(url, NULL, r);
}

/* Reads a whole file (at most 16 MiB) into b, NUL-terminated. */
static void slurp(const char *path, struct body *b)
{
    memset(b, 0, sizeof *b);
    b->limit = 16u * 1024 * 1024;
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        ck_assert_uint_eq(on_data(chunk, 1, n, b), n);
    fclose(f);
    if (!b->data) {
        b->data = calloc(1, 1);
        ck_assert_ptr_nonnull(b->data);
    }
}

static void write_file(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, len, f), len);
    ck_assert_int_eq(fclose(f), 0);
}

/* How many /robots.txt requests the stopped server reported. */
static long robots_count(const struct own *o)
{
    struct body b;
    slurp(o->err_file, &b);
    const char *p = strstr(b.data, " for /robots.txt)");
    long n = -1;
    if (p) {
        while (p > b.data && p[-1] >= '0' && p[-1] <= '9')
            p--;
        n = strtol(p, NULL, 10);
    }
    free(b.data);
    return n;
}

START_TEST(robots_answers_as_each_mode_says)
{
    static const struct {
        const char *mode;
        long status;
        const char *body; /* NULL: any */
    } modes[] = {
        {"allow", 200, "User-agent: *\nDisallow:\n"},
        {"404", 404, NULL},
        {"500", 500, NULL},
    };
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        struct own o;
        const char *const extra[] = {"--robots", modes[i].mode, NULL};
        own_start(&o, "robots", NULL, extra);
        struct reply r;
        own_fetch(&o, "/robots.txt", &r);
        ck_assert_int_eq(r.rc, CURLE_OK);
        ck_assert_msg(r.status == modes[i].status, "--robots %s: status %ld", modes[i].mode,
                      r.status);
        ck_assert_str_eq(r.type, "text/plain; charset=utf-8");
        ck_assert_uint_gt(r.body.len, 0);
        if (modes[i].body)
            ck_assert_str_eq(r.body.data, modes[i].body);
        free(r.body.data);
        /* The moved file exists only in redirect mode. */
        own_fetch(&o, "/robots-moved.txt", &r);
        ck_assert_int_eq(r.status, 404);
        free(r.body.data);
        own_stop(&o);
        ck_assert_int_eq(robots_count(&o), 1);
        own_clean(&o);
    }
}
END_TEST

START_TEST(robots_file_is_served_byte_for_byte)
{
    char path[128], arg[160];
    snprintf(path, sizeof path, "%s/rules.txt", tmpdir);
    snprintf(arg, sizeof arg, "file:%s", path);
    static const char rules[] = "User-agent: *\nDisallow: /p/3.html\n\x01\xff\0tail\n";
    write_file(path, rules, sizeof rules - 1);
    struct own o;
    const char *const extra[] = {"--robots", arg, NULL};
    own_start(&o, "file", NULL, extra);
    unlink(path); /* read at startup: the server needs it no longer */
    struct reply r;
    own_fetch(&o, "/robots.txt", &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.type, "text/plain; charset=utf-8");
    ck_assert_uint_eq(r.body.len, sizeof rules - 1);
    ck_assert_int_eq(memcmp(r.body.data, rules, sizeof rules - 1), 0);
    free(r.body.data);
    /* robots.txt changes what is served there, not the pages. */
    own_fetch(&o, "/p/3.html", &r);
    ck_assert_int_eq(r.status, 200);
    free(r.body.data);
    own_stop(&o);
    own_clean(&o);

    /* An empty file is a valid robots.txt. */
    write_file(path, "", 0);
    own_start(&o, "file", NULL, extra);
    own_fetch(&o, "/robots.txt", &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_uint_eq(r.body.len, 0);
    free(r.body.data);
    own_stop(&o);
    own_clean(&o);
    unlink(path);
}
END_TEST

START_TEST(robots_redirect_leads_to_an_allow_file)
{
    struct own o;
    static const char *const extra[] = {"--robots", "redirect", NULL};
    own_start(&o, "redirect", NULL, extra);
    char want[128];
    struct reply r;
    own_fetch(&o, "/robots.txt", &r);
    ck_assert_int_eq(r.status, 301);
    own_url(&o, "/robots-moved.txt", want, sizeof want);
    ck_assert_str_eq(r.location, want);
    free(r.body.data);
    own_fetch(&o, "/robots-moved.txt", &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.type, "text/plain; charset=utf-8");
    ck_assert_str_eq(r.body.data, "User-agent: *\nDisallow:\n");
    free(r.body.data);

    /* A client that follows at most 5 redirects gets there. */
    CURL *h = curl_easy_init();
    ck_assert_ptr_nonnull(h);
    own_url(&o, "/robots.txt", want, sizeof want);
    struct body b = {.limit = 4096};
    curl_easy_setopt(h, CURLOPT_URL, want);
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(h, CURLOPT_MAXREDIRS, 5L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    ck_assert_int_eq(curl_easy_perform(h), CURLE_OK);
    long status = 0, redirects = -1;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(h, CURLINFO_REDIRECT_COUNT, &redirects);
    ck_assert_int_eq(status, 200);
    ck_assert_int_eq(redirects, 1);
    ck_assert_str_eq(b.data, "User-agent: *\nDisallow:\n");
    free(b.data);
    curl_easy_cleanup(h);
    own_stop(&o);
    ck_assert_int_eq(robots_count(&o), 2); /* /robots-moved.txt is not counted */
    own_clean(&o);
}
END_TEST

/* One access log line. */
struct logline {
    unsigned long long start, end;
    unsigned status;
    char target[512];
};

/* Parses the log into at most max lines; every line must be well formed.
 * Returns the line count. */
static size_t parse_log(const char *path, struct logline *out, size_t max)
{
    struct body b;
    slurp(path, &b);
    size_t n = 0;
    for (char *p = b.data, *nl; *p; p = nl + 1) {
        nl = strchr(p, '\n');
        ck_assert_msg(nl != NULL, "unterminated log line '%s'", p);
        *nl = '\0';
        ck_assert_uint_lt(n, max);
        struct logline *l = &out[n++];
        int used = -1;
        ck_assert_msg(sscanf(p, "%llu %llu %u %511s%n", &l->start, &l->end, &l->status, l->target,
                             &used) == 4 &&
                          used == (int)strlen(p),
                      "bad log line '%s'", p);
        ck_assert_msg(l->start <= l->end, "ends before it starts: '%s'", p);
    }
    free(b.data);
    return n;
}

/* Waits up to 10 s for the log to hold want lines. */
static size_t wait_log(const char *path, struct logline *out, size_t max, size_t want)
{
    size_t n = 0;
    for (int i = 0; i < 1000 && (n = parse_log(path, out, max)) < want; i++)
        sleep_ms(10);
    return n;
}

START_TEST(access_log_has_a_line_per_request)
{
    struct own o;
    char logarg[160];
    snprintf(logarg, sizeof logarg, "%s/access.log", tmpdir);
    const char *const extra[] = {"--access-log", logarg, NULL};
    own_start(&o, "access", NULL, extra);
    ck_assert_str_eq(o.log_file, logarg);
    static const struct {
        const char *target;
        unsigned status;
    } want[] = {
        {"/", 200},           {"/p/1.html", 200},     {"/missing/1.html", 404},
        {"/robots.txt", 200}, {"/p/2.html?x=1", 200}, {"/r/3", 301},
        {"/%70/1.html", 200}, {"/files/4.png", 200},
    };
    const size_t count = sizeof want / sizeof want[0];
    /* One keep-alive connection: each request arrives after the last
     * ended, so the lines come in request order. */
    CURL *h = curl_easy_init();
    ck_assert_ptr_nonnull(h);
    for (size_t i = 0; i < count; i++) {
        char url[256];
        own_url(&o, want[i].target, url, sizeof url);
        struct reply r;
        fetch_with(h, url, NULL, &r);
        ck_assert_int_eq(r.rc, CURLE_OK);
        ck_assert_int_eq(r.status, want[i].status);
        free(r.body.data);
    }
    curl_easy_cleanup(h);
    struct logline l[16];
    /* Written as each response ends, not at exit. */
    ck_assert_uint_eq(wait_log(o.log_file, l, 16, count), count);
    own_stop(&o);
    ck_assert_uint_eq(parse_log(o.log_file, l, 16), count);
    for (size_t i = 0; i < count; i++) {
        ck_assert_str_eq(l[i].target, want[i].target);
        ck_assert_uint_eq(l[i].status, want[i].status);
        if (i > 0)
            ck_assert_uint_le(l[i - 1].end, l[i].start);
    }
    own_clean(&o);
}
END_TEST

START_TEST(access_log_records_cut_responses_and_appends)
{
    struct own o;
    char logarg[160];
    snprintf(logarg, sizeof logarg, "%s/cut.log", tmpdir);
    write_file(logarg, "1 2 200 /earlier\n", 17);
    const char *const extra[] = {"--access-log", logarg, NULL};
    own_start(&o, "cut", NULL, extra);
    /* The client gives up on the endless page after 1 MiB. */
    char url[256];
    own_url(&o, "/hostile/endless.html", url, sizeof url);
    CURL *h = curl_easy_init();
    struct body b = {.limit = 1024 * 1024};
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    ck_assert_int_eq(curl_easy_perform(h), CURLE_WRITE_ERROR);
    curl_easy_cleanup(h);
    free(b.data);
    struct logline l[4];
    ck_assert_uint_eq(wait_log(o.log_file, l, 4, 2), 2);
    ck_assert_str_eq(l[0].target, "/earlier");
    ck_assert_str_eq(l[1].target, "/hostile/endless.html");
    ck_assert_uint_eq(l[1].status, 200);
    own_stop(&o);
    ck_assert_uint_eq(parse_log(o.log_file, l, 4), 2);
    own_clean(&o);
}
END_TEST

START_TEST(robots_hang_sends_nothing_and_stops_cleanly)
{
    struct own o;
    char logarg[160];
    snprintf(logarg, sizeof logarg, "%s/hang.log", tmpdir);
    const char *const extra[] = {"--robots", "hang", "--access-log", logarg, NULL};
    own_start(&o, "hang", NULL, extra);
    char url[256];
    own_url(&o, "/robots.txt", url, sizeof url);

    /* A client with a 1 s timeout gets nothing at all. */
    CURL *h = curl_easy_init();
    struct reply r;
    memset(&r, 0, sizeof r);
    r.body.limit = 4096;
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 1000L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &r.body);
    ck_assert_int_eq(curl_easy_perform(h), CURLE_OPERATION_TIMEDOUT);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r.status);
    ck_assert_int_eq(r.status, 0);
    ck_assert_uint_eq(r.body.len, 0);
    curl_easy_cleanup(h);
    /* The server sees the client leave and logs the request, no status. */
    struct logline l[4];
    ck_assert_uint_eq(wait_log(o.log_file, l, 4, 1), 1);
    ck_assert_str_eq(l[0].target, "/robots.txt");
    ck_assert_uint_eq(l[0].status, 0);

    /* A patient client is still held when the server stops, which must
     * not wait for it; the client then gets nothing either. */
    CURLM *m = curl_multi_init();
    h = curl_easy_init();
    struct body b = {.limit = 4096};
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 30000L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    curl_multi_add_handle(m, h);
    int running = 1;
    long sent = 0;
    for (int i = 0; i < 500 && running && sent == 0; i++) {
        curl_multi_perform(m, &running);
        curl_easy_getinfo(h, CURLINFO_REQUEST_SIZE, &sent);
        curl_multi_poll(m, NULL, 0, 10, NULL);
    }
    ck_assert_int_eq(running, 1);
    ck_assert_int_gt(sent, 0);
    own_stop(&o);
    CURLcode rc = CURLE_OK;
    for (int i = 0; i < 3000 && running; i++) {
        curl_multi_perform(m, &running);
        curl_multi_poll(m, NULL, 0, 10, NULL);
    }
    ck_assert_int_eq(running, 0);
    int left;
    CURLMsg *msg = curl_multi_info_read(m, &left);
    ck_assert_ptr_nonnull(msg);
    rc = msg->data.result;
    ck_assert_int_ne(rc, CURLE_OK);
    ck_assert_int_ne(rc, CURLE_OPERATION_TIMEDOUT);
    ck_assert_uint_eq(b.len, 0);
    curl_multi_remove_handle(m, h);
    curl_easy_cleanup(h);
    curl_multi_cleanup(m);
    free(b.data);
    ck_assert_uint_eq(parse_log(o.log_file, l, 4), 2);
    ck_assert_str_eq(l[1].target, "/robots.txt");
    ck_assert_uint_eq(l[1].status, 0);
    ck_assert_int_eq(robots_count(&o), 2);
    own_clean(&o);
}
END_TEST

START_TEST(other_loopback_addresses_are_their_own_hosts)
{
    static const char *const hosts[] = {"127.0.0.2", "127.0.0.3"};
    for (size_t i = 0; i < 2; i++) {
        struct own o;
        own_start(&o, "host", hosts[i], NULL);
        char want[128], authority[64];
        snprintf(authority, sizeof authority, "href=\"http://%s:%u\"", o.host, o.port);
        struct reply r;
        own_fetch(&o, "/", &r);
        ck_assert_int_eq(r.status, 200);
        ck_assert_ptr_nonnull(strstr(r.body.data, authority));
        ck_assert_ptr_null(strstr(r.body.data, "127.0.0.1"));
        free(r.body.data);
        own_fetch(&o, "/r/5", &r);
        ck_assert_int_eq(r.status, 301);
        own_url(&o, "/p/5.html", want, sizeof want);
        ck_assert_str_eq(r.location, want);
        free(r.body.data);
        /* Bound to that address only. */
        snprintf(want, sizeof want, "http://127.0.0.1:%u/", o.port);
        fetch(want, NULL, &r);
        ck_assert_int_eq(r.rc, CURLE_COULDNT_CONNECT);
        free(r.body.data);
        own_stop(&o);
        own_clean(&o);

        /* The truth names the same host. */
        char port[16];
        snprintf(port, sizeof port, "%u", o.port);
        const char *const args[] = {"--truth", "--host",  hosts[i], "--port",
                                    port,      "--pages", "10",     NULL};
        struct lines t;
        ck_assert_int_eq(run_web(args, &t), 0);
        ck_assert_uint_gt(t.count, 10);
        snprintf(want, sizeof want, "http://%s:%u/", hosts[i], o.port);
        for (size_t k = 0; k < t.count; k++)
            ck_assert_msg(strncmp(t.line[k], want, strlen(want)) == 0, "'%s'", t.line[k]);
        lines_free(&t);
    }
}
END_TEST

START_TEST(delay_ms_delays_html_pages)
{
    struct own o;
    static const char *const extra[] = {"--delay-ms", "300", NULL};
    own_start(&o, "delay", NULL, extra);
    static const char *const paths[] = {"/", "/p/1.html"};
    for (size_t i = 0; i < 2; i++) {
        char url[256];
        own_url(&o, paths[i], url, sizeof url);
        struct timespec a, b;
        struct reply r;
        clock_gettime(CLOCK_MONOTONIC, &a);
        fetch(url, NULL, &r);
        clock_gettime(CLOCK_MONOTONIC, &b);
        ck_assert_int_eq(r.status, 200);
        free(r.body.data);
        long ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
        ck_assert_msg(ms >= 300, "%s took %ld ms", paths[i], ms);
    }
    own_stop(&o);
    own_clean(&o);
}
END_TEST

START_TEST(truth_ignores_robots)
{
    char path[128], arg[160];
    snprintf(path, sizeof path, "%s/deny.txt", tmpdir);
    snprintf(arg, sizeof arg, "file:%s", path);
    write_file(path, "User-agent: *\nDisallow: /\n", 26);
    const char *const plain[] = {"--truth", "--pages", "50", NULL};
    const char *const robots[] = {"--truth", "--pages", "50", "--robots", arg, NULL};
    struct lines a, b;
    ck_assert_int_eq(run_web(plain, &a), 0);
    ck_assert_int_eq(run_web(robots, &b), 0);
    ck_assert_uint_gt(a.count, 50);
    ck_assert_uint_eq(a.count, b.count);
    for (size_t i = 0; i < a.count; i++)
        ck_assert_str_eq(a.line[i], b.line[i]);
    lines_free(&a);
    lines_free(&b);
    unlink(path);
}
END_TEST

START_TEST(bad_politeness_arguments_are_refused)
{
    char big[128], arg[160], dir_arg[160], log_arg[160];
    snprintf(big, sizeof big, "%s/big.txt", tmpdir);
    snprintf(arg, sizeof arg, "file:%s", big);
    snprintf(dir_arg, sizeof dir_arg, "file:%s", tmpdir);
    snprintf(log_arg, sizeof log_arg, "%s/no/such/dir/log", tmpdir);
    size_t len = 1024 * 1024 + 1;
    char *data = calloc(1, len);
    ck_assert_ptr_nonnull(data);
    write_file(big, data, len);
    free(data);
    const char *const bad[][5] = {
        {"--robots", "maybe", NULL},
        {"--robots", "file:", NULL},
        {"--robots", arg, NULL},
        {"--robots", dir_arg, NULL},
        {"--robots", "file:/no/such/file", NULL},
        {"--delay-ms", "60001", NULL},
        {"--delay-ms", "-1", NULL},
    };
    struct lines t;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_msg(run_web(bad[i], &t) == 2, "%s %s accepted", bad[i][0], bad[i][1]);
        lines_free(&t);
    }
    const char *const nolog[] = {"--port", "0", "--access-log", log_arg, NULL};
    ck_assert_int_eq(run_web(nolog, &t), 1);
    lines_free(&t);
    /* Exactly 1 MiB is fine. */
    ck_assert_int_eq(truncate(big, 1024 * 1024), 0);
    const char *const ok[] = {"--truth", "--pages", "5", "--robots", arg, NULL};
    ck_assert_int_eq(run_web(ok, &t), 0);
    lines_free(&t);
    unlink(big);
}
END_TEST

/* ---- --sitemap ---- */

/* Inflates the gzip file in (compressed as a file, not a Content-Encoding)
 * into out, NUL-terminated. */
static void gunzip(const struct body *in, struct body *out)
{
    memset(out, 0, sizeof *out);
    out->limit = 64u * 1024 * 1024;
    z_stream z;
    memset(&z, 0, sizeof z);
    ck_assert_int_eq(inflateInit2(&z, 15 + 16), Z_OK);
    z.next_in = (Bytef *)in->data;
    z.avail_in = (uInt)in->len;
    int rc;
    do {
        char chunk[16384];
        z.next_out = (Bytef *)chunk;
        z.avail_out = sizeof chunk;
        rc = inflate(&z, Z_NO_FLUSH);
        ck_assert_msg(rc == Z_OK || rc == Z_STREAM_END, "inflate: %d", rc);
        size_t n = sizeof chunk - z.avail_out;
        ck_assert_uint_eq(on_data(chunk, 1, n, out), n);
    } while (rc != Z_STREAM_END);
    inflateEnd(&z);
}

/* Calls fn with each location of a sitemap body (gzip inflated first):
 * the <loc> texts of XML with the predefined entities decoded, or the
 * lines of a text sitemap. */
static void sitemap_locs(const struct body *b, void (*fn)(void *, const char *), void *arg)
{
    struct body plain = {0};
    const struct body *in = b;
    if (b->len >= 2 && (unsigned char)b->data[0] == 0x1f && (unsigned char)b->data[1] == 0x8b) {
        gunzip(b, &plain);
        in = &plain;
    }
    char loc[2100];
    if (in->len > 0 && in->data[0] == '<') {
        static const char *const ent[][2] = {
            {"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&apos;", "'"}};
        for (const char *p = in->data; (p = strstr(p, "<loc>")) != NULL;) {
            p += 5;
            const char *end = strstr(p, "</loc>");
            ck_assert_ptr_nonnull(end);
            size_t n = 0;
            while (p < end && n + 1 < sizeof loc) {
                size_t k = 0;
                while (k < 5 && strncmp(p, ent[k][0], strlen(ent[k][0])) != 0)
                    k++;
                if (k < 5) {
                    loc[n++] = ent[k][1][0];
                    p += strlen(ent[k][0]);
                } else {
                    loc[n++] = *p++;
                }
            }
            loc[n] = '\0';
            fn(arg, loc);
            p = end;
        }
    } else {
        for (const char *p = in->data; p && *p;) {
            size_t n = strcspn(p, "\n");
            snprintf(loc, sizeof loc, "%.*s", (int)n, p);
            if (n > 0)
                fn(arg, loc);
            p += n + (p[n] == '\n');
        }
    }
    free(plain.data);
}

static void collect_loc(void *arg, const char *loc)
{
    struct lines *l = arg;
    l->line = realloc(l->line, (l->count + 1) * sizeof *l->line);
    ck_assert_ptr_nonnull(l->line);
    l->line[l->count] = strdup(loc);
    ck_assert_ptr_nonnull(l->line[l->count]);
    l->count++;
}

static void free_locs(struct lines *l)
{
    for (size_t i = 0; i < l->count; i++)
        free(l->line[i]);
    free(l->line);
    memset(l, 0, sizeof *l);
}

START_TEST(sitemap_files_list_every_nofollow_page)
{
    struct own o;
    static const char *const extra[] = {"--sitemap", NULL};
    own_start(&o, "sitemap", "127.0.0.2", extra); /* --pages 10 */
    char want[256], host[64];
    snprintf(host, sizeof host, "http://%s:%u", o.host, o.port);

    /* robots.txt names the sitemap on the host the client asked for. */
    struct reply r;
    own_fetch(&o, "/robots.txt", &r);
    ck_assert_int_eq(r.status, 200);
    snprintf(want, sizeof want, "User-agent: *\nDisallow:\nSitemap: %s/sitemap.xml\n", host);
    ck_assert_str_eq(r.body.data, want);
    free(r.body.data);

    /* The index lists the three files, in order. */
    own_fetch(&o, "/sitemap.xml", &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.type, "application/xml");
    ck_assert_ptr_nonnull(strstr(
        r.body.data, "<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">"));
    struct lines locs = {0};
    sitemap_locs(&r.body, collect_loc, &locs);
    free(r.body.data);
    static const char *const files[] = {"/sitemaps/pages-1.xml", "/sitemaps/pages-2.xml.gz",
                                        "/sitemaps/pages-3.txt"};
    static const char *const types[] = {"application/xml", "application/gzip",
                                        "text/plain; charset=utf-8"};
    ck_assert_uint_eq(locs.count, 3);
    for (size_t i = 0; i < 3; i++) {
        snprintf(want, sizeof want, "%s%s", host, files[i]);
        ck_assert_str_eq(locs.line[i], want);
    }
    free_locs(&locs);

    /* Each file has its type and no Content-Encoding (the .gz one is a
     * gzip file, not a coding); together they list each page once. */
    int seen[10] = {0};
    size_t others = 0;
    for (size_t i = 0; i < 3; i++) {
        own_fetch(&o, files[i], &r);
        ck_assert_int_eq(r.status, 200);
        ck_assert_str_eq(r.type, types[i]);
        ck_assert_str_eq(r.encoding, "");
        if (i == 1) {
            ck_assert_uint_ge(r.body.len, 2);
            ck_assert_int_eq((unsigned char)r.body.data[0], 0x1f);
            ck_assert_int_eq((unsigned char)r.body.data[1], 0x8b);
        }
        if (i == 0)
            ck_assert_ptr_nonnull(strstr(r.body.data, "?from=sitemap&amp;x=1</loc>"));
        sitemap_locs(&r.body, collect_loc, &locs);
        free(r.body.data);
        for (size_t k = 0; k < locs.count; k++) {
            const char *loc = locs.line[k];
            size_t hl = strlen(host);
            unsigned id;
            int end = 0;
            if (strncmp(loc, host, hl) == 0 &&
                sscanf(loc + hl, "/nofollow/%u.html%n", &id, &end) == 1 &&
                loc[hl + (size_t)end] == '\0' && id < 10) {
                seen[id]++;
                continue;
            }
            others++;
            snprintf(want, sizeof want, "%s/p/0.html?from=sitemap&x=1", host);
            ck_assert_msg(i == 0 &&
                              (strcmp(locs.line[k], want) == 0 ||
                               strcmp(locs.line[k], "http://elsewhere.invalid/p/0.html") == 0),
                          "unexpected location '%s' in %s", locs.line[k], files[i]);
        }
        free_locs(&locs);
    }
    for (unsigned id = 0; id < 10; id++)
        ck_assert_msg(seen[id] == 1, "/nofollow/%u.html listed %d times", id, seen[id]);
    ck_assert_uint_eq(others, 2);

    /* The page with a query is page 0, served as HTML. */
    own_fetch(&o, "/p/0.html?from=sitemap&x=1", &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.type, "text/html; charset=utf-8");
    ck_assert_ptr_nonnull(strstr(r.body.data, "<title>Page 0</title>"));
    free(r.body.data);
    own_stop(&o);
    own_clean(&o);

    /* Without --sitemap, none of it exists and robots.txt is unchanged. */
    own_start(&o, "nositemap", NULL, NULL);
    own_fetch(&o, "/robots.txt", &r);
    ck_assert_str_eq(r.body.data, "User-agent: *\nDisallow:\n");
    free(r.body.data);
    own_fetch(&o, "/sitemap.xml", &r);
    ck_assert_int_eq(r.status, 404);
    free(r.body.data);
    own_fetch(&o, "/sitemaps/pages-3.txt", &r);
    ck_assert_int_eq(r.status, 404);
    free(r.body.data);
    own_stop(&o);
    own_clean(&o);
}
END_TEST

struct sitemap_crawl {
    struct crawl *c;
    const char *prefix; /* "http://127.0.0.1:PORT/": host scope */
    char *maps[8];      /* the sitemap URLs found, read as sitemaps */
    size_t nmaps;
};

static void admit_loc(void *arg, const char *loc)
{
    struct sitemap_crawl *s = arg;
    char url[2200];
    if (canonical(loc, loc, url, sizeof url) == 0 &&
        strncmp(url, s->prefix, strlen(s->prefix)) == 0)
        admit(s->c, url);
}

static void admit_map(void *arg, const char *loc)
{
    struct sitemap_crawl *s = arg;
    ck_assert_uint_lt(s->nmaps, 8);
    s->maps[s->nmaps++] = strdup(loc);
    admit_loc(arg, loc);
}

static int is_map(const struct sitemap_crawl *s, const char *url)
{
    for (size_t i = 0; i < s->nmaps; i++)
        if (strcmp(s->maps[i], url) == 0)
            return 1;
    return 0;
}

START_TEST(sitemap_truth_equals_a_crawl_seeded_from_robots)
{
    struct own o;
    static const char *const extra[] = {"--pages", "50", "--sitemap", NULL};
    own_start(&o, "smcrawl", NULL, extra); /* the later --pages wins */
    char prefix[64], port[16], robots[96];
    own_url(&o, "/", prefix, sizeof prefix);
    own_url(&o, "/robots.txt", robots, sizeof robots);
    snprintf(port, sizeof port, "%u", o.port);

    struct crawl c = {.cap = 1u << 16};
    c.queue = calloc(c.cap, sizeof *c.queue);
    ck_assert(hcreate_r(c.cap * 2, &c.seen));
    struct sitemap_crawl s = {.c = &c, .prefix = prefix};
    CURL *h = curl_easy_init();
    /* Seeds: "/" and the Sitemap lines of robots.txt, which is not
     * counted as a fetch of the crawl. */
    admit(&c, prefix);
    struct reply r;
    fetch_with(h, robots, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    for (const char *p = r.body.data; (p = strstr(p, "\nSitemap: ")) != NULL;) {
        p += 10;
        char loc[256];
        snprintf(loc, sizeof loc, "%.*s", (int)strcspn(p, "\n"), p);
        admit_map(&s, loc);
    }
    free(r.body.data);
    ck_assert_uint_eq(s.nmaps, 1);
    for (size_t head = 0; head < c.count; head++) {
        fetch_with(h, c.queue[head], "decode", &r);
        if (r.rc == CURLE_OK && r.status / 100 == 3 && r.location[0]) {
            char url[2200];
            if (canonical(c.queue[head], r.location, url, sizeof url) == 0)
                admit(&c, url);
        } else if (r.rc == CURLE_OK && r.status == 200 && is_map(&s, c.queue[head])) {
            int index = strstr(c.queue[head], "/sitemap.xml") != NULL;
            sitemap_locs(&r.body, index ? admit_map : admit_loc, &s);
        } else if (r.rc == CURLE_OK && r.status == 200 &&
                   strncasecmp(r.type, "text/html", 9) == 0) {
            extract(&c, c.queue[head], &r.body);
        }
        free(r.body.data);
    }
    curl_easy_cleanup(h);
    own_stop(&o);
    own_clean(&o);
    ck_assert_uint_eq(s.nmaps, 4);

    const char *const args[] = {"--truth", "--port", port, "--pages", "50", "--sitemap", NULL};
    const char *const plain[] = {"--truth", "--port", port, "--pages", "50", NULL};
    struct lines t, t0;
    ck_assert_int_eq(run_web(args, &t), 0);
    ck_assert_int_eq(run_web(plain, &t0), 0);
    assert_crawl_is_truth(&c, &t);
    size_t i;
    /* The sitemaps add themselves, the 50 nofollow pages and the query. */
    ck_assert_uint_eq(t.count, t0.count + 4 + 50 + 1);
    ck_assert_uint_eq(count_containing(&t, "/nofollow/"), 50);
    ck_assert_uint_eq(count_containing(&t, "elsewhere"), 0);
    ck_assert_uint_eq(count_containing(&t, "/robots.txt"), 0);
    char want[128];
    own_url(&o, "/p/0.html?from=sitemap&x=1", want, sizeof want);
    ck_assert(has_line(&t, want));
    for (i = 0; i < c.count; i++)
        free(c.queue[i]);
    free(c.queue);
    for (i = 0; i < s.nmaps; i++)
        free(s.maps[i]);
    hdestroy_r(&c.seen);
    lines_free(&t);
    lines_free(&t0);
}
END_TEST

START_TEST(sitemap_needs_robots_allow_and_few_pages)
{
    const char *const bad[][6] = {
        {"--sitemap", "--robots", "404", NULL},
        {"--robots", "redirect", "--sitemap", NULL},
        {"--sitemap", "--robots", "hang", NULL},
        {"--sitemap", "--pages", "120001", NULL},
        {"--truth", "--sitemap", "--robots", "500", NULL},
    };
    struct lines t;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_msg(run_web(bad[i], &t) == 2, "%s %s %s accepted", bad[i][0], bad[i][1],
                      bad[i][2]);
        ck_assert_uint_eq(t.count, 0);
        lines_free(&t);
    }
    const char *const ok[] = {"--truth", "--robots", "allow", "--sitemap",
                              "--pages", "120000",   NULL};
    ck_assert_int_eq(run_web(ok, &t), 0);
    ck_assert_uint_gt(t.count, 120000);
    lines_free(&t);
}
END_TEST

static Suite *web_suite(void)
{
    Suite *s = suite_create("web");
    TCase *http = tcase_create("http");
    tcase_add_unchecked_fixture(http, web_setup, web_teardown);
    tcase_set_timeout(http, 60);
    tcase_add_test(http, home_links_the_first_page_and_the_hostile_index);
    tcase_add_test(http, pages_exist_up_to_the_page_count);
    tcase_add_test(http, pages_are_deterministic);
    tcase_add_test(http, redirects_name_their_targets);
    tcase_add_test(http, missing_pages_are_404);
    tcase_add_test(http, files_have_their_content_types);
    tcase_add_test(http, gzip_only_when_accepted);
    tcase_add_test(http, huge_page_announces_twenty_mebibytes);
    tcase_add_test(http, endless_page_does_not_end);
    tcase_add_test(http, slow_page_arrives_whole);
    tcase_add_test(http, only_get_and_head);
    tcase_add_test(http, truth_is_sorted_unique_and_canonical);
    tcase_add_test(http, truth_depends_on_seed_and_hostile_only_as_asked);
    tcase_add_test(http, truth_refuses_port_zero);
    tcase_add_loop_test(http, edges_join_the_urls_of_the_truth, 0, 2);
    tcase_add_test(http, bad_arguments_are_refused);
    tcase_add_test(http, stops_cleanly_on_sigterm);
    tcase_add_test(http, truth_equals_a_crawl_over_http);
    tcase_add_test(http, robots_answers_as_each_mode_says);
    tcase_add_test(http, robots_file_is_served_byte_for_byte);
    tcase_add_test(http, robots_redirect_leads_to_an_allow_file);
    tcase_add_test(http, robots_hang_sends_nothing_and_stops_cleanly);
    tcase_add_test(http, access_log_has_a_line_per_request);
    tcase_add_test(http, access_log_records_cut_responses_and_appends);
    tcase_add_test(http, other_loopback_addresses_are_their_own_hosts);
    tcase_add_test(http, delay_ms_delays_html_pages);
    tcase_add_test(http, truth_ignores_robots);
    tcase_add_test(http, bad_politeness_arguments_are_refused);
    tcase_add_test(http, sitemap_files_list_every_nofollow_page);
    tcase_add_test(http, sitemap_truth_equals_a_crawl_seeded_from_robots);
    tcase_add_test(http, sitemap_needs_robots_allow_and_few_pages);
    suite_add_tcase(s, http);
    return s;
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    SRunner *sr = srunner_create(web_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    curl_global_cleanup();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
