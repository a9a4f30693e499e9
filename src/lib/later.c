/* later.c - URLs waiting for a time: a binary min-heap on the time.
 *
 * A fetch that failed in a way that may pass is tried again after a
 * pause of its own, and meanwhile its host serves its other URLs: so the
 * URL cannot wait in its host's queue, where it would hold up the rest,
 * nor in flight, where it would hold one of the host's connections. It
 * waits here, off every host, until its time comes. Retries are few next
 * to queued URLs, so each is one allocation. */
#include <stdlib.h>
#include <string.h>

#include "later.h"
#include "sieve/status.h"

static void swap(later_url *a, later_url *b)
{
    later_url t = *a;
    *a = *b;
    *b = t;
}

int later_add(later *l, double due, uint32_t host, const char *url, size_t len, uint32_t tag)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        later_url *p = realloc(l->heap, cap * sizeof *p);
        if (p == NULL)
            return SIEVE_ENOMEM;
        l->heap = p;
        l->cap = cap;
    }
    char *copy = malloc(len ? len : 1);
    if (copy == NULL)
        return SIEVE_ENOMEM;
    memcpy(copy, url, len);
    size_t i = l->n++;
    l->bytes += later_cost(len);
    l->heap[i] = (later_url){.due = due, .host = host, .tag = tag, .len = len, .url = copy};
    while (i > 0 && l->heap[i].due < l->heap[(i - 1) / 2].due) {
        swap(&l->heap[i], &l->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    return SIEVE_OK;
}

const later_url *later_first(const later *l)
{
    return l->n > 0 ? &l->heap[0] : NULL;
}

later_url later_take(later *l)
{
    later_url top = l->heap[0];
    l->bytes -= later_cost(top.len);
    l->heap[0] = l->heap[--l->n];
    for (size_t i = 0;;) {
        size_t least = i, a = 2 * i + 1, b = a + 1;
        if (a < l->n && l->heap[a].due < l->heap[least].due)
            least = a;
        if (b < l->n && l->heap[b].due < l->heap[least].due)
            least = b;
        if (least == i)
            break;
        swap(&l->heap[i], &l->heap[least]);
        i = least;
    }
    return top;
}

int later_foreach(const later *l, sieve_fifo_visit_fn fn, void *ud)
{
    for (size_t i = 0; i < l->n; i++) {
        int rc = fn(ud, l->heap[i].url, l->heap[i].len, l->heap[i].tag);
        if (rc != 0)
            return rc;
    }
    return 0;
}

void later_free(later *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->heap[i].url);
    free(l->heap);
    *l = (later){0};
}
