/* archive.h - `sieve crawl --warc`: every transfer of the crawl into a
 * WARC archive, through the engine's public wire callbacks, and the CDXJ
 * index of it at the end. */
#ifndef SIEVE_ARCHIVE_H
#define SIEVE_ARCHIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sieve/crawl.h"
#include "sieve/log.h"
#include "sieve/warc.h"

typedef struct archive archive;

typedef struct archive_config {
    const char *path;        /* --warc FILE */
    uint64_t max_bytes;      /* --warc-max-size; 0: one file */
    int gzip_level;          /* --warc-gzip-level */
    bool resume;             /* a resumed crawl (--state): go on with the archive
                                rather than replace it */
    const char *const *info; /* warcinfo fields, "name: value" */
    size_t n_info;
    sieve_logger logger;
} archive_config;

/* Opens the archive and writes its first warcinfo record. A new crawl
 * replaces the files of an archive of the same name (and their numbered
 * files), as -o replaces its file; a resumed one cuts the last file back
 * to its last whole fetch, keeps it, and goes on in the next numbered
 * file.
 * Returns SIEVE_OK, or a status with the reason told to the logger. */
int archive_open(archive **out, const archive_config *cfg);

/* The wire callbacks of sieve/crawl.h, for this archive. Each returns
 * SIEVE_OK, or a status when the archive cannot be written: the caller
 * should stop the crawl (the archive's errno says why). */
int archive_request(archive *a, sieve_crawl_transfer *t, const char *data, size_t len);
int archive_response_head(archive *a, sieve_crawl_transfer *t, const char *line, size_t len);
int archive_response_body(archive *a, sieve_crawl_transfer *t, const char *data, size_t len);
int archive_transfer_end(archive *a, sieve_crawl_transfer *t);

/* on_wait: appends what the worker's transfers ended since its last wait,
 * and releases their records. */
void archive_wait(archive *a, unsigned worker);

/* Where a transfer's response was stored, for its record. */
typedef struct archive_place {
    const char *name; /* the file's name; NULL: not stored. Valid until archive_close() */
    uint64_t offset;  /* of the response record */
    char digest[40];  /* its WARC-Payload-Digest */
} archive_place;

/* From on_record: where the transfer's response was stored, and the
 * transfer's state freed. */
void archive_take(archive *a, const sieve_crawl_transfer *t, archive_place *at);

/* fsyncs what was written. SIEVE_OK or SIEVE_EIO. */
int archive_sync(archive *a);

/* What the compression threads of a .gz archive cost: their CPU, and
 * the workers' waits for room in their queue. */
void archive_stats(archive *a, sieve_warc_stats *out);

/* Closes the archive (after the crawl: every transfer has ended). Returns
 * SIEVE_OK or SIEVE_EIO. NULL is a no-op. */
int archive_close(archive *a);

/* Writes the CDXJ index of the archive's files at path (cfg's path and
 * series) to out_path. SIEVE_OK, or a status told to the logger. */
int archive_index(const archive_config *cfg, const char *out_path);

#endif
