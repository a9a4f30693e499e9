/* scope.c - the crawl's boundary: seed origins or domains, allow and deny
 * expressions, rejected suffixes, depth, and the per-host page quota.
 *
 * A host is an origin: scheme, host and port, so another port of a seed's
 * host is another site. The seed origins (or their hosts' registrable
 * domains, from the public suffix list through libpsl) are kept in an
 * exact sieve_hashset, written before the workers start and only read
 * after, so lookups need no lock.
 *
 * The per-host quota counts URLs enqueued per host, so a large site cannot
 * fill the queue with pages that would never be fetched. A link reserves a
 * slot before it is pushed and gives it back if the frontier had already
 * seen it, which keeps the count exact without holding a lock across the
 * push. Hosts are few next to URLs, so the quota table allocates one small
 * entry per host. */
#include <libpsl.h>
#include <pthread.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "origin.h"
#include "scope.h"
#include "sieve/hashset.h"
#include "sieve/log.h"
#include "sieve/status.h"

typedef struct host_quota {
    struct host_quota *next;
    uint64_t used;
    size_t len;
    char host[];
} host_quota;

#define QUOTA_BUCKETS 4096

struct scope {
    sieve_scope kind;
    const accept_rules *accept;
    psl_ctx_t *psl;
    sieve_hashset *sites;
    regex_t *allow, *deny;
    size_t n_allow, n_deny;
    long max_depth;
    uint64_t per_host;
    pthread_mutex_t quota_lock;
    host_quota *quota[QUOTA_BUCKETS];
};

static const char *const verdict_names[SCOPE_VERDICTS] = {
    "in scope", "off site", "denied", "not allowed", "too deep", "host quota full", "rejected",
};

const char *scope_verdict_name(scope_verdict v)
{
    return v < SCOPE_VERDICTS ? verdict_names[v] : "unknown";
}

static int compile_all(regex_t **out, const char *const *exprs, size_t n, const char *what,
                       const sieve_logger *lg)
{
    *out = n > 0 ? calloc(n, sizeof **out) : NULL;
    if (n > 0 && *out == NULL)
        return SIEVE_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        int rc = regcomp(&(*out)[i], exprs[i], REG_EXTENDED | REG_NOSUB);
        if (rc != 0) {
            char why[256];
            regerror(rc, &(*out)[i], why, sizeof why);
            sieve_log(lg, SIEVE_LOG_ERROR, "%s expression '%s': %s", what, exprs[i], why);
            for (size_t j = 0; j < i; j++)
                regfree(&(*out)[j]);
            free(*out);
            *out = NULL;
            return SIEVE_EINVAL;
        }
    }
    return SIEVE_OK;
}

int scope_new(scope **out, const sieve_crawl_options *o, const accept_rules *accept)
{
    scope *s = calloc(1, sizeof *s);
    if (s == NULL)
        return SIEVE_ENOMEM;
    s->kind = o->scope;
    s->accept = accept;
    s->max_depth = o->max_depth;
    s->per_host = o->max_pages_per_host;
    pthread_mutex_init(&s->quota_lock, NULL);
    int rc = sieve_hashset_new(&s->sites, 64, SIEVE_HASH_SEED_DEFAULT);
    if (rc == SIEVE_OK)
        rc = compile_all(&s->allow, o->allow, o->n_allow, "allow", &o->logger);
    if (rc == SIEVE_OK) {
        s->n_allow = o->n_allow;
        rc = compile_all(&s->deny, o->deny, o->n_deny, "deny", &o->logger);
    }
    if (rc == SIEVE_OK) {
        s->n_deny = o->n_deny;
        if (s->kind == SIEVE_SCOPE_DOMAIN) {
            s->psl = psl_latest(NULL);
            if (s->psl == NULL) {
                sieve_log(&o->logger, SIEVE_LOG_ERROR, "cannot load the public suffix list");
                rc = SIEVE_EINVAL;
            }
        }
    }
    if (rc != SIEVE_OK) {
        scope_free(s);
        return rc;
    }
    *out = s;
    return SIEVE_OK;
}

void scope_free(scope *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->n_allow; i++)
        regfree(&s->allow[i]);
    for (size_t i = 0; i < s->n_deny; i++)
        regfree(&s->deny[i]);
    free(s->allow);
    free(s->deny);
    for (size_t b = 0; b < QUOTA_BUCKETS; b++) {
        for (host_quota *q = s->quota[b], *next; q != NULL; q = next) {
            next = q->next;
            free(q);
        }
    }
    pthread_mutex_destroy(&s->quota_lock);
    sieve_hashset_free(s->sites);
    psl_free(s->psl);
    free(s);
}

/* The key a URL's site is judged by: its origin, or its host's
 * registrable domain. Writes into buf when it needs a NUL-terminated
 * copy. */
static const char *site_of(const scope *s, const char *url, const sieve_canon_info *info, char *buf,
                           size_t cap, size_t *site_len)
{
    if (s->kind != SIEVE_SCOPE_DOMAIN) {
        *site_len = url_origin_len(url);
        return url;
    }
    const char *host = url + info->host_off;
    *site_len = info->host_len;
    if (info->host_len >= cap)
        return host;
    memcpy(buf, host, info->host_len);
    buf[info->host_len] = '\0';
    const char *domain = psl_registrable_domain(s->psl, buf);
    if (domain == NULL)
        return host; /* an IP address or a bare suffix: the host itself */
    *site_len = strlen(domain);
    return domain;
}

int scope_add_seed(scope *s, const char *url, const sieve_canon_info *info)
{
    char buf[256];
    size_t len;
    const char *site = site_of(s, url, info, buf, sizeof buf, &len);
    int rc = sieve_hashset_add(s->sites, site, len);
    return rc == SIEVE_SEEN ? SIEVE_OK : rc;
}

static int matches_any(const regex_t *re, size_t n, const char *url)
{
    for (size_t i = 0; i < n; i++)
        if (regexec(&re[i], url, 0, NULL, 0) == 0)
            return 1;
    return 0;
}

static uint64_t host_hash(const char *host, size_t len)
{
    return sieve_hash_key(host, len, SIEVE_HASH_SEED_DEFAULT).lo;
}

/* Finds or adds the quota entry of a host; called with quota_lock held. */
static host_quota *quota_of(scope *s, const char *host, size_t len)
{
    host_quota **slot = &s->quota[host_hash(host, len) % QUOTA_BUCKETS];
    for (host_quota *q = *slot; q != NULL; q = q->next)
        if (q->len == len && memcmp(q->host, host, len) == 0)
            return q;
    host_quota *q = malloc(sizeof *q + len);
    if (q == NULL)
        return NULL;
    *q = (host_quota){.next = *slot, .len = len};
    memcpy(q->host, host, len);
    *slot = q;
    return q;
}

static int reserve(scope *s, const char *host, size_t len)
{
    pthread_mutex_lock(&s->quota_lock);
    host_quota *q = quota_of(s, host, len);
    int ok = q != NULL && q->used < s->per_host;
    if (ok)
        q->used++;
    pthread_mutex_unlock(&s->quota_lock);
    return ok;
}

void scope_release(scope *s, const char *url)
{
    if (s->per_host == 0)
        return;
    size_t len = url_origin_len(url);
    pthread_mutex_lock(&s->quota_lock);
    host_quota *q = quota_of(s, url, len);
    if (q != NULL && q->used > 0)
        q->used--;
    pthread_mutex_unlock(&s->quota_lock);
}

scope_verdict scope_check(scope *s, const char *url, const sieve_canon_info *info, uint32_t depth)
{
    if (s->max_depth >= 0 && depth > (uint64_t)s->max_depth)
        return SCOPE_TOO_DEEP;
    if (s->kind != SIEVE_SCOPE_ANY) {
        char buf[256];
        size_t len;
        const char *site = site_of(s, url, info, buf, sizeof buf, &len);
        if (!sieve_hashset_contains(s->sites, site, len))
            return SCOPE_OFF_SITE;
    }
    if (s->n_deny > 0 && matches_any(s->deny, s->n_deny, url))
        return SCOPE_DENIED;
    if (s->n_allow > 0 && !matches_any(s->allow, s->n_allow, url))
        return SCOPE_NOT_ALLOWED;
    if (s->accept != NULL && !accept_url(s->accept, url, info->len))
        return SCOPE_REJECTED;
    /* The quota is per origin, like the frontier's politeness. */
    if (s->per_host > 0 && !reserve(s, url, url_origin_len(url)))
        return SCOPE_HOST_FULL;
    return SCOPE_IN;
}
