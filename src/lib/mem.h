/* mem.h - large zeroed allocations aligned to a cache line (internal).
 *
 * Bloom bit arrays and hash tables are large and touched at random. They
 * come straight from mmap: pages are zero without a memset (so resident
 * memory grows only with use) and transparent huge pages are requested,
 * which turns most TLB misses of a random probe into hits. */
#ifndef SIEVE_MEM_H
#define SIEVE_MEM_H

#include <stddef.h>

/* Returns size zeroed bytes aligned to 64, or NULL. size 0 gives NULL. */
void *sieve_mem_alloc_zeroed(size_t size);

/* Releases what sieve_mem_alloc_zeroed() returned for the same size. */
void sieve_mem_free(void *p, size_t size);

/* Bytes actually reserved for a request of size (rounded to pages). */
size_t sieve_mem_footprint(size_t size);

#endif
