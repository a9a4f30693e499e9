/* checkpoint.h - a durable frontier's checkpoint file (internal).
 *
 * DIR/CHECKPOINT says where a restart may begin reading the journal: it
 * holds the seen-set's Bloom layers and every URL queued in memory or in
 * flight as they were at one journal position P, and the spill's read
 * position H. An open then loads it and reads the journal from P on only,
 * and the journal's segments before both P and H can be deleted.
 * checkpoint.c describes the format.
 *
 * A writer fills a temporary file, the list of URLs and the layers in
 * any order, then ckpt_commit() syncs it and renames it over CHECKPOINT:
 * a crash leaves the old checkpoint or the new one. A reader checks every
 * byte before the caller relies on any. */
#ifndef SIEVE_CHECKPOINT_H
#define SIEVE_CHECKPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "journal.h"

#define CKPT_NAME "CHECKPOINT"

/* What a checkpoint says besides its URLs and layers. */
typedef struct ckpt_info {
    journal_pos p;         /* the journal's tail when it was taken */
    bool spilling;         /* URLs waited in the journal, from h on */
    journal_pos h;         /* the spill's next URL to read back */
    journal_pos hchain;    /* the start of h's chain of front-coded URLs */
    uint64_t spilled;      /* URLs waiting in the journal at p */
    uint64_t done;         /* URLs done at p, for the statistics */
    unsigned layers;       /* the seen-set's Bloom layers */
    uint64_t newest_added; /* keys the newest layer had taken */
    uint64_t layer_bytes;  /* all the layers' arrays */
    uint64_t urls;         /* URLs in the list (set by the writer) */
    uint64_t list_bytes;   /* the list's bytes (set by the writer) */
} ckpt_info;

typedef struct ckpt_writer ckpt_writer;
typedef struct ckpt_reader ckpt_reader;

/* Starts DIR/CHECKPOINT.tmp for layers whose arrays take layer_bytes.
 * SIEVE_EIO with errno and a message in msg (cap bytes). */
int ckpt_writer_open(ckpt_writer **out, const char *dir, uint64_t layer_bytes, char *msg,
                     size_t cap);

/* Adds a URL to the list, in the order they are to be queued again: its
 * entry (entry.h), len bytes. */
int ckpt_put_url(ckpt_writer *w, const char *url, size_t len, uint32_t tag);

/* Adds the next n bytes of the layers' arrays (layer 0's first). */
int ckpt_put_layers(ckpt_writer *w, const void *words, size_t n);

/* Writes the header from *info (its urls and list_bytes are the
 * writer's), syncs the file, renames it over CHECKPOINT, syncs the
 * directory, and frees w. SIEVE_EINVAL if fewer layer bytes came than
 * announced; SIEVE_EIO. On failure the old CHECKPOINT stays. */
int ckpt_commit(ckpt_writer *w, const ckpt_info *info, char *msg, size_t cap);

/* Drops the temporary file and frees w. NULL is a no-op. */
void ckpt_writer_abort(ckpt_writer *w);

/* Opens DIR/CHECKPOINT and checks its header: SIEVE_OK with *out NULL if
 * there is none; SIEVE_EFORMAT, SIEVE_ECHECKSUM, SIEVE_ETRUNCATED or
 * SIEVE_EVERSION with a message naming the file and what to do; SIEVE_EIO. */
int ckpt_reader_open(ckpt_reader **out, const char *dir, ckpt_info *info, char *msg, size_t cap);

/* Reads the next n bytes of the layers' arrays into dst; once all are
 * read, checks their checksum (SIEVE_ECHECKSUM). */
int ckpt_read_layers(ckpt_reader *r, void *dst, size_t n, char *msg, size_t cap);

/* Reads the list through once and checks its checksum and its shape, so
 * that nothing is queued from a damaged file. */
int ckpt_check_list(ckpt_reader *r, size_t max_url_len, char *msg, size_t cap);

/* The list's next URL (valid until the next call): SIEVE_OK, or
 * SIEVE_EAGAIN after the last. Call after ckpt_check_list(). */
int ckpt_next_url(ckpt_reader *r, const char **url, size_t *len, uint32_t *tag);

void ckpt_reader_close(ckpt_reader *r);

#endif
