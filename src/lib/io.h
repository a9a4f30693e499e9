/* io.h - whole reads and writes (internal): read(2), write(2), pread(2)
 * and pwrite(2) retried when interrupted and continued when short, for
 * the files libsieve writes itself (journal, state files, runs, Bloom
 * files, checkpoints, WARC spools). */
#ifndef SIEVE_IO_H
#define SIEVE_IO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Writes len bytes. Returns SIEVE_OK, or SIEVE_EIO with errno set (EIO
 * when write(2) wrote nothing and said no more). */
int io_write_all(int fd, const void *buf, size_t len);

/* Writes len bytes at off. Returns how many were written: len, or fewer
 * with errno set, so that a caller can cut a partial write back. */
size_t io_pwrite(int fd, const void *buf, size_t len, uint64_t off);

/* Writes len bytes at off: SIEVE_OK, or SIEVE_EIO with errno set. */
int io_pwrite_all(int fd, const void *buf, size_t len, uint64_t off);

/* Reads len bytes at off. Returns how many were read: len, or fewer
 * where the file ends; -1 with errno set on an error. */
ssize_t io_pread(int fd, void *buf, size_t len, uint64_t off);

/* Reads len bytes: SIEVE_OK, SIEVE_ETRUNCATED when the file ends first,
 * or SIEVE_EIO with errno set. */
int io_read_all(int fd, void *buf, size_t len);

/* Reads len bytes at off, as io_read_all(). */
int io_pread_all(int fd, void *buf, size_t len, uint64_t off);

#endif
