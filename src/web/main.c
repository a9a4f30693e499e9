/* main.c - sieve-web: a synthetic, deterministic web on a loopback port.
 *
 * Used by the crawler's integration tests, the offline demo (a crawl of
 * seeds/local.txt) and benchmarks. Two modes:
 *
 *   sieve-web [--port N] ...      serve until SIGINT or SIGTERM, exit 0
 *   sieve-web --truth --port N    print the ground truth and exit
 *   sieve-web --edges --port N    print how its URLs lead to each other
 *
 * The URL space (N = --pages, IDs in [0, N)):
 *   /                     links /p/0.html, /loop/a, /loop/b, /hostile/
 *   /p/ID.html            5-20 links to pages (always ID+1, the last page
 *                         to 0) in varied spellings, and with probability
 *                         1/3 each: /files/ID.txt, /files/ID.png,
 *                         /missing/ID.html (404), /r/J, /r2/J (with /r/J),
 *                         rel=nofollow /nofollow/ID.html, javascript:,
 *                         mailto:
 *   /r/J                  301 to http://HOST/p/J.html
 *   /r2/J                 302 to /r/J
 *   /loop/a, /loop/b      301 to each other ("b", "a": relative)
 *   /nofollow/ID.html     reached only through nofollow links
 *   /robots.txt           allows everything, or what --robots says; never
 *                         part of the truth, which stays the link graph;
 *                         with --sitemap it adds
 *                         "Sitemap: http://HOST/sitemap.xml"
 *   /robots-moved.txt     allows everything; only with --robots redirect
 * and with --sitemap (not the default), all absolute URLs on HOST:
 *   /sitemap.xml          <sitemapindex> of the three files below
 *   /sitemaps/pages-1.xml    <urlset> (application/xml): /nofollow/ID.html
 *                            for the first third of the IDs, plus
 *                            http://elsewhere.invalid/p/0.html (another
 *                            host) and /p/0.html?from=sitemap&amp;x=1
 *   /sitemaps/pages-2.xml.gz the second third, a <urlset> gzipped as a
 *                            file (application/gzip, no Content-Encoding)
 *   /sitemaps/pages-3.txt    the last third, one URL a line (text/plain)
 * and with --hostile (the default), linked from /hostile/:
 *   /cal/2026/11/         month pages linking "YYYY/MM/" relative for the
 *                         next and previous month: the path grows two
 *                         segments a step; the segment guard keeps 8 steps
 *                         (2^9 - 1 = 511 pages)
 *   /trap/a/              links "a/": the repeat guard keeps /trap/a/a/
 *   /deep/1               links /deep/1/2, ...: the segment guard keeps
 *                         /deep/1/.../19
 *   /long/SEG1            adds a 300-byte segment a step: the length guard
 *                         keeps 6 steps
 *   /hostile/many.html    100,000 links cycling over min(N, 100000) leaves
 *                         /many/ID.html
 *   malformed.html, bad-utf8.html (links only to / and /p/0.html),
 *   endless.html (never ends), slow.html (one byte per --drip-ms),
 *   huge.html (20 MiB), gzip.html (gzip when accepted; the only link to
 *   gzip-target.html), html-as-text.txt (HTML served as text/plain: its
 *   link to bait.html must not be followed), error.html (500).
 *
 * The truth (truth.c has the exact rules): every URL the crawler requests
 * starting from "/", canonical, sorted bytewise, one a line. With
 * --sitemap the crawler also starts from the sitemap robots.txt names, so
 * the truth adds /sitemap.xml, the three files, the locations they list on
 * this host (every /nofollow/ID.html and /p/0.html?from=sitemap&x=1) and
 * whatever links reach from those; robots.txt itself stays out.
 *
 * For the crawler's politeness tests: --robots makes /robots.txt missing,
 * failing, hanging, moved or any file; --access-log records when each
 * request arrived and ended (log.c); --delay-ms slows every HTML page; and
 * instances on 127.0.0.1, 127.0.0.2, ... are distinct hosts, since every
 * absolute link names the Host the client asked for. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "web.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: sieve-web [OPTIONS]\n"
            "\n"
            "Serves a deterministic synthetic web on a loopback address until SIGINT or\n"
            "SIGTERM, or with --truth prints the URLs a correct crawler fetches from /.\n"
            "\n"
            "  --port N        port to listen on, 0 picks a free one (default %d)\n"
            "  --host ADDR     loopback address to bind (default 127.0.0.1)\n"
            "  --pages N       pages /p/0.html .. /p/(N-1).html (default %d)\n"
            "  --seed S        graph seed (default 1)\n"
            "  --port-file F   write the listening port to F once listening\n"
            "  --hostile       serve and link the hostile pages (default)\n"
            "  --no-hostile    leave them out of the web and of the truth\n"
            "  --drip-ms N     delay between two bytes of /hostile/slow.html (default 1000)\n"
            "  --delay-ms N    wait N ms (0..60000) before answering each HTML page the\n"
            "                  crawler parses (/, /p/, /hostile/ pages...) (default 0)\n"
            "  --robots MODE   how /robots.txt answers (default allow):\n"
            "                    allow       200, a file that allows everything\n"
            "                    file:PATH   200, the bytes of PATH (read at startup,\n"
            "                                at most 1 MiB), as text/plain\n"
            "                    404, 500    that status and a short body\n"
            "                    hang        no byte at all; the connection is held\n"
            "                                until the client leaves or the server stops\n"
            "                    redirect    301 to /robots-moved.txt, which allows all\n"
            "  --access-log F  append one line per request to F when its response ends:\n"
            "                  START_US END_US STATUS TARGET (CLOCK_MONOTONIC us at\n"
            "                  arrival and at the end; STATUS 0 if none was sent)\n"
            "  --sitemap       robots.txt names http://HOST/sitemap.xml, an index of\n"
            "                  /sitemaps/pages-1.xml, pages-2.xml.gz (gzip as a file) and\n"
            "                  pages-3.txt, which list every /nofollow/ID.html page, a page\n"
            "                  on another host and /p/0.html?from=sitemap&x=1. Needs\n"
            "                  --robots allow and --pages at most %u\n"
            "  --truth         print the ground truth for --host and --port (non-zero) and\n"
            "                  exit. The truth is the link graph whatever --robots says:\n"
            "                  subtract the URLs a disallowing robots.txt forbids yourself.\n"
            "                  With --sitemap it also holds /sitemap.xml, the three files,\n"
            "                  the URLs they list on this host and what links reach from\n"
            "                  those (robots.txt never)\n"
            "  --edges         as --truth, but print how the truth's URLs lead to each\n"
            "                  other: \"link FROM TO\" for a link (or a sitemap's entry, or\n"
            "                  robots.txt's Sitemap line), \"redirect FROM TO\", once each\n"
            "  --gzip          send every rendered page, text file and robots.txt with\n"
            "                  Content-Encoding: gzip to a client that accepts it (the\n"
            "                  web and its truth stay the same)\n"
            "  --help          show this help\n",
            WEB_DEFAULT_PORT, WEB_DEFAULT_PAGES, WEB_SITEMAP_MAX_PAGES);
}

static int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    char *end;
    errno = 0;
    if (*s < '0' || *s > '9')
        return -1;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

/* Writes the port to path atomically (temp file + rename), so a reader
 * polling for the file never sees a partial number. */
static int write_port_file(const char *path, unsigned port)
{
    size_t n = strlen(path) + 8;
    char *tmp = malloc(n);
    if (!tmp)
        return -1;
    snprintf(tmp, n, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    int rc = -1;
    if (f) {
        int ok = fprintf(f, "%u\n", port) > 0;
        if (fclose(f) == 0 && ok && rename(tmp, path) == 0)
            rc = 0;
        else
            remove(tmp);
    }
    free(tmp);
    return rc;
}

static int serve(const struct web_config *cfg, const char *host, const char *port_file)
{
    /* Block the stop signals before any thread exists, so every server
     * thread inherits the mask and only sigwait() below receives them. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);

    struct web_server *s;
    char err[256];
    if (web_server_start(cfg, host, &s, err, sizeof err) != 0) {
        fprintf(stderr, "sieve-web: %s\n", err);
        return 1;
    }
    unsigned port = web_server_port(s);
    if (port_file && write_port_file(port_file, port) != 0) {
        fprintf(stderr, "sieve-web: cannot write %s: %s\n", port_file, strerror(errno));
        web_server_stop(s);
        return 1;
    }
    fprintf(stderr, "sieve-web: serving %llu pages%s on http://%s:%u/\n",
            (unsigned long long)cfg->pages, cfg->hostile ? " and the hostile pages" : "", host,
            port);
    int sig = 0;
    while (sigwait(&stop, &sig) != 0)
        ;
    unsigned long long requests = web_server_requests(s);
    unsigned long long robots = web_server_robots_requests(s);
    web_server_stop(s);
    fprintf(stderr, "sieve-web: signal %d, stopped after %llu requests (%llu for /robots.txt)\n",
            sig, requests, robots);
    return 0;
}

int main(int argc, char **argv)
{
    enum {
        OPT_PORT = 256,
        OPT_HOST,
        OPT_PAGES,
        OPT_SEED,
        OPT_PORT_FILE,
        OPT_TRUTH,
        OPT_EDGES,
        OPT_HOSTILE,
        OPT_NO_HOSTILE,
        OPT_DRIP,
        OPT_DELAY,
        OPT_ROBOTS,
        OPT_ACCESS_LOG,
        OPT_SITEMAP,
        OPT_GZIP,
        OPT_HELP
    };
    static const struct option opts[] = {
        {"port", required_argument, NULL, OPT_PORT},
        {"host", required_argument, NULL, OPT_HOST},
        {"pages", required_argument, NULL, OPT_PAGES},
        {"seed", required_argument, NULL, OPT_SEED},
        {"port-file", required_argument, NULL, OPT_PORT_FILE},
        {"truth", no_argument, NULL, OPT_TRUTH},
        {"edges", no_argument, NULL, OPT_EDGES},
        {"hostile", no_argument, NULL, OPT_HOSTILE},
        {"no-hostile", no_argument, NULL, OPT_NO_HOSTILE},
        {"drip-ms", required_argument, NULL, OPT_DRIP},
        {"delay-ms", required_argument, NULL, OPT_DELAY},
        {"robots", required_argument, NULL, OPT_ROBOTS},
        {"access-log", required_argument, NULL, OPT_ACCESS_LOG},
        {"sitemap", no_argument, NULL, OPT_SITEMAP},
        {"gzip", no_argument, NULL, OPT_GZIP},
        {"help", no_argument, NULL, OPT_HELP},
        {NULL, 0, NULL, 0},
    };
    struct web_config cfg = {.pages = WEB_DEFAULT_PAGES,
                             .seed = 1,
                             .port = WEB_DEFAULT_PORT,
                             .hostile = 1,
                             .drip_ms = 1000};
    const char *host = "127.0.0.1", *port_file = NULL;
    int truth = 0, edges = 0, c, rc = 2;
    uint64_t v;
    char err[512];
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        const char *bad = NULL;
        switch (c) {
        case OPT_PORT:
            if (parse_u64(optarg, 0, 65535, &v) == 0)
                cfg.port = (unsigned)v;
            else
                bad = "--port wants 0..65535";
            break;
        case OPT_HOST:
            host = optarg;
            break;
        case OPT_PAGES:
            if (parse_u64(optarg, 1, WEB_MAX_PAGES, &cfg.pages) != 0)
                bad = "--pages wants 1..1000000000";
            break;
        case OPT_SEED:
            if (parse_u64(optarg, 0, UINT64_MAX, &cfg.seed) != 0)
                bad = "--seed wants an unsigned 64-bit number";
            break;
        case OPT_PORT_FILE:
            port_file = optarg;
            break;
        case OPT_EDGES:
            edges = truth = 1;
            break;
        case OPT_TRUTH:
            truth = 1;
            break;
        case OPT_HOSTILE:
            cfg.hostile = 1;
            break;
        case OPT_NO_HOSTILE:
            cfg.hostile = 0;
            break;
        case OPT_DRIP:
            if (parse_u64(optarg, 0, 60000, &v) == 0)
                cfg.drip_ms = (unsigned)v;
            else
                bad = "--drip-ms wants 0..60000";
            break;
        case OPT_DELAY:
            if (parse_u64(optarg, 0, WEB_MAX_DELAY_MS, &v) == 0)
                cfg.delay_ms = (unsigned)v;
            else
                bad = "--delay-ms wants 0..60000";
            break;
        case OPT_ROBOTS:
            if (web_robots_parse(optarg, &cfg, err, sizeof err) != 0) {
                fprintf(stderr, "sieve-web: %s\n", err);
                goto done;
            }
            break;
        case OPT_ACCESS_LOG:
            cfg.access_log = optarg;
            break;
        case OPT_SITEMAP:
            cfg.sitemap = 1;
            break;
        case OPT_GZIP:
            cfg.gzip = 1;
            break;
        case OPT_HELP:
            usage(stdout);
            rc = 0;
            goto done;
        default:
            usage(stderr);
            goto done;
        }
        if (bad) {
            fprintf(stderr, "sieve-web: %s, not '%s'\n", bad, optarg);
            goto done;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "sieve-web: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        goto done;
    }
    /* Checked once all options are in, so their order does not matter. */
    if (web_sitemap_check(&cfg, err, sizeof err) != 0) {
        fprintf(stderr, "sieve-web: %s\n", err);
        goto done;
    }
    cfg.host = host;
    if (truth) {
        if (cfg.port == 0) {
            fprintf(stderr, "sieve-web: --truth needs the crawl's port (--port N, N > 0)\n");
            goto done;
        }
        rc = 0;
        if (web_truth(&cfg, stdout, edges) < 0) {
            fprintf(stderr, "sieve-web: cannot write the truth: %s\n", strerror(errno));
            rc = 1;
        }
        goto done;
    }
    rc = serve(&cfg, host, port_file);
done:
    web_robots_free(&cfg);
    return rc;
}
