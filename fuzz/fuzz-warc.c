/* fuzz-warc.c - libFuzzer target: WARC files read back, as `sieve
 * warc-index` and a resumed crawl read whatever file they are given.
 *
 * The input becomes a file: as it is, or (by its first byte) its rest
 * deflated into one to four gzip members, the last one possibly cut
 * short, so that the fuzzer's WARC text also reaches the reader through
 * inflate. Then the file is indexed (sieve_warc_index() with a sort
 * budget so small that its lines go through runs on disk), its last
 * complete record found (sieve_warc_complete_end()), and it is opened for
 * appending as a resumed crawl opens its archive (sieve_warc_open() with
 * SIEVE_WARC_APPEND), which cuts a torn tail or refuses the file. The
 * checks: no crash, no leak, and the complete end never past the file's
 * end. The files live in /dev/shm where there is one, so that the fsync
 * of each append is cheap. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "scratch.h"
#include "sieve/warc.h"
#include "warc-internal.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];
static char plain_path[96], gz_path[96];
static FILE *devnull;

static void remove_dir(void)
{
    unlink(plain_path);
    unlink(gz_path);
    rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    scratch_dir(dir, sizeof dir, "fuzz-warc");
    snprintf(plain_path, sizeof plain_path, "%s/a.warc", dir);
    snprintf(gz_path, sizeof gz_path, "%s/a.warc.gz", dir);
    devnull = fopen("/dev/null", "w");
    if (devnull == NULL)
        abort();
    atexit(remove_dir);
    return 0;
}

/* Appends n bytes at p to f as one gzip member. */
static void put_member(FILE *f, const uint8_t *p, size_t n)
{
    z_stream z = {0};
    if (deflateInit2(&z, 1, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        abort();
    unsigned char out[16384];
    z.next_in = (unsigned char *)p;
    z.avail_in = (unsigned)n;
    int rc;
    do {
        z.next_out = out;
        z.avail_out = sizeof out;
        rc = deflate(&z, Z_FINISH);
        fwrite(out, 1, sizeof out - z.avail_out, f);
    } while (rc == Z_OK);
    deflateEnd(&z);
}

/* Writes the file the input stands for; returns its path. */
static const char *make_file(const uint8_t *data, size_t size)
{
    unsigned mode = size > 0 ? data[0] : 0;
    const uint8_t *p = size > 0 ? data + 1 : data;
    size_t n = size > 0 ? size - 1 : 0;
    bool gz = mode & 1;
    const char *path = gz ? gz_path : plain_path;
    FILE *f = fopen(path, "w");
    if (f == NULL)
        abort();
    if (!gz) {
        fwrite(p, 1, n, f);
    } else {
        size_t members = 1 + (mode >> 1 & 3), at = 0;
        for (size_t i = 0; i < members; i++) {
            size_t len = i + 1 == members ? n - at : n / members;
            put_member(f, p + at, len);
            at += len;
        }
    }
    if (fclose(f) != 0)
        abort();
    if (gz && (mode & 0x80)) { /* a torn tail: the last bytes cut off */
        struct stat st;
        if (stat(path, &st) != 0 || truncate(path, st.st_size - (off_t)(mode >> 3 & 15) / 2) != 0)
            abort();
    }
    return path;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = make_file(data, size);
    struct stat st;
    if (stat(path, &st) != 0)
        abort();
    const char *paths[] = {path};
    warc_index_sorted(paths, 1, devnull, NULL, 256, 2);
    uint64_t end = 0, records = 0;
    int rc = sieve_warc_complete_end(path, &end, &records);
    if (end > (uint64_t)st.st_size || (rc == SIEVE_OK && records == 0 && end != 0))
        abort();
    sieve_warc_options o;
    sieve_warc_options_init(&o);
    o.mode = SIEVE_WARC_APPEND;
    o.write_behind = 0;
    o.logger = (sieve_logger){0}; /* what it cuts or refuses is expected here */
    sieve_warc *w;
    if (sieve_warc_open(&w, path, &o) == SIEVE_OK)
        sieve_warc_close(w);
    unlink(path);
    return 0;
}
