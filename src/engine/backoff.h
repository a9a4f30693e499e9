/* backoff.h - retries: which failures are tried again, and how long a
 * failing host waits before its next request. */
#ifndef SIEVE_BACKOFF_H
#define SIEVE_BACKOFF_H

#include <stdbool.h>
#include <stddef.h>

#include "sieve/crawl.h"

/* Failures in a row after which a host rests even if it did not ask to. */
#define BACKOFF_SET_ASIDE 3

typedef struct backoff backoff;

/* Pauses start at first_s and double with each failure of a host in a
 * row, up to max_s (which also caps a server's Retry-After). */
int backoff_new(backoff **out, double first_s, double max_s);
void backoff_free(backoff *b);

/* Whether a fetch that ended with outcome and HTTP status is worth trying
 * again: no connection, a timeout, a connection lost before the response
 * was whole, 429 Too Many Requests, or a 5xx. */
bool backoff_retryable(sieve_crawl_outcome outcome, long status);

/* A fetch from host (the authority, len bytes) failed in a retryable way,
 * with HTTP status (0: no response) and the server's Retry-After in
 * retry_after_s (0: none). Returns how long the whole host must now rest,
 * 0 for not at all: a server that asked for rest (429, 503, Retry-After)
 * gets it, and so does a host that failed BACKOFF_SET_ASIDE times in a
 * row. Thread-safe. */
double backoff_host_failed(backoff *b, const char *host, size_t len, long status,
                           double retry_after_s);

/* How long a URL waits before its retry number retry (1 for the first):
 * first_s doubled for each retry before, with jitter, up to max_s.
 * Thread-safe. */
double backoff_url_wait(backoff *b, unsigned retry);

/* A fetch from host got a response that is no retryable failure: the
 * host's failures in a row are forgotten. Thread-safe. */
void backoff_succeeded(backoff *b, const char *host, size_t len);

/* Hosts now counted as failing (for the tests and statistics). */
size_t backoff_failing_hosts(backoff *b);

#endif
