/* scope.h - which discovered links the crawl follows. */
#ifndef SIEVE_SCOPE_H
#define SIEVE_SCOPE_H

#include <stddef.h>
#include <stdint.h>

#include "sieve/crawl.h"
#include "sieve/url.h"

#include "accept.h"

typedef struct scope scope;

/* Why a link was not followed; SCOPE_IN means it may be pushed. */
typedef enum scope_verdict {
    SCOPE_IN = 0,
    SCOPE_OFF_SITE,    /* origin or registrable domain not among the seeds' */
    SCOPE_DENIED,      /* matches a deny expression */
    SCOPE_NOT_ALLOWED, /* matches no allow expression */
    SCOPE_TOO_DEEP,    /* beyond max_depth */
    SCOPE_HOST_FULL,   /* its host has reached max_pages_per_host */
    SCOPE_REJECTED,    /* its suffix is rejected (or not accepted) */
    SCOPE_VERDICTS
} scope_verdict;

/* Creates the scope: compiles the allow and deny expressions. accept (may
 * be NULL) must outlive the scope. On a bad expression returns
 * SIEVE_EINVAL and logs which one and why. */
int scope_new(scope **out, const sieve_crawl_options *o, const accept_rules *accept);

void scope_free(scope *s);

/* Adds a seed's origin (or its host's registrable domain) to the set the
 * crawl stays within. url is canonical, info from sieve_canon_url(). Not
 * thread-safe: call before the workers start. */
int scope_add_seed(scope *s, const char *url, const sieve_canon_info *info);

/* Judges a canonical URL found at depth. Thread-safe. A SCOPE_IN verdict
 * reserves one URL of its host's quota; give it back with scope_release()
 * if the URL turns out not to be enqueued. */
scope_verdict scope_check(scope *s, const char *url, const sieve_canon_info *info, uint32_t depth);

/* Returns the quota scope_check() reserved for a URL not enqueued. */
void scope_release(scope *s, const char *url);

/* A short name for a verdict. */
const char *scope_verdict_name(scope_verdict v);

#endif
