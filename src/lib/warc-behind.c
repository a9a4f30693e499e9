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
 * So a thread of the archive's makes the file durable as it grows: each
 * time write_behind bytes were appended to the current file, it calls
 * fdatasync() on it, off the appending threads and outside the archive's
 * lock, and the fsync that must wait finds at most a window's worth left.
 * It used to call sync_file_range(SYNC_FILE_RANGE_WRITE), which starts
 * the writing without waiting, but sends no cache flush: on a disk that
 * caches writes (a virtual machine's among them) the bytes were "written"
 * into that cache, and the final fsync's flush still waited for all of
 * them - 70 ms for the benchmark's 145 MB, however small the windows
 * (bench/results/warc.txt, set 25). The thread works on a duplicate of
 * the file's descriptor, so a rotation never waits for it: at worst the
 * old file gets a sync it no longer needed.
 *
 * A duplicate shares the file's error state with the original: a write
 * error that fdatasync() reports here would not be reported again to the
 * fsync that follows. So a failure here is kept, and every later sync,
 * rotation and close of the archive fails with it. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "warc-archive.h"

/* Whether what was appended since the last start is due. */
static bool due(const sieve_warc *w)
{
    return w->fd >= 0 && w->size - w->behind >= w->o.write_behind;
}

static void write_out(sieve_warc *w, int fd)
{
    int expected = 0;
    if (fdatasync(fd) != 0)
        atomic_compare_exchange_strong(&w->behind_errno, &expected, errno ? errno : EIO);
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
            write_out(w, fd);
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

int warc_behind_failed(sieve_warc *w)
{
    int e = atomic_load(&w->behind_errno);
    if (e == 0)
        return SIEVE_OK;
    errno = e;
    return SIEVE_EIO;
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
