/* record.c - the crawl's output: JSON Lines, one object per fetched URL.
 *
 * Each worker formats its line into a local buffer, then appends it under
 * the writer's lock, so lines never interleave and the lock is held only
 * for a copy. Strings are escaped to plain ASCII JSON: a server's
 * Content-Type or an error text may hold any byte, and a consumer should
 * never meet invalid JSON or invalid UTF-8. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"

struct record_writer {
    FILE *fp;
    int own;
    int failed;
    int saved_errno;
    pthread_mutex_t lock;
};

/* A growable line buffer on the stack first, the heap for long URLs. */
typedef struct line {
    char *p;
    size_t len, cap;
    char local[4096];
    int oom;
} line;

static void put(line *l, const char *s, size_t n)
{
    if (l->oom)
        return;
    if (l->len + n > l->cap) {
        size_t cap = (l->len + n) * 2;
        char *p = l->p == l->local ? malloc(cap) : realloc(l->p, cap);
        if (p == NULL) {
            l->oom = 1;
            return;
        }
        if (l->p == l->local)
            memcpy(p, l->local, l->len);
        l->p = p;
        l->cap = cap;
    }
    memcpy(l->p + l->len, s, n);
    l->len += n;
}

static void put_str(line *l, const char *key, const char *v)
{
    put(l, key, strlen(key));
    if (v == NULL) {
        put(l, "null", 4);
        return;
    }
    put(l, "\"", 1);
    for (const unsigned char *c = (const unsigned char *)v; *c; c++) {
        const unsigned char *run = c;
        while (*c >= 0x20 && *c < 0x7f && *c != '"' && *c != '\\')
            c++;
        put(l, (const char *)run, (size_t)(c - run));
        if (*c == '\0')
            break;
        char esc[8];
        int n = *c == '"' || *c == '\\' ? snprintf(esc, sizeof esc, "\\%c", *c)
                                        : snprintf(esc, sizeof esc, "\\u%04x", *c);
        put(l, esc, (size_t)n);
    }
    put(l, "\"", 1);
}

__attribute__((format(printf, 3, 4))) static void put_num(line *l, const char *key, const char *fmt,
                                                          ...)
{
    char num[64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(num, sizeof num, fmt, ap);
    va_end(ap);
    put(l, key, strlen(key));
    put(l, num, (size_t)n);
}

int record_writer_open(record_writer **out, const char *path)
{
    record_writer *w = calloc(1, sizeof *w);
    if (w == NULL)
        return -1;
    w->fp = path == NULL ? stdout : fopen(path, "w");
    if (w->fp == NULL) {
        int e = errno;
        free(w);
        errno = e;
        return -1;
    }
    w->own = path != NULL;
    pthread_mutex_init(&w->lock, NULL);
    *out = w;
    return 0;
}

int record_write(record_writer *w, const record *r)
{
    line l = {.p = NULL, .cap = sizeof l.local};
    l.p = l.local;
    put_str(&l, "{\"url\":", r->url);
    put_str(&l, ",\"final_url\":", r->final_url);
    put_num(&l, ",\"status\":", "%ld", r->status);
    put_str(&l, ",\"content_type\":", r->content_type);
    put_num(&l, ",\"bytes\":", "%llu", (unsigned long long)r->bytes);
    put_num(&l, ",\"depth\":", "%u", r->depth);
    put_num(&l, ",\"links_found\":", "%llu", (unsigned long long)r->links_found);
    put_num(&l, ",\"links_new\":", "%llu", (unsigned long long)r->links_new);
    put_num(&l, ",\"elapsed_ms\":", "%.1f", r->elapsed_ms);
    put_str(&l, ",\"error\":", r->error);
    put(&l, "}\n", 2);

    int rc = 0;
    pthread_mutex_lock(&w->lock);
    if (l.oom) {
        w->failed = 1;
        w->saved_errno = ENOMEM;
    }
    if (!w->failed && fwrite(l.p, 1, l.len, w->fp) != l.len) {
        w->failed = 1;
        w->saved_errno = errno;
    }
    if (w->failed) {
        errno = w->saved_errno;
        rc = -1;
    }
    pthread_mutex_unlock(&w->lock);
    if (l.p != l.local)
        free(l.p);
    return rc;
}

int record_writer_close(record_writer *w)
{
    if (w == NULL)
        return 0;
    int rc = w->failed ? -1 : 0;
    int e = w->saved_errno;
    if (fflush(w->fp) != 0) {
        rc = -1;
        e = errno;
    }
    if (w->own && fclose(w->fp) != 0) {
        rc = -1;
        e = errno;
    }
    pthread_mutex_destroy(&w->lock);
    free(w);
    errno = e;
    return rc;
}
