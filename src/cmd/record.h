/* record.h - the crawl's JSON Lines outputs: one line per record, and one
 * object of counters per --stats interval. */
#ifndef SIEVE_RECORD_H
#define SIEVE_RECORD_H

#include <stdbool.h>
#include <stdint.h>

#include "sieve/crawl.h"

typedef struct record_writer record_writer;

/* Opens path for writing, truncating it (append: appending to it), or
 * standard output when path is NULL. Returns 0, or -1 with errno set. */
int record_writer_open(record_writer **out, const char *path, bool append);

/* The path given to open(), NULL for standard output. */
const char *record_writer_path(const record_writer *w);

/* Where a record's response was archived (--warc). */
typedef struct record_where {
    const char *warc_file; /* the WARC file's name; NULL: not archived */
    uint64_t warc_offset;  /* of its response record (.gz: of its gzip member) */
    const char *digest;    /* its WARC-Payload-Digest, for a record without one */
} record_where;

/* Appends one record as a JSON line: url, final_url, status, content_type,
 * bytes, depth, links_found, links_new, elapsed_ms, error, then time,
 * wire_bytes, remote_ip, digest, outcome, attempts, kind, warc_file,
 * warc_offset (docs/record.schema.json). where may be NULL (not archived).
 * Thread-safe; lines never interleave. Returns 0, or -1 with errno set
 * when the output cannot be written (then every later call fails too). */
int record_write(record_writer *w, const sieve_crawl_record *r, const record_where *where);

/* Appends the counters as one JSON line, with the wall-clock time and the
 * seconds since the crawl started. Same contract as record_write(). */
int record_write_stats(record_writer *w, const sieve_crawl_stats *st, double elapsed_s);

/* From now on each line is handed to the kernel before record_write()
 * returns: a kill of the process loses none. */
void record_writer_line_by_line(record_writer *w);

/* Pushes buffered lines to the file and fsyncs it. Same contract as
 * record_write(). */
int record_writer_sync(record_writer *w);

/* Cuts what follows the last newline of the file at path (a line a kill
 * left half written); *cut gets the bytes removed. A missing file is
 * fine. Returns 0, or -1 with errno set. */
int record_file_cut_torn(const char *path, long *cut);

/* Pushes buffered lines to the file. Same contract as record_write(). */
int record_writer_flush(record_writer *w);

/* Closes the file and opens its path again, appending, after flushing what
 * the old one holds; under the writer's lock, so no line is lost or torn.
 * For log rotation: rename the file, then reopen. Standard output is left
 * as it is. Returns 0; -1 with errno set when the old file could not be
 * written (as record_write()); -2 with errno set when the path cannot be
 * opened: the old file is kept and written on. */
int record_writer_reopen(record_writer *w);

/* Flushes and closes; returns 0 or -1 with errno if data was lost. */
int record_writer_close(record_writer *w);

#endif
