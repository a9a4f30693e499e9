/* fuzz-robots.c - libFuzzer target: arbitrary bytes as a robots.txt body,
 * then a few paths queried against it, some fixed, some cut from the
 * input itself so that paths resembling the file's patterns are tried.
 *
 * Besides memory errors it checks the module's promises: the caps hold,
 * "/robots.txt" is always allowed, a Crawl-delay is absent or a finite
 * non-negative number, and spelling an unreserved character of a path as
 * its percent-escape does not change the verdict. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sieve/sieve.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool unreserved(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_' || c == '~';
}

/* The verdict for path must not change when its unreserved characters
 * are written as escapes. Paths with a '%' are skipped: escaping a byte
 * after a '%' could change which escape that '%' starts. */
static void check_path(const sieve_robots *r, const char *path, size_t len)
{
    bool verdict = sieve_robots_allowed(r, path, len);
    if (len > 256 || memchr(path, '%', len))
        return;
    char esc[3 * 256 + 1];
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)path[i];
        if (unreserved(c) && i % 2 == 0)
            n += (size_t)snprintf(esc + n, sizeof esc - n, "%%%02x", c);
        else
            esc[n++] = (char)c;
    }
    if (sieve_robots_allowed(r, esc, n) != verdict)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const products[] = {"sieve", "foobot", "Googlebot", "a"};
    const char *product = products[size > 0 ? data[0] % 4 : 0];
    sieve_robots *r = NULL;
    if (sieve_robots_parse(&r, data, size, product) != SIEVE_OK)
        abort();

    sieve_robots_stats st;
    sieve_robots_stats_get(r, &st);
    if (st.rules > SIEVE_ROBOTS_MAX_RULES || st.sitemaps > SIEVE_ROBOTS_MAX_SITEMAPS ||
        st.bytes > size || st.bytes > SIEVE_ROBOTS_MAX_BYTES)
        abort();
    const char *const *urls = NULL;
    size_t n = sieve_robots_sitemaps(r, &urls);
    if (n != st.sitemaps)
        abort();
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(urls[i]);
        if (len == 0 || len > SIEVE_ROBOTS_MAX_SITEMAP_LEN)
            abort();
    }
    double delay = sieve_robots_crawl_delay(r);
    if (delay >= 0 && !isfinite(delay))
        abort();
    if (!sieve_robots_allowed(r, "/robots.txt", 11))
        abort();

    static const char *const fixed[] = {"/", "", "/a", "/a.php?x=1", "/fish", "/%7Ejoe/*$"};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        check_path(r, fixed[i], strlen(fixed[i]));

    /* Paths cut from the input: from each of the first few '/' bytes to
     * the end of its line. */
    const char *s = (const char *)data;
    size_t tried = 0;
    for (size_t i = 0; i < size && tried < 8; i++) {
        if (s[i] != '/')
            continue;
        size_t end = i;
        while (end < size && s[end] != '\n' && s[end] != '\r')
            end++;
        check_path(r, s + i, end - i);
        tried++;
    }
    sieve_robots_free(r);
    return 0;
}
