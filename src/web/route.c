/* route.c - the server's URL space: request path -> resource kind.
 *
 * Routing is strict: an id is accepted only in its canonical decimal form
 * (no sign, no leading zero) and below its bound, and a trap path only in
 * exactly the shape its pages generate. A path any other way spelled is a
 * 404, so a crawler that requests a URL it should have canonicalised sees
 * a 404 instead of silently getting the page under a second name.
 *
 * The truth walk (truth.c) routes its candidate URLs through the same
 * function, so what is served and what is counted are one definition. */
#include <stdio.h>
#include <string.h>

#include "web.h"

/* Parses a canonical decimal id at *p, advancing *p past it. */
static int parse_id(const char **p, uint64_t *out)
{
    const char *s = *p;
    if (*s < '0' || *s > '9')
        return -1;
    if (*s == '0' && s[1] >= '0' && s[1] <= '9')
        return -1;
    uint64_t v = 0;
    while (*s >= '0' && *s <= '9') {
        if (v > (UINT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
        s++;
    }
    *p = s;
    *out = v;
    return 0;
}

/* Matches prefix ID suffix exactly, with ID < bound. */
static int match_id(const char *path, const char *prefix, const char *suffix, uint64_t bound,
                    uint64_t *id)
{
    size_t n = strlen(prefix);
    if (strncmp(path, prefix, n) != 0)
        return 0;
    const char *p = path + n;
    if (parse_id(&p, id) != 0 || *id >= bound)
        return 0;
    return strcmp(p, suffix) == 0;
}

/* /cal/YYYY/MM/(YYYY/MM/)*: returns the number of pairs, 0 if no match. */
static uint64_t match_cal(const char *path)
{
    if (strncmp(path, "/cal/", 5) != 0)
        return 0;
    const char *p = path + 5;
    uint64_t pairs = 0;
    while (*p) {
        for (int i = 0; i < 4; i++)
            if (p[i] < '0' || p[i] > '9')
                return 0;
        if (p[4] != '/' || p[5] < '0' || p[5] > '1' || p[6] < '0' || p[6] > '9' || p[7] != '/')
            return 0;
        int month = (p[5] - '0') * 10 + (p[6] - '0');
        if (month < 1 || month > 12)
            return 0;
        p += 8;
        pairs++;
    }
    return pairs;
}

/* /trap/a/(a/)*: returns the number of "a" segments, 0 if no match. */
static uint64_t match_trap(const char *path)
{
    if (strncmp(path, "/trap/", 6) != 0)
        return 0;
    const char *p = path + 6;
    uint64_t n = 0;
    while (*p) {
        if (p[0] != 'a' || p[1] != '/')
            return 0;
        p += 2;
        n++;
    }
    return n;
}

/* /deep/1/2/.../K: returns K, 0 if no match. */
static uint64_t match_deep(const char *path)
{
    if (strncmp(path, "/deep", 5) != 0)
        return 0;
    const char *p = path + 5;
    uint64_t k = 0;
    while (*p) {
        uint64_t v;
        if (*p != '/')
            return 0;
        p++;
        if (parse_id(&p, &v) != 0 || v != k + 1)
            return 0;
        k = v;
    }
    return k;
}

void web_long_segment(unsigned k, char out[WEB_LONG_SEG + 1])
{
    int n = snprintf(out, WEB_LONG_SEG + 1, "%u-", k);
    for (unsigned i = (unsigned)n; i < WEB_LONG_SEG; i++)
        out[i] = (char)('a' + (k + i) % 26);
    out[WEB_LONG_SEG] = '\0';
}

/* /long/SEG1/SEG2/.../SEGK: returns K, 0 if no match. */
static uint64_t match_long(const char *path)
{
    if (strncmp(path, "/long", 5) != 0)
        return 0;
    const char *p = path + 5;
    char seg[WEB_LONG_SEG + 1];
    unsigned k = 0;
    while (*p) {
        if (*p != '/' || k >= 1000)
            return 0;
        p++;
        web_long_segment(++k, seg);
        if (strncmp(p, seg, WEB_LONG_SEG) != 0)
            return 0;
        p += WEB_LONG_SEG;
    }
    return k;
}

uint64_t web_many_leaves(const struct web_config *cfg)
{
    return cfg->pages < WEB_MANY_MAX ? cfg->pages : WEB_MANY_MAX;
}

static void redirect(struct web_route *r, const char *location, int abs, int status,
                     const char *target)
{
    r->kind = WEB_REDIRECT;
    r->location = location;
    r->location_abs = abs;
    r->status = status;
    snprintf(r->target, sizeof r->target, "%s", target);
}

/* Redirects: /r/ID -> absolute URL of /p/ID.html; /r2/ID -> "/r/ID" (an
 * absolute path); the loop uses bare relative references. A NULL location
 * means "send the target itself". */
static int route_redirect(const struct web_config *cfg, const char *path, struct web_route *r)
{
    uint64_t id;
    char target[64];
    if (match_id(path, "/r/", "", cfg->pages, &id)) {
        snprintf(target, sizeof target, "/p/%llu.html", (unsigned long long)id);
        redirect(r, NULL, 1, 301, target);
        r->id = id;
        return 1;
    }
    if (match_id(path, "/r2/", "", cfg->pages, &id)) {
        snprintf(target, sizeof target, "/r/%llu", (unsigned long long)id);
        redirect(r, NULL, 0, 302, target);
        r->id = id;
        return 1;
    }
    if (strcmp(path, "/loop/a") == 0) {
        redirect(r, "b", 0, 301, "/loop/b");
        return 1;
    }
    if (strcmp(path, "/loop/b") == 0) {
        redirect(r, "a", 0, 301, "/loop/a");
        return 1;
    }
    return 0;
}

static const struct {
    const char *path;
    enum web_kind kind;
} hostile_fixed[] = {
    {"/hostile/", WEB_HOSTILE_INDEX},           {"/hostile/many.html", WEB_MANY},
    {"/hostile/malformed.html", WEB_MALFORMED}, {"/hostile/bad-utf8.html", WEB_BAD_UTF8},
    {"/hostile/endless.html", WEB_ENDLESS},     {"/hostile/slow.html", WEB_SLOW},
    {"/hostile/gzip.html", WEB_GZIP},           {"/hostile/gzip-target.html", WEB_GZIP_TARGET},
    {"/hostile/huge.html", WEB_HUGE},           {"/hostile/html-as-text.txt", WEB_TEXT_HTML},
    {"/hostile/bait.html", WEB_BAIT},           {"/hostile/error.html", WEB_ERROR},
};

static const struct {
    const char *path;
    enum web_kind kind;
} sitemap_fixed[] = {
    {"/sitemap.xml", WEB_SITEMAP_INDEX},
    {"/sitemaps/pages-1.xml", WEB_SITEMAP_XML},
    {"/sitemaps/pages-2.xml.gz", WEB_SITEMAP_GZ},
    {"/sitemaps/pages-3.txt", WEB_SITEMAP_TEXT},
};

static int route_sitemap(const char *path, struct web_route *r)
{
    for (size_t i = 0; i < sizeof sitemap_fixed / sizeof sitemap_fixed[0]; i++) {
        if (strcmp(path, sitemap_fixed[i].path) == 0) {
            r->kind = sitemap_fixed[i].kind;
            return 1;
        }
    }
    return 0;
}

static int route_hostile(const struct web_config *cfg, const char *path, struct web_route *r)
{
    for (size_t i = 0; i < sizeof hostile_fixed / sizeof hostile_fixed[0]; i++) {
        if (strcmp(path, hostile_fixed[i].path) == 0) {
            r->kind = hostile_fixed[i].kind;
            return 1;
        }
    }
    uint64_t n;
    if (match_id(path, "/many/", ".html", web_many_leaves(cfg), &n)) {
        r->kind = WEB_MANY_LEAF;
    } else if ((n = match_cal(path)) != 0) {
        r->kind = WEB_CAL;
    } else if ((n = match_trap(path)) != 0) {
        r->kind = WEB_TRAP;
    } else if ((n = match_deep(path)) != 0) {
        r->kind = WEB_DEEP;
    } else if ((n = match_long(path)) != 0) {
        r->kind = WEB_LONG;
    } else {
        return 0;
    }
    r->id = n;
    return 1;
}

void web_route(const struct web_config *cfg, const char *path, struct web_route *r)
{
    memset(r, 0, sizeof *r);
    r->path = path;
    r->kind = WEB_NOT_FOUND;
    uint64_t id;
    if (strcmp(path, "/") == 0) {
        r->kind = WEB_HOME;
    } else if (strcmp(path, "/robots.txt") == 0) {
        r->kind = WEB_ROBOTS;
    } else if (cfg->robots == WEB_ROBOTS_REDIRECT && strcmp(path, "/robots-moved.txt") == 0) {
        r->kind = WEB_ROBOTS_MOVED;
    } else if (match_id(path, "/p/", ".html", cfg->pages, &id)) {
        r->kind = WEB_PAGE;
        r->id = id;
    } else if (match_id(path, "/nofollow/", ".html", cfg->pages, &id)) {
        r->kind = WEB_NOFOLLOW;
        r->id = id;
    } else if (match_id(path, "/files/", ".txt", cfg->pages, &id)) {
        r->kind = WEB_FILE_TXT;
        r->id = id;
    } else if (match_id(path, "/files/", ".png", cfg->pages, &id)) {
        r->kind = WEB_FILE_PNG;
        r->id = id;
    } else if (route_redirect(cfg, path, r)) {
        /* filled in */
    } else if (cfg->sitemap && route_sitemap(path, r)) {
        /* filled in */
    } else if (cfg->hostile) {
        route_hostile(cfg, path, r);
    }
}

int web_kind_parsed(enum web_kind kind)
{
    switch (kind) {
    case WEB_HOME:
    case WEB_PAGE:
    case WEB_NOFOLLOW:
    case WEB_HOSTILE_INDEX:
    case WEB_CAL:
    case WEB_TRAP:
    case WEB_DEEP:
    case WEB_LONG:
    case WEB_MANY:
    case WEB_MANY_LEAF:
    case WEB_MALFORMED:
    case WEB_BAD_UTF8:
    case WEB_GZIP:
    case WEB_GZIP_TARGET:
    case WEB_BAIT:
        return 1;
    default:
        return 0;
    }
}

int web_kind_sitemap(enum web_kind kind)
{
    return kind == WEB_SITEMAP_INDEX || kind == WEB_SITEMAP_XML || kind == WEB_SITEMAP_GZ ||
           kind == WEB_SITEMAP_TEXT;
}
