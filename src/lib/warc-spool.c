/* warc-spool.c - a record's block on its way to the archive.
 *
 * A WARC record's header comes first and holds the block's length and
 * digests, which are known only once the block has been fed whole. So the
 * block is stored as it is fed, and appended after its header at the end.
 * Small blocks (the common page) stay in a buffer that grows up to
 * `limit`; past it the buffer becomes the write buffer of an unlinked
 * temporary file (O_TMPFILE, else mkstemp() and unlink()), so a 10 MiB
 * body costs `limit` bytes of memory, and the file vanishes with its
 * descriptor even if the process is killed. At the end the file is copied
 * into the archive with copy_file_range(), which moves the bytes inside
 * the kernel (or shares extents on filesystems that can).
 *
 * For .gz archives the spool holds the block deflated as it is fed, by
 * whichever thread runs the record's jobs (warc.c). A record must be one gzip member,
 * and its header (known last) comes first in it, so the member is built
 * from two raw deflate streams, as pigz joins its pieces:
 *
 *     gzip header (10 bytes)
 *     deflate(WARC header)   flushed with Z_SYNC_FLUSH: byte-aligned, not final
 *     deflate(block, CRLF CRLF)   the spool: a separate stream, finished
 *     CRC-32 (crc32_combine of the two parts) and length mod 2^32
 *
 * An inflater reads the blocks of both streams in turn; the second stream
 * never refers back into the first, which is allowed and simply unused.
 * Only the small header is compressed at the end, so appending a finished
 * record holds the archive's lock for a copy, never for compression.
 *
 * Deflate streams are pooled (warc_zpool): deflateInit2() and deflateEnd()
 * per record made the allocator map and unmap a quarter megabyte each
 * time, and on a 7 KB page those page faults and TLB flushes cost ten
 * times the compression itself (6 MB/s against 60). deflateReset() keeps
 * the memory and clears only the hash table. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bytes.h"
#include "io.h"
#include "warc-internal.h"

/* Output staged from deflate before it is stored. */
#define DEFLATE_OUT (16 * 1024)

/* Largest piece handed to zlib at once: avail_in is an unsigned int. */
#define DEFLATE_IN_MAX (1u << 30)

/* Streams a pool keeps at most; more in use at once are freed when given
 * back. */
#define POOL_MAX 4096

void warc_zpool_init(warc_zpool *p, int level, int window_bits, int mem_level)
{
    memset(p, 0, sizeof *p);
    pthread_mutex_init(&p->lock, NULL);
    p->level = level;
    p->window_bits = window_bits;
    p->mem_level = mem_level;
}

z_stream *warc_zpool_get(warc_zpool *p)
{
    pthread_mutex_lock(&p->lock);
    z_stream *z = p->n ? p->free[--p->n] : NULL;
    pthread_mutex_unlock(&p->lock);
    if (z)
        return z;
    z = calloc(1, sizeof *z);
    if (z && deflateInit2(z, p->level, Z_DEFLATED, -p->window_bits, p->mem_level,
                          Z_DEFAULT_STRATEGY) != Z_OK) {
        free(z);
        z = NULL;
    }
    return z;
}

static void z_free(z_stream *z)
{
    deflateEnd(z);
    free(z);
}

void warc_zpool_put(warc_zpool *p, z_stream *z)
{
    if (!z)
        return;
    if (deflateReset(z) != Z_OK) {
        z_free(z);
        return;
    }
    pthread_mutex_lock(&p->lock);
    if (p->n == p->cap && p->cap < POOL_MAX) {
        size_t cap = p->cap ? p->cap * 2 : 16;
        z_stream **v = realloc(p->free, cap * sizeof *v);
        if (v) {
            p->free = v;
            p->cap = cap;
        }
    }
    bool kept = p->n < p->cap;
    if (kept)
        p->free[p->n++] = z;
    pthread_mutex_unlock(&p->lock);
    if (!kept)
        z_free(z);
}

void warc_zpool_free(warc_zpool *p)
{
    for (size_t i = 0; i < p->n; i++)
        z_free(p->free[i]);
    free(p->free);
    pthread_mutex_destroy(&p->lock);
    memset(p, 0, sizeof *p);
}

void warc_spool_init(warc_spool *s, const char *dir, size_t limit, warc_zpool *pool)
{
    memset(s, 0, sizeof *s);
    s->fd = -1;
    s->dir = dir;
    s->limit = limit;
    s->pool = pool;
    s->crc = (uint32_t)crc32(0L, Z_NULL, 0);
}

static int open_tmp(const char *dir)
{
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0)
        return fd;
    /* Filesystems without O_TMPFILE: a named file, unlinked at once. */
    char path[4096];
    if (snprintf(path, sizeof path, "%s/.sieve-warc-XXXXXX", dir) >= (int)sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    fd = mkostemp(path, O_CLOEXEC);
    if (fd >= 0)
        unlink(path);
    return fd;
}

/* Moves the buffered bytes into the temporary file. */
static int flush_mem(warc_spool *s)
{
    if (s->fd < 0) {
        s->fd = open_tmp(s->dir);
        if (s->fd < 0)
            return SIEVE_EIO;
    }
    int rc = io_write_all(s->fd, s->mem, s->mem_len);
    s->mem_len = 0;
    return rc;
}

/* Makes the buffer hold need bytes (at most the limit): it grows by
 * doubling, so a small block never costs the whole limit. */
static int reserve(warc_spool *s, size_t need)
{
    if (need <= s->mem_cap)
        return SIEVE_OK;
    size_t cap = s->mem_cap ? s->mem_cap : 4096;
    while (cap < need)
        cap *= 2;
    if (cap > s->limit)
        cap = s->limit;
    unsigned char *p = realloc(s->mem, cap);
    if (!p)
        return SIEVE_ENOMEM;
    s->mem = p;
    s->mem_cap = cap;
    return SIEVE_OK;
}

/* Stores bytes as they are (raw, or already deflated). */
static int store(warc_spool *s, const void *data, size_t len)
{
    if (!len)
        return SIEVE_OK;
    s->size += len;
    if (s->mem_len + len > s->limit) {
        int rc = flush_mem(s);
        if (rc)
            return rc;
        if (len >= s->limit)
            return io_write_all(s->fd, data, len);
    }
    int rc = reserve(s, s->mem_len + len);
    if (rc)
        return rc;
    memcpy(s->mem + s->mem_len, data, len);
    s->mem_len += len;
    return SIEVE_OK;
}

static int deflate_some(warc_spool *s, const unsigned char *data, size_t len, int flush)
{
    unsigned char out[DEFLATE_OUT];
    s->z->next_in = (unsigned char *)data;
    s->z->avail_in = (unsigned)len;
    int zr;
    do {
        s->z->next_out = out;
        s->z->avail_out = sizeof out;
        zr = deflate(s->z, flush);
        if (zr == Z_STREAM_ERROR)
            return SIEVE_ENOMEM;
        int rc = store(s, out, sizeof out - s->z->avail_out);
        if (rc)
            return rc;
    } while (s->z->avail_out == 0 || (flush == Z_FINISH && zr != Z_STREAM_END));
    return SIEVE_OK;
}

static int z_start(warc_spool *s)
{
    if (!s->z)
        s->z = warc_zpool_get(s->pool);
    return s->z ? SIEVE_OK : SIEVE_ENOMEM;
}

int warc_spool_write(warc_spool *s, const void *data, size_t len)
{
    if (!s->pool)
        return store(s, data, len);
    if (z_start(s) != SIEVE_OK)
        return SIEVE_ENOMEM;
    const unsigned char *p = data;
    while (len) {
        size_t n = len < DEFLATE_IN_MAX ? len : DEFLATE_IN_MAX;
        s->crc = (uint32_t)crc32(s->crc, p, (unsigned)n);
        s->fed += n;
        int rc = deflate_some(s, p, n, Z_NO_FLUSH);
        if (rc)
            return rc;
        p += n;
        len -= n;
    }
    return SIEVE_OK;
}

int warc_spool_finish(warc_spool *s)
{
    if (s->finished)
        return SIEVE_OK;
    s->finished = true;
    int rc = SIEVE_OK;
    if (s->pool) {
        rc = z_start(s);
        if (!rc)
            rc = deflate_some(s, NULL, 0, Z_FINISH);
        warc_zpool_put(s->pool, s->z);
        s->z = NULL;
    }
    if (!rc && s->fd >= 0)
        rc = flush_mem(s);
    return rc;
}

/* The bytes of the temporary file, by copy_file_range() where the kernel
 * can, else through a buffer. */
static int copy_file(int from, uint64_t size, int to)
{
    loff_t off = 0;
    while ((uint64_t)off < size) {
        ssize_t n = copy_file_range(from, &off, to, NULL, (size_t)(size - (uint64_t)off), 0);
        if (n > 0)
            continue;
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0 || errno == EXDEV || errno == ENOSYS || errno == EOPNOTSUPP || errno == EINVAL ||
            errno == EBADF)
            break;
        return SIEVE_EIO;
    }
    enum { CHUNK = 64 * 1024 };
    char *buf = (uint64_t)off < size ? malloc(CHUNK) : NULL;
    if ((uint64_t)off < size && !buf)
        return SIEVE_ENOMEM;
    int rc = SIEVE_OK;
    while (!rc && (uint64_t)off < size) {
        size_t want = size - (uint64_t)off < CHUNK ? (size_t)(size - (uint64_t)off) : CHUNK;
        ssize_t n = pread(from, buf, want, off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            rc = SIEVE_EIO;
            break;
        }
        rc = io_write_all(to, buf, (size_t)n);
        off += n;
    }
    free(buf);
    return rc;
}

int warc_spool_copy_to(warc_spool *s, int fd)
{
    if (s->fd < 0)
        return io_write_all(fd, s->mem, s->mem_len);
    return copy_file(s->fd, s->size, fd);
}

void warc_spool_free(warc_spool *s)
{
    if (s->z)
        warc_zpool_put(s->pool, s->z); /* a block abandoned midway */
    if (s->fd >= 0)
        close(s->fd);
    free(s->mem);
    memset(s, 0, sizeof *s);
    s->fd = -1;
}

void warc_spool_reuse(warc_spool *s, size_t keep)
{
    const char *dir = s->dir;
    size_t limit = s->limit;
    warc_zpool *pool = s->pool;
    unsigned char *mem = s->mem_cap <= keep ? s->mem : NULL;
    size_t cap = mem ? s->mem_cap : 0;
    if (mem)
        s->mem = NULL;
    warc_spool_free(s);
    warc_spool_init(s, dir, limit, pool);
    s->mem = mem;
    s->mem_cap = cap;
}

int warc_gzip_head(const char *text, size_t len, warc_zpool *heads, const warc_spool *body,
                   warc_buf *out, unsigned char trailer[8])
{
    /* Magic, deflate, no flags, no time, no extra flags, Unix. */
    static const unsigned char gz[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
    out->len = 0;
    int rc = warc_buf_add(out, gz, sizeof gz);
    if (rc)
        return rc;
    z_stream *z = warc_zpool_get(heads);
    if (!z)
        return SIEVE_ENOMEM;
    /* Room for any deflate output of len bytes and the flush marker. */
    size_t room = deflateBound(z, (uLong)len) + 16;
    rc = warc_buf_add(out, NULL, room);
    if (!rc) {
        out->len -= room;
        z->next_in = (unsigned char *)text;
        z->avail_in = (unsigned)len;
        z->next_out = (unsigned char *)out->data + out->len;
        z->avail_out = (unsigned)room;
        if (deflate(z, Z_SYNC_FLUSH) != Z_OK || z->avail_in != 0 || z->avail_out == 0)
            rc = SIEVE_ENOMEM;
        out->len += room - z->avail_out;
    }
    warc_zpool_put(heads, z);
    if (rc)
        return rc;
    uLong crc = crc32(0L, (const unsigned char *)text, (unsigned)len);
    crc = crc32_combine(crc, body->crc, (z_off_t)body->fed);
    le_put32(trailer, (uint32_t)crc);
    le_put32(trailer + 4, (uint32_t)(len + body->fed));
    return SIEVE_OK;
}
