/* fuzz-url.c - libFuzzer target: arbitrary bytes as a reference resolved
 * against a fixed base, with every option switched on.
 *
 * Besides memory errors it checks the canonicalizer's own promise: a
 * result is no longer than max_len, and canonicalizing a canonical URL
 * gives it back unchanged. */
#include <locale.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sieve/sieve.h"

static sieve_canon *canon;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    static const char *const strip[] = {"utm_*", "sessionid", "*ref*"};
    setlocale(LC_CTYPE, "C.UTF-8");
    sieve_canon_config cfg;
    sieve_canon_config_init(&cfg);
    cfg.strip_params = strip;
    cfg.n_strip_params = 3;
    cfg.sort_query = true;
    if (sieve_canon_new(&canon, &cfg) != SIEVE_OK)
        abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char out[SIEVE_CANON_MAX_LEN + 1], again[SIEVE_CANON_MAX_LEN + 1];
    sieve_canon_info info, info2;
    int st = sieve_canon_url(canon, "http://a.example/b/c/d;p?q=1", (const char *)data, size, out,
                             sizeof out, &info);
    if (st != SIEVE_OK)
        return 0;
    if (info.len > SIEVE_CANON_MAX_LEN || strlen(out) != info.len ||
        info.host_off + info.host_len > info.len)
        abort();
    st = sieve_canon_url(canon, NULL, out, info.len, again, sizeof again, &info2);
    if (st != SIEVE_OK || strcmp(out, again) != 0)
        abort();
    return 0;
}
