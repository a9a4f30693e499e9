/* url-impl.h - what url.c (the canonicalizer) and url-base.c (a page's
 * base, and references joined to it) share: a scratch string on the
 * stack that spills to the heap, and the two calls between the files.
 * Not exported; the link extractor's view is url-internal.h. */
#ifndef SIEVE_URL_IMPL_H
#define SIEVE_URL_IMPL_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "url-internal.h"

/* Stack scratch size; longer inputs fall back to malloc. */
#define SCRATCH 4096

/* A growable output string over a caller buffer, spilling to the heap. */
typedef struct sbuf {
    char *p;
    size_t len, cap;
    bool heap;
    bool failed;
} sbuf;

static inline void sb_init(sbuf *b, char *stack, size_t cap)
{
    *b = (sbuf){.p = stack, .cap = cap};
}

/* Grows b to hold more bytes; the slow path of sb_reserve(). */
static inline bool sb_grow(sbuf *b, size_t more)
{
    if (b->failed)
        return false;
    size_t cap = b->cap * 2 > b->len + more ? b->cap * 2 : b->len + more;
    char *p = b->heap ? realloc(b->p, cap) : malloc(cap);
    if (!p) {
        b->failed = true;
        return false;
    }
    if (!b->heap)
        memcpy(p, b->p, b->len);
    b->p = p;
    b->cap = cap;
    b->heap = true;
    return true;
}

static inline bool sb_reserve(sbuf *b, size_t more)
{
    return b->len + more <= b->cap ? !b->failed : sb_grow(b, more);
}

static inline void sb_put(sbuf *b, const char *s, size_t n)
{
    if (n && sb_reserve(b, n)) {
        memcpy(b->p + b->len, s, n);
        b->len += n;
    }
}

static inline void sb_putc(sbuf *b, char c)
{
    if (sb_reserve(b, 1))
        b->p[b->len++] = c;
}

static inline void sb_free(sbuf *b)
{
    if (b->heap)
        free(b->p);
}

/* A status for a CURLU call's result: SIEVE_OK, SIEVE_ENOMEM,
 * SIEVE_ESCHEME or SIEVE_EURL (url.c). */
int url_map_curl(CURLUcode rc);

/* Parses ref (prepared: trimmed and escaped by url.c's first pass) into a
 * new handle *pu, resolved against the base string base or the parsed
 * base b (either or neither). ref_non_ascii: ref has bytes from 0x80 up,
 * which curl must encode. A SIEVE_ status; *pu, NULL or not, is the
 * caller's to free whatever it returns (url-base.c). */
int url_parse_ref(CURLU **pu, const char *base, const sieve_canon_base *b, const char *ref,
                  bool ref_non_ascii);

#endif
