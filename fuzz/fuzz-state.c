/* fuzz-state.c - libFuzzer target: a durable frontier reopened on a
 * journal whose last records are the input's.
 *
 * A state directory is made by a clean open and free, as a crawl leaves
 * it; then records made from the input are appended to its last journal
 * segment with valid framing and checksums (so that the fuzzer's bytes
 * reach the replay and the URL decoding behind the checksums rather than
 * stopping at them), the last one cut short when the first byte says so,
 * as a crash leaves it. The frontier is opened again, which replays the
 * records, cuts a torn tail or refuses the state; every URL it then hands
 * out is reported done, and the frontier is freed, which takes a
 * checkpoint. The checks: no crash, no leak, no hang. The directory lives
 * in /dev/shm where there is one, so that the syncs are cheap.
 *
 * The input: a flags byte (the cut, the seen-set's kind), then records,
 * each a type byte, a length byte and that many payload bytes. */
#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "journal.h"
#include "scratch.h"
#include "sieve/frontier.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char base[64], state[96], journal_dir[128];

static void remove_base(void)
{
    scratch_remove(base, 2);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    scratch_dir(base, sizeof base, "fuzz-state");
    snprintf(state, sizeof state, "%s/s", base);
    snprintf(journal_dir, sizeof journal_dir, "%s/journal", state);
    atexit(remove_base);
    return 0;
}

/* Opens the state: with the exact seen-set, which replays the whole
 * journal, or (bloom) with the Bloom filter, whose checkpoints cut the
 * replay short; its sizing model dominates a run, so it is the rarer. */
static sieve_frontier *open_state(bool bloom)
{
    sieve_frontier_config cfg;
    sieve_frontier_config_init(&cfg);
    cfg.seen.kind = bloom ? SIEVE_SEEN_BLOOM : SIEVE_SEEN_EXACT;
    cfg.seen.capacity = 1000; /* a small seen-set: a checkpoint writes it whole */
    cfg.politeness.delay_s = 0;
    sieve_frontier *f = NULL;
    return sieve_frontier_open(&f, state, &cfg) == SIEVE_OK ? f : NULL;
}

/* The path of the journal's last segment, into path. */
static void last_segment(char *path, size_t cap)
{
    DIR *d = opendir(journal_dir);
    if (d == NULL)
        abort();
    char best[64] = "";
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strlen(e->d_name) == 12 && strcmp(e->d_name, best) > 0)
            snprintf(best, sizeof best, "%s", e->d_name);
    closedir(d);
    if (best[0] == '\0')
        abort();
    snprintf(path, cap, "%s/%s", journal_dir, best);
}

/* Appends the input's records to the last segment. */
static void append_records(const uint8_t *data, size_t size)
{
    char path[256];
    last_segment(path, sizeof path);
    int fd = open(path, O_WRONLY | O_APPEND);
    if (fd < 0)
        abort();
    unsigned char rec[JOURNAL_RECORD_SIZE(255)];
    size_t at = 1, last = 0;
    while (at + 2 <= size) {
        uint8_t type = data[at];
        size_t len = data[at + 1];
        at += 2;
        if (len > size - at)
            len = size - at;
        last = journal_encode(rec, type, data + at, len, NULL, 0);
        at += len;
        if (write(fd, rec, last) != (ssize_t)last)
            abort();
    }
    unsigned cut = data[0] & 7; /* a torn last record */
    struct stat st;
    if (cut > 0 && last > 0 && fstat(fd, &st) == 0)
        (void)ftruncate(fd, st.st_size - (off_t)(cut < last ? cut : last - 1));
    close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    bool bloom = (data[0] & 0x18) == 0x18;
    scratch_remove(state, 1);
    sieve_frontier *f = open_state(bloom);
    if (f == NULL)
        abort(); /* a fresh state must open */
    sieve_frontier_push(f, "http://127.0.0.1/seed", 21, 0);
    sieve_frontier_free(f);
    append_records(data, size);
    f = open_state(bloom);
    if (f == NULL)
        return 0; /* refused: what the damage asks for */
    char buf[SIEVE_URL_DATA_MAX + 8192];
    sieve_url u;
    for (int i = 0; i < 10000 && sieve_frontier_try_pop(f, buf, sizeof buf, &u, NULL) == SIEVE_OK;
         i++)
        sieve_frontier_done(f, &u);
    sieve_frontier_free(f);
    return 0;
}
