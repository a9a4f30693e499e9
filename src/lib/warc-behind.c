/* warc-behind.c - writing the archive to the disk behind its appends.
 *
 * Appends land in the page cache; the kernel writes them out when it
 * pleases (after half a minute, or when dirty pages pile up), so the fsync
 * that makes them durable - sieve_warc_sync() at a crawl's checkpoint, a
 * rotation, sieve_warc_close() - could find hundreds of megabytes to
 * write; a rotation's holds the archive's lock, so every fetch waits for
 * it. At the end of the crawl benchmark's 20,000 pages that fsync took
 * 0.1 s, 6% of the crawl (bench/results/warc.txt, set 14).
 *
 * So a thread of the archive's starts the writing early: each time
 * write_behind bytes were appended to the current file, it hands those
 * bytes to sync_file_range(SYNC_FILE_RANGE_WRITE), which queues them for
 * the disk and returns without waiting for it. The work the kernel does to
 * write them is the same as in the fsync; it is only done before, off the
 * appending threads and outside the archive's lock. The thread works on
 * a duplicate of the file's descriptor, so a rotation never waits for it:
 * at worst the old file gets a write it no longer needed. Where there is
 * no sync_file_range(), fdatasync() does it, waiting for the disk, still
 * off the appending threads. */
#include <fcntl.h>
#include <unistd.h>

#include "warc-archive.h"

/* Whether what was appended since the last start is due. */
static bool due(const sieve_warc *w)
{
    return w->fd >= 0 && w->size - w->behind >= w->o.write_behind;
}

static void write_out(int fd, uint64_t from, uint64_t to)
{
#ifdef SYNC_FILE_RANGE_WRITE
    /* A failure leaves the bytes to the fsync that comes anyway. */
    (void)sync_file_range(fd, (off_t)from, (off_t)(to - from), SYNC_FILE_RANGE_WRITE);
#else
    (void)from;
    (void)to;
    (void)fdatasync(fd);
#endif
}

static void *behind_main(void *arg)
{
    sieve_warc *w = arg;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (!w->behind_stop && !due(w))
            pthread_cond_wait(&w->behind_cond, &w->lock);
        if (w->behind_stop)
            break;
        int fd = fcntl(w->fd, F_DUPFD_CLOEXEC, 0);
        uint64_t from = w->behind, to = w->size;
        w->behind = to;
        pthread_mutex_unlock(&w->lock);
        if (fd >= 0) {
            write_out(fd, from, to);
            close(fd);
            atomic_fetch_add_explicit(&w->written_behind, to - from, memory_order_relaxed);
        }
        pthread_mutex_lock(&w->lock);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

int warc_behind_start(sieve_warc *w)
{
    if (w->o.write_behind == 0)
        return SIEVE_OK;
    pthread_cond_init(&w->behind_cond, NULL);
    if (pthread_create(&w->behind_thread, NULL, behind_main, w) != 0) {
        pthread_cond_destroy(&w->behind_cond);
        return SIEVE_ENOMEM;
    }
    w->behind_running = true;
    return SIEVE_OK;
}

void warc_behind_kick(sieve_warc *w)
{
    if (w->behind_running && due(w))
        pthread_cond_signal(&w->behind_cond);
}

void warc_behind_stop(sieve_warc *w)
{
    if (!w->behind_running)
        return;
    pthread_mutex_lock(&w->lock);
    w->behind_stop = true;
    pthread_cond_signal(&w->behind_cond);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->behind_thread, NULL);
    pthread_cond_destroy(&w->behind_cond);
    w->behind_running = false;
}
