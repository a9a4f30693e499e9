/* scratch.h - a directory of its own for a fuzz target that works on
 * files: in /dev/shm where there is one, so that the syncs the library
 * makes cost little, else in /tmp; and the removal of what it made. */
#ifndef SIEVE_FUZZ_SCRATCH_H
#define SIEVE_FUZZ_SCRATCH_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* Removes dir and what is in it, depth levels of subdirectories deep
 * (a state directory has one, its journal). */
static inline void scratch_remove(const char *dir, int depth)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (unlink(path) != 0 && depth > 0)
            scratch_remove(path, depth - 1);
    }
    closedir(d);
    rmdir(dir);
}

#endif
