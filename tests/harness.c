/* harness.c - see harness.h. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

extern char **environ;

pid_t harness_spawn(char *const argv[], const char *out, const char *err)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawn_file_actions_addopen(&fa, 2, err ? err : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    ck_assert_msg(rc == 0, "cannot run %s: %s", argv[0], strerror(rc));
    return pid;
}

int harness_wait(pid_t pid)
{
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

char *harness_slurp(const char *path)
{
    FILE *fp = fopen(path, "r");
    ck_assert_msg(fp != NULL, "%s: %s", path, strerror(errno));
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    rewind(fp);
    char *s = malloc((size_t)n + 1);
    ck_assert_uint_eq(fread(s, 1, (size_t)n, fp), (size_t)n);
    s[n] = '\0';
    fclose(fp);
    return s;
}

pid_t harness_web_start(const char *dir, const char *host, const char *const *extra, unsigned *port)
{
    const char *web = getenv("SIEVE_WEB");
    ck_assert_msg(web != NULL, "SIEVE_WEB must name sieve-web");
    char portfile[256];
    snprintf(portfile, sizeof portfile, "%s/port-%s", dir, host);
    unlink(portfile);
    char *argv[64] = {(char *)web, "--host", (char *)host, "--port", "0", "--port-file", portfile};
    int n = 7;
    for (; extra != NULL && *extra != NULL && n < 62; extra++)
        argv[n++] = (char *)*extra;
    argv[n] = NULL;
    pid_t pid = harness_spawn(argv, NULL, NULL);
    *port = 0;
    for (int i = 0; i < 500 && *port == 0; i++) {
        FILE *fp = fopen(portfile, "r");
        if (fp != NULL) {
            if (fscanf(fp, "%u", port) != 1)
                *port = 0;
            fclose(fp);
        }
        if (*port == 0)
            usleep(10000);
    }
    ck_assert_msg(*port != 0, "sieve-web did not start on %s", host);
    return pid;
}

void harness_web_stop(pid_t pid)
{
    if (pid > 0) {
        kill(pid, SIGTERM);
        harness_wait(pid);
    }
}

pid_t harness_web_start_named(const char *dir, const char *name, const char *host,
                              const char *const *extra, unsigned *port)
{
    char sub[256];
    snprintf(sub, sizeof sub, "%s/%s", dir, name);
    ck_assert_msg(mkdir(sub, 0755) == 0 || errno == EEXIST, "%s: %s", sub, strerror(errno));
    return harness_web_start(sub, host, extra, port);
}

static int cmp_line(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted lines sieve-web prints with mode (--truth or --edges). */
static char **web_lines(const char *dir, const char *host, unsigned port, const char *const *extra,
                        const char *mode, size_t *n)
{
    const char *web = getenv("SIEVE_WEB");
    ck_assert_msg(web != NULL, "SIEVE_WEB must name sieve-web");
    char out[256], portarg[16];
    snprintf(out, sizeof out, "%s/%s-%s-%u.txt", dir, mode + 2, host, port);
    snprintf(portarg, sizeof portarg, "%u", port);
    char *argv[64] = {(char *)web};
    int argc = 1;
    for (; extra != NULL && *extra != NULL && argc < 58; extra++)
        argv[argc++] = (char *)*extra;
    /* last, so that they win over a --port or --host among the extras */
    argv[argc++] = (char *)mode;
    argv[argc++] = "--host";
    argv[argc++] = (char *)host;
    argv[argc++] = "--port";
    argv[argc++] = portarg;
    argv[argc] = NULL;
    int st = harness_wait(harness_spawn(argv, out, NULL));
    ck_assert_msg(st == 0, "sieve-web %s exited with %d", mode, st);
    char *text = harness_slurp(out);
    size_t cap = 64, count = 0;
    char **lines = malloc(cap * sizeof *lines);
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        if (count + 1 == cap)
            lines = realloc(lines, (cap *= 2) * sizeof *lines);
        lines[count++] = strdup(line);
    }
    lines[count] = NULL;
    free(text);
    qsort(lines, count, sizeof *lines, cmp_line);
    *n = count;
    return lines;
}

char **harness_web_truth(const char *dir, const char *host, unsigned port, const char *const *extra,
                         size_t *n)
{
    return web_lines(dir, host, port, extra, "--truth", n);
}

char **harness_web_edges(const char *dir, const char *host, unsigned port, const char *const *extra,
                         size_t *n)
{
    return web_lines(dir, host, port, extra, "--edges", n);
}

void harness_lines_free(char **lines)
{
    for (size_t i = 0; lines != NULL && lines[i] != NULL; i++)
        free(lines[i]);
    free(lines);
}

void harness_check_records(const char *const *paths, size_t n)
{
    const char *script = getenv("RECORD_CHECK"), *schema = getenv("RECORD_SCHEMA"),
               *prefix = getenv("AJV_PREFIX");
    ck_assert_msg(script && schema && prefix,
                  "RECORD_CHECK, RECORD_SCHEMA and AJV_PREFIX must name the checker");
    char *argv[64] = {"/bin/bash", (char *)script, (char *)prefix, (char *)schema};
    size_t k = 4;
    for (size_t i = 0; i < n && k < 63; i++)
        argv[k++] = (char *)paths[i];
    argv[k] = NULL;
    /* its report goes to the test's stderr, where a failure shows it */
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], NULL, NULL, argv, environ);
    ck_assert_msg(rc == 0, "cannot run %s: %s", script, strerror(rc));
    ck_assert_msg(harness_wait(pid) == 0, "records that do not match %s (see above)", schema);
}
