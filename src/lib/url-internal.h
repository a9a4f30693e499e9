/* url-internal.h - canonicalization against a base parsed once (internal:
 * the link extractor resolves a whole page's links against one base). */
#ifndef SIEVE_URL_INTERNAL_H
#define SIEVE_URL_INTERNAL_H

#include <curl/curl.h>

#include "sieve/url.h"

/* Parses an absolute base URL; NULL if it is not one or memory ran out. */
CURLU *sieve_canon_parse_base(const char *base);

/* As sieve_canon_url() with base parsed by sieve_canon_parse_base(). */
int sieve_canon_url_parsed(const sieve_canon *c, CURLU *base, const char *ref, size_t ref_len,
                           char *out, size_t cap, sieve_canon_info *info);

#endif
