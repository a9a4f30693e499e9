/* frontier-state.c - a frontier's state directory.
 *
 *     DIR/LOCK      flock()ed by the one process that has the frontier open
 *     DIR/STATE     what gives the state its meaning: format, seen-set
 *                   settings, and the embedder's own (state_meaning)
 *     DIR/journal/  append-only segments: one PUSH record per URL the
 *                   seen-set took, one DONE record per URL finished
 *
 * Every push that enqueues a URL is journaled before push() returns, with
 * one write(2) for a batch; every done() is journaled before it frees the
 * URL's slot. What write(2) accepted survives a kill -9, so on the next
 * open the URLs pushed and never reported done, those in flight at the
 * kill included, are exactly the queue again: nothing discovered is lost,
 * and at most the URLs in flight are fetched twice. sync() (fdatasync)
 * extends that to a power loss, up to the last sync.
 *
 * Records. PUSH: the URL's 4-byte tag (little-endian), then the URL.
 * DONE: the URL's XXH3-64 with FSTATE_URL_SEED (8 bytes, little-endian); a URL is pushed once,
 * so its hash names it (a collision between a URL done after a crash and
 * one pending costs one URL in 2^64, not a lost crawl).
 *
 * Replay reads the journal twice: once for the done hashes, then for the
 * pushes, which go to the seen-set whatever it says (a Bloom filter may
 * call a journaled URL seen; it was queued, so it is queued again) and,
 * unless done, to the queue in their original order.
 *
 * This first version replays the whole journal at open and keeps it
 * whole; checkpoints that bound both, and the queue's spill to disk, are
 * the next steps (docs/durable-frontier.md). */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "frontier-state.h"
#include "journal.h"
#include "sieve/log.h"
#include "statedir.h"

#define STATE_NAME    "STATE"
#define STATE_KIND    "SIEVEFS"
#define STATE_VERSION 1u
#define JOURNAL_DIR   "journal"
#define REC_PUSH      1u
#define REC_DONE      2u
#define TAG_BYTES     4u
#define HASH_BYTES    8u

/* Pushes journaled per write(2): a page's links come in batches of 64. */
#define LOG_BATCH 64

struct fstate {
    statedir *dir;
    journal *j;
    sieve_logger logger;
    char path[512];
    int failed;         /* a journal write failed: nothing more is journaled */
    int temporary;      /* the spill of an in-memory frontier: removed at close */
    unsigned char *buf; /* records of a batch, packed */
    size_t used, cap;
    journal_reader *head;  /* the spill's next URL to read back, or NULL */
    struct hash_set *done; /* after a recovery that spilled: the URLs done */
};

static void set_free(struct hash_set *h);

uint64_t fstate_url_hash(const char *url, size_t len)
{
    return XXH3_64bits_withSeed(url, len, FSTATE_URL_SEED);
}

/* ---- STATE: the settings the state was made with ---- */

/* The settings that give the journal its meaning, one "name=value" a line. */
static char *meaning_of(const sieve_frontier_config *cfg)
{
    const sieve_seen_config *s = &cfg->seen;
    const char *extra = cfg->state_meaning != NULL ? cfg->state_meaning : "";
    size_t cap = 512 + strlen(extra);
    char *text = malloc(cap);
    if (text == NULL)
        return NULL;
    snprintf(text, cap,
             "seen.kind=%s\nseen.capacity=%" PRIu64 "\nseen.fp_rate=%.17g\nseen.layout=%d\n"
             "seen.overflow=%s\nseen.seed=%" PRIu64 "\nmax_url_len=%zu\n%s%s",
             s->kind == SIEVE_SEEN_EXACT ? "exact" : "bloom", s->capacity,
             s->kind == SIEVE_SEEN_EXACT ? 0.0 : s->fp_rate, (int)s->layout,
             s->overflow == SIEVE_OVERFLOW_GROW ? "grow" : "warn", s->seed, cfg->max_url_len, extra,
             extra[0] != '\0' && extra[strlen(extra) - 1] != '\n' ? "\n" : "");
    return text;
}

/* The first line where a and b differ, copied into the two buffers. */
static void first_difference(const char *a, const char *b, char *la, char *lb, size_t cap)
{
    while (*a != '\0' || *b != '\0') {
        size_t na = strcspn(a, "\n"), nb = strcspn(b, "\n");
        if (na != nb || memcmp(a, b, na) != 0) {
            snprintf(la, cap, "%.*s", (int)na, a);
            snprintf(lb, cap, "%.*s", (int)nb, b);
            return;
        }
        a += na + (a[na] == '\n');
        b += nb + (b[nb] == '\n');
    }
    snprintf(la, cap, "(nothing)");
    snprintf(lb, cap, "(nothing)");
}

static int check_meaning(fstate *s, const sieve_frontier_config *cfg)
{
    char *want = meaning_of(cfg);
    if (want == NULL)
        return SIEVE_ENOMEM;
    void *have = NULL;
    size_t len = 0;
    int rc = statedir_read(s->dir, STATE_NAME, STATE_KIND, STATE_VERSION, &have, &len);
    if (rc == SIEVE_EIO && errno == ENOENT) {
        rc = statedir_write(s->dir, STATE_NAME, STATE_KIND, STATE_VERSION, want, strlen(want));
        if (rc != SIEVE_OK)
            sieve_log(&s->logger, SIEVE_LOG_ERROR, "%s", statedir_message(s->dir));
    } else if (rc != SIEVE_OK) {
        sieve_log(&s->logger, SIEVE_LOG_ERROR, "%s", statedir_message(s->dir));
    } else if (len != strlen(want) || memcmp(have, want, len) != 0) {
        char was[256], now[256];
        first_difference(have, want, was, now, sizeof was);
        sieve_log(&s->logger, SIEVE_LOG_ERROR,
                  "%s was made with %s, and this run asks for %s: run with the settings it was "
                  "made with, or give another state directory",
                  s->path, was, now);
        rc = SIEVE_EMISMATCH;
    }
    free(have);
    free(want);
    return rc;
}

static int fstate_open_at(fstate **out, const char *dir, const sieve_frontier_config *cfg,
                          bool temporary)
{
    fstate *s = calloc(1, sizeof *s);
    if (s == NULL)
        return SIEVE_ENOMEM;
    s->temporary = temporary;
    s->logger = cfg->logger;
    snprintf(s->path, sizeof s->path, "%s", dir);
    char msg[512] = "";
    int rc = statedir_lock(&s->dir, dir, msg, sizeof msg);
    if (rc != SIEVE_OK)
        sieve_log(&s->logger, SIEVE_LOG_ERROR, "%s", msg);
    if (rc == SIEVE_OK && !temporary)
        rc = check_meaning(s, cfg);
    if (rc == SIEVE_OK) {
        char jdir[600];
        snprintf(jdir, sizeof jdir, "%s/%s", dir, JOURNAL_DIR);
        journal_recovery rec;
        rc = journal_open(&s->j, jdir, 0, &rec, msg, sizeof msg);
        if (rc != SIEVE_OK)
            sieve_log(&s->logger, SIEVE_LOG_ERROR, "%s", msg);
        else if (rec.repaired)
            sieve_log(&s->logger, SIEVE_LOG_WARN, "journal: %s", rec.what);
    }
    if (rc != SIEVE_OK) {
        fstate_close(s);
        return rc;
    }
    *out = s;
    return SIEVE_OK;
}

int fstate_open(fstate **out, const char *dir, const sieve_frontier_config *cfg)
{
    return fstate_open_at(out, dir, cfg, false);
}

/* Removes a temporary state: its journal's segments, then the rest. */
static void remove_temporary(const char *dir)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s", dir, JOURNAL_DIR);
    DIR *d = opendir(path);
    for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s/%s", dir, JOURNAL_DIR, e->d_name);
        unlink(path);
    }
    if (d != NULL)
        closedir(d);
    snprintf(path, sizeof path, "%s/%s", dir, JOURNAL_DIR);
    rmdir(path);
    snprintf(path, sizeof path, "%s/%s", dir, STATEDIR_LOCK_NAME);
    unlink(path);
    rmdir(dir);
}

int fstate_open_temporary(fstate **out, const sieve_frontier_config *cfg)
{
    const char *tmp = getenv("TMPDIR");
    char dir[512];
    snprintf(dir, sizeof dir, "%s/sieve-queue-XXXXXX", tmp != NULL && tmp[0] ? tmp : "/tmp");
    if (mkdtemp(dir) == NULL) {
        sieve_log(&cfg->logger, SIEVE_LOG_ERROR, "cannot make a directory for the queue in %s: %s",
                  tmp != NULL && tmp[0] ? tmp : "/tmp", strerror(errno));
        return SIEVE_EIO;
    }
    sieve_frontier_config c = *cfg;
    c.state_meaning = NULL;
    int rc = fstate_open_at(out, dir, &c, true);
    if (rc != SIEVE_OK)
        remove_temporary(dir);
    return rc;
}

bool fstate_temporary(const fstate *s)
{
    return s->temporary;
}

void fstate_close(fstate *s)
{
    if (s == NULL)
        return;
    if (s->head != NULL)
        journal_reader_close(s->head);
    set_free(s->done);
    if (s->j != NULL)
        journal_close(s->j);
    statedir_unlock(s->dir);
    if (s->temporary)
        remove_temporary(s->path);
    free(s->buf);
    free(s);
}

/* ---- the set of done hashes, for the replay ---- */

typedef struct hash_set {
    uint64_t *slot; /* 0: empty; the hash 0 is kept aside */
    size_t cap, n;
    int has_zero;
} hash_set;

static void set_free(struct hash_set *h)
{
    if (h != NULL)
        free(h->slot);
    free(h);
}

static int set_grow(hash_set *h)
{
    size_t cap = h->cap ? h->cap * 2 : 1024;
    uint64_t *slot = calloc(cap, sizeof *slot);
    if (slot == NULL)
        return SIEVE_ENOMEM;
    for (size_t i = 0; i < h->cap; i++) {
        if (h->slot[i] == 0)
            continue;
        size_t at = h->slot[i] & (cap - 1);
        while (slot[at] != 0)
            at = (at + 1) & (cap - 1);
        slot[at] = h->slot[i];
    }
    free(h->slot);
    h->slot = slot;
    h->cap = cap;
    return SIEVE_OK;
}

static int set_add(hash_set *h, uint64_t key)
{
    if (key == 0) {
        h->has_zero = 1;
        return SIEVE_OK;
    }
    if ((h->n + 1) * 2 > h->cap && set_grow(h) != SIEVE_OK)
        return SIEVE_ENOMEM;
    size_t at = key & (h->cap - 1);
    while (h->slot[at] != 0 && h->slot[at] != key)
        at = (at + 1) & (h->cap - 1);
    if (h->slot[at] == 0)
        h->n++;
    h->slot[at] = key;
    return SIEVE_OK;
}

static int set_has(const hash_set *h, uint64_t key)
{
    if (key == 0)
        return h->has_zero;
    if (h->cap == 0)
        return 0;
    size_t at = key & (h->cap - 1);
    while (h->slot[at] != 0) {
        if (h->slot[at] == key)
            return 1;
        at = (at + 1) & (h->cap - 1);
    }
    return 0;
}

/* ---- replay ---- */

static uint64_t get_le(const unsigned char *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static void put_le(unsigned char *p, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

typedef struct replay {
    fstate *s;
    hash_set *done;
    fstate_seen_fn seen;
    fstate_pending_fn pending;
    void *ud;
    uint64_t n_pending, n_spilled, n_done;
} replay;

static int refuse_record(fstate *s, journal_reader *r, int rc)
{
    sieve_log(&s->logger, SIEVE_LOG_ERROR,
              "%s: %s; remove the directory to start over, or restore it from a backup", s->path,
              journal_reader_message(r));
    return rc;
}

/* One pass over the journal; pass 0 gathers the done hashes, pass 1
 * hands out the pushes. */
static int replay_pass(replay *p, int pass)
{
    fstate *s = p->s;
    journal_reader *r;
    int rc = journal_reader_open(s->j, journal_begin(s->j), &r);
    if (rc != SIEVE_OK)
        return rc;
    for (;;) {
        uint8_t type;
        const void *data;
        uint32_t len;
        journal_pos pos;
        rc = journal_read(r, &type, &data, &len, &pos);
        if (rc == JOURNAL_END) {
            rc = SIEVE_OK;
            break;
        }
        if (rc != SIEVE_OK) {
            rc = refuse_record(s, r, rc);
            break;
        }
        const unsigned char *b = data;
        if (type == REC_DONE && len == HASH_BYTES) {
            if (pass == 0 && (rc = set_add(p->done, get_le(b, HASH_BYTES))) != SIEVE_OK)
                break;
            p->n_done += pass == 0;
        } else if (type == REC_PUSH && len > TAG_BYTES) {
            if (pass == 0)
                continue;
            const char *url = (const char *)b + TAG_BYTES;
            size_t n = len - TAG_BYTES;
            p->seen(p->ud, url, n);
            if (set_has(p->done, fstate_url_hash(url, n)))
                continue;
            p->n_pending++;
            if (p->n_spilled > 0) { /* once one stays on disk, all later do */
                p->n_spilled++;
                continue;
            }
            rc = p->pending(p->ud, url, n, (uint32_t)get_le(b, TAG_BYTES));
            if (rc == FSTATE_SPILL) {
                if ((rc = journal_reader_open(s->j, pos, &s->head)) != SIEVE_OK)
                    break;
                p->n_spilled = 1;
            } else if (rc != SIEVE_OK) {
                break;
            }
        } else {
            sieve_log(&s->logger, SIEVE_LOG_ERROR,
                      "%s: a journal record of unknown type %u (%u bytes): written by another "
                      "version? Remove the directory to start over",
                      s->path, type, len);
            rc = SIEVE_EFORMAT;
            break;
        }
    }
    journal_reader_close(r);
    return rc;
}

int fstate_replay(fstate *s, fstate_seen_fn seen, fstate_pending_fn pending, void *ud,
                  uint64_t *n_pending, uint64_t *n_spilled, uint64_t *n_done)
{
    replay p = {.s = s, .seen = seen, .pending = pending, .ud = ud};
    p.done = calloc(1, sizeof *p.done);
    if (p.done == NULL)
        return SIEVE_ENOMEM;
    int rc = replay_pass(&p, 0);
    if (rc == SIEVE_OK)
        rc = replay_pass(&p, 1);
    /* the spill read back from the head passes URLs done before the kill */
    if (rc == SIEVE_OK && p.n_spilled > 0)
        s->done = p.done;
    else
        set_free(p.done);
    *n_pending = p.n_pending;
    *n_spilled = p.n_spilled;
    *n_done = p.n_done;
    return rc;
}

void fstate_head_stop(fstate *s)
{
    if (s->head != NULL)
        journal_reader_close(s->head);
    s->head = NULL;
    set_free(s->done);
    s->done = NULL;
}

int fstate_head_next(fstate *s, const char **url, size_t *len, uint32_t *tag)
{
    if (s->head == NULL)
        return SIEVE_EAGAIN;
    for (;;) {
        uint8_t type;
        const void *data;
        uint32_t n;
        int rc = journal_read(s->head, &type, &data, &n, NULL);
        if (rc == JOURNAL_END)
            return SIEVE_EAGAIN;
        if (rc != SIEVE_OK)
            return refuse_record(s, s->head, rc);
        if (type != REC_PUSH || n <= TAG_BYTES)
            continue;
        const unsigned char *b = data;
        const char *u = (const char *)b + TAG_BYTES;
        if (s->done != NULL && set_has(s->done, fstate_url_hash(u, n - TAG_BYTES)))
            continue;
        *url = u;
        *len = n - TAG_BYTES;
        *tag = (uint32_t)get_le(b, TAG_BYTES);
        return SIEVE_OK;
    }
}

/* ---- logging ---- */

static int failed_write(fstate *s)
{
    int e = errno;
    s->failed = 1;
    sieve_log(&s->logger, SIEVE_LOG_ERROR, "%s: %s", s->path, journal_message(s->j));
    errno = e;
    return SIEVE_EIO;
}

/* Room for n more bytes in the packing buffer (kept between calls, so a
 * steady crawl allocates nothing per push). */
static unsigned char *room(fstate *s, size_t n)
{
    if (s->used + n > s->cap) {
        size_t cap = (s->used + n) * 2;
        unsigned char *b = realloc(s->buf, cap);
        if (b == NULL)
            return NULL;
        s->buf = b;
        s->cap = cap;
    }
    unsigned char *p = s->buf + s->used;
    s->used += n;
    return p;
}

int fstate_log_pushes(fstate *s, const sieve_url *urls, const int *take, size_t n,
                      size_t spill_from)
{
    if (s->failed)
        return SIEVE_EIO;
    journal_record recs[LOG_BATCH];
    journal_pos pos[LOG_BATCH];
    size_t off[LOG_BATCH];
    size_t i = 0, spill_rec = SIZE_MAX;
    while (i < n) {
        size_t k = 0;
        s->used = 0;
        for (; i < n && k < LOG_BATCH; i++) {
            if (!take[i])
                continue;
            if (i == spill_from)
                spill_rec = k;
            unsigned char *b = room(s, TAG_BYTES + urls[i].len);
            if (b == NULL) {
                s->failed = 1; /* a push not journaled must stop the run */
                return SIEVE_ENOMEM;
            }
            put_le(b, urls[i].depth, TAG_BYTES);
            memcpy(b + TAG_BYTES, urls[i].url, urls[i].len);
            off[k] = (size_t)(b - s->buf);
            recs[k++] = (journal_record){.type = REC_PUSH, .len = TAG_BYTES + urls[i].len};
        }
        /* the buffer may have moved while it grew: point at it now */
        for (size_t r = 0; r < k; r++)
            recs[r].payload = s->buf + off[r];
        if (k > 0 && journal_append_batch(s->j, recs, k, pos, NULL) != SIEVE_OK)
            return failed_write(s);
        if (spill_rec != SIZE_MAX) {
            if (s->head != NULL)
                journal_reader_close(s->head);
            s->head = NULL;
            if (journal_reader_open(s->j, pos[spill_rec], &s->head) != SIEVE_OK)
                return failed_write(s);
            spill_rec = SIZE_MAX;
        }
    }
    return SIEVE_OK;
}

int fstate_log_done(fstate *s, uint64_t url_hash)
{
    if (s->failed)
        return SIEVE_EIO;
    if (s->temporary)
        return SIEVE_OK; /* nothing is resumed from it */
    unsigned char b[HASH_BYTES];
    put_le(b, url_hash, HASH_BYTES);
    if (journal_append(s->j, REC_DONE, b, sizeof b, NULL) != SIEVE_OK)
        return failed_write(s);
    return SIEVE_OK;
}

int fstate_sync(fstate *s)
{
    if (s->failed)
        return SIEVE_EIO;
    if (s->temporary)
        return SIEVE_OK;
    if (journal_sync(s->j) != SIEVE_OK)
        return failed_write(s);
    return SIEVE_OK;
}
