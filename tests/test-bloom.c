/* test-bloom.c - the Bloom filter keeps its contracts: no false negatives,
 * a measured false-positive rate within the one it was sized for, honest
 * estimates, batch adds equal to single adds, and refusals of bad input. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sieve/sieve.h"

#define N_KEYS    1000000u
#define N_ABSENT  2000000u
#define TOLERANCE 1.1 /* measured rate may exceed p by 10% (several sigma) */

static const sieve_bloom_layout layouts[] = {SIEVE_BLOOM_BLOCKED, SIEVE_BLOOM_CLASSIC};

static const char *layout_name(sieve_bloom_layout l)
{
    return l == SIEVE_BLOOM_BLOCKED ? "blocked" : "classic";
}

/* Inserted and absent keys differ in their host prefix, so no absent key
 * can equal an inserted one. */
static size_t url(char *buf, size_t cap, const char *host, uint64_t i)
{
    int n = snprintf(buf, cap, "http://%s-%d.example/path/%llu", host, (int)(i % 997),
                     (unsigned long long)i);
    return (size_t)n;
}

static sieve_bloom *filter(uint64_t n, double p, sieve_bloom_layout layout, uint64_t seed)
{
    sieve_bloom *b = NULL;
    ck_assert_int_eq(sieve_bloom_new(&b, n, p, layout, seed), SIEVE_OK);
    ck_assert_ptr_nonnull(b);
    return b;
}

static void assert_count_near(const sieve_bloom *b, double truth)
{
    double est = sieve_bloom_estimated_count(b);
    ck_assert_msg(fabs(est - truth) <= 0.03 * truth, "estimated %.0f keys, true %.0f", est, truth);
}

/* Fills a filter to capacity, checking the estimate on the way, then asks
 * for every inserted key (no false negatives allowed) and for absent ones. */
static void check_rates(sieve_bloom_layout layout, double p)
{
    char buf[128];
    sieve_bloom *b = filter(N_KEYS, p, layout, 42);
    /* Plain ifs in the hot loops: each ck_assert is a message to the
     * parent process, which would dominate the run time. */
    uint64_t errors = 0, missing = 0;
    for (uint64_t i = 0; i < N_KEYS; i++) {
        size_t len = url(buf, sizeof(buf), "host", i);
        errors += sieve_bloom_add(b, buf, len) < 0;
        if (i + 1 == N_KEYS / 10 || i + 1 == N_KEYS / 2 || i + 1 == N_KEYS)
            assert_count_near(b, (double)(i + 1));
    }
    for (uint64_t i = 0; i < N_KEYS; i++) {
        size_t len = url(buf, sizeof(buf), "host", i);
        missing += !sieve_bloom_contains(b, buf, len);
    }
    ck_assert_uint_eq(errors, 0);
    ck_assert_msg(missing == 0, "%llu false negatives", (unsigned long long)missing);
    uint64_t fp = 0;
    for (uint64_t i = 0; i < N_ABSENT; i++) {
        size_t len = url(buf, sizeof(buf), "absent-host", i);
        fp += sieve_bloom_contains(b, buf, len);
    }
    double measured = (double)fp / N_ABSENT;
    sieve_bloom_info info;
    sieve_bloom_info_get(b, &info);
    fprintf(stderr, "%s p=%g: m/n=%.3f k=%u measured fp=%.6f (%llu of %u) est fp=%.6f\n",
            layout_name(layout), p, (double)info.m / N_KEYS, info.k, measured,
            (unsigned long long)fp, N_ABSENT, info.est_fp_rate);
    ck_assert_msg(measured <= p * TOLERANCE, "measured %g for p %g", measured, p);
    ck_assert(info.est_fp_rate > 0.8 * p && info.est_fp_rate < 1.2 * p);
    sieve_bloom_free(b);
}

START_TEST(rates_blocked_1e2)
{
    check_rates(SIEVE_BLOOM_BLOCKED, 0.01);
}
END_TEST

START_TEST(rates_blocked_1e3)
{
    check_rates(SIEVE_BLOOM_BLOCKED, 0.001);
}
END_TEST

START_TEST(rates_classic_1e2)
{
    check_rates(SIEVE_BLOOM_CLASSIC, 0.01);
}
END_TEST

START_TEST(rates_classic_1e3)
{
    check_rates(SIEVE_BLOOM_CLASSIC, 0.001);
}
END_TEST

START_TEST(invalid_parameters_are_refused)
{
    sieve_bloom *b = (sieve_bloom *)&b; /* any non-NULL marker */
    sieve_bloom *const marker = b;
    const double bad_p[] = {0.0, 1.0, -0.5, 1.5, NAN, INFINITY};
    for (size_t l = 0; l < 2; l++) {
        ck_assert_int_eq(sieve_bloom_new(&b, 0, 0.01, layouts[l], 1), SIEVE_EINVAL);
        for (size_t i = 0; i < sizeof(bad_p) / sizeof(bad_p[0]); i++)
            ck_assert_int_eq(sieve_bloom_new(&b, 1000, bad_p[i], layouts[l], 1), SIEVE_EINVAL);
        ck_assert_int_eq(sieve_bloom_new_mk(&b, 0, 3, layouts[l], 1), SIEVE_EINVAL);
        ck_assert_int_eq(sieve_bloom_new_mk(&b, 1024, 0, layouts[l], 1), SIEVE_EINVAL);
        ck_assert_int_eq(sieve_bloom_new_mk(&b, 1024, SIEVE_BLOOM_K_MAX + 1, layouts[l], 1),
                         SIEVE_EINVAL);
        ck_assert_double_lt(sieve_bloom_model_fp_rate(layouts[l], 0, 3, 10), 0);
        ck_assert_double_lt(sieve_bloom_model_fp_rate(layouts[l], 1024, 0, 10), 0);
        ck_assert_double_lt(sieve_bloom_model_fp_rate(layouts[l], 1024, 3, -1), 0);
        ck_assert_double_lt(sieve_bloom_model_fp_rate(layouts[l], 1024, 3, NAN), 0);
    }
    ck_assert_int_eq(sieve_bloom_new(&b, 1000, 0.01, (sieve_bloom_layout)7, 1), SIEVE_EINVAL);
    ck_assert_int_eq(sieve_bloom_new_mk(&b, 1024, 3, (sieve_bloom_layout)7, 1), SIEVE_EINVAL);
    ck_assert_double_lt(sieve_bloom_model_fp_rate((sieve_bloom_layout)7, 1024, 3, 10), 0);
    uint64_t m;
    unsigned k;
    ck_assert_int_eq(sieve_bloom_plan(0, 0.01, SIEVE_BLOOM_BLOCKED, &m, &k), SIEVE_EINVAL);
    ck_assert_int_eq(sieve_bloom_plan(10, NAN, SIEVE_BLOOM_CLASSIC, &m, &k), SIEVE_EINVAL);
    ck_assert_ptr_eq(b, marker); /* *out untouched on error */
}
END_TEST

START_TEST(oversized_filters_overflow)
{
    sieve_bloom *b = NULL;
    uint64_t m;
    unsigned k;
    for (size_t l = 0; l < 2; l++) {
        ck_assert_int_eq(sieve_bloom_new(&b, UINT64_MAX, 1e-9, layouts[l], 1), SIEVE_EOVERFLOW);
        ck_assert_int_eq(sieve_bloom_plan(UINT64_MAX / 2, 1e-3, layouts[l], &m, &k),
                         SIEVE_EOVERFLOW);
        ck_assert_int_eq(sieve_bloom_new_mk(&b, UINT64_MAX, 4, layouts[l], 1), SIEVE_EOVERFLOW);
        ck_assert_int_eq(sieve_bloom_new_mk(&b, UINT64_MAX - 100, 4, layouts[l], 1),
                         SIEVE_EOVERFLOW);
    }
    ck_assert_ptr_null(b);
}
END_TEST

START_TEST(add_reports_new_then_seen)
{
    for (size_t l = 0; l < 2; l++) {
        sieve_bloom *b = filter(1000, 0.01, layouts[l], 7);
        ck_assert(!sieve_bloom_contains(b, "http://a.example/", 17));
        ck_assert_int_eq(sieve_bloom_add(b, "http://a.example/", 17), SIEVE_OK);
        ck_assert_int_eq(sieve_bloom_add(b, "http://a.example/", 17), SIEVE_SEEN);
        ck_assert(sieve_bloom_contains(b, "http://a.example/", 17));
        sieve_hash h = sieve_bloom_hash(b, "http://b.example/", 17);
        sieve_bloom_prefetch(b, h);
        ck_assert(!sieve_bloom_contains_hashed(b, h));
        ck_assert_int_eq(sieve_bloom_add_hashed(b, h), SIEVE_OK);
        ck_assert_int_eq(sieve_bloom_add(b, "http://b.example/", 17), SIEVE_SEEN);
        /* The empty key is a key like any other. */
        ck_assert_int_eq(sieve_bloom_add(b, NULL, 0), SIEVE_OK);
        ck_assert_int_eq(sieve_bloom_add(b, "", 0), SIEVE_SEEN);
        ck_assert_int_eq(sieve_bloom_add(b, NULL, 5), SIEVE_EINVAL);
        ck_assert(!sieve_bloom_contains(b, NULL, 5));
        sieve_bloom_info info;
        sieve_bloom_info_get(b, &info);
        ck_assert_uint_le(info.bits_set, 3 * info.k);
        ck_assert_uint_ge(info.bits_set, info.k);
        sieve_bloom_free(b);
    }
}
END_TEST

START_TEST(seeds_change_the_hash)
{
    sieve_bloom *a = filter(1000, 0.01, SIEVE_BLOOM_BLOCKED, 1);
    sieve_bloom *b = filter(1000, 0.01, SIEVE_BLOOM_BLOCKED, 2);
    sieve_hash ha = sieve_bloom_hash(a, "key", 3), hb = sieve_bloom_hash(b, "key", 3);
    ck_assert(ha.lo != hb.lo || ha.hi != hb.hi);
    sieve_bloom_free(a);
    sieve_bloom_free(b);
}
END_TEST

/* Keys with repeats, some of them adjacent so they share a batch. */
static void batch_keys(char (*store)[64], sieve_key *keys, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t src = i % 3 == 2 ? i - 1 : i % 5000;
        keys[i].len = url(store[i], 64, "host", src);
        keys[i].data = store[i];
    }
}

START_TEST(batch_equals_single_adds)
{
    enum { N = 7000 };
    static char store[N][64];
    static sieve_key keys[N];
    static int results[N];
    batch_keys(store, keys, N);
    for (size_t l = 0; l < 2; l++) {
        sieve_bloom *one = filter(4000, 0.01, layouts[l], 3);
        sieve_bloom *many = filter(4000, 0.01, layouts[l], 3);
        size_t absent_one = 0;
        int rc[N];
        for (size_t i = 0; i < N; i++) {
            rc[i] = sieve_bloom_add(one, keys[i].data, keys[i].len);
            absent_one += rc[i] == SIEVE_OK;
        }
        /* Uneven slices, so batches start mid-way through the repeats. */
        size_t absent = 0;
        for (size_t at = 0, step = 1; at < N; at += step, step = step * 3 + 1) {
            size_t cnt = N - at < step ? N - at : step;
            absent += sieve_bloom_add_batch(many, keys + at, cnt, results + at);
        }
        ck_assert_uint_eq(absent, absent_one);
        ck_assert_uint_lt(absent, N);
        size_t differ = 0;
        for (size_t i = 0; i < N; i++)
            differ += results[i] != rc[i];
        ck_assert_uint_eq(differ, 0);
        /* Same bits: |one| = |many| = |one | many| forces one == many. */
        sieve_bloom_info a, b;
        sieve_bloom_info_get(one, &a);
        sieve_bloom_info_get(many, &b);
        ck_assert_uint_eq(a.bits_set, b.bits_set);
        ck_assert_int_eq(sieve_bloom_union(one, many), SIEVE_OK);
        sieve_bloom_info_get(one, &b);
        ck_assert_uint_eq(a.bits_set, b.bits_set);
        /* NULL results are allowed; a bad key is refused alone. */
        sieve_key bad[2] = {{NULL, 3}, {"fresh", 5}};
        int r2[2];
        ck_assert_uint_eq(sieve_bloom_add_batch(many, bad, 2, r2), 1);
        ck_assert_int_eq(r2[0], SIEVE_EINVAL);
        ck_assert_int_eq(r2[1], SIEVE_OK);
        ck_assert_uint_eq(sieve_bloom_add_batch(many, bad + 1, 1, NULL), 0);
        sieve_bloom_free(one);
        sieve_bloom_free(many);
    }
}
END_TEST

START_TEST(union_holds_both_sets)
{
    char buf[128];
    for (size_t l = 0; l < 2; l++) {
        sieve_bloom *a = filter(20000, 0.01, layouts[l], 9);
        sieve_bloom *b = filter(20000, 0.01, layouts[l], 9);
        for (uint64_t i = 0; i < 5000; i++) {
            sieve_bloom_add(a, buf, url(buf, sizeof(buf), "host", i));
            sieve_bloom_add(b, buf, url(buf, sizeof(buf), "other", i));
        }
        ck_assert_int_eq(sieve_bloom_union(a, b), SIEVE_OK);
        unsigned found = 0;
        for (uint64_t i = 0; i < 5000; i++) {
            found += sieve_bloom_contains(a, buf, url(buf, sizeof(buf), "host", i));
            found += sieve_bloom_contains(a, buf, url(buf, sizeof(buf), "other", i));
        }
        ck_assert_uint_eq(found, 10000);
        assert_count_near(a, 10000);
        ck_assert_int_eq(sieve_bloom_union(a, a), SIEVE_OK);
        assert_count_near(a, 10000);

        /* Any difference in shape or seed is refused and changes nothing. */
        sieve_bloom_info before, after;
        sieve_bloom_info_get(a, &before);
        sieve_bloom *other[4];
        other[0] = filter(20000, 0.01, layouts[l], 10);    /* seed */
        other[1] = filter(40000, 0.01, layouts[l], 9);     /* m */
        other[2] = filter(20000, 0.01, layouts[1 - l], 9); /* layout */
        ck_assert_int_eq(sieve_bloom_new_mk(&other[3], before.m, before.k + 1, layouts[l], 9),
                         SIEVE_OK); /* k */
        for (int i = 0; i < 4; i++) {
            sieve_bloom_add(other[i], "x", 1);
            ck_assert_int_eq(sieve_bloom_union(a, other[i]), SIEVE_EMISMATCH);
            sieve_bloom_free(other[i]);
        }
        sieve_bloom_info_get(a, &after);
        ck_assert_uint_eq(before.bits_set, after.bits_set);
        ck_assert_int_eq(sieve_bloom_union(a, NULL), SIEVE_EINVAL);
        sieve_bloom_free(a);
        sieve_bloom_free(b);
    }
}
END_TEST

START_TEST(plan_is_tight_and_meets_p)
{
    const double n = 1e8;
    const double ps[] = {0.1, 0.01, 1e-3, 1e-4, 1e-6, 1e-9};
    for (size_t l = 0; l < 2; l++) {
        for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
            uint64_t m;
            unsigned k;
            ck_assert_int_eq(sieve_bloom_plan((uint64_t)n, ps[i], layouts[l], &m, &k), SIEVE_OK);
            double rate = sieve_bloom_model_fp_rate(layouts[l], m, k, n);
            /* planned 2% under p, and no looser than 3% under */
            ck_assert_msg(rate <= 0.98 * ps[i] * 1.000001 && rate > 0.97 * ps[i],
                          "%s p=%g model %g", layout_name(layouts[l]), ps[i], rate);
            /* No layout beats the classic optimum -n ln p / ln2^2. */
            ck_assert_double_ge((double)m, -n * log(ps[i]) / (M_LN2 * M_LN2));
            if (layouts[l] == SIEVE_BLOOM_BLOCKED)
                ck_assert_uint_eq(m % 512, 0);
            /* The rate model is increasing in n. */
            ck_assert_double_lt(sieve_bloom_model_fp_rate(layouts[l], m, k, n / 2), rate);
            ck_assert_double_gt(sieve_bloom_model_fp_rate(layouts[l], m, k, n * 2), rate);
        }
        uint64_t m;
        unsigned k;
        ck_assert_int_eq(sieve_bloom_plan((uint64_t)n, 0.01, layouts[l], &m, &k), SIEVE_OK);
        ck_assert_double_le((double)m / n, 10.0);
        ck_assert_int_eq(sieve_bloom_plan((uint64_t)n, 1e-4, layouts[l], &m, &k), SIEVE_OK);
        ck_assert_double_le((double)m / n, 22.0);
    }
}
END_TEST

/* A blocked plan is the fewest blocks that meet the target at its k, by
 * the full rate model: planning reads only part of the model's table. */
START_TEST(blocked_plan_is_minimal_at_its_k)
{
    const double ns[] = {1000, 123457, 1e7, 3e9, 1e12};
    const double ps[] = {0.5, 0.1, 0.01, 1e-4, 1e-7, 1e-10};
    for (size_t j = 0; j < sizeof ns / sizeof *ns; j++) {
        for (size_t i = 0; i < sizeof ps / sizeof *ps; i++) {
            uint64_t m;
            unsigned k;
            ck_assert_int_eq(sieve_bloom_plan((uint64_t)ns[j], ps[i], SIEVE_BLOOM_BLOCKED, &m, &k),
                             SIEVE_OK);
            double target = 0.98 * ps[i];
            ck_assert_double_le(sieve_bloom_model_fp_rate(SIEVE_BLOOM_BLOCKED, m, k, ns[j]),
                                target);
            ck_assert_msg(sieve_bloom_model_fp_rate(SIEVE_BLOOM_BLOCKED, m - 512, k, ns[j]) >
                              target,
                          "n=%g p=%g: %llu bits meet it with a block less", ns[j], ps[i],
                          (unsigned long long)m);
        }
    }
}
END_TEST

START_TEST(model_matches_known_values)
{
    /* Classic: the textbook formula. */
    double expect = pow(1 - exp(-7.0 * 1000 / 9600), 7);
    ck_assert_double_eq_tol(sieve_bloom_model_fp_rate(SIEVE_BLOOM_CLASSIC, 9600, 7, 1000), expect,
                            expect * 1e-12);
    /* Blocked, k = 1: a block of j keys has 1 - (511/512)^j of its bits set,
     * and with Poisson loads E[(511/512)^J] = exp(-lambda / 512). */
    double lambda = 40;
    expect = 1 - exp(-lambda / 512);
    ck_assert_double_eq_tol(
        sieve_bloom_model_fp_rate(SIEVE_BLOOM_BLOCKED, 512 * 1000, 1, lambda * 1000), expect,
        expect * 1e-9);
    /* Blocked, one block of exactly one key is rare: with lambda tiny the
     * rate is lambda / C(512, 2) to first order. */
    lambda = 1e-6;
    expect = lambda / (512.0 * 511 / 2);
    ck_assert_double_eq_tol(sieve_bloom_model_fp_rate(SIEVE_BLOOM_BLOCKED, 512, 2, lambda), expect,
                            expect * 1e-5);
    ck_assert_double_eq(sieve_bloom_model_fp_rate(SIEVE_BLOOM_BLOCKED, 512, 2, 0), 0);
    ck_assert_double_eq(sieve_bloom_model_fp_rate(SIEVE_BLOOM_BLOCKED, 512, 2, INFINITY), 1);
    /* m is rounded up to whole blocks, as new_mk does. */
    ck_assert_double_eq(sieve_bloom_model_fp_rate(SIEVE_BLOOM_BLOCKED, 1000, 3, 50),
                        sieve_bloom_model_fp_rate(SIEVE_BLOOM_BLOCKED, 1024, 3, 50));
}
END_TEST

START_TEST(new_mk_shape_and_info)
{
    sieve_bloom *b;
    ck_assert_int_eq(sieve_bloom_new_mk(&b, 1000, 3, SIEVE_BLOOM_BLOCKED, 5), SIEVE_OK);
    sieve_bloom_info info;
    sieve_bloom_info_get(b, &info);
    ck_assert_uint_eq(info.m, 1024);
    ck_assert_uint_eq(info.k, 3);
    ck_assert_uint_eq(info.seed, 5);
    ck_assert_int_eq(info.layout, SIEVE_BLOOM_BLOCKED);
    ck_assert_uint_eq(info.capacity, (uint64_t)(M_LN2 * 1024 / 3));
    ck_assert_double_eq(info.fp_rate, sieve_bloom_model_fp_rate(SIEVE_BLOOM_BLOCKED, 1024, 3,
                                                                (double)info.capacity));
    ck_assert_uint_eq(info.bits_set, 0);
    ck_assert_double_eq(info.est_count, 0);
    ck_assert_double_eq(info.est_fp_rate, 0);
    ck_assert_uint_ge(info.bytes, 1024 / 8);
    sieve_bloom_free(b);

    ck_assert_int_eq(sieve_bloom_new_mk(&b, 1000, 3, SIEVE_BLOOM_CLASSIC, 5), SIEVE_OK);
    sieve_bloom_info_get(b, &info);
    ck_assert_uint_eq(info.m, 1000);
    sieve_bloom_free(b);
    sieve_bloom_free(NULL);
}
END_TEST

START_TEST(full_filter_estimates_saturate)
{
    char buf[64];
    for (size_t l = 0; l < 2; l++) {
        sieve_bloom *b;
        ck_assert_int_eq(sieve_bloom_new_mk(&b, 512, 16, layouts[l], 1), SIEVE_OK);
        /* With 512 bits, 100,000 keys of 16 bits each miss one bit with
         * probability about 512 * e^-3125: never. */
        for (uint64_t i = 0; i < 100000; i++)
            sieve_bloom_add(b, buf, url(buf, sizeof(buf), "host", i));
        sieve_bloom_info info;
        sieve_bloom_info_get(b, &info);
        ck_assert_uint_eq(info.bits_set, 512);
        ck_assert(isinf(info.est_count));
        ck_assert_double_eq(info.est_fp_rate, 1);
        ck_assert_int_eq(sieve_bloom_add(b, "new", 3), SIEVE_SEEN);
        sieve_bloom_free(b);
    }
}
END_TEST

START_TEST(bits_set_counts_distinct_bits)
{
    /* The incremental count must equal a recount; a self-union recounts. */
    char buf[128];
    for (size_t l = 0; l < 2; l++) {
        sieve_bloom *b = filter(50000, 0.05, layouts[l], 11);
        for (uint64_t i = 0; i < 60000; i++)
            sieve_bloom_add(b, buf, url(buf, sizeof(buf), "host", i % 40000));
        sieve_bloom *z = filter(50000, 0.05, layouts[l], 11);
        sieve_bloom_info before, after;
        sieve_bloom_info_get(b, &before);
        ck_assert_int_eq(sieve_bloom_union(z, b), SIEVE_OK);
        sieve_bloom_info_get(z, &after);
        ck_assert_uint_eq(before.bits_set, after.bits_set);
        assert_count_near(b, 40000);
        sieve_bloom_free(b);
        sieve_bloom_free(z);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("bloom");
    TCase *core = tcase_create("core");
    tcase_add_test(core, invalid_parameters_are_refused);
    tcase_add_test(core, oversized_filters_overflow);
    tcase_add_test(core, add_reports_new_then_seen);
    tcase_add_test(core, seeds_change_the_hash);
    tcase_add_test(core, batch_equals_single_adds);
    tcase_add_test(core, union_holds_both_sets);
    tcase_add_test(core, plan_is_tight_and_meets_p);
    tcase_add_test(core, blocked_plan_is_minimal_at_its_k);
    tcase_add_test(core, model_matches_known_values);
    tcase_add_test(core, new_mk_shape_and_info);
    tcase_add_test(core, full_filter_estimates_saturate);
    tcase_add_test(core, bits_set_counts_distinct_bits);
    suite_add_tcase(s, core);
    TCase *rates = tcase_create("rates");
    tcase_add_test(rates, rates_blocked_1e2);
    tcase_add_test(rates, rates_blocked_1e3);
    tcase_add_test(rates, rates_classic_1e2);
    tcase_add_test(rates, rates_classic_1e3);
    suite_add_tcase(s, rates);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
