/* test-robots-cache.c - the engine's robots.txt cache (robots-cache.c):
 * the URLs that waited for a fetch go under the rules it brought, however
 * short their expiry, a fetch lets through no more lookups than waited
 * for it, and rules whose waiters have come leave memory when it is
 * short; a fetch to be made again is claimed anew, its failures counted,
 * and a host given up on answers with its reason for a while. */
#include <check.h>
#include <limits.h>
#include <stdlib.h>

#include "robots-cache.h"
#include "sieve/status.h"

#define HOST "a.test"

static robots_state look(robots_cache *c, double now)
{
    bool allowed = false;
    double delay;
    char why[ROBOTS_WHY_MAX];
    robots_state st = robots_cache_lookup(c, HOST, 6, now, "/", 1, &allowed, &delay, why);
    ck_assert(st != ROBOTS_READY || allowed);
    if (st == ROBOTS_DOWN)
        ck_assert_str_eq(why, "down: 503");
    return st;
}

static void store(robots_cache *c, double now, bool comes_back)
{
    sieve_robots *rules;
    ck_assert_int_eq(sieve_robots_allow_all(&rules), SIEVE_OK);
    robots_cache_store(c, HOST, 6, rules, now, comes_back);
}

/* Rules that expire at once: URL A claims the fetch, URL B finds it under
 * way and is given back. Both go under the rules when their turns come,
 * in either order; the next URL fetches robots.txt again. Letting only A
 * through sent B to fetch again, and A after it, for ever. */
START_TEST(each_url_that_waited_goes_under_the_rules_once)
{
    robots_cache *c;
    ck_assert_int_eq(robots_cache_new(&c, 0, 0, 0), SIEVE_OK);
    ck_assert_int_eq(look(c, 1.0), ROBOTS_FETCH); /* A */
    ck_assert_int_eq(look(c, 1.1), ROBOTS_WAIT);  /* B */
    store(c, 1.2, true);
    ck_assert_int_eq(look(c, 2.0), ROBOTS_READY); /* B's turn first */
    ck_assert_int_eq(look(c, 2.1), ROBOTS_READY); /* then A's */
    ck_assert_int_eq(look(c, 2.2), ROBOTS_FETCH); /* C: expired, nobody waited */
    store(c, 2.3, true);
    ck_assert_int_eq(look(c, 3.0), ROBOTS_READY);
    ck_assert_int_eq(look(c, 3.1), ROBOTS_FETCH);
    robots_cache_free(c);
}
END_TEST

/* A fetch whose URL the rules refuse does not come back: it lets through
 * only those that waited. */
START_TEST(a_refused_url_lets_none_through)
{
    robots_cache *c;
    ck_assert_int_eq(robots_cache_new(&c, 0, 0, 0), SIEVE_OK);
    ck_assert_int_eq(look(c, 1.0), ROBOTS_FETCH);
    store(c, 1.1, false);
    ck_assert_int_eq(look(c, 2.0), ROBOTS_FETCH);
    ck_assert_int_eq(look(c, 2.1), ROBOTS_WAIT);
    store(c, 2.2, false);
    ck_assert_int_eq(look(c, 3.0), ROBOTS_READY); /* the one that waited */
    ck_assert_int_eq(look(c, 3.1), ROBOTS_FETCH);
    robots_cache_free(c);
}
END_TEST

/* Rules within their expiry answer every lookup. */
START_TEST(fresh_rules_answer_every_lookup)
{
    robots_cache *c;
    ck_assert_int_eq(robots_cache_new(&c, 60, 5, 0), SIEVE_OK);
    ck_assert_int_eq(look(c, 1.0), ROBOTS_FETCH);
    store(c, 1.1, true);
    for (int i = 0; i < 100; i++)
        ck_assert_int_eq(look(c, 2.0 + i * 0.1), ROBOTS_READY);
    ck_assert_int_eq(look(c, 61.2), ROBOTS_FETCH); /* the fetch's own URL came back in time */
    robots_cache_free(c);
}
END_TEST

/* Admits hold an entry in memory only until they are used, fresh rules
 * or not: with no room for any rules, the fetch's URL comes back to them,
 * then they go, and the next URL fetches again. Admits that outlived
 * their use kept every host's rules past the budget. */
START_TEST(used_admits_let_rules_leave_memory)
{
    robots_cache *c;
    ck_assert_int_eq(robots_cache_new(&c, 60, 5, 1), SIEVE_OK);
    ck_assert_int_eq(look(c, 1.0), ROBOTS_FETCH);
    store(c, 1.1, true);
    ck_assert_int_eq(look(c, 2.0), ROBOTS_READY);
    ck_assert_int_eq(look(c, 2.1), ROBOTS_FETCH);
    uint64_t hosts, bytes;
    robots_cache_stats(c, &hosts, &bytes);
    ck_assert_uint_eq(hosts, 1); /* the fetch under way */
    robots_cache_free(c);
}
END_TEST

/* A fetch that will be made again stores nothing: the next lookup claims
 * it anew, and each such end is counted until a fetch ends otherwise. */
START_TEST(a_fetch_made_again_is_claimed_anew)
{
    robots_cache *c;
    ck_assert_int_eq(robots_cache_new(&c, 60, 5, 0), SIEVE_OK);
    ck_assert_uint_eq(robots_cache_failures(c, "b.test", 6), UINT_MAX); /* never seen */
    ck_assert_int_eq(look(c, 1.0), ROBOTS_FETCH);
    ck_assert_int_eq(look(c, 1.1), ROBOTS_WAIT);
    ck_assert_uint_eq(robots_cache_failures(c, HOST, 6), 0);
    robots_cache_again(c, HOST, 6);
    ck_assert_uint_eq(robots_cache_failures(c, HOST, 6), 1);
    ck_assert_int_eq(look(c, 1.2), ROBOTS_FETCH);
    ck_assert_int_eq(look(c, 1.3), ROBOTS_WAIT);
    robots_cache_again(c, HOST, 6);
    ck_assert_int_eq(look(c, 1.4), ROBOTS_FETCH);
    ck_assert_uint_eq(robots_cache_failures(c, HOST, 6), 2);
    store(c, 1.5, true);
    ck_assert_uint_eq(robots_cache_failures(c, HOST, 6), 0);
    ck_assert_int_eq(look(c, 2.0), ROBOTS_READY);
    robots_cache_free(c);
}
END_TEST

/* A host given up on answers DOWN, with its reason, for retry_s, and the
 * URLs that waited for the fetch even after; then it is asked again with
 * all its tries. Rules it had before do not answer meanwhile. */
START_TEST(a_host_down_answers_with_its_reason_for_a_while)
{
    robots_cache *c;
    ck_assert_int_eq(robots_cache_new(&c, 60, 5, 0), SIEVE_OK);
    ck_assert_int_eq(look(c, 1.0), ROBOTS_FETCH);
    store(c, 1.1, false);
    ck_assert_int_eq(look(c, 70.0), ROBOTS_FETCH); /* the rules expired */
    ck_assert_int_eq(look(c, 70.1), ROBOTS_WAIT);
    robots_cache_again(c, HOST, 6);
    ck_assert_int_eq(look(c, 71.0), ROBOTS_FETCH);
    ck_assert_int_eq(look(c, 71.1), ROBOTS_WAIT);
    robots_cache_down(c, HOST, 6, "down: 503", 72.0);
    ck_assert_uint_eq(robots_cache_failures(c, HOST, 6), 0);
    ck_assert_int_eq(look(c, 73.0), ROBOTS_DOWN);
    ck_assert_int_eq(look(c, 76.9), ROBOTS_DOWN);
    ck_assert_int_eq(look(c, 80.0), ROBOTS_FETCH); /* past retry_s; its waiter came */
    store(c, 80.1, true);
    ck_assert_int_eq(look(c, 80.2), ROBOTS_READY);
    robots_cache_free(c);
}
END_TEST

/* A host between two tries is kept however short memory is: dropped, it
 * would forget its failures and be asked again for ever. */
START_TEST(a_host_between_tries_stays_in_memory)
{
    robots_cache *c;
    ck_assert_int_eq(robots_cache_new(&c, 60, 5, 1), SIEVE_OK);
    ck_assert_int_eq(look(c, 1.0), ROBOTS_FETCH);
    robots_cache_again(c, HOST, 6);
    bool allowed;
    double delay;
    char why[ROBOTS_WHY_MAX];
    ck_assert_int_eq(robots_cache_lookup(c, "b.test", 6, 1.1, "/", 1, &allowed, &delay, why),
                     ROBOTS_FETCH);
    robots_cache_again(c, "b.test", 6);
    uint64_t hosts, bytes;
    robots_cache_stats(c, &hosts, &bytes);
    ck_assert_uint_eq(hosts, 2);
    ck_assert_uint_eq(robots_cache_failures(c, HOST, 6), 1);
    robots_cache_free(c);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("robots-cache");
    TCase *tc = tcase_create("robots-cache");
    tcase_add_test(tc, each_url_that_waited_goes_under_the_rules_once);
    tcase_add_test(tc, a_refused_url_lets_none_through);
    tcase_add_test(tc, fresh_rules_answer_every_lookup);
    tcase_add_test(tc, used_admits_let_rules_leave_memory);
    tcase_add_test(tc, a_fetch_made_again_is_claimed_anew);
    tcase_add_test(tc, a_host_down_answers_with_its_reason_for_a_while);
    tcase_add_test(tc, a_host_between_tries_stays_in_memory);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
