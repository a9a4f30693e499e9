/* hold.c - records the embedder holds back (sieve_crawl_transfer_hold()).
 *
 * A WARC archive that compresses on threads of its own writes a page's
 * records after the page's transfer has ended, and the page's record
 * names where they went: if the worker waited for them it would sleep
 * through the compression of each of its pages, with its other
 * transfers. So the embedder may hold the record: the worker copies the
 * record, the transfer and the URL out of the slot, frees the slot, and
 * goes on; the release (from the archive's thread) puts the hold on the
 * worker's list and, if the worker sleeps in curl_multi_poll(), wakes
 * it; a worker that is awake finds the list before it sleeps. It hands
 * the record to on_record and reports the URL done, as it would have at
 * the transfer's end. The order a kill must find - links pushed, the
 * embedder's records written, the record written, the URL done - is
 * kept: the links were pushed before the transfer's end, and the rest
 * happens after the release.
 *
 * The worker's hold lock guards each hold's released and stashed flags,
 * the list of released holds and whether the worker sleeps; the releaser
 * wakes the worker under it, so a worker that has seen its last hold
 * come back (and may exit and free its curl handle) is never woken
 * after. Waking only a sleeping worker, and once, matters with a .gz
 * archive, whose threads release a hold for each page: woken for each,
 * the workers made as many writes and reads of curl's wakeup socket. The
 * copy is made only
 * when the release has not come yet: an archive that writes at once
 * releases inside on_transfer_end, and that record goes out from the
 * slot as if there were no hold. An archive that appends a worker's
 * fetches together releases their holds in on_wait, on the worker's own
 * thread, just before the worker delivers what was released. */
#include <stdlib.h>
#include <string.h>

#include "hold.h"
#include "via.h"
#include "worker.h"

struct sieve_crawl_hold {
    sieve_crawl_hold *next; /* on the worker's released list */
    worker *w;
    /* under the worker's hold lock */
    bool released; /* sieve_crawl_hold_release() was called */
    bool stashed;  /* the worker copied the record and waits for the release */
    int status;
    /* the copy */
    bool lost; /* no copy could be made: the run failed, nothing to deliver */
    bool links_lost;
    sieve_crawl_record r;
    sieve_crawl_transfer t;
    sieve_url popped;
    char *strings; /* what r, t and popped point to */
};

int sieve_crawl_transfer_hold(sieve_crawl_transfer *t, sieve_crawl_hold **out)
{
    if (t == NULL || out == NULL)
        return SIEVE_EINVAL;
    *out = NULL;
    xfer *x = xfer_of_transfer(t);
    if (!x->in_transfer_end || !t->has_record || x->hold != NULL)
        return SIEVE_ESTATE;
    sieve_crawl_hold *h = calloc(1, sizeof *h);
    if (h == NULL)
        return SIEVE_ENOMEM;
    h->w = x->w;
    x->hold = h;
    *out = h;
    return SIEVE_OK;
}

static void push_released(worker *w, sieve_crawl_hold *h)
{
    h->next = NULL;
    if (w->released_tail != NULL)
        w->released_tail->next = h;
    else
        w->released = h;
    w->released_tail = h;
}

void sieve_crawl_hold_release(sieve_crawl_hold *h, int status)
{
    if (h == NULL)
        return;
    worker *w = h->w;
    pthread_mutex_lock(&w->hold_lock);
    h->released = true;
    h->status = status;
    if (h->stashed) {
        push_released(w, h);
        /* Only a sleeping worker is woken, once: an awake one delivers
         * what was released before it sleeps again (hold_sleep()), and a
         * wakeup would cost it a write, a read and a turn of its loop. */
        if (w->asleep) {
            w->asleep = false;
            worker_wake(w);
        }
    }
    pthread_mutex_unlock(&w->hold_lock);
}

static size_t size_of(const char *s)
{
    return s != NULL ? strlen(s) + 1 : 0;
}

static const char *copy_str(char **at, const char *s)
{
    if (s == NULL)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = memcpy(*at, s, n);
    *at += n;
    return d;
}

/* Copies r, its transfer and the popped URL into h, out of the slot. */
static bool stash(sieve_crawl_hold *h, const sieve_crawl_record *r, const xfer *x)
{
    const sieve_url *u = &x->popped;
    size_t n = size_of(r->url) + size_of(r->final_url) + size_of(r->content_type) +
               size_of(r->error) + size_of(r->remote_ip) + size_of(r->payload_digest) + u->len + 1 +
               u->data_len;
    char *at = h->strings = malloc(n);
    if (at == NULL)
        return false;
    h->r = *r;
    h->r.url = copy_str(&at, r->url);
    h->r.final_url = copy_str(&at, r->final_url);
    h->r.content_type = copy_str(&at, r->content_type);
    h->r.error = copy_str(&at, r->error);
    h->r.remote_ip = copy_str(&at, r->remote_ip);
    h->r.payload_digest = copy_str(&at, r->payload_digest);
    h->popped = *u;
    memcpy(at, u->url, u->len);
    at[u->len] = '\0';
    h->popped.url = at;
    at += u->len + 1;
    if (u->data_len > 0)
        h->popped.data = memcpy(at, u->data, u->data_len);
    via_read(&h->popped, &h->r.referrer, &h->r.first_url);
    h->t = x->t;
    h->t.url = h->r.url;
    h->t.remote_ip = h->r.remote_ip;
    h->r.transfer = &h->t;
    h->links_lost = x->links_lost;
    return true;
}

static void count_held(sieve_crawler *c)
{
    uint64_t now = atomic_fetch_add(&c->n.held, 1) + 1;
    uint64_t max = atomic_load(&c->n.held_max);
    while (now > max && !atomic_compare_exchange_weak(&c->n.held_max, &max, now))
        ;
}

void hold_keep(xfer *x, const char *final_url, const char *error, sieve_crawl_outcome outcome)
{
    sieve_crawler *c = x->c;
    worker *w = x->w;
    sieve_crawl_hold *h = x->hold;
    x->hold = NULL;
    pthread_mutex_lock(&w->hold_lock);
    bool released = h->released;
    pthread_mutex_unlock(&w->hold_lock);
    if (released) {
        if (h->status != SIEVE_OK)
            engine_fail(c, h->status);
        else if (xfer_record(x, final_url, error, outcome) && !x->links_lost)
            engine_done(c, &x->popped);
        free(h);
        return;
    }
    sieve_crawl_record r;
    xfer_record_make(x, final_url, error, outcome, &r);
    if (!stash(h, &r, x)) {
        h->lost = true; /* the URL is not done: a resume fetches it again */
        engine_fail(c, SIEVE_ENOMEM);
    }
    w->held++;
    count_held(c);
    pthread_mutex_lock(&w->hold_lock);
    h->stashed = true;
    if (h->released)
        push_released(w, h);
    pthread_mutex_unlock(&w->hold_lock);
}

bool hold_sleep(worker *w)
{
    pthread_mutex_lock(&w->hold_lock);
    bool sleep = w->released == NULL;
    w->asleep = sleep;
    pthread_mutex_unlock(&w->hold_lock);
    return sleep;
}

void hold_awake(worker *w)
{
    pthread_mutex_lock(&w->hold_lock);
    w->asleep = false;
    pthread_mutex_unlock(&w->hold_lock);
}

unsigned hold_deliver(worker *w)
{
    sieve_crawler *c = w->c;
    pthread_mutex_lock(&w->hold_lock);
    sieve_crawl_hold *h = w->released;
    w->released = w->released_tail = NULL;
    pthread_mutex_unlock(&w->hold_lock);
    unsigned n = 0;
    while (h != NULL) {
        sieve_crawl_hold *next = h->next;
        if (!h->lost && h->status != SIEVE_OK)
            engine_fail(c, h->status);
        else if (!h->lost && record_deliver(c, &h->r) && !h->links_lost)
            engine_done(c, &h->popped);
        w->held--;
        atomic_fetch_sub(&c->n.held, 1);
        free(h->strings);
        free(h);
        h = next;
        n++;
    }
    return n;
}
