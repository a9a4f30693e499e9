/* main.c - the sieve command: dispatches to a subcommand. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "crawl-options.h"
#include "sieve/sieve.h"

const subcommand subcommands[] = {
    {"crawl", NULL, "crawl the web from seed files and URLs", cmd_crawl, &crawl_command},
    {"bench", "[OPTIONS]", "compare the memory and speed of the Bloom and hash-set frontiers",
     cmd_bench, NULL},
    {"warc-index", NULL, "write the CDXJ index of WARC files", cmd_warc_index, &warc_index_command},
    {"version", "", "print the version", cmd_version, NULL},
    {"help", "[COMMAND]", "describe the commands, or one command's options", cmd_help, NULL},
};
const size_t n_subcommands = sizeof subcommands / sizeof *subcommands;

void commands_usage(FILE *out)
{
    fprintf(out, "usage: sieve COMMAND [OPTIONS]\n\ncommands:\n");
    for (size_t i = 0; i < n_subcommands; i++)
        fprintf(out, "  %-10s %s\n", subcommands[i].name, subcommands[i].summary);
    fprintf(out, "\n'sieve COMMAND --help' describes a command's options.\n");
}

int cmd_version(int argc, char **argv)
{
    (void)argc, (void)argv;
    printf("sieve %s\n", sieve_version());
    return EXIT_OK;
}

/* The stack of threads created without attributes: curl's resolver
 * starts one per name it looks up, and with glibc's default (8 MiB, from
 * the stack limit) few of those stacks fit glibc's cache of freed ones, so
 * a crawl over many hosts maps and unmaps a stack per host, and each unmap
 * flushes every core's TLB. getaddrinfo() needs far less than this. The
 * crawl's own workers set their stack themselves. */
#define THREAD_STACK_BYTES ((size_t)512 << 10)

static void small_thread_stacks(void)
{
#if defined(__GLIBC__)
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0)
        return;
    if (pthread_attr_setstacksize(&attr, THREAD_STACK_BYTES) == 0)
        (void)pthread_setattr_default_np(&attr);
    pthread_attr_destroy(&attr);
#endif
}

int main(int argc, char **argv)
{
    small_thread_stacks();
    if (argc < 2) {
        commands_usage(stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--version") == 0)
        return cmd_version(argc - 1, argv + 1);
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0)
        return cmd_help(argc - 1, argv + 1);
    for (size_t i = 0; i < n_subcommands; i++)
        if (strcmp(cmd, subcommands[i].name) == 0)
            return subcommands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "sieve: unknown command '%s'\n", cmd);
    commands_usage(stderr);
    return EXIT_USAGE;
}
