/* warc-record.c - the small pieces of a WARC record: IDs, dates, digests.
 *
 * Digests are SHA-1 from libcrypto's EVP interface, never our own code:
 * the one implementation is fetched once per process (EVP_MD_fetch), so
 * starting a digest - four per fetch - does not look the algorithm up in
 * the provider tables each time. They are written the way Heritrix, wget,
 * warcio and pywb write them, "sha1:" and the 20 bytes in RFC 4648
 * base32, which is what CDX indexes carry and replay tools compare.
 *
 * Record IDs are version 4 UUIDs from getrandom(): 122 random bits, so two
 * crawls writing into one collection never collide, and no state is kept
 * between records (the kernel's generator is thread-safe). */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>

#include "warc-internal.h"

static EVP_MD *sha1_md;
static pthread_once_t sha1_once = PTHREAD_ONCE_INIT;

static void sha1_fetch(void)
{
    sha1_md = EVP_MD_fetch(NULL, "SHA1", NULL);
}

const EVP_MD *warc_sha1_md(void)
{
    pthread_once(&sha1_once, sha1_fetch);
    return sha1_md;
}

int warc_sha1_init(warc_sha1 *h)
{
    const EVP_MD *md = warc_sha1_md();
    h->ctx = md ? EVP_MD_CTX_new() : NULL;
    if (!h->ctx)
        return SIEVE_ENOMEM;
    if (EVP_DigestInit_ex(h->ctx, md, NULL) != 1) {
        EVP_MD_CTX_free(h->ctx);
        h->ctx = NULL;
        return SIEVE_ENOMEM;
    }
    return SIEVE_OK;
}

void warc_sha1_update(warc_sha1 *h, const void *data, size_t len)
{
    if (len)
        EVP_DigestUpdate(h->ctx, data, len);
}

void warc_sha1_final(warc_sha1 *h, char out[WARC_DIGEST_SIZE])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    EVP_DigestFinal_ex(h->ctx, md, &n);
    memcpy(out, "sha1:", 5);
    warc_base32_20(md, out + 5);
    warc_sha1_free(h);
}

void warc_sha1_free(warc_sha1 *h)
{
    EVP_MD_CTX_free(h->ctx);
    h->ctx = NULL;
}

void warc_base32_20(const unsigned char in[20], char out[33])
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    /* 20 bytes are 160 bits: 32 groups of five, no padding. */
    for (int i = 0; i < 32; i++) {
        int bit = i * 5, byte = bit / 8, shift = bit % 8;
        unsigned v = (unsigned)in[byte] << 8 | (byte + 1 < 20 ? in[byte + 1] : 0);
        out[i] = alphabet[(v >> (11 - shift)) & 31];
    }
    out[32] = '\0';
}

int warc_new_id(char out[SIEVE_WARC_ID_SIZE])
{
    unsigned char b[16];
    size_t got = 0;
    while (got < sizeof b) {
        ssize_t n = getrandom(b + got, sizeof b - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return SIEVE_EIO;
        got += (size_t)n;
    }
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); /* version 4 */
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
    snprintf(out, SIEVE_WARC_ID_SIZE,
             "urn:uuid:%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
             b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
    return SIEVE_OK;
}

int64_t warc_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void warc_format_date(int64_t us, char out[WARC_DATE_SIZE])
{
    time_t sec = (time_t)(us / 1000000);
    long frac = (long)(us % 1000000);
    if (frac < 0) {
        frac += 1000000;
        sec--;
    }
    struct tm tm;
    gmtime_r(&sec, &tm);
    /* Years past 9999 would not fit the field; they are no crawl's. */
    char tmp[64];
    snprintf(tmp, sizeof tmp, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
    memcpy(out, tmp, WARC_DATE_SIZE - 1);
    out[WARC_DATE_SIZE - 1] = '\0';
}

int warc_buf_add(warc_buf *b, const void *data, size_t len)
{
    if (b->len + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + len + 1)
            cap *= 2;
        char *p = realloc(b->data, cap);
        if (!p)
            return SIEVE_ENOMEM;
        b->data = p;
        b->cap = cap;
    }
    if (len && data)
        memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
    return SIEVE_OK;
}

int warc_buf_addf(warc_buf *b, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return SIEVE_EINVAL;
    if ((size_t)n < sizeof small)
        return warc_buf_add(b, small, (size_t)n);
    /* Long lines (a long URL) are formatted straight into the buffer. */
    int rc = warc_buf_add(b, NULL, (size_t)n);
    if (rc)
        return rc;
    b->len -= (size_t)n;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return SIEVE_OK;
}

void warc_buf_free(warc_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

bool warc_line_is(const char *line, size_t len, const char *name)
{
    size_t n = strlen(name);
    if (len <= n || strncasecmp(line, name, n) != 0)
        return false;
    /* RFC 9112 allows no blank before the colon; some servers send one. */
    size_t i = n;
    while (i < len && (line[i] == ' ' || line[i] == '\t'))
        i++;
    return i < len && line[i] == ':';
}
