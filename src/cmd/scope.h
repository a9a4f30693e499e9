/* scope.h - which discovered links the crawl follows. */
#ifndef SIEVE_SCOPE_H
#define SIEVE_SCOPE_H

#include <stddef.h>
#include <stdint.h>

struct crawl_opts;
typedef struct scope scope;

typedef enum scope_kind { SCOPE_HOST, SCOPE_DOMAIN, SCOPE_ANY } scope_kind;

/* Why a link was not followed; SCOPE_IN means it may be pushed. */
typedef enum scope_verdict {
    SCOPE_IN = 0,
    SCOPE_OFF_SITE,    /* host or registrable domain not among the seeds' */
    SCOPE_DENIED,      /* matches a --deny expression */
    SCOPE_NOT_ALLOWED, /* matches no --allow expression */
    SCOPE_TOO_DEEP,    /* beyond --max-depth */
    SCOPE_HOST_FULL,   /* its host has reached --max-pages-per-host */
    SCOPE_VERDICTS
} scope_verdict;

/* Creates the scope: compiles the --allow and --deny expressions. On a bad
 * expression returns SIEVE_EINVAL and writes why into err. */
int scope_new(scope **out, const struct crawl_opts *o, char *err, size_t errlen);

void scope_free(scope *s);

/* Adds a seed's host (or its registrable domain) to the set the crawl
 * stays within. Not thread-safe: call before the workers start. */
int scope_add_seed(scope *s, const char *host, size_t host_len);

/* Judges a canonical URL found at depth. Thread-safe. A SCOPE_IN verdict
 * reserves one page of the host's quota; give it back with
 * scope_release() if the URL turns out not to be enqueued. */
scope_verdict scope_check(scope *s, const char *url, const char *host, size_t host_len,
                          uint32_t depth);

/* Returns the quota scope_check() reserved for a URL not enqueued. */
void scope_release(scope *s, const char *host, size_t host_len);

/* A short name for a verdict, for the summary. */
const char *scope_verdict_name(scope_verdict v);

#endif
