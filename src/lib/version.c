#include "sieve/sieve.h"

const char *sieve_version(void)
{
    return SIEVE_VERSION;
}
