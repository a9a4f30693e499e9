/* runs-compact.c - run files mostly read, compacted.
 *
 * A run stays while any part in it is unread, so a host that waits long
 * (held, paused, slow) keeps alive every run written while its URLs
 * wait, most of which the other hosts have read. Once the run files hold
 * more than twice the bytes of their unread records, and a few buffers'
 * worth more, the runs at least three quarters read give up what is left
 * in them: their unread parts are copied into a new run, each taking its
 * place in its host's list (a host's order is its list's, whatever the
 * runs' numbers), and the old files go. A compaction moves at most a
 * buffer's worth, out of runs at most a quarter unread, so it costs at
 * most a third of the disk it frees; the runs stay within about four
 * times the bytes of the URLs they hold. A compaction that fails (no
 * memory, no room) changes nothing: the runs are as they were. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io.h"
#include "runs-internal.h"

/* A part being moved: its host, its place in the host's list, and where
 * it lands. */
typedef struct move {
    uint32_t host, k;
    uint64_t off, bytes;
} move;

/* Appends part p of host h (k, its place in h's list) to *out, front-coded
 * afresh from a PUSH: the first part may have been read partly, and its
 * next record is coded against the host's last URL read. */
static int copy_part(runs *r, host_def *h, uint32_t k, unsigned char **out, size_t *len,
                     size_t *cap, int *fd, uint32_t *fd_no, unsigned char **buf, size_t *buf_cap)
{
    const part *p = &h->parts[k];
    int rc = run_read(r->dir, p->run, p->off, (size_t)p->bytes, fd, fd_no, buf, buf_cap, r->msg,
                      sizeof r->msg);
    url_chain c = {0};
    if (rc == SIEVE_OK && k == h->first && h->last.started) {
        c.url = malloc(h->last.len + 1);
        if (c.url == NULL)
            rc = SIEVE_ENOMEM;
        else
            memcpy(c.url, h->last.url, h->last.len);
        c.len = c.cap = h->last.len;
        c.started = true;
    }
    char *prev = NULL;
    size_t prev_len = 0, prev_cap = 0, at = 0;
    for (uint32_t i = 0; rc == SIEVE_OK && i < p->count; i++) {
        size_t size, n, skip;
        const char *e;
        uint32_t tag;
        rc = run_decode(&c, *buf + at, (size_t)p->bytes - at, &size, &e, &n, &tag);
        if (rc != SIEVE_OK)
            break;
        at += size;
        if (*len + JOURNAL_RECORD_SIZE(PUSH_HEAD_MAX + n) > *cap) {
            size_t want = (*len + JOURNAL_RECORD_SIZE(PUSH_HEAD_MAX + n)) * 2;
            unsigned char *o = realloc(*out, want);
            if (o == NULL) {
                rc = SIEVE_ENOMEM;
                break;
            }
            *out = o;
            *cap = want;
        }
        unsigned char head[PUSH_HEAD_MAX];
        uint8_t type;
        size_t hn = push_encode(prev, prev_len, e, n, tag, head, &type, &skip);
        *len += journal_encode(*out + *len, type, head, hn, e + skip, n - skip);
        if (n > prev_cap) {
            char *q = realloc(prev, n * 2);
            if (q == NULL) {
                rc = SIEVE_ENOMEM;
                break;
            }
            prev = q;
            prev_cap = n * 2;
        }
        memcpy(prev, e, n);
        prev_len = n;
    }
    if (rc == SIEVE_OK && at != p->bytes)
        rc = SIEVE_EFORMAT;
    free(prev);
    chain_free(&c);
    return rc;
}

/* Picks the runs to compact, if it is time; returns how many. */
static uint32_t pick_mostly_read(runs *r)
{
    uint64_t slack = 4 * (uint64_t)r->limit;
    if (r->file_bytes <= 2 * r->live_bytes + slack)
        return 0;
    uint32_t picked = 0;
    uint64_t moving = 0;
    for (uint32_t i = 0; i < r->nfiles; i++) {
        run_file *f = &r->files[i];
        bool mostly_read = f->live > 0 && f->live_bytes * 4 <= f->bytes - HEADER_SIZE;
        if (mostly_read && (picked == 0 || moving + f->live_bytes <= r->limit)) {
            f->moving = true;
            moving += f->live_bytes;
            picked++;
        }
    }
    return picked;
}

/* Points the moved parts at run no, and lets the runs they left go. */
static void land_moves(runs *r, uint32_t no, const move *mv, size_t n, uint64_t file_bytes)
{
    run_file *nf = &r->files[r->nfiles];
    *nf = (run_file){.no = no, .bytes = file_bytes};
    for (size_t i = 0; i < n; i++) {
        part *p = &r->host[mv[i].host].parts[mv[i].k];
        run_file *f = run_file_of(r, p->run);
        f->live--;
        f->live_bytes -= p->bytes;
        r->live_bytes -= p->bytes;
        p->run = no;
        p->off = mv[i].off;
        p->bytes = mv[i].bytes;
        nf->live++;
        nf->live_bytes += mv[i].bytes;
        r->live_bytes += mv[i].bytes;
    }
    r->nfiles++;
    r->file_bytes += file_bytes;
    r->next_no++;
    run_drop_dead_files(r);
}

void run_compact(runs *r)
{
    uint32_t picked = pick_mostly_read(r);
    if (picked == 0)
        return;
    move *mv = NULL;
    uint32_t nmv = 0, cap_mv = 0;
    unsigned char *out = malloc(HEADER_SIZE), *buf = NULL;
    size_t len = HEADER_SIZE, cap = HEADER_SIZE, buf_cap = 0;
    int fd = -1, rc = out != NULL ? SIEVE_OK : SIEVE_ENOMEM;
    uint32_t fd_no = 0, no = r->next_no;
    if (rc == SIEVE_OK)
        run_put_header(out, no);
    for (uint32_t hi = 0; rc == SIEVE_OK && hi < r->cap_host; hi++) {
        host_def *h = &r->host[hi];
        for (uint32_t k = h->first; rc == SIEVE_OK && k < h->n; k++) {
            if (!run_file_of(r, h->parts[k].run)->moving)
                continue;
            rc = run_room_for((void **)&mv, &cap_mv, nmv, sizeof *mv, 1);
            uint64_t start = len;
            if (rc == SIEVE_OK)
                rc = copy_part(r, h, k, &out, &len, &cap, &fd, &fd_no, &buf, &buf_cap);
            if (rc == SIEVE_OK)
                mv[nmv++] = (move){.host = hi, .k = k, .off = start, .bytes = len - start};
        }
    }
    if (fd >= 0)
        close(fd);
    free(buf);
    char path[540];
    run_path(r->dir, no, path, sizeof path);
    if (rc == SIEVE_OK)
        rc = run_room_for((void **)&r->files, &r->cap_files, r->nfiles, sizeof *r->files, 1);
    if (rc == SIEVE_OK) {
        int wfd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        rc = wfd >= 0 && io_write_all(wfd, out, len) == 0 ? SIEVE_OK : SIEVE_EIO;
        if (wfd >= 0)
            close(wfd);
        if (rc != SIEVE_OK)
            unlink(path);
    }
    if (rc == SIEVE_OK)
        land_moves(r, no, mv, nmv, len);
    for (uint32_t i = 0; i < r->nfiles; i++)
        r->files[i].moving = false;
    free(mv);
    free(out);
}
