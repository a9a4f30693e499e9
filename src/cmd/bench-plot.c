/* bench-plot.c - `sieve bench --plot`: bytes per URL (resident for the
 * whole frontier, the seen-set's own for --seen-set) and ns per push
 * against n, drawn by gnuplot from the run's CSV.
 *
 * gnuplot reads the CSV itself, filtering rows by contestant and p, so the
 * plot shows exactly the figures of the CSV and the table. The file name
 * and gnuplot's presence are checked before the run, not after hours of
 * measuring. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "commands.h"

static bool in_path(const char *prog)
{
    const char *path = getenv("PATH");
    if (path == NULL || *path == '\0')
        path = "/usr/bin:/bin";
    while (*path != '\0') {
        size_t len = strcspn(path, ":");
        char full[4096];
        /* an empty entry means the current directory */
        int w = len == 0 ? snprintf(full, sizeof full, "./%s", prog)
                         : snprintf(full, sizeof full, "%.*s/%s", (int)len, path, prog);
        if (w > 0 && (size_t)w < sizeof full && access(full, X_OK) == 0)
            return true;
        path += len + (path[len] == ':');
    }
    return false;
}

static const char *plot_terminal(const char *file)
{
    size_t len = strlen(file);
    if (len > 4 && strcmp(file + len - 4, ".svg") == 0)
        return "svg size 1100,460 dynamic background rgb 'white' font 'sans,11'";
    if (len > 4 && strcmp(file + len - 4, ".png") == 0)
        return "pngcairo size 1100,460 font 'sans,10'";
    return NULL;
}

/* gnuplot strings in single quotes: a quote is written twice. */
static void gp_quoted(FILE *gp, const char *s)
{
    fputc('\'', gp);
    for (; *s != '\0'; s++) {
        if (*s == '\'')
            fputc('\'', gp);
        fputc(*s, gp);
    }
    fputc('\'', gp);
}

/* One plot command: a line per contestant and p (exact once), filtered out
 * of the CSV; missing points are skipped without breaking a line. */
static void gp_plot(FILE *gp, const options *opt, const char *csv, int column)
{
    const char *sep = "plot ";
    int first = opt->seen_only ? SEEN_FIRST : FRONTIER_FIRST;
    int last = opt->seen_only ? SEEN_LAST : FRONTIER_LAST;
    int name_col = opt->seen_only ? 3 : 5; /* the contestant column */
    for (int c = first; c <= last; c++) {
        bool exact = bench_contestants[c].kind == SIEVE_SEEN_EXACT;
        for (size_t k = 0; k < opt->p_count; k++) {
            if (exact && k > 0)
                break;
            fputs(sep, gp);
            gp_quoted(gp, csv);
            fprintf(gp,
                    " skip 1 using 1:(strcol(%d) eq '%s' && $2 == %.17g ? $%d : NaN) "
                    "with linespoints lw 2 title '%s",
                    name_col, bench_contestants[c].name, opt->p[k], column,
                    bench_contestants[c].name);
            if (!exact)
                fprintf(gp, " p=%g", opt->p[k]);
            fputc('\'', gp);
            sep = ", \\\n     ";
        }
    }
    fputc('\n', gp);
}

int bench_plot(const options *opt, const char *csv)
{
    FILE *gp = popen("gnuplot", "w");
    if (gp == NULL) {
        fprintf(stderr, "sieve bench: cannot run gnuplot: %s\n", strerror(errno));
        return EXIT_FAILURE_RUN;
    }
    uint64_t lo = opt->n[0], hi = opt->n[0];
    for (size_t i = 1; i < opt->n_count; i++) {
        lo = opt->n[i] < lo ? opt->n[i] : lo;
        hi = opt->n[i] > hi ? opt->n[i] : hi;
    }
    fprintf(gp, "set terminal %s\nset output ", plot_terminal(opt->plot));
    gp_quoted(gp, opt->plot);
    /* a margin on both sides, and a range even when a single n was run */
    fprintf(gp, "\nset xrange [%g:%g]", (double)lo / 2, (double)hi * 2);
    fputs("\nset datafile separator ','\n"
          "set datafile missing NaN\n"
          "set logscale x\nset grid\n"
          "set xlabel 'URLs pushed (n)'\n"
          "set format x '10^{%T}'\n"
          "set multiplot layout 1,2\n"
          "set logscale y\n",
          gp);
    fprintf(gp, "set ylabel '%s'\nset title '%s'\nset key center right\n",
            opt->seen_only ? "bytes per URL (seen-set)" : "resident bytes per URL",
            opt->seen_only ? "seen-set memory" : "frontier memory, URLs queued");
    gp_plot(gp, opt, csv, bench_csv_column_bytes(opt));
    fputs("unset logscale y\nset yrange [0:*]\nset ylabel 'ns per push (median)'\n"
          "set title 'push time'\nset key top left box opaque\n",
          gp);
    gp_plot(gp, opt, csv, bench_csv_column_ns(opt));
    fputs("unset multiplot\n", gp);
    int st = pclose(gp);
    if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "sieve bench: gnuplot failed to draw %s\n", opt->plot);
        return EXIT_FAILURE_RUN;
    }
    printf("\nPlot written to %s\n", opt->plot);
    return EXIT_OK;
}

int bench_plot_check(const options *opt)
{
    if (opt->plot == NULL)
        return -1;
    if (plot_terminal(opt->plot) == NULL) {
        fprintf(stderr, "sieve bench: --plot %s: the file name must end in .svg or .png\n",
                opt->plot);
        return EXIT_USAGE;
    }
    if (!in_path("gnuplot")) {
        fprintf(stderr, "sieve bench: --plot needs gnuplot, which is not installed (not found "
                        "in PATH); install it or drop --plot\n");
        return EXIT_FAILURE_RUN;
    }
    return -1;
}
