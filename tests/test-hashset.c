/* test-hashset.c - the exact set holds every key it was given, and only those.
 *
 * Hot loops check with REQUIRE rather than ck_assert: Check records a
 * location on every passing ck_assert, which over millions of keys costs
 * more than the set under test. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sieve/sieve.h"

#define REQUIRE(expr, i)                                                                           \
    do {                                                                                           \
        if (!(expr))                                                                               \
            ck_abort_msg("'%s' failed at key %" PRIu64, #expr, (uint64_t)(i));                     \
    } while (0)

/* A URL-like key, distinct for every i. */
static size_t url_key(char *buf, size_t cap, uint64_t i)
{
    int n =
        snprintf(buf, cap, "https://host%" PRIu64 ".example.org/a/b/page-%" PRIu64 "?q=%" PRIu64,
                 i % 1000, i, i * 7);
    return (size_t)n;
}

/* splitmix64: a deterministic stream for random-looking keys. */
static uint64_t next_rand(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* A binary key: the index's 8 bytes (so keys are distinct), then 0 to 39
 * random bytes, NULs included. */
static size_t binary_key(unsigned char *buf, uint64_t i, uint64_t *state)
{
    memcpy(buf, &i, sizeof(i));
    size_t len = sizeof(i) + next_rand(state) % 40;
    for (size_t j = sizeof(i); j < len; j++)
        buf[j] = (unsigned char)next_rand(state);
    return len;
}

static sieve_hashset *new_set(uint64_t expected, uint64_t seed)
{
    sieve_hashset *s = NULL;
    ck_assert_int_eq(sieve_hashset_new(&s, expected, seed), SIEVE_OK);
    ck_assert_ptr_nonnull(s);
    return s;
}

START_TEST(million_keys_added_once_then_seen)
{
    const uint64_t n = 1000000;
    sieve_hashset *s = new_set(0, SIEVE_HASH_SEED_DEFAULT);
    char k[128];
    for (uint64_t i = 0; i < n; i++) {
        size_t len = url_key(k, sizeof(k), i);
        REQUIRE(!sieve_hashset_contains(s, k, len), i);
        REQUIRE(sieve_hashset_add(s, k, len) == SIEVE_OK, i);
        REQUIRE(sieve_hashset_contains(s, k, len), i);
    }
    ck_assert_uint_eq(sieve_hashset_count(s), n);
    for (uint64_t i = 0; i < n; i++) {
        size_t len = url_key(k, sizeof(k), i);
        REQUIRE(sieve_hashset_contains(s, k, len), i);
        REQUIRE(sieve_hashset_add(s, k, len) == SIEVE_SEEN, i);
    }
    ck_assert_uint_eq(sieve_hashset_count(s), n);
    for (uint64_t i = n; i < n + n / 10; i++) {
        size_t len = url_key(k, sizeof(k), i);
        REQUIRE(!sieve_hashset_contains(s, k, len), i);
    }
    sieve_hashset_free(s);
}
END_TEST

/* Keys that share all but their last byte, or are prefixes of each other,
 * must be told apart by the full comparison. */
START_TEST(prefixes_and_last_byte_are_distinct)
{
    static const char *const keys[] = {
        "", "a", "ab", "abc", "abd", "abc/", "abc/x", "abc/y", "abcd", "b", "ba", "bb",
    };
    const size_t n = sizeof(keys) / sizeof(keys[0]);
    sieve_hashset *s = new_set(4, 42);
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++)
            ck_assert(sieve_hashset_contains(s, keys[j], strlen(keys[j])) == (j < i));
        ck_assert_int_eq(sieve_hashset_add(s, keys[i], strlen(keys[i])), SIEVE_OK);
    }
    for (size_t i = 0; i < n; i++)
        ck_assert_int_eq(sieve_hashset_add(s, keys[i], strlen(keys[i])), SIEVE_SEEN);
    ck_assert_uint_eq(sieve_hashset_count(s), n);

    /* Same content, different lengths: a prefix of a stored key is not in. */
    char url[64];
    size_t len = (size_t)snprintf(url, sizeof(url), "https://example.org/path/to/page");
    ck_assert_int_eq(sieve_hashset_add(s, url, len), SIEVE_OK);
    for (size_t l = 0; l < len; l++)
        ck_assert(sieve_hashset_contains(s, url, l) == (l == 0)); /* "" was added */
    ck_assert(sieve_hashset_contains(s, url, len));
    sieve_hashset_free(s);
}
END_TEST

START_TEST(empty_key_is_a_key)
{
    sieve_hashset *s = new_set(0, 7);
    ck_assert(!sieve_hashset_contains(s, NULL, 0));
    ck_assert(!sieve_hashset_contains(s, "", 0));
    ck_assert_int_eq(sieve_hashset_add(s, NULL, 0), SIEVE_OK);
    ck_assert(sieve_hashset_contains(s, "", 0));
    ck_assert(sieve_hashset_contains(s, "x", 0));
    ck_assert(!sieve_hashset_contains(s, "x", 1));
    ck_assert_int_eq(sieve_hashset_add(s, "", 0), SIEVE_SEEN);
    ck_assert_uint_eq(sieve_hashset_count(s), 1);
    sieve_hashset_free(s);
}
END_TEST

START_TEST(binary_keys_with_nul_bytes)
{
    static const unsigned char a[] = {'a', 0, 'b'};
    static const unsigned char b[] = {'a', 0, 'c'};
    static const unsigned char c[] = {'a', 0};
    static const unsigned char d[] = {'a'};
    static const unsigned char z[] = {0, 0, 0, 0};
    sieve_hashset *s = new_set(0, 7);
    ck_assert_int_eq(sieve_hashset_add(s, a, sizeof(a)), SIEVE_OK);
    ck_assert(!sieve_hashset_contains(s, b, sizeof(b)));
    ck_assert(!sieve_hashset_contains(s, c, sizeof(c)));
    ck_assert(!sieve_hashset_contains(s, d, sizeof(d)));
    ck_assert_int_eq(sieve_hashset_add(s, b, sizeof(b)), SIEVE_OK);
    ck_assert_int_eq(sieve_hashset_add(s, c, sizeof(c)), SIEVE_OK);
    ck_assert_int_eq(sieve_hashset_add(s, d, sizeof(d)), SIEVE_OK);
    for (size_t l = 1; l <= sizeof(z); l++) {
        ck_assert(!sieve_hashset_contains(s, z, l));
        ck_assert_int_eq(sieve_hashset_add(s, z, l), SIEVE_OK);
    }
    for (size_t l = 1; l <= sizeof(z); l++)
        ck_assert_int_eq(sieve_hashset_add(s, z, l), SIEVE_SEEN);
    ck_assert_int_eq(sieve_hashset_add(s, a, sizeof(a)), SIEVE_SEEN);
    ck_assert_uint_eq(sieve_hashset_count(s), 8);

    /* Many random binary keys. */
    uint64_t st = 1;
    unsigned char k[64];
    for (uint64_t i = 0; i < 50000; i++) {
        size_t len = binary_key(k, i, &st);
        REQUIRE(sieve_hashset_add(s, k, len) == SIEVE_OK, i);
    }
    st = 1;
    for (uint64_t i = 0; i < 50000; i++) {
        size_t len = binary_key(k, i, &st);
        REQUIRE(sieve_hashset_contains(s, k, len), i);
        k[len - 1] ^= 1;
        REQUIRE(!sieve_hashset_contains(s, k, len), i);
    }
    sieve_hashset_free(s);
}
END_TEST

/* The longest key fits; so do enough of them to fill several arena chunks. */
START_TEST(key_max_fits_and_one_more_is_too_long)
{
    const size_t max = SIEVE_HASHSET_KEY_MAX;
    unsigned char *k = malloc(max + 1);
    ck_assert_ptr_nonnull(k);
    memset(k, 'k', max + 1);
    sieve_hashset *s = new_set(0, 9);
    ck_assert_int_eq(sieve_hashset_add(s, k, max + 1), SIEVE_ETOOLONG);
    ck_assert(!sieve_hashset_contains(s, k, max + 1));
    ck_assert_uint_eq(sieve_hashset_count(s), 0);
    sieve_hash h = sieve_hashset_hash(s, k, max + 1);
    ck_assert_int_eq(sieve_hashset_add_hashed(s, k, max + 1, h), SIEVE_ETOOLONG);

    ck_assert_int_eq(sieve_hashset_add(s, k, max - 1), SIEVE_OK);
    const int n = 40; /* 40 * 64 KiB spans three 1 MiB chunks */
    for (int i = 0; i < n; i++) {
        memcpy(k + max - sizeof(i), &i, sizeof(i));
        ck_assert(!sieve_hashset_contains(s, k, max));
        ck_assert_int_eq(sieve_hashset_add(s, k, max), SIEVE_OK);
    }
    for (int i = 0; i < n; i++) {
        memcpy(k + max - sizeof(i), &i, sizeof(i));
        ck_assert(sieve_hashset_contains(s, k, max));
        ck_assert_int_eq(sieve_hashset_add(s, k, max), SIEVE_SEEN);
    }
    ck_assert_uint_eq(sieve_hashset_count(s), (uint64_t)n + 1);
    ck_assert_uint_ge(sieve_hashset_bytes(s), (uint64_t)n * max);
    sieve_hashset_free(s);
    free(k);
}
END_TEST

/* Starting from a presize of one, the table doubles many times; after each
 * doubling every key added so far is still found. */
START_TEST(growth_from_tiny_presize_keeps_keys)
{
    const uint64_t n = 200000;
    sieve_hashset *s = new_set(1, 3);
    char k[128];
    uint64_t last_bytes = sieve_hashset_bytes(s);
    for (uint64_t i = 0; i < n; i++) {
        size_t len = url_key(k, sizeof(k), i);
        REQUIRE(sieve_hashset_add(s, k, len) == SIEVE_OK, i);
        uint64_t bytes = sieve_hashset_bytes(s);
        REQUIRE(bytes >= last_bytes, i);
        if (bytes != last_bytes) {
            for (uint64_t j = 0; j <= i; j++) {
                size_t l = url_key(k, sizeof(k), j);
                REQUIRE(sieve_hashset_contains(s, k, l), j);
            }
        }
        last_bytes = bytes;
    }
    ck_assert_uint_eq(sieve_hashset_count(s), n);
    sieve_hashset_free(s);
}
END_TEST

START_TEST(hashed_variants_agree_with_plain_ones)
{
    const uint64_t seed = 0x1234;
    sieve_hashset *s = new_set(0, seed);
    char k[128];
    for (uint64_t i = 0; i < 20000; i++) {
        size_t len = url_key(k, sizeof(k), i);
        sieve_hash h = sieve_hashset_hash(s, k, len);
        sieve_hash ref = sieve_hash_key(k, len, seed);
        REQUIRE(h.lo == ref.lo && h.hi == ref.hi, i);
        sieve_hashset_prefetch(s, h);
        if (i % 2 == 0) {
            REQUIRE(sieve_hashset_add_hashed(s, k, len, h) == SIEVE_OK, i);
            REQUIRE(sieve_hashset_contains(s, k, len), i);
            REQUIRE(sieve_hashset_add(s, k, len) == SIEVE_SEEN, i);
        } else {
            REQUIRE(sieve_hashset_add(s, k, len) == SIEVE_OK, i);
            REQUIRE(sieve_hashset_contains_hashed(s, k, len, h), i);
            REQUIRE(sieve_hashset_add_hashed(s, k, len, h) == SIEVE_SEEN, i);
        }
    }
    for (uint64_t i = 20000; i < 30000; i++) {
        size_t len = url_key(k, sizeof(k), i);
        sieve_hash h = sieve_hashset_hash(s, k, len);
        REQUIRE(!sieve_hashset_contains_hashed(s, k, len, h), i);
        REQUIRE(!sieve_hashset_contains(s, k, len), i);
    }
    ck_assert_uint_eq(sieve_hashset_count(s), 20000);
    sieve_hashset_free(s);
}
END_TEST

START_TEST(bytes_grow_with_keys)
{
    sieve_hashset *s = new_set(0, 5);
    uint64_t empty = sieve_hashset_bytes(s);
    ck_assert_uint_gt(empty, 0);
    char k[128];
    uint64_t total = 0;
    for (uint64_t i = 0; i < 300000; i++) {
        size_t len = url_key(k, sizeof(k), i);
        REQUIRE(sieve_hashset_add(s, k, len) == SIEVE_OK, i);
        total += len;
        REQUIRE(sieve_hashset_bytes(s) >= total, i);
    }
    uint64_t full = sieve_hashset_bytes(s);
    ck_assert_uint_gt(full, empty);
    /* Slots and prefixes must be accounted too, not only the key bytes. */
    ck_assert_uint_ge(full, total + 300000 * (sizeof(uint64_t) + 1));
    /* Re-adding stores nothing. */
    for (uint64_t i = 0; i < 300000; i++) {
        size_t len = url_key(k, sizeof(k), i);
        REQUIRE(sieve_hashset_add(s, k, len) == SIEVE_SEEN, i);
    }
    ck_assert_uint_eq(sieve_hashset_bytes(s), full);
    sieve_hashset_free(s);
}
END_TEST

/* XXH3 collisions cannot be chosen, but a different seed moves every key
 * to different slots and tags: two sets must still agree on every answer. */
START_TEST(different_seeds_give_same_answers)
{
    const uint64_t n = 200000;
    sieve_hashset *a = new_set(0, 1);
    sieve_hashset *b = new_set(n, UINT64_C(0xdeadbeefcafef00d));
    unsigned char k[64];
    uint64_t st = 99;
    for (uint64_t i = 0; i < n; i++) {
        size_t len = binary_key(k, 2 * i, &st);
        REQUIRE(sieve_hashset_add(a, k, len) == SIEVE_OK, i);
        REQUIRE(sieve_hashset_add(b, k, len) == SIEVE_OK, i);
    }
    /* Even indices were added, odd ones were not. */
    st = 99;
    uint64_t st_odd = 12345;
    for (uint64_t i = 0; i < n; i++) {
        size_t len = binary_key(k, 2 * i, &st);
        REQUIRE(sieve_hashset_contains(a, k, len) && sieve_hashset_contains(b, k, len), i);
        len = binary_key(k, 2 * i + 1, &st_odd);
        REQUIRE(!sieve_hashset_contains(a, k, len) && !sieve_hashset_contains(b, k, len), i);
    }
    ck_assert_uint_eq(sieve_hashset_count(a), sieve_hashset_count(b));
    sieve_hashset_free(a);
    sieve_hashset_free(b);
}
END_TEST

/* White box: a forged hash puts every key on the same slot with the same
 * tag, the worst case a real hash only approaches. Presized so that no
 * doubling (which rehashes with the real hash) happens, the set must still
 * tell every key apart by its bytes. */
START_TEST(forced_collisions_are_resolved_by_key_bytes)
{
    const uint64_t n = 3000;
    const sieve_hash h = {.lo = 12345, .hi = UINT64_C(0xabcdef0123456789)};
    sieve_hashset *s = new_set(n, 11);
    char k[128];
    for (uint64_t i = 0; i < n; i++) {
        size_t len = url_key(k, sizeof(k), i);
        REQUIRE(!sieve_hashset_contains_hashed(s, k, len, h), i);
        REQUIRE(sieve_hashset_add_hashed(s, k, len, h) == SIEVE_OK, i);
    }
    for (uint64_t i = 0; i < n; i++) {
        size_t len = url_key(k, sizeof(k), i);
        REQUIRE(sieve_hashset_contains_hashed(s, k, len, h), i);
        REQUIRE(sieve_hashset_add_hashed(s, k, len, h) == SIEVE_SEEN, i);
        /* One byte shorter, or the last byte changed: no key is like that. */
        REQUIRE(!sieve_hashset_contains_hashed(s, k, len - 1, h), i);
        k[len - 1] = '#';
        REQUIRE(!sieve_hashset_contains_hashed(s, k, len, h), i);
    }
    ck_assert_uint_eq(sieve_hashset_count(s), n);
    sieve_hashset_free(s);
}
END_TEST

START_TEST(absurd_presize_overflows)
{
    sieve_hashset *s = (sieve_hashset *)&s;
    ck_assert_int_eq(sieve_hashset_new(&s, UINT64_MAX, 1), SIEVE_EOVERFLOW);
    ck_assert_ptr_null(s);
    ck_assert_int_eq(sieve_hashset_new(&s, UINT64_MAX / 2, 1), SIEVE_EOVERFLOW);
    ck_assert_int_eq(sieve_hashset_new(&s, (UINT64_C(1) << 40) + 1, 1), SIEVE_EOVERFLOW);
    ck_assert_int_eq(sieve_hashset_new(NULL, 10, 1), SIEVE_EINVAL);
}
END_TEST

START_TEST(bad_arguments_are_rejected)
{
    sieve_hashset *s = new_set(0, 1);
    ck_assert_int_eq(sieve_hashset_add(s, NULL, 3), SIEVE_EINVAL);
    ck_assert(!sieve_hashset_contains(s, NULL, 3));
    ck_assert_int_eq(sieve_hashset_add(NULL, "a", 1), SIEVE_EINVAL);
    ck_assert_uint_eq(sieve_hashset_count(s), 0);
    sieve_hashset_free(s);
    sieve_hashset_free(NULL);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("hashset");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, million_keys_added_once_then_seen);
    tcase_add_test(tc, prefixes_and_last_byte_are_distinct);
    tcase_add_test(tc, empty_key_is_a_key);
    tcase_add_test(tc, binary_keys_with_nul_bytes);
    tcase_add_test(tc, key_max_fits_and_one_more_is_too_long);
    tcase_add_test(tc, growth_from_tiny_presize_keeps_keys);
    tcase_add_test(tc, hashed_variants_agree_with_plain_ones);
    tcase_add_test(tc, bytes_grow_with_keys);
    tcase_add_test(tc, different_seeds_give_same_answers);
    tcase_add_test(tc, forced_collisions_are_resolved_by_key_bytes);
    tcase_add_test(tc, absurd_presize_overflows);
    tcase_add_test(tc, bad_arguments_are_rejected);
    suite_add_tcase(su, tc);
    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
