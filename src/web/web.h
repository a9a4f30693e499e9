/* web.h - sieve-web, a synthetic web for testing and benchmarking the crawler.
 *
 * sieve-web serves a deterministic web of pages on a loopback address and,
 * with --truth, prints the exact set of URLs a correct crawler requests when
 * it starts from "/". Nothing is stored: every page is computed on demand
 * from (seed, path), so a million-page web costs no memory, and the same
 * function that renders a page's links for HTTP also feeds the ground-truth
 * walk (truth.c). The HTTP side and the truth therefore cannot drift apart;
 * tests/test-web.c checks them against each other by crawling over HTTP.
 *
 * The files:
 *   buf.c      growable byte buffer used to render responses
 *   graph.c    PRNG and the link graph of the /p/ pages
 *   route.c    path -> resource kind (the server's URL space)
 *   links.c    the links of every HTML resource, with canonical targets
 *   pages.c    HTML rendering of the link-bearing resources
 *   hostile.c  response bodies of the hostile resources (streams, gzip, ...)
 *   truth.c    the ground-truth walk and the crawler's guards
 *   robots.c   the --robots modes of /robots.txt
 *   sitemap.c  the sitemaps of --sitemap
 *   log.c      the access log (--access-log)
 *   server.c   libmicrohttpd glue
 *   main.c     command line */
#ifndef SIEVE_WEB_H
#define SIEVE_WEB_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

/* The crawler's trap guards, mirrored by the truth walk. */
#define WEB_MAX_URL_LEN  2048 /* bytes of the canonical absolute URL */
#define WEB_MAX_SEGMENTS 20   /* non-empty path segments */
#define WEB_MAX_REPEAT   2    /* equal consecutive segments */

/* The hostile resources' sizes. */
#define WEB_MANY_LINKS 100000u             /* links on /hostile/many.html */
#define WEB_MANY_MAX   100000u             /* distinct /many/ID.html leaves, at most */
#define WEB_HUGE_SIZE  (20u * 1024 * 1024) /* bytes of /hostile/huge.html */
#define WEB_LONG_SEG   299u                /* bytes of one /long/ segment */
#define WEB_CAL_YEAR   2026
#define WEB_CAL_MONTH  11

#define WEB_DEFAULT_PORT  8917
#define WEB_DEFAULT_PAGES 1000
#define WEB_MAX_PAGES     1000000000ull

#define WEB_ROBOTS_MAX   (1024u * 1024) /* bytes of a --robots file:PATH body */
#define WEB_MAX_DELAY_MS 60000u

/* Most pages with --sitemap: a third of them plus two extra URLs stays
 * under the sitemaps.org limit of 50,000 URLs a file. */
#define WEB_SITEMAP_MAX_PAGES 120000u

/* How /robots.txt answers (--robots). */
enum web_robots_mode {
    WEB_ROBOTS_ALLOW,    /* 200, a file that allows everything */
    WEB_ROBOTS_FILE,     /* 200, the bytes of a file read at startup */
    WEB_ROBOTS_404,      /* 404 */
    WEB_ROBOTS_500,      /* 500 */
    WEB_ROBOTS_HANG,     /* no byte, until the client leaves or the server stops */
    WEB_ROBOTS_REDIRECT, /* 301 to /robots-moved.txt, which allows everything */
};

/* What the server was asked to build; read-only once the server runs. */
struct web_config {
    uint64_t pages;    /* N: pages /p/0.html .. /p/(N-1).html, N >= 1 */
    uint64_t seed;     /* graph seed */
    unsigned port;     /* listening port (for --truth: the port URLs name) */
    const char *host;  /* for --truth: the address URLs name; NULL: 127.0.0.1 */
    int hostile;       /* serve and link the hostile resources */
    unsigned drip_ms;  /* delay between two bytes of /hostile/slow.html */
    unsigned delay_ms; /* added before every parsed HTML page's response */
    enum web_robots_mode robots;
    const char *robots_body; /* WEB_ROBOTS_FILE: the body, robots_len bytes */
    size_t robots_len;
    const char *access_log; /* path of the access log, or NULL for none */
    int sitemap;            /* robots.txt names /sitemap.xml, which is served */
    int gzip;               /* --gzip: rendered pages and files go gzipped when accepted */
};

/* ---- buf.c ---- */

/* A growable byte buffer. After an allocation failure it stays failed
 * (oom set) and ignores further appends, so renderers check once at the
 * end instead of after every append. */
struct web_buf {
    char *data;
    size_t len;
    size_t cap;
    int oom;
};

void web_buf_init(struct web_buf *b);
void web_buf_free(struct web_buf *b);
void web_buf_add(struct web_buf *b, const void *p, size_t n);
void web_buf_puts(struct web_buf *b, const char *s);
void web_buf_printf(struct web_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends s with &, <, > and " written as entities. */
void web_buf_puts_html(struct web_buf *b, const char *s);

/* ---- graph.c ---- */

/* splitmix64: one step of the generator whose state is *state. */
uint64_t web_rand(uint64_t *state);
/* The generator state for page id's own stream under cfg's seed. */
uint64_t web_page_stream(const struct web_config *cfg, uint64_t id, uint64_t salt);

/* The out-links of page /p/ID.html, in document order. */
enum web_link_form {
    WEB_FORM_BARE,      /* "T.html" */
    WEB_FORM_DOT,       /* "./T.html" */
    WEB_FORM_PARENT,    /* "../p/T.html" */
    WEB_FORM_ABSPATH,   /* "/p/T.html" */
    WEB_FORM_ABSURL,    /* "http://HOST/p/T.html" */
    WEB_FORM_FRAGMENT,  /* "T.html#sec" */
    WEB_FORM_UPPER,     /* "HTTP://UPPERHOST/p/T.html" */
    WEB_FORM_PERCENT,   /* "/%70/T.html" and an escaped first digit */
    WEB_FORM_DOTSEG,    /* "http://HOST/p/./x/../T.html" */
    WEB_FORM_SCHEMEREL, /* "//HOST/p/T.html" */
    WEB_FORM_DEFPORT,   /* ":80" added or removed when the port is 80 */
    WEB_FORM_COUNT
};

enum web_extra {
    WEB_EXTRA_TXT,      /* /files/ID.txt */
    WEB_EXTRA_PNG,      /* /files/ID.png */
    WEB_EXTRA_MISSING,  /* /missing/ID.html, a 404 */
    WEB_EXTRA_R,        /* /r/J -> /p/J.html */
    WEB_EXTRA_R2,       /* /r2/J -> /r/J, and /r/J beside it */
    WEB_EXTRA_NOFOLLOW, /* rel=nofollow to /nofollow/ID.html */
    WEB_EXTRA_JS,       /* javascript: */
    WEB_EXTRA_MAILTO,   /* mailto: */
    WEB_EXTRA_COUNT
};

#define WEB_PAGE_MIN_LINKS 5
#define WEB_PAGE_MAX_LINKS 20

struct web_page_graph {
    unsigned nlinks;                     /* page links, 5..20 */
    uint64_t target[WEB_PAGE_MAX_LINKS]; /* target page ids */
    unsigned form[WEB_PAGE_MAX_LINKS];   /* enum web_link_form */
    int has_extra[WEB_EXTRA_COUNT];
    uint64_t redirect_target; /* J for the /r/ and /r2/ extras */
    unsigned words;           /* words of body text */
};

/* Computes page id's links (id < cfg->pages). Page id always links to
 * id + 1 (when it exists), so every page is reachable from /p/0.html. */
void web_page_graph(const struct web_config *cfg, uint64_t id, struct web_page_graph *g);

/* ---- route.c ---- */

enum web_kind {
    WEB_NOT_FOUND,    /* 404 */
    WEB_HOME,         /* / */
    WEB_ROBOTS,       /* /robots.txt, as cfg->robots says */
    WEB_ROBOTS_MOVED, /* /robots-moved.txt, only with WEB_ROBOTS_REDIRECT */
    WEB_PAGE,         /* /p/ID.html */
    WEB_NOFOLLOW,     /* /nofollow/ID.html */
    WEB_FILE_TXT,     /* /files/ID.txt */
    WEB_FILE_PNG,     /* /files/ID.png */
    WEB_REDIRECT,     /* /r/ID, /r2/ID, /loop/a, /loop/b */
    /* hostile, served only with cfg->hostile */
    WEB_HOSTILE_INDEX, /* /hostile/ */
    WEB_CAL,           /* /cal/YYYY/MM/(YYYY/MM/)* */
    WEB_TRAP,          /* /trap/a/(a/)* */
    WEB_DEEP,          /* /deep/1/2/.../K */
    WEB_LONG,          /* /long/SEG1/.../SEGK */
    WEB_MANY,          /* /hostile/many.html */
    WEB_MANY_LEAF,     /* /many/ID.html */
    WEB_MALFORMED,     /* /hostile/malformed.html */
    WEB_BAD_UTF8,      /* /hostile/bad-utf8.html */
    WEB_ENDLESS,       /* /hostile/endless.html */
    WEB_SLOW,          /* /hostile/slow.html */
    WEB_GZIP,          /* /hostile/gzip.html */
    WEB_GZIP_TARGET,   /* /hostile/gzip-target.html */
    WEB_HUGE,          /* /hostile/huge.html */
    WEB_TEXT_HTML,     /* /hostile/html-as-text.txt */
    WEB_BAIT,          /* /hostile/bait.html */
    WEB_ERROR,         /* /hostile/error.html, a 500 */
    /* sitemaps, served only with cfg->sitemap */
    WEB_SITEMAP_INDEX, /* /sitemap.xml, a <sitemapindex> */
    WEB_SITEMAP_XML,   /* /sitemaps/pages-1.xml, a <urlset> */
    WEB_SITEMAP_GZ,    /* /sitemaps/pages-2.xml.gz, a gzip file of a <urlset> */
    WEB_SITEMAP_TEXT,  /* /sitemaps/pages-3.txt, one URL a line */
};

struct web_route {
    enum web_kind kind;
    uint64_t id;      /* page / file / leaf id, or depth of a trap */
    const char *path; /* the request path, borrowed */
    /* WEB_REDIRECT: the Location as sent (a relative reference, or NULL to
     * send target) and the canonical path it resolves to. location_abs asks
     * the server to prefix "http://HOST" to target. */
    const char *location;
    char target[64];
    int location_abs;
    int status; /* 301 or 302 */
};

/* Classifies an already percent-decoded request path, without its query.
 * Never fails: unknown paths are WEB_NOT_FOUND. */
void web_route(const struct web_config *cfg, const char *path, struct web_route *r);

/* Whether a crawler parses the body of kind for links: an HTML type, a
 * 2xx status and a body that ends within the crawler's limits. */
int web_kind_parsed(enum web_kind kind);

/* Whether kind is a sitemap, whose entries a crawler reads (sitemap.c). */
int web_kind_sitemap(enum web_kind kind);

/* The /long/ trap's k-th segment (k >= 1), WEB_LONG_SEG bytes plus NUL. */
void web_long_segment(unsigned k, char out[WEB_LONG_SEG + 1]);

/* The distinct /many/ID.html leaves: min(pages, WEB_MANY_MAX). */
uint64_t web_many_leaves(const struct web_config *cfg);

/* ---- links.c ---- */

/* One link of an HTML resource. href is the attribute exactly as written;
 * rel is NULL or the rel attribute; target is the canonical path the link
 * resolves to when a crawler follows it, or NULL when it must not follow
 * it (nofollow, javascript:, mailto:). Returns 0 to go on, nonzero to stop
 * the enumeration (which then returns that value). */
typedef int (*web_link_fn)(void *arg, const char *href, const char *rel, const char *target);

/* Enumerates the links of resource r in document order; host is the
 * authority absolute links name ("127.0.0.1:8917"). Kinds without links
 * enumerate nothing. Returns 0 or the callback's stop value. */
int web_links(const struct web_config *cfg, const struct web_route *r, const char *host,
              web_link_fn fn, void *arg);

/* ---- pages.c ---- */

/* Renders the HTML body of a link-bearing resource (web_kind_parsed kinds,
 * WEB_NOFOLLOW and WEB_BAIT, WEB_TEXT_HTML's HTML) into out. Returns 0, or
 * -1 when out ran out of memory. */
int web_render(const struct web_config *cfg, const struct web_route *r, const char *host,
               struct web_buf *out);

/* The fixed bodies. */
void web_render_text_file(const struct web_config *cfg, uint64_t id, struct web_buf *out);
extern const unsigned char web_png[];
extern const size_t web_png_len;

/* ---- hostile.c ---- */

/* Byte pos.. of /hostile/huge.html (WEB_HUGE_SIZE bytes in all). */
size_t web_huge_fill(uint64_t pos, char *buf, size_t max);
/* Byte pos.. of /hostile/endless.html, which has no end. */
size_t web_endless_fill(uint64_t pos, char *buf, size_t max);
/* The full body of /hostile/slow.html, dripped one byte at a time. */
extern const char web_slow_body[];
/* Whether an Accept-Encoding header value accepts gzip (a "gzip" or
 * "x-gzip" coding whose q is not 0). */
int web_accepts_gzip(const char *accept_encoding);
/* gzip-compresses in into out. Returns 0, or -1 on failure. */
int web_gzip(const char *in, size_t len, struct web_buf *out);

/* ---- truth.c ---- */

/* Whether the crawler's guards let it fetch canonical path under the
 * absolute-URL prefix of prefix_len bytes. */
int web_guard_ok(const char *path, size_t prefix_len);

/* Walks the web from "/" as a correct crawler does and writes the sorted
 * canonical URLs ("http://HOST:PORT/path", HOST cfg->host or 127.0.0.1)
 * one a line to out. robots.txt never changes the walk: the truth is the
 * link graph. With edges, writes that graph instead: for each URL of the
 * truth, each URL of the truth it leads to, "link FROM TO" (a link, a
 * sitemap's entry, robots.txt's Sitemap line) or "redirect FROM TO", once
 * each, sorted. Returns the count of lines, or -1 on allocation or output
 * failure. */
long web_truth(const struct web_config *cfg, FILE *out, int edges);

/* ---- robots.c ---- */

/* Parses a --robots argument ("allow", "file:PATH", "404", "500", "hang",
 * "redirect") into cfg->robots; for file:PATH reads the file, at most
 * WEB_ROBOTS_MAX bytes, into a buffer cfg->robots_body the caller frees
 * with web_robots_free(). On failure returns -1 and writes a sentence to
 * err; cfg is then unchanged. */
int web_robots_parse(const char *arg, struct web_config *cfg, char *err, size_t errlen);
void web_robots_free(struct web_config *cfg);

/* The body of the "allow" file, also served at /robots-moved.txt. */
extern const char web_robots_allow[];

/* Renders /robots.txt in the allow mode for a client that asked for host:
 * web_robots_allow, then with cfg->sitemap "Sitemap: http://HOST/sitemap.xml". */
void web_robots_render_allow(const struct web_config *cfg, const char *host, struct web_buf *out);

/* ---- sitemap.c ---- */

/* Checks that cfg allows --sitemap: the allow robots mode (the only one
 * whose body can name the sitemap) and at most WEB_SITEMAP_MAX_PAGES
 * pages. Returns 0, or -1 with a sentence in err. */
int web_sitemap_check(const struct web_config *cfg, char *err, size_t errlen);

/* Enumerates the entries of sitemap r (web_kind_sitemap) in file order,
 * as web_links() does links: href is the location as the file holds it
 * before XML escaping (an absolute URL naming host), target its canonical
 * path, or NULL for a location on another host. Returns 0 or the
 * callback's stop value. */
int web_sitemap_entries(const struct web_config *cfg, const struct web_route *r, const char *host,
                        web_link_fn fn, void *arg);

/* Renders the body of sitemap r into out (gzip-compressed for
 * WEB_SITEMAP_GZ) and sets *type to its Content-Type. Returns 0, or -1
 * when out ran out of memory or compression failed. */
int web_sitemap_render(const struct web_config *cfg, const struct web_route *r, const char *host,
                       struct web_buf *out, const char **type);

/* ---- log.c ---- */

/* CLOCK_MONOTONIC in microseconds. */
uint64_t web_now_us(void);

/* Appends "START END STATUS TARGET\n" to fd with one write(2), so lines
 * from concurrent threads never interleave in an O_APPEND file. Bytes of
 * target that are not visible ASCII are written %XX, so a line is always
 * four space-separated fields. Returns 0, or -1 when the write failed or
 * was short. */
int web_log_request(int fd, uint64_t start_us, uint64_t end_us, unsigned status,
                    const char *target);

/* ---- server.c ---- */

struct web_server;

/* Starts serving cfg on addr:cfg->port (port 0: the kernel picks one).
 * addr must be a loopback address: an IPv4 address in 127.0.0.0/8 or
 * "localhost". With cfg->access_log, opens that file for appending (it is
 * created if missing). On failure returns -1 and writes a sentence to
 * err. cfg's strings must outlive the server. */
int web_server_start(const struct web_config *cfg, const char *addr, struct web_server **out,
                     char *err, size_t errlen);
/* The port the server listens on. */
unsigned web_server_port(const struct web_server *s);
/* Requests answered so far. */
unsigned long long web_server_requests(const struct web_server *s);
/* Requests for /robots.txt so far (not counting /robots-moved.txt). */
unsigned long long web_server_robots_requests(const struct web_server *s);
/* Ends running responses (endless, slow), stops and frees the server. */
void web_server_stop(struct web_server *s);

#endif
