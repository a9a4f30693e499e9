/* harness.h - processes for the integration tests: run a program with its
 * output in files, start sieve-web on a free loopback port, read files. */
#ifndef SIEVE_TEST_HARNESS_H
#define SIEVE_TEST_HARNESS_H

#include <sys/types.h>

/* Runs argv with stdout and stderr sent to files (NULL: /dev/null). */
pid_t harness_spawn(char *const argv[], const char *out, const char *err);

/* Waits for pid: its exit status, or 128 + the signal that ended it. */
int harness_wait(pid_t pid);

/* The whole file, NUL-terminated; the caller frees it. */
char *harness_slurp(const char *path);

/* Starts sieve-web (path in $SIEVE_WEB) with extra arguments (NULL-ended)
 * on --host host and a free port; returns its pid and sets *port. The port
 * file goes into dir. */
pid_t harness_web_start(const char *dir, const char *host, const char *const *extra,
                        unsigned *port);

/* SIGTERM, then waits. */
void harness_web_stop(pid_t pid);

#endif
