/* via-check.h - a record's referrer and first URL judged against the
 * graph of the sieve-web it came from (harness_web_edges()). */
#ifndef SIEVE_TEST_VIA_CHECK_H
#define SIEVE_TEST_VIA_CHECK_H

#include <stddef.h>

/* NULL when the record of url, with this referrer and first URL (NULL:
 * none), agrees with the graph edges (n sorted lines), seeded by seeds
 * (NULL-ended); else a sentence saying what does not, valid until the
 * next call. They agree when:
 *   - a seed has neither;
 *   - a URL reached by a link has no first URL, and its referrer links
 *     to it;
 *   - a URL reached through redirects has a first URL, which is a seed
 *     (and then no referrer) or which the referrer links to, and from
 *     which the web's redirects lead to url. */
const char *via_check(char *const *edges, size_t n, const char *const *seeds, const char *url,
                      const char *referrer, const char *first_url);

/* The same for a line of sieve crawl's JSON output. */
const char *via_check_line(char *const *edges, size_t n, const char *const *seeds,
                           const char *line);

/* The value of "key" in a JSON line of sieve crawl's, copied into out
 * (cap bytes): a string's text, or a number or null as written. 0, or -1
 * when the line has no such key or the value does not fit. */
int record_field(const char *line, const char *key, char *out, size_t cap);

#endif
