/* warc-zq.c - the compression threads of a .gz archive and their hand-off
 * queue.
 *
 * Deflate at level 6 runs at about 40 MB/s a core, several times the cost
 * of everything else a crawl does with a page, and done in the thread
 * that received the bytes it stalls that thread's transfers. So the
 * feeding thread only copies each piece into the queue and goes back to
 * its transfers; the archive's own threads hash, compress and spool it.
 *
 * Ordering. A record is one deflate stream, and a deflate stream takes its
 * input in order, from one thread at a time. So the queue is kept per
 * stream (one per fetch): a stream with pieces waiting is on the ready
 * list once, a thread that takes it is its only runner until its pieces
 * are done (busy), and pieces fed meanwhile wait behind them. Different
 * fetches compress on different threads at once; one fetch never does.
 *
 * Hand-offs. Waking a thread costs a futex call and a context switch,
 * several microseconds of CPU, as much as deflating a kilobyte. So jobs
 * are gathered: a stream's jobs are copied into its open piece (the
 * caller's buffer is gone when its callback returns) until it holds
 * WARC_ZQ_PIECE bytes or the caller waits for the stream, and only then
 * handed to the threads. A 7 KB page - request head, response head, body,
 * end - is one hand-off instead of five.
 *
 * Memory. Each stream's open piece holds at most WARC_ZQ_PIECE bytes, and
 * the bytes handed over, queued or being compressed, are bounded: a
 * feeding thread that would pass the bound waits until a thread has
 * finished a piece. That wait is backpressure from the disk and the
 * cores, and it is counted (how often, how long) so a crawl can say what
 * archiving cost it.
 *
 * A job's error sticks to its stream: later pieces of it are dropped
 * unrun, and the next push or wait returns the error.
 *
 * Ends that do not wait. A caller that must not sleep through its
 * stream's jobs (a crawl worker with other transfers to drive) finishes
 * the stream instead of waiting for it: the thread that runs its last
 * job calls the stream's on_idle, outside the lock, and lets go of it. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "warc-internal.h"

/* What a piece costs the bound beyond its bytes (its bookkeeping). */
#define PIECE_COST 64

/* Jobs, one after the other in a piece's data: a job header, then len
 * bytes. */
typedef struct job {
    int op;
    size_t len;
} job;

typedef struct piece {
    struct piece *next;
    size_t used;
    unsigned char data[]; /* WARC_ZQ_PIECE bytes */
} piece;

struct warc_zq {
    pthread_mutex_t lock;
    pthread_cond_t work; /* threads: a stream is ready, or stop */
    pthread_cond_t room; /* feeders: bytes were freed */
    pthread_cond_t idle; /* waiters: a stream went idle */
    warc_zq_fn fn;
    void *ctx;
    size_t bound, queued; /* bytes, pieces' cost included */
    warc_zq_stream *ready, *ready_tail;
    bool stop;
    unsigned n_threads;
    pthread_t *threads;
    warc_zq_stats stats;
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void make_ready(warc_zq *q, warc_zq_stream *s)
{
    s->next_ready = NULL;
    if (q->ready_tail)
        q->ready_tail->next_ready = s;
    else
        q->ready = s;
    q->ready_tail = s;
    s->listed = true;
    pthread_cond_signal(&q->work);
}

static void unlist(warc_zq *q, warc_zq_stream *s)
{
    warc_zq_stream **p = &q->ready, *prev = NULL;
    while (*p && *p != s) {
        prev = *p;
        p = &(*p)->next_ready;
    }
    if (!*p)
        return;
    *p = s->next_ready;
    if (q->ready_tail == s)
        q->ready_tail = prev;
    s->listed = false;
}

static piece *pop_piece(warc_zq_stream *s)
{
    piece *p = s->head;
    if (p) {
        s->head = p->next;
        if (!s->head)
            s->tail = NULL;
    }
    return p;
}

static void release(warc_zq *q, piece *p)
{
    q->queued -= p->used + PIECE_COST;
    pthread_cond_broadcast(&q->room);
    free(p);
}

/* Runs a piece's jobs in order; stops at the first error. */
static int run_piece(warc_zq *q, warc_zq_stream *s, const piece *p)
{
    int err = SIEVE_OK;
    for (size_t at = 0; at < p->used && !err;) {
        job j;
        memcpy(&j, p->data + at, sizeof j);
        at += sizeof j;
        err = q->fn(q->ctx, s, j.op, p->data + at, j.len);
        at += j.len;
    }
    return err;
}

/* Runs one stream's pieces, in order, until it has none; the lock is
 * held on entry and exit, and dropped around each piece. Returns the
 * stream's on_idle when it was finished: the caller calls it, unlocked. */
static void (*run_stream(warc_zq *q, warc_zq_stream *s))(void *, warc_zq_stream *)
{
    s->busy = true;
    piece *p;
    while ((p = pop_piece(s))) {
        int err = s->err;
        pthread_mutex_unlock(&q->lock);
        if (!err)
            err = run_piece(q, s, p);
        pthread_mutex_lock(&q->lock);
        if (err && !s->err)
            s->err = err;
        release(q, p);
    }
    s->busy = false;
    if (s->waiting)
        pthread_cond_broadcast(&q->idle);
    return s->on_idle;
}

static void *thread_main(void *arg)
{
    warc_zq *q = arg;
    pthread_mutex_lock(&q->lock);
    for (;;) {
        warc_zq_stream *s = q->ready;
        if (!s) {
            if (q->stop)
                break;
            pthread_cond_wait(&q->work, &q->lock);
            continue;
        }
        q->ready = s->next_ready;
        if (!q->ready)
            q->ready_tail = NULL;
        s->listed = false;
        void (*on_idle)(void *, warc_zq_stream *) = run_stream(q, s);
        if (on_idle) {
            pthread_mutex_unlock(&q->lock);
            on_idle(q->ctx, s);
            pthread_mutex_lock(&q->lock);
        }
    }
    pthread_mutex_unlock(&q->lock);
    return NULL;
}

int warc_zq_start(warc_zq **out, unsigned threads, size_t bound, warc_zq_fn fn, void *ctx)
{
    *out = NULL;
    warc_zq *q = calloc(1, sizeof *q);
    pthread_t *t = calloc(threads, sizeof *t);
    if (!q || !t) {
        free(q);
        free(t);
        return SIEVE_ENOMEM;
    }
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->work, NULL);
    pthread_cond_init(&q->room, NULL);
    pthread_cond_init(&q->idle, NULL);
    q->fn = fn;
    q->ctx = ctx;
    q->bound = bound;
    q->threads = t;
    for (; q->n_threads < threads; q->n_threads++)
        if (pthread_create(&t[q->n_threads], NULL, thread_main, q) != 0)
            break;
    if (q->n_threads == 0) {
        warc_zq_stop(q);
        return SIEVE_ENOMEM;
    }
    *out = q;
    return SIEVE_OK;
}

/* Hands the stream's open piece to the threads, after waiting for room
 * for it. */
static int hand_over(warc_zq *q, warc_zq_stream *s)
{
    piece *p = s->open;
    if (!p)
        return SIEVE_OK;
    s->open = NULL;
    size_t cost = p->used + PIECE_COST;
    pthread_mutex_lock(&q->lock);
    /* An empty queue takes any piece, so a bound below a piece's size
     * cannot wait forever. */
    if (q->queued > 0 && q->queued + cost > q->bound && !s->err) {
        uint64_t t0 = now_ns();
        q->stats.full_waits++;
        while (q->queued > 0 && q->queued + cost > q->bound && !s->err)
            pthread_cond_wait(&q->room, &q->lock);
        q->stats.full_wait_ns += now_ns() - t0;
    }
    int err = s->err;
    if (!err) {
        q->queued += cost;
        if (s->tail)
            s->tail->next = p;
        else
            s->head = p;
        s->tail = p;
        if (!s->busy && !s->listed)
            make_ready(q, s);
    }
    pthread_mutex_unlock(&q->lock);
    if (err)
        free(p);
    return err;
}

/* Copies one job of at most WARC_ZQ_PIECE - sizeof(job) bytes into the
 * open piece, handing the piece over first when it has no room. */
static int add_job(warc_zq *q, warc_zq_stream *s, int op, const void *data, size_t len)
{
    if (s->open && s->open->used + sizeof(job) + len > WARC_ZQ_PIECE) {
        int rc = hand_over(q, s);
        if (rc)
            return rc;
    }
    if (!s->open) {
        if (!(s->open = malloc(sizeof(piece) + WARC_ZQ_PIECE)))
            return SIEVE_ENOMEM;
        s->open->next = NULL;
        s->open->used = 0;
    }
    job j = {.op = op, .len = len};
    memcpy(s->open->data + s->open->used, &j, sizeof j);
    if (len)
        memcpy(s->open->data + s->open->used + sizeof j, data, len);
    s->open->used += sizeof j + len;
    return SIEVE_OK;
}

int warc_zq_push(warc_zq *q, warc_zq_stream *s, int op, const void *data, size_t len)
{
    /* A job's error shows at the next hand-over or wait, under the lock. */
    const unsigned char *d = data;
    do {
        size_t n = len < WARC_ZQ_PIECE - sizeof(job) ? len : WARC_ZQ_PIECE - sizeof(job);
        int rc = add_job(q, s, op, d, n);
        if (rc)
            return rc;
        len -= n;
        if (len) /* a job of no bytes (a close, an end) may come with NULL */
            d += n;
    } while (len);
    return SIEVE_OK;
}

int warc_zq_wait(warc_zq *q, warc_zq_stream *s)
{
    int rc = hand_over(q, s);
    pthread_mutex_lock(&q->lock);
    if (s->head || s->busy) {
        uint64_t t0 = now_ns();
        s->waiting = true;
        while (s->head || s->busy)
            pthread_cond_wait(&q->idle, &q->lock);
        s->waiting = false;
        q->stats.end_wait_ns += now_ns() - t0;
    }
    if (rc && !s->err)
        s->err = rc;
    int err = s->err;
    pthread_mutex_unlock(&q->lock);
    return err;
}

void warc_zq_finish(warc_zq *q, warc_zq_stream *s, void (*on_idle)(void *ctx, warc_zq_stream *s))
{
    int rc = hand_over(q, s);
    pthread_mutex_lock(&q->lock);
    if (rc && !s->err)
        s->err = rc;
    bool idle = !s->head && !s->busy;
    if (!idle)
        s->on_idle = on_idle;
    pthread_mutex_unlock(&q->lock);
    if (idle)
        on_idle(q->ctx, s);
}

void warc_zq_drop(warc_zq *q, warc_zq_stream *s)
{
    free(s->open);
    s->open = NULL;
    pthread_mutex_lock(&q->lock);
    piece *p;
    while ((p = pop_piece(s)))
        release(q, p);
    if (s->listed)
        unlist(q, s);
    s->waiting = true;
    while (s->busy)
        pthread_cond_wait(&q->idle, &q->lock);
    s->waiting = false;
    pthread_mutex_unlock(&q->lock);
}

/* The threads' CPU time is read from their clocks when asked for, not
 * summed around each stream: a thread's clock is a system call (the vDSO
 * has no thread clocks), and two a stream made 40,000 of them in a .gz
 * crawl of 20,000 pages (bench/results/warc.txt, set 30). */
void warc_zq_get_stats(warc_zq *q, warc_zq_stats *out)
{
    pthread_mutex_lock(&q->lock);
    *out = q->stats;
    pthread_mutex_unlock(&q->lock);
    out->cpu_ns = 0;
    for (unsigned i = 0; i < q->n_threads; i++) {
        clockid_t clock;
        struct timespec ts;
        if (pthread_getcpuclockid(q->threads[i], &clock) == 0 && clock_gettime(clock, &ts) == 0)
            out->cpu_ns += (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    }
}

void warc_zq_stop(warc_zq *q)
{
    if (!q)
        return;
    pthread_mutex_lock(&q->lock);
    q->stop = true;
    pthread_cond_broadcast(&q->work);
    pthread_mutex_unlock(&q->lock);
    /* Threads finish what is ready before they see stop. */
    for (unsigned i = 0; i < q->n_threads; i++)
        pthread_join(q->threads[i], NULL);
    pthread_cond_destroy(&q->work);
    pthread_cond_destroy(&q->room);
    pthread_cond_destroy(&q->idle);
    pthread_mutex_destroy(&q->lock);
    free(q->threads);
    free(q);
}
