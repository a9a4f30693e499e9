/* links.c - the links of every HTML resource, with their canonical targets.
 *
 * Each link is generated from its target: the generator knows the target's
 * canonical path and writes an href that a correct resolver maps back to
 * it, in one of many spellings (relative, dot segments, absolute,
 * scheme-relative, upper-case scheme and host, percent-escaped unreserved
 * characters, fragments, explicit default port). The renderer (pages.c)
 * writes the href; the truth walk (truth.c) takes the target. Producing
 * both from one place is what keeps the ground truth exact.
 *
 * Links a crawler must not follow carry a NULL target: rel="nofollow"
 * (also inside a token list), javascript: and mailto:. */
#include <ctype.h>
#include <string.h>

#include "web.h"

struct emit {
    web_link_fn fn;
    void *arg;
    const char *host;
    struct web_buf href;
    struct web_buf target;
    int stop;
};

/* Emits the link whose href and target were built in e's buffers. */
static void flush(struct emit *e, const char *rel, int follow)
{
    if (e->stop == 0) {
        if (e->href.oom || e->target.oom)
            e->stop = -1;
        else
            e->stop = e->fn(e->arg, e->href.data ? e->href.data : "", rel,
                            follow ? (e->target.data ? e->target.data : "") : NULL);
    }
    e->href.len = 0;
    e->target.len = 0;
    if (e->href.data)
        e->href.data[0] = '\0';
    if (e->target.data)
        e->target.data[0] = '\0';
}

/* A followed link whose href is the target itself. */
static void same(struct emit *e, const char *path)
{
    web_buf_puts(&e->href, path);
    web_buf_puts(&e->target, path);
    flush(e, NULL, 1);
}

static void upper_host(struct web_buf *b, const char *host)
{
    for (const char *p = host; *p; p++) {
        char c = (char)toupper((unsigned char)*p);
        web_buf_add(b, &c, 1);
    }
}

/* The host's explicit port, or NULL when it names none. */
static const char *host_port(const char *host)
{
    const char *bracket = strrchr(host, ']');
    const char *colon = strrchr(bracket ? bracket : host, ':');
    return colon ? colon + 1 : NULL;
}

/* Writes the href of a link from /p/ID.html to /p/T.html in form f. */
static void page_href(struct emit *e, unsigned f, uint64_t t)
{
    unsigned long long tt = (unsigned long long)t;
    struct web_buf *h = &e->href;
    const char *port = host_port(e->host);
    switch (f) {
    case WEB_FORM_BARE:
        web_buf_printf(h, "%llu.html", tt);
        break;
    case WEB_FORM_DOT:
        web_buf_printf(h, "./%llu.html", tt);
        break;
    case WEB_FORM_PARENT:
        web_buf_printf(h, "../p/%llu.html", tt);
        break;
    case WEB_FORM_ABSPATH:
        web_buf_printf(h, "/p/%llu.html", tt);
        break;
    case WEB_FORM_ABSURL:
        web_buf_printf(h, "http://%s/p/%llu.html", e->host, tt);
        break;
    case WEB_FORM_FRAGMENT:
        web_buf_printf(h, "%llu.html#sec", tt);
        break;
    case WEB_FORM_UPPER:
        web_buf_puts(h, "HTTP://");
        upper_host(h, e->host);
        web_buf_printf(h, "/p/%llu.html", tt);
        break;
    case WEB_FORM_PERCENT: {
        /* 'p' is %70; the first digit d is %3d: both unreserved. */
        char digits[24];
        int n = snprintf(digits, sizeof digits, "%llu", tt);
        web_buf_printf(h, "/%%70/%%3%c%.*s.html", digits[0], n - 1, digits + 1);
        break;
    }
    case WEB_FORM_DOTSEG:
        web_buf_printf(h, "http://%s/p/./x/../%llu.html", e->host, tt);
        break;
    case WEB_FORM_SCHEMEREL:
        web_buf_printf(h, "//%s/p/%llu.html", e->host, tt);
        break;
    default: /* WEB_FORM_DEFPORT */
        if (!port)
            web_buf_printf(h, "http://%s:80/p/%llu.html", e->host, tt);
        else if (strcmp(port, "80") == 0)
            web_buf_printf(h, "http://%.*s/p/%llu.html", (int)(port - 1 - e->host), e->host, tt);
        else /* no default-port spelling applies: a dot-segment one */
            web_buf_printf(h, "../p/y/.././%llu.html", tt);
        break;
    }
}

static void links_home(const struct web_config *cfg, struct emit *e)
{
    web_buf_puts(&e->href, "p/0.html");
    web_buf_puts(&e->target, "/p/0.html");
    flush(e, NULL, 1);
    /* An authority with an empty path means "/". */
    web_buf_printf(&e->href, "http://%s", e->host);
    web_buf_puts(&e->target, "/");
    flush(e, NULL, 1);
    web_buf_puts(&e->href, "loop/a");
    web_buf_puts(&e->target, "/loop/a");
    flush(e, NULL, 1);
    web_buf_puts(&e->href, "./loop/b");
    web_buf_puts(&e->target, "/loop/b");
    flush(e, NULL, 1);
    if (cfg->hostile) {
        web_buf_puts(&e->href, "hostile/");
        web_buf_puts(&e->target, "/hostile/");
        flush(e, NULL, 1);
    }
}

static void links_page(const struct web_config *cfg, uint64_t id, struct emit *e)
{
    struct web_page_graph g;
    web_page_graph(cfg, id, &g);
    unsigned long long i = (unsigned long long)id;
    unsigned long long j = (unsigned long long)g.redirect_target;
    for (unsigned k = 0; k < g.nlinks && !e->stop; k++) {
        page_href(e, g.form[k], g.target[k]);
        web_buf_printf(&e->target, "/p/%llu.html", (unsigned long long)g.target[k]);
        flush(e, NULL, 1);
    }
    if (g.has_extra[WEB_EXTRA_TXT]) {
        web_buf_printf(&e->href, "../files/%llu.txt", i);
        web_buf_printf(&e->target, "/files/%llu.txt", i);
        flush(e, NULL, 1);
    }
    if (g.has_extra[WEB_EXTRA_PNG]) {
        web_buf_printf(&e->href, "/files/%llu.png", i);
        web_buf_printf(&e->target, "/files/%llu.png", i);
        flush(e, NULL, 1);
    }
    if (g.has_extra[WEB_EXTRA_MISSING]) {
        web_buf_printf(&e->href, "../missing/%llu.html", i);
        web_buf_printf(&e->target, "/missing/%llu.html", i);
        flush(e, NULL, 1);
    }
    if (g.has_extra[WEB_EXTRA_R] || g.has_extra[WEB_EXTRA_R2]) {
        /* /r/J is linked beside /r2/J so that every redirect target is
         * also a link: the truth then holds whether a crawler follows
         * redirects itself or queues their Location. */
        web_buf_printf(&e->href, "/r/%llu", j);
        web_buf_printf(&e->target, "/r/%llu", j);
        flush(e, NULL, 1);
    }
    if (g.has_extra[WEB_EXTRA_R2]) {
        web_buf_printf(&e->href, "../r2/%llu", j);
        web_buf_printf(&e->target, "/r2/%llu", j);
        flush(e, NULL, 1);
    }
    if (g.has_extra[WEB_EXTRA_NOFOLLOW]) {
        web_buf_printf(&e->href, "/nofollow/%llu.html", i);
        flush(e, (i & 1) ? "external nofollow" : "nofollow", 0);
    }
    if (g.has_extra[WEB_EXTRA_JS]) {
        web_buf_puts(&e->href, (i & 1) ? "JavaScript:history.back()" : "javascript:void(0)");
        flush(e, NULL, 0);
    }
    if (g.has_extra[WEB_EXTRA_MAILTO]) {
        web_buf_printf(&e->href, "mailto:page-%llu@example.invalid", i);
        flush(e, NULL, 0);
    }
    same(e, "/");
}

static void links_nofollow(const struct web_config *cfg, uint64_t id, struct emit *e)
{
    /* A chain only a crawler that ignores nofollow walks. */
    if (id + 1 < cfg->pages) {
        web_buf_printf(&e->href, "%llu.html", (unsigned long long)id + 1);
        web_buf_printf(&e->target, "/nofollow/%llu.html", (unsigned long long)id + 1);
        flush(e, NULL, 1);
    }
    same(e, "/");
}

static void links_hostile_index(struct emit *e)
{
    static const char *const rel[][2] = {
        {"/cal/2026/11/", "/cal/2026/11/"},
        {"../trap/a/", "/trap/a/"},
        {"/deep/1", "/deep/1"},
        {"many.html", "/hostile/many.html"},
        {"malformed.html", "/hostile/malformed.html"},
        {"bad-utf8.html", "/hostile/bad-utf8.html"},
        {"endless.html", "/hostile/endless.html"},
        {"slow.html", "/hostile/slow.html"},
        {"gzip.html", "/hostile/gzip.html"},
        {"huge.html", "/hostile/huge.html"},
        {"html-as-text.txt", "/hostile/html-as-text.txt"},
        {"error.html", "/hostile/error.html"},
    };
    for (size_t k = 0; k < sizeof rel / sizeof rel[0]; k++) {
        web_buf_puts(&e->href, rel[k][0]);
        web_buf_puts(&e->target, rel[k][1]);
        flush(e, NULL, 1);
    }
    char seg[WEB_LONG_SEG + 1];
    web_long_segment(1, seg);
    web_buf_printf(&e->href, "/long/%s", seg);
    web_buf_printf(&e->target, "/long/%s", seg);
    flush(e, NULL, 1);
    same(e, "/");
}

/* A month page links to the next and previous months with relative
 * references "YYYY/MM/", a classic calendar bug: each step nests the new
 * month under the current one, so the path grows by two segments. */
static void links_cal(const char *path, struct emit *e)
{
    size_t n = strlen(path);
    const char *last = path + n - 8; /* "YYYY/MM/" */
    int year =
        (last[0] - '0') * 1000 + (last[1] - '0') * 100 + (last[2] - '0') * 10 + (last[3] - '0');
    int month = (last[5] - '0') * 10 + (last[6] - '0');
    for (int step = 1; step >= -1; step -= 2) {
        int m = month + step, y = year;
        if (m == 13) {
            m = 1;
            y++;
        } else if (m == 0) {
            m = 12;
            y--;
        }
        if (y < 0 || y > 9999)
            continue;
        web_buf_printf(&e->href, "%04d/%02d/", y, m);
        web_buf_printf(&e->target, "%s%04d/%02d/", path, y, m);
        flush(e, NULL, 1);
    }
    same(e, "/hostile/");
}

/* Each trap page nests "a/" under itself: only the repeat guard stops it. */
static void links_trap(const char *path, struct emit *e)
{
    web_buf_puts(&e->href, "a/");
    web_buf_printf(&e->target, "%sa/", path);
    flush(e, NULL, 1);
    same(e, "/hostile/");
}

/* /deep/1/.../K links to /deep/1/.../K/K+1: only the segment guard stops
 * it. No trailing slash, so the count does not depend on whether a
 * crawler counts a trailing empty segment. */
static void links_deep(const char *path, uint64_t k, struct emit *e)
{
    unsigned long long kk = (unsigned long long)k;
    web_buf_printf(&e->href, "%llu/%llu", kk, kk + 1);
    web_buf_printf(&e->target, "%s/%llu", path, kk + 1);
    flush(e, NULL, 1);
    same(e, "/deep/1");
}

/* Each /long/ step adds a 300-byte segment: only the length guard stops it. */
static void links_long(const char *path, uint64_t k, struct emit *e)
{
    char seg[WEB_LONG_SEG + 1];
    web_long_segment((unsigned)k + 1, seg);
    web_buf_printf(&e->href, "%s/%s", path, seg);
    web_buf_printf(&e->target, "%s/%s", path, seg);
    flush(e, NULL, 1);
    same(e, "/hostile/");
}

static void links_many(const struct web_config *cfg, struct emit *e)
{
    uint64_t leaves = web_many_leaves(cfg);
    for (unsigned k = 0; k < WEB_MANY_LINKS && !e->stop; k++) {
        unsigned long long leaf = (unsigned long long)(k % leaves);
        switch (k % 3) {
        case 0:
            web_buf_printf(&e->href, "../many/%llu.html", leaf);
            break;
        case 1:
            web_buf_printf(&e->href, "/many/%llu.html", leaf);
            break;
        default:
            web_buf_printf(&e->href, "http://%s/many/%llu.html", e->host, leaf);
        }
        web_buf_printf(&e->target, "/many/%llu.html", leaf);
        flush(e, NULL, 1);
    }
}

int web_links(const struct web_config *cfg, const struct web_route *r, const char *host,
              web_link_fn fn, void *arg)
{
    struct emit e = {.fn = fn, .arg = arg, .host = host};
    web_buf_init(&e.href);
    web_buf_init(&e.target);
    switch (r->kind) {
    case WEB_HOME:
        links_home(cfg, &e);
        break;
    case WEB_PAGE:
        links_page(cfg, r->id, &e);
        break;
    case WEB_NOFOLLOW:
        links_nofollow(cfg, r->id, &e);
        break;
    case WEB_HOSTILE_INDEX:
        links_hostile_index(&e);
        break;
    case WEB_CAL:
        links_cal(r->path, &e);
        break;
    case WEB_TRAP:
        links_trap(r->path, &e);
        break;
    case WEB_DEEP:
        links_deep(r->path, r->id, &e);
        break;
    case WEB_LONG:
        links_long(r->path, r->id, &e);
        break;
    case WEB_MANY:
        links_many(cfg, &e);
        break;
    case WEB_MALFORMED:
    case WEB_BAD_UTF8:
        /* Links whose targets are reached anyway: the truth must not
         * depend on how much of a broken page a parser recovers. */
        web_buf_puts(&e.href, "../p/0.html");
        web_buf_puts(&e.target, "/p/0.html");
        flush(&e, NULL, 1);
        same(&e, "/");
        break;
    case WEB_GZIP:
        /* Reached only through the compressed page: a crawler that asks
         * for gzip and fails to decode it misses this one. */
        web_buf_puts(&e.href, "gzip-target.html");
        web_buf_puts(&e.target, "/hostile/gzip-target.html");
        flush(&e, NULL, 1);
        same(&e, "/");
        break;
    case WEB_TEXT_HTML:
        /* Served as text/plain: a crawler that parses it anyway reaches
         * the bait, which is in no truth. */
        web_buf_puts(&e.href, "bait.html");
        web_buf_puts(&e.target, "/hostile/bait.html");
        flush(&e, NULL, 1);
        break;
    case WEB_GZIP_TARGET:
    case WEB_BAIT:
        same(&e, "/");
        break;
    default:
        break;
    }
    web_buf_free(&e.href);
    web_buf_free(&e.target);
    return e.stop;
}
