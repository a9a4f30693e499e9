/* record.c - one record per URL the crawl is done with, handed to the
 * embedder's on_record callback, and counted. */
#include "clock.h"
#include "gate.h"
#include "xfer.h"

/* Counts a record and hands it over; a callback that refuses it ends the
 * run with its status. */
static void deliver(sieve_crawler *c, const sieve_crawl_record *r)
{
    atomic_fetch_add(&c->n.fetched, 1);
    if (r->error != NULL)
        atomic_fetch_add(&c->n.errors, 1);
    if (c->cb.on_record == NULL)
        return;
    int rc = c->cb.on_record(c->ud, r);
    if (rc != SIEVE_OK)
        engine_fail(c, rc < 0 ? rc : SIEVE_ECLOSED);
}

void xfer_record(xfer *x, const char *final_url, const char *error)
{
    sieve_crawler *c = x->c;
    atomic_fetch_add(&c->n.bytes, x->bytes);
    atomic_fetch_add(&c->n.links, x->links_found);
    atomic_fetch_add(&c->n.links_new, x->links_new);
    sieve_crawl_record r = {
        .url = x->url,
        .final_url = final_url,
        .status = x->status,
        .content_type = x->content_type,
        .bytes = x->bytes,
        .depth = x->depth,
        .links_found = x->links_found,
        .links_new = x->links_new,
        .elapsed_ms = (clock_now() - x->started) * 1e3,
        .error = error,
        .kind = x->kind == &xfer_sitemap ? SIEVE_FETCH_SITEMAP : SIEVE_FETCH_PAGE,
    };
    deliver(c, &r);
}

void gate_refuse(sieve_crawler *c, const sieve_url *u, const char *why)
{
    sieve_crawl_record r = {
        .url = u->url,
        .final_url = u->url,
        .depth = u->depth & TAG_DEPTH_MASK,
        .error = why,
        .kind = (u->depth & TAG_SITEMAP_BIT) ? SIEVE_FETCH_SITEMAP : SIEVE_FETCH_PAGE,
    };
    deliver(c, &r);
    engine_done(c, u);
}
