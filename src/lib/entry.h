/* entry.h - a queued URL and its data as the frontier keeps them: one
 * byte string, the entry (internal).
 *
 * An entry is the URL alone, or the data, a NUL and the URL. No URL holds
 * a NUL (push() refuses control bytes), so an entry's last NUL, if it has
 * one, ends its data, and the URL is what follows. So a URL without data
 * is kept exactly as it was before URLs carried any, at no cost, and one
 * with data costs the data and one byte. Every place a URL waits (the
 * FIFOs, the retry heap, the journal's push records, the checkpoint's
 * list) holds entries as it held URLs, and needs to know nothing of data;
 * only what needs the URL alone, its host or its hash, splits an entry.
 *
 * The data goes first so that the journal's front-coding, which stores
 * what a push record shares with the record before it once, shares the
 * data too: a page's links, pushed together, carry the same data. */
#ifndef SIEVE_ENTRY_H
#define SIEVE_ENTRY_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sieve/frontier.h"

/* The longest entry of a frontier whose URLs are at most max_url_len. */
#define ENTRY_MAX(max_url_len) ((max_url_len) + SIEVE_URL_DATA_MAX + 1)

/* Bytes of u's entry. */
static inline size_t entry_len(const sieve_url *u)
{
    return u->data_len > 0 ? u->data_len + 1 + u->len : u->len;
}

/* Where the URL starts in an entry of n bytes: 0 when it has no data,
 * else one past its last NUL. */
static inline size_t entry_url_at(const char *e, size_t n)
{
    const char *nul = memrchr(e, '\0', n);
    return nul != NULL ? (size_t)(nul - e) + 1 : 0;
}

/* The URL of an entry of n bytes, *len bytes long. */
static inline const char *entry_url(const char *e, size_t n, size_t *len)
{
    size_t at = entry_url_at(e, n);
    *len = n - at;
    return e + at;
}

/* u's entry: u->url itself when it has no data, else made in *buf, which
 * grows to fit (*cap bytes); NULL when it cannot. */
static inline const char *entry_make(const sieve_url *u, char **buf, size_t *cap)
{
    if (u->data_len == 0)
        return u->url;
    size_t n = entry_len(u);
    if (n > *cap) {
        char *p = realloc(*buf, n);
        if (p == NULL)
            return NULL;
        *buf = p;
        *cap = n;
    }
    memcpy(*buf, u->data, u->data_len);
    (*buf)[u->data_len] = '\0';
    memcpy(*buf + u->data_len + 1, u->url, u->len);
    return *buf;
}

/* Splits an entry of n bytes into the URL and its data: u->url, len,
 * data and data_len (data NULL when it has none). */
static inline void entry_split(const char *e, size_t n, sieve_url *u)
{
    size_t at = entry_url_at(e, n);
    u->url = e + at;
    u->len = n - at;
    u->data = at > 0 ? e : NULL;
    u->data_len = at > 0 ? at - 1 : 0;
}

#endif
