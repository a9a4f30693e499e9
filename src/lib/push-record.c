/* push-record.c - PUSH and PUSHF records: a URL and its tag, whole or
 * front-coded against the URL before it (push-record.h). */
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "push-record.h"
#include "sieve/status.h"

#define TAG_BYTES 4u
/* Fewer shared bytes than this are not worth a PUSHF: its head is longer. */
#define MIN_SHARED 4u

static size_t shared_prefix(const char *a, size_t na, const char *b, size_t nb)
{
    size_t n = na < nb ? na : nb, i = 0;
    while (i + 8 <= n) { /* a word at a time: URLs share dozens of bytes */
        uint64_t x, y;
        memcpy(&x, a + i, 8);
        memcpy(&y, b + i, 8);
        if (x != y) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            /* the lowest differing bit is in the first differing byte */
            return i + (size_t)__builtin_ctzll(x ^ y) / 8;
#else
            break;
#endif
        }
        i += 8;
    }
    while (i < n && a[i] == b[i])
        i++;
    return i;
}

size_t push_encode(const char *prev, size_t prev_len, const char *url, size_t len, uint32_t tag,
                   unsigned char *head, uint8_t *type, size_t *skip)
{
    size_t shared = prev_len > 0 ? shared_prefix(prev, prev_len, url, len) : 0;
    if (shared < MIN_SHARED) {
        *type = REC_PUSH;
        *skip = 0;
        le_put(head, tag, TAG_BYTES);
        return TAG_BYTES;
    }
    *type = REC_PUSHF;
    *skip = shared;
    size_t n = varint_put(head, tag);
    return n + varint_put(head + n, shared);
}

/* A LEB128 number of at most 64 bits from [*p, end), or false. */
static bool get_number(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
    uint64_t r = 0;
    for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
        unsigned char c = *(*p)++;
        r |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *v = r;
            return true;
        }
    }
    return false;
}

static int keep(url_chain *c, size_t at, const unsigned char *rest, size_t n)
{
    if (at + n > c->cap) {
        size_t cap = (at + n) * 2;
        char *u = realloc(c->url, cap);
        if (u == NULL)
            return SIEVE_ENOMEM;
        c->url = u;
        c->cap = cap;
    }
    memcpy(c->url + at, rest, n);
    c->len = at + n;
    return SIEVE_OK;
}

int push_decode(url_chain *c, uint8_t type, const unsigned char *b, size_t len, journal_pos pos,
                size_t max_len, const char **url, size_t *n, uint32_t *tag)
{
    const unsigned char *p = b, *end = b + len;
    size_t shared = 0;
    if (type == REC_PUSH) {
        if (len <= TAG_BYTES)
            return SIEVE_EFORMAT;
        *tag = (uint32_t)le_get(b, TAG_BYTES);
        p += TAG_BYTES;
    } else {
        uint64_t t, s;
        if (!c->started || !get_number(&p, end, &t) || !get_number(&p, end, &s) || t > UINT32_MAX ||
            s > c->len || s < MIN_SHARED)
            return SIEVE_EFORMAT;
        *tag = (uint32_t)t;
        shared = (size_t)s;
    }
    if (shared + (size_t)(end - p) > max_len)
        return SIEVE_ETOOLONG;
    int rc = keep(c, shared, p, (size_t)(end - p));
    if (rc != SIEVE_OK)
        return rc;
    if (type == REC_PUSH) {
        c->start = pos;
        c->started = true;
    }
    *url = c->url;
    *n = c->len;
    return SIEVE_OK;
}

void chain_reset(url_chain *c)
{
    c->len = 0;
    c->started = false;
}

void chain_free(url_chain *c)
{
    free(c->url);
    *c = (url_chain){0};
}
