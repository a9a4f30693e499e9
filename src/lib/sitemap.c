/* sitemap.c - sitemaps (sitemaps.org) parsed as they stream in.
 *
 * Three layers, each fed by the one before:
 *
 *   raw      the bytes as fed. The first two tell gzip (1f 8b) from
 *            plain; gzip goes through zlib's inflate, which needs only its
 *            32 KiB window, into a fixed output buffer. Every inflated
 *            buffer is handed on before the next is made, so a gzip bomb
 *            costs time up to max_bytes and no memory at all.
 *   content  the (inflated) bytes, counted against max_bytes. Until the
 *            format is known, a UTF-8 BOM and blanks are skipped and the
 *            first bytes are held: '<' starts XML, "http://" or
 *            "https://" a text sitemap, anything else is not a sitemap.
 *   format   XML goes to libxml2's push parser; text is split at '\n'.
 *
 * Why libxml2 with SAX only: it does the XML we must not get wrong
 * (entities, CDATA, namespaces, encodings declared in the prolog,
 * recovery from broken markup), and without a tree its memory is the
 * unparsed tail plus its element stack. The SAX handler is ours alone:
 * no internalSubset, externalSubset, resolveEntity or getEntity callback,
 * so no DTD is built or loaded and every reference to a declared entity
 * finds nothing - libxml2 only falls back to its own entity table when the
 * SAX user data is the parser context, which ours is not. Predefined
 * entities and character references are decoded by the parser itself
 * before any lookup. That is what makes XXE and entity bombs inert, on top
 * of XML_PARSE_NONET and entity substitution left off.
 *
 * Recovery. After any error, libxml2 2.9 stops decoding even &amp; and
 * the other predefined entities (xmlParseReference() returns early while
 * the context is not well-formed), so one bad entry would silently change
 * the URLs of every entry after it ("?a=1&amp;b=2" read as "?a=1b=2").
 * Errors are noted as they are raised, and the context is marked
 * well-formed again at every SAX event and before every chunk.
 *
 * Chunking. libxml2's push parser may split character data differently
 * with different chunks (we concatenate it anyway), and its look-ahead
 * heuristics are not obviously chunk-independent. So it is always handed
 * the same PIECE-byte pieces of the XML stream, staged when the caller's
 * feeds are smaller: whatever the feeds, libxml2 sees the same calls.
 * Detection is byte by byte and the text splitter keeps its state between
 * feeds, so the whole parser delivers the same entries for any chunking.
 *
 * A location is collected into one buffer of max_loc + 1 bytes: leading
 * blanks are skipped, bytes past max_loc are dropped and only remembered
 * (as "too long") if they are not blanks, so a location that never ends
 * costs max_loc bytes, and trailing blanks are trimmed at the end. */
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/tree.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

#include "sieve/links.h"
#include "sieve/sitemap.h"
#include "sieve/status.h"

/* libxml2 is always fed pieces of exactly this many bytes (the last one
 * of a document excepted). */
#define PIECE (16 * 1024)

/* Inflate output buffer. */
#define INFLATE_OUT (16 * 1024)

/* Most input handed to zlib at once: its avail_in is an unsigned int. */
#define INFLATE_IN_MAX (1u << 30)

/* Deepest nesting of elements read: libxml2's own limit for documents it
 * builds a tree of (xmlParserMaxDepth), which a SAX-only push parse does
 * not check. */
#define MAX_DEPTH 256

/* Most namespace prefixes in scope at once. */
#define MAX_NAMESPACES 256

/* Most '|' a DOCTYPE libxml2 holds may have: libxml2 checks each value of
 * an enumerated attribute type against all the earlier ones. */
#define MAX_DTD_CHOICES 1024

enum raw_state { RAW_START, RAW_MAGIC1, RAW_PLAIN, RAW_GZIP };
enum content_state { CT_DETECT, CT_XML, CT_TEXT };
enum capture { CAP_NONE, CAP_LOC, CAP_LASTMOD };

/* A text being collected: a location or a lastmod. */
struct text {
    char *buf;  /* cap + 1 bytes */
    size_t cap; /* most bytes kept */
    size_t len;
    bool over; /* a non-blank byte past cap was dropped */
};

struct sieve_sitemap {
    sieve_sitemap_fn fn;
    void *ctx;
    size_t max_entries, max_bytes, max_pending;
    bool finished;
    int err; /* sticky: the error that stopped the parse */

    enum raw_state raw;
    z_stream z;
    bool z_ready;       /* inflateInit2 done */
    bool z_end;         /* the last gzip member ended */
    bool z_trailing;    /* bytes after a member are not another: ignored */
    uint64_t z_members; /* members ended */
    unsigned char *zout;

    enum content_state ct;
    unsigned bom;   /* bytes of a UTF-8 BOM skipped */
    size_t skipped; /* bytes seen while detecting */
    char head[8];   /* the first non-blank bytes, for "https://" */
    size_t head_len;

    xmlParserCtxtPtr xml;
    char *stage; /* PIECE bytes */
    size_t stage_len;
    size_t held_attrs; /* '=' in what libxml2 holds */
    unsigned depth;    /* open elements */
    const char *child; /* "url" or "sitemap", by the root */
    sieve_sitemap_kind kind;
    bool in_entry;
    bool have_loc, have_lastmod;
    enum capture capture;

    uint64_t entries; /* delivered and refused */
    struct text loc;
    struct text lastmod;
    char lastmod_buf[SIEVE_SITEMAP_MAX_LASTMOD + 1];
    sieve_sitemap_stats st;
};

static bool is_blank(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Ends the parse with err (the first error wins). */
static void stop(sieve_sitemap *s, int err)
{
    if (!s->err) {
        s->err = err;
        s->st.truncated = err == SIEVE_ETOOLONG;
    }
    if (s->xml)
        xmlStopParser(s->xml);
}

/* ---- collecting text ---- */

static void text_reset(struct text *t)
{
    t->len = 0;
    t->over = false;
}

static void text_add(struct text *t, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (t->len == 0 && is_blank(c))
            continue;
        if (t->len < t->cap)
            t->buf[t->len++] = (char)c;
        else if (!is_blank(c))
            t->over = true;
    }
}

/* Trims trailing blanks and terminates; returns the length. */
static size_t text_end(struct text *t)
{
    while (t->len && is_blank((unsigned char)t->buf[t->len - 1]))
        t->len--;
    t->buf[t->len] = '\0';
    return t->len;
}

static bool has_control(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c < 0x20 || c == 0x7f)
            return true;
    }
    return false;
}

/* One entry ends: deliver it, or count why not. lastmod may be NULL. */
static void emit(sieve_sitemap *s, struct text *lastmod)
{
    if (s->entries >= s->max_entries) {
        stop(s, SIEVE_ETOOLONG);
        return;
    }
    s->entries++;
    size_t n = text_end(&s->loc);
    if (s->loc.over) {
        s->st.too_long++;
        return;
    }
    if (n == 0) {
        s->st.empty++;
        return;
    }
    if (has_control(s->loc.buf, n)) {
        s->st.invalid++;
        return;
    }
    sieve_sitemap_entry e = {.kind = s->kind, .loc = s->loc.buf, .loc_len = n};
    if (lastmod && !lastmod->over) {
        size_t m = text_end(lastmod);
        if (m && !has_control(lastmod->buf, m)) {
            e.lastmod = lastmod->buf;
            e.lastmod_len = m;
        }
    }
    if (s->kind == SIEVE_SITEMAP_PAGE)
        s->st.pages++;
    else
        s->st.sitemaps++;
    s->fn(s->ctx, &e);
}

/* ---- text sitemaps ---- */

static void text_line_end(sieve_sitemap *s)
{
    if (s->loc.len || s->loc.over)
        emit(s, NULL);
    text_reset(&s->loc);
}

/* Returns the bytes consumed: all of them, or up to the line end at
 * which a limit stopped the parse. */
static size_t text_push(sieve_sitemap *s, const char *p, size_t n)
{
    size_t done = 0;
    while (done < n && !s->err) {
        const char *nl = memchr(p + done, '\n', n - done);
        size_t k = nl ? (size_t)(nl - (p + done)) : n - done;
        text_add(&s->loc, p + done, k);
        if (!nl)
            return n;
        text_line_end(s);
        done += k + 1;
    }
    return done;
}

/* ---- XML sitemaps ---- */

/* The local part of a name: "sm:url" when a prefix was left unbound. */
static const char *local_name(const xmlChar *name)
{
    const char *n = (const char *)name;
    const char *colon = strrchr(n, ':');
    return colon ? colon + 1 : n;
}

/* See "Recovery" above: keeps &amp; decoded after an error. */
static void forgive(sieve_sitemap *s)
{
    if (!s->xml->wellFormed) {
        s->st.malformed = true;
        s->xml->wellFormed = 1;
    }
}

static void on_root(sieve_sitemap *s, const char *name)
{
    if (strcmp(name, "urlset") == 0) {
        s->st.format = SIEVE_SITEMAP_URLSET;
        s->kind = SIEVE_SITEMAP_PAGE;
        s->child = "url";
    } else if (strcmp(name, "sitemapindex") == 0) {
        s->st.format = SIEVE_SITEMAP_INDEX;
        s->kind = SIEVE_SITEMAP_SITEMAP;
        s->child = "sitemap";
    } else {
        stop(s, SIEVE_EFORMAT);
    }
}

/* See "Bounded cost" above. Attribute defaults from a DOCTYPE would be
 * added to every element of their name, each checked against all the
 * others: they are dropped once the DTD is read (and here, should one get
 * past that). */
static void drop_defaults(xmlParserCtxtPtr c)
{
    if (c->attsDefault) {
        xmlHashFree(c->attsDefault, xmlHashDefaultDeallocator);
        c->attsDefault = NULL;
    }
}

/* Called once the DOCTYPE is read: loads nothing. */
static void on_dtd_end(void *ud, const xmlChar *name, const xmlChar *external_id,
                       const xmlChar *system_id)
{
    sieve_sitemap *s = ud;
    drop_defaults(s->xml);
}

static void on_start(void *ud, const xmlChar *localname, const xmlChar *prefix, const xmlChar *uri,
                     int nb_ns, const xmlChar **ns, int nb_attr, int nb_def, const xmlChar **attrs)
{
    sieve_sitemap *s = ud;
    if (s->err || !localname)
        return;
    forgive(s);
    drop_defaults(s->xml);
    /* libxml2 looks a prefix up through every namespace in scope. */
    if (s->depth == MAX_DEPTH || s->xml->nsNr / 2 > MAX_NAMESPACES) {
        stop(s, SIEVE_ETOOLONG);
        return;
    }
    const char *name = local_name(localname);
    s->depth++;
    if (s->depth == 1) {
        on_root(s, name);
    } else if (s->depth == 2 && strcmp(name, s->child) == 0) {
        s->in_entry = true;
        s->have_loc = s->have_lastmod = false;
        text_reset(&s->loc);
        text_reset(&s->lastmod);
    } else if (s->depth == 3 && s->in_entry) {
        /* The first <loc> and <lastmod> of an entry count. */
        if (strcmp(name, "loc") == 0 && !s->have_loc)
            s->capture = CAP_LOC;
        else if (strcmp(name, "lastmod") == 0 && !s->have_lastmod)
            s->capture = CAP_LASTMOD;
    }
}

static void on_end(void *ud, const xmlChar *localname, const xmlChar *prefix, const xmlChar *uri)
{
    sieve_sitemap *s = ud;
    if (s->err || s->depth == 0)
        return;
    forgive(s);
    if (s->depth == 3) {
        if (s->capture == CAP_LOC)
            s->have_loc = true;
        else if (s->capture == CAP_LASTMOD)
            s->have_lastmod = true;
        s->capture = CAP_NONE;
    } else if (s->depth == 2 && s->in_entry) {
        s->in_entry = false;
        if (!s->have_loc)
            text_reset(&s->loc);
        emit(s, s->have_lastmod ? &s->lastmod : NULL);
    }
    s->depth--;
}

static void on_chars(void *ud, const xmlChar *ch, int len)
{
    sieve_sitemap *s = ud;
    forgive(s);
    if (s->err || s->capture == CAP_NONE || s->depth != 3 || len <= 0)
        return;
    text_add(s->capture == CAP_LOC ? &s->loc : &s->lastmod, (const char *)ch, (size_t)len);
}

/* Broken sitemaps are common: errors are noted, never printed. */
static void on_error(void *ud, xmlErrorPtr err)
{
    sieve_sitemap *s = ud;
    if (!err || err->level >= XML_ERR_ERROR)
        s->st.malformed = true;
}

static int xml_start(sieve_sitemap *s)
{
    xmlSAXHandler sax;
    memset(&sax, 0, sizeof sax);
    sax.initialized = XML_SAX2_MAGIC;
    sax.startElementNs = on_start;
    sax.endElementNs = on_end;
    sax.characters = on_chars;
    sax.ignorableWhitespace = on_chars;
    sax.cdataBlock = on_chars;
    sax.serror = on_error;
    sax.externalSubset = on_dtd_end;
    s->stage = malloc(PIECE);
    if (!s->stage)
        return SIEVE_ENOMEM;
    /* The handler is copied into the context. */
    s->xml = xmlCreatePushParserCtxt(&sax, s, NULL, 0, NULL);
    if (!s->xml)
        return SIEVE_ENOMEM;
    xmlCtxtUseOptions(s->xml, XML_PARSE_RECOVER | XML_PARSE_NONET | XML_PARSE_NOERROR |
                                  XML_PARSE_NOWARNING);
    /* Whatever the process-wide defaults say: no substitution, no DTD. */
    s->xml->replaceEntities = 0;
    s->xml->loadsubset = 0;
    s->xml->validate = 0;
    return SIEVE_OK;
}

/* Bounded cost. libxml2 checks each attribute of a start tag against all
 * the earlier ones, and looks each prefix up through every namespace in
 * scope: an element with tens of thousands of attributes costs a tenth of
 * a second, a DOCTYPE giving <url> 14,000 default attributes nearly as
 * much for every entry, an enumeration of 40,000 values in a DOCTYPE
 * seconds. All are bounded by counts, never by time:
 *
 *   - libxml2 keeps no attribute without its '=', so the attributes it
 *     can read in one call are at most the '=' in the bytes it holds and
 *     the bytes it is given (those of URL queries count too). A call is
 *     given no more bytes than keep that count within
 *     SIEVE_SITEMAP_MAX_ATTRS, and when what libxml2 holds leaves no room
 *     the parse stops. The cut points depend on the content alone, so
 *     chunking still changes nothing. Comments and CDATA it holds cannot
 *     turn into tags before their end comes, and are not counted; nor is
 *     a DOCTYPE, bounded below.
 *   - Attribute defaults are dropped once the DOCTYPE is read; a DOCTYPE
 *     that libxml2 holds with more than MAX_DTD_CHOICES '|' (values of
 *     enumerated types) stops the parse.
 *   - Elements nested deeper than MAX_DEPTH, or more than MAX_NAMESPACES
 *     prefixes in scope, stop the parse.
 *   - Counting reads the bytes as libxml2 will, which holds for UTF-8 and
 *     other charsets that keep ASCII bytes as they are. The protocol
 *     wants UTF-8: a sitemap that libxml2 reads through another converter
 *     (UTF-16 say) stops with SIEVE_EFORMAT after its first piece (the
 *     entries of that piece stand). */

/* The '=' in n bytes at p, up to most + 1 of them; *at is set to where
 * the last one counted is, or n when there are no more than most. */
static size_t count_eq(const unsigned char *p, size_t n, size_t most, size_t *at)
{
    size_t k = 0;
    const unsigned char *q = p;
    *at = n;
    while ((q = memchr(q, '=', n - (size_t)(q - p)))) {
        if (k++ == most) {
            *at = (size_t)(q - p);
            break;
        }
        q++;
    }
    return k;
}

/* Charsets whose converters keep ASCII bytes as they are. */
static bool keeps_ascii(const xmlCharEncodingHandler *enc)
{
    static const char *const prefix[] = {"UTF-8",       "UTF8",     "ASCII",     "US-ASCII",
                                         "ISO-8859-",   "ISO8859-", "ISO_8859-", "LATIN",
                                         "WINDOWS-125", "CP125"};
    if (!enc)
        return true;
    for (size_t i = 0; i < sizeof prefix / sizeof *prefix; i++)
        if (strncasecmp(enc->name, prefix[i], strlen(prefix[i])) == 0)
            return true;
    return false;
}

/* After a call: counts what libxml2 holds, and stops the parse at a limit. */
static void count_held(sieve_sitemap *s)
{
    const xmlParserCtxt *c = s->xml;
    const xmlParserInput *in = c->input;
    s->held_attrs = 0;
    if (in && in->buf && !keeps_ascii(in->buf->encoder)) {
        stop(s, SIEVE_EFORMAT);
        return;
    }
    if (!in || !in->cur || c->instate == XML_PARSER_EOF)
        return;
    const unsigned char *p = in->cur;
    size_t n = (size_t)(in->end - in->cur);
    /* Before its '>' a DOCTYPE waits in another state than its subset. */
    if (c->instate == XML_PARSER_DTD || (n >= 9 && memcmp(p, "<!DOCTYPE", 9) == 0)) {
        size_t bars = 0;
        for (const unsigned char *b = p; (b = memchr(b, '|', n - (size_t)(b - p))); b++)
            bars++;
        if (bars > MAX_DTD_CHOICES)
            stop(s, SIEVE_ETOOLONG);
        return;
    }
    if ((n >= 4 && memcmp(p, "<!--", 4) == 0) || (n >= 9 && memcmp(p, "<![CDATA[", 9) == 0))
        return;
    size_t at;
    s->held_attrs = count_eq(p, n, SIEVE_SITEMAP_MAX_ATTRS, &at);
}

static void xml_parse(sieve_sitemap *s, const char *p, size_t n, int terminate)
{
    xmlParserCtxtPtr c = s->xml;
    if (c->instate == XML_PARSER_EOF)
        return;
    forgive(s);
    xmlParseChunk(c, p, (int)n, terminate);
    if (c->errNo == XML_ERR_NO_MEMORY) {
        stop(s, SIEVE_ENOMEM);
        return;
    }
    forgive(s);
    /* libxml2 holds a start tag until its '>': bound what it holds. */
    const xmlParserInput *in = c->input;
    size_t pending = in && in->cur ? (size_t)(in->end - in->cur) : 0;
    if (!terminate && pending > s->max_pending)
        stop(s, SIEVE_ETOOLONG);
    else if (!s->err)
        count_held(s);
}

/* Hands n bytes to libxml2 in as few calls as keep the attributes it can
 * read in one within SIEVE_SITEMAP_MAX_ATTRS (see "Bounded cost"); the
 * last call ends the document if terminate is set. */
static void xml_hand(sieve_sitemap *s, const char *p, size_t n, int terminate)
{
    const unsigned char *u = (const unsigned char *)p;
    do {
        size_t room =
            s->held_attrs < SIEVE_SITEMAP_MAX_ATTRS ? SIEVE_SITEMAP_MAX_ATTRS - s->held_attrs : 0;
        size_t k;
        count_eq(u, n, room, &k);
        if (k == 0 && n) {
            stop(s, SIEVE_ETOOLONG);
            return;
        }
        xml_parse(s, p, k, terminate && k == n);
        p += k;
        u += k;
        n -= k;
    } while (n && !s->err && s->xml->instate != XML_PARSER_EOF);
}

/* Hands libxml2 the stream in PIECE-byte pieces, staging the remainder.
 * Returns the bytes consumed: all of them (those after the end of the
 * document libxml2 found are ignored), or up to the end of the piece at
 * which the parse stopped. */
static size_t xml_push(sieve_sitemap *s, const char *p, size_t n)
{
    size_t done = 0;
    while (done < n && !s->err) {
        if (s->xml->instate == XML_PARSER_EOF)
            return n;
        if (s->stage_len == 0 && n - done >= PIECE) {
            xml_hand(s, p + done, PIECE, 0);
            done += PIECE;
            continue;
        }
        size_t k = PIECE - s->stage_len < n - done ? PIECE - s->stage_len : n - done;
        memcpy(s->stage + s->stage_len, p + done, k);
        s->stage_len += k;
        done += k;
        if (s->stage_len == PIECE) {
            s->stage_len = 0;
            xml_hand(s, s->stage, PIECE, 0);
        }
    }
    return done;
}

/* ---- content: format detection, byte limit ---- */

static bool head_is_prefix(const sieve_sitemap *s, const char *word)
{
    return s->head_len <= strlen(word) && strncasecmp(s->head, word, s->head_len) == 0;
}

/* Reads bytes until the format is known; returns how many it consumed
 * (the '<' that starts XML is left for the XML parser; a byte that shows
 * the content is not a sitemap is the last one consumed). */
static size_t detect(sieve_sitemap *s, const char *p, size_t n)
{
    static const unsigned char bom[3] = {0xef, 0xbb, 0xbf};
    size_t i;
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        size_t at = s->skipped++;
        if (at < 3 && at == s->bom && c == bom[at]) {
            s->bom++;
            continue;
        }
        if (s->bom == 1 || s->bom == 2)
            break; /* a BOM cut short: not a sitemap */
        if (s->head_len == 0 && is_blank(c))
            continue;
        if (s->head_len == 0 && c == '<') {
            s->ct = CT_XML;
            int st = xml_start(s);
            if (st != SIEVE_OK)
                stop(s, st);
            return i;
        }
        s->head[s->head_len++] = (char)c;
        bool http = head_is_prefix(s, "http://"), https = head_is_prefix(s, "https://");
        if (!http && !https)
            break; /* neither '<' nor a URL: not a sitemap */
        if ((http && s->head_len == 7) || (https && s->head_len == 8)) {
            s->ct = CT_TEXT;
            s->st.format = SIEVE_SITEMAP_TEXT;
            s->kind = SIEVE_SITEMAP_PAGE;
            text_push(s, s->head, s->head_len);
            return i + 1;
        }
    }
    if (i == n)
        return n;
    stop(s, SIEVE_EFORMAT);
    return i + 1;
}

static void content(sieve_sitemap *s, const char *p, size_t n)
{
    if (s->err)
        return;
    uint64_t room = s->max_bytes - s->st.bytes_out;
    bool over = n > room;
    if (over)
        n = (size_t)room;
    /* Only consumed bytes count, so that bytes_out does not depend on how
     * the input after a stop was chunked. */
    while (n && !s->err) {
        size_t k;
        if (s->ct == CT_DETECT)
            k = detect(s, p, n);
        else if (s->ct == CT_XML)
            k = xml_push(s, p, n);
        else
            k = text_push(s, p, n);
        s->st.bytes_out += k;
        p += k;
        n -= k;
    }
    if (over && !s->err)
        stop(s, SIEVE_ETOOLONG);
}

static void content_finish(sieve_sitemap *s)
{
    switch (s->ct) {
    case CT_DETECT:
        stop(s, SIEVE_EFORMAT);
        break;
    case CT_TEXT:
        text_line_end(s);
        break;
    case CT_XML:
        xml_hand(s, s->stage, s->stage_len, 1);
        s->stage_len = 0;
        if (!s->err && s->st.format == SIEVE_SITEMAP_UNKNOWN)
            stop(s, SIEVE_EFORMAT);
        break;
    }
}

/* ---- raw: gzip ---- */

static int gz_start(sieve_sitemap *s)
{
    s->zout = malloc(INFLATE_OUT);
    if (!s->zout)
        return SIEVE_ENOMEM;
    /* 16 + MAX_WBITS: a gzip wrapper, not zlib's. */
    int r = inflateInit2(&s->z, 16 + MAX_WBITS);
    if (r != Z_OK)
        return r == Z_MEM_ERROR ? SIEVE_ENOMEM : SIEVE_EINVAL;
    s->z_ready = true;
    s->st.gzip = true;
    return SIEVE_OK;
}

/* A stream error: corrupt data, or bytes after a member that do not start
 * another one, which are ignored as gzip(1) does. */
static void gz_error(sieve_sitemap *s, int r)
{
    if (r == Z_MEM_ERROR)
        stop(s, SIEVE_ENOMEM);
    else if (s->z_members > 0 && s->z.total_out == 0)
        s->z_trailing = true;
    else
        stop(s, SIEVE_EFORMAT);
}

static void gz_feed(sieve_sitemap *s, const unsigned char *p, unsigned n)
{
    s->z.next_in = (Bytef *)p;
    s->z.avail_in = n;
    while (!s->err && !s->z_trailing) {
        if (s->z_end) {
            if (s->z.avail_in == 0)
                return;
            inflateReset(&s->z); /* another member follows */
            s->z_end = false;
        }
        s->z.next_out = s->zout;
        s->z.avail_out = INFLATE_OUT;
        int r = inflate(&s->z, Z_NO_FLUSH);
        size_t got = INFLATE_OUT - s->z.avail_out;
        if (got)
            content(s, (const char *)s->zout, got);
        if (r == Z_STREAM_END) {
            s->z_end = true;
            s->z_members++;
        } else if (r == Z_BUF_ERROR || (r == Z_OK && s->z.avail_out != 0)) {
            return; /* all input taken, all output given */
        } else if (r != Z_OK) {
            gz_error(s, r);
        }
    }
}

static void gz_feed_all(sieve_sitemap *s, const unsigned char *p, size_t n)
{
    while (n && !s->err && !s->z_trailing) {
        unsigned k = n > INFLATE_IN_MAX ? INFLATE_IN_MAX : (unsigned)n;
        gz_feed(s, p, k);
        p += k;
        n -= k;
    }
}

/* ---- public ---- */

void sieve_sitemap_global_init(void)
{
    sieve_links_global_init();
}

void sieve_sitemap_free(sieve_sitemap *s)
{
    if (!s)
        return;
    if (s->xml) {
        /* Entity declarations may have been kept in a stub document. */
        if (s->xml->myDoc)
            xmlFreeDoc(s->xml->myDoc);
        xmlFreeParserCtxt(s->xml);
    }
    if (s->z_ready)
        inflateEnd(&s->z);
    free(s->zout);
    free(s->stage);
    free(s->loc.buf);
    free(s);
}

int sieve_sitemap_new(sieve_sitemap **out, const sieve_sitemap_opts *opts, sieve_sitemap_fn fn,
                      void *ctx)
{
    if (!out)
        return SIEVE_EINVAL;
    *out = NULL;
    sieve_sitemap_opts o = opts ? *opts : (sieve_sitemap_opts){0};
    if (!fn || o.max_loc > SIEVE_SITEMAP_MAX_LOC_LIMIT)
        return SIEVE_EINVAL;
    xmlInitParser();
    sieve_sitemap *s = calloc(1, sizeof *s);
    if (!s)
        return SIEVE_ENOMEM;
    s->fn = fn;
    s->ctx = ctx;
    s->max_entries = o.max_entries ? o.max_entries : SIEVE_SITEMAP_MAX_ENTRIES;
    s->max_bytes = o.max_bytes ? o.max_bytes : SIEVE_SITEMAP_MAX_BYTES;
    s->max_pending = o.max_pending ? o.max_pending : SIEVE_SITEMAP_MAX_PENDING;
    s->loc.cap = o.max_loc ? o.max_loc : SIEVE_SITEMAP_MAX_LOC;
    s->loc.buf = malloc(s->loc.cap + 1);
    s->lastmod.cap = SIEVE_SITEMAP_MAX_LASTMOD;
    s->lastmod.buf = s->lastmod_buf;
    if (!s->loc.buf) {
        sieve_sitemap_free(s);
        return SIEVE_ENOMEM;
    }
    *out = s;
    return SIEVE_OK;
}

static void raw_gzip(sieve_sitemap *s)
{
    s->raw = RAW_GZIP;
    int st = gz_start(s);
    if (st != SIEVE_OK) {
        stop(s, st);
        return;
    }
    static const unsigned char magic1 = 0x1f;
    gz_feed(s, &magic1, 1);
}

int sieve_sitemap_feed(sieve_sitemap *s, const void *data, size_t len)
{
    if (!s || (!data && len))
        return SIEVE_EINVAL;
    if (s->finished)
        return SIEVE_ESTATE;
    if (s->err || len == 0)
        return s->err;
    s->st.bytes_in += len;
    const unsigned char *p = data;
    while (len && !s->err) {
        switch (s->raw) {
        case RAW_START:
            s->raw = p[0] == 0x1f ? RAW_MAGIC1 : RAW_PLAIN;
            if (s->raw == RAW_MAGIC1) {
                p++;
                len--;
            }
            break;
        case RAW_MAGIC1: /* the 1f waits for the byte after it */
            if (p[0] == 0x8b) {
                raw_gzip(s);
            } else {
                s->raw = RAW_PLAIN;
                content(s, "\x1f", 1);
            }
            break;
        case RAW_PLAIN:
            content(s, (const char *)p, len);
            len = 0;
            break;
        case RAW_GZIP:
            gz_feed_all(s, p, len);
            len = 0;
            break;
        }
    }
    return s->err;
}

int sieve_sitemap_finish(sieve_sitemap *s)
{
    if (!s)
        return SIEVE_EINVAL;
    if (s->finished || s->err) {
        s->finished = true;
        return s->err;
    }
    s->finished = true;
    if (s->raw == RAW_MAGIC1)
        content(s, "\x1f", 1);
    if (s->raw == RAW_GZIP && !s->z_end && !s->z_trailing) {
        s->err = SIEVE_ETRUNCATED;
        return s->err;
    }
    if (!s->err)
        content_finish(s);
    return s->err;
}

void sieve_sitemap_stats_get(const sieve_sitemap *s, sieve_sitemap_stats *st)
{
    *st = s->st;
}
