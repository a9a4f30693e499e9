/* sieve/sieve.h - libsieve, a crawl frontier: a FIFO of URLs plus a Bloom
 * filter (or an exact set) of the URLs already seen.
 *
 * Include this one header to get the whole API. */
#ifndef SIEVE_SIEVE_H
#define SIEVE_SIEVE_H

#include "sieve/export.h"
#include "sieve/status.h"
#include "sieve/hash.h"
#include "sieve/log.h"
#include "sieve/bloom.h"
#include "sieve/hashset.h"
#include "sieve/fifo.h"
#include "sieve/seen.h"
#include "sieve/frontier.h"
#include "sieve/url.h"
#include "sieve/links.h"
#include "sieve/robots.h"
#include "sieve/sitemap.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version as "MAJOR.MINOR.PATCH". */
SIEVE_API const char *sieve_version(void);

#ifdef __cplusplus
}
#endif
#endif
