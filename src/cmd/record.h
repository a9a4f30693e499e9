/* record.h - one JSON line per fetched URL. */
#ifndef SIEVE_RECORD_H
#define SIEVE_RECORD_H

#include <stdint.h>

typedef struct record_writer record_writer;

typedef struct record {
    const char *url;
    const char *final_url;    /* where a redirect points; else the URL itself */
    long status;              /* HTTP status; 0 when no response came */
    const char *content_type; /* NULL: none */
    uint64_t bytes;           /* body bytes, decompressed */
    uint32_t depth;
    uint64_t links_found; /* links in the page */
    uint64_t links_new;   /* links enqueued (not seen before, in scope) */
    double elapsed_ms;
    const char *error; /* NULL: none */
} record;

/* Opens path for writing (truncating it), or stdout when path is NULL. */
int record_writer_open(record_writer **out, const char *path);

/* Appends one line. Thread-safe; lines never interleave. Returns 0, or -1
 * with errno set when the output cannot be written (then every later call
 * fails too). */
int record_write(record_writer *w, const record *r);

/* Flushes and closes; returns 0 or -1 with errno if data was lost. */
int record_writer_close(record_writer *w);

#endif
