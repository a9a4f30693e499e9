/* digest.h - the SHA-1 of a body as it streams, written as WARC writes
 * it: "sha1:" and the 20 bytes in RFC 4648 base32. */
#ifndef SIEVE_DIGEST_H
#define SIEVE_DIGEST_H

#include <stdbool.h>
#include <stddef.h>

/* "sha1:" and 32 base32 characters, with the NUL. */
#define DIGEST_SIZE 38

typedef struct digest {
    void *ctx; /* libcrypto's EVP_MD_CTX; NULL: not started */
} digest;

/* Starts a digest; false when out of memory (or libcrypto has no SHA-1). */
bool digest_start(digest *d);

void digest_add(digest *d, const void *data, size_t n);

/* Writes the digest into out and frees its state. */
void digest_end(digest *d, char out[DIGEST_SIZE]);

/* Frees the state of a digest never ended. A digest not started is fine. */
void digest_drop(digest *d);

#endif
