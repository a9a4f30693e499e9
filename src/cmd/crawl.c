/* crawl.c - `sieve crawl`: a client of the crawl engine (sieve/crawl.h).
 *
 * The command parses its options into sieve_crawl_options, reads the
 * seeds, turns each record into a JSON line, runs the crawl with a thread
 * that takes the signals and draws the status line, and ends with a
 * summary and an exit status:
 *
 *   0    the crawl ran to its end (or to --max-pages); pages that failed
 *        are counted, they are not fatal
 *   1    the crawl could not start or run (out of memory, libcurl)
 *   2    bad arguments, or no valid seed
 *   3    no seed could be fetched: every seed's record has an error
 *   4    an output could not be written (the records, the statistics or the
 *        cookie jar), or the --state directory is locked, damaged, made with
 *        other settings, or cannot be written (a full disk)
 *   128 + N  stopped by signal N (SIGINT, SIGTERM)
 *
 * An output error outranks a signal, which outranks the rest: a crawl
 * whose records were lost must never look like a success. */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive.h"
#include "commands.h"
#include "crawl-options.h"
#include "progress.h"
#include "record.h"
#include "seeds.h"
#include "sieve/crawl.h"
#include "sieve/status.h"

typedef struct crawl_run {
    sieve_crawler *crawler;
    record_writer *records;
    record_writer *stats;
    atomic_bool output_failed;   /* an output broke; the crawl was stopped */
    atomic_ullong seed_records;  /* records of seeds (depth 0 pages) */
    atomic_ullong seeds_fetched; /* of those, without an error */
    bool durable;                /* --state: the frontier resumes */

    /* --warc: the archive, written through the wire callbacks */
    archive *warc;
    sieve_warc_stats warc_cost; /* read as the archive closes */
    int argc;                   /* the command line, for the archive's warcinfo record */
    char **argv;
} crawl_run;

static void log_line(void *ctx, sieve_log_level level, const char *msg)
{
    (void)ctx;
    progress_say("sieve crawl: %s%s", level == SIEVE_LOG_WARN ? "warning: " : "", msg);
}

/* Tells once which output broke (path NULL: standard output); returns
 * true the first time. The crawl is stopped by the caller. */
static bool note_output_failure(crawl_run *r, const char *path, int e)
{
    if (atomic_exchange(&r->output_failed, true))
        return false;
    progress_say("sieve crawl: %s: write error: %s", path ? path : "standard output", strerror(e));
    return true;
}

/* From the progress thread: a flush or a reopen failed. */
static void output_failed(void *ctx, record_writer *w)
{
    crawl_run *r = ctx;
    if (note_output_failure(r, record_writer_path(w), errno))
        sieve_crawler_stop(r->crawler);
}

static int on_record(void *ud, const sieve_crawl_record *rec)
{
    crawl_run *r = ud;
    if (rec->depth == 0 && rec->kind == SIEVE_FETCH_PAGE) {
        atomic_fetch_add(&r->seed_records, 1);
        if (rec->error == NULL)
            atomic_fetch_add(&r->seeds_fetched, 1);
    }
    record_where where = {0};
    archive_place at;
    if (r->warc != NULL && rec->transfer != NULL) {
        archive_take(r->warc, rec->transfer, &at);
        where = (record_where){.warc_file = at.name, .warc_offset = at.offset, .digest = at.digest};
    }
    if (record_write(r->records, rec, &where) != 0) {
        note_output_failure(r, record_writer_path(r->records), errno);
        return SIEVE_EIO; /* stops the crawl */
    }
    return SIEVE_OK;
}

/* A checkpoint of the state: the outputs reach the disk first. */
static int on_sync(void *ud)
{
    crawl_run *r = ud;
    record_writer *w[2] = {r->records, r->stats};
    for (int i = 0; i < 2; i++) {
        if (w[i] != NULL && record_writer_sync(w[i]) != 0) {
            note_output_failure(r, record_writer_path(w[i]), errno);
            return SIEVE_EIO;
        }
    }
    if (r->warc != NULL && archive_sync(r->warc) != SIEVE_OK) {
        note_output_failure(r, "the WARC archive", errno);
        return SIEVE_EIO;
    }
    return SIEVE_OK;
}

static int add_seed(void *ctx, const char *url, size_t len)
{
    crawl_run *r = ctx;
    int rc = sieve_crawler_add_seed(r->crawler, url, len);
    /* resuming: the seeds are in the state already, and that is fine */
    return rc == SIEVE_SEEN && r->durable ? SIEVE_OK : rc;
}

/* The status line is left out when the records go to the terminal it
 * would be drawn on: the two would mix. */
static bool want_status_line(const crawl_cli *o)
{
    if (o->quiet || !isatty(STDERR_FILENO))
        return false;
    if (o->output != NULL || !isatty(STDOUT_FILENO))
        return true;
    struct stat out, err;
    if (fstat(STDOUT_FILENO, &out) != 0 || fstat(STDERR_FILENO, &err) != 0)
        return false;
    return out.st_rdev != err.st_rdev;
}

/* The seen-set's estimated count for the summary, or "full" once every
 * bit of a Bloom filter is set and the estimate is infinite. */
static const char *seen_count(double est, char *buf, size_t cap)
{
    if (isinf(est))
        return "full (every bit set)";
    snprintf(buf, cap, "~%.0f URLs", est);
    return buf;
}

static void summary(const sieve_crawl_stats *st, double secs, const char *how)
{
    char count[32];
    fprintf(stderr,
            "sieve: %s after %.1f s: %llu pages (%.0f/s), %llu errors, %.1f MB, "
            "%llu links (%llu new)\n",
            how, secs, (unsigned long long)st->fetched, secs > 0 ? (double)st->fetched / secs : 0.0,
            (unsigned long long)st->errors, (double)st->bytes / 1e6, (unsigned long long)st->links,
            (unsigned long long)st->links_new);
    const sieve_frontier_stats *f = &st->frontier;
    fprintf(stderr,
            "sieve: frontier: %llu URLs queued, %llu left (%llu of them on disk), %llu "
            "recovered; seen-set %s in %llu bytes, estimated false-positive rate %.2g\n",
            (unsigned long long)f->enqueued, (unsigned long long)f->queue_len,
            (unsigned long long)f->spilled, (unsigned long long)f->recovered,
            seen_count(f->est_count, count, sizeof count), (unsigned long long)f->seen_bytes,
            f->est_fp_rate);
    fprintf(stderr, "sieve: robots.txt: %llu fetched, %llu URLs not fetched because of it\n",
            (unsigned long long)st->robots_fetched, (unsigned long long)st->robots_denied);
    fprintf(stderr,
            "sieve: sitemaps: %llu queued, %llu left out; %llu page entries, %llu not a "
            "crawlable URL\n",
            (unsigned long long)st->sitemaps, (unsigned long long)st->sitemaps_left_out,
            (unsigned long long)st->sitemap_pages, (unsigned long long)st->sitemap_bad);
    fprintf(stderr,
            "sieve: links left out: off site %llu, denied %llu, not allowed %llu, too deep %llu, "
            "host quota full %llu, rejected %llu, filtered %llu, nofollow %llu, not http %llu, "
            "trap %llu, malformed %llu\n",
            (unsigned long long)st->off_site, (unsigned long long)st->denied,
            (unsigned long long)st->not_allowed, (unsigned long long)st->too_deep,
            (unsigned long long)st->host_full, (unsigned long long)st->rejected,
            (unsigned long long)st->filtered, (unsigned long long)st->nofollow,
            (unsigned long long)st->not_http, (unsigned long long)st->trap,
            (unsigned long long)st->malformed);
    fprintf(stderr,
            "sieve: transfers: %u workers x %u at most, %llu retried, %llu aborted, "
            "%llu in flight\n",
            st->workers, st->concurrency, (unsigned long long)st->retries,
            (unsigned long long)st->aborted, (unsigned long long)st->in_flight);
    /* every kind a record can end in, those that happened */
    fprintf(stderr, "sieve: outcomes:");
    const char *sep = " ";
    for (int i = 0; i < SIEVE_OUTCOMES; i++) {
        if (st->outcomes[i] == 0)
            continue;
        fprintf(stderr, "%s%s %llu", sep, sieve_crawl_outcome_name((sieve_crawl_outcome)i),
                (unsigned long long)st->outcomes[i]);
        sep = ", ";
    }
    fprintf(stderr, "%s\n", sep[0] == ' ' ? " none" : "");
}

/* With --state the records of the earlier runs are kept: the output is
 * appended to, after cutting a line a kill left half written, and each
 * line is in the kernel before its URL is reported done. */
static int open_outputs(crawl_run *r, const crawl_cli *o)
{
    bool durable = o->eng.state_dir != NULL;
    long cut = 0;
    if (durable && o->output != NULL && record_file_cut_torn(o->output, &cut) != 0) {
        fprintf(stderr, "sieve crawl: --output: %s: %s\n", o->output, strerror(errno));
        return EXIT_OUTPUT;
    }
    if (cut > 0)
        fprintf(stderr, "sieve crawl: --output: %s: cut a torn last line (%ld bytes)\n", o->output,
                cut);
    if (record_writer_open(&r->records, o->output, durable) != 0) {
        fprintf(stderr, "sieve crawl: --output: %s: %s\n", o->output, strerror(errno));
        return EXIT_OUTPUT;
    }
    if (durable)
        record_writer_line_by_line(r->records);
    if (o->stats && record_writer_open(&r->stats, o->stats_path, true) != 0) {
        fprintf(stderr, "sieve crawl: --stats: %s: %s\n", o->stats_path, strerror(errno));
        return EXIT_OUTPUT;
    }
    return EXIT_OK;
}

/* Closes the outputs, the final statistics written first; false if one
 * of them lost data (told on stderr). */
static bool close_outputs(crawl_run *r, const sieve_crawl_stats *st, double secs)
{
    record_writer *w[2] = {r->stats, r->records};
    r->stats = r->records = NULL;
    for (int i = 0; i < 2; i++) {
        if (w[i] == NULL)
            continue;
        const char *path = record_writer_path(w[i]);
        int rc = i == 0 ? record_write_stats(w[i], st, secs) : 0;
        if (record_writer_close(w[i]) != 0 || rc != 0)
            note_output_failure(r, path, errno);
    }
    return !atomic_load(&r->output_failed);
}

/* ---- --warc: the wire callbacks feed the archive ---- */

/* What compressing a .gz archive cost: its threads' CPU, the workers'
 * waits for room in its queue, and the records held back for it (the
 * memory the deferral takes). */
static void archive_summary(const sieve_warc_stats *s, const sieve_crawl_stats *st)
{
    fprintf(stderr,
            "sieve: archive: its compression threads took %.2f CPU s; the workers waited %llu "
            "times (%.2f s) for room in their queue and held up to %llu records for them\n",
            (double)s->compress_cpu_us / 1e6, (unsigned long long)s->queue_full_waits,
            (double)s->queue_full_us / 1e6, (unsigned long long)st->held_max);
}

/* An archive that cannot be written is an output lost: the crawl stops
 * (the archive told the logger why). */
static int archive_failed(crawl_run *r, int rc)
{
    if (rc != SIEVE_OK && !atomic_exchange(&r->output_failed, true))
        sieve_crawler_stop(r->crawler);
    return rc;
}

static int on_request(void *ud, sieve_crawl_transfer *t, const char *data, size_t len)
{
    crawl_run *r = ud;
    return archive_failed(r, archive_request(r->warc, t, data, len));
}

static int on_response_head(void *ud, sieve_crawl_transfer *t, const char *line, size_t len)
{
    crawl_run *r = ud;
    return archive_failed(r, archive_response_head(r->warc, t, line, len));
}

static int on_response_body(void *ud, sieve_crawl_transfer *t, const char *data, size_t len)
{
    crawl_run *r = ud;
    return archive_failed(r, archive_response_body(r->warc, t, data, len));
}

static void on_transfer_end(void *ud, sieve_crawl_transfer *t)
{
    crawl_run *r = ud;
    archive_failed(r, archive_transfer_end(r->warc, t));
}

static void on_wait(void *ud, unsigned worker)
{
    crawl_run *r = ud;
    archive_wait(r->warc, worker);
}

/* The archive as the options name it. */
static archive_config archive_settings(const crawl_run *r, const crawl_cli *o)
{
    return (archive_config){
        .path = o->warc,
        .max_bytes = o->warc_max_size,
        .gzip_level = o->warc_gzip_level,
        .resume = r->durable,
        .logger = o->eng.logger,
    };
}

/* Opens the archive, its warcinfo record naming the command line. */
static int open_archive(crawl_run *r, const crawl_cli *o)
{
    char command[4096] = "command: sieve";
    size_t n = strlen(command);
    for (int i = 0; i < r->argc && n + 1 < sizeof command; i++)
        n += (size_t)snprintf(command + n, sizeof command - n, " %s", r->argv[i]);
    for (char *c = command; *c; c++)
        if (*c == '\r' || *c == '\n')
            *c = ' '; /* a field is one line */
    char agent[1024];
    snprintf(agent, sizeof agent, "http-header-user-agent: %s", o->eng.user_agent);
    const char *info[] = {command, agent, o->eng.ignore_robots ? "robots: ignore" : "robots: obey"};
    archive_config cfg = archive_settings(r, o);
    cfg.info = info;
    cfg.n_info = sizeof info / sizeof *info;
    return archive_open(&r->warc, &cfg) == SIEVE_OK ? EXIT_OK : EXIT_OUTPUT;
}

/* Closes the archive and writes its index; false when either failed. */
static bool finish_archive(crawl_run *r, const crawl_cli *o)
{
    if (r->warc == NULL)
        return true;
    archive_stats(r->warc, &r->warc_cost);
    int rc = archive_close(r->warc);
    r->warc = NULL;
    if (rc == SIEVE_OK && o->cdxj != NULL) {
        archive_config cfg = archive_settings(r, o);
        rc = archive_index(&cfg, o->cdxj);
    }
    if (rc != SIEVE_OK)
        atomic_store(&r->output_failed, true);
    return rc == SIEVE_OK;
}

/* Runs the crawl; returns the exit status. */
static int crawl(crawl_run *r, const crawl_cli *o)
{
    progress_config pc = {
        .crawler = r->crawler,
        .records = r->records,
        .stats = r->stats,
        .stats_interval_s = o->stats_interval_s,
        .stop_grace_s = o->eng.stop_grace_s,
        .status_line = want_status_line(o),
        .output_failed = output_failed,
        .ctx = r,
    };
    progress *p = progress_start(&pc);
    if (p == NULL) {
        fprintf(stderr, "sieve crawl: cannot start the signal thread\n");
        return EXIT_FAILURE_RUN;
    }
    long seeds = seeds_load(o->seeds, o->n_seeds, add_seed, r, stderr);
    if (seeds <= 0) {
        progress_stop(p);
        if (seeds == 0)
            fprintf(stderr, "sieve crawl: no valid seed\n");
        return seeds == SEEDS_EFATAL ? EXIT_FAILURE_RUN : EXIT_USAGE;
    }
    sieve_crawl_callbacks cb = {.on_record = on_record, .on_sync = on_sync};
    if (o->warc != NULL) {
        int st = open_archive(r, o);
        if (st != EXIT_OK) {
            progress_stop(p);
            return st;
        }
        cb.on_request = on_request;
        cb.on_response_head = on_response_head;
        cb.on_response_body = on_response_body;
        cb.on_transfer_end = on_transfer_end;
        cb.on_wait = on_wait;
    }
    sieve_crawler_set_callbacks(r->crawler, &cb, r);
    progress_run(p);
    int rc = sieve_crawler_run(r->crawler);
    double secs = progress_elapsed(p);
    int sig = progress_stop(p);

    sieve_crawl_stats st;
    sieve_crawler_stats_get(r->crawler, &st);
    finish_archive(r, o); /* a failure marks the outputs failed */
    bool written = close_outputs(r, &st, secs);
    /* SIEVE_EIO that is not ours: the engine's own output, the cookie jar
     * (it told the logger) */
    bool engine_output = written && rc == SIEVE_EIO;
    bool broken = written && rc != SIEVE_OK && rc != SIEVE_ECLOSED && rc != SIEVE_EIO;
    const char *how = !written || engine_output ? "output error"
                      : sig                     ? "interrupted"
                      : broken                  ? "failed"
                      : st.page_limit_hit       ? "page limit reached"
                                                : "crawl done";
    if (broken)
        fprintf(stderr, "sieve crawl: the crawl failed: %s\n", sieve_strerror(rc));
    summary(&st, secs, how);
    if (o->warc != NULL && r->warc_cost.compress_cpu_us > 0)
        archive_summary(&r->warc_cost, &st);
    if (!written || engine_output)
        return EXIT_OUTPUT;
    if (sig != 0)
        return 128 + sig;
    if (broken)
        return EXIT_FAILURE_RUN;
    /* A resumed crawl whose seeds were fetched before has no seed record. */
    if (atomic_load(&r->seed_records) > 0 && atomic_load(&r->seeds_fetched) == 0) {
        fprintf(stderr, "sieve crawl: no seed could be fetched (%llu seed records, all errors)\n",
                (unsigned long long)atomic_load(&r->seed_records));
        return EXIT_NO_SEED;
    }
    return EXIT_OK;
}

int cmd_crawl(int argc, char **argv)
{
    /* Before any thread exists: the signals are the progress thread's. */
    progress_block_signals();
    signal(SIGPIPE, SIG_IGN);
    /* A file size limit (ulimit -f) is a full disk: writes fail with EFBIG,
     * the crawl stops with a message and exit status 4, and the state
     * stays whole, instead of a death by SIGXFSZ in the middle of a write. */
    signal(SIGXFSZ, SIG_IGN);
    /* Open files are connections: the engine keeps idle ones open to
     * reuse them, as many as the limit allows, and a limit of 1024 (the
     * usual soft one) is low for a crawl over many hosts. */
    struct rlimit files;
    if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
        files.rlim_cur = files.rlim_max;
        setrlimit(RLIMIT_NOFILE, &files);
    }
    /* IDN hosts are converted from the locale's charset. */
    setlocale(LC_CTYPE, "C.UTF-8");

    crawl_cli o;
    opt_parsed parsed;
    crawl_cli_init(&o);
    int prc = crawl_cli_parse(&o, &parsed, argc, argv);
    if (prc != 0) {
        crawl_cli_free(&o, &parsed);
        return prc > 0 ? EXIT_OK : EXIT_USAGE;
    }
    o.eng.logger = (sieve_logger){.fn = log_line, .level = SIEVE_LOG_WARN};
    /* archived, a record's digest is its WARC-Payload-Digest: no second pass */
    o.eng.payload_digest = o.eng.payload_digest && o.warc == NULL;
    if (o.eng.ignore_robots)
        fprintf(stderr, "sieve crawl: warning: --ignore-robots: robots.txt is neither fetched "
                        "nor obeyed\n");

    crawl_run r = {.durable = o.eng.state_dir != NULL};
    r.argc = argc;
    r.argv = argv;
    int status;
    int rc = sieve_crawler_new(&r.crawler, &o.eng);
    if (rc != SIEVE_OK) {
        fprintf(stderr, "sieve crawl: %s\n", sieve_strerror(rc));
        /* a state directory locked, damaged, from other settings or not
         * writable is a state error; the engine said which */
        bool state = o.eng.state_dir != NULL && rc != SIEVE_EINVAL && rc != SIEVE_ENOMEM;
        status = rc == SIEVE_EINVAL ? EXIT_USAGE : state ? EXIT_OUTPUT : EXIT_FAILURE_RUN;
    } else {
        status = open_outputs(&r, &o);
        if (status == EXIT_OK)
            status = crawl(&r, &o);
    }
    if (r.stats != NULL)
        record_writer_close(r.stats);
    if (r.records != NULL)
        record_writer_close(r.records);
    archive_close(r.warc);
    sieve_crawler_free(r.crawler);
    crawl_cli_free(&o, &parsed);
    return status;
}
