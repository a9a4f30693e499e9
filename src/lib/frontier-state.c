/* frontier-state.c - a frontier's state directory.
 *
 *     DIR/LOCK      flock()ed by the one process that has the frontier open
 *     DIR/STATE     what gives the state its meaning: format, seen-set
 *                   settings, and the embedder's own (state_meaning)
 *     DIR/journal/  append-only segments: one PUSH record per URL the
 *                   seen-set took (with its data), one DONE record per
 *                   URL finished
 *
 * Records wait in a packing buffer and go out in one write(2): the
 * pushes when 64 KiB of them wait, or with the next done(), sync,
 * checkpoint or read of the spill, whichever comes first. A done() is
 * written before it returns, after every push before it: a crawler
 * pushes a page's links and then reports the page done, so a page is
 * done only once its links are in the journal, and a kill loses only
 * pushes whose page is not done, which is fetched again. What write(2)
 * accepted survives a kill -9, so on the next open the URLs pushed and
 * never reported done, those in flight at the kill included, are exactly
 * the queue again: nothing discovered is lost, and at most the URLs in
 * flight are fetched twice. A write per page instead of one per push
 * call is what keeps a spilling push near the cost of the Bloom filter's
 * own add. sync() (fdatasync) extends that to a power loss, up to the
 * last sync.
 *
 * Records (push-record.h): PUSH, a URL's entry (entry.h: the URL, or its
 * data, a NUL and the URL) and its tag; PUSHF, the same front-coded
 * against the entry before it; DONE, the URL's XXH3-64 with
 * FSTATE_URL_SEED, without its data. A URL is pushed once, so its hash
 * names it (a collision between a URL done after a crash and one pending
 * costs one URL in 2^64, not a lost crawl).
 *
 * Checkpoints (CHECKPOINT, checkpoint.c) bound what an open reads: the
 * seen-set's layers and the URLs in memory or in flight at a journal
 * position P, and the spill's read position H. An open loads them and
 * reads the journal from P (frontier-replay.c). A checkpoint is taken
 * when the journal has grown past what one costs (the layers plus the
 * last list), so its writes cost at most what the journal's do; then the
 * segments before P and H go. Without a checkpoint the same reading
 * starts at the journal's first record. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "bytes.h"
#include "checkpoint.h"
#include "entry.h"
#include "frontier-state-internal.h"
#include "journal.h"
#include "push-record.h"
#include "seen-internal.h"
#include "sieve/hashset.h"
#include "sieve/log.h"
#include "statedir.h"

#define STATE_NAME "STATE"
#define STATE_KIND "SIEVEFS"
/* 2: push records and the checkpoint's list hold entries (entry.h), URLs
 * that may carry data. A state of version 1 holds URLs without data, which
 * are entries too: it is read, and STATE is rewritten as 2 before anything
 * is written that a version-1 build would misread. */
#define STATE_VERSION         2u
#define STATE_VERSION_NO_DATA 1u
#define JOURNAL_DIR           "journal"
#define TEMP_PREFIX           "sieve-queue-"
/* Seconds a temporary spill must have been left alone before another
 * process may take it for one a killed process left. */
#define STALE_AFTER_S 60

/* Pending records are written once they reach this many bytes, if no
 * done(), sync or read of the spill has written them before. */
#define FLUSH_BYTES (64u << 10)
/* The frontier takes URLs of at most SIEVE_HASHSET_KEY_MAX bytes. */
_Static_assert(PUSH_HEAD_MAX + ENTRY_MAX(SIEVE_HASHSET_KEY_MAX) <= JOURNAL_PAYLOAD_MAX,
               "a push record fits a journal record");
/* The seen-set is copied into a checkpoint this much at a time, each
 * piece under the frontier's lock. */
#define COPY_PIECE (1u << 20)
/* No checkpoint before the journal has grown this much: below it a
 * restart reads the journal in a blink anyway. */
#define CHECKPOINT_MIN_BYTES (1u << 20)

uint64_t fstate_url_hash(const char *url, size_t len)
{
    return XXH3_64bits_withSeed(url, len, FSTATE_URL_SEED);
}

/* The hash of an entry's URL: what its DONE record holds. */
uint64_t fstate_entry_hash(const char *e, size_t n)
{
    size_t len;
    const char *url = entry_url(e, n, &len);
    return fstate_url_hash(url, len);
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

/* Reads STATE: of this version, or of version 1 (*old set), which this
 * build reads too. */
static int read_state(fstate *s, void **have, size_t *len, bool *old)
{
    *old = false;
    int rc = statedir_read(s->dir, STATE_NAME, STATE_KIND, STATE_VERSION, have, len);
    if (rc != SIEVE_EVERSION)
        return rc;
    rc = statedir_read(s->dir, STATE_NAME, STATE_KIND, STATE_VERSION_NO_DATA, have, len);
    if (rc == SIEVE_OK)
        *old = true;
    else if (rc == SIEVE_EVERSION) /* for the message: what this build reads */
        rc = statedir_read(s->dir, STATE_NAME, STATE_KIND, STATE_VERSION, have, len);
    return rc;
}

/* Whether a crawl has used the directory: STATE is written before the
 * journal is made, so a journal or a checkpoint without it is a STATE
 * lost, whose settings a fresh one would silently replace. */
static bool made_before(const fstate *s)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/" JOURNAL_DIR, s->path);
    if (access(path, F_OK) == 0)
        return true;
    snprintf(path, sizeof path, "%s/" CKPT_NAME, s->path);
    return access(path, F_OK) == 0;
}

static int check_meaning(fstate *s, const sieve_frontier_config *cfg)
{
    char *want = meaning_of(cfg);
    if (want == NULL)
        return SIEVE_ENOMEM;
    void *have = NULL;
    size_t len = 0;
    bool old;
    int rc = read_state(s, &have, &len, &old);
    if (rc == SIEVE_EIO && errno == ENOENT && made_before(s)) {
        sieve_log(&s->logger, SIEVE_LOG_ERROR,
                  "%s: " STATE_NAME
                  " is missing, yet the directory holds a crawl's journal or " CKPT_NAME
                  ": put its " STATE_NAME " back, or remove the directory to start over",
                  s->path);
        rc = SIEVE_EFORMAT;
    } else if (rc == SIEVE_EIO && errno == ENOENT) {
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
    } else if (old) {
        rc = statedir_write(s->dir, STATE_NAME, STATE_KIND, STATE_VERSION, want, strlen(want));
        if (rc != SIEVE_OK)
            sieve_log(&s->logger, SIEVE_LOG_ERROR, "%s", statedir_message(s->dir));
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
    s->spill_at = SIZE_MAX;
    s->logger = cfg->logger;
    s->max_entry = ENTRY_MAX(cfg->max_url_len);
    s->ckpt_every = cfg->checkpoint_bytes;
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
        rc = journal_open(&s->j, jdir, cfg->segment_bytes, &rec, msg, sizeof msg);
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

/* Removes the files of dir/sub, then dir/sub. */
static void remove_sub(const char *dir, const char *sub)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s", dir, sub);
    DIR *d = opendir(path);
    for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s/%s", dir, sub, e->d_name);
        unlink(path);
    }
    if (d != NULL)
        closedir(d);
    snprintf(path, sizeof path, "%s/%s", dir, sub);
    rmdir(path);
}

/* Removes a temporary state: its journal's segments and deferred URLs'
 * runs, then the rest. */
static void remove_temporary(const char *dir)
{
    remove_sub(dir, JOURNAL_DIR);
    remove_sub(dir, FSTATE_RUNS_DIR);
    char path[700];
    snprintf(path, sizeof path, "%.600s/%s", dir, STATEDIR_LOCK_NAME);
    unlink(path);
    rmdir(dir);
}

/* Removes the temporary spills that processes now gone left behind (a
 * kill leaves its spill, and it may hold gigabytes): this user's, whose
 * lock no process holds, and old enough that their maker is not between
 * creating and locking them. */
static void remove_stale_temporaries(const char *tmp, const sieve_logger *lg)
{
    DIR *d = opendir(tmp);
    if (d == NULL)
        return;
    time_t now = time(NULL);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strncmp(e->d_name, TEMP_PREFIX, strlen(TEMP_PREFIX)) != 0)
            continue;
        char path[700];
        snprintf(path, sizeof path, "%s/%s", tmp, e->d_name);
        struct stat st;
        statedir *sd;
        if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
            now - st.st_mtime < STALE_AFTER_S || statedir_lock(&sd, path, NULL, 0) != SIEVE_OK)
            continue;
        remove_temporary(path);
        statedir_unlock(sd);
        sieve_log(lg, SIEVE_LOG_INFO, "removed %s, a queue spill left by a process that is gone",
                  path);
    }
    closedir(d);
}

int fstate_open_temporary(fstate **out, const sieve_frontier_config *cfg)
{
    const char *tmp = getenv("TMPDIR");
    if (tmp == NULL || tmp[0] == '\0')
        tmp = "/tmp";
    remove_stale_temporaries(tmp, &cfg->logger);
    char dir[512];
    snprintf(dir, sizeof dir, "%s/" TEMP_PREFIX "XXXXXX", tmp);
    if (mkdtemp(dir) == NULL) {
        sieve_log(&cfg->logger, SIEVE_LOG_ERROR, "cannot make a directory for the queue in %s: %s",
                  tmp, strerror(errno));
        return SIEVE_EIO;
    }
    sieve_frontier_config c = *cfg;
    c.state_meaning = NULL;
    int rc = fstate_open_at(out, dir, &c, true);
    if (rc != SIEVE_OK)
        remove_temporary(dir);
    return rc;
}

const char *fstate_path(const fstate *s)
{
    return s->path;
}

bool fstate_temporary(const fstate *s)
{
    return s->temporary;
}

void fstate_close(fstate *s)
{
    if (s == NULL)
        return;
    if (s->j != NULL && !s->temporary)
        (void)fstate_flush(s); /* a failure was logged, and the pushes' pages are not done */
    if (s->head != NULL)
        journal_reader_close(s->head);
    done_set_free(s->done);
    if (s->j != NULL)
        journal_close(s->j);
    statedir_unlock(s->dir);
    if (s->temporary)
        remove_temporary(s->path);
    free(s->buf);
    free(s->prev);
    free(s->entry);
    chain_free(&s->head_chain);
    free(s);
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

/* Packs a record of head (n bytes) then body (m bytes) after the pending
 * ones (no longer than JOURNAL_PAYLOAD_MAX: see FLUSH_BYTES), sealed at
 * once, or (sealed false) left for seal_from() to seal. */
static int pend_add(fstate *s, uint8_t type, const void *head, size_t n, const void *body, size_t m,
                    bool sealed)
{
    unsigned char *b = room(s, JOURNAL_RECORD_SIZE(n + m));
    if (b == NULL)
        return SIEVE_ENOMEM;
    if (sealed)
        journal_encode(b, type, head, n, body, m);
    else
        journal_encode_unsealed(b, type, head, n, body, m);
    return SIEVE_OK;
}

/* Seals the pending records from offset at on (journal.h says why late). */
static void seal_from(fstate *s, size_t at)
{
    while (at < s->used)
        at += journal_seal(s->buf + at);
}

/* Writes the pending records, one write(2) per segment they go to, and
 * opens the spill's head at its first record if one waited. */
int fstate_flush(fstate *s)
{
    if (s->used == 0)
        return s->failed ? SIEVE_EIO : SIEVE_OK;
    if (s->failed)
        return SIEVE_EIO;
    journal_pos first;
    bool spill = s->spill_at != SIZE_MAX;
    int rc = journal_append_packed(s->j, s->buf, s->used, s->spill_at, &first);
    s->appended += s->used;
    s->used = 0;
    s->prev_len = 0; /* the next write starts a chain: a reader may start there */
    s->spill_at = SIZE_MAX;
    if (rc != SIEVE_OK)
        return failed_write(s);
    if (spill && fstate_head_open(s, first, first) != SIEVE_OK)
        return failed_write(s);
    return SIEVE_OK;
}

/* Remembers the entry just written, for the next one's front-coding. */
static int keep_prev(fstate *s, const char *e, size_t len)
{
    if (len > s->prev_cap) {
        char *p = realloc(s->prev, len * 2);
        if (p == NULL)
            return SIEVE_ENOMEM;
        s->prev = p;
        s->prev_cap = len * 2;
    }
    memcpy(s->prev, e, len);
    s->prev_len = len;
    return SIEVE_OK;
}

/* Adds the push record of an entry (len bytes), front-coded against prev
 * (prev_len 0: none), to the pending ones. */
static int log_push(fstate *s, const char *prev, size_t prev_len, const char *e, size_t len,
                    uint32_t tag)
{
    unsigned char head[PUSH_HEAD_MAX];
    uint8_t type;
    size_t skip;
    size_t n = push_encode(prev, prev_len, e, len, tag, head, &type, &skip);
    return pend_add(s, type, head, n, e + skip, len - skip, false);
}

int fstate_log_pushes(fstate *s, const sieve_url *urls, const int *take, size_t n,
                      size_t spill_from)
{
    if (s->failed)
        return SIEVE_EIO;
    /* The entry before, for front-coding: the caller's own bytes while the
     * call lasts, so copied only once at its end, and at once when it was
     * made in s->entry, which the next URL with data takes over. */
    const char *prev = s->prev;
    size_t prev_len = s->prev_len;
    size_t unsealed = s->used;
    for (size_t i = 0; i < n; i++) {
        if (!take[i])
            continue;
        if (i == spill_from) {
            prev_len = 0; /* the head starts reading there */
            s->spill_at = s->used;
        }
        const char *e = entry_make(&urls[i], &s->entry, &s->entry_cap);
        size_t len = entry_len(&urls[i]);
        if (e == NULL || log_push(s, prev, prev_len, e, len, urls[i].depth) != SIEVE_OK ||
            (e == s->entry && keep_prev(s, e, len) != SIEVE_OK)) {
            s->failed = 1; /* a push not journaled must stop the run */
            return SIEVE_ENOMEM;
        }
        prev = e == s->entry ? s->prev : e;
        prev_len = len;
    }
    seal_from(s, unsealed);
    if (prev != s->prev && keep_prev(s, prev, prev_len) != SIEVE_OK) {
        s->failed = 1;
        return SIEVE_ENOMEM;
    }
    s->prev_len = prev_len;
    return s->used >= FLUSH_BYTES ? fstate_flush(s) : SIEVE_OK;
}

int fstate_log_done(fstate *s, uint64_t url_hash)
{
    if (s->failed)
        return SIEVE_EIO;
    if (s->temporary)
        return SIEVE_OK; /* nothing is resumed from it */
    unsigned char b[HASH_BYTES];
    le_put(b, url_hash, HASH_BYTES);
    if (pend_add(s, REC_DONE, b, sizeof b, NULL, 0, true) != SIEVE_OK) {
        s->failed = 1;
        return SIEVE_ENOMEM;
    }
    return fstate_flush(s); /* the pushes before it with it: the page's links first */
}

/* ---- sync and checkpoints ---- */

/* fdatasync() of the journal, the lock held only to find the segment. */
static int sync_journal(fstate *s, pthread_mutex_t *lock)
{
    pthread_mutex_lock(lock);
    int failed = fstate_flush(s) != SIEVE_OK;
    int fd = failed ? -1 : journal_dup_fd(s->j);
    pthread_mutex_unlock(lock);
    if (failed)
        return SIEVE_EIO;
    if (fd >= 0 && fdatasync(fd) == 0) {
        close(fd);
        return SIEVE_OK;
    }
    int e = errno;
    if (fd >= 0)
        close(fd);
    pthread_mutex_lock(lock);
    s->failed = 1;
    sieve_log(&s->logger, SIEVE_LOG_ERROR, "%s: cannot sync the journal: %s", s->path, strerror(e));
    pthread_mutex_unlock(lock);
    errno = e;
    return SIEVE_EIO;
}

/* Copies the seen-set's first nlayers layers into w a piece at a time,
 * each piece under the lock, so pushes wait for one memcpy at most. */
static int copy_layers(ckpt_writer *w, pthread_mutex_t *lock, sieve_seen *seen, unsigned nlayers)
{
    unsigned char *piece = malloc(COPY_PIECE);
    if (piece == NULL)
        return SIEVE_ENOMEM;
    int rc = SIEVE_OK;
    for (unsigned i = 0; i < nlayers && rc == SIEVE_OK; i++) {
        size_t bytes;
        const unsigned char *words = (const unsigned char *)seen_layer_words(seen, i, &bytes);
        for (size_t at = 0; at < bytes && rc == SIEVE_OK; at += COPY_PIECE) {
            size_t n = bytes - at < COPY_PIECE ? bytes - at : COPY_PIECE;
            pthread_mutex_lock(lock);
            memcpy(piece, words + at, n);
            pthread_mutex_unlock(lock);
            rc = ckpt_put_layers(w, piece, n);
        }
    }
    free(piece);
    return rc;
}

/* After a recovery the head passes over the URLs done since the last
 * checkpoint (s->done), which lie in the spill still ahead of it. A new
 * checkpoint keeps H, and a recovery from it knows only the DONE records
 * after its P: so they are written again after P (sync_journal() writes
 * them out before the commit), or a second recovery would hand them out
 * again. They go with the spill, once the head has read it all. */
static int relog_dones(fstate *s)
{
    if (s->done == NULL)
        return SIEVE_OK;
    unsigned char b[HASH_BYTES];
    for (size_t i = 0; i <= s->done->cap; i++) {
        bool last = i == s->done->cap; /* the hash 0, kept aside */
        if (last ? !s->done->has_zero : s->done->slot[i] == 0)
            continue;
        le_put(b, last ? 0 : s->done->slot[i], HASH_BYTES);
        if (pend_add(s, REC_DONE, b, sizeof b, NULL, 0, true) != SIEVE_OK)
            return SIEVE_ENOMEM;
    }
    return SIEVE_OK;
}

/* Under the lock: the list, P and H, at one instant. */
static int capture(fstate *s, ckpt_writer *w, sieve_seen *seen, unsigned nlayers,
                   const fstate_lister *l, ckpt_info *ci)
{
    int rc = fstate_flush(s); /* P must cover every push so far */
    if (rc != SIEVE_OK)
        return rc;
    ci->layers = nlayers;
    ci->newest_added = seen_newest_added(seen);
    ci->p = journal_tail(s->j);
    ci->spilling = s->head != NULL;
    if (ci->spilling) {
        ci->h = journal_reader_tell(s->head);
        ci->hchain = s->head_chain.started ? s->head_chain.start : ci->h;
    }
    rc = l->list(l->ud, w, &ci->done, &ci->spilled);
    if (rc != SIEVE_OK)
        return rc;
    rc = relog_dones(s);
    if (rc != SIEVE_OK)
        return rc;
    /* A head with nothing left to read (a resume's, whose spill was all
     * done) is no spill: pushes since went to memory, and a resume that
     * read from its position would hand them out again. */
    ci->spilling = ci->spilling && ci->spilled > 0;
    s->appended = 0;
    return SIEVE_OK;
}

static int checkpoint(fstate *s, pthread_mutex_t *lock, sieve_seen *seen, const fstate_lister *l)
{
    char msg[768] = "";
    ckpt_writer *w = NULL;
    ckpt_info ci = {0};
    pthread_mutex_lock(lock);
    unsigned nlayers = seen_layer_count(seen);
    uint64_t layer_bytes = 0;
    for (unsigned i = 0; i < nlayers; i++) {
        size_t n;
        seen_layer_words(seen, i, &n);
        layer_bytes += n;
    }
    int rc = s->failed ? SIEVE_EIO : ckpt_writer_open(&w, s->path, layer_bytes, msg, sizeof msg);
    if (rc == SIEVE_OK)
        rc = capture(s, w, seen, nlayers, l, &ci);
    pthread_mutex_unlock(lock);
    if (rc == SIEVE_OK && l->more != NULL)
        rc = l->more(l->ud, w);
    if (rc == SIEVE_OK)
        rc = copy_layers(w, lock, seen, nlayers);
    /* Then the journal, written out and synced, before the checkpoint that
     * counts on it: the spill between H and P lives there only, and so do
     * the URLs of the bits the copy took after P, some of them perhaps
     * still in the packing buffer. A bit in the checkpoint whose URL is in
     * no journal record would be a URL lost: refused as seen when its
     * page is fetched again after a kill. */
    if (rc == SIEVE_OK)
        rc = sync_journal(s, lock);
    if (rc == SIEVE_OK) {
        rc = ckpt_commit(w, &ci, msg, sizeof msg);
        w = NULL;
    }
    ckpt_writer_abort(w);
    pthread_mutex_lock(lock);
    if (l->release != NULL)
        l->release(l->ud);
    if (rc == SIEVE_OK) {
        s->ckpt_cost = ci.layer_bytes + ci.list_bytes;
        uint32_t keep =
            ci.spilling && ci.hchain.segment < ci.p.segment ? ci.hchain.segment : ci.p.segment;
        if (journal_drop_before(s->j, keep) != SIEVE_OK)
            rc = failed_write(s);
    } else if (rc != SIEVE_ENOMEM) {
        int e = errno;
        s->failed = 1;
        sieve_log(&s->logger, SIEVE_LOG_ERROR, "%s: checkpoint: %s", s->path,
                  msg[0] ? msg : strerror(e));
        rc = SIEVE_EIO;
    }
    pthread_mutex_unlock(lock);
    return rc;
}

int fstate_sync(fstate *s, pthread_mutex_t *lock, sieve_seen *seen, const fstate_lister *l,
                bool force)
{
    if (s->temporary)
        return SIEVE_OK;
    int rc = sync_journal(s, lock);
    if (rc != SIEVE_OK)
        return rc;
    pthread_mutex_lock(lock);
    uint64_t cost = s->ckpt_every > 0                     ? s->ckpt_every
                    : s->ckpt_cost > CHECKPOINT_MIN_BYTES ? s->ckpt_cost
                                                          : CHECKPOINT_MIN_BYTES;
    bool due = seen_layer_count(seen) > 0 && (force ? s->appended > 0 : s->appended > cost);
    pthread_mutex_unlock(lock);
    if (!due)
        return SIEVE_OK;
    rc = checkpoint(s, lock, seen, l);
    if (rc == SIEVE_ENOMEM) { /* the journal still has it all: try again later */
        sieve_log(&s->logger, SIEVE_LOG_WARN, "%s: no checkpoint this time: out of memory",
                  s->path);
        rc = SIEVE_OK;
    }
    return rc;
}
