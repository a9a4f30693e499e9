/* mem.c - see mem.h for why large arrays bypass malloc. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mem.h"

/* Below this, malloc's arenas serve better than a mapping of our own. */
#define MEM_MMAP_MIN (256u * 1024u)

static size_t page_round(size_t size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return (size + page - 1) / page * page;
}

size_t sieve_mem_footprint(size_t size)
{
    if (size < MEM_MMAP_MIN)
        return (size + 63) & ~(size_t)63;
    return page_round(size);
}

void *sieve_mem_alloc_zeroed(size_t size)
{
    if (size == 0)
        return NULL;
    if (size < MEM_MMAP_MIN) {
        size_t rounded = (size + 63) & ~(size_t)63;
        void *p = aligned_alloc(64, rounded);
        if (p != NULL)
            memset(p, 0, rounded);
        return p;
    }
    if (size > SIZE_MAX - 2 * (size_t)sysconf(_SC_PAGESIZE))
        return NULL;
    void *p =
        mmap(NULL, page_round(size), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, page_round(size), MADV_HUGEPAGE);
#endif
    return p;
}

void sieve_mem_free(void *p, size_t size)
{
    if (p == NULL)
        return;
    if (size < MEM_MMAP_MIN)
        free(p);
    else
        munmap(p, page_round(size));
}
