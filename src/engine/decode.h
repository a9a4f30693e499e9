/* decode.h - a response body's content coding, undone as it streams in.
 *
 * curl is told not to decode (CURLOPT_HTTP_CONTENT_DECODING 0), so the
 * embedder's wire callbacks get the body as the server sent it; the
 * engine decodes it here for everything else. Only the codings the
 * engine asks for are read: gzip (x-gzip) and deflate, zlib's. */
#ifndef SIEVE_DECODE_H
#define SIEVE_DECODE_H

#include <stdbool.h>
#include <stddef.h>

/* The content coding of a response, from its Content-Encoding headers. */
typedef enum decode_coding {
    DECODE_IDENTITY = 0,
    DECODE_GZIP,
    DECODE_DEFLATE,
    DECODE_UNSUPPORTED, /* another coding, or several stacked */
} decode_coding;

/* The Accept-Encoding the engine sends: what decoder_feed() can undo. */
#define DECODE_ACCEPT "gzip, deflate"

/* Folds one Content-Encoding header value (len bytes, not NUL-terminated)
 * into the coding so far: a list of codings, "identity" ignored. */
decode_coding decode_coding_add(decode_coding so_far, const char *value, size_t len);

typedef struct decoder decoder;

/* Where decoded bytes go: returns n to go on, anything less to stop. */
typedef size_t (*decode_sink)(void *ctx, const char *data, size_t n);

/* What decoder_feed() says. */
typedef enum decode_status {
    DECODE_OK = 0,
    DECODE_STOP,    /* the sink asked to stop */
    DECODE_CORRUPT, /* not valid compressed data */
    DECODE_NOMEM,
} decode_status;

/* A decoder for coding (gzip or deflate); NULL when out of memory. */
decoder *decoder_new(decode_coding coding);

/* Decodes the next n bytes of the body into sink. After the end of the
 * compressed stream, a gzip body may go on with another member (RFC 1952);
 * anything else after it is ignored, as browsers do. */
decode_status decoder_feed(decoder *d, const char *data, size_t n, decode_sink sink, void *ctx);

/* Whether the compressed stream has ended (true too when nothing was fed:
 * an empty body holds no stream to cut). */
bool decoder_complete(const decoder *d);

/* NULL is a no-op. */
void decoder_free(decoder *d);

#endif
