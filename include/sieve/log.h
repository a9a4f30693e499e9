/* sieve/log.h - where libsieve's messages go.
 *
 * There is no global logger: each frontier carries a sieve_logger, which
 * by default drops every message, since library code never prints on its
 * own. An embedder installs its own callback to route messages into its
 * own log, or sieve_logger_default() to have them on stderr. */
#ifndef SIEVE_LOG_H
#define SIEVE_LOG_H

#include "sieve/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sieve_log_level {
    SIEVE_LOG_ERROR = 0,
    SIEVE_LOG_WARN = 1,
    SIEVE_LOG_INFO = 2,
    SIEVE_LOG_DEBUG = 3,
} sieve_log_level;

/* Receives one message: a complete line without its newline. Called from
 * whichever thread logged; the callback must be thread-safe. */
typedef void (*sieve_log_fn)(void *ctx, sieve_log_level level, const char *msg);

typedef struct sieve_logger {
    sieve_log_fn fn;       /* NULL: messages are dropped */
    void *ctx;             /* passed to fn */
    sieve_log_level level; /* messages above this level are not formatted */
} sieve_logger;

/* The stderr sink: writes "sieve: LEVEL: msg\n" to stderr in one write. */
SIEVE_API void sieve_log_stderr(void *ctx, sieve_log_level level, const char *msg);

/* A logger writing to stderr at SIEVE_LOG_WARN: what an embedder sets to see
 * messages on stderr (no logger does by default). */
SIEVE_API sieve_logger sieve_logger_default(void);

/* "error", "warning", "info", "debug"; "unknown" for anything else. */
SIEVE_API const char *sieve_log_level_name(sieve_log_level level);

/* Formats and emits a message through lg if level passes lg->level. Long
 * messages are cut at 1023 bytes. lg may be NULL (nothing happens). */
SIEVE_API void sieve_log(const sieve_logger *lg, sieve_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#ifdef __cplusplus
}
#endif
#endif
