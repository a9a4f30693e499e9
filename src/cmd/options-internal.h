/* options-internal.h - what options.c and options-doc.c share: the
 * accessors of a row's field and how a size is written. */
#ifndef SIEVE_CMD_OPTIONS_INTERNAL_H
#define SIEVE_CMD_OPTIONS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "options.h"

/* The field at off in settings s. */
const void *opt_cfield(const void *s, size_t off);

/* A row's field read as its kind stores it (by the row's size). */
uint64_t opt_get_uint(const void *s, const opt_def *d);
double opt_get_double(const void *s, const opt_def *d);
const char *opt_get_string(const void *s, const opt_def *d);

/* Writes a byte count the way --help shows it: 10M rather than 10485760. */
void opt_format_size(char *buf, size_t cap, double v);

/* Whether the row takes an argument. */
bool opt_takes_arg(const opt_def *d);

#endif
