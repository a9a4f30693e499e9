/* bloom-model.c - Bloom filter sizing and false-positive model.
 *
 * Classic layout. The textbook rate after n keys, (1 - e^(-kn/m))^k, is
 * accurate for large m. Sizing starts from the optimum m = -n ln p / ln2^2,
 * k = round(ln2 m/n), then grows m until the rate with that integer k is at
 * most p (rounding k alone can push the rate a little above p).
 *
 * Blocked layout. Every key lands in one of B = 512-bit blocks, and the
 * number of keys per block follows a Poisson law with mean lambda = n /
 * nblocks. Crowded blocks answer "yes" far more often than the average fill
 * suggests, so the classic formula underestimates the rate by a factor that
 * grows as p shrinks. The model is exact for k distinct uniform positions
 * per key inside a block:
 *
 *     FPR(lambda) = sum_j Poisson(j; lambda) F_k(j)
 *
 * where F_k(j) is the chance that a query's k distinct positions are all
 * covered by j keys. F_k is computed with a Markov chain on c, the number of
 * the query's positions covered so far: a new key covers t of the k - c
 * uncovered ones with hypergeometric probability
 *
 *     C(k-c, t) C(B-(k-c), k-t) / C(B, k).
 *
 * Every term is a sum of products of probabilities, with no subtraction, so
 * F_k(j) keeps full relative precision even near 1e-14 (one key, k = 6),
 * where the closed form by inclusion-exclusion would cancel catastrophically.
 * The chain runs until F_k is 1 within rounding (a few thousand steps at
 * most), and the table is what a filter caches for its rate estimates.
 *
 * Sizing tries the probe counts around the classic optimum, finds for each
 * the largest lambda with FPR(lambda) <= p by bisection, and keeps the k
 * that needs the fewest blocks. */
#include <math.h>
#include <stdlib.h>

#include "bloom-internal.h"
#include "sieve/status.h"

#define LN2 0.69314718055994530942

/* The expected rate a plan aims at, as a share of the requested one. */
#define PLAN_MARGIN 0.98

/* Stop the chain once fewer than this fraction of block histories leave a
 * query position uncovered: F_k is then 1 to double precision. */
#define TABLE_DONE 1e-17
/* Hard cap on the table (k = 1 needs about 20,000 steps). Beyond the table
 * F_k is taken as 1, which can only overstate the rate. */
#define TABLE_MAX (1u << 16)

/* Poisson mass beyond this many standard deviations (plus a margin for
 * small lambda) is below 1e-30 and is left out of the sum. */
#define POISSON_SIGMAS 12.0
#define POISSON_MARGIN 30.0

static double log_choose(double n, double r)
{
    return lgamma(n + 1) - lgamma(r + 1) - lgamma(n - r + 1);
}

/* trans[c * (k + 1) + t]: a new key covers t more of the k - c uncovered
 * query positions. */
static void fill_transitions(unsigned k, double *trans)
{
    const double B = BLOOM_BLOCK_BITS;
    double all = log_choose(B, k);
    for (unsigned c = 0; c <= k; c++) {
        unsigned u = k - c;
        for (unsigned t = 0; t <= k; t++) {
            double p = 0;
            if (t <= u)
                p = exp(log_choose(u, t) + log_choose(B - u, k - t) - all);
            trans[c * (k + 1) + t] = p;
        }
    }
}

/* One more key in the block: state[c] is the chance that c query
 * positions are covered. c = k absorbs. Returns the mass still below k. */
static double chain_step(unsigned k, const double *trans, double *state, double *next)
{
    for (unsigned c = 0; c <= k; c++)
        next[c] = 0;
    next[k] = state[k];
    for (unsigned c = 0; c < k; c++) {
        double s = state[c];
        if (s == 0)
            continue;
        const double *row = trans + c * (k + 1);
        for (unsigned t = 0; c + t <= k; t++)
            next[c + t] += s * row[t];
    }
    double open = 0;
    for (unsigned c = 0; c <= k; c++) {
        state[c] = next[c];
        if (c < k)
            open += next[c];
    }
    return open;
}

/* The table up to limit entries: the whole of it unless the chain is
 * still short of TABLE_DONE there. */
static int model_table(unsigned k, size_t limit, double **table, size_t *len)
{
    size_t cap = 1024, n = 0;
    double *trans = malloc(sizeof(double) * (k + 1) * (k + 1));
    double *state = calloc(2 * (size_t)(k + 1), sizeof(double));
    double *f = malloc(sizeof(double) * cap);
    if (trans == NULL || state == NULL || f == NULL)
        goto nomem;
    fill_transitions(k, trans);
    state[0] = 1;
    f[n++] = 0; /* no key, no coverage (k >= 1) */
    while (n < limit) {
        double open = chain_step(k, trans, state, state + k + 1);
        if (n == cap) {
            double *g = realloc(f, sizeof(double) * cap * 2);
            if (g == NULL)
                goto nomem;
            f = g;
            cap *= 2;
        }
        f[n++] = state[k];
        if (open < TABLE_DONE)
            break;
    }
    free(trans);
    free(state);
    *table = f;
    *len = n;
    return SIEVE_OK;
nomem:
    free(trans);
    free(state);
    free(f);
    return SIEVE_ENOMEM;
}

int sieve_bloom_model_table(unsigned k, double **table, size_t *len)
{
    return model_table(k, TABLE_MAX, table, len);
}

/* The largest block load the Poisson sum at lambda reads. */
static double poisson_top(double lambda)
{
    return ceil(lambda + POISSON_SIGMAS * sqrt(lambda) + POISSON_MARGIN);
}

double sieve_bloom_model_blocked(const double *table, size_t len, double lambda)
{
    if (!(lambda > 0))
        return 0;
    double sd = sqrt(lambda);
    double lo = floor(lambda - POISSON_SIGMAS * sd - POISSON_MARGIN);
    double hi = poisson_top(lambda);
    if (lo < 0)
        lo = 0;
    if (lo >= (double)len)
        return 1; /* every likely block load is past saturation */
    size_t jlo = (size_t)lo, jhi = (size_t)hi;
    double pmf = exp(-lambda + lo * log(lambda) - lgamma(lo + 1));
    double sum = 0;
    for (size_t j = jlo; j <= jhi; j++) {
        sum += pmf * (j < len ? table[j] : 1.0);
        pmf *= lambda / (double)(j + 1);
    }
    return sum < 1 ? sum : 1;
}

double sieve_bloom_model_classic(uint64_t m, unsigned k, double n)
{
    if (!(n > 0))
        return 0;
    double x = (double)k * n / (double)m;
    /* 1 - e^-x via expm1 keeps precision when x is tiny. */
    return exp((double)k * log(-expm1(-x)));
}

double sieve_bloom_model_fp_rate(sieve_bloom_layout layout, uint64_t m, unsigned k, double n)
{
    if (m == 0 || k == 0 || k > SIEVE_BLOOM_K_MAX || isnan(n) || n < 0)
        return -1;
    if (layout == SIEVE_BLOOM_CLASSIC)
        return isinf(n) ? 1 : sieve_bloom_model_classic(m, k, n);
    if (layout != SIEVE_BLOOM_BLOCKED)
        return -1;
    if (isinf(n))
        return 1;
    uint64_t nblocks = m / BLOOM_BLOCK_BITS + (m % BLOOM_BLOCK_BITS != 0);
    double *table;
    size_t len;
    if (sieve_bloom_model_table(k, &table, &len) != SIEVE_OK)
        return -1;
    double rate = sieve_bloom_model_blocked(table, len, n / (double)nblocks);
    free(table);
    return rate;
}

static int plan_classic(double n, double p, uint64_t *m_out, unsigned *k_out)
{
    const double max_bits = (double)BLOOM_MAX_BYTES * 8;
    double bits = ceil(-n * log(p) / (LN2 * LN2));
    if (!(bits <= max_bits))
        return SIEVE_EOVERFLOW;
    uint64_t m = bits < 1 ? 1 : (uint64_t)bits;
    double kd = round(LN2 * (double)m / n);
    unsigned k = kd < 1 ? 1 : kd > SIEVE_BLOOM_K_MAX ? SIEVE_BLOOM_K_MAX : (unsigned)kd;
    if (sieve_bloom_model_classic(m, k, n) > p) {
        /* Grow geometrically to a size that meets p, then bisect back to
         * the smallest one: the rate falls monotonically with m. */
        uint64_t lo = m, hi = m, step = m / 1024 + 1;
        do {
            lo = hi;
            if ((double)hi + (double)step > max_bits)
                return SIEVE_EOVERFLOW;
            hi += step;
            step *= 2;
        } while (sieve_bloom_model_classic(hi, k, n) > p);
        while (hi - lo > 1) {
            uint64_t mid = lo + (hi - lo) / 2;
            if (sieve_bloom_model_classic(mid, k, n) > p)
                lo = mid;
            else
                hi = mid;
        }
        m = hi;
    }
    *m_out = m;
    *k_out = k;
    return SIEVE_OK;
}

/* The largest lambda with FPR(lambda) <= p for this table. */
static double max_load(const double *table, size_t len, double p, double guess)
{
    double lo = 0, hi = guess;
    for (int i = 0; i < 64 && sieve_bloom_model_blocked(table, len, hi) <= p; i++) {
        lo = hi;
        hi *= 2;
    }
    for (int i = 0; i < 200 && hi - lo > 1e-13 * hi; i++) {
        double mid = lo + (hi - lo) / 2;
        if (sieve_bloom_model_blocked(table, len, mid) <= p)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Blocks needed at k probes, or 0 if more than the size limit allows;
 * *lambda is the largest load that meets p. */
static uint64_t blocks_for(const double *table, size_t len, double n, double p, double guess,
                           double *lambda_out)
{
    const double max_blocks = (double)(BLOOM_MAX_BYTES / (BLOOM_BLOCK_BITS / 8));
    double lambda = *lambda_out = max_load(table, len, p, guess);
    if (!(lambda > 0) || n / lambda > max_blocks)
        return 0;
    uint64_t nb = (uint64_t)ceil(n / lambda);
    if (nb == 0)
        nb = 1;
    /* Guard the last ulp of the bisection: the plan must meet p exactly. */
    while (sieve_bloom_model_blocked(table, len, n / (double)nb) > p) {
        if ((double)++nb > max_blocks)
            return 0;
    }
    return nb;
}

static int plan_blocked(double n, double p, uint64_t *m_out, unsigned *k_out)
{
    double bpk = -log(p) / (LN2 * LN2);
    long kopt = lround(LN2 * bpk);
    long klo = kopt - 3, khi = kopt + 6;
    if (klo < 1)
        klo = 1;
    if (klo > SIEVE_BLOOM_K_MAX)
        klo = SIEVE_BLOOM_K_MAX;
    if (khi > SIEVE_BLOOM_K_MAX)
        khi = SIEVE_BLOOM_K_MAX;
    if (khi < klo)
        khi = klo;
    /* A whole table runs to thousands of block loads, but a plan reads
     * only those around its answer: a table cut off past twice the guessed
     * load serves, unless the answer reads beyond it. Past its end a table
     * reads as 1, which only raises the rate, so the search meets the same
     * answer whenever that answer's sum ends inside it. */
    double guess = BLOOM_BLOCK_BITS / bpk;
    size_t limit = (size_t)poisson_top(2 * guess) + 1;
    uint64_t best_nb = 0;
    unsigned best_k = 0;
    for (long k = klo; k <= khi; k++) {
        double *table, lambda;
        size_t len;
        if (model_table((unsigned)k, limit, &table, &len) != SIEVE_OK)
            return SIEVE_ENOMEM;
        uint64_t nb = blocks_for(table, len, n, p, guess, &lambda);
        if (len == limit && !(poisson_top(lambda) < (double)len)) {
            free(table);
            if (sieve_bloom_model_table((unsigned)k, &table, &len) != SIEVE_OK)
                return SIEVE_ENOMEM;
            nb = blocks_for(table, len, n, p, guess, &lambda);
        }
        free(table);
        if (nb != 0 && (best_nb == 0 || nb < best_nb)) {
            best_nb = nb;
            best_k = (unsigned)k;
        }
    }
    if (best_nb == 0)
        return SIEVE_EOVERFLOW;
    *m_out = best_nb * BLOOM_BLOCK_BITS;
    *k_out = best_k;
    return SIEVE_OK;
}

int sieve_bloom_plan(uint64_t capacity, double fp_rate, sieve_bloom_layout layout, uint64_t *m,
                     unsigned *k)
{
    if (m == NULL || k == NULL || capacity == 0 || !(fp_rate > 0 && fp_rate < 1))
        return SIEVE_EINVAL;
    /* A filter planned for exactly p measures above p about half the time.
     * Planning for a rate PLAN_MARGIN under p keeps the measured rate at
     * or below p (at p = 1e-4 and 1e8 queries the margin is two standard
     * deviations of the measurement) for about 0.3% more bits. */
    double target = fp_rate * PLAN_MARGIN;
    if (layout == SIEVE_BLOOM_CLASSIC)
        return plan_classic((double)capacity, target, m, k);
    if (layout == SIEVE_BLOOM_BLOCKED)
        return plan_blocked((double)capacity, target, m, k);
    return SIEVE_EINVAL;
}
