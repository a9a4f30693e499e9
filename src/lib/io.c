/* io.c - whole reads and writes: see io.h.
 *
 * One call asks for at most IO_MAX bytes, since Linux moves at most about
 * 2 GiB a call and other systems refuse counts above SSIZE_MAX; a short
 * count is taken as progress, and a call interrupted by a signal is made
 * again. */
#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#include "io.h"
#include "sieve/status.h"

#define IO_MAX ((size_t)1 << 30)

static size_t cap(size_t len)
{
    return len < IO_MAX ? len : IO_MAX;
}

size_t io_pwrite(int fd, const void *buf, size_t len, uint64_t off)
{
    const unsigned char *p = buf;
    size_t done = 0;
    while (done < len) {
        ssize_t w = pwrite(fd, p + done, cap(len - done), (off_t)(off + done));
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            break;
        }
        done += (size_t)w;
    }
    return done;
}

int io_pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
    return io_pwrite(fd, buf, len, off) == len ? SIEVE_OK : SIEVE_EIO;
}

int io_write_all(int fd, const void *buf, size_t len)
{
    const unsigned char *p = buf;
    while (len > 0) {
        ssize_t w = write(fd, p, cap(len));
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            return SIEVE_EIO;
        }
        p += w;
        len -= (size_t)w;
    }
    return SIEVE_OK;
}

/* off < 0: read(2) from the file's position; else pread(2) at off.
 * Returns the bytes read, fewer than len only at the end of the file, or
 * -1 with errno set. */
static ssize_t read_at(int fd, void *buf, size_t len, int64_t off)
{
    unsigned char *p = buf;
    size_t got = 0;
    while (got < len) {
        ssize_t r = off < 0 ? read(fd, p + got, cap(len - got))
                            : pread(fd, p + got, cap(len - got), (off_t)off + (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

static int status_of(ssize_t got, size_t len)
{
    return got < 0 ? SIEVE_EIO : (size_t)got < len ? SIEVE_ETRUNCATED : SIEVE_OK;
}

ssize_t io_pread(int fd, void *buf, size_t len, uint64_t off)
{
    if (off > INT64_MAX) {
        errno = EINVAL;
        return -1;
    }
    return read_at(fd, buf, len, (int64_t)off);
}

int io_read_all(int fd, void *buf, size_t len)
{
    return status_of(read_at(fd, buf, len, -1), len);
}

int io_pread_all(int fd, void *buf, size_t len, uint64_t off)
{
    return status_of(io_pread(fd, buf, len, off), len);
}
