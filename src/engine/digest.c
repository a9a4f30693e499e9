/* digest.c - SHA-1 from libcrypto's EVP interface, never our own code.
 *
 * The implementation is fetched once per process (EVP_MD_fetch), so a
 * transfer's digest does not look SHA-1 up in the provider tables, which
 * takes a lock; each transfer then costs one context. The text is the one
 * WARC-Payload-Digest and CDX indexes carry, so a record's digest can be
 * compared with its archived copy's. */
#include <pthread.h>
#include <string.h>

#include <openssl/evp.h>

#include "digest.h"

static EVP_MD *sha1_md;
static pthread_once_t sha1_once = PTHREAD_ONCE_INIT;

static void sha1_fetch(void)
{
    sha1_md = EVP_MD_fetch(NULL, "SHA1", NULL);
}

bool digest_start(digest *d)
{
    pthread_once(&sha1_once, sha1_fetch);
    d->ctx = sha1_md != NULL ? EVP_MD_CTX_new() : NULL;
    if (d->ctx != NULL && EVP_DigestInit_ex(d->ctx, sha1_md, NULL) == 1)
        return true;
    digest_drop(d);
    return false;
}

void digest_add(digest *d, const void *data, size_t n)
{
    if (d->ctx != NULL && n > 0)
        EVP_DigestUpdate(d->ctx, data, n);
}

/* 20 bytes are 160 bits: 32 groups of five, no padding. */
static void base32_20(const unsigned char in[20], char out[33])
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    for (int i = 0; i < 32; i++) {
        int bit = i * 5, byte = bit / 8, shift = bit % 8;
        unsigned v = (unsigned)in[byte] << 8 | (byte + 1 < 20 ? in[byte + 1] : 0);
        out[i] = alphabet[(v >> (11 - shift)) & 31];
    }
    out[32] = '\0';
}

void digest_end(digest *d, char out[DIGEST_SIZE])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    if (d->ctx == NULL || EVP_DigestFinal_ex(d->ctx, md, &n) != 1 || n != 20) {
        out[0] = '\0';
    } else {
        memcpy(out, "sha1:", 5);
        base32_20(md, out + 5);
    }
    digest_drop(d);
}

void digest_drop(digest *d)
{
    EVP_MD_CTX_free(d->ctx);
    d->ctx = NULL;
}
