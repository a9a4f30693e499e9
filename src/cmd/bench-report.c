/* bench-report.c - what `sieve bench` prints: the preamble that makes a
 * run reproducible (command line, machine, URL source, legend), a table
 * row and a CSV row per (n, p, contestant), the targets and the closing
 * line.
 *
 * Everything here reads summaries the children already measured and only
 * derives differences and ratios from them, so the table, the CSV and the
 * targets always agree. Lost URLs are the first of the two false-positive
 * measures: every URL of the stream is distinct, so the exact frontier
 * enqueues all of them, and each URL a Bloom frontier refused was a false
 * positive during filling (the rate climbs as the filter fills, so this is
 * an average over fill levels). The second, the absent check, is measured
 * in bench-run.c. */
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
        printf("URLs: synthetic, seed %llu, %d hosts (Zipf-like), all distinct\n",
               (unsigned long long)opt->seed, URLGEN_HOSTS);
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

void bench_print_row(uint64_t n, double p, int c, const summary *s, const summary *exact)
{
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

void bench_csv_header(FILE *f)
{
    fputs("n,fp_rate,contestant,layout,push,reps,pushed,enqueued,invalid,seen_bytes,"
          "bytes_per_url,rss_growth_bytes,rss_bytes_per_url,rss_peak_growth_bytes,"
          "ns_per_push_median,ns_per_push_min,ns_per_push_max,lost,lost_rate,absent_queries,"
          "absent_fp,absent_fp_rate,model_fp_rate,mean_url_len,seconds\n",
          f);
}

void bench_csv_row(FILE *f, const options *opt, uint64_t n, double p, int c, const summary *s,
                   const summary *exact)
{
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
    printf("%s %6s %8g  %-40s %-26s %s\n", stated ? "*" : " ", bench_fmt_count(nb, sizeof nb, n), p,
           what, measured, verdict);
}

void bench_print_targets(const options *opt, summary (*res)[LIST_MAX][NCONTESTANTS])
{
    tally t = {0, 0, 0};
    char m[64];
    printf("\nTargets: ratios from this run. PASS/FAIL is shown for every n and p run; '*'\n"
           "marks where the issue states the target (bytes and FP rate at n=1e8 for p=0.01\n"
           "and 1e-4, size ratio at n >= 1e7 and speed ratio at n=1e8, both for p=0.01 and\n"
           "shown for other p as information); only those count in the verdict below.\n\n");
    printf("  %6s %8s  %-40s %-26s %s\n", "n", "p", "target", "measured", "verdict");
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

void bench_print_footer(const summary *exact, double seconds)
{
    char b1[32];
    double load[1] = {-1};
    getloadavg(load, 1);
    printf("\nMean URL length %.1f bytes (%llu to %llu); finished in %s, load %.2f.\n",
           exact->ok ? (double)exact->first.url_bytes / (double)exact->first.pushed : 0.0,
           (unsigned long long)exact->first.url_min, (unsigned long long)exact->first.url_max,
           fmt_duration(b1, sizeof b1, seconds), load[0]);
}
