#!/usr/bin/env bash
# test-cmd-docs.sh - the man page and the bash completion built with sieve
# list every option `sieve crawl --help` names, and are what the command
# writes now.
#
# usage: test-cmd-docs.sh SIEVE MANPAGE COMPLETION
set -u
sieve=$1 man=$2 completion=$3
fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

help=$("$sieve" crawl --help) || fail "sieve crawl --help exits $?"
mapfile -t opts < <(grep -oE -- '--[a-z][a-z0-9-]*' <<<"$help" | sort -u)
# The help names about fifty options; a handful means the extraction broke.
((${#opts[@]} >= 40)) || fail "only ${#opts[@]} long options in sieve crawl --help"

# The generated files are what the command writes.
cmp -s "$man" <("$sieve" help --man) || fail "$man differs from 'sieve help --man'"
cmp -s "$completion" <("$sieve" help --bash-completion) ||
    fail "$completion differs from 'sieve help --bash-completion'"

# The man page: each option heads an entry (the line after .TP), with roff
# escapes taken out.
mapfile -t headings < <(awk 'prev == ".TP" { print } { prev = $0 }' "$man" |
    sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g')
for o in "${opts[@]}"; do
    found=0
    for h in "${headings[@]}"; do
        if [[ " $h " =~ [^a-z0-9-]$o[^a-z0-9-] ]]; then
            found=1
            break
        fi
    done
    ((found)) || fail "the man page has no entry for $o"
done
for s in "EXIT STATUS" SIGNALS; do
    grep -q "^\.SH \"$s\"" "$man" || fail "the man page has no $s section"
done
for code in 0 2 3 4 130; do
    awk -v c="$code" 'prev == ".TP" && $0 == ".B " c { ok = 1 } { prev = $0 } END { exit !ok }' \
        "$man" || fail "the man page does not explain exit status $code"
done
if command -v groff >/dev/null; then
    warnings=$(groff -man -Tutf8 -ww -z "$man" 2>&1)
    [[ -z $warnings ]] || fail "groff warns about the man page: $warnings"
fi

# The completion, as bash runs it: COMP_WORDS and COMP_CWORD in, COMPREPLY out.
complete_words() {
    bash -c '
        source "$1" || exit 1
        shift
        COMP_WORDS=("$@")
        COMP_CWORD=$(($# - 1))
        _sieve
        printf "%s\n" "${COMPREPLY[@]}"
    ' complete "$completion" "$@"
}
offered=$(complete_words sieve crawl --) || fail "the completion script does not run"
for o in "${opts[@]}"; do
    grep -qx -- "$o" <<<"$offered" || fail "the completion does not offer $o"
done
grep -qx -- "--sort-query" <<<"$(complete_words sieve crawl --so)" ||
    fail "the completion does not complete the prefix --so"
[[ $(complete_words sieve crawl --scope "" | sort | tr '\n' ' ') == "any domain host " ]] ||
    fail "the completion does not offer the scopes after --scope"
[[ $(complete_words sieve crawl --seen=ex) == exact ]] ||
    fail "the completion does not complete --seen=ex"
[[ $(complete_words sieve crawl --seen = "" | sort | tr '\n' ' ') == "bloom exact " ]] ||
    fail "the completion does not offer the seen-sets after '--seen ='"
[[ -z $(complete_words sieve crawl --workers "") ]] ||
    fail "the completion offers something for the number of --workers"
grep -qx crawl <<<"$(complete_words sieve cr)" || fail "the completion does not offer crawl"

if ((fails > 0)); then
    echo "$fails failures"
    exit 1
fi
echo "ok: ${#opts[@]} options in the man page and the completion"
