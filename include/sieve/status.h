/* sieve/status.h - status codes shared by every libsieve function.
 *
 * Functions that can fail return an int: SIEVE_OK (0) or a positive
 * non-error outcome on success, a negative SIEVE_E* code on failure.
 * sieve_strerror() turns any of them into a sentence. */
#ifndef SIEVE_STATUS_H
#define SIEVE_STATUS_H

#include "sieve/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sieve_status {
    SIEVE_OK = 0,
    SIEVE_SEEN = 1, /* not an error: the key was already in the set */

    SIEVE_EINVAL = -1,     /* an argument is outside its domain */
    SIEVE_ENOMEM = -2,     /* an allocation failed */
    SIEVE_EOVERFLOW = -3,  /* a size does not fit the integer that must hold it */
    SIEVE_EIO = -4,        /* a system call failed; errno holds the cause */
    SIEVE_EFORMAT = -5,    /* a file or a record is not in the format expected */
    SIEVE_ECHECKSUM = -6,  /* a file's checksum does not match its contents */
    SIEVE_ETRUNCATED = -7, /* a file ends before its header says it does */
    SIEVE_EVERSION = -8,   /* a file's format version is not supported */
    SIEVE_EMISMATCH = -9,  /* two filters differ in shape or seed, or a state its options */
    SIEVE_EEMPTY = -10,    /* an empty URL or key */
    SIEVE_ETOOLONG = -11,  /* a URL or key longer than the configured limit */
    SIEVE_EURL = -12,      /* a string that is not a URL */
    SIEVE_EAGAIN = -13,    /* nothing to pop right now */
    SIEVE_ETIMEDOUT = -14, /* a blocking call's timeout expired */
    SIEVE_ECLOSED = -15,   /* the frontier was closed */
    SIEVE_EDRAINED = -16,  /* queue empty and no URL in flight: the crawl is over */
    SIEVE_ERANGE = -17,    /* the caller's buffer is too small; nothing was removed */
    SIEVE_ESTATE = -18,    /* a call out of order, e.g. done() with no URL in flight */
    SIEVE_ESCHEME = -19,   /* a URL whose scheme is not http or https */
    SIEVE_ESEGMENTS = -20, /* a URL path with more segments than the configured limit */
    SIEVE_EREPEAT = -21,   /* a URL path repeating one segment more than the limit */
} sieve_status;

/* Returns a static, human-readable sentence for any status code (success
 * codes included); never NULL, also for codes it does not know. */
SIEVE_API const char *sieve_strerror(int status);

#ifdef __cplusplus
}
#endif
#endif
