/* dedupe.c - libsieve embedded in another program, built with nothing but
 * pkg-config:
 *
 *     cc dedupe.c $(pkg-config --cflags --libs sieve) -o dedupe
 *     ./dedupe < urls.txt > unique.txt
 *
 * Reads URLs, one a line, and prints each the first time it appears, in
 * arrival order, using the frontier as a streaming de-duplicator: lines go
 * in by batches of 256, as a crawler pushes a page's links, and come out
 * of the queue. With --exact no URL is ever dropped; by default a Bloom
 * filter drops about one new URL in a hundred thousand to use ~3 bytes a
 * URL. A summary goes to stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sieve/sieve.h>

enum { BATCH = 256, LINE_MAX_LEN = 8192 };

static void drain(sieve_frontier *f, char *buf, size_t cap)
{
    sieve_url u;
    while (sieve_frontier_pop(f, buf, cap, &u, 0) == SIEVE_OK) {
        fwrite(u.url, 1, u.len, stdout);
        fputc('\n', stdout);
        sieve_frontier_done(f, &u);
    }
}

int main(int argc, char **argv)
{
    sieve_frontier_config cfg;
    sieve_frontier_config_init(&cfg);
    cfg.seen.capacity = 10000000;
    cfg.seen.fp_rate = 1e-5;
    cfg.seen.overflow = SIEVE_OVERFLOW_GROW;
    cfg.max_url_len = LINE_MAX_LEN;
    if (argc > 1 && strcmp(argv[1], "--exact") == 0)
        cfg.seen.kind = SIEVE_SEEN_EXACT;

    sieve_frontier *f;
    int rc = sieve_frontier_new(&f, &cfg);
    if (rc != SIEVE_OK) {
        fprintf(stderr, "dedupe: %s\n", sieve_strerror(rc));
        return 1;
    }

    static char lines[BATCH][LINE_MAX_LEN + 2];
    static char out[LINE_MAX_LEN + 1];
    sieve_url batch[BATCH];
    int results[BATCH];
    size_t n = 0, lineno = 0, refused = 0;
    int more = 1;
    while (more) {
        more = fgets(lines[n], sizeof lines[n], stdin) != NULL;
        if (more) {
            lineno++;
            size_t len = strcspn(lines[n], "\r\n");
            batch[n] = (sieve_url){.url = lines[n], .len = len, .depth = 0};
            n++;
        }
        if (n == BATCH || (!more && n > 0)) {
            if (sieve_frontier_push_batch(f, batch, n, results) < 0)
                fprintf(stderr, "dedupe: out of memory\n");
            for (size_t i = 0; i < n; i++) {
                if (results[i] < 0 && results[i] != SIEVE_EEMPTY) {
                    refused++;
                    fprintf(stderr, "dedupe: line %zu: %s\n", lineno - n + i + 1,
                            sieve_strerror(results[i]));
                }
            }
            n = 0;
            drain(f, out, sizeof out);
        }
    }

    sieve_frontier_stats st;
    sieve_frontier_stats_get(f, &st);
    fprintf(stderr,
            "dedupe: %llu lines, %llu unique, %llu repeated, %zu refused, seen-set %llu bytes\n",
            (unsigned long long)lineno, (unsigned long long)st.enqueued,
            (unsigned long long)st.seen, refused, (unsigned long long)st.seen_bytes);
    sieve_frontier_free(f);
    return 0;
}
