/* warc-read.c - WARC records read back: for the index, a resume and tests.
 *
 * A reader walks a file from its start, record by record, and tells three
 * endings apart, which is what a resumed crawl needs to know before it
 * appends: the file ends cleanly after a record; it ends inside a record
 * (a torn tail, safe to cut); or it holds something that is no record
 * (cutting there would lose data). A byte that could still begin or
 * continue a record counts as torn, so every prefix of a valid file reads
 * as torn or clean, never as garbage. Blank lines (CR and LF bytes)
 * after a record's CRLF CRLF are passed over, as warcio does: some
 * writers put them there, and they hold no data.
 *
 * Plain files are read through one buffer; a block the caller does not
 * want is skipped with lseek(). Gzip files (told by their magic, not their
 * name) are inflated member by member, and each member must hold exactly
 * one record - as this writer, warcio and Heritrix write them - so that a
 * record's stored offset and length are its member's and point a reader
 * straight at it. A member cut short is a torn tail; inflate's errors
 * (bad data, CRC or length mismatch) are garbage. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "warc-internal.h"

#define IN_SIZE    (64 * 1024)
#define OUT_SIZE   (64 * 1024)
#define MAX_HEADER (1u << 20)
#define NOT_WARC   "no record here: a record starts with a 'WARC/' version line"

struct warc_reader {
    int fd;
    bool gz;
    int err;         /* sticky */
    const char *why; /* what a SIEVE_EFORMAT found */
    uint64_t file_size;
    uint64_t end; /* past the last record read whole */

    /* Compressed input (gzip). */
    unsigned char in[IN_SIZE];
    size_t in_len;
    uint64_t in_off; /* file offset of in[0] */
    bool in_eof;
    z_stream z;
    bool z_ready;
    bool member_end; /* the current member's stream ended */

    /* The data stream: the file (plain) or the member's inflated bytes. */
    unsigned char out[OUT_SIZE];
    size_t out_pos, out_len;
    uint64_t out_off; /* plain: file offset of out[0] */

    warc_buf header;
};

int warc_reader_open(warc_reader **out, const char *path)
{
    *out = NULL;
    warc_reader *r = calloc(1, sizeof *r);
    if (!r)
        return SIEVE_ENOMEM;
    r->fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (r->fd < 0 || fstat(r->fd, &st) != 0) {
        int e = errno;
        warc_reader_free(r);
        errno = e;
        return SIEVE_EIO;
    }
    r->file_size = (uint64_t)st.st_size;
    /* A file of the one byte 0x1f is a gzip file cut after its first
     * byte: torn, where read as plain it would be garbage. */
    unsigned char magic[2];
    ssize_t got = pread(r->fd, magic, 2, 0);
    r->gz = got >= 1 && magic[0] == 0x1f && (got == 1 || magic[1] == 0x8b);
    *out = r;
    return SIEVE_OK;
}

void warc_reader_free(warc_reader *r)
{
    if (!r)
        return;
    if (r->z_ready)
        inflateEnd(&r->z);
    if (r->fd >= 0)
        close(r->fd);
    warc_buf_free(&r->header);
    free(r);
}

uint64_t warc_reader_end(const warc_reader *r)
{
    return r->end;
}

const char *warc_reader_why(const warc_reader *r)
{
    return r->why ? r->why : "not a WARC record";
}

/* A SIEVE_EFORMAT, and what was found. */
static int garbage(warc_reader *r, const char *why)
{
    r->why = why;
    return SIEVE_EFORMAT;
}

static ssize_t read_some(int fd, void *buf, size_t len)
{
    ssize_t n;
    do
        n = read(fd, buf, len);
    while (n < 0 && errno == EINTR);
    return n;
}

/* Compressed bytes consumed by inflate so far: a file offset. */
static uint64_t raw_pos(const warc_reader *r)
{
    return r->in_off + (uint64_t)(r->in_len - r->z.avail_in);
}

/* Reads more compressed input once inflate has used what it had. */
static int more_in(warc_reader *r)
{
    if (r->z.avail_in || r->in_eof)
        return SIEVE_OK;
    r->in_off += r->in_len;
    ssize_t n = read_some(r->fd, r->in, sizeof r->in);
    if (n < 0)
        return SIEVE_EIO;
    r->in_len = (size_t)n;
    r->in_eof = n == 0;
    r->z.next_in = r->in;
    r->z.avail_in = (unsigned)n;
    return SIEVE_OK;
}

/* Inflates more of the current member into out. Returns the bytes made,
 * 0 when the member ended, or an error. */
static long inflate_more(warc_reader *r)
{
    while (!r->member_end) {
        int rc = more_in(r);
        if (rc)
            return rc;
        r->z.next_out = r->out;
        r->z.avail_out = sizeof r->out;
        int zr = inflate(&r->z, Z_NO_FLUSH);
        size_t made = sizeof r->out - r->z.avail_out;
        if (zr == Z_STREAM_END)
            r->member_end = true;
        else if (zr == Z_BUF_ERROR && r->in_eof)
            return SIEVE_ETRUNCATED;
        else if (zr != Z_OK && zr != Z_BUF_ERROR)
            return zr == Z_MEM_ERROR ? SIEVE_ENOMEM : garbage(r, "damaged gzip data");
        if (made) {
            r->out_pos = 0;
            r->out_len = made;
            return (long)made;
        }
    }
    return 0;
}

/* Makes bytes available in out. Returns how many, 0 at the end of the
 * data (plain: the file; gzip: the member), or an error. */
static long fill(warc_reader *r)
{
    if (r->out_pos < r->out_len)
        return (long)(r->out_len - r->out_pos);
    if (r->gz)
        return inflate_more(r);
    r->out_off += r->out_len;
    r->out_pos = r->out_len = 0;
    ssize_t n = read_some(r->fd, r->out, sizeof r->out);
    if (n < 0)
        return SIEVE_EIO;
    r->out_len = (size_t)n;
    return (long)n;
}

/* What running out of data inside a record means: a plain file is torn;
 * a gzip member that ended there held a partial record. */
static int short_record(warc_reader *r)
{
    return r->gz ? garbage(r, "a gzip member that ends inside its record") : SIEVE_ETRUNCATED;
}

/* Passes over CR and LF bytes. Some writers put more than the one CRLF
 * CRLF after a block, and warcio reads past them too. Returns what fill()
 * returned last: bytes that follow, 0 at the end, or an error. */
static long skip_blank_lines(warc_reader *r)
{
    for (;;) {
        long n = fill(r);
        if (n <= 0)
            return n;
        while (r->out_pos < r->out_len &&
               (r->out[r->out_pos] == '\r' || r->out[r->out_pos] == '\n'))
            r->out_pos++;
        if (r->out_pos < r->out_len)
            return (long)(r->out_len - r->out_pos);
    }
}

/* Starts a record. SIEVE_EDRAINED at the clean end of the file. */
static int begin_record(warc_reader *r, uint64_t *offset)
{
    if (!r->gz) {
        long n = skip_blank_lines(r);
        if (n <= 0)
            return n == 0 ? SIEVE_EDRAINED : (int)n;
        *offset = r->out_off + r->out_pos;
        return SIEVE_OK;
    }
    int rc = more_in(r);
    if (rc)
        return rc;
    if (r->z.avail_in == 0 && r->in_eof)
        return SIEVE_EDRAINED;
    *offset = raw_pos(r);
    if (!r->z_ready) {
        if (inflateInit2(&r->z, 16 + MAX_WBITS) != Z_OK)
            return SIEVE_ENOMEM;
        r->z_ready = true;
        r->z.next_in = r->in;
        r->z.avail_in = (unsigned)r->in_len;
    } else if (inflateReset(&r->z) != Z_OK) {
        return garbage(r, "damaged gzip data");
    }
    r->member_end = false;
    r->out_pos = r->out_len = 0;
    return SIEVE_OK;
}

/* Whether the header read so far could still be the start of a record. */
static bool header_plausible(const warc_reader *r)
{
    size_t n = r->header.len < 5 ? r->header.len : 5;
    return n == 0 || memcmp(r->header.data, "WARC/", n) == 0;
}

/* Reads the header through its blank line into r->header. */
static int read_header(warc_reader *r)
{
    r->header.len = 0;
    size_t line_start = 0;
    for (;;) {
        long n = fill(r);
        if (n < 0)
            return (int)n;
        if (n == 0 && r->gz && r->header.len == 0)
            return garbage(r, "a gzip member with no record in it");
        if (n == 0)
            return header_plausible(r) ? short_record(r) : garbage(r, NOT_WARC);
        const unsigned char *p = r->out + r->out_pos;
        const unsigned char *nl = memchr(p, '\n', (size_t)n);
        size_t take = nl ? (size_t)(nl - p) + 1 : (size_t)n;
        if (r->header.len + take > MAX_HEADER)
            return garbage(r, "a record header over 1 MiB");
        if (warc_buf_add(&r->header, p, take))
            return SIEVE_ENOMEM;
        r->out_pos += take;
        if (!header_plausible(r))
            return garbage(r, NOT_WARC);
        if (!nl)
            continue;
        size_t line_len = r->header.len - line_start;
        const char *line = r->header.data + line_start;
        if (line_start > 0 && (line_len == 1 || (line_len == 2 && line[0] == '\r')))
            return SIEVE_OK;
        line_start = r->header.len;
    }
}

static bool parse_u64(const char *s, uint64_t *v)
{
    if (!*s)
        return false;
    uint64_t x = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || x > (UINT64_MAX - 9) / 10)
            return false;
        x = x * 10 + (uint64_t)(*s - '0');
    }
    *v = x;
    return true;
}

/* Drops n bytes of a plain file without reading them. n comes from a
 * Content-Length of up to 20 digits: compared, never added, so that a
 * hostile one cannot wrap the sum back into the file and loop the reader. */
static int seek_over(warc_reader *r, uint64_t n)
{
    uint64_t from = r->out_off + r->out_len;
    if (from > r->file_size || n > r->file_size - from)
        return SIEVE_ETRUNCATED;
    uint64_t at = from + n;
    if (lseek(r->fd, (off_t)at, SEEK_SET) < 0)
        return SIEVE_EIO;
    r->out_off = at;
    r->out_pos = r->out_len = 0;
    return SIEVE_OK;
}

/* Passes the block's len bytes to fn while it wants them. */
static int read_block(warc_reader *r, uint64_t len, warc_block_fn fn, void *ctx)
{
    bool want = fn != NULL;
    while (len) {
        if (!want && !r->gz && len > r->out_len - r->out_pos)
            return seek_over(r, len - (r->out_len - r->out_pos));
        long n = fill(r);
        if (n <= 0)
            return n == 0 ? short_record(r) : (int)n;
        size_t take = (uint64_t)n < len ? (size_t)n : (size_t)len;
        if (want)
            want = fn(ctx, r->out + r->out_pos, take);
        r->out_pos += take;
        len -= take;
    }
    return SIEVE_OK;
}

/* The record's closing CRLF CRLF, then (gzip) the end of its member. */
static int read_trailer(warc_reader *r)
{
    static const char trailer[4] = "\r\n\r\n";
    for (int i = 0; i < 4; i++) {
        long n = fill(r);
        if (n <= 0)
            return n == 0 ? short_record(r) : (int)n;
        if (r->out[r->out_pos++] != (unsigned char)trailer[i])
            return garbage(r, "no CRLF CRLF after the block its Content-Length gives");
    }
    if (!r->gz)
        return SIEVE_OK;
    long n = skip_blank_lines(r);
    if (n > 0)
        return garbage(r, "a gzip member holding more than one record");
    return (int)n;
}

static int next_record(warc_reader *r, warc_rec *rec, warc_block_fn fn, void *ctx)
{
    memset(rec, 0, sizeof *rec);
    int rc = begin_record(r, &rec->offset);
    if (rc)
        return rc;
    if ((rc = read_header(r)))
        return rc;
    warc_buf v = {0};
    bool ok = warc_field(r->header.data, r->header.len, "Content-Length", &v) &&
              parse_u64(v.data, &rec->content_length);
    warc_buf_free(&v);
    if (!ok)
        return garbage(r, "a record header without a valid Content-Length");
    if ((rc = read_block(r, rec->content_length, fn, ctx)) || (rc = read_trailer(r)))
        return rc;
    uint64_t end = r->gz ? raw_pos(r) : r->out_off + r->out_pos;
    rec->length = end - rec->offset;
    rec->gzip = r->gz;
    rec->header = r->header.data;
    rec->header_len = r->header.len;
    r->end = end;
    return SIEVE_OK;
}

int warc_reader_next(warc_reader *r, warc_rec *rec, warc_block_fn fn, void *ctx)
{
    if (r->err)
        return r->err;
    int rc = next_record(r, rec, fn, ctx);
    if (rc)
        r->err = rc;
    return rc;
}

bool warc_field(const char *header, size_t header_len, const char *name, warc_buf *out)
{
    out->len = 0;
    if (warc_buf_add(out, "", 0))
        return false;
    bool found = false;
    const char *p = header, *end = header + header_len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (warc_line_is(p, n, name)) {
            const char *v = (const char *)memchr(p, ':', n) + 1, *ve = p + n;
            while (v < ve && (*v == ' ' || *v == '\t'))
                v++;
            while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t' || ve[-1] == '\r'))
                ve--;
            if ((found && warc_buf_add(out, ", ", 2)) || warc_buf_add(out, v, (size_t)(ve - v)))
                return false;
            found = true;
        }
        p += n + 1;
    }
    return found;
}

/* Whether the file holds only NUL bytes from offset on: what a crash can
 * leave after the last write on filesystems that allocate ahead. */
static bool zeros_from(const char *path, uint64_t offset)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    unsigned char buf[4096];
    bool zeros = true;
    ssize_t n;
    while (zeros && (n = pread(fd, buf, sizeof buf, (off_t)offset)) > 0) {
        for (ssize_t i = 0; i < n; i++)
            zeros &= buf[i] == 0;
        offset += (uint64_t)n;
    }
    close(fd);
    return zeros;
}

int sieve_warc_complete_end(const char *path, uint64_t *end, uint64_t *records)
{
    if (!path || !end)
        return SIEVE_EINVAL;
    *end = 0;
    if (records)
        *records = 0;
    warc_reader *r;
    int rc = warc_reader_open(&r, path);
    if (rc)
        return rc;
    warc_rec rec;
    uint64_t count = 0;
    while ((rc = warc_reader_next(r, &rec, NULL, NULL)) == SIEVE_OK)
        count++;
    *end = warc_reader_end(r);
    warc_reader_free(r);
    if (records)
        *records = count;
    if (rc == SIEVE_EDRAINED)
        return SIEVE_OK;
    if (rc == SIEVE_EFORMAT && zeros_from(path, *end))
        return SIEVE_ETRUNCATED;
    return rc;
}
