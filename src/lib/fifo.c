/* fifo.c - a chunked FIFO of byte strings.
 *
 * Layout. The queue is a singly linked list of chunks, head (oldest) to
 * tail (newest). Each chunk is one allocation: a small header, then entries
 * back to back, each a LEB128 length, a 4-byte little-endian tag and the
 * bytes. Pushes append at the tail chunk's write offset, pops consume at
 * the head chunk's read offset; nothing is ever moved. An entry never
 * straddles two chunks, so a chunk can be read (or, later, written to disk)
 * without its neighbours.
 *
 * Sizes. A regular chunk is SIEVE_FIFO_CHUNK bytes including its header;
 * at a typical URL length that is several hundred entries per malloc, and
 * the per-entry overhead is 5 to 7 bytes. A new queue starts with a chunk
 * of FIRST_CHUNK bytes and doubles up to the regular size, so the many
 * short queues of a per-host scheduler (one per host) cost a few hundred
 * bytes each, not 64 KiB. An entry too large for a regular
 * chunk gets a chunk allocated to its exact size, so a huge entry costs no
 * more than itself and never forces a regular chunk to grow.
 *
 * Memory follows the queue. A chunk is released as soon as its last entry
 * is popped, and a queue that empties starts again from the small size. A
 * crawler at steady state pushes and pops at about the same rate, which
 * would free one chunk and malloc the next over and over; one drained
 * chunk of the regular or the first size is therefore kept as a spare
 * (and counted by sieve_fifo_bytes()) and reused by the next push that
 * fits it. */
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "sieve/fifo.h"
#include "sieve/status.h"

/* A tag is stored as 4 bytes, independent of host byte order, so that a
 * chunk written to disk reads back the same on any machine. */
#define TAG_BYTES 4

struct fifo_chunk {
    struct fifo_chunk *next;
    size_t cap;  /* bytes of data[] */
    size_t head; /* read offset */
    size_t tail; /* write offset */
    unsigned char data[];
};

struct sieve_fifo {
    struct fifo_chunk *head;
    struct fifo_chunk *tail;
    struct fifo_chunk *spare; /* a drained regular chunk kept for reuse */
    size_t grow_cap;          /* capacity of the next chunk, until regular */
    uint64_t length;
    uint64_t bytes; /* allocated size of every chunk, spare included */
};

#define CHUNK_HEADER offsetof(struct fifo_chunk, data)
#define REGULAR_CAP  (SIEVE_FIFO_CHUNK - CHUNK_HEADER)
#define FIRST_CHUNK  256

static void tag_put(unsigned char *p, uint32_t tag)
{
    for (int i = 0; i < TAG_BYTES; i++)
        p[i] = (unsigned char)(tag >> (8 * i));
}

static uint32_t tag_get(const unsigned char *p)
{
    uint32_t tag = 0;
    for (int i = 0; i < TAG_BYTES; i++)
        tag |= (uint32_t)p[i] << (8 * i);
    return tag;
}

static size_t entry_size(size_t len)
{
    return varint_len(len) + TAG_BYTES + len;
}

/* A chunk with room for need bytes: the spare when it fits, else a new
 * regular chunk, else one sized to need. */
static struct fifo_chunk *chunk_get(sieve_fifo *q, size_t need)
{
    /* A queue that drained starts small again: a host's queue that empties
     * and fills again and again holds a few URLs at a time, and must not
     * climb to a regular chunk a round. */
    if (q->head == NULL)
        q->grow_cap = 0;
    if (q->spare != NULL && need <= q->spare->cap) {
        struct fifo_chunk *c = q->spare;
        q->spare = NULL;
        return c;
    }
    size_t cap = need;
    if (need <= REGULAR_CAP) {
        if (q->grow_cap == 0)
            q->grow_cap = FIRST_CHUNK - CHUNK_HEADER;
        while (q->grow_cap < need)
            q->grow_cap = q->grow_cap * 2 + CHUNK_HEADER;
        cap = q->grow_cap < REGULAR_CAP ? q->grow_cap : REGULAR_CAP;
        q->grow_cap = cap * 2 + CHUNK_HEADER;
    }
    struct fifo_chunk *c = malloc(CHUNK_HEADER + cap);
    if (c == NULL)
        return NULL;
    c->cap = cap;
    q->bytes += CHUNK_HEADER + cap;
    return c;
}

/* Keeps a drained regular chunk, or a first-size one, as the spare, and
 * frees anything else: a short queue that drains and fills again reuses
 * its one small chunk instead of a malloc and a free a round. */
static void chunk_release(sieve_fifo *q, struct fifo_chunk *c)
{
    if ((c->cap == REGULAR_CAP || c->cap == FIRST_CHUNK - CHUNK_HEADER) && q->spare == NULL) {
        q->spare = c;
        return;
    }
    q->bytes -= CHUNK_HEADER + c->cap;
    free(c);
}

int sieve_fifo_new(sieve_fifo **out)
{
    if (out == NULL)
        return SIEVE_EINVAL;
    *out = calloc(1, sizeof(**out));
    return *out != NULL ? SIEVE_OK : SIEVE_ENOMEM;
}

void sieve_fifo_free(sieve_fifo *q)
{
    if (q == NULL)
        return;
    struct fifo_chunk *c = q->head;
    while (c != NULL) {
        struct fifo_chunk *next = c->next;
        free(c);
        c = next;
    }
    free(q->spare);
    free(q);
}

/* Links a chunk with room for need bytes at the tail, unless the tail
 * chunk has that room already. */
static struct fifo_chunk *room_for(sieve_fifo *q, size_t need)
{
    struct fifo_chunk *c = q->tail;
    if (c != NULL && c->cap - c->tail >= need)
        return c;
    c = chunk_get(q, need);
    if (c == NULL)
        return NULL;
    c->next = NULL;
    c->head = c->tail = 0;
    if (q->tail != NULL)
        q->tail->next = c;
    else
        q->head = c;
    q->tail = c;
    return c;
}

int sieve_fifo_reserve(sieve_fifo *q, size_t len)
{
    if (q == NULL)
        return SIEVE_EINVAL;
    if (len > SIEVE_FIFO_ENTRY_MAX)
        return SIEVE_ETOOLONG;
    return room_for(q, entry_size(len)) != NULL ? SIEVE_OK : SIEVE_ENOMEM;
}

int sieve_fifo_push(sieve_fifo *q, const void *data, size_t len, uint32_t tag)
{
    if (q == NULL || (data == NULL && len > 0))
        return SIEVE_EINVAL;
    if (len > SIEVE_FIFO_ENTRY_MAX)
        return SIEVE_ETOOLONG;
    size_t need = entry_size(len);
    struct fifo_chunk *c = room_for(q, need);
    if (c == NULL)
        return SIEVE_ENOMEM;
    unsigned char *p = c->data + c->tail;
    size_t n = varint_put(p, len);
    tag_put(p + n, tag);
    if (len > 0)
        memcpy(p + n + TAG_BYTES, data, len);
    c->tail += need;
    q->length++;
    return SIEVE_OK;
}

int sieve_fifo_pop(sieve_fifo *q, void *buf, size_t cap, size_t *len, uint32_t *tag)
{
    if (q == NULL || len == NULL || (buf == NULL && cap > 0))
        return SIEVE_EINVAL;
    /* The tail may be an empty chunk made by sieve_fifo_reserve(); the
     * length, not the chunk list, says whether there is an entry. */
    if (q->length == 0)
        return SIEVE_EAGAIN;
    struct fifo_chunk *c = q->head;
    const unsigned char *p = c->data + c->head;
    size_t n_len;
    size_t n = varint_get(p, &n_len);
    *len = n_len;
    if (n_len > cap)
        return SIEVE_ERANGE;
    if (tag != NULL)
        *tag = tag_get(p + n);
    if (n_len > 0)
        memcpy(buf, p + n + TAG_BYTES, n_len);
    c->head += n + TAG_BYTES + n_len;
    q->length--;
    /* Invariant: while the queue holds entries, the head chunk holds the
     * oldest. */
    if (c->head == c->tail) {
        q->head = c->next;
        if (q->head == NULL)
            q->tail = NULL;
        chunk_release(q, c);
    }
    return SIEVE_OK;
}

int64_t sieve_fifo_peek_len(const sieve_fifo *q)
{
    if (q == NULL)
        return SIEVE_EINVAL;
    if (q->length == 0)
        return SIEVE_EAGAIN;
    size_t len;
    varint_get(q->head->data + q->head->head, &len);
    return (int64_t)len;
}

int sieve_fifo_foreach(const sieve_fifo *q, sieve_fifo_visit_fn fn, void *ud)
{
    if (q == NULL || fn == NULL)
        return SIEVE_EINVAL;
    uint64_t left = q->length; /* the tail may be an empty reserved chunk */
    for (const struct fifo_chunk *c = q->head; c != NULL && left > 0; c = c->next) {
        for (size_t at = c->head; at < c->tail && left > 0; left--) {
            const unsigned char *p = c->data + at;
            size_t len;
            size_t n = varint_get(p, &len);
            int rc = fn(ud, p + n + TAG_BYTES, len, tag_get(p + n));
            if (rc != 0)
                return rc;
            at += n + TAG_BYTES + len;
        }
    }
    return 0;
}

uint64_t sieve_fifo_length(const sieve_fifo *q)
{
    return q != NULL ? q->length : 0;
}

uint64_t sieve_fifo_bytes(const sieve_fifo *q)
{
    return q != NULL ? sizeof(*q) + q->bytes : 0;
}
