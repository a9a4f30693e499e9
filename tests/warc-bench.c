/* warc-bench.c - how fast the WARC writer archives fetches.
 *
 * usage: warc-bench DIR PAGES PAGE_BYTES THREADS LEVEL [plain|gz] [GZIP_THREADS]
 *
 * Writes PAGES fetches with bodies of PAGE_BYTES from THREADS threads into
 * DIR/bench.warc[.gz] (gzip level LEVEL), and prints one line: body
 * megabytes per second (MB = 10^6 bytes) and fetches per second until the
 * last fetch ended, the same rate counting close()'s fsync (the disk's
 * share), megabytes per CPU second (steady when other work shares the
 * machine), and the archive's size. Bodies are HTML-like text made of a vocabulary of tags
 * and words, which deflates about as real pages do (3 to 5 times), fed in
 * 16 KiB pieces as a transfer delivers them. GZIP_THREADS is the
 * archive's compression threads (default: one per core; "inline": the
 * feeding threads compress).
 *
 * "deflate-cmp" as the last argument instead compares zlib's and
 * libdeflate's one-shot compression of the same bodies (the archive
 * deflates a block that fits its spool whole with libdeflate), in MB per
 * second of wall time and of CPU time. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <zlib.h>

#include "sieve/warc.h"
#include <libdeflate.h>

static const char *const words[] = {"<div class=\"item\">",
                                    "</div>",
                                    "<a href=\"/p/",
                                    ".html\">",
                                    "</a>",
                                    "<p>",
                                    "</p>",
                                    "the",
                                    "crawler",
                                    "archive",
                                    "record",
                                    "page",
                                    "link",
                                    "frontier",
                                    "bloom",
                                    "filter",
                                    "<span>",
                                    "</span>",
                                    "web",
                                    "host",
                                    "robots",
                                    "sitemap",
                                    "and",
                                    "of",
                                    "to",
                                    "in",
                                    "<li>",
                                    "</li>",
                                    "data",
                                    "2026",
                                    "news",
                                    "story",
                                    "<img src=\"/img/",
                                    ".png\" alt=\"\">"};

static unsigned char *html_body(size_t len, unsigned seed)
{
    unsigned char *b = malloc(len + 64);
    size_t n = 0;
    uint32_t x = seed * 2654435761u + 7;
    while (n < len) {
        x = x * 1103515245u + 12345u;
        const char *w = words[(x >> 16) % (sizeof words / sizeof words[0])];
        size_t k = strlen(w);
        memcpy(b + n, w, k);
        n += k;
        if ((x >> 8) % 5 == 0)
            n += (size_t)sprintf((char *)b + n, "%u", (x >> 4) % 100000);
        b[n++] = (x >> 12) % 9 == 0 ? '\n' : ' ';
    }
    return b;
}

typedef struct job {
    sieve_warc *w;
    int first, count;
    size_t bytes;
    unsigned char *const *bodies;
    int n_bodies;
    int failures;
} job;

static void *run(void *p)
{
    job *j = p;
    const char *req = "GET / HTTP/1.1\r\nHost: 127.0.0.1:8917\r\nUser-Agent: sieve/0.1.0\r\n"
                      "Accept: */*\r\nAccept-Encoding: gzip\r\n\r\n";
    const char *head = "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
                       "Date: Tue, 24 Nov 2026 10:00:00 GMT\r\nServer: sieve-web\r\n\r\n";
    char url[96];
    for (int i = j->first; i < j->first + j->count; i++) {
        snprintf(url, sizeof url, "http://127.0.0.1:8917/p/%d.html", i);
        sieve_warc_fetch_info fi = {.target_uri = url, .ip_address = "127.0.0.1"};
        sieve_warc_fetch *f;
        const unsigned char *body = j->bodies[i % j->n_bodies];
        int rc = sieve_warc_fetch_begin(j->w, &fi, &f);
        if (!rc)
            rc = sieve_warc_fetch_request_head(f, req, strlen(req));
        if (!rc)
            rc = sieve_warc_fetch_response_head(f, head, strlen(head));
        for (size_t off = 0; !rc && off < j->bytes; off += 16384)
            rc = sieve_warc_fetch_response_body(f, body + off,
                                                j->bytes - off < 16384 ? j->bytes - off : 16384);
        rc = rc ? (sieve_warc_fetch_abort(f), rc) : sieve_warc_fetch_end(f, NULL, NULL);
        j->failures += rc != SIEVE_OK;
    }
    return NULL;
}

/* CPU seconds of the whole process: what the rate costs, whatever else
 * the machine runs at the same time. */
static double cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
           ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One-shot compression of every body, zlib against libdeflate. */
static int deflate_cmp(unsigned char *const *bodies, int n, size_t len, int pages, int level)
{
    size_t cap = compressBound((uLong)len) + 64;
    unsigned char *out = malloc(cap);
    /* One zlib stream, reset between bodies, as the writer's pool does. */
    z_stream z = {0};
    deflateInit2(&z, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
    double t0 = now(), c0 = cpu(), zbytes = 0;
    for (int i = 0; i < pages; i++) {
        z.next_in = bodies[i % n];
        z.avail_in = (unsigned)len;
        z.next_out = out;
        z.avail_out = (unsigned)cap;
        deflate(&z, Z_FINISH);
        zbytes += (double)z.total_out;
        deflateReset(&z);
    }
    double tz = now() - t0, cz = cpu() - c0;
    deflateEnd(&z);
    struct libdeflate_compressor *c = libdeflate_alloc_compressor(level);
    double dbytes = 0;
    t0 = now();
    c0 = cpu();
    for (int i = 0; i < pages; i++)
        dbytes += (double)libdeflate_deflate_compress(c, bodies[i % n], len, out, cap);
    double td = now() - t0, cd = cpu() - c0;
    libdeflate_free_compressor(c);
    double mb = (double)len * pages / 1e6;
    printf("level %d, %d bodies of %zu bytes: zlib %.1f MB/s (%.1f per CPU s) ratio %.2f; "
           "libdeflate %.1f MB/s (%.1f per CPU s) ratio %.2f\n",
           level, pages, len, mb / tz, mb / cz, mb * 1e6 / zbytes, mb / td, mb / cd,
           mb * 1e6 / dbytes);
    free(out);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 7 && argc != 8) {
        fprintf(stderr,
                "usage: %s DIR PAGES PAGE_BYTES THREADS LEVEL plain|gz|deflate-cmp "
                "[GZIP_THREADS]\n",
                argv[0]);
        return 2;
    }
    int pages = atoi(argv[2]), threads = atoi(argv[4]), level = atoi(argv[5]);
    size_t bytes = (size_t)atol(argv[3]);
    enum { N_BODIES = 64 };
    unsigned char *bodies[N_BODIES];
    for (int i = 0; i < N_BODIES; i++)
        bodies[i] = html_body(bytes, (unsigned)i);
    if (strcmp(argv[6], "deflate-cmp") == 0)
        return deflate_cmp(bodies, N_BODIES, bytes, pages, level);
    char path[4096];
    snprintf(path, sizeof path, "%s/bench.warc%s", argv[1],
             strcmp(argv[6], "gz") == 0 ? ".gz" : "");
    remove(path);
    sieve_warc_options o;
    sieve_warc_options_init(&o);
    o.gzip_level = level;
    if (argc == 8 && strcmp(argv[7], "inline") == 0)
        o.gzip_inline = true;
    else if (argc == 8)
        o.gzip_threads = (unsigned)atoi(argv[7]);
    sieve_warc *w;
    int rc = sieve_warc_open(&w, path, &o);
    if (rc) {
        fprintf(stderr, "%s: %s\n", path, sieve_strerror(rc));
        return 1;
    }
    pthread_t th[64];
    job jobs[64];
    double t0 = now(), c0 = cpu();
    for (int t = 0; t < threads && t < 64; t++) {
        jobs[t] = (job){.w = w,
                        .first = pages / threads * t,
                        .count = pages / threads,
                        .bytes = bytes,
                        .bodies = bodies,
                        .n_bodies = N_BODIES};
        pthread_create(&th[t], NULL, run, &jobs[t]);
    }
    int failures = 0;
    for (int t = 0; t < threads && t < 64; t++) {
        pthread_join(th[t], NULL);
        failures += jobs[t].failures;
    }
    double dt = now() - t0, dc = cpu() - c0;
    rc = sieve_warc_close(w);
    double dsync = now() - t0; /* with close()'s fsync: the disk's share */
    struct stat st;
    stat(path, &st);
    double mb = (double)bytes * pages / 1e6;
    printf("%s, %d x %zu bytes, %d thread(s), %s compressing, level %d: %.1f MB/s, "
           "%.0f fetches/s (%.1f MB/s with the final fsync; %.1f MB per CPU second), "
           "archive %.1f MB (%.2f of the bodies)%s\n",
           argv[6], pages, bytes, threads, argc == 8 ? argv[7] : "default", level, mb / dt,
           pages / dt, mb / dsync, mb / dc, (double)st.st_size / 1e6, (double)st.st_size / 1e6 / mb,
           failures || rc ? ", FAILURES" : "");
    for (int i = 0; i < N_BODIES; i++)
        free(bodies[i]);
    remove(path);
    return failures || rc ? 1 : 0;
}
