/* options.h - a subcommand's options as one table.
 *
 * Each row names an option (long name, short letter, argument), says what
 * kind of value it takes, which field of the subcommand's settings it
 * sets (or which function parses it), its section and a one-line help
 * text. The same table drives the parser, --help, the man page sieve(1)
 * and the bash completion, so an option cannot be missing from one of
 * them. Defaults are never written in the table: --help and the man page
 * read them from the settings after the subcommand's init function.
 *
 * Every error names the option: "sieve crawl: --fp-rate: '2' is not ...". */
#ifndef SIEVE_CMD_OPTIONS_H
#define SIEVE_CMD_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef enum opt_kind {
    OPT_FLAG,    /* no argument: stores .set into a bool */
    OPT_COUNT,   /* a whole number in [min, max]; "1e6" accepted */
    OPT_SIZE,    /* bytes in [min, max]; K, M, G or T multiply by 1024^1..4 */
    OPT_SECONDS, /* seconds, a decimal number in [min, max] */
    OPT_RATE,    /* a fraction in [min, max] */
    OPT_CHOICE,  /* one of .choices; stores its value into an enum */
    OPT_STRING,  /* stores the argument */
    OPT_LIST,    /* repeatable: appends the argument to a list */
    OPT_CUSTOM,  /* .parse reads the argument */
    OPT_HELP,    /* prints the help; the parse ends there */
} opt_kind;

/* Row flags. */
enum {
    OPTF_MIN_OPEN = 1 << 0, /* numbers: min itself is refused */
    OPTF_ONE_LINE = 1 << 1, /* strings: CR and LF are refused */
    OPTF_SPLIT = 1 << 2,    /* OPT_LIST: the argument is a comma-separated list of items */
    OPTF_SIGNED = 1 << 3,   /* OPT_COUNT: the field is signed (a negative default means unset) */
};

typedef struct opt_choice {
    const char *name;
    int value;
} opt_choice;

typedef struct opt_def opt_def;

/* Checks a string argument (or one item of a split list). Returns NULL if
 * it is fine, else why not, possibly written into why. */
typedef const char *(*opt_check_fn)(const char *arg, char *why, size_t cap);

/* Parses the argument of an OPT_CUSTOM row into the settings. Returns NULL,
 * or why the argument is refused. */
typedef const char *(*opt_parse_fn)(void *settings, const char *arg, char *why, size_t cap);

/* Writes the default of an OPT_CUSTOM row; returns false when there is none. */
typedef bool (*opt_show_fn)(const void *settings, char *buf, size_t cap);

struct opt_def {
    const char *name;          /* long name, without "--" */
    char letter;               /* short name, or 0 */
    opt_kind kind;             /* what the argument is */
    const char *arg;           /* the argument's name in the help ("N", "FILE"); "FILE"
                                  is completed with file names */
    size_t off, size;          /* the field set (not for OPT_CUSTOM and OPT_HELP) */
    size_t count_off;          /* OPT_LIST: the size_t that counts the list's items */
    double min, max;           /* numbers: the range */
    unsigned flags;            /* OPTF_* */
    bool set;                  /* OPT_FLAG: the value stored */
    const opt_choice *choices; /* OPT_CHOICE: ends with a NULL name */
    opt_check_fn check;        /* strings and lists: extra checks */
    opt_parse_fn parse;        /* OPT_CUSTOM */
    opt_show_fn show;          /* OPT_CUSTOM: the default, for the help */
    const char *unset;         /* default shown when the field is 0 (negative if signed),
                                  e.g. "no limit" */
    const char *deflt;         /* default shown instead of the field's value */
    const char *section;
    const char *help; /* one line */
};

/* One paragraph of prose in the help and the man page. */
typedef struct opt_note {
    const char *title; /* section title */
    const char *text;  /* paragraphs separated by "\n\n" */
} opt_note;

typedef struct opt_exit {
    int status;
    const char *meaning;
} opt_exit;

typedef struct opt_command {
    const char *name;        /* "crawl" */
    const char *operands;    /* "SEEDFILE|URL..." */
    const char *description; /* paragraphs separated by "\n\n" */
    const opt_def *opts;
    size_t n_opts;
    size_t settings_size;
    void (*init)(void *settings); /* fills the defaults */
    void (*fini)(void *settings); /* frees what init allocated (may be NULL) */
    const opt_note *notes;
    size_t n_notes;
    const opt_exit *exits;
    size_t n_exits;
} opt_command;

/* The parser's state: what was given, and the strings it copied. */
typedef struct opt_parsed {
    bool given[128]; /* by row */
    char **owned;    /* split list items */
    size_t n_owned;
    int first_operand; /* argv index of the first operand */
} opt_parsed;

/* Parses argv (argv[0] is the subcommand's name) into settings, which
 * init has filled. Returns 0; 1 when --help was printed to stdout; -1 after
 * an error was told on stderr (followed by a "Try ... --help" line). */
int opt_parse(const opt_command *cmd, void *settings, opt_parsed *p, int argc, char **argv);

/* Frees the lists opt_parse() built into settings and the strings it copied. */
void opt_free(const opt_command *cmd, void *settings, opt_parsed *p);

/* True when the row named name was given on the command line. */
bool opt_given(const opt_command *cmd, const opt_parsed *p, const char *name);

/* Tells stderr "sieve CMD: --NAME: why" and the "Try" line. */
void opt_fail(const opt_command *cmd, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Writes the whole --help text. */
void opt_help(const opt_command *cmd, FILE *out);

/* The man page's OPTIONS, EXIT STATUS and notes sections for cmd, in roff. */
void opt_man(const opt_command *cmd, FILE *out);

/* Writes text as roff: escapes backslashes and dashes, protects line starts. */
void opt_roff(FILE *out, const char *text);

/* Checks the table itself: each field's size fits its kind, names and
 * letters are unique. Returns 0, or -1 after telling err what is wrong. */
int opt_check_table(const opt_command *cmd, FILE *err);

/* The bash function _sieve_NAME that completes cmd's options; see docs.c. */
void opt_bash(const opt_command *cmd, FILE *out);

#endif
