/* commands.h - the sieve command's subcommands, one file each. Each takes
 * argv after the subcommand name (argv[0] is the subcommand) and returns
 * the process exit status. */
#ifndef SIEVE_COMMANDS_H
#define SIEVE_COMMANDS_H

/* Exit statuses shared by the subcommands. */
enum {
    EXIT_OK = 0,
    EXIT_FAILURE_RUN = 1, /* the job failed */
    EXIT_USAGE = 2,       /* bad arguments */
    EXIT_INTERRUPTED = 130,
};

int cmd_bench(int argc, char **argv);
int cmd_crawl(int argc, char **argv);

#endif
