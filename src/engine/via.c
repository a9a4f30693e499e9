/* via.c - a URL's referrer and first URL as its frontier data (via.h). */
#include <string.h>

#include "via.h"

void via_read(const sieve_url *u, const char **referrer, const char **first_url)
{
    *referrer = *first_url = NULL;
    const char *d = u->data;
    size_t n = u->data_len;
    if (n == 0 || d[n - 1] != '\0') /* none, or not ours */
        return;
    size_t r = strlen(d);
    if (r > 0)
        *referrer = d;
    if (r + 1 < n && d[r + 1] != '\0')
        *first_url = d + r + 1;
}

size_t via_redirect(const sieve_url *u, char *buf)
{
    const char *referrer, *first;
    via_read(u, &referrer, &first);
    size_t r = referrer != NULL ? strlen(referrer) : 0;
    memcpy(buf, referrer != NULL ? referrer : "", r + 1);
    /* a later hop keeps the chain's first URL */
    size_t f = first != NULL ? strlen(first) : u->len;
    memcpy(buf + r + 1, first != NULL ? first : u->url, f);
    buf[r + 1 + f] = '\0';
    return r + f + 2;
}

void via_copy(sieve_url *dst, char *url, char *data, const sieve_url *src)
{
    memcpy(url, src->url, src->len + 1);
    if (src->data_len > 0)
        memcpy(data, src->data, src->data_len);
    *dst = *src;
    dst->url = url;
    dst->data = src->data_len > 0 ? data : NULL;
}
