/* runs-internal.h - what runs.c and runs-compact.c share (internal): the
 * deferred URLs' state and the run files' helpers. runs.c describes the
 * format. */
#ifndef SIEVE_RUNS_INTERNAL_H
#define SIEVE_RUNS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "journal.h"
#include "push-record.h"
#include "runs.h"
#include "sieve/frontier.h"
#include "sieve/status.h"

#define MAGIC          "SIEVERN" /* with its NUL: 8 bytes */
#define FORMAT_VERSION 1u
#define HEADER_SIZE    24u
#define TAG_BYTES      4u
#define SUFFIX         ".run"
#define NONE           0u /* chain links are an index + 1 */
/* A take reads at least this much, so a part of small URLs is read in a
 * few calls, not one per URL. */
#define READ_MIN (16u << 10)
/* A listing reads this much at a time: at least a largest record, so
 * that each read holds one whole. */
#define LIST_READ JOURNAL_RECORD_SIZE(JOURNAL_PAYLOAD_MAX)

/* Where a host's URLs lie in one run file: what is left of them. */
typedef struct part {
    uint32_t run;
    uint32_t count;
    uint64_t off, bytes;
} part;

/* A host's deferred URLs. */
typedef struct host_def {
    part *parts; /* parts[first..n), oldest first */
    uint32_t first, n, cap;
    uint32_t head, tail; /* its chain in the buffer: record index + 1 */
    uint64_t count;      /* URLs in its parts and chain */
    url_chain last;      /* the URL its oldest part was last read at */
    bool in_buf_hosts;   /* named in buf_hosts, once, even if its chain was taken back */
} host_def;

/* A record in the buffer. */
typedef struct buf_rec {
    uint32_t off, size;
    uint32_t next; /* the host's next record: index + 1 */
} buf_rec;

typedef struct run_file {
    uint32_t no;
    uint32_t live;       /* parts not read to their end */
    uint64_t bytes;      /* the file's */
    uint64_t live_bytes; /* of its records, those not read yet */
    bool moving;         /* being compacted */
} run_file;

struct runs {
    char dir[512];
    host_def *host; /* by host id */
    uint32_t cap_host;
    unsigned char *buf; /* the buffer's records, encoded */
    size_t used, cap, limit;
    buf_rec *recs;
    uint32_t nrecs, cap_recs;
    uint32_t *buf_hosts; /* hosts with records in the buffer, first seen first */
    uint32_t nbuf_hosts, cap_buf_hosts;
    uint64_t *group_bytes; /* a run's bytes for each of buf_hosts, as laid out */
    uint32_t cap_group_bytes;
    unsigned char *out; /* a run as it is written */
    size_t out_cap;
    run_file *files; /* live runs, by number */
    uint32_t nfiles, cap_files;
    uint32_t next_no;
    unsigned listing; /* listings under way: no run file goes meanwhile */
    int fd;           /* the run last read, kept open */
    uint32_t fd_no;
    unsigned char *rbuf;
    size_t rcap;
    uint64_t total, file_bytes, live_bytes;
    char msg[700];
};

/* Run number no's path in dir, into cap bytes (540 hold any). */
void run_path(const char *dir, uint32_t no, char *path, size_t cap);

/* Writes run number no's header, HEADER_SIZE bytes, at p. */
void run_put_header(unsigned char *p, uint32_t no);

/* Makes room for n more elements of elem bytes in *p (*cap of them,
 * used in use), doubling; SIEVE_ENOMEM leaves it as it was. */
int run_room_for(void **p, uint32_t *cap, uint32_t use, size_t elem, uint32_t n);

/* The live run numbered no, or NULL. */
run_file *run_file_of(runs *r, uint32_t no);

/* Removes the run files no part needs, unless a listing keeps them. */
void run_drop_dead_files(runs *r);

/* Decodes a run's record against c, the URL of the record before it:
 * SIEVE_OK with the entry (in c) and tag; SIEVE_EAGAIN if avail bytes
 * hold only its beginning; SIEVE_EFORMAT; SIEVE_ENOMEM. */
int run_decode(url_chain *c, const unsigned char *p, size_t avail, size_t *size, const char **entry,
               size_t *len, uint32_t *tag);

/* Reads n bytes at off of run no into *buf (grown to *cap), with *fd
 * the descriptor of run *fd_no, opened if another; SIEVE_EIO with the
 * path and the reason in msg. */
int run_read(const char *dir, uint32_t no, uint64_t off, size_t n, int *fd, uint32_t *fd_no,
             unsigned char **buf, size_t *cap, char *msg, size_t msg_cap);

/* Compacts the runs mostly read, if it is time (runs-compact.c). A
 * failure changes nothing. */
void run_compact(runs *r);

#endif
