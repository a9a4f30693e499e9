/* address.c - the ranges a crawl does not reach unless asked to. */
#include <netinet/in.h>
#include <string.h>

#include "address.h"
#include "origin.h"

static bool v4_internal(const unsigned char *a)
{
    return a[0] == 127 || a[0] == 10 || a[0] == 0 || (a[0] == 172 && (a[1] & 0xf0) == 16) ||
           (a[0] == 192 && a[1] == 168) || (a[0] == 169 && a[1] == 254);
}

bool address_is_internal(const struct sockaddr *addr)
{
    if (addr->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)addr;
        return v4_internal((const unsigned char *)&in->sin_addr.s_addr);
    }
    if (addr->sa_family != AF_INET6)
        return false;
    const unsigned char *a = ((const struct sockaddr_in6 *)addr)->sin6_addr.s6_addr;
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (memcmp(a, mapped, sizeof mapped) == 0)
        return v4_internal(a + 12);
    bool zero_head = true;
    for (int i = 0; i < 15; i++)
        zero_head &= a[i] == 0;
    return (zero_head && (a[15] == 0 || a[15] == 1)) || /* :: and ::1 */
           (a[0] & 0xfe) == 0xfc ||                     /* fc00::/7 */
           (a[0] == 0xfe && (a[1] & 0xc0) == 0x80);     /* fe80::/10 */
}

const char *address_host_of(const char *url, size_t *len)
{
    url_parts p = url_split(url);
    const char *h = url + p.auth_off;
    size_t n = p.auth_len;
    const char *end = h[0] == '[' ? memchr(h, ']', n) : NULL;
    const char *colon =
        end != NULL ? (end + 1 < h + n && end[1] == ':' ? end + 1 : NULL) : memchr(h, ':', n);
    *len = colon != NULL ? (size_t)(colon - h) : n;
    return h;
}
