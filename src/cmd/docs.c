/* docs.c - `sieve help`: the usage, a command's --help, and, for the
 * build, the man page sieve(1) (--man) and the bash completion script
 * (--bash-completion), all written from the subcommand list and the
 * option tables, so that they never disagree with the parser. */
#include <stdio.h>
#include <string.h>

#include "commands.h"

static const char man_description[] =
    "sieve is a web crawler whose URL frontier is a FIFO queue plus a Bloom filter of the URLs "
    "already seen. Its frontier is a C library, libsieve, meant to be embedded in other "
    "crawlers; the sieve command crawls from a seed list with it and benchmarks its memory "
    "against an exact hash-set frontier.";

static void man_synopsis(const subcommand *sc, FILE *out)
{
    fprintf(out, ".B sieve %s\n", sc->name);
    const char *args = sc->synopsis;
    if (sc->options != NULL) {
        fputs("[\\fIOPTIONS\\fR] ", out);
        args = sc->options->operands;
    }
    if (args != NULL && *args != '\0') {
        fputs("\\fI", out);
        opt_roff(out, args);
        fputs("\\fR\n", out);
    }
}

static int man(FILE *out)
{
    for (size_t i = 0; i < n_subcommands; i++)
        if (subcommands[i].options != NULL && opt_check_table(subcommands[i].options, stderr))
            return EXIT_FAILURE_RUN;
    fprintf(out, ".\\\" sieve(1), written by `sieve help --man` from the option tables.\n");
    fprintf(out, ".TH SIEVE 1 \"\" \"sieve %s\" \"User Commands\"\n", SIEVE_VERSION_STRING);
    fputs(".SH NAME\nsieve \\- a web crawler with a Bloom filter frontier\n.SH SYNOPSIS\n", out);
    for (size_t i = 0; i < n_subcommands; i++) {
        if (i > 0)
            fputs(".br\n", out);
        man_synopsis(&subcommands[i], out);
    }
    fputs(".SH DESCRIPTION\n", out);
    opt_roff(out, man_description);
    fputs("\n.PP\nCommands:\n", out);
    for (size_t i = 0; i < n_subcommands; i++) {
        fprintf(out, ".TP\n.B %s\n", subcommands[i].name);
        opt_roff(out, subcommands[i].summary);
        fputs(".\n", out);
    }
    for (size_t i = 0; i < n_subcommands; i++) {
        const opt_command *cmd = subcommands[i].options;
        if (cmd == NULL)
            continue;
        opt_man(cmd, out);
    }
    fputs(".SH \"SEE ALSO\"\n.BR curl (1),\n.BR wget (1)\n", out);
    return fflush(out) == 0 && !ferror(out) ? EXIT_OK : EXIT_FAILURE_RUN;
}

static int bash_completion(FILE *out)
{
    fputs("# bash completion for sieve(1), written by `sieve help --bash-completion`\n"
          "# from the option tables.\n"
          "\n"
          "_sieve_words()\n"
          "{\n"
          "    local cur=$1\n"
          "    shift\n"
          "    mapfile -t COMPREPLY < <(compgen -W \"$*\" -- \"$cur\")\n"
          "}\n"
          "\n"
          "_sieve_files()\n"
          "{\n"
          "    type compopt &>/dev/null && compopt -o filenames 2>/dev/null\n"
          "    mapfile -t COMPREPLY < <(compgen -f -- \"$1\")\n"
          "}\n"
          "\n",
          out);
    for (size_t i = 0; i < n_subcommands; i++) {
        if (subcommands[i].options != NULL) {
            opt_bash(subcommands[i].options, out);
            fputc('\n', out);
        }
    }
    fputs("_sieve()\n"
          "{\n"
          "    local cur=${COMP_WORDS[COMP_CWORD]} prev=\n"
          "    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}\n"
          "    COMPREPLY=()\n"
          "    # --option=value: one word, or three when '=' breaks words\n"
          "    if [[ $cur == --*=* ]]; then\n"
          "        prev=${cur%%=*}\n"
          "        cur=${cur#*=}\n"
          "    elif [[ $cur == = ]]; then\n"
          "        cur=\n"
          "    elif [[ $prev == = ]] && ((COMP_CWORD > 1)); then\n"
          "        prev=${COMP_WORDS[COMP_CWORD - 2]}\n"
          "    fi\n"
          "    if ((COMP_CWORD == 1)); then\n"
          "        _sieve_words \"$cur\"",
          out);
    for (size_t i = 0; i < n_subcommands; i++)
        fprintf(out, " %s", subcommands[i].name);
    fputs("\n        return\n"
          "    fi\n"
          "    case ${COMP_WORDS[1]} in\n",
          out);
    for (size_t i = 0; i < n_subcommands; i++)
        if (subcommands[i].options != NULL)
            fprintf(out, "    %s) _sieve_%s \"$cur\" \"$prev\" ;;\n", subcommands[i].name,
                    subcommands[i].options->name);
    fputs("    help) ((COMP_CWORD == 2)) && _sieve_words \"$cur\"", out);
    for (size_t i = 0; i < n_subcommands; i++)
        fprintf(out, " %s", subcommands[i].name);
    fputs(" ;;\n"
          "    esac\n"
          "}\n"
          "complete -F _sieve sieve\n",
          out);
    return fflush(out) == 0 && !ferror(out) ? EXIT_OK : EXIT_FAILURE_RUN;
}

int cmd_help(int argc, char **argv)
{
    if (argc < 2) {
        commands_usage(stdout);
        return EXIT_OK;
    }
    const char *what = argv[1];
    if (strcmp(what, "--man") == 0)
        return man(stdout);
    if (strcmp(what, "--bash-completion") == 0)
        return bash_completion(stdout);
    for (size_t i = 0; i < n_subcommands; i++) {
        const subcommand *sc = &subcommands[i];
        if (strcmp(what, sc->name) != 0)
            continue;
        if (sc->options != NULL) {
            opt_help(sc->options, stdout);
            return EXIT_OK;
        }
        if (sc->run == cmd_help) {
            commands_usage(stdout);
            return EXIT_OK;
        }
        char *args[] = {(char *)sc->name, "--help", NULL};
        return sc->run(2, args);
    }
    fprintf(stderr, "sieve help: unknown command '%s'\n", what);
    commands_usage(stderr);
    return EXIT_USAGE;
}
