/* fuzz-frontier.c - libFuzzer target: a durable frontier run by a program
 * the input makes, and what a kill at a point of it would leave.
 *
 * The program pushes URLs (with data, on a few hosts), pops them,
 * reports them done or gives them back, syncs, and once takes a snapshot
 * of the state directory: a copy of its files as they are in the kernel
 * between two calls, which is what a SIGKILL there would leave. The queue
 * is mostly kept in a few hundred bytes of memory, so that most of it
 * waits in the journal, and its segments and checkpoints are small.
 *
 * The oracle is sieve/frontier.h's contract. A push the frontier took is
 * written before the next done() or sync() returns, and a done() before
 * it returns. So the snapshot, opened, must hand out every URL taken
 * before the last done() or sync() and not reported done, may hand out
 * those taken after it, and nothing else: no URL reported done, none
 * twice, each with its data. The state the program leaves, freed and
 * opened again, must hand out exactly the URLs taken and not done. The
 * directories live in /dev/shm where there is one, so that the syncs are
 * cheap.
 *
 * The input: a configuration byte, then steps of an operation byte, a
 * length byte and that many bytes. */
#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scratch.h"
#include "sieve/frontier.h"
#include "sieve/status.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* URLs one input may push; later pushes are ignored. */
#define MAX_URLS 256
/* URLs in flight at once in the program. */
#define MAX_FLIGHT 16

enum { PUSH, POP, DONE, REQUEUE, SYNC, SNAPSHOT };

/* What the model knows of a URL pushed. */
typedef struct known {
    char url[160];
    unsigned char data[255];
    size_t data_len;
    bool taken;   /* the push returned SIEVE_OK */
    bool durable; /* taken before a done() or sync() that returned */
    bool done;
    /* as they were at the snapshot */
    bool snap_taken, snap_durable, snap_done;
    bool handed; /* handed out by the frontier being checked */
} known;

static char base[64], state[96], snap[96];
/* The input's configuration: the Bloom filter (else the exact set, which
 * takes no checkpoints), per-host scheduling (else one FIFO, which gives
 * nothing back), a queue in 512 bytes of memory (else unbounded). */
static bool bloom, polite, spill;
static known urls[MAX_URLS];
static size_t n_urls;

static void remove_base(void)
{
    scratch_remove(base, 3);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    scratch_dir(base, sizeof base, "fuzz-frontier");
    snprintf(state, sizeof state, "%s/state", base);
    snprintf(snap, sizeof snap, "%s/snap", base);
    atexit(remove_base);
    return 0;
}

/* Copies directory from into to (made anew), files and one level of
 * directories below: a state directory's layout. */
static void copy_tree(const char *from, const char *to, int depth)
{
    DIR *d = opendir(from);
    if (d == NULL || mkdir(to, 0755) != 0)
        abort();
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char src[512], dst[512];
        struct stat st;
        snprintf(src, sizeof src, "%s/%s", from, e->d_name);
        snprintf(dst, sizeof dst, "%s/%s", to, e->d_name);
        if (stat(src, &st) != 0)
            abort();
        if (S_ISDIR(st.st_mode)) {
            if (depth == 0)
                abort();
            copy_tree(src, dst, depth - 1);
            continue;
        }
        int in = open(src, O_RDONLY), out = open(dst, O_WRONLY | O_CREAT | O_EXCL, 0644);
        char buf[65536];
        ssize_t n = 0;
        while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof buf)) > 0)
            if (write(out, buf, (size_t)n) != n)
                abort();
        if (in < 0 || out < 0 || n != 0)
            abort();
        close(in);
        close(out);
    }
    closedir(d);
}

static sieve_frontier *open_at(const char *dir)
{
    sieve_frontier_config cfg;
    sieve_frontier_config_init(&cfg);
    cfg.seen.kind = bloom ? SIEVE_SEEN_BLOOM : SIEVE_SEEN_EXACT;
    cfg.seen.capacity = 1000; /* a checkpoint writes the seen-set whole */
    cfg.politeness.enabled = polite;
    cfg.politeness.delay_s = 0;
    cfg.politeness.max_conns = MAX_FLIGHT;
    cfg.queue_memory = spill ? 512 : 0;
    cfg.segment_bytes = 4096;
    cfg.checkpoint_bytes = 2048;
    sieve_frontier *f = NULL;
    if (sieve_frontier_open(&f, dir, &cfg) != SIEVE_OK)
        abort(); /* a state a kill or a free left must open */
    return f;
}

static known *find(const char *url)
{
    for (size_t i = 0; i < n_urls; i++)
        if (strcmp(urls[i].url, url) == 0)
            return &urls[i];
    return NULL;
}

/* A URL on one of four hosts, its path the step's bytes in hex. */
static void push(sieve_frontier *f, unsigned flags, const uint8_t *p, size_t n)
{
    char url[160];
    int k = snprintf(url, sizeof url, "http://h%u.example/", flags & 3);
    for (size_t i = 0; i < n && k + 3 < (int)sizeof url; i++)
        k += snprintf(url + k, sizeof url - (size_t)k, "%02x", p[i]);
    known *u = find(url);
    if (u == NULL) {
        if (n_urls == MAX_URLS)
            return;
        u = &urls[n_urls++];
        *u = (known){0};
        snprintf(u->url, sizeof u->url, "%s", url);
        u->data_len = flags & 4 ? n : 0; /* the same bytes as data */
        memcpy(u->data, p, u->data_len);
    }
    sieve_url in = {.url = u->url,
                    .len = strlen(u->url),
                    .depth = flags,
                    .data = u->data_len ? u->data : NULL,
                    .data_len = u->data_len};
    int rc;
    if (sieve_frontier_push_batch(f, &in, 1, &rc) < 0)
        abort();
    if (u->taken ? rc != SIEVE_SEEN : rc != SIEVE_OK && rc != SIEVE_SEEN)
        abort(); /* a URL taken must be seen from then on */
    u->taken |= rc == SIEVE_OK;
}

/* Every URL taken so far is on disk. */
static void barrier(void)
{
    for (size_t i = 0; i < n_urls; i++)
        urls[i].durable |= urls[i].taken;
}

typedef struct flight {
    sieve_url u;
    char buf[SIEVE_POP_BUF_MAX];
} flight;

/* Checks a URL popped against the model; the entry it is. */
static known *popped(const sieve_url *u, bool snapshot)
{
    known *k = find(u->url);
    if (k == NULL || k->handed || (snapshot ? !k->snap_taken || k->snap_done : k->done))
        abort(); /* a URL never taken, one done, or one twice */
    if (u->data_len != k->data_len || (u->data_len && memcmp(u->data, k->data, u->data_len)))
        abort();
    k->handed = true;
    return k;
}

/* Takes in-flight entry i out, moving the last into its place. */
static void land(flight *fl, size_t *n, size_t i)
{
    flight *last = &fl[*n - 1];
    if (&fl[i] != last) {
        /* pop() put the data at the buffer's start and the URL after it */
        fl[i] = *last;
        fl[i].u.url = fl[i].buf + (last->u.url - last->buf);
        fl[i].u.data = last->u.data ? fl[i].buf : NULL;
    }
    (*n)--;
}

/* The snapshot: the state's files now, and the model as it stands. */
static void snapshot(void)
{
    copy_tree(state, snap, 2);
    for (size_t i = 0; i < n_urls; i++) {
        urls[i].snap_taken = urls[i].taken;
        urls[i].snap_durable = urls[i].durable;
        urls[i].snap_done = urls[i].done;
    }
}

static void run(sieve_frontier *f, const uint8_t *p, size_t n, bool *snapped)
{
    static flight fl[MAX_FLIGHT];
    size_t n_fl = 0;
    while (n >= 2) {
        unsigned op = p[0] & 7, flags = p[0] >> 3;
        size_t len = p[1] < n - 2 ? p[1] : n - 2;
        const uint8_t *d = p + 2;
        p += 2 + len;
        n -= 2 + len;
        if (op == PUSH) {
            push(f, flags, d, len);
        } else if (op == POP && n_fl < MAX_FLIGHT) {
            flight *x = &fl[n_fl];
            if (sieve_frontier_try_pop(f, x->buf, sizeof x->buf, &x->u, NULL) != SIEVE_OK)
                continue;
            known *k = find(x->u.url);
            if (k == NULL || !k->taken || k->done)
                abort(); /* a URL never taken, or one done */
            for (size_t i = 0; i < n_fl; i++)
                if (strcmp(fl[i].u.url, x->u.url) == 0)
                    abort(); /* one in flight already */
            n_fl++;
        } else if ((op == DONE || op == REQUEUE) && n_fl > 0) {
            size_t i = flags % n_fl;
            known *k = find(fl[i].u.url);
            int rc =
                op == DONE ? sieve_frontier_done(f, &fl[i].u) : sieve_frontier_requeue(f, &fl[i].u);
            if (op == REQUEUE && !polite) {
                if (rc != SIEVE_ESTATE)
                    abort(); /* one FIFO gives nothing back */
                continue;
            }
            if (rc != SIEVE_OK)
                abort();
            if (op == DONE) {
                barrier(); /* the pushes before it are written, then the done */
                k->done = true;
            }
            land(fl, &n_fl, i);
        } else if (op == SYNC) {
            if (sieve_frontier_sync(f) != SIEVE_OK)
                abort();
            barrier();
        } else if (op == SNAPSHOT && !*snapped) {
            snapshot();
            *snapped = true;
        }
    }
}

/* Opens dir and takes every URL it hands out, checking each. */
static void drain(const char *dir, bool snapshot)
{
    for (size_t i = 0; i < n_urls; i++)
        urls[i].handed = false;
    sieve_frontier *f = open_at(dir);
    static char buf[SIEVE_POP_BUF_MAX];
    sieve_url u;
    int rc;
    while ((rc = sieve_frontier_try_pop(f, buf, sizeof buf, &u, NULL)) == SIEVE_OK) {
        popped(&u, snapshot);
        if (sieve_frontier_done(f, &u) != SIEVE_OK)
            abort();
    }
    if (rc != SIEVE_EDRAINED)
        abort();
    sieve_frontier_free(f);
    for (size_t i = 0; i < n_urls; i++) {
        const known *k = &urls[i];
        bool due = snapshot ? k->snap_durable && !k->snap_done : k->taken && !k->done;
        if (due && !k->handed)
            abort(); /* lost */
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    bool snapped = false;
    bloom = (data[0] & 3) == 3;
    polite = !(data[0] & 4);
    spill = !(data[0] & 8);
    scratch_remove(state, 2);
    scratch_remove(snap, 2);
    n_urls = 0;
    sieve_frontier *f = open_at(state);
    run(f, data + 1, size - 1, &snapped);
    sieve_frontier_free(f); /* URLs still in flight come back at the open */
    drain(state, false);
    if (snapped)
        drain(snap, true);
    return 0;
}
