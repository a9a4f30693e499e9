/* journal-read.c - a journal's records read back: the parser that opening
 * and readers share, and the readers.
 *
 * A reader has its own descriptor and buffer, and reads the segment
 * being written only up to the tail the writer published (under a mutex)
 * after its last complete write, so it never sees a record in the making
 * nor bytes a failed write will cut. A record's checksum is checked each
 * time it is read, by readers as by opening. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "bytes.h"
#include "io.h"
#include "journal-internal.h"

struct journal_reader {
    journal *j;
    uint32_t seg;
    uint64_t off; /* the next record */
    bool at_tail; /* cur.limit is the published tail, which may grow */
    cursor cur;
    char msg[MSG_SIZE];
};

/* ---- reading records ---- */

/* Points *p at bytes [off, off + n) of the cursor's file, reading them if
 * needed. SIEVE_ETRUNCATED if they pass the limit. */
static int cursor_get(cursor *c, uint64_t off, size_t n, const unsigned char **p)
{
    if (off > c->limit || n > c->limit - off)
        return SIEVE_ETRUNCATED;
    if (off >= c->buf_off && off + n <= c->buf_off + c->len) {
        *p = c->buf + (off - c->buf_off);
        return SIEVE_OK;
    }
    if (n > c->cap) { /* n is at most a largest record: checked before the call */
        unsigned char *b = realloc(c->buf, n);
        if (b == NULL)
            return SIEVE_ENOMEM;
        c->buf = b;
        c->cap = n;
    }
    uint64_t avail = c->limit - off;
    size_t want = avail < c->cap ? (size_t)avail : c->cap;
    c->len = 0;
    int rc = io_pread_all(c->fd, c->buf, want, off);
    if (rc != SIEVE_OK)
        return rc;
    c->buf_off = off;
    c->len = want;
    *p = c->buf;
    return SIEVE_OK;
}

int jnl_parse_record(cursor *c, uint64_t off, rec_kind *kind, rec_view *v)
{
    const unsigned char *p;
    int rc = cursor_get(c, off, REC_HEAD, &p);
    if (rc == SIEVE_ETRUNCATED) {
        *kind = REC_SHORT;
        return SIEVE_OK;
    }
    if (rc != SIEVE_OK)
        return rc;
    uint32_t len = le_get32(p);
    if (len > JOURNAL_PAYLOAD_MAX) {
        *kind = REC_LENGTH;
        return SIEVE_OK;
    }
    rc = cursor_get(c, off, REC_OVERHEAD + len, &p);
    if (rc == SIEVE_ETRUNCATED) {
        *kind = REC_SHORT;
        return SIEVE_OK;
    }
    if (rc != SIEVE_OK)
        return rc;
    v->type = p[4];
    v->len = len;
    v->payload = p + REC_HEAD;
    v->size = REC_OVERHEAD + len;
    if (le_get32(p + REC_HEAD + len) != (uint32_t)XXH3_64bits(p, REC_HEAD + len))
        *kind = REC_CHECKSUM;
    else if (v->type != TYPE_END)
        *kind = REC_OK;
    else
        *kind = len == 8 && le_get64(v->payload) == off ? REC_END : REC_TYPE;
    return SIEVE_OK;
}

const char *jnl_kind_text(rec_kind k)
{
    switch (k) {
    case REC_SHORT:
        return "record cut short";
    case REC_LENGTH:
        return "record length above the limit";
    case REC_CHECKSUM:
        return "record checksum mismatch";
    case REC_TYPE:
        return "record of type 0 that is not an end record";
    default:
        return "valid record";
    }
}

int jnl_kind_status(rec_kind k)
{
    switch (k) {
    case REC_SHORT:
        return SIEVE_ETRUNCATED;
    case REC_CHECKSUM:
        return SIEVE_ECHECKSUM;
    default:
        return SIEVE_EFORMAT;
    }
}

int jnl_valid_record_after(cursor *c, uint64_t from, bool *found)
{
    *found = false;
    for (uint64_t p = from; p + REC_OVERHEAD <= c->limit; p++) {
        rec_kind k;
        rec_view v;
        int rc = jnl_parse_record(c, p, &k, &v);
        if (rc != SIEVE_OK)
            return rc;
        if (k == REC_OK || k == REC_END) {
            *found = true;
            return SIEVE_OK;
        }
    }
    return SIEVE_OK;
}

/* ---- readers ---- */

int journal_reader_open(journal *j, journal_pos from, journal_reader **out)
{
    if (j == NULL || out == NULL)
        return SIEVE_EINVAL;
    *out = NULL;
    journal_pos begin = journal_begin(j), tail = journal_tail(j);
    if (journal_pos_cmp(from, begin) < 0 || journal_pos_cmp(from, tail) > 0 ||
        from.offset < HEADER_SIZE)
        return SIEVE_EINVAL;
    journal_reader *r = calloc(1, sizeof *r);
    if (r == NULL || (r->cur.buf = malloc(READ_BUF)) == NULL) {
        free(r);
        return SIEVE_ENOMEM;
    }
    r->cur.cap = READ_BUF;
    r->cur.fd = -1;
    r->j = j;
    r->seg = from.segment;
    r->off = from.offset;
    *out = r;
    return SIEVE_OK;
}

void journal_reader_close(journal_reader *r)
{
    if (r == NULL)
        return;
    if (r->cur.fd >= 0)
        close(r->cur.fd);
    free(r->cur.buf);
    free(r);
}

journal_pos journal_reader_tell(const journal_reader *r)
{
    return (journal_pos){r->seg, r->off};
}

const char *journal_reader_message(const journal_reader *r)
{
    return r->msg;
}

/* Opens the reader's segment, checking its header. */
static int reader_open_segment(journal_reader *r)
{
    char path[PATH_MAX];
    uint64_t size;
    int fd = jnl_open_segment(r->j, r->seg, O_RDONLY, &size, path, sizeof path, r->msg);
    if (fd < 0)
        return SIEVE_EIO;
    int rc = jnl_check_header(fd, path, r->seg, size, NULL, r->msg);
    if (rc != SIEVE_OK) {
        close(fd);
        return rc;
    }
    r->cur.fd = fd;
    r->cur.len = 0;
    r->cur.limit = size;
    return SIEVE_OK;
}

/* Sets how far the reader may go in its segment: the published tail in
 * the segment being written, the file's end in a full one. JOURNAL_END
 * when the reader is at the tail. */
static int reader_limit(journal_reader *r)
{
    if (r->cur.fd >= 0 && (!r->at_tail || r->off < r->cur.limit))
        return SIEVE_OK; /* a full segment, or what was published is not read yet */
    journal_pos t = journal_tail(r->j);
    if (r->seg > t.segment || (r->seg == t.segment && r->off >= t.offset))
        return JOURNAL_END;
    if (r->cur.fd < 0) {
        int rc = reader_open_segment(r);
        if (rc != SIEVE_OK)
            return rc;
    }
    r->at_tail = r->seg == t.segment;
    if (r->at_tail) {
        r->cur.limit = t.offset;
        return SIEVE_OK;
    }
    /* Full since the reader last looked: its size is final now. */
    struct stat st;
    if (fstat(r->cur.fd, &st) != 0) {
        char path[PATH_MAX];
        jnl_path_of(r->j, r->seg, path, sizeof path);
        jnl_say(r->msg, "%s: %s", path, strerror(errno));
        return SIEVE_EIO;
    }
    r->cur.limit = (uint64_t)st.st_size;
    return SIEVE_OK;
}

static void reader_next_segment(journal_reader *r)
{
    close(r->cur.fd);
    r->cur.fd = -1;
    r->cur.len = 0;
    r->at_tail = false;
    r->seg++;
    r->off = HEADER_SIZE;
}

int journal_read(journal_reader *r, uint8_t *type, const void **payload, uint32_t *len,
                 journal_pos *pos)
{
    for (;;) {
        int rc = reader_limit(r);
        if (rc != SIEVE_OK)
            return rc;
        rec_kind k;
        rec_view v;
        rc = jnl_parse_record(&r->cur, r->off, &k, &v);
        if (rc != SIEVE_OK) {
            char path[PATH_MAX];
            jnl_path_of(r->j, r->seg, path, sizeof path);
            jnl_say(r->msg, "%s: offset %" PRIu64 ": reading: %s", path, r->off, strerror(errno));
            return rc;
        }
        if (k == REC_END) {
            reader_next_segment(r);
            continue;
        }
        if (k != REC_OK) {
            char path[PATH_MAX];
            jnl_path_of(r->j, r->seg, path, sizeof path);
            jnl_say(r->msg, "%s: offset %" PRIu64 ": %s", path, r->off, jnl_kind_text(k));
            return jnl_kind_status(k);
        }
        if (type != NULL)
            *type = v.type;
        if (payload != NULL)
            *payload = v.payload;
        if (len != NULL)
            *len = v.len;
        if (pos != NULL)
            *pos = (journal_pos){r->seg, r->off};
        r->off += v.size;
        return SIEVE_OK;
    }
}
