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
 * For .gz archives a record must be one gzip member, and its header
 * (known last) comes first in it. A block that fits the limit (the common
 * page) is kept as fed, and once its header is made the two are deflated
 * together, in one call to libdeflate:
 *
 *     gzip header (10 bytes), deflate(WARC header, block, CRLF CRLF),
 *     CRC-32 and length mod 2^32
 *
 * At the same level and about the same size, libdeflate took 0.7 times
 * zlib's CPU at level 6 and half at level 1 on 7 KB pages, and zlib spent
 * on each 550-byte header almost a quarter of what libdeflate spends on a
 * 7 KB page, as it builds its Huffman trees for every block
 * (bench/results/warc.txt, sets 27 to 29). A block that outgrows the
 * limit goes through a zlib stream as it is fed, the bytes kept so far
 * first, so a 10 MiB body still costs the limit's memory and a stream's;
 * its member is built from two raw deflate streams, as pigz joins its
 * pieces:
 *
 *     gzip header (10 bytes)
 *     deflate(WARC header)   flushed with Z_SYNC_FLUSH: byte-aligned, not final
 *     deflate(block, CRLF CRLF)   the spool: a separate stream, finished
 *     CRC-32 (crc32_combine of the two parts) and length mod 2^32
 *
 * An inflater reads the blocks of both streams in turn; the second stream
 * never refers back into the first, which is allowed and simply unused.
 * A record is framed before the archive's lock is taken, so appending it
 * holds the lock for a copy; only a fetch framed against a file that a
 * rotation then closed is framed (and a kept block deflated) again under
 * the lock.
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

#include <libdeflate.h>

#include "bytes.h"
#include "io.h"
#include "warc-internal.h"

/* Output staged from deflate before it is stored. */
#define DEFLATE_OUT (16 * 1024)

/* Largest piece handed to zlib at once: avail_in is an unsigned int. */
#define DEFLATE_IN_MAX (1u << 30)

/* Streams (and compressors) a pool keeps at most; more in use at once are
 * freed when given back. */
#define POOL_MAX 4096

void warc_zpool_init(warc_zpool *p, int level, int window_bits, int mem_level)
{
    memset(p, 0, sizeof *p);
    pthread_mutex_init(&p->lock, NULL);
    p->level = level;
    p->window_bits = window_bits;
    p->mem_level = mem_level;
}

/* One of the kept objects of l, or NULL. */
static void *pool_take(warc_zpool *p, warc_zfree *l)
{
    pthread_mutex_lock(&p->lock);
    void *x = l->n ? l->v[--l->n] : NULL;
    pthread_mutex_unlock(&p->lock);
    return x;
}

/* Keeps x in l; false when the list is full and x is the caller's to free. */
static bool pool_keep(warc_zpool *p, warc_zfree *l, void *x)
{
    pthread_mutex_lock(&p->lock);
    if (l->n == l->cap && l->cap < POOL_MAX) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        void **v = realloc(l->v, cap * sizeof *v);
        if (v) {
            l->v = v;
            l->cap = cap;
        }
    }
    bool kept = l->n < l->cap;
    if (kept)
        l->v[l->n++] = x;
    pthread_mutex_unlock(&p->lock);
    return kept;
}

z_stream *warc_zpool_get(warc_zpool *p)
{
    z_stream *z = pool_take(p, &p->streams);
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
    if (z && (deflateReset(z) != Z_OK || !pool_keep(p, &p->streams, z)))
        z_free(z);
}

/* A compressor for whole blocks at the pool's level, or NULL. */
static struct libdeflate_compressor *whole_get(warc_zpool *p)
{
    struct libdeflate_compressor *c = pool_take(p, &p->whole);
    return c ? c : libdeflate_alloc_compressor(p->level);
}

static void whole_put(warc_zpool *p, struct libdeflate_compressor *c)
{
    if (!pool_keep(p, &p->whole, c))
        libdeflate_free_compressor(c);
}

void warc_zpool_free(warc_zpool *p)
{
    for (size_t i = 0; i < p->streams.n; i++)
        z_free(p->streams.v[i]);
    free(p->streams.v);
    for (size_t i = 0; i < p->whole.n; i++)
        libdeflate_free_compressor(p->whole.v[i]);
    free(p->whole.v);
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

int warc_open_tmp(const char *dir)
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
        s->fd = warc_open_tmp(s->dir);
        if (s->fd < 0)
            return SIEVE_EIO;
    }
    int rc = io_write_all(s->fd, s->mem, s->mem_len);
    s->mem_len = 0;
    return rc;
}

/* Makes a buffer hold need bytes (at most limit): it grows by doubling,
 * so a small block never costs the whole limit. */
static int grow(unsigned char **buf, size_t *cap, size_t need, size_t limit)
{
    if (need <= *cap)
        return SIEVE_OK;
    size_t n = *cap ? *cap : 4096;
    while (n < need)
        n *= 2;
    if (n > limit)
        n = limit;
    unsigned char *p = realloc(*buf, n);
    if (!p)
        return SIEVE_ENOMEM;
    *buf = p;
    *cap = n;
    return SIEVE_OK;
}

static int reserve(warc_spool *s, size_t need)
{
    return grow(&s->mem, &s->mem_cap, need, s->limit);
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

/* Deflates bytes into the block's stream. */
static int stream_in(warc_spool *s, const unsigned char *p, size_t len)
{
    if (len)
        s->crc = libdeflate_crc32(s->crc, p, len);
    while (len) {
        size_t n = len < DEFLATE_IN_MAX ? len : DEFLATE_IN_MAX;
        int rc = deflate_some(s, p, n, Z_NO_FLUSH);
        if (rc)
            return rc;
        p += n;
        len -= n;
    }
    return SIEVE_OK;
}

/* The block goes through a zlib stream from here on, the bytes kept so
 * far first; their buffer goes, as a block this big is rare. */
static int start_streaming(warc_spool *s)
{
    if (z_start(s) != SIEVE_OK)
        return SIEVE_ENOMEM;
    int rc = stream_in(s, s->raw, s->raw_len);
    free(s->raw);
    s->raw = NULL;
    s->raw_len = s->raw_cap = 0;
    return rc;
}

/* Keeps bytes of a block to be deflated whole. */
static int keep_raw(warc_spool *s, const void *data, size_t len)
{
    int rc = grow(&s->raw, &s->raw_cap, s->raw_len + len, s->limit);
    if (rc)
        return rc;
    memcpy(s->raw + s->raw_len, data, len);
    s->raw_len += len;
    return SIEVE_OK;
}

int warc_spool_write(warc_spool *s, const void *data, size_t len)
{
    if (!s->pool)
        return store(s, data, len);
    if (!len)
        return SIEVE_OK;
    s->fed += len;
    if (!s->z && s->raw_len + len <= s->limit)
        return keep_raw(s, data, len);
    int rc = s->z ? SIEVE_OK : start_streaming(s);
    return rc ? rc : stream_in(s, data, len);
}

int warc_spool_finish(warc_spool *s)
{
    if (s->finished)
        return SIEVE_OK;
    s->finished = true;
    int rc = SIEVE_OK;
    if (s->pool) {
        if (!s->z) {
            s->whole = true; /* deflated with its header (warc_gzip_member) */
            return SIEVE_OK;
        }
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
    free(s->raw);
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
    unsigned char *raw = s->raw_cap <= keep ? s->raw : NULL;
    size_t raw_cap = raw ? s->raw_cap : 0;
    if (raw)
        s->raw = NULL;
    warc_spool_free(s);
    warc_spool_init(s, dir, limit, pool);
    s->mem = mem;
    s->mem_cap = cap;
    s->raw = raw;
    s->raw_cap = raw_cap;
}

/* Magic, deflate, no flags, no time, no extra flags, Unix. */
static const unsigned char gz[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};

/* The member of a kept block: its header and block deflated together.
 * The spool's buffer, unused while the block is kept, holds the two side
 * by side for libdeflate, which takes one buffer; the block stays kept,
 * should the record be framed again. */
static int whole_member(const char *text, size_t len, warc_spool *s, warc_buf *out,
                        unsigned char trailer[8])
{
    size_t total = len + s->raw_len;
    int rc = grow(&s->mem, &s->mem_cap, total, total);
    if (rc)
        return rc;
    memcpy(s->mem, text, len);
    if (s->raw_len)
        memcpy(s->mem + len, s->raw, s->raw_len);
    struct libdeflate_compressor *c = whole_get(s->pool);
    if (!c)
        return SIEVE_ENOMEM;
    size_t bound = libdeflate_deflate_compress_bound(c, total);
    out->len = 0;
    rc = warc_buf_add(out, gz, sizeof gz);
    if (!rc)
        rc = warc_buf_add(out, NULL, bound);
    if (!rc) {
        out->len -= bound;
        size_t n = libdeflate_deflate_compress(c, s->mem, total, out->data + out->len, bound);
        out->len += n;
        rc = n ? SIEVE_OK : SIEVE_ENOMEM;
    }
    whole_put(s->pool, c);
    if (rc)
        return rc;
    le_put32(trailer, libdeflate_crc32(0, s->mem, total));
    le_put32(trailer + 4, (uint32_t)total);
    return SIEVE_OK;
}

int warc_gzip_member(const char *text, size_t len, warc_zpool *heads, warc_spool *body,
                     warc_buf *out, unsigned char trailer[8])
{
    if (body->whole)
        return whole_member(text, len, body, out, trailer);
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
