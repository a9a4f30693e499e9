/* rss.h - memory figures from /proc: what this process holds in RAM, and
 * what the machine has left.
 *
 * Resident memory is the figure that matters for a frontier sized to a
 * machine: it counts the pages actually touched, whatever was reserved, and
 * includes what an allocator keeps but the accounting of the data
 * structure does not. Each function returns 0, or -1 with errno set. */
#ifndef SIEVE_CMD_RSS_H
#define SIEVE_CMD_RSS_H

#include <stdint.h>

/* The process's resident set now, in bytes (/proc/self/statm). */
int rss_current(uint64_t *bytes);

/* The process's largest resident set so far, in bytes (VmHWM in
 * /proc/self/status). */
int rss_peak(uint64_t *bytes);

/* Memory the machine can give new allocations without swapping, in bytes
 * (MemAvailable in /proc/meminfo; free pages from sysconf() on a kernel
 * too old to report it). */
int mem_available(uint64_t *bytes);

#endif
