/* buf.c - a growable byte buffer for rendering responses.
 *
 * Renderers append many small pieces; checking each append for failure
 * would bury the page layout in error handling. Instead the buffer turns
 * sticky-failed on the first allocation failure (oom) and drops every later
 * append, and the renderer checks oom once when it is done. The buffer is
 * always NUL-terminated when it holds data, so text bodies can be used as C
 * strings as well. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "web.h"

void web_buf_init(struct web_buf *b)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->oom = 0;
}

void web_buf_free(struct web_buf *b)
{
    free(b->data);
    web_buf_init(b);
}

/* Makes room for n more bytes plus the terminating NUL. */
static int reserve(struct web_buf *b, size_t n)
{
    if (b->oom)
        return -1;
    if (n >= SIZE_MAX / 2 - b->len) {
        b->oom = 1;
        return -1;
    }
    size_t need = b->len + n + 1;
    if (need <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) {
        b->oom = 1;
        return -1;
    }
    b->data = p;
    b->cap = cap;
    return 0;
}

void web_buf_add(struct web_buf *b, const void *p, size_t n)
{
    if (reserve(b, n) != 0)
        return;
    memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void web_buf_puts(struct web_buf *b, const char *s)
{
    web_buf_add(b, s, strlen(s));
}

void web_buf_printf(struct web_buf *b, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->oom = 1;
        return;
    }
    if ((size_t)n < sizeof small) {
        web_buf_add(b, small, (size_t)n);
        return;
    }
    if (reserve(b, (size_t)n) != 0)
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void web_buf_puts_html(struct web_buf *b, const char *s)
{
    for (const char *p = s; *p; p++) {
        switch (*p) {
        case '&':
            web_buf_puts(b, "&amp;");
            break;
        case '<':
            web_buf_puts(b, "&lt;");
            break;
        case '>':
            web_buf_puts(b, "&gt;");
            break;
        case '"':
            web_buf_puts(b, "&quot;");
            break;
        default:
            web_buf_add(b, p, 1);
        }
    }
}
