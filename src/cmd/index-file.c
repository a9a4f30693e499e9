/* index-file.c - a CDXJ index written whole or not at all.
 *
 * `sieve crawl --cdxj FILE` and `sieve warc-index -o FILE` write an index
 * that pywb replays from. Opened with fopen("w"), FILE was emptied before
 * the first archive was read, so an archive that turned out unreadable, a
 * full disk or a kill left an empty or partial index where the last good
 * one had been, sorted and plausible. So the index goes to a new file
 * beside FILE, which is synced and renamed over FILE only once whole; on
 * failure the new file is removed and FILE is left as it was. A FILE that
 * is there and is no regular file (/dev/stdout, a pipe, a symbolic link)
 * is written in place, as before: a rename would put a file where it is. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "index-file.h"

/* The new file's name: path with ".tmp-PID" after it, made with O_EXCL
 * so that no other file is ever written over. One of that name is left
 * by a killed run whose PID this process now has (no other live process
 * on this machine has it; a directory shared across machines or PID
 * namespaces is beyond this), so it is removed and the name taken
 * again. */
static FILE *open_new(const char *path, char **tmp)
{
    size_t len = strlen(path) + 32;
    *tmp = malloc(len);
    if (*tmp == NULL)
        return NULL;
    snprintf(*tmp, len, "%s.tmp-%ld", path, (long)getpid());
    int fd = open(*tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno == EEXIST && unlink(*tmp) == 0)
        fd = open(*tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    FILE *out = fd < 0 ? NULL : fdopen(fd, "w");
    if (fd >= 0 && out == NULL) {
        int e = errno;
        close(fd);
        unlink(*tmp);
        errno = e;
    }
    return out;
}

/* Flushes, syncs and closes out; false with errno set when any fails. */
static bool close_synced(FILE *out)
{
    bool ok = fflush(out) == 0 && fsync(fileno(out)) == 0;
    int e = errno;
    if (fclose(out) != 0 && ok) {
        ok = false;
        e = errno;
    }
    errno = e;
    return ok;
}

/* path written in place, for what is no regular file. */
static int write_in_place(const char *const *files, size_t n, const char *path, const char *prefix,
                          const sieve_logger *lg)
{
    FILE *out = fopen(path, "w");
    if (out == NULL) {
        sieve_log(lg, SIEVE_LOG_ERROR, "%s%s: %s", prefix, path, strerror(errno));
        return SIEVE_EIO;
    }
    int rc = sieve_warc_index(files, n, out, lg);
    if (fclose(out) != 0 && (rc == SIEVE_OK || rc == SIEVE_ETRUNCATED)) {
        sieve_log(lg, SIEVE_LOG_ERROR, "%s%s: %s", prefix, path, strerror(errno));
        rc = SIEVE_EIO;
    }
    return rc;
}

int index_file_write(const char *const *files, size_t n, const char *path, const char *prefix,
                     const sieve_logger *lg)
{
    struct stat st;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return write_in_place(files, n, path, prefix, lg);
    char *tmp = NULL;
    FILE *out = open_new(path, &tmp);
    if (out == NULL) {
        sieve_log(lg, SIEVE_LOG_ERROR, "%s%s: %s", prefix, path, strerror(errno));
        free(tmp);
        return SIEVE_EIO;
    }
    int rc = sieve_warc_index(files, n, out, lg);
    bool whole = rc == SIEVE_OK || rc == SIEVE_ETRUNCATED;
    if (!close_synced(out) && whole) {
        sieve_log(lg, SIEVE_LOG_ERROR, "%s%s: %s", prefix, path, strerror(errno));
        rc = SIEVE_EIO;
        whole = false;
    }
    if (whole && rename(tmp, path) != 0) {
        sieve_log(lg, SIEVE_LOG_ERROR, "%s%s: cannot take the new index's place: %s", prefix, path,
                  strerror(errno));
        rc = SIEVE_EIO;
        whole = false;
    }
    if (!whole)
        unlink(tmp);
    free(tmp);
    return rc;
}
