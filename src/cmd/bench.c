/* bench.c - `sieve bench`: the memory and speed of the frontier.
 *
 * The whole frontier (the default). Contestants, each holding every URL
 * pushed (nothing popped), with per-host scheduling on: bloom+disk, the
 * Bloom frontier of sieve_frontier_open() on a scratch directory, whose
 * queue keeps --queue-memory in RAM and the rest in its journal;
 * bloom+ram, the Bloom frontier of sieve_frontier_new(), queue in RAM;
 * exact+ram, the hash-set frontier, queue in RAM; and filter, the Bloom
 * filter alone (sieve_bloom_add_batch()), the test-and-set every push
 * makes, to compare the frontier's push with. All push in batches of 64.
 *
 * The seen-set alone (--seen-set), as the first version of this command
 * measured it: bloom, the blocked Bloom filter, fed with push_batch() in
 * batches of 64 URLs (a page's links arrive together); classic, the classic
 * Bloom layout, fed one URL at a time with push(); exact, the hash set, fed
 * with push_batch(); the queue drained as it fills.
 *
 * Every frontier is sized for the n URLs it receives. This file is the
 * command: its options, the checks that the run can succeed before hours
 * are spent on it (the URL file, the plot, the memory, the disk), and the
 * loop that runs each contestant at each n and p and prints the rows of
 * each (n, p) as soon as they are measured. The contestants take turns,
 * rep by rep, so that a change of load on the machine hits them all alike.
 * Exact does not depend on p, so it runs once per n; in the whole
 * frontier's benchmark it is skipped at an n where it would not fit in the
 * memory available. How a measurement is made is in bench-run.c (one
 * forked child per run, --reps runs, 3 by default, per contestant); what
 * is printed, in bench-report.c; the plot, in bench-plot.c. */
#include <errno.h>
#include <getopt.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "commands.h"
#include "rss.h"
#include "sieve/sieve.h"
#include "urlgen.h"

#define REPS_DEFAULT         3
#define ABSENT_DEFAULT       1000000
#define SEED_DEFAULT         1
#define MIN_EXACT_PER_URL    100 /* bytes per URL the exact set needs, at least */
#define EXACT_KEY_OVERHEAD   40  /* per URL beyond its bytes: prefix, slot, slack */
#define MEM_SLACK            (64u << 20)
#define QUEUE_MEMORY_DEFAULT (UINT64_C(32) << 20)
/* What a URL queued in memory takes beyond its bytes: its entry header,
 * chunk slack, the allocator; at least, for the estimate. */
#define QUEUE_URL_OVERHEAD 24
/* The disk contestant's queue in memory takes up to about twice its
 * budget (chunk slack over thousands of per-host queues), and each host a
 * little. */
#define HOST_BYTES 2048
/* A journaled URL: record head and checksum (9), tag (4), and slack. */
#define JOURNAL_URL_OVERHEAD 16
#define MEAN_SYNTH_LEN       64 /* bytes of a synthetic URL, on average (63.2) */

/* The table, CSV and plot list them in this order. */
const contestant bench_contestants[NCONTESTANTS] = {
    [C_BLOOM] = {"bloom", SIEVE_SEEN_BLOOM, SIEVE_BLOOM_BLOCKED, true, Q_DRAINED},
    [C_CLASSIC] = {"classic", SIEVE_SEEN_BLOOM, SIEVE_BLOOM_CLASSIC, false, Q_DRAINED},
    [C_EXACT] = {"exact", SIEVE_SEEN_EXACT, SIEVE_BLOOM_BLOCKED, true, Q_DRAINED},
    [C_DISK] = {"bloom+disk", SIEVE_SEEN_BLOOM, SIEVE_BLOOM_BLOCKED, true, Q_DISK},
    [C_RAM] = {"bloom+ram", SIEVE_SEEN_BLOOM, SIEVE_BLOOM_BLOCKED, true, Q_RAM},
    [C_XRAM] = {"exact+ram", SIEVE_SEEN_EXACT, SIEVE_BLOOM_BLOCKED, true, Q_RAM},
    [C_FILTER] = {"filter", SIEVE_SEEN_BLOOM, SIEVE_BLOOM_BLOCKED, true, Q_NONE},
};

/* ---- arguments -------------------------------------------------------- */

static void usage(FILE *out)
{
    fprintf(out,
            "usage: sieve bench [OPTIONS]\n"
            "\n"
            "Pushes the same URLs, 64 a call, into four contestants and leaves them queued\n"
            "(nothing popped), with per-host scheduling on: bloom+disk (sieve_frontier_open()\n"
            "on a scratch directory, --queue-memory of the queue in RAM, the rest in its\n"
            "journal), bloom+ram (queue in RAM), exact+ram (hash set, queue in RAM) and\n"
            "filter (the Bloom filter alone, sieve_bloom_add_batch()). Reports resident\n"
            "and disk bytes per URL, ns per push, URLs lost to false positives and the\n"
            "seconds to reopen bloom+disk's state, then checks the targets at n=1e8, p=0.01,\n"
            "10,000 hosts and a 32 MiB queue: bloom+disk resident <= 2 bytes/URL and >= 50x\n"
            "below exact+ram's (at the largest n exact+ram ran), its push <= 2x the filter's\n"
            "add, and its state reopened in under a minute.\n"
            "\n"
            "With --seen-set, measures the seen-set alone, as before: a Bloom frontier\n"
            "(blocked layout, push_batch), a classic-layout Bloom frontier (push one at a\n"
            "time) and an exact hash-set frontier, the queue drained as it fills; targets:\n"
            "bloom <= 1.25 bytes/URL at p=0.01 and <= 2.75 at p=1e-4 with a measured rate\n"
            "<= p (n=1e8); at p=0.01, exact/bloom bytes >= 50 (n >= 1e7) and classic/bloom\n"
            "ns per push >= 4 (n=1e8).\n"
            "\n"
            "options:\n"
            "  --n LIST        URL counts, e.g. 1e6,1e7 (the default; 1e5,1e6,1e7 with\n"
            "                  --seen-set) or 1e8\n"
            "  --fp-rate LIST  Bloom false-positive rates, e.g. 0.01,0.0001 (default 0.01)\n"
            "  --hosts N       hosts the synthetic URLs are drawn from (default %d;\n"
            "                  %d with --seen-set)\n"
            "  --queue-memory SIZE  bloom+disk's queue budget in RAM, bytes, or with K, M\n"
            "                  or G (default 32M)\n"
            "  --dir DIR       make bloom+disk's states under DIR, one at a time, each\n"
            "                  removed once measured (default: a new directory in $TMPDIR\n"
            "                  or /tmp)\n"
            "  --seen-set      measure the seen-set alone (the queue drained as it fills)\n"
            "  --urls FILE     push the URLs of FILE (one a line) instead of synthetic ones;\n"
            "                  --n defaults to the number of URLs in it\n"
            "  --seed N        seed of the synthetic URL stream (default %d)\n"
            "  --reps N        runs per contestant; ns/push is their median (default %d)\n"
            "  --absent N      never-pushed URLs queried for the false-positive rate\n"
            "                  (default %d; 0 skips the check)\n"
            "  --csv FILE      also write one CSV row per (n, p, contestant)\n"
            "  --plot FILE     draw bytes per URL and ns per push against n with gnuplot;\n"
            "                  FILE ends in .svg or .png\n"
            "  --force         run even if the estimated memory or disk need exceeds what is\n"
            "                  available (exact+ram is otherwise skipped where it would not\n"
            "                  fit)\n"
            "  --help          show this help\n"
            "\n"
            "Exit status: 0 when every run completed (whatever the targets say), 1 if a run\n"
            "or the plot failed, 2 for bad arguments or a run too large for this machine.\n",
            URLGEN_HOSTS_FRONTIER, URLGEN_HOSTS, SEED_DEFAULT, REPS_DEFAULT, ABSENT_DEFAULT);
}

/* Parses a count such as "100000", "1e5" or "2.5e6": an integer in [min, max]. */
static bool parse_count(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    if (*s == '\0' || *s == '-' || *s == '+')
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end == '\0' && errno == 0) {
        if (v < min || v > max)
            return false;
        *out = v;
        return true;
    }
    errno = 0;
    double d = strtod(s, &end);
    if (*end != '\0' || errno != 0 || !(d >= (double)min) || !(d <= (double)max) || d != floor(d))
        return false;
    *out = (uint64_t)d;
    return true;
}

static bool parse_rate(const char *s, double *out)
{
    char *end;
    errno = 0;
    double d = strtod(s, &end);
    if (*s == '\0' || *end != '\0' || errno != 0 || !(d > 0 && d < 1))
        return false;
    *out = d;
    return true;
}

/* Splits a comma-separated list and parses each item as a count (rates when
 * counts is NULL). Returns the number of items, or 0 on any bad item. */
static size_t parse_list(const char *arg, uint64_t *counts, double *rates)
{
    size_t n = 0;
    const char *p = arg;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);
        char item[64];
        if (n == LIST_MAX || len == 0 || len >= sizeof item)
            return 0;
        memcpy(item, p, len);
        item[len] = '\0';
        bool ok = counts != NULL ? parse_count(item, 1, URLGEN_INDEX_LIMIT, &counts[n])
                                 : parse_rate(item, &rates[n]);
        if (!ok)
            return 0;
        n++;
        if (comma == NULL)
            return n;
        p = comma + 1;
    }
}

/* Parses a byte count: digits, then K, M or G (powers of 1024), or none. */
static bool parse_size(const char *s, uint64_t *out)
{
    char *end;
    if (*s < '0' || *s > '9')
        return false;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned shift = 0;
    if (*end == 'K' || *end == 'k')
        shift = 10, end++;
    else if (*end == 'M' || *end == 'm')
        shift = 20, end++;
    else if (*end == 'G' || *end == 'g')
        shift = 30, end++;
    if (*end != '\0' || errno != 0 || v == 0 || v > (UINT64_C(1) << 50) >> shift)
        return false;
    *out = (uint64_t)v << shift;
    return true;
}

static int bad_arg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int bad_arg(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "sieve bench: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nTry 'sieve bench --help'.\n");
    va_end(ap);
    return EXIT_USAGE;
}

/* Returns -1 to go on, or the exit status to return now. */
static int parse_args(int argc, char **argv, options *opt)
{
    enum {
        O_N = 256,
        O_P,
        O_URLS,
        O_SEED,
        O_REPS,
        O_ABSENT,
        O_CSV,
        O_PLOT,
        O_FORCE,
        O_HELP,
        O_HOSTS,
        O_QUEUE_MEMORY,
        O_DIR,
        O_SEEN_SET,
    };
    static const struct option longopts[] = {
        {"n", required_argument, NULL, O_N},
        {"fp-rate", required_argument, NULL, O_P},
        {"hosts", required_argument, NULL, O_HOSTS},
        {"queue-memory", required_argument, NULL, O_QUEUE_MEMORY},
        {"dir", required_argument, NULL, O_DIR},
        {"seen-set", no_argument, NULL, O_SEEN_SET},
        {"urls", required_argument, NULL, O_URLS},
        {"seed", required_argument, NULL, O_SEED},
        {"reps", required_argument, NULL, O_REPS},
        {"absent", required_argument, NULL, O_ABSENT},
        {"csv", required_argument, NULL, O_CSV},
        {"plot", required_argument, NULL, O_PLOT},
        {"force", no_argument, NULL, O_FORCE},
        {"help", no_argument, NULL, O_HELP},
        {NULL, 0, NULL, 0},
    };
    memset(opt, 0, sizeof *opt);
    opt->seed = SEED_DEFAULT;
    opt->reps = REPS_DEFAULT;
    opt->absent = ABSENT_DEFAULT;
    opt->queue_memory = QUEUE_MEMORY_DEFAULT;

    optind = 1;
    opterr = 0;
    int ch;
    uint64_t v;
    while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (ch) {
        case O_N:
            opt->n_count = parse_list(optarg, opt->n, NULL);
            if (opt->n_count == 0)
                return bad_arg("--n wants up to 16 comma-separated whole numbers from 1 to 2^40, "
                               "like 1e5,1e6: got '%s'",
                               optarg);
            break;
        case O_P:
            opt->p_count = parse_list(optarg, NULL, opt->p);
            if (opt->p_count == 0)
                return bad_arg("--fp-rate wants up to 16 comma-separated rates strictly between "
                               "0 and 1, like 0.01,0.0001: got '%s'",
                               optarg);
            break;
        case O_URLS:
            opt->urls = optarg;
            break;
        case O_HOSTS:
            if (!parse_count(optarg, 1, URLGEN_HOSTS_MAX, &opt->hosts))
                return bad_arg("--hosts wants a whole number from 1 to 1e9: got '%s'", optarg);
            break;
        case O_QUEUE_MEMORY:
            if (!parse_size(optarg, &opt->queue_memory))
                return bad_arg("--queue-memory wants a size above 0, like 32M or 1G: got '%s'",
                               optarg);
            break;
        case O_DIR:
            if (*optarg == '\0')
                return bad_arg("--dir wants a directory");
            opt->dir = optarg;
            break;
        case O_SEEN_SET:
            opt->seen_only = true;
            break;
        case O_SEED:
            if (!parse_count(optarg, 0, UINT64_MAX, &opt->seed))
                return bad_arg("--seed wants a whole number: got '%s'", optarg);
            break;
        case O_REPS:
            if (!parse_count(optarg, 1, 100, &v))
                return bad_arg("--reps wants a whole number from 1 to 100: got '%s'", optarg);
            opt->reps = (unsigned)v;
            break;
        case O_ABSENT:
            if (!parse_count(optarg, 0, UINT64_C(1000000000), &opt->absent))
                return bad_arg("--absent wants a whole number from 0 to 1e9: got '%s'", optarg);
            break;
        case O_CSV:
            opt->csv = optarg;
            break;
        case O_PLOT:
            opt->plot = optarg;
            break;
        case O_FORCE:
            opt->force = true;
            break;
        case 'h':
        case O_HELP:
            usage(stdout);
            return EXIT_OK;
        default:
            if (optopt != 0 && optopt < 256)
                fprintf(stderr, "sieve bench: option -%c is unknown\n", optopt);
            else if (optopt != 0)
                fprintf(stderr, "sieve bench: %s needs an argument\n", argv[optind - 1]);
            else
                fprintf(stderr, "sieve bench: option %s is unknown or needs an argument\n",
                        argv[optind - 1]);
            fprintf(stderr, "Try 'sieve bench --help'.\n");
            return EXIT_USAGE;
        }
    }
    if (optind < argc)
        return bad_arg("unexpected argument '%s'", argv[optind]);
    if (opt->p_count == 0) {
        opt->p[0] = 0.01;
        opt->p_count = 1;
    }
    if (opt->hosts == 0)
        opt->hosts = opt->seen_only ? URLGEN_HOSTS : URLGEN_HOSTS_FRONTIER;
    opt->progress = isatty(STDERR_FILENO) == 1;
    return -1;
}

/* ---- memory and disk checks ------------------------------------------- */

/* The memory contestant c needs at (n, p), estimated: its seen-set and its
 * queue in RAM. 0, after a message, if no Bloom filter can be made. */
static uint64_t contestant_need(const options *opt, int c, uint64_t n, double p)
{
    const contestant *ct = &bench_contestants[c];
    double need = MEM_SLACK;
    if (ct->kind == SIEVE_SEEN_EXACT) {
        need += (double)n * opt->exact_per_url;
    } else {
        uint64_t m;
        unsigned k;
        int rc = sieve_bloom_plan(n, p, ct->layout, &m, &k);
        if (rc != SIEVE_OK) {
            fprintf(stderr, "sieve bench: no Bloom filter for n=%llu at p=%g: %s\n",
                    (unsigned long long)n, p, sieve_strerror(rc));
            return 0;
        }
        need += (double)(m / 8);
    }
    if (ct->queue == Q_RAM)
        need += (double)n * (opt->mean_url_len + QUEUE_URL_OVERHEAD);
    else if (ct->queue == Q_DISK)
        need += 2.0 * (double)opt->queue_memory;
    if (ct->queue == Q_RAM || ct->queue == Q_DISK)
        need += (double)opt->hosts * HOST_BYTES;
    return (uint64_t)need;
}

/* Contestants whose memory is checked before the run: all of the seen-set
 * benchmark's; of the whole frontier's, those that keep the queue out of
 * RAM (the others are skipped, when they run, where they would not fit). */
static bool checked_first(const options *opt, int c)
{
    return opt->seen_only || bench_contestants[c].queue == Q_DISK ||
           bench_contestants[c].queue == Q_NONE;
}

/* The most any one child checked before the run will hold; 0 (after a
 * message) if a filter cannot be made. */
static uint64_t memory_need(const options *opt)
{
    int first = opt->seen_only ? SEEN_FIRST : FRONTIER_FIRST;
    int last = opt->seen_only ? SEEN_LAST : FRONTIER_LAST;
    uint64_t need = 0;
    for (size_t i = 0; i < opt->n_count; i++) {
        for (size_t k = 0; k < opt->p_count; k++) {
            for (int c = first; c <= last; c++) {
                if (!checked_first(opt, c))
                    continue;
                uint64_t v = contestant_need(opt, c, opt->n[i], opt->p[k]);
                if (v == 0)
                    return 0;
                need = v > need ? v : need;
            }
        }
    }
    return need;
}

/* Validates --urls against --n and sets the URLs' mean length and the exact
 * set's bytes per URL. */
static int check_url_file(options *opt)
{
    opt->exact_per_url = MIN_EXACT_PER_URL;
    opt->mean_url_len = MEAN_SYNTH_LEN;
    if (opt->urls == NULL) {
        if (opt->n_count == 0 && opt->seen_only) {
            static const uint64_t defaults[] = {100000, 1000000, 10000000};
            memcpy(opt->n, defaults, sizeof defaults);
            opt->n_count = 3;
        } else if (opt->n_count == 0) {
            static const uint64_t defaults[] = {1000000, 10000000};
            memcpy(opt->n, defaults, sizeof defaults);
            opt->n_count = 2;
        }
        return -1;
    }
    urlgen_file_info info;
    char err[512];
    if (urlgen_scan_file(opt->urls, &info, err, sizeof err) != 0) {
        fprintf(stderr, "sieve bench: %s\n", err);
        return EXIT_USAGE;
    }
    if (info.count == 0) {
        fprintf(stderr, "sieve bench: %s holds no URL\n", opt->urls);
        return EXIT_USAGE;
    }
    if (opt->n_count == 0) {
        opt->n[0] = info.count;
        opt->n_count = 1;
    }
    for (size_t i = 0; i < opt->n_count; i++) {
        if (opt->n[i] > info.count) {
            fprintf(stderr, "sieve bench: --n %llu exceeds the %llu URLs in %s\n",
                    (unsigned long long)opt->n[i], (unsigned long long)info.count, opt->urls);
            return EXIT_USAGE;
        }
    }
    opt->mean_url_len = (double)info.bytes / (double)info.count;
    double per_url = opt->mean_url_len + EXACT_KEY_OVERHEAD;
    if (per_url > opt->exact_per_url)
        opt->exact_per_url = per_url;
    return -1;
}

static int check_memory(const options *opt, uint64_t *avail)
{
    uint64_t need = memory_need(opt);
    if (need == 0)
        return EXIT_USAGE;
    *avail = 0;
    if (mem_available(avail) != 0) {
        fprintf(stderr, "sieve bench: cannot read the available memory: %s\n", strerror(errno));
        return opt->force ? -1 : EXIT_FAILURE_RUN;
    }
    if (need <= *avail || opt->force)
        return -1;
    char b1[32], b2[32];
    if (opt->seen_only)
        fprintf(stderr,
                "sieve bench: this run needs about %s (the exact set at ~%.0f bytes/URL, or the "
                "largest Bloom filter) but only %s is available.\n"
                "Use a smaller --n, or --force to run anyway.\n",
                bench_fmt_bytes(b1, sizeof b1, (double)need), opt->exact_per_url,
                bench_fmt_bytes(b2, sizeof b2, (double)*avail));
    else
        fprintf(stderr,
                "sieve bench: this run needs about %s (the largest Bloom filter and the queue "
                "budget) but only %s is available.\n"
                "Use a smaller --n, or --force to run anyway.\n",
                bench_fmt_bytes(b1, sizeof b1, (double)need),
                bench_fmt_bytes(b2, sizeof b2, (double)*avail));
    return EXIT_USAGE;
}

/* Makes the directory bloom+disk's states go in, and checks it has room
 * for the largest: its journal holds every URL with a few bytes more. */
static int check_disk(options *opt, char *made, size_t cap)
{
    made[0] = '\0';
    if (opt->seen_only)
        return -1;
    if (opt->dir == NULL) {
        const char *tmp = getenv("TMPDIR");
        snprintf(made, cap, "%s/sieve-bench-XXXXXX", tmp != NULL && *tmp ? tmp : "/tmp");
        if (mkdtemp(made) == NULL) {
            fprintf(stderr, "sieve bench: cannot make a directory for the states: %s: %s\n", made,
                    strerror(errno));
            made[0] = '\0';
            return EXIT_FAILURE_RUN;
        }
        opt->dir = made;
    } else if (mkdir(opt->dir, 0700) != 0 && errno != EEXIST) {
        fprintf(stderr, "sieve bench: cannot make %s: %s\n", opt->dir, strerror(errno));
        return EXIT_FAILURE_RUN;
    }
    uint64_t n = 0;
    for (size_t i = 0; i < opt->n_count; i++)
        n = opt->n[i] > n ? opt->n[i] : n;
    double need = (double)n * (opt->mean_url_len + JOURNAL_URL_OVERHEAD) + MEM_SLACK;
    struct statvfs vfs;
    if (statvfs(opt->dir, &vfs) != 0) {
        fprintf(stderr, "sieve bench: cannot read the free space of %s: %s\n", opt->dir,
                strerror(errno));
        return opt->force ? -1 : EXIT_FAILURE_RUN;
    }
    double room = (double)vfs.f_bavail * (double)vfs.f_frsize;
    if (need <= room || opt->force)
        return -1;
    char b1[32], b2[32];
    fprintf(stderr,
            "sieve bench: bloom+disk's state at n=%llu needs about %s of disk in %s, which has "
            "%s free.\nUse a smaller --n, another --dir, or --force to run anyway.\n",
            (unsigned long long)n, bench_fmt_bytes(b1, sizeof b1, need), opt->dir,
            bench_fmt_bytes(b2, sizeof b2, room));
    return EXIT_USAGE;
}

/* Whether contestant c fits at (n, p) now; if not, *s says so and it is
 * skipped. Only the whole frontier's RAM queues are checked here. */
static bool fits_now(const options *opt, int c, uint64_t n, double p, summary *s)
{
    if (opt->force || checked_first(opt, c))
        return true;
    uint64_t need = contestant_need(opt, c, n, p), avail;
    if (need == 0 || mem_available(&avail) != 0 || need <= avail)
        return true;
    char b1[32], b2[32];
    memset(s, 0, sizeof *s);
    s->skipped = true;
    snprintf(s->error, sizeof s->error, "skipped: needs about %s, %s available",
             bench_fmt_bytes(b1, sizeof b1, (double)need),
             bench_fmt_bytes(b2, sizeof b2, (double)avail));
    return false;
}

/* ---- the run ----------------------------------------------------------- */

static int open_csv(const options *opt, FILE **csv, char *tmp_path, size_t cap)
{
    *csv = NULL;
    tmp_path[0] = '\0';
    if (opt->csv != NULL) {
        *csv = fopen(opt->csv, "w");
        if (*csv == NULL) {
            fprintf(stderr, "sieve bench: cannot write %s: %s\n", opt->csv, strerror(errno));
            return EXIT_FAILURE_RUN;
        }
    } else if (opt->plot != NULL) {
        const char *dir = getenv("TMPDIR");
        snprintf(tmp_path, cap, "%s/sieve-bench-XXXXXX", dir != NULL && *dir ? dir : "/tmp");
        int fd = mkstemp(tmp_path);
        if (fd < 0 || (*csv = fdopen(fd, "w")) == NULL) {
            fprintf(stderr, "sieve bench: cannot create a temporary file: %s\n", strerror(errno));
            if (fd >= 0)
                close(fd);
            tmp_path[0] = '\0';
            return EXIT_FAILURE_RUN;
        }
    }
    if (*csv != NULL)
        bench_csv_header(opt, *csv);
    return -1;
}

/* Prints and writes the rows of (n, p). */
static void emit_rows(const options *opt, FILE *csv, uint64_t n, double p,
                      summary row[NCONTESTANTS])
{
    int first = opt->seen_only ? SEEN_FIRST : FRONTIER_FIRST;
    int last = opt->seen_only ? SEEN_LAST : FRONTIER_LAST;
    const summary *exact = &row[opt->seen_only ? C_EXACT : C_XRAM];
    for (int c = first; c <= last; c++) {
        bench_print_row(opt, n, p, c, &row[c], exact);
        if (csv != NULL)
            bench_csv_row(csv, opt, n, p, c, &row[c], exact);
    }
    fflush(stdout);
    if (csv != NULL)
        fflush(csv);
}

/* Runs the contestants at (n, p), each unless it does not fit: rep by
 * rep, every contestant in turn, so that a change of load on the machine
 * falls on all of them alike. The exact contestant (it does not depend on
 * p) only if with_exact; else row holds it already. False if a run failed. */
static bool run_point(const options *opt, uint64_t n, double p, bool with_exact,
                      summary row[NCONTESTANTS])
{
    int first = opt->seen_only ? SEEN_FIRST : FRONTIER_FIRST;
    int last = opt->seen_only ? SEEN_LAST : FRONTIER_LAST;
    bench_samples *acc = calloc(NCONTESTANTS, sizeof *acc);
    if (acc == NULL) {
        fprintf(stderr, "sieve bench: out of memory\n");
        return false;
    }
    bool active[NCONTESTANTS] = {false}, ok = true;
    for (int c = first; c <= last; c++) {
        if (bench_contestants[c].kind == SIEVE_SEEN_EXACT && !with_exact)
            continue;
        if (!fits_now(opt, c, n, p, &row[c])) {
            fprintf(stderr, "sieve bench: %s n=%llu %s\n", bench_contestants[c].name,
                    (unsigned long long)n, row[c].error);
            continue;
        }
        bench_samples_start(&row[c], &acc[c]);
        active[c] = true;
    }
    for (unsigned rep = 0; rep < opt->reps; rep++)
        for (int c = first; c <= last; c++)
            if (active[c] && !bench_run_rep(opt, c, n, p, rep, &row[c], &acc[c]))
                active[c] = ok = false;
    for (int c = first; c <= last; c++)
        if (row[c].ran)
            bench_samples_finish(&row[c], &acc[c]);
    free(acc);
    return ok;
}

int cmd_bench(int argc, char **argv)
{
    options opt;
    uint64_t avail;
    char made_dir[4096] = "";
    int rc = parse_args(argc, argv, &opt);
    if (rc < 0)
        rc = check_url_file(&opt);
    if (rc < 0)
        rc = bench_plot_check(&opt);
    if (rc < 0)
        rc = check_memory(&opt, &avail);
    if (rc < 0)
        rc = check_disk(&opt, made_dir, sizeof made_dir);
    if (rc >= 0) {
        if (made_dir[0] != '\0')
            rmdir(made_dir);
        return rc;
    }

    FILE *csv;
    char tmp_csv[4096];
    rc = open_csv(&opt, &csv, tmp_csv, sizeof tmp_csv);
    if (rc >= 0) {
        if (made_dir[0] != '\0')
            rmdir(made_dir);
        return rc;
    }
    summary(*res)[LIST_MAX][NCONTESTANTS] = calloc(LIST_MAX, sizeof *res);
    if (res == NULL) {
        fprintf(stderr, "sieve bench: out of memory\n");
        return EXIT_FAILURE_RUN;
    }

    double start = bench_now_seconds();
    bool failed = false;
    int exact_c = opt.seen_only ? C_EXACT : C_XRAM;
    bench_print_preamble(&opt, argc, argv, avail);
    for (size_t i = 0; i < opt.n_count; i++) {
        uint64_t n = opt.n[i];
        for (size_t k = 0; k < opt.p_count; k++) {
            if (k > 0)
                res[i][k][exact_c] = res[i][0][exact_c];
            failed |= !run_point(&opt, n, opt.p[k], k == 0, res[i][k]);
            emit_rows(&opt, csv, n, opt.p[k], res[i][k]);
        }
    }
    bench_print_targets(&opt, res);

    const summary *first = NULL;
    for (int c = 0; c < NCONTESTANTS && first == NULL; c++)
        if (res[0][0][c].ok && res[0][0][c].first.pushed > 0)
            first = &res[0][0][c];
    bench_print_footer(first, opt.seen_only ? NULL : &res[0][0][C_RAM],
                       bench_now_seconds() - start);
    if (csv != NULL && (ferror(csv) || fclose(csv) != 0)) {
        fprintf(stderr, "sieve bench: writing %s failed\n", opt.csv ? opt.csv : tmp_csv);
        failed = true;
    }
    if (opt.plot != NULL && bench_plot(&opt, opt.csv != NULL ? opt.csv : tmp_csv) != EXIT_OK)
        failed = true;
    if (tmp_csv[0] != '\0')
        unlink(tmp_csv);
    if (made_dir[0] != '\0' && rmdir(made_dir) != 0)
        fprintf(stderr, "sieve bench: cannot remove %s: %s\n", made_dir, strerror(errno));
    free(res);
    return failed ? EXIT_FAILURE_RUN : EXIT_OK;
}
