/* via.h - where a URL came from, carried with it through the frontier as
 * its data (sieve_url.data): the page it was found on, its referrer, and
 * for the target of a redirect, the URL first requested before the
 * redirects, which the later hops of the chain keep.
 *
 * The data is the referrer and a NUL, then, for a redirect's target, the
 * first URL and a NUL: "P\0" for a link found on page P, "P\0F\0" for the
 * target of a redirect chain that P's link to F began, "\0F\0" for one
 * that the seed F began. A seed has none. A sitemap's entries have the
 * sitemap as their referrer, the sitemaps robots.txt lists robots.txt.
 * Each string ends with its own NUL inside the data, so a record points
 * into the data where it lies. The frontier keeps the data only with a
 * URL it queues: a link found again on another page keeps the referrer
 * it was first found with. */
#ifndef SIEVE_VIA_H
#define SIEVE_VIA_H

#include <stddef.h>

#include "sieve/frontier.h"

/* The referrer and the first URL u's data name, each NULL when none. */
void via_read(const sieve_url *u, const char **referrer, const char **first_url);

/* The data of the target of a redirect from u, the URL popped that was
 * redirected: written into buf (SIEVE_URL_DATA_MAX bytes), its length
 * returned. */
size_t via_redirect(const sieve_url *u, char *buf);

/* Makes *dst a copy of the popped URL src whose URL (with its NUL) lives
 * in url (SIEVE_URL_MAX + 1 bytes) and whose data lives in data
 * (SIEVE_URL_DATA_MAX bytes): a slot keeps it past the next pop. */
void via_copy(sieve_url *dst, char *url, char *data, const sieve_url *src);

#endif
