/* outlinks.c - the links a transfer found, on their way to the frontier.
 *
 * Each canonical link is judged by the scope, then by the embedder's link
 * filter, and packed into the transfer's batch with its data (via.h); a
 * full batch, and the rest at the transfer's end, goes to the frontier in
 * one push_batch() (one lock, every key prefetched). A link the frontier
 * had seen gives its host's quota back. A link in the seen-set, new or
 * not, goes into the worker's memo, so that the pages after skip it
 * before they canonicalize it (sieve/links.h). */
#include <string.h>

#include "xfer.h"

void outlinks_flush(xfer *x)
{
    if (x->nbatch == 0)
        return;
    sieve_crawler *c = x->c;
    int results[OUTLINK_BATCH];
    int rc = sieve_frontier_push_batch(c->frontier, x->batch, x->nbatch, results);
    if (rc < 0) { /* out of memory, or the state's journal failed */
        x->links_lost = true;
        engine_fail(c, rc);
    }
    for (size_t i = 0; i < x->nbatch; i++) {
        if (results[i] == SIEVE_OK)
            x->links_new++;
        else
            scope_release(c->scope, x->batch[i].url);
        /* in the seen-set now: pages that repeat the link skip it */
        if (results[i] == SIEVE_OK || results[i] == SIEVE_SEEN)
            sieve_links_memo_add(x->memo, x->batch_key[i]);
    }
    x->nbatch = 0;
    x->store_used = 0;
}

/* The links of a page all carry the page's URL as their data: a batch
 * holds one copy, which the links after the first point at. */
static bool append(xfer *x, const char *url, size_t len, uint32_t tag, uint64_t key,
                   const void *via, size_t via_len)
{
    bool same_via =
        x->nbatch > 0 && via == x->via_from && via_len == x->batch[x->nbatch - 1].data_len;
    size_t need = len + 1 + (same_via ? 0 : via_len);
    if (x->nbatch == OUTLINK_BATCH || x->store_used + need > sizeof x->store) {
        outlinks_flush(x);
        same_via = false;
        need = len + 1 + via_len;
    }
    char *dst = x->store + x->store_used;
    memcpy(dst, url, len + 1);
    const void *data = same_via ? x->batch[x->nbatch - 1].data : dst + len + 1;
    if (!same_via && via_len > 0)
        memcpy(dst + len + 1, via, via_len);
    x->store_used += need;
    x->via_from = via;
    x->batch_key[x->nbatch] = key;
    x->batch[x->nbatch++] = (sieve_url){.url = dst,
                                        .len = len,
                                        .depth = tag,
                                        .data = via_len > 0 ? data : NULL,
                                        .data_len = via_len};
    return true;
}

/* Asks the embedder's filter about a link the scope took. Returns whether
 * to push it; a rewritten URL is canonicalized into buf and judged by the
 * scope again (its first verdict's quota given back). */
static bool filter(xfer *x, const char **url, sieve_canon_info *info, uint32_t tag, char *buf,
                   size_t cap)
{
    sieve_crawler *c = x->c;
    sieve_crawl_link l = {
        .url = *url, .len = info->len, .page = x->url, .depth = tag & TAG_DEPTH_MASK};
    char rewritten[SIEVE_URL_MAX + 1];
    sieve_link_verdict v = c->cb.on_link(c->ud, &l, rewritten, sizeof rewritten);
    if (v == SIEVE_LINK_KEEP)
        return true;
    scope_release(c->scope, *url);
    size_t len = v == SIEVE_LINK_REWRITE ? strnlen(rewritten, sizeof rewritten) : 0;
    if (v != SIEVE_LINK_REWRITE || len == sizeof rewritten ||
        sieve_canon_url(c->canon, x->url, rewritten, len, buf, cap, info) != SIEVE_OK) {
        /* dropped, or rewritten into something that is no crawlable URL */
        atomic_fetch_add(&c->n.filtered, 1);
        return false;
    }
    scope_verdict sv = scope_check(c->scope, buf, info, tag & TAG_DEPTH_MASK);
    if (sv != SCOPE_IN) {
        atomic_fetch_add(&c->n.refused[sv], 1);
        return false;
    }
    *url = buf;
    return true;
}

bool outlinks_offer(xfer *x, const char *url, const sieve_canon_info *info, uint32_t tag,
                    uint64_t key, const void *via, size_t via_len)
{
    sieve_crawler *c = x->c;
    scope_verdict v = scope_check(c->scope, url, info, tag & TAG_DEPTH_MASK);
    if (v != SCOPE_IN) {
        atomic_fetch_add(&c->n.refused[v], 1);
        return false;
    }
    if (c->cb.on_link == NULL)
        return append(x, url, info->len, tag, key, via, via_len);
    sieve_canon_info fi = *info;
    char buf[SIEVE_URL_MAX + 1];
    if (!filter(x, &url, &fi, tag, buf, sizeof buf))
        return false;
    return append(x, url, fi.len, tag, 0, via, via_len);
}
