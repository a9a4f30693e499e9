/* bench.c - `sieve bench`: the memory and speed of the Bloom frontier
 * against the exact (hash-set) frontier, on the same URL stream.
 *
 * Contestants. bloom: the blocked Bloom filter, fed with push_batch() in
 * batches of 64 URLs (a page's links arrive together). classic: the classic
 * Bloom layout, fed one URL at a time with push(). exact: the hash set, fed
 * with push_batch(). Every frontier is sized for the n URLs it receives.
 *
 * This file is the command: its options, the checks that the run can
 * succeed before hours are spent on it (the URL file, the plot, the
 * memory), and the loop that runs each contestant at each n and p and
 * prints the rows of each (n, p) as soon as they are measured. Exact does
 * not depend on p, so it runs once per n. How a measurement is made is in
 * bench-run.c (one forked child per run, --reps runs, 3 by default, per
 * contestant); what is printed, in bench-report.c; the plot, in
 * bench-plot.c. */
#include <errno.h>
#include <getopt.h>
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

#define REPS_DEFAULT       3
#define ABSENT_DEFAULT     1000000
#define SEED_DEFAULT       1
#define MIN_EXACT_PER_URL  100 /* bytes per URL the exact set needs, at least */
#define EXACT_KEY_OVERHEAD 40  /* per URL beyond its bytes: prefix, slot, slack */
#define MEM_SLACK          (64u << 20)

/* The table, CSV and plot list them in this order. */
const contestant bench_contestants[NCONTESTANTS] = {
    [C_BLOOM] = {"bloom", SIEVE_SEEN_BLOOM, SIEVE_BLOOM_BLOCKED, true},
    [C_CLASSIC] = {"classic", SIEVE_SEEN_BLOOM, SIEVE_BLOOM_CLASSIC, false},
    [C_EXACT] = {"exact", SIEVE_SEEN_EXACT, SIEVE_BLOOM_BLOCKED, true},
};

/* ---- arguments -------------------------------------------------------- */

static void usage(FILE *out)
{
    fprintf(out,
            "usage: sieve bench [OPTIONS]\n"
            "\n"
            "Fills a Bloom frontier (blocked layout, push_batch), a classic-layout Bloom\n"
            "frontier (push one at a time) and an exact hash-set frontier with the same\n"
            "URLs, and reports for each the seen-set's bytes, resident memory growth,\n"
            "nanoseconds per push and measured false-positive rates, then checks the\n"
            "targets: bloom <= 1.25 bytes/URL at p=0.01 and <= 2.75 at p=1e-4 with a\n"
            "measured rate <= p (n=1e8); at p=0.01, exact/bloom bytes >= 50 (n >= 1e7) and\n"
            "classic/bloom ns per push >= 4 (n=1e8).\n"
            "\n"
            "options:\n"
            "  --n LIST        URL counts, e.g. 1e5,1e6,1e7 (the default) or 1e8\n"
            "  --fp-rate LIST  Bloom false-positive rates, e.g. 0.01,0.0001 (default 0.01)\n"
            "  --urls FILE     push the URLs of FILE (one a line) instead of synthetic ones;\n"
            "                  --n defaults to the number of URLs in it\n"
            "  --seed N        seed of the synthetic URL stream (default %d)\n"
            "  --reps N        runs per contestant; ns/push is their median (default %d)\n"
            "  --absent N      never-pushed URLs queried for the false-positive rate\n"
            "                  (default %d; 0 skips the check)\n"
            "  --csv FILE      also write one CSV row per (n, p, contestant)\n"
            "  --plot FILE     draw bytes per URL and ns per push against n with gnuplot;\n"
            "                  FILE ends in .svg or .png\n"
            "  --force         run even if the estimated memory need exceeds what is available\n"
            "  --help          show this help\n"
            "\n"
            "Exit status: 0 when every run completed (whatever the targets say), 1 if a run\n"
            "or the plot failed, 2 for bad arguments or a run too large for this machine.\n",
            SEED_DEFAULT, REPS_DEFAULT, ABSENT_DEFAULT);
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
    enum { O_N = 256, O_P, O_URLS, O_SEED, O_REPS, O_ABSENT, O_CSV, O_PLOT, O_FORCE, O_HELP };
    static const struct option longopts[] = {
        {"n", required_argument, NULL, O_N},
        {"fp-rate", required_argument, NULL, O_P},
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
    opt->progress = isatty(STDERR_FILENO) == 1;
    return -1;
}

/* ---- memory check ------------------------------------------------------ */

/* The most any one child will hold: the exact set at the largest n, or a
 * Bloom filter if larger. 0 (after a message) if a filter cannot be made. */
static uint64_t memory_need(const options *opt, double exact_per_url)
{
    uint64_t need = 0;
    for (size_t i = 0; i < opt->n_count; i++) {
        double exact = (double)opt->n[i] * exact_per_url;
        if (exact > (double)need)
            need = (uint64_t)exact;
        for (size_t k = 0; k < opt->p_count; k++) {
            for (int layout = SIEVE_BLOOM_BLOCKED; layout <= SIEVE_BLOOM_CLASSIC; layout++) {
                uint64_t m;
                unsigned kk;
                int rc =
                    sieve_bloom_plan(opt->n[i], opt->p[k], (sieve_bloom_layout)layout, &m, &kk);
                if (rc != SIEVE_OK) {
                    fprintf(stderr, "sieve bench: no Bloom filter for n=%llu at p=%g: %s\n",
                            (unsigned long long)opt->n[i], opt->p[k], sieve_strerror(rc));
                    return 0;
                }
                if (m / 8 > need)
                    need = m / 8;
            }
        }
    }
    return need + MEM_SLACK;
}

/* Validates --urls against --n and returns the exact set's bytes per URL. */
static int check_url_file(options *opt, double *exact_per_url)
{
    *exact_per_url = MIN_EXACT_PER_URL;
    if (opt->urls == NULL) {
        if (opt->n_count == 0) {
            static const uint64_t defaults[] = {100000, 1000000, 10000000};
            memcpy(opt->n, defaults, sizeof defaults);
            opt->n_count = 3;
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
    double per_url = (double)info.bytes / (double)info.count + EXACT_KEY_OVERHEAD;
    if (per_url > *exact_per_url)
        *exact_per_url = per_url;
    return -1;
}

static int check_memory(const options *opt, double exact_per_url, uint64_t *avail)
{
    uint64_t need = memory_need(opt, exact_per_url);
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
    fprintf(stderr,
            "sieve bench: this run needs about %s (the exact set at ~%.0f bytes/URL, or the "
            "largest Bloom filter) but only %s is available.\n"
            "Use a smaller --n, or --force to run anyway.\n",
            bench_fmt_bytes(b1, sizeof b1, (double)need), exact_per_url,
            bench_fmt_bytes(b2, sizeof b2, (double)*avail));
    return EXIT_USAGE;
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
        bench_csv_header(*csv);
    return -1;
}

int cmd_bench(int argc, char **argv)
{
    options opt;
    double exact_per_url;
    uint64_t avail;
    int rc = parse_args(argc, argv, &opt);
    if (rc < 0)
        rc = check_url_file(&opt, &exact_per_url);
    if (rc < 0)
        rc = bench_plot_check(&opt);
    if (rc < 0)
        rc = check_memory(&opt, exact_per_url, &avail);
    if (rc >= 0)
        return rc;

    FILE *csv;
    char tmp_csv[4096];
    rc = open_csv(&opt, &csv, tmp_csv, sizeof tmp_csv);
    if (rc >= 0)
        return rc;
    summary(*res)[LIST_MAX][NCONTESTANTS] = calloc(LIST_MAX, sizeof *res);
    if (res == NULL) {
        fprintf(stderr, "sieve bench: out of memory\n");
        return EXIT_FAILURE_RUN;
    }

    double start = bench_now_seconds();
    bool failed = false;
    bench_print_preamble(&opt, argc, argv, avail);
    for (size_t i = 0; i < opt.n_count; i++) {
        uint64_t n = opt.n[i];
        summary exact;
        bench_run_contestant(&opt, C_EXACT, n, opt.p[0], &exact);
        failed |= !exact.ok;
        for (size_t k = 0; k < opt.p_count; k++) {
            res[i][k][C_EXACT] = exact;
            for (int c = C_BLOOM; c <= C_CLASSIC; c++) {
                bench_run_contestant(&opt, c, n, opt.p[k], &res[i][k][c]);
                failed |= !res[i][k][c].ok;
            }
            for (int c = 0; c < NCONTESTANTS; c++) {
                bench_print_row(n, opt.p[k], c, &res[i][k][c], &exact);
                if (csv != NULL)
                    bench_csv_row(csv, &opt, n, opt.p[k], c, &res[i][k][c], &exact);
            }
            fflush(stdout);
            if (csv != NULL)
                fflush(csv);
        }
    }
    bench_print_targets(&opt, res);

    bench_print_footer(&res[0][0][C_EXACT], bench_now_seconds() - start);
    if (csv != NULL && (ferror(csv) || fclose(csv) != 0)) {
        fprintf(stderr, "sieve bench: writing %s failed\n", opt.csv ? opt.csv : tmp_csv);
        failed = true;
    }
    if (opt.plot != NULL && bench_plot(&opt, opt.csv != NULL ? opt.csv : tmp_csv) != EXIT_OK)
        failed = true;
    if (tmp_csv[0] != '\0')
        unlink(tmp_csv);
    free(res);
    return failed ? EXIT_FAILURE_RUN : EXIT_OK;
}
