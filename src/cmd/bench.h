/* bench.h - what the parts of `sieve bench` share: the contestants, the
 * options, and the figures one measurement sends back.
 *
 * The command is split by concept: bench.c parses the options, checks the
 * run fits the machine and runs every contestant at every n and p;
 * bench-run.c makes one measurement in a forked child; bench-report.c
 * prints the table, the CSV rows and the targets; bench-plot.c draws the
 * CSV with gnuplot. Only what crosses those lines is declared here.
 *
 * Two benchmarks share this machinery: the whole frontier (the default:
 * seen-set plus queue, URLs pushed and left queued, per-host scheduling
 * on) and the seen-set alone (--seen-set: the queue drained as it fills). */
#ifndef SIEVE_BENCH_H
#define SIEVE_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sieve/sieve.h"

#define LIST_MAX 16 /* values of --n, and of --fp-rate */

/* Where a contestant's queued URLs go. */
typedef enum queue_kind {
    Q_DRAINED, /* popped and done as pushed: the seen-set alone is measured */
    Q_RAM,     /* left queued, in memory (sieve_frontier_new) */
    Q_DISK,    /* left queued within queue_memory, the rest in the journal
                * (sieve_frontier_open on a scratch directory) */
    Q_NONE,    /* no frontier: the Bloom filter alone, sieve_bloom_add_batch() */
} queue_kind;

typedef struct contestant {
    const char *name;
    sieve_seen_kind kind;
    sieve_bloom_layout layout;
    bool batch; /* push_batch(), else push() one URL at a time */
    queue_kind queue;
} contestant;

/* The seen-set benchmark's contestants, then the whole frontier's. */
enum { C_BLOOM, C_CLASSIC, C_EXACT, C_DISK, C_RAM, C_XRAM, C_FILTER, NCONTESTANTS };
#define SEEN_FIRST     C_BLOOM
#define SEEN_LAST      C_EXACT
#define FRONTIER_FIRST C_DISK
#define FRONTIER_LAST  C_FILTER

/* The contestants, indexed by the enum above (defined in bench.c). */
extern const contestant bench_contestants[NCONTESTANTS];

typedef struct options {
    uint64_t n[LIST_MAX];
    size_t n_count;
    double p[LIST_MAX];
    size_t p_count;
    uint64_t seed;
    uint64_t hosts; /* host ranks of the synthetic stream */
    unsigned reps;
    uint64_t absent;
    uint64_t queue_memory; /* the disk contestant's budget */
    const char *urls, *csv, *plot;
    const char *dir; /* where the disk contestant's states are made */
    bool seen_only;  /* --seen-set: the seen-set benchmark */
    bool force;
    bool progress;        /* stderr is a terminal */
    double mean_url_len;  /* of the URLs pushed, for the estimates */
    double exact_per_url; /* bytes the exact set takes per URL, at least */
} options;

/* What a child sends back. Plain data, written and read whole. */
typedef struct result {
    int status; /* 0, or -1 with error set */
    char error[200];
    uint64_t pushed, enqueued, seen, invalid;
    uint64_t seen_bytes;
    uint64_t rss_before, rss_after, rss_peak;
    uint64_t push_ns;
    uint64_t spill_push_ns, spill_pushed; /* Q_DISK: the batches pushed while spilling */
    uint64_t url_bytes, url_min, url_max;
    double est_fp_rate;
    uint64_t absent_queries, absent_hits;
    double seconds;
    /* the whole frontier */
    uint64_t spilled;      /* URLs left in the journal only */
    uint64_t queue_bytes;  /* bytes the queue in memory holds */
    uint64_t hosts_seen;   /* hosts the scheduler knows */
    uint64_t disk_bytes;   /* the state directory, allocated (du) */
    uint64_t disk_size;    /* the state directory, apparent (st_size) */
    double open_s;         /* sieve_frontier_open() on the state left, page cache dropped */
    double open_warm_s;    /* the same again, page cache warm */
    uint64_t open_rss;     /* resident growth of that open */
    uint64_t recovered;    /* URLs it queued again */
    uint64_t open_spilled; /* of those, left in the journal */
} result;

/* The runs of one contestant at one (n, p), summarized. */
typedef struct summary {
    bool ran, ok;
    bool skipped; /* not run: it would not fit in memory (error says why) */
    char error[240];
    result first; /* rep 0: memory, counts, the absent check */
    double ns_median, ns_min, ns_max;
    double spill_ns_median; /* Q_DISK: ns per push while the queue spills, 0 if it never did */
    double rss_growth_median;
    double open_median, open_warm_median; /* reopening the state, Q_DISK */
    double seconds;                       /* all reps */
} summary;

/* ---- bench-run.c: measuring ------------------------------------------- */

/* Seconds on CLOCK_MONOTONIC, from an arbitrary origin. */
double bench_now_seconds(void);

/* The figures of each rep of one contestant at one (n, p), until
 * bench_samples_finish() summarizes them. */
typedef struct bench_samples {
    double ns[100], spill_ns[100], rss[100], open_s[100], open_warm[100];
    unsigned count;
} bench_samples;

/* Clears *s and *acc before the first rep. */
void bench_samples_start(summary *s, bench_samples *acc);

/* Runs rep number rep of contestant c at (n, p) in a fresh child and adds
 * its figures to *acc (rep 0's whole result to s->first). A Q_DISK
 * contestant makes its state in a new directory under opt->dir, reopens
 * it in another child and removes it. On a failure, returns false with
 * s->error saying why (also printed on stderr): skip the remaining reps. */
bool bench_run_rep(const options *opt, int c, uint64_t n, double p, unsigned rep, summary *s,
                   bench_samples *acc);

/* Sets s's medians from *acc; s->ok if every rep completed. */
void bench_samples_finish(summary *s, bench_samples *acc);

/* The bytes of the files under path, allocated (as du counts them) and
 * apparent. Returns 0, or -1 with errno set. */
int bench_tree_size(const char *path, uint64_t *allocated, uint64_t *apparent);

/* Removes path and everything under it; 0 or -1. */
int bench_remove_tree(const char *path);

/* ---- bench-report.c: the table, the CSV, the targets ------------------ */

/* Writes n into buf as "1e7" when a round power-of-ten multiple from 1e4
 * up, else its digits, and returns buf. */
const char *bench_fmt_count(char *buf, size_t cap, uint64_t n);

/* Writes bytes into buf in B, KiB, MiB, GiB or TiB and returns buf. */
const char *bench_fmt_bytes(char *buf, size_t cap, double bytes);

/* Prints the command line, the machine, the URL source, the legend and the
 * table's heading (of the benchmark opt->seen_only chooses) on stdout. */
void bench_print_preamble(const options *opt, int argc, char **argv, uint64_t avail);

/* Prints the table row of contestant c at (n, p); exact is the exact
 * frontier's summary at n, which the lost URLs are counted against. */
void bench_print_row(const options *opt, uint64_t n, double p, int c, const summary *s,
                     const summary *exact);

/* Writes the CSV header line to f. */
void bench_csv_header(const options *opt, FILE *f);

/* Writes the CSV row of contestant c at (n, p) to f (exact as for
 * bench_print_row()); a failed run keeps its columns, empty. */
void bench_csv_row(FILE *f, const options *opt, uint64_t n, double p, int c, const summary *s,
                   const summary *exact);

/* The CSV's columns (1-based) of bytes per URL and ns per push, which the
 * plot draws. */
int bench_csv_column_bytes(const options *opt);
int bench_csv_column_ns(const options *opt);

/* Prints every target check of res[n index][p index][contestant] and the
 * verdict over those at their stated n. */
void bench_print_targets(const options *opt, summary (*res)[LIST_MAX][NCONTESTANTS]);

/* Prints the closing line: the URL lengths of the first run that
 * completed (first may be NULL), the hosts bloom+ram's scheduler saw (ram
 * may be NULL), the run's duration in seconds and the load average. */
void bench_print_footer(const summary *first, const summary *ram, double seconds);

/* ---- bench-plot.c: the plot ------------------------------------------- */

/* Checks --plot before anything runs: a .svg or .png name, and gnuplot in
 * PATH. Returns -1 to go on (also without --plot), or the exit status. */
int bench_plot_check(const options *opt);

/* Draws opt->plot from the CSV file csv with gnuplot. Returns EXIT_OK, or
 * EXIT_FAILURE_RUN after a message on stderr. */
int bench_plot(const options *opt, const char *csv);

#endif
