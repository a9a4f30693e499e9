/* warc.c - the WARC archive: its files, rotation, warcinfo records and
 * the one lock. A fetch's records are built in warc-fetch.c and appended
 * here.
 *
 * Locking. The archive's mutex is taken once per fetch, by whoever runs
 * its end job (once per batch for a batch's fetches), to append the
 * finished records with writev() and copy_file_range(). The headers are
 * made before, against the file that was current then (its warcinfo ID
 * goes into them), read without the lock: each file's identity is
 * published once, whole, and never changed (struct file_id). Taking the
 * lock a second time for it made two workers wait on each other's
 * appends twice as often, and a wait on a futex puts the worker to sleep
 * with its transfers. If the file changed in between - another thread
 * rotated - the small headers are remade under the lock, which happens
 * once per file. Hashing, spooling and compressing take no lock. Deflate
 * streams come from a pool and go back to it reset (warc-spool.c says
 * why).
 *
 * Durability. Each record is appended with plain write(2)s into the
 * file's descriptor (no stdio buffer), so once fetch_end() returns (or
 * the callback of fetch_end_async() or of a batch's flush is called) its
 * records are in the kernel and survive the process being killed. A
 * failed append is cut back with ftruncate(), so a full disk leaves no
 * torn record behind. sync() and close() fsync; a rotation fsyncs the
 * file it leaves.
 * Opening in append mode first reads the file through (warc-read.c) to
 * find its last complete record, and cuts a torn tail there. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "warc-archive.h"

#define FORMAT      "WARC File Format 1.1"
#define CONFORMS_TO "http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"

/* ---- options ---- */

void sieve_warc_options_init(sieve_warc_options *o)
{
    memset(o, 0, sizeof *o);
    o->mode = SIEVE_WARC_CREATE;
    o->gzip_level = SIEVE_WARC_GZIP_LEVEL;
    o->gzip_threads = SIEVE_WARC_GZIP_THREADS;
    o->gzip_queue_bytes = SIEVE_WARC_GZIP_QUEUE;
    o->spool_memory = SIEVE_WARC_SPOOL_MEMORY;
    o->write_behind = SIEVE_WARC_WRITE_BEHIND;
}

/* An info field: "name: value", one line. */
static bool info_ok(const char *s)
{
    if (!s || strpbrk(s, "\r\n"))
        return false;
    const char *colon = strstr(s, ": ");
    return colon && colon > s;
}

static int check_options(const sieve_warc_options *o)
{
    if (o->gzip_level < 1 || o->gzip_level > 9 || o->spool_memory < 4096)
        return SIEVE_EINVAL;
    if (o->gzip_threads > 64 || o->gzip_queue_bytes == 0)
        return SIEVE_EINVAL;
    if (o->mode != SIEVE_WARC_CREATE && o->mode != SIEVE_WARC_APPEND && o->mode != SIEVE_WARC_NEXT)
        return SIEVE_EINVAL;
    if (o->software && strpbrk(o->software, "\r\n"))
        return SIEVE_EINVAL;
    if (o->n_info && !o->info)
        return SIEVE_EINVAL;
    for (size_t i = 0; i < o->n_info; i++)
        if (!info_ok(o->info[i]))
            return SIEVE_EINVAL;
    return SIEVE_OK;
}

/* ---- writing ---- */

static int writev_all(int fd, struct iovec *iov, int n)
{
    while (n > 0) {
        ssize_t done = writev(fd, iov, n);
        if (done < 0 && errno == EINTR)
            continue;
        if (done < 0)
            return SIEVE_EIO;
        while (n > 0 && (size_t)done >= iov->iov_len) {
            done -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + done;
            iov->iov_len -= (size_t)done;
        }
    }
    return SIEVE_OK;
}

/* Bytes a finished record takes in the file. */
uint64_t warc_rec_stored(const sieve_warc *w, const struct rec *r)
{
    return r->out.len + r->spool.size + (w->gzip ? 8 : 0);
}

/* Appends finished records at the file's position: headers and spools
 * kept in memory in one writev(), spooled files copied in between. */
int warc_emit(sieve_warc *w, struct rec *const *recs, int n)
{
    struct iovec iov[64];
    int k = 0, rc = SIEVE_OK;
    for (int i = 0; i < n && !rc; i++) {
        struct rec *r = recs[i];
        if (k + 3 > (int)(sizeof iov / sizeof iov[0])) {
            rc = writev_all(w->fd, iov, k);
            k = 0;
            if (rc)
                break;
        }
        iov[k++] = (struct iovec){r->out.data, r->out.len};
        if (r->spool.fd >= 0) {
            rc = writev_all(w->fd, iov, k);
            k = 0;
            if (!rc)
                rc = warc_spool_copy_to(&r->spool, w->fd);
        } else if (r->spool.mem_len) {
            iov[k++] = (struct iovec){r->spool.mem, r->spool.mem_len};
        }
        if (w->gzip)
            iov[k++] = (struct iovec){r->gz_trailer, 8};
    }
    if (!rc && k)
        rc = writev_all(w->fd, iov, k);
    return rc;
}

/* Cuts the file back to where a failed append began. */
void warc_cut_back(sieve_warc *w, uint64_t at)
{
    int e = errno;
    if (ftruncate(w->fd, (off_t)at) != 0 || lseek(w->fd, (off_t)at, SEEK_SET) < 0)
        sieve_log(&w->o.logger, SIEVE_LOG_ERROR, "warc: cannot cut %s back to %llu: %s",
                  w->paths[w->n_paths - 1], (unsigned long long)at, strerror(errno));
    errno = e;
}

/* Makes r's WARC header (and its gzip framing) from its text. */
int warc_rec_frame(sieve_warc *w, struct rec *r, const warc_buf *text)
{
    if (!w->gzip) {
        r->out.len = 0;
        return warc_buf_add(&r->out, text->data, text->len);
    }
    return warc_gzip_member(text->data, text->len, &w->heads, &r->spool, &r->out, r->gz_trailer);
}

/* ---- records of a fetch ---- */

void warc_rec_init(sieve_warc *w, struct rec *r)
{
    memset(r, 0, sizeof *r);
    warc_spool_init(&r->spool, w->tmp_dir, w->o.spool_memory, w->gzip ? &w->blocks : NULL);
}

void warc_rec_reuse(struct rec *r, size_t keep)
{
    struct rec kept = {.head = r->head, .out = r->out, .spool = r->spool};
    kept.block.ctx = r->block.ctx;
    kept.payload.ctx = r->payload.ctx;
    warc_buf_reuse(&kept.head, keep);
    warc_buf_reuse(&kept.out, keep);
    warc_spool_reuse(&kept.spool, keep);
    *r = kept;
}

void warc_rec_free(struct rec *r)
{
    warc_buf_free(&r->head);
    warc_buf_free(&r->out);
    sieve_sha1_free(&r->block);
    sieve_sha1_free(&r->payload);
    warc_spool_free(&r->spool);
}

/* ---- the warcinfo record ---- */

static int warcinfo_text(const sieve_warc *w, warc_buf *block)
{
    int rc = warc_buf_addf(block,
                           "software: %s\r\nformat: " FORMAT "\r\nconformsTo: " CONFORMS_TO "\r\n",
                           w->software);
    for (size_t i = 0; i < w->o.n_info && !rc; i++)
        rc = warc_buf_addf(block, "%s\r\n", w->info[i]);
    return rc;
}

/* Writes the warcinfo record that starts (or resumes) the current file. */
static int write_warcinfo(sieve_warc *w, const char *name)
{
    warc_buf block = {0}, text = {0};
    struct rec r;
    warc_rec_init(w, &r);
    char date[WARC_DATE_SIZE];
    warc_format_date(warc_now_us(), date);
    int rc = warc_new_id(w->warcinfo_id);
    if (!rc)
        rc = warcinfo_text(w, &block);
    if (!rc)
        rc = sieve_sha1_start(&r.block);
    if (!rc) {
        sieve_sha1_add(&r.block, block.data, block.len);
        sieve_sha1_end(&r.block, r.block_digest);
        rc = warc_spool_write(&r.spool, block.data, block.len);
    }
    if (!rc)
        rc = warc_spool_write(&r.spool, TRAILER, 4);
    if (!rc)
        rc = warc_spool_finish(&r.spool);
    if (!rc)
        rc = warc_buf_addf(&text,
                           "WARC/1.1\r\nWARC-Type: warcinfo\r\nWARC-Record-ID: <%s>\r\n"
                           "WARC-Date: %s\r\nWARC-Filename: %s\r\nWARC-Block-Digest: %s\r\n"
                           "Content-Type: application/warc-fields\r\nContent-Length: %zu\r\n\r\n",
                           w->warcinfo_id, date, name, r.block_digest, block.len);
    if (!rc)
        rc = warc_rec_frame(w, &r, &text);
    if (!rc) {
        struct rec *one = &r;
        rc = warc_emit(w, &one, 1);
        if (rc)
            warc_cut_back(w, w->size);
        else
            w->size += warc_rec_stored(w, &r);
    }
    warc_rec_free(&r);
    warc_buf_free(&block);
    warc_buf_free(&text);
    return rc;
}

/* ---- files ---- */

static int fsync_dir(const char *path)
{
    char *dir = warc_dir_of(path);
    if (!dir)
        return SIEVE_ENOMEM;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(dir);
    if (fd < 0)
        return SIEVE_EIO;
    int rc = fsync(fd) == 0 || errno == EINVAL ? SIEVE_OK : SIEVE_EIO;
    close(fd);
    return rc;
}

/* Where the last of the complete records before end starts, if it is a
 * request: a fetch's two records are appended together, so a request
 * whose response is not there was parted from it by a kill. *start is
 * end when the last record is no request. */
static int lone_request(const char *path, uint64_t end, uint64_t *start)
{
    warc_reader *r;
    int rc = warc_reader_open(&r, path);
    if (rc)
        return rc;
    warc_rec rec;
    *start = end;
    while (warc_reader_next(r, &rec, NULL, NULL) == SIEVE_OK && rec.offset < end)
        *start = strstr(rec.header, "\r\nWARC-Type: request\r\n") ? rec.offset : end;
    warc_reader_free(r);
    return SIEVE_OK;
}

/* Checks an existing file for append: where its last complete fetch
 * ends, cutting a torn tail and a request left without its response.
 * Sets *size. */
static int prepare_append(sieve_warc *w, const char *path, int fd, uint64_t *size)
{
    uint64_t end = 0, records = 0, start = 0;
    int rc = sieve_warc_complete_end(path, &end, &records);
    bool parted = (rc == SIEVE_OK || rc == SIEVE_ETRUNCATED) && records > 0 &&
                  lone_request(path, end, &start) == SIEVE_OK && start < end;
    if (rc == SIEVE_ETRUNCATED || parted) {
        struct stat st;
        fstat(fd, &st);
        uint64_t keep = parted ? start : end;
        sieve_log(&w->o.logger, SIEVE_LOG_WARN,
                  "warc: %s: cutting a torn fetch: the %llu bytes after offset %llu%s", path,
                  (unsigned long long)((uint64_t)st.st_size - keep), (unsigned long long)keep,
                  parted ? " (a request record whose response is missing, and what follows)" : "");
        if (ftruncate(fd, (off_t)keep) != 0)
            return SIEVE_EIO;
        end = keep;
        rc = SIEVE_OK;
    } else if (rc == SIEVE_EFORMAT) {
        sieve_log(&w->o.logger, SIEVE_LOG_ERROR,
                  "warc: %s: not a WARC file after offset %llu; not appending to it", path,
                  (unsigned long long)end);
    }
    *size = end;
    return rc;
}

/* Publishes the current file's identity for the fetches' headers. Under
 * the lock (or before any fetch). */
static void publish_id(sieve_warc *w)
{
    file_id *id = malloc(sizeof *id);
    if (!id) {
        atomic_store_explicit(&w->current, NULL, memory_order_release);
        return;
    }
    id->generation = w->generation;
    memcpy(id->warcinfo_id, w->warcinfo_id, sizeof id->warcinfo_id);
    id->older = w->ids;
    w->ids = id;
    atomic_store_explicit(&w->current, id, memory_order_release);
}

/* Opens path as the current file: created (O_EXCL) unless appending, then
 * its warcinfo record. */
static int open_file(sieve_warc *w, char *path, bool append)
{
    int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (append ? 0 : O_EXCL);
    int fd = open(path, flags, 0644);
    if (fd < 0) {
        int e = errno;
        sieve_log(&w->o.logger, SIEVE_LOG_ERROR, "warc: cannot create %s: %s", path, strerror(e));
        free(path);
        errno = e;
        return SIEVE_EIO;
    }
    uint64_t size = 0;
    int rc = append ? prepare_append(w, path, fd, &size) : SIEVE_OK;
    char **paths = rc ? NULL : realloc(w->paths, (w->n_paths + 1) * sizeof *paths);
    if (!rc && !paths)
        rc = SIEVE_ENOMEM;
    if (!rc && lseek(fd, (off_t)size, SEEK_SET) < 0)
        rc = SIEVE_EIO;
    if (rc) {
        close(fd);
        free(path);
        return rc;
    }
    w->paths = paths;
    w->paths[w->n_paths++] = path;
    w->fd = fd;
    w->size = size;
    w->behind = size;
    /* What an appended file already holds counts as a fetch: the next one
     * may go to a new file rather than take it past max_bytes. */
    w->fetches = size > 0;
    w->generation++;
    if (size == 0)
        fsync_dir(path); /* the new name itself must survive a crash */
    rc = write_warcinfo(w, warc_last_component(path));
    if (rc) {
        /* No fetch goes into a file without its warcinfo, whose id its
         * records would name: from here on the archive has no file, and
         * every fetch fails. */
        int e = errno;
        sieve_log(&w->o.logger, SIEVE_LOG_ERROR, "warc: cannot write to %s: %s", path, strerror(e));
        close(w->fd);
        w->fd = -1;
        errno = e;
    }
    publish_id(w);
    return rc;
}

static int close_file(sieve_warc *w)
{
    if (w->fd < 0)
        return SIEVE_OK;
    int rc = fsync(w->fd) == 0 ? SIEVE_OK : SIEVE_EIO;
    int e = errno;
    if (close(w->fd) != 0) {
        rc = SIEVE_EIO;
        e = errno;
    }
    w->fd = -1;
    errno = e;
    return rc ? rc : warc_behind_failed(w);
}

int warc_rotate(sieve_warc *w)
{
    char *path = warc_series_name(&w->names, w->seq + 1);
    if (!path)
        return SIEVE_ENOMEM;
    int rc = close_file(w);
    if (rc)
        sieve_log(&w->o.logger, SIEVE_LOG_ERROR, "warc: syncing %s failed: %s",
                  w->paths[w->n_paths - 1], strerror(errno));
    w->seq++;
    int orc = open_file(w, path, false);
    return orc ? orc : rc;
}

/* Cuts a torn fetch from the end of path, the archive's last file, which
 * is kept otherwise; SIEVE_EFORMAT, changing nothing, for a file that is
 * not WARC records up to its end. */
static int cut_last_file(sieve_warc *w, const char *path, uint64_t *size)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        sieve_log(&w->o.logger, SIEVE_LOG_ERROR, "warc: cannot open %s: %s", path, strerror(errno));
        return SIEVE_EIO;
    }
    int rc = prepare_append(w, path, fd, size);
    if (rc == SIEVE_OK && fsync(fd) != 0)
        rc = SIEVE_EIO;
    close(fd);
    return rc;
}

/* SIEVE_WARC_NEXT: the last file present (a series' highest, else the
 * single file itself) loses a torn fetch at its end, and the new fetches
 * go to the next numbered file; to the first file when there is none.
 * A last file with no whole record (a kill came before its warcinfo was
 * out) takes the new fetches itself: left empty, it would be a file of
 * the archive that no reader can open. */
static int open_next(sieve_warc *w)
{
    unsigned top = warc_series_highest(&w->names);
    struct stat st;
    bool single = !w->series && stat(w->path, &st) == 0;
    if (!top && !w->series && !single) {
        char *p = strdup(w->path);
        return p ? open_file(w, p, false) : SIEVE_ENOMEM;
    }
    if (top || single) {
        char *last = top ? warc_series_name(&w->names, top) : strdup(w->path);
        uint64_t size = 0;
        int rc = last ? cut_last_file(w, last, &size) : SIEVE_ENOMEM;
        if (rc == SIEVE_OK && size == 0) {
            w->seq = top;
            return open_file(w, last, true);
        }
        free(last);
        if (rc)
            return rc;
    }
    w->seq = top + 1;
    char *p = warc_series_name(&w->names, w->seq);
    return p ? open_file(w, p, false) : SIEVE_ENOMEM;
}

static int open_first(sieve_warc *w)
{
    if (w->o.mode == SIEVE_WARC_NEXT)
        return open_next(w);
    bool append = w->o.mode == SIEVE_WARC_APPEND;
    if (!w->series) {
        char *p = strdup(w->path);
        return p ? open_file(w, p, append) : SIEVE_ENOMEM;
    }
    unsigned top = w->o.mode == SIEVE_WARC_CREATE ? 0 : warc_series_highest(&w->names);
    w->seq = top == 0 ? 1 : top;
    char *p = warc_series_name(&w->names, w->seq);
    return p ? open_file(w, p, append) : SIEVE_ENOMEM;
}

static int copy_strings(sieve_warc *w, const sieve_warc_options *o)
{
    char version[64];
    snprintf(version, sizeof version, "sieve/%s", SIEVE_VERSION);
    w->software = strdup(o->software ? o->software : version);
    w->tmp_dir = o->tmp_dir ? strdup(o->tmp_dir) : warc_dir_of(w->path);
    w->info = calloc(o->n_info + 1, sizeof *w->info);
    if (!w->software || !w->tmp_dir || !w->info)
        return SIEVE_ENOMEM;
    for (size_t i = 0; i < o->n_info; i++)
        if (!(w->info[i] = strdup(o->info[i])))
            return SIEVE_ENOMEM;
    return SIEVE_OK;
}

static void warc_free(sieve_warc *w)
{
    for (size_t i = 0; w->info && i < w->o.n_info; i++)
        free(w->info[i]);
    free(w->info);
    for (size_t i = 0; i < w->n_paths; i++)
        free(w->paths[i]);
    free(w->paths);
    while (w->ids) {
        file_id *older = w->ids->older;
        free(w->ids);
        w->ids = older;
    }
    free(w->software);
    free(w->tmp_dir);
    free(w->path);
    warc_series_free(&w->names);
    warc_zq_stop(w->zq);
    warc_behind_stop(w);
    warc_fetch_free_spares(w);
    warc_zpool_free(&w->blocks);
    warc_zpool_free(&w->heads);
    pthread_mutex_destroy(&w->spare_lock);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

static unsigned compress_threads(const sieve_warc_options *o)
{
    if (o->gzip_threads)
        return o->gzip_threads;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 64 ? 64 : (unsigned)n;
}

int sieve_warc_open(sieve_warc **out, const char *path, const sieve_warc_options *o)
{
    sieve_warc_options defaults;
    if (!o) {
        sieve_warc_options_init(&defaults);
        o = &defaults;
    }
    if (!out || !path || !*path)
        return SIEVE_EINVAL;
    *out = NULL;
    int rc = check_options(o);
    if (rc)
        return rc;
    if (!sieve_sha1_available())
        return SIEVE_ENOMEM;
    sieve_warc *w = calloc(1, sizeof *w);
    if (!w)
        return SIEVE_ENOMEM;
    pthread_mutex_init(&w->lock, NULL);
    pthread_mutex_init(&w->spare_lock, NULL);
    warc_zpool_init(&w->blocks, o->gzip_level, 15, 8);
    warc_zpool_init(&w->heads, o->gzip_level, WARC_HEAD_WINDOW_BITS, WARC_HEAD_MEM_LEVEL);
    w->o = *o;
    w->fd = -1;
    w->series = o->series || o->max_bytes > 0;
    w->gzip = warc_ends_with(path, ".gz");
    w->path = strdup(path);
    rc = w->path ? warc_series_init(&w->names, w->path) : SIEVE_ENOMEM;
    if (!rc)
        rc = copy_strings(w, o);
    if (!rc)
        rc = open_first(w);
    if (!rc && w->gzip && !o->gzip_inline)
        rc = warc_zq_start(&w->zq, compress_threads(o), o->gzip_queue_bytes, warc_fetch_run_op, w);
    if (!rc)
        rc = warc_behind_start(w);
    if (rc) {
        int e = errno;
        close_file(w);
        warc_free(w);
        errno = e;
        return rc;
    }
    *out = w;
    return SIEVE_OK;
}

int sieve_warc_sync(sieve_warc *w)
{
    if (!w)
        return SIEVE_EINVAL;
    /* The fsync runs on a duplicate of the descriptor, outside the lock:
     * appends go on meanwhile, instead of waiting for the disk. Every
     * record appended before the call is in the file it syncs (a rotation
     * in between synced the file it left). */
    pthread_mutex_lock(&w->lock);
    int fd = w->fd >= 0 ? fcntl(w->fd, F_DUPFD_CLOEXEC, 0) : -1;
    bool failed = w->fd >= 0 && fd < 0;
    pthread_mutex_unlock(&w->lock);
    if (fd >= 0) {
        failed = fsync(fd) != 0;
        close(fd);
    }
    return failed ? SIEVE_EIO : warc_behind_failed(w);
}

void sieve_warc_get_stats(sieve_warc *w, sieve_warc_stats *out)
{
    memset(out, 0, sizeof *out);
    if (!w)
        return;
    out->written_behind = atomic_load_explicit(&w->written_behind, memory_order_relaxed);
    if (!w->zq)
        return;
    warc_zq_stats st;
    warc_zq_get_stats(w->zq, &st);
    out->queue_full_waits = st.full_waits;
    out->queue_full_us = st.full_wait_ns / 1000;
    out->end_wait_us = st.end_wait_ns / 1000;
    out->compress_cpu_us = st.cpu_ns / 1000;
}

int sieve_warc_close(sieve_warc *w)
{
    if (!w)
        return SIEVE_OK;
    /* The threads first: what they still hold is appended before the
     * file's last fsync. */
    warc_zq_stop(w->zq);
    w->zq = NULL;
    warc_behind_stop(w);
    int rc = close_file(w);
    if (rc)
        sieve_log(&w->o.logger, SIEVE_LOG_ERROR, "warc: closing %s failed: %s",
                  w->paths[w->n_paths - 1], strerror(errno));
    warc_free(w);
    return rc;
}
