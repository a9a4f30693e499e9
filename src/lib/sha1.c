/* sha1.c - SHA-1 from libcrypto's EVP interface, in base32 (sha1.h). */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include <openssl/evp.h>

#include "sha1.h"
#include "sieve/status.h"

static EVP_MD *sha1_md;
static pthread_once_t sha1_once = PTHREAD_ONCE_INIT;

static void sha1_fetch(void)
{
    sha1_md = EVP_MD_fetch(NULL, "SHA1", NULL);
}

bool sieve_sha1_available(void)
{
    pthread_once(&sha1_once, sha1_fetch);
    return sha1_md != NULL;
}

int sieve_sha1_start(sieve_sha1 *h)
{
    h->running = false;
    if (!sieve_sha1_available())
        return SIEVE_ENOMEM;
    if (!h->ctx)
        h->ctx = EVP_MD_CTX_new();
    if (!h->ctx || EVP_DigestInit_ex(h->ctx, sha1_md, NULL) != 1) {
        sieve_sha1_free(h);
        return SIEVE_ENOMEM;
    }
    h->running = true;
    return SIEVE_OK;
}

void sieve_sha1_add(sieve_sha1 *h, const void *data, size_t len)
{
    if (len && h->running)
        EVP_DigestUpdate(h->ctx, data, len);
}

void sieve_sha1_end(sieve_sha1 *h, char out[SIEVE_SHA1_TEXT_SIZE])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    EVP_DigestFinal_ex(h->ctx, md, &n);
    h->running = false;
    memcpy(out, "sha1:", 5);
    sieve_base32_20(md, out + 5);
}

void sieve_sha1_free(sieve_sha1 *h)
{
    EVP_MD_CTX_free(h->ctx);
    h->ctx = NULL;
    h->running = false;
}

void sieve_base32_20(const unsigned char in[20], char out[33])
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    /* 20 bytes are 160 bits: four groups of five bytes, eight characters
     * each, no padding. */
    for (int g = 0; g < 4; g++) {
        const unsigned char *b = in + 5 * g;
        uint64_t v = (uint64_t)b[0] << 32 | (uint64_t)b[1] << 24 | (uint64_t)b[2] << 16 |
                     (uint64_t)b[3] << 8 | b[4];
        for (int i = 7; i >= 0; i--, v >>= 5)
            out[8 * g + i] = alphabet[v & 31];
    }
    out[32] = '\0';
}
