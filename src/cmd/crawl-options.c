/* crawl-options.c - the option table of `sieve crawl`.
 *
 * Each row maps an option onto a field of crawl_cli, most of them onto the
 * engine's sieve_crawl_options. Ranges are checked here, so that a typo
 * gets an error naming its option instead of a complaint from the engine
 * or a crawl with a setting nobody asked for. */
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crawl-options.h"
#include "sieve/frontier.h"
#include "sieve/warc.h"

#define DAY_S 86400.0

/* ---- checks and parsers of single options ----------------------------- */

static const char *check_regex(const char *arg, char *why, size_t cap)
{
    regex_t re;
    int rc = regcomp(&re, arg, REG_EXTENDED | REG_NOSUB);
    if (rc == 0) {
        regfree(&re);
        return NULL;
    }
    char msg[256];
    regerror(rc, &re, msg, sizeof msg);
    snprintf(why, cap, "'%s' is not a regular expression: %s", arg, msg);
    return why;
}

/* RFC 9110 token characters, for a header's name. */
static bool is_tchar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static const char *check_header(const char *arg, char *why, size_t cap)
{
    size_t n = 0;
    while (is_tchar((unsigned char)arg[n]))
        n++;
    if (n == 0 || arg[n] != ':') {
        snprintf(why, cap, "'%s' is not 'Name: value'", arg);
        return why;
    }
    return NULL;
}

static const char *check_user(const char *arg, char *why, size_t cap)
{
    if (strchr(arg, ':') == NULL || arg[0] == ':') {
        snprintf(why, cap, "'%s' is not USER:PASSWORD", arg);
        return why;
    }
    return NULL;
}

static const char *check_nonempty(const char *arg, char *why, size_t cap)
{
    (void)why, (void)cap;
    return arg[0] == '\0' ? "the value is empty" : NULL;
}

static const char *check_readable(const char *arg, char *why, size_t cap)
{
    if (access(arg, R_OK) != 0) {
        snprintf(why, cap, "%s: %s", arg, strerror(errno));
        return why;
    }
    return NULL;
}

/* A suffix (.pdf) or a content type (image/png), whose subtype may be a star. */
static const char *check_accept(const char *arg, char *why, size_t cap)
{
    const char *slash = strchr(arg, '/');
    bool suffix = arg[0] == '.' && arg[1] != '\0' && slash == NULL;
    bool type = slash != NULL && slash != arg && slash[1] != '\0' && strchr(slash + 1, '/') == NULL;
    if (suffix || type)
        return NULL;
    snprintf(why, cap, "'%s' is neither a suffix such as .pdf nor a content type such as image/*",
             arg);
    return why;
}

static const char *parse_low_speed(void *settings, const char *arg, char *why, size_t cap)
{
    crawl_cli *o = settings;
    char *end;
    errno = 0;
    long bytes = strtol(arg, &end, 10);
    if (errno == 0 && end != arg && *end == ',' && bytes >= 1 && arg[0] != '-') {
        const char *t = end + 1;
        long secs = strtol(t, &end, 10);
        if (errno == 0 && end != t && *end == '\0' && secs >= 1 && secs <= (long)DAY_S) {
            o->eng.low_speed_bytes = bytes;
            o->eng.low_speed_time_s = secs;
            return NULL;
        }
    }
    snprintf(why, cap, "'%s' is not BYTES,SECONDS (bytes/s from 1, seconds from 1 to %.0f)", arg,
             DAY_S);
    return why;
}

static bool show_low_speed(const void *settings, char *buf, size_t cap)
{
    const crawl_cli *o = settings;
    snprintf(buf, cap, "%ld,%ld", o->eng.low_speed_bytes, o->eng.low_speed_time_s);
    return true;
}

static const char *parse_netrc_file(void *settings, const char *arg, char *why, size_t cap)
{
    crawl_cli *o = settings;
    const char *bad = check_readable(arg, why, cap);
    if (bad != NULL)
        return bad;
    o->eng.netrc_file = arg;
    o->eng.netrc = true;
    return NULL;
}

/* ---- the table -------------------------------------------------------- */

#define F(f)        .off = offsetof(crawl_cli, f), .size = sizeof(((crawl_cli *)0)->f)
#define LIST(f, n)  F(f), .count_off = offsetof(crawl_cli, n)
#define RANGE(a, b) .min = (a), .max = (b)

static const opt_choice scopes[] = {{"host", SIEVE_SCOPE_HOST},
                                    {"domain", SIEVE_SCOPE_DOMAIN},
                                    {"any", SIEVE_SCOPE_ANY},
                                    {NULL, 0}};
static const opt_choice seens[] = {
    {"bloom", SIEVE_SEEN_BLOOM}, {"exact", SIEVE_SEEN_EXACT}, {NULL, 0}};
static const opt_choice overflows[] = {
    {"warn", SIEVE_OVERFLOW_WARN}, {"grow", SIEVE_OVERFLOW_GROW}, {NULL, 0}};

static const char sec_fetching[] = "Fetching";
static const char sec_requests[] = "Requests";
static const char sec_politeness[] = "Politeness";
static const char sec_links[] = "Links and scope";
static const char sec_frontier[] = "Frontier";
static const char sec_output[] = "Output";
static const char sec_archive[] = "Archiving";

static const opt_def crawl_opts[] = {
    {"workers", 'w', OPT_COUNT, "N", F(eng.workers), RANGE(1, 256), .deflt = "one per core",
     .section = sec_fetching, .help = "worker threads"},
    {"concurrency", 'c', OPT_COUNT, "N", F(eng.concurrency), RANGE(1, 4096),
     .section = sec_fetching, .help = "transfers per worker"},
    {"max-redirects", 0, OPT_COUNT, "N", F(eng.max_redirects), RANGE(0, 255),
     .section = sec_fetching, .help = "redirect hops followed from a URL"},
    {"connect-timeout", 0, OPT_SECONDS, "S", F(eng.connect_timeout_s), RANGE(0, DAY_S),
     .flags = OPTF_MIN_OPEN, .section = sec_fetching, .help = "seconds to connect"},
    {"timeout", 0, OPT_SECONDS, "S", F(eng.timeout_s), RANGE(0, DAY_S), .flags = OPTF_MIN_OPEN,
     .section = sec_fetching, .help = "seconds for a whole transfer"},
    {"low-speed", 0, OPT_CUSTOM, "BYTES,S", .parse = parse_low_speed, .show = show_low_speed,
     .section = sec_fetching, .help = "abort a transfer slower than BYTES/s for S seconds"},
    {"max-page-bytes", 0, OPT_SIZE, "N", F(eng.max_page_bytes), RANGE(1, 1099511627776.0),
     .section = sec_fetching,
     .help = "body bytes read per page, counted after decompression; K, M, G suffixes"},
    {"dns-ttl", 0, OPT_SECONDS, "S", F(eng.dns_ttl_s), RANGE(0, DAY_S), .flags = OPTF_MIN_OPEN,
     .section = sec_fetching,
     .help = "seconds a resolved host name is used before it is looked up again"},
    {"stop-grace", 0, OPT_SECONDS, "S", F(eng.stop_grace_s), RANGE(0, DAY_S),
     .section = sec_fetching,
     .help = "after the first SIGINT or SIGTERM, seconds the transfers in flight get to finish"},

    {"retries", 0, OPT_COUNT, "N", F(eng.retries), RANGE(0, 7), .section = sec_fetching,
     .help = "tries again after a connection failure, a timeout, 429, 500, 502, 503 or 504 "
             "(robots.txt too, its host's URLs waiting)"},
    {"retry-wait", 0, OPT_SECONDS, "S", F(eng.retry_wait_s), RANGE(0, DAY_S),
     .flags = OPTF_MIN_OPEN, .section = sec_fetching,
     .help = "wait before a URL's first retry; doubled for each retry after, with jitter"},
    {"retry-max-wait", 0, OPT_SECONDS, "S", F(eng.retry_max_wait_s), RANGE(0, DAY_S),
     .flags = OPTF_MIN_OPEN, .section = sec_fetching,
     .help = "cap on every wait before a retry, a server's Retry-After included"},

    {"user-agent", 0, OPT_STRING, "STRING", F(eng.user_agent), .flags = OPTF_ONE_LINE,
     .section = sec_requests, .help = "User-Agent header"},
    {"header", 0, OPT_LIST, "'NAME: VALUE'", LIST(eng.headers, eng.n_headers),
     .flags = OPTF_ONE_LINE, .check = check_header, .section = sec_requests,
     .help = "an extra request header (repeatable)"},
    {"cookie", 0, OPT_STRING, "FILE", F(eng.cookie_file), .check = check_readable,
     .section = sec_requests, .help = "send the cookies of FILE (Netscape format)"},
    {"cookie-jar", 0, OPT_STRING, "FILE", F(eng.cookie_jar), .check = check_nonempty,
     .section = sec_requests, .help = "write the crawl's cookies to FILE at its end"},
    {"proxy", 0, OPT_STRING, "URL", F(eng.proxy), .flags = OPTF_ONE_LINE, .check = check_nonempty,
     .unset = "libcurl's proxy environment variables", .section = sec_requests,
     .help = "proxy for every request"},
    {"user", 0, OPT_STRING, "USER:PASSWORD", F(eng.user), .flags = OPTF_ONE_LINE,
     .check = check_user, .section = sec_requests,
     .help = "credentials, sent to the seeds' origins only"},
    {"netrc", 0, OPT_FLAG, NULL, F(eng.netrc), .set = true, .section = sec_requests,
     .help = "credentials per host from ~/.netrc"},
    {"netrc-file", 0, OPT_CUSTOM, "FILE", .parse = parse_netrc_file, .section = sec_requests,
     .help = "credentials per host from FILE (implies --netrc)"},

    {"host-connections", 0, OPT_COUNT, "K", F(eng.host_connections), RANGE(0, 10000),
     .section = sec_politeness,
     .help = "a host's transfers at once; 0: no per-host limit and no delay"},
    {"delay", 0, OPT_SECONDS, "S", F(eng.delay_s), RANGE(0, DAY_S), .section = sec_politeness,
     .help = "seconds between two requests to a host (0 for a web of your own)"},
    {"max-crawl-delay", 0, OPT_SECONDS, "S", F(eng.max_crawl_delay_s), RANGE(0, DAY_S),
     .section = sec_politeness, .help = "cap on a robots.txt Crawl-delay"},
    {"ignore-robots", 0, OPT_FLAG, NULL, F(eng.ignore_robots), .set = true,
     .section = sec_politeness, .help = "do not fetch or obey robots.txt (nor read sitemaps)"},
    {"robots-expiry", 0, OPT_SECONDS, "S", F(eng.robots_expiry_s), RANGE(0, DAY_S),
     .section = sec_politeness, .help = "seconds a robots.txt stays valid"},
    {"robots-memory", 0, OPT_SIZE, "SIZE", F(eng.robots_memory), RANGE(0, 1099511627776.0),
     .section = sec_politeness,
     .help = "the most memory hosts' robots.txt rules take (K, M, G suffixes); past it the "
             "hosts used least recently are dropped and asked again if they come back; "
             "0: no limit"},
    {"no-sitemaps", 0, OPT_FLAG, NULL, F(eng.sitemaps), .set = false, .section = sec_politeness,
     .help = "do not seed hosts from their robots.txt Sitemap lines"},
    {"max-sitemaps", 0, OPT_COUNT, "N", F(eng.max_sitemaps), RANGE(0, 4611686018427387904.0),
     .section = sec_politeness, .help = "sitemap files queued in the crawl"},

    {"follow-nofollow", 0, OPT_FLAG, NULL, F(eng.follow_nofollow), .set = true,
     .section = sec_links,
     .help = "follow rel=\"nofollow\" links, and the links of pages whose robots meta tag or "
             "X-Robots-Tag says nofollow, too"},
    {"allow-private", 0, OPT_FLAG, NULL, F(eng.allow_private), .set = true, .section = sec_links,
     .help = "also fetch hosts no seed names that resolve to loopback, private or link-local "
             "addresses (a web of your own over several local hosts)"},
    {"scope", 0, OPT_CHOICE, "SCOPE", F(eng.scope), .choices = scopes, .section = sec_links,
     .help = "follow links on the seeds' hosts, their registrable domains, or anywhere"},
    {"allow", 0, OPT_LIST, "REGEX", LIST(eng.allow, eng.n_allow), .check = check_regex,
     .section = sec_links, .help = "follow only URLs matching one of these (repeatable)"},
    {"deny", 0, OPT_LIST, "REGEX", LIST(eng.deny, eng.n_deny), .check = check_regex,
     .section = sec_links, .help = "never follow URLs matching this (repeatable)"},
    {"accept", 0, OPT_LIST, "LIST", LIST(eng.accept, eng.n_accept), .flags = OPTF_SPLIT,
     .check = check_accept, .section = sec_links,
     .help = "fetch only these suffixes (.pdf) and content types (image/*), comma-separated; "
             "HTML is still fetched to find links (repeatable)"},
    {"reject", 0, OPT_LIST, "LIST", LIST(eng.reject, eng.n_reject), .flags = OPTF_SPLIT,
     .check = check_accept, .section = sec_links,
     .help = "never fetch these suffixes and content types, comma-separated (repeatable)"},
    {"max-depth", 0, OPT_COUNT, "N", F(eng.max_depth), RANGE(0, 1048574), .flags = OPTF_SIGNED,
     .unset = "no limit", .section = sec_links, .help = "links followed from a seed"},
    {"max-pages", 0, OPT_COUNT, "N", F(eng.max_pages), RANGE(1, 4611686018427387904.0),
     .unset = "no limit", .section = sec_links, .help = "stop after N fetches"},
    {"max-pages-per-host", 0, OPT_COUNT, "N", F(eng.max_pages_per_host),
     RANGE(1, 4611686018427387904.0), .unset = "no limit", .section = sec_links,
     .help = "queue at most N URLs per host"},
    {"strip-param", 0, OPT_LIST, "NAME", LIST(eng.strip_params, eng.n_strip_params),
     .check = check_nonempty, .section = sec_links,
     .help = "drop this query parameter ('*' wildcards; repeatable)"},
    {"sort-query", 0, OPT_FLAG, NULL, F(eng.sort_query), .set = true, .section = sec_links,
     .help = "sort query parameters"},
    {"max-url-len", 0, OPT_COUNT, "N", F(eng.max_url_len), RANGE(16, SIEVE_URL_MAX),
     .section = sec_links, .help = "trap guard: longest URL"},
    {"max-segments", 0, OPT_COUNT, "N", F(eng.max_segments), RANGE(0, 100000), .section = sec_links,
     .help = "trap guard: most path segments"},
    {"max-repeat", 0, OPT_COUNT, "N", F(eng.max_repeat), RANGE(0, 100000), .section = sec_links,
     .help = "trap guard: most equal path segments in a row"},

    {"seen", 0, OPT_CHOICE, "KIND", F(eng.seen.kind), .choices = seens, .section = sec_frontier,
     .help = "seen-set: a Bloom filter or an exact hash set"},
    {"capacity", 0, OPT_COUNT, "N", F(eng.seen.capacity), RANGE(1, 1099511627776.0),
     .section = sec_frontier, .help = "URLs the seen-set is sized for"},
    {"fp-rate", 0, OPT_RATE, "P", F(eng.seen.fp_rate), RANGE(1e-12, 0.5), .section = sec_frontier,
     .help = "Bloom filter false-positive rate"},
    {"on-overflow", 0, OPT_CHOICE, "POLICY", F(eng.seen.overflow), .choices = overflows,
     .section = sec_frontier, .help = "past its capacity, the Bloom filter warns or adds a layer"},
    {"state", 0, OPT_STRING, "DIR", F(eng.state_dir), .check = check_nonempty,
     .section = sec_frontier,
     .help = "keep the frontier in DIR: a crawl killed at any instant resumes when run again "
             "with the same DIR (--output is then appended to)"},
    {"queue-memory", 0, OPT_SIZE, "SIZE", F(eng.queue_memory), RANGE(0, 1099511627776.0),
     .section = sec_frontier,
     .help = "the most memory queued URLs take (K, M, G suffixes); the rest wait on disk, in "
             "the --state DIR or else in a temporary directory removed at the end; 0: no limit"},
    {"checkpoint-interval", 0, OPT_SECONDS, "S", F(eng.checkpoint_interval_s), RANGE(0, DAY_S),
     .flags = OPTF_MIN_OPEN, .section = sec_frontier,
     .help = "with --state, seconds between two syncs of the state and the outputs to disk"},
    {"checkpoint-bytes", 0, OPT_SIZE, "SIZE", F(eng.checkpoint_bytes), RANGE(0, 1099511627776.0),
     .section = sec_frontier,
     .help = "with --state, a sync also writes the seen-set and the queue in memory to the "
             "state once the journal has grown SIZE since the last time, so that a resume "
             "reads less; 0: as much as that takes, at least 1M"},

    {"output", 'o', OPT_STRING, "FILE", F(output), .check = check_nonempty,
     .unset = "standard output", .section = sec_output,
     .help = "write the records to FILE ('-': standard output); SIGHUP reopens it"},
    {"no-digest", 0, OPT_FLAG, NULL, F(eng.payload_digest), .set = false, .section = sec_output,
     .help = "leave the body's SHA-1 out of the records, a twentieth of the CPU on light "
             "pages (with --warc the records take the archive's digest at no cost)"},
    {"quiet", 'q', OPT_FLAG, NULL, F(quiet), .set = true, .section = sec_output,
     .help = "no status line"},
    {"stats", 0, OPT_STRING, "FILE", F(stats_path), .check = check_nonempty, .section = sec_output,
     .help = "append the crawl's counters to FILE ('-': standard output, if the records go "
             "to a file) as one JSON object per interval and one at the end; SIGHUP reopens it"},
    {"stats-interval", 0, OPT_SECONDS, "S", F(stats_interval_s), RANGE(0.1, DAY_S),
     .section = sec_output, .help = "seconds between two --stats objects"},
    {"warc", 0, OPT_STRING, "FILE", F(warc), .check = check_nonempty, .section = sec_archive,
     .help = "write every request and response, robots.txt and redirects included, to the WARC "
             "1.1 archive FILE (one gzip member per record if it ends in .gz); replaces an "
             "archive of that name, or, when --state resumes a crawl, cuts a torn last fetch "
             "from its last file and goes on in the next numbered file"},
    {"warc-max-size", 0, OPT_SIZE, "SIZE", F(warc_max_size), RANGE(1024, 1125899906842624.0),
     .unset = "one file", .section = sec_archive,
     .help = "start a new WARC file before one would pass SIZE (K, M, G suffixes): FILE "
             "crawl.warc.gz becomes crawl-00001.warc.gz, crawl-00002.warc.gz, ..."},
    {"warc-gzip-level", 0, OPT_COUNT, "N", F(warc_gzip_level), RANGE(1, 9), .section = sec_archive,
     .help = "deflate level of a .gz archive, 1 (fastest) to 9 (smallest); the archive's own "
             "threads, one per core, compress, off the workers"},
    {"cdxj", 0, OPT_STRING, "FILE", F(cdxj), .check = check_nonempty, .section = sec_archive,
     .help = "at the end, write the CDXJ index of the WARC files to FILE, whole or not at all "
             "(`sieve warc-index` rebuilds it from the files)"},
    {"help", 'h', OPT_HELP, NULL, .section = sec_output, .help = "this text"},
};

static const opt_note crawl_notes[] = {
    {"Records",
     "Each fetched URL (or URL not fetched, with the reason in \"error\") becomes one JSON "
     "line: url, final_url, status, content_type, bytes, depth, links_found, links_new, "
     "elapsed_ms, error, time, wire_bytes, remote_ip, digest, outcome, attempts, kind, "
     "warc_file, warc_offset, referrer (the page the URL was found on), first_url (the URL "
     "first requested, for one reached through redirects) (docs/record.schema.json in the "
     "sources is their JSON Schema). "
     "A summary goes to standard error at the end."},
    {"Status line",
     "On a terminal, standard error shows elapsed time, pages, pages per second, transfers in "
     "flight, queued URLs and errors, refreshed every second, unless -q is given. It is left "
     "out when the records go to that same terminal, so that it never mixes with them."},
    {"Archiving",
     "With --warc, every request the crawl makes (pages, sitemaps, robots.txt, each redirect) "
     "is stored with its response as a pair of WARC 1.1 records linked by WARC-Concurrent-To, "
     "after a warcinfo record naming the software and the command line. The response is stored "
     "as received: status line, headers, and the body with its chunked coding removed (the "
     "Transfer-Encoding header renamed X-Archive-Orig-Transfer-Encoding) but its gzip coding "
     "kept. A body cut by --max-page-bytes, a timeout or a lost connection is marked with "
     "WARC-Truncated. Each JSON record names the WARC file and offset of its response. Records "
     "are appended whole, so a crawl that is stopped leaves a valid archive and one that is "
     "killed leaves every complete record readable; `sieve warc-index` then rebuilds the "
     "index."},
    {"Signals",
     "The first SIGINT or SIGTERM stops taking new URLs and gives the transfers in flight "
     "--stop-grace seconds to finish; a second aborts them at once. SIGHUP reopens the --output "
     "and --stats files, for log rotation: rename the file, send SIGHUP, and the lines that "
     "follow go to a new file of the old name."},
};

static const opt_exit crawl_exits[] = {
    {0, "the crawl ran to its end or to --max-pages; pages that failed are counted in the "
        "summary, they are not fatal"},
    {1, "the crawl could not start (out of memory, libcurl could not be initialized)"},
    {2, "bad arguments, or no valid seed"},
    {3, "no seed could be fetched: every seed's record has an error"},
    {4, "the records, the statistics or the cookie jar could not be written (disk full, ...), or "
        "the --state directory is locked, damaged, made with other settings, or cannot be written"},
    {130, "interrupted by SIGINT (128 + the signal number: 143 for SIGTERM)"},
};

static void init_settings(void *s)
{
    crawl_cli_init(s);
}

const opt_command crawl_command = {
    .name = "crawl",
    .operands = "SEEDFILE|URL...",
    .description =
        "Crawls from the seeds and writes one JSON line per fetched URL. An operand that "
        "contains \"://\" is a URL; any other is a seed file of one URL a line, where blank "
        "lines and lines starting with # are skipped and a bad line is reported as FILE:LINE "
        "and skipped.",
    .opts = crawl_opts,
    .n_opts = sizeof crawl_opts / sizeof *crawl_opts,
    .settings_size = sizeof(crawl_cli),
    .init = init_settings,
    .notes = crawl_notes,
    .n_notes = sizeof crawl_notes / sizeof *crawl_notes,
    .exits = crawl_exits,
    .n_exits = sizeof crawl_exits / sizeof *crawl_exits,
};

/* ---- the whole command line ------------------------------------------- */

void crawl_cli_init(crawl_cli *o)
{
    *o = (crawl_cli){.stats_interval_s = 10, .warc_gzip_level = SIEVE_WARC_GZIP_LEVEL};
    sieve_crawl_options_init(&o->eng);
}

void crawl_cli_free(crawl_cli *o, opt_parsed *p)
{
    opt_free(&crawl_command, o, p);
}

/* Refuses an output file that is one of the seed files, under any name:
 * opening it would truncate the seeds before they are read. */
static int check_not_a_seed(const char *opt, const char *path, const crawl_cli *o)
{
    struct stat out;
    if (path == NULL || stat(path, &out) != 0)
        return 0;
    for (size_t i = 0; i < o->n_seeds; i++) {
        struct stat seed;
        if (strstr(o->seeds[i], "://") != NULL || stat(o->seeds[i], &seed) != 0)
            continue;
        if (seed.st_dev == out.st_dev && seed.st_ino == out.st_ino) {
            opt_fail(&crawl_command, opt, "'%s' is the seed file '%s'", path, o->seeds[i]);
            return -1;
        }
    }
    return 0;
}

static bool same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (a == NULL || b == NULL)
        return false;
    if (strcmp(a, b) == 0)
        return true;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

/* --warc-max-size and --cdxj need --warc; the archive's files and its
 * index are none of the other outputs, and no seed file. */
static int check_archive(const crawl_cli *o, const opt_parsed *p)
{
    const char *needs[] = {"warc-max-size", "warc-gzip-level", "cdxj"};
    for (size_t i = 0; i < sizeof needs / sizeof *needs; i++) {
        if (o->warc == NULL && opt_given(&crawl_command, p, needs[i])) {
            opt_fail(&crawl_command, needs[i], "needs --warc FILE");
            return -1;
        }
    }
    if (check_not_a_seed("warc", o->warc, o) != 0 || check_not_a_seed("cdxj", o->cdxj, o) != 0)
        return -1;
    const char *others[] = {o->output, o->stats_path, o->eng.cookie_jar};
    for (size_t i = 0; i < 3; i++) {
        if (same_file(o->warc, others[i]) || same_file(o->cdxj, others[i])) {
            opt_fail(&crawl_command, same_file(o->warc, others[i]) ? "warc" : "cdxj",
                     "'%s' is another output too", others[i]);
            return -1;
        }
    }
    if (same_file(o->warc, o->cdxj)) {
        opt_fail(&crawl_command, "cdxj", "'%s' is also the --warc file", o->cdxj);
        return -1;
    }
    return 0;
}

int crawl_cli_parse(crawl_cli *o, opt_parsed *p, int argc, char **argv)
{
    int rc = opt_parse(&crawl_command, o, p, argc, argv);
    if (rc != 0)
        return rc;
    o->seeds = (const char *const *)(argv + p->first_operand);
    o->n_seeds = (size_t)(argc - p->first_operand);
    if (o->output != NULL && strcmp(o->output, "-") == 0)
        o->output = NULL;
    o->stats = o->stats_path != NULL;
    if (o->stats && strcmp(o->stats_path, "-") == 0) {
        if (o->output == NULL) {
            opt_fail(&crawl_command, "stats", "standard output holds the records already");
            return -1;
        }
        o->stats_path = NULL;
    }
    if (o->n_seeds == 0) {
        opt_fail(&crawl_command, NULL, "no seed file or URL given");
        return -1;
    }
    if (opt_given(&crawl_command, p, "stats-interval") && !o->stats) {
        opt_fail(&crawl_command, "stats-interval", "needs --stats FILE");
        return -1;
    }
    if (check_not_a_seed("output", o->output, o) != 0 ||
        check_not_a_seed("stats", o->stats_path, o) != 0 ||
        check_not_a_seed("cookie-jar", o->eng.cookie_jar, o) != 0)
        return -1;
    if (same_file(o->output, o->stats_path)) {
        opt_fail(&crawl_command, "stats", "'%s' is also the --output file", o->stats_path);
        return -1;
    }
    return check_archive(o, p);
}
