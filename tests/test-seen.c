/* test-seen.c - the seen-set interface over its three implementations. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seen-internal.h"
#include "sieve/sieve.h"

static int key(char *buf, size_t cap, const char *space, unsigned long i)
{
    return snprintf(buf, cap, "https://%s-%lu.example.org/a/%lu?q=%lu", space, i % 977, i, i * 31);
}

static sieve_seen *make(sieve_seen_kind kind, uint64_t capacity, double p, sieve_overflow ov)
{
    sieve_seen_config cfg;
    sieve_seen_config_init(&cfg);
    cfg.kind = kind;
    cfg.capacity = capacity;
    cfg.fp_rate = p;
    cfg.overflow = ov;
    sieve_seen *s = NULL;
    ck_assert_int_eq(sieve_seen_new(&s, &cfg), SIEVE_OK);
    return s;
}

/* Fraction of `queries` keys never added that the set claims to hold. */
static double measured_fp_rate(const sieve_seen *s, unsigned long queries)
{
    char buf[128];
    unsigned long fp = 0;
    for (unsigned long i = 0; i < queries; i++) {
        int n = key(buf, sizeof buf, "absent", i);
        fp += sieve_seen_contains(s, buf, (size_t)n);
    }
    return (double)fp / (double)queries;
}

static void fill(sieve_seen *s, unsigned long n, unsigned long *added)
{
    char buf[128];
    for (unsigned long i = 0; i < n; i++) {
        int len = key(buf, sizeof buf, "present", i);
        int rc = sieve_seen_add(s, buf, (size_t)len);
        ck_assert(rc == SIEVE_OK || rc == SIEVE_SEEN);
        if (added != NULL)
            *added += rc == SIEVE_OK;
    }
}

START_TEST(defaults_are_documented_values)
{
    sieve_seen_config cfg;
    sieve_seen_config_init(&cfg);
    ck_assert_int_eq(cfg.kind, SIEVE_SEEN_BLOOM);
    ck_assert_uint_eq(cfg.capacity, 1000000);
    ck_assert_double_eq(cfg.fp_rate, 1e-4);
    ck_assert_int_eq(cfg.layout, SIEVE_BLOOM_BLOCKED);
    ck_assert_int_eq(cfg.overflow, SIEVE_OVERFLOW_WARN);
}
END_TEST

START_TEST(invalid_configs_are_refused)
{
    sieve_seen_config good, cfg;
    sieve_seen_config_init(&good);
    sieve_seen *s = (sieve_seen *)&good; /* must stay untouched */
    cfg = good, cfg.capacity = 0;
    ck_assert_int_eq(sieve_seen_new(&s, &cfg), SIEVE_EINVAL);
    cfg = good, cfg.fp_rate = 0.0;
    ck_assert_int_eq(sieve_seen_new(&s, &cfg), SIEVE_EINVAL);
    cfg = good, cfg.fp_rate = 1.0;
    ck_assert_int_eq(sieve_seen_new(&s, &cfg), SIEVE_EINVAL);
    cfg = good, cfg.kind = (sieve_seen_kind)7;
    ck_assert_int_eq(sieve_seen_new(&s, &cfg), SIEVE_EINVAL);
    cfg = good, cfg.overflow = (sieve_overflow)7;
    ck_assert_int_eq(sieve_seen_new(&s, &cfg), SIEVE_EINVAL);
    cfg = good, cfg.layout = (sieve_bloom_layout)7;
    ck_assert_int_eq(sieve_seen_new(&s, &cfg), SIEVE_EINVAL);
    ck_assert_ptr_eq(s, (sieve_seen *)&good);
    ck_assert_int_eq(sieve_seen_new(NULL, &good), SIEVE_EINVAL);
    ck_assert_int_eq(sieve_seen_new(&s, NULL), SIEVE_EINVAL);
}
END_TEST

START_TEST(exact_set_never_errs)
{
    sieve_seen *s = make(SIEVE_SEEN_EXACT, 1000, 0.5, SIEVE_OVERFLOW_WARN);
    unsigned long added = 0;
    fill(s, 50000, &added);
    ck_assert_uint_eq(added, 50000);
    fill(s, 50000, &added);
    ck_assert_uint_eq(added, 50000);
    ck_assert_double_eq(sieve_seen_estimated_count(s), 50000.0);
    ck_assert_double_eq(measured_fp_rate(s, 100000), 0.0);
    ck_assert_double_eq(sieve_seen_estimated_fp_rate(s), 0.0);
    ck_assert_uint_eq(sieve_seen_layers(s), 0);
    ck_assert_int_eq(sieve_seen_get_kind(s), SIEVE_SEEN_EXACT);
    sieve_seen_free(s);
}
END_TEST

START_TEST(bloom_has_no_false_negatives)
{
    sieve_seen *s = make(SIEVE_SEEN_BLOOM, 100000, 0.01, SIEVE_OVERFLOW_WARN);
    fill(s, 100000, NULL);
    char buf[128];
    for (unsigned long i = 0; i < 100000; i++) {
        int n = key(buf, sizeof buf, "present", i);
        ck_assert(sieve_seen_contains(s, buf, (size_t)n));
        ck_assert_int_eq(sieve_seen_add(s, buf, (size_t)n), SIEVE_SEEN);
    }
    ck_assert_uint_eq(sieve_seen_layers(s), 1);
    sieve_seen_free(s);
}
END_TEST

/* At 10x capacity a fixed filter is saturated; the grown one keeps its
 * promise of a rate below p. */
START_TEST(grow_keeps_rate_bounded_at_ten_times_capacity)
{
    const double p = 0.01;
    sieve_seen *grow = make(SIEVE_SEEN_BLOOM, 20000, p, SIEVE_OVERFLOW_GROW);
    sieve_seen *fixed = make(SIEVE_SEEN_BLOOM, 20000, p, SIEVE_OVERFLOW_WARN);
    fill(grow, 200000, NULL);
    fill(fixed, 200000, NULL);
    ck_assert_uint_ge(sieve_seen_layers(grow), 4);
    double fp_grow = measured_fp_rate(grow, 1000000);
    double fp_fixed = measured_fp_rate(fixed, 1000000);
    ck_assert_msg(fp_grow <= p, "grown filter's measured rate %g above %g", fp_grow, p);
    ck_assert_msg(fp_fixed > 10 * p, "fixed filter's rate %g should have climbed", fp_fixed);
    ck_assert_double_le(sieve_seen_estimated_fp_rate(grow), p);
    double count = sieve_seen_estimated_count(grow);
    ck_assert_msg(count > 200000 * 0.97 && count < 200000 * 1.03, "count %g", count);
    sieve_seen_free(grow);
    sieve_seen_free(fixed);
}
END_TEST

/* A checkpoint reads the newest layer's count, then copies the arrays
 * while pushes go on, so the copy may hold more keys than the count says.
 * Restored, the layer must still grow when it holds its capacity, not
 * when the stale count reaches it, or it overfills and its rate climbs. */
START_TEST(a_restored_layer_grows_at_what_it_holds)
{
    const double p = 0.01;
    sieve_seen *saved = make(SIEVE_SEEN_BLOOM, 20000, p, SIEVE_OVERFLOW_GROW);
    fill(saved, 15000, NULL);
    size_t bytes;
    uint64_t *words = seen_layer_words(saved, 0, &bytes);

    sieve_seen *s = make(SIEVE_SEEN_BLOOM, 20000, p, SIEVE_OVERFLOW_GROW);
    ck_assert_int_eq(seen_restore_shape(s, 1, 5000), SIEVE_OK); /* counted at 5,000 */
    size_t n;
    memcpy(seen_layer_words(s, 0, &n), words, bytes);
    ck_assert_uint_eq(n, bytes);
    seen_restored(s);
    ck_assert_uint_ge(seen_newest_added(s), 15000 * 97 / 100);

    fill(s, 30000, NULL); /* the first 15,000 again, then 15,000 new */
    ck_assert_uint_eq(sieve_seen_layers(s), 2);
    double fp = measured_fp_rate(s, 1000000);
    ck_assert_msg(fp <= p, "restored filter's measured rate %g above %g", fp, p);
    sieve_seen_free(saved);
    sieve_seen_free(s);
}
END_TEST

START_TEST(bytes_follow_the_implementation)
{
    sieve_seen *bloom = make(SIEVE_SEEN_BLOOM, 100000, 0.01, SIEVE_OVERFLOW_WARN);
    sieve_seen *exact = make(SIEVE_SEEN_EXACT, 100000, 0.01, SIEVE_OVERFLOW_WARN);
    fill(bloom, 100000, NULL);
    fill(exact, 100000, NULL);
    uint64_t b = sieve_seen_bytes(bloom), e = sieve_seen_bytes(exact);
    /* about 10 bits a key for the filter, plus its rate model's table;
     * the keys alone are ~40 bytes */
    ck_assert_uint_le(b, 100000 * 5 / 4 + 64 * 1024);
    ck_assert_uint_ge(e, 100000 * 40);
    sieve_seen_free(bloom);
    sieve_seen_free(exact);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("seen");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, defaults_are_documented_values);
    tcase_add_test(tc, invalid_configs_are_refused);
    tcase_add_test(tc, exact_set_never_errs);
    tcase_add_test(tc, bloom_has_no_false_negatives);
    tcase_add_test(tc, grow_keeps_rate_bounded_at_ten_times_capacity);
    tcase_add_test(tc, bytes_follow_the_implementation);
    tcase_add_test(tc, a_restored_layer_grows_at_what_it_holds);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
