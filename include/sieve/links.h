/* sieve/links.h - streaming link extraction from HTML pages.
 *
 * An extractor is fed a page chunk by chunk, as the bytes arrive (from
 * curl's write callback), and calls back once per link as soon as the tag
 * that holds it has been read. It never holds the whole page: libxml2's
 * HTML push parser keeps only the unparsed tail, and no tree is built
 * (SAX callbacks only). Feeding one byte at a time gives the same links
 * as feeding the page at once.
 *
 * Links are the href of <a> and <area>, the src of <frame> and <iframe>,
 * and the URL a <meta http-equiv="refresh"> sends the reader to (read as
 * the HTML standard reads its content, "5; url=/next"), or a Refresh
 * header given to sieve_links_refresh(). Each is resolved against the document's
 * base URL - the page URL, or the href of the first <base> element that has one, for the links that
 * come after it (a streaming parser cannot go back to the links before it) - and canonicalized with
 * the sieve_canon given in the options, so the callback receives URLs ready for the frontier.
 *
 * rel="nofollow" (rel is a space-separated, case-insensitive token list)
 * makes the link skipped unless follow_nofollow is set, in which case it
 * is delivered with its nofollow flag set. A robots meta tag,
 * <meta name="robots" content="nofollow"> (or name="sieve", the
 * crawler's own; "none" says nofollow too), does the same for every link
 * after it in the page.
 *
 * Hostile pages: attribute values longer than 4 * the canonicalizer's
 * max_len are refused (SIEVE_ETOOLONG) without being copied; a page whose
 * unparsed tail grows past max_pending (a tag or script that never ends)
 * is abandoned with SIEVE_ETOOLONG, which bounds libxml2's buffers; the parser
 * keeps no per-link state, so a page with millions of links costs no more
 * memory than one with a few; malformed HTML and invalid UTF-8 are parsed
 * in libxml2's recovery mode. Content after </html> is still read, as
 * browsers do. NUL bytes are dropped (a UTF-16 page's once it is decoded).
 *
 * Bounded cost: libxml2 2.9 compares each attribute of a tag with every
 * earlier one, and each end tag with every open element, which made one
 * hostile page of a megabyte cost minutes. Both are bounded by counts, so
 * a page costs time linear in its size, and so does each feed of a
 * bounded chunk. An element nested deeper than SIEVE_LINKS_MAX_DEPTH takes
 * its parent's place (no link depends on it; depth_capped counts them). A
 * start tag is never handed to libxml2 with more than
 * SIEVE_LINKS_MAX_ATTRS attributes: one that has more is read up to its
 * last attribute within the limit (its link is delivered if it comes that
 * early) and the page ends there. A page ended by a limit is not an error:
 * feed and finish go on returning SIEVE_OK and ignore the rest, and
 * stats.cut and stats.cut_reason tell, with the links delivered before the
 * cut standing.
 *
 * Speed: libxml2 sees only what it must. Once it is known to be reading
 * element content in UTF-8 (any page but an undeclared one past its first
 * byte that is not UTF-8),
 * text, script and style elements, comments, the tags no link needs (all
 * but a, area, frame, iframe, base and meta) and the attributes no link
 * needs (all but href, src and rel of a, area, frame and iframe, and those
 * of base and meta, kept whole) are not handed to it, wherever the extractor
 * can tell for sure how libxml2 would read them; the rest it reads as it
 * comes (text_skipped in the stats counts the bytes left out). On the
 * bench's dense pages that is over half of libxml2's instructions. With
 * a memo (sieve_links_memo below), links handled on earlier pages are
 * skipped before they cost a canonicalization.
 *
 * Encoding: decided before libxml2 reads a byte, as the HTML standard has
 * browsers decide it: a byte order mark (UTF-8, UTF-16LE, UTF-16BE) first,
 * then the charset given in the options, then a <meta charset> or <meta
 * http-equiv="Content-Type"> within the page's first 1,024 bytes (found by
 * the standard's prescan, which skips comments and other tags' attributes;
 * a <meta> later in the page is ignored). An undeclared page is read as
 * UTF-8 up to its first invalid byte and as ISO-8859-1 from there on.
 * Labels are read as browsers read them, by the WHATWG Encoding Standard's
 * table: "latin1", "ascii" and "iso-8859-1" are windows-1252, "gb2312" is
 * GBK, "shift_jis" is windows-31j, "utf-16" is UTF-16LE, and so on; a label
 * not in that table (IBM037, UTF-32, UTF-7, a typo) is ignored, and so are
 * the labels of its "replacement" encoding: the page is read as
 * undeclared, as it is for x-user-defined given in the options (a <meta>
 * declaring it is windows-1252, as in the standard's prescan). A page in
 * another charset than UTF-8 is decoded to UTF-8 with iconv before libxml2
 * sees it, and a byte sequence the charset has no character for becomes
 * U+FFFD, as in browsers: the page goes on (the lone bytes iconv rejects
 * but the standard maps are read as it maps them: windows-1252's five C1
 * controls, 0x80 as the euro sign in gb18030 and GBK and as U+0080 in
 * Shift_JIS). On such a
 * page, non-ASCII in a link's query is written in the page's charset and
 * percent-encoded, as browsers send it (the URL standard's document
 * encoding; a character the charset lacks becomes "&%23N;"), while the
 * path is UTF-8; a UTF-16 page's queries are UTF-8.
 *
 * Threads: an extractor belongs to one thread at a time; extractors for
 * different pages may run in parallel, sharing one sieve_canon. Call
 * sieve_links_global_init() once, before threads create extractors. */
#ifndef SIEVE_LINKS_H
#define SIEVE_LINKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sieve/export.h"
#include "sieve/url.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sieve_links sieve_links;

/* A memo of links handled for good (see links-memo.c): an extractor given
 * one skips a link whose key it holds, before canonicalizing it, and
 * counts it in stats.known. A link's key (sieve_link.key) hashes the link
 * as written with the part of the page's base it resolves against: the
 * origin for "/path", the scheme for "//host", the directory for a
 * relative path, the whole base for "?query" or a fragment, nothing for
 * an absolute http(s) URL. Equal keys thus mean equal URLs, on any page
 * whose base shares that part, with the same canonicalizer. The caller
 * adds a key once the link's URL is somewhere it need not be offered
 * again (for the crawl engine: the frontier's seen-set). A memo belongs
 * to one thread at a time and may serve one extractor after another. */
typedef struct sieve_links_memo sieve_links_memo;

/* Largest memo: 2^24 keys (128 MiB). */
#define SIEVE_LINKS_MEMO_MAX (1u << 24)

/* Makes a memo of at least entries keys (rounded up to a power of two; 8
 * bytes each). SIEVE_EINVAL for a NULL out, 0 or more than
 * SIEVE_LINKS_MEMO_MAX entries; SIEVE_ENOMEM. */
SIEVE_API int sieve_links_memo_new(sieve_links_memo **out, size_t entries);

/* Frees a memo; NULL is a no-op. No extractor may still use it. */
SIEVE_API void sieve_links_memo_free(sieve_links_memo *m);

/* Remembers a key (a newer key may take its place later: a memo forgets,
 * it never lies beyond the chance of two links sharing a 64-bit key).
 * Key 0 is ignored. */
SIEVE_API void sieve_links_memo_add(sieve_links_memo *m, uint64_t key);

/* Whether the memo holds key (never for 0 or a NULL memo). */
SIEVE_API bool sieve_links_memo_has(const sieve_links_memo *m, uint64_t key);

/* One link, valid only during the callback. */
typedef struct sieve_link {
    int status;      /* SIEVE_OK, or why the link was refused (only
                        delivered with report_errors) */
    const char *url; /* canonical URL, NUL-terminated; NULL unless OK */
    size_t url_len;
    sieve_canon_info info; /* where the host lies in url */
    const char *raw;       /* the attribute value as the page wrote it, entities
                              decoded, NUL-terminated; NULL when too long */
    size_t raw_len;
    const char *tag; /* "a", "area", "frame", "iframe", or "meta" (a refresh's
                        URL: <meta http-equiv=refresh content="0; url=...">, or
                        the Refresh header's) */
    bool nofollow;   /* rel had "nofollow" (only with follow_nofollow) */
    uint64_t key;    /* the link's memo key, or 0 when it has none (a
                        link written with leading blanks, or too long) */
} sieve_link;

/* Receives each link; ctx is the one given to sieve_links_new(). */
typedef void (*sieve_link_fn)(void *ctx, const sieve_link *link);

typedef struct sieve_links_opts {
    const sieve_canon *canon;     /* required; must outlive the extractor */
    const char *charset;          /* a label from Content-Type, or NULL: the
                                     page's own <meta> decides; a label
                                     browsers know overrides it, any other is
                                     ignored; a byte order mark wins over both
                                     (see Encoding) */
    bool follow_nofollow;         /* deliver rel=nofollow links too */
    bool report_errors;           /* also call back for refused links */
    size_t max_pending;           /* most bytes libxml2 may hold unparsed (one
                                     tag, text run or script still open); 0:
                                     SIEVE_LINKS_MAX_PENDING */
    const sieve_links_memo *memo; /* links to skip; NULL: none */
} sieve_links_opts;

/* Default of max_pending: 16 MiB. */
#define SIEVE_LINKS_MAX_PENDING (16u * 1024 * 1024)

/* Most attributes libxml2 is let read in one start tag. */
#define SIEVE_LINKS_MAX_ATTRS 1000

/* Deepest nesting of elements libxml2 is let keep. */
#define SIEVE_LINKS_MAX_DEPTH 256

typedef struct sieve_links_stats {
    uint64_t found;         /* candidate attributes seen, refused or not */
    uint64_t passed;        /* delivered with SIEVE_OK */
    uint64_t known;         /* skipped: their key was in the memo */
    uint64_t nofollow;      /* skipped for rel=nofollow or a robots meta tag */
    bool meta_nofollow;     /* a robots meta tag said nofollow */
    uint64_t scheme;        /* refused: not http(s) (javascript:, mailto:, ...) */
    uint64_t trap;          /* refused: too long, too many or repeated segments */
    uint64_t invalid;       /* refused: malformed */
    bool base_used;         /* a <base href> changed the base of later links */
    uint64_t text_skipped;  /* bytes never handed to libxml2: text, script
                               and style data, comments, tags, attributes */
    uint64_t bytes_parsed;  /* bytes handed to libxml2 */
    size_t attrs_max;       /* most attributes libxml2 read in one start tag:
                               at most SIEVE_LINKS_MAX_ATTRS */
    size_t depth_max;       /* deepest libxml2's stack of open elements got:
                               at most SIEVE_LINKS_MAX_DEPTH */
    uint64_t depth_capped;  /* elements that took their parent's place */
    bool cut;               /* a limit ended the page early (see "Bounded
                               cost"): links after the cut are missing */
    const char *cut_reason; /* why, in a few words, when cut; else NULL */
} sieve_links_stats;

/* Initializes libxml2's parser globals and silences libxml2's generic
 * error handler (process-wide; libxml2 would otherwise print charset
 * conversion errors of broken pages to stderr). Idempotent, but not safe
 * to race: call it once from the main thread before threads use
 * extractors. */
SIEVE_API void sieve_links_global_init(void);

/* Starts an extractor for the page at page_url (absolute http(s) URL; it
 * is canonicalized with opts->canon and becomes the base). fn is called
 * with ctx for each link. Returns SIEVE_OK; SIEVE_EINVAL for a NULL out,
 * page_url, opts, opts->canon or fn; the errors of
 * sieve_canon_url() for page_url; SIEVE_ENOMEM. */
SIEVE_API int sieve_links_new(sieve_links **out, const char *page_url, const sieve_links_opts *opts,
                              sieve_link_fn fn, void *ctx);

/* The value (len bytes, "5; url=/next") of the page's Refresh response
 * header, read as the <meta http-equiv="refresh"> it stands for: a URL it
 * names is delivered at once, as a link of tag "meta", under the page URL
 * as base. Call it before the first feed. Returns SIEVE_OK (whether or
 * not the value names a URL); SIEVE_EINVAL for a NULL lx, or a NULL value
 * with len; SIEVE_ESTATE after sieve_links_finish(); SIEVE_ENOMEM, which
 * abandons the page as sieve_links_feed() does. */
SIEVE_API int sieve_links_refresh(sieve_links *lx, const char *value, size_t len);

/* Parses the next len bytes of the page; links complete in them are
 * delivered before it returns, except that the page's first bytes wait
 * until its charset is known (up to 1,024 of them; see Encoding) and small
 * chunks are gathered before libxml2 reads them: sieve_links_finish()
 * delivers what waited. Chunks may split anything, even a multibyte
 * sequence. Returns SIEVE_OK; SIEVE_ESTATE after sieve_links_finish();
 * SIEVE_EINVAL for NULL arguments; SIEVE_ETOOLONG when the parser holds
 * more than max_pending unparsed bytes, SIEVE_ENOMEM if it ran out of
 * memory: the page is abandoned and later calls return the same error.
 * After a limit cut the page (stats.cut), the rest is ignored and
 * SIEVE_OK returned. */
SIEVE_API int sieve_links_feed(sieve_links *lx, const void *data, size_t len);

/* Ends the page: delivers links still held back (a tag cut off at the
 * end of the page is read as libxml2 recovers it). Later feeds return
 * SIEVE_ESTATE; a second finish is a no-op. Returns SIEVE_OK, SIEVE_EINVAL,
 * or the error that abandoned the page. */
SIEVE_API int sieve_links_finish(sieve_links *lx);

/* Copies the counters so far into *st. */
SIEVE_API void sieve_links_stats_get(const sieve_links *lx, sieve_links_stats *st);

/* The canonical page URL the extractor started from. */
SIEVE_API const char *sieve_links_page_url(const sieve_links *lx);

/* Frees the extractor (finished or not). NULL is a no-op. */
SIEVE_API void sieve_links_free(sieve_links *lx);

#ifdef __cplusplus
}
#endif
#endif
