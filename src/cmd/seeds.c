/* seeds.c - seed lists. A bad line is reported with its file and line
 * number and skipped: one typo must not cost a long crawl its other
 * seeds. Lines are read into a fixed buffer, so a file with an enormous
 * line costs no more memory than any other. */
#include <errno.h>
#include <string.h>

#include "crawl.h"
#include "seeds.h"
#include "sieve/status.h"

#define SEED_LINE_MAX 16384

static int is_blank_or_comment(const char *s, size_t len)
{
    size_t i = 0;
    while (i < len && (s[i] == ' ' || s[i] == '\t'))
        i++;
    return i == len || s[i] == '#';
}

/* Canonicalizes one seed; reports where it came from if it is refused. */
static int add_one(const sieve_canon *canon, const char *text, size_t len, const char *where,
                   unsigned long lineno, seed_fn fn, void *ctx, FILE *err)
{
    char url[CRAWL_URL_MAX + 1];
    sieve_canon_info info;
    int rc = sieve_canon_url(canon, NULL, text, len, url, sizeof url, &info);
    if (rc != SIEVE_OK) {
        if (lineno > 0)
            fprintf(err, "sieve: %s:%lu: skipped: %s\n", where, lineno, sieve_strerror(rc));
        else
            fprintf(err, "sieve: seed '%s': skipped: %s\n", where, sieve_strerror(rc));
        return 0;
    }
    return fn(ctx, url, &info) == 0 ? 1 : -1;
}

static long load_file(const char *path, const sieve_canon *canon, seed_fn fn, void *ctx, FILE *err)
{
    FILE *fp = fopen(path, "r");
    if (fp == NULL) {
        fprintf(err, "sieve: %s: %s\n", path, strerror(errno));
        return -1;
    }
    static _Thread_local char buf[SEED_LINE_MAX];
    unsigned long lineno = 0;
    long count = 0;
    int too_long = 0;
    while (fgets(buf, sizeof buf, fp) != NULL) {
        size_t len = strlen(buf);
        int complete = len > 0 && buf[len - 1] == '\n';
        if (too_long) { /* the tail of a line already reported */
            too_long = !complete;
            continue;
        }
        lineno++;
        if (!complete && !feof(fp)) {
            fprintf(err, "sieve: %s:%lu: skipped: line longer than %d bytes\n", path, lineno,
                    SEED_LINE_MAX - 2);
            too_long = 1;
            continue;
        }
        len = strcspn(buf, "\r\n");
        if (is_blank_or_comment(buf, len))
            continue;
        int rc = add_one(canon, buf, len, path, lineno, fn, ctx, err);
        if (rc < 0) {
            fclose(fp);
            return -1;
        }
        count += rc;
    }
    int failed = ferror(fp);
    fclose(fp);
    if (failed) {
        fprintf(err, "sieve: %s: read error\n", path);
        return -1;
    }
    return count;
}

long seeds_load(const char *const *args, unsigned n, const sieve_canon *canon, seed_fn fn,
                void *ctx, FILE *err)
{
    long total = 0;
    for (unsigned i = 0; i < n; i++) {
        long c;
        if (strstr(args[i], "://") != NULL)
            c = add_one(canon, args[i], strlen(args[i]), args[i], 0, fn, ctx, err);
        else
            c = load_file(args[i], canon, fn, ctx, err);
        if (c < 0)
            return -1;
        total += c;
    }
    return total;
}
