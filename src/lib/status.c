/* status.c - one sentence per status code. */
#include "sieve/status.h"

const char *sieve_strerror(int status)
{
    switch ((sieve_status)status) {
    case SIEVE_OK:
        return "success";
    case SIEVE_SEEN:
        return "already seen";
    case SIEVE_EINVAL:
        return "invalid argument";
    case SIEVE_ENOMEM:
        return "out of memory";
    case SIEVE_EOVERFLOW:
        return "size too large";
    case SIEVE_EIO:
        return "input/output error";
    case SIEVE_EFORMAT:
        return "not in the format expected (not a file of this kind, or damaged)";
    case SIEVE_ECHECKSUM:
        return "checksum mismatch: the file is corrupt";
    case SIEVE_ETRUNCATED:
        return "file is truncated";
    case SIEVE_EVERSION:
        return "unsupported file format version";
    case SIEVE_EMISMATCH:
        return "made with other settings (filters that differ in shape or seed, or a state of "
               "other options)";
    case SIEVE_EEMPTY:
        return "empty URL";
    case SIEVE_ETOOLONG:
        return "URL too long";
    case SIEVE_EURL:
        return "not a URL";
    case SIEVE_EAGAIN:
        return "nothing to take right now";
    case SIEVE_ETIMEDOUT:
        return "timed out";
    case SIEVE_ECLOSED:
        return "frontier closed";
    case SIEVE_EDRAINED:
        return "frontier drained: nothing queued, nothing in flight";
    case SIEVE_ERANGE:
        return "buffer too small";
    case SIEVE_ESTATE:
        return "call out of order";
    case SIEVE_ESCHEME:
        return "not an http or https URL";
    case SIEVE_ESEGMENTS:
        return "URL path has too many segments";
    case SIEVE_EREPEAT:
        return "URL path repeats a segment too many times";
    }
    return "unknown status";
}
