/* via-check.c - see via-check.h. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "via-check.h"

enum { MAX_HOPS = 20 };

static char why[8400];

static int cmp_line(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool has_edge(char *const *edges, size_t n, const char *kind, const char *from,
                     const char *to)
{
    char line[8300];
    snprintf(line, sizeof line, "%s %s %s", kind, from, to);
    const char *key = line;
    return bsearch(&key, edges, n, sizeof *edges, cmp_line) != NULL;
}

/* Where the web redirects from, or NULL. */
static const char *redirect_of(char *const *edges, size_t n, const char *from)
{
    char prefix[4200];
    int len = snprintf(prefix, sizeof prefix, "redirect %s ", from);
    size_t lo = 0, hi = n; /* the first line not below prefix */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(edges[mid], prefix) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && strncmp(edges[lo], prefix, (size_t)len) == 0 ? edges[lo] + len : NULL;
}

static bool is_seed(const char *const *seeds, const char *url)
{
    for (; *seeds != NULL; seeds++)
        if (strcmp(*seeds, url) == 0)
            return true;
    return false;
}

static const char *say(const char *url, const char *what, const char *referrer, const char *first)
{
    snprintf(why, sizeof why, "%s: %s (referrer %s, first_url %s)", url, what,
             referrer ? referrer : "null", first ? first : "null");
    return why;
}

const char *via_check(char *const *edges, size_t n, const char *const *seeds, const char *url,
                      const char *referrer, const char *first_url)
{
    const char *start = first_url != NULL ? first_url : url;
    if (referrer == NULL && !is_seed(seeds, start))
        return say(url, "no referrer, and no seed began it", referrer, first_url);
    if (referrer != NULL && !has_edge(edges, n, "link", referrer, start))
        return say(url, "its referrer does not link to where it began", referrer, first_url);
    if (first_url == NULL)
        return NULL;
    const char *at = first_url;
    for (int hop = 0; hop < MAX_HOPS && at != NULL; hop++) {
        at = redirect_of(edges, n, at);
        if (at != NULL && strcmp(at, url) == 0)
            return NULL;
    }
    return say(url, "no chain of redirects leads to it from its first URL", referrer, first_url);
}

int record_field(const char *line, const char *key, char *out, size_t cap)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(line, pat);
    if (p == NULL)
        return -1;
    p += strlen(pat);
    size_t n;
    if (*p == '"') {
        p++;
        n = strcspn(p, "\"");
    } else {
        n = strcspn(p, ",}");
    }
    if (n >= cap)
        return -1;
    memcpy(out, p, n);
    out[n] = '\0';
    return 0;
}

const char *via_check_line(char *const *edges, size_t n, const char *const *seeds, const char *line)
{
    static char url[4200], referrer[4200], first[4200];
    if (record_field(line, "url", url, sizeof url) != 0)
        return "a record without url";
    if (record_field(line, "referrer", referrer, sizeof referrer) != 0 ||
        record_field(line, "first_url", first, sizeof first) != 0)
        return say(url, "a record without referrer or first_url", NULL, NULL);
    return via_check(edges, n, seeds, url, strcmp(referrer, "null") != 0 ? referrer : NULL,
                     strcmp(first, "null") != 0 ? first : NULL);
}
