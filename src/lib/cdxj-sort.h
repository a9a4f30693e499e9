/* cdxj-sort.h - the CDXJ index's lines sorted in bounded memory: an
 * external merge sort (internal; cdxj-sort.c says how). */
#ifndef SIEVE_CDXJ_SORT_H
#define SIEVE_CDXJ_SORT_H

#include <stddef.h>
#include <stdio.h>

#include "sieve/status.h"

/* The memory sieve_warc_index() sorts in before it spills runs to disk,
 * and the runs it merges at once. */
#define CDXJ_SORT_BUDGET (64 * 1024 * 1024)
#define CDXJ_SORT_FANIN  64

typedef struct cdxj_sort cdxj_sort;

/* A sorter that holds at most about budget bytes of lines in memory (a
 * line longer than that alone), spills sorted runs to unnamed files in
 * dir (which must outlive it) and merges fanin runs at a time (at least
 * 2). SIEVE_OK, SIEVE_EINVAL or SIEVE_ENOMEM. */
int cdxj_sort_new(cdxj_sort **out, size_t budget, size_t fanin, const char *dir);

/* Adds a line (no newline, no NUL inside). SIEVE_OK; SIEVE_EIO when a
 * run could not be written; SIEVE_ENOMEM. */
int cdxj_sort_add(cdxj_sort *s, const char *line);

/* Writes every line added, sorted bytewise, each with a newline after
 * it, to out (not flushed). SIEVE_OK; SIEVE_EIO when out or a run could
 * not be written or read back; SIEVE_ENOMEM. Call it once. */
int cdxj_sort_write(cdxj_sort *s, FILE *out);

/* Frees the sorter and closes (so removes) its runs. */
void cdxj_sort_free(cdxj_sort *s);

#endif
