/* test-crawl.c - `sieve crawl` against sieve-web, the bundled synthetic web,
 * served on a free loopback port for each test.
 *
 * sieve-web knows every link it serves and prints, with --truth, the exact
 * set of URLs a correct crawler requests from "/" under the default trap
 * guards. These tests compare the crawler's records with that set. */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "via-check.h"

static const char *web_bin, *sieve_bin;
static char tmpdir[64];
static pid_t web_pid;
static unsigned port;
static char base[64];
static bool sitemap; /* the web runs with --sitemap */

enum { PAGES = 400 };

static void path_in_tmp(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "%s/%s", tmpdir, name);
}

static void start_web(void)
{
    web_bin = getenv("SIEVE_WEB");
    sieve_bin = getenv("SIEVE_BIN");
    ck_assert_msg(web_bin && sieve_bin, "SIEVE_WEB and SIEVE_BIN must name the programs");
    strcpy(tmpdir, "/tmp/sieve-crawl-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
    char pages[16];
    snprintf(pages, sizeof pages, "%d", PAGES);
    const char *extra[] = {"--pages", pages, "--drip-ms", "300", sitemap ? "--sitemap" : NULL,
                           NULL};
    web_pid = harness_web_start(tmpdir, "127.0.0.1", extra, &port);
    snprintf(base, sizeof base, "http://127.0.0.1:%u/", port);
}

static void start_web_with_sitemap(void)
{
    sitemap = true;
    start_web();
}

static void stop_web(void)
{
    harness_web_stop(web_pid);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    port = 0;
    sitemap = false;
}

/* ---- URL sets ---- */

typedef struct urlset {
    char **url;
    size_t n;
} urlset;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void urlset_add(urlset *s, const char *u, size_t len)
{
    s->url = realloc(s->url, (s->n + 1) * sizeof *s->url);
    s->url[s->n++] = strndup(u, len);
}

static void urlset_sort(urlset *s)
{
    qsort(s->url, s->n, sizeof *s->url, cmp_str);
}

static void urlset_free(urlset *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->url[i]);
    free(s->url);
}

/* The ground truth of the running web; of the web with --sitemap if
 * with_sitemap. */
static urlset truth_of(bool with_sitemap)
{
    char out[128], portarg[16], pages[16];
    path_in_tmp(out, sizeof out, "truth.txt");
    snprintf(portarg, sizeof portarg, "%u", port);
    snprintf(pages, sizeof pages, "%d", PAGES);
    char *argv[] = {(char *)web_bin,
                    "--truth",
                    "--port",
                    portarg,
                    "--pages",
                    pages,
                    with_sitemap ? "--sitemap" : NULL,
                    NULL};
    ck_assert_int_eq(harness_wait(harness_spawn(argv, out, NULL)), 0);
    char *text = harness_slurp(out);
    urlset s = {0};
    for (char *line = strtok(text, "\n"); line != NULL; line = strtok(NULL, "\n"))
        urlset_add(&s, line, strlen(line));
    free(text);
    urlset_sort(&s);
    ck_assert_uint_gt(s.n, PAGES);
    return s;
}

/* ---- running the crawler ---- */

typedef struct crawl_run {
    int status;
    char *records; /* the JSON Lines output */
    char *log;     /* stderr */
    urlset fetched;
} crawl_run;

/* Runs sieve crawl with test-friendly timeouts and the extra arguments,
 * seeded with seed. */
static crawl_run crawl_from(const char *seed, const char *const *extra)
{
    char out[128], err[128];
    path_in_tmp(out, sizeof out, "records.jsonl");
    path_in_tmp(err, sizeof err, "stderr.txt");
    /* one host, our own: no delay, as many connections as transfers */
    char *argv[64] = {(char *)sieve_bin, "crawl", "--quiet", "-o", out, "--timeout", "30",
                      "--low-speed", "1000,2", "--max-page-bytes", "8000000", "--delay", "0",
                      "--host-connections", "64",
                      /* the hostile web's broken and slow pages are tried
                         again: once, and soon */
                      "--retries", "1", "--retry-wait", "0.05", "--retry-max-wait", "0.5"};
    int n = 21;
    for (; extra != NULL && *extra != NULL; extra++)
        argv[n++] = (char *)*extra;
    argv[n++] = (char *)seed;
    argv[n] = NULL;
    crawl_run r = {.status = harness_wait(harness_spawn(argv, NULL, err))};
    r.records = harness_slurp(out);
    r.log = harness_slurp(err);
    if (r.records[0] != '\0') {
        const char *files[] = {out};
        harness_check_records(files, 1);
    }
    char *copy = strdup(r.records);
    for (char *line = strtok(copy, "\n"); line != NULL; line = strtok(NULL, "\n")) {
        char url[4096];
        ck_assert_msg(record_field(line, "url", url, sizeof url) == 0, "record without url: %s",
                      line);
        urlset_add(&r.fetched, url, strlen(url));
    }
    free(copy);
    urlset_sort(&r.fetched);
    return r;
}

/* The same, seeded with the web's entry page. */
static crawl_run crawl(const char *const *extra)
{
    return crawl_from(base, extra);
}

static void crawl_run_free(crawl_run *r)
{
    free(r->records);
    free(r->log);
    urlset_free(&r->fetched);
}

/* The record of url, copied into buf. */
static int record_of(const crawl_run *r, const char *url, char *buf, size_t cap)
{
    char pat[512];
    snprintf(pat, sizeof pat, "{\"url\":\"%s\"", url);
    const char *p = strstr(r->records, pat);
    if (p == NULL)
        return -1;
    size_t n = strcspn(p, "\n");
    if (n >= cap)
        return -1;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return 0;
}

static void assert_same_sets(const urlset *want, const urlset *got)
{
    size_t i = 0, j = 0, shown = 0;
    while (i < want->n || j < got->n) {
        int c = i == want->n ? 1 : j == got->n ? -1 : strcmp(want->url[i], got->url[j]);
        if (c == 0) {
            ck_assert_msg(j + 1 == got->n || strcmp(got->url[j], got->url[j + 1]) != 0,
                          "fetched twice: %s", got->url[j]);
            i++, j++;
            continue;
        }
        if (shown++ < 10)
            fprintf(stderr, "%s %s\n",
                    c < 0 ? "missing:" : "extra:  ", c < 0 ? want->url[i] : got->url[j]);
        c < 0 ? i++ : j++;
    }
    ck_assert_msg(shown == 0, "%zu differences between the crawl and the ground truth", shown);
    ck_assert_uint_eq(want->n, got->n);
}

/* The running web's graph (of the web with --sitemap if with_sitemap):
 * sorted sieve-web --edges lines, *n of them. */
static char **edges_of(bool with_sitemap, size_t *n)
{
    char pages[16];
    snprintf(pages, sizeof pages, "%d", PAGES);
    const char *extra[] = {"--pages", pages, with_sitemap ? "--sitemap" : NULL, NULL};
    return harness_web_edges(tmpdir, "127.0.0.1", port, extra, n);
}

/* Every record's referrer and first URL agree with the web's graph
 * (via-check.h), seeded by seeds (NULL-ended); returns how many records
 * name a referrer. */
static size_t assert_vias(const crawl_run *r, bool with_sitemap, const char *const *seeds)
{
    size_t n, with_referrer = 0;
    char **edges = edges_of(with_sitemap, &n);
    char *copy = strdup(r->records);
    for (char *line = strtok(copy, "\n"); line != NULL; line = strtok(NULL, "\n")) {
        const char *bad = via_check_line(edges, n, seeds, line);
        ck_assert_msg(bad == NULL, "%s", bad);
        with_referrer += strstr(line, "\"referrer\":null") == NULL;
    }
    free(copy);
    harness_lines_free(edges);
    return with_referrer;
}

/* ---- tests ---- */

/* Crawls with args and checks that exactly the web's truth was fetched
 * (the truth of the web with --sitemap if with_sitemap), every URL but
 * the seed with the page that linked to it. */
static void assert_crawl_is_truth(bool with_sitemap, const char *const *args)
{
    urlset want = truth_of(with_sitemap);
    crawl_run r = crawl(args);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.log);
    assert_same_sets(&want, &r.fetched);
    ck_assert_ptr_nonnull(strstr(r.log, "crawl done"));
    const char *seeds[] = {base, NULL};
    ck_assert_uint_eq(assert_vias(&r, with_sitemap, seeds), r.fetched.n - 1);
    urlset_free(&want);
    crawl_run_free(&r);
}

START_TEST(exact_seen_set_fetches_exactly_the_ground_truth)
{
    const char *args[] = {"--seen", "exact", NULL};
    assert_crawl_is_truth(false, args);
}
END_TEST

START_TEST(bloom_at_one_in_a_million_fetches_exactly_the_ground_truth)
{
    const char *args[] = {"--seen", "bloom", "--fp-rate", "1e-6", "--capacity", "200000", NULL};
    assert_crawl_is_truth(false, args);
}
END_TEST

/* Each hostile page ends as a record with a clear error or a bounded
 * result, and the crawl still completes. */
START_TEST(hostile_pages_end_with_clear_records)
{
    const char *args[] = {"--seen", "exact", NULL};
    crawl_run r = crawl(args);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.log);
    char url[256], rec[8192], v[256];
    struct {
        const char *path;
        const char *error; /* substring of the error, or NULL for none */
    } cases[] = {
        {"hostile/endless.html", "byte limit"},
        {"hostile/huge.html", "byte limit"},
        {"hostile/slow.html", "slow"},
        {"hostile/malformed.html", NULL},
        {"hostile/bad-utf8.html", NULL},
        {"hostile/gzip.html", NULL},
        {"hostile/many.html", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(url, sizeof url, "%s%s", base, cases[i].path);
        ck_assert_msg(record_of(&r, url, rec, sizeof rec) == 0, "no record of %s", url);
        ck_assert_int_eq(record_field(rec, "error", v, sizeof v), 0);
        if (cases[i].error != NULL)
            ck_assert_msg(strstr(v, cases[i].error) != NULL, "%s: error '%s'", url, v);
        else
            ck_assert_msg(strcmp(v, "null") == 0, "%s: %s", url, rec);
        ck_assert_int_eq(record_field(rec, "bytes", v, sizeof v), 0);
        ck_assert_uint_le(strtoull(v, NULL, 10), 8000000);
    }
    /* the page with 100,000 links: every one of them seen */
    snprintf(url, sizeof url, "%shostile/many.html", base);
    record_of(&r, url, rec, sizeof rec);
    record_field(rec, "links_found", v, sizeof v);
    ck_assert_str_eq(v, "100000");
    crawl_run_free(&r);
}
END_TEST

/* The record of url in r names referrer and first_url (NULL: null). */
static void assert_via_of(const crawl_run *r, const char *url, const char *referrer,
                          const char *first_url)
{
    char rec[8192], v[256];
    ck_assert_msg(record_of(r, url, rec, sizeof rec) == 0, "no record of %s", url);
    ck_assert_int_eq(record_field(rec, "referrer", v, sizeof v), 0);
    ck_assert_str_eq(v, referrer != NULL ? referrer : "null");
    ck_assert_int_eq(record_field(rec, "first_url", v, sizeof v), 0);
    ck_assert_str_eq(v, first_url != NULL ? first_url : "null");
}

/* The first page /p/J.html of the web's graph that a chain of two
 * redirects, /r2/J (302) to /r/J (301) to it, leads to: J, or -1. */
static long two_hop_chain(char *const *edges, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        long j;
        char from[128];
        if (sscanf(edges[i], "redirect %127s", from) == 1 &&
            sscanf(from + strlen(base), "r2/%ld", &j) == 1)
            return j;
    }
    return -1;
}

/* A page of the graph that links to /r/J and not to /p/J.html, into page,
 * with those two URLs into hop and target; false if there is none. */
static bool page_linking_a_redirect(char *const *edges, size_t n, char *page, char *hop,
                                    char *target)
{
    const char *none[] = {NULL};
    for (size_t i = 0; i < n; i++) {
        long j;
        if (sscanf(edges[i], "link %127s %127s", page, hop) != 2 || strstr(page, "/p/") == NULL ||
            sscanf(hop + strlen(base), "r/%ld", &j) != 1)
            continue;
        snprintf(target, 128, "%sp/%ld.html", base, j);
        /* the page must not link to the target itself, nor be it */
        if (via_check(edges, n, none, target, page, NULL) != NULL && strcmp(page, target) != 0)
            return true;
    }
    return false;
}

/* A redirect's target names the URL first requested, which the chain's
 * later hops keep, and the page whose link began the chain: from a seed
 * /r2/J (302 to /r/J, 301 to /p/J.html), and from a page that links to
 * /r/K and not to /p/K.html itself. */
START_TEST(redirect_targets_name_the_first_url)
{
    size_t n;
    char **edges = edges_of(false, &n);
    long j = two_hop_chain(edges, n);
    char page[128], hop[128], target[128];
    bool found = page_linking_a_redirect(edges, n, page, hop, target);
    harness_lines_free(edges);
    ck_assert_msg(j >= 0, "no /r2/ redirect in the web");
    ck_assert_msg(found, "no page links to /r/K without /p/K.html");

    const char *depth0[] = {"--max-depth", "0", NULL};
    char seed[128], rj[128], pj[128];
    snprintf(seed, sizeof seed, "%sr2/%ld", base, j);
    snprintf(rj, sizeof rj, "%sr/%ld", base, j);
    snprintf(pj, sizeof pj, "%sp/%ld.html", base, j);
    crawl_run r = crawl_from(seed, depth0);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.log);
    ck_assert_uint_eq(r.fetched.n, 3);
    assert_via_of(&r, seed, NULL, NULL);
    assert_via_of(&r, rj, NULL, seed);
    assert_via_of(&r, pj, NULL, seed);
    const char *seeds[] = {seed, NULL};
    assert_vias(&r, false, seeds);
    crawl_run_free(&r);

    const char *depth1[] = {"--max-depth", "1", NULL};
    r = crawl_from(page, depth1);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.log);
    assert_via_of(&r, hop, page, NULL);
    assert_via_of(&r, target, page, hop);
    const char *from_page[] = {page, NULL};
    assert_vias(&r, false, from_page);
    crawl_run_free(&r);
}
END_TEST

START_TEST(max_depth_is_honoured)
{
    const char *args[] = {"--seen", "exact", "--max-depth", "1", NULL};
    crawl_run r = crawl(args);
    ck_assert_int_eq(r.status, 0);
    char *copy = strdup(r.records);
    size_t n = 0;
    for (char *line = strtok(copy, "\n"); line != NULL; line = strtok(NULL, "\n"), n++) {
        char v[32];
        ck_assert_int_eq(record_field(line, "depth", v, sizeof v), 0);
        ck_assert_int_le(atoi(v), 1);
    }
    free(copy);
    ck_assert_uint_gt(n, 2);
    ck_assert_uint_lt(n, PAGES);
    crawl_run_free(&r);
}
END_TEST

START_TEST(max_pages_is_honoured)
{
    const char *args[] = {"--max-pages", "25", NULL};
    crawl_run r = crawl(args);
    ck_assert_int_eq(r.status, 0);
    ck_assert_uint_eq(r.fetched.n, 25);
    ck_assert_ptr_nonnull(strstr(r.log, "page limit reached"));
    crawl_run_free(&r);
}
END_TEST

START_TEST(deny_and_allow_expressions_are_honoured)
{
    const char *args[] = {"--seen",           "exact", "--deny", "/p/[0-9]*5\\.html$", "--allow",
                          "/(p|hostile)/|/$", NULL};
    crawl_run r = crawl(args);
    ck_assert_int_eq(r.status, 0);
    ck_assert_uint_gt(r.fetched.n, 10);
    for (size_t i = 0; i < r.fetched.n; i++) {
        const char *u = r.fetched.url[i];
        size_t len = strlen(u);
        ck_assert_msg(!(len > 6 && strcmp(u + len - 6, "5.html") == 0 && strstr(u, "/p/")),
                      "denied URL fetched: %s", u);
        ck_assert_msg(strstr(u, "/p/") || strstr(u, "/hostile/") || u[len - 1] == '/',
                      "URL outside --allow fetched: %s", u);
    }
    crawl_run_free(&r);
}
END_TEST

START_TEST(per_host_cap_is_honoured)
{
    const char *args[] = {"--max-pages-per-host", "30", NULL};
    crawl_run r = crawl(args);
    ck_assert_int_eq(r.status, 0);
    /* the seed itself is not counted: seeds are never refused */
    ck_assert_uint_le(r.fetched.n, 31);
    ck_assert_uint_ge(r.fetched.n, 30);
    crawl_run_free(&r);
}
END_TEST

START_TEST(capacity_warning_reaches_the_log)
{
    const char *args[] = {"--capacity", "100", NULL};
    crawl_run r = crawl(args);
    ck_assert_int_eq(r.status, 0);
    const char *w = strstr(r.log, "passed its capacity 100");
    ck_assert_msg(w != NULL, "no capacity warning in: %s", r.log);
    crawl_run_free(&r);
}
END_TEST

START_TEST(sigint_stops_the_crawl_cleanly)
{
    char out[128], err[128];
    path_in_tmp(out, sizeof out, "records.jsonl");
    path_in_tmp(err, sizeof err, "stderr.txt");
    /* one worker, one transfer at a time, against the slow page: the crawl
     * is certainly still running when the signal comes */
    char slow[128];
    snprintf(slow, sizeof slow, "%shostile/slow.html", base);
    char *argv[] = {
        (char *)sieve_bin, "crawl", "-q", "-w", "1", "-c", "1", "-o", out, slow, base, NULL};
    pid_t pid = harness_spawn(argv, NULL, err);
    usleep(500 * 1000);
    kill(pid, SIGINT);
    int status = harness_wait(pid);
    ck_assert_int_eq(status, 128 + SIGINT);
    char *log = harness_slurp(err);
    ck_assert_msg(strstr(log, "interrupted") != NULL, "%s", log);
    free(log);
}
END_TEST

START_TEST(bad_arguments_and_seeds_get_clear_errors)
{
    char err[128], seeds[128];
    path_in_tmp(err, sizeof err, "stderr.txt");
    path_in_tmp(seeds, sizeof seeds, "seeds.txt");
    char *bad[][6] = {
        {(char *)sieve_bin, "crawl", NULL},
        {(char *)sieve_bin, "crawl", "--workers", "0", base, NULL},
        {(char *)sieve_bin, "crawl", "--fp-rate", "2", base, NULL},
        {(char *)sieve_bin, "crawl", "--seen", "maybe", base, NULL},
        {(char *)sieve_bin, "crawl", "--deny", "(", base, NULL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int st = harness_wait(harness_spawn(bad[i], NULL, err));
        char *log = harness_slurp(err);
        ck_assert_msg(st == 2, "case %zu: exit %d, %s", i, st, log);
        ck_assert_msg(strstr(log, "sieve crawl:") != NULL, "case %zu: %s", i, log);
        free(log);
    }
    /* a seed file with bad lines: each reported with its line, the good one crawled */
    FILE *fp = fopen(seeds, "w");
    fprintf(fp, "# seeds\n\nnot a url\nmailto:someone@example.org\n%shostile/gzip.html\n", base);
    fclose(fp);
    char out[128];
    path_in_tmp(out, sizeof out, "records.jsonl");
    char *argv[] = {(char *)sieve_bin, "crawl", "-q", "--max-pages", "1", "-o", out, seeds, NULL};
    int st = harness_wait(harness_spawn(argv, NULL, err));
    char *log = harness_slurp(err);
    ck_assert_msg(st == 0, "exit %d: %s", st, log);
    char where[160];
    snprintf(where, sizeof where, "%s:3:", seeds);
    ck_assert_msg(strstr(log, where) != NULL, "%s", log);
    snprintf(where, sizeof where, "%s:4:", seeds);
    ck_assert_msg(strstr(log, where) != NULL, "%s", log);
    free(log);
    char *records = harness_slurp(out);
    ck_assert_ptr_nonnull(strstr(records, "hostile/gzip.html"));
    free(records);
}
END_TEST

/* ---- sitemaps ---- */

/* robots.txt names a sitemap index, which names an XML, a gzipped XML and
 * a text sitemap; between them they list the pages only nofollow links
 * reach. The crawl fetches exactly what the web's --sitemap truth says. */
START_TEST(sitemaps_seed_the_host)
{
    urlset want = truth_of(true);
    const char *args[] = {"--seen", "exact", NULL};
    crawl_run r = crawl(args);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.log);
    assert_same_sets(&want, &r.fetched);
    ck_assert_msg(strstr(r.log, "sitemaps: 4 queued, 0 left out") != NULL, "%s", r.log);
    const char *files[] = {"sitemap.xml", "sitemaps/pages-1.xml", "sitemaps/pages-2.xml.gz",
                           "sitemaps/pages-3.txt"};
    char url[256], rec[8192], v[256];
    size_t listed = 0;
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(url, sizeof url, "%s%s", base, files[i]);
        ck_assert_msg(record_of(&r, url, rec, sizeof rec) == 0, "no record of %s", url);
        ck_assert_int_eq(record_field(rec, "error", v, sizeof v), 0);
        ck_assert_msg(strcmp(v, "null") == 0, "%s", rec);
        ck_assert_int_eq(record_field(rec, "links_found", v, sizeof v), 0);
        listed += strtoull(v, NULL, 10);
    }
    /* 3 sitemaps, PAGES nofollow pages, one page with a query, one page on
     * another host (left out by the host scope) */
    ck_assert_uint_eq(listed, 3 + PAGES + 2);
    ck_assert_msg(strstr(r.records, "elsewhere.invalid") == NULL, "off-site URL fetched");
    /* the sitemaps name where they were listed, and their pages them */
    const char *seeds[] = {base, NULL};
    assert_vias(&r, true, seeds);
    snprintf(url, sizeof url, "%ssitemap.xml", base);
    record_of(&r, url, rec, sizeof rec);
    ck_assert_int_eq(record_field(rec, "referrer", v, sizeof v), 0);
    snprintf(url, sizeof url, "%srobots.txt", base);
    ck_assert_str_eq(v, url);
    urlset_free(&want);
    crawl_run_free(&r);
}
END_TEST

START_TEST(no_sitemaps_leaves_them_unread)
{
    const char *args[] = {"--seen", "exact", "--no-sitemaps", NULL};
    assert_crawl_is_truth(false, args);
}
END_TEST

/* --max-sitemaps 1: the index is read, the sitemaps it lists are not. */
START_TEST(max_sitemaps_is_honoured)
{
    const char *args[] = {"--seen", "exact", "--max-sitemaps", "1", NULL};
    crawl_run r = crawl(args);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.log);
    ck_assert_msg(strstr(r.log, "sitemaps: 1 queued, 3 left out") != NULL, "%s", r.log);
    ck_assert_ptr_null(strstr(r.records, "/sitemaps/pages-"));
    ck_assert_ptr_null(strstr(r.records, "/nofollow/"));
    crawl_run_free(&r);
}
END_TEST

/* Sitemap lines naming what is no sitemap: a text file, an HTML page, a
 * 404 and a page that never ends. Each gets a record that says so, and
 * the crawl completes. Relative Sitemap values resolve against the
 * robots.txt URL. */
START_TEST(bad_sitemaps_end_with_clear_records)
{
    char robots[128];
    path_in_tmp(robots, sizeof robots, "robots.txt");
    FILE *fp = fopen(robots, "w");
    fputs("User-agent: *\nDisallow:\nSitemap: /files/3.txt\nSitemap: /hostile/malformed.html\n"
          "Sitemap: /missing/1.html\nSitemap: /hostile/endless.html\n",
          fp);
    fclose(fp);
    char robots_arg[160];
    snprintf(robots_arg, sizeof robots_arg, "file:%s", robots);
    const char *extra[] = {"--pages", "20", "--robots", robots_arg, NULL};
    unsigned p2;
    pid_t pid = harness_web_start(tmpdir, "127.0.0.2", extra, &p2);
    char seed[64], out[128], err[128];
    snprintf(seed, sizeof seed, "http://127.0.0.2:%u/", p2);
    path_in_tmp(out, sizeof out, "bad-sitemaps.jsonl");
    path_in_tmp(err, sizeof err, "bad-sitemaps.txt");
    char *argv[] = {(char *)sieve_bin,
                    "crawl",
                    "-q",
                    "--delay",
                    "0",
                    "--host-connections",
                    "8",
                    "--max-page-bytes",
                    "100000",
                    "--timeout",
                    "20",
                    "--retries", /* the slow page: one 15 s timeout is enough */
                    "0",
                    "-o",
                    out,
                    seed,
                    NULL};
    int st = harness_wait(harness_spawn(argv, NULL, err));
    harness_web_stop(pid);
    char *log = harness_slurp(err);
    ck_assert_msg(st == 0, "exit %d: %s", st, log);
    ck_assert_msg(strstr(log, "sitemaps: 4 queued") != NULL, "%s", log);
    crawl_run r = {.records = harness_slurp(out), .log = log};
    struct {
        const char *path, *error;
    } cases[] = {
        {"files/3.txt", "not a sitemap"},
        {"hostile/malformed.html", "not a sitemap"},
        {"missing/1.html", NULL},
        /* refused at its root element: the download stops there */
        {"hostile/endless.html", "not a sitemap"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char url[128], rec[8192], v[256];
        snprintf(url, sizeof url, "%s%s", seed, cases[i].path);
        ck_assert_msg(record_of(&r, url, rec, sizeof rec) == 0, "no record of %s", url);
        ck_assert_int_eq(record_field(rec, "error", v, sizeof v), 0);
        if (cases[i].error != NULL)
            ck_assert_msg(strstr(v, cases[i].error) != NULL, "%s: error '%s'", url, v);
        else
            ck_assert_msg(strcmp(v, "null") == 0, "%s", rec);
    }
    free(r.records);
    free(r.log);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("crawl");
    TCase *tc = tcase_create("local web");
    tcase_add_checked_fixture(tc, start_web, stop_web);
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, exact_seen_set_fetches_exactly_the_ground_truth);
    tcase_add_test(tc, bloom_at_one_in_a_million_fetches_exactly_the_ground_truth);
    tcase_add_test(tc, hostile_pages_end_with_clear_records);
    tcase_add_test(tc, redirect_targets_name_the_first_url);
    tcase_add_test(tc, max_depth_is_honoured);
    tcase_add_test(tc, max_pages_is_honoured);
    tcase_add_test(tc, deny_and_allow_expressions_are_honoured);
    tcase_add_test(tc, per_host_cap_is_honoured);
    tcase_add_test(tc, capacity_warning_reaches_the_log);
    tcase_add_test(tc, sigint_stops_the_crawl_cleanly);
    tcase_add_test(tc, bad_arguments_and_seeds_get_clear_errors);
    suite_add_tcase(s, tc);
    TCase *sm = tcase_create("sitemaps");
    tcase_add_checked_fixture(sm, start_web_with_sitemap, stop_web);
    tcase_set_timeout(sm, 240);
    tcase_add_test(sm, sitemaps_seed_the_host);
    tcase_add_test(sm, no_sitemaps_leaves_them_unread);
    tcase_add_test(sm, max_sitemaps_is_honoured);
    tcase_add_test(sm, bad_sitemaps_end_with_clear_records);
    suite_add_tcase(s, sm);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
