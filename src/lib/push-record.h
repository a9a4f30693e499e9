/* push-record.h - how the durable frontier's journal records hold URLs
 * (internal).
 *
 *     PUSH   a URL the seen-set took: its tag (4 bytes, little-endian),
 *            then its entry (entry.h: the URL, or its data, a NUL and
 *            the URL), called the URL below: nothing here looks inside
 *     PUSHF  the same, front-coded against the URL of the push record
 *            before it: the tag, then how many leading bytes it shares
 *            with that URL (both LEB128), then the rest of the URL
 *     DONE   a URL finished: its XXH3-64 with FSTATE_URL_SEED (8 bytes)
 *
 * A page's links share their scheme, host and often much of their path,
 * so front-coding them against each other saves about half their bytes
 * on disk, at the cost of one prefix compare a push. A chain of PUSHF
 * records starts at a PUSH: the writer starts one at each write of the
 * journal and where a spill begins, so a reader that starts at such a
 * place needs nothing before it; one that starts elsewhere (a
 * checkpoint's read position) starts at the chain's PUSH and reads up to
 * its place. */
#ifndef SIEVE_PUSH_RECORD_H
#define SIEVE_PUSH_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "journal.h"

#define REC_PUSH  1u
#define REC_DONE  2u
#define REC_PUSHF 3u

/* Longest head push_encode() writes: a PUSH's tag, or a PUSHF's two
 * LEB128 numbers. */
#define PUSH_HEAD_MAX 16u

/* A reader's view of a chain: the URL of the last push record read, and
 * where the chain's PUSH is. */
typedef struct url_chain {
    char *url;
    size_t len, cap;
    journal_pos start; /* the chain's PUSH record; valid once one was read */
    bool started;
} url_chain;

/* The head of a push record for url (len bytes, tag), front-coded against
 * prev (prev_len 0: start a chain): writes it into head, sets *type and
 * *skip, the bytes of url the head stands for (the record's body is
 * url + skip), and returns the head's length. */
size_t push_encode(const char *prev, size_t prev_len, const char *url, size_t len, uint32_t tag,
                   unsigned char *head, uint8_t *type, size_t *skip);

/* Reads a push record (type REC_PUSH or REC_PUSHF, payload b of len
 * bytes, at pos) that follows the last one c read: *url (valid until the
 * next call on c), *n and *tag. SIEVE_EFORMAT for a record that does not
 * hold together, or a PUSHF with no chain to refer to; SIEVE_ETOOLONG
 * for a URL longer than max_len; SIEVE_ENOMEM. */
int push_decode(url_chain *c, uint8_t type, const unsigned char *b, size_t len, journal_pos pos,
                size_t max_len, const char **url, size_t *n, uint32_t *tag);

/* Forgets the chain (the next record read must be a PUSH). */
void chain_reset(url_chain *c);

void chain_free(url_chain *c);

#endif
