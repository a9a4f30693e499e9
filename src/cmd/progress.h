/* progress.h - the crawl's signals, status line, statistics and stderr. */
#ifndef SIEVE_PROGRESS_H
#define SIEVE_PROGRESS_H

#include <stdbool.h>

#include "record.h"
#include "sieve/crawl.h"

typedef struct progress progress;

typedef struct progress_config {
    sieve_crawler *crawler;
    record_writer *records;  /* flushed every second, reopened on SIGHUP */
    record_writer *stats;    /* NULL: none; else one object per interval */
    double stats_interval_s; /* with stats */
    double stop_grace_s;     /* what the first stop gives the transfers in flight */
    bool status_line;        /* refresh a status line on stderr every second */
    /* Called on the progress thread when flushing or reopening w failed
     * (errno set); it should stop the crawl. */
    void (*output_failed)(void *ctx, record_writer *w);
    void *ctx;
} progress_config;

/* Blocks SIGINT, SIGTERM, SIGHUP and SIGUSR1 in the calling thread, and so
 * in every thread it creates afterwards: they are taken by the progress
 * thread alone. Call it before any thread is created. */
void progress_block_signals(void);

/* Starts the thread that takes the signals: the first SIGINT or SIGTERM
 * calls sieve_crawler_stop() (the transfers in flight get their grace), a
 * second calls it again (they are aborted); SIGHUP reopens the outputs.
 * The status line and the statistics wait for progress_run(). Returns NULL
 * if the thread cannot start. */
progress *progress_start(const progress_config *cfg);

/* The crawl runs from now: the status line and the statistics begin. */
void progress_run(progress *p);

/* Stops the thread and clears the status line. Returns the signal that
 * first stopped the crawl, or 0 if none did. */
int progress_stop(progress *p);

/* Seconds since progress_run() (0 before). */
double progress_elapsed(const progress *p);

/* Writes one line to stderr, erasing the status line first so the two
 * never mix (it comes back at the next refresh). Thread-safe. */
void progress_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
