/* fetch-sitemap.c - the sitemap kind: hosts seeded from their sitemaps.
 *
 * A host's robots.txt may list sitemaps (sitemaps.org): files that name
 * the host's pages, or further sitemaps. When a robots.txt comes in, its
 * Sitemap URLs go into the frontier like seeds, tagged as sitemaps
 * (TAG_SITEMAP_BIT), so they are fetched in their host's turn, through
 * its robots.txt, once each. A tagged URL's 2xx body goes to the sitemap
 * parser instead of the HTML one, whatever its Content-Type (sitemaps
 * come as application/xml, text/xml, text/plain or application/gzip),
 * and each entry is canonicalized against the sitemap's URL and offered
 * like a link: pages one level deeper than the sitemap, through the scope.
 *
 * Bounds. Sitemaps listed by robots.txt are at depth 0 and the sitemaps
 * an index lists at depth 1; a sitemap listed by one of those is left out,
 * since the protocol does not let an index list another index and a chain
 * of them would have no end. At most --max-sitemaps sitemap files are
 * queued in a crawl, and each file is read up to the protocol's limits
 * (50,000 entries, 50 MiB uncompressed), which the parser enforces. */
#include <string.h>

#include "xfer.h"

/* Queues one canonical sitemap URL at depth, found in the file at
 * referrer (robots.txt or a sitemap index); false if it was not queued. */
static bool queue_sitemap(sieve_crawler *c, const char *url, const sieve_canon_info *info,
                          uint32_t depth, const char *referrer)
{
    if (atomic_fetch_add(&c->n.sitemaps, 1) >= c->o.max_sitemaps) {
        atomic_fetch_sub(&c->n.sitemaps, 1);
        atomic_fetch_add(&c->n.sitemaps_left_out, 1);
        return false;
    }
    scope_verdict v = scope_check(c->scope, url, info, depth);
    sieve_url u = {.url = url,
                   .len = info->len,
                   .depth = tag_make(depth, 0, true),
                   .data = referrer,
                   .data_len = strlen(referrer) + 1};
    int rc = SIEVE_SEEN, result;
    if (v == SCOPE_IN) {
        int n = sieve_frontier_push_batch(c->frontier, &u, 1, &result);
        rc = n < 0 ? n : result;
    }
    if (rc == SIEVE_OK)
        return true;
    if (rc < 0)
        engine_fail(c, rc);
    if (v == SCOPE_IN)
        scope_release(c->scope, url); /* already seen */
    else
        atomic_fetch_add(&c->n.refused[v], 1);
    atomic_fetch_sub(&c->n.sitemaps, 1);
    return false;
}

void sitemaps_seed(sieve_crawler *c, const char *robots_url, const sieve_robots *rules)
{
    /* With max_depth 0 only the seeds are fetched: no page a sitemap
     * lists could be. */
    if (!c->o.sitemaps || c->o.max_depth == 0)
        return;
    const char *const *urls;
    size_t n = sieve_robots_sitemaps(rules, &urls);
    for (size_t i = 0; i < n; i++) {
        char url[SIEVE_URL_MAX + 1];
        sieve_canon_info info;
        if (sieve_canon_url(c->canon, robots_url, urls[i], strlen(urls[i]), url, sizeof url,
                            &info) == SIEVE_OK)
            queue_sitemap(c, url, &info, 0, robots_url);
        else
            atomic_fetch_add(&c->n.sitemaps_left_out, 1);
    }
}

static void on_entry(void *ctx, const sieve_sitemap_entry *e)
{
    xfer *x = ctx;
    sieve_crawler *c = x->c;
    char url[SIEVE_URL_MAX + 1];
    sieve_canon_info info;
    if (sieve_canon_url(c->canon, x->url, e->loc, e->loc_len, url, sizeof url, &info) != SIEVE_OK) {
        atomic_fetch_add(&c->n.sitemap_bad, 1);
        return;
    }
    if (e->kind == SIEVE_SITEMAP_PAGE) {
        atomic_fetch_add(&c->n.sitemap_pages, 1);
        outlinks_offer(x, url, &info, tag_make(x->depth + 1, 0, false), 0, x->url,
                       x->popped.len + 1);
    } else if (x->depth == 0) {
        if (queue_sitemap(c, url, &info, 1, x->url))
            x->links_new++;
    } else {
        atomic_fetch_add(&c->n.sitemaps_left_out, 1);
    }
}

/* What a parse error means for the record: its kind of failure. */
static sieve_crawl_outcome sitemap_outcome(int rc)
{
    return rc == SIEVE_ETRUNCATED ? SIEVE_OUTCOME_TRUNCATED
           : rc == SIEVE_ETOOLONG ? SIEVE_OUTCOME_TOO_LARGE
           : rc == SIEVE_ENOMEM   ? SIEVE_OUTCOME_ERROR
                                  : SIEVE_OUTCOME_PARSE;
}

/* What a parse error means for the record: its text. */
static const char *sitemap_error(int rc)
{
    switch (rc) {
    case SIEVE_EFORMAT:
        return "not a sitemap (neither an XML urlset or sitemapindex nor a URL list), or "
               "corrupt gzip data";
    case SIEVE_ETOOLONG:
        return "sitemap over the protocol's limits (50,000 entries, 50 MiB): the rest was "
               "not read";
    case SIEVE_ETRUNCATED:
        return "sitemap: gzip data cut short";
    default:
        return sieve_strerror(rc);
    }
}

static void sitemap_begin(xfer *x)
{
    xfer_read_headers(x);
    if (x->status < 200 || x->status > 299)
        return;
    x->pass_body = x->c->cb.on_body != NULL;
    x->parse_rc = sieve_sitemap_new(&x->sm, NULL, on_entry, x);
}

static size_t sitemap_body(xfer *x, const char *data, size_t n)
{
    /* A sitemap may be larger than a page: its parser has its own limit. */
    uint64_t limit = x->c->o.max_page_bytes;
    if (limit < SIEVE_SITEMAP_MAX_BYTES)
        limit = SIEVE_SITEMAP_MAX_BYTES;
    if (n > limit - x->bytes) {
        xfer_fail(x, SIEVE_OUTCOME_TOO_LARGE, "sitemap exceeds the byte limit");
        x->cut_length = true;
        return 0;
    }
    if (x->pass_body && !xfer_pass_body(x, data, n))
        return 0;
    x->bytes += n;
    if (x->sm == NULL)
        return n;
    if (x->parse_rc == SIEVE_OK)
        x->parse_rc = sieve_sitemap_feed(x->sm, data, n);
    if (x->parse_rc == SIEVE_OK)
        return n;
    /* Nothing more of it will be read: stop downloading it. */
    xfer_fail(x, sitemap_outcome(x->parse_rc), sitemap_error(x->parse_rc));
    x->cut_length = x->parse_rc == SIEVE_ETOOLONG;
    return 0;
}

static void sitemap_finish(xfer *x, CURLcode result)
{
    xfer_body_end(x, result);
    if (x->sm != NULL) {
        /* An incomplete body is not finished: the entries read stand, and
         * the transfer's own error says why the rest is missing. */
        bool complete = x->parse_rc == SIEVE_OK && result == CURLE_OK && x->fail == NULL;
        if (complete)
            x->parse_rc = sieve_sitemap_finish(x->sm);
        if (x->parse_rc != SIEVE_OK && x->fail == NULL)
            xfer_fail(x, sitemap_outcome(x->parse_rc), sitemap_error(x->parse_rc));
        sieve_sitemap_stats st;
        sieve_sitemap_stats_get(x->sm, &st);
        x->links_found = st.pages + st.sitemaps + st.too_long + st.empty + st.invalid;
        sieve_sitemap_free(x->sm);
        x->sm = NULL;
        x->parse_rc = SIEVE_OK; /* its error, if any, is in x->fail */
    }
    xfer_end_fetch(x, result);
}

const xfer_kind xfer_sitemap = {
    .name = "sitemap",
    .begin = sitemap_begin,
    .body = sitemap_body,
    .finish = sitemap_finish,
};
