/* main.c - the sieve command: dispatches to a subcommand. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "sieve/sieve.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: sieve COMMAND [OPTIONS]\n"
                 "\n"
                 "commands:\n"
                 "  crawl     crawl the web from a seed list\n"
                 "  bench     compare the memory and speed of the Bloom and hash-set frontiers\n"
                 "  version   print the version\n"
                 "\n"
                 "'sieve COMMAND --help' describes a command's options.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "crawl") == 0)
        return cmd_crawl(argc - 1, argv + 1);
    if (strcmp(cmd, "bench") == 0)
        return cmd_bench(argc - 1, argv + 1);
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        printf("sieve %s\n", sieve_version());
        return EXIT_OK;
    }
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        usage(stdout);
        return EXIT_OK;
    }
    fprintf(stderr, "sieve: unknown command '%s'\n", cmd);
    usage(stderr);
    return EXIT_USAGE;
}
