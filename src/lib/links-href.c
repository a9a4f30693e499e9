/* links-href.c - a page's hrefs canonicalized once each.
 *
 * Real pages repeat their links: navigation, footers, the same type named
 * in every signature of an API reference. Canonicalizing one costs a few
 * microseconds of curl's URL API, so what an href became is kept in a
 * small table of the page's own, keyed by the href as libxml2 delivers
 * it, and an href met again is copied from there. The table is bounded
 * (HREF_MAX entries, HREF_ARENA_MAX bytes in links-internal.h, then it
 * starts over), so a page with a million links costs no more memory than
 * one with a few thousand; a new <base> empties it.
 *
 * Before the table, the memo of links handled on earlier pages
 * (links-memo.c) is asked by a key made here: the href's hash seeded with
 * the hash of the part of the base it resolves against. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <xxhash.h>

#include "links-internal.h"
#include "sieve/status.h"

void lx_hrefs_free(struct href_table *t)
{
    free(t->e);
    free(t->slot);
    free(t->arena);
    *t = (struct href_table){0};
}

/* Empties the table, keeping its memory: the base changed, or it is full. */
void lx_hrefs_clear(struct href_table *t)
{
    t->n = 0;
    t->used = 0;
    if (t->slot)
        memset(t->slot, 0, ((size_t)t->mask + 1) * sizeof *t->slot);
}

static const struct href *hrefs_find(const struct href_table *t, const char *key, size_t len,
                                     uint64_t hash)
{
    if (!t->slot)
        return NULL;
    for (uint32_t i = (uint32_t)hash & t->mask;; i = (i + 1) & t->mask) {
        uint32_t k = t->slot[i];
        if (k == 0)
            return NULL;
        const struct href *e = &t->e[k - 1];
        if (e->hash == hash && e->key_len == len && memcmp(t->arena + e->key_off, key, len) == 0)
            return e;
    }
}

/* Room for one more entry of `bytes` arena bytes; false when memory ran
 * out (the link is then simply not kept). */
static bool hrefs_room(struct href_table *t, size_t bytes)
{
    if (t->n == HREF_MAX || t->used + bytes > HREF_ARENA_MAX) {
        if (bytes > HREF_ARENA_MAX)
            return false;
        lx_hrefs_clear(t);
    }
    if (t->n == t->cap) {
        uint32_t cap = t->cap ? 2 * t->cap : 32;
        struct href *e = realloc(t->e, cap * sizeof *e);
        uint32_t *slot = calloc(2 * (size_t)cap, sizeof *slot);
        if (!e || !slot) {
            free(slot);
            if (e)
                t->e = e;
            return false;
        }
        t->e = e;
        t->cap = cap;
        free(t->slot);
        t->slot = slot;
        t->mask = 2 * cap - 1;
        for (uint32_t k = 0; k < t->n; k++) {
            uint32_t i = (uint32_t)t->e[k].hash & t->mask;
            while (t->slot[i])
                i = (i + 1) & t->mask;
            t->slot[i] = k + 1;
        }
    }
    /* An entry of no bytes (an empty href, refused) still gets an arena:
     * its offset is read against it. */
    if (!t->arena || t->used + bytes > t->size) {
        size_t size = t->size ? t->size : 4096;
        while (size < t->used + bytes)
            size *= 2;
        char *a = realloc(t->arena, size);
        if (!a)
            return false;
        t->arena = a;
        t->size = size;
    }
    return true;
}

static void hrefs_add(struct href_table *t, const char *key, size_t len, uint64_t hash,
                      const sieve_link *link)
{
    size_t url_len = link->status == SIEVE_OK ? link->url_len : 0;
    if (!hrefs_room(t, len + url_len))
        return;
    struct href *e = &t->e[t->n];
    *e = (struct href){.hash = hash,
                       .key_off = (uint32_t)t->used,
                       .key_len = (uint32_t)len,
                       .url_len = (uint32_t)url_len,
                       .host_off = (uint32_t)link->info.host_off,
                       .host_len = (uint32_t)link->info.host_len,
                       .status = link->status,
                       .https = link->info.https};
    memcpy(t->arena + t->used, key, len);
    if (url_len > 0) /* a refused link has no URL */
        memcpy(t->arena + t->used + len, link->url, url_len);
    t->used += len + url_len;
    uint32_t i = (uint32_t)hash & t->mask;
    while (t->slot[i])
        i = (i + 1) & t->mask;
    t->slot[i] = ++t->n;
}

/* ---- memo keys (see sieve_links_memo in sieve/links.h) ----
 *
 * What part of the base an href resolves against depends on how it
 * starts, as curl's URL API resolves it: nothing for an absolute http(s)
 * URL, the scheme for "//host", the origin for "/path", the directory
 * (up to the path's last '/') for a relative path, and the whole base for
 * "?query", a fragment, an empty href and anything else with a ':' before
 * its first '/', '?' or '#' (a scheme of some other kind). Each kind seeds
 * the href's hash with that part's hash, so equal keys mean the same
 * href against the same part. */
void lx_memo_seeds(sieve_links *lx)
{
    const char *b = lx->base; /* canonical: scheme://authority/path[?query] */
    size_t n = strlen(b), scheme = strcspn(b, ":");
    size_t origin = scheme + 3 + strcspn(b + scheme + 3, "/?#");
    size_t full = strcspn(b, "#"), dir = origin;
    for (size_t i = origin; i < full && b[i] != '?'; i++)
        if (b[i] == '/')
            dir = i + 1;
    if (scheme + 3 > n)
        origin = dir = full = n;
    lx->seed[MEMO_ABSOLUTE] = 1;
    lx->seed[MEMO_SCHEME] = XXH3_64bits(b, scheme) + MEMO_SCHEME;
    lx->seed[MEMO_ORIGIN] = XXH3_64bits(b, origin) + MEMO_ORIGIN;
    lx->seed[MEMO_DIR] = XXH3_64bits(b, dir) + MEMO_DIR;
    lx->seed[MEMO_FULL] = XXH3_64bits(b, full) + MEMO_FULL;
}

static bool starts_http(const char *v)
{
    return strncasecmp(v, "http://", 7) == 0 || strncasecmp(v, "https://", 8) == 0;
}

/* The memo key of href v (n bytes, fragment_only() already applied: an
 * empty key stands for the base), or 0 when it has none. */
static uint64_t memo_key(const sieve_links *lx, const char *v, size_t n)
{
    enum memo_kind k;
    if (n == 0 || v[0] == '?')
        k = MEMO_FULL;
    else if ((unsigned char)v[0] <= 0x20)
        return 0; /* trimmed by canonicalization: keep it simple */
    else if (v[0] == '/')
        k = v[1] == '/' ? MEMO_SCHEME : MEMO_ORIGIN;
    else if (starts_http(v))
        k = MEMO_ABSOLUTE;
    else
        k = v[strcspn(v, ":/?#")] == ':' ? MEMO_FULL : MEMO_DIR;
    uint64_t key = XXH3_64bits_withSeed(v, n, lx->seed[k]);
    return key != 0 ? key : 1;
}

/* Whether an href names the base itself: nothing but a fragment once the
 * blanks and controls that canonicalization trims are gone. */
static bool fragment_only(const char *v)
{
    while (*v && (unsigned char)*v <= 0x20)
        v++;
    return *v == '\0' || *v == '#';
}

/* Canonicalizes value (n bytes) into link, or takes what this page's
 * table holds for it. Every fragment-only href shares the entry of "",
 * and hrefs that differ only in their fragment share one entry: the
 * table's key ends where canonicalization stops reading. That the
 * fragment also decides whether curl is asked to encode (a byte from 0x80
 * up in it) changes nothing here: the base is canonical, so its host is
 * plain ASCII, and what comes before the fragment is encoded alike. */
void lx_resolve(sieve_links *lx, const char *value, size_t n, sieve_link *link)
{
    const char *key = value;
    if (fragment_only(value))
        key = "", n = 0;
    link->key = memo_key(lx, key, n);
    if (sieve_links_memo_has(lx->memo, link->key)) {
        link->status = SIEVE_SEEN;
        return;
    }
    size_t key_len = sieve_canon_fragment_at(key, n, true);
    uint64_t hash = XXH3_64bits(key, key_len);
    const struct href *e = hrefs_find(&lx->hrefs, key, key_len, hash);
    if (e) {
        link->status = e->status;
        if (e->status == SIEVE_OK) {
            memcpy(lx->out, lx->hrefs.arena + e->key_off + e->key_len, e->url_len);
            lx->out[e->url_len] = '\0';
        }
        link->info = (sieve_canon_info){
            .len = e->url_len, .host_off = e->host_off, .host_len = e->host_len, .https = e->https};
        return;
    }
    link->status =
        lx->base_u != NULL
            ? sieve_canon_url_parsed(lx->canon, lx->base_u, key, n, lx->out, lx->cap, &link->info)
            : sieve_canon_url(lx->canon, lx->base, key, n, lx->out, lx->cap, &link->info);
    if (link->status == SIEVE_ENOMEM)
        return;
    if (link->status == SIEVE_OK) {
        link->url = lx->out;
        link->url_len = link->info.len;
    }
    hrefs_add(&lx->hrefs, key, key_len, hash, link);
}
