/* hosts.c - per-host scheduling: Mercator-style back queues.
 *
 * Every host (an authority: "host" or "host:port", so two ports are two
 * hosts) has its own FIFO of URLs, kept in discovery order, a count of
 * URLs in flight and the earliest time its next request may start. A
 * binary min-heap holds exactly the hosts that could give a URL: those
 * with URLs queued and fewer than max_conns in flight, ordered by that
 * time. pop() looks at the heap's top only: if its time has come it takes
 * that host's oldest URL and pushes the host's time back by its delay;
 * if not, nothing anywhere is ready and the caller learns when something
 * will be. A slow host therefore costs a heap entry, never a blocked
 * worker, and the cost of a pop is O(log hosts).
 *
 * Hosts are found by a hash table (open addressing over host ids, hashed
 * with the frontier's XXH3). A host is a small record and its name one
 * allocation. Per-host FIFOs start with a 256-byte chunk (fifo.c), so a
 * host with a handful of URLs costs a few hundred bytes.
 *
 * Idle hosts are forgotten, so that memory follows the hosts with work,
 * not every host a long crawl has ever seen. A host is idle when nothing
 * of it is queued, in flight or waiting for a retry, it is not held, and
 * its next start has passed: it then holds nothing that pop() needs, and
 * a push that names it again starts it afresh (its delay back to the
 * policy's; whoever set another sets it again). Each pop() looks at the
 * next few slots of the host array, round and round, and frees the idle
 * ones; their ids go to a free list for the next new host. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "hosts.h"
#include "sieve/fifo.h"
#include "sieve/hash.h"
#include "sieve/status.h"

typedef struct host_state {
    char *name;
    size_t name_len;
    uint64_t hash;
    sieve_fifo *queue;
    sieve_fifo *returned; /* URLs given back unfetched: served first */
    bool held;            /* given no URL until released */
    unsigned in_flight;
    uint32_t later;     /* URLs waiting for a retry off the host: keep it */
    uint64_t deferred;  /* URLs set aside behind its window (runs.h): keep it */
    uint64_t bytes;     /* what its queues hold, as hosts_push_within() counts */
    uint32_t next_free; /* free slots: the next free id + 1, 0 = none */
    uint32_t part;      /* the partition whose heap it goes in */
    double next_start;  /* earliest start of its next request */
    double delay;       /* between two request starts */
    int64_t heap_pos;   /* index in its part's heap, -1 when not in it */
} host_state;

/* A partition's heap of ready hosts: room for every host of the part, so
 * that making a host ready never allocates. */
typedef struct ready_heap {
    uint32_t *ids;
    uint32_t n, cap;
    uint32_t hosts; /* live hosts of the part */
} ready_heap;

struct sieve_hosts {
    sieve_politeness policy;
    host_state *host;
    uint32_t nhosts, cap_hosts;
    uint32_t *table; /* host id + 1, 0 = empty; power-of-two size */
    uint64_t table_mask;
    ready_heap *parts; /* the ready hosts of each partition */
    uint32_t nparts;
    uint32_t nlive;    /* hosts known; nhosts counts slots, free ones too */
    uint32_t free_ids; /* first free slot's id + 1, 0 = none */
    uint32_t sweep_at; /* the next slot the idle sweep looks at */
    uint64_t queued;
    uint64_t name_bytes;
};

#define HOSTS_SEED UINT64_C(0x686f737473656564)

int hosts_new(sieve_hosts **out, const sieve_politeness *p)
{
    sieve_hosts *h = calloc(1, sizeof *h);
    if (h == NULL)
        return SIEVE_ENOMEM;
    h->policy = *p;
    h->nparts = p->partitions > 0 ? p->partitions : 1;
    h->table = calloc(64, sizeof *h->table);
    h->parts = calloc(h->nparts, sizeof *h->parts);
    if (h->table == NULL || h->parts == NULL) {
        free(h->table);
        free(h->parts);
        free(h);
        return SIEVE_ENOMEM;
    }
    h->table_mask = 63;
    *out = h;
    return SIEVE_OK;
}

void hosts_free(sieve_hosts *h)
{
    if (h == NULL)
        return;
    for (uint32_t i = 0; i < h->nhosts; i++) {
        free(h->host[i].name);
        sieve_fifo_free(h->host[i].queue);
        sieve_fifo_free(h->host[i].returned);
    }
    free(h->host);
    for (uint32_t i = 0; i < h->nparts; i++)
        free(h->parts[i].ids);
    free(h->parts);
    free(h->table);
    free(h);
}

void hosts_authority(const char *url, size_t len, const char **host, size_t *host_len)
{
    const char *end = url + len;
    const char *p = memchr(url, ':', len);
    if (p == NULL || end - p < 3 || p[1] != '/' || p[2] != '/') {
        *host = url;
        *host_len = 0;
        return;
    }
    p += 3;
    const char *q = p;
    while (q < end && *q != '/' && *q != '?' && *q != '#')
        q++;
    *host = p;
    *host_len = (size_t)(q - p);
}

/* ---- heaps of ready hosts, keyed by next_start ---- */

static int before(const sieve_hosts *h, uint32_t a, uint32_t b)
{
    return h->host[a].next_start < h->host[b].next_start;
}

static void heap_set(sieve_hosts *h, ready_heap *r, uint32_t i, uint32_t id)
{
    r->ids[i] = id;
    h->host[id].heap_pos = i;
}

static void sift_up(sieve_hosts *h, ready_heap *r, uint32_t i)
{
    uint32_t id = r->ids[i];
    while (i > 0 && before(h, id, r->ids[(i - 1) / 2])) {
        heap_set(h, r, i, r->ids[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    heap_set(h, r, i, id);
}

static void sift_down(sieve_hosts *h, ready_heap *r, uint32_t i)
{
    uint32_t id = r->ids[i];
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= r->n)
            break;
        if (c + 1 < r->n && before(h, r->ids[c + 1], r->ids[c]))
            c++;
        if (!before(h, r->ids[c], id))
            break;
        heap_set(h, r, i, r->ids[c]);
        i = c;
    }
    heap_set(h, r, i, id);
}

static ready_heap *heap_of(sieve_hosts *h, uint32_t id)
{
    return &h->parts[h->host[id].part];
}

static void heap_insert(sieve_hosts *h, uint32_t id)
{
    ready_heap *r = heap_of(h, id);
    r->ids[r->n] = id;
    sift_up(h, r, r->n++);
}

static void heap_remove(sieve_hosts *h, uint32_t id)
{
    ready_heap *r = heap_of(h, id);
    uint32_t i = (uint32_t)h->host[id].heap_pos;
    h->host[id].heap_pos = -1;
    uint32_t last = r->ids[--r->n];
    if (i == r->n)
        return;
    heap_set(h, r, i, last);
    sift_down(h, r, i);
    sift_up(h, r, (uint32_t)h->host[last].heap_pos);
}

/* A ready host's next start moved: its place in its heap follows. */
static void heap_moved(sieve_hosts *h, uint32_t id)
{
    if (h->host[id].heap_pos < 0)
        return;
    ready_heap *r = heap_of(h, id);
    sift_up(h, r, (uint32_t)h->host[id].heap_pos);
    sift_down(h, r, (uint32_t)h->host[id].heap_pos);
}

/* Whether its queues in memory hold a URL: read from its own record,
 * not its queues', which the idle sweep would otherwise fetch into the
 * cache for every host it looks at. */
static bool in_memory(const host_state *x)
{
    return x->bytes > 0;
}

/* A host belongs in the heap when it could give a URL: one in memory,
 * or one deferred, which a refill brings in. */
static bool waiting(const host_state *x)
{
    return in_memory(x) || x->deferred > 0;
}

/* What an entry of len bytes costs its host's window. */
static uint64_t cost(size_t len)
{
    return len + SIEVE_QUEUE_ENTRY_COST;
}

static void reconsider(sieve_hosts *h, uint32_t id)
{
    host_state *x = &h->host[id];
    int ready = !x->held && waiting(x) && x->in_flight < h->policy.max_conns;
    if (ready && x->heap_pos < 0)
        heap_insert(h, id);
    else if (!ready && x->heap_pos >= 0)
        heap_remove(h, id);
}

/* ---- host table ---- */

static int grow_table(sieve_hosts *h)
{
    uint64_t size = (h->table_mask + 1) * 2;
    uint32_t *t = calloc(size, sizeof *t);
    if (t == NULL)
        return SIEVE_ENOMEM;
    for (uint32_t id = 0; id < h->nhosts; id++) {
        if (h->host[id].name == NULL)
            continue;
        uint64_t i = h->host[id].hash & (size - 1);
        while (t[i] != 0)
            i = (i + 1) & (size - 1);
        t[i] = id + 1;
    }
    free(h->table);
    h->table = t;
    h->table_mask = size - 1;
    return SIEVE_OK;
}

/* Takes a host out of the table by shifting back the entries after it
 * that probed past its slot, so lookups need no tombstones. */
static void table_remove(sieve_hosts *h, uint32_t id)
{
    uint64_t mask = h->table_mask, i = h->host[id].hash & mask;
    while (h->table[i] != id + 1)
        i = (i + 1) & mask;
    for (uint64_t j = (i + 1) & mask; h->table[j] != 0; j = (j + 1) & mask) {
        uint64_t home = h->host[h->table[j] - 1].hash & mask;
        /* j's entry may move to i unless its home lies in (i, j]. */
        if (((j - home) & mask) >= ((j - i) & mask)) {
            h->table[i] = h->table[j];
            i = j;
        }
    }
    h->table[i] = 0;
}

/* p (an array of *cap elements of elem bytes) doubled, *cap with it; NULL,
 * with p and *cap as they were, when memory runs out. */
static void *doubled(void *p, uint32_t *cap, size_t elem)
{
    uint32_t n = *cap ? *cap * 2 : 16;
    void *q = realloc(p, (size_t)n * elem);
    if (q != NULL)
        *cap = n;
    return q;
}

/* Room for one more host in the arrays and in its part's heap, grown
 * before anything is linked so that a failure changes nothing. */
static int reserve_host(sieve_hosts *h, ready_heap *r)
{
    if (h->nlive == UINT32_MAX - 1)
        return SIEVE_EOVERFLOW;
    if ((uint64_t)(h->nlive + 1) * 4 > (h->table_mask + 1) * 3 && grow_table(h) != SIEVE_OK)
        return SIEVE_ENOMEM;
    if (r->hosts == r->cap) {
        uint32_t *ids = doubled(r->ids, &r->cap, sizeof *ids);
        if (ids == NULL)
            return SIEVE_ENOMEM;
        r->ids = ids;
    }
    if (h->free_ids != 0 || h->nhosts < h->cap_hosts)
        return SIEVE_OK;
    host_state *hs = doubled(h->host, &h->cap_hosts, sizeof *hs);
    if (hs == NULL)
        return SIEVE_ENOMEM;
    h->host = hs;
    return SIEVE_OK;
}

/* Finds a host, or creates it when create is set; returns its id or a
 * negative status. */
static int64_t lookup(sieve_hosts *h, const char *name, size_t len, int create)
{
    uint64_t hash = sieve_hash_key(name, len, HOSTS_SEED).lo;
    uint64_t i = hash & h->table_mask;
    for (; h->table[i] != 0; i = (i + 1) & h->table_mask) {
        const host_state *x = &h->host[h->table[i] - 1];
        if (x->hash == hash && x->name_len == len && memcmp(x->name, name, len) == 0)
            return h->table[i] - 1;
    }
    if (!create)
        return SIEVE_EAGAIN;
    /* The hash's high half picks the part; its low half, the slot. */
    uint32_t part = (uint32_t)((hash >> 32) % h->nparts);
    int rc = reserve_host(h, &h->parts[part]);
    if (rc != SIEVE_OK)
        return rc;
    host_state x = {
        .name_len = len, .hash = hash, .part = part, .delay = h->policy.delay_s, .heap_pos = -1};
    x.name = malloc(len + 1);
    if (x.name == NULL || sieve_fifo_new(&x.queue) != SIEVE_OK) {
        free(x.name);
        return SIEVE_ENOMEM;
    }
    memcpy(x.name, name, len);
    x.name[len] = '\0';
    uint32_t id = h->nhosts;
    if (h->free_ids != 0) {
        id = h->free_ids - 1;
        h->free_ids = h->host[id].next_free;
    } else {
        h->nhosts++;
    }
    h->host[id] = x;
    h->nlive++;
    h->parts[part].hosts++;
    h->name_bytes += len + 1;
    /* The table may have grown: find the free slot again. */
    i = hash & h->table_mask;
    while (h->table[i] != 0)
        i = (i + 1) & h->table_mask;
    h->table[i] = id + 1;
    return id;
}

static bool idle(const host_state *x, double now)
{
    return x->name != NULL && !x->held && x->in_flight == 0 && x->later == 0 && !waiting(x) &&
           x->next_start <= now;
}

static void forget(sieve_hosts *h, uint32_t id)
{
    host_state *x = &h->host[id];
    table_remove(h, id);
    free(x->name);
    sieve_fifo_free(x->queue);
    sieve_fifo_free(x->returned);
    h->name_bytes -= x->name_len + 1;
    h->parts[x->part].hosts--;
    *x = (host_state){.heap_pos = -1, .next_free = h->free_ids};
    h->free_ids = id + 1;
    h->nlive--;
}

/* Looks at the next n slots and forgets the idle hosts among them. With a
 * few slots a pop, and at least one pop for each host that ever had a
 * URL, idle hosts are found before they can outnumber the busy ones. */
static void sweep(sieve_hosts *h, double now, unsigned n)
{
    for (; n > 0 && h->nhosts > 0; n--) {
        uint32_t id = h->sweep_at % h->nhosts;
        h->sweep_at = id + 1;
        if (idle(&h->host[id], now))
            forget(h, id);
    }
}

/* ---- the scheduler ---- */

/* Appends an entry to host id's queue; a host's first URL sets its
 * first start, now. */
static int append(sieve_hosts *h, uint32_t id, const char *entry, size_t len, uint32_t tag,
                  double now)
{
    host_state *x = &h->host[id];
    int rc = sieve_fifo_push(x->queue, entry, len, tag);
    if (rc != SIEVE_OK)
        return rc;
    if (x->next_start == 0)
        x->next_start = now;
    x->bytes += cost(len);
    h->queued++;
    reconsider(h, id);
    return SIEVE_OK;
}

/* The id of the host of an entry whose URL starts at url_at, created if
 * new, or a negative status. */
static int64_t host_of(sieve_hosts *h, const char *entry, size_t len, size_t url_at)
{
    const char *name;
    size_t name_len;
    hosts_authority(entry + url_at, len - url_at, &name, &name_len);
    return lookup(h, name, name_len, 1);
}

int hosts_push(sieve_hosts *h, const char *entry, size_t len, size_t url_at, uint32_t tag,
               double now)
{
    int64_t id = host_of(h, entry, len, url_at);
    return id < 0 ? (int)id : append(h, (uint32_t)id, entry, len, tag, now);
}

int hosts_push_within(sieve_hosts *h, const char *entry, size_t len, size_t url_at, uint32_t tag,
                      double now, uint64_t window, uint32_t *host_id)
{
    int64_t id = host_of(h, entry, len, url_at);
    if (id < 0)
        return (int)id;
    host_state *x = &h->host[id];
    *host_id = (uint32_t)id;
    if (x->deferred > 0 || window == 0 || (x->bytes > 0 && x->bytes + cost(len) > window))
        return HOSTS_DEFER; /* behind what it set aside: its order holds */
    return append(h, (uint32_t)id, entry, len, tag, now);
}

int hosts_defer(sieve_hosts *h, uint32_t host_id, int64_t n)
{
    if (host_id >= h->nhosts || h->host[host_id].name == NULL ||
        (n < 0 && h->host[host_id].deferred < (uint64_t)-n))
        return SIEVE_ESTATE;
    host_state *x = &h->host[host_id];
    x->deferred += (uint64_t)n;
    reconsider(h, host_id);
    return SIEVE_OK;
}

int hosts_refill(sieve_hosts *h, uint32_t host_id, const char *entry, size_t len, uint32_t tag)
{
    if (host_id >= h->nhosts || h->host[host_id].name == NULL)
        return SIEVE_ESTATE;
    return append(h, host_id, entry, len, tag, 0); /* its start was set when it deferred */
}

/* The heap to take from: part's, if its top is ready at now; else the
 * one whose top is readiest, if that is ready; else NULL, and
 * *next_ready says when the readiest top will be. */
static ready_heap *pick(sieve_hosts *h, uint32_t part, double now, double *next_ready)
{
    if (part < h->nparts) {
        ready_heap *own = &h->parts[part];
        if (own->n > 0 && h->host[own->ids[0]].next_start <= now)
            return own;
    }
    ready_heap *best = NULL;
    for (uint32_t i = 0; i < h->nparts; i++) {
        ready_heap *r = &h->parts[i];
        if (r->n > 0 && (best == NULL || before(h, r->ids[0], best->ids[0])))
            best = r;
    }
    if (best == NULL) {
        *next_ready = INFINITY;
        return NULL;
    }
    if (h->host[best->ids[0]].next_start > now) {
        *next_ready = h->host[best->ids[0]].next_start;
        return NULL;
    }
    return best;
}

int hosts_pop(sieve_hosts *h, uint32_t part, double now, void *buf, size_t cap, size_t *len,
              uint32_t *tag, uint32_t *host_id, double *next_ready)
{
    sweep(h, now, 4);
    ready_heap *r = pick(h, part, now, next_ready);
    if (r == NULL)
        return SIEVE_EAGAIN;
    uint32_t id = r->ids[0];
    host_state *x = &h->host[id];
    if (!in_memory(x)) { /* ready through its deferred URLs alone */
        *host_id = id;
        return HOSTS_REFILL;
    }
    sieve_fifo *from = sieve_fifo_length(x->returned) > 0 ? x->returned : x->queue;
    int rc = sieve_fifo_pop(from, buf, cap, len, tag);
    if (rc != SIEVE_OK)
        return rc;
    x->bytes -= cost(*len);
    h->queued--;
    x->in_flight++;
    x->next_start = now + x->delay;
    *host_id = id;
    sift_down(h, r, 0);
    reconsider(h, id);
    return SIEVE_OK;
}

int hosts_done(sieve_hosts *h, uint32_t host_id)
{
    if (host_id >= h->nhosts || h->host[host_id].in_flight == 0)
        return SIEVE_ESTATE;
    h->host[host_id].in_flight--;
    int was_ready = h->host[host_id].heap_pos >= 0;
    reconsider(h, host_id);
    return !was_ready && h->host[host_id].heap_pos >= 0;
}

int hosts_return(sieve_hosts *h, uint32_t host_id, const char *entry, size_t len, uint32_t tag)
{
    if (host_id >= h->nhosts || h->host[host_id].name == NULL)
        return SIEVE_ESTATE;
    host_state *x = &h->host[host_id];
    if (x->returned == NULL && sieve_fifo_new(&x->returned) != SIEVE_OK)
        return SIEVE_ENOMEM;
    int rc = sieve_fifo_push(x->returned, entry, len, tag);
    if (rc != SIEVE_OK)
        return rc;
    x->bytes += cost(len);
    h->queued++;
    reconsider(h, host_id);
    return SIEVE_OK;
}

/* The host starts nothing before its delay, or pause_s if longer, has
 * passed from now: later, never earlier (the heap moves it down). */
static void rest(sieve_hosts *h, uint32_t host_id, double now, double pause_s)
{
    host_state *x = &h->host[host_id];
    double wait = pause_s > x->delay ? pause_s : x->delay;
    if (x->next_start < now + wait) {
        x->next_start = now + wait;
        heap_moved(h, host_id);
    }
}

int hosts_requeue(sieve_hosts *h, uint32_t host_id, const char *entry, size_t len, uint32_t tag,
                  double now, double pause_s)
{
    if (host_id >= h->nhosts || h->host[host_id].in_flight == 0)
        return SIEVE_ESTATE;
    host_state *x = &h->host[host_id];
    /* What happened in the URL's place (a robots.txt fetch) was a request
     * to the host: its delay counts from now. */
    x->in_flight--;
    int rc = hosts_return(h, host_id, entry, len, tag);
    if (rc != SIEVE_OK) {
        x->in_flight++;
        return rc;
    }
    rest(h, host_id, now, pause_s);
    return SIEVE_OK;
}

int hosts_rest(sieve_hosts *h, uint32_t host_id, double now, double pause_s)
{
    if (host_id >= h->nhosts || h->host[host_id].in_flight == 0)
        return SIEVE_ESTATE;
    h->host[host_id].in_flight--;
    reconsider(h, host_id);
    rest(h, host_id, now, pause_s);
    return SIEVE_OK;
}

int hosts_foreach(const sieve_hosts *h, sieve_fifo_visit_fn fn, void *ud)
{
    for (uint32_t i = 0; i < h->nhosts; i++) {
        const host_state *x = &h->host[i];
        int rc = x->returned != NULL ? sieve_fifo_foreach(x->returned, fn, ud) : 0;
        if (rc == 0 && x->queue != NULL)
            rc = sieve_fifo_foreach(x->queue, fn, ud);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int hosts_hold(sieve_hosts *h, const char *name, size_t len, bool held)
{
    int64_t id = lookup(h, name, len, 1);
    if (id < 0)
        return (int)id;
    h->host[id].held = held;
    reconsider(h, (uint32_t)id);
    return SIEVE_OK;
}

int hosts_set_delay(sieve_hosts *h, const char *name, size_t len, double delay)
{
    if (!(delay >= 0))
        return SIEVE_EINVAL;
    int64_t id = lookup(h, name, len, 1);
    if (id < 0)
        return (int)id;
    host_state *x = &h->host[id];
    double d = delay > h->policy.max_delay_s ? h->policy.max_delay_s : delay;
    /* The next start moves with the delay, so a longer delay applies to
     * the very next request. */
    x->next_start += d - x->delay;
    x->delay = d;
    heap_moved(h, (uint32_t)id);
    return SIEVE_OK;
}

int hosts_pause(sieve_hosts *h, const char *name, size_t len, double until)
{
    int64_t id = lookup(h, name, len, 1);
    if (id < 0)
        return (int)id;
    host_state *x = &h->host[id];
    if (x->next_start < until) {
        x->next_start = until;
        heap_moved(h, (uint32_t)id);
    }
    return SIEVE_OK;
}

uint64_t hosts_queued(const sieve_hosts *h)
{
    return h->queued;
}

int hosts_wait_later(sieve_hosts *h, uint32_t host_id, bool waiting)
{
    if (host_id >= h->nhosts || h->host[host_id].name == NULL ||
        (!waiting && h->host[host_id].later == 0))
        return SIEVE_ESTATE;
    h->host[host_id].later += waiting ? 1 : -1;
    return SIEVE_OK;
}

uint64_t hosts_count(const sieve_hosts *h)
{
    return h->nlive;
}

uint64_t hosts_bytes(const sieve_hosts *h)
{
    uint64_t bytes = sizeof *h + h->name_bytes + (uint64_t)h->cap_hosts * sizeof(host_state) +
                     (h->table_mask + 1) * sizeof(uint32_t);
    for (uint32_t i = 0; i < h->nparts; i++)
        bytes += sizeof *h->parts + (uint64_t)h->parts[i].cap * sizeof(uint32_t);
    for (uint32_t i = 0; i < h->nhosts; i++)
        bytes += sieve_fifo_bytes(h->host[i].queue) + sieve_fifo_bytes(h->host[i].returned);
    return bytes;
}
