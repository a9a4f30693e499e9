/* warc-index.c - `sieve warc-index FILE...`: the CDXJ index of WARC files,
 * as `sieve crawl --cdxj` writes it at the end of a crawl, rebuilt from
 * the files themselves: after a crawl that was killed before its end, or
 * for archives from anywhere (any writer that keeps one record per gzip
 * member). A torn last record, which a kill can leave, is left out and
 * told; the records before it are indexed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "index-file.h"
#include "sieve/warc.h"

typedef struct index_cli {
    const char *output; /* -o FILE; NULL: standard output */
} index_cli;

#define F(f) .off = offsetof(index_cli, f), .size = sizeof(((index_cli *)0)->f)

static const char sec_output[] = "Output";

static const char *check_nonempty(const char *arg, char *why, size_t cap)
{
    (void)why, (void)cap;
    return arg[0] == '\0' ? "the value is empty" : NULL;
}

static const opt_def index_opts[] = {
    {"output", 'o', OPT_STRING, "FILE", F(output), .check = check_nonempty,
     .unset = "standard output", .section = sec_output,
     .help = "write the index to FILE, whole or not at all: FILE is left as it was when "
             "the index fails"},
    {"help", 'h', OPT_HELP, NULL, .section = sec_output, .help = "this text"},
};

static const opt_exit index_exits[] = {
    {0, "the index was written; a torn last record (a killed crawl's) is left out and told"},
    {1, "a file could not be read, is no WARC file, or the index could not be written"},
    {2, "bad arguments"},
};

static void init_settings(void *s)
{
    *(index_cli *)s = (index_cli){0};
}

const opt_command warc_index_command = {
    .name = "warc-index",
    .operands = "WARC-FILE...",
    .description =
        "Writes the CDXJ index of the WARC files (plain, or one gzip member per record), one "
        "line per response, revisit, resource and metadata record, sorted, as pywb replays "
        "from and warcio's cdx-index writes: the same index `sieve crawl --cdxj` writes at the "
        "end of a crawl. Give the files of a series in order.",
    .opts = index_opts,
    .n_opts = sizeof index_opts / sizeof *index_opts,
    .settings_size = sizeof(index_cli),
    .init = init_settings,
    .exits = index_exits,
    .n_exits = sizeof index_exits / sizeof *index_exits,
};

/* The library's messages, under the command's name instead of its own
 * "warc-index: "; *ctx counts the errors, which name what failed. */
static void log_line(void *ctx, sieve_log_level level, const char *msg)
{
    static const char own[] = "warc-index: ";
    if (strncmp(msg, own, sizeof own - 1) == 0)
        msg += sizeof own - 1;
    if (level == SIEVE_LOG_ERROR)
        ++*(unsigned *)ctx;
    fprintf(stderr, "sieve warc-index: %s%s\n", level == SIEVE_LOG_WARN ? "warning: " : "", msg);
}

int cmd_warc_index(int argc, char **argv)
{
    index_cli o;
    opt_parsed parsed;
    init_settings(&o);
    int prc = opt_parse(&warc_index_command, &o, &parsed, argc, argv);
    if (prc != 0) {
        opt_free(&warc_index_command, &o, &parsed);
        return prc > 0 ? EXIT_OK : EXIT_USAGE;
    }
    int status = EXIT_OK;
    size_t n = (size_t)(argc - parsed.first_operand);
    if (n == 0) {
        opt_fail(&warc_index_command, NULL, "no WARC file given");
        status = EXIT_USAGE;
    }
    if (status == EXIT_OK) {
        unsigned errors = 0;
        sieve_logger lg = {.fn = log_line, .ctx = &errors, .level = SIEVE_LOG_WARN};
        const char *const *files = (const char *const *)argv + parsed.first_operand;
        int rc = o.output ? index_file_write(files, n, o.output, "", &lg)
                          : sieve_warc_index(files, n, stdout, &lg);
        if (rc == SIEVE_OK && !o.output && fflush(stdout) != 0) {
            fprintf(stderr, "sieve warc-index: standard output: %s\n", strerror(errno));
            rc = SIEVE_EIO;
            errors++;
        }
        if (rc == SIEVE_ETRUNCATED)
            fprintf(stderr, "sieve warc-index: a torn last record was left out\n");
        else if (rc != SIEVE_OK && errors == 0)
            fprintf(stderr, "sieve warc-index: %s\n", sieve_strerror(rc));
        if (rc != SIEVE_OK && rc != SIEVE_ETRUNCATED)
            status = EXIT_FAILURE_RUN;
    }
    opt_free(&warc_index_command, &o, &parsed);
    return status;
}
