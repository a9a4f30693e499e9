/* graph.c - the deterministic link graph of the /p/ pages.
 *
 * A page's links are a pure function of (seed, page id): each page draws
 * from its own splitmix64 stream, seeded by mixing the graph seed with the
 * id, so any page can be computed alone, in any order, by any thread, and a
 * web of a billion pages costs no memory. splitmix64 is tiny, passes
 * BigCrush and, unlike a shared generator, has no state to lock.
 *
 * Reachability is guaranteed rather than hoped for: page i always links to
 * page i + 1, so the chain from /p/0.html reaches every page whatever the
 * random links are; the random links add the cross edges, duplicates and
 * back edges that exercise the crawler's seen-set. */
#include "web.h"

uint64_t web_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t web_page_stream(const struct web_config *cfg, uint64_t id, uint64_t salt)
{
    /* One mixing round so that neighbouring ids start far apart. */
    uint64_t s = cfg->seed ^ (id * 0xd1b54a32d192ed03ull) ^ (salt * 0x8cb92ba72f3d8dd7ull);
    web_rand(&s);
    return s;
}

/* Uniform in [0, n) without modulo bias worth caring about for n << 2^64. */
static uint64_t below(uint64_t *s, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)web_rand(s) * n) >> 64);
}

void web_page_graph(const struct web_config *cfg, uint64_t id, struct web_page_graph *g)
{
    uint64_t s = web_page_stream(cfg, id, 1);
    unsigned span = WEB_PAGE_MAX_LINKS - WEB_PAGE_MIN_LINKS + 1;
    g->nlinks = WEB_PAGE_MIN_LINKS + (unsigned)below(&s, span);
    for (unsigned k = 0; k < g->nlinks; k++) {
        g->target[k] = below(&s, cfg->pages);
        g->form[k] = (unsigned)below(&s, WEB_FORM_COUNT);
    }
    /* The chain link: i -> i + 1, and the last page back to the first. */
    unsigned slot = (unsigned)below(&s, g->nlinks);
    g->target[slot] = id + 1 < cfg->pages ? id + 1 : 0;
    for (unsigned e = 0; e < WEB_EXTRA_COUNT; e++)
        g->has_extra[e] = below(&s, 3) == 0;
    g->redirect_target = below(&s, cfg->pages);
    g->words = 20 + (unsigned)below(&s, 120);
}
