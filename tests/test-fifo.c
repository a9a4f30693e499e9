/* test-fifo.c - entries come out in the order they went in, intact, and the
 * queue's memory follows its length.
 *
 * Entry i is fully determined by i (length, bytes, tag), so a consumer
 * checks what it pops without keeping a copy of what was pushed. Hot loops
 * check with REQUIRE: a passing ck_assert costs Check a write. */
#include <check.h>
#include <stdio.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sieve/sieve.h"

#define REQUIRE(expr, i)                                                                           \
    do {                                                                                           \
        if (!(expr))                                                                               \
            ck_abort_msg("'%s' failed at entry %" PRIu64, #expr, (uint64_t)(i));                   \
    } while (0)

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static uint32_t entry_tag(uint64_t i)
{
    return (uint32_t)mix(i + 1);
}

static void entry_fill(unsigned char *buf, size_t len, uint64_t i)
{
    for (size_t j = 0; j < len; j++)
        buf[j] = (unsigned char)(i * 131 + j * 7);
}

static int entry_check(const unsigned char *buf, size_t len, uint64_t i)
{
    for (size_t j = 0; j < len; j++)
        if (buf[j] != (unsigned char)(i * 131 + j * 7))
            return 0;
    return 1;
}

static sieve_fifo *new_fifo(void)
{
    sieve_fifo *q = NULL;
    ck_assert_int_eq(sieve_fifo_new(&q), SIEVE_OK);
    ck_assert_ptr_nonnull(q);
    return q;
}

static void push_entry(sieve_fifo *q, uint64_t i, size_t len, unsigned char *buf)
{
    entry_fill(buf, len, i);
    REQUIRE(sieve_fifo_push(q, buf, len, entry_tag(i)) == SIEVE_OK, i);
}

static void pop_entry(sieve_fifo *q, uint64_t i, size_t want, unsigned char *buf, size_t cap)
{
    size_t len = (size_t)-1;
    uint32_t tag = 0;
    REQUIRE(sieve_fifo_peek_len(q) == (int64_t)want, i);
    REQUIRE(sieve_fifo_pop(q, buf, cap, &len, &tag) == SIEVE_OK, i);
    REQUIRE(len == want, i);
    REQUIRE(tag == entry_tag(i), i);
    REQUIRE(entry_check(buf, len, i), i);
}

static size_t varied_len(uint64_t i)
{
    return (size_t)(mix(i ^ UINT64_C(0x5555)) % 301); /* 0..300 */
}

START_TEST(million_entries_in_order_interleaved)
{
    const uint64_t n = 1000000;
    sieve_fifo *q = new_fifo();
    unsigned char buf[512];
    uint64_t pushed = 0, popped = 0, r = 1;
    while (popped < n) {
        /* Bursts of pushes and pops, pushes favoured until all are in, so
         * the queue's length swings between empty and tens of thousands. */
        r = mix(r);
        uint64_t burst = r % 2000;
        bool push = pushed < n && (pushed == popped || (r >> 32) % 16 < 9);
        for (uint64_t k = 0; k < burst; k++) {
            if (push && pushed < n) {
                push_entry(q, pushed, varied_len(pushed), buf);
                pushed++;
            } else if (!push && popped < pushed) {
                pop_entry(q, popped, varied_len(popped), buf, sizeof(buf));
                popped++;
            }
        }
        REQUIRE(sieve_fifo_length(q) == pushed - popped, popped);
    }
    ck_assert_uint_eq(pushed, n);
    ck_assert_uint_eq(sieve_fifo_length(q), 0);
    size_t len;
    ck_assert_int_eq(sieve_fifo_pop(q, buf, sizeof(buf), &len, NULL), SIEVE_EAGAIN);
    sieve_fifo_free(q);
}
END_TEST

/* Every entry size from 1000 to 1200 bytes, many times over: chunk ends
 * fall at every possible offset inside and between entries. */
START_TEST(entries_across_chunk_boundaries)
{
    sieve_fifo *q = new_fifo();
    unsigned char *buf = malloc(SIEVE_FIFO_CHUNK + 64);
    ck_assert_ptr_nonnull(buf);
    uint64_t i = 0;
    for (size_t len = 1000; len <= 1200; len++)
        for (int rep = 0; rep < 70; rep++, i++)
            push_entry(q, i, len, buf);
    ck_assert_uint_gt(sieve_fifo_bytes(q), 100 * (uint64_t)SIEVE_FIFO_CHUNK);
    i = 0;
    for (size_t len = 1000; len <= 1200; len++)
        for (int rep = 0; rep < 70; rep++, i++)
            pop_entry(q, i, len, buf, SIEVE_FIFO_CHUNK + 64);

    /* Around the size of a whole chunk: some fit a regular chunk, some
     * need one of their own; both kinds alternate with tiny entries. */
    i = 0;
    for (size_t len = SIEVE_FIFO_CHUNK - 64; len <= SIEVE_FIFO_CHUNK + 16; len++, i += 2) {
        push_entry(q, i, len, buf);
        push_entry(q, i + 1, i % 3, buf);
    }
    i = 0;
    for (size_t len = SIEVE_FIFO_CHUNK - 64; len <= SIEVE_FIFO_CHUNK + 16; len++, i += 2) {
        pop_entry(q, i, len, buf, SIEVE_FIFO_CHUNK + 64);
        pop_entry(q, i + 1, i % 3, buf, SIEVE_FIFO_CHUNK + 64);
    }
    ck_assert_uint_eq(sieve_fifo_length(q), 0);
    free(buf);
    sieve_fifo_free(q);
}
END_TEST

typedef struct walk {
    uint64_t next, stop_at;
} walk;

static int visit(void *ud, const void *data, size_t len, uint32_t tag)
{
    walk *w = ud;
    uint64_t i = w->next++;
    if (len != varied_len(i) || tag != entry_tag(i) || !entry_check(data, len, i))
        return -1;
    return w->next == w->stop_at ? 7 : 0;
}

/* foreach() sees every entry in order, across chunks, after pops and
 * with a reserved empty chunk at the tail, takes nothing, and stops where
 * its function says. */
START_TEST(foreach_walks_the_queue_in_order)
{
    sieve_fifo *q = new_fifo();
    unsigned char buf[512];
    for (uint64_t i = 0; i < 5000; i++)
        push_entry(q, i, varied_len(i), buf);
    for (uint64_t i = 0; i < 1000; i++)
        pop_entry(q, i, varied_len(i), buf, sizeof buf);
    walk w = {.next = 1000};
    ck_assert_int_eq(sieve_fifo_foreach(q, visit, &w), 0);
    ck_assert_uint_eq(w.next, 5000);
    ck_assert_uint_eq(sieve_fifo_length(q), 4000);
    ck_assert_int_eq(sieve_fifo_reserve(q, SIEVE_FIFO_CHUNK / 2), SIEVE_OK);
    w = (walk){.next = 1000, .stop_at = 3000};
    ck_assert_int_eq(sieve_fifo_foreach(q, visit, &w), 7);
    ck_assert_uint_eq(w.next, 3000);
    for (uint64_t i = 1000; i < 5000; i++)
        pop_entry(q, i, varied_len(i), buf, sizeof buf);
    w = (walk){.next = 0};
    ck_assert_int_eq(sieve_fifo_foreach(q, visit, &w), 0);
    ck_assert_uint_eq(w.next, 0);
    ck_assert_int_eq(sieve_fifo_foreach(NULL, visit, &w), SIEVE_EINVAL);
    sieve_fifo_free(q);
}
END_TEST

START_TEST(large_entry_gets_its_own_chunk)
{
    const size_t big = 200 * 1024;
    sieve_fifo *q = new_fifo();
    unsigned char *buf = malloc(big);
    ck_assert_ptr_nonnull(buf);
    push_entry(q, 0, 10, buf);
    push_entry(q, 1, big, buf);
    push_entry(q, 2, 20, buf);
    ck_assert_uint_eq(sieve_fifo_length(q), 3);
    ck_assert_uint_ge(sieve_fifo_bytes(q), big);
    pop_entry(q, 0, 10, buf, big);
    pop_entry(q, 1, big, buf, big);
    /* The big chunk is gone once drained. */
    ck_assert_uint_lt(sieve_fifo_bytes(q), big);
    pop_entry(q, 2, 20, buf, big);
    ck_assert_uint_lt(sieve_fifo_bytes(q), big);
    free(buf);
    sieve_fifo_free(q);
}
END_TEST

START_TEST(pop_into_small_buffer_removes_nothing)
{
    sieve_fifo *q = new_fifo();
    char buf[32];
    size_t len = 0;
    uint32_t tag = 0;
    ck_assert_int_eq(sieve_fifo_push(q, "hello world", 11, 7), SIEVE_OK);
    ck_assert_int_eq(sieve_fifo_push(q, "next", 4, 8), SIEVE_OK);
    ck_assert_int_eq(sieve_fifo_pop(q, buf, 5, &len, &tag), SIEVE_ERANGE);
    ck_assert_uint_eq(len, 11);
    ck_assert_int_eq(sieve_fifo_pop(q, NULL, 0, &len, &tag), SIEVE_ERANGE);
    ck_assert_uint_eq(len, 11);
    ck_assert_int_eq(sieve_fifo_pop(q, buf, 10, &len, NULL), SIEVE_ERANGE);
    ck_assert_uint_eq(sieve_fifo_length(q), 2);
    ck_assert_int_eq(sieve_fifo_peek_len(q), 11);
    ck_assert_int_eq(sieve_fifo_pop(q, buf, 11, &len, &tag), SIEVE_OK);
    ck_assert_uint_eq(len, 11);
    ck_assert_uint_eq(tag, 7);
    ck_assert_mem_eq(buf, "hello world", 11);
    ck_assert_int_eq(sieve_fifo_pop(q, buf, sizeof(buf), &len, &tag), SIEVE_OK);
    ck_assert_uint_eq(len, 4);
    ck_assert_uint_eq(tag, 8);
    ck_assert_mem_eq(buf, "next", 4);
    sieve_fifo_free(q);
}
END_TEST

START_TEST(empty_queue_and_empty_entries)
{
    sieve_fifo *q = new_fifo();
    char buf[8];
    size_t len = 99;
    uint32_t tag = 0;
    ck_assert_int_eq(sieve_fifo_pop(q, buf, sizeof(buf), &len, &tag), SIEVE_EAGAIN);
    ck_assert_int_eq(sieve_fifo_peek_len(q), SIEVE_EAGAIN);
    ck_assert_uint_eq(sieve_fifo_length(q), 0);
    ck_assert_int_eq(sieve_fifo_push(q, NULL, 0, UINT32_MAX), SIEVE_OK);
    ck_assert_int_eq(sieve_fifo_push(q, "", 0, 0), SIEVE_OK);
    ck_assert_uint_eq(sieve_fifo_length(q), 2);
    ck_assert_int_eq(sieve_fifo_peek_len(q), 0);
    ck_assert_int_eq(sieve_fifo_pop(q, NULL, 0, &len, &tag), SIEVE_OK);
    ck_assert_uint_eq(len, 0);
    ck_assert_uint_eq(tag, UINT32_MAX);
    ck_assert_int_eq(sieve_fifo_pop(q, buf, sizeof(buf), &len, &tag), SIEVE_OK);
    ck_assert_uint_eq(tag, 0);
    ck_assert_int_eq(sieve_fifo_pop(q, buf, sizeof(buf), &len, &tag), SIEVE_EAGAIN);
    ck_assert_int_eq(sieve_fifo_peek_len(q), SIEVE_EAGAIN);
    sieve_fifo_free(q);
    sieve_fifo_free(NULL);
}
END_TEST

START_TEST(bytes_follow_the_length)
{
    sieve_fifo *q = new_fifo();
    unsigned char buf[128];
    uint64_t empty = sieve_fifo_bytes(q);
    ck_assert_uint_gt(empty, 0);
    const uint64_t n = 100000;
    for (uint64_t i = 0; i < n; i++)
        push_entry(q, i, 100, buf);
    uint64_t full = sieve_fifo_bytes(q);
    ck_assert_uint_ge(full, n * 100);
    ck_assert_uint_eq(sieve_fifo_length(q), n);
    for (uint64_t i = 0; i < n / 2; i++)
        pop_entry(q, i, 100, buf, sizeof(buf));
    uint64_t half = sieve_fifo_bytes(q);
    ck_assert_uint_lt(half, full / 2 + 2 * (uint64_t)SIEVE_FIFO_CHUNK);
    ck_assert_uint_eq(sieve_fifo_length(q), n / 2);
    for (uint64_t i = n / 2; i < n; i++)
        pop_entry(q, i, 100, buf, sizeof(buf));
    /* At most one spare chunk stays behind. */
    ck_assert_uint_le(sieve_fifo_bytes(q), empty + SIEVE_FIFO_CHUNK);
    ck_assert_uint_eq(sieve_fifo_length(q), 0);
    sieve_fifo_free(q);
}
END_TEST

/* A short queue that drains and fills again, as a host's does, stays at
 * its first chunk's size however often it does. */
START_TEST(a_short_queue_that_drains_stays_small)
{
    sieve_fifo *q = new_fifo();
    unsigned char buf[128];
    /* 3 URLs a round fit the first chunk; 12 take two chunks */
    for (uint64_t each = 3; each <= 12; each += 9) {
        uint64_t most = 0;
        for (uint64_t round = 0; round < 100; round++) {
            for (uint64_t i = 0; i < each; i++)
                push_entry(q, round * each + i, 40, buf);
            if (round == 0)
                most = sieve_fifo_bytes(q);
            REQUIRE(sieve_fifo_bytes(q) <= most, round);
            for (uint64_t i = 0; i < each; i++)
                pop_entry(q, round * each + i, 40, buf, sizeof buf);
        }
        ck_assert_uint_le(most, 2048);
    }
    sieve_fifo_free(q);
}
END_TEST

/* Push one, pop one, for a long time: memory stays at a chunk or two. */
START_TEST(steady_state_memory_is_bounded)
{
    sieve_fifo *q = new_fifo();
    unsigned char buf[512];
    uint64_t empty = sieve_fifo_bytes(q);
    for (uint64_t i = 0; i < 16; i++)
        push_entry(q, i, varied_len(i), buf);
    for (uint64_t i = 0; i < 300000; i++) {
        push_entry(q, i + 16, varied_len(i + 16), buf);
        pop_entry(q, i, varied_len(i), buf, sizeof(buf));
        REQUIRE(sieve_fifo_bytes(q) <= empty + 2 * (uint64_t)SIEVE_FIFO_CHUNK, i);
    }
    ck_assert_uint_eq(sieve_fifo_length(q), 16);
    sieve_fifo_free(q);
}
END_TEST

/* A reserved chunk on an empty queue holds no entry, and a push after a
 * reserve lands in it without allocating. */
START_TEST(reserve_makes_the_next_push_certain)
{
    sieve_fifo *q;
    ck_assert_int_eq(sieve_fifo_new(&q), SIEVE_OK);
    ck_assert_int_eq(sieve_fifo_reserve(q, 100), SIEVE_OK);
    char buf[300];
    size_t len;
    ck_assert_int_eq(sieve_fifo_pop(q, buf, sizeof buf, &len, NULL), SIEVE_EAGAIN);
    ck_assert_int_eq(sieve_fifo_peek_len(q), SIEVE_EAGAIN);
    ck_assert_uint_eq(sieve_fifo_length(q), 0);
    uint64_t bytes = sieve_fifo_bytes(q);
    ck_assert_int_eq(sieve_fifo_push(q, "0123456789", 10, 7), SIEVE_OK);
    ck_assert_uint_eq(sieve_fifo_bytes(q), bytes);
    /* fill the chunk, reserve past its end, and keep the order */
    for (int i = 0; i < 2000; i++) {
        char e[16];
        int n = snprintf(e, sizeof e, "e%d", i);
        ck_assert_int_eq(sieve_fifo_reserve(q, (size_t)n), SIEVE_OK);
        ck_assert_int_eq(sieve_fifo_push(q, e, (size_t)n, (uint32_t)i), SIEVE_OK);
    }
    uint32_t tag;
    ck_assert_int_eq(sieve_fifo_pop(q, buf, sizeof buf, &len, &tag), SIEVE_OK);
    ck_assert_uint_eq(tag, 7);
    for (int i = 0; i < 2000; i++) {
        ck_assert_int_eq(sieve_fifo_pop(q, buf, sizeof buf, &len, &tag), SIEVE_OK);
        ck_assert_uint_eq(tag, (uint32_t)i);
    }
    ck_assert_int_eq(sieve_fifo_reserve(q, (size_t)SIEVE_FIFO_ENTRY_MAX + 1), SIEVE_ETOOLONG);
    ck_assert_int_eq(sieve_fifo_reserve(NULL, 1), SIEVE_EINVAL);
    sieve_fifo_free(q);
}
END_TEST

START_TEST(bad_arguments_are_rejected)
{
    sieve_fifo *q = new_fifo();
    char buf[4];
    size_t len;
    ck_assert_int_eq(sieve_fifo_new(NULL), SIEVE_EINVAL);
    ck_assert_int_eq(sieve_fifo_push(q, NULL, 3, 0), SIEVE_EINVAL);
    ck_assert_int_eq(sieve_fifo_push(q, buf, (size_t)SIEVE_FIFO_ENTRY_MAX + 1, 0), SIEVE_ETOOLONG);
    ck_assert_uint_eq(sieve_fifo_length(q), 0);
    ck_assert_int_eq(sieve_fifo_push(q, "ab", 2, 0), SIEVE_OK);
    ck_assert_int_eq(sieve_fifo_pop(q, buf, sizeof(buf), NULL, NULL), SIEVE_EINVAL);
    ck_assert_int_eq(sieve_fifo_pop(q, NULL, 4, &len, NULL), SIEVE_EINVAL);
    ck_assert_uint_eq(sieve_fifo_length(q), 1);
    sieve_fifo_free(q);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("fifo");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, million_entries_in_order_interleaved);
    tcase_add_test(tc, entries_across_chunk_boundaries);
    tcase_add_test(tc, foreach_walks_the_queue_in_order);
    tcase_add_test(tc, large_entry_gets_its_own_chunk);
    tcase_add_test(tc, pop_into_small_buffer_removes_nothing);
    tcase_add_test(tc, empty_queue_and_empty_entries);
    tcase_add_test(tc, bytes_follow_the_length);
    tcase_add_test(tc, steady_state_memory_is_bounded);
    tcase_add_test(tc, a_short_queue_that_drains_stays_small);
    tcase_add_test(tc, reserve_makes_the_next_push_certain);
    tcase_add_test(tc, bad_arguments_are_rejected);
    suite_add_tcase(su, tc);
    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
