/* runs.h - URLs set aside behind their hosts' windows (internal to the
 * frontier, which holds its lock around every call but the ones marked).
 *
 * A host whose queue in memory has reached its window, or that has URLs
 * set aside already, gets its further URLs deferred: they wait here, in
 * the order given, and come back to its queue, oldest first, when the
 * queue in memory runs dry. Deferred URLs wait in a buffer first; a full
 * buffer is written as a run file, its URLs grouped by host, so that a
 * host reads its own URLs back with one pread whatever the others did.
 * runs.c describes the files. Runs are scratch: what must outlive a kill
 * is the journal's and the checkpoint's (runs_list_* below), and an open
 * removes the runs a process left. */
#ifndef SIEVE_RUNS_H
#define SIEVE_RUNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct runs runs;

/* Receives a URL taken back or listed: its entry (entry.h), len bytes,
 * and tag. A nonzero return stops the walk and is returned. */
typedef int (*runs_url_fn)(void *ud, uint32_t host, const char *entry, size_t len, uint32_t tag);

/* Opens the runs of directory dir (created, one level; run files left
 * there by a process that is gone are removed), with a buffer of at most
 * buffer_bytes before a run is written. SIEVE_EIO with a message in msg. */
int runs_open(runs **out, const char *dir, size_t buffer_bytes, char *msg, size_t cap);

/* Removes the run files and the directory, and frees r. NULL is a no-op. */
void runs_free(runs *r);

/* Sets aside an entry of host (an id of hosts.c, which keeps a host
 * with deferred URLs) behind those set aside before. SIEVE_ENOMEM or
 * SIEVE_EIO (writing a run; runs_message() says why) change nothing. */
int runs_defer(runs *r, uint32_t host, const char *entry, size_t len, uint32_t tag);

/* URLs of host set aside and not taken back. */
uint64_t runs_count(const runs *r, uint32_t host);

/* Takes back host's oldest URLs, in order, handing each to fn: at least
 * one if it has any, and more while their bytes stay within max_bytes.
 * *taken gets how many. SIEVE_EIO or SIEVE_EFORMAT (a run file that
 * does not read back as written; runs_message() says where). */
int runs_take(runs *r, uint32_t host, size_t max_bytes, runs_url_fn fn, void *ud, size_t *taken);

/* URLs deferred in all; the bytes of memory r holds (its buffers and
 * each host's list of parts); the bytes of its run files, and of the
 * records in them not read yet (runs.c compacts the files when the first
 * outgrow the second). */
uint64_t runs_total(const runs *r);
uint64_t runs_memory(const runs *r);
uint64_t runs_file_bytes(const runs *r);
uint64_t runs_unread_bytes(const runs *r);

/* ---- listing every deferred URL, for a checkpoint ----
 *
 * runs_list_begin() (lock held) writes the buffer out and notes what
 * each host has set aside at that instant, keeping its run files;
 * runs_list_walk() (without the lock: it reads only files that no
 * longer change) hands those URLs to fn, host by host, each host's in
 * order; runs_list_end() (lock held) lets the runs that were kept go. */
typedef struct runs_list runs_list;
int runs_list_begin(runs *r, runs_list **out);
int runs_list_walk(runs_list *l, runs_url_fn fn, void *ud);
void runs_list_end(runs *r, runs_list *l);

/* The last failure's explanation: the file and what went wrong. */
const char *runs_message(const runs *r);

#endif
