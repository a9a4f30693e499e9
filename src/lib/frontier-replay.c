/* frontier-replay.c - a frontier's state read back: the replay at an
 * open, and the spill's head while the queue spills (frontier-state.c
 * has the format and the order of what is read; docs/durable-frontier.md
 * the whole design).
 *
 * The replay loads the last checkpoint, then reads the journal from its
 * position P twice. Pass 0 collects the hashes of the URLs done since P
 * (the done set: as large as the work since the checkpoint, not as the
 * crawl) and sets the seen-set's bits of the URLs pushed since; pass 1
 * queues, in order, the checkpoint's URLs and those pushed since, less
 * the done ones. Once the queue spills, the rest stays in the journal,
 * and the head reads it back as memory frees up, passing over the URLs
 * the done set still holds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "checkpoint.h"
#include "entry.h"
#include "frontier-state-internal.h"
#include "seen-internal.h"

/* ---- the set of done hashes, for the replay ---- */

void done_set_free(hash_set *h)
{
    if (h != NULL)
        free(h->slot);
    free(h);
}

static int done_set_grow(hash_set *h)
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

int done_set_add(hash_set *h, uint64_t key)
{
    if (key == 0) {
        h->has_zero = 1;
        return SIEVE_OK;
    }
    if ((h->n + 1) * 2 > h->cap && done_set_grow(h) != SIEVE_OK)
        return SIEVE_ENOMEM;
    size_t at = key & (h->cap - 1);
    while (h->slot[at] != 0 && h->slot[at] != key)
        at = (at + 1) & (h->cap - 1);
    if (h->slot[at] == 0)
        h->n++;
    h->slot[at] = key;
    return SIEVE_OK;
}

int done_set_has(const hash_set *h, uint64_t key)
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

/* Removes key (linear probing: the entries after it in its run move back
 * into the hole, so every lookup still finds its key). */
void done_set_remove(hash_set *h, uint64_t key)
{
    if (key == 0) {
        h->has_zero = 0;
        return;
    }
    if (h->cap == 0)
        return;
    size_t mask = h->cap - 1, at = key & mask;
    while (h->slot[at] != key) {
        if (h->slot[at] == 0)
            return;
        at = (at + 1) & mask;
    }
    h->slot[at] = 0;
    h->n--;
    for (size_t hole = at, i = (at + 1) & mask; h->slot[i] != 0; i = (i + 1) & mask) {
        size_t home = h->slot[i] & mask;
        /* it may fill the hole if its home is not within (hole, i] */
        if (((i - home) & mask) >= ((i - hole) & mask)) {
            h->slot[hole] = h->slot[i];
            h->slot[i] = 0;
            hole = i;
        }
    }
}

/* ---- replay ---- */

typedef struct replay {
    fstate *s;
    hash_set *done; /* URLs done after the checkpoint */
    sieve_seen *seen;
    fstate_pending_fn pending;
    void *ud;
    ckpt_info ci;
    journal_pos from;    /* where the journal is read from: the checkpoint's P */
    uint64_t done_found; /* URLs queued again found done: their DONE was read */
    uint64_t done_since; /* URLs done after the checkpoint, as pass 0 found them */
    fstate_found found;
} replay;

static int refuse_record(fstate *s, journal_reader *r, int rc)
{
    sieve_log(&s->logger, SIEVE_LOG_ERROR,
              "%s: %s; remove the directory to start over, or restore it from a backup", s->path,
              journal_reader_message(r));
    return rc;
}

static int refuse_state(fstate *s, int rc, const char *what)
{
    sieve_log(&s->logger, SIEVE_LOG_ERROR,
              "%s: %s; remove the directory to start over, or restore it from a backup", s->path,
              what);
    return rc;
}

/* Whether a URL queued again (its entry e, n bytes) was done after the
 * checkpoint. forget: the head will not read it, so the hash need not be
 * kept for it (after the replay, p->done is what the head is to pass
 * over, and what checkpoints write again). */
static bool was_done(replay *p, const char *e, size_t n, bool forget)
{
    uint64_t h = fstate_entry_hash(e, n);
    if (!done_set_has(p->done, h))
        return false;
    p->done_found++;
    if (forget)
        done_set_remove(p->done, h);
    return true;
}

/* A push of the journal after P, on the second pass: queued again unless
 * done, in memory or, once memory is full, left in the journal, where
 * the head (opened at the start of the URL's chain) will read it. */
static int replay_push(replay *p, const char *url, size_t n, uint32_t tag, journal_pos pos,
                       journal_pos chain)
{
    fstate *s = p->s;
    bool done = was_done(p, url, n, s->head == NULL);
    if (s->head != NULL) {  /* once one stays on disk, all later do */
        p->found.spilled++; /* the head reads it, or passes it over if done */
        p->found.pending += !done;
        return SIEVE_OK;
    }
    if (done)
        return SIEVE_OK;
    p->found.pending++;
    int rc = p->pending(p->ud, url, n, tag, true);
    if (rc != FSTATE_SPILL)
        return rc;
    p->found.spilled++;
    return fstate_head_open(s, chain, pos);
}

static int refuse_push(fstate *s, journal_pos pos, int rc)
{
    char what[160];
    snprintf(what, sizeof what,
             "journal segment %u offset %llu: a URL record that does not hold "
             "together (%s)",
             pos.segment, (unsigned long long)pos.offset, sieve_strerror(rc));
    return refuse_state(s, rc == SIEVE_ENOMEM ? rc : SIEVE_EFORMAT, what);
}

/* One pass over the journal from p->from; pass 0 gathers the done hashes
 * and sets the seen-set's bits, pass 1 queues the pushes. */
static int replay_pass(replay *p, int pass)
{
    fstate *s = p->s;
    journal_reader *r;
    int rc = journal_reader_open(s->j, p->from, &r);
    if (rc != SIEVE_OK)
        return rc;
    url_chain chain = {0};
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
        if (pass == 0)
            s->appended += JOURNAL_RECORD_SIZE(len);
        if (type == REC_DONE && len == HASH_BYTES) {
            if (pass == 0 && (rc = done_set_add(p->done, le_get(b, HASH_BYTES))) != SIEVE_OK)
                break;
        } else if (type == REC_PUSH || type == REC_PUSHF) {
            const char *url;
            size_t n;
            uint32_t tag;
            rc = push_decode(&chain, type, b, len, pos, s->max_entry, &url, &n, &tag);
            if (rc != SIEVE_OK) {
                rc = refuse_push(s, pos, rc);
                break;
            }
            if (pass == 0) { /* SIEVE_SEEN is fine: it was queued */
                size_t url_len;
                const char *u = entry_url(url, n, &url_len);
                sieve_seen_add(p->seen, u, url_len);
            } else if ((rc = replay_push(p, url, n, tag, pos, chain.start)) != SIEVE_OK)
                break;
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
    chain_free(&chain);
    return rc;
}

/* Loads the checkpoint's layers into the seen-set and checks its list. */
static int load_checkpoint(replay *p, ckpt_reader *cr)
{
    fstate *s = p->s;
    ckpt_info *ci = &p->ci;
    char msg[768] = "";
    int rc = seen_restore_shape(p->seen, ci->layers, ci->newest_added);
    if (rc != SIEVE_OK)
        return rc == SIEVE_EFORMAT
                   ? refuse_state(s, rc, CKPT_NAME " does not fit the seen-set of STATE")
                   : rc;
    uint64_t bytes = 0;
    for (unsigned i = 0; i < ci->layers; i++) {
        size_t n;
        seen_layer_words(p->seen, i, &n);
        bytes += n;
    }
    if (bytes != ci->layer_bytes)
        return refuse_state(s, SIEVE_EFORMAT, CKPT_NAME " does not fit the seen-set of STATE");
    for (unsigned i = 0; i < ci->layers && rc == SIEVE_OK; i++) {
        size_t n;
        uint64_t *words = seen_layer_words(p->seen, i, &n);
        rc = ckpt_read_layers(cr, words, n, msg, sizeof msg);
    }
    seen_restored(p->seen);
    if (rc == SIEVE_OK)
        rc = ckpt_check_list(cr, s->max_entry, msg, sizeof msg);
    if (rc != SIEVE_OK) {
        sieve_log(&s->logger, SIEVE_LOG_ERROR, "%s", msg);
        return rc;
    }
    /* The journal must hold everything from P (and from H) on. */
    journal_pos begin = journal_begin(s->j), tail = journal_tail(s->j);
    if (journal_pos_cmp(begin, ci->p) > 0 ||
        (ci->spilling && journal_pos_cmp(begin, ci->hchain) > 0))
        return refuse_state(s, SIEVE_EFORMAT,
                            "the journal begins after the checkpoint's position: segments are "
                            "missing");
    if (journal_pos_cmp(ci->p, tail) > 0 ||
        (ci->spilling &&
         (journal_pos_cmp(ci->h, ci->p) > 0 || journal_pos_cmp(ci->hchain, ci->h) > 0)))
        return refuse_state(s, SIEVE_ETRUNCATED,
                            "the journal ends before the checkpoint's position: it lost records "
                            "the checkpoint counts on");
    p->from = ci->p;
    return SIEVE_OK;
}

/* Queues the checkpoint's URLs again, less those done since. They were
 * in memory, so they go there whatever the budget says now. */
static int replay_list(replay *p, ckpt_reader *cr)
{
    for (;;) {
        const char *url;
        size_t len;
        uint32_t tag;
        int rc = ckpt_next_url(cr, &url, &len, &tag);
        if (rc == SIEVE_EAGAIN)
            return SIEVE_OK;
        if (rc != SIEVE_OK)
            return refuse_state(p->s, rc, CKPT_NAME " changed while it was read");
        if (was_done(p, url, len, true))
            continue;
        p->found.pending++;
        if ((rc = p->pending(p->ud, url, len, tag, false)) != SIEVE_OK)
            return rc;
    }
}

static int replay_all(replay *p)
{
    fstate *s = p->s;
    ckpt_reader *cr = NULL;
    char msg[768] = "";
    int rc = s->temporary ? SIEVE_OK : ckpt_reader_open(&cr, s->path, &p->ci, msg, sizeof msg);
    if (rc != SIEVE_OK) {
        sieve_log(&s->logger, SIEVE_LOG_ERROR, "%s", msg);
        return rc;
    }
    p->from = journal_begin(s->j);
    if (cr != NULL)
        rc = load_checkpoint(p, cr);
    else if (p->from.segment != FIRST_SEGMENT)
        rc = refuse_state(s, SIEVE_EFORMAT,
                          "the journal's first segments are gone and no " CKPT_NAME
                          " stands in for them");
    if (rc == SIEVE_OK)
        rc = replay_pass(p, 0);
    p->done_since = p->done->n + (uint64_t)p->done->has_zero;
    if (rc == SIEVE_OK && cr != NULL)
        rc = replay_list(p, cr);
    ckpt_reader_close(cr);
    if (rc == SIEVE_OK && p->ci.spilling)
        rc = fstate_head_open(s, p->ci.hchain, p->ci.h);
    if (rc == SIEVE_OK)
        rc = replay_pass(p, 1);
    if (rc != SIEVE_OK || !p->ci.spilling)
        return rc;
    /* The URLs in the journal at P, less those read back and done since. */
    uint64_t done_since = p->done_since;
    uint64_t spill_done = done_since - p->done_found;
    if (spill_done > p->ci.spilled)
        return refuse_state(s, SIEVE_EFORMAT,
                            "the journal reports more URLs done than the checkpoint left queued");
    /* The spill counts push records ahead of the head, the done ones with
     * the rest: the head passes those over, and a checkpoint taken before
     * it has passed them counts them again, with H still before them. */
    p->found.spilled += p->ci.spilled;
    p->found.pending += p->ci.spilled - spill_done;
    return SIEVE_OK;
}

int fstate_replay(fstate *s, sieve_seen *seen, fstate_pending_fn pending, void *ud,
                  fstate_found *found)
{
    replay p = {.s = s, .seen = seen, .pending = pending, .ud = ud};
    p.done = calloc(1, sizeof *p.done);
    if (p.done == NULL)
        return SIEVE_ENOMEM;
    s->appended = 0;
    int rc = replay_all(&p);
    p.found.done = p.ci.done + p.done_since;
    if (rc == SIEVE_OK && p.found.spilled == 0 && s->head != NULL) {
        journal_reader_close(s->head); /* nothing to read: no spill */
        s->head = NULL;
    }
    /* the spill read back from the head passes URLs done before the kill */
    if (rc == SIEVE_OK && s->head != NULL)
        s->done = p.done;
    else
        done_set_free(p.done);
    *found = p.found;
    s->ckpt_cost = p.ci.layer_bytes + p.ci.list_bytes;
    return rc;
}

void fstate_head_stop(fstate *s)
{
    if (s->head != NULL)
        journal_reader_close(s->head);
    s->head = NULL;
    done_set_free(s->done);
    s->done = NULL;
}

/* A temporary state's journal holds only the spill, so the segments the
 * head has left are of no more use: they go at once. A durable state's go
 * at checkpoints. */
static void give_back_read_segments(fstate *s)
{
    if (!s->temporary)
        return;
    uint32_t at = journal_reader_tell(s->head).segment;
    if (at > journal_begin(s->j).segment && journal_drop_before(s->j, at) != SIEVE_OK)
        sieve_log(&s->logger, SIEVE_LOG_WARN, "%s: %s", s->path, journal_message(s->j));
}

/* The head's next push record: SIEVE_OK, JOURNAL_END, or damage (logged). */
static int head_read(fstate *s, const char **url, size_t *len, uint32_t *tag)
{
    for (;;) {
        uint8_t type;
        const void *data;
        uint32_t n;
        journal_pos pos;
        int rc = journal_read(s->head, &type, &data, &n, &pos);
        if (rc == JOURNAL_END)
            return rc;
        if (rc != SIEVE_OK)
            return refuse_record(s, s->head, rc);
        if (type != REC_PUSH && type != REC_PUSHF)
            continue;
        rc = push_decode(&s->head_chain, type, data, n, pos, s->max_entry, url, len, tag);
        return rc == SIEVE_OK ? rc : refuse_push(s, pos, rc);
    }
}

/* Opens the head at the push record at, reading from chain, the start of
 * its chain, so that the head knows the URL a PUSHF at refers to. Every
 * record before at is read, its pushes decoded; never the one at at:
 * journal_read() passes a segment's end by itself, so the record after
 * the last one before at may be that one, read by the same call (a spill
 * that begins a segment). Then the head opens afresh at at. */
int fstate_head_open(fstate *s, journal_pos chain, journal_pos at)
{
    if (s->head != NULL)
        journal_reader_close(s->head);
    s->head = NULL;
    chain_reset(&s->head_chain);
    int rc = journal_reader_open(s->j, chain, &s->head);
    while (rc == SIEVE_OK && journal_pos_cmp(journal_reader_tell(s->head), at) < 0) {
        uint8_t type;
        const void *data;
        uint32_t n;
        journal_pos pos;
        rc = journal_read(s->head, &type, &data, &n, &pos);
        if (rc == JOURNAL_END)
            return journal_pos_cmp(journal_reader_tell(s->head), at) >= 0
                       ? SIEVE_OK
                       : refuse_state(s, SIEVE_ETRUNCATED,
                                      "the journal ends before the spill's position");
        if (rc != SIEVE_OK)
            return refuse_record(s, s->head, rc);
        if (journal_pos_cmp(pos, at) >= 0) {
            journal_reader_close(s->head);
            s->head = NULL;
            return journal_reader_open(s->j, at, &s->head);
        }
        if (type != REC_PUSH && type != REC_PUSHF)
            continue;
        const char *url;
        size_t len;
        uint32_t tag;
        rc = push_decode(&s->head_chain, type, data, n, pos, s->max_entry, &url, &len, &tag);
        if (rc != SIEVE_OK)
            return refuse_push(s, pos, rc);
    }
    return rc;
}

int fstate_head_next(fstate *s, const char **url, size_t *len, uint32_t *tag, uint64_t *passed)
{
    *passed = 0;
    int rc = fstate_flush(s); /* the spill may still wait in the packing buffer */
    if (rc != SIEVE_OK)
        return rc;
    if (s->head == NULL)
        return SIEVE_EAGAIN;
    for (;;) {
        rc = head_read(s, url, len, tag);
        if (rc == JOURNAL_END)
            return SIEVE_EAGAIN;
        if (rc != SIEVE_OK)
            return rc;
        ++*passed;
        uint64_t h = s->done != NULL ? fstate_entry_hash(*url, *len) : 0;
        if (s->done != NULL && done_set_has(s->done, h)) {
            done_set_remove(s->done, h); /* passed: no checkpoint writes it again */
            continue;
        }
        give_back_read_segments(s);
        return SIEVE_OK;
    }
}
