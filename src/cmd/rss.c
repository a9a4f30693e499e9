/* rss.c - memory figures from /proc.
 *
 * /proc/self/statm gives the resident set in pages with a single read and
 * no parsing of names, so sampling it costs little; the peak and the
 * machine's available memory only exist as named lines in /proc/self/status
 * and /proc/meminfo, in kB. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rss.h"

/* Finds the line "name: value kB" in a /proc file and returns value * 1024. */
static int read_kb_field(const char *path, const char *name, uint64_t *bytes)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    char line[256];
    size_t name_len = strlen(name);
    int rc = -1;
    while (fgets(line, sizeof line, f) != NULL) {
        unsigned long long kb;
        if (strncmp(line, name, name_len) == 0 && line[name_len] == ':' &&
            sscanf(line + name_len + 1, "%llu", &kb) == 1) {
            *bytes = (uint64_t)kb * 1024;
            rc = 0;
            break;
        }
    }
    fclose(f);
    if (rc != 0)
        errno = ENOENT;
    return rc;
}

int rss_current(uint64_t *bytes)
{
    FILE *f = fopen("/proc/self/statm", "r");
    if (f == NULL)
        return -1;
    unsigned long long size, resident;
    int got = fscanf(f, "%llu %llu", &size, &resident);
    fclose(f);
    if (got != 2) {
        errno = EIO;
        return -1;
    }
    *bytes = (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
    return 0;
}

int rss_peak(uint64_t *bytes)
{
    return read_kb_field("/proc/self/status", "VmHWM", bytes);
}

int mem_available(uint64_t *bytes)
{
    if (read_kb_field("/proc/meminfo", "MemAvailable", bytes) == 0)
        return 0;
    long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages < 0 || page < 0)
        return -1;
    *bytes = (uint64_t)pages * (uint64_t)page;
    return 0;
}
