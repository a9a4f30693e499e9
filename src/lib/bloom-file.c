/* bloom-file.c - Bloom filter file format.
 *
 * A file is a 64-byte header and the bit array, all little-endian:
 *
 *     off size field
 *       0    8 magic "SIEVEBF\0"
 *       8    4 format version (1)
 *      12    2 layout (0 blocked, 1 classic)
 *      14    2 k
 *      16    8 m, bits
 *      24    8 hash seed
 *      32    8 capacity the filter was sized for
 *      40    8 requested false-positive rate, IEEE-754 double bits
 *      48    8 bits set
 *      56    8 checksum: XXH3-64 of the header (this field zero), then bits
 *      64    . bit array: ceil(m / 64) 64-bit words
 *
 * Fields are encoded byte by byte, never by dumping a struct, so the file is
 * the same on every host whatever its padding or byte order.
 *
 * Saving writes "path.tmp.XXXXXX" beside the target, fsyncs it and renames
 * it over path, so a crash leaves either the old file or the new one, never
 * a mix. Loading trusts nothing: the header is checked for shape, and its
 * implied size compared with the file's real size, before anything is
 * allocated, so a forged header cannot make us map terabytes. Then the
 * checksum covers bit rot and the set-bit count is recounted. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "bloom-internal.h"
#include "bytes.h"
#include "io.h"
#include "sieve/status.h"

#define FILE_VERSION 1u
#define HEADER_SIZE  64u
#define OFF_VERSION  8u
#define OFF_LAYOUT   12u
#define OFF_K        14u
#define OFF_M        16u
#define OFF_SEED     24u
#define OFF_CAPACITY 32u
#define OFF_FP_RATE  40u
#define OFF_BITS_SET 48u
#define OFF_CHECKSUM 56u
#define MAGIC        "SIEVEBF"  /* with its NUL: 8 bytes */
#define IO_CHUNK     (1u << 20) /* staging buffer for the bit array */

typedef struct header {
    uint32_t version;
    unsigned layout, k;
    uint64_t m, seed, capacity, bits_set, checksum;
    double fp_rate;
} header;

static void encode_header(const sieve_bloom *b, uint64_t checksum, unsigned char *p)
{
    uint64_t rate;
    memset(p, 0, HEADER_SIZE);
    memcpy(p, MAGIC, sizeof(MAGIC));
    le_put32(p + OFF_VERSION, FILE_VERSION);
    le_put16(p + OFF_LAYOUT, (uint16_t)b->layout);
    le_put16(p + OFF_K, (uint16_t)b->k);
    le_put64(p + OFF_M, b->m);
    le_put64(p + OFF_SEED, b->seed);
    le_put64(p + OFF_CAPACITY, b->capacity);
    memcpy(&rate, &b->fp_rate, sizeof(rate));
    le_put64(p + OFF_FP_RATE, rate);
    le_put64(p + OFF_BITS_SET, b->bits_set);
    le_put64(p + OFF_CHECKSUM, checksum);
}

static void decode_header(const unsigned char *p, header *h)
{
    uint64_t rate = le_get64(p + OFF_FP_RATE);
    h->version = le_get32(p + OFF_VERSION);
    h->layout = le_get16(p + OFF_LAYOUT);
    h->k = le_get16(p + OFF_K);
    h->m = le_get64(p + OFF_M);
    h->seed = le_get64(p + OFF_SEED);
    h->capacity = le_get64(p + OFF_CAPACITY);
    memcpy(&h->fp_rate, &rate, sizeof(rate));
    h->bits_set = le_get64(p + OFF_BITS_SET);
    h->checksum = le_get64(p + OFF_CHECKSUM);
}

/* Streams the bit array to fd as little-endian words through a staging
 * buffer, hashing exactly the bytes written. */
static int write_bits(int fd, const sieve_bloom *b, XXH3_state_t *st, unsigned char *buf)
{
    size_t words = b->bytes / 8, per = IO_CHUNK / 8;
    for (size_t i = 0; i < words; i += per) {
        size_t n = words - i < per ? words - i : per;
        for (size_t j = 0; j < n; j++)
            le_put64(buf + 8 * j, b->words[i + j]);
        XXH3_64bits_update(st, buf, 8 * n);
        if (io_write_all(fd, buf, 8 * n) != 0)
            return -1;
    }
    return 0;
}

/* Makes the rename itself durable. Best effort: the data is already safe
 * in the renamed file, and some file systems refuse fsync on directories. */
static void sync_dir(const char *path)
{
    char *dir = strdup(path);
    if (dir == NULL)
        return;
    char *slash = strrchr(dir, '/');
    const char *name = ".";
    if (slash == dir)
        name = "/";
    else if (slash != NULL) {
        *slash = '\0';
        name = dir;
    }
    int fd = open(name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(dir);
}

static int write_file(int fd, const sieve_bloom *b)
{
    unsigned char hdr[HEADER_SIZE];
    XXH3_state_t st;
    int rc = -1;
    unsigned char *buf = malloc(IO_CHUNK);
    if (buf == NULL) {
        errno = ENOMEM;
        return -1;
    }
    XXH3_INITSTATE(&st);
    XXH3_64bits_reset(&st);
    encode_header(b, 0, hdr);
    XXH3_64bits_update(&st, hdr, HEADER_SIZE);
    /* The header goes first as a placeholder; its checksum is known only
     * once the bits have streamed past. */
    if (io_write_all(fd, hdr, HEADER_SIZE) == 0 && write_bits(fd, b, &st, buf) == 0) {
        encode_header(b, XXH3_64bits_digest(&st), hdr);
        if (pwrite(fd, hdr, HEADER_SIZE, 0) == (ssize_t)HEADER_SIZE)
            rc = fsync(fd);
        else if (errno == 0)
            errno = EIO;
    }
    free(buf);
    return rc;
}

int sieve_bloom_save(const sieve_bloom *b, const char *path)
{
    if (b == NULL || path == NULL || *path == '\0')
        return SIEVE_EINVAL;
    static const char suffix[] = ".tmp.XXXXXX";
    size_t plen = strlen(path);
    char *tmp = malloc(plen + sizeof(suffix));
    if (tmp == NULL)
        return SIEVE_ENOMEM;
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, suffix, sizeof(suffix));
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) {
        free(tmp);
        return SIEVE_EIO;
    }
    errno = 0;
    int failed = write_file(fd, b);
    if (close(fd) != 0)
        failed = -1;
    if (failed == 0 && rename(tmp, path) != 0)
        failed = -1;
    if (failed != 0) {
        int saved = errno;
        unlink(tmp);
        free(tmp);
        errno = saved;
        return SIEVE_EIO;
    }
    free(tmp);
    sync_dir(path);
    return SIEVE_OK;
}

/* Shape checks that need no allocation: SIEVE_OK or the refusal. */
static int check_header(const unsigned char *raw, const header *h)
{
    if (memcmp(raw, MAGIC, sizeof(MAGIC)) != 0)
        return SIEVE_EFORMAT;
    if (h->version != FILE_VERSION)
        return SIEVE_EVERSION;
    if (h->layout != SIEVE_BLOOM_BLOCKED && h->layout != SIEVE_BLOOM_CLASSIC)
        return SIEVE_EFORMAT;
    if (h->k == 0 || h->k > SIEVE_BLOOM_K_MAX || sieve_bloom_array_bytes(h->m) == 0)
        return SIEVE_EFORMAT;
    if (h->layout == SIEVE_BLOOM_BLOCKED && h->m % BLOOM_BLOCK_BITS != 0)
        return SIEVE_EFORMAT;
    if (h->bits_set > h->m || h->capacity == 0)
        return SIEVE_EFORMAT;
    if (!(h->fp_rate >= 0 && h->fp_rate <= 1))
        return SIEVE_EFORMAT;
    return SIEVE_OK;
}

/* Reads the header of an open file of st_size bytes. A file shorter than a
 * header is "truncated" only if what it has starts like ours. */
static int read_header(int fd, uint64_t size, unsigned char *raw, header *h)
{
    size_t have = size < HEADER_SIZE ? (size_t)size : HEADER_SIZE;
    int rc = io_read_all(fd, raw, have);
    if (rc != SIEVE_OK)
        return rc;
    if (have < HEADER_SIZE) {
        size_t cmp = have < sizeof(MAGIC) ? have : sizeof(MAGIC);
        return memcmp(raw, MAGIC, cmp) == 0 ? SIEVE_ETRUNCATED : SIEVE_EFORMAT;
    }
    decode_header(raw, h);
    return check_header(raw, h);
}

/* The bits as read are the file's bytes; check them, then turn the
 * little-endian words into host order in place. */
static int verify_bits(sieve_bloom *b, unsigned char *raw, const header *h)
{
    XXH3_state_t st;
    XXH3_INITSTATE(&st);
    XXH3_64bits_reset(&st);
    memset(raw + OFF_CHECKSUM, 0, 8);
    XXH3_64bits_update(&st, raw, HEADER_SIZE);
    XXH3_64bits_update(&st, b->words, b->bytes);
    if (XXH3_64bits_digest(&st) != h->checksum)
        return SIEVE_ECHECKSUM;
    size_t words = b->bytes / 8;
    for (size_t i = 0; i < words; i++)
        b->words[i] = le_get64((const unsigned char *)&b->words[i]);
    /* Bits past m in the last word must be clear: probes never set them. */
    if (b->m % 64 != 0 && (b->words[words - 1] >> (b->m % 64)) != 0)
        return SIEVE_EFORMAT;
    if (sieve_bloom_popcount(b) != h->bits_set)
        return SIEVE_EFORMAT;
    return SIEVE_OK;
}

static int load_fd(sieve_bloom **out, int fd)
{
    struct stat sb;
    unsigned char raw[HEADER_SIZE];
    header h;
    if (fstat(fd, &sb) != 0)
        return SIEVE_EIO;
    if (S_ISDIR(sb.st_mode)) {
        errno = EISDIR;
        return SIEVE_EIO;
    }
    if (!S_ISREG(sb.st_mode))
        return SIEVE_EFORMAT;
    uint64_t size = (uint64_t)sb.st_size;
    int rc = read_header(fd, size, raw, &h);
    if (rc != SIEVE_OK)
        return rc;
    uint64_t want = HEADER_SIZE + sieve_bloom_array_bytes(h.m);
    if (size < want)
        return SIEVE_ETRUNCATED;
    if (size > want)
        return SIEVE_EFORMAT;
    sieve_bloom *b;
    rc = sieve_bloom_create(&b, (sieve_bloom_layout)h.layout, h.m, h.k, h.seed, h.capacity,
                            h.fp_rate);
    if (rc != SIEVE_OK)
        return rc;
    rc = io_read_all(fd, b->words, b->bytes);
    if (rc == SIEVE_OK)
        rc = verify_bits(b, raw, &h);
    if (rc != SIEVE_OK) {
        sieve_bloom_free(b);
        return rc;
    }
    b->bits_set = h.bits_set;
    *out = b;
    return SIEVE_OK;
}

int sieve_bloom_load(sieve_bloom **out, const char *path)
{
    if (out == NULL || path == NULL)
        return SIEVE_EINVAL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return SIEVE_EIO;
    int rc = load_fd(out, fd);
    int saved = errno;
    close(fd);
    errno = saved;
    return rc;
}
