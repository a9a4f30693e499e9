/* test-archive.c - `sieve crawl --warc` and `sieve warc-index` against
 * sieve-web, the bundled synthetic web, on a free loopback port.
 *
 * Each archive is judged three ways. warcio, the Webrecorder project's
 * WARC library (tests/warcio.sh and warc-check.mjs), must read every
 * record, find every digest right, every request paired with its
 * response, and make the same CDXJ index as ours. This test's own reader
 * (plain files, or zlib member by member) finds every JSON record's
 * response at the file and offset the record names, and every CDXJ
 * line's record at its offset; and every response that came whole must
 * hold, byte for byte, what an independent libcurl GET of its URL gets
 * from the server (content coding kept on both sides: gzip stays gzip).
 * ajv checks every JSON record against docs/record.schema.json.
 *
 * Retried attempts have no record of their own but are archived all the
 * same; sieve-web never fails on purpose, so those tests crawl a server
 * in this process (libmicrohttpd) whose answers they know one by one. */
#include <arpa/inet.h>
#include <check.h>
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "harness.h"

enum { PAGES = 150 };

static const char *sieve_bin;
static char tmpdir[64];
static pid_t web_pid;
static unsigned port;
static char base[64];

static char *path_in_tmp(const char *name)
{
    static char p[8][256];
    static int i;
    i = (i + 1) % 8;
    snprintf(p[i], sizeof p[i], "%s/%s", tmpdir, name);
    return p[i];
}

/* A path in the test's directory, kept by the caller. */
typedef struct tmp_name {
    char s[256];
} tmp_name;

static tmp_name tmp_path(const char *name)
{
    tmp_name p;
    snprintf(p.s, sizeof p.s, "%s/%s", tmpdir, name);
    return p;
}

static void make_tmpdir(void)
{
    sieve_bin = getenv("SIEVE_BIN");
    ck_assert_msg(getenv("SIEVE_WEB") && sieve_bin,
                  "SIEVE_WEB and SIEVE_BIN must name the programs");
    strcpy(tmpdir, "/tmp/sieve-archive-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

/* sieve-web with its hostile pages and sitemaps, and the extra options. */
static void start_web_with(const char *const *more)
{
    make_tmpdir();
    const char *extra[16] = {"--pages", "150", "--sitemap", "--drip-ms", "20"};
    size_t n = 5;
    for (; more != NULL && *more != NULL; more++)
        extra[n++] = *more;
    extra[n] = NULL;
    web_pid = harness_web_start(tmpdir, "127.0.0.1", extra, &port);
    snprintf(base, sizeof base, "http://127.0.0.1:%u/", port);
}

static void start_web(void)
{
    start_web_with(NULL);
}

static void start_gzip_web(void)
{
    const char *more[] = {"--gzip", NULL};
    start_web_with(more);
}

/* Pages that take a while each: a crawl that is still running when a
 * signal comes. */
static void start_slow_web(void)
{
    const char *more[] = {"--delay-ms", "20", NULL};
    start_web_with(more);
}

static void stop_web(void)
{
    harness_web_stop(web_pid);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
}

/* ---- running sieve ---- */

/* Starts sieve crawl with test-friendly limits, the extra arguments and
 * the web's home page; records to records.jsonl, stderr to stderr.txt. */
static pid_t crawl_start(const char *const *extra)
{
    char *argv[64] = {(char *)sieve_bin, "crawl", "--quiet", "-o", path_in_tmp("records.jsonl"),
                      "--timeout", "20", "--low-speed", "1000,2", "--delay", "0",
                      "--host-connections", "16", "--max-page-bytes", "100K",
                      /* one response per record, but where a test asks for retries */
                      "--retries", "0"};
    int n = 17;
    for (; extra != NULL && *extra != NULL; extra++)
        argv[n++] = (char *)*extra;
    argv[n++] = base;
    argv[n] = NULL;
    return harness_spawn(argv, NULL, path_in_tmp("stderr.txt"));
}

static void crawl_ok(const char *const *extra)
{
    int st = harness_wait(crawl_start(extra));
    char *log = harness_slurp(path_in_tmp("stderr.txt"));
    ck_assert_msg(st == 0, "sieve crawl exit %d: %s", st, log);
    free(log);
}

static int run_sieve(char *const *argv)
{
    return harness_wait(harness_spawn(argv, NULL, path_in_tmp("stderr.txt")));
}

/* ---- reading WARC files on our own ---- */

typedef struct wrec {
    char file[128];  /* its file's name */
    uint64_t offset; /* of its first byte, or of its gzip member */
    char type[32], uri[2100], id[64], to[64], truncated[32], digest[64];
    char *block;
    size_t block_len, head_len; /* head_len: the HTTP head in the block */
} wrec;

typedef struct warc_set {
    wrec *r;
    size_t n, cap;
} warc_set;

static const char *basename_of(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static void header_value(const char *head, const char *name, char *out, size_t cap)
{
    out[0] = '\0';
    char pat[64];
    snprintf(pat, sizeof pat, "\r\n%s: ", name);
    const char *p = strstr(head, pat);
    if (p == NULL)
        return;
    p += strlen(pat);
    size_t n = strcspn(p, "\r");
    if (n < cap) {
        memcpy(out, p, n);
        out[n] = '\0';
    }
}

/* One record from data (len bytes, the record and its two CRLFs);
 * returns its length, or 0 when data holds no whole record. */
static size_t parse_record(const char *file, uint64_t offset, const char *data, size_t len,
                           warc_set *set)
{
    const char *end = memmem(data, len, "\r\n\r\n", 4);
    if (end == NULL || strncmp(data, "WARC/1.1\r\n", 10) != 0)
        return 0;
    size_t head_len = (size_t)(end - data) + 4;
    char *head = strndup(data, head_len);
    char cl[32];
    header_value(head, "Content-Length", cl, sizeof cl);
    size_t block_len = strtoull(cl, NULL, 10);
    if (cl[0] == '\0' || head_len + block_len + 4 > len ||
        memcmp(data + head_len + block_len, "\r\n\r\n", 4) != 0) {
        free(head);
        return 0;
    }
    if (set->n == set->cap) {
        set->cap = set->cap ? 2 * set->cap : 1024;
        set->r = realloc(set->r, set->cap * sizeof *set->r);
    }
    wrec *r = &set->r[set->n++];
    memset(r, 0, sizeof *r);
    snprintf(r->file, sizeof r->file, "%s", file);
    r->offset = offset;
    header_value(head, "WARC-Type", r->type, sizeof r->type);
    header_value(head, "WARC-Target-URI", r->uri, sizeof r->uri);
    header_value(head, "WARC-Record-ID", r->id, sizeof r->id);
    header_value(head, "WARC-Concurrent-To", r->to, sizeof r->to);
    header_value(head, "WARC-Truncated", r->truncated, sizeof r->truncated);
    header_value(head, "WARC-Payload-Digest", r->digest, sizeof r->digest);
    free(head);
    r->block = malloc(block_len + 1);
    memcpy(r->block, data + head_len, block_len);
    r->block[block_len] = '\0';
    r->block_len = block_len;
    const char *he = memmem(r->block, block_len, "\r\n\r\n", 4);
    r->head_len = he != NULL ? (size_t)(he - r->block) + 4 : 0;
    return head_len + block_len + 4;
}

static char *read_file(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    ck_assert_msg(fp != NULL, "%s: %s", path, strerror(errno));
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *data = malloc((size_t)n + 1);
    ck_assert_uint_eq(fread(data, 1, (size_t)n, fp), (size_t)n);
    fclose(fp);
    *len = (size_t)n;
    return data;
}

/* Reads path's whole records into set; returns where the last whole one
 * that ends a fetch (a response, or the warcinfo) ends: what a kill left
 * readable, in pairs. */
static uint64_t read_warc(const char *path, warc_set *set)
{
    size_t len;
    char *data = read_file(path, &len);
    bool gz = strlen(path) > 3 && strcmp(path + strlen(path) - 3, ".gz") == 0;
    uint64_t pos = 0, good = 0;
    size_t cap = 1 << 20;
    char *out = malloc(cap);
    while (pos < len) {
        size_t used = 0, n;
        if (gz) {
            z_stream z = {0};
            ck_assert_int_eq(inflateInit2(&z, 16 + MAX_WBITS), Z_OK);
            z.next_in = (unsigned char *)data + pos;
            z.avail_in = (uInt)(len - pos);
            size_t got = 0;
            int rc;
            do {
                if (got == cap)
                    out = realloc(out, cap *= 2);
                z.next_out = (unsigned char *)out + got;
                z.avail_out = (uInt)(cap - got);
                rc = inflate(&z, Z_NO_FLUSH);
                got = cap - z.avail_out;
            } while (rc == Z_OK);
            used = rc == Z_STREAM_END ? len - pos - z.avail_in : 0;
            inflateEnd(&z);
            n = used > 0 ? parse_record(basename_of(path), pos, out, got, set) : 0;
            if (n != got)
                used = 0;
        } else {
            used = n = parse_record(basename_of(path), pos, data + pos, len - pos, set);
        }
        if (used == 0)
            break;
        pos += used;
        const char *type = set->r[set->n - 1].type;
        if (strcmp(type, "response") == 0 || strcmp(type, "warcinfo") == 0)
            good = pos;
    }
    free(out);
    free(data);
    return good;
}

static void warc_set_free(warc_set *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->r[i].block);
    free(s->r);
    memset(s, 0, sizeof *s);
}

static const wrec *record_at(const warc_set *s, const char *file, uint64_t offset)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->r[i].offset == offset && strcmp(s->r[i].file, file) == 0)
            return &s->r[i];
    return NULL;
}

/* ---- JSON records ---- */

/* The string or number after "key": in a JSON line we wrote, or "null". */
static void json_field(const char *line, const char *key, char *out, size_t cap)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(line, pat);
    ck_assert_msg(p != NULL, "no %s in %s", key, line);
    p += strlen(pat);
    size_t n;
    if (*p == '"')
        n = strcspn(++p, "\"");
    else
        n = strcspn(p, ",}");
    ck_assert_uint_lt(n, cap);
    memcpy(out, p, n);
    out[n] = '\0';
}

/* ---- independent fetches ---- */

typedef struct grown {
    char *p;
    size_t len;
} grown;

static size_t grow(char *data, size_t size, size_t nmemb, void *ud)
{
    grown *g = ud;
    size_t n = size * nmemb;
    g->p = realloc(g->p, g->len + n + 1);
    memcpy(g->p + g->len, data, n);
    g->len += n;
    return n;
}

/* The body the server sends for url, as sent: the same Accept-Encoding
 * the crawler sends, nothing decoded. */
static grown get_raw(CURL *h, const char *url)
{
    grown g = {0};
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "gzip, deflate");
    curl_easy_setopt(h, CURLOPT_HTTP_CONTENT_DECODING, 0L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, grow);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &g);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
    curl_easy_setopt(h, CURLOPT_PROXY, "");
    CURLcode rc = curl_easy_perform(h);
    ck_assert_msg(rc == CURLE_OK, "GET %s: %s", url, curl_easy_strerror(rc));
    return g;
}

/* ---- the whole judgement of an archive ---- */

typedef struct verdict {
    size_t responses, records, archived, truncated, compared, gzipped;
} verdict;

/* Runs warcio's check of the files against the CDXJ index cdxj. */
static void warcio_agrees(const char *cdxj, char **files, size_t n)
{
    const char *script = getenv("WARCIO_CHECK"), *prefix = getenv("WARCIO_PREFIX"),
               *mjs = getenv("WARCIO_CHECK_MJS");
    ck_assert_msg(script && prefix && mjs, "WARCIO_CHECK, WARCIO_PREFIX, WARCIO_CHECK_MJS unset");
    char *argv[256] = {"/bin/bash", (char *)script, (char *)prefix, (char *)mjs, (char *)cdxj};
    size_t k = 5;
    for (size_t i = 0; i < n && k < 255; i++)
        argv[k++] = files[i];
    argv[k] = NULL;
    const char *report = path_in_tmp("warcio.txt");
    int st = harness_wait(harness_spawn(argv, NULL, report));
    char *text = harness_slurp(report);
    ck_assert_msg(st == 0, "warcio disagrees with the archive or its index: %s", text);
    free(text);
}

/* The archive's files: warc alone, or the numbered files of a series. */
static char **archive_files(const char *warc, bool series, size_t *n)
{
    char **files = calloc(256, sizeof *files);
    *n = 0;
    /* a single file, then the files its resumed crawls went on in */
    if (!series)
        files[(*n)++] = strdup(warc);
    const char *ext = strstr(warc, ".warc");
    for (unsigned seq = 1; seq < 255; seq++) {
        char p[300];
        snprintf(p, sizeof p, "%.*s-%05u%s", (int)(ext - warc), warc, seq, ext);
        if (access(p, F_OK) != 0)
            break;
        files[(*n)++] = strdup(p);
    }
    return files;
}

static void files_free(char **files, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(files[i]);
    free(files);
}

/* Judges the archive's files against the records and the index, read
 * into set (the caller frees it). */
static verdict judge_files(char **files, size_t n, const char *cdxj_given, warc_set *set)
{
    verdict v = {0};
    tmp_name rec = tmp_path("records.jsonl"), index = tmp_path("");
    snprintf(index.s, sizeof index.s, "%s", cdxj_given);
    const char *records_path = rec.s, *cdxj = index.s;
    warcio_agrees(cdxj, files, n);
    harness_check_records((const char *const *)&records_path, 1);

    for (size_t i = 0; i < n; i++) {
        size_t before = set->n;
        read_warc(files[i], set);
        ck_assert_msg(set->n > before && strcmp(set->r[before].type, "warcinfo") == 0,
                      "%s does not start with a warcinfo record", files[i]);
        if (i == 0)
            ck_assert_msg(strstr(set->r[before].block, "\r\ncommand: sieve crawl ") != NULL,
                          "warcinfo without the command line: %s", set->r[before].block);
    }
    for (size_t i = 0; i < set->n; i++)
        v.responses += strcmp(set->r[i].type, "response") == 0;

    /* each JSON record: its response where it says, the same digest and
     * bytes, and truncated where the record says the body was cut */
    char *text = harness_slurp(records_path);
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        v.records++;
        char url[2100], file[128], offset[32], digest[64], wire[32], outcome[32], status[8];
        json_field(line, "url", url, sizeof url);
        json_field(line, "warc_file", file, sizeof file);
        json_field(line, "warc_offset", offset, sizeof offset);
        json_field(line, "digest", digest, sizeof digest);
        json_field(line, "wire_bytes", wire, sizeof wire);
        json_field(line, "outcome", outcome, sizeof outcome);
        json_field(line, "status", status, sizeof status);
        if (strcmp(file, "null") == 0) {
            ck_assert_msg(strcmp(status, "0") == 0, "a response not archived: %s", line);
            continue;
        }
        v.archived++;
        const wrec *r = record_at(set, file, strtoull(offset, NULL, 10));
        ck_assert_msg(r != NULL, "no record at %s:%s for %s", file, offset, line);
        ck_assert_str_eq(r->type, "response");
        ck_assert_str_eq(r->uri, url);
        ck_assert_str_eq(r->digest, digest);
        ck_assert_uint_eq(r->block_len - r->head_len, strtoull(wire, NULL, 10));
        if (strcmp(outcome, "too_large") == 0)
            ck_assert_msg(strcmp(r->truncated, "length") == 0, "%s: WARC-Truncated '%s'", url,
                          r->truncated);
        else if (strcmp(outcome, "truncated") == 0)
            ck_assert_msg(strcmp(r->truncated, "disconnect") == 0, "%s: WARC-Truncated '%s'", url,
                          r->truncated);
        else if (strcmp(outcome, "timeout") == 0)
            ck_assert_msg(strcmp(r->truncated, "time") == 0, "%s: WARC-Truncated '%s'", url,
                          r->truncated);
        else if (strcmp(outcome, "ok") == 0 || strncmp(outcome, "http_", 5) == 0)
            ck_assert_msg(r->truncated[0] == '\0', "%s: %s, and WARC-Truncated '%s'", url, outcome,
                          r->truncated);
        v.truncated += r->truncated[0] != '\0';
    }
    free(text);

    /* each CDXJ line: its record at its offset */
    text = harness_slurp(cdxj);
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        char url[2100], file[128], offset[32];
        json_field(line, "url", url, sizeof url);
        json_field(line, "filename", file, sizeof file);
        json_field(line, "offset", offset, sizeof offset);
        const wrec *r = record_at(set, file, strtoull(offset, NULL, 10));
        ck_assert_msg(r != NULL && strcmp(r->type, "response") == 0 && strcmp(r->uri, url) == 0,
                      "CDXJ line names no response of %s there: %s", url, line);
    }
    free(text);

    return v;
}

/* Judges the archive's files against the records, the index and the web:
 * what came whole is what the server sends now, byte for byte. */
static verdict judge(char **files, size_t n, const char *cdxj)
{
    warc_set set = {0};
    verdict v = judge_files(files, n, cdxj, &set);
    CURL *h = curl_easy_init();
    for (size_t i = 0; i < set.n; i++) {
        const wrec *r = &set.r[i];
        if (strcmp(r->type, "response") != 0 || r->truncated[0] != '\0' ||
            strstr(r->uri, "/hostile/slow.html") != NULL)
            continue;
        grown g = get_raw(h, r->uri);
        size_t payload = r->block_len - r->head_len;
        ck_assert_msg(g.len == payload && memcmp(g.p, r->block + r->head_len, payload) == 0,
                      "%s: %zu bytes archived, %zu served", r->uri, payload, g.len);
        v.compared++;
        v.gzipped += strstr(r->block, "\r\nContent-Encoding: gzip\r\n") != NULL &&
                     (unsigned char)r->block[r->head_len] == 0x1f;
        free(g.p);
    }
    curl_easy_cleanup(h);
    warc_set_free(&set);
    return v;
}

/* `sieve warc-index` of the files gives the index the crawl wrote. */
static void warc_index_agrees(char **files, size_t n, const char *cdxj)
{
    tmp_name rebuilt = tmp_path("rebuilt.cdxj");
    char *argv[256] = {(char *)sieve_bin, "warc-index", "-o", rebuilt.s};
    size_t k = 4;
    for (size_t i = 0; i < n; i++)
        argv[k++] = files[i];
    argv[k] = NULL;
    ck_assert_int_eq(run_sieve(argv), 0);
    char *a = harness_slurp(cdxj), *b = harness_slurp(rebuilt.s);
    size_t at = 0;
    while (a[at] != '\0' && a[at] == b[at])
        at++;
    ck_assert_msg(a[at] == b[at],
                  "sieve warc-index differs from --cdxj at byte %zu: %.200s | %.200s", at, a + at,
                  b + at);
    free(a);
    free(b);
}

/* ---- tests ---- */

/* A plain archive of the whole web: pages, redirects, errors, sitemaps,
 * robots.txt, hostile pages; what came whole is what was served, what a
 * limit cut says so. _i = 1: the same as one gzip member per record. */
START_TEST(archive_holds_what_the_web_served)
{
    tmp_name warc_p = tmp_path(_i == 0 ? "crawl.warc" : "crawl.warc.gz");
    const char *warc = warc_p.s;
    tmp_name cdxj_p = tmp_path("crawl.cdxj");
    const char *cdxj = cdxj_p.s;
    const char *args[] = {"--warc", warc, "--cdxj", cdxj, NULL};
    crawl_ok(args);
    size_t n;
    char **files = archive_files(warc, false, &n);
    verdict v = judge(files, n, cdxj);
    /* every record with a response is archived, plus robots.txt */
    ck_assert_uint_eq(v.responses, v.archived + 1);
    ck_assert_uint_gt(v.records, PAGES);
    ck_assert_uint_gt(v.compared, PAGES);
    /* huge.html and endless.html are cut at --max-page-bytes */
    ck_assert_uint_ge(v.truncated, 2);
    char *records = harness_slurp(path_in_tmp("records.jsonl"));
    char want[128];
    snprintf(want, sizeof want, "{\"url\":\"%shostile/huge.html\"", base);
    char *huge = strstr(records, want);
    ck_assert_ptr_nonnull(huge);
    ck_assert_ptr_nonnull(strstr(huge, "\"outcome\":\"too_large\""));
    free(records);
    warc_index_agrees(files, n, cdxj);
    files_free(files, n);
}
END_TEST

/* A web that gzips everything: the archive keeps the gzip bytes as the
 * server sent them, and the records count them both ways. */
START_TEST(gzip_bodies_are_archived_as_sent)
{
    tmp_name warc_p = tmp_path("gz.warc.gz");
    const char *warc = warc_p.s;
    tmp_name cdxj_p = tmp_path("gz.cdxj");
    const char *cdxj = cdxj_p.s;
    const char *args[] = {"--warc", warc, "--cdxj", cdxj, NULL};
    crawl_ok(args);
    size_t n;
    char **files = archive_files(warc, false, &n);
    verdict v = judge(files, n, cdxj);
    ck_assert_uint_gt(v.gzipped, PAGES);
    char *records = harness_slurp(path_in_tmp("records.jsonl"));
    char want[128];
    snprintf(want, sizeof want, "{\"url\":\"%sp/1.html\"", base);
    char *line = strstr(records, want);
    ck_assert_ptr_nonnull(line);
    char bytes[32], wire[32];
    json_field(line, "bytes", bytes, sizeof bytes);
    json_field(line, "wire_bytes", wire, sizeof wire);
    ck_assert_uint_lt(strtoull(wire, NULL, 10), strtoull(bytes, NULL, 10));
    free(records);
    files_free(files, n);
}
END_TEST

/* --warc-max-size: a series of files, each with its warcinfo record, one
 * index over them all; a second crawl replaces the whole series. */
START_TEST(rotation_makes_a_series)
{
    tmp_name warc_p = tmp_path("series.warc.gz");
    const char *warc = warc_p.s;
    tmp_name cdxj_p = tmp_path("series.cdxj");
    const char *cdxj = cdxj_p.s;
    const char *small[] = {"--warc", warc, "--cdxj", cdxj, "--warc-max-size", "100K", NULL};
    crawl_ok(small);
    size_t n;
    char **files = archive_files(warc, true, &n);
    ck_assert_uint_ge(n, 4);
    ck_assert(access(warc, F_OK) != 0);
    for (size_t i = 0; i + 1 < n; i++) {
        struct stat st;
        ck_assert_int_eq(stat(files[i], &st), 0);
        ck_assert_uint_le((uint64_t)st.st_size, 100 * 1024 + 200 * 1024); /* a page cut at 100K */
    }
    verdict v = judge(files, n, cdxj);
    ck_assert_uint_gt(v.archived, PAGES);
    char *records = harness_slurp(path_in_tmp("records.jsonl"));
    ck_assert_ptr_nonnull(strstr(records, "\"warc_file\":\"series-00001.warc.gz\""));
    char last[64];
    snprintf(last, sizeof last, "\"warc_file\":\"series-%05zu.warc.gz\"", n);
    ck_assert_ptr_nonnull(strstr(records, last));
    free(records);
    warc_index_agrees(files, n, cdxj);
    files_free(files, n);

    /* again, in bigger files: none of the first series is left */
    const char *big[] = {"--warc", warc, "--cdxj", cdxj, "--warc-max-size", "1G", NULL};
    crawl_ok(big);
    files = archive_files(warc, true, &n);
    ck_assert_uint_eq(n, 1);
    judge(files, n, cdxj);
    files_free(files, n);
}
END_TEST

/* Waits until path holds at least bytes, or 20 s. */
static void wait_for_size(const char *path, off_t bytes)
{
    for (int i = 0; i < 2000; i++) {
        struct stat st;
        if (stat(path, &st) == 0 && st.st_size >= bytes)
            return;
        usleep(10000);
    }
    ck_abort_msg("%s never reached %lld bytes", path, (long long)bytes);
}

/* SIGINT stops the crawl; the archive it leaves is valid, its index
 * written, and the records that were written point into it. */
START_TEST(a_stopped_crawl_leaves_a_valid_archive)
{
    tmp_name warc_p = tmp_path(_i == 0 ? "stop.warc" : "stop.warc.gz");
    const char *warc = warc_p.s;
    tmp_name cdxj_p = tmp_path("stop.cdxj");
    const char *cdxj = cdxj_p.s;
    const char *args[] = {"--warc", warc, "--cdxj", cdxj, "--host-connections", "2", NULL};
    pid_t pid = crawl_start(args);
    wait_for_size(warc, 40000);
    kill(pid, SIGINT);
    ck_assert_int_eq(harness_wait(pid), 130);
    size_t n;
    char **files = archive_files(warc, false, &n);
    verdict v = judge(files, n, cdxj);
    ck_assert_uint_gt(v.archived, 5);
    ck_assert_uint_lt(v.records, PAGES); /* it was stopped early */
    files_free(files, n);
}
END_TEST

/* SIGKILL mid-crawl: every complete record stays readable; warc-index
 * indexes them all from the torn file, as warcio does from the file cut
 * where its last whole fetch ends. _i = 0 plain, 1 gzip. */
START_TEST(a_killed_crawl_leaves_every_complete_record)
{
    const char *name = _i == 0 ? "kill.warc" : "kill.warc.gz";
    tmp_name warc_p = tmp_path(name);
    const char *warc = warc_p.s;
    const char *args[] = {"--warc", warc, "--host-connections", "2", NULL};
    pid_t pid = crawl_start(args);
    wait_for_size(warc, 60000);
    kill(pid, SIGKILL);
    ck_assert_int_eq(harness_wait(pid), 128 + SIGKILL);

    tmp_name index = tmp_path("kill.cdxj");
    char *argv[] = {(char *)sieve_bin, "warc-index", "-o", index.s, (char *)warc, NULL};
    ck_assert_int_eq(run_sieve(argv), 0);

    /* the file as a reader keeps it: up to its last whole fetch */
    warc_set set = {0};
    uint64_t good = read_warc(warc, &set);
    size_t responses = 0;
    for (size_t i = 0; i < set.n; i++)
        responses += strcmp(set.r[i].type, "response") == 0;
    ck_assert_uint_gt(responses, 5);
    warc_set_free(&set);
    size_t len;
    char *data = read_file(warc, &len);
    ck_assert_uint_le(good, len);
    char dir[300];
    snprintf(dir, sizeof dir, "%s/cut", tmpdir);
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    char cut[400];
    snprintf(cut, sizeof cut, "%s/%s", dir, name);
    FILE *fp = fopen(cut, "wb");
    ck_assert_uint_eq(fwrite(data, 1, good, fp), good);
    fclose(fp);
    free(data);
    char *files[] = {cut};
    warcio_agrees(index.s, files, 1);
    char *text = harness_slurp(index.s);
    size_t lines = 0;
    for (char *p = text; (p = strchr(p, '\n')) != NULL; p++)
        lines++;
    ck_assert_uint_eq(lines, responses);
    free(text);
}
END_TEST

/* --state and --warc killed with SIGKILL, then run again: the crawl ends,
 * the last file the kill left loses only its torn fetch, never a byte
 * before it, the crawl goes on in the next numbered file, and the whole
 * archive is valid, with an index over every file. _i = 0 one file, 1 a
 * series. */
START_TEST(a_resumed_crawl_goes_on_with_its_archive)
{
    tmp_name warc_p = tmp_path(_i == 0 ? "resume.warc.gz" : "resume-series.warc.gz");
    const char *warc = warc_p.s;
    tmp_name cdxj_p = tmp_path("resume.cdxj"), state = tmp_path("state");
    tmp_name first = tmp_path(_i == 0 ? "resume.warc.gz" : "resume-series-00001.warc.gz");
    const char *args[] = {"--state",
                          state.s,
                          "--warc",
                          warc,
                          "--cdxj",
                          cdxj_p.s,
                          "--host-connections",
                          "2",
                          _i == 1 ? "--warc-max-size" : NULL,
                          "64K",
                          NULL};
    pid_t pid = crawl_start(args);
    wait_for_size(first.s, 60000);
    kill(pid, SIGKILL);
    ck_assert_int_eq(harness_wait(pid), 128 + SIGKILL);
    size_t n;
    char **files = archive_files(warc, _i == 1, &n);
    size_t killed_n = n, killed_len, kept_len;
    char *killed = read_file(files[n - 1], &killed_len);
    char *last_killed = strdup(files[n - 1]);
    files_free(files, n);
    crawl_ok(args);
    files = archive_files(warc, _i == 1, &n);
    ck_assert_uint_gt(n, killed_n);
    char *kept = read_file(last_killed, &kept_len);
    ck_assert_uint_le(kept_len, killed_len);
    ck_assert_uint_gt(kept_len, 0);
    ck_assert_int_eq(memcmp(kept, killed, kept_len), 0);
    free(kept);
    free(killed);
    free(last_killed);
    verdict v = judge(files, n, cdxj_p.s);
    ck_assert_uint_gt(v.records, PAGES);
    ck_assert_uint_ge(v.responses, v.archived);
    warc_index_agrees(files, n, cdxj_p.s);
    files_free(files, n);
}
END_TEST

/* The web of the kill-and-resume test: start_web_with()'s and pages
 * that take a little while, as harness_web_truth() is told. */
static const char *const resume_web[] = {"--pages", "150",        "--sitemap", "--drip-ms",
                                         "20",      "--delay-ms", "5",         NULL};

static void start_resume_web(void)
{
    start_web_with(resume_web + 5);
}

/* A .gz crawl with --state, stopped again and again, by SIGKILL and by
 * SIGINT, at random instants while records wait for the compression
 * threads, then run to its end: every URL of the web's truth has a JSON
 * record, and every record whose URL got a response points at that
 * response in the archive, which warcio reads whole. A URL reported done
 * before its records were written would be missing. The random seed is
 * printed; SIEVE_TEST_SEED=N replays a run. */
START_TEST(a_gzip_crawl_stopped_again_and_again_loses_nothing)
{
    unsigned seed = getenv("SIEVE_TEST_SEED") ? (unsigned)atoi(getenv("SIEVE_TEST_SEED"))
                                              : (unsigned)time(NULL) ^ (unsigned)getpid();
    fprintf(stderr, "test-archive: seed %u (SIEVE_TEST_SEED=%u replays it)\n", seed, seed);
    srand(seed);
    tmp_name warc = tmp_path("again.warc.gz"), cdxj = tmp_path("again.cdxj"),
             state = tmp_path("state");
    const char *args[] = {
        "--state", state.s, "--warc", warc.s, "--cdxj", cdxj.s, "--checkpoint-interval",
        "0.05",    NULL};
    int stops = 0;
    for (int k = 0; k < 10; k++) {
        pid_t pid = crawl_start(args);
        struct timespec t = {.tv_sec = 0, .tv_nsec = (long)(20 + rand() % 200) * 1000000L};
        nanosleep(&t, NULL);
        int sig = k % 2 == 0 ? SIGKILL : SIGINT;
        kill(pid, sig);
        int st = harness_wait(pid);
        char *log = harness_slurp(path_in_tmp("stderr.txt"));
        ck_assert_msg(st == 128 + sig || st == 0, "run %d: exit %d: %s", k, st, log);
        free(log);
        stops += st != 0;
    }
    ck_assert_int_ge(stops, 6);
    crawl_ok(args);

    size_t n_truth;
    char **truth = harness_web_truth(tmpdir, "127.0.0.1", port, resume_web, &n_truth);
    char *records = harness_slurp(path_in_tmp("records.jsonl"));
    for (size_t i = 0; i < n_truth; i++) {
        char want[2200];
        snprintf(want, sizeof want, "{\"url\":\"%s\"", truth[i]);
        ck_assert_msg(strstr(records, want) != NULL, "never recorded: %s", truth[i]);
    }
    free(records);
    harness_lines_free(truth);
    size_t n;
    char **files = archive_files(warc.s, false, &n);
    ck_assert_uint_gt(n, 1);
    verdict v = judge(files, n, cdxj.s);
    ck_assert_uint_ge(v.records, n_truth);
    ck_assert_uint_gt(v.archived, PAGES);
    files_free(files, n);
}
END_TEST

/* Option errors name the option. */
START_TEST(archive_options_are_checked)
{
    struct {
        const char *a, *b, *c, *d, *want;
    } cases[] = {
        {"--cdxj", "x.cdxj", NULL, NULL, "--cdxj: needs --warc FILE"},
        {"--warc-max-size", "1M", NULL, NULL, "--warc-max-size: needs --warc FILE"},
        {"--warc", "same.jsonl", "-o", "same.jsonl", "is another output too"},
        {"--warc", "w.warc", "--cdxj", "w.warc", "is also the --warc file"},
        {"--warc", "w.warc", "--warc-max-size", "10", "--warc-max-size"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *argv[] = {(char *)sieve_bin,
                        "crawl",
                        (char *)cases[i].a,
                        (char *)cases[i].b,
                        (char *)cases[i].c,
                        (char *)cases[i].d,
                        base,
                        NULL};
        if (cases[i].c == NULL)
            argv[4] = base, argv[5] = NULL;
        ck_assert_int_eq(run_sieve(argv), 2);
        char *log = harness_slurp(path_in_tmp("stderr.txt"));
        ck_assert_msg(strstr(log, cases[i].want) != NULL, "case %zu: %s", i, log);
        free(log);
    }
    /* warc-index: no file, a file that is none */
    char *none[] = {(char *)sieve_bin, "warc-index", NULL};
    ck_assert_int_eq(run_sieve(none), 2);
    FILE *fp = fopen(path_in_tmp("not.warc"), "w");
    fputs("this is no WARC file\r\n\r\n", fp);
    fclose(fp);
    char *bad[] = {(char *)sieve_bin, "warc-index", path_in_tmp("not.warc"), NULL};
    ck_assert_int_eq(run_sieve(bad), 1);
    /* one line, naming the file, the offset and what is there */
    char *log = harness_slurp(path_in_tmp("stderr.txt"));
    ck_assert_msg(
        strstr(log, "not.warc: offset 0: no record here: a record starts with a 'WARC/'") != NULL,
        "%s", log);
    ck_assert_msg(strchr(log, '\n') == log + strlen(log) - 1, "%s", log);
    free(log);
    fp = fopen(path_in_tmp("no-length.warc"), "w");
    fputs("WARC/1.1\r\nWARC-Type: resource\r\n\r\nabc\r\n\r\n", fp);
    fclose(fp);
    char *no_length[] = {(char *)sieve_bin, "warc-index", path_in_tmp("no-length.warc"), NULL};
    ck_assert_int_eq(run_sieve(no_length), 1);
    log = harness_slurp(path_in_tmp("stderr.txt"));
    ck_assert_msg(strstr(log, "no-length.warc: offset 0: a record header without a valid "
                              "Content-Length") != NULL,
                  "%s", log);
    free(log);
    /* an archive that cannot be made is said once, with the reason */
    char *nowhere[] = {(char *)sieve_bin,     "crawl", "--warc", path_in_tmp("no-such-dir/a.warc"),
                       "http://127.0.0.1:1/", NULL};
    ck_assert_int_ne(run_sieve(nowhere), 0);
    log = harness_slurp(path_in_tmp("stderr.txt"));
    ck_assert_msg(strstr(log, "a.warc: No such file or directory") != NULL, "%s", log);
    ck_assert_msg(strstr(log, "--warc:") == NULL, "said twice: %s", log);
    free(log);
}
END_TEST

/* Writes text to a file name in the test's directory; its path, the
 * caller's to free. */
static char *put_file(const char *name, const char *text)
{
    char *path = strdup(path_in_tmp(name));
    FILE *fp = fopen(path, "w");
    ck_assert_ptr_nonnull(fp);
    fputs(text, fp);
    ck_assert_int_eq(fclose(fp), 0);
    return path;
}

/* Files in the test's directory whose names start with prefix. */
static int files_named(const char *prefix)
{
    DIR *d = opendir(tmpdir);
    ck_assert_ptr_nonnull(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return n;
}

/* An index goes whole or not at all: a run that fails leaves the index
 * that was there as it was, and no file of its own; one that works
 * replaces it; a symbolic link is written through, not replaced. */
START_TEST(an_index_is_written_whole_or_not_at_all)
{
    const char *block = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\nhi";
    char record[512];
    snprintf(record, sizeof record,
             "WARC/1.1\r\nWARC-Type: response\r\nWARC-Target-URI: http://example.com/\r\n"
             "WARC-Date: 2026-11-24T10:00:00Z\r\n"
             "Content-Type: application/http; msgtype=response\r\n"
             "Content-Length: %zu\r\n\r\n%s\r\n\r\n",
             strlen(block), block);
    char *good = put_file("good.warc", record);
    char *bad = put_file("bad.warc", "this is no WARC file\r\n\r\n");
    char *out = put_file("out.cdxj", "the index of an earlier run\n");
    char *fails[] = {(char *)sieve_bin, "warc-index", "-o", (char *)out,
                     (char *)good,      (char *)bad,  NULL};
    ck_assert_int_eq(run_sieve(fails), 1);
    char *text = harness_slurp(out);
    ck_assert_str_eq(text, "the index of an earlier run\n");
    free(text);
    ck_assert_int_eq(files_named("out.cdxj.tmp"), 0);

    char *works[] = {(char *)sieve_bin, "warc-index", "-o", (char *)out, (char *)good, NULL};
    ck_assert_int_eq(run_sieve(works), 0);
    text = harness_slurp(out);
    ck_assert_msg(strncmp(text, "com,example)/ 20261124100000 {", 30) == 0 &&
                      strchr(text, '\n') == text + strlen(text) - 1,
                  "%s", text);
    free(text);
    ck_assert_int_eq(files_named("out.cdxj.tmp"), 0);

    /* A new file's name that a killed run of the same PID left behind:
     * the shell makes it, then becomes sieve with its PID. */
    char *stale[] = {"/bin/sh",
                     "-c",
                     "echo stale > \"$1.tmp-$$\" && exec \"$0\" warc-index -o \"$1\" \"$2\"",
                     (char *)sieve_bin,
                     (char *)out,
                     (char *)good,
                     NULL};
    ck_assert_int_eq(run_sieve(stale), 0);
    text = harness_slurp(out);
    ck_assert_msg(strncmp(text, "com,example)/ ", 14) == 0, "%s", text);
    free(text);
    ck_assert_int_eq(files_named("out.cdxj.tmp"), 0);

    char *target = put_file("target.cdxj", "");
    char *link = strdup(path_in_tmp("link.cdxj"));
    ck_assert_int_eq(symlink(target, link), 0);
    char *through[] = {(char *)sieve_bin, "warc-index", "-o", (char *)link, (char *)good, NULL};
    ck_assert_int_eq(run_sieve(through), 0);
    struct stat st;
    ck_assert_int_eq(lstat(link, &st), 0);
    ck_assert(S_ISLNK(st.st_mode));
    text = harness_slurp(target);
    ck_assert_msg(strncmp(text, "com,example)/ ", 14) == 0, "%s", text);
    free(text);
    free(good), free(bad), free(out), free(target), free(link);
}
END_TEST

/* ---- retried attempts, against a server in this process ---- */

/* Each answer the server gave, in order: what the archived responses of
 * a URL must be, attempt by attempt. */
enum { MAX_SERVED = 32 };

typedef struct served {
    char path[32];
    unsigned status;
    char type[16], body[128];
} served;

static pthread_mutex_t served_lock = PTHREAD_MUTEX_INITIALIZER;
static served answers[MAX_SERVED];
static size_t nanswers;
static struct MHD_Daemon *flaky_server;

/* What the server answers to path on its attempt k (from 0): /flaky is
 * busy twice, then fine; /down is always broken. Each failure names its
 * attempt, so that no attempt's response can pass for another's. */
static served answer_to(const char *path, size_t k)
{
    served s = {.status = 200, .type = "text/html"};
    snprintf(s.path, sizeof s.path, "%s", path);
    if (strcmp(path, "/robots.txt") == 0) {
        snprintf(s.type, sizeof s.type, "text/plain");
        snprintf(s.body, sizeof s.body, "User-agent: *\nAllow: /\n");
    } else if (strcmp(path, "/") == 0) {
        snprintf(s.body, sizeof s.body, "<a href=\"/flaky\">f</a> <a href=\"/down\">d</a>");
    } else if (strcmp(path, "/flaky") == 0 && k < 2) {
        s.status = 503;
        snprintf(s.body, sizeof s.body, "busy, attempt %zu", k + 1);
    } else if (strcmp(path, "/flaky") == 0) {
        snprintf(s.body, sizeof s.body, "<html><body>fine on attempt %zu</body></html>", k + 1);
    } else if (strcmp(path, "/down") == 0) {
        s.status = 500;
        snprintf(s.body, sizeof s.body, "broken, attempt %zu", k + 1);
    } else {
        s.status = 404;
        snprintf(s.body, sizeof s.body, "no such page");
    }
    return s;
}

static enum MHD_Result serve_flaky(void *cls, struct MHD_Connection *c, const char *path,
                                   const char *method, const char *version, const char *upload,
                                   size_t *upload_size, void **state)
{
    (void)cls, (void)method, (void)version, (void)upload, (void)upload_size, (void)state;
    pthread_mutex_lock(&served_lock);
    size_t k = 0;
    for (size_t i = 0; i < nanswers && i < MAX_SERVED; i++)
        k += strcmp(answers[i].path, path) == 0;
    served s = answer_to(path, k);
    if (nanswers < MAX_SERVED)
        answers[nanswers] = s;
    nanswers++; /* past MAX_SERVED: counted, for the test to fail on */
    pthread_mutex_unlock(&served_lock);
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(s.body), s.body, MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(r, "Content-Type", s.type);
    enum MHD_Result rc = MHD_queue_response(c, s.status, r);
    MHD_destroy_response(r);
    return rc;
}

static void start_flaky_server(void)
{
    make_tmpdir();
    web_pid = 0;
    nanswers = 0;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    flaky_server =
        MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
                             MHD_USE_AUTO | MHD_USE_ERROR_LOG,
                         0, NULL, NULL, serve_flaky, NULL, MHD_OPTION_SOCK_ADDR,
                         (struct sockaddr *)&sa, MHD_OPTION_END);
    ck_assert_ptr_nonnull(flaky_server);
    port = MHD_get_daemon_info(flaky_server, MHD_DAEMON_INFO_BIND_PORT)->port;
    snprintf(base, sizeof base, "http://127.0.0.1:%u/", port);
}

static void stop_flaky_server(void)
{
    MHD_stop_daemon(flaky_server);
    stop_web();
}

static unsigned http_status(const wrec *r)
{
    unsigned status = 0;
    ck_assert_msg(sscanf(r->block, "HTTP/1.1 %u ", &status) == 1, "%s: no status line in %.80s",
                  r->uri, r->block);
    return status;
}

/* The archive's responses of path, with the requests they pair with, are
 * the server's answers to it, one for one and in order; so are the lines
 * of path in the index, which warcio made too. Returns the last one. */
static const wrec *attempts_as_served(const warc_set *set, const char *cdxj, const char *path)
{
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%u%s", port, path);
    const served *want[MAX_SERVED];
    size_t k = 0;
    for (size_t i = 0; i < nanswers && i < MAX_SERVED; i++)
        if (strcmp(answers[i].path, path) == 0)
            want[k++] = &answers[i];
    ck_assert_msg(k > 0, "%s was never asked for", path);

    const wrec *got[MAX_SERVED];
    size_t n = 0, requests = 0;
    for (size_t i = 0; i < set->n; i++) {
        const wrec *r = &set->r[i];
        if (strcmp(r->uri, url) != 0)
            continue;
        requests += strcmp(r->type, "request") == 0;
        if (strcmp(r->type, "response") != 0)
            continue;
        ck_assert_msg(n < k, "%s: more responses archived than the %zu served", path, k);
        const wrec *q = i > 0 ? &set->r[i - 1] : NULL;
        ck_assert_msg(q != NULL && strcmp(q->type, "request") == 0 && strcmp(q->uri, url) == 0 &&
                          strcmp(q->to, r->id) == 0 && strcmp(r->to, q->id) == 0,
                      "%s: response %zu is not paired with the request before it", path, n + 1);
        char line[64];
        snprintf(line, sizeof line, "GET %s HTTP/1.1\r\n", path);
        ck_assert_msg(strncmp(q->block, line, strlen(line)) == 0, "%s: request %.80s", path,
                      q->block);
        ck_assert_msg(http_status(r) == want[n]->status, "%s: attempt %zu archived as %u, sent %u",
                      path, n + 1, http_status(r), want[n]->status);
        size_t len = r->block_len - r->head_len;
        ck_assert_msg(len == strlen(want[n]->body) &&
                          memcmp(r->block + r->head_len, want[n]->body, len) == 0,
                      "%s: attempt %zu archived '%.*s', sent '%s'", path, n + 1, (int)len,
                      r->block + r->head_len, want[n]->body);
        got[n++] = r;
    }
    ck_assert_msg(n == k, "%s: %zu of its %zu attempts archived", path, n, k);
    ck_assert_uint_eq(requests, k);

    /* the index lists them as the server sent them too; in offset order,
     * the order they were written in */
    uint64_t offsets[MAX_SERVED];
    unsigned statuses[MAX_SERVED];
    size_t m = 0;
    char *text = harness_slurp(cdxj);
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        char u[2100], offset[32], status[8];
        json_field(line, "url", u, sizeof u);
        if (strcmp(u, url) != 0)
            continue;
        json_field(line, "offset", offset, sizeof offset);
        json_field(line, "status", status, sizeof status);
        ck_assert_uint_lt(m, k);
        size_t at = m++;
        for (; at > 0 && offsets[at - 1] > strtoull(offset, NULL, 10); at--) {
            offsets[at] = offsets[at - 1];
            statuses[at] = statuses[at - 1];
        }
        offsets[at] = strtoull(offset, NULL, 10);
        statuses[at] = (unsigned)strtoul(status, NULL, 10);
    }
    free(text);
    ck_assert_msg(m == k, "%s: %zu index lines for %zu attempts", path, m, k);
    for (size_t i = 0; i < k; i++) {
        ck_assert_uint_eq(offsets[i], got[i]->offset);
        ck_assert_uint_eq(statuses[i], want[i]->status);
    }
    return got[k - 1];
}

/* The URL's one JSON record counts every attempt, and points at the last
 * one's response (whose digest judge_files() found it has). */
static void record_points_at(const char *path, const wrec *last, unsigned attempts,
                             const char *outcome)
{
    char want[160];
    snprintf(want, sizeof want, "{\"url\":\"http://127.0.0.1:%u%s\"", port, path);
    char *records = harness_slurp(path_in_tmp("records.jsonl"));
    char *line = strstr(records, want);
    ck_assert_msg(line != NULL, "%s: no record", path);
    ck_assert_msg(strstr(line + 1, want) == NULL, "%s: a record per attempt", path);
    *strchrnul(line, '\n') = '\0';
    char n[16], status[8], out[32], file[128], offset[32];
    json_field(line, "attempts", n, sizeof n);
    json_field(line, "status", status, sizeof status);
    json_field(line, "outcome", out, sizeof out);
    json_field(line, "warc_file", file, sizeof file);
    json_field(line, "warc_offset", offset, sizeof offset);
    ck_assert_uint_eq(strtoul(n, NULL, 10), attempts);
    ck_assert_uint_eq(strtoul(status, NULL, 10), http_status(last));
    ck_assert_str_eq(out, outcome);
    ck_assert_str_eq(file, last->file);
    ck_assert_uint_eq(strtoull(offset, NULL, 10), last->offset);
    free(records);
}

/* A page busy twice (503) and then fine, and one broken (500) on every
 * attempt: each attempt is in the archive as its own request and
 * response, linked both ways, holding the status and the bytes the server
 * sent it; warcio reads them all, finds every digest right and makes the
 * same index; each URL's one record points at its last attempt. _i = 0
 * plain, 1 gzip. */
START_TEST(every_attempt_of_a_retried_url_is_archived)
{
    tmp_name warc = tmp_path(_i == 0 ? "retries.warc" : "retries.warc.gz");
    tmp_name cdxj = tmp_path("retries.cdxj");
    const char *args[] = {"--warc",       warc.s, "--cdxj",           cdxj.s, "--retries", "2",
                          "--retry-wait", "0.02", "--retry-max-wait", "0.2",  NULL};
    crawl_ok(args);
    ck_assert_uint_le(nanswers, MAX_SERVED);

    char *files[] = {warc.s};
    warc_set set = {0};
    verdict v = judge_files(files, 1, cdxj.s, &set);
    warc_index_agrees(files, 1, cdxj.s);
    ck_assert_uint_eq(v.records, 3);
    ck_assert_uint_eq(v.responses, nanswers); /* every answer, and nothing else */

    attempts_as_served(&set, cdxj.s, "/robots.txt");
    record_points_at("/", attempts_as_served(&set, cdxj.s, "/"), 1, "ok");
    record_points_at("/flaky", attempts_as_served(&set, cdxj.s, "/flaky"), 3, "ok");
    record_points_at("/down", attempts_as_served(&set, cdxj.s, "/down"), 3, "http_5xx");
    warc_set_free(&set);
}
END_TEST

/* ---- a server that drops each connection's second request ---- */

/* It answers the first request on a connection, reads the second and
 * closes the connection without a word, as a server does whose
 * keep-alive timeout ran out just as the request came. curl then sends
 * the request again on a fresh connection (a reused connection that
 * died before any byte came back), and the archive sees two request
 * heads in one transfer. */
static int drop_listener = -1;
static pthread_t drop_acceptor;
static atomic_uint drop_answered, drop_dropped;

/* Reads one request head; its path into path (256 bytes). False at the
 * end of the connection (or after 10 s of silence). */
static bool read_request(int fd, char path[256])
{
    char head[4096];
    size_t n = 0;
    while (n < sizeof head - 1) {
        ssize_t k = read(fd, head + n, sizeof head - 1 - n);
        if (k <= 0)
            return false;
        n += (size_t)k;
        head[n] = '\0';
        if (strstr(head, "\r\n\r\n") != NULL)
            break;
    }
    return sscanf(head, "GET %255s ", path) == 1;
}

static void *drop_connection(void *arg)
{
    int fd = (int)(intptr_t)arg;
    struct timeval tv = {.tv_sec = 10};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char path[256];
    if (read_request(fd, path)) {
        char body[512], reply[1024];
        if (strcmp(path, "/") == 0)
            snprintf(body, sizeof body,
                     "<a href=/p1>1</a><a href=/p2>2</a><a href=/p3>3</a>"
                     "<a href=/p4>4</a><a href=/p5>5</a>");
        else
            snprintf(body, sizeof body, "<html><body>page %s</body></html>", path);
        int n = snprintf(reply, sizeof reply,
                         "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %zu\r\n"
                         "\r\n%s",
                         strlen(body), body);
        /* counted first: the crawl may end as soon as the bytes are out */
        atomic_fetch_add(&drop_answered, 1);
        if (write(fd, reply, (size_t)n) != n)
            atomic_fetch_sub(&drop_answered, 1);
        if (read_request(fd, path))
            atomic_fetch_add(&drop_dropped, 1);
    }
    close(fd);
    return NULL;
}

static void *drop_accept(void *arg)
{
    (void)arg;
    for (;;) {
        int fd = accept(drop_listener, NULL, NULL);
        if (fd < 0)
            return NULL; /* the listener was shut down */
        pthread_t t;
        if (pthread_create(&t, NULL, drop_connection, (void *)(intptr_t)fd) == 0)
            pthread_detach(t);
        else
            close(fd);
    }
}

static void start_drop_server(void)
{
    make_tmpdir();
    web_pid = 0;
    atomic_store(&drop_answered, 0);
    atomic_store(&drop_dropped, 0);
    drop_listener = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sa;
    ck_assert_int_eq(bind(drop_listener, (struct sockaddr *)&sa, sizeof sa), 0);
    ck_assert_int_eq(listen(drop_listener, 16), 0);
    ck_assert_int_eq(getsockname(drop_listener, (struct sockaddr *)&sa, &len), 0);
    port = ntohs(sa.sin_port);
    snprintf(base, sizeof base, "http://127.0.0.1:%u/", port);
    ck_assert_int_eq(pthread_create(&drop_acceptor, NULL, drop_accept, NULL), 0);
}

static void stop_drop_server(void)
{
    shutdown(drop_listener, SHUT_RDWR);
    pthread_join(drop_acceptor, NULL);
    close(drop_listener);
    stop_web();
}

/* Each page's request, sent twice by curl where the first connection was
 * dropped, is archived once, with its one response: the first head is
 * dropped with the fetch it began. warcio reads every record right. */
START_TEST(a_request_sent_again_on_a_new_connection_is_archived_once)
{
    tmp_name warc = tmp_path("again.warc");
    tmp_name cdxj = tmp_path("again.cdxj");
    const char *args[] = {"--warc",        warc.s, "--cdxj",          cdxj.s, "--workers", "1",
                          "--concurrency", "1",    "--ignore-robots", NULL};
    crawl_ok(args);
    ck_assert_uint_eq(atomic_load(&drop_answered), 6);
    ck_assert_msg(atomic_load(&drop_dropped) >= 1, "curl never sent a request again");

    char *files[] = {warc.s};
    warc_set set = {0};
    verdict v = judge_files(files, 1, cdxj.s, &set);
    ck_assert_uint_eq(v.records, 6);
    ck_assert_uint_eq(v.responses, 6);
    const char *paths[] = {"/", "/p1", "/p2", "/p3", "/p4", "/p5"};
    for (size_t i = 0; i < 6; i++) {
        char url[128];
        snprintf(url, sizeof url, "http://127.0.0.1:%u%s", port, paths[i]);
        size_t requests = 0, responses = 0;
        for (size_t k = 0; k < set.n; k++) {
            const wrec *r = &set.r[k];
            if (strcmp(r->uri, url) != 0)
                continue;
            if (strcmp(r->type, "request") == 0) {
                requests++;
                /* one head, not the two curl sent */
                const char *end = strstr(r->block, "\r\n\r\n");
                ck_assert_msg(end != NULL && (size_t)(end + 4 - r->block) == r->block_len,
                              "%s: the request record holds %.200s", paths[i], r->block);
            }
            responses += strcmp(r->type, "response") == 0;
        }
        ck_assert_msg(requests == 1 && responses == 1, "%s: %zu requests, %zu responses archived",
                      paths[i], requests, responses);
    }
    warc_set_free(&set);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("archive");
    TCase *tc = tcase_create("archive");
    tcase_set_timeout(tc, 300);
    tcase_add_checked_fixture(tc, start_web, stop_web);
    tcase_add_loop_test(tc, archive_holds_what_the_web_served, 0, 2);
    tcase_add_test(tc, rotation_makes_a_series);
    tcase_add_test(tc, archive_options_are_checked);
    tcase_add_test(tc, an_index_is_written_whole_or_not_at_all);
    suite_add_tcase(s, tc);
    TCase *gz = tcase_create("gzip web");
    tcase_set_timeout(gz, 300);
    tcase_add_checked_fixture(gz, start_gzip_web, stop_web);
    tcase_add_test(gz, gzip_bodies_are_archived_as_sent);
    suite_add_tcase(s, gz);
    TCase *sig = tcase_create("signals");
    tcase_set_timeout(sig, 300);
    tcase_add_checked_fixture(sig, start_slow_web, stop_web);
    tcase_add_loop_test(sig, a_stopped_crawl_leaves_a_valid_archive, 0, 2);
    tcase_add_loop_test(sig, a_killed_crawl_leaves_every_complete_record, 0, 2);
    tcase_add_loop_test(sig, a_resumed_crawl_goes_on_with_its_archive, 0, 2);
    suite_add_tcase(s, sig);
    TCase *again = tcase_create("stopped again and again");
    tcase_set_timeout(again, 300);
    tcase_add_checked_fixture(again, start_resume_web, stop_web);
    tcase_add_test(again, a_gzip_crawl_stopped_again_and_again_loses_nothing);
    suite_add_tcase(s, again);
    TCase *retries = tcase_create("retries");
    tcase_set_timeout(retries, 60);
    tcase_add_checked_fixture(retries, start_flaky_server, stop_flaky_server);
    tcase_add_loop_test(retries, every_attempt_of_a_retried_url_is_archived, 0, 2);
    suite_add_tcase(s, retries);
    TCase *resent = tcase_create("sent again");
    tcase_set_timeout(resent, 60);
    tcase_add_checked_fixture(resent, start_drop_server, stop_drop_server);
    tcase_add_test(resent, a_request_sent_again_on_a_new_connection_is_archived_once);
    suite_add_tcase(s, resent);
    return s;
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    curl_global_cleanup();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
