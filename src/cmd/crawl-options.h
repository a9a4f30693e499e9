/* crawl-options.h - parsing `sieve crawl`'s command line. */
#ifndef SIEVE_CRAWL_OPTIONS_H
#define SIEVE_CRAWL_OPTIONS_H

#include <stdio.h>

#include "crawl.h"

/* Fills o with the defaults. */
void crawl_opts_init(crawl_opts *o);

/* Parses argv (argv[0] is "crawl"). Returns 0, 1 when --help was printed,
 * or -1 after telling stderr what is wrong. Strings point into argv. */
int crawl_opts_parse(crawl_opts *o, int argc, char **argv);

/* Frees the lists crawl_opts_parse() built. */
void crawl_opts_free(crawl_opts *o);

void crawl_usage(FILE *out);

#endif
