/* worker.h - a fetch worker: one thread, one curl multi handle, up to C
 * transfers at once, fed by the frontier. */
#ifndef SIEVE_WORKER_H
#define SIEVE_WORKER_H

#include "crawl.h"

typedef struct worker worker;

/* Creates a worker with its C transfer slots. NULL when out of memory. */
worker *worker_new(crawl *c);

/* Runs the worker until the frontier is drained or closed and its own
 * transfers have ended. A pthread start routine: arg is a worker. */
void *worker_run(void *arg);

void worker_free(worker *w);

#endif
