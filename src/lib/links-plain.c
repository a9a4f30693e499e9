/* links-plain.c - the markup the squeeze reads itself (links-squeeze.c,
 * "Squeezing markup"): text, tags, comments and script or style data,
 * each read as libxml2 2.9 reads it, and only where that reading is
 * certain ("plain"). Each scanner returns the construct's length,
 * NOT_PLAIN where libxml2 must read it itself, or NEED_MORE where the
 * bytes at hand cut it off. */
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "bytes.h"
#include "links-internal.h"

/* Length of the run at p of ASCII bytes other than '<'. */
static size_t ascii_run(const unsigned char *p, size_t len)
{
    size_t i = 0;
    for (; i + 16 <= len; i += 16) {
        bytes16 v = bytes16_load(p + i);
        if (bytes16_any((bytes16)((v == '<') | (v >= 0x80))))
            break;
    }
    while (i < len && p[i] != '<' && p[i] < 0x80)
        i++;
    return i;
}

/* Length of the UTF-8 sequence at p as libxml2's reader accepts it (no
 * overlong form, at most four bytes), or 0 for one it would take for a
 * sign of another charset, or that len cuts off. */
static size_t utf8_seq(const unsigned char *p, size_t len)
{
    static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
    unsigned c = p[0];
    size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
    if (c < 0xc0 || c >= 0xf8 || len < n)
        return 0;
    uint32_t v = c & (0x7fu >> n);
    for (size_t k = 1; k < n; k++) {
        if ((p[k] & 0xc0) != 0x80)
            return 0;
        v = v << 6 | (p[k] & 0x3fu);
    }
    return v >= least[n] ? n : 0;
}

/* Length of the text at s that libxml2 would only read as characters. */
size_t lx_text_run(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    for (;;) {
        i += ascii_run(p + i, len - i);
        if (i == len || p[i] == '<')
            return i;
        size_t n = utf8_seq(p + i, len - i);
        if (n == 0)
            return i;
        i += n;
    }
}

/* Length of the run at p of valid UTF-8, '<' included. */
static size_t utf8_run(const unsigned char *p, size_t len)
{
    size_t i = 0;
    for (;;) {
        for (; i + 16 <= len; i += 16)
            if (bytes16_any((bytes16)(bytes16_load(p + i) >= 0x80)))
                break;
        while (i < len && p[i] < 0x80)
            i++;
        if (i == len)
            return i;
        size_t n = utf8_seq(p + i, len - i);
        if (n == 0)
            return i;
        i += n;
    }
}

static bool name_is(const unsigned char *p, size_t n, const char *name)
{
    return strlen(name) == n && strncasecmp((const char *)p, name, n) == 0;
}

/* Asked of every tag: most are none of these, which the first letter
 * and the length tell without a string compare. */
enum lx_tag_kind lx_tag_kind(const unsigned char *p, size_t n)
{
    switch (p[0] | 0x20) {
    case 'a':
        return n == 1 || name_is(p, n, "area") ? KIND_LINK : KIND_OTHER;
    case 'f':
        return name_is(p, n, "frame") ? KIND_LINK : KIND_OTHER;
    case 'i':
        return name_is(p, n, "iframe") ? KIND_LINK : KIND_OTHER;
    case 'm':
        return name_is(p, n, "meta") ? KIND_META : KIND_OTHER;
    case 'b':
        return name_is(p, n, "base") ? KIND_WHOLE : KIND_OTHER;
    case 's':
        return name_is(p, n, "script") || name_is(p, n, "style") ? KIND_RAW : KIND_OTHER;
    default:
        return KIND_OTHER;
    }
}

/* Bare link tags. Reading the kept link attributes was then most of what
 * libxml2 still did on a dense page: their values a character at a time
 * (xmlNextChar, about 9% of a dense crawl's instructions), copied out,
 * and an attribute array built and freed for every tag. Yet a value of
 * ASCII graphic characters without '&' comes back from libxml2 exactly as
 * it was written: there is no reference to decode and nothing to convert
 * (blanks, controls and other bytes may come back as written too, the
 * tests find; they are left to libxml2 all the same). So a
 * plain link tag whose kept values are all such is handed to libxml2 bare
 * ("<a>", "<iframe />"), and its values wait in a queue
 * (lx_bare_push()) that on_start() reads from when libxml2 reports a link
 * tag without attributes: libxml2 reports start tags in the order it was
 * handed them, and every link tag the squeeze hands bare has its entry.
 * A bare link tag in the page itself comes when the queue is empty, as
 * the bytes libxml2 reads itself come after what it was handed; it has
 * no link, as before. A tag with any other kept value keeps its
 * attributes for libxml2 to read. */

/* Whether libxml2 would hand back the value's bytes as they are: no
 * character reference to decode, nothing it could read another way. */
static bool value_as_is(const unsigned char *v, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (v[k] <= 0x20 || v[k] >= 0x7f || v[k] == '&')
            return false;
    return true;
}

/* Reads the start tag at p ('<' and an ASCII letter) as htmlParseStartTag()
 * does, if it is plain, and writes to out what libxml2 is handed instead:
 * its length in *out_len. Returns the tag's length, NOT_PLAIN, or
 * NEED_MORE. *kind tells what its name makes it, *closed tells "/>", and
 * *tl holds a link tag's values. */
size_t lx_plain_start_tag(const unsigned char *p, size_t len, enum lx_tag_kind *kind, bool *closed,
                          char *out, size_t *out_len, struct lx_tag_links *tl)
{
    size_t i = 1;
    while (i < len && lx_name_char(p[i]))
        i++;
    if (i - 1 >= NAME_CUT)
        return NOT_PLAIN;
    *kind = lx_tag_kind(p + 1, i - 1);
    *closed = false;
    size_t o = i, attrs = 0, name_end = i;
    memcpy(out, p, i);
    *tl = (struct lx_tag_links){.bare = true};
    for (;;) {
        while (i < len && lx_is_blank(p[i]))
            i++;
        if (i == len)
            return NEED_MORE;
        if (p[i] == '>')
            break;
        if (p[i] == '/') {
            if (i + 1 == len)
                return NEED_MORE;
            if (p[i + 1] != '>')
                return NOT_PLAIN;
            *closed = true;
            i++;
            break;
        }
        if (!lx_name_start(p[i]) || ++attrs > PLAIN_ATTRS_MAX)
            return NOT_PLAIN;
        size_t a = i;
        while (i < len && lx_name_char(p[i]))
            i++;
        if (i == len)
            return NEED_MORE;
        if (i - a >= NAME_CUT)
            return NOT_PLAIN;
        size_t name_len = i - a, j = i;
        const unsigned char *value = NULL;
        size_t value_len = 0;
        while (j < len && lx_is_blank(p[j]))
            j++;
        if (j == len)
            return NEED_MORE;
        if (p[j] == '=') {
            for (j++; j < len && lx_is_blank(p[j]);)
                j++;
            if (j == len)
                return NEED_MORE;
            if (p[j] == '"' || p[j] == '\'') {
                const unsigned char *q = memchr(p + j + 1, p[j], len - j - 1);
                if (!q)
                    return len - j > CARRY_MAX ? NOT_PLAIN : NEED_MORE;
                size_t v = (size_t)(q - p) - j - 1;
                if (utf8_run(p + j + 1, v) != v)
                    return NOT_PLAIN;
                value = p + j + 1;
                value_len = v;
                j = (size_t)(q - p) + 1;
            } else {
                /* htmlParseHTMLAttribute() reads it up to a blank or '>'
                 * ("x/>" is the value "x/"); a quote in it would throw
                 * libxml2's look-ahead for the '>' out of step. */
                size_t v = j;
                while (j < len && !lx_is_blank(p[j]) && p[j] != '>' && p[j] != '"' && p[j] != '\'')
                    j++;
                if (j == len)
                    return len - v > CARRY_MAX ? NOT_PLAIN : NEED_MORE;
                if (j == v || p[j] == '"' || p[j] == '\'' || utf8_run(p + v, j - v) != j - v)
                    return NOT_PLAIN;
                value = p + v;
                value_len = j - v;
            }
        } else if (!lx_is_blank(p[i]) && p[i] != '>' && p[i] != '/') {
            return NOT_PLAIN;
        }
        int which = *kind != KIND_LINK                 ? -1
                    : name_is(p + a, name_len, "href") ? LX_BARE_HREF
                    : name_is(p + a, name_len, "src")  ? LX_BARE_SRC
                    : name_is(p + a, name_len, "rel")  ? LX_BARE_REL
                                                       : -1;
        if (which >= 0) {
            out[o++] = ' ';
            memcpy(out + o, p + a, j - a);
            o += j - a;
            if (value == NULL || !value_as_is(value, value_len))
                tl->bare = false;
            else if (tl->v[which] == NULL)
                tl->v[which] = value, tl->len[which] = value_len;
        }
        i = j;
    }
    if (*kind == KIND_WHOLE || *kind == KIND_META) {
        memcpy(out, p, i + 1);
        *out_len = i + 1;
        return i + 1;
    }
    if (*kind == KIND_LINK && tl->bare)
        o = name_end; /* its values go to on_start() another way */
    /* A blank before "/>", which a kept unquoted value would otherwise
     * take for its own. */
    if (*closed) {
        out[o++] = ' ';
        out[o++] = '/';
    }
    out[o++] = '>';
    *out_len = o;
    return i + 1;
}

/* Length of the plain end tag at p ("</", a name, blanks, '>'), its name's
 * length in *name_len; NOT_PLAIN or NEED_MORE. */
size_t lx_plain_end_tag(const unsigned char *p, size_t len, size_t *name_len)
{
    if (len < 3)
        return NEED_MORE;
    if (!lx_ascii_letter(p[2]))
        return NOT_PLAIN;
    size_t i = 3;
    while (i < len && lx_name_char(p[i]))
        i++;
    *name_len = i - 2;
    if (*name_len >= NAME_CUT)
        return NOT_PLAIN;
    while (i < len && lx_is_blank(p[i]))
        i++;
    if (i == len)
        return NEED_MORE;
    return p[i] == '>' ? i + 1 : NOT_PLAIN;
}

/* Length of the comment at p ("<!--") as htmlParseComment() reads it: up
 * to the first "-->" or "--!>" that starts after the "<!--"; 0 when the
 * len bytes do not hold its end. */
size_t lx_plain_comment_end(const unsigned char *p, size_t len)
{
    for (size_t i = 4; i + 3 <= len; i++) {
        const unsigned char *d = memchr(p + i, '-', len - i);
        if (!d || (size_t)(d - p) + 3 > len)
            break;
        i = (size_t)(d - p);
        if (p[i + 1] == '-' && p[i + 2] == '>')
            return i + 3;
        if (p[i + 1] == '-' && p[i + 2] == '!' && i + 3 < len && p[i + 3] == '>')
            return i + 4;
    }
    return 0;
}

/* The same, when the comment is plain; NOT_PLAIN or NEED_MORE. */
size_t lx_plain_comment(const unsigned char *p, size_t len)
{
    size_t n = lx_plain_comment_end(p, len);
    if (n == 0)
        return len > CARRY_MAX ? NOT_PLAIN : NEED_MORE;
    size_t body = n - 4 - (p[n - 2] == '!' ? 4 : 3);
    return utf8_run(p + 4, body) == body ? n : NOT_PLAIN;
}

/* Length of script or style data at p, up to where htmlParseScript() stops
 * for the element name of name_len bytes at name: "</" and the name, in any
 * case; NOT_PLAIN or NEED_MORE. */
static size_t plain_raw(const unsigned char *p, size_t len, const unsigned char *name,
                        size_t name_len)
{
    for (size_t i = 0;;) {
        const unsigned char *lt = memchr(p + i, '<', len - i);
        if (!lt)
            break;
        i = (size_t)(lt - p);
        if (i + 2 + name_len > len)
            break;
        if (p[i + 1] == '/' &&
            strncasecmp((const char *)p + i + 2, (const char *)name, name_len) == 0)
            return utf8_run(p, i) == i ? i : NOT_PLAIN;
        i++;
    }
    return len > CARRY_MAX ? NOT_PLAIN : NEED_MORE;
}

/* Script or style data at p and the end tag that ends it: returns the end
 * tag's length, the data's in *data; NOT_PLAIN or NEED_MORE. */
size_t lx_raw_to_end(const unsigned char *p, size_t len, const unsigned char *name, size_t name_len,
                     size_t *data)
{
    size_t d = plain_raw(p, len, name, name_len), end_len = 0;
    if (d == NOT_PLAIN || d == NEED_MORE)
        return d;
    size_t e = lx_plain_end_tag(p + d, len - d, &end_len);
    /* "</scriptx>" ends the data, but libxml2 reads on in the script. */
    if (e != NOT_PLAIN && e != NEED_MORE && end_len != name_len)
        return NOT_PLAIN;
    *data = d;
    return e;
}
