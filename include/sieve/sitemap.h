/* sieve/sitemap.h - streaming sitemap parsing (sitemaps.org protocol).
 *
 * The crawler seeds a host from the Sitemap lines of its robots.txt: each
 * names a sitemap, which lists pages (<urlset>) or further sitemaps
 * (<sitemapindex>). A parser is fed the body chunk by chunk as it arrives
 * and calls back once per entry; it never holds the whole file.
 *
 * Formats, told apart by the first bytes fed (chunks may split anything,
 * the first two bytes included):
 *
 *   - gzip (magic 1f 8b), of any of the formats below: inflated as it
 *     streams in. Concatenated gzip members are read in turn; bytes after
 *     a member that do not start another one are ignored.
 *   - XML, a document whose first non-blank byte (after a UTF-8 BOM) is
 *     '<': its root element must be urlset (entries are pages, from
 *     <url><loc>) or sitemapindex (entries are sitemaps, from
 *     <sitemap><loc>). Elements are matched on their local names, so any
 *     namespace, or none, is accepted. Any other root is SIEVE_EFORMAT.
 *   - text, a document whose first non-blank bytes are "http://" or
 *     "https://" (any case): one page URL a line, UTF-8, LF or CRLF line
 *     ends, blank lines skipped.
 *
 * Anything else is SIEVE_EFORMAT. Locations are delivered as written:
 * entities decoded (XML), surrounding blanks (space, tab, CR, LF) trimmed,
 * but neither resolved nor canonicalized - the protocol requires absolute
 * URLs, and the caller canonicalizes them. An XML entry is delivered at its
 * end tag (</url>, </sitemap>) with the text of its first <loc> and of its
 * <lastmod>; a text entry at its line end (or at the end of the file).
 *
 * Security. XML goes through libxml2's push parser with SAX callbacks only
 * (no tree). No DTD, external entity or external subset is ever loaded,
 * the network is never used, and no entity is expanded but the five
 * predefined ones and character references: a reference to any declared
 * entity, internal or external, is dropped, so neither XXE nor an entity
 * bomb ("billion laughs") can expand. Malformed XML is read in libxml2's
 * recovery mode; entries delivered before an error that stops the parser
 * stay delivered.
 *
 * Limits, so that any input costs bounded time and memory:
 *   - max_entries entries per file (50,000, the protocol's limit): the
 *     next one stops the parse with SIEVE_ETOOLONG;
 *   - max_bytes bytes of content per file after decompression (50 MiB,
 *     the protocol's limit): the byte past it stops the parse with
 *     SIEVE_ETOOLONG, which also bounds a gzip bomb's expansion;
 *   - a location longer than max_loc bytes (2048) is refused and counted,
 *     never delivered; its bytes beyond the limit are not kept;
 *   - max_pending bytes that libxml2 may hold unparsed (a start tag that
 *     never ends), beyond which the parse stops with SIEVE_ETOOLONG;
 *   - libxml2's work, linear in the content whatever it holds: an element
 *     with more than SIEVE_SITEMAP_MAX_ATTRS attributes (counted as the
 *     '=' in what libxml2 holds at once), elements nested more than 256
 *     deep, more than 256 namespace prefixes in scope or a DOCTYPE with
 *     more than 1,024 enumerated values ('|') stop the parse with
 *     SIEVE_ETOOLONG; attribute defaults a DOCTYPE declares are ignored.
 * Entries delivered before a limit stopped the parse stay delivered, and
 * stats.truncated is set. Memory is then a few fixed buffers, libxml2's
 * bounded state (element depth and namespaces capped as above, its name
 * dictionary by the bytes) and at most max_pending unparsed bytes,
 * whatever the input. The protocol wants UTF-8: content that libxml2
 * reads through a converter that does not keep ASCII bytes as they are
 * (UTF-16, EBCDIC) is SIEVE_EFORMAT.
 *
 * Chunking changes nothing: libxml2 is always handed the same pieces of
 * the (decompressed) content, whatever the sizes of the caller's feeds, so
 * feeding a byte at a time delivers what feeding the file at once does.
 *
 * Threads: a parser belongs to one thread at a time; parsers of different
 * files may run in parallel. libxml2 must be initialized first, once, from
 * the main thread: sieve_sitemap_global_init() (or the same
 * sieve_links_global_init()). */
#ifndef SIEVE_SITEMAP_H
#define SIEVE_SITEMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sieve/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sieve_sitemap sieve_sitemap;

/* Most entries read from one file (the protocol's limit). */
#define SIEVE_SITEMAP_MAX_ENTRIES 50000

/* Most content bytes read from one file, after decompression. */
#define SIEVE_SITEMAP_MAX_BYTES (50u * 1024 * 1024)

/* Longest location delivered, in bytes. */
#define SIEVE_SITEMAP_MAX_LOC 2048

/* Largest max_loc accepted in the options. */
#define SIEVE_SITEMAP_MAX_LOC_LIMIT (1024u * 1024)

/* Most bytes libxml2 may hold unparsed. */
#define SIEVE_SITEMAP_MAX_PENDING (256u * 1024)

/* Most attributes libxml2 may read in one call (so in one element). */
#define SIEVE_SITEMAP_MAX_ATTRS 256

/* Longest <lastmod> text delivered (a W3C datetime takes at most 35). */
#define SIEVE_SITEMAP_MAX_LASTMOD 64

/* What an entry's location names. */
typedef enum sieve_sitemap_kind {
    SIEVE_SITEMAP_PAGE = 1,    /* a page: <urlset><url><loc>, or a text line */
    SIEVE_SITEMAP_SITEMAP = 2, /* a sitemap: <sitemapindex><sitemap><loc> */
} sieve_sitemap_kind;

/* The format of the content, once the first bytes have told. */
typedef enum sieve_sitemap_format {
    SIEVE_SITEMAP_UNKNOWN = 0, /* not known yet, or not a sitemap */
    SIEVE_SITEMAP_URLSET = 1,  /* XML, root <urlset> */
    SIEVE_SITEMAP_INDEX = 2,   /* XML, root <sitemapindex> */
    SIEVE_SITEMAP_TEXT = 3,    /* one URL a line */
} sieve_sitemap_format;

/* One entry, valid only during the callback. */
typedef struct sieve_sitemap_entry {
    sieve_sitemap_kind kind;
    const char *loc; /* NUL-terminated, non-empty, at most max_loc bytes,
                        no control bytes */
    size_t loc_len;
    const char *lastmod; /* <lastmod> text, trimmed and NUL-terminated, as
                            written (not checked to be a date); NULL when
                            absent, empty or longer than
                            SIEVE_SITEMAP_MAX_LASTMOD (always for text) */
    size_t lastmod_len;
} sieve_sitemap_entry;

/* Receives each entry; ctx is the one given to sieve_sitemap_new(). It
 * must not call back into the same parser. */
typedef void (*sieve_sitemap_fn)(void *ctx, const sieve_sitemap_entry *e);

/* Options; a zero field takes its default. */
typedef struct sieve_sitemap_opts {
    size_t max_entries; /* SIEVE_SITEMAP_MAX_ENTRIES */
    size_t max_bytes;   /* SIEVE_SITEMAP_MAX_BYTES */
    size_t max_loc;     /* SIEVE_SITEMAP_MAX_LOC; at most
                           SIEVE_SITEMAP_MAX_LOC_LIMIT */
    size_t max_pending; /* SIEVE_SITEMAP_MAX_PENDING */
} sieve_sitemap_opts;

typedef struct sieve_sitemap_stats {
    uint64_t pages;     /* page entries delivered */
    uint64_t sitemaps;  /* sitemap entries delivered */
    uint64_t too_long;  /* refused: location longer than max_loc */
    uint64_t empty;     /* refused: <url>/<sitemap> without a location, or
                           with an empty (all blank) one */
    uint64_t invalid;   /* refused: control bytes in the location (a NUL
                           or a line break inside it) */
    uint64_t bytes_in;  /* bytes fed */
    uint64_t bytes_out; /* content bytes read, after decompression: at
                           most max_bytes, and up to where the parse
                           stopped (equals bytes_in for an uncompressed
                           file read to its end) */
    sieve_sitemap_format format;
    bool gzip;      /* the input was gzip-compressed */
    bool truncated; /* a limit stopped the parse (SIEVE_ETOOLONG) */
    bool malformed; /* XML with errors that libxml2 recovered from or
                       stopped at */
} sieve_sitemap_stats;

/* Initializes libxml2's globals: the same as sieve_links_global_init(),
 * whichever comes first does it. Idempotent but not safe to race: call it
 * once from the main thread before threads create parsers. */
SIEVE_API void sieve_sitemap_global_init(void);

/* Starts a parser that calls fn with ctx for each entry. opts may be NULL
 * for the defaults. Returns SIEVE_OK and sets *out; SIEVE_EINVAL for a
 * NULL out or fn, or max_loc above SIEVE_SITEMAP_MAX_LOC_LIMIT;
 * SIEVE_ENOMEM. */
SIEVE_API int sieve_sitemap_new(sieve_sitemap **out, const sieve_sitemap_opts *opts,
                                sieve_sitemap_fn fn, void *ctx);

/* Parses the next len bytes of the file (data may be NULL when len is 0).
 * Entries complete in them may be held back a little (libxml2 is fed in
 * fixed pieces); sieve_sitemap_finish() delivers the rest. Returns
 * SIEVE_OK; SIEVE_EINVAL for NULL arguments; SIEVE_ESTATE after
 * sieve_sitemap_finish(). Errors that stop the parse, after which later
 * feeds return the same error and the entries already delivered stand:
 * SIEVE_EFORMAT when the content is not a sitemap (see above) or the gzip
 * data is corrupt; SIEVE_ETOOLONG when a limit is passed; SIEVE_ENOMEM. */
SIEVE_API int sieve_sitemap_feed(sieve_sitemap *s, const void *data, size_t len);

/* Ends the file and delivers the entries still held back (the last text
 * line needs no line end). Later feeds return SIEVE_ESTATE; a second
 * finish returns what the first did. Returns SIEVE_OK when the content was
 * a sitemap, even XML with errors (see stats.malformed); SIEVE_EINVAL for
 * a NULL s; SIEVE_EFORMAT for content that was never recognized as a
 * sitemap (an empty file included); SIEVE_ETRUNCATED when the gzip stream
 * ends before its trailer (the entries read so far stand, a text line cut
 * by it is dropped); or the error that stopped the parse. */
SIEVE_API int sieve_sitemap_finish(sieve_sitemap *s);

/* Copies the counters so far into *st. */
SIEVE_API void sieve_sitemap_stats_get(const sieve_sitemap *s, sieve_sitemap_stats *st);

/* Frees the parser (finished or not). NULL is a no-op. */
SIEVE_API void sieve_sitemap_free(sieve_sitemap *s);

#ifdef __cplusplus
}
#endif
#endif
