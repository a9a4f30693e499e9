/* frontier-state.h - what makes a frontier durable: its state directory,
 * the journal of pushes and dones, and recovery (internal to the
 * frontier; see docs/durable-frontier.md). */
#ifndef SIEVE_FRONTIER_STATE_H
#define SIEVE_FRONTIER_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "sieve/frontier.h"

typedef struct fstate fstate;

/* Receives, in push order, each URL the journal holds that was never
 * reported done; a nonzero return stops the replay with that status. */
typedef int (*fstate_pending_fn)(void *ud, const char *url, size_t len, uint32_t tag);

/* Receives every URL ever pushed, for the seen-set. */
typedef void (*fstate_seen_fn)(void *ud, const char *url, size_t len);

/* Locks dir (creating it), checks or writes its STATE file against cfg
 * and opens the journal, cutting a torn tail. Errors are logged through
 * cfg->logger with the file and what to do: SIEVE_ESTATE (locked by
 * another process), SIEVE_EMISMATCH (made with other settings), the
 * journal's and the state files' format errors, SIEVE_EIO. */
int fstate_open(fstate **out, const char *dir, const sieve_frontier_config *cfg);

/* Replays the journal: every pushed URL to seen, then the ones not done
 * to pending, in the order they were pushed. Returns the URLs pending. */
int fstate_replay(fstate *s, fstate_seen_fn seen, fstate_pending_fn pending, void *ud,
                  uint64_t *n_pending, uint64_t *n_done);

/* Journals the pushes urls[i] for which take[i] is nonzero, in one write
 * where possible; after SIEVE_EIO nothing more may be journaled. */
int fstate_log_pushes(fstate *s, const sieve_url *urls, const int *take, size_t n);

/* Journals that the URL with this hash (XXH3-64, seed 0) is done. */
int fstate_log_done(fstate *s, uint64_t url_hash);

/* Makes everything journaled durable (fdatasync). */
int fstate_sync(fstate *s);

/* The hash fstate_log_done() takes. */
uint64_t fstate_url_hash(const char *url, size_t len);

/* Closes the journal and releases the lock. NULL is a no-op. */
void fstate_close(fstate *s);

#endif
