/* options.h - the ranges a crawl's settings must fall in, and the
 * engine's own copy of them. */
#ifndef SIEVE_OPTIONS_H
#define SIEVE_OPTIONS_H

#include "engine.h"

#define OPTIONS_STR_(x) #x
#define OPTIONS_STR(x)  OPTIONS_STR_(x)

/* Limits beyond which a setting cannot be honoured on one machine: each
 * transfer slot holds about 60 KiB of buffers. */
#define OPTIONS_MAX_WORKERS          SIEVE_CRAWL_MAX_WORKERS
#define OPTIONS_MAX_CONCURRENCY      4096
#define OPTIONS_MAX_REDIRECTS        255 /* hops fit the tag's 8 bits */
#define OPTIONS_MAX_RETRIES          7   /* retries made fit the tag's 3 bits */
#define OPTIONS_MAX_HOST_CONNECTIONS 10000
#define OPTIONS_MAX_SECONDS          86400.0 /* a day */

/* Depths at or above this are held at the top of the tag; the same in
 * decimal, for messages. */
#define TAG_DEPTH_LIMIT     TAG_DEPTH_MASK
#define TAG_DEPTH_LIMIT_DEC 1048575

/* SIEVE_OK, or SIEVE_EINVAL with every bad setting logged. */
int options_validate(const sieve_crawl_options *o);

/* Copies src into dst, its strings and arrays into one allocation
 * (*strings, freed by the caller). */
int options_copy(sieve_crawl_options *dst, char **strings, const sieve_crawl_options *src);

#endif
