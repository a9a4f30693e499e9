/* test-status.c - every status code has its own sentence. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "sieve/sieve.h"

START_TEST(every_code_has_a_distinct_message)
{
    for (int a = SIEVE_EREPEAT; a <= SIEVE_SEEN; a++) {
        const char *ma = sieve_strerror(a);
        ck_assert_ptr_nonnull(ma);
        ck_assert_str_ne(ma, "unknown status");
        for (int b = a + 1; b <= SIEVE_SEEN; b++)
            ck_assert_str_ne(ma, sieve_strerror(b));
    }
}
END_TEST

START_TEST(unknown_codes_are_named_unknown)
{
    ck_assert_str_eq(sieve_strerror(-1000), "unknown status");
    ck_assert_str_eq(sieve_strerror(1000), "unknown status");
}
END_TEST

START_TEST(version_is_the_project_version)
{
    ck_assert_str_eq(sieve_version(), SIEVE_TEST_VERSION);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("status");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, every_code_has_a_distinct_message);
    tcase_add_test(tc, unknown_codes_are_named_unknown);
    tcase_add_test(tc, version_is_the_project_version);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
