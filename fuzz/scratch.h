/* scratch.h - a directory of its own for a fuzz target that works on
 * files: in /dev/shm where there is one, so that the syncs the library
 * makes cost little, else in /tmp. */
#ifndef SIEVE_FUZZ_SCRATCH_H
#define SIEVE_FUZZ_SCRATCH_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

/* Makes a new directory named after name into out (cap bytes); aborts
 * the target if it cannot. */
static inline void scratch_dir(char *out, size_t cap, const char *name)
{
    struct stat st;
    const char *base = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) ? "/dev/shm" : "/tmp";
    snprintf(out, cap, "%s/%s-XXXXXX", base, name);
    if (mkdtemp(out) == NULL)
        abort();
}

#endif
