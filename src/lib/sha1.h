/* sha1.h - SHA-1 digests of streamed bytes, written as web archives
 * write them (internal).
 *
 * The crawl engine's record digest and the WARC writer's block and
 * payload digests are the same thing: libcrypto's SHA-1, never our own
 * code, given as "sha1:" and the 20 bytes in RFC 4648 base32 - what
 * Heritrix, wget, warcio and pywb write, what CDX indexes carry and what
 * replay tools compare. So a JSON record's digest can be matched with its
 * archived copy's. */
#ifndef SIEVE_SHA1_H
#define SIEVE_SHA1_H

#include <stdbool.h>
#include <stddef.h>

/* "sha1:" and 32 base32 characters, with the NUL. */
#define SIEVE_SHA1_TEXT_SIZE 38

/* A digest. Zero-initialized it is idle. Its libcrypto context outlives
 * a digest, so a holder that digests again (a transfer slot, a spare WARC
 * record) starts the next one without allocating. */
typedef struct sieve_sha1 {
    void *ctx;    /* libcrypto's EVP_MD_CTX; NULL until the first start */
    bool running; /* between start and end */
} sieve_sha1;

/* Whether libcrypto has SHA-1 (a FIPS build may not). The implementation
 * is fetched once per process, so starting a digest does not look it up
 * in the provider tables, which takes a lock. */
bool sieve_sha1_available(void);

/* Starts a digest, dropping one running. SIEVE_OK, or SIEVE_ENOMEM when
 * out of memory or without SHA-1 (then h is idle). */
int sieve_sha1_start(sieve_sha1 *h);

/* Adds len bytes to a running digest; an idle one ignores them. */
void sieve_sha1_add(sieve_sha1 *h, const void *data, size_t len);

/* Ends a running digest and writes "sha1:BASE32" into out. The context
 * stays for the next start. */
void sieve_sha1_end(sieve_sha1 *h, char out[SIEVE_SHA1_TEXT_SIZE]);

/* Frees the context; h is idle and can be started again. */
void sieve_sha1_free(sieve_sha1 *h);

/* RFC 4648 base32 of 20 bytes: 32 characters and a NUL. */
void sieve_base32_20(const unsigned char in[20], char out[33]);

#endif
