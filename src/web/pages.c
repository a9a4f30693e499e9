/* pages.c - HTML rendering of the link-bearing resources.
 *
 * Ordinary pages are plain, valid HTML5 with some deterministic prose, so
 * that a crawl moves realistic amounts of bytes and a parser meets text,
 * headings and lists, not only anchors. The broken pages (malformed,
 * invalid UTF-8) are written by hand around the same link enumeration.
 * Every href goes through HTML escaping, though the generator never emits
 * a character that needs it. */
#include <string.h>

#include "web.h"

static const char *const words[] = {
    "frontier", "queue",   "bloom",    "filter",    "crawl",   "page",     "link",     "seen",
    "fetch",    "parse",   "host",     "path",      "anchor",  "bytes",    "graph",    "seed",
    "depth",    "breadth", "redirect", "canonical", "segment", "fragment", "scheme",   "port",
    "loopback", "server",  "client",   "header",    "body",    "content",  "encoding", "trap",
};

static void prose(struct web_buf *out, uint64_t stream, unsigned count)
{
    uint64_t s = stream;
    web_buf_puts(out, "<p>");
    for (unsigned k = 0; k < count; k++) {
        if (k > 0)
            web_buf_puts(out, k % 17 == 0 ? ".</p>\n<p>" : " ");
        web_buf_puts(out, words[web_rand(&s) % (sizeof words / sizeof words[0])]);
    }
    web_buf_puts(out, ".</p>\n");
}

static void head(struct web_buf *out, const char *title)
{
    web_buf_puts(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                      "<title>");
    web_buf_puts_html(out, title);
    web_buf_puts(out, "</title>\n</head>\n<body>\n<h1>");
    web_buf_puts_html(out, title);
    web_buf_puts(out, "</h1>\n");
}

static const char tail[] = "</body>\n</html>\n";

/* The list item of one link. */
static int item(void *arg, const char *href, const char *rel, const char *target)
{
    struct web_buf *out = arg;
    (void)target;
    web_buf_puts(out, "<li><a href=\"");
    web_buf_puts_html(out, href);
    if (rel) {
        web_buf_puts(out, "\" rel=\"");
        web_buf_puts_html(out, rel);
    }
    web_buf_puts(out, "\">");
    /* Long hrefs are not repeated as text: the many-links page stays
     * well under the crawler's body limit. */
    web_buf_puts_html(out, strlen(href) < 24 ? href : "link");
    web_buf_puts(out, "</a></li>\n");
    return out->oom ? -1 : 0;
}

static void link_list(const struct web_config *cfg, const struct web_route *r, const char *host,
                      struct web_buf *out)
{
    web_buf_puts(out, "<h2 id=\"sec\">Links</h2>\n<ul>\n");
    web_links(cfg, r, host, item, out);
    web_buf_puts(out, "</ul>\n");
}

/* Unclosed and misnested tags, a stray attribute soup, NUL bytes and a
 * comment that never closes: a parser must recover or give up, not crash.
 * Every quote is balanced and every href is complete, so however a parser
 * recovers it can only find links to / and /p/0.html, which the crawl
 * reaches anyway: the truth does not depend on the parser's recovery. */
static void render_malformed(const struct web_config *cfg, const struct web_route *r,
                             const char *host, struct web_buf *out)
{
    static const char nul_run[] = "before\0nul\0\0after";
    web_buf_puts(out, "<html><head><title>malformed<body><div><p><b><i>unclosed\n"
                      "<table><tr><td>cell<td><ul><li>item<li>item\n"
                      "<a href=\"../p/0.html\"><a href=\"/\">nested anchors</b></i></a>\n"
                      "<p =x ===y <<>> </ </> <!> <? ?> &amp &#xZZ; &#99999999; </nope>\n"
                      "<script>if (a < b && c > d) document.write('<b>')</script>\n");
    web_buf_add(out, nul_run, sizeof nul_run - 1);
    web_buf_puts(out, "\n<ul>");
    web_links(cfg, r, host, item, out);
    web_buf_puts(out, "<div <span <a\n<!-- a comment that never closes");
}

/* Overlong encodings, lone continuation bytes, surrogates, truncated
 * sequences and bytes never valid in UTF-8, in text and in attributes. */
static void render_bad_utf8(const struct web_config *cfg, const struct web_route *r,
                            const char *host, struct web_buf *out)
{
    static const char bad[] = "overlong \xc0\xaf, lone \x80\xbf, surrogate \xed\xa0\x80, "
                              "truncated \xe2\x82, invalid \xfe\xff\xf8, end \xf0\x9f";
    head(out, "bad utf-8");
    web_buf_puts(out, "<p title=\"\xff\xfe\">");
    web_buf_add(out, bad, sizeof bad - 1);
    web_buf_puts(out, "</p>\n");
    link_list(cfg, r, host, out);
    web_buf_add(out, bad, sizeof bad - 1);
    web_buf_puts(out, tail);
}

static void title_of(const struct web_route *r, char *title, size_t n)
{
    switch (r->kind) {
    case WEB_HOME:
        snprintf(title, n, "sieve-web");
        break;
    case WEB_PAGE:
        snprintf(title, n, "Page %llu", (unsigned long long)r->id);
        break;
    case WEB_NOFOLLOW:
        snprintf(title, n, "Nofollow %llu", (unsigned long long)r->id);
        break;
    case WEB_MANY_LEAF:
        snprintf(title, n, "Leaf %llu", (unsigned long long)r->id);
        break;
    case WEB_HOSTILE_INDEX:
        snprintf(title, n, "Hostile pages");
        break;
    default:
        snprintf(title, n, "%.*s", (int)(n > 80 ? 80 : n - 1), r->path);
    }
}

int web_render(const struct web_config *cfg, const struct web_route *r, const char *host,
               struct web_buf *out)
{
    if (r->kind == WEB_MALFORMED) {
        render_malformed(cfg, r, host, out);
        return out->oom ? -1 : 0;
    }
    if (r->kind == WEB_BAD_UTF8) {
        render_bad_utf8(cfg, r, host, out);
        return out->oom ? -1 : 0;
    }
    char title[96];
    title_of(r, title, sizeof title);
    head(out, title);
    if (r->kind == WEB_PAGE) {
        struct web_page_graph g;
        web_page_graph(cfg, r->id, &g);
        prose(out, web_page_stream(cfg, r->id, 2), g.words);
    } else if (r->kind == WEB_CAL) {
        const char *last = r->path + strlen(r->path) - 8;
        web_buf_printf(out, "<p>Events of %.4s-%.2s: none.</p>\n", last, last + 5);
    }
    link_list(cfg, r, host, out);
    web_buf_puts(out, tail);
    return out->oom ? -1 : 0;
}

void web_render_text_file(const struct web_config *cfg, uint64_t id, struct web_buf *out)
{
    web_buf_printf(out, "File %llu.\n", (unsigned long long)id);
    uint64_t s = web_page_stream(cfg, id, 3);
    unsigned n = 10 + (unsigned)(web_rand(&s) % 50);
    for (unsigned k = 0; k < n; k++) {
        web_buf_puts(out, words[web_rand(&s) % (sizeof words / sizeof words[0])]);
        web_buf_puts(out, k % 10 == 9 ? "\n" : " ");
    }
    /* Looks like a link to a parser that wrongly parses text. */
    web_buf_puts(out, "\n<a href=\"/hostile/bait.html\">not a link</a>\n");
}

/* A valid 1x1 grey PNG. */
const unsigned char web_png[] = {
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48,
    0x44, 0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00, 0x00, 0x00,
    0x00, 0x3a, 0x7e, 0x9b, 0x55, 0x00, 0x00, 0x00, 0x0a, 0x49, 0x44, 0x41, 0x54, 0x78,
    0x9c, 0x63, 0x68, 0x00, 0x00, 0x00, 0x82, 0x00, 0x81, 0x77, 0xcd, 0x72, 0xb6, 0x00,
    0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
};
const size_t web_png_len = sizeof web_png;
