/* accept.h - --accept and --reject: what the crawl keeps, by the suffix of
 * a URL's path or by the content type of a response. */
#ifndef SIEVE_ACCEPT_H
#define SIEVE_ACCEPT_H

#include <stdbool.h>
#include <stddef.h>

#include "sieve/crawl.h"

typedef struct accept_rules accept_rules;

/* Builds the rules of o's accept and reject lists. *out is NULL when both
 * are empty (everything is kept). SIEVE_EINVAL (logged) for an empty
 * entry; SIEVE_ENOMEM. */
int accept_new(accept_rules **out, const sieve_crawl_options *o);

void accept_free(accept_rules *a);

/* Whether a link to the canonical url (len bytes) may be queued: its path
 * ends in no rejected suffix, and, if suffixes are accepted, in an
 * accepted one, in one that names HTML, or in none at all (a page that
 * may link on). NULL rules keep everything. */
bool accept_url(const accept_rules *a, const char *url, size_t len);

/* Whether a response of content type ct (NULL: none given) is kept: its
 * type is not rejected and, if types are accepted, is accepted or HTML.
 * NULL rules keep everything. */
bool accept_type(const accept_rules *a, const char *ct);

#endif
