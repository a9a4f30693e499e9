/* record.c - the crawl's output: JSON Lines, one object per fetched URL,
 * and the --stats counters.
 *
 * Each worker formats its line into a local buffer, then appends it under
 * the writer's lock, so lines never interleave and the lock is held only
 * for a copy. Strings are escaped to plain ASCII JSON: a server's
 * Content-Type or an error text may hold any byte, and a consumer should
 * never meet invalid JSON or invalid UTF-8. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "record.h"

struct record_writer {
    FILE *fp;
    const char *path; /* NULL: stdout */
    int failed;
    int saved_errno;
    bool line_by_line; /* flush every line (a durable crawl) */
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

static void put_u64(line *l, const char *key, uint64_t v)
{
    put_num(l, key, "%llu", (unsigned long long)v);
}

static void put_bool(line *l, const char *key, bool v)
{
    put(l, key, strlen(key));
    put(l, v ? "true" : "false", v ? 4 : 5);
}

int record_writer_open(record_writer **out, const char *path, bool append)
{
    record_writer *w = calloc(1, sizeof *w);
    if (w == NULL)
        return -1;
    w->fp = path == NULL ? stdout : fopen(path, append ? "a" : "w");
    if (w->fp == NULL) {
        int e = errno;
        free(w);
        errno = e;
        return -1;
    }
    w->path = path;
    pthread_mutex_init(&w->lock, NULL);
    *out = w;
    return 0;
}

const char *record_writer_path(const record_writer *w)
{
    return w->path;
}

/* Marks the writer broken; the lock is held. */
static void fail_locked(record_writer *w, int e)
{
    if (!w->failed) {
        w->failed = 1;
        w->saved_errno = e;
    }
}

/* Appends a finished line and frees it. */
static int emit(record_writer *w, line *l)
{
    int rc = 0;
    pthread_mutex_lock(&w->lock);
    if (l->oom)
        fail_locked(w, ENOMEM);
    if (!w->failed && fwrite(l->p, 1, l->len, w->fp) != l->len)
        fail_locked(w, errno);
    /* line by line: in the kernel before the caller goes on, so that a
     * kill loses no record of a URL the frontier was told is done */
    if (!w->failed && w->line_by_line && fflush(w->fp) != 0)
        fail_locked(w, errno);
    if (w->failed) {
        errno = w->saved_errno;
        rc = -1;
    }
    pthread_mutex_unlock(&w->lock);
    if (l->p != l->local)
        free(l->p);
    return rc;
}

static void line_init(line *l)
{
    l->p = l->local;
    l->len = 0;
    l->cap = sizeof l->local;
    l->oom = 0;
}

/* An instant as ISO 8601 UTC with milliseconds: 2026-11-24T10:00:00.123Z. */
static void iso_time(char *buf, size_t cap, int64_t us)
{
    time_t secs = (time_t)(us / 1000000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    size_t n = strftime(buf, cap, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, cap - n, ".%03dZ", (int)(us % 1000000 / 1000));
}

int record_write(record_writer *w, const sieve_crawl_record *r, const record_where *where)
{
    line l;
    line_init(&l);
    put_str(&l, "{\"url\":", r->url);
    put_str(&l, ",\"final_url\":", r->final_url);
    put_num(&l, ",\"status\":", "%ld", r->status);
    put_str(&l, ",\"content_type\":", r->content_type);
    put_u64(&l, ",\"bytes\":", r->bytes);
    put_num(&l, ",\"depth\":", "%u", (unsigned)r->depth);
    put_u64(&l, ",\"links_found\":", r->links_found);
    put_u64(&l, ",\"links_new\":", r->links_new);
    put_num(&l, ",\"elapsed_ms\":", "%.1f", r->elapsed_ms);
    put_str(&l, ",\"error\":", r->error);
    /* the fields that came with archiving, after the first ten */
    char when[32];
    iso_time(when, sizeof when, r->started_us);
    put_str(&l, ",\"time\":", when);
    put_u64(&l, ",\"wire_bytes\":", r->wire_bytes);
    put_str(&l, ",\"remote_ip\":", r->remote_ip);
    bool archived = where != NULL && where->warc_file != NULL;
    put_str(&l, ",\"digest\":",
            r->payload_digest != NULL ? r->payload_digest
            : archived                ? where->digest
                                      : NULL);
    put_str(&l, ",\"outcome\":", sieve_crawl_outcome_name(r->outcome));
    put_num(&l, ",\"attempts\":", "%u", r->attempts);
    put_str(&l, ",\"kind\":", r->kind == SIEVE_FETCH_SITEMAP ? "sitemap" : "page");
    put_str(&l, ",\"warc_file\":", archived ? where->warc_file : NULL);
    if (archived)
        put_u64(&l, ",\"warc_offset\":", where->warc_offset);
    else
        put(&l, ",\"warc_offset\":null", 19);
    /* where the URL came from, after the archive's fields */
    put_str(&l, ",\"referrer\":", r->referrer);
    put_str(&l, ",\"first_url\":", r->first_url);
    put(&l, "}\n", 2);
    return emit(w, &l);
}

int record_write_stats(record_writer *w, const sieve_crawl_stats *st, double elapsed_s)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    struct tm tm;
    gmtime_r(&now.tv_sec, &tm);
    char when[64];
    size_t n = strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(when + n, sizeof when - n, ".%03ldZ", now.tv_nsec / 1000000);

    line l;
    line_init(&l);
    put_str(&l, "{\"time\":", when);
    put_num(&l, ",\"elapsed_s\":", "%.3f", elapsed_s);
    put_u64(&l, ",\"started\":", st->started);
    put_u64(&l, ",\"fetched\":", st->fetched);
    put_u64(&l, ",\"errors\":", st->errors);
    put_u64(&l, ",\"retries\":", st->retries);
    put_u64(&l, ",\"failing_hosts\":", st->failing_hosts);
    put_u64(&l, ",\"aborted\":", st->aborted);
    put_u64(&l, ",\"in_flight\":", st->in_flight);
    put_u64(&l, ",\"bytes\":", st->bytes);
    put_u64(&l, ",\"links\":", st->links);
    put_u64(&l, ",\"links_new\":", st->links_new);
    put_u64(&l, ",\"off_site\":", st->off_site);
    put_u64(&l, ",\"denied\":", st->denied);
    put_u64(&l, ",\"not_allowed\":", st->not_allowed);
    put_u64(&l, ",\"too_deep\":", st->too_deep);
    put_u64(&l, ",\"host_full\":", st->host_full);
    put_u64(&l, ",\"rejected\":", st->rejected);
    put_u64(&l, ",\"filtered\":", st->filtered);
    put_u64(&l, ",\"nofollow\":", st->nofollow);
    put_u64(&l, ",\"not_http\":", st->not_http);
    put_u64(&l, ",\"trap\":", st->trap);
    put_u64(&l, ",\"malformed\":", st->malformed);
    put_u64(&l, ",\"robots_fetched\":", st->robots_fetched);
    put_u64(&l, ",\"robots_denied\":", st->robots_denied);
    put_u64(&l, ",\"sitemaps\":", st->sitemaps);
    put_u64(&l, ",\"sitemaps_left_out\":", st->sitemaps_left_out);
    put_u64(&l, ",\"sitemap_pages\":", st->sitemap_pages);
    put_u64(&l, ",\"sitemap_bad\":", st->sitemap_bad);
    /* every outcome, zero or not, so that a series has the same keys */
    for (int i = 0; i < SIEVE_OUTCOMES; i++) {
        char key[48];
        snprintf(key, sizeof key, "%s\"%s\":", i == 0 ? ",\"outcomes\":{" : ",",
                 sieve_crawl_outcome_name((sieve_crawl_outcome)i));
        put_u64(&l, key, st->outcomes[i]);
    }
    put(&l, "}", 1);
    put_num(&l, ",\"workers\":", "%u", st->workers);
    put_num(&l, ",\"concurrency\":", "%u", st->concurrency);
    put_bool(&l, ",\"page_limit_hit\":", st->page_limit_hit);
    put_bool(&l, ",\"stopped\":", st->stopped);
    const sieve_frontier_stats *f = &st->frontier;
    put_u64(&l, ",\"frontier\":{\"pushed\":", f->pushed);
    put_u64(&l, ",\"seen\":", f->seen);
    put_u64(&l, ",\"invalid\":", f->invalid);
    put_u64(&l, ",\"enqueued\":", f->enqueued);
    put_u64(&l, ",\"popped\":", f->popped);
    put_u64(&l, ",\"done\":", f->done);
    put_u64(&l, ",\"in_flight\":", f->in_flight);
    put_u64(&l, ",\"queue_len\":", f->queue_len);
    put_u64(&l, ",\"queue_bytes\":", f->queue_bytes);
    put_u64(&l, ",\"seen_bytes\":", f->seen_bytes);
    if (isinf(f->est_count))
        put(&l, ",\"est_count\":null", 17); /* a full filter: no estimate */
    else
        put_num(&l, ",\"est_count\":", "%.0f", f->est_count);
    put_num(&l, ",\"est_fp_rate\":", "%.3g", f->est_fp_rate);
    put_num(&l, ",\"layers\":", "%u", f->layers);
    put_u64(&l, ",\"hosts\":", f->hosts);
    put_bool(&l, ",\"closed\":", f->closed != 0);
    put(&l, "}}\n", 3);
    return emit(w, &l);
}

int record_writer_flush(record_writer *w)
{
    int rc = 0;
    pthread_mutex_lock(&w->lock);
    if (!w->failed && fflush(w->fp) != 0)
        fail_locked(w, errno);
    if (w->failed) {
        errno = w->saved_errno;
        rc = -1;
    }
    pthread_mutex_unlock(&w->lock);
    return rc;
}

void record_writer_line_by_line(record_writer *w)
{
    w->line_by_line = true;
}

int record_writer_sync(record_writer *w)
{
    int rc = 0;
    pthread_mutex_lock(&w->lock);
    if (!w->failed && (fflush(w->fp) != 0 || (fsync(fileno(w->fp)) != 0 && errno != EINVAL)))
        fail_locked(w, errno);
    if (w->failed) {
        errno = w->saved_errno;
        rc = -1;
    }
    pthread_mutex_unlock(&w->lock);
    return rc;
}

int record_file_cut_torn(const char *path, long *cut)
{
    *cut = 0;
    FILE *fp = fopen(path, "r");
    if (fp == NULL)
        return errno == ENOENT ? 0 : -1;
    /* the last newline, looking back from the end a block at a time */
    char block[4096];
    off_t end = fseeko(fp, 0, SEEK_END) == 0 ? ftello(fp) : -1, keep = 0;
    for (off_t at = end; at > 0 && keep == 0;) {
        size_t n = at < (off_t)sizeof block ? (size_t)at : sizeof block;
        at -= (off_t)n;
        if (fseeko(fp, at, SEEK_SET) != 0 || fread(block, 1, n, fp) != n) {
            end = -1;
            break;
        }
        for (size_t i = n; i > 0; i--) {
            if (block[i - 1] == '\n') {
                keep = at + (off_t)i;
                break;
            }
        }
    }
    int e = errno;
    fclose(fp);
    if (end < 0) {
        errno = e;
        return -1;
    }
    if (keep == end)
        return 0;
    *cut = (long)(end - keep);
    return truncate(path, keep);
}

int record_writer_reopen(record_writer *w)
{
    if (w->path == NULL)
        return record_writer_flush(w);
    int rc = 0;
    pthread_mutex_lock(&w->lock);
    FILE *fresh = fopen(w->path, "a");
    if (fresh == NULL) {
        int e = errno;
        if (!w->failed && fflush(w->fp) != 0)
            fail_locked(w, errno);
        rc = w->failed ? -1 : -2;
        errno = w->failed ? w->saved_errno : e;
        pthread_mutex_unlock(&w->lock);
        return rc;
    }
    if (!w->failed && fflush(w->fp) != 0)
        fail_locked(w, errno);
    if (fclose(w->fp) != 0)
        fail_locked(w, errno);
    w->fp = fresh;
    if (w->failed) {
        errno = w->saved_errno;
        rc = -1;
    }
    pthread_mutex_unlock(&w->lock);
    return rc;
}

int record_writer_close(record_writer *w)
{
    if (w == NULL)
        return 0;
    int rc = w->failed ? -1 : 0;
    int e = w->saved_errno;
    if (fflush(w->fp) != 0 && rc == 0) {
        rc = -1;
        e = errno;
    }
    if (w->path != NULL && fclose(w->fp) != 0 && rc == 0) {
        rc = -1;
        e = errno;
    }
    pthread_mutex_destroy(&w->lock);
    free(w);
    errno = e;
    return rc;
}
