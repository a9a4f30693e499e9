/* urlgen.h - the URL stream `sieve bench` pushes: synthetic URLs, distinct
 * by construction, or the lines of a file.
 *
 * A stream is read in batches into a urlgen_batch, a buffer allocated (and
 * touched) once, so that producing URLs costs no allocation while the
 * benchmark measures memory and time. */
#ifndef SIEVE_CMD_URLGEN_H
#define SIEVE_CMD_URLGEN_H

#include <stddef.h>
#include <stdint.h>

#include "sieve/frontier.h"

/* URLs per batch: the links of one page arrive together. */
#define URLGEN_BATCH 64

/* Longest line accepted from a URL file: the frontier's default limit. */
#define URLGEN_LINE_MAX 8192

/* A synthetic URL is never longer than this. */
#define URLGEN_SYNTH_MAX 512

/* Synthetic URLs per stream: indices are below this. */
#define URLGEN_INDEX_LIMIT (UINT64_C(1) << 40)

/* Host ranks synthetic URLs are drawn from: the seen-set benchmark's
 * default, and the whole frontier's (per-host scheduling over that many
 * hosts). A few ranks may share a name (a host's name is drawn from its
 * rank), so the distinct hosts can be slightly fewer. */
#define URLGEN_HOSTS          100000
#define URLGEN_HOSTS_FRONTIER 10000
#define URLGEN_HOSTS_MAX      UINT64_C(1000000000)

/* The two synthetic streams. No URL of one equals a URL of the other, and
 * absent URLs live under the reserved top-level domain .invalid, so they are
 * also absent from any real crawl's URL file. */
typedef enum urlgen_stream {
    URLGEN_PRESENT = 0, /* pushed */
    URLGEN_ABSENT = 1,  /* only queried, to measure the false-positive rate */
} urlgen_stream;

/* Writes URL number index (below URLGEN_INDEX_LIMIT) of a synthetic stream
 * over hosts host ranks (1 to URLGEN_HOSTS_MAX) into buf, which must hold
 * URLGEN_SYNTH_MAX bytes, and returns its length. Not NUL-terminated. A
 * pure function of (seed, hosts, stream, index): the same arguments give
 * the same URL, different (stream, index) give different URLs whatever the
 * seed and the hosts. */
size_t urlgen_synthetic(uint64_t seed, uint64_t hosts, urlgen_stream stream, uint64_t index,
                        char *buf);

/* A batch of URLs; urls[i].url points into the batch's own arena. */
typedef struct urlgen_batch {
    sieve_url urls[URLGEN_BATCH];
    char *arena;
    size_t slot; /* bytes per URL in arena */
} urlgen_batch;

/* Allocates a batch whose slots hold slot bytes each, and writes every
 * byte of it once so that filling it later faults no page in. Returns 0, or
 * -1 if memory ran out. */
int urlgen_batch_init(urlgen_batch *b, size_t slot);

/* Frees the batch's arena. */
void urlgen_batch_free(urlgen_batch *b);

/* What a scan of a URL file found. */
typedef struct urlgen_file_info {
    uint64_t count; /* non-empty lines */
    uint64_t bytes; /* their bytes, line ends excluded */
} urlgen_file_info;

/* Reads a URL file once: one URL a line, "\n" or "\r\n" line ends, empty
 * lines skipped. Returns 0 and fills *info, or -1 with a message in err
 * (errlen bytes) if the file cannot be read or a line is longer than
 * URLGEN_LINE_MAX. */
int urlgen_scan_file(const char *path, urlgen_file_info *info, char *err, size_t errlen);

typedef struct urlgen urlgen;

/* Opens a synthetic stream over hosts host ranks, starting at index 0.
 * Returns 0 or -1 (no memory). */
int urlgen_open_synthetic(urlgen **out, uint64_t seed, uint64_t hosts, urlgen_stream stream);

/* Opens a URL file (as urlgen_scan_file() reads it). Returns 0, or -1 with
 * errno set. */
int urlgen_open_file(urlgen **out, const char *path);

/* Closes a stream. NULL is a no-op. */
void urlgen_close(urlgen *g);

/* Fills b with the next n URLs (n <= URLGEN_BATCH; b's slots must hold a
 * whole URL: URLGEN_SYNTH_MAX bytes for a synthetic stream, URLGEN_LINE_MAX
 * for a file). Returns the number filled, fewer than n only at the end of a
 * file, or -1 if the file could not be read or holds a line too long. */
long urlgen_next(urlgen *g, urlgen_batch *b, size_t n);

#endif
