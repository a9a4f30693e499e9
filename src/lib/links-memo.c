/* links-memo.c - links an extractor need not canonicalize again.
 *
 * The pages of a site link to the same URLs over and over: menus, indexes,
 * the hubs of an API reference. Canonicalizing a link costs a few
 * microseconds of curl's URL API (resolve, parse, rebuild), and a link
 * that was pushed to the frontier before gains nothing from it: the
 * seen-set holds its URL already. A memo remembers such links by a key,
 * the 64-bit hash of the link as written and of the part of its page's
 * base that it depends on (links.c makes the key), so that the next page
 * with the same link under the same directory skips it for the price of
 * a hash.
 *
 * A fixed table of keys, one per slot, the slot taken from the key's low
 * bits; a new key takes the place of the one in its slot. Forgetting
 * costs only a canonicalization, so nothing needs more than that. Two
 * links whose keys were equal would make the second one skipped: with
 * 64-bit keys that is about one chance in 10^19 a lookup, far below the
 * Bloom filter's own false positives. Key 0 means "no key". */
#include <stdlib.h>

#include "sieve/links.h"
#include "sieve/status.h"

struct sieve_links_memo {
    uint64_t mask;
    uint64_t *slot;
};

int sieve_links_memo_new(sieve_links_memo **out, size_t entries)
{
    if (out == NULL || entries == 0 || entries > SIEVE_LINKS_MEMO_MAX)
        return SIEVE_EINVAL;
    *out = NULL;
    size_t n = 1;
    while (n < entries)
        n *= 2;
    sieve_links_memo *m = malloc(sizeof *m);
    uint64_t *slot = calloc(n, sizeof *slot);
    if (m == NULL || slot == NULL) {
        free(m);
        free(slot);
        return SIEVE_ENOMEM;
    }
    *m = (sieve_links_memo){.mask = n - 1, .slot = slot};
    *out = m;
    return SIEVE_OK;
}

void sieve_links_memo_free(sieve_links_memo *m)
{
    if (m == NULL)
        return;
    free(m->slot);
    free(m);
}

void sieve_links_memo_add(sieve_links_memo *m, uint64_t key)
{
    if (m != NULL && key != 0)
        m->slot[key & m->mask] = key;
}

bool sieve_links_memo_has(const sieve_links_memo *m, uint64_t key)
{
    return m != NULL && key != 0 && m->slot[key & m->mask] == key;
}
