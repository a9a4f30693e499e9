/* sieve/fifo.h - a compact first-in first-out queue of byte strings.
 *
 * Entries are stored back to back, each a small length prefix, a 32-bit tag
 * (the frontier keeps a URL's crawl depth there) and the bytes, in chunks of
 * SIEVE_FIFO_CHUNK bytes linked head to tail. There is no malloc per entry;
 * a chunk is freed as soon as the head has drained it, so memory follows
 * the queue's length. An entry longer than a chunk gets a chunk of its own.
 *
 * Chunks are the unit a later spill-to-disk layer moves: the queue is
 * written so that a chunk is self-contained. Not thread-safe. */
#ifndef SIEVE_FIFO_H
#define SIEVE_FIFO_H

#include <stddef.h>
#include <stdint.h>

#include "sieve/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sieve_fifo sieve_fifo;

/* Size of a regular chunk, in bytes. */
#define SIEVE_FIFO_CHUNK (64 * 1024)

/* Longest entry accepted, in bytes. */
#define SIEVE_FIFO_ENTRY_MAX (UINT32_MAX / 2)

/* Creates an empty queue. SIEVE_ENOMEM on failure. */
SIEVE_API int sieve_fifo_new(sieve_fifo **out);

/* Frees the queue and every entry in it. NULL is a no-op. */
SIEVE_API void sieve_fifo_free(sieve_fifo *q);

/* Appends a copy of len bytes at data with a tag. SIEVE_ETOOLONG above
 * SIEVE_FIFO_ENTRY_MAX, SIEVE_ENOMEM if a chunk cannot be allocated (the
 * queue is unchanged). Empty entries are allowed. */
SIEVE_API int sieve_fifo_push(sieve_fifo *q, const void *data, size_t len, uint32_t tag);

/* Makes room so that the next sieve_fifo_push() of at most len bytes
 * cannot fail: SIEVE_OK, SIEVE_ETOOLONG or SIEVE_ENOMEM (the queue is
 * unchanged). Lets a caller commit to other state first, as the frontier
 * marks a URL seen only when its push is sure to succeed. */
SIEVE_API int sieve_fifo_reserve(sieve_fifo *q, size_t len);

/* Removes the oldest entry, copying it into buf (cap bytes) and setting *len
 * and *tag (tag may be NULL). SIEVE_EAGAIN if the queue is empty. If the
 * entry is longer than cap, returns SIEVE_ERANGE, sets *len to the size
 * needed and removes nothing. */
SIEVE_API int sieve_fifo_pop(sieve_fifo *q, void *buf, size_t cap, size_t *len, uint32_t *tag);

/* Length of the oldest entry, or SIEVE_EAGAIN (as a negative int64) if empty. */
SIEVE_API int64_t sieve_fifo_peek_len(const sieve_fifo *q);

/* What sieve_fifo_foreach() calls for each entry; a nonzero return stops
 * the walk. */
typedef int (*sieve_fifo_visit_fn)(void *ud, const void *data, size_t len, uint32_t tag);

/* Calls fn for every entry, oldest first, without removing any. fn must
 * not change q. Returns 0 after the last entry, or fn's first nonzero
 * return. A snapshot of a queue (a checkpoint) reads it this way. */
SIEVE_API int sieve_fifo_foreach(const sieve_fifo *q, sieve_fifo_visit_fn fn, void *ud);

/* Number of entries. */
SIEVE_API uint64_t sieve_fifo_length(const sieve_fifo *q);

/* Bytes held by the queue: its chunks (allocated size) and the handle. */
SIEVE_API uint64_t sieve_fifo_bytes(const sieve_fifo *q);

#ifdef __cplusplus
}
#endif
#endif
