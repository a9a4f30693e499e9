/* backoff.c - retries and failing hosts.
 *
 * A fetch that failed in a way that may pass (no connection, a timeout,
 * a connection lost midway, 429, a 5xx) is tried again, up to the
 * crawl's retries; what it found before it failed stays pushed. Two
 * clocks decide when.
 *
 * The URL's own: it waits off its host (the frontier's retry_later), its
 * wait doubling with each retry (first_s, 2 first_s, 4 first_s, ...), so
 * one broken page does not slow the healthy rest of its site.
 *
 * The host's: a server that asks for rest - 429, 503, or a Retry-After -
 * gets it, for its Retry-After as given (up to max_s) or for a pause that
 * doubles with its failures in a row; and a host that fails
 * BACKOFF_SET_ASIDE times in a row, whatever the answers, rests the same
 * way. The frontier then gives none of its URLs until the pause is over:
 * a host that keeps failing is set aside for longer and longer, its URLs
 * kept in the queue. Each URL still ends with a record once its own
 * retries are spent, and any answer that is no such failure resets the
 * host.
 *
 * Every pause is drawn in the upper half of its span ("equal jitter"), so
 * that URLs and hosts that failed together do not come back together.
 *
 * Only hosts failing now are kept: an entry goes when its host answers,
 * and at most MAX_HOSTS are kept (a host beyond that is counted as at its
 * first failure), so memory does not grow with the hosts ever seen. A
 * crawl where no host is failing pays one atomic load per fetch. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backoff.h"
#include "sieve/hash.h"
#include "sieve/status.h"

#define BUCKETS   1024
#define MAX_HOSTS 65536

typedef struct entry {
    struct entry *next;
    unsigned failures; /* in a row */
    size_t len;
    char host[];
} entry;

struct backoff {
    pthread_mutex_t lock;
    double first_s, max_s;
    uint64_t rng; /* xorshift64*: jitter needs no quality, only spread */
    atomic_size_t nhosts;
    entry *bucket[BUCKETS];
};

int backoff_new(backoff **out, double first_s, double max_s)
{
    backoff *b = calloc(1, sizeof *b);
    if (b == NULL)
        return SIEVE_ENOMEM;
    pthread_mutex_init(&b->lock, NULL);
    b->first_s = first_s;
    b->max_s = max_s;
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    b->rng = ((uint64_t)t.tv_nsec << 32 ^ (uint64_t)t.tv_sec ^ (uintptr_t)b) | 1;
    *out = b;
    return SIEVE_OK;
}

void backoff_free(backoff *b)
{
    if (b == NULL)
        return;
    for (size_t i = 0; i < BUCKETS; i++) {
        for (entry *e = b->bucket[i], *next; e != NULL; e = next) {
            next = e->next;
            free(e);
        }
    }
    pthread_mutex_destroy(&b->lock);
    free(b);
}

bool backoff_retryable(sieve_crawl_outcome outcome, long status)
{
    switch (outcome) {
    case SIEVE_OUTCOME_CONNECT:
    case SIEVE_OUTCOME_TIMEOUT:
    case SIEVE_OUTCOME_NETWORK:
    case SIEVE_OUTCOME_TRUNCATED:
        return true;
    case SIEVE_OUTCOME_HTTP_4XX:
        return status == 429;
    case SIEVE_OUTCOME_HTTP_5XX:
        /* not 501 (Not Implemented), 505 (HTTP Version Not Supported) and
         * the like: only what a busy or broken server says passes */
        return status == 500 || status == 502 || status == 503 || status == 504;
    default:
        return false;
    }
}

/* The host's entry, and where the link to it is, for removal. */
static entry **find_locked(backoff *b, const char *host, size_t len)
{
    entry **p = &b->bucket[sieve_hash_key(host, len, SIEVE_HASH_SEED_DEFAULT).lo % BUCKETS];
    while (*p != NULL && ((*p)->len != len || memcmp((*p)->host, host, len) != 0))
        p = &(*p)->next;
    return p;
}

/* A number in [0, 1). */
static double uniform_locked(backoff *b)
{
    b->rng ^= b->rng >> 12;
    b->rng ^= b->rng << 25;
    b->rng ^= b->rng >> 27;
    return (double)((b->rng * UINT64_C(2685821657736338717)) >> 11) / 9007199254740992.0;
}

/* first_s * 2^(n - 1), capped, drawn in its upper half ("equal jitter"). */
static double pause_locked(backoff *b, unsigned n)
{
    /* 2^63 is past any cap: keeps the power finite */
    double full = b->first_s * ldexp(1.0, n < 64 ? (int)n - 1 : 63);
    if (full > b->max_s)
        full = b->max_s;
    return full / 2 + full / 2 * uniform_locked(b);
}

double backoff_host_failed(backoff *b, const char *host, size_t len, long status,
                           double retry_after_s)
{
    pthread_mutex_lock(&b->lock);
    entry **p = find_locked(b, host, len);
    unsigned failures = 1;
    if (*p != NULL) {
        failures = ++(*p)->failures;
    } else if (atomic_load(&b->nhosts) < MAX_HOSTS) {
        entry *e = malloc(sizeof *e + len);
        if (e != NULL) {
            e->next = NULL;
            e->failures = 1;
            e->len = len;
            memcpy(e->host, host, len);
            *p = e;
            atomic_fetch_add(&b->nhosts, 1);
        }
    }
    double pause = 0;
    if (retry_after_s > 0)
        pause = retry_after_s < b->max_s ? retry_after_s : b->max_s;
    else if (status == 429 || status == 503 || failures >= BACKOFF_SET_ASIDE)
        pause = pause_locked(b, failures);
    pthread_mutex_unlock(&b->lock);
    return pause;
}

double backoff_url_wait(backoff *b, unsigned retry)
{
    pthread_mutex_lock(&b->lock);
    double wait = pause_locked(b, retry);
    pthread_mutex_unlock(&b->lock);
    return wait;
}

void backoff_succeeded(backoff *b, const char *host, size_t len)
{
    if (atomic_load(&b->nhosts) == 0)
        return;
    pthread_mutex_lock(&b->lock);
    entry **p = find_locked(b, host, len);
    entry *e = *p;
    if (e != NULL) {
        *p = e->next;
        free(e);
        atomic_fetch_sub(&b->nhosts, 1);
    }
    pthread_mutex_unlock(&b->lock);
}

size_t backoff_failing_hosts(backoff *b)
{
    return atomic_load(&b->nhosts);
}
