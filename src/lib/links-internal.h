/* links-internal.h - switches of the link extractor for tests (internal:
 * the tests compare what libxml2 finds when it sees the whole page with
 * what it finds when the extractor leaves parts out). */
#ifndef SIEVE_LINKS_INTERNAL_H
#define SIEVE_LINKS_INTERNAL_H

#include "sieve/links.h"

/* How much of a page the extractor keeps from libxml2. */
enum sieve_links_hiding {
    SIEVE_LINKS_HIDE_NOTHING, /* every byte goes to libxml2 */
    SIEVE_LINKS_HIDE_TEXT,    /* runs of text between tags are left out */
    SIEVE_LINKS_HIDE_ALL,     /* the default: text, script and style data,
                                 comments and attributes no link needs */
};

/* Sets what lx hides from libxml2; call it before the first feed. */
void sieve_links_set_hiding(sieve_links *lx, enum sieve_links_hiding h);

#endif
