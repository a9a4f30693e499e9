/* later.h - URLs that wait for a time before they go back to their
 * host's queue: a frontier's retries. */
#ifndef SIEVE_LATER_H
#define SIEVE_LATER_H

#include <stddef.h>
#include <stdint.h>

#include "sieve/fifo.h"

typedef struct later_url {
    double due; /* when it may go back */
    uint32_t host;
    uint32_t tag;
    size_t len;
    char *url; /* owned: its entry (entry.h), len bytes */
} later_url;

/* A min-heap on due; zero-initialized is empty. */
typedef struct later {
    later_url *heap;
    size_t n, cap;
    uint64_t bytes; /* what the waiting URLs cost, as later_cost() counts */
} later;

/* What a waiting URL of len bytes costs in memory: its copy, its slot in
 * the heap and the allocator's header. */
static inline uint64_t later_cost(size_t len)
{
    return (uint64_t)len + sizeof(later_url) + 16;
}

/* Adds a copy of url. SIEVE_OK or SIEVE_ENOMEM (nothing added). */
int later_add(later *l, double due, uint32_t host, const char *url, size_t len, uint32_t tag);

/* The URL due first, or NULL when none waits. */
const later_url *later_first(const later *l);

/* Removes the URL due first; its url is the caller's to free. */
later_url later_take(later *l);

/* Calls fn for each waiting URL, in no order, until fn returns nonzero
 * (which is returned). */
int later_foreach(const later *l, sieve_fifo_visit_fn fn, void *ud);

void later_free(later *l);

#endif
