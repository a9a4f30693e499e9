/* seeds.h - reading the crawl's starting points. */
#ifndef SIEVE_SEEDS_H
#define SIEVE_SEEDS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Longest line of a seed file, its newline left out. */
#define SEED_LINE_MAX 16384
/* Largest seed file read. */
#define SEED_FILE_MAX (UINT64_C(1) << 30)

/* Adds one seed of len bytes (not NUL-terminated); returns a sieve status:
 * SIEVE_OK, SIEVE_SEEN, or an error (sieve_crawler_add_seed()'s). */
typedef int (*seed_add_fn)(void *ctx, const char *url, size_t len);

enum {
    SEEDS_EARGS = -1,  /* a seed file could not be read, or was refused */
    SEEDS_EFATAL = -2, /* adding a seed failed for a reason other than the seed */
};

/* Each argument is a URL (it contains "://") or a seed file: one URL a
 * line, blank lines and lines starting with '#' skipped, spaces around a
 * URL ignored. A line that cannot be a seed (add refuses it, it is longer
 * than SEED_LINE_MAX, or it holds a NUL byte) is reported on err as
 * "sieve crawl: FILE:LINE: skipped: reason", and the lines after it are
 * read as usual. A seed file must be a regular file of at most
 * SEED_FILE_MAX bytes. Returns the number of seeds added, SEEDS_EARGS or
 * SEEDS_EFATAL (reported on err). */
long seeds_load(const char *const *args, size_t n, seed_add_fn add, void *ctx, FILE *err);

#endif
