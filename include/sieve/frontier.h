/* sieve/frontier.h - the crawl frontier: a FIFO of URLs to fetch plus the
 * set of URLs already seen, safe to share between threads.
 *
 * push() enqueues a URL only if the seen-set has not seen it, so every URL
 * is fetched at most once (exactly once with the exact seen-set). pop()
 * hands the next URL (the oldest, or with per-host scheduling the oldest of
 * a host that is ready) to a worker, which calls done() when it has
 * finished with it; when the queue is empty and no worker holds a URL the
 * crawl is over and every blocked pop() returns SIEVE_EDRAINED, with no
 * polling. close() stops a crawl early.
 *
 * pop() is the single place that decides what is fetched next: per-host
 * scheduling plugs in there without changing push().
 *
 * Only http and https URLs are queued: the frontier feeds a web crawler,
 * and a URL of another scheme is refused at push() with SIEVE_ESCHEME.
 *
 * Tickets. pop() stamps each URL it hands out with a ticket, and done()
 * and requeue() accept only a URL in flight with its ticket, bytes and
 * host as pop() gave them, once: a stray or repeated done() returns
 * SIEVE_ESTATE instead of ending the crawl early. Copy the whole sieve_url
 * (the bytes and the data may move to buffers of one's own) to answer a
 * pop later.
 *
 * Logging. The frontier never prints on its own: its default logger drops
 * every message. Set cfg.logger (sieve_logger_default() for stderr) to
 * hear about the capacity warnings below.
 *
 * Capacity. When the seen-set's estimated count first passes the configured
 * capacity, one warning is logged with the count, the capacity and the
 * estimated false-positive rate; another at each doubling after that, and
 * a last one once every bit of the filter is set (its estimated count is
 * then INFINITY, and every new URL is SIEVE_SEEN). With
 * SIEVE_OVERFLOW_GROW the set grows instead (see sieve/seen.h).
 *
 * Locking. One mutex guards the seen-set and the queue. Hashing, the
 * costly part of a push, happens before it is taken, and push_batch()
 * takes it once per batch, prefetching every key's memory first. */
#ifndef SIEVE_FRONTIER_H
#define SIEVE_FRONTIER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sieve/export.h"
#include "sieve/log.h"
#include "sieve/seen.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sieve_frontier sieve_frontier;

/* The longest URL, in bytes, the frontier (by default, see max_url_len)
 * and the crawl engine handle; the engine's URL buffers are
 * SIEVE_URL_MAX + 1 bytes. */
#define SIEVE_URL_MAX 8192

/* The most bytes of data one URL may carry (see sieve_url): room for two
 * URLs of SIEVE_URL_MAX bytes and a separator after each, such as the page
 * a URL was found on and the URL first requested before a redirect. */
#define SIEVE_URL_DATA_MAX (2 * (SIEVE_URL_MAX + 1))

/* A pop() buffer of this many bytes takes any URL of up to SIEVE_URL_MAX
 * bytes with any data: the data, a NUL, the URL and its NUL. */
#define SIEVE_POP_BUF_MAX (SIEVE_URL_DATA_MAX + SIEVE_URL_MAX + 2)

/* A URL with its crawl depth and, if the pusher gives any, its data: up to
 * SIEVE_URL_DATA_MAX bytes of the pusher's own that the frontier keeps
 * with the URL wherever the URL waits (its host's queue, the spill on
 * disk, a retry's wait, the journal and checkpoints of a durable
 * frontier) and hands back with it at pop(), e.g. the page that linked to
 * it. The frontier never reads them. data_len 0 means none; a URL without
 * data costs what it did before URLs could carry any. A push refused as
 * seen drops its data with it. url need not be NUL-terminated.
 * sieve_frontier_push_batch() reads url, len, depth, data and data_len;
 * pop() sets every field. */
typedef struct sieve_url {
    const char *url;
    size_t len;
    uint32_t depth;
    uint32_t host;    /* set by pop(): which host's slot done() frees */
    uint64_t ticket;  /* set by pop(): which pop done() answers */
    const void *data; /* NULL when data_len is 0 */
    size_t data_len;
} sieve_url;

/* Per-host scheduling. When enabled, every host (an authority, so each
 * port is its own host) has its own queue in discovery order; pop() returns
 * the oldest URL of a host that has fewer than max_conns URLs in flight and
 * whose last request started at least its delay ago, and waits (within its
 * timeout) when no host is ready. A slow or unreachable host holds only its
 * own URLs back. A host that is idle (nothing of it queued, in flight or
 * waiting for a retry, not held, its delay or pause over) is forgotten,
 * so memory follows the hosts with work, not every host ever seen; a URL
 * that names it again starts it afresh, with the policy's delay (a caller
 * that set another with set_host_delay() sets it again). */
typedef struct sieve_politeness {
    bool enabled;       /* default false: one FIFO for every host */
    unsigned max_conns; /* URLs of one host in flight at once; default 2 */
    double delay_s;     /* seconds between two request starts to a host; default 1 */
    double max_delay_s; /* cap on a host's own delay (robots.txt Crawl-delay); default 30 */
    /* Hosts split, by a hash of their name, into this many partitions
     * for sieve_frontier_try_pop_from(); default 1. At most
     * SIEVE_PARTITIONS_MAX. */
    unsigned partitions;
} sieve_politeness;

#define SIEVE_PARTITIONS_MAX 1024

/* Called each time a pop that found nothing might now find something: a
 * URL was enqueued or given back, a host was released or finished a URL,
 * the frontier was closed or drained. It lets a caller that takes URLs
 * with sieve_frontier_try_pop() wait on something else (its sockets)
 * rather than on a timer. Called with the frontier's lock held, from the
 * thread that caused it: it must return quickly and must not call into
 * the frontier. */
typedef void (*sieve_frontier_wake_fn)(void *ud);

typedef struct sieve_frontier_config {
    sieve_seen_config seen; /* the seen-set; see sieve/seen.h for defaults */
    size_t max_url_len;     /* longer URLs are refused; default SIEVE_URL_MAX */
    sieve_logger logger;    /* default: none (fn NULL, messages dropped) */
    sieve_politeness politeness;
    sieve_frontier_wake_fn on_wake; /* default NULL */
    void *wake_ud;                  /* passed to on_wake */
    /* sieve_frontier_open() only: what else gives the state its meaning,
     * as "name=value" lines (the crawl's scope, say). Stored with the
     * state; an open with other text is refused. Default NULL. */
    const char *state_meaning;
    /* sieve_frontier_open() only: the most bytes of queued URLs held in
     * memory (each URL's length, its data's and one byte more if it has
     * any, plus SIEVE_QUEUE_ENTRY_COST). Past it, pushed URLs stay in the
     * journal only and are read back, in the order pushed, as the queue
     * in memory falls below half of it. With per-host scheduling, a host
     * holds at most an eighth of it in memory: its further URLs wait on
     * disk, in its order, until its queue runs dry (docs/durable-frontier.md),
     * so no slow host holds back the others. 0 (default): no limit.
     * sieve_frontier_new() refuses a nonzero value. */
    uint64_t queue_memory;
    /* sieve_frontier_open() only: the journal's segment size in bytes; a
     * segment is the unit of disk given back once a checkpoint (or, for a
     * temporary spill, the read head) has passed it. 0 (default): 64 MiB.
     * Not part of the state's meaning: it may change between runs. */
    uint64_t segment_bytes;
    /* sieve_frontier_open() only: sieve_frontier_sync() takes a
     * checkpoint once the journal has grown this many bytes since the
     * last one. 0 (default): as many as the checkpoint itself takes, and
     * at least 1 MiB, so that checkpoints cost at most what the journal
     * does. Smaller: quicker opens after a kill, more writing. */
    uint64_t checkpoint_bytes;
} sieve_frontier_config;

/* What a queued URL costs in memory besides its bytes, for queue_memory. */
#define SIEVE_QUEUE_ENTRY_COST 8

typedef struct sieve_frontier_stats {
    uint64_t pushed;      /* push attempts, valid or not */
    uint64_t seen;        /* refused as already seen */
    uint64_t invalid;     /* refused as empty, too long, not a URL or not http(s) */
    uint64_t enqueued;    /* accepted into the queue */
    uint64_t popped;      /* handed to workers */
    uint64_t done;        /* reported finished */
    uint64_t in_flight;   /* popped and not yet done */
    uint64_t queue_len;   /* URLs waiting */
    uint64_t queue_bytes; /* bytes the queue holds */
    uint64_t seen_bytes;  /* bytes the seen-set holds */
    double est_count;     /* seen-set's estimated count */
    double est_fp_rate;   /* seen-set's estimated false-positive rate */
    unsigned layers;      /* Bloom layers (grow policy), 0 for exact */
    uint64_t hosts;       /* hosts the per-host scheduler holds (not the idle) */
    int closed;           /* close() was called */
    uint64_t recovered;   /* URLs queued again by sieve_frontier_open() */
    uint64_t spilled;     /* of queue_len, URLs waiting in the journal, not in memory */
    uint64_t deferred;    /* of queue_len, URLs set aside on disk behind their hosts' windows
                             or past the retries' share of queue_memory */
} sieve_frontier_stats;

/* Fills cfg with the defaults. */
SIEVE_API void sieve_frontier_config_init(sieve_frontier_config *cfg);

/* Creates a frontier. SIEVE_EINVAL for max_url_len 0, an invalid seen
 * config, or a setting only sieve_frontier_open() takes (queue_memory,
 * segment_bytes, checkpoint_bytes); the errors of sieve_seen_new(); SIEVE_ENOMEM. */
SIEVE_API int sieve_frontier_new(sieve_frontier **out, const sieve_frontier_config *cfg);

/* Opens a durable frontier whose state lives in directory dir (created
 * if missing): the same frontier as sieve_frontier_new() makes, whose
 * queue and seen-set survive the process. The URLs pushes enqueue are
 * journaled in batches: each is written (to the kernel, so it survives a
 * kill) before the next done() or sync() returns, and by the time 64 KiB
 * of them wait; every done() is written before it returns, after the
 * pushes before it. So a crawler that pushes a page's links and then
 * reports the page done has the links on disk first, and a kill loses
 * only pushes whose page is not done (fetched again, they are found
 * again); call sieve_frontier_sync() to make other pushes durable. An
 * open after a kill (even SIGKILL) queues again, in their order, the URLs
 * pushed and never reported done, those in flight at the kill included
 * (stats.recovered counts them). sieve_frontier_sync() makes
 * the journal survive a power loss too. The directory is locked while
 * open. Errors, each logged through cfg->logger with the file and what
 * to do: SIEVE_ESTATE (another process has it open), SIEVE_EMISMATCH (it
 * was made with another seen-set or state_meaning), SIEVE_EFORMAT,
 * SIEVE_ECHECKSUM, SIEVE_ETRUNCATED, SIEVE_EVERSION (damaged files, or
 * another format), SIEVE_EIO (errno), and those of sieve_frontier_new().
 * A torn last journal record, left by a crash, is cut with a warning.
 * A journal write that fails (a full disk) makes the push, done() or
 * sync() that made it return SIEVE_EIO and closes the frontier; the state stays as the last
 * complete record left it, and opens again once there is room. With
 * queue_memory the queue beyond the budget waits in the journal.
 * sieve_frontier_sync() and sieve_frontier_free() take checkpoints, so an
 * open reads the checkpoint and the journal written after it, not the
 * whole journal (docs/durable-frontier.md). mark_seen() is not
 * journaled.
 *
 * dir NULL makes a frontier that lives for this process only but keeps
 * its queue within queue_memory: its spill goes to a new directory under
 * $TMPDIR (else /tmp), which sieve_frontier_free() removes; dones are not
 * journaled there and nothing is synced. A killed process cannot remove
 * its own, so this open also removes the spills there that no live
 * process holds (locked by none, untouched for a minute). */
SIEVE_API int sieve_frontier_open(sieve_frontier **out, const char *dir,
                                  const sieve_frontier_config *cfg);

/* Makes all that a durable frontier has journaled survive a power loss
 * (fdatasync); other threads' pushes and pops wait only while it finds
 * what to sync. When the journal has grown since the last checkpoint by
 * more than a checkpoint costs (the seen-set's size plus the URLs in
 * memory), it then takes one: DIR/CHECKPOINT gets the seen-set and the
 * URLs queued in memory or in flight, written beside the journal, synced
 * and renamed into place, and the journal's segments that a restart no
 * longer reads are deleted. The URLs are listed under the frontier's lock
 * (a pause as long as writing the queue in memory to the page cache); the
 * seen-set is copied a megabyte at a time. Call it from one thread at a
 * time. SIEVE_OK at once for an in-memory frontier; SIEVE_EIO (logged,
 * and the frontier closes). The exact seen-set kind takes no checkpoints:
 * its open reads the whole journal. */
SIEVE_API int sieve_frontier_sync(sieve_frontier *f);

/* Frees the frontier. No thread may be inside another frontier call. A
 * durable frontier takes a last checkpoint first (see
 * sieve_frontier_sync()), so that the next open is quick. */
SIEVE_API void sieve_frontier_free(sieve_frontier *f);

/* Offers a canonical URL, without data. SIEVE_OK: enqueued. SIEVE_SEEN:
 * already seen, not enqueued. SIEVE_EEMPTY, SIEVE_ETOOLONG (over
 * max_url_len), SIEVE_ESCHEME (a scheme other than http or https: the URL
 * must start with "http://" or "https://", in any case), SIEVE_EURL (no
 * scheme, http(s) without "//", or a control character or space inside):
 * refused, and neither marked seen nor enqueued. SIEVE_ENOMEM: nothing
 * changed. Pushing after close() still records the URL (nothing is lost).
 * Thread-safe. */
SIEVE_API int sieve_frontier_push(sieve_frontier *f, const char *url, size_t len, uint32_t depth);

/* Offers n URLs under one lock: hashes them all first, prefetches, then
 * tests and enqueues each in order, exactly as n push() calls would (a URL
 * repeated inside the batch is enqueued once, with the data of its first
 * push), each with its data (sieve_url). results (may be NULL) gets each
 * URL's status: those of push(), and SIEVE_ETOOLONG for data_len over
 * SIEVE_URL_DATA_MAX, SIEVE_EINVAL for data NULL with data_len above 0
 * (refused, neither marked seen nor enqueued). Returns the number
 * enqueued, or SIEVE_ENOMEM if memory ran out part way (results says which
 * were handled). Thread-safe. */
SIEVE_API int sieve_frontier_push_batch(sieve_frontier *f, const sieve_url *urls, size_t n,
                                        int *results);

/* Marks a URL seen without enqueueing it (e.g. a redirect's final URL).
 * SIEVE_OK if it was new, SIEVE_SEEN if not, or the errors of push()
 * (SIEVE_ESCHEME included: only http(s) URLs are marked). */
SIEVE_API int sieve_frontier_mark_seen(sieve_frontier *f, const char *url, size_t len);

/* Takes the next URL (the oldest; with per-host scheduling, the oldest of
 * the host ready longest), copying it into buf (cap bytes) and filling
 * *out with it, its data and its ticket. A URL without data goes to buf,
 * NUL-terminated (out->url == buf, out->data NULL); one with data goes
 * after it: buf holds the data, a NUL, then the URL, NUL-terminated
 * (out->data == buf, out->url == buf + data_len + 1). timeout_ms 0
 * returns at once, a negative timeout waits without limit. Returns
 * SIEVE_OK; SIEVE_EAGAIN (timeout 0, nothing waiting) or SIEVE_ETIMEDOUT;
 * SIEVE_EDRAINED when the queue is empty and no URL is in flight;
 * SIEVE_ECLOSED after close(); SIEVE_ERANGE if cap is too small for the
 * URL and its data (nothing is removed; cap of max_url_len + 1 always
 * suffices for URLs pushed without data, max_url_len + SIEVE_URL_DATA_MAX
 * + 2 for any); SIEVE_ENOMEM if the table of URLs in flight cannot grow
 * (nothing is removed). Each SIEVE_OK must be answered by one done() (or
 * requeue()). Thread-safe. */
SIEVE_API int sieve_frontier_pop(sieve_frontier *f, char *buf, size_t cap, sieve_url *out,
                                 int timeout_ms);

/* As pop() with timeout 0, and on SIEVE_EAGAIN *ready_in (may be NULL)
 * tells how many seconds until a URL may be taken: the earliest time a
 * host's delay ends, or INFINITY when nothing will be ready before a
 * push, a done(), a requeue or a host's release (each of which calls
 * on_wake). Thread-safe. */
SIEVE_API int sieve_frontier_try_pop(sieve_frontier *f, char *buf, size_t cap, sieve_url *out,
                                     double *ready_in);

/* As pop() and try_pop(), for a caller that serves partition part of
 * the hosts (politeness.partitions; each host is in one, by a hash of its
 * name): a URL of a host in part if one is ready, else the one pop()
 * would take, so that no caller waits while another part has work. A
 * crawler whose workers keep their own connections gives each worker a
 * part: a host's URLs then go to one worker while it keeps up, and open
 * one set of connections. Without per-host scheduling, or with one
 * partition, the same as pop() and try_pop(). SIEVE_EINVAL if part is
 * not below the partitions. Thread-safe. */
SIEVE_API int sieve_frontier_pop_from(sieve_frontier *f, unsigned part, char *buf, size_t cap,
                                      sieve_url *out, int timeout_ms);
SIEVE_API int sieve_frontier_try_pop_from(sieve_frontier *f, unsigned part, char *buf, size_t cap,
                                          sieve_url *out, double *ready_in);

/* Reports that the URL u, filled by pop(), has been handled (its links
 * pushed); with per-host scheduling this frees its host's slot. Push a
 * page's links before calling done() for it, or the crawl may be judged
 * over too early. SIEVE_ESTATE, and nothing changes, unless u is a URL
 * that pop() handed out and that is still in flight: a URL never popped,
 * one whose bytes, host or ticket differ from what pop() gave, or one
 * already reported by done() or requeue(). SIEVE_EINVAL for a NULL f, u or
 * u->url. Thread-safe. */
SIEVE_API int sieve_frontier_done(sieve_frontier *f, const sieve_url *u);

/* Gives back a URL popped and not fetched (e.g. its host's robots.txt was
 * fetched in its place): it is no longer in flight, and pop() returns it
 * again before its host's other URLs, with a new ticket, once the host's
 * delay has passed from the requeue (what was done in the URL's place
 * counts as a request to its host). It keeps the data u carries (as pop()
 * gave them, or copied with the URL). u is checked as done() checks it
 * (SIEVE_ESTATE, nothing changed); it needs per-host scheduling (else
 * SIEVE_ESTATE); SIEVE_ENOMEM leaves it in flight; SIEVE_ETOOLONG or
 * SIEVE_EINVAL for data push_batch() would refuse. Thread-safe. */
SIEVE_API int sieve_frontier_requeue(sieve_frontier *f, const sieve_url *u);

/* As requeue(), and the host takes no URL for pause_s seconds (or its
 * delay, if longer): to retry a URL after a failure, slowing its host.
 * SIEVE_EINVAL for a negative pause. Thread-safe. */
SIEVE_API int sieve_frontier_requeue_after(sieve_frontier *f, const sieve_url *u, double pause_s);

/* As requeue(), except that u waits wait_s seconds off its host before it
 * goes back in front of the host's queue: to retry a URL after a failure
 * without holding up its host, whose other URLs go on meanwhile. The
 * waiting URL counts as queued (stats.queue_len; the crawl is not
 * drained) and is in the checkpoints of a durable frontier. With
 * queue_memory, the URLs waiting so take at most an eighth of it: past
 * that (an outage over many hosts) u waits on disk behind its host's
 * other URLs instead (stats.deferred), and its host gives no URL for
 * wait_s. u is checked
 * as done() checks it (SIEVE_ESTATE, nothing changed); it needs per-host
 * scheduling (else SIEVE_ESTATE); SIEVE_EINVAL for a negative wait;
 * SIEVE_ENOMEM leaves it in flight. Thread-safe. */
SIEVE_API int sieve_frontier_retry_later(sieve_frontier *f, const sieve_url *u, double wait_s);

/* Holds a host (pop() gives none of its URLs) or releases it, e.g. while
 * its robots.txt is fetched. Needs per-host scheduling (else SIEVE_ESTATE).
 * Thread-safe. */
SIEVE_API int sieve_frontier_hold_host(sieve_frontier *f, const char *host, size_t len, bool hold);

/* Starts no URL of one host (as set_host_delay() names it) for pause_s
 * seconds from now, or until an earlier pause ends if that is later: to
 * leave a failing server alone for a while. Its URLs stay queued.
 * SIEVE_ESTATE without per-host scheduling, SIEVE_EINVAL for a negative
 * pause. Thread-safe. */
SIEVE_API int sieve_frontier_pause_host(sieve_frontier *f, const char *host, size_t len,
                                        double pause_s);

/* Sets the delay between request starts for one host (host is the
 * authority, "name" or "name:port", len bytes), e.g. from robots.txt's
 * Crawl-delay; capped at politeness.max_delay_s. SIEVE_ESTATE without
 * per-host scheduling, SIEVE_EINVAL for a negative delay. Thread-safe. */
SIEVE_API int sieve_frontier_set_host_delay(sieve_frontier *f, const char *host, size_t len,
                                            double delay_s);

/* Closes the frontier: every blocked pop() and every later pop() returns
 * SIEVE_ECLOSED. Queued URLs stay queued. Idempotent. Thread-safe. */
SIEVE_API void sieve_frontier_close(sieve_frontier *f);

/* Fills *st with a consistent snapshot. Thread-safe. */
SIEVE_API void sieve_frontier_stats_get(sieve_frontier *f, sieve_frontier_stats *st);

#ifdef __cplusplus
}
#endif
#endif
