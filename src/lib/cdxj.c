/* cdxj.c - the CDXJ index of WARC files, as pywb replays from it.
 *
 * One line per indexed record: a SURT key, the 14-digit timestamp, and a
 * JSON object of url, mime, status, digest, length, offset and filename.
 * The lines are those warcio's `cdx-index` prints (the Webrecorder
 * project's JavaScript warcio, whose indexer pywb's tools share), field
 * for field: the same records indexed, the same key, the same JSON
 * (numbers as strings, JSON.stringify's escapes); then sorted bytewise,
 * as pywb wants its indexes.
 *
 * The key is warcio's getSurt(), which is not the Internet Archive's full
 * SURT canonicalization: drop "www." (or www2. ...) right after the scheme
 * (case-sensitively, before anything else), lower-case the whole URL,
 * parse it as a WHATWG URL, and write the host's labels reversed and
 * joined by ',', ':port' when it is not the scheme's default, ')', the
 * path and, when there is a query, '?' and its '&'-separated parameters
 * sorted. The WHATWG parse does what matters for keys: it drops userinfo
 * and fragment, resolves dot segments, treats '\' as '/', and
 * percent-encodes the bytes the path and query percent-encode sets name.
 * A URL it cannot parse (or one not starting with "http:" or "https:")
 * is its own key. What the WHATWG parser does beyond that - IDNA, IPv4
 * numbers in other bases - is not reproduced: crawled URLs come
 * canonicalized by curl, which has already done it.
 *
 * The lines are sorted once all files are read (so a file that cannot
 * be read leaves nothing written), in bounded memory: an index past
 * CDXJ_SORT_BUDGET is sorted in runs on disk and merged (cdxj-sort.c). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cdxj-sort.h"
#include "warc-internal.h"

/* Most of an HTTP head read from a record for its status and type. */
#define HTTP_HEAD_MAX (64 * 1024)

/* ---- SURT ---- */

/* The WHATWG path percent-encode set, for bytes of a special URL's path. */
static bool path_escape(unsigned char c)
{
    return c < 0x21 || c > 0x7e || c == '"' || c == '#' || c == '<' || c == '>' || c == '?' ||
           c == '`' || c == '{' || c == '}';
}

/* The special-query percent-encode set. */
static bool query_escape(unsigned char c)
{
    return c < 0x21 || c > 0x7e || c == '"' || c == '#' || c == '<' || c == '>' || c == '\'';
}

static int add_escaped(warc_buf *b, const char *s, size_t n, bool (*escape)(unsigned char))
{
    static const char hex[] = "0123456789ABCDEF";
    int rc = SIEVE_OK;
    for (size_t i = 0; i < n && !rc; i++) {
        unsigned char c = (unsigned char)s[i];
        if (escape(c)) {
            char e[3] = {'%', hex[c >> 4], hex[c & 15]};
            rc = warc_buf_add(b, e, 3);
        } else {
            rc = warc_buf_add(b, &s[i], 1);
        }
    }
    return rc;
}

/* "." and "..", also percent-encoded (already lower-cased). */
static bool is_dot(const char *s, size_t n)
{
    return (n == 1 && s[0] == '.') || (n == 3 && memcmp(s, "%2e", 3) == 0);
}

static bool is_dotdot(const char *s, size_t n)
{
    return (n == 2 && memcmp(s, "..", 2) == 0) ||
           (n == 4 && (memcmp(s, ".%2e", 4) == 0 || memcmp(s, "%2e.", 4) == 0)) ||
           (n == 6 && memcmp(s, "%2e%2e", 6) == 0);
}

/* The WHATWG path of a special URL: segments split at '/' or '\', dot
 * segments resolved, each segment percent-encoded. */
static int add_path(warc_buf *b, const char *p, size_t n)
{
    /* Segment starts in b, to pop on "..". */
    size_t *starts = malloc((n + 2) * sizeof *starts);
    if (!starts)
        return SIEVE_ENOMEM;
    size_t depth = 0, base = b->len, i = 0;
    int rc = SIEVE_OK;
    if (n && (p[0] == '/' || p[0] == '\\'))
        i = 1;
    while (!rc) {
        size_t j = i;
        while (j < n && p[j] != '/' && p[j] != '\\')
            j++;
        bool last = j >= n;
        if (is_dotdot(p + i, j - i)) {
            if (depth)
                b->len = starts[--depth];
            if (last) {
                starts[depth++] = b->len;
                rc = warc_buf_add(b, "/", 1);
            }
        } else if (is_dot(p + i, j - i)) {
            if (last) {
                starts[depth++] = b->len;
                rc = warc_buf_add(b, "/", 1);
            }
        } else {
            starts[depth++] = b->len;
            rc = warc_buf_add(b, "/", 1);
            if (!rc)
                rc = add_escaped(b, p + i, j - i, path_escape);
        }
        if (last)
            break;
        i = j + 1;
    }
    free(starts);
    if (!rc && b->len == base)
        rc = warc_buf_add(b, "/", 1);
    b->data[b->len] = '\0';
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* '?' and the query's '&'-separated parts, percent-encoded, sorted. */
static int add_query(warc_buf *b, const char *q, size_t n)
{
    warc_buf enc = {0};
    int rc = add_escaped(&enc, q, n, query_escape);
    size_t parts = 1;
    for (size_t i = 0; !rc && i < enc.len; i++)
        parts += enc.data[i] == '&';
    char **v = rc ? NULL : malloc(parts * sizeof *v);
    if (!rc && !v)
        rc = SIEVE_ENOMEM;
    if (!rc) {
        size_t k = 0;
        char *s = enc.data;
        v[k++] = s;
        for (char *amp; (amp = strchr(s, '&')); s = amp + 1) {
            *amp = '\0';
            v[k++] = amp + 1;
        }
        qsort(v, parts, sizeof *v, cmp_str);
        rc = warc_buf_add(b, "?", 1);
        for (size_t i = 0; i < parts && !rc; i++)
            rc = warc_buf_addf(b, "%s%s", i ? "&" : "", v[i]);
    }
    free(v);
    warc_buf_free(&enc);
    return rc;
}

/* Host labels reversed and joined by ',', then ":port" unless default. */
static int add_host(warc_buf *b, const char *h, size_t n, const char *port, size_t port_len,
                    bool https)
{
    int rc = SIEVE_OK;
    size_t end = n;
    for (size_t i = n; i-- > 0 && !rc;) {
        if (h[i] != '.')
            continue;
        rc = warc_buf_add(b, h + i + 1, end - i - 1);
        if (!rc)
            rc = warc_buf_add(b, ",", 1);
        end = i;
    }
    if (!rc)
        rc = warc_buf_add(b, h, end);
    /* The port as a number: leading zeros go, the default goes. */
    while (port_len > 1 && port[0] == '0') {
        port++;
        port_len--;
    }
    bool dflt = port_len == 0 || (port_len == 2 && !https && memcmp(port, "80", 2) == 0) ||
                (port_len == 3 && https && memcmp(port, "443", 3) == 0);
    if (!rc && !dflt) {
        rc = warc_buf_add(b, ":", 1);
        if (!rc)
            rc = warc_buf_add(b, port, port_len);
    }
    return rc;
}

/* Splits "host[:port]" (IPv6 in brackets); false when it is no host. */
static bool split_host(const char *a, size_t n, size_t *host_len, const char **port,
                       size_t *port_len)
{
    const char *colon = NULL;
    if (n && a[0] == '[') {
        const char *close = memchr(a, ']', n);
        if (!close)
            return false;
        if ((size_t)(close - a) + 1 < n) {
            if (close[1] != ':')
                return false;
            colon = close + 1;
        }
    } else {
        colon = memchr(a, ':', n);
    }
    *host_len = colon ? (size_t)(colon - a) : n;
    *port = colon ? colon + 1 : a + n;
    *port_len = colon ? n - *host_len - 1 : 0;
    if (*host_len == 0 || *port_len > 5)
        return false;
    unsigned long v = 0;
    for (size_t i = 0; i < *port_len; i++) {
        if (!isdigit((unsigned char)(*port)[i]))
            return false;
        v = v * 10 + (unsigned long)((*port)[i] - '0');
    }
    if (v > 65535)
        return false;
    for (size_t i = 0; i < *host_len; i++) {
        unsigned char c = (unsigned char)a[i];
        /* WHATWG's forbidden host code points, those that can remain here. */
        if (c <= ' ' || c == '<' || c == '>' || c == '^' || c == '|' || c == '%' || c == 0x7f)
            return false;
    }
    return true;
}

/* The key of a lower-cased http(s) URL, or false when it does not parse. */
static bool surt_of(const char *u, warc_buf *b)
{
    bool https = strncmp(u, "https:", 6) == 0;
    const char *p = u + (https ? 6 : 5);
    while (*p == '/' || *p == '\\')
        p++;
    size_t alen = strcspn(p, "/\\?#");
    const char *auth = p, *rest = p + alen;
    const char *at = NULL;
    for (size_t i = 0; i < alen; i++)
        if (auth[i] == '@')
            at = auth + i;
    if (at) {
        alen -= (size_t)(at + 1 - auth);
        auth = at + 1;
    }
    size_t host_len, port_len;
    const char *port;
    if (!split_host(auth, alen, &host_len, &port, &port_len))
        return false;
    size_t path_len = strcspn(rest, "?#");
    const char *q = rest + path_len;
    int rc = add_host(b, auth, host_len, port, port_len, https);
    if (!rc)
        rc = warc_buf_add(b, ")", 1);
    if (!rc)
        rc = add_path(b, rest, path_len);
    if (!rc && *q == '?' && q[1] && q[1] != '#')
        rc = add_query(b, q + 1, strcspn(q + 1, "#"));
    return rc == SIEVE_OK;
}

char *warc_surt(const char *url)
{
    if (strncmp(url, "https:", 6) != 0 && strncmp(url, "http:", 5) != 0)
        return strdup(url);
    /* warcio drops "www" before it lower-cases, so "WWW." stays. */
    warc_buf n = {0};
    const char *after = strstr(url, "://");
    size_t scheme = after ? (size_t)(after - url) + 3 : 0;
    size_t skip = 0;
    if (after && (scheme == 7 || scheme == 8) && strncmp(url + scheme, "www", 3) == 0) {
        size_t i = scheme + 3;
        while (isdigit((unsigned char)url[i]))
            i++;
        if (url[i] == '.')
            skip = i + 1 - scheme;
    }
    if (warc_buf_add(&n, url, scheme) ||
        warc_buf_add(&n, url + scheme + skip, strlen(url + scheme + skip)))
        return NULL;
    /* WHATWG drops tabs and newlines anywhere, and blanks at the ends. */
    warc_buf lower = {0};
    size_t start = 0, end = n.len;
    while (start < end && (unsigned char)n.data[start] <= ' ')
        start++;
    while (end > start && (unsigned char)n.data[end - 1] <= ' ')
        end--;
    int rc = warc_buf_add(&lower, "", 0);
    for (size_t i = start; i < end && !rc; i++) {
        char c = n.data[i];
        if (c == '\t' || c == '\n' || c == '\r')
            continue;
        c = (char)tolower((unsigned char)c);
        rc = warc_buf_add(&lower, &c, 1);
    }
    warc_buf key = {0};
    char *out = NULL;
    if (!rc && surt_of(lower.data, &key)) {
        out = key.data;
    } else {
        warc_buf_free(&key);
        if (!rc) {
            out = n.data; /* unparsable: the URL is its own key */
            n.data = NULL;
        }
    }
    warc_buf_free(&n);
    warc_buf_free(&lower);
    return out;
}

/* ---- index lines ---- */

/* JSON.stringify's escaping of a string. */
static int add_json_string(warc_buf *b, const char *s)
{
    int rc = warc_buf_add(b, "\"", 1);
    for (; *s && !rc; s++) {
        unsigned char c = (unsigned char)*s;
        const char *e = NULL;
        switch (c) {
        case '"':
            e = "\\\"";
            break;
        case '\\':
            e = "\\\\";
            break;
        case '\b':
            e = "\\b";
            break;
        case '\f':
            e = "\\f";
            break;
        case '\n':
            e = "\\n";
            break;
        case '\r':
            e = "\\r";
            break;
        case '\t':
            e = "\\t";
            break;
        }
        if (e)
            rc = warc_buf_add(b, e, strlen(e));
        else if (c < 0x20)
            rc = warc_buf_addf(b, "\\u%04x", c);
        else
            rc = warc_buf_add(b, s, 1);
    }
    if (!rc)
        rc = warc_buf_add(b, "\"", 1);
    return rc;
}

static int add_member(warc_buf *b, const char *name, const char *value)
{
    int rc = warc_buf_addf(b, "%s\"%s\":", b->data[b->len - 1] == '{' ? "" : ",", name);
    return rc ? rc : add_json_string(b, value);
}

/* The HTTP head at the start of a block, as much of it as comes. */
typedef struct head_capture {
    warc_buf head;
    bool failed;
} head_capture;

static bool capture(void *ctx, const void *data, size_t len)
{
    head_capture *c = ctx;
    size_t room = HTTP_HEAD_MAX - c->head.len;
    if (warc_buf_add(&c->head, data, len < room ? len : room)) {
        c->failed = true;
        return false;
    }
    return c->head.len < HTTP_HEAD_MAX && !strstr(c->head.data, "\r\n\r\n") &&
           !strstr(c->head.data, "\n\n");
}

/* The head's header lines: after the status line, up to the blank line.
 * A head with none ("HTTP/1.0 200 OK\n\n") has its blank line at the
 * status line's own end: no lines, not a length below zero. */
static const char *head_fields(const warc_buf *h, size_t *len)
{
    const char *nl = h->data ? memchr(h->data, '\n', h->len) : NULL;
    if (!nl) {
        *len = 0;
        return "";
    }
    const char *end = strstr(nl, "\r\n\r\n");
    const char *end2 = strstr(nl, "\n\n");
    if (!end || (end2 && end2 < end))
        end = end2;
    if (!end)
        end = h->data + h->len;
    *len = end > nl ? (size_t)(end - (nl + 1)) : 0;
    return nl + 1;
}

/* The status: the status line's second word, as a number. */
static bool http_status(const warc_buf *h, char out[16])
{
    if (!h->data)
        return false;
    const char *sp = memchr(h->data, ' ', h->len);
    if (!sp)
        return false;
    size_t n = 0;
    sp++;
    while (sp[n] >= '0' && sp[n] <= '9' && n < 9)
        n++;
    if (!n || (sp[n] != ' ' && sp[n] != '\r' && sp[n] != '\n'))
        return false;
    while (n > 1 && *sp == '0')
        sp++, n--;
    memcpy(out, sp, n);
    out[n] = '\0';
    return true;
}

/* The mime field: warcio's, by record type. */
static bool record_mime(const char *type, const warc_rec *rec, const warc_buf *http, warc_buf *mime)
{
    if (strcmp(type, "revisit") == 0) {
        mime->len = 0;
        return warc_buf_add(mime, "warc/revisit", 12) == SIEVE_OK;
    }
    if (strcmp(type, "response") != 0 && strcmp(type, "request") != 0)
        return warc_field(rec->header, rec->header_len, "Content-Type", mime);
    size_t flen;
    const char *fields = head_fields(http, &flen);
    if (!warc_field(fields, flen, "Content-Type", mime))
        return false;
    size_t cut = strcspn(mime->data, ";");
    while (cut && (mime->data[cut - 1] == ' ' || mime->data[cut - 1] == '\t'))
        cut--;
    mime->data[cut] = '\0';
    mime->len = cut;
    return true;
}

/* Whether warcio's cdx-index indexes a record of this type. */
static bool indexed(const char *type, const warc_rec *rec)
{
    if (strcmp(type, "request") == 0 || strcmp(type, "warcinfo") == 0)
        return false;
    if (strcmp(type, "metadata") != 0 && strcmp(type, "resource") != 0)
        return true;
    warc_buf ct = {0};
    bool fields = warc_field(rec->header, rec->header_len, "Content-Type", &ct) &&
                  strcmp(ct.data, "application/warc-fields") == 0;
    warc_buf_free(&ct);
    return !fields;
}

/* The 14-digit timestamp: WARC-Date without '-', ':' and 'T'. */
static void timestamp(const char *date, char ts[15])
{
    size_t k = 0;
    for (const char *d = date; *d && k < 14; d++)
        if (*d != '-' && *d != ':' && *d != 'T')
            ts[k++] = *d;
    ts[k] = '\0';
}

/* The JSON members after the URL, in warcio's order. */
static int add_members(warc_buf *line, const char *type, const warc_rec *rec, const warc_buf *http,
                       const char *filename)
{
    warc_buf mime = {0}, digest = {0};
    int rc = SIEVE_OK;
    if (record_mime(type, rec, http, &mime))
        rc = add_member(line, "mime", mime.data);
    char status[16];
    if (!rc && (strcmp(type, "response") == 0 || strcmp(type, "revisit") == 0) &&
        http_status(http, status))
        rc = add_member(line, "status", status);
    /* warcio keeps what lies between the first colon and the next. */
    if (!rc && warc_field(rec->header, rec->header_len, "WARC-Payload-Digest", &digest)) {
        char *v = strchr(digest.data, ':');
        if (v) {
            v[1 + strcspn(v + 1, ":")] = '\0';
            rc = add_member(line, "digest", v + 1);
        }
    }
    /* In a plain file the CRLF CRLF after a record is not counted (warcio
     * and pywb read it as the gap before the next one). */
    char num[24];
    snprintf(num, sizeof num, "%llu", (unsigned long long)(rec->length - (rec->gzip ? 0 : 4)));
    if (!rc)
        rc = add_member(line, "length", num);
    snprintf(num, sizeof num, "%llu", (unsigned long long)rec->offset);
    if (!rc)
        rc = add_member(line, "offset", num);
    if (!rc)
        rc = add_member(line, "filename", filename);
    if (!rc)
        rc = warc_buf_add(line, "}", 1);
    warc_buf_free(&mime);
    warc_buf_free(&digest);
    return rc;
}

/* The index line of one record, into line; *skip when it has none. */
static int index_line(const warc_rec *rec, const warc_buf *http, const char *filename,
                      warc_buf *line, bool *skip)
{
    warc_buf type = {0}, uri = {0}, date = {0};
    const char *h = rec->header;
    size_t hl = rec->header_len;
    *skip = !warc_field(h, hl, "WARC-Type", &type) || !indexed(type.data, rec) ||
            !warc_field(h, hl, "WARC-Target-URI", &uri);
    int rc = SIEVE_OK;
    if (!*skip) {
        /* warcio takes a WARC 1.0 style <URI> without its brackets. */
        char *u = uri.data;
        size_t ul = strlen(u);
        if (ul >= 2 && u[0] == '<' && u[ul - 1] == '>') {
            memmove(u, u + 1, ul - 2);
            u[ul - 2] = '\0';
        }
        char *key = warc_surt(u);
        char ts[15] = "";
        if (warc_field(h, hl, "WARC-Date", &date))
            timestamp(date.data, ts);
        line->len = 0;
        rc = key ? warc_buf_addf(line, "%s %s {", key, ts) : SIEVE_ENOMEM;
        free(key);
        if (!rc)
            rc = add_member(line, "url", u);
        if (!rc)
            rc = add_members(line, type.data, rec, http, filename);
    }
    warc_buf_free(&type);
    warc_buf_free(&uri);
    warc_buf_free(&date);
    return rc;
}

/* Indexes one file's records into the sorter. */
static int index_file(const char *path, cdxj_sort *l, const char *runs, const sieve_logger *lg)
{
    warc_reader *r;
    int rc = warc_reader_open(&r, path);
    if (rc) {
        sieve_log(lg, SIEVE_LOG_ERROR, "warc-index: cannot open %s: %s", path, strerror(errno));
        return rc;
    }
    const char *slash = strrchr(path, '/');
    const char *filename = slash ? slash + 1 : path;
    head_capture cap = {0};
    warc_buf line = {0};
    warc_rec rec;
    bool sorting = false; /* the sorter failed, not the archive */
    for (;;) {
        cap.head.len = 0;
        if (warc_buf_add(&cap.head, "", 0)) {
            rc = SIEVE_ENOMEM;
            break;
        }
        rc = warc_reader_next(r, &rec, capture, &cap);
        if (rc)
            break;
        bool skip;
        rc = cap.failed ? SIEVE_ENOMEM : index_line(&rec, &cap.head, filename, &line, &skip);
        if (rc)
            break;
        if (!skip && (rc = cdxj_sort_add(l, line.data)) != SIEVE_OK) {
            sorting = true;
            break;
        }
    }
    if (sorting && rc == SIEVE_EIO)
        sieve_log(lg, SIEVE_LOG_ERROR, "warc-index: cannot write a sort run in %s: %s", runs,
                  strerror(errno));
    else if (rc == SIEVE_EDRAINED)
        rc = SIEVE_OK;
    else if (rc == SIEVE_ETRUNCATED)
        sieve_log(lg, SIEVE_LOG_WARN, "warc-index: %s: torn record at offset %llu left out", path,
                  (unsigned long long)warc_reader_end(r));
    else if (rc == SIEVE_EFORMAT)
        sieve_log(lg, SIEVE_LOG_ERROR, "warc-index: %s: offset %llu: %s", path,
                  (unsigned long long)warc_reader_end(r), warc_reader_why(r));
    else
        sieve_log(lg, SIEVE_LOG_ERROR, "warc-index: %s: offset %llu: %s%s%s", path,
                  (unsigned long long)warc_reader_end(r), sieve_strerror(rc),
                  rc == SIEVE_EIO ? ": " : "", rc == SIEVE_EIO ? strerror(errno) : "");
    warc_reader_free(r);
    warc_buf_free(&cap.head);
    warc_buf_free(&line);
    return rc;
}

/* Where the sort's runs go: beside the first archive, where there is
 * room for the archive and so for its index, unless that directory
 * cannot be written (an archive read from a read-only mount). */
static char *runs_dir(const char *first)
{
    const char *slash = first ? strrchr(first, '/') : NULL;
    char *dir = slash ? strndup(first, slash == first ? 1 : (size_t)(slash - first)) : strdup(".");
    if (dir && access(dir, W_OK | X_OK) != 0) {
        free(dir);
        const char *tmp = getenv("TMPDIR");
        dir = strdup(tmp && *tmp ? tmp : "/tmp");
    }
    return dir;
}

int warc_index_sorted(const char *const *paths, size_t n, FILE *out, const sieve_logger *lg,
                      size_t budget, size_t fanin)
{
    if ((!paths && n) || !out)
        return SIEVE_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (!paths[i])
            return SIEVE_EINVAL;
    char *dir = runs_dir(n ? paths[0] : NULL);
    cdxj_sort *l = NULL;
    int rc = dir ? cdxj_sort_new(&l, budget, fanin, dir) : SIEVE_ENOMEM;
    int torn = SIEVE_OK;
    for (size_t i = 0; i < n && !rc; i++) {
        rc = index_file(paths[i], l, dir, lg);
        if (rc == SIEVE_ETRUNCATED)
            torn = rc, rc = SIEVE_OK;
    }
    if (!rc) {
        rc = cdxj_sort_write(l, out);
        if (!rc && fflush(out) != 0)
            rc = SIEVE_EIO;
        if (rc == SIEVE_EIO)
            sieve_log(lg, SIEVE_LOG_ERROR,
                      "warc-index: cannot write the index (or its sort runs in %s): %s", dir,
                      strerror(errno));
    }
    cdxj_sort_free(l);
    free(dir);
    return rc ? rc : torn;
}

int sieve_warc_index(const char *const *paths, size_t n, FILE *out, const sieve_logger *lg)
{
    return warc_index_sorted(paths, n, out, lg, CDXJ_SORT_BUDGET, CDXJ_SORT_FANIN);
}
