/* warc-record.c - the small pieces of a WARC record: IDs, dates, numbers.
 * Its digests are sha1.c's.
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

/* Random bytes for record IDs, from a reserve each thread refills with
 * one getrandom() call for sixteen IDs: two calls per fetch were a tenth
 * of what archiving a small page cost. A child of fork() must never hand
 * out its parent's bytes again, so the reserve of the thread that forks -
 * the child's only thread - is emptied in the child. */
#define RANDOM_RESERVE 256

static _Thread_local unsigned char reserve[RANDOM_RESERVE];
static _Thread_local size_t reserve_left;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void empty_reserve(void)
{
    reserve_left = 0;
}

static void watch_forks(void)
{
    pthread_atfork(NULL, NULL, empty_reserve);
}

static int random_bytes(unsigned char *out, size_t n)
{
    pthread_once(&atfork_once, watch_forks);
    if (reserve_left < n) {
        size_t got = 0;
        while (got < sizeof reserve) {
            ssize_t k = getrandom(reserve + got, sizeof reserve - got, 0);
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0)
                return SIEVE_EIO;
            got += (size_t)k;
        }
        reserve_left = sizeof reserve;
    }
    memcpy(out, reserve + sizeof reserve - reserve_left, n);
    /* used bytes are wiped: they are never handed out twice */
    memset(reserve + sizeof reserve - reserve_left, 0, n);
    reserve_left -= n;
    return SIEVE_OK;
}

int warc_new_id(char out[SIEVE_WARC_ID_SIZE])
{
    unsigned char b[16];
    if (random_bytes(b, sizeof b) != SIEVE_OK)
        return SIEVE_EIO;
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); /* version 4 */
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
    static const char hex[] = "0123456789abcdef";
    char *p = out;
    memcpy(p, "urn:uuid:", 9);
    p += 9;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            *p++ = '-';
        *p++ = hex[b[i] >> 4];
        *p++ = hex[b[i] & 15];
    }
    *p = '\0';
    return SIEVE_OK;
}

int64_t warc_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Puts n digits of v at p. */
static char *digits(char *p, long v, int n)
{
    for (int i = n - 1; i >= 0; i--, v /= 10)
        p[i] = (char)('0' + v % 10);
    return p + n;
}

/* Days since 1970-01-01 to a civil date (H. Hinnant's days_from_civil,
 * inverted): gmtime_r() takes the time zone lock on every call, which
 * writers on several threads contended for. */
static void civil(long days, long *y, int *m, int *d)
{
    days += 719468;
    long era = (days >= 0 ? days : days - 146096) / 146097;
    long doe = days - era * 146097;
    long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    long mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

void warc_format_date(int64_t us, char out[WARC_DATE_SIZE])
{
    int64_t sec = us / 1000000;
    long frac = (long)(us % 1000000);
    if (frac < 0) {
        frac += 1000000;
        sec--;
    }
    long days = (long)(sec / 86400), rem = (long)(sec % 86400);
    if (rem < 0) {
        rem += 86400;
        days--;
    }
    long y;
    int m, d;
    civil(days, &y, &m, &d);
    /* Years past 9999 would not fit the field; they are no crawl's. */
    char *p = digits(out, y, 4);
    *p++ = '-';
    p = digits(p, m, 2);
    *p++ = '-';
    p = digits(p, d, 2);
    *p++ = 'T';
    p = digits(p, rem / 3600, 2);
    *p++ = ':';
    p = digits(p, rem / 60 % 60, 2);
    *p++ = ':';
    p = digits(p, rem % 60, 2);
    *p++ = '.';
    p = digits(p, frac, 6);
    *p++ = 'Z';
    *p = '\0';
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

int warc_buf_cat(warc_buf *b, ...)
{
    va_list ap;
    va_start(ap, b);
    int rc = SIEVE_OK;
    for (const char *p; !rc && (p = va_arg(ap, const char *));)
        rc = warc_buf_add(b, p, strlen(p));
    va_end(ap);
    return rc;
}

char *warc_u64_text(uint64_t v, char out[21])
{
    char tmp[20];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    out[n] = '\0';
    return out;
}

void warc_buf_free(warc_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

void warc_buf_reuse(warc_buf *b, size_t keep)
{
    if (b->cap > keep)
        warc_buf_free(b);
    b->len = 0;
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
