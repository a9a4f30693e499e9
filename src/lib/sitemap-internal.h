/* sitemap-internal.h - what the sitemap parser's files share: its state
 * (struct sieve_sitemap) and the few functions one calls in the other.
 * sitemap.c holds the API, the gzip and format-detection layers, text
 * sitemaps and the delivery of entries; sitemap-xml.c the XML layer,
 * libxml2's callbacks and the bounds on libxml2's work. */
#ifndef SIEVE_SITEMAP_INTERNAL_H
#define SIEVE_SITEMAP_INTERNAL_H

#include <libxml/parser.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

#include "sieve/sitemap.h"

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
    char *stage; /* a piece of the XML stream (sitemap-xml.c) */
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

/* sitemap.c: ends the parse with err (the first error wins). */
void sm_stop(sieve_sitemap *s, int err);
/* sitemap.c: a location or lastmod collected (see "A location" there). */
void sm_text_reset(struct text *t);
void sm_text_add(struct text *t, const char *p, size_t n);
/* sitemap.c: one entry ends: delivered, or counted why not. lastmod may
 * be NULL. */
void sm_emit(sieve_sitemap *s, struct text *lastmod);

/* sitemap-xml.c: makes the push parser; SIEVE_OK or SIEVE_ENOMEM. */
int sm_xml_start(sieve_sitemap *s);
/* sitemap-xml.c: hands n bytes to libxml2 within its bounds; the last
 * call ends the document if terminate is set. */
void sm_xml_hand(sieve_sitemap *s, const char *p, size_t n, int terminate);
/* sitemap-xml.c: the stream in PIECE-byte pieces; the bytes consumed. */
size_t sm_xml_push(sieve_sitemap *s, const char *p, size_t n);

#endif
