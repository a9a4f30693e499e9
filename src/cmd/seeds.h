/* seeds.h - reading the crawl's starting points. */
#ifndef SIEVE_SEEDS_H
#define SIEVE_SEEDS_H

#include <stdio.h>

#include "sieve/url.h"

/* Receives each seed in canonical form, with where its host lies. */
typedef int (*seed_fn)(void *ctx, const char *url, const sieve_canon_info *info);

/* Each argument is a URL (it contains "://") or a seed file: one URL a
 * line, blank lines and lines starting with '#' skipped. A line that is not
 * a valid http(s) URL is reported on err as "FILE:LINE: reason" and
 * skipped; the rest still count. Returns the number of seeds handed to fn,
 * or -1 if a file cannot be read or fn fails (reported on err). */
long seeds_load(const char *const *args, unsigned n, const sieve_canon *canon, seed_fn fn,
                void *ctx, FILE *err);

#endif
