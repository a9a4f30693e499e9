/* url-internal.h - canonicalization against a base parsed once (internal:
 * the link extractor resolves a whole page's links against one base). */
#ifndef SIEVE_URL_INTERNAL_H
#define SIEVE_URL_INTERNAL_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>

#include "sieve/url.h"

/* A base URL parsed once, for the links of a page (url-base.c). */
typedef struct sieve_canon_base sieve_canon_base;

/* Parses an absolute http(s) base URL; NULL if it is not one or memory
 * ran out. */
sieve_canon_base *sieve_canon_parse_base(const char *base);

/* Frees a parsed base; NULL is a no-op. */
void sieve_canon_base_free(sieve_canon_base *b);

/* As sieve_canon_url() without the segment and repeat guards, for a base:
 * they judge the links, not what the links resolve against. No info. */
int sieve_canon_url_unguarded(const sieve_canon *c, const char *base, const char *ref,
                              size_t ref_len, char *out, size_t cap);

/* As sieve_canon_url() with base parsed by sieve_canon_parse_base(). */
int sieve_canon_url_parsed(const sieve_canon *c, const sieve_canon_base *base, const char *ref,
                           size_t ref_len, char *out, size_t cap, sieve_canon_info *info);

/* Where the fragment of ref (n bytes, as written) starts when
 * canonicalizing only what comes before it gives the same result, else n:
 * curl never hands the fragment back, but blanks, tab/CR/LF and the file:
 * scheme make some cuts unsafe. http_base: the base, if any, is an http(s)
 * URL. Lets the link extractor key its per-page table by what counts. */
size_t sieve_canon_fragment_at(const char *ref, size_t n, bool http_base);

#endif
