/* test-journal.c - the durable frontier's journal: records come back as
 * appended, across segments, reopens and a concurrent writer; damage at
 * every offset near a segment's end and bit flips everywhere are cut as a
 * torn tail or refused with a message, never returned as a wrong record
 * and never lose a record before the damage; a write cut short by
 * RLIMIT_FSIZE leaves a journal that reopens clean.
 *
 * JOURNAL_BENCH=N runs the throughput measurement instead (see bench()). */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "journal.h"

#define HEADER   24u /* segment header */
#define OVERHEAD 9u  /* a record's length, type and checksum */
#define END_REC  17u /* a full segment's end record */
#define SMALL    512u
#define MAX_RECS 4096

static char root[64];

static void make_root(void)
{
    strcpy(root, "/tmp/sieve-journal-XXXXXX");
    if (mkdtemp(root) == NULL)
        abort();
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    return remove(path);
}

static void remove_tree(const char *path)
{
    nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void remove_root(void)
{
    remove_tree(root);
}

/* root/name, in one of a few rotating buffers. */
static const char *at(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static const char *at(const char *fmt, ...)
{
    static char bufs[4][512];
    static int next;
    char *b = bufs[next++ % 4];
    char name[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    snprintf(b, 512, "%s/%s", root, name);
    return b;
}

static const char *seg_path(const char *dir, uint32_t seg)
{
    static char buf[600];
    snprintf(buf, sizeof buf, "%s/%08" PRIu32 ".log", dir, seg);
    return buf;
}

/* ---- the records: a pure function of their index ---- */

static uint8_t rec_type(uint64_t i)
{
    return (uint8_t)(1 + i % 255);
}

static size_t rec_len(uint64_t i)
{
    return 4 + (size_t)(i * 37 % 120);
}

static void rec_payload(uint64_t i, unsigned char *p)
{
    size_t len = rec_len(i);
    for (size_t k = 0; k < 4; k++)
        p[k] = (unsigned char)(i >> (8 * k));
    for (size_t k = 4; k < len; k++)
        p[k] = (unsigned char)(i * 131 + k * 7);
}

static journal_record make_rec(uint64_t i, unsigned char *buf)
{
    rec_payload(i, buf);
    return (journal_record){.type = rec_type(i), .payload = buf, .len = rec_len(i)};
}

/* Appends records from..from+n-1, batch at a time (1: journal_append). */
static void append_range(journal *j, uint64_t from, uint64_t n, size_t batch, journal_pos *pos)
{
    static unsigned char bufs[64][128];
    journal_record recs[64] = {0}; /* gcc cannot see that batch >= 1 fills recs[0] */
    ck_assert_uint_le(batch, 64);
    for (uint64_t i = from; i < from + n;) {
        size_t k = 0;
        for (; k < batch && i + k < from + n; k++)
            recs[k] = make_rec(i + k, bufs[k]);
        if (batch == 1) {
            ck_assert_int_eq(journal_append(j, recs[0].type, recs[0].payload, recs[0].len,
                                            pos ? pos + (i - from) : NULL),
                             SIEVE_OK);
        } else {
            size_t written = 0;
            ck_assert_int_eq(
                journal_append_batch(j, recs, k, pos ? pos + (i - from) : NULL, &written),
                SIEVE_OK);
            ck_assert_uint_eq(written, k);
        }
        i += k;
    }
}

/* Packs records from..from+n-1 with journal_encode(), each payload split
 * in two at a point that varies, into buf; returns the bytes, and the
 * offset of each record in off. */
static size_t pack_range(uint64_t from, size_t n, unsigned char *buf, size_t *off)
{
    size_t used = 0;
    for (size_t k = 0; k < n; k++) {
        unsigned char payload[128];
        rec_payload(from + k, payload);
        size_t len = rec_len(from + k), head = (from + k) % (len + 1);
        off[k] = used;
        used += journal_encode(buf + used, rec_type(from + k), payload, head, payload + head,
                               len - head);
        ck_assert_uint_eq(used - off[k], JOURNAL_RECORD_SIZE(len));
    }
    return used;
}

/* Appends records from..from+n-1 with journal_append_packed(), batch at a
 * time, marking a different one of each batch; pos gets the position of
 * each record marked, the others' entries are left alone. */
static void append_packed_range(journal *j, uint64_t from, uint64_t n, size_t batch,
                                journal_pos *pos)
{
    static unsigned char buf[64 * JOURNAL_RECORD_SIZE(128)];
    size_t off[64];
    ck_assert_uint_le(batch, 64);
    for (uint64_t i = from; i < from + n;) {
        size_t k = from + n - i < batch ? (size_t)(from + n - i) : batch;
        size_t used = pack_range(i, k, buf, off), mark = (size_t)(i / batch % k);
        ck_assert_int_eq(journal_append_packed(j, buf, used, off[mark], &pos[i - from + mark]),
                         SIEVE_OK);
        i += k;
    }
}

static bool matches(uint64_t i, uint8_t type, const void *payload, uint32_t len)
{
    unsigned char want[128];
    rec_payload(i, want);
    return type == rec_type(i) && len == rec_len(i) && memcmp(payload, want, len) == 0;
}

/* Reads records first..first+n-1 from r, then expects the end. */
static void expect_records(journal_reader *r, uint64_t first, uint64_t n)
{
    uint8_t type;
    const void *payload;
    uint32_t len;
    for (uint64_t i = first; i < first + n; i++) {
        int rc = journal_read(r, &type, &payload, &len, NULL);
        ck_assert_msg(rc == SIEVE_OK, "record %" PRIu64 ": %s (%s)", i, sieve_strerror(rc),
                      journal_reader_message(r));
        ck_assert_msg(matches(i, type, payload, len), "record %" PRIu64 " differs", i);
    }
    ck_assert_int_eq(journal_read(r, &type, &payload, &len, NULL), JOURNAL_END);
}

static void expect_journal(journal *j, uint64_t n)
{
    journal_reader *r;
    ck_assert_int_eq(journal_reader_open(j, journal_begin(j), &r), SIEVE_OK);
    expect_records(r, 0, n);
    journal_reader_close(r);
}

static journal *open_ok(const char *dir, uint64_t seg_max, journal_recovery *rec)
{
    journal *j = NULL;
    char msg[512];
    int rc = journal_open(&j, dir, seg_max, rec, msg, sizeof msg);
    ck_assert_msg(rc == SIEVE_OK, "open %s: %s: %s", dir, sieve_strerror(rc), msg);
    return j;
}

static uint64_t file_size(const char *path)
{
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    return (uint64_t)st.st_size;
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    rewind(f);
    unsigned char *data = malloc(*len + 1);
    ck_assert_ptr_nonnull(data);
    ck_assert_uint_eq(fread(data, 1, *len, f), *len);
    fclose(f);
    return data;
}

static void spill(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, len, f), len);
    ck_assert_int_eq(fclose(f), 0);
}

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* ---- a pristine journal of small segments, for the damage tests ---- */

typedef struct pristine {
    char dir[512];
    uint64_t n;
    journal_pos pos[MAX_RECS];
    uint32_t segs;               /* segments 1..segs */
    uint64_t size[64 + 1];       /* by segment number */
    unsigned char *data[64 + 1]; /* the files' bytes */
} pristine;

/* At least n records, and as many more as it takes to end with two in the
 * last segment, which the damage rules need. */
static void make_pristine(pristine *p, const char *name, uint64_t n)
{
    snprintf(p->dir, sizeof p->dir, "%s", at("%s", name));
    journal *j = open_ok(p->dir, SMALL, NULL);
    append_range(j, 0, n, 3, p->pos);
    while (p->pos[n - 1].segment != p->pos[n - 2].segment) {
        append_range(j, n, 1, 1, p->pos + n);
        n++;
    }
    p->n = n;
    ck_assert_int_eq(journal_close(j), SIEVE_OK);
    p->segs = p->pos[n - 1].segment;
    ck_assert_uint_le(p->segs, 64);
    ck_assert_uint_ge(p->segs, 4);
    for (uint32_t s = 1; s <= p->segs; s++) {
        size_t len;
        p->data[s] = slurp(seg_path(p->dir, s), &len);
        p->size[s] = len;
    }
}

/* Puts back segment s as the pristine journal has it, and removes any
 * segment a test appended. Rewriting in place is much cheaper than making
 * the directory again, and the damage tests run thousands of cases. */
static void restore(const pristine *p, const char *dst, uint32_t s)
{
    int fd = open(seg_path(dst, s), O_WRONLY | O_CREAT | O_TRUNC, 0666);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, p->data[s], p->size[s]), (ssize_t)p->size[s]);
    close(fd);
    for (uint32_t extra = p->segs + 1; extra <= p->segs + 2; extra++)
        ck_assert(unlink(seg_path(dst, extra)) == 0 || errno == ENOENT);
}

static void copy_pristine(const pristine *p, const char *dst)
{
    ck_assert(mkdir(dst, 0777) == 0 || errno == EEXIST);
    for (uint32_t s = 1; s <= p->segs; s++)
        restore(p, dst, s);
}

static uint64_t rec_end(const pristine *p, uint64_t i)
{
    return p->pos[i].offset + OVERHEAD + rec_len(i);
}

/* The record of segment s holding byte o, or n if there is none. */
static uint64_t record_at(const pristine *p, uint32_t s, uint64_t o)
{
    for (uint64_t i = 0; i < p->n; i++)
        if (p->pos[i].segment == s && p->pos[i].offset <= o && o < rec_end(p, i))
            return i;
    return p->n;
}

/* Reads the damaged journal from its start: records 0..good-1 must come
 * back intact, then the read must end as expect says (JOURNAL_END or an
 * error). */
static void expect_prefix(journal *j, uint64_t good, bool end_clean, const char *what)
{
    journal_reader *r;
    uint8_t type;
    const void *payload;
    uint32_t len;
    ck_assert_int_eq(journal_reader_open(j, journal_begin(j), &r), SIEVE_OK);
    for (uint64_t i = 0; i < good; i++) {
        int rc = journal_read(r, &type, &payload, &len, NULL);
        ck_assert_msg(rc == SIEVE_OK, "%s: record %" PRIu64 ": %s (%s)", what, i,
                      sieve_strerror(rc), journal_reader_message(r));
        ck_assert_msg(matches(i, type, payload, len), "%s: record %" PRIu64 " differs", what, i);
    }
    int rc = journal_read(r, &type, &payload, &len, NULL);
    if (end_clean) {
        ck_assert_msg(rc == JOURNAL_END, "%s: after %" PRIu64 " records: %s", what, good,
                      sieve_strerror(rc));
    } else {
        ck_assert_msg(rc < 0 && rc != JOURNAL_END, "%s: damaged record read as %s", what,
                      sieve_strerror(rc));
        ck_assert_msg(strstr(journal_reader_message(r), "offset") != NULL, "%s: message %s", what,
                      journal_reader_message(r));
    }
    journal_reader_close(r);
}

static void expect_refused(int rc, const char *msg, uint32_t seg, const char *what)
{
    char name[32];
    snprintf(name, sizeof name, "%08" PRIu32 ".log", seg);
    ck_assert_msg(rc < 0, "%s: opened", what);
    ck_assert_msg(strstr(msg, name) != NULL && strstr(msg, "offset") != NULL,
                  "%s: message \"%s\" names no file and offset", what, msg);
}

/* ---- round trips ---- */

START_TEST(round_trip_across_segments)
{
    static journal_pos pos[3000];
    const char *dir = at("rt");
    journal *j = open_ok(dir, 1024, NULL);
    ck_assert_int_eq(journal_pos_cmp(journal_begin(j), journal_tail(j)), 0);
    append_range(j, 0, 1000, 1, pos);
    append_range(j, 1000, 2000, 7, pos + 1000);
    ck_assert_int_eq(journal_sync(j), SIEVE_OK);
    for (int i = 1; i < 3000; i++)
        ck_assert_int_lt(journal_pos_cmp(pos[i - 1], pos[i]), 0);
    /* Rotation: many segments, none above the maximum. */
    uint32_t segs = pos[2999].segment;
    ck_assert_uint_gt(segs, 100);
    for (uint32_t s = 1; s <= segs; s++)
        ck_assert_uint_le(file_size(seg_path(dir, s)), 1024);
    expect_journal(j, 3000);

    /* A reader opened at any record's position starts with that record. */
    for (int i = 0; i < 3000; i += 97) {
        journal_reader *r;
        ck_assert_int_eq(journal_reader_open(j, pos[i], &r), SIEVE_OK);
        expect_records(r, (uint64_t)i, (uint64_t)(3000 - i));
        ck_assert_int_eq(journal_pos_cmp(journal_reader_tell(r), journal_tail(j)), 0);
        journal_reader_close(r);
    }
    ck_assert_int_eq(journal_close(j), SIEVE_OK);

    /* Reopened: everything is there, and appends go on after it. */
    journal_recovery rec;
    j = open_ok(dir, 1024, &rec);
    ck_assert(!rec.repaired);
    expect_journal(j, 3000);
    journal_pos next;
    append_range(j, 3000, 1, 1, &next);
    ck_assert_int_gt(journal_pos_cmp(next, pos[2999]), 0);
    expect_journal(j, 3001);
    ck_assert_int_eq(journal_close(j), SIEVE_OK);
}
END_TEST

/* Records packed by their writer go out as they are: across segments
 * within one call, and the position of the one marked is where a reader
 * finds it. */
START_TEST(packed_records_round_trip_across_segments)
{
    static journal_pos pos[3000];
    const char *dir = at("packed");
    journal *j = open_ok(dir, 1024, NULL);
    append_range(j, 0, 100, 3, NULL);
    memset(pos, 0, sizeof pos);
    append_packed_range(j, 100, 2900, 37, pos + 100);
    uint32_t segs = journal_tail(j).segment;
    ck_assert_uint_gt(segs, 100);
    for (uint32_t s = 1; s <= segs; s++)
        ck_assert_uint_le(file_size(seg_path(dir, s)), 1024);
    expect_journal(j, 3000);
    for (uint64_t i = 100; i < 3000; i++) {
        if (pos[i].segment == 0)
            continue; /* not marked */
        journal_reader *r;
        ck_assert_int_eq(journal_reader_open(j, pos[i], &r), SIEVE_OK);
        expect_records(r, i, 3000 - i);
        journal_reader_close(r);
    }
    /* A batch larger than a segment is split at record boundaries. */
    static unsigned char big[40 * JOURNAL_RECORD_SIZE(128)];
    size_t off[40];
    size_t used = pack_range(3000, 40, big, off);
    ck_assert_uint_gt(used, 2 * 1024);
    ck_assert_int_eq(journal_append_packed(j, big, used, SIZE_MAX, NULL), SIEVE_OK);
    ck_assert_int_eq(journal_close(j), SIEVE_OK);

    journal_recovery rec;
    j = open_ok(dir, 1024, &rec);
    ck_assert(!rec.repaired);
    expect_journal(j, 3040);
    ck_assert_int_eq(journal_close(j), SIEVE_OK);
}
END_TEST

START_TEST(positions_outside_the_journal_are_refused)
{
    journal *j = open_ok(at("pos"), 1024, NULL);
    append_range(j, 0, 100, 5, NULL);
    journal_reader *r = NULL;
    journal_pos tail = journal_tail(j);
    ck_assert_int_eq(journal_reader_open(j, (journal_pos){tail.segment, tail.offset + 1}, &r),
                     SIEVE_EINVAL);
    ck_assert_int_eq(journal_reader_open(j, (journal_pos){tail.segment + 1, HEADER}, &r),
                     SIEVE_EINVAL);
    ck_assert_int_eq(journal_reader_open(j, (journal_pos){1, 0}, &r), SIEVE_EINVAL);
    ck_assert_int_eq(journal_reader_open(j, (journal_pos){0, HEADER}, &r), SIEVE_EINVAL);
    ck_assert_ptr_null(r);
    ck_assert_int_eq(journal_reader_open(j, tail, &r), SIEVE_OK);
    ck_assert_int_eq(journal_read(r, NULL, NULL, NULL, NULL), JOURNAL_END);
    journal_reader_close(r);
    ck_assert_int_eq(journal_close(j), SIEVE_OK);
}
END_TEST

START_TEST(bad_arguments_change_nothing)
{
    static unsigned char big[JOURNAL_PAYLOAD_MAX + 1];
    journal *j = NULL;
    ck_assert_int_eq(journal_open(&j, at("args"), JOURNAL_SEGMENT_MIN - 1, NULL, NULL, 0),
                     SIEVE_EINVAL);
    ck_assert_int_eq(journal_open(&j, "", 0, NULL, NULL, 0), SIEVE_EINVAL);
    j = open_ok(at("args"), 0, NULL);
    append_range(j, 0, 3, 1, NULL);
    journal_pos tail = journal_tail(j);
    ck_assert_int_eq(journal_append(j, 0, "x", 1, NULL), SIEVE_EINVAL);
    ck_assert_int_eq(journal_append(j, 1, NULL, 1, NULL), SIEVE_EINVAL);
    ck_assert_int_eq(journal_append(j, 1, big, sizeof big, NULL), SIEVE_ETOOLONG);
    unsigned char b0[128], b1[128];
    journal_record recs[2] = {make_rec(3, b0), {.type = 0, .payload = b1, .len = 1}};
    size_t written = 99;
    ck_assert_int_eq(journal_append_batch(j, recs, 2, NULL, &written), SIEVE_EINVAL);
    ck_assert_uint_eq(written, 0);
    ck_assert_int_eq(journal_pos_cmp(journal_tail(j), tail), 0);
    ck_assert_int_eq(journal_drop_before(j, tail.segment + 1), SIEVE_EINVAL);
    expect_journal(j, 3);
    ck_assert_int_eq(journal_close(j), SIEVE_OK);
}
END_TEST

START_TEST(largest_record_gets_a_segment_of_its_own)
{
    unsigned char *big = malloc(JOURNAL_PAYLOAD_MAX);
    ck_assert_ptr_nonnull(big);
    for (size_t k = 0; k < JOURNAL_PAYLOAD_MAX; k++)
        big[k] = (unsigned char)(k * 2654435761u >> 13);
    const char *dir = at("big");
    journal *j = open_ok(dir, 1024, NULL);
    journal_pos p0, p1, p2;
    ck_assert_int_eq(journal_append(j, 9, "before", 6, &p0), SIEVE_OK);
    ck_assert_int_eq(journal_append(j, 10, big, JOURNAL_PAYLOAD_MAX, &p1), SIEVE_OK);
    ck_assert_int_eq(journal_append(j, 11, "after", 5, &p2), SIEVE_OK);
    ck_assert_uint_eq(p1.segment, p0.segment + 1);
    ck_assert_uint_eq(p1.offset, HEADER);
    ck_assert_uint_eq(p2.segment, p1.segment + 1);
    ck_assert_int_eq(journal_close(j), SIEVE_OK);
    for (int pass = 0; pass < 2; pass++) {
        journal_recovery rec;
        j = open_ok(dir, 1024, &rec);
        ck_assert(!rec.repaired);
        journal_reader *r;
        uint8_t type;
        const void *payload;
        uint32_t len;
        ck_assert_int_eq(journal_reader_open(j, p1, &r), SIEVE_OK);
        ck_assert_int_eq(journal_read(r, &type, &payload, &len, NULL), SIEVE_OK);
        ck_assert_uint_eq(type, 10);
        ck_assert_uint_eq(len, JOURNAL_PAYLOAD_MAX);
        ck_assert_mem_eq(payload, big, JOURNAL_PAYLOAD_MAX);
        if (pass == 0) {
            ck_assert_int_eq(journal_read(r, &type, &payload, &len, NULL), SIEVE_OK);
            ck_assert_uint_eq(type, 11);
        }
        ck_assert_int_eq(journal_read(r, &type, &payload, &len, NULL), JOURNAL_END);
        journal_reader_close(r);
        /* The second pass scans the big record as the last segment's. */
        if (pass == 0)
            ck_assert_int_eq(unlink(seg_path(dir, p2.segment)), 0);
        ck_assert_int_eq(journal_close(j), SIEVE_OK);
    }
    free(big);
}
END_TEST

/* ---- reading while appending ---- */

START_TEST(reader_follows_the_writer_in_one_thread)
{
    journal *j = open_ok(at("follow"), SMALL, NULL);
    journal_reader *r;
    ck_assert_int_eq(journal_reader_open(j, journal_begin(j), &r), SIEVE_OK);
    ck_assert_int_eq(journal_read(r, NULL, NULL, NULL, NULL), JOURNAL_END);
    uint8_t type;
    const void *payload;
    uint32_t len;
    journal_pos pos, got;
    for (uint64_t i = 0; i < 400; i++) {
        append_range(j, i, 1, 1, &pos);
        ck_assert_int_eq(journal_read(r, &type, &payload, &len, &got), SIEVE_OK);
        ck_assert(matches(i, type, payload, len));
        ck_assert_int_eq(journal_pos_cmp(pos, got), 0);
        ck_assert_int_eq(journal_read(r, &type, &payload, &len, NULL), JOURNAL_END);
        ck_assert_int_eq(journal_read(r, &type, &payload, &len, NULL), JOURNAL_END);
    }
    ck_assert_uint_gt(pos.segment, 30);
    journal_reader_close(r);
    ck_assert_int_eq(journal_close(j), SIEVE_OK);
}
END_TEST

typedef struct follow {
    journal *j;
    uint64_t n;
    uint64_t got;  /* records read and found right */
    int error;     /* the reader's first error, 0 if none */
    uint64_t ends; /* JOURNAL_END answers: the reader did catch up */
} follow;

static void *reader_thread(void *arg)
{
    follow *f = arg;
    journal_reader *r;
    f->error = journal_reader_open(f->j, journal_begin(f->j), &r);
    while (f->error == 0 && f->got < f->n) {
        uint8_t type;
        const void *payload;
        uint32_t len;
        int rc = journal_read(r, &type, &payload, &len, NULL);
        if (rc == JOURNAL_END) {
            f->ends++;
            sched_yield();
        } else if (rc != SIEVE_OK) {
            f->error = rc;
        } else if (!matches(f->got, type, payload, len)) {
            f->error = SIEVE_EFORMAT;
        } else {
            f->got++;
        }
    }
    if (f->error == 0 && journal_read(r, NULL, NULL, NULL, NULL) != JOURNAL_END)
        f->error = SIEVE_ESTATE;
    journal_reader_close(r);
    return NULL;
}

START_TEST(reader_follows_the_writer_from_another_thread)
{
    journal *j = open_ok(at("threads"), 4096, NULL);
    follow f = {.j = j, .n = 30000};
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, reader_thread, &f), 0);
    for (uint64_t i = 0; i < f.n;) {
        uint64_t k = 1 + i % 7;
        if (k > f.n - i)
            k = f.n - i;
        append_range(j, i, k, (size_t)k, NULL);
        i += k;
    }
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ck_assert_msg(f.error == 0, "reader: %s after %" PRIu64 " records", sieve_strerror(f.error),
                  f.got);
    ck_assert_uint_eq(f.got, f.n);
    ck_assert_uint_gt(journal_tail(j).segment, 400);
    ck_assert_int_eq(journal_close(j), SIEVE_OK);
}
END_TEST

/* ---- crashes and damage ---- */

START_TEST(cuts_at_every_offset_near_a_segment_end)
{
    static pristine p;
    make_pristine(&p, "cut-pristine", 30);
    const char *work = at("cut");
    copy_pristine(&p, work);
    for (uint32_t s = 1; s <= p.segs; s++) {
        /* The header, and the last two records (the end record counts). */
        uint64_t from = p.size[s];
        for (uint64_t i = 0, seen = 0; i < p.n && seen < 2; i++) {
            uint64_t k = p.n - 1 - i;
            if (p.pos[k].segment != s)
                continue;
            from = p.pos[k].offset;
            seen += s < p.segs ? 2 : 1;
        }
        for (uint64_t t = 0; t < p.size[s]; t = t + 1 == HEADER ? from : t + 1) {
            char what[96], msg[512];
            snprintf(what, sizeof what, "segment %" PRIu32 " cut at %" PRIu64, s, t);
            ck_assert_int_eq(truncate(seg_path(work, s), (off_t)t), 0);
            journal *j = NULL;
            journal_recovery rec;
            int rc = journal_open(&j, work, SMALL, &rec, msg, sizeof msg);
            if (s < p.segs) {
                expect_refused(rc, msg, s, what);
                restore(&p, work, s);
                continue;
            }
            ck_assert_msg(rc == SIEVE_OK, "%s: %s", what, msg);
            /* Kept: the records that end at or before the cut. */
            uint64_t kept = 0, boundary = HEADER;
            while (kept < p.n && (p.pos[kept].segment < s || rec_end(&p, kept) <= t)) {
                if (p.pos[kept].segment == s)
                    boundary = rec_end(&p, kept);
                kept++;
            }
            bool torn = t < HEADER || t != boundary;
            ck_assert_msg(rec.repaired == torn, "%s: repaired %d", what, rec.repaired);
            if (torn) {
                ck_assert_uint_eq(rec.at.segment, s);
                ck_assert_uint_eq(rec.at.offset, boundary);
                ck_assert_uint_eq(rec.bytes_cut, t < HEADER ? t : t - boundary);
                ck_assert_ptr_nonnull(strstr(rec.what, seg_path(work, s)));
            }
            ck_assert_uint_eq(file_size(seg_path(work, s)), boundary);
            expect_prefix(j, kept, true, what);
            /* Appends go on from the cut, and a reopen finds them whole. */
            append_range(j, kept, 1, 1, NULL);
            ck_assert_int_eq(journal_close(j), SIEVE_OK);
            j = open_ok(work, SMALL, &rec);
            ck_assert(!rec.repaired);
            expect_prefix(j, kept + 1, true, what);
            ck_assert_int_eq(journal_close(j), SIEVE_OK);
            restore(&p, work, s);
        }
    }
}
END_TEST

/* Flips one bit of segment s at offset o and checks what the rules say. */
static void flip_and_check(const pristine *p, const char *work, uint32_t s, uint64_t o, int bit)
{
    char what[96], msg[512];
    snprintf(what, sizeof what, "segment %" PRIu32 " offset %" PRIu64 " bit %d", s, o, bit);
    int fd = open(seg_path(work, s), O_RDWR);
    unsigned char b;
    ck_assert_int_eq(pread(fd, &b, 1, (off_t)o), 1);
    b ^= (unsigned char)(1u << bit);
    ck_assert_int_eq(pwrite(fd, &b, 1, (off_t)o), 1);
    close(fd);
    journal *j = NULL;
    journal_recovery rec;
    int rc = journal_open(&j, work, SMALL, &rec, msg, sizeof msg);
    uint64_t d = record_at(p, s, o);
    if (d == p->n) { /* the header or the end record */
        expect_refused(rc, msg, s, what);
    } else if (s < p->segs) { /* found by the reader, not by open */
        ck_assert_msg(rc == SIEVE_OK && !rec.repaired, "%s: %s", what, msg);
        expect_prefix(j, d, false, what);
    } else if (d + 1 < p->n) { /* valid records follow */
        expect_refused(rc, msg, s, what);
    } else { /* the very last record: a torn tail */
        ck_assert_msg(rc == SIEVE_OK && rec.repaired, "%s: %s", what, msg);
        ck_assert_int_eq(journal_pos_cmp(rec.at, p->pos[d]), 0);
        ck_assert_uint_eq(rec.bytes_cut, OVERHEAD + rec_len(d));
        expect_prefix(j, d, true, what);
    }
    if (j != NULL)
        ck_assert_int_eq(journal_close(j), SIEVE_OK);
    /* Opening may have cut the last segment. */
    restore(p, work, s);
    restore(p, work, p->segs);
}

START_TEST(bit_flips_anywhere_are_cut_or_refused)
{
    static pristine p;
    make_pristine(&p, "flip-pristine", 30);
    const char *work = at("flip");
    copy_pristine(&p, work);
    for (uint32_t s = 1; s <= p.segs; s++) {
        for (uint64_t o = 0; o < p.size[s]; o++) {
            flip_and_check(&p, work, s, o, (int)(o % 8));
            flip_and_check(&p, work, s, o, (int)((5 * o + 3) % 8));
        }
    }
}
END_TEST

START_TEST(zeros_after_a_crash_are_cut)
{
    static pristine p;
    make_pristine(&p, "zero-pristine", 60);
    const char *work = at("zero");
    copy_pristine(&p, work);
    static const unsigned char zeros[4096];
    FILE *f = fopen(seg_path(work, p.segs), "ab");
    ck_assert_uint_eq(fwrite(zeros, 1, sizeof zeros, f), sizeof zeros);
    fclose(f);
    journal_recovery rec;
    journal *j = open_ok(work, SMALL, &rec);
    ck_assert(rec.repaired);
    ck_assert_uint_eq(rec.bytes_cut, sizeof zeros);
    ck_assert_uint_eq(rec.at.offset, p.size[p.segs]);
    expect_journal(j, p.n);
    ck_assert_int_eq(journal_close(j), SIEVE_OK);
}
END_TEST

START_TEST(a_missing_segment_is_refused)
{
    static pristine p;
    make_pristine(&p, "gap-pristine", 60);
    const char *work = at("gap");
    copy_pristine(&p, work);
    ck_assert_int_eq(unlink(seg_path(work, 2)), 0);
    journal *j = NULL;
    char msg[512];
    ck_assert_int_eq(journal_open(&j, work, SMALL, NULL, msg, sizeof msg), SIEVE_EFORMAT);
    ck_assert_ptr_null(j);
    ck_assert_ptr_nonnull(strstr(msg, "00000002.log"));
    ck_assert_ptr_nonnull(strstr(msg, "missing"));
    /* The oldest segments may go: that is what drop_before() does. */
    copy_pristine(&p, work);
    ck_assert_int_eq(unlink(seg_path(work, 1)), 0);
    j = open_ok(work, SMALL, NULL);
    ck_assert_uint_eq(journal_begin(j).segment, 2);
    ck_assert_int_eq(journal_close(j), SIEVE_OK);
}
END_TEST

START_TEST(foreign_headers_are_refused)
{
    static pristine p;
    make_pristine(&p, "hdr-pristine", 60);
    const char *work = at("hdr");
    char msg[512];
    journal *j = NULL;
    unsigned char hdr[HEADER];

    /* A newer format version, with a checksum that matches it. */
    copy_pristine(&p, work);
    int fd = open(seg_path(work, 1), O_RDWR);
    ck_assert_int_eq(pread(fd, hdr, HEADER, 0), HEADER);
    put32(hdr + 8, 2);
    put64(hdr + 16, XXH3_64bits(hdr, 16));
    ck_assert_int_eq(pwrite(fd, hdr, HEADER, 0), HEADER);
    close(fd);
    ck_assert_int_eq(journal_open(&j, work, SMALL, NULL, msg, sizeof msg), SIEVE_EVERSION);
    ck_assert_ptr_nonnull(strstr(msg, "version 2"));
    ck_assert_ptr_nonnull(strstr(msg, "00000001.log"));

    /* A segment under another segment's name. */
    copy_pristine(&p, work);
    size_t len;
    unsigned char *third = slurp(seg_path(work, 3), &len);
    spill(seg_path(work, 2), third, len);
    free(third);
    ck_assert_int_eq(journal_open(&j, work, SMALL, NULL, msg, sizeof msg), SIEVE_EFORMAT);
    ck_assert_ptr_nonnull(strstr(msg, "00000002.log"));
    ck_assert_ptr_nonnull(strstr(msg, "segment 3"));

    /* Not a journal at all, as the last segment. */
    copy_pristine(&p, work);
    spill(seg_path(work, p.segs), "#!/bin/sh\necho not a journal segment\n", 38);
    ck_assert_int_eq(journal_open(&j, work, SMALL, NULL, msg, sizeof msg), SIEVE_EFORMAT);
    ck_assert_ptr_nonnull(strstr(msg, "bad magic"));
    ck_assert_ptr_null(j);
}
END_TEST

/* A crash after a segment's end record and before the next segment. */
START_TEST(a_full_last_segment_is_continued)
{
    static pristine p;
    make_pristine(&p, "sealed-pristine", 60);
    const char *work = at("sealed");
    copy_pristine(&p, work);
    uint64_t in_last = 0;
    for (uint64_t i = 0; i < p.n; i++)
        in_last += p.pos[i].segment == p.segs;
    ck_assert_int_eq(unlink(seg_path(work, p.segs)), 0);
    uint64_t kept = p.n - in_last;

    journal_recovery rec;
    journal *j = open_ok(work, SMALL, &rec);
    ck_assert(!rec.repaired);
    journal_pos tail = journal_tail(j);
    ck_assert_uint_eq(tail.segment, p.segs);
    ck_assert_uint_eq(tail.offset, HEADER);
    journal_reader *r;
    ck_assert_int_eq(journal_reader_open(j, journal_begin(j), &r), SIEVE_OK);
    expect_records(r, 0, kept);
    journal_pos pos;
    append_range(j, kept, 1, 1, &pos);
    ck_assert_int_eq(journal_pos_cmp(pos, tail), 0);
    expect_records(r, kept, 1);
    journal_reader_close(r);
    ck_assert_int_eq(journal_close(j), SIEVE_OK);

    /* The tail then names a segment not made yet: dropping up to it (a
     * checkpoint at the tail) keeps the sealed one, and the journal goes
     * on. */
    copy_pristine(&p, work);
    ck_assert_int_eq(unlink(seg_path(work, p.segs)), 0);
    j = open_ok(work, SMALL, NULL);
    ck_assert_uint_eq(journal_tail(j).segment, p.segs);
    ck_assert_int_eq(journal_drop_before(j, p.segs), SIEVE_OK);
    ck_assert(exists(seg_path(work, p.segs - 1)));
    ck_assert(!exists(seg_path(work, p.segs - 2)));
    ck_assert_int_eq(journal_drop_before(j, p.segs + 1), SIEVE_EINVAL);
    append_range(j, kept, 1, 1, &pos);
    ck_assert_int_eq(journal_pos_cmp(pos, tail), 0);
    ck_assert_int_eq(journal_close(j), SIEVE_OK);
    j = open_ok(work, SMALL, NULL);
    uint64_t first = 0;
    while (p.pos[first].segment < p.segs - 1)
        first++;
    ck_assert_int_eq(journal_reader_open(j, journal_begin(j), &r), SIEVE_OK);
    expect_records(r, first, kept + 1 - first);
    journal_reader_close(r);
    ck_assert_int_eq(journal_close(j), SIEVE_OK);

    /* Anything after an end record is damage, not a torn tail. */
    copy_pristine(&p, work);
    ck_assert_int_eq(unlink(seg_path(work, p.segs)), 0);
    size_t len;
    unsigned char *data = slurp(seg_path(work, p.segs - 1), &len);
    unsigned char *more = malloc(len + 32);
    memcpy(more, data, len);
    put32(more + len, 3);
    more[len + 4] = 7;
    memcpy(more + len + 5, "abc", 3);
    put32(more + len + 8, (uint32_t)XXH3_64bits(more + len, 8));
    spill(seg_path(work, p.segs - 1), more, len + 12);
    free(data);
    free(more);
    char msg[512];
    ck_assert_int_eq(journal_open(&j, work, SMALL, NULL, msg, sizeof msg), SIEVE_EFORMAT);
    ck_assert_ptr_nonnull(strstr(msg, "after the segment's end record"));
}
END_TEST

START_TEST(drop_before_deletes_exactly_the_older_segments)
{
    const char *dir = at("drop");
    static journal_pos pos[600];
    journal *j = open_ok(dir, SMALL, NULL);
    append_range(j, 0, 600, 4, pos);
    uint32_t last = pos[599].segment;
    ck_assert_uint_gt(last, 20);
    journal_reader *r;
    ck_assert_int_eq(journal_drop_before(j, 1), SIEVE_OK);
    ck_assert(exists(seg_path(dir, 1)));
    ck_assert_int_eq(journal_drop_before(j, 10), SIEVE_OK);
    for (uint32_t s = 1; s <= last; s++)
        ck_assert_msg(exists(seg_path(dir, s)) == (s >= 10), "segment %" PRIu32, s);
    ck_assert_int_eq(journal_reader_open(j, pos[0], &r), SIEVE_EINVAL);
    ck_assert_uint_eq(journal_begin(j).segment, 10);
    uint64_t first = 0;
    while (pos[first].segment < 10)
        first++;
    ck_assert_int_eq(journal_reader_open(j, journal_begin(j), &r), SIEVE_OK);
    expect_records(r, first, 600 - first);
    journal_reader_close(r);
    /* Dropping less than what is gone, or up to the last segment. */
    ck_assert_int_eq(journal_drop_before(j, 5), SIEVE_OK);
    ck_assert_int_eq(journal_drop_before(j, last + 1), SIEVE_EINVAL);
    ck_assert_int_eq(journal_drop_before(j, last), SIEVE_OK);
    for (uint32_t s = 1; s <= last; s++)
        ck_assert_msg(exists(seg_path(dir, s)) == (s == last), "segment %" PRIu32, s);
    ck_assert_int_eq(journal_close(j), SIEVE_OK);
    j = open_ok(dir, SMALL, NULL);
    ck_assert_uint_eq(journal_begin(j).segment, last);
    first = 0;
    while (pos[first].segment < last)
        first++;
    ck_assert_int_eq(journal_reader_open(j, journal_begin(j), &r), SIEVE_OK);
    expect_records(r, first, 600 - first);
    journal_reader_close(r);
    ck_assert_int_eq(journal_close(j), SIEVE_OK);
}
END_TEST

/* ---- kill -9 ---- */

/* In a child: appends batches until killed, telling fd how many records
 * each return has confirmed. */
static void append_until_killed(const char *dir, int fd)
{
    static unsigned char bufs[16][128];
    journal_record recs[16];
    journal *j;
    if (journal_open(&j, dir, 8192, NULL, NULL, 0) != SIEVE_OK)
        _exit(1);
    for (uint64_t i = 0;;) {
        size_t k = 1 + (size_t)(i % 16);
        for (size_t m = 0; m < k; m++)
            recs[m] = make_rec(i + m, bufs[m]);
        if (journal_append_batch(j, recs, k, NULL, NULL) != SIEVE_OK)
            _exit(2);
        i += k;
        if (write(fd, &i, sizeof i) != sizeof i)
            _exit(3);
    }
}

START_TEST(kill_9_loses_no_confirmed_record)
{
    const char *dir = at("kill");
    for (int round = 0; round < 5; round++) {
        int pipefd[2];
        ck_assert_int_eq(pipe(pipefd), 0);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
            close(pipefd[0]);
            append_until_killed(dir, pipefd[1]);
        }
        close(pipefd[1]);
        uint64_t confirmed = 0, c;
        /* Let it run a varying while, reading its confirmations. */
        for (int n = 0; n < 2000 * (round + 1) && read(pipefd[0], &c, sizeof c) == sizeof c; n++)
            confirmed = c;
        ck_assert_int_eq(kill(pid, SIGKILL), 0);
        while (read(pipefd[0], &c, sizeof c) == sizeof c)
            confirmed = c;
        close(pipefd[0]);
        int status;
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        ck_assert_uint_gt(confirmed, 0);

        /* Every confirmed record is there, in order, and nothing else. */
        journal *j = open_ok(dir, 8192, NULL);
        journal_reader *r;
        ck_assert_int_eq(journal_reader_open(j, journal_begin(j), &r), SIEVE_OK);
        uint8_t type;
        const void *payload;
        uint32_t len;
        uint64_t n = 0;
        int rc;
        while ((rc = journal_read(r, &type, &payload, &len, NULL)) == SIEVE_OK) {
            ck_assert_msg(matches(n, type, payload, len), "record %" PRIu64 " differs", n);
            n++;
        }
        ck_assert_int_eq(rc, JOURNAL_END);
        ck_assert_uint_ge(n, confirmed);
        journal_reader_close(r);
        ck_assert_int_eq(journal_close(j), SIEVE_OK);
        remove_tree(dir);
    }
}
END_TEST

/* ---- a full file system, by RLIMIT_FSIZE ---- */

/* In a child: appends batches of three until the limit stops one, checks
 * the journal is cut back to a record boundary, raises the limit and goes
 * on (in the same journal, or reopened). Returns 0 or the failed step;
 * writes the number of records appended to fd. */
static int fsize_child(const char *dir, rlim_t limit, bool reopen, bool packed, int fd)
{
    static unsigned char bufs[3][128], pack[3 * JOURNAL_RECORD_SIZE(128)];
    journal_record recs[3];
    journal_pos pos[3];
    size_t off[3];
    signal(SIGXFSZ, SIG_IGN);
    journal *j;
    if (journal_open(&j, dir, 4096, NULL, NULL, 0) != SIEVE_OK)
        return 1;
    struct rlimit rl, saved;
    getrlimit(RLIMIT_FSIZE, &saved);
    rl = saved;
    rl.rlim_cur = limit;
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
        return 2;
    uint64_t i = 0;
    int rc = SIEVE_OK;
    while (rc == SIEVE_OK && i < 2000) {
        size_t written = 0;
        if (packed) {
            /* what went out, read back from where the batch began */
            journal_pos before = journal_tail(j);
            rc = journal_append_packed(j, pack, pack_range(i, 3, pack, off), SIZE_MAX, NULL);
            journal_reader *r;
            if (journal_reader_open(j, before, &r) != SIEVE_OK)
                return 11;
            while (journal_read(r, NULL, NULL, NULL, NULL) == SIEVE_OK)
                written++;
            journal_reader_close(r);
        } else {
            for (int k = 0; k < 3; k++)
                recs[k] = make_rec(i + (uint64_t)k, bufs[k]);
            rc = journal_append_batch(j, recs, 3, pos, &written);
        }
        i += written;
    }
    if (rc != SIEVE_EIO || errno != EFBIG)
        return 3;
    journal_pos tail = journal_tail(j);
    struct stat st;
    if (stat(seg_path(dir, tail.segment), &st) != 0 || (uint64_t)st.st_size != tail.offset)
        return 4;
    recs[0] = make_rec(i, bufs[0]);
    rc = journal_append(j, recs[0].type, recs[0].payload, recs[0].len, NULL);
    if (rc != SIEVE_EIO || errno != EFBIG || journal_pos_cmp(journal_tail(j), tail) != 0)
        return 5;
    if (setrlimit(RLIMIT_FSIZE, &saved) != 0)
        return 6;
    if (reopen) {
        journal_recovery rec;
        if (journal_close(j) != SIEVE_OK || journal_open(&j, dir, 4096, &rec, NULL, 0) != 0)
            return 7;
        if (rec.repaired)
            return 8;
    }
    for (uint64_t k = 0; k < 10; k++, i++) {
        recs[0] = make_rec(i, bufs[0]);
        if (journal_append(j, recs[0].type, recs[0].payload, recs[0].len, NULL) != SIEVE_OK)
            return 9;
    }
    if (journal_close(j) != SIEVE_OK || write(fd, &i, sizeof i) != sizeof i)
        return 10;
    return 0;
}

static void fsize_case(const char *dir, rlim_t limit, bool reopen, bool packed)
{
    int pipefd[2];
    ck_assert_int_eq(pipe(pipefd), 0);
    remove_tree(dir);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(pipefd[0]);
        _exit(fsize_child(dir, limit, reopen, packed, pipefd[1]));
    }
    close(pipefd[1]);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "limit %ld%s: child failed at step %d (signal %d)", (long)limit,
                  packed ? ", packed" : "", WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                  WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    uint64_t n = 0;
    ck_assert_int_eq(read(pipefd[0], &n, sizeof n), sizeof n);
    close(pipefd[0]);
    journal_recovery rec;
    journal *j = open_ok(dir, 4096, &rec);
    ck_assert_msg(!rec.repaired, "limit %ld: %s", (long)limit, rec.what);
    expect_journal(j, n);
    ck_assert_int_eq(journal_close(j), SIEVE_OK);
}

START_TEST(a_full_disk_leaves_a_clean_journal)
{
    /* Where the first segment's end record goes, without a limit. */
    const char *dir = at("fsize");
    journal *j = open_ok(dir, 4096, NULL);
    append_range(j, 0, 200, 3, NULL);
    ck_assert_int_eq(journal_close(j), SIEVE_OK);
    uint64_t end = file_size(seg_path(dir, 1));
    ck_assert_uint_gt(end, 4000);
    /* Every limit across the last records and the end record, some far. */
    for (rlim_t limit = (rlim_t)end - 150; limit < end; limit++)
        for (int packed = 0; packed < 2; packed++)
            fsize_case(dir, limit, limit % 2 == 0, packed);
    fsize_case(dir, HEADER + 1, true, false);
    fsize_case(dir, 1000, false, false);
    fsize_case(dir, HEADER + 1, false, true);
    fsize_case(dir, 1000, true, true);
}
END_TEST

/* ---- throughput, by hand: JOURNAL_BENCH=10000000 ---- */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A URL-like 70-byte payload carrying its index in hex: cheap enough
 * (about 10 ns) not to weigh on the figures. */
static void bench_payload(uint64_t i, unsigned char *p)
{
    static const char tmpl[] =
        "https://host-0000.example.org/path/to/page-0000000000000000.html?q=123";
    static const char hex[] = "0123456789abcdef";
    memcpy(p, tmpl, 70);
    for (int k = 0; k < 4; k++)
        p[13 + k] = (unsigned char)hex[(i >> (4 * (3 - k))) & 15];
    for (int k = 0; k < 16; k++)
        p[43 + k] = (unsigned char)hex[(i >> (4 * (15 - k))) & 15];
}

static void bench_report(const char *what, uint64_t n, uint64_t bytes, double s)
{
    printf("%-28s %10" PRIu64 " records %8.1f MB/s %8.1f ns/record %6.2f s\n", what, n,
           (double)bytes / s / 1e6, s * 1e9 / (double)n, s);
    fflush(stdout);
}

static void bench_write(const char *dir, uint64_t n, size_t batch)
{
    unsigned char payloads[64][71];
    journal_record recs[64];
    remove_tree(dir);
    journal *j = open_ok(dir, 0, NULL);
    double t0 = now();
    for (uint64_t i = 0; i < n; i += batch) {
        size_t k = batch < n - i ? batch : (size_t)(n - i);
        for (size_t m = 0; m < k; m++) {
            bench_payload(i + m, payloads[m]);
            recs[m] = (journal_record){.type = 1, .payload = payloads[m], .len = 70};
        }
        /* No ck_assert here: each records its place through a file. */
        int rc = batch == 1 ? journal_append(j, 1, payloads[0], 70, NULL)
                            : journal_append_batch(j, recs, k, NULL, NULL);
        if (rc != SIEVE_OK)
            ck_abort_msg("record %" PRIu64 ": %s", i, journal_message(j));
    }
    double t1 = now();
    ck_assert_int_eq(journal_sync(j), SIEVE_OK);
    double t2 = now();
    char what[64];
    snprintf(what, sizeof what, "append, batch %zu", batch);
    bench_report(what, n, n * (70 + OVERHEAD), t1 - t0);
    printf("%-28s %43.2f s\n", "  then journal_sync", t2 - t1);
    ck_assert_int_eq(journal_close(j), SIEVE_OK);
}

static void bench_read(const char *dir, uint64_t n)
{
    journal *j = open_ok(dir, 0, NULL);
    journal_reader *r;
    ck_assert_int_eq(journal_reader_open(j, journal_begin(j), &r), SIEVE_OK);
    unsigned char want[71];
    const void *payload;
    uint32_t len;
    uint64_t i = 0;
    double t0 = now();
    while (journal_read(r, NULL, &payload, &len, NULL) == SIEVE_OK) {
        /* Check a sample: a full comparison would time memcmp. */
        if (i % 4096 == 0) {
            bench_payload(i, want);
            if (len != 70 || memcmp(payload, want, 70) != 0)
                ck_abort_msg("record %" PRIu64 " differs", i);
        }
        i++;
    }
    double t1 = now();
    ck_assert_uint_eq(i, n);
    bench_report("read (page cache)", n, n * (70 + OVERHEAD), t1 - t0);
    journal_reader_close(r);
    ck_assert_int_eq(journal_close(j), SIEVE_OK);
}

START_TEST(bench)
{
    uint64_t n = strtoull(getenv("JOURNAL_BENCH"), NULL, 10);
    const char *base = getenv("JOURNAL_BENCH_DIR") ? getenv("JOURNAL_BENCH_DIR") : root;
    char dir[512];
    snprintf(dir, sizeof dir, "%s/bench-journal", base);
    ck_assert_uint_gt(n, 0);
    printf("journal in %s, %" PRIu64 " records of 70 bytes (%u on disk)\n", dir, n, 70 + OVERHEAD);
    bench_write(dir, n, 1);
    bench_write(dir, n, 64);
    double t0 = now();
    journal *j = open_ok(dir, 0, NULL);
    printf("%-28s %43.2f s\n", "open (scans the last segment)", now() - t0);
    ck_assert_int_eq(journal_close(j), SIEVE_OK);
    bench_read(dir, n);
    remove_tree(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("journal");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 600);
    /* Unchecked: the directory is made once and goes away even when a
     * forked test fails half-way. */
    tcase_add_unchecked_fixture(tc, make_root, remove_root);
    if (getenv("JOURNAL_BENCH") != NULL) {
        tcase_add_test(tc, bench);
    } else {
        tcase_add_test(tc, round_trip_across_segments);
        tcase_add_test(tc, packed_records_round_trip_across_segments);
        tcase_add_test(tc, positions_outside_the_journal_are_refused);
        tcase_add_test(tc, bad_arguments_change_nothing);
        tcase_add_test(tc, largest_record_gets_a_segment_of_its_own);
        tcase_add_test(tc, reader_follows_the_writer_in_one_thread);
        tcase_add_test(tc, reader_follows_the_writer_from_another_thread);
        tcase_add_test(tc, cuts_at_every_offset_near_a_segment_end);
        tcase_add_test(tc, bit_flips_anywhere_are_cut_or_refused);
        tcase_add_test(tc, zeros_after_a_crash_are_cut);
        tcase_add_test(tc, a_missing_segment_is_refused);
        tcase_add_test(tc, foreign_headers_are_refused);
        tcase_add_test(tc, a_full_last_segment_is_continued);
        tcase_add_test(tc, drop_before_deletes_exactly_the_older_segments);
        tcase_add_test(tc, kill_9_loses_no_confirmed_record);
        tcase_add_test(tc, a_full_disk_leaves_a_clean_journal);
    }
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
