/* log.c - logging without global state: a sink is a function plus a
 * context, carried by whoever logs. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sieve/log.h"

const char *sieve_log_level_name(sieve_log_level level)
{
    switch (level) {
    case SIEVE_LOG_ERROR:
        return "error";
    case SIEVE_LOG_WARN:
        return "warning";
    case SIEVE_LOG_INFO:
        return "info";
    case SIEVE_LOG_DEBUG:
        return "debug";
    }
    return "unknown";
}

void sieve_log_stderr(void *ctx, sieve_log_level level, const char *msg)
{
    (void)ctx;
    char line[1100];
    int n = snprintf(line, sizeof line, "sieve: %s: %s\n", sieve_log_level_name(level), msg);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof line)
        n = sizeof line - 1;
    /* One write per line keeps lines whole when threads log at once. */
    ssize_t w = write(STDERR_FILENO, line, (size_t)n);
    (void)w;
}

sieve_logger sieve_logger_default(void)
{
    return (sieve_logger){.fn = sieve_log_stderr, .ctx = NULL, .level = SIEVE_LOG_WARN};
}

void sieve_log(const sieve_logger *lg, sieve_log_level level, const char *fmt, ...)
{
    if (lg == NULL || lg->fn == NULL || level > lg->level)
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    lg->fn(lg->ctx, level, msg);
}
