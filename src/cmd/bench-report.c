/* bench-report.c - what `sieve bench` prints: the preamble that makes a
 * run reproducible (command line, machine, URL source, legend), a table
 * row and a CSV row per (n, p, contestant), the targets and the closing
 * line, for the whole frontier's benchmark and for the seen-set's.
 *
 * Everything here reads summaries the children already measured and only
 * derives differences and ratios from them, so the table, the CSV and the
 * targets always agree. Lost URLs are the first of the two false-positive
 * measures: every URL of the stream is distinct, so the exact frontier
 * enqueues all of them, and each URL a Bloom frontier refused was a false
 * positive during filling (the rate climbs as the filter fills, so this is
 * an average over fill levels); where the exact frontier did not run, a
 * synthetic stream's n stands for its count. The second, the absent check,
 * is measured in bench-run.c. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "urlgen.h"

/* ---- formatting -------------------------------------------------------- */

const char *bench_fmt_count(char *buf, size_t cap, uint64_t n)
{
    unsigned e = 0;
    uint64_t m = n;
    while (m >= 10 && m % 10 == 0) {
        m /= 10;
        e++;
    }
    if (e >= 4 && m < 10)
        snprintf(buf, cap, "%llue%u", (unsigned long long)m, e);
    else
        snprintf(buf, cap, "%llu", (unsigned long long)n);
    return buf;
}

const char *bench_fmt_bytes(char *buf, size_t cap, double bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    unsigned u = 0;
    double v = bytes < 0 ? -bytes : bytes;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    snprintf(buf, cap, u == 0 ? "%s%.0f %s" : "%s%.1f %s", bytes < 0 ? "-" : "", v, units[u]);
    return buf;
}

static const char *fmt_duration(char *buf, size_t cap, double s)
{
    if (s < 60)
        snprintf(buf, cap, "%.1fs", s);
    else
        snprintf(buf, cap, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
    return buf;
}

static bool same_rate(double a, double b)
{
    return fabs(a - b) <= 1e-9 * b;
}

/* ---- output ------------------------------------------------------------ */

static void print_command(FILE *out, int argc, char **argv)
{
    fputs("sieve bench", out);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool plain = *a != '\0' && strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                             "0123456789_-+=.,/:%@") == strlen(a);
        if (plain) {
            fprintf(out, " %s", a);
            continue;
        }
        fputs(" '", out);
        for (; *a != '\0'; a++)
            fputs(*a == '\'' ? "'\\''" : (char[]){*a, '\0'}, out);
        fputc('\'', out);
    }
    fputc('\n', out);
}

static void cpu_model(char *buf, size_t cap)
{
    snprintf(buf, cap, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL)
        return;
    char line[256];
    while (fgets(line, sizeof line, f) != NULL) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon != NULL) {
            colon += 1 + strspn(colon + 1, " \t");
            colon[strcspn(colon, "\n")] = '\0';
            snprintf(buf, cap, "%s", colon);
            break;
        }
    }
    fclose(f);
}

static void print_frontier_legend(const options *opt)
{
    char b1[32];
    printf("Every URL pushed stays queued (nothing is popped); per-host scheduling on.\n"
           "bloom+disk  Bloom frontier of sieve_frontier_open() on a directory, queue_memory "
           "%s:\n"
           "            past it, pushed URLs wait in the journal only\n"
           "bloom+ram   Bloom frontier of sieve_frontier_new(), the whole queue in RAM\n"
           "exact+ram   hash-set frontier of sieve_frontier_new(), the whole queue in RAM\n"
           "filter      the Bloom filter alone (sieve_bloom_add_batch): no frontier, no "
           "queue\n"
           "\n"
           "RSS        resident memory of the measuring process after the pushes minus before\n"
           "           creating the frontier, median of the runs: seen-set, queue in RAM,\n"
           "           hosts and what the allocator adds; B/URL divides it by n\n"
           "seen       bytes the seen-set accounts for, per URL\n"
           "disk       the state directory after the pushes, allocated bytes (du)\n"
           "ns/push    median over %u runs (each a fresh process) of the time spent in\n"
           "           push_batch() calls of %d URLs (filter: sieve_bloom_add_batch) divided\n"
           "           by URLs pushed; URL generation excluded, page faults and journal\n"
           "           writes included; the targets take bloom+disk's over the batches\n"
           "           pushed once its queue spilled (the CSV has both)\n"
           "in RAM     URLs queued in memory at the end; the rest wait in the journal\n"
           "lost       URLs refused as seen although new: false positives during the fill\n"
           "FP absent  share of %llu never-pushed URLs the filled seen-set calls seen\n"
           "reopen s   sieve_frontier_open() on the state the pushes left, in a new process,\n"
           "           the state's pages dropped from the page cache first; median of the\n"
           "           runs (the CSV also has it with the pages cached)\n"
           "exact+ram does not depend on p: it runs once per n, its row repeats per p\n\n",
           bench_fmt_bytes(b1, sizeof b1, (double)opt->queue_memory), opt->reps, URLGEN_BATCH,
           (unsigned long long)opt->absent);
    printf("%8s %6s %-10s %10s %7s %6s %10s %7s %8s %10s %8s %9s %8s\n", "n", "p", "contestant",
           "RSS", "B/URL", "seen", "disk", "B/URL", "ns/push", "in RAM", "lost", "FP absent",
           "reopen s");
}

void bench_print_preamble(const options *opt, int argc, char **argv, uint64_t avail)
{
    char cpu[128], b1[32], b2[32], date[64];
    time_t t = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S %z", localtime(&t));
    cpu_model(cpu, sizeof cpu);
    print_command(stdout, argc, argv);
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    double load[1] = {-1};
    getloadavg(load, 1);
    printf("libsieve %s; %s, %ld CPUs, %s RAM, %s available; load %.2f; %s\n", sieve_version(), cpu,
           sysconf(_SC_NPROCESSORS_ONLN),
           bench_fmt_bytes(b1, sizeof b1, (double)pages * (double)page),
           bench_fmt_bytes(b2, sizeof b2, (double)avail), load[0], date);
    if (opt->urls != NULL)
        printf("URLs: the lines of %s; absent URLs: synthetic, seed %llu\n", opt->urls,
               (unsigned long long)opt->seed);
    else
        printf("URLs: synthetic, seed %llu, %llu hosts (Zipf-like), all distinct\n",
               (unsigned long long)opt->seed, (unsigned long long)opt->hosts);
    if (!opt->seen_only) {
        print_frontier_legend(opt);
        return;
    }
    printf("\n"
           "seen-set   bytes the seen-set accounts for (sieve_frontier_stats.seen_bytes)\n"
           "RSS        resident memory after filling minus before creating the frontier,\n"
           "           median of the runs; the queue is drained as it fills, so this is\n"
           "           the seen-set plus allocator overhead\n"
           "ns/push    median over %u runs (each a fresh process) of the time spent in push\n"
           "           calls divided by URLs pushed; URL generation excluded, page faults\n"
           "           included; bloom and exact push batches of %d, classic one at a time\n"
           "lost       URLs the exact frontier enqueued and this one refused as seen\n"
           "FP absent  share of %llu never-pushed URLs the filled seen-set calls seen\n"
           "           (a separate seen-set of the same configuration, refilled)\n"
           "FP model   the seen-set's own estimate of its false-positive rate when full\n"
           "exact does not depend on p: it runs once per n, its row repeats per p\n\n",
           opt->reps, URLGEN_BATCH, (unsigned long long)opt->absent);
    printf("%8s %8s %-10s %10s %7s %10s %7s %8s %10s %9s %9s %9s\n", "n", "p", "contestant",
           "seen-set", "B/URL", "RSS", "B/URL", "ns/push", "lost", "lost rate", "FP absent",
           "FP model");
}

/* URLs a Bloom contestant refused although new, against the exact
 * frontier's count, or n for a synthetic stream (distinct by construction)
 * where exact did not run. False if neither is known. */
static bool lost_urls(const options *opt, uint64_t n, const result *r, const summary *exact,
                      int64_t *lost, uint64_t *base)
{
    if (exact->ok)
        *base = exact->first.enqueued;
    else if (opt->urls == NULL)
        *base = n;
    else
        return false;
    *lost = (int64_t)(*base - r->enqueued);
    return true;
}

static void print_frontier_row(const options *opt, uint64_t n, double p, int c, const summary *s,
                               const summary *exact)
{
    char nb[32], pb[32], b1[32], b2[32], dpu[32], ram[32], lost[32], fpa[32], reopen[32];
    const contestant *ct = &bench_contestants[c];
    const result *r = &s->first;
    snprintf(pb, sizeof pb, ct->kind == SIEVE_SEEN_EXACT ? "-" : "%g", p);
    printf("%8s %6s %-10s ", bench_fmt_count(nb, sizeof nb, n), pb, ct->name);
    if (!s->ok) {
        printf("%s%s\n", s->skipped ? "" : "failed: ", s->error);
        return;
    }
    snprintf(ram, sizeof ram, "-");
    snprintf(lost, sizeof lost, "-");
    snprintf(fpa, sizeof fpa, "-");
    snprintf(reopen, sizeof reopen, "-");
    snprintf(b2, sizeof b2, "-");
    snprintf(dpu, sizeof dpu, "-");
    if (ct->queue != Q_NONE)
        snprintf(ram, sizeof ram, "%llu", (unsigned long long)(r->enqueued - r->spilled));
    int64_t l;
    uint64_t base;
    if (ct->kind == SIEVE_SEEN_BLOOM && lost_urls(opt, n, r, exact, &l, &base))
        snprintf(lost, sizeof lost, "%lld", (long long)l);
    if (r->absent_queries > 0)
        snprintf(fpa, sizeof fpa, "%.5g", (double)r->absent_hits / (double)r->absent_queries);
    if (ct->queue == Q_DISK) {
        snprintf(reopen, sizeof reopen, "%.2f", s->open_median);
        bench_fmt_bytes(b2, sizeof b2, (double)r->disk_bytes);
        snprintf(dpu, sizeof dpu, "%.3f", (double)r->disk_bytes / (double)n);
    }
    printf("%10s %7.3f %6.3f %10s %7s %8.1f %10s %8s %9s %8s\n",
           bench_fmt_bytes(b1, sizeof b1, s->rss_growth_median), s->rss_growth_median / (double)n,
           (double)r->seen_bytes / (double)n, b2, dpu, s->ns_median, ram, lost, fpa, reopen);
}

void bench_print_row(const options *opt, uint64_t n, double p, int c, const summary *s,
                     const summary *exact)
{
    if (!opt->seen_only) {
        print_frontier_row(opt, n, p, c, s, exact);
        return;
    }
    char nb[32], b1[32], b2[32], pb[32], lost[32], lrate[32], fpa[32], fpm[32];
    const result *r = &s->first;
    snprintf(pb, sizeof pb, c == C_EXACT ? "-" : "%g", p);
    printf("%8s %8s %-10s ", bench_fmt_count(nb, sizeof nb, n), pb, bench_contestants[c].name);
    if (!s->ok) {
        printf("failed: %s\n", s->error);
        return;
    }
    snprintf(lost, sizeof lost, "-");
    snprintf(lrate, sizeof lrate, "-");
    snprintf(fpa, sizeof fpa, "-");
    snprintf(fpm, sizeof fpm, "-");
    if (c != C_EXACT && exact->ok) {
        int64_t l = (int64_t)(exact->first.enqueued - r->enqueued);
        snprintf(lost, sizeof lost, "%lld", (long long)l);
        if (exact->first.enqueued > 0) /* else no rate: a file without a valid URL */
            snprintf(lrate, sizeof lrate, "%.3g", (double)l / (double)exact->first.enqueued);
    }
    if (r->absent_queries > 0)
        snprintf(fpa, sizeof fpa, "%.5g", (double)r->absent_hits / (double)r->absent_queries);
    if (c != C_EXACT)
        snprintf(fpm, sizeof fpm, "%.3g", r->est_fp_rate);
    printf("%10s %7.3f %10s %7.3f %8.1f %10s %9s %9s %9s\n",
           bench_fmt_bytes(b1, sizeof b1, (double)r->seen_bytes), (double)r->seen_bytes / (double)n,
           bench_fmt_bytes(b2, sizeof b2, s->rss_growth_median), s->rss_growth_median / (double)n,
           s->ns_median, lost, lrate, fpa, fpm);
}

static const char seen_header[] =
    "n,fp_rate,contestant,layout,push,reps,pushed,enqueued,invalid,seen_bytes,"
    "bytes_per_url,rss_growth_bytes,rss_bytes_per_url,rss_peak_growth_bytes,"
    "ns_per_push_median,ns_per_push_min,ns_per_push_max,lost,lost_rate,absent_queries,"
    "absent_fp,absent_fp_rate,model_fp_rate,mean_url_len,seconds";

static const char frontier_header[] =
    "n,fp_rate,hosts,queue_memory,contestant,seen_set,queue,reps,status,pushed,enqueued,"
    "invalid,in_ram,spilled,hosts_seen,seen_bytes,queue_bytes,rss_growth_bytes,"
    "rss_bytes_per_url,rss_peak_growth_bytes,disk_bytes,disk_bytes_per_url,disk_apparent_bytes,"
    "ns_per_push_median,ns_per_push_min,ns_per_push_max,ns_per_push_spilling_median,lost,"
    "lost_rate,absent_queries,absent_fp,"
    "absent_fp_rate,model_fp_rate,reopen_s_median,reopen_warm_s_median,reopen_rss_growth_bytes,"
    "recovered,recovered_spilled,mean_url_len,seconds";

/* The 1-based column of name in header, or 0. */
static int column_of(const char *header, const char *name)
{
    size_t len = strlen(name);
    int col = 1;
    for (const char *p = header;; col++) {
        size_t field = strcspn(p, ",");
        if (field == len && memcmp(p, name, len) == 0)
            return col;
        if (p[field] == '\0')
            return 0;
        p += field + 1;
    }
}

int bench_csv_column_bytes(const options *opt)
{
    return opt->seen_only ? column_of(seen_header, "bytes_per_url")
                          : column_of(frontier_header, "rss_bytes_per_url");
}

int bench_csv_column_ns(const options *opt)
{
    return column_of(opt->seen_only ? seen_header : frontier_header, "ns_per_push_median");
}

void bench_csv_header(const options *opt, FILE *f)
{
    fprintf(f, "%s\n", opt->seen_only ? seen_header : frontier_header);
}

static void csv_frontier_row(FILE *f, const options *opt, uint64_t n, double p, int c,
                             const summary *s, const summary *exact)
{
    const contestant *ct = &bench_contestants[c];
    const result *r = &s->first;
    static const char *const queues[] = {"drained", "ram", "disk", "none"};
    fprintf(f, "%llu,%.17g,%llu,%llu,%s,%s,%s,%u,%s,", (unsigned long long)n, p,
            (unsigned long long)opt->hosts,
            ct->queue == Q_DISK ? (unsigned long long)opt->queue_memory : 0ULL, ct->name,
            ct->kind == SIEVE_SEEN_EXACT ? "hashset" : "bloom", queues[ct->queue], opt->reps,
            s->ok        ? "ok"
            : s->skipped ? "skipped"
                         : "failed");
    if (!s->ok) {
        /* the columns after status, empty, up to seconds */
        for (int col = column_of(frontier_header, "status") + 1;
             col < column_of(frontier_header, "seconds"); col++)
            fputc(',', f);
        fprintf(f, "%.3f\n", s->seconds);
        return;
    }
    fprintf(f, "%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%.0f,%.6f,%llu,",
            (unsigned long long)r->pushed, (unsigned long long)r->enqueued,
            (unsigned long long)r->invalid, (unsigned long long)(r->enqueued - r->spilled),
            (unsigned long long)r->spilled, (unsigned long long)r->hosts_seen,
            (unsigned long long)r->seen_bytes, (unsigned long long)r->queue_bytes,
            s->rss_growth_median, s->rss_growth_median / (double)n,
            (unsigned long long)(r->rss_peak - r->rss_before));
    if (ct->queue == Q_DISK)
        fprintf(f, "%llu,%.6f,%llu,", (unsigned long long)r->disk_bytes,
                (double)r->disk_bytes / (double)n, (unsigned long long)r->disk_size);
    else
        fputs(",,,", f);
    fprintf(f, "%.3f,%.3f,%.3f,", s->ns_median, s->ns_min, s->ns_max);
    if (s->spill_ns_median > 0)
        fprintf(f, "%.3f,", s->spill_ns_median);
    else
        fputc(',', f);
    int64_t l;
    uint64_t base;
    if (ct->kind == SIEVE_SEEN_BLOOM && lost_urls(opt, n, r, exact, &l, &base) && base > 0)
        fprintf(f, "%lld,%.9g,", (long long)l, (double)l / (double)base);
    else if (ct->kind == SIEVE_SEEN_EXACT)
        fputs("0,0,", f);
    else
        fputs(",,", f);
    if (r->absent_queries > 0)
        fprintf(f, "%llu,%llu,%.9g,", (unsigned long long)r->absent_queries,
                (unsigned long long)r->absent_hits,
                (double)r->absent_hits / (double)r->absent_queries);
    else
        fputs(",,,", f);
    fprintf(f, "%.9g,", r->est_fp_rate);
    if (ct->queue == Q_DISK)
        fprintf(f, "%.3f,%.3f,%llu,%llu,%llu,", s->open_median, s->open_warm_median,
                (unsigned long long)r->open_rss, (unsigned long long)r->recovered,
                (unsigned long long)r->open_spilled);
    else
        fputs(",,,,,", f);
    fprintf(f, "%.2f,%.3f\n", (double)r->url_bytes / (double)r->pushed, s->seconds);
}

void bench_csv_row(FILE *f, const options *opt, uint64_t n, double p, int c, const summary *s,
                   const summary *exact)
{
    if (!opt->seen_only) {
        csv_frontier_row(f, opt, n, p, c, s, exact);
        return;
    }
    const contestant *ct = &bench_contestants[c];
    const result *r = &s->first;
    fprintf(f, "%llu,%.17g,%s,%s,%s,%u,", (unsigned long long)n, p, ct->name,
            ct->kind == SIEVE_SEEN_EXACT        ? "hashset"
            : ct->layout == SIEVE_BLOOM_BLOCKED ? "blocked"
                                                : "classic",
            ct->batch ? "push_batch" : "push", opt->reps);
    if (!s->ok) {
        fprintf(f, ",,,,,,,,,,,,,,,,,,%.3f\n", s->seconds);
        return;
    }
    fprintf(f, "%llu,%llu,%llu,%llu,%.6f,%.0f,%.6f,%llu,%.3f,%.3f,%.3f,",
            (unsigned long long)r->pushed, (unsigned long long)r->enqueued,
            (unsigned long long)r->invalid, (unsigned long long)r->seen_bytes,
            (double)r->seen_bytes / (double)n, s->rss_growth_median,
            s->rss_growth_median / (double)n, (unsigned long long)(r->rss_peak - r->rss_before),
            s->ns_median, s->ns_min, s->ns_max);
    if (c != C_EXACT && exact->ok) {
        int64_t l = (int64_t)(exact->first.enqueued - r->enqueued);
        if (exact->first.enqueued > 0)
            fprintf(f, "%lld,%.9g,", (long long)l, (double)l / (double)exact->first.enqueued);
        else
            fprintf(f, "%lld,,", (long long)l);
    } else if (c == C_EXACT) {
        fputs("0,0,", f);
    } else {
        fputs(",,", f);
    }
    if (r->absent_queries > 0)
        fprintf(f, "%llu,%llu,%.9g,", (unsigned long long)r->absent_queries,
                (unsigned long long)r->absent_hits,
                (double)r->absent_hits / (double)r->absent_queries);
    else
        fputs(",,,", f);
    fprintf(f, "%.9g,%.2f,%.3f\n", r->est_fp_rate, (double)r->url_bytes / (double)r->pushed,
            s->seconds);
}

/* ---- targets ----------------------------------------------------------- */

typedef struct tally {
    unsigned pass, fail, info;
} tally;

static void target_line(tally *t, bool stated, bool pass, uint64_t n, double p, const char *what,
                        const char *measured)
{
    char nb[32];
    const char *verdict = pass ? "PASS" : "FAIL";
    if (stated)
        pass ? t->pass++ : t->fail++;
    else
        t->info++;
    printf("%s %6s %8g  %-44s %-30s %s\n", stated ? "*" : " ", bench_fmt_count(nb, sizeof nb, n), p,
           what, measured, verdict);
}

/* The setup the whole frontier's targets are stated for: p = 0.01, 10,000
 * hosts, a 32 MiB queue budget, synthetic URLs. */
static bool frontier_setup(const options *opt, double p)
{
    return same_rate(p, 0.01) && opt->hosts == URLGEN_HOSTS_FRONTIER &&
           opt->queue_memory == UINT64_C(32) << 20 && opt->urls == NULL;
}

#define FRONTIER_BYTES_MAX 2.0  /* resident bytes per URL, bloom+disk */
#define FRONTIER_RATIO_MIN 50.0 /* exact+ram resident / bloom+disk resident */
#define PUSH_RATIO_MAX     2.0  /* bloom+disk push / filter add */
#define REOPEN_MAX_S       60.0 /* seconds, not minutes */

static void print_frontier_targets(const options *opt, summary (*res)[LIST_MAX][NCONTESTANTS])
{
    tally t = {0, 0, 0};
    char m[64];
    printf("\nTargets: from this run. PASS/FAIL is shown for every n and p run; '*' marks\n"
           "where the issue states the target: n=1e8 URLs queued over 10,000 hosts at\n"
           "p=0.01 with a 32 MiB queue budget (the size ratio against exact+ram at the\n"
           "largest n it ran); only those count in the verdict below.\n\n");
    printf("  %6s %8s  %-44s %-30s %s\n", "n", "p", "target", "measured", "verdict");
    /* the largest n at which exact+ram ran, for the size ratio */
    size_t ex_i = SIZE_MAX;
    for (size_t i = 0; i < opt->n_count; i++)
        if (res[i][0][C_XRAM].ok && (ex_i == SIZE_MAX || opt->n[i] > opt->n[ex_i]))
            ex_i = i;
    bool ratio_stated = false;
    for (size_t i = 0; i < opt->n_count; i++) {
        uint64_t n = opt->n[i];
        for (size_t k = 0; k < opt->p_count; k++) {
            double p = opt->p[k];
            bool stated = n >= UINT64_C(100000000) && frontier_setup(opt, p);
            const summary *dk = &res[i][k][C_DISK], *ex = &res[i][k][C_XRAM];
            const summary *fl = &res[i][k][C_FILTER];
            if (!dk->ok)
                continue;
            double bpu = dk->rss_growth_median / (double)n;
            snprintf(m, sizeof m, "%.3f bytes/URL", bpu);
            target_line(&t, stated, bpu <= FRONTIER_BYTES_MAX, n, p,
                        "bloom+disk resident <= 2 bytes/URL", m);
            if (ex->ok && dk->rss_growth_median > 0) {
                double ratio = ex->rss_growth_median / dk->rss_growth_median;
                snprintf(m, sizeof m, "%.1fx", ratio);
                target_line(&t, stated, ratio >= FRONTIER_RATIO_MIN, n, p,
                            "exact+ram / bloom+disk resident >= 50x", m);
                ratio_stated |= stated;
            } else if (stated && ex_i != SIZE_MAX && !ratio_stated && dk->rss_growth_median > 0) {
                /* exact+ram did not fit at this n: its bytes per URL at the
                 * largest n it ran, against bloom+disk's here */
                uint64_t en = opt->n[ex_i];
                double epu = res[ex_i][0][C_XRAM].rss_growth_median / (double)en;
                double ratio = epu / bpu;
                char what[80], nb[32];
                snprintf(what, sizeof what, "exact+ram at n=%s / bloom+disk >= 50x",
                         bench_fmt_count(nb, sizeof nb, en));
                snprintf(m, sizeof m, "%.1fx (%.1f / %.3f B/URL)", ratio, epu, bpu);
                target_line(&t, true, ratio >= FRONTIER_RATIO_MIN, n, p, what, m);
                ratio_stated = true;
            }
            if (fl->ok && fl->ns_median > 0 && dk->spill_ns_median > 0) {
                double ratio = dk->spill_ns_median / fl->ns_median;
                snprintf(m, sizeof m, "%.2fx (%.1f / %.1f ns)", ratio, dk->spill_ns_median,
                         fl->ns_median);
                target_line(&t, stated, ratio <= PUSH_RATIO_MAX, n, p,
                            "bloom+disk push spilling / filter add <= 2x", m);
            }
            snprintf(m, sizeof m, "%.2f s (cached: %.2f s)", dk->open_median, dk->open_warm_median);
            target_line(&t, stated, dk->open_median < REOPEN_MAX_S, n, p,
                        "reopen bloom+disk's state < 60 s", m);
        }
    }
    if (t.pass + t.fail == 0)
        printf("\nNo target was checked where it is stated (run --n 1e8 for all of them).\n");
    else
        printf("\nTargets where they are stated: %u PASS, %u FAIL.\n", t.pass, t.fail);
}

void bench_print_targets(const options *opt, summary (*res)[LIST_MAX][NCONTESTANTS])
{
    if (!opt->seen_only) {
        print_frontier_targets(opt, res);
        return;
    }
    tally t = {0, 0, 0};
    char m[64];
    printf("\nTargets: ratios from this run. PASS/FAIL is shown for every n and p run; '*'\n"
           "marks where the issue states the target (bytes and FP rate at n=1e8 for p=0.01\n"
           "and 1e-4, size ratio at n >= 1e7 and speed ratio at n=1e8, both for p=0.01 and\n"
           "shown for other p as information); only those count in the verdict below.\n\n");
    printf("  %6s %8s  %-44s %-30s %s\n", "n", "p", "target", "measured", "verdict");
    for (size_t i = 0; i < opt->n_count; i++) {
        uint64_t n = opt->n[i];
        bool at_1e8 = n >= UINT64_C(100000000);
        for (size_t k = 0; k < opt->p_count; k++) {
            double p = opt->p[k];
            const summary *bl = &res[i][k][C_BLOOM], *cl = &res[i][k][C_CLASSIC];
            const summary *ex = &res[i][k][C_EXACT];
            if (!bl->ok)
                continue;
            double bpu = (double)bl->first.seen_bytes / (double)n;
            double limit = same_rate(p, 0.01) ? 1.25 : same_rate(p, 1e-4) ? 2.75 : 0;
            if (limit > 0) {
                char what[64];
                snprintf(what, sizeof what, "bloom seen-set <= %.2f bytes/URL", limit);
                snprintf(m, sizeof m, "%.3f bytes/URL", bpu);
                target_line(&t, at_1e8, bpu <= limit, n, p, what, m);
            }
            if (bl->first.absent_queries > 0) {
                double q = (double)bl->first.absent_queries;
                double fp = (double)bl->first.absent_hits / q;
                /* the binomial 95% half-width: how far sampling alone moves it */
                double half = 1.96 * sqrt(fp * (1 - fp) / q);
                snprintf(m, sizeof m, "%.5g +- %.2g", fp, half);
                target_line(&t, at_1e8 && limit > 0, fp <= p, n, p,
                            "bloom FP rate (absent URLs) <= p", m);
                if (fp > p && fp - half <= p)
                    printf("%-20s(above p by less than its sampling error: rerun with a "
                           "larger --absent)\n",
                           "");
            }
            if (ex->ok) {
                double ratio = (double)ex->first.seen_bytes / (double)bl->first.seen_bytes;
                snprintf(m, sizeof m, "%.1fx", ratio);
                target_line(&t, n >= UINT64_C(10000000) && same_rate(p, 0.01), ratio >= 50, n, p,
                            "exact / bloom seen-set bytes >= 50x", m);
            }
            if (cl->ok && bl->ns_median > 0) {
                double ratio = cl->ns_median / bl->ns_median;
                snprintf(m, sizeof m, "%.2fx (%.1f / %.1f ns)", ratio, cl->ns_median,
                         bl->ns_median);
                target_line(&t, at_1e8 && same_rate(p, 0.01), ratio >= 4, n, p,
                            "classic push / bloom push_batch >= 4x", m);
            }
        }
    }
    if (t.pass + t.fail == 0)
        printf("\nNo target was checked at its stated n (run --n 1e8 for all of them).\n");
    else
        printf("\nTargets at their stated n: %u PASS, %u FAIL.\n", t.pass, t.fail);
}

/* ---- closing line ------------------------------------------------------ */

void bench_print_footer(const summary *first, const summary *ram, double seconds)
{
    char b1[32];
    double load[1] = {-1};
    getloadavg(load, 1);
    const result *r = first != NULL ? &first->first : NULL;
    printf("\nMean URL length %.1f bytes (%llu to %llu)",
           r != NULL ? (double)r->url_bytes / (double)r->pushed : 0.0,
           r != NULL ? (unsigned long long)r->url_min : 0ULL,
           r != NULL ? (unsigned long long)r->url_max : 0ULL);
    if (ram != NULL && ram->ok)
        printf("; %llu distinct hosts queued by bloom+ram at n=%llu",
               (unsigned long long)ram->first.hosts_seen, (unsigned long long)ram->first.pushed);
    printf("; finished in %s, load %.2f.\n", fmt_duration(b1, sizeof b1, seconds), load[0]);
}
