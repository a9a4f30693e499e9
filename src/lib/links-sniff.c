/* links-sniff.c - the charset a page declares in its first bytes, found
 * as browsers find it.
 *
 * The HTML standard decides a page's encoding before its parser reads a
 * byte ("determining the character encoding", section 13.2.3.2 of
 * https://html.spec.whatwg.org/): a byte order mark first, then the
 * Content-Type's charset, then a prescan of the first 1024 bytes for a
 * <meta charset> or a <meta http-equiv=content-type>, skipping comments
 * and the attributes of other tags. The label found is read with the
 * Encoding Standard's table (links-charset.c).
 *
 * libxml2 2.9 switches its converter itself when its parser meets such a
 * <meta>, anywhere in the page, by iconv's reading of the label: a page
 * that says gb2312 got iconv's GB2312, which stops at the first GBK
 * character, and the page's later links were lost without a word. So
 * the extractor decides here, once, and libxml2 is told to ignore what
 * the page says (HTML_PARSE_IGNORE_ENC). A <meta> past the first 1024
 * bytes is ignored, as the standard's prescan ignores it (browsers may
 * reparse the page for it; a crawler reads the page once). */
#include <stdbool.h>
#include <string.h>

#include "links-internal.h"

const char *lx_sniff_bom(const unsigned char *p, size_t len, size_t *bom_len)
{
    *bom_len = 0;
    if (len >= 3 && p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf)
        *bom_len = 3;
    else if (len >= 2 && p[0] == 0xfe && p[1] == 0xff)
        *bom_len = 2;
    else if (len >= 2 && p[0] == 0xff && p[1] == 0xfe)
        *bom_len = 2;
    return *bom_len == 3 ? "UTF-8" : *bom_len == 0 ? NULL : p[0] == 0xfe ? "UTF-16BE" : "UTF-16LE";
}

bool lx_sniff_bom_possible(const unsigned char *p, size_t len)
{
    static const unsigned char boms[3][3] = {{0xef, 0xbb, 0xbf}, {0xfe, 0xff}, {0xff, 0xfe}};
    static const size_t bom_len[3] = {3, 2, 2};
    for (int b = 0; b < 3; b++)
        if (len < bom_len[b] && memcmp(p, boms[b], len) == 0)
            return true;
    return false;
}

/* ---- the prescan ---- */

/* The prescan's reading position; it fails as soon as it would pass the
 * end of the bytes it has. */
struct scan {
    const unsigned char *p;
    size_t len, at;
};

/* An attribute: name and value, lower-cased, cut at VALUE_MAX bytes. */
#define VALUE_MAX 128
struct attr {
    char name[VALUE_MAX], value[VALUE_MAX];
    size_t name_len, value_len;
};

static bool is_space(unsigned char c)
{
    return c == 0x09 || c == 0x0a || c == 0x0c || c == 0x0d || c == 0x20;
}

static unsigned char lower(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 0x20) : c;
}

static void put(char *s, size_t *n, unsigned char c)
{
    if (*n < VALUE_MAX - 1)
        s[(*n)++] = (char)lower(c);
}

static bool starts(const struct scan *s, const char *lit)
{
    size_t n = strlen(lit);
    if (s->len - s->at < n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (lower(s->p[s->at + i]) != (unsigned char)lit[i])
            return false;
    return true;
}

/* Skips to the first byte c at or after the position; false at the end. */
static bool skip_to(struct scan *s, unsigned char c)
{
    const unsigned char *q = memchr(s->p + s->at, c, s->len - s->at);
    if (!q)
        return false;
    s->at = (size_t)(q - s->p);
    return true;
}

/* "Get an attribute": 1 with one read, 0 at the tag's '>', -1 at the end
 * of the bytes. */
static int get_attr(struct scan *s, struct attr *a)
{
    a->name_len = a->value_len = 0;
    while (s->at < s->len && (is_space(s->p[s->at]) || s->p[s->at] == '/'))
        s->at++;
    if (s->at >= s->len)
        return -1;
    if (s->p[s->at] == '>')
        return 0;
    /* the name */
    for (;; s->at++) {
        if (s->at >= s->len)
            return -1;
        unsigned char c = s->p[s->at];
        if (c == '=' && a->name_len > 0)
            break;
        if (is_space(c)) {
            while (s->at < s->len && is_space(s->p[s->at]))
                s->at++;
            if (s->at >= s->len)
                return -1;
            if (s->p[s->at] != '=')
                return 1;
            break;
        }
        if (c == '/' || c == '>')
            return 1;
        put(a->name, &a->name_len, c);
    }
    s->at++; /* the '=' */
    while (s->at < s->len && is_space(s->p[s->at]))
        s->at++;
    if (s->at >= s->len)
        return -1;
    /* the value */
    unsigned char q = s->p[s->at];
    if (q == '"' || q == '\'') {
        for (s->at++; s->at < s->len; s->at++) {
            if (s->p[s->at] == q) {
                s->at++;
                return 1;
            }
            put(a->value, &a->value_len, s->p[s->at]);
        }
        return -1;
    }
    if (q == '>')
        return 1;
    for (; s->at < s->len; s->at++) {
        if (is_space(s->p[s->at]) || s->p[s->at] == '>')
            return 1;
        put(a->value, &a->value_len, s->p[s->at]);
    }
    return -1;
}

/* The charset label in a Content-Type value ("extracting a character
 * encoding from a meta element"), into label; false for none. */
static bool content_charset(const char *v, size_t n, char *label, size_t cap)
{
    size_t i = 0;
    for (;;) {
        const char *c = NULL;
        for (; i + 7 <= n; i++)
            if (memcmp(v + i, "charset", 7) == 0) {
                c = v + i;
                break;
            }
        if (!c)
            return false;
        i += 7;
        while (i < n && is_space((unsigned char)v[i]))
            i++;
        if (i < n && v[i] == '=')
            break;
    }
    i++;
    while (i < n && is_space((unsigned char)v[i]))
        i++;
    size_t start = i, end;
    if (i < n && (v[i] == '"' || v[i] == '\'')) {
        const char *close = memchr(v + i + 1, v[i], n - i - 1);
        if (!close)
            return false;
        start = i + 1;
        end = (size_t)(close - v);
    } else {
        end = start;
        while (end < n && !is_space((unsigned char)v[end]) && v[end] != ';')
            end++;
    }
    if (end == start || end - start >= cap)
        return false;
    memcpy(label, v + start, end - start);
    label[end - start] = '\0';
    return true;
}

/* A label's converter as the prescan reads it: x-user-defined, which
 * links-charset.c gives none, is windows-1252 here. */
static const char *prescan_conv(const char *label)
{
    while (is_space((unsigned char)*label))
        label++;
    size_t n = strlen(label);
    while (n > 0 && is_space((unsigned char)label[n - 1]))
        n--;
    if (n == 14 && memcmp(label, "x-user-defined", 14) == 0)
        return "WINDOWS-1252";
    return lx_charset_conv(label);
}

/* What a <meta> whose name the position is past declares: its converter,
 * NULL for nothing usable; *end set when the bytes ran out first. */
static const char *meta_charset(struct scan *s, bool *end)
{
    enum { NAMES_MAX = 64 };
    struct attr a;
    char seen[NAMES_MAX][VALUE_MAX];
    size_t n_seen = 0;
    bool got_pragma = false;
    int need_pragma = -1; /* unset, false, true */
    const char *conv = NULL;
    bool have_charset = false;
    int r;
    while ((r = get_attr(s, &a)) == 1) {
        a.name[a.name_len] = a.value[a.value_len] = '\0';
        bool dup = false;
        for (size_t i = 0; i < n_seen && !dup; i++)
            dup = strcmp(seen[i], a.name) == 0;
        if (dup)
            continue;
        if (n_seen < NAMES_MAX)
            memcpy(seen[n_seen++], a.name, a.name_len + 1);
        if (strcmp(a.name, "http-equiv") == 0) {
            got_pragma = got_pragma || strcmp(a.value, "content-type") == 0;
        } else if (strcmp(a.name, "content") == 0) {
            char label[VALUE_MAX];
            const char *c = NULL;
            if (!have_charset && content_charset(a.value, a.value_len, label, sizeof label))
                c = prescan_conv(label);
            if (c) {
                conv = c;
                have_charset = true;
                need_pragma = 1;
            }
        } else if (strcmp(a.name, "charset") == 0) {
            conv = prescan_conv(a.value);
            have_charset = true;
            need_pragma = 0;
        }
    }
    if (r < 0) {
        *end = true;
        return NULL;
    }
    if (need_pragma < 0 || (need_pragma == 1 && !got_pragma) || !conv)
        return NULL;
    /* A page whose bytes were read as ASCII to find the label is no
     * UTF-16 page, whatever it says. */
    if (strncmp(conv, "UTF-16", 6) == 0)
        return "UTF-8";
    return conv;
}

const char *lx_sniff_meta(const unsigned char *p, size_t len)
{
    struct scan s = {.p = p, .len = len > LX_SNIFF_MAX ? LX_SNIFF_MAX : len};
    while (s.at < s.len) {
        if (s.p[s.at] != '<') {
            if (!skip_to(&s, '<'))
                return NULL;
            continue;
        }
        if (starts(&s, "<!--")) {
            /* ends at the first "-->", whose dashes may be the opening ones */
            for (s.at += 2;; s.at++) {
                if (!skip_to(&s, '>'))
                    return NULL;
                if (s.p[s.at - 1] == '-' && s.p[s.at - 2] == '-')
                    break;
            }
            s.at++;
        } else if (starts(&s, "<meta") && s.at + 5 < s.len &&
                   (is_space(s.p[s.at + 5]) || s.p[s.at + 5] == '/')) {
            s.at += 6;
            bool end = false;
            const char *conv = meta_charset(&s, &end);
            if (conv)
                return conv;
            if (end)
                return NULL;
            s.at = s.at < s.len ? s.at + 1 : s.at;
        } else if (s.at + 1 < s.len &&
                   (((s.p[s.at + 1] | 0x20) >= 'a' && (s.p[s.at + 1] | 0x20) <= 'z') ||
                    (s.p[s.at + 1] == '/' && s.at + 2 < s.len && (s.p[s.at + 2] | 0x20) >= 'a' &&
                     (s.p[s.at + 2] | 0x20) <= 'z'))) {
            /* another tag: its name, then its attributes, unread */
            while (s.at < s.len && !is_space(s.p[s.at]) && s.p[s.at] != '>')
                s.at++;
            struct attr a;
            int r;
            while ((r = get_attr(&s, &a)) == 1)
                ;
            if (r < 0)
                return NULL;
            s.at++;
        } else if (starts(&s, "<!") || starts(&s, "</") || starts(&s, "<?")) {
            if (!skip_to(&s, '>'))
                return NULL;
            s.at++;
        } else {
            s.at++;
        }
    }
    return NULL;
}
