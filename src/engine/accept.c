/* accept.c - accept and reject lists.
 *
 * One entry is a suffix (".pdf", or "pdf") or, when it holds a '/', a
 * content type ("application/pdf", or "image/" and a '*' for a whole
 * type); all compared without regard to ASCII case. Suffixes decide before a URL is queued, so a
 * rejected file is never requested; types decide when a response's
 * headers are in, so its body is not downloaded.
 *
 * As in wget, accepting some kinds of files does not stop the crawl from
 * going through HTML to find them: a URL whose last segment has no suffix
 * or an HTML one, and a response that is HTML, always pass the accept
 * list (never the reject list). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "accept.h"
#include "sieve/status.h"

typedef struct list {
    char **item;
    size_t n;
} list;

struct accept_rules {
    list acc_suffix, acc_type, rej_suffix, rej_type;
};

/* Suffixes of pages that may carry links, and so are fetched whatever the
 * accept list says. */
static const char *const html_suffixes[] = {".html", ".htm",  ".xhtml", ".shtml", ".php",
                                            ".asp",  ".aspx", ".jsp",   ".cgi"};

static int add(list *l, const char *s, bool suffix)
{
    size_t len = strlen(s);
    char **grown = realloc(l->item, (l->n + 1) * sizeof *l->item);
    if (grown == NULL)
        return SIEVE_ENOMEM;
    l->item = grown;
    char *copy = malloc(len + 2);
    if (copy == NULL)
        return SIEVE_ENOMEM;
    /* "pdf" and ".pdf" mean the same suffix */
    snprintf(copy, len + 2, "%s%s", suffix && s[0] != '.' ? "." : "", s);
    l->item[l->n++] = copy;
    return SIEVE_OK;
}

static int add_all(accept_rules *a, const char *const *items, size_t n, bool reject,
                   const sieve_logger *lg)
{
    for (size_t i = 0; i < n; i++) {
        const char *s = items[i];
        if (s == NULL || s[0] == '\0' || strcmp(s, ".") == 0) {
            sieve_log(lg, SIEVE_LOG_ERROR, "%s: an empty suffix or content type",
                      reject ? "reject" : "accept");
            return SIEVE_EINVAL;
        }
        bool type = strchr(s, '/') != NULL;
        list *l = type ? (reject ? &a->rej_type : &a->acc_type)
                       : (reject ? &a->rej_suffix : &a->acc_suffix);
        int rc = add(l, s, !type);
        if (rc != SIEVE_OK)
            return rc;
    }
    return SIEVE_OK;
}

static void list_free(list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->item[i]);
    free(l->item);
}

void accept_free(accept_rules *a)
{
    if (a == NULL)
        return;
    list_free(&a->acc_suffix);
    list_free(&a->acc_type);
    list_free(&a->rej_suffix);
    list_free(&a->rej_type);
    free(a);
}

int accept_new(accept_rules **out, const sieve_crawl_options *o)
{
    *out = NULL;
    if (o->n_accept == 0 && o->n_reject == 0)
        return SIEVE_OK;
    accept_rules *a = calloc(1, sizeof *a);
    if (a == NULL)
        return SIEVE_ENOMEM;
    int rc = add_all(a, o->accept, o->n_accept, false, &o->logger);
    if (rc == SIEVE_OK)
        rc = add_all(a, o->reject, o->n_reject, true, &o->logger);
    if (rc != SIEVE_OK) {
        accept_free(a);
        return rc;
    }
    *out = a;
    return SIEVE_OK;
}

static bool ends_with(const char *s, size_t len, const char *suffix)
{
    size_t n = strlen(suffix);
    return n <= len && strncasecmp(s + len - n, suffix, n) == 0;
}

static bool any_suffix(char *const *items, size_t n, const char *s, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (ends_with(s, len, items[i]))
            return true;
    return false;
}

bool accept_url(const accept_rules *a, const char *url, size_t len)
{
    if (a == NULL)
        return true;
    /* the path: after "scheme://authority", before the query */
    const char *p = strstr(url, "://");
    p = p != NULL ? p + 3 : url;
    p += strcspn(p, "/?");
    size_t plen = strcspn(p, "?#");
    if (p + plen > url + len)
        plen = (size_t)(url + len - p);
    if (any_suffix(a->rej_suffix.item, a->rej_suffix.n, p, plen))
        return false;
    if (a->acc_suffix.n == 0 || any_suffix(a->acc_suffix.item, a->acc_suffix.n, p, plen))
        return true;
    const char *last = p;
    for (const char *q = p; q < p + plen; q++)
        if (*q == '/')
            last = q + 1;
    size_t last_len = (size_t)(p + plen - last);
    if (memchr(last, '.', last_len) == NULL)
        return true;
    for (size_t i = 0; i < sizeof html_suffixes / sizeof *html_suffixes; i++)
        if (ends_with(last, last_len, html_suffixes[i]))
            return true;
    return false;
}

/* Whether the media type mt (len bytes) matches pattern: "type/subtype"
 * exactly or "type/" followed by '*'. */
static bool type_matches(const char *pattern, const char *mt, size_t len)
{
    size_t n = strlen(pattern);
    if (n >= 2 && pattern[n - 1] == '*' && pattern[n - 2] == '/')
        return len >= n - 1 && strncasecmp(mt, pattern, n - 1) == 0;
    return len == n && strncasecmp(mt, pattern, n) == 0;
}

static bool any_type(char *const *items, size_t n, const char *mt, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (type_matches(items[i], mt, len))
            return true;
    return false;
}

bool accept_type(const accept_rules *a, const char *ct)
{
    if (a == NULL || ct == NULL)
        return true;
    while (*ct == ' ' || *ct == '\t')
        ct++;
    size_t len = strcspn(ct, "; \t");
    if (any_type(a->rej_type.item, a->rej_type.n, ct, len))
        return false;
    if (a->acc_type.n == 0 || any_type(a->acc_type.item, a->acc_type.n, ct, len))
        return true;
    return type_matches("text/html", ct, len) || type_matches("application/xhtml+xml", ct, len);
}
