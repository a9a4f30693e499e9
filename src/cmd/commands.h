/* commands.h - the sieve command's subcommands, one file each. Each takes
 * argv after the subcommand name (argv[0] is the subcommand) and returns
 * the process exit status. */
#ifndef SIEVE_COMMANDS_H
#define SIEVE_COMMANDS_H

#include <stddef.h>

#include "options.h"

/* Exit statuses shared by the subcommands. */
enum {
    EXIT_OK = 0,
    EXIT_FAILURE_RUN = 1, /* the job failed, or could not start */
    EXIT_USAGE = 2,       /* bad arguments */
    EXIT_NO_SEED = 3,     /* crawl: no seed could be fetched */
    EXIT_OUTPUT = 4,      /* crawl: an output could not be written */
    EXIT_INTERRUPTED = 130,
};

typedef struct subcommand {
    const char *name;
    const char *synopsis; /* its arguments, for the man page; NULL: from its options */
    const char *summary;  /* one line */
    int (*run)(int argc, char **argv);
    const opt_command *options; /* its option table; NULL: none in a table */
} subcommand;

/* Every subcommand, in the order the usage lists them. */
extern const subcommand subcommands[];
extern const size_t n_subcommands;

int cmd_bench(int argc, char **argv);
int cmd_crawl(int argc, char **argv);
int cmd_help(int argc, char **argv);
int cmd_version(int argc, char **argv);
int cmd_warc_index(int argc, char **argv);

/* The option table of `sieve warc-index` (warc-index.c). */
extern const opt_command warc_index_command;

/* The general usage. */
void commands_usage(FILE *out);

#endif
