/* options.c - the option table's parser and its consistency check; the
 * table's --help, man page and completion are options-doc.c's.
 *
 * Fields are read and written with memcpy() through the row's offset and
 * size, so one row type serves unsigned, uint64_t, size_t, long, double,
 * bool, enum and string fields alike. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "options-internal.h"

/* ---- fields ----------------------------------------------------------- */

static void *field(void *s, size_t off)
{
    return (char *)s + off;
}

const void *opt_cfield(const void *s, size_t off)
{
    return (const char *)s + off;
}

uint64_t opt_get_uint(const void *s, const opt_def *d)
{
    const void *f = opt_cfield(s, d->off);
    if (d->size == sizeof(uint32_t)) {
        uint32_t v;
        memcpy(&v, f, sizeof v);
        return v;
    }
    uint64_t v;
    memcpy(&v, f, sizeof v);
    return v;
}

static void put_uint(void *s, const opt_def *d, uint64_t v)
{
    void *f = field(s, d->off);
    if (d->size == sizeof(uint32_t)) {
        uint32_t w = (uint32_t)v;
        memcpy(f, &w, sizeof w);
    } else {
        memcpy(f, &v, sizeof v);
    }
}

double opt_get_double(const void *s, const opt_def *d)
{
    double v;
    memcpy(&v, opt_cfield(s, d->off), sizeof v);
    return v;
}

const char *opt_get_string(const void *s, const opt_def *d)
{
    const char *v;
    memcpy(&v, opt_cfield(s, d->off), sizeof v);
    return v;
}

/* ---- numbers ---------------------------------------------------------- */

/* Only what a decimal number is written with: strtod() also reads hex
 * ("0x10" is 16), "inf" and "nan", which an option given "0x10" should
 * refuse rather than take for sixteen. */
static bool decimal_chars(const char *s)
{
    return s[strspn(s, "0123456789.eE+-")] == '\0';
}

/* A whole number: digits, or a decimal such as 1e6 or 2.5e3 that is whole. */
static bool parse_whole(const char *s, double *out)
{
    if (*s < '0' || *s > '9')
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end == '\0') {
        if (errno != 0)
            return false;
        *out = (double)v;
        return true;
    }
    errno = 0;
    double d = strtod(s, &end);
    if (!decimal_chars(s) || *end != '\0' || errno != 0 || !isfinite(d) || d != floor(d))
        return false;
    *out = d;
    return true;
}

/* A non-negative decimal number. */
static bool parse_decimal(const char *s, double *out)
{
    if (((*s < '0' || *s > '9') && *s != '.') || !decimal_chars(s))
        return false;
    char *end;
    errno = 0;
    double d = strtod(s, &end);
    if (*end != '\0' || errno != 0 || !isfinite(d))
        return false;
    *out = d;
    return true;
}

static const char size_suffixes[] = "KMGT";

/* Bytes with an optional K, M, G or T suffix (either case). */
static bool parse_size(const char *s, double *out)
{
    char num[64];
    size_t len = strlen(s);
    if (len == 0 || len >= sizeof num)
        return false;
    memcpy(num, s, len + 1);
    double mult = 1;
    const char *suf = strchr(size_suffixes, num[len - 1] & ~0x20);
    if (num[len - 1] != '\0' && suf != NULL && *suf != '\0') {
        mult = ldexp(1, 10 * (int)(suf - size_suffixes + 1));
        num[len - 1] = '\0';
    }
    double d;
    if (!parse_decimal(num, &d))
        return false;
    d *= mult;
    if (d != floor(d))
        return false;
    *out = d;
    return true;
}

/* Writes a byte count the way --help shows it: 10M rather than 10485760. */
void opt_format_size(char *buf, size_t cap, double v)
{
    int i = 0;
    while (i < 4 && v >= 1024 && fmod(v, 1024) == 0) {
        v /= 1024;
        i++;
    }
    if (i == 0)
        snprintf(buf, cap, "%.0f", v);
    else
        snprintf(buf, cap, "%.0f%c", v, size_suffixes[i - 1]);
}

static bool in_range(const opt_def *d, double v)
{
    if (d->flags & OPTF_MIN_OPEN ? !(v > d->min) : !(v >= d->min))
        return false;
    return v <= d->max;
}

/* "from 1 to 256", "above 0 and at most 86400". */
static void range_text(const opt_def *d, char *buf, size_t cap)
{
    char lo[32], hi[32];
    if (d->kind == OPT_SIZE) {
        opt_format_size(lo, sizeof lo, d->min);
        opt_format_size(hi, sizeof hi, d->max);
    } else if (d->kind == OPT_COUNT) {
        snprintf(lo, sizeof lo, "%.0f", d->min);
        snprintf(hi, sizeof hi, "%.0f", d->max);
    } else {
        snprintf(lo, sizeof lo, "%g", d->min);
        snprintf(hi, sizeof hi, "%g", d->max);
    }
    if (d->flags & OPTF_MIN_OPEN)
        snprintf(buf, cap, "above %s and at most %s", lo, hi);
    else
        snprintf(buf, cap, "from %s to %s", lo, hi);
}

/* ---- parsing ---------------------------------------------------------- */

void opt_fail(const opt_command *cmd, const char *name, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (name != NULL)
        fprintf(stderr, "sieve %s: --%s: %s\n", cmd->name, name, msg);
    else
        fprintf(stderr, "sieve %s: %s\n", cmd->name, msg);
    fprintf(stderr, "Try 'sieve %s --help'.\n", cmd->name);
}

static int list_append(void *s, const opt_def *d, const char *item)
{
    const char **list;
    size_t n;
    memcpy(&list, field(s, d->off), sizeof list);
    memcpy(&n, field(s, d->count_off), sizeof n);
    const char **grown = realloc(list, (n + 1) * sizeof *grown);
    if (grown == NULL)
        return -1;
    grown[n++] = item;
    memcpy(field(s, d->off), &grown, sizeof grown);
    memcpy(field(s, d->count_off), &n, sizeof n);
    return 0;
}

static char *keep_copy(opt_parsed *p, const char *s, size_t len)
{
    char **grown = realloc(p->owned, (p->n_owned + 1) * sizeof *grown);
    if (grown == NULL)
        return NULL;
    p->owned = grown;
    char *copy = malloc(len + 1);
    if (copy == NULL)
        return NULL;
    memcpy(copy, s, len);
    copy[len] = '\0';
    p->owned[p->n_owned++] = copy;
    return copy;
}

/* Splits a comma-separated list and appends each item. */
static int apply_split(const opt_command *cmd, const opt_def *d, void *s, opt_parsed *p,
                       const char *arg)
{
    const char *item = arg;
    for (;;) {
        size_t len = strcspn(item, ",");
        if (len == 0) {
            opt_fail(cmd, d->name, "'%s' has an empty item", arg);
            return -1;
        }
        char *copy = keep_copy(p, item, len);
        if (copy == NULL || list_append(s, d, copy) != 0) {
            opt_fail(cmd, d->name, "out of memory");
            return -1;
        }
        if (d->check != NULL) {
            char why[256];
            const char *bad = d->check(copy, why, sizeof why);
            if (bad != NULL) {
                opt_fail(cmd, d->name, "%s", bad);
                return -1;
            }
        }
        if (item[len] == '\0')
            return 0;
        item += len + 1;
    }
}

static int apply(const opt_command *cmd, const opt_def *d, void *s, opt_parsed *p, const char *arg)
{
    char range[96], why[512];
    double v;
    if (arg != NULL && (d->flags & OPTF_ONE_LINE) && strpbrk(arg, "\r\n") != NULL) {
        opt_fail(cmd, d->name, "value contains a line break");
        return -1;
    }
    switch (d->kind) {
    case OPT_FLAG:
        memcpy(field(s, d->off), &d->set, sizeof d->set);
        return 0;
    case OPT_COUNT:
        if (!parse_whole(arg, &v) || !in_range(d, v)) {
            range_text(d, range, sizeof range);
            opt_fail(cmd, d->name, "'%s' is not a whole number %s", arg, range);
            return -1;
        }
        put_uint(s, d, (uint64_t)v);
        return 0;
    case OPT_SIZE:
        if (!parse_size(arg, &v) || !in_range(d, v)) {
            range_text(d, range, sizeof range);
            opt_fail(cmd, d->name, "'%s' is not a size in bytes %s (suffixes K, M, G, T)", arg,
                     range);
            return -1;
        }
        put_uint(s, d, (uint64_t)v);
        return 0;
    case OPT_SECONDS:
    case OPT_RATE:
        if (!parse_decimal(arg, &v) || !in_range(d, v)) {
            range_text(d, range, sizeof range);
            opt_fail(cmd, d->name, "'%s' is not a %s %s", arg,
                     d->kind == OPT_RATE ? "rate" : "number of seconds", range);
            return -1;
        }
        memcpy(field(s, d->off), &v, sizeof v);
        return 0;
    case OPT_CHOICE:
        for (const opt_choice *c = d->choices; c->name != NULL; c++) {
            if (strcmp(arg, c->name) == 0) {
                memcpy(field(s, d->off), &c->value, sizeof c->value);
                return 0;
            }
        }
        fprintf(stderr, "sieve %s: --%s: '%s' is not one of:", cmd->name, d->name, arg);
        for (const opt_choice *c = d->choices; c->name != NULL; c++)
            fprintf(stderr, " %s", c->name);
        fprintf(stderr, "\nTry 'sieve %s --help'.\n", cmd->name);
        return -1;
    case OPT_STRING:
    case OPT_LIST:
        if (d->kind == OPT_LIST && (d->flags & OPTF_SPLIT))
            return apply_split(cmd, d, s, p, arg);
        if (d->check != NULL) {
            const char *bad = d->check(arg, why, sizeof why);
            if (bad != NULL) {
                opt_fail(cmd, d->name, "%s", bad);
                return -1;
            }
        }
        if (d->kind == OPT_STRING) {
            memcpy(field(s, d->off), &arg, sizeof arg);
        } else if (list_append(s, d, arg) != 0) {
            opt_fail(cmd, d->name, "out of memory");
            return -1;
        }
        return 0;
    case OPT_CUSTOM: {
        const char *bad = d->parse(s, arg, why, sizeof why);
        if (bad != NULL) {
            opt_fail(cmd, d->name, "%s", bad);
            return -1;
        }
        return 0;
    }
    case OPT_HELP:
        opt_help(cmd, stdout);
        return 1;
    }
    return -1;
}

bool opt_takes_arg(const opt_def *d)
{
    return d->kind != OPT_FLAG && d->kind != OPT_HELP;
}

/* getopt's value for row i: its letter, or 256 + i. */
static int row_val(const opt_command *cmd, size_t i)
{
    return cmd->opts[i].letter != 0 ? (unsigned char)cmd->opts[i].letter : 256 + (int)i;
}

static long row_of_val(const opt_command *cmd, int val)
{
    for (size_t i = 0; i < cmd->n_opts; i++)
        if (row_val(cmd, i) == val)
            return (long)i;
    return -1;
}

int opt_parse(const opt_command *cmd, void *settings, opt_parsed *p, int argc, char **argv)
{
    memset(p, 0, sizeof *p);
    size_t n = cmd->n_opts < sizeof p->given ? cmd->n_opts : sizeof p->given;
    struct option *longs = calloc(n + 1, sizeof *longs);
    char *shorts = calloc(2 * n + 2, 1);
    if (longs == NULL || shorts == NULL) {
        free(longs);
        free(shorts);
        opt_fail(cmd, NULL, "out of memory");
        return -1;
    }
    size_t ns = 0;
    shorts[ns++] = ':'; /* a missing argument returns ':' */
    for (size_t i = 0; i < n; i++) {
        const opt_def *d = &cmd->opts[i];
        longs[i] = (struct option){d->name, opt_takes_arg(d) ? required_argument : no_argument,
                                   NULL, row_val(cmd, i)};
        if (d->letter != 0) {
            shorts[ns++] = d->letter;
            if (opt_takes_arg(d))
                shorts[ns++] = ':';
        }
    }
    optind = 0; /* glibc: start afresh */
    opterr = 0;
    int rc = 0, c;
    while (rc == 0 && (c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
        long row = c == '?' || c == ':' ? row_of_val(cmd, optopt) : row_of_val(cmd, c);
        if (c == ':') {
            opt_fail(cmd, cmd->opts[row].name, "needs an argument (%s)", cmd->opts[row].arg);
            rc = -1;
        } else if (c == '?' && row >= 0 && optopt != 0) {
            opt_fail(cmd, cmd->opts[row].name, "takes no argument");
            rc = -1;
        } else if (c == '?' || row < 0) {
            const char *word = argv[optind - 1];
            if (optopt != 0 || strncmp(word, "--", 2) != 0)
                opt_fail(cmd, NULL, "unknown option '-%c'", optopt);
            else
                opt_fail(cmd, NULL, "unknown option '%s'", word);
            rc = -1;
        } else {
            p->given[row] = true;
            rc = apply(cmd, &cmd->opts[row], settings, p, optarg);
        }
    }
    p->first_operand = optind;
    free(longs);
    free(shorts);
    return rc;
}

void opt_free(const opt_command *cmd, void *settings, opt_parsed *p)
{
    for (size_t i = 0; i < cmd->n_opts; i++) {
        const opt_def *d = &cmd->opts[i];
        if (d->kind != OPT_LIST)
            continue;
        void *list;
        memcpy(&list, field(settings, d->off), sizeof list);
        free(list);
        list = NULL;
        size_t zero = 0;
        memcpy(field(settings, d->off), &list, sizeof list);
        memcpy(field(settings, d->count_off), &zero, sizeof zero);
    }
    for (size_t i = 0; i < p->n_owned; i++)
        free(p->owned[i]);
    free(p->owned);
    p->owned = NULL;
    p->n_owned = 0;
}

bool opt_given(const opt_command *cmd, const opt_parsed *p, const char *name)
{
    for (size_t i = 0; i < cmd->n_opts && i < sizeof p->given; i++)
        if (strcmp(cmd->opts[i].name, name) == 0)
            return p->given[i];
    return false;
}

/* ---- the table's own consistency -------------------------------------- */

/* Each kind's field size, as the accessors above read it. */
static bool size_fits(const opt_def *d)
{
    switch (d->kind) {
    case OPT_FLAG:
        return d->size == sizeof(bool);
    case OPT_COUNT:
    case OPT_SIZE:
        return d->size == sizeof(uint32_t) || d->size == sizeof(uint64_t);
    case OPT_SECONDS:
    case OPT_RATE:
        return d->size == sizeof(double);
    case OPT_CHOICE:
        return d->size == sizeof(int) && d->choices != NULL;
    case OPT_STRING:
    case OPT_LIST:
        return d->size == sizeof(const char *);
    case OPT_CUSTOM:
        return d->parse != NULL;
    case OPT_HELP:
        return true;
    }
    return false;
}

int opt_check_table(const opt_command *cmd, FILE *err)
{
    int bad = 0;
    if (cmd->n_opts > sizeof((opt_parsed *)0)->given) {
        fprintf(err, "sieve %s: %zu options, at most %zu\n", cmd->name, cmd->n_opts,
                sizeof((opt_parsed *)0)->given);
        bad++;
    }
    for (size_t i = 0; i < cmd->n_opts; i++) {
        const opt_def *d = &cmd->opts[i];
        const char *why = NULL;
        if (!size_fits(d))
            why = "its field does not fit its kind";
        else if (d->section == NULL || d->help == NULL)
            why = "it has no section or no help";
        else if (opt_takes_arg(d) && d->kind != OPT_CHOICE && d->arg == NULL)
            why = "it has no argument name";
        else if (d->kind == OPT_LIST && d->count_off == 0)
            why = "it has no count field";
        for (size_t j = 0; why == NULL && j < i; j++)
            if (strcmp(cmd->opts[j].name, d->name) == 0 ||
                (d->letter != 0 && cmd->opts[j].letter == d->letter))
                why = "its name or letter is taken";
        if (why != NULL) {
            fprintf(err, "sieve %s: option table: --%s: %s\n", cmd->name, d->name, why);
            bad++;
        }
    }
    return bad == 0 ? 0 : -1;
}
