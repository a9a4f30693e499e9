/* frontier-state-internal.h - what the two halves of a durable frontier's
 * state share (internal): frontier-state.c keeps the directory, logs the
 * pushes and dones and takes checkpoints; frontier-replay.c reads them
 * back, at an open (the replay) and while the queue spills (the head). */
#ifndef SIEVE_FRONTIER_STATE_INTERNAL_H
#define SIEVE_FRONTIER_STATE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frontier-state.h"
#include "journal.h"
#include "push-record.h"
#include "sieve/log.h"
#include "statedir.h"

/* A DONE record's payload: the URL's hash (fstate_url_hash()). */
#define HASH_BYTES 8u
/* A journal's first segment: a state whose journal starts later has
 * dropped segments, which only a checkpoint may stand in for. */
#define FIRST_SEGMENT 1u

/* The hashes of URLs done: open addressing over 64-bit keys, with
 * removal. */
typedef struct hash_set {
    uint64_t *slot; /* 0: empty; the hash 0 is kept aside */
    size_t cap, n;
    int has_zero;
} hash_set;

struct fstate {
    statedir *dir;
    journal *j;
    sieve_logger logger;
    char path[512];
    int failed;    /* a journal write failed: nothing more is journaled */
    int temporary; /* the spill of an in-memory frontier: removed at close */
    /* The records not written yet, in order, encoded as the journal
     * writes them (journal_encode()), checksums and all, so that they go
     * out from here as they are */
    unsigned char *buf;
    size_t used, cap;
    size_t spill_at; /* the offset in buf of the push where the spill begins, or SIZE_MAX */
    char *prev;      /* the last entry written in this batch: PUSHF's reference */
    size_t prev_len, prev_cap;
    char *entry; /* a URL with data made into its entry (entry.h) */
    size_t entry_cap;
    url_chain head_chain;  /* the head's view of the push records it reads */
    journal_reader *head;  /* the spill's next URL to read back, or NULL */
    struct hash_set *done; /* after a recovery that spilled: the URLs done */
    size_t max_entry;      /* the longest entry (entry.h) a record or the list may hold */
    uint64_t appended;     /* journal bytes since the last checkpoint */
    uint64_t ckpt_cost;    /* bytes the last checkpoint took */
    uint64_t ckpt_every;   /* checkpoint_bytes: 0 for ckpt_cost */
};

/* The hash of an entry's URL: what its DONE record holds. */
uint64_t fstate_entry_hash(const char *e, size_t n);

/* Writes the pending records, and opens the spill's head at its first
 * record if one waited. */
int fstate_flush(fstate *s);

/* Opens the spill's head at at, front-coded from the chain that starts at
 * chain. */
int fstate_head_open(fstate *s, journal_pos chain, journal_pos at);

/* The done set: add and has return SIEVE_OK or SIEVE_ENOMEM, and 1 or 0. */
void done_set_free(hash_set *h);
int done_set_add(hash_set *h, uint64_t key);
int done_set_has(const hash_set *h, uint64_t key);
void done_set_remove(hash_set *h, uint64_t key);

#endif
