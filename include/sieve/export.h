/* sieve/export.h - which declarations the shared library exports.
 *
 * libsieve is built with hidden visibility: a function is part of the
 * ABI only when its declaration carries SIEVE_API, so internal helpers
 * shared between the library's files never leak into its symbol table
 * (tests/test-symbols.sh checks that every exported name starts with
 * "sieve_"). */
#ifndef SIEVE_EXPORT_H
#define SIEVE_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define SIEVE_API __attribute__((visibility("default")))
#else
#define SIEVE_API
#endif

#endif
