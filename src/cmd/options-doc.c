/* options-doc.c - what an option table says of itself: --help, the man
 * page sieve(1) and the bash completion, each with the defaults read
 * from a settings struct the subcommand's init filled, so that no
 * default is written twice. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options-internal.h"

#define HELP_WIDTH 79 /* columns of --help */
#define HELP_COL   29 /* where the help texts start */

/* ---- defaults --------------------------------------------------------- */

/* Writes the row's default into buf; *words is set when it is prose
 * ("no limit") rather than a value. Returns false when there is none. */
static bool default_of(const opt_def *d, const void *s, char *buf, size_t cap, bool *words)
{
    *words = false;
    if (d->deflt != NULL) {
        *words = true;
        snprintf(buf, cap, "%s", d->deflt);
        return true;
    }
    bool zero = false;
    switch (d->kind) {
    case OPT_FLAG:
    case OPT_LIST:
    case OPT_HELP:
        return false;
    case OPT_COUNT:
    case OPT_SIZE: {
        uint64_t v = opt_get_uint(s, d);
        zero = v == 0 || ((d->flags & OPTF_SIGNED) && (int64_t)v < 0);
        if (!zero || d->unset == NULL) {
            if (d->kind == OPT_SIZE)
                opt_format_size(buf, cap, (double)v);
            else if (d->flags & OPTF_SIGNED)
                snprintf(buf, cap, "%" PRId64, (int64_t)v);
            else
                snprintf(buf, cap, "%" PRIu64, v);
            return true;
        }
        break;
    }
    case OPT_SECONDS:
    case OPT_RATE: {
        double v = opt_get_double(s, d);
        zero = v == 0;
        if (!zero || d->unset == NULL) {
            snprintf(buf, cap, "%g", v);
            return true;
        }
        break;
    }
    case OPT_CHOICE: {
        int v;
        memcpy(&v, opt_cfield(s, d->off), sizeof v);
        for (const opt_choice *c = d->choices; c->name != NULL; c++) {
            if (c->value == v) {
                snprintf(buf, cap, "%s", c->name);
                return true;
            }
        }
        return false;
    }
    case OPT_STRING: {
        const char *v = opt_get_string(s, d);
        if (v != NULL) {
            snprintf(buf, cap, "\"%s\"", v);
            return true;
        }
        zero = true;
        break;
    }
    case OPT_CUSTOM:
        return d->show != NULL && d->show(s, buf, cap);
    }
    if (zero && d->unset != NULL) {
        *words = true;
        snprintf(buf, cap, "%s", d->unset);
        return true;
    }
    return false;
}

/* The defaults: a settings struct filled by the command's init. */
static void *defaults_new(const opt_command *cmd)
{
    void *s = calloc(1, cmd->settings_size);
    if (s != NULL)
        cmd->init(s);
    return s;
}

static void defaults_free(const opt_command *cmd, void *s)
{
    if (s != NULL && cmd->fini != NULL)
        cmd->fini(s);
    free(s);
}

/* "N", "host|domain|any", or NULL for a flag. */
static const char *arg_name(const opt_def *d, char *buf, size_t cap)
{
    if (!opt_takes_arg(d))
        return NULL;
    if (d->kind != OPT_CHOICE)
        return d->arg;
    size_t len = 0;
    buf[0] = '\0';
    for (const opt_choice *c = d->choices; c->name != NULL; c++)
        len += (size_t)snprintf(buf + len, len < cap ? cap - len : 0, "%s%s",
                                c == d->choices ? "" : "|", c->name);
    return buf;
}

/* The help line of a row, default included. */
static void help_text(const opt_def *d, const void *defaults, char *buf, size_t cap)
{
    char def[256];
    bool words;
    if (defaults != NULL && default_of(d, defaults, def, sizeof def, &words))
        snprintf(buf, cap, "%s (default%s %s)", d->help, words ? ":" : "", def);
    else
        snprintf(buf, cap, "%s", d->help);
}

/* ---- the walk over a table -------------------------------------------- */

/* Whether row i's section was named by a row before it. */
static bool section_seen_before(const opt_command *cmd, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (strcmp(cmd->opts[j].section, cmd->opts[i].section) == 0)
            return true;
    return false;
}

/* How --help and the man page differ in writing an option table. The walk
 * itself (each section where its first option stands, then every option
 * of that section in table order) is each_option()'s, shared. */
typedef struct {
    void (*section)(FILE *out, const char *name);
    void (*option)(FILE *out, const opt_def *d, const char *arg, const char *text);
} doc_format;

static void each_option(const opt_command *cmd, const doc_format *f, FILE *out)
{
    void *defaults = defaults_new(cmd);
    for (size_t i = 0; i < cmd->n_opts; i++) {
        if (section_seen_before(cmd, i))
            continue;
        f->section(out, cmd->opts[i].section);
        for (size_t j = i; j < cmd->n_opts; j++) {
            const opt_def *d = &cmd->opts[j];
            if (strcmp(d->section, cmd->opts[i].section) != 0)
                continue;
            char an[160], text[1024];
            const char *a = arg_name(d, an, sizeof an);
            help_text(d, defaults, text, sizeof text);
            f->option(out, d, a, text);
        }
    }
    defaults_free(cmd, defaults);
}

/* ---- --help ----------------------------------------------------------- */

/* Writes text from column col, wrapping at HELP_WIDTH and indenting the
 * following lines by indent. Ends with a newline. */
static void wrap(FILE *out, const char *text, size_t col, size_t indent)
{
    const char *w = text;
    bool first = true;
    while (*w != '\0') {
        while (*w == ' ')
            w++;
        size_t len = strcspn(w, " ");
        if (len == 0)
            break;
        if (!first && col + 1 + len > HELP_WIDTH) {
            fprintf(out, "\n%*s", (int)indent, "");
            col = indent;
        } else if (!first) {
            fputc(' ', out);
            col++;
        }
        fwrite(w, 1, len, out);
        col += len;
        w += len;
        first = false;
    }
    fputc('\n', out);
}

/* Each paragraph ("\n\n" between them) wrapped, indented by indent. */
static void paragraphs(FILE *out, const char *text, size_t indent)
{
    char buf[4096];
    const char *p = text;
    while (*p != '\0') {
        const char *end = strstr(p, "\n\n");
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        if (len >= sizeof buf)
            len = sizeof buf - 1;
        memcpy(buf, p, len);
        buf[len] = '\0';
        for (char *c = buf; *c; c++)
            if (*c == '\n')
                *c = ' ';
        fprintf(out, "%*s", (int)indent, "");
        wrap(out, buf, indent, indent);
        if (end == NULL)
            break;
        fputc('\n', out);
        p = end + 2;
    }
}

static void help_section(FILE *out, const char *name)
{
    fprintf(out, "\n%s:\n", name);
}

static void help_option(FILE *out, const opt_def *d, const char *a, const char *text)
{
    char left[160];
    int len = snprintf(left, sizeof left, "  %c%c%s--%s%s%s", d->letter ? '-' : ' ',
                       d->letter ? d->letter : ' ', d->letter ? ", " : "  ", d->name, a ? " " : "",
                       a ? a : "");
    fputs(left, out);
    if (len + 2 > HELP_COL)
        fprintf(out, "\n%*s", HELP_COL, "");
    else
        fprintf(out, "%*s", HELP_COL - len, "");
    wrap(out, text, HELP_COL, HELP_COL);
}

void opt_help(const opt_command *cmd, FILE *out)
{
    static const doc_format help = {help_section, help_option};
    fprintf(out, "usage: sieve %s [OPTIONS] %s\n\n", cmd->name, cmd->operands);
    paragraphs(out, cmd->description, 0);
    each_option(cmd, &help, out);
    for (size_t i = 0; i < cmd->n_notes; i++) {
        fprintf(out, "\n%s:\n", cmd->notes[i].title);
        paragraphs(out, cmd->notes[i].text, 2);
    }
    if (cmd->n_exits > 0) {
        fprintf(out, "\nExit status:\n");
        for (size_t i = 0; i < cmd->n_exits; i++) {
            int len = fprintf(out, "  %d", cmd->exits[i].status);
            fprintf(out, "%*s", 7 - len, "");
            wrap(out, cmd->exits[i].meaning, 7, 7);
        }
    }
}

/* ---- man page --------------------------------------------------------- */

void opt_roff(FILE *out, const char *text)
{
    bool line_start = true;
    for (const char *c = text; *c; c++) {
        if (line_start && (*c == '.' || *c == '\''))
            fputs("\\&", out);
        if (*c == '\\')
            fputs("\\e", out);
        else if (*c == '-')
            fputs("\\-", out);
        else
            fputc(*c, out);
        line_start = *c == '\n';
    }
}

/* Paragraphs as roff, separated by .PP. */
static void roff_paragraphs(FILE *out, const char *text)
{
    const char *p = text;
    while (*p != '\0') {
        const char *end = strstr(p, "\n\n");
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        char *para = strndup(p, len);
        if (para != NULL) {
            opt_roff(out, para);
            fputc('\n', out);
            free(para);
        }
        if (end == NULL)
            break;
        fputs(".PP\n", out);
        p = end + 2;
    }
}

static void upper(char *dst, size_t cap, const char *src)
{
    size_t i = 0;
    for (; src[i] != '\0' && i + 1 < cap; i++)
        dst[i] = src[i] >= 'a' && src[i] <= 'z' ? (char)(src[i] - 32) : src[i];
    dst[i] = '\0';
}

static void man_section(FILE *out, const char *name)
{
    fprintf(out, ".SS \"%s\"\n", name);
}

static void man_option(FILE *out, const opt_def *d, const char *a, const char *text)
{
    fputs(".TP\n", out);
    if (d->letter != 0)
        fprintf(out, "\\fB\\-%c\\fR, ", d->letter);
    fputs("\\fB\\-\\-", out);
    opt_roff(out, d->name);
    fputs("\\fR", out);
    if (a != NULL) {
        fputs(" \\fI", out);
        opt_roff(out, a);
        fputs("\\fR", out);
    }
    fputc('\n', out);
    opt_roff(out, text);
    fputs(".\n", out);
}

void opt_man(const opt_command *cmd, FILE *out)
{
    static const doc_format man = {man_section, man_option};
    char title[128];
    upper(title, sizeof title, cmd->name);
    fprintf(out, ".SH \"SIEVE %s\"\n", title);
    roff_paragraphs(out, cmd->description);
    fprintf(out, ".SH OPTIONS\n");
    each_option(cmd, &man, out);
    for (size_t i = 0; i < cmd->n_notes; i++) {
        upper(title, sizeof title, cmd->notes[i].title);
        fprintf(out, ".SH \"%s\"\n", title);
        roff_paragraphs(out, cmd->notes[i].text);
    }
    if (cmd->n_exits > 0) {
        fprintf(out, ".SH \"EXIT STATUS\"\n");
        for (size_t i = 0; i < cmd->n_exits; i++) {
            fprintf(out, ".TP\n.B %d\n", cmd->exits[i].status);
            opt_roff(out, cmd->exits[i].meaning);
            fputs(".\n", out);
        }
    }
}

/* ---- bash completion -------------------------------------------------- */

/* Words are option names and choice names: letters, digits and '-', which
 * need no quoting in the generated script. */
void opt_bash(const opt_command *cmd, FILE *out)
{
    fprintf(out, "_sieve_%s()\n{\n    local cur=$1 prev=$2\n    case $prev in\n", cmd->name);
    /* choices */
    for (size_t i = 0; i < cmd->n_opts; i++) {
        const opt_def *d = &cmd->opts[i];
        if (d->kind != OPT_CHOICE)
            continue;
        if (d->letter != 0)
            fprintf(out, "    -%c | ", d->letter);
        else
            fputs("    ", out);
        fprintf(out, "--%s)\n        _sieve_words \"$cur\"", d->name);
        for (const opt_choice *c = d->choices; c->name != NULL; c++)
            fprintf(out, " %s", c->name);
        fputs("\n        return ;;\n", out);
    }
    /* files, then every other argument (nothing to offer) */
    for (int files = 1; files >= 0; files--) {
        bool any = false;
        for (size_t i = 0; i < cmd->n_opts; i++) {
            const opt_def *d = &cmd->opts[i];
            if (!opt_takes_arg(d) || d->kind == OPT_CHOICE ||
                (strcmp(d->arg, "FILE") == 0) != (files == 1))
                continue;
            fputs(any ? " | " : "    ", out);
            if (d->letter != 0)
                fprintf(out, "-%c | ", d->letter);
            fprintf(out, "--%s", d->name);
            any = true;
        }
        if (any)
            fprintf(out, ")\n        %sreturn ;;\n",
                    files ? "_sieve_files \"$cur\"\n        " : "");
    }
    fputs("    esac\n    if [[ $cur == -* ]]; then\n        _sieve_words \"$cur\"", out);
    for (size_t i = 0; i < cmd->n_opts; i++)
        fprintf(out, " --%s", cmd->opts[i].name);
    for (size_t i = 0; i < cmd->n_opts; i++)
        if (cmd->opts[i].letter != 0)
            fprintf(out, " -%c", cmd->opts[i].letter);
    fputs("\n    else\n        _sieve_files \"$cur\"\n    fi\n}\n", out);
}
