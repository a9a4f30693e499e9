/* creds.c - a small chained hash table from origin to user and password,
 * written while seeds are added and read-only after. Most crawls have
 * none, and creds_find() then costs one branch. */
#include <stdlib.h>
#include <string.h>

#include "creds.h"
#include "origin.h"
#include "sieve/hash.h"
#include "sieve/status.h"

#define CREDS_BUCKETS 1024

typedef struct cred {
    struct cred *next;
    char *user, *password;
    size_t len;
    char origin[];
} cred;

struct creds {
    size_t n;
    cred *bucket[CREDS_BUCKETS];
};

int creds_new(creds **out)
{
    *out = calloc(1, sizeof **out);
    return *out != NULL ? SIEVE_OK : SIEVE_ENOMEM;
}

void creds_free(creds *c)
{
    if (c == NULL)
        return;
    for (size_t b = 0; b < CREDS_BUCKETS; b++) {
        for (cred *e = c->bucket[b], *next; e != NULL; e = next) {
            next = e->next;
            free(e->user);
            free(e->password);
            free(e);
        }
    }
    free(c);
}

static cred **slot(const creds *c, const char *origin, size_t len)
{
    return (cred **)&c
        ->bucket[sieve_hash_key(origin, len, SIEVE_HASH_SEED_DEFAULT).lo % CREDS_BUCKETS];
}

static cred *find(const creds *c, const char *origin, size_t len)
{
    for (cred *e = *slot(c, origin, len); e != NULL; e = e->next)
        if (e->len == len && memcmp(e->origin, origin, len) == 0)
            return e;
    return NULL;
}

int creds_set(creds *c, const char *origin, size_t len, const char *user, const char *password,
              bool keep)
{
    cred *e = find(c, origin, len);
    if (e != NULL && keep)
        return SIEVE_OK;
    char *u = strdup(user), *p = strdup(password != NULL ? password : "");
    if (u == NULL || p == NULL) {
        free(u);
        free(p);
        return SIEVE_ENOMEM;
    }
    if (e == NULL) {
        e = calloc(1, sizeof *e + len);
        if (e == NULL) {
            free(u);
            free(p);
            return SIEVE_ENOMEM;
        }
        e->len = len;
        memcpy(e->origin, origin, len);
        cred **s = slot(c, origin, len);
        e->next = *s;
        *s = e;
        c->n++;
    }
    free(e->user);
    free(e->password);
    e->user = u;
    e->password = p;
    return SIEVE_OK;
}

bool creds_find(const creds *c, const char *url, const char **user, const char **password)
{
    if (c == NULL || c->n == 0)
        return false;
    cred *e = find(c, url, url_origin_len(url));
    if (e == NULL)
        return false;
    *user = e->user;
    *password = e->password;
    return true;
}
