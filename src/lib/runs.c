/* runs.c - deferred URLs: a buffer, then run files grouped by host.
 *
 * Deferred URLs are encoded at once as the journal encodes a PUSH record
 * (push-record.h: the tag, then the entry, in the journal's framing with
 * its checksum) and appended to the buffer; each host chains its records
 * there, oldest first. A full buffer is written as one run file,
 *
 *     DIR/00000001.run, 00000002.run, ...
 *       0  8 magic "SIEVERN\0"
 *       8  4 format version (1)
 *      12  4 run number, as in the file's name
 *      16  8 XXH3-64 of bytes 0..15
 *      24  . the records, each host's together, in the order deferred:
 *            its first a PUSH, the others PUSHF, front-coded against the
 *            one before (a host's URLs share their scheme and host, and
 *            often much of their path: this halves them)
 *
 * and each host that had records in it gets a part: the run, where its
 * records start, how many and how many bytes. A host's URLs are so its
 * parts, in the order of its list of them, then its chain in the buffer;
 * a take reads the oldest part from where the last take stopped (one
 * pread, at most the bytes asked for; the host keeps the last URL it
 * read, which the next record is front-coded against) or, with no part
 * left, walks the chain. A run file goes once every part in it has been
 * read, unless a listing keeps it; compaction (below) moves what is left
 * of runs mostly read.
 *
 * Nothing here is synced: a run is read back by the process that wrote
 * it, and a restart rebuilds the deferred URLs from the checkpoint's list
 * and the journal (frontier-state.c), so an open removes the runs left.
 * The checksums still catch a file changed under the process, which is
 * refused with its name rather than handed out as URLs.
 *
 * Runs mostly read are compacted (runs-compact.c), so that a host that
 * waits long does not keep every run alive. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "bytes.h"
#include "io.h"
#include "runs-internal.h"

struct runs_list {
    char dir[512];
    struct {
        uint32_t host;
        part p;
        char *last; /* the URL a host's oldest part was last read at */
        size_t last_len;
    } * parts;
    size_t n;
    char msg[700];
};

void run_path(const char *dir, uint32_t no, char *path, size_t cap)
{
    snprintf(path, cap, "%.500s/%08" PRIu32 SUFFIX, dir, no);
}

void run_put_header(unsigned char *p, uint32_t no)
{
    memcpy(p, MAGIC, sizeof MAGIC);
    le_put(p + 8, FORMAT_VERSION, 4);
    le_put(p + 12, no, 4);
    le_put(p + 16, XXH3_64bits(p, 16), 8);
}

static bool is_run_name(const char *name)
{
    size_t n = strlen(name);
    return n == 8 + strlen(SUFFIX) && strspn(name, "0123456789") == 8 &&
           strcmp(name + 8, SUFFIX) == 0;
}

/* Removes the run files in dir. */
static void remove_runs(const char *dir)
{
    DIR *d = opendir(dir);
    for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;) {
        if (!is_run_name(e->d_name))
            continue;
        char path[540];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    if (d != NULL)
        closedir(d);
}

int runs_open(runs **out, const char *dir, size_t buffer_bytes, char *msg, size_t cap)
{
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        snprintf(msg, cap, "cannot make %s: %s", dir, strerror(errno));
        return SIEVE_EIO;
    }
    remove_runs(dir);
    runs *r = calloc(1, sizeof *r);
    if (r == NULL)
        return SIEVE_ENOMEM;
    snprintf(r->dir, sizeof r->dir, "%s", dir);
    r->limit = buffer_bytes;
    r->fd = -1;
    r->next_no = 1;
    *out = r;
    return SIEVE_OK;
}

void runs_free(runs *r)
{
    if (r == NULL)
        return;
    if (r->fd >= 0)
        close(r->fd);
    remove_runs(r->dir);
    rmdir(r->dir);
    for (uint32_t i = 0; i < r->cap_host; i++) {
        free(r->host[i].parts);
        chain_free(&r->host[i].last);
    }
    free(r->host);
    free(r->group_bytes);
    free(r->buf);
    free(r->recs);
    free(r->buf_hosts);
    free(r->out);
    free(r->files);
    free(r->rbuf);
    free(r);
}

const char *runs_message(const runs *r)
{
    return r->msg;
}

uint64_t runs_total(const runs *r)
{
    return r->total;
}

uint64_t runs_memory(const runs *r)
{
    uint64_t bytes =
        sizeof *r + r->cap + r->out_cap + r->rcap + (uint64_t)r->cap_recs * sizeof *r->recs +
        (uint64_t)r->cap_buf_hosts * sizeof *r->buf_hosts +
        (uint64_t)r->cap_files * sizeof *r->files + (uint64_t)r->cap_host * sizeof *r->host;
    for (uint32_t i = 0; i < r->cap_host; i++)
        bytes += (uint64_t)r->host[i].cap * sizeof(part);
    return bytes;
}

uint64_t runs_file_bytes(const runs *r)
{
    return r->file_bytes;
}

uint64_t runs_unread_bytes(const runs *r)
{
    return r->live_bytes;
}

uint64_t runs_count(const runs *r, uint32_t host)
{
    return host < r->cap_host ? r->host[host].count : 0;
}

/* ---- growing arrays ---- */

int run_room_for(void **p, uint32_t *cap, uint32_t use, size_t elem, uint32_t n)
{
    if ((uint64_t)use + n <= *cap)
        return SIEVE_OK;
    uint64_t c = *cap ? *cap : 16;
    while (c < (uint64_t)use + n)
        c *= 2;
    if (c > UINT32_MAX)
        return SIEVE_ENOMEM;
    void *q = realloc(*p, (size_t)c * elem);
    if (q == NULL)
        return SIEVE_ENOMEM;
    *p = q;
    *cap = (uint32_t)c;
    return SIEVE_OK;
}

static int room_for_host(runs *r, uint32_t host)
{
    if (host < r->cap_host)
        return SIEVE_OK;
    uint32_t old = r->cap_host;
    int rc = run_room_for((void **)&r->host, &r->cap_host, host, sizeof *r->host, 1);
    if (rc == SIEVE_OK)
        memset(r->host + old, 0, (size_t)(r->cap_host - old) * sizeof *r->host);
    return rc;
}

static int room_in_buf(runs *r, size_t n)
{
    if (r->used + n <= r->cap)
        return SIEVE_OK;
    size_t c = r->cap ? r->cap : 4096;
    while (c < r->used + n)
        c *= 2;
    unsigned char *b = realloc(r->buf, c);
    if (b == NULL)
        return SIEVE_ENOMEM;
    r->buf = b;
    r->cap = c;
    return SIEVE_OK;
}

/* ---- run files ---- */

run_file *run_file_of(runs *r, uint32_t no)
{
    uint32_t lo = 0, hi = r->nfiles;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (r->files[mid].no < no)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < r->nfiles && r->files[lo].no == no ? &r->files[lo] : NULL;
}

void run_drop_dead_files(runs *r)
{
    if (r->listing > 0)
        return;
    uint32_t kept = 0;
    for (uint32_t i = 0; i < r->nfiles; i++) {
        run_file *f = &r->files[i];
        if (f->live > 0) {
            r->files[kept++] = *f;
            continue;
        }
        if (r->fd >= 0 && r->fd_no == f->no) {
            close(r->fd);
            r->fd = -1;
        }
        char path[540];
        run_path(r->dir, f->no, path, sizeof path);
        unlink(path);
        r->file_bytes -= f->bytes;
    }
    r->nfiles = kept;
}

/* The record at p, of which avail bytes are at hand: SIEVE_OK with its
 * size, type and payload; SIEVE_EAGAIN if they hold only its beginning;
 * SIEVE_EFORMAT. */
static int read_record(const unsigned char *p, size_t avail, size_t *size, uint8_t *type,
                       const unsigned char **payload, uint32_t *n)
{
    *size = journal_decode(p, avail, type, payload, n);
    if (*size == 0)
        return SIEVE_EAGAIN;
    return *size == SIZE_MAX ? SIEVE_EFORMAT : SIEVE_OK;
}

/* A buffered record (a PUSH the process wrote itself): its entry and tag. */
static void buffered(const runs *r, const buf_rec *b, const char **entry, size_t *len,
                     uint32_t *tag)
{
    const unsigned char *p = r->buf + b->off + 5; /* past the length and type */
    *tag = (uint32_t)le_get(p, TAG_BYTES);
    *entry = (const char *)p + TAG_BYTES;
    *len = b->size - JOURNAL_RECORD_SIZE(TAG_BYTES);
}

/* Lays the buffer out as a run in out, each host's records together,
 * front-coded, noting each one's bytes in group_bytes. */
static size_t lay_out(runs *r, uint32_t no)
{
    unsigned char *p = r->out;
    run_put_header(p, no);
    size_t at = HEADER_SIZE;
    for (uint32_t i = 0; i < r->nbuf_hosts; i++) {
        host_def *h = &r->host[r->buf_hosts[i]];
        size_t start = at, prev_len = 0;
        const char *prev = NULL;
        for (uint32_t k = h->head; k != NONE; k = r->recs[k - 1].next) {
            const char *e;
            size_t len, skip;
            uint32_t tag;
            buffered(r, &r->recs[k - 1], &e, &len, &tag);
            unsigned char head[PUSH_HEAD_MAX];
            uint8_t type;
            size_t n = push_encode(prev, prev_len, e, len, tag, head, &type, &skip);
            at += journal_encode(p + at, type, head, n, e + skip, len - skip);
            prev = e;
            prev_len = len;
        }
        r->group_bytes[i] = at - start;
    }
    return at;
}

/* Gives each host in the buffer its part of run no, just written. */
static void hand_out_parts(runs *r, uint32_t no, uint32_t *groups)
{
    uint64_t at = HEADER_SIZE;
    *groups = 0;
    for (uint32_t i = 0; i < r->nbuf_hosts; i++) {
        host_def *h = &r->host[r->buf_hosts[i]];
        if (h->head == NONE)
            continue; /* taken back from the buffer since */
        part p = {.run = no, .off = at, .bytes = r->group_bytes[i]};
        for (uint32_t k = h->head; k != NONE; k = r->recs[k - 1].next)
            p.count++;
        at += p.bytes;
        if (h->first > 0 && h->first == h->n)
            h->first = h->n = 0;
        h->parts[h->n++] = p; /* room was made before the write */
        h->head = h->tail = NONE;
        ++*groups;
    }
}

/* Room, before the write, for everything hand_out_parts() adds. */
static int room_for_parts(runs *r)
{
    int rc = run_room_for((void **)&r->files, &r->cap_files, r->nfiles, sizeof *r->files, 1);
    if (rc == SIEVE_OK)
        rc = run_room_for((void **)&r->group_bytes, &r->cap_group_bytes, 0, sizeof *r->group_bytes,
                          r->nbuf_hosts);
    for (uint32_t i = 0; i < r->nbuf_hosts && rc == SIEVE_OK; i++) {
        host_def *h = &r->host[r->buf_hosts[i]];
        if (h->first > 0 && h->first * 2 >= h->n) { /* the read parts' room, reused */
            memmove(h->parts, h->parts + h->first, (h->n - h->first) * sizeof *h->parts);
            h->n -= h->first;
            h->first = 0;
        }
        rc = run_room_for((void **)&h->parts, &h->cap, h->n, sizeof *h->parts, 1);
    }
    return rc;
}

/* Writes the buffer out as the next run. On failure nothing changes. */
static int write_run(runs *r)
{
    if (r->nrecs == 0)
        return SIEVE_OK;
    bool any = false;
    for (uint32_t i = 0; i < r->nbuf_hosts && !any; i++)
        any = r->host[r->buf_hosts[i]].head != NONE;
    if (any) {
        if (r->out_cap < HEADER_SIZE + r->used) {
            unsigned char *o = realloc(r->out, HEADER_SIZE + r->cap);
            if (o == NULL)
                return SIEVE_ENOMEM;
            r->out = o;
            r->out_cap = HEADER_SIZE + r->cap;
        }
        if (room_for_parts(r) != SIEVE_OK)
            return SIEVE_ENOMEM;
        uint32_t no = r->next_no;
        size_t n = lay_out(r, no);
        char path[540];
        run_path(r->dir, no, path, sizeof path);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || io_write_all(fd, r->out, n) != 0) {
            snprintf(r->msg, sizeof r->msg, "%s: cannot write deferred URLs: %s", path,
                     strerror(errno));
            if (fd >= 0)
                close(fd);
            unlink(path);
            return SIEVE_EIO;
        }
        close(fd);
        r->next_no++;
        uint32_t groups;
        hand_out_parts(r, no, &groups);
        r->files[r->nfiles++] =
            (run_file){.no = no, .live = groups, .bytes = n, .live_bytes = n - HEADER_SIZE};
        r->file_bytes += n;
        r->live_bytes += n - HEADER_SIZE;
        run_compact(r);
    }
    for (uint32_t i = 0; i < r->nbuf_hosts; i++)
        r->host[r->buf_hosts[i]].in_buf_hosts = false;
    r->used = 0;
    r->nrecs = 0;
    r->nbuf_hosts = 0;
    return SIEVE_OK;
}

/* ---- deferring ---- */

int runs_defer(runs *r, uint32_t host, const char *entry, size_t len, uint32_t tag)
{
    size_t size = JOURNAL_RECORD_SIZE(TAG_BYTES + len);
    if (r->used > 0 && r->used + size > r->limit) {
        int rc = write_run(r);
        if (rc != SIEVE_OK)
            return rc;
    }
    if (room_for_host(r, host) != SIEVE_OK || room_in_buf(r, size) != SIEVE_OK ||
        run_room_for((void **)&r->recs, &r->cap_recs, r->nrecs, sizeof *r->recs, 1) != SIEVE_OK ||
        run_room_for((void **)&r->buf_hosts, &r->cap_buf_hosts, r->nbuf_hosts, sizeof *r->buf_hosts,
                     1) != SIEVE_OK)
        return SIEVE_ENOMEM;
    unsigned char head[TAG_BYTES];
    le_put(head, tag, TAG_BYTES);
    journal_encode(r->buf + r->used, REC_PUSH, head, TAG_BYTES, entry, len);
    r->recs[r->nrecs] = (buf_rec){.off = (uint32_t)r->used, .size = (uint32_t)size};
    r->used += size;
    uint32_t k = ++r->nrecs;
    host_def *h = &r->host[host];
    if (!h->in_buf_hosts) {
        h->in_buf_hosts = true;
        r->buf_hosts[r->nbuf_hosts++] = host;
    }
    if (h->head == NONE) {
        h->head = k;
    } else {
        r->recs[h->tail - 1].next = k;
    }
    h->tail = k;
    h->count++;
    r->total++;
    return SIEVE_OK;
}

/* ---- taking back ---- */

int run_decode(url_chain *c, const unsigned char *p, size_t avail, size_t *size, const char **entry,
               size_t *len, uint32_t *tag)
{
    uint8_t type;
    const unsigned char *payload;
    uint32_t n;
    int rc = read_record(p, avail, size, &type, &payload, &n);
    if (rc == SIEVE_OK && type != REC_PUSH && type != REC_PUSHF)
        rc = SIEVE_EFORMAT;
    if (rc == SIEVE_OK)
        rc = push_decode(c, type, payload, n, (journal_pos){0}, JOURNAL_PAYLOAD_MAX, entry, len,
                         tag);
    return rc == SIEVE_ETOOLONG ? SIEVE_EFORMAT : rc;
}

int run_read(const char *dir, uint32_t no, uint64_t off, size_t n, int *fd, uint32_t *fd_no,
             unsigned char **buf, size_t *cap, char *msg, size_t msg_cap)
{
    char path[540];
    run_path(dir, no, path, sizeof path);
    if (*fd >= 0 && *fd_no != no) {
        close(*fd);
        *fd = -1;
    }
    if (*fd < 0) {
        *fd = open(path, O_RDONLY | O_CLOEXEC);
        *fd_no = no;
    }
    if (n > *cap) {
        unsigned char *b = realloc(*buf, n);
        if (b == NULL)
            return SIEVE_ENOMEM;
        *buf = b;
        *cap = n;
    }
    int rc = *fd < 0 ? SIEVE_EIO : io_pread_all(*fd, *buf, n, off);
    if (rc != SIEVE_OK) {
        snprintf(msg, msg_cap, "%s: cannot read deferred URLs at offset %" PRIu64 ": %s", path, off,
                 rc == SIEVE_ETRUNCATED ? "the file is shorter than written" : strerror(errno));
        return SIEVE_EIO;
    }
    return SIEVE_OK;
}

static int refuse_record(char *msg, size_t cap, const char *dir, uint32_t no, uint64_t off)
{
    char path[540];
    run_path(dir, no, path, sizeof path);
    snprintf(msg, cap,
             "%s: the deferred URL record at offset %" PRIu64
             " does not read back as written (the file was changed under the crawl)",
             path, off);
    return SIEVE_EFORMAT;
}

/* Takes from host h's oldest part, within max bytes (at least one URL). */
static int take_part(runs *r, uint32_t host, size_t max, runs_url_fn fn, void *ud, size_t *taken,
                     size_t *bytes)
{
    host_def *h = &r->host[host];
    part *p = &h->parts[h->first];
    run_file *f = run_file_of(r, p->run);
    size_t want = max - *bytes > READ_MIN ? max - *bytes : READ_MIN;
    if (want > p->bytes)
        want = (size_t)p->bytes;
    int rc = run_read(r->dir, p->run, p->off, want, &r->fd, &r->fd_no, &r->rbuf, &r->rcap, r->msg,
                      sizeof r->msg);
    if (rc == SIEVE_OK && want >= 4) { /* a first record longer than asked is read whole */
        uint64_t first = JOURNAL_RECORD_SIZE(le_get(r->rbuf, 4));
        if (first > want && first <= p->bytes) {
            want = (size_t)first;
            rc = run_read(r->dir, p->run, p->off, want, &r->fd, &r->fd_no, &r->rbuf, &r->rcap,
                          r->msg, sizeof r->msg);
        }
    }
    for (size_t at = 0; rc == SIEVE_OK && p->count > 0 && (*taken == 0 || *bytes < max);) {
        size_t size, len;
        const char *e;
        uint32_t tag;
        rc = run_decode(&h->last, r->rbuf + at, want - at, &size, &e, &len, &tag);
        if (rc == SIEVE_EAGAIN && at > 0)
            return SIEVE_OK; /* the read ended inside a record: the next take reads it */
        if (rc == SIEVE_ENOMEM)
            return rc;
        if (rc != SIEVE_OK)
            return refuse_record(r->msg, sizeof r->msg, r->dir, p->run, p->off);
        if ((rc = fn(ud, host, e, len, tag)) != SIEVE_OK)
            return rc;
        at += size;
        p->off += size;
        p->bytes -= size;
        p->count--;
        f->live_bytes -= size;
        r->live_bytes -= size;
        h->count--;
        r->total--;
        ++*taken;
        *bytes += len + SIEVE_QUEUE_ENTRY_COST;
    }
    if (rc == SIEVE_OK && p->count == 0) {
        if (p->bytes != 0)
            return refuse_record(r->msg, sizeof r->msg, r->dir, p->run, p->off);
        h->first++;
        if (--f->live == 0)
            run_drop_dead_files(r);
    }
    return rc;
}

/* Takes from host h's chain in the buffer. */
static int take_chain(runs *r, uint32_t host, size_t max, runs_url_fn fn, void *ud, size_t *taken,
                      size_t *bytes)
{
    host_def *h = &r->host[host];
    while (h->head != NONE && (*taken == 0 || *bytes < max)) {
        const buf_rec *b = &r->recs[h->head - 1];
        size_t len;
        const char *e;
        uint32_t tag;
        buffered(r, b, &e, &len, &tag);
        int rc = fn(ud, host, e, len, tag);
        if (rc != SIEVE_OK)
            return rc;
        h->head = b->next;
        h->count--;
        r->total--;
        ++*taken;
        *bytes += len + SIEVE_QUEUE_ENTRY_COST;
    }
    if (h->head == NONE)
        h->tail = NONE;
    return SIEVE_OK;
}

int runs_take(runs *r, uint32_t host, size_t max_bytes, runs_url_fn fn, void *ud, size_t *taken)
{
    *taken = 0;
    size_t bytes = 0;
    int rc = SIEVE_OK;
    while (rc == SIEVE_OK && host < r->cap_host && r->host[host].count > 0 &&
           (*taken == 0 || bytes < max_bytes)) {
        host_def *h = &r->host[host];
        rc = h->first < h->n ? take_part(r, host, max_bytes, fn, ud, taken, &bytes)
                             : take_chain(r, host, max_bytes, fn, ud, taken, &bytes);
    }
    return rc;
}

/* ---- listing ---- */

static void list_free(runs_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->parts[i].last);
    free(l->parts);
    free(l);
}

int runs_list_begin(runs *r, runs_list **out)
{
    int rc = write_run(r);
    if (rc != SIEVE_OK)
        return rc;
    runs_list *l = calloc(1, sizeof *l);
    size_t n = 0;
    for (uint32_t i = 0; i < r->cap_host; i++)
        n += r->host[i].n - r->host[i].first;
    if (l == NULL || (n > 0 && (l->parts = malloc(n * sizeof *l->parts)) == NULL)) {
        free(l);
        return SIEVE_ENOMEM;
    }
    snprintf(l->dir, sizeof l->dir, "%s", r->dir);
    for (uint32_t i = 0; i < r->cap_host; i++) {
        host_def *h = &r->host[i];
        for (uint32_t k = h->first; k < h->n; k++) {
            l->parts[l->n].host = i;
            l->parts[l->n].p = h->parts[k];
            l->parts[l->n].last = NULL;
            l->parts[l->n].last_len = 0;
            /* a part read partly goes on front-coded against the last URL read */
            if (k == h->first && h->last.started && h->last.len > 0) {
                l->parts[l->n].last = malloc(h->last.len);
                if (l->parts[l->n].last == NULL) {
                    l->n++;
                    list_free(l);
                    return SIEVE_ENOMEM;
                }
                memcpy(l->parts[l->n].last, h->last.url, h->last.len);
                l->parts[l->n].last_len = h->last.len;
            }
            l->n++;
        }
    }
    r->listing++;
    *out = l;
    return SIEVE_OK;
}

int runs_list_walk(runs_list *l, runs_url_fn fn, void *ud)
{
    int fd = -1;
    uint32_t fd_no = 0;
    unsigned char *buf = NULL;
    size_t cap = 0;
    int rc = SIEVE_OK;
    for (size_t i = 0; i < l->n && rc == SIEVE_OK; i++) {
        part p = l->parts[i].p;
        url_chain c = {.url = l->parts[i].last,
                       .len = l->parts[i].last_len,
                       .cap = l->parts[i].last_len,
                       .started = l->parts[i].last != NULL};
        l->parts[i].last = NULL; /* c's now */
        while (rc == SIEVE_OK && p.count > 0) {
            size_t want = p.bytes < LIST_READ ? (size_t)p.bytes : LIST_READ;
            rc = run_read(l->dir, p.run, p.off, want, &fd, &fd_no, &buf, &cap, l->msg,
                          sizeof l->msg);
            size_t at = 0, size, len;
            const char *e;
            uint32_t tag;
            int got = SIEVE_OK;
            while (rc == SIEVE_OK && p.count > 0 &&
                   (got = run_decode(&c, buf + at, want - at, &size, &e, &len, &tag)) == SIEVE_OK) {
                rc = fn(ud, l->parts[i].host, e, len, tag);
                at += size;
                p.off += size;
                p.bytes -= size;
                p.count--;
            }
            if (rc == SIEVE_OK && got == SIEVE_ENOMEM)
                rc = got;
            else if (rc == SIEVE_OK && at == 0 && p.count > 0)
                rc = refuse_record(l->msg, sizeof l->msg, l->dir, p.run, p.off);
        }
        chain_free(&c);
    }
    if (fd >= 0)
        close(fd);
    free(buf);
    return rc;
}

void runs_list_end(runs *r, runs_list *l)
{
    if (l != NULL) {
        if (l->msg[0] != '\0')
            snprintf(r->msg, sizeof r->msg, "%s", l->msg);
        list_free(l);
    }
    if (r->listing > 0 && --r->listing == 0)
        run_drop_dead_files(r);
}
