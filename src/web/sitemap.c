/* sitemap.c - the sitemaps of --sitemap: a second way onto the host.
 *
 * A crawler may seed a host from the Sitemap lines of its robots.txt, so
 * the web offers one (robots.c writes the line). The files exercise every
 * shape a crawler has to read:
 *
 *   /sitemap.xml               <sitemapindex> of the three files below
 *   /sitemaps/pages-1.xml      <urlset>, application/xml
 *   /sitemaps/pages-2.xml.gz   <urlset> compressed as a file: served as
 *                              application/gzip without Content-Encoding,
 *                              so the client does not inflate it and the
 *                              crawler must
 *   /sitemaps/pages-3.txt      one URL a line, text/plain
 *
 * Together the urlsets list every /nofollow/ID.html page, the pages no
 * followed link reaches, in three consecutive ranges of ids: whatever the
 * crawler finds there it found through the sitemaps. pages-1.xml also
 * lists a page on another host (a host-scoped crawl must drop it) and
 * /p/0.html with a query whose '&' is written "&amp;" (the crawler must
 * decode entities); the server ignores queries, so that URL is page 0.
 *
 * As for links (links.c), each entry is enumerated once with its
 * canonical target, and both the renderer and the truth walk read that
 * enumeration: what is served and what is counted cannot drift apart. */
#include <stdio.h>
#include <string.h>

#include "web.h"

/* A third of a file's page range, at most: 120,000 / 3 + 2 < 50,000. */
_Static_assert(WEB_SITEMAP_MAX_PAGES / 3 + 2 <= 50000, "a sitemap file holds 50,000 URLs");

static const char xml_decl[] = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
static const char xml_ns[] = "xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"";

static const char *const files[] = {
    "/sitemaps/pages-1.xml",
    "/sitemaps/pages-2.xml.gz",
    "/sitemaps/pages-3.txt",
};

/* The extras of pages-1.xml: a page on another host, and page 0 under a
 * query with two parameters, already in name order so that a crawler that
 * sorts queries keeps the spelling. */
static const char elsewhere[] = "http://elsewhere.invalid/p/0.html";
static const char query_page[] = "/p/0.html?from=sitemap&x=1";

int web_sitemap_check(const struct web_config *cfg, char *err, size_t errlen)
{
    if (!cfg->sitemap)
        return 0;
    if (cfg->robots != WEB_ROBOTS_ALLOW) {
        snprintf(err, errlen,
                 "--sitemap needs --robots allow (the default): only that robots.txt "
                 "names the sitemap");
        return -1;
    }
    if (cfg->pages > WEB_SITEMAP_MAX_PAGES) {
        snprintf(err, errlen,
                 "--sitemap serves at most %u pages (--pages), so that no sitemap file "
                 "lists more than 50,000 URLs",
                 WEB_SITEMAP_MAX_PAGES);
        return -1;
    }
    return 0;
}

struct entries {
    web_link_fn fn;
    void *arg;
    const char *host;
    struct web_buf href;
    int stop;
};

/* Emits one entry: the location "http://HOST" + path, or the absolute
 * URL abs on another host, whose target is then NULL. */
static void entry(struct entries *e, const char *path, const char *abs)
{
    if (e->stop)
        return;
    e->href.len = 0;
    if (abs)
        web_buf_puts(&e->href, abs);
    else
        web_buf_printf(&e->href, "http://%s%s", e->host, path);
    if (e->href.oom)
        e->stop = -1;
    else
        e->stop = e->fn(e->arg, e->href.data, NULL, abs ? NULL : path);
}

/* Lists /nofollow/ID.html for ID in the part-th third of [0, pages). */
static void part_pages(const struct web_config *cfg, unsigned part, struct entries *e)
{
    uint64_t from = cfg->pages * part / 3, to = cfg->pages * (part + 1) / 3;
    char path[64];
    for (uint64_t id = from; id < to && !e->stop; id++) {
        snprintf(path, sizeof path, "/nofollow/%llu.html", (unsigned long long)id);
        entry(e, path, NULL);
    }
}

int web_sitemap_entries(const struct web_config *cfg, const struct web_route *r, const char *host,
                        web_link_fn fn, void *arg)
{
    struct entries e = {.fn = fn, .arg = arg, .host = host};
    web_buf_init(&e.href);
    switch (r->kind) {
    case WEB_SITEMAP_INDEX:
        for (size_t k = 0; k < sizeof files / sizeof files[0]; k++)
            entry(&e, files[k], NULL);
        break;
    case WEB_SITEMAP_XML:
        entry(&e, NULL, elsewhere);
        entry(&e, query_page, NULL);
        part_pages(cfg, 0, &e);
        break;
    case WEB_SITEMAP_GZ:
        part_pages(cfg, 1, &e);
        break;
    case WEB_SITEMAP_TEXT:
        /* Never empty (2N/3 < N): a text sitemap without a line is not
         * a sitemap at all. */
        part_pages(cfg, 2, &e);
        break;
    default:
        break;
    }
    web_buf_free(&e.href);
    return e.stop;
}

struct render {
    struct web_buf *out;
    const char *element; /* "sitemap" or "url"; NULL for text */
};

static int render_entry(void *arg, const char *href, const char *rel, const char *target)
{
    struct render *rr = arg;
    (void)rel;
    (void)target;
    if (!rr->element) {
        web_buf_puts(rr->out, href);
        web_buf_puts(rr->out, "\n");
        return rr->out->oom ? -1 : 0;
    }
    web_buf_printf(rr->out, "  <%s><loc>", rr->element);
    web_buf_puts_html(rr->out, href);
    web_buf_puts(rr->out, "</loc>");
    /* The index dates its files, as generators do; a crawler may ignore it. */
    if (strcmp(rr->element, "sitemap") == 0)
        web_buf_puts(rr->out, "<lastmod>2026-11-01</lastmod>");
    web_buf_printf(rr->out, "</%s>\n", rr->element);
    return rr->out->oom ? -1 : 0;
}

/* Renders the XML document of an index or urlset into out. */
static void render_xml(const struct web_config *cfg, const struct web_route *r, const char *host,
                       const char *root, const char *element, struct web_buf *out)
{
    struct render rr = {.out = out, .element = element};
    web_buf_puts(out, xml_decl);
    web_buf_printf(out, "<%s %s>\n", root, xml_ns);
    web_sitemap_entries(cfg, r, host, render_entry, &rr);
    web_buf_printf(out, "</%s>\n", root);
}

int web_sitemap_render(const struct web_config *cfg, const struct web_route *r, const char *host,
                       struct web_buf *out, const char **type)
{
    static const char xml_type[] = "application/xml";
    struct render text = {.out = out, .element = NULL};
    struct web_buf plain;
    int rc;
    switch (r->kind) {
    case WEB_SITEMAP_INDEX:
        render_xml(cfg, r, host, "sitemapindex", "sitemap", out);
        *type = xml_type;
        break;
    case WEB_SITEMAP_XML:
        render_xml(cfg, r, host, "urlset", "url", out);
        *type = xml_type;
        break;
    case WEB_SITEMAP_GZ:
        web_buf_init(&plain);
        render_xml(cfg, r, host, "urlset", "url", &plain);
        rc = plain.oom ? -1 : web_gzip(plain.data, plain.len, out);
        web_buf_free(&plain);
        *type = "application/gzip";
        return rc;
    case WEB_SITEMAP_TEXT:
        web_sitemap_entries(cfg, r, host, render_entry, &text);
        *type = "text/plain; charset=utf-8";
        break;
    default:
        return -1;
    }
    return out->oom ? -1 : 0;
}
