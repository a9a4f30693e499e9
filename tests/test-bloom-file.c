/* test-bloom-file.c - a saved filter loads back identical, and every kind
 * of damaged or foreign file is refused with its own status, never a crash
 * and never an allocation larger than the file. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "sieve/sieve.h"

#define HEADER 64

static char dir[64];

static void make_dir(void)
{
    strcpy(dir, "/tmp/sieve-bloom-file-XXXXXX");
    if (mkdtemp(dir) == NULL)
        abort();
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    return remove(path);
}

static void remove_dir(void)
{
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static const char *path_of(const char *name)
{
    static char buf[512];
    snprintf(buf, sizeof(buf), "%s/%s", dir, name);
    return buf;
}

static size_t url(char *buf, size_t cap, const char *host, uint64_t i)
{
    return (size_t)snprintf(buf, cap, "http://%s-%d.example/p/%llu", host, (int)(i % 101),
                            (unsigned long long)i);
}

static sieve_bloom *filled(sieve_bloom_layout layout, uint64_t keys)
{
    char buf[96];
    sieve_bloom *b;
    ck_assert_int_eq(sieve_bloom_new(&b, 50000, 0.01, layout, 77), SIEVE_OK);
    for (uint64_t i = 0; i < keys; i++)
        sieve_bloom_add(b, buf, url(buf, sizeof(buf), "host", i));
    return b;
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

static void spill(const char *path, const unsigned char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, len, f), len);
    ck_assert_int_eq(fclose(f), 0);
}

static uint64_t get64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static void put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* Recomputes the checksum, so a test can reach the checks behind it. */
static void reseal(unsigned char *data, size_t len)
{
    put64(data + 56, 0);
    put64(data + 56, XXH3_64bits(data, len));
}

/* Saves a filter and returns the file's bytes. */
static unsigned char *saved(sieve_bloom_layout layout, const char *name, size_t *len)
{
    sieve_bloom *b = filled(layout, 20000);
    ck_assert_int_eq(sieve_bloom_save(b, path_of(name)), SIEVE_OK);
    sieve_bloom_free(b);
    return slurp(path_of(name), len);
}

/* Writes data to a file and loads it; returns the status. */
static int load_bytes(const unsigned char *data, size_t len)
{
    sieve_bloom *b = NULL;
    spill(path_of("bad.bf"), data, len);
    int rc = sieve_bloom_load(&b, path_of("bad.bf"));
    if (rc == SIEVE_OK)
        sieve_bloom_free(b);
    else
        ck_assert_ptr_null(b);
    return rc;
}

/* Temporary files a save left behind in the test directory. */
static size_t leftovers(void)
{
    size_t n = 0;
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += strstr(e->d_name, ".tmp.") != NULL;
    closedir(d);
    return n;
}

START_TEST(round_trip_keeps_answers_and_info)
{
    static const sieve_bloom_layout layouts[] = {SIEVE_BLOOM_BLOCKED, SIEVE_BLOOM_CLASSIC};
    char buf[96];
    for (int l = 0; l < 2; l++) {
        sieve_bloom *a = filled(layouts[l], 30000), *b = NULL;
        const char *path = path_of("filter.bf");
        ck_assert_int_eq(sieve_bloom_save(a, path), SIEVE_OK);
        /* Saving again replaces the file and leaves no temporary behind. */
        ck_assert_int_eq(sieve_bloom_save(a, path), SIEVE_OK);
        ck_assert_uint_eq(leftovers(), 0);
        ck_assert_int_eq(sieve_bloom_load(&b, path), SIEVE_OK);
        sieve_bloom_info ia, ib;
        sieve_bloom_info_get(a, &ia);
        sieve_bloom_info_get(b, &ib);
        ck_assert_int_eq(ia.layout, ib.layout);
        ck_assert_uint_eq(ia.m, ib.m);
        ck_assert_uint_eq(ia.k, ib.k);
        ck_assert_uint_eq(ia.seed, ib.seed);
        ck_assert_uint_eq(ia.capacity, ib.capacity);
        ck_assert_double_eq(ia.fp_rate, ib.fp_rate);
        ck_assert_uint_eq(ia.bits_set, ib.bits_set);
        ck_assert_double_eq(ia.est_count, ib.est_count);
        ck_assert_double_eq(ia.est_fp_rate, ib.est_fp_rate);
        size_t len;
        unsigned char *data = slurp(path, &len);
        ck_assert_uint_eq(len, HEADER + (ia.m + 63) / 64 * 8);
        free(data);
        unsigned found = 0, same = 0;
        for (uint64_t i = 0; i < 30000; i++)
            found += sieve_bloom_contains(b, buf, url(buf, sizeof(buf), "host", i));
        ck_assert_uint_eq(found, 30000);
        for (uint64_t i = 0; i < 30000; i++) {
            size_t n = url(buf, sizeof(buf), "absent", i);
            same += sieve_bloom_contains(a, buf, n) == sieve_bloom_contains(b, buf, n);
        }
        ck_assert_uint_eq(same, 30000);
        /* The loaded filter is live: it knows old keys and takes new ones. */
        ck_assert_int_eq(sieve_bloom_add(b, buf, url(buf, sizeof(buf), "host", 1)), SIEVE_SEEN);
        ck_assert_int_eq(sieve_bloom_add(b, "http://new.example/", 19), SIEVE_OK);
        ck_assert_int_eq(sieve_bloom_union(a, b), SIEVE_OK);
        sieve_bloom_free(a);
        sieve_bloom_free(b);
        remove(path);
    }
}
END_TEST

START_TEST(unaligned_classic_round_trips)
{
    sieve_bloom *a, *b;
    ck_assert_int_eq(sieve_bloom_new_mk(&a, 1000, 5, SIEVE_BLOOM_CLASSIC, 3), SIEVE_OK);
    for (int i = 0; i < 100; i++)
        sieve_bloom_add(a, &i, sizeof(i));
    ck_assert_int_eq(sieve_bloom_save(a, path_of("odd.bf")), SIEVE_OK);
    ck_assert_int_eq(sieve_bloom_load(&b, path_of("odd.bf")), SIEVE_OK);
    int found = 0;
    for (int i = 0; i < 100; i++)
        found += sieve_bloom_contains(b, &i, sizeof(i));
    ck_assert_int_eq(found, 100);
    sieve_bloom_free(b);
    /* A bit past m cannot come from any probe. */
    size_t len;
    unsigned char *data = slurp(path_of("odd.bf"), &len);
    ck_assert_uint_eq(len, HEADER + 16 * 8);
    ck_assert_int_eq(data[HEADER + 125] & 1, 0); /* bit 1000 */
    data[HEADER + 125] |= 1;
    sieve_bloom_info info;
    sieve_bloom_info_get(a, &info);
    put64(data + 48, info.bits_set + 1);
    reseal(data, len);
    ck_assert_int_eq(load_bytes(data, len), SIEVE_EFORMAT);
    free(data);
    sieve_bloom_free(a);
}
END_TEST

START_TEST(truncated_files_are_refused)
{
    size_t len;
    unsigned char *data = saved(SIEVE_BLOOM_BLOCKED, "t.bf", &len);
    const size_t cuts[] = {
        0, 5, 8, 40, HEADER - 1, HEADER, HEADER + 1, HEADER + (len - HEADER) / 2, len - 1};
    for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++)
        ck_assert_msg(load_bytes(data, cuts[i]) == SIEVE_ETRUNCATED, "cut at %zu", cuts[i]);
    free(data);
}
END_TEST

START_TEST(flipped_bytes_fail_the_checksum)
{
    size_t len;
    unsigned char *data = saved(SIEVE_BLOOM_BLOCKED, "f.bf", &len);
    ck_assert_int_eq(load_bytes(data, len), SIEVE_OK);
    /* seed, capacity, rate, set bits, checksum; then first, middle, last bits */
    const size_t at[] = {24, 33, 41, 48, 56, 63, HEADER, HEADER + (len - HEADER) / 2, len - 1};
    for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
        data[at[i]] ^= 0x10;
        ck_assert_msg(load_bytes(data, len) == SIEVE_ECHECKSUM, "flip at %zu", at[i]);
        data[at[i]] ^= 0x10;
    }
    free(data);
}
END_TEST

START_TEST(foreign_files_are_refused)
{
    size_t len;
    unsigned char *data = saved(SIEVE_BLOOM_CLASSIC, "g.bf", &len);
    unsigned char *copy = malloc(len + 100);
    ck_assert_ptr_nonnull(copy);

    memcpy(copy, data, len);
    copy[0] = 'X';
    ck_assert_int_eq(load_bytes(copy, len), SIEVE_EFORMAT);
    ck_assert_int_eq(load_bytes((const unsigned char *)"hello", 5), SIEVE_EFORMAT);

    memcpy(copy, data, len);
    copy[8] = 2; /* version 2, even with a valid checksum */
    ck_assert_int_eq(load_bytes(copy, len), SIEVE_EVERSION);
    reseal(copy, len);
    ck_assert_int_eq(load_bytes(copy, len), SIEVE_EVERSION);

    memcpy(copy, data, len);
    memset(copy + len, 0, 100);
    ck_assert_int_eq(load_bytes(copy, len + 1), SIEVE_EFORMAT);
    ck_assert_int_eq(load_bytes(copy, len + 100), SIEVE_EFORMAT);
    free(copy);
    free(data);
}
END_TEST

/* Shapes no filter can have, each behind a valid checksum. */
START_TEST(impossible_shapes_are_refused)
{
    size_t len;
    unsigned char *data = saved(SIEVE_BLOOM_BLOCKED, "s.bf", &len);
    unsigned char *copy = malloc(len);
    ck_assert_ptr_nonnull(copy);
    uint64_t bits_set = get64(data + 48);
    struct {
        size_t off, width;
        uint64_t value;
        int want;
    } cases[] = {
        {12, 2, 9, SIEVE_EFORMAT},                            /* layout */
        {14, 2, 0, SIEVE_EFORMAT},                            /* k = 0 */
        {14, 2, 65, SIEVE_EFORMAT},                           /* k too large */
        {16, 8, get64(data + 16) + 64, SIEVE_EFORMAT},        /* blocked m not whole blocks */
        {16, 8, UINT64_C(1) << 60, SIEVE_EFORMAT},            /* m beyond any memory */
        {16, 8, UINT64_MAX, SIEVE_EFORMAT},                   /* m overflows bytes */
        {16, 8, UINT64_C(1) << 40, SIEVE_ETRUNCATED},         /* 128 GiB: refused unread */
        {32, 8, 0, SIEVE_EFORMAT},                            /* capacity 0 */
        {40, 8, UINT64_C(0x7ff8000000000000), SIEVE_EFORMAT}, /* rate NaN */
        {48, 8, get64(data + 16) + 1, SIEVE_EFORMAT},         /* more bits set than m */
        {48, 8, bits_set - 1, SIEVE_EFORMAT},                 /* popcount disagrees */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        memcpy(copy, data, len);
        for (size_t b = 0; b < cases[i].width; b++)
            copy[cases[i].off + b] = (unsigned char)(cases[i].value >> (8 * b));
        reseal(copy, len);
        ck_assert_msg(load_bytes(copy, len) == cases[i].want, "case %zu", i);
    }
    free(copy);
    free(data);
}
END_TEST

START_TEST(system_errors_are_eio)
{
    sieve_bloom *b = NULL;
    errno = 0;
    ck_assert_int_eq(sieve_bloom_load(&b, path_of("missing.bf")), SIEVE_EIO);
    ck_assert_int_eq(errno, ENOENT);
    ck_assert_int_eq(sieve_bloom_load(&b, dir), SIEVE_EIO);
    ck_assert_ptr_null(b);

    sieve_bloom *a = filled(SIEVE_BLOOM_BLOCKED, 100);
    errno = 0;
    ck_assert_int_eq(sieve_bloom_save(a, path_of("no/such/dir/f.bf")), SIEVE_EIO);
    ck_assert_int_eq(errno, ENOENT);

    /* A failed save leaves the previous file intact: here the temporary
     * name is longer than a file name may be, though the target is not. */
    char name[251];
    memset(name, 'n', sizeof(name) - 1);
    name[sizeof(name) - 1] = '\0';
    char path[512];
    snprintf(path, sizeof(path), "%s", path_of(name));
    spill(path, (const unsigned char *)"previous", 8);
    ck_assert_int_eq(sieve_bloom_save(a, path), SIEVE_EIO);
    ck_assert_int_eq(errno, ENAMETOOLONG);
    size_t len;
    unsigned char *data = slurp(path, &len);
    ck_assert_uint_eq(len, 8);
    ck_assert_int_eq(memcmp(data, "previous", 8), 0);
    free(data);
    ck_assert_uint_eq(leftovers(), 0);

    ck_assert_int_eq(sieve_bloom_save(NULL, path), SIEVE_EINVAL);
    ck_assert_int_eq(sieve_bloom_load(NULL, path), SIEVE_EINVAL);
    sieve_bloom_free(a);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("bloom-file");
    TCase *tc = tcase_create("core");
    /* Unchecked: the directory is made and removed by the parent process,
     * so it goes away even when a forked test fails half-way. */
    tcase_add_unchecked_fixture(tc, make_dir, remove_dir);
    tcase_add_test(tc, round_trip_keeps_answers_and_info);
    tcase_add_test(tc, unaligned_classic_round_trips);
    tcase_add_test(tc, truncated_files_are_refused);
    tcase_add_test(tc, flipped_bytes_fail_the_checksum);
    tcase_add_test(tc, foreign_files_are_refused);
    tcase_add_test(tc, impossible_shapes_are_refused);
    tcase_add_test(tc, system_errors_are_eio);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
