/* index-file.h - a CDXJ index written whole or not at all (index-file.c). */
#ifndef SIEVE_INDEX_FILE_H
#define SIEVE_INDEX_FILE_H

#include <stdbool.h>
#include <stddef.h>

#include "sieve/log.h"
#include "sieve/warc.h"

/* Writes the CDXJ index of files[0..n) (sieve_warc_index()) to path: to a
 * new file "path.tmp-PID" beside it, synced and renamed over path once
 * whole. On failure the new file is removed and path is left as it was.
 * A path that is there and is no regular file (a device, a pipe, a
 * symbolic link) is written in place.
 * Messages go to lg, prefix before each (the option, or ""). Returns
 * sieve_warc_index()'s status (SIEVE_ETRUNCATED: written, a torn last
 * record left out and told), or SIEVE_EIO when the file cannot be made,
 * written, synced or renamed. */
int index_file_write(const char *const *files, size_t n, const char *path, const char *prefix,
                     const sieve_logger *lg);

#endif
