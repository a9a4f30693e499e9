/* bytes.h - small byte-level helpers shared by libsieve's modules
 * (internal): LEB128 lengths for the FIFO and the hash set's arena, the
 * URI character classes canonicalization and robots.txt agree on,
 * sixteen-byte vectors for the scans that see every byte, and the
 * little-endian integers of the files the frontier writes. */
#ifndef SIEVE_BYTES_H
#define SIEVE_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Bytes varint_put() writes for v. */
static inline size_t varint_len(size_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/* Writes v as LEB128 (7 bits a byte, low first); returns the bytes written. */
static inline size_t varint_put(unsigned char *p, size_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (unsigned char)v;
    return n;
}

/* Reads what varint_put() wrote (so no bounds check); returns its length. */
static inline size_t varint_get(const unsigned char *p, size_t *v)
{
    size_t r = 0, n = 0;
    unsigned shift = 0;
    while (p[n] & 0x80) {
        r |= (size_t)(p[n++] & 0x7f) << shift;
        shift += 7;
    }
    *v = r | (size_t)p[n++] << shift;
    return n;
}

/* Writes the n low bytes of v, low first: file formats are written byte
 * by byte, so they read back the same on any host. */
static inline void le_put(unsigned char *p, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* Reads what le_put() wrote. */
static inline uint64_t le_get(const unsigned char *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* The fixed widths, spelled out byte by byte: GCC at -O2 turns these into
 * one load or store, where it leaves le_put()'s and le_get()'s loops a
 * byte at a time (the journal encodes and decodes a record per URL). */
static inline void le_put16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}

static inline void le_put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

static inline void le_put64(unsigned char *p, uint64_t v)
{
    le_put32(p, (uint32_t)v);
    le_put32(p + 4, (uint32_t)(v >> 32));
}

static inline uint16_t le_get16(const unsigned char *p)
{
    return (uint16_t)(p[0] | (unsigned)p[1] << 8);
}

static inline uint32_t le_get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t le_get64(const unsigned char *p)
{
    return (uint64_t)le_get32(p) | (uint64_t)le_get32(p + 4) << 32;
}

/* RFC 3986 unreserved: ALPHA DIGIT - . _ ~ */
static inline bool is_unreserved(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_' || c == '~';
}

/* The value of a hex digit, or -1. */
static inline int hex_value(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* 16 bytes as one vector: GCC's and clang's vector extension, SSE2 on
 * x86-64, NEON on arm64, plain words elsewhere. A comparison gives 0xff
 * in the bytes where it holds. */
typedef uint8_t bytes16 __attribute__((vector_size(16)));

static inline bytes16 bytes16_load(const void *p)
{
    bytes16 v;
    memcpy(&v, p, 16);
    return v;
}

/* Whether any byte of v is nonzero. */
static inline bool bytes16_any(bytes16 v)
{
    uint64_t half[2];
    memcpy(half, &v, 16);
    return (half[0] | half[1]) != 0;
}

#endif
