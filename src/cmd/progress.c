/* progress.c - one thread that owns the crawl's signals, its status line
 * and its statistics.
 *
 * Signals are blocked in every thread and taken synchronously here with
 * sigtimedwait(), so the reaction to them is ordinary code: SIGINT and
 * SIGTERM call sieve_crawler_stop() (the engine makes a second call an
 * abort), SIGHUP reopens the output files. The timeout of the same wait
 * paces the status line, the flushing of the records (so that a full disk
 * stops the crawl within a second, and `tail -f` sees whole lines) and
 * the --stats objects.
 *
 * Everything the command writes to stderr while the crawl runs goes
 * through progress_say(), which erases the status line first, under one
 * lock: a message never lands in the middle of the status line. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "progress.h"

#define ERASE "\r\033[K"

static pthread_mutex_t err_lock = PTHREAD_MUTEX_INITIALIZER;
static bool line_shown; /* a status line is on stderr; under err_lock */

struct progress {
    progress_config cfg;
    pthread_t thread;
    sigset_t set;
    int signal;            /* the first stop signal; read after join */
    atomic_bool running;   /* progress_run() was called */
    atomic_bool stopping;  /* progress_stop() was called */
    _Atomic double t0;     /* when the crawl started running */
    uint64_t last_fetched; /* the status line's rate */
    double last_t;
};

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

void progress_say(const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&err_lock);
    if (line_shown)
        fputs(ERASE, stderr);
    line_shown = false;
    fprintf(stderr, "%s\n", msg);
    fflush(stderr);
    pthread_mutex_unlock(&err_lock);
}

static void erase_line(void)
{
    pthread_mutex_lock(&err_lock);
    if (line_shown) {
        fputs(ERASE, stderr);
        fflush(stderr);
    }
    line_shown = false;
    pthread_mutex_unlock(&err_lock);
}

void progress_block_signals(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
}

double progress_elapsed(const progress *p)
{
    return atomic_load(&p->running) ? now_s() - atomic_load(&p->t0) : 0;
}

/* elapsed time, pages, pages/s, transfers in flight, queue, errors */
static void status_line(progress *p)
{
    sieve_crawl_stats st;
    sieve_crawler_stats_get(p->cfg.crawler, &st);
    double t = now_s();
    double rate = t > p->last_t ? (double)(st.fetched - p->last_fetched) / (t - p->last_t) : 0;
    p->last_fetched = st.fetched;
    p->last_t = t;
    unsigned long secs = (unsigned long)(t - atomic_load(&p->t0));
    pthread_mutex_lock(&err_lock);
    fprintf(stderr,
            ERASE "%lu:%02lu:%02lu  pages %llu  %.0f/s  in flight %llu  queue %llu  errors %llu",
            secs / 3600, secs / 60 % 60, secs % 60, (unsigned long long)st.fetched, rate,
            (unsigned long long)st.in_flight, (unsigned long long)st.frontier.queue_len,
            (unsigned long long)st.errors);
    fflush(stderr);
    line_shown = true;
    pthread_mutex_unlock(&err_lock);
}

static void reopen(progress *p, record_writer *w)
{
    if (w == NULL)
        return;
    int rc = record_writer_reopen(w);
    if (rc == -2)
        progress_say("sieve crawl: %s: cannot reopen: %s; writing on to the old file",
                     record_writer_path(w), strerror(errno));
    else if (rc < 0)
        p->cfg.output_failed(p->cfg.ctx, w);
}

static void stop_signal(progress *p, int sig)
{
    const char *name = sig == SIGINT ? "interrupt" : "terminate";
    if (p->signal == 0) {
        p->signal = sig;
        progress_say("sieve crawl: %s: finishing the transfers in flight (at most %g s); "
                     "again to abort them",
                     name, p->cfg.stop_grace_s);
    } else {
        progress_say("sieve crawl: %s: aborting the transfers in flight", name);
    }
    sieve_crawler_stop(p->cfg.crawler);
}

static struct timespec span(double s)
{
    if (!(s > 0))
        s = 0;
    struct timespec t = {.tv_sec = (time_t)s};
    t.tv_nsec = (long)((s - (double)t.tv_sec) * 1e9);
    return t;
}

static void *progress_main(void *arg)
{
    progress *p = arg;
    double next_tick = now_s() + 1, next_stats = INFINITY;
    for (;;) {
        double now = now_s();
        bool running = atomic_load(&p->running);
        if (running && p->cfg.stats != NULL && isinf(next_stats))
            next_stats = atomic_load(&p->t0) + p->cfg.stats_interval_s;
        double next = next_tick < next_stats ? next_tick : next_stats;
        struct timespec wait = span(next - now);
        int sig = sigtimedwait(&p->set, NULL, &wait);
        if (sig == SIGUSR1) {
            if (atomic_load(&p->stopping))
                break;
            continue;
        }
        if (sig == SIGINT || sig == SIGTERM) {
            stop_signal(p, sig);
            continue;
        }
        if (sig == SIGHUP) {
            reopen(p, p->cfg.records);
            reopen(p, p->cfg.stats);
            continue;
        }
        now = now_s();
        if (now >= next_tick) {
            next_tick = now + 1;
            if (record_writer_flush(p->cfg.records) != 0)
                p->cfg.output_failed(p->cfg.ctx, p->cfg.records);
            if (running && p->cfg.status_line)
                status_line(p);
        }
        if (running && now >= next_stats) {
            next_stats += p->cfg.stats_interval_s;
            if (next_stats <= now)
                next_stats = now + p->cfg.stats_interval_s;
            sieve_crawl_stats st;
            sieve_crawler_stats_get(p->cfg.crawler, &st);
            if (record_write_stats(p->cfg.stats, &st, now - atomic_load(&p->t0)) != 0 ||
                record_writer_flush(p->cfg.stats) != 0)
                p->cfg.output_failed(p->cfg.ctx, p->cfg.stats);
        }
    }
    erase_line();
    return NULL;
}

progress *progress_start(const progress_config *cfg)
{
    progress *p = calloc(1, sizeof *p);
    if (p == NULL)
        return NULL;
    p->cfg = *cfg;
    sigemptyset(&p->set);
    sigaddset(&p->set, SIGINT);
    sigaddset(&p->set, SIGTERM);
    sigaddset(&p->set, SIGHUP);
    sigaddset(&p->set, SIGUSR1);
    if (pthread_create(&p->thread, NULL, progress_main, p) != 0) {
        free(p);
        return NULL;
    }
    return p;
}

void progress_run(progress *p)
{
    double t = now_s();
    p->last_t = t; /* read by the thread only after running is seen */
    atomic_store(&p->t0, t);
    atomic_store(&p->running, true);
}

int progress_stop(progress *p)
{
    atomic_store(&p->stopping, true);
    pthread_kill(p->thread, SIGUSR1);
    pthread_join(p->thread, NULL);
    int sig = p->signal;
    free(p);
    return sig;
}
