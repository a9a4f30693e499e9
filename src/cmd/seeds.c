/* seeds.c - seed lists. A bad line is reported with its file and line
 * number and skipped: one typo must not cost a long crawl its other
 * seeds. Lines are read into a fixed buffer and files are bounded, so
 * neither an enormous line nor /dev/zero costs more than a normal file. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "seeds.h"
#include "sieve/status.h"

#define PREFIX "sieve crawl: "

/* Hands one seed to add; 1 if added, 0 if skipped (reported), or an error. */
static long add_one(const char *text, size_t len, const char *where, unsigned long lineno,
                    seed_add_fn add, void *ctx, FILE *err)
{
    int rc = add(ctx, text, len);
    if (rc == SIEVE_OK)
        return 1;
    if (rc == SIEVE_ENOMEM || rc == SIEVE_ESTATE) {
        fprintf(err, PREFIX "adding the seeds: %s\n", sieve_strerror(rc));
        return SEEDS_EFATAL;
    }
    /* a Bloom seen-set cannot tell a seed given twice from a false positive */
    const char *why = rc == SIEVE_SEEN
                          ? "already seen (an earlier seed, or a Bloom filter false positive)"
                          : sieve_strerror(rc);
    if (lineno > 0)
        fprintf(err, PREFIX "%s:%lu: skipped: %s\n", where, lineno, why);
    else
        fprintf(err, PREFIX "seed '%s': skipped: %s\n", where, why);
    return 0;
}

/* One line of a seed file, its newline removed. */
static long take_line(char *buf, size_t len, bool too_long, bool nul, const char *path,
                      unsigned long lineno, seed_add_fn add, void *ctx, FILE *err)
{
    if (too_long) {
        fprintf(err, PREFIX "%s:%lu: skipped: line longer than %d bytes\n", path, lineno,
                SEED_LINE_MAX);
        return 0;
    }
    if (nul) {
        fprintf(err, PREFIX "%s:%lu: skipped: a NUL byte in the line\n", path, lineno);
        return 0;
    }
    size_t start = 0;
    while (start < len && (buf[start] == ' ' || buf[start] == '\t'))
        start++;
    while (len > start && (buf[len - 1] == ' ' || buf[len - 1] == '\t' || buf[len - 1] == '\r'))
        len--;
    if (start == len || buf[start] == '#')
        return 0;
    return add_one(buf + start, len - start, path, lineno, add, ctx, err);
}

/* Opens a seed file: a regular file, not too large. A FIFO or a device is
 * refused without waiting for it (O_NONBLOCK). */
static FILE *open_seed_file(const char *path, FILE *err)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        fprintf(err, PREFIX "%s: %s\n", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    const char *why = NULL;
    bool too_big = false;
    if (fstat(fd, &st) != 0)
        why = strerror(errno);
    else if (S_ISDIR(st.st_mode))
        why = "a directory, not a seed file";
    else if (!S_ISREG(st.st_mode))
        why = "not a regular file";
    else if ((too_big = (uint64_t)st.st_size > SEED_FILE_MAX))
        why = "larger than a seed file may be";
    FILE *fp = why == NULL ? fdopen(fd, "r") : NULL;
    if (fp == NULL) {
        fprintf(err, PREFIX "%s: %s", path, why != NULL ? why : strerror(errno));
        if (too_big)
            fprintf(err, " (%u GiB)", (unsigned)(SEED_FILE_MAX >> 30));
        fputc('\n', err);
        close(fd);
    }
    return fp;
}

static long load_file(const char *path, seed_add_fn add, void *ctx, FILE *err)
{
    FILE *fp = open_seed_file(path, err);
    if (fp == NULL)
        return SEEDS_EARGS;
    char *buf = malloc(SEED_LINE_MAX);
    if (buf == NULL) {
        fclose(fp);
        fprintf(err, PREFIX "%s: out of memory\n", path);
        return SEEDS_EFATAL;
    }
    unsigned long lineno = 0;
    long count = 0;
    uint64_t total = 0;
    size_t len = 0;
    bool too_long = false, nul = false, pending = false;
    for (;;) {
        int ch = getc_unlocked(fp);
        if (ch == EOF || ch == '\n') {
            if (ch == EOF && !pending)
                break;
            long rc = take_line(buf, len, too_long, nul, path, ++lineno, add, ctx, err);
            if (rc < 0) {
                count = rc;
                break;
            }
            count += rc;
            len = 0;
            too_long = nul = pending = false;
            if (ch == EOF)
                break;
            continue;
        }
        if (++total > SEED_FILE_MAX) {
            fprintf(err, PREFIX "%s: grew larger than a seed file may be (%u GiB)\n", path,
                    (unsigned)(SEED_FILE_MAX >> 30));
            count = SEEDS_EARGS;
            break;
        }
        pending = true;
        if (ch == '\0')
            nul = true;
        if (len < SEED_LINE_MAX)
            buf[len++] = (char)ch;
        else
            too_long = true;
    }
    if (count >= 0 && ferror(fp)) {
        fprintf(err, PREFIX "%s: read error: %s\n", path, strerror(errno));
        count = SEEDS_EARGS;
    }
    free(buf);
    fclose(fp);
    return count;
}

long seeds_load(const char *const *args, size_t n, seed_add_fn add, void *ctx, FILE *err)
{
    long total = 0;
    for (size_t i = 0; i < n; i++) {
        long c;
        if (strstr(args[i], "://") != NULL)
            c = add_one(args[i], strlen(args[i]), args[i], 0, add, ctx, err);
        else
            c = load_file(args[i], add, ctx, err);
        if (c < 0)
            return c;
        total += c;
    }
    return total;
}
