/* crawl-options.h - `sieve crawl`'s command line: its option table and
 * the settings it fills, the engine's options among them. */
#ifndef SIEVE_CRAWL_OPTIONS_H
#define SIEVE_CRAWL_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "options.h"
#include "sieve/crawl.h"

typedef struct crawl_cli {
    sieve_crawl_options eng;  /* everything the engine is told */
    const char *output;       /* -o FILE; NULL: standard output ("-" gives NULL) */
    bool quiet;               /* -q: no status line */
    bool stats;               /* --stats was given */
    const char *stats_path;   /* its FILE; NULL: standard output ("-" gives NULL) */
    double stats_interval_s;  /* --stats-interval */
    const char *const *seeds; /* the operands: seed files and URLs */
    size_t n_seeds;

    /* Archiving: a WARC archive of every transfer, and its CDXJ index */
    const char *warc;       /* --warc FILE; NULL: no archive */
    uint64_t warc_max_size; /* --warc-max-size: rotate past it; 0: one file */
    int warc_gzip_level;    /* --warc-gzip-level: 1 .. 9 */
    const char *cdxj;       /* --cdxj FILE, written at the end */
} crawl_cli;

extern const opt_command crawl_command;

/* Fills o with the defaults: the engine's, and the command's own. */
void crawl_cli_init(crawl_cli *o);

/* Parses argv (argv[0] is "crawl") into o, which crawl_cli_init() filled.
 * Returns 0; 1 when --help was printed; -1 after telling stderr what is
 * wrong, naming the option. Strings point into argv or into p. */
int crawl_cli_parse(crawl_cli *o, opt_parsed *p, int argc, char **argv);

/* Frees what crawl_cli_parse() allocated. */
void crawl_cli_free(crawl_cli *o, opt_parsed *p);

#endif
