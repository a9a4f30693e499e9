/* fetch-page.c - the page kind: a URL found by a link, a redirect or a
 * seed.
 *
 * Bodies are never buffered: each chunk of a 2xx HTML response goes to
 * the page's link extractor (libxml2's push parser), whose callback
 * offers each link to the scope and the outlink batch. Links in error
 * pages are not followed. The byte limit is counted after decompression. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "xfer.h"

static void on_link(void *ctx, const sieve_link *l)
{
    xfer *x = ctx;
    outlinks_offer(x, l->url, &l->info, tag_make(x->depth + 1, 0, false), l->key, x->url,
                   x->popped.len + 1);
}

static bool is_html_type(const char *ct)
{
    if (ct == NULL)
        return false;
    size_t n = strcspn(ct, "; \t");
    return (n == 9 && strncasecmp(ct, "text/html", 9) == 0) ||
           (n == 21 && strncasecmp(ct, "application/xhtml+xml", 21) == 0);
}

/* The charset parameter of a Content-Type, copied into buf, or NULL. */
static const char *charset_of(const char *ct, char *buf, size_t cap)
{
    const char *p = ct == NULL ? NULL : strcasestr(ct, "charset=");
    if (p == NULL)
        return NULL;
    p += 8;
    if (*p == '"')
        p++;
    size_t n = strcspn(p, "\"; \t");
    if (n == 0 || n >= cap)
        return NULL;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return buf;
}

/* Whether one X-Robots-Tag value says nofollow (or none) to us: for
 * every crawler, or with our product token before a colon ("sieve:
 * nofollow"); a value for another crawler ("otherbot: nofollow") does not.
 * "unavailable_after: DATE" is a rule, not a crawler's name. */
static bool robots_tag_nofollow(const char *v)
{
    while (*v == ' ' || *v == '\t')
        v++;
    size_t word = strcspn(v, ":, \t");
    if (v[word] == ':' && !(word == 17 && strncasecmp(v, "unavailable_after", 17) == 0)) {
        if (!(word == 5 && strncasecmp(v, "sieve", 5) == 0))
            return false;
        v += word + 1;
    }
    while (*v) {
        while (*v == ',' || *v == ' ' || *v == '\t')
            v++;
        size_t n = strcspn(v, ", \t");
        if ((n == 8 && strncasecmp(v, "nofollow", 8) == 0) ||
            (n == 4 && strncasecmp(v, "none", 4) == 0))
            return true;
        v += n;
    }
    return false;
}

/* The response's Refresh header, or NULL. */
static const char *refresh_header(xfer *x)
{
    struct curl_header *h;
    if (curl_easy_header(x->easy, "Refresh", 0, CURLH_HEADER, -1, &h) != CURLHE_OK)
        return NULL;
    return h->value;
}

/* A Refresh header sends the reader on as the page's own meta refresh
 * would: its URL goes to the extractor, as the page's first link. */
static void offer_refresh(xfer *x)
{
    const char *v = refresh_header(x);
    if (v != NULL)
        x->parse_rc = sieve_links_refresh(x->lx, v, strlen(v));
}

/* A page that is not HTML has no links of its own, but a browser follows
 * a Refresh header from any page it shows, an image or a text as well:
 * that URL is the page's one link. The extractor reads the header alone
 * and never sees the body. */
static void header_refresh_only(xfer *x, const sieve_links_opts *lo)
{
    if (refresh_header(x) == NULL)
        return;
    x->lx_header_only = true;
    x->parse_rc = sieve_links_new(&x->lx, x->url, lo, on_link, x);
    if (x->parse_rc == SIEVE_OK)
        offer_refresh(x);
}

/* Any X-Robots-Tag header of the response that says nofollow to us. */
static bool headers_say_nofollow(CURL *e)
{
    struct curl_header *h;
    for (size_t i = 0; curl_easy_header(e, "X-Robots-Tag", i, CURLH_HEADER, -1, &h) == CURLHE_OK;
         i++) {
        if (robots_tag_nofollow(h->value))
            return true;
        if (i + 1 >= h->amount)
            break;
    }
    return false;
}

static void page_begin(xfer *x)
{
    xfer_read_headers(x);
    if (x->status < 200 || x->status > 299)
        return;
    if (!accept_type(x->c->accept, x->content_type)) {
        xfer_fail(x, SIEVE_OUTCOME_REJECTED, "content type rejected");
        return;
    }
    x->pass_body = x->c->cb.on_body != NULL;
    /* The server says: follow none of this page's links. */
    if (!x->c->o.follow_nofollow && headers_say_nofollow(x->easy))
        return;
    char cs[64];
    sieve_links_opts lo = {
        .canon = x->c->canon,
        .follow_nofollow = x->c->o.follow_nofollow,
        .memo = x->memo,
    };
    if (!is_html_type(x->content_type)) {
        header_refresh_only(x, &lo);
        return;
    }
    lo.charset = charset_of(x->content_type, cs, sizeof cs);
    x->parse_rc = sieve_links_new(&x->lx, x->url, &lo, on_link, x);
    if (x->parse_rc == SIEVE_OK)
        offer_refresh(x);
}

static size_t page_body(xfer *x, const char *data, size_t n)
{
    if (n > x->c->o.max_page_bytes - x->bytes) {
        xfer_fail(x, SIEVE_OUTCOME_TOO_LARGE, "page exceeds the byte limit");
        x->cut_length = true;
        return 0;
    }
    if (x->pass_body && !xfer_pass_body(x, data, n))
        return 0;
    x->bytes += n;
    if (x->lx != NULL && !x->lx_header_only && x->parse_rc == SIEVE_OK)
        x->parse_rc = sieve_links_feed(x->lx, data, n);
    return n;
}

static void page_finish(xfer *x, CURLcode result)
{
    xfer_body_end(x, result);
    if (x->lx != NULL) {
        /* A body cut short may end inside a tag; finishing would read that
         * tag as libxml2 recovers it, and "/many/1.html" cut after "/m"
         * would become a link to "/m". Links already delivered came from
         * complete tags, so only a complete body is finished. */
        if (x->parse_rc == SIEVE_OK && result == CURLE_OK && x->fail == NULL)
            x->parse_rc = sieve_links_finish(x->lx);
        sieve_links_stats st;
        sieve_links_stats_get(x->lx, &st);
        x->links_found = st.found;
        /* the links the extractor refused, counted where the rest are */
        sieve_crawler *c = x->c;
        atomic_fetch_add(&c->n.nofollow, st.nofollow);
        atomic_fetch_add(&c->n.not_http, st.scheme);
        atomic_fetch_add(&c->n.trap, st.trap);
        atomic_fetch_add(&c->n.malformed, st.invalid);
        /* A parse limit ended the page: the links before the cut stand,
         * and the record says the rest was not read. */
        if (st.cut && x->fail == NULL) {
            snprintf(x->errbuf, sizeof x->errbuf, "links cut: %s", st.cut_reason);
            xfer_fail(x, SIEVE_OUTCOME_PARSE, x->errbuf);
        }
        sieve_links_free(x->lx);
        x->lx = NULL;
    }
    xfer_end_fetch(x, result);
}

const xfer_kind xfer_page = {
    .name = "page",
    .begin = page_begin,
    .body = page_body,
    .finish = page_finish,
};
