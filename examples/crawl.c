/* crawl.c - the crawl engine embedded in a program, built with nothing but
 * pkg-config:
 *
 *     cc crawl.c $(pkg-config --cflags --libs sieve) -o crawl
 *     ./crawl https://example.org/                # polite: the engine's default delay
 *     ./crawl --delay 0 http://127.0.0.1:8917/    # a web of your own: no delay
 *
 * Crawls from URL within its host and prints one line per fetched URL,
 *
 *     URL STATUS BYTES
 *     URL STATUS error: WHY
 *
 * and a summary on stderr. Ctrl-C stops the crawl: no new fetch starts and
 * the transfers in flight may finish; a second Ctrl-C cuts them off.
 * Exit status: 0 when the crawl ran (to its end or until Ctrl-C), 2 for
 * bad arguments, 1 when it could not run. */
#define _POSIX_C_SOURCE 200809L /* sigaction() */

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sieve/crawl.h>
#include <sieve/status.h>

/* The crawler, for the signal handler. */
static sieve_crawler *crawler;

/* sieve_crawler_stop() only stores a flag and writes to a pipe: it is safe
 * in a signal handler. Called twice, it aborts the transfers in flight. */
static void on_signal(int sig)
{
    (void)sig;
    sieve_crawler_stop(crawler);
}

/* One call per fetched URL, from the engine's worker threads, several at
 * once: stdio locks stdout for each call, so every line comes out whole.
 * The record is valid only during the call. */
static int print_record(void *ud, const sieve_crawl_record *r)
{
    (void)ud;
    if (r->error != NULL)
        printf("%s %ld error: %s\n", r->url, r->status, r->error);
    else
        printf("%s %ld %llu\n", r->url, r->status, (unsigned long long)r->bytes);
    return SIEVE_OK; /* a negative status would stop the crawl */
}

static int usage(void)
{
    fprintf(stderr, "usage: crawl [--delay SECONDS] URL\n");
    return 2;
}

int main(int argc, char **argv)
{
    sieve_crawl_options o;
    sieve_crawl_options_init(&o);      /* polite defaults: robots.txt, 1 s between requests */
    o.logger = sieve_logger_default(); /* the engine's warnings and errors on stderr */

    int i = 1;
    if (argc > 2 && strcmp(argv[1], "--delay") == 0) {
        char *end;
        o.delay_s = strtod(argv[2], &end);
        if (end == argv[2] || *end != '\0' || !(o.delay_s >= 0 && o.delay_s <= 3600)) {
            fprintf(stderr, "crawl: --delay wants seconds from 0 to 3600, not '%s'\n", argv[2]);
            return 2;
        }
        i = 3;
    }
    if (argc != i + 1 || argv[i][0] == '-')
        return usage();

    int rc = sieve_crawler_new(&crawler, &o);
    if (rc != SIEVE_OK) {
        fprintf(stderr, "crawl: %s\n", sieve_strerror(rc));
        return 1;
    }
    sieve_crawl_callbacks cb = {.on_record = print_record};
    sieve_crawler_set_callbacks(crawler, &cb, NULL);
    rc = sieve_crawler_add_seed(crawler, argv[i], SIZE_MAX); /* SIZE_MAX: NUL-terminated */
    if (rc != SIEVE_OK) {
        fprintf(stderr, "crawl: %s: %s\n", argv[i], sieve_strerror(rc));
        sieve_crawler_free(crawler);
        return 2;
    }

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    rc = sieve_crawler_run(crawler); /* blocks until the crawl ends */

    /* No handler may see the crawler once it is freed. */
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);

    sieve_crawl_stats st;
    sieve_crawler_stats_get(crawler, &st);
    fprintf(stderr, "crawl: %llu fetched, %llu errors, %llu bytes, %llu links queued%s\n",
            (unsigned long long)st.fetched, (unsigned long long)st.errors,
            (unsigned long long)st.bytes, (unsigned long long)st.links_new,
            rc == SIEVE_ECLOSED ? ", interrupted" : "");
    if (rc != SIEVE_OK && rc != SIEVE_ECLOSED)
        fprintf(stderr, "crawl: %s\n", sieve_strerror(rc)); /* the logger said more */
    sieve_crawler_free(crawler);
    return rc == SIEVE_OK || rc == SIEVE_ECLOSED ? 0 : 1;
}
