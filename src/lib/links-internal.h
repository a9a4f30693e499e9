/* links-internal.h - what the link extractor's files share: its limits,
 * its state (struct sieve_links), and the few functions one file calls in
 * another. links.c holds the extractor's API and libxml2's callbacks;
 * links-href.c canonicalizes a page's hrefs once each; links-bound.c counts what libxml2 may read
 * so its work stays linear (see "Bounding libxml2's work" there); links-squeeze.c leaves out of
 * libxml2's input what cannot change a link (see "Skipping text" and "Squeezing markup" there).
 * Also the switches tests use to compare what libxml2 finds when it sees the whole page with what
 * it finds when the extractor leaves parts out. */
#ifndef SIEVE_LINKS_INTERNAL_H
#define SIEVE_LINKS_INTERNAL_H

#include <libxml/HTMLparser.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sieve/links.h"
#include "url-internal.h"

/* How much of a page the extractor keeps from libxml2. */
enum sieve_links_hiding {
    SIEVE_LINKS_HIDE_NOTHING, /* every byte goes to libxml2 */
    SIEVE_LINKS_HIDE_TEXT,    /* runs of text between tags are left out */
    SIEVE_LINKS_HIDE_ALL,     /* the default: text, script and style data,
                                 comments and attributes no link needs */
};

/* Sets what lx hides from libxml2; call it before the first feed. */
void sieve_links_set_hiding(sieve_links *lx, enum sieve_links_hiding h);

/* Chunks smaller than this are gathered before libxml2 sees them. */
#define STAGE_MIN 512
/* Largest piece handed to libxml2 at once, so max_pending is checked
 * often even when one feed brings megabytes. */
#define PIECE_MAX (1024 * 1024)
/* Text runs shorter than this go to libxml2: a cut costs a call. */
#define SKIP_MIN 32
/* Most bytes of an unfinished tag, comment or script a feed may hold back
 * for the next, to squeeze them whole. */
#define CARRY_MAX (16 * 1024)
/* Most attributes of a tag the squeeze reads; a tag with more goes to
 * libxml2 as it is, where the limit on attributes applies. */
#define PLAIN_ATTRS_MAX 256
/* Bytes libxml2 may keep of what it has already read. */
#define SHRINK_AT 4096
/* libxml2 cuts tag and attribute names at this many characters and reads
 * on as if a new attribute started (HTML_PARSER_BUFFER_SIZE). */
#define NAME_CUT 100
/* Bytes a call hands to libxml2 when a converter the extractor cannot read
 * through stands in between: at most half as many attributes. */
#define CONV_PIECE 1024
/* Longest start tag libxml2 may hold behind such a converter. */
#define CONV_TAG_MAX (16 * 1024)
/* Most distinct hrefs, and bytes of hrefs and URLs, a page's table keeps
 * before it starts over: about 900 KiB at most, reached only by pages
 * with thousands of distinct hrefs, and freed with the page. At 2,048 and
 * 128 KiB the dense site's API references started over: 300 of its pages
 * (bench/links-cost.c) took 18,422 canonicalizations against 13,930. */
#define HREF_MAX       8192
#define HREF_ARENA_MAX (512 * 1024)

/* A start tag read as libxml2's htmlParseStartTag() reads it. */
enum tag_state {
    TAG_OPEN,         /* after the '<' */
    TAG_NAME,         /* in the element name */
    TAG_BEFORE_ATTR,  /* where an attribute may start */
    TAG_ATTR_NAME,    /* in an attribute name */
    TAG_AFTER_NAME,   /* blanks after it */
    TAG_BEFORE_VALUE, /* after its '=' */
    TAG_DQ,           /* in a "value" */
    TAG_SQ,           /* in a 'value' */
    TAG_UNQUOTED,     /* in a value without quotes */
    TAG_SKIP,         /* skipping what is no attribute, up to a blank */
    TAG_BOGUS,        /* no element name: skipping up to the '>' */
    TAG_END,          /* after the '>' */
};

struct tag_scan {
    enum tag_state state;
    size_t len;   /* characters of the current name */
    size_t attrs; /* attributes so far */
};

/* What libxml2 held after the last call, counted before the next. */
struct held {
    bool tag;          /* a start tag whose end it has not seen */
    struct tag_scan t; /* that tag, up to the last byte held */
    size_t tag_bytes;  /* its bytes */
    size_t loose;      /* attribute starts it may yet read elsewhere */
};

/* How an href resolves against the base, for its memo key. */
enum memo_kind { MEMO_ABSOLUTE, MEMO_SCHEME, MEMO_ORIGIN, MEMO_DIR, MEMO_FULL, MEMO_KINDS };

/* One href met on the page and what canonicalization made of it: its
 * bytes, then the URL's, in the arena. */
struct href {
    uint64_t hash;
    uint32_t key_off, key_len, url_len; /* the URL follows the key */
    uint32_t host_off, host_len;
    int status;
    bool https;
};

struct href_table {
    struct href *e;  /* entries, in the order met */
    uint32_t n, cap; /* entries used, allocated */
    uint32_t *slot;  /* open addressing: entry index + 1, 0 empty */
    uint32_t mask;   /* slots - 1; slots >= 2 * cap */
    char *arena;
    size_t used, size;
};

/* Bare link tags (links-squeeze.c): the values of a link tag's href, src
 * and rel, taken out of the tag handed to libxml2 and given to
 * on_start() when libxml2 reports the tag, in the order handed. */
enum { LX_BARE_HREF, LX_BARE_SRC, LX_BARE_REL, LX_BARE_ATTRS };
struct lx_bare {
    uint32_t off[LX_BARE_ATTRS]; /* in the arena, NUL-terminated; UINT32_MAX: none */
};
struct lx_bares {
    struct lx_bare *e;
    size_t n, next, cap; /* entries queued, the next to take, room */
    char *arena;
    size_t used, size;
};

/* Queues the values of a bare link tag (v[k] NULL: no such attribute);
 * false when memory ran out (lx->err set). */
bool lx_bare_push(sieve_links *lx, const unsigned char *const v[LX_BARE_ATTRS],
                  const size_t len[LX_BARE_ATTRS]);

/* links-sniff.c: the page's first bytes a charset is looked for in. */
#define LX_SNIFF_MAX 1024

/* links-decode.c: a page's decoder to UTF-8. */
typedef struct lx_decoder lx_decoder;

struct sieve_links {
    htmlParserCtxtPtr ctxt;
    htmlSAXHandler sax;
    const sieve_canon *canon;
    sieve_link_fn fn;
    void *ctx;
    bool follow_nofollow;
    bool report_errors;
    bool base_seen; /* the first <base href> was met (used or not) */
    bool finished;
    bool in_text;   /* libxml2 is idle in text: skip to the next '<' */
    int hiding;     /* enum sieve_links_hiding */
    char *squeezed; /* what a squeeze hands to libxml2 */
    size_t squeezed_cap;
    struct lx_bares bares; /* values of the bare link tags handed */
    int err;               /* sticky failure: SIEVE_ENOMEM, SIEVE_ETOOLONG */
    size_t max_pending;    /* most unparsed bytes libxml2 may hold */
    size_t pending;        /* unparsed bytes it held after the last call */
    char *stage;           /* small chunks wait here until flush_at bytes */
    size_t stage_len, stage_cap;
    size_t flush_at;
    /* Until the charset is known (links-sniff.c), the first bytes wait
     * here; then the parser is made and they go first. */
    bool deciding;
    const char *given_conv; /* the caller's label's converter, or NULL */
    const char *meta_conv;  /* what the prescan of the bytes so far found */
    unsigned char sniff[LX_SNIFF_MAX];
    size_t sniff_len;
    lx_decoder *dec;          /* NULL when libxml2 reads the bytes as they come */
    size_t max_ref;           /* longest attribute value worth canonicalizing */
    char *page;               /* canonical page URL */
    char *base;               /* current base: page or resolved <base href> */
    sieve_canon_base *base_u; /* the same, parsed once for all the links after it */
    char *out;                /* max_len + 1 bytes for each link's URL */
    size_t cap;
    struct held held;             /* what libxml2 holds unparsed, as counted */
    unsigned char prev;           /* last byte handed to libxml2 */
    size_t run;                   /* name characters it ended with */
    bool stopped;                 /* a limit ended the page: the rest is ignored */
    struct href_table hrefs;      /* this page's hrefs, canonicalized */
    const sieve_links_memo *memo; /* links handled before, by key */
    uint64_t seed[MEMO_KINDS];    /* the base's parts, hashed, by href kind */
    /* A UTF-8 sequence the end of the bytes last handed cut off, waiting
     * for the rest (see lx_parse()). */
    unsigned char u8_cut[4];
    size_t u8_cut_len;
    const xmlCharEncodingHandler *enc_seen; /* the converter last checked */
    bool enc_keeps_ascii;                   /* and whether it keeps ASCII */
    sieve_links_stats st;
};

/* links-href.c: the link that value (n bytes) names against the current
 * base, into link: SIEVE_SEEN when the memo knows it, else canonicalized
 * (lx->out) or copied from the page's table. */
void lx_resolve(sieve_links *lx, const char *value, size_t n, sieve_link *link);
/* links-href.c: the memo key seeds of a new base. */
void lx_memo_seeds(sieve_links *lx);
/* links-href.c: a page's table emptied (its memory kept), or freed. */
void lx_hrefs_clear(struct href_table *t);
void lx_hrefs_free(struct href_table *t);

/* The length of a UTF-8 sequence that starts with lead byte c, or 0 for
 * a byte that starts none (libxml2 2.9 reads at most four bytes). */
static inline size_t lx_utf8_len(unsigned c)
{
    return c < 0xc0 || c >= 0xf8 ? 0 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
}

/* Length of the UTF-8 sequence at p as libxml2's reader accepts it (no
 * overlong form, at most four bytes), or 0 for one it would take for a
 * sign of another charset, or that len cuts off. Inline: the squeeze
 * calls it for every byte from 0x80 up that it skips. */
static inline size_t lx_utf8_seq(const unsigned char *p, size_t len)
{
    static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
    size_t n = lx_utf8_len(p[0]);
    if (n == 0 || len < n)
        return 0;
    uint32_t v = p[0] & (0x7fu >> n);
    for (size_t k = 1; k < n; k++) {
        if ((p[k] & 0xc0) != 0x80)
            return 0;
        v = v << 6 | (p[k] & 0x3fu);
    }
    return v >= least[n] ? n : 0;
}

/* links-charset.c: the iconv converter's name for a charset label of the
 * WHATWG Encoding Standard; NULL for any other label, and for the two
 * encodings read as undeclared (see there). */
const char *lx_charset_conv(const char *label);

/* links-sniff.c: the converter a byte order mark at p names ("UTF-8",
 * "UTF-16LE", "UTF-16BE"), its length in *bom_len; NULL and 0 for none. */
const char *lx_sniff_bom(const unsigned char *p, size_t len, size_t *bom_len);
/* links-sniff.c: whether the len bytes at p may be the start of a byte
 * order mark, so that more must come before it is known. */
bool lx_sniff_bom_possible(const unsigned char *p, size_t len);
/* links-sniff.c: the converter the first LX_SNIFF_MAX of the len bytes at
 * p declare with a <meta>, read as the HTML standard's prescan reads
 * them; NULL for none. A result found in fewer bytes stays the same
 * whatever follows them. */
const char *lx_sniff_meta(const unsigned char *p, size_t len);

/* links-decode.c: a decoder from the charset of iconv name conv to UTF-8.
 * SIEVE_OK, SIEVE_EINVAL when iconv has no such converter, SIEVE_ENOMEM. */
int lx_decoder_new(lx_decoder **out, const char *conv);
void lx_decoder_free(lx_decoder *d);
/* links-decode.c: decodes len bytes of the page and hands the UTF-8 to
 * lx_feed_text(); final also ends a sequence the page's end cut off. */
void lx_decode(lx_decoder *d, const void *data, size_t len, bool final, sieve_links *lx);
/* links-decode.c: the href value (n bytes of UTF-8) with its query in
 * the page's charset, percent-encoded, as the URL standard has browsers
 * encode it: *out is value itself (and n returned) when there is nothing
 * to encode, else a buffer d keeps until the next call. NULL d: nothing. */
size_t lx_query_encode(lx_decoder *d, const char *value, size_t n, const char **out);
/* links.c: takes len bytes of UTF-8 (or of an undeclared page) on. */
void lx_feed_text(sieve_links *lx, const char *p, size_t len);

/* links.c: one call into libxml2 (see its comment there). */
void lx_parse(sieve_links *lx, const char *p, size_t len, int terminate);
/* links.c: an element too deep takes its parent's place. */
void lx_limit_depth(sieve_links *lx);

/* What lx_limit_piece() says of the bytes after the piece: go on, close
 * the tag libxml2 holds and end the page, or end it as it is. */
enum { PIECE_OK, PIECE_CLOSE, PIECE_STOP };

/* links-bound.c: hands len bytes to libxml2, counted; how many of them
 * the next call may take; the end of a page a limit cut. */
void lx_hand(sieve_links *lx, const char *p, size_t len, int terminate);
size_t lx_limit_piece(sieve_links *lx, const char *p, size_t len, int *verdict);
void lx_end_page(sieve_links *lx, int verdict);
/* libxml2's idea of blanks (IS_BLANK_CH) and name characters, asked of
 * every byte of a tag: inline, not a call into another file. */
static inline bool lx_is_blank(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* What may start an HTML name for libxml2 (htmlParseHTMLName)... */
static inline bool lx_name_start(unsigned char c)
{
    return (unsigned)((c | 0x20) - 'a') < 26 || c == '_' || c == ':' || c == '.';
}

/* ...and continue it. */
static inline bool lx_name_char(unsigned char c)
{
    return lx_name_start(c) || (unsigned)(c - '0') < 10 || c == '-';
}

/* links-squeeze.c: hands len bytes to libxml2 but for what it would only
 * read and drop; returns how many it took (the rest waits for more). */
size_t lx_parse_skipping_text(sieve_links *lx, const char *p, size_t len, bool final);

#endif
