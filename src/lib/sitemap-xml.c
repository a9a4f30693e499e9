/* sitemap-xml.c - XML sitemaps, through libxml2's push parser with SAX.
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
 * feeds are smaller: whatever the feeds, libxml2 sees the same calls. */
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/tree.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sieve/status.h"
#include "sitemap-internal.h"

/* libxml2 is always fed pieces of exactly this many bytes (the last one
 * of a document excepted). */
#define PIECE (16 * 1024)

/* Deepest nesting of elements read: libxml2's own limit for documents it
 * builds a tree of (xmlParserMaxDepth), which a SAX-only push parse does
 * not check. */
#define MAX_DEPTH 256

/* Most namespace prefixes in scope at once. */
#define MAX_NAMESPACES 256

/* Most '|' a DOCTYPE libxml2 holds may have: libxml2 checks each value of
 * an enumerated attribute type against all the earlier ones. */
#define MAX_DTD_CHOICES 1024

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
        sm_stop(s, SIEVE_EFORMAT);
    }
}

/* See "Bounded cost" below. Attribute defaults from a DOCTYPE would be
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
        sm_stop(s, SIEVE_ETOOLONG);
        return;
    }
    const char *name = local_name(localname);
    s->depth++;
    if (s->depth == 1) {
        on_root(s, name);
    } else if (s->depth == 2 && strcmp(name, s->child) == 0) {
        s->in_entry = true;
        s->have_loc = s->have_lastmod = false;
        sm_text_reset(&s->loc);
        sm_text_reset(&s->lastmod);
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
            sm_text_reset(&s->loc);
        sm_emit(s, s->have_lastmod ? &s->lastmod : NULL);
    }
    s->depth--;
}

static void on_chars(void *ud, const xmlChar *ch, int len)
{
    sieve_sitemap *s = ud;
    forgive(s);
    if (s->err || s->capture == CAP_NONE || s->depth != 3 || len <= 0)
        return;
    sm_text_add(s->capture == CAP_LOC ? &s->loc : &s->lastmod, (const char *)ch, (size_t)len);
}

/* Broken sitemaps are common: errors are noted, never printed. */
static void on_error(void *ud, xmlErrorPtr err)
{
    sieve_sitemap *s = ud;
    if (!err || err->level >= XML_ERR_ERROR)
        s->st.malformed = true;
}

int sm_xml_start(sieve_sitemap *s)
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
        sm_stop(s, SIEVE_EFORMAT);
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
            sm_stop(s, SIEVE_ETOOLONG);
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
        sm_stop(s, SIEVE_ENOMEM);
        return;
    }
    forgive(s);
    /* libxml2 holds a start tag until its '>': bound what it holds. */
    const xmlParserInput *in = c->input;
    size_t pending = in && in->cur ? (size_t)(in->end - in->cur) : 0;
    if (!terminate && pending > s->max_pending)
        sm_stop(s, SIEVE_ETOOLONG);
    else if (!s->err)
        count_held(s);
}

/* Hands n bytes to libxml2 in as few calls as keep the attributes it can
 * read in one within SIEVE_SITEMAP_MAX_ATTRS (see "Bounded cost"); the
 * last call ends the document if terminate is set. */
void sm_xml_hand(sieve_sitemap *s, const char *p, size_t n, int terminate)
{
    const unsigned char *u = (const unsigned char *)p;
    do {
        size_t room =
            s->held_attrs < SIEVE_SITEMAP_MAX_ATTRS ? SIEVE_SITEMAP_MAX_ATTRS - s->held_attrs : 0;
        size_t k;
        count_eq(u, n, room, &k);
        if (k == 0 && n) {
            sm_stop(s, SIEVE_ETOOLONG);
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
size_t sm_xml_push(sieve_sitemap *s, const char *p, size_t n)
{
    size_t done = 0;
    while (done < n && !s->err) {
        if (s->xml->instate == XML_PARSER_EOF)
            return n;
        if (s->stage_len == 0 && n - done >= PIECE) {
            sm_xml_hand(s, p + done, PIECE, 0);
            done += PIECE;
            continue;
        }
        size_t k = PIECE - s->stage_len < n - done ? PIECE - s->stage_len : n - done;
        memcpy(s->stage + s->stage_len, p + done, k);
        s->stage_len += k;
        done += k;
        if (s->stage_len == PIECE) {
            s->stage_len = 0;
            sm_xml_hand(s, s->stage, PIECE, 0);
        }
    }
    return done;
}
