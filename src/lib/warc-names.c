/* warc-names.c - the names of an archive's files.
 *
 * An archive given as crawl.warc.gz is one file of that name, or, when it
 * rotates, a series: crawl-00001.warc.gz, crawl-00002.warc.gz, ... (five
 * digits or more, before the extension, so that the files sort and every
 * one still ends in .warc.gz). A resumed crawl finds the series' last
 * number in the directory, and sieve_warc_files() lists the files of an
 * archive in order, for the index. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "warc-internal.h"

bool warc_ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

int warc_series_init(warc_series *s, const char *path)
{
    static const char *const exts[] = {".warc.gz", ".warc", ".gz"};
    s->ext = "";
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++) {
        if (warc_ends_with(path, exts[i]) && strlen(path) > strlen(exts[i])) {
            s->ext = exts[i];
            break;
        }
    }
    s->base = strndup(path, strlen(path) - strlen(s->ext));
    return s->base ? SIEVE_OK : SIEVE_ENOMEM;
}

void warc_series_free(warc_series *s)
{
    free(s->base);
    s->base = NULL;
}

char *warc_series_name(const warc_series *s, unsigned seq)
{
    size_t n = strlen(s->base) + strlen(s->ext) + 16;
    char *name = malloc(n);
    if (name)
        snprintf(name, n, "%s-%05u%s", s->base, seq, s->ext);
    return name;
}

const char *warc_last_component(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

char *warc_dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

/* The series number in a directory entry's name, for the series whose
 * names are stem-NNNNN+ext (five digits or more); 0 when it is none. */
static unsigned series_number(const char *n, const char *stem, const char *ext)
{
    size_t len = strlen(n), stem_len = strlen(stem), ext_len = strlen(ext);
    if (len < stem_len + 1 + 5 + ext_len || strncmp(n, stem, stem_len) != 0 || n[stem_len] != '-' ||
        strcmp(n + len - ext_len, ext) != 0)
        return 0;
    unsigned long v = 0;
    for (size_t i = stem_len + 1; i < len - ext_len; i++) {
        if (n[i] < '0' || n[i] > '9' || v > 100000000)
            return 0;
        v = v * 10 + (unsigned long)(n[i] - '0');
    }
    return (unsigned)v;
}

/* Calls fn for each file of s present in its directory; false when the
 * directory cannot be read. */
static bool each_in_series(const warc_series *s,
                           void (*fn)(void *ctx, const char *name, unsigned seq), void *ctx)
{
    char *dir = warc_dir_of(s->base);
    DIR *d = dir ? opendir(dir) : NULL;
    free(dir);
    if (!d)
        return false;
    const char *stem = warc_last_component(s->base);
    struct dirent *e;
    while ((e = readdir(d))) {
        unsigned seq = series_number(e->d_name, stem, s->ext);
        if (seq > 0)
            fn(ctx, e->d_name, seq);
    }
    closedir(d);
    return true;
}

static void keep_highest(void *ctx, const char *name, unsigned seq)
{
    (void)name;
    unsigned *best = ctx;
    if (seq > *best)
        *best = seq;
}

unsigned warc_series_highest(const warc_series *s)
{
    unsigned best = 0;
    each_in_series(s, keep_highest, &best);
    return best;
}

/* ---- the files of an archive ---- */

typedef struct file_list {
    const char *base; /* the series' base, for the directory part */
    char **paths;
    unsigned *seqs;
    size_t n, cap;
    bool oom;
} file_list;

static void collect(void *ctx, const char *name, unsigned seq)
{
    file_list *l = ctx;
    if (l->oom)
        return;
    if (l->n + 2 > l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        char **p = realloc(l->paths, cap * sizeof *p);
        if (p)
            l->paths = p;
        unsigned *q = p ? realloc(l->seqs, cap * sizeof *q) : NULL;
        if (q)
            l->seqs = q;
        if (!p || !q) {
            l->oom = true;
            return;
        }
        l->cap = cap;
    }
    /* the directory as the base names it: none for a bare name */
    const char *slash = strrchr(l->base, '/');
    size_t dir = slash ? (size_t)(slash - l->base) + 1 : 0, len = dir + strlen(name) + 1;
    char *path = malloc(len);
    if (!path) {
        l->oom = true;
        return;
    }
    snprintf(path, len, "%.*s%s", (int)dir, l->base, name);
    size_t i = l->n++;
    while (i > 0 && l->seqs[i - 1] > seq) { /* sorted by number as they come */
        l->paths[i] = l->paths[i - 1];
        l->seqs[i] = l->seqs[i - 1];
        i--;
    }
    l->paths[i] = path;
    l->seqs[i] = seq;
}

int sieve_warc_files(const char *path, bool series, char ***out, size_t *n)
{
    if (!path || !*path || !out)
        return SIEVE_EINVAL;
    *out = NULL;
    if (n)
        *n = 0;
    warc_series s;
    if (warc_series_init(&s, path))
        return SIEVE_ENOMEM;
    file_list l = {.base = s.base};
    struct stat st;
    if (!series && stat(path, &st) == 0)
        collect(&l, warc_last_component(path), 0);
    /* a single file's resumed crawls go on in numbered files after it */
    each_in_series(&s, collect, &l);
    warc_series_free(&s);
    char **paths = l.oom ? NULL : realloc(l.paths, (l.n + 1) * sizeof *paths);
    free(l.seqs);
    if (!paths) {
        for (size_t i = 0; i < l.n; i++)
            free(l.paths[i]);
        free(l.paths);
        return SIEVE_ENOMEM;
    }
    paths[l.n] = NULL;
    *out = paths;
    if (n)
        *n = l.n;
    return SIEVE_OK;
}

void sieve_warc_files_free(char **files)
{
    for (size_t i = 0; files && files[i]; i++)
        free(files[i]);
    free(files);
}
