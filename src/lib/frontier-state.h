/* frontier-state.h - what makes a frontier durable: its state directory,
 * the journal of pushes and dones, and recovery (internal to the
 * frontier; see docs/durable-frontier.md). */
#ifndef SIEVE_FRONTIER_STATE_H
#define SIEVE_FRONTIER_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pthread.h>

#include "sieve/frontier.h"
#include "sieve/seen.h"

struct ckpt_writer;

typedef struct fstate fstate;

/* Receives, in queue order, each URL to queue again at an open, as its
 * entry (entry.h: the URL with its data), len bytes: SIEVE_OK when it
 * went to memory; FSTATE_SPILL (only if may_spill) when memory is full,
 * and then this URL and every later one stay in the journal, to be read
 * back by fstate_head_next(); any other status stops the replay. */
typedef int (*fstate_pending_fn)(void *ud, const char *entry, size_t len, uint32_t tag,
                                 bool may_spill);
#define FSTATE_SPILL 1

/* What a checkpoint lists, from the frontier. list(), under the
 * frontier's lock, puts every URL queued in memory or in flight, as its
 * entry, into w with ckpt_put_url(), in the order they are to be queued
 * again, and says how many URLs are done and how many wait in the
 * journal; then more(), without the lock, puts the URLs set aside behind
 * their hosts' windows at list()'s instant (runs.h), each host's in
 * order; then release(), under the lock again, lets go of what more()
 * needed, whatever came of the checkpoint. more and release may be NULL. */
typedef struct fstate_lister {
    int (*list)(void *ud, struct ckpt_writer *w, uint64_t *done, uint64_t *spilled);
    int (*more)(void *ud, struct ckpt_writer *w);
    void (*release)(void *ud);
    void *ud;
} fstate_lister;

/* What an open found. */
typedef struct fstate_found {
    uint64_t pending; /* URLs queued again */
    uint64_t spilled; /* push records the head has to read: those of the
                         URLs queued again left in the journal, and the
                         URLs done since the checkpoint that lie among them */
    uint64_t done;    /* URLs done before */
} fstate_found;

/* Locks dir (creating it), checks or writes its STATE file against cfg
 * and opens the journal, cutting a torn tail. Errors are logged through
 * cfg->logger with the file and what to do: SIEVE_ESTATE (locked by
 * another process), SIEVE_EMISMATCH (made with other settings), the
 * journal's and the state files' format errors, SIEVE_EIO. */
int fstate_open(fstate **out, const char *dir, const sieve_frontier_config *cfg);

/* A state in a new temporary directory (under $TMPDIR, else /tmp) that
 * only holds the spill: nothing meant to outlive the frontier, so dones
 * are not journaled, nothing is synced, and fstate_close() removes it. */
int fstate_open_temporary(fstate **out, const sieve_frontier_config *cfg);

/* Rebuilds the frontier: loads the checkpoint, if any, into seen (a new
 * seen-set made with the state's config) and reads the journal after it,
 * or the whole journal; then hands the URLs queued and never done to
 * pending, in order. Damage is logged with the file and what to do. */
int fstate_replay(fstate *s, sieve_seen *seen, fstate_pending_fn pending, void *ud,
                  fstate_found *found);

/* Journals the pushes urls[i] (each URL with its data) for which take[i]
 * is nonzero, in one write where possible; after SIEVE_EIO nothing more
 * may be journaled. If spill_from < n, that push is the first of a spill:
 * the head (below) starts at it. */
int fstate_log_pushes(fstate *s, const sieve_url *urls, const int *take, size_t n,
                      size_t spill_from);

/* The spill: URLs journaled and not yet in memory are read back, in
 * order, from the head. Gives the next one's entry (valid until the next
 * call) and SIEVE_OK; JOURNAL's end as SIEVE_EAGAIN; a damaged record as its
 * error, logged. DONE records, and after a recovery the URLs done, are
 * skipped. *passed: the push records the head went past, the skipped
 * ones and the one given, which the spill's count must lose. */
int fstate_head_next(fstate *s, const char **entry, size_t *len, uint32_t *tag, uint64_t *passed);

/* The spill is all back in memory: the head reader and what it needed go. */
void fstate_head_stop(fstate *s);

/* Journals that the URL with this hash (fstate_url_hash()) is done. */
int fstate_log_done(fstate *s, uint64_t url_hash);

/* Makes everything journaled durable (fdatasync), holding lock (the
 * frontier's, which guards every other fstate call) only to find what to
 * sync. Then, when the journal since the last checkpoint has grown past
 * what a checkpoint costs, or if force, takes one: the URLs l lists
 * and the seen-set's layers go to CHECKPOINT, and the journal's segments
 * that a restart no longer needs are deleted. Calls come from one thread
 * at a time. Nothing for a temporary state; the exact seen-set kind is
 * never checkpointed (its journal is read whole at open). */
int fstate_sync(fstate *s, pthread_mutex_t *lock, sieve_seen *seen, const fstate_lister *l,
                bool force);

/* The hash fstate_log_done() takes: XXH3-64 with this seed, the one the
 * frontier's tickets use, so a done() hashes its URL once. */
#define FSTATE_URL_SEED UINT64_C(0x7469636b65747321)
uint64_t fstate_url_hash(const char *url, size_t len);

/* The state's directory, and its subdirectory for the runs of deferred
 * URLs (runs.h), which the frontier keeps. */
#define FSTATE_RUNS_DIR "runs"
const char *fstate_path(const fstate *s);

/* Whether s is a temporary state (fstate_open_temporary()). */
bool fstate_temporary(const fstate *s);

/* Closes the journal and releases the lock. NULL is a no-op. */
void fstate_close(fstate *s);

#endif
