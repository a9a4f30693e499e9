/* gate.h - the admission gate: every popped URL passes its host's
 * robots.txt before it is fetched. */
#ifndef SIEVE_GATE_H
#define SIEVE_GATE_H

#include <stdbool.h>

#include "sieve/robots.h"
#include "worker.h"

/* Routes a popped URL: starts it, refuses it (with a record), fetches its
 * host's robots.txt in its slot first, or puts it off until that file is
 * in. A worker calls it with a free slot. */
void gate_admit(worker *w, const sieve_url *u);

/* The robots.txt fetch for page u (popped) ended with rules (owned by the
 * gate from here; NULL when out of memory). */
void gate_robots_known(worker *w, const sieve_url *u, sieve_robots *rules);

/* Whether the robots.txt fetch for page u (popped), which could not get
 * the file, is to be made again: if its failure may pass (may_pass), the
 * crawl is not stopping, and the host's tries (the crawl's retries) are
 * not spent. Asked before the transfer ends, for its end's retried. */
bool gate_robots_again(sieve_crawler *c, const sieve_url *u, bool may_pass);

/* Ends that failed fetch, once its transfer is over: if again, u goes
 * back to wait for the next try and its host rests (status and
 * retry_after_s, the answer's HTTP status and Retry-After, 0 for none, as
 * a page's failure counts); else u is refused, and the host's other URLs
 * with it for a while, with a record that names why (what happened). */
void gate_robots_failed(worker *w, const sieve_url *u, const char *why, bool again, long status,
                        double retry_after_s);

/* Writes the record of a popped URL that is not fetched (why, and the
 * kind of failure that is), and releases it once the record is kept. */
void gate_refuse(sieve_crawler *c, const sieve_url *u, const char *why,
                 sieve_crawl_outcome outcome);

#endif
