/* log.c - the access log: one line per request, written when it ends.
 *
 *   START_US END_US STATUS TARGET\n
 *
 * START_US is CLOCK_MONOTONIC in microseconds when the request line
 * arrived, END_US when the response finished or was cut off (client gone,
 * timeout, server stopping); STATUS is the status queued, or 0 when none
 * was (a hanging robots.txt, say); TARGET is the request target as the
 * client sent it, query included.
 *
 * Tests read the log to see what the crawler did when: how often it asked
 * for robots.txt, whether it fetched a disallowed path, how many requests
 * overlapped on one host. So a line must be on disk the moment the request
 * ends, and lines from the server's many threads must never mix: each line
 * is built in memory and written with a single write(2) on an O_APPEND
 * descriptor, which appends it whole, with no lock and no stdio buffer to
 * flush. The monotonic clock makes START and END comparable across
 * threads and immune to wall-clock steps. */
#include <errno.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "web.h"

uint64_t web_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Appends target with spaces, controls and non-ASCII bytes as %XX, so
 * the target is always one field and one line. */
static void put_target(struct web_buf *b, const char *target)
{
    for (const unsigned char *p = (const unsigned char *)target; *p; p++) {
        if (*p > 0x20 && *p < 0x7f)
            web_buf_add(b, p, 1);
        else
            web_buf_printf(b, "%%%02X", *p);
    }
}

int web_log_request(int fd, uint64_t start_us, uint64_t end_us, unsigned status, const char *target)
{
    struct web_buf b;
    web_buf_init(&b);
    web_buf_printf(&b, "%llu %llu %u ", (unsigned long long)start_us, (unsigned long long)end_us,
                   status);
    put_target(&b, target && *target ? target : "-");
    web_buf_add(&b, "\n", 1);
    int rc = -1;
    if (!b.oom) {
        ssize_t n;
        do
            n = write(fd, b.data, b.len);
        while (n < 0 && errno == EINTR);
        rc = n == (ssize_t)b.len ? 0 : -1;
    }
    web_buf_free(&b);
    return rc;
}
