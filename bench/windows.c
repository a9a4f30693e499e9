/* windows.c - what per-host windows cost and what they buy: a frontier
 * whose queue spills (sieve_frontier_open() with queue_memory) against the
 * same URLs in a frontier that keeps its whole queue in memory, in one
 * run (docs/durable-frontier.md, "Per-host windows").
 *
 *   meson setup build-release --buildtype=release && ninja -C build-release
 *   cc -std=c11 -D_GNU_SOURCE -O2 -Iinclude bench/windows.c -o /tmp/windows \
 *      -Lbuild-release/src/lib -Wl,-rpath,$PWD/build-release/src/lib -lsieve
 *   /tmp/windows [--urls N] [--budget MIB] [--reps R] [--dir DIR]
 *
 * DIR (default: a new directory under /tmp, removed at the end) must be
 * empty: what lies under it after the pushes is what a case wrote.
 *
 * Cases, each run --reps times (3), each run in a forked child, medians
 * printed:
 *   one-host ram     N URLs of one host into sieve_frontier_new(), then
 *                    popped and done: the whole queue in memory
 *   one-host budget  the same into sieve_frontier_open(NULL) with
 *                    queue_memory: past its window (an eighth of the
 *                    budget) the host's URLs wait in run files under DIR
 *   held-first       budget as above; a held host's N/2 URLs are pushed
 *                    after a budget's worth of 100 other hosts' and before
 *                    N/2 more of theirs, all popped while it is held; then
 *                    it is released and its own are popped. Counts the
 *                    other hosts' URLs popped while it was held.
 * Per case: ns per push and per pop (pop plus done), the child's CPU
 * seconds, its peak resident memory, and the bytes under DIR after the
 * pushes (journal and runs). Nothing is fetched: this is the frontier
 * alone. */
#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sieve/sieve.h"

typedef struct result {
    double push_ns, pop_ns, cpu_s, peak_mib, disk_mib;
    uint64_t others_while_held, others;
} result;

static uint64_t n_urls = 2000000;
static uint64_t budget = 16u << 20;
static const char *workdir; /* an empty directory: the spills' temporary states */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double peak_mib(void)
{
    FILE *fp = fopen("/proc/self/status", "r");
    char line[256];
    double kib = 0;
    while (fp != NULL && fgets(line, sizeof line, fp) != NULL)
        if (strncmp(line, "VmHWM:", 6) == 0)
            kib = atof(line + 6);
    if (fp != NULL)
        fclose(fp);
    return kib / 1024;
}

/* Bytes of the files under path, recursively. */
static uint64_t tree_bytes(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return 0;
    if (!S_ISDIR(st.st_mode))
        return (uint64_t)st.st_blocks * 512;
    uint64_t sum = 0;
    DIR *d = opendir(path);
    for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char sub[1024];
        snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
        sum += tree_bytes(sub);
    }
    if (d != NULL)
        closedir(d);
    return sum;
}

static sieve_frontier *make(bool spill)
{
    sieve_frontier_config cfg;
    sieve_frontier_config_init(&cfg);
    cfg.seen.capacity = n_urls * 2;
    cfg.politeness = (sieve_politeness){
        .enabled = true, .max_conns = 1u << 30, .delay_s = 0, .max_delay_s = 0, .partitions = 1};
    sieve_frontier *f = NULL;
    int rc;
    if (spill) {
        cfg.queue_memory = budget;
        setenv("TMPDIR", workdir, 1);
        rc = sieve_frontier_open(&f, NULL, &cfg);
    } else {
        rc = sieve_frontier_new(&f, &cfg);
    }
    if (rc != SIEVE_OK) {
        fprintf(stderr, "windows: cannot make a frontier: %s\n", sieve_strerror(rc));
        exit(1);
    }
    return f;
}

/* URL i of host h ("held" for the held one). */
static size_t url_of(char *buf, size_t cap, const char *host, uint64_t i)
{
    return (size_t)snprintf(buf, cap, "http://%s.test/section/%llu/page-%llu.html", host,
                            (unsigned long long)(i % 97), (unsigned long long)i);
}

/* Pushes n URLs, 64 a call; host_of(i) names URL i's host. Returns the
 * seconds spent in push_batch(). */
static double push(sieve_frontier *f, uint64_t from, uint64_t n, const char *(*host_of)(uint64_t))
{
    char text[64][96];
    sieve_url u[64];
    double spent = 0;
    for (uint64_t at = from; at < from + n;) {
        size_t k = 0;
        for (; k < 64 && at < from + n; k++, at++) {
            size_t len = url_of(text[k], sizeof text[k], host_of(at), at);
            u[k] = (sieve_url){.url = text[k], .len = len, .depth = (uint32_t)at};
        }
        double t = now();
        if (sieve_frontier_push_batch(f, u, k, NULL) < 0) {
            fprintf(stderr, "windows: push failed\n");
            exit(1);
        }
        spent += now() - t;
    }
    return spent;
}

/* Pops and finishes what is ready; counts those not of the held host. */
static uint64_t pop_ready(sieve_frontier *f, double *spent, uint64_t *others)
{
    char buf[256];
    sieve_url u;
    uint64_t n = 0;
    double t = now();
    while (sieve_frontier_pop(f, buf, sizeof buf, &u, 0) == SIEVE_OK) {
        if (others != NULL && memcmp(u.url, "http://held.", 12) != 0)
            ++*others;
        sieve_frontier_done(f, &u);
        n++;
    }
    *spent += now() - t;
    return n;
}

static const char *one_host(uint64_t i)
{
    (void)i;
    return "single";
}

static uint64_t held_from, held_to;

static const char *held_or_other(uint64_t i)
{
    static char name[32];
    if (i >= held_from && i < held_to)
        return "held";
    snprintf(name, sizeof name, "other%llu", (unsigned long long)(i % 100));
    return name;
}

static result run_case(int which)
{
    result r = {0};
    sieve_frontier *f = make(which != 0);
    double push_s = 0, pop_s = 0;
    uint64_t popped = 0;
    if (which < 2) {
        push_s = push(f, 0, n_urls, one_host);
        r.disk_mib = tree_bytes(workdir) / 1048576.0;
        popped = pop_ready(f, &pop_s, NULL);
    } else {
        uint64_t filler = budget / 64; /* more than the budget holds */
        held_from = filler;
        held_to = filler + n_urls / 2;
        sieve_frontier_hold_host(f, "held.test", 9, true);
        push_s = push(f, 0, held_to + n_urls / 2, held_or_other);
        r.disk_mib = tree_bytes(workdir) / 1048576.0;
        r.others = filler + n_urls / 2;
        popped = pop_ready(f, &pop_s, &r.others_while_held);
        sieve_frontier_hold_host(f, "held.test", 9, false);
        popped += pop_ready(f, &pop_s, NULL);
    }
    uint64_t pushed = which < 2 ? n_urls : held_to + n_urls / 2;
    r.push_ns = push_s * 1e9 / (double)pushed;
    r.pop_ns = pop_s * 1e9 / (double)(popped ? popped : 1);
    sieve_frontier_free(f);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    r.cpu_s = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
              ru.ru_stime.tv_usec / 1e6;
    r.peak_mib = peak_mib();
    if (popped != pushed) {
        fprintf(stderr, "windows: %llu popped of %llu pushed\n", (unsigned long long)popped,
                (unsigned long long)pushed);
        exit(1);
    }
    return r;
}

static result in_child(int which)
{
    int fds[2];
    if (pipe(fds) != 0)
        exit(1);
    pid_t pid = fork();
    if (pid == 0) {
        result r = run_case(which);
        _exit(write(fds[1], &r, sizeof r) == sizeof r ? 0 : 1);
    }
    close(fds[1]);
    result r;
    if (read(fds[0], &r, sizeof r) != sizeof r) {
        fprintf(stderr, "windows: a run failed\n");
        exit(1);
    }
    close(fds[0]);
    int status;
    waitpid(pid, &status, 0);
    return r;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    int reps = 3;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--urls") == 0)
            n_urls = strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--budget") == 0)
            budget = strtoull(argv[i + 1], NULL, 10) << 20;
        else if (strcmp(argv[i], "--reps") == 0)
            reps = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--dir") == 0)
            workdir = argv[i + 1];
    }
    if (reps < 1 || reps > 15 || n_urls < 2 || budget == 0) {
        fprintf(stderr, "usage: windows [--urls N] [--budget MIB] [--reps 1..15] [--dir DIR]\n");
        return 2;
    }
    char made[64] = "";
    if (workdir == NULL) {
        snprintf(made, sizeof made, "/tmp/sieve-windows-XXXXXX");
        if (mkdtemp(made) == NULL) {
            perror("windows: mkdtemp");
            return 1;
        }
        workdir = made;
    }
    const char *names[] = {"one-host ram", "one-host budget", "held-first"};
    printf("windows: %llu URLs, budget %llu MiB, %d runs a case (medians)\n",
           (unsigned long long)n_urls, (unsigned long long)(budget >> 20), reps);
    printf("%-16s %9s %9s %7s %9s %9s %s\n", "case", "ns/push", "ns/pop", "CPU s", "peak MiB",
           "disk MiB", "others popped while held");
    for (int c = 0; c < 3; c++) {
        double v[6][15];
        result last = {0};
        for (int k = 0; k < reps; k++) {
            last = in_child(c);
            v[0][k] = last.push_ns, v[1][k] = last.pop_ns, v[2][k] = last.cpu_s;
            v[3][k] = last.peak_mib, v[4][k] = last.disk_mib;
        }
        char held[64] = "-";
        if (c == 2)
            snprintf(held, sizeof held, "%llu of %llu", (unsigned long long)last.others_while_held,
                     (unsigned long long)last.others);
        printf("%-16s %9.1f %9.1f %7.2f %9.1f %9.1f %s\n", names[c], median(v[0], reps),
               median(v[1], reps), median(v[2], reps), median(v[3], reps), median(v[4], reps),
               held);
    }
    if (made[0] != '\0')
        rmdir(made);
    return 0;
}
