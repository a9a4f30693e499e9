/* cdxj-sort.c - the index's lines sorted in bounded memory.
 *
 * A CDXJ line is about 300 bytes, so the index of a crawl of 10^8 pages
 * is some 30 GB: more than a machine holds, and the whole of it must be
 * sorted before the first line is written. This is an external merge
 * sort, as sort(1) does it. Lines are gathered in one arena (the bytes,
 * NUL-terminated, and an array of offsets) up to the budget; the arena
 * is then sorted and, if more lines come, written out as a run, a
 * temporary file of NUL-terminated lines (no line holds a NUL: they are
 * built as C strings). At the end, an index that fit in the budget is
 * written straight from memory; otherwise the last arena becomes a run
 * too, and the runs are merged through a heap of their next lines.
 *
 * Merges take `fanin` runs at a time, as a log-structured store does:
 * a run written from the arena is of level 0, and as soon as the newest
 * fanin runs share a level they are merged into one run of the next. So
 * a line goes to disk once per level, and fewer than fanin runs wait at
 * each: with the defaults (64 MiB, 64 runs) once for an index below
 * 4 GiB, twice below 256 GiB. At the end, the newest runs, the smallest,
 * are merged until at most fanin are left, and those into the output. A run waiting is a file
 * descriptor and nothing else: the stdio buffers exist only while a run is written or merged.
 *
 * Runs are unnamed files (O_TMPFILE, or a name unlinked at once) in the
 * directory the caller gives: nothing is left behind by a kill, and
 * their space, a little more than the index's own, is freed when they
 * are closed. The order is strcmp()'s, bytewise, the order qsort() gave
 * when the index was sorted whole in memory. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cdxj-sort.h"
#include "warc-internal.h"

/* The stdio buffer of each run while it is written or merged. */
#define RUN_BUFFER (64 * 1024)

/* A sorted run on disk: an unnamed file, and how many merges made it. */
typedef struct run {
    int fd;
    unsigned level;
} run;

/* A line of the arena: its offset while the bytes may still move, a
 * pointer once they are sorted. */
typedef union slot {
    size_t off;
    const char *p;
} slot;

struct cdxj_sort {
    size_t budget, fanin;
    const char *dir;
    char *bytes; /* the arena's lines, each with its NUL */
    size_t used, cap;
    slot *at; /* where each line starts in bytes */
    size_t n, n_cap;
    run *runs; /* oldest first, so their levels never rise along it */
    size_t n_runs, runs_cap;
};

int cdxj_sort_new(cdxj_sort **out, size_t budget, size_t fanin, const char *dir)
{
    *out = NULL;
    if (fanin < 2 || budget == 0 || !dir)
        return SIEVE_EINVAL;
    cdxj_sort *s = calloc(1, sizeof *s);
    if (!s)
        return SIEVE_ENOMEM;
    s->budget = budget;
    s->fanin = fanin;
    s->dir = dir;
    *out = s;
    return SIEVE_OK;
}

void cdxj_sort_free(cdxj_sort *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_runs; i++)
        close(s->runs[i].fd);
    free(s->runs);
    free(s->bytes);
    free(s->at);
    free(s);
}

/* ---- the arena ---- */

static int by_line(const void *a, const void *b)
{
    return strcmp(((const slot *)a)->p, ((const slot *)b)->p);
}

/* Sorts the arena: its offsets become pointers first, now that the
 * bytes no longer move. */
static void sort_arena(cdxj_sort *s)
{
    for (size_t i = 0; i < s->n; i++)
        s->at[i].p = s->bytes + s->at[i].off;
    if (s->n > 1)
        qsort(s->at, s->n, sizeof *s->at, by_line);
}

/* A stdio stream on a run's file, from its start, with the run's
 * buffer; the file stays open when the stream is closed. */
static FILE *run_stream(int fd, const char *mode)
{
    int dup_fd = lseek(fd, 0, SEEK_SET) == 0 ? dup(fd) : -1;
    FILE *f = dup_fd >= 0 ? fdopen(dup_fd, mode) : NULL;
    if (!f) {
        if (dup_fd >= 0)
            close(dup_fd);
        return NULL;
    }
    setvbuf(f, NULL, _IOFBF, RUN_BUFFER);
    return f;
}

static int runs_push(cdxj_sort *s, int fd, unsigned level)
{
    if (s->n_runs == s->runs_cap) {
        size_t cap = s->runs_cap ? 2 * s->runs_cap : 16;
        run *v = realloc(s->runs, cap * sizeof *v);
        if (!v)
            return SIEVE_ENOMEM;
        s->runs = v;
        s->runs_cap = cap;
    }
    s->runs[s->n_runs++] = (run){.fd = fd, .level = level};
    return SIEVE_OK;
}

static int merge(const run *runs, size_t k, FILE *out, char end);

/* Merges the newest k runs into one new run of the given level, which
 * takes their place at the end of the list. */
static int merge_newest(cdxj_sort *s, size_t k, unsigned level)
{
    int fd = warc_open_tmp(s->dir);
    FILE *f = fd >= 0 ? run_stream(fd, "w") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        return SIEVE_EIO;
    }
    run *from = s->runs + s->n_runs - k;
    int rc = merge(from, k, f, '\0');
    if (fclose(f) != 0 && !rc)
        rc = SIEVE_EIO;
    if (rc) {
        close(fd);
        return rc;
    }
    for (size_t i = 0; i < k; i++)
        close(from[i].fd);
    s->n_runs -= k;
    return runs_push(s, fd, level); /* room: k runs just left */
}

/* Merges the newest runs while fanin of them share a level. */
static int settle(cdxj_sort *s)
{
    while (s->n_runs >= s->fanin) {
        unsigned level = s->runs[s->n_runs - 1].level;
        if (s->runs[s->n_runs - s->fanin].level != level)
            return SIEVE_OK;
        int rc = merge_newest(s, s->fanin, level + 1);
        if (rc)
            return rc;
    }
    return SIEVE_OK;
}

/* Sorts the arena and writes it out as a run of level 0; the arena is
 * empty after. */
static int spill(cdxj_sort *s)
{
    sort_arena(s);
    int fd = warc_open_tmp(s->dir);
    FILE *f = fd >= 0 ? run_stream(fd, "w") : NULL;
    int rc = f ? SIEVE_OK : SIEVE_EIO;
    for (size_t i = 0; i < s->n && !rc; i++) {
        const char *line = s->at[i].p;
        size_t len = strlen(line) + 1;
        if (fwrite(line, 1, len, f) != len)
            rc = SIEVE_EIO;
    }
    if (f && fclose(f) != 0 && !rc)
        rc = SIEVE_EIO;
    if (!rc)
        rc = runs_push(s, fd, 0);
    if (rc && fd >= 0)
        close(fd);
    s->used = s->n = 0;
    return rc ? rc : settle(s);
}

/* Makes *p hold need elements of size bytes, growing by doubling. */
static int reserve(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return SIEVE_OK;
    size_t c = *cap ? *cap : 1024;
    while (c < need)
        c *= 2;
    void *v = realloc(*p, c * size);
    if (!v)
        return SIEVE_ENOMEM;
    *p = v;
    *cap = c;
    return SIEVE_OK;
}

int cdxj_sort_add(cdxj_sort *s, const char *line)
{
    size_t len = strlen(line) + 1;
    /* The arena counts its offsets too; a line alone may pass the budget. */
    size_t after = s->used + len + (s->n + 1) * sizeof *s->at;
    if (after > s->budget && s->n > 0) {
        int rc = spill(s);
        if (rc)
            return rc;
    }
    if (reserve((void **)&s->bytes, &s->cap, s->used + len, 1) ||
        reserve((void **)&s->at, &s->n_cap, s->n + 1, sizeof *s->at))
        return SIEVE_ENOMEM;
    memcpy(s->bytes + s->used, line, len);
    s->at[s->n++].off = s->used;
    s->used += len;
    return SIEVE_OK;
}

/* ---- merging ---- */

/* A run being merged: its next line. */
typedef struct cursor {
    FILE *f;
    char *line;
    size_t cap;
} cursor;

/* Reads the cursor's next line: 1, 0 at the run's end, or SIEVE_EIO. */
static int advance(cursor *c)
{
    ssize_t n = getdelim(&c->line, &c->cap, '\0', c->f);
    if (n > 0)
        return 1;
    return ferror(c->f) ? SIEVE_EIO : 0;
}

static bool before(const cursor *a, const cursor *b)
{
    return strcmp(a->line, b->line) < 0;
}

/* Restores the heap order below i, the smallest line at the root. */
static void sift_down(cursor *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && before(&h[l], &h[m]))
            m = l;
        if (l + 1 < n && before(&h[l + 1], &h[m]))
            m = l + 1;
        if (m == i)
            return;
        cursor t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

/* Merges k runs into out, each line written with end after it. */
static int merge(const run *runs, size_t k, FILE *out, char end)
{
    cursor *h = calloc(k, sizeof *h);
    if (!h)
        return SIEVE_ENOMEM;
    size_t n = 0;
    int rc = SIEVE_OK;
    for (size_t i = 0; i < k && !rc; i++) {
        if (!(h[n].f = run_stream(runs[i].fd, "r")))
            rc = SIEVE_EIO;
        else if ((rc = advance(&h[n])) == 1)
            n++, rc = SIEVE_OK; /* an empty run is dropped at once */
        else
            fclose(h[n].f), h[n].f = NULL;
    }
    for (size_t i = n / 2; i-- > 0;)
        sift_down(h, n, i);
    while (n > 0 && !rc) {
        if (fputs(h[0].line, out) == EOF || putc(end, out) == EOF) {
            rc = SIEVE_EIO;
            break;
        }
        int more = advance(&h[0]);
        if (more < 0) {
            rc = more;
        } else if (more == 0) {
            fclose(h[0].f);
            free(h[0].line);
            h[0] = h[--n];
            h[n] = (cursor){0};
        }
        sift_down(h, n, 0);
    }
    for (size_t i = 0; i < k; i++) {
        if (h[i].f)
            fclose(h[i].f);
        free(h[i].line);
    }
    free(h);
    return rc;
}

int cdxj_sort_write(cdxj_sort *s, FILE *out)
{
    if (s->n_runs == 0) {
        sort_arena(s);
        for (size_t i = 0; i < s->n; i++)
            if (fputs(s->at[i].p, out) == EOF || putc('\n', out) == EOF)
                return SIEVE_EIO;
        return SIEVE_OK;
    }
    int rc = s->n > 0 ? spill(s) : SIEVE_OK;
    /* the arena's memory is not needed for merging */
    free(s->bytes);
    free(s->at);
    s->bytes = NULL;
    s->at = NULL;
    s->cap = s->n_cap = 0;
    /* the newest runs are the smallest: merged first, they cost least */
    while (!rc && s->n_runs > s->fanin) {
        size_t k = s->n_runs - s->fanin + 1;
        k = k < s->fanin ? k : s->fanin;
        rc = merge_newest(s, k, s->runs[s->n_runs - k].level + 1);
    }
    return rc ? rc : merge(s->runs, s->n_runs, out, '\n');
}
