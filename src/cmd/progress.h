/* progress.h - the crawl's signal handling and status line. */
#ifndef SIEVE_PROGRESS_H
#define SIEVE_PROGRESS_H

#include <pthread.h>
#include <signal.h>

#include "crawl.h"

typedef struct progress progress;

/* Blocks SIGINT and SIGTERM in the calling thread (and so in every thread
 * it creates afterwards) and starts the thread that waits for them. Call it
 * before starting the workers. */
progress *progress_start(crawl *c);

/* Stops the thread, clearing the status line. Returns the signal that
 * interrupted the crawl, or 0 if none did. */
int progress_stop(progress *p);

#endif
