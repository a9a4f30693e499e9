/* progress.c - one thread that owns the crawl's signals and its status line.
 *
 * Signals are blocked in every thread and taken synchronously here with
 * sigtimedwait(), so the reaction to them can be ordinary code: the first
 * SIGINT or SIGTERM closes the frontier (workers stop taking URLs and
 * finish what they hold), a second aborts the transfers in flight. The
 * one-second timeout of the same wait paces the status line. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"

struct progress {
    crawl *c;
    pthread_t thread;
    sigset_t set;
    int signal;
    int tty;
    struct timespec t0;
    uint64_t last_fetched;
    double last_t;
};

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void status_line(progress *p)
{
    sieve_frontier_stats st;
    sieve_frontier_stats_get(p->c->frontier, &st);
    uint64_t fetched = atomic_load(&p->c->n.fetched);
    double t = now_s();
    double rate = t > p->last_t ? (double)(fetched - p->last_fetched) / (t - p->last_t) : 0;
    p->last_fetched = fetched;
    p->last_t = t;
    fprintf(stderr, "\r\033[Kpages %llu  %.0f/s  queue %llu  seen ~%.0f  fp %.2g  errors %llu",
            (unsigned long long)fetched, rate, (unsigned long long)st.queue_len, st.est_count,
            st.est_fp_rate, (unsigned long long)atomic_load(&p->c->n.errors));
    fflush(stderr);
}

static void *progress_main(void *arg)
{
    progress *p = arg;
    struct timespec tick = {.tv_sec = 1};
    for (;;) {
        int sig = sigtimedwait(&p->set, NULL, &tick);
        if (sig == SIGUSR1)
            break;
        if (sig == SIGINT || sig == SIGTERM) {
            if (p->signal == 0) {
                p->signal = sig;
                fprintf(stderr, "%ssieve: %s: finishing the pages in flight; again to abort\n",
                        p->tty ? "\r\033[K" : "", sig == SIGINT ? "interrupt" : "terminate");
                sieve_frontier_close(p->c->frontier);
            } else {
                atomic_store(&p->c->abort_now, true);
            }
            continue;
        }
        if (p->tty)
            status_line(p);
    }
    if (p->tty)
        fputs("\r\033[K", stderr);
    return NULL;
}

progress *progress_start(crawl *c)
{
    progress *p = calloc(1, sizeof *p);
    if (p == NULL)
        return NULL;
    p->c = c;
    p->tty = !c->opts->quiet && isatty(STDERR_FILENO);
    p->last_t = now_s();
    sigemptyset(&p->set);
    sigaddset(&p->set, SIGINT);
    sigaddset(&p->set, SIGTERM);
    sigaddset(&p->set, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &p->set, NULL);
    if (pthread_create(&p->thread, NULL, progress_main, p) != 0) {
        free(p);
        return NULL;
    }
    return p;
}

int progress_stop(progress *p)
{
    pthread_kill(p->thread, SIGUSR1);
    pthread_join(p->thread, NULL);
    int sig = p->signal;
    free(p);
    return sig;
}
