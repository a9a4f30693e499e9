/* checkpoint.c - the checkpoint file: a frontier's seen-set and queue in
 * memory at one journal position.
 *
 * All integers are little-endian, written byte by byte:
 *
 *     header, 128 bytes
 *       0  8 magic "SIEVECP\0"
 *       8  4 format version (1)
 *      12  4 flags: bit 0, the queue was spilling (H is valid)
 *      16  4 Bloom layers
 *      20  4 P's segment
 *      24  8 P's offset
 *      32  4 H's segment
 *      36  8 H's offset
 *      44  8 keys the newest layer had taken
 *      52  8 URLs in the list
 *      60  8 bytes of the list
 *      68  8 URLs waiting in the journal at P
 *      76  8 URLs done at P
 *      84  8 bytes of the layers' arrays
 *      92  8 XXH3-64 of the layers' arrays
 *     100  8 XXH3-64 of the list
 *     108  4 segment of the push record that starts H's chain
 *     112  8 its offset (push-record.h: H may be a front-coded URL)
 *     120  8 XXH3-64 of bytes 0..119
 *     128  . the layers' arrays, layer 0 first, each as the filter holds
 *            it in memory (64-bit words, little-endian on the machines
 *            this builds for; the format version would change otherwise)
 *       .  . the list: per URL a 4-byte tag, a 4-byte length, the bytes
 *            of its entry (entry.h: the URL, or its data, a NUL and the
 *            URL)
 *
 * The list sits after the layers at an offset known from the start, so a
 * writer can put the list down first (at one instant, under the
 * frontier's lock) and copy the layers after, a piece at a time, while
 * pushes go on: bits are only ever set, so a copy begun after P holds
 * every bit set before P, and the journal from P sets the rest again.
 *
 * The reader checks the header's checksum and the file's size before it
 * reads anything else, then the layers' and the list's checksums before
 * the caller queues a URL, so a damaged file is refused whole, with its
 * name and what to do, and never half used. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "bytes.h"
#include "checkpoint.h"
#include "io.h"
#include "sieve/status.h"

#define MAGIC         "SIEVECP" /* with its NUL: 8 bytes */
#define VERSION       1u
#define HEADER        128u
#define FLAG_SPILLING 1u
#define ENTRY_HEAD    8u
#define IO_BUF        (1u << 20)
#define ADVICE        "remove it to read the whole journal instead"

struct ckpt_writer {
    int fd;
    char path[600], tmp[620];
    char *dir;
    unsigned char *buf; /* the list, until it is written at list_off */
    size_t used;
    uint64_t layer_bytes, layers_put, list_off, list_bytes, urls;
    XXH3_state_t *layers_sum, *list_sum;
};

struct ckpt_reader {
    int fd;
    char path[600];
    ckpt_info info;
    uint64_t layers_sum, list_sum;
    uint64_t layers_read;
    XXH3_state_t *sum;
    unsigned char *buf; /* the list, read in pieces */
    size_t cap, at, end;
    uint64_t list_left; /* list bytes not yet in buf */
};

static int say(char *msg, size_t cap, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int say(char *msg, size_t cap, int rc, const char *fmt, ...)
{
    if (msg != NULL && cap > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, cap, fmt, ap);
        va_end(ap);
    }
    return rc;
}

static int say_errno(char *msg, size_t cap, const char *what, const char *path)
{
    int e = errno;
    say(msg, cap, SIEVE_EIO, "%s %s: %s", what, path, strerror(e));
    errno = e;
    return SIEVE_EIO;
}

/* ---- writing ---- */

int ckpt_writer_open(ckpt_writer **out, const char *dir, uint64_t layer_bytes, char *msg,
                     size_t cap)
{
    ckpt_writer *w = calloc(1, sizeof *w);
    if (w == NULL)
        return SIEVE_ENOMEM;
    w->fd = -1;
    w->buf = malloc(IO_BUF);
    w->dir = strdup(dir);
    w->layers_sum = XXH3_createState();
    w->list_sum = XXH3_createState();
    if (w->buf == NULL || w->dir == NULL || w->layers_sum == NULL || w->list_sum == NULL) {
        ckpt_writer_abort(w);
        return SIEVE_ENOMEM;
    }
    XXH3_64bits_reset(w->layers_sum);
    XXH3_64bits_reset(w->list_sum);
    snprintf(w->path, sizeof w->path, "%s/%s", dir, CKPT_NAME);
    snprintf(w->tmp, sizeof w->tmp, "%s.tmp", w->path);
    w->fd = open(w->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (w->fd < 0) {
        int rc = say_errno(msg, cap, "cannot create", w->tmp);
        ckpt_writer_abort(w);
        return rc;
    }
    w->layer_bytes = layer_bytes;
    w->list_off = HEADER + layer_bytes;
    *out = w;
    return SIEVE_OK;
}

static int flush_list(ckpt_writer *w)
{
    if (w->used == 0)
        return SIEVE_OK;
    XXH3_64bits_update(w->list_sum, w->buf, w->used);
    if (io_pwrite_all(w->fd, w->buf, w->used, w->list_off + w->list_bytes) != 0)
        return SIEVE_EIO;
    w->list_bytes += w->used;
    w->used = 0;
    return SIEVE_OK;
}

int ckpt_put_url(ckpt_writer *w, const char *url, size_t len, uint32_t tag)
{
    if (len > UINT32_MAX - ENTRY_HEAD)
        return SIEVE_ETOOLONG;
    size_t need = ENTRY_HEAD + len;
    if (w->used + need > IO_BUF && flush_list(w) != SIEVE_OK)
        return SIEVE_EIO;
    if (need > IO_BUF) { /* longer than the buffer: straight to the file */
        unsigned char head[ENTRY_HEAD];
        le_put(head, tag, 4);
        le_put(head + 4, len, 4);
        XXH3_64bits_update(w->list_sum, head, sizeof head);
        XXH3_64bits_update(w->list_sum, url, len);
        uint64_t at = w->list_off + w->list_bytes;
        if (io_pwrite_all(w->fd, head, sizeof head, at) != 0 ||
            io_pwrite_all(w->fd, url, len, at + sizeof head) != 0)
            return SIEVE_EIO;
        w->list_bytes += need;
    } else {
        le_put(w->buf + w->used, tag, 4);
        le_put(w->buf + w->used + 4, len, 4);
        memcpy(w->buf + w->used + ENTRY_HEAD, url, len);
        w->used += need;
    }
    w->urls++;
    return SIEVE_OK;
}

int ckpt_put_layers(ckpt_writer *w, const void *words, size_t n)
{
    if (n > w->layer_bytes - w->layers_put)
        return SIEVE_EINVAL;
    XXH3_64bits_update(w->layers_sum, words, n);
    if (io_pwrite_all(w->fd, words, n, HEADER + w->layers_put) != 0)
        return SIEVE_EIO;
    w->layers_put += n;
    return SIEVE_OK;
}

static void put_header(unsigned char *h, const ckpt_info *in, uint64_t layers_sum,
                       uint64_t list_sum)
{
    memset(h, 0, HEADER);
    memcpy(h, MAGIC, 8);
    le_put(h + 8, VERSION, 4);
    le_put(h + 12, in->spilling ? FLAG_SPILLING : 0, 4);
    le_put(h + 16, in->layers, 4);
    le_put(h + 20, in->p.segment, 4);
    le_put(h + 24, in->p.offset, 8);
    le_put(h + 32, in->h.segment, 4);
    le_put(h + 36, in->h.offset, 8);
    le_put(h + 44, in->newest_added, 8);
    le_put(h + 52, in->urls, 8);
    le_put(h + 60, in->list_bytes, 8);
    le_put(h + 68, in->spilled, 8);
    le_put(h + 76, in->done, 8);
    le_put(h + 84, in->layer_bytes, 8);
    le_put(h + 92, layers_sum, 8);
    le_put(h + 100, list_sum, 8);
    le_put(h + 108, in->hchain.segment, 4);
    le_put(h + 112, in->hchain.offset, 8);
    le_put(h + 120, XXH3_64bits(h, 120), 8);
}

static int sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync(fd) == 0 || errno == EINVAL ? 0 : -1;
    close(fd);
    return rc;
}

int ckpt_commit(ckpt_writer *w, const ckpt_info *info, char *msg, size_t cap)
{
    if (w->layers_put != w->layer_bytes) {
        ckpt_writer_abort(w);
        return say(msg, cap, SIEVE_EINVAL, "a checkpoint missed part of the seen-set");
    }
    int rc = flush_list(w);
    ckpt_info in = *info;
    in.layer_bytes = w->layer_bytes;
    in.urls = w->urls;
    in.list_bytes = w->list_bytes;
    unsigned char h[HEADER];
    put_header(h, &in, XXH3_64bits_digest(w->layers_sum), XXH3_64bits_digest(w->list_sum));
    if (rc == SIEVE_OK && (io_pwrite_all(w->fd, h, HEADER, 0) != 0 || fsync(w->fd) != 0))
        rc = SIEVE_EIO;
    if (rc != SIEVE_OK) {
        rc = say_errno(msg, cap, "cannot write", w->tmp);
        ckpt_writer_abort(w);
        return rc;
    }
    close(w->fd);
    w->fd = -1;
    if (rename(w->tmp, w->path) != 0) {
        rc = say_errno(msg, cap, "cannot rename", w->tmp);
        ckpt_writer_abort(w);
        return rc;
    }
    if (sync_dir(w->dir) != 0)
        rc = say_errno(msg, cap, "cannot sync the directory", w->dir);
    ckpt_writer_abort(w); /* frees; the temporary file is gone already */
    return rc;
}

void ckpt_writer_abort(ckpt_writer *w)
{
    if (w == NULL)
        return;
    if (w->fd >= 0) {
        close(w->fd);
        unlink(w->tmp);
    }
    XXH3_freeState(w->layers_sum);
    XXH3_freeState(w->list_sum);
    free(w->buf);
    free(w->dir);
    free(w);
}

/* ---- reading ---- */

static int refuse(ckpt_reader *r, char *msg, size_t cap, int rc, const char *what)
{
    return say(msg, cap, rc, "%s: %s; " ADVICE, r->path, what);
}

static int read_header(ckpt_reader *r, char *msg, size_t cap)
{
    unsigned char h[HEADER];
    ssize_t got = io_pread(r->fd, h, HEADER, 0);
    if (got < 0)
        return say_errno(msg, cap, "cannot read", r->path);
    if (got < 8 || memcmp(h, MAGIC, 8) != 0)
        return refuse(r, msg, cap, got < 8 ? SIEVE_ETRUNCATED : SIEVE_EFORMAT,
                      got < 8 ? "cut short before its header" : "not a checkpoint file");
    if ((size_t)got < HEADER)
        return refuse(r, msg, cap, SIEVE_ETRUNCATED, "cut short in its header");
    if (le_get(h + 120, 8) != XXH3_64bits(h, 120))
        return refuse(r, msg, cap, SIEVE_ECHECKSUM, "its header's checksum does not match");
    if (le_get(h + 8, 4) != VERSION)
        return refuse(r, msg, cap, SIEVE_EVERSION, "written in another format version");
    ckpt_info *in = &r->info;
    uint32_t flags = (uint32_t)le_get(h + 12, 4);
    in->spilling = flags & FLAG_SPILLING;
    in->layers = (unsigned)le_get(h + 16, 4);
    in->p = (journal_pos){(uint32_t)le_get(h + 20, 4), le_get(h + 24, 8)};
    in->h = (journal_pos){(uint32_t)le_get(h + 32, 4), le_get(h + 36, 8)};
    in->hchain = (journal_pos){(uint32_t)le_get(h + 108, 4), le_get(h + 112, 8)};
    in->newest_added = le_get(h + 44, 8);
    in->urls = le_get(h + 52, 8);
    in->list_bytes = le_get(h + 60, 8);
    in->spilled = le_get(h + 68, 8);
    in->done = le_get(h + 76, 8);
    in->layer_bytes = le_get(h + 84, 8);
    r->layers_sum = le_get(h + 92, 8);
    r->list_sum = le_get(h + 100, 8);
    if ((flags & ~FLAG_SPILLING) != 0 || in->layer_bytes > UINT64_MAX / 2 ||
        in->list_bytes > UINT64_MAX / 2 || in->urls > in->list_bytes / ENTRY_HEAD)
        return refuse(r, msg, cap, SIEVE_EFORMAT, "its header does not hold together");
    struct stat st;
    if (fstat(r->fd, &st) != 0)
        return say_errno(msg, cap, "cannot read", r->path);
    uint64_t want = HEADER + in->layer_bytes + in->list_bytes;
    if ((uint64_t)st.st_size < want)
        return refuse(r, msg, cap, SIEVE_ETRUNCATED, "cut short");
    if ((uint64_t)st.st_size > want)
        return refuse(r, msg, cap, SIEVE_EFORMAT, "longer than its header says");
    return SIEVE_OK;
}

int ckpt_reader_open(ckpt_reader **out, const char *dir, ckpt_info *info, char *msg, size_t cap)
{
    *out = NULL;
    ckpt_reader *r = calloc(1, sizeof *r);
    if (r == NULL)
        return SIEVE_ENOMEM;
    snprintf(r->path, sizeof r->path, "%s/%s", dir, CKPT_NAME);
    r->fd = open(r->path, O_RDONLY | O_CLOEXEC);
    if (r->fd < 0) {
        int rc = errno == ENOENT ? SIEVE_OK : say_errno(msg, cap, "cannot open", r->path);
        free(r);
        return rc;
    }
    r->sum = XXH3_createState();
    int rc = r->sum != NULL ? read_header(r, msg, cap) : SIEVE_ENOMEM;
    if (rc != SIEVE_OK) {
        ckpt_reader_close(r);
        return rc;
    }
    XXH3_64bits_reset(r->sum);
    *info = r->info;
    *out = r;
    return SIEVE_OK;
}

int ckpt_read_layers(ckpt_reader *r, void *dst, size_t n, char *msg, size_t cap)
{
    if (n > r->info.layer_bytes - r->layers_read)
        return refuse(r, msg, cap, SIEVE_EFORMAT, "its layers are not the seen-set's size");
    ssize_t got = io_pread(r->fd, dst, n, HEADER + r->layers_read);
    if (got < 0)
        return say_errno(msg, cap, "cannot read", r->path);
    if ((size_t)got < n)
        return refuse(r, msg, cap, SIEVE_ETRUNCATED, "cut short in its seen-set");
    XXH3_64bits_update(r->sum, dst, n);
    r->layers_read += n;
    if (r->layers_read == r->info.layer_bytes && XXH3_64bits_digest(r->sum) != r->layers_sum)
        return refuse(r, msg, cap, SIEVE_ECHECKSUM, "its seen-set's checksum does not match");
    return SIEVE_OK;
}

/* Starts reading the list from its beginning. */
static int list_rewind(ckpt_reader *r, size_t max_url_len)
{
    size_t cap = IO_BUF > 2 * (ENTRY_HEAD + max_url_len) ? IO_BUF : 2 * (ENTRY_HEAD + max_url_len);
    if (r->buf == NULL || r->cap < cap) {
        free(r->buf);
        if ((r->buf = malloc(cap)) == NULL)
            return SIEVE_ENOMEM;
        r->cap = cap;
    }
    r->at = r->end = 0;
    r->list_left = r->info.list_bytes;
    return SIEVE_OK;
}

/* Makes sure n bytes are in the buffer from r->at: SIEVE_OK, SIEVE_EAGAIN
 * at the list's end, SIEVE_ETRUNCATED for a partial entry, SIEVE_EIO. */
static int list_need(ckpt_reader *r, size_t n)
{
    if (r->end - r->at >= n)
        return SIEVE_OK;
    memmove(r->buf, r->buf + r->at, r->end - r->at);
    r->end -= r->at;
    r->at = 0;
    size_t want = r->cap - r->end;
    if (want > r->list_left)
        want = (size_t)r->list_left;
    uint64_t off = HEADER + r->info.layer_bytes + (r->info.list_bytes - r->list_left);
    ssize_t got = want > 0 ? io_pread(r->fd, r->buf + r->end, want, off) : 0;
    if (got < 0)
        return SIEVE_EIO;
    r->end += (size_t)got;
    r->list_left -= (uint64_t)got;
    if (r->end >= n)
        return SIEVE_OK;
    return r->end == 0 && r->list_left == 0 ? SIEVE_EAGAIN : SIEVE_ETRUNCATED;
}

int ckpt_next_url(ckpt_reader *r, const char **url, size_t *len, uint32_t *tag)
{
    int rc = list_need(r, ENTRY_HEAD);
    if (rc != SIEVE_OK)
        return rc;
    const unsigned char *h = r->buf + r->at;
    size_t n = (size_t)le_get(h + 4, 4);
    if (ENTRY_HEAD + n > r->cap)
        return SIEVE_EFORMAT;
    if ((rc = list_need(r, ENTRY_HEAD + n)) != SIEVE_OK)
        return rc == SIEVE_EAGAIN ? SIEVE_ETRUNCATED : rc;
    h = r->buf + r->at;
    *tag = (uint32_t)le_get(h, 4);
    *url = (const char *)h + ENTRY_HEAD;
    *len = n;
    r->at += ENTRY_HEAD + n;
    return SIEVE_OK;
}

int ckpt_check_list(ckpt_reader *r, size_t max_url_len, char *msg, size_t cap)
{
    int rc = list_rewind(r, max_url_len);
    if (rc != SIEVE_OK)
        return rc;
    XXH3_64bits_reset(r->sum);
    uint64_t urls = 0;
    for (;;) {
        const char *url;
        size_t len;
        uint32_t tag;
        rc = ckpt_next_url(r, &url, &len, &tag);
        if (rc != SIEVE_OK)
            break;
        if (len == 0 || len > max_url_len)
            return refuse(r, msg, cap, SIEVE_EFORMAT, "a URL in its list has an impossible length");
        XXH3_64bits_update(r->sum, (const unsigned char *)url - ENTRY_HEAD, ENTRY_HEAD + len);
        urls++;
    }
    if (rc == SIEVE_EIO)
        return say_errno(msg, cap, "cannot read", r->path);
    if (rc == SIEVE_EFORMAT)
        return refuse(r, msg, cap, rc, "a URL in its list has an impossible length");
    if (rc != SIEVE_EAGAIN)
        return refuse(r, msg, cap, rc, "its list ends inside a URL");
    if (XXH3_64bits_digest(r->sum) != r->list_sum)
        return refuse(r, msg, cap, SIEVE_ECHECKSUM, "its list's checksum does not match");
    if (urls != r->info.urls)
        return refuse(r, msg, cap, SIEVE_EFORMAT, "its list does not hold the URLs it counts");
    return list_rewind(r, max_url_len);
}

void ckpt_reader_close(ckpt_reader *r)
{
    if (r == NULL)
        return;
    if (r->fd >= 0)
        close(r->fd);
    XXH3_freeState(r->sum);
    free(r->buf);
    free(r);
}
