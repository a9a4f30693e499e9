/* crawl-options.c - the command line of `sieve crawl`.
 *
 * Every number is range-checked and every error names the option, so a
 * typo never starts a crawl with a setting nobody asked for. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crawl-options.h"

static const char usage_text[] =
    "usage: sieve crawl [OPTIONS] SEEDFILE|URL...\n"
    "\n"
    "Crawls from the seeds (files of one URL a line, or URLs) and writes one JSON\n"
    "line per fetched URL.\n"
    "\n"
    "Fetching:\n"
    "  -w, --workers N            worker threads (default: number of cores)\n"
    "  -c, --concurrency N        transfers per worker (default 32)\n"
    "      --max-redirects N      redirect hops followed (default 10)\n"
    "Politeness:\n"
    "      --host-connections K   a host's requests in flight at once (default 2);\n"
    "                             0 turns per-host scheduling off (one FIFO)\n"
    "      --delay S              seconds between two requests to a host (default 1;\n"
    "                             0 for a web of your own)\n"
    "      --max-crawl-delay S    cap on a robots.txt Crawl-delay (default 30)\n"
    "      --ignore-robots        do not fetch or obey robots.txt (nor read sitemaps)\n"
    "      --robots-expiry S      seconds a robots.txt stays valid (default 86400)\n"
    "      --no-sitemaps          do not seed hosts from their robots.txt Sitemap lines\n"
    "      --max-sitemaps N       sitemap files queued in the crawl (default 10000)\n"
    "      --connect-timeout S    seconds to connect (default 10)\n"
    "      --timeout S            seconds for a whole transfer (default 60)\n"
    "      --low-speed BYTES,S    abort below BYTES/s for S seconds (default 100,15)\n"
    "      --max-page-bytes N     byte limit per page, decompressed (default 10485760)\n"
    "      --user-agent STRING    User-Agent header\n"
    "Links and scope:\n"
    "      --follow-nofollow      follow rel=\"nofollow\" links too\n"
    "      --scope host|domain|any  stay on the seeds' hosts (default), their\n"
    "                             registrable domains, or go anywhere\n"
    "      --allow REGEX          follow only URLs matching one of these (repeatable)\n"
    "      --deny REGEX           never follow URLs matching (repeatable)\n"
    "      --max-depth N          links followed from a seed (default: no limit)\n"
    "      --max-pages N          stop after N fetches (default: no limit)\n"
    "      --max-pages-per-host N queue at most N URLs per host\n"
    "      --strip-param NAME     drop this query parameter ('*' wildcards; repeatable)\n"
    "      --sort-query           sort query parameters\n"
    "      --max-url-len N        trap guard: longest URL (default 2048)\n"
    "      --max-segments N       trap guard: most path segments (default 20)\n"
    "      --max-repeat N         trap guard: most equal segments in a row (default 2)\n"
    "Frontier:\n"
    "      --seen bloom|exact     seen-set (default bloom)\n"
    "      --capacity N           URLs the seen-set is sized for (default 1000000)\n"
    "      --fp-rate P            Bloom false-positive rate (default 0.0001)\n"
    "      --on-overflow warn|grow  past capacity: warn, or add a Bloom layer\n"
    "Output:\n"
    "  -o, --output FILE          JSON Lines to FILE instead of stdout\n"
    "  -q, --quiet                no status line\n"
    "  -h, --help                 this text\n";

void crawl_usage(FILE *out)
{
    fputs(usage_text, out);
}

enum {
    OPT_MAX_REDIRECTS = 256,
    OPT_CONNECT_TIMEOUT,
    OPT_TIMEOUT,
    OPT_LOW_SPEED,
    OPT_MAX_PAGE_BYTES,
    OPT_USER_AGENT,
    OPT_FOLLOW_NOFOLLOW,
    OPT_SCOPE,
    OPT_ALLOW,
    OPT_DENY,
    OPT_MAX_DEPTH,
    OPT_MAX_PAGES,
    OPT_MAX_PAGES_PER_HOST,
    OPT_STRIP_PARAM,
    OPT_SORT_QUERY,
    OPT_MAX_URL_LEN,
    OPT_MAX_SEGMENTS,
    OPT_MAX_REPEAT,
    OPT_SEEN,
    OPT_CAPACITY,
    OPT_FP_RATE,
    OPT_ON_OVERFLOW,
    OPT_HOST_CONNECTIONS,
    OPT_DELAY,
    OPT_MAX_CRAWL_DELAY,
    OPT_IGNORE_ROBOTS,
    OPT_ROBOTS_EXPIRY,
    OPT_NO_SITEMAPS,
    OPT_MAX_SITEMAPS,
};

static const struct option long_opts[] = {
    {"workers", required_argument, NULL, 'w'},
    {"concurrency", required_argument, NULL, 'c'},
    {"max-redirects", required_argument, NULL, OPT_MAX_REDIRECTS},
    {"host-connections", required_argument, NULL, OPT_HOST_CONNECTIONS},
    {"delay", required_argument, NULL, OPT_DELAY},
    {"max-crawl-delay", required_argument, NULL, OPT_MAX_CRAWL_DELAY},
    {"ignore-robots", no_argument, NULL, OPT_IGNORE_ROBOTS},
    {"robots-expiry", required_argument, NULL, OPT_ROBOTS_EXPIRY},
    {"no-sitemaps", no_argument, NULL, OPT_NO_SITEMAPS},
    {"max-sitemaps", required_argument, NULL, OPT_MAX_SITEMAPS},
    {"connect-timeout", required_argument, NULL, OPT_CONNECT_TIMEOUT},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"low-speed", required_argument, NULL, OPT_LOW_SPEED},
    {"max-page-bytes", required_argument, NULL, OPT_MAX_PAGE_BYTES},
    {"user-agent", required_argument, NULL, OPT_USER_AGENT},
    {"follow-nofollow", no_argument, NULL, OPT_FOLLOW_NOFOLLOW},
    {"scope", required_argument, NULL, OPT_SCOPE},
    {"allow", required_argument, NULL, OPT_ALLOW},
    {"deny", required_argument, NULL, OPT_DENY},
    {"max-depth", required_argument, NULL, OPT_MAX_DEPTH},
    {"max-pages", required_argument, NULL, OPT_MAX_PAGES},
    {"max-pages-per-host", required_argument, NULL, OPT_MAX_PAGES_PER_HOST},
    {"strip-param", required_argument, NULL, OPT_STRIP_PARAM},
    {"sort-query", no_argument, NULL, OPT_SORT_QUERY},
    {"max-url-len", required_argument, NULL, OPT_MAX_URL_LEN},
    {"max-segments", required_argument, NULL, OPT_MAX_SEGMENTS},
    {"max-repeat", required_argument, NULL, OPT_MAX_REPEAT},
    {"seen", required_argument, NULL, OPT_SEEN},
    {"capacity", required_argument, NULL, OPT_CAPACITY},
    {"fp-rate", required_argument, NULL, OPT_FP_RATE},
    {"on-overflow", required_argument, NULL, OPT_ON_OVERFLOW},
    {"output", required_argument, NULL, 'o'},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* Parses a whole number in [lo, hi], accepting 1e6-style exponents. */
static int parse_u64(const char *opt, const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    char *end;
    errno = 0;
    double d = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !(d >= (double)lo) || !(d <= (double)hi) ||
        d != floor(d)) {
        fprintf(stderr, "sieve crawl: --%s: '%s' is not a whole number from %llu to %llu\n", opt, s,
                (unsigned long long)lo, (unsigned long long)hi);
        return -1;
    }
    *out = (uint64_t)d;
    return 0;
}

static int parse_seconds(const char *opt, const char *s, long *ms)
{
    char *end;
    errno = 0;
    double d = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !(d > 0) || d > 86400) {
        fprintf(stderr, "sieve crawl: --%s: '%s' is not a number of seconds in (0, 86400]\n", opt,
                s);
        return -1;
    }
    *ms = (long)ceil(d * 1000);
    return 0;
}

/* Seconds from 0 (allowed: a web of one's own) to a day. */
static int parse_delay(const char *opt, const char *s, double *out)
{
    char *end;
    errno = 0;
    double d = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !(d >= 0) || d > 86400) {
        fprintf(stderr, "sieve crawl: --%s: '%s' is not a number of seconds in [0, 86400]\n", opt,
                s);
        return -1;
    }
    *out = d;
    return 0;
}

static int push_str(const char ***list, unsigned *n, const char *s)
{
    const char **grown = realloc(*list, (*n + 1) * sizeof **list);
    if (grown == NULL)
        return -1;
    grown[(*n)++] = s;
    *list = grown;
    return 0;
}

static int pick(const char *opt, const char *s, const char *const *names, int n, int *out)
{
    for (int i = 0; i < n; i++) {
        if (strcmp(s, names[i]) == 0) {
            *out = i;
            return 0;
        }
    }
    fprintf(stderr, "sieve crawl: --%s: '%s' is not one of:", opt, s);
    for (int i = 0; i < n; i++)
        fprintf(stderr, " %s", names[i]);
    fputc('\n', stderr);
    return -1;
}

void crawl_opts_init(crawl_opts *o)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    *o = (crawl_opts){
        .workers = cores > 0 && cores < 256 ? (unsigned)cores : 1,
        .concurrency = 32,
        .max_redirects = 10,
        .host_connections = 2,
        .delay_s = 1.0,
        .max_crawl_delay_s = 30.0,
        .robots_expiry_s = 86400.0,
        .sitemaps = true,
        .max_sitemaps = 10000,
        .connect_timeout_ms = 10000,
        .timeout_ms = 60000,
        .low_speed_bytes = 100,
        .low_speed_time_s = 15,
        .max_page_bytes = 10u * 1024 * 1024,
        .user_agent = "sieve/" SIEVE_VERSION_STRING " (web crawler)",
        .scope = SCOPE_HOST,
        .max_depth = -1,
        .max_url_len = 2048,
        .max_segments = 20,
        .max_repeat = 2,
    };
    sieve_seen_config_init(&o->seen);
    o->seen.fp_rate = 1e-4;
}

void crawl_opts_free(crawl_opts *o)
{
    free(o->allow);
    free(o->deny);
    free(o->strip_params);
}

static int parse_low_speed(const char *s, crawl_opts *o)
{
    char *end;
    errno = 0;
    long bytes = strtol(s, &end, 10);
    if (errno == 0 && end != s && *end == ',' && bytes >= 1) {
        const char *t = end + 1;
        long secs = strtol(t, &end, 10);
        if (errno == 0 && end != t && *end == '\0' && secs >= 1 && secs <= 86400) {
            o->low_speed_bytes = bytes;
            o->low_speed_time_s = secs;
            return 0;
        }
    }
    fprintf(stderr, "sieve crawl: --low-speed: '%s' is not BYTES,SECONDS\n", s);
    return -1;
}

/* One option; returns 0, 1 for --help, or -1 for an error already told. */
static int apply(int c, const char *arg, crawl_opts *o)
{
    static const char *const scopes[] = {"host", "domain", "any"};
    static const char *const seens[] = {"bloom", "exact"};
    static const char *const overflows[] = {"warn", "grow"};
    uint64_t v;
    int i;
    switch (c) {
    case 'w':
        return parse_u64("workers", arg, 1, 256, &v) ? -1 : (o->workers = (unsigned)v, 0);
    case 'c':
        return parse_u64("concurrency", arg, 1, 10000, &v) ? -1 : (o->concurrency = (unsigned)v, 0);
    case OPT_MAX_REDIRECTS:
        return parse_u64("max-redirects", arg, 0, 255, &v) ? -1
                                                           : (o->max_redirects = (unsigned)v, 0);
    case OPT_CONNECT_TIMEOUT:
        return parse_seconds("connect-timeout", arg, &o->connect_timeout_ms);
    case OPT_HOST_CONNECTIONS:
        return parse_u64("host-connections", arg, 0, 10000, &v)
                   ? -1
                   : (o->host_connections = (unsigned)v, 0);
    case OPT_DELAY:
        return parse_delay("delay", arg, &o->delay_s);
    case OPT_MAX_CRAWL_DELAY:
        return parse_delay("max-crawl-delay", arg, &o->max_crawl_delay_s);
    case OPT_IGNORE_ROBOTS:
        o->ignore_robots = true;
        return 0;
    case OPT_NO_SITEMAPS:
        o->sitemaps = false;
        return 0;
    case OPT_MAX_SITEMAPS:
        return parse_u64("max-sitemaps", arg, 0, UINT64_MAX / 2, &o->max_sitemaps);
    case OPT_ROBOTS_EXPIRY:
        return parse_delay("robots-expiry", arg, &o->robots_expiry_s);
    case OPT_TIMEOUT:
        return parse_seconds("timeout", arg, &o->timeout_ms);
    case OPT_LOW_SPEED:
        return parse_low_speed(arg, o);
    case OPT_MAX_PAGE_BYTES:
        return parse_u64("max-page-bytes", arg, 1, UINT64_C(1) << 40, &o->max_page_bytes);
    case OPT_USER_AGENT:
        o->user_agent = arg;
        return 0;
    case OPT_FOLLOW_NOFOLLOW:
        o->follow_nofollow = true;
        return 0;
    case OPT_SCOPE:
        return pick("scope", arg, scopes, 3, &i) ? -1 : (o->scope = (scope_kind)i, 0);
    case OPT_ALLOW:
        return push_str(&o->allow, &o->n_allow, arg);
    case OPT_DENY:
        return push_str(&o->deny, &o->n_deny, arg);
    case OPT_MAX_DEPTH:
        return parse_u64("max-depth", arg, 0, CRAWL_DEPTH_MASK - 1, &v)
                   ? -1
                   : (o->max_depth = (long)v, 0);
    case OPT_MAX_PAGES:
        return parse_u64("max-pages", arg, 1, UINT64_MAX / 2, &o->max_pages);
    case OPT_MAX_PAGES_PER_HOST:
        return parse_u64("max-pages-per-host", arg, 1, UINT64_MAX / 2, &o->max_pages_per_host);
    case OPT_STRIP_PARAM:
        return push_str(&o->strip_params, &o->n_strip_params, arg);
    case OPT_SORT_QUERY:
        o->sort_query = true;
        return 0;
    case OPT_MAX_URL_LEN:
        return parse_u64("max-url-len", arg, 16, CRAWL_URL_MAX, &v) ? -1 : (o->max_url_len = v, 0);
    case OPT_MAX_SEGMENTS:
        return parse_u64("max-segments", arg, 0, 100000, &v) ? -1
                                                             : (o->max_segments = (unsigned)v, 0);
    case OPT_MAX_REPEAT:
        return parse_u64("max-repeat", arg, 0, 100000, &v) ? -1 : (o->max_repeat = (unsigned)v, 0);
    case OPT_SEEN:
        return pick("seen", arg, seens, 2, &i) ? -1 : (o->seen.kind = (sieve_seen_kind)i, 0);
    case OPT_CAPACITY:
        return parse_u64("capacity", arg, 1, UINT64_C(1) << 40, &o->seen.capacity);
    case OPT_FP_RATE: {
        char *end;
        double p = strtod(arg, &end);
        if (end == arg || *end != '\0' || !(p > 0 && p < 1)) {
            fprintf(stderr, "sieve crawl: --fp-rate: '%s' is not a rate in (0, 1)\n", arg);
            return -1;
        }
        o->seen.fp_rate = p;
        return 0;
    }
    case OPT_ON_OVERFLOW:
        return pick("on-overflow", arg, overflows, 2, &i)
                   ? -1
                   : (o->seen.overflow = (sieve_overflow)i, 0);
    case 'o':
        o->output = arg;
        return 0;
    case 'q':
        o->quiet = true;
        return 0;
    case 'h':
        return 1;
    default:
        return -1;
    }
}

int crawl_opts_parse(crawl_opts *o, int argc, char **argv)
{
    optind = 1;
    opterr = 1;
    int c;
    while ((c = getopt_long(argc, argv, "w:c:o:qh", long_opts, NULL)) != -1) {
        int rc = apply(c, optarg, o);
        if (rc == 1) {
            crawl_usage(stdout);
            return 1;
        }
        if (rc < 0) {
            fprintf(stderr, "Try 'sieve crawl --help'.\n");
            return -1;
        }
    }
    o->seeds = (const char **)(argv + optind);
    o->n_seeds = (unsigned)(argc - optind);
    if (o->n_seeds == 0) {
        fprintf(stderr, "sieve crawl: no seed file or URL given\nTry 'sieve crawl --help'.\n");
        return -1;
    }
    return 0;
}
