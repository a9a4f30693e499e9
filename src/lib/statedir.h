/* statedir.h - the durable frontier's state directory: its lock and its
 * small checked files (internal).
 *
 * statedir_lock() makes one process the directory's owner until
 * statedir_unlock() or its exit; a second owner, in this process or
 * another, is refused with the holder's pid. The owner replaces small
 * files atomically (a crash leaves the old file or the new one) and reads
 * them back only if they are whole, unaltered, of the kind and the format
 * version asked for; statedir.c describes the format. The calls on one
 * statedir come from one thread at a time. */
#ifndef SIEVE_STATEDIR_H
#define SIEVE_STATEDIR_H

#include <stddef.h>
#include <stdint.h>

#include "sieve/status.h"

/* The kind of files that name none: a file kind is 7 characters, stored
 * with a NUL as the file's 8-byte magic. */
#define STATEDIR_KIND_GENERIC "SIEVEST"

/* Largest data a file may carry. */
#define STATEDIR_DATA_MAX (1ull << 34)

/* The lock file's name; statedir_write() refuses it. */
#define STATEDIR_LOCK_NAME "LOCK"

typedef struct statedir statedir;

/* Creates dir if missing (one level), takes an exclusive flock() on
 * dir/LOCK without waiting and writes this process's pid in it. A
 * directory locked already gives SIEVE_ESTATE and "DIR is in use by
 * process PID" in msg (cap bytes, may be NULL). SIEVE_EIO with errno for
 * system errors. */
int statedir_lock(statedir **out, const char *dir, char *msg, size_t cap);

/* Clears the pid, releases the lock and frees sd. NULL is a no-op. */
void statedir_unlock(statedir *sd);

/* The directory's path as given to statedir_lock(). */
const char *statedir_path(const statedir *sd);

/* Replaces file name (a plain name in the directory, not "LOCK", not
 * ending in ".tmp") with len bytes of data, under a header of kind (NULL:
 * STATEDIR_KIND_GENERIC) and format version: writes name.tmp, fsyncs it,
 * renames it over name and fsyncs the directory. SIEVE_EIO with errno,
 * SIEVE_EINVAL, SIEVE_ETOOLONG above STATEDIR_DATA_MAX. */
int statedir_write(statedir *sd, const char *name, const char *kind, uint32_t version,
                   const void *data, size_t len);

/* Reads file name back into *data (malloc'ed, NUL-terminated past *len
 * bytes, for the caller to free). Refuses, with statedir_message() naming
 * the file, what is wrong and what to do: SIEVE_ETRUNCATED for a file cut
 * short, SIEVE_ECHECKSUM for altered bytes, SIEVE_EFORMAT for another
 * kind of file or bytes after the data, SIEVE_EVERSION for another format
 * version. SIEVE_EIO with errno otherwise (ENOENT: no such file). */
int statedir_read(statedir *sd, const char *name, const char *kind, uint32_t version, void **data,
                  size_t *len);

/* The last failure's explanation, "" when there was none. */
const char *statedir_message(const statedir *sd);

#endif
