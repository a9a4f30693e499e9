/* state-fixture.h - what the tests of a frontier on a state directory
 * share: a fresh directory for each test (setup() and teardown(), a
 * checked fixture: a test that fails leaves nothing behind), a logger that
 * keeps the frontier's last warning for a failed open to show, and the
 * configuration both start from. Static: each test program has its own. */
#ifndef SIEVE_TEST_STATE_FIXTURE_H
#define SIEVE_TEST_STATE_FIXTURE_H

#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sieve/frontier.h"

static char dir[64];
static char logged[1024];

static void keep_log(void *ctx, sieve_log_level level, const char *msg)
{
    (void)ctx, (void)level;
    snprintf(logged, sizeof logged, "%s", msg);
}

static void setup(void)
{
    strcpy(dir, "/tmp/sieve-state-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    logged[0] = '\0';
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* Per-host scheduling (or none) without limits, a seen set for 100,000
 * URLs, warnings into logged. */
static inline sieve_frontier_config state_config(bool per_host)
{
    sieve_frontier_config cfg;
    sieve_frontier_config_init(&cfg);
    cfg.seen.capacity = 100000;
    cfg.politeness =
        (sieve_politeness){.enabled = per_host, .max_conns = 1000, .delay_s = 0, .max_delay_s = 30};
    cfg.logger = (sieve_logger){.fn = keep_log, .level = SIEVE_LOG_WARN};
    return cfg;
}

#endif
