/* harness.h - processes for the integration tests: run a program with its
 * output in files, start sieve-web on a free loopback port, read files. */
#ifndef SIEVE_TEST_HARNESS_H
#define SIEVE_TEST_HARNESS_H

#include <stddef.h>
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

/* As harness_web_start(), with its port file in dir/name (created), so
 * that several servers can share one address and one directory. */
pid_t harness_web_start_named(const char *dir, const char *name, const char *host,
                              const char *const *extra, unsigned *port);

/* The ground truth of a sieve-web started with extra (the same options,
 * NULL-ended; options the truth ignores may stay) on host:port: its URLs,
 * sorted bytewise, in a NULL-ended array; *n is their count. The output
 * file goes into dir. Free with harness_lines_free(). */
char **harness_web_truth(const char *dir, const char *host, unsigned port, const char *const *extra,
                         size_t *n);

/* As harness_web_truth(), the web's graph instead: its sieve-web --edges
 * lines, "link FROM TO" and "redirect FROM TO", sorted bytewise. */
char **harness_web_edges(const char *dir, const char *host, unsigned port, const char *const *extra,
                         size_t *n);

/* Frees an array from harness_web_truth() or harness_web_edges(). NULL
 * is a no-op. */
void harness_lines_free(char **lines);

/* Checks the JSON Lines record files paths[0..n-1] of sieve crawl against
 * docs/record.schema.json with ajv (tests/record-check.sh, named with the
 * schema and ajv's install prefix by $RECORD_CHECK, $RECORD_SCHEMA and
 * $AJV_PREFIX); fails the test on any record that does not match. */
void harness_check_records(const char *const *paths, size_t n);

#endif
