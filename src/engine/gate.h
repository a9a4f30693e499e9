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
 * gate from here; NULL when out of memory); temporary marks a failure,
 * kept only a short while. */
void gate_robots_known(worker *w, const sieve_url *u, sieve_robots *rules, bool temporary);

/* Writes the record of a popped URL that is not fetched (why, and the
 * kind of failure that is), and releases it once the record is kept. */
void gate_refuse(sieve_crawler *c, const sieve_url *u, const char *why,
                 sieve_crawl_outcome outcome);

#endif
