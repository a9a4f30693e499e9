/* clock.h - the engine's one clock: monotonic seconds as a double. Every
 * interval the engine keeps (delays, expiries, grace, transfer times) is
 * measured with it, so none jumps when the wall clock is set. */
#ifndef SIEVE_CLOCK_H
#define SIEVE_CLOCK_H

#include <time.h>

static inline double clock_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

#endif
