/* truth.c - the ground truth: every URL a correct crawler requests.
 *
 * The walk is the crawler's breadth-first search done on the server's own
 * model instead of over HTTP: start at "/", route each URL (route.c), take
 * the targets of its links (links.c) when the crawler would parse it, or
 * its Location when it redirects, and admit each new target that passes
 * the crawler's guards. Link targets are canonical by construction, so the
 * walk needs no URL parser: a set of path strings is the whole state.
 *
 * What counts: a URL is in the truth when the crawler requests it, whatever
 * the answer (404, 500, non-HTML, redirect, endless or slow body). Bodies
 * are parsed only for HTML kinds with complete bodies (web_kind_parsed).
 * A redirect's target is admitted like a link of the redirecting URL; the
 * generator also links every target directly, so the set is the same
 * whether the crawler follows redirects itself or queues the Location.
 *
 * /robots.txt is not in the truth, and --robots never changes it: the
 * truth is the link graph. A test whose robots.txt disallows paths
 * subtracts what the rules forbid itself, with the rules it wrote.
 *
 * With --sitemap the crawler also seeds the host from robots.txt's Sitemap
 * line, so /sitemap.xml is a second seed. A sitemap is read like a page
 * whose links are its entries (sitemap.c): the index's three files, and
 * their locations on this host, which are then walked like any link
 * target. A location may carry a query; the server ignores queries, so a
 * URL is routed by its path alone but counted with its query.
 *
 * The guards, applied to every candidate including the seed:
 *   - the canonical absolute URL is at most WEB_MAX_URL_LEN bytes;
 *   - at most WEB_MAX_SEGMENTS non-empty path segments;
 *   - no segment equal to the two before it (a run of three).
 * The traps are shaped so that edge conventions cannot change the result:
 * /deep/ and /long/ have no trailing slash, and /cal/ grows two segments a
 * step from an odd count, so counting a trailing empty segment or not
 * gives the same cut; /long/ steps are 300 bytes, so no URL is within 200
 * bytes of the length limit whatever the port's digit count. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "web.h"

/* An open-addressing set of owned strings; the insertion order array
 * doubles as the BFS queue. */
struct strset {
    char **slot;
    size_t mask;
    char **order;
    size_t count, order_cap;
};

static uint64_t hash_str(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h ^ (h >> 29);
}

static int set_init(struct strset *s)
{
    memset(s, 0, sizeof *s);
    s->mask = 1023;
    s->slot = calloc(s->mask + 1, sizeof *s->slot);
    return s->slot ? 0 : -1;
}

static void set_free(struct strset *s)
{
    for (size_t i = 0; i < s->count; i++)
        free(s->order[i]);
    free(s->order);
    free(s->slot);
}

static int set_grow(struct strset *s)
{
    size_t mask = s->mask * 2 + 1;
    char **slot = calloc(mask + 1, sizeof *slot);
    if (!slot)
        return -1;
    for (size_t i = 0; i < s->count; i++) {
        size_t j = hash_str(s->order[i]) & mask;
        while (slot[j])
            j = (j + 1) & mask;
        slot[j] = s->order[i];
    }
    free(s->slot);
    s->slot = slot;
    s->mask = mask;
    return 0;
}

/* Returns 1 if added, 0 if present, -1 on allocation failure. */
static int set_add(struct strset *s, const char *key)
{
    size_t j = hash_str(key) & s->mask;
    for (; s->slot[j]; j = (j + 1) & s->mask)
        if (strcmp(s->slot[j], key) == 0)
            return 0;
    if (s->count == s->order_cap) {
        size_t cap = s->order_cap ? s->order_cap * 2 : 1024;
        char **order = realloc(s->order, cap * sizeof *order);
        if (!order)
            return -1;
        s->order = order;
        s->order_cap = cap;
    }
    char *copy = strdup(key);
    if (!copy)
        return -1;
    s->slot[j] = copy;
    s->order[s->count++] = copy;
    if (s->count * 2 > s->mask && set_grow(s) != 0)
        return -1;
    return 1;
}

int web_guard_ok(const char *path, size_t prefix_len)
{
    if (prefix_len + strlen(path) > WEB_MAX_URL_LEN)
        return 0;
    unsigned segments = 0, run = 0;
    const char *prev = NULL;
    size_t prev_len = 0;
    for (const char *p = path; *p;) {
        while (*p == '/')
            p++;
        size_t n = strcspn(p, "/");
        if (n == 0)
            break;
        if (++segments > WEB_MAX_SEGMENTS)
            return 0;
        run = (prev && prev_len == n && memcmp(prev, p, n) == 0) ? run + 1 : 1;
        if (run > WEB_MAX_REPEAT)
            return 0;
        prev = p;
        prev_len = n;
        p += n;
    }
    return 1;
}

struct walk {
    struct strset seen;
    const char *prefix; /* "http://HOST:PORT" */
    size_t prefix_len;
    int failed;
    /* With edges: every "KIND FROM TO" line, and what the walk is at. */
    struct strset *edges;
    const char *from; /* the path whose targets are admitted, NULL for a seed */
    const char *kind; /* "link" or "redirect" */
};

static void admit(struct walk *w, const char *target)
{
    if (!web_guard_ok(target, w->prefix_len))
        return;
    if (set_add(&w->seen, target) < 0)
        w->failed = 1;
    if (w->edges == NULL || w->from == NULL)
        return;
    char line[2 * (WEB_MAX_URL_LEN + 1) + 16];
    snprintf(line, sizeof line, "%s %s%s %s%s", w->kind, w->prefix, w->from, w->prefix, target);
    if (set_add(w->edges, line) < 0)
        w->failed = 1;
}

static int on_link(void *arg, const char *href, const char *rel, const char *target)
{
    struct walk *w = arg;
    (void)href;
    (void)rel;
    if (target)
        admit(w, target);
    return w->failed ? -1 : 0;
}

static int by_string(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Routes canonical target, whose query (if any) the server ignores; buf
 * holds the path and must live as long as r. */
static void route_target(const struct web_config *cfg, const char *target, char *buf, size_t n,
                         struct web_route *r)
{
    size_t len = strcspn(target, "?");
    if (target[len] == '\0') {
        web_route(cfg, target, r);
        return;
    }
    snprintf(buf, n, "%.*s", (int)(len < n ? len : n - 1), target);
    web_route(cfg, buf, r);
}

/* Writes a set's strings, sorted, one a line, each after prefix; returns
 * their count, or -1 if the output failed. */
static long write_sorted(struct strset *s, const char *prefix, FILE *out)
{
    qsort(s->order, s->count, sizeof *s->order, by_string);
    for (size_t i = 0; i < s->count; i++)
        fprintf(out, "%s%s\n", prefix, s->order[i]);
    return fflush(out) == 0 && !ferror(out) ? (long)s->count : -1;
}

long web_truth(const struct web_config *cfg, FILE *out, int edges)
{
    char host[300], prefix[320];
    const char *name = cfg->host ? cfg->host : "127.0.0.1";
    if (cfg->port == 80)
        snprintf(host, sizeof host, "%.255s", name);
    else
        snprintf(host, sizeof host, "%.255s:%u", name, cfg->port);
    int plen = snprintf(prefix, sizeof prefix, "http://%s", host);

    struct walk w = {.prefix = prefix, .prefix_len = (size_t)plen, .kind = "link"};
    struct strset edge_set;
    if (set_init(&w.seen) != 0)
        return -1;
    if (edges && set_init(&edge_set) != 0) {
        set_free(&w.seen);
        return -1;
    }
    w.edges = edges ? &edge_set : NULL;
    admit(&w, "/");
    /* the crawler finds the sitemap in robots.txt */
    w.from = "/robots.txt";
    if (cfg->sitemap)
        admit(&w, "/sitemap.xml");
    for (size_t head = 0; head < w.seen.count && !w.failed; head++) {
        struct web_route r;
        char path[WEB_MAX_URL_LEN + 1];
        w.from = w.seen.order[head];
        w.kind = "link";
        route_target(cfg, w.from, path, sizeof path, &r);
        if (r.kind == WEB_REDIRECT) {
            w.kind = "redirect";
            admit(&w, r.target);
        } else if (web_kind_parsed(r.kind))
            web_links(cfg, &r, host, on_link, &w);
        else if (web_kind_sitemap(r.kind))
            web_sitemap_entries(cfg, &r, host, on_link, &w);
    }
    long count = -1;
    if (!w.failed)
        count = edges ? write_sorted(&edge_set, "", out) : write_sorted(&w.seen, prefix, out);
    set_free(&w.seen);
    if (edges)
        set_free(&edge_set);
    return count;
}
