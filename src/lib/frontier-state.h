/* frontier-state.h - what makes a frontier durable: its state directory,
 * the journal of pushes and dones, and recovery (internal to the
 * frontier; see docs/durable-frontier.md). */
#ifndef SIEVE_FRONTIER_STATE_H
#define SIEVE_FRONTIER_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sieve/frontier.h"

typedef struct fstate fstate;

/* Receives, in push order, each URL the journal holds that was never
 * reported done: SIEVE_OK when it went to memory; FSTATE_SPILL when memory
 * is full, and then this URL and every later one stay in the journal, to
 * be read back by fstate_head_next(); any other status stops the replay. */
typedef int (*fstate_pending_fn)(void *ud, const char *url, size_t len, uint32_t tag);
#define FSTATE_SPILL 1

/* Receives every URL ever pushed, for the seen-set. */
typedef void (*fstate_seen_fn)(void *ud, const char *url, size_t len);

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

/* Replays the journal: every pushed URL to seen, then the ones not done
 * to pending, in the order they were pushed. *n_pending gets the URLs not
 * done, *n_spilled those of them left in the journal (FSTATE_SPILL). */
int fstate_replay(fstate *s, fstate_seen_fn seen, fstate_pending_fn pending, void *ud,
                  uint64_t *n_pending, uint64_t *n_spilled, uint64_t *n_done);

/* Journals the pushes urls[i] for which take[i] is nonzero, in one write
 * where possible; after SIEVE_EIO nothing more may be journaled. If
 * spill_from < n, that push is the first of a spill: the head (below)
 * starts at it. */
int fstate_log_pushes(fstate *s, const sieve_url *urls, const int *take, size_t n,
                      size_t spill_from);

/* The spill: URLs journaled and not yet in memory are read back, in
 * order, from the head. Gives the next one (valid until the next call)
 * and SIEVE_OK; JOURNAL's end as SIEVE_EAGAIN; a damaged record as its
 * error, logged. DONE records, and after a recovery the URLs done, are
 * skipped. */
int fstate_head_next(fstate *s, const char **url, size_t *len, uint32_t *tag);

/* The spill is all back in memory: the head reader and what it needed go. */
void fstate_head_stop(fstate *s);

/* Journals that the URL with this hash (fstate_url_hash()) is done. */
int fstate_log_done(fstate *s, uint64_t url_hash);

/* Makes everything journaled durable (fdatasync). */
int fstate_sync(fstate *s);

/* The hash fstate_log_done() takes: XXH3-64 with this seed, the one the
 * frontier's tickets use, so a done() hashes its URL once. */
#define FSTATE_URL_SEED UINT64_C(0x7469636b65747321)
uint64_t fstate_url_hash(const char *url, size_t len);

/* Whether s is a temporary state (fstate_open_temporary()). */
bool fstate_temporary(const fstate *s);

/* Closes the journal and releases the lock. NULL is a no-op. */
void fstate_close(fstate *s);

#endif
