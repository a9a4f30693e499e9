/* urlgen.c - the benchmark's URL stream.
 *
 * Synthetic URLs must look like a crawl's (many hosts, a few of them very
 * popular, paths of words and numbers, some query strings, 30 to 150 bytes)
 * and must be distinct by construction: then the exact frontier enqueues
 * every URL, and every URL the Bloom frontier refuses is a false positive,
 * with no accidental duplicate blurring the count.
 *
 * Distinctness. URL number i of stream s carries the token t = mix(s*2^40 + i),
 * where mix is a bijection of 41-bit integers keyed by the seed (xor with
 * the key, then multiplications by odd constants and xor-shifts, each one
 * invertible modulo 2^41). t is written in base 36 right after the last '-'
 * of the URL, and nothing after it (an extension, a query of words and
 * numbers) contains a '-'. So t can be read back from the URL, and different
 * (s, i) give different URLs.
 *
 * Everything else is drawn from a small generator seeded with t, so a URL
 * costs no table lookups beyond a word list. Hosts follow a Zipf-like law
 * over H ranks (100,000 for the seen-set benchmark, 10,000 for the whole
 * frontier's): rank = floor((H+1)^u) - 1 for u uniform in [0, 1), so
 * P(rank < r) = ln(r+1)/ln(H+1): with H = 100,000 the top host gets 6% of
 * URLs and the top thousand 60% (7.5% and 75% with H = 10,000), as in a
 * crawl where a few big sites dominate. A host's name is a function of its
 * rank and the seed, drawn from a space of tens of millions of names, so
 * two ranks share a name now and then (a handful of 10,000).
 *
 * Files. One URL a line, read with a fixed buffer: a line longer than
 * URLGEN_LINE_MAX is an error rather than an unbounded allocation. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "urlgen.h"

#define TOKEN_BITS 41
#define TOKEN_MASK ((UINT64_C(1) << TOKEN_BITS) - 1)

/* Each word fits 8 bytes, zero-padded, so copying one is a single load and
 * store (see put_word()). */
static const char words[][8] = {
    "news",     "blog",     "about",   "contact", "products", "shop",     "cart",     "search",
    "article",  "story",    "world",   "sports",  "tech",     "science",  "health",   "travel",
    "food",     "music",    "video",   "photos",  "events",   "jobs",     "careers",  "help",
    "support",  "docs",     "api",     "guide",   "tutorial", "review",   "forum",    "thread",
    "user",     "profile",  "account", "login",   "category", "tag",      "archive",  "page",
    "index",    "home",     "city",    "local",   "weather",  "market",   "finance",  "business",
    "politics", "culture",  "books",   "movies",  "games",    "kids",     "family",   "garden",
    "design",   "art",      "fashion", "style",   "beauty",   "auto",     "cars",     "bikes",
    "sale",     "deals",    "offers",  "gift",    "store",    "brand",    "team",     "people",
    "press",    "media",    "report",  "data",    "research", "study",    "school",   "course",
    "lesson",   "class",    "library", "museum",  "park",     "hotel",    "flight",   "rental",
    "house",    "kitchen",  "recipe",  "dinner",  "coffee",   "tea",      "wine",     "beer",
    "river",    "mountain", "lake",    "ocean",   "forest",   "desert",   "island",   "valley",
    "green",    "blue",     "red",     "black",   "white",    "silver",   "golden",   "bright",
    "north",    "south",    "east",    "west",    "central",  "metro",    "urban",    "rural",
    "open",     "free",     "smart",   "quick",   "simple",   "daily",    "weekly",   "annual",
    "alpha",    "beta",     "delta",   "omega",   "nova",     "stellar",  "cosmic",   "pixel",
    "cloud",    "info",     "code",    "dev",     "labs",     "works",    "hub",      "zone",
    "line",     "point",    "net",     "web",     "online",   "digital",  "mobile",   "social",
    "energy",   "power",    "solar",   "water",   "earth",    "climate",  "nature",   "animal",
    "dog",      "cat",      "horse",   "bird",    "fish",     "tiger",    "eagle",    "wolf",
    "apple",    "orange",   "lemon",   "cherry",  "berry",    "olive",    "pepper",   "salt",
    "paper",    "stone",    "iron",    "steel",   "glass",    "wood",     "cotton",   "silk",
    "king",     "queen",    "prince",  "knight",  "castle",   "tower",    "bridge",   "harbor",
    "star",     "moon",     "sun",     "planet",  "rocket",   "galaxy",   "orbit",    "comet",
    "medical",  "doctor",   "clinic",  "care",    "fitness",  "yoga",     "running",  "soccer",
    "tennis",   "golf",     "chess",   "poker",   "puzzle",   "quiz",     "trivia",   "comics",
    "anime",    "manga",    "novel",   "poetry",  "history",  "ancient",  "modern",   "future",
    "english",  "french",   "german",  "spanish", "italian",  "chinese",  "japanese", "korean",
    "view",     "edit",     "print",   "share",   "download", "upload",   "stream",   "watch",
    "listen",   "read",     "write",   "learn",   "teach",    "build",    "make",     "grow",
    "best",     "top",      "new",     "latest",  "popular",  "featured", "trending", "classic",
};
#define NWORDS (sizeof words / sizeof words[0])

static const char *const prefixes[] = {"www.",  "www.",  "www.",  "",   "",    "",
                                       "blog.", "shop.", "news.", "m.", "en.", "forum."};
#define NPREFIXES (sizeof prefixes / sizeof prefixes[0])

static const char *const tlds[] = {"com", "com", "com",   "com", "com", "com",   "org", "org",
                                   "net", "de",  "co.uk", "fr",  "io",  "info",  "edu", "jp",
                                   "ru",  "nl",  "it",    "es",  "ca",  "com.au"};
#define NTLDS (sizeof tlds / sizeof tlds[0])

static const char base36[] = "0123456789abcdefghijklmnopqrstuvwxyz";

/* splitmix64: a fast generator whose output is a strong mix of its state. */
static uint64_t next_u64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static uint64_t hash_u64(uint64_t x)
{
    return next_u64(&x);
}

/* A bijection of [0, 2^41): every step is invertible modulo 2^41. */
static uint64_t token_mix(uint64_t x, uint64_t key)
{
    x = (x ^ key) & TOKEN_MASK;
    x = (x * UINT64_C(0x9e3779b97f4a7c15)) & TOKEN_MASK;
    x ^= x >> 21;
    x = (x * UINT64_C(0xbf58476d1ce4e5b9)) & TOKEN_MASK;
    x ^= x >> 19;
    x = (x * UINT64_C(0x94d049bb133111eb)) & TOKEN_MASK;
    x ^= x >> 22;
    return x;
}

static char *put(char *p, const char *s)
{
    while (*s != '\0')
        *p++ = *s++;
    return p;
}

static char *put_dec(char *p, uint64_t v)
{
    char tmp[20];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    while (n > 0)
        *p++ = tmp[--n];
    return p;
}

static char *put_b36(char *p, uint64_t v)
{
    char tmp[16];
    int n = 0;
    do {
        tmp[n++] = base36[v % 36];
        v /= 36;
    } while (v != 0);
    while (n > 0)
        *p++ = tmp[--n];
    return p;
}

/* Appends word r mod NWORDS: copies all 8 bytes (the buffer has room to
 * spare) and advances by the word's length, found from its first zero byte. */
static char *put_word(char *p, uint64_t r)
{
    uint64_t v;
    memcpy(&v, words[r % NWORDS], 8);
    memcpy(p, &v, 8);
    uint64_t zero = (v - UINT64_C(0x0101010101010101)) & ~v & UINT64_C(0x8080808080808080);
    return p + (zero == 0 ? 8 : __builtin_ctzll(zero) / 8);
}

/* Host rank: Zipf-like, see the file comment. */
static uint64_t host_rank(uint64_t *rng, uint64_t hosts)
{
    double u = (double)(next_u64(rng) >> 11) * 0x1p-53;
    double r = exp(u * log((double)hosts + 1.0)) - 1.0;
    uint64_t rank = (uint64_t)r;
    return rank < hosts ? rank : hosts - 1;
}

static char *put_host(char *p, uint64_t rank, uint64_t seed, urlgen_stream stream)
{
    uint64_t h = hash_u64(rank ^ hash_u64(seed));
    p = put(p, prefixes[h % NPREFIXES]);
    p = put_word(p, h >> 8);
    if ((h >> 20) % 4 == 0)
        p = put_dec(p, (h >> 24) % 1000);
    else
        p = put_word(p, h >> 32);
    *p++ = '.';
    return put(p, stream == URLGEN_ABSENT ? "invalid" : tlds[(h >> 48) % NTLDS]);
}

/* A path segment other than the last: never contains '-'. */
static char *put_segment(char *p, uint64_t *rng)
{
    uint64_t r = next_u64(rng);
    unsigned kind = (unsigned)(r % 100);
    if (kind < 45)
        return put_word(p, r >> 8);
    if (kind < 60) {
        p = put_word(p, r >> 8);
        *p++ = '_';
        return put_word(p, r >> 24);
    }
    if (kind < 75)
        return put_dec(p, 1995 + (r >> 8) % 30);
    if (kind < 88)
        return put_dec(p, (r >> 8) % 100000);
    p = put_word(p, r >> 8);
    return put_dec(p, 1 + (r >> 24) % 99);
}

static char *put_query(char *p, uint64_t *rng)
{
    uint64_t r = next_u64(rng);
    unsigned pairs = 1 + (unsigned)(r % 3);
    for (unsigned i = 0; i < pairs; i++) {
        uint64_t q = next_u64(rng);
        *p++ = i == 0 ? '?' : '&';
        p = put_word(p, q);
        *p++ = '=';
        if ((q >> 16) % 2 == 0)
            p = put_dec(p, (q >> 20) % 10000);
        else
            p = put_word(p, q >> 40);
    }
    return p;
}

size_t urlgen_synthetic(uint64_t seed, uint64_t hosts, urlgen_stream stream, uint64_t index,
                        char *buf)
{
    uint64_t token = token_mix((uint64_t)stream << 40 | (index & (URLGEN_INDEX_LIMIT - 1)),
                               hash_u64(seed ^ UINT64_C(0x7f4a7c15)));
    uint64_t rng = token ^ seed;
    uint64_t r = next_u64(&rng);
    char *p = put(buf, r % 10 == 0 ? "http://" : "https://");
    p = put_host(p, host_rank(&rng, hosts), seed, stream);

    /* 1 to 6 segments, 2 or 3 most often; the last carries the token. */
    static const unsigned depth_cut[] = {12, 37, 62, 80, 92};
    unsigned d = (unsigned)((r >> 8) % 100), segments = 1;
    while (segments < 6 && d >= depth_cut[segments - 1])
        segments++;
    for (unsigned i = 1; i < segments; i++) {
        *p++ = '/';
        p = put_segment(p, &rng);
    }
    *p++ = '/';
    p = put_word(p, r >> 16);
    *p++ = '-';
    p = put_b36(p, token);

    unsigned ext = (unsigned)((r >> 32) % 100);
    if (ext < 35)
        p = put(p, ".html");
    else if (ext < 42)
        p = put(p, ".php");
    if ((r >> 48) % 100 < 22)
        p = put_query(p, &rng);
    return (size_t)(p - buf);
}

int urlgen_batch_init(urlgen_batch *b, size_t slot)
{
    memset(b, 0, sizeof *b);
    b->arena = malloc(slot * URLGEN_BATCH);
    if (b->arena == NULL)
        return -1;
    memset(b->arena, 0, slot * URLGEN_BATCH);
    b->slot = slot;
    return 0;
}

void urlgen_batch_free(urlgen_batch *b)
{
    free(b->arena);
    b->arena = NULL;
}

struct urlgen {
    FILE *file; /* NULL for a synthetic stream */
    uint64_t seed;
    uint64_t hosts;
    urlgen_stream stream;
    uint64_t next;                  /* synthetic: next index; file: lines read */
    char line[URLGEN_LINE_MAX + 3]; /* the line, "\r\n" and the NUL */
};

/* Reads the next non-empty line into g->line without its line end. Returns
 * its length, 0 at the end of the file, -1 on a read error (errno says
 * why) or a line longer than URLGEN_LINE_MAX (errno EMSGSIZE). */
static long read_line(urlgen *g)
{
    for (;;) {
        errno = 0;
        if (fgets(g->line, sizeof g->line, g->file) == NULL) {
            if (ferror(g->file)) {
                if (errno == 0) /* keep the cause (EISDIR, ...) when there is one */
                    errno = EIO;
                return -1;
            }
            return 0;
        }
        g->next++;
        size_t len = strlen(g->line);
        bool complete = len > 0 && g->line[len - 1] == '\n';
        if (complete)
            len--;
        if (len > 0 && g->line[len - 1] == '\r')
            len--;
        if (len > URLGEN_LINE_MAX || (!complete && !feof(g->file))) {
            errno = EMSGSIZE;
            return -1;
        }
        if (len > 0)
            return (long)len;
    }
}

int urlgen_scan_file(const char *path, urlgen_file_info *info, char *err, size_t errlen)
{
    urlgen *g;
    if (urlgen_open_file(&g, path) != 0) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    memset(info, 0, sizeof *info);
    long len;
    while ((len = read_line(g)) > 0) {
        info->count++;
        info->bytes += (uint64_t)len;
    }
    int rc = 0;
    if (len < 0) {
        if (errno == EMSGSIZE)
            snprintf(err, errlen, "%s:%llu: line longer than %d bytes", path,
                     (unsigned long long)g->next, URLGEN_LINE_MAX);
        else
            snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        rc = -1;
    }
    urlgen_close(g);
    return rc;
}

int urlgen_open_synthetic(urlgen **out, uint64_t seed, uint64_t hosts, urlgen_stream stream)
{
    urlgen *g = calloc(1, sizeof *g);
    if (g == NULL)
        return -1;
    g->seed = seed;
    g->hosts = hosts;
    g->stream = stream;
    *out = g;
    return 0;
}

int urlgen_open_file(urlgen **out, const char *path)
{
    urlgen *g = calloc(1, sizeof *g);
    if (g == NULL)
        return -1;
    g->file = fopen(path, "r");
    if (g->file == NULL) {
        int saved = errno;
        free(g);
        errno = saved;
        return -1;
    }
    *out = g;
    return 0;
}

void urlgen_close(urlgen *g)
{
    if (g == NULL)
        return;
    if (g->file != NULL)
        fclose(g->file);
    free(g);
}

long urlgen_next(urlgen *g, urlgen_batch *b, size_t n)
{
    if (n > URLGEN_BATCH)
        n = URLGEN_BATCH;
    for (size_t i = 0; i < n; i++) {
        char *slot = b->arena + i * b->slot;
        size_t len;
        if (g->file == NULL) {
            len = urlgen_synthetic(g->seed, g->hosts, g->stream, g->next++, slot);
        } else {
            long got = read_line(g);
            if (got < 0)
                return -1;
            if (got == 0)
                return (long)i;
            if ((size_t)got > b->slot) {
                errno = EMSGSIZE;
                return -1;
            }
            len = (size_t)got;
            memcpy(slot, g->line, len);
        }
        b->urls[i] = (sieve_url){.url = slot, .len = len, .depth = 1};
    }
    return (long)n;
}
