#!/bin/bash
# Smoke test of `sieve bench`: a small run exits 0 and writes one CSV row
# per (n, p, contestant); the exact frontier enqueues every synthetic URL
# (they are distinct by construction); the Bloom seen-sets are smaller than
# the exact one; bad arguments exit 2.
set -u
sieve=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

if ! "$sieve" bench --n 1000,5000 --csv "$dir/out.csv" >"$dir/stdout" 2>"$dir/stderr"; then
    fail "sieve bench exited $?"
    cat "$dir/stdout" "$dir/stderr"
fi
grep -q '^sieve bench --n 1000,5000 --csv ' "$dir/stdout" || fail "command line not echoed"
grep -q 'Targets' "$dir/stdout" || fail "no targets section"

rows=$(($(wc -l <"$dir/out.csv") - 1))
[ "$rows" -eq 6 ] || fail "expected 6 CSV rows (2 n x 3 contestants), got $rows"
head -1 "$dir/out.csv" | grep -q '^n,fp_rate,contestant,' || fail "bad CSV header"

# column numbers from the header, so the checks survive new columns
col() { head -1 "$dir/out.csv" | tr ',' '\n' | grep -nx "$1" | cut -d: -f1; }
c_n=$(col n) c_name=$(col contestant) c_bytes=$(col seen_bytes) c_enq=$(col enqueued)
for n in 1000 5000; do
    get() { awk -F, -v n="$n" -v c="$1" -v k="$2" -v nc="$c_n" -v cc="$c_name" \
        '$nc == n && $cc == c { print $k }' "$dir/out.csv"; }
    exact=$(get exact "$c_bytes")
    [ -n "$exact" ] || { fail "n=$n: no exact row"; continue; }
    [ "$(get exact "$c_enq")" = "$n" ] || fail "n=$n: exact enqueued $(get exact "$c_enq"), not $n"
    for c in bloom classic; do
        b=$(get "$c" "$c_bytes")
        [ -n "$b" ] || { fail "n=$n: no $c row"; continue; }
        [ "$b" -lt "$exact" ] || fail "n=$n: $c seen-set $b bytes is not below exact's $exact"
        e=$(get "$c" "$c_enq")
        [ "$e" -le "$n" ] && [ "$e" -gt $((n * 9 / 10)) ] || fail "n=$n: $c enqueued $e of $n"
    done
done

for bad in "--n 0" "--n 1e5x" "--fp-rate 1" "--fp-rate 0.01,,0.1" "--reps 0" "--plot x.pdf" \
    "--bogus" "extra"; do
    # shellcheck disable=SC2086
    "$sieve" bench $bad >/dev/null 2>"$dir/err"
    st=$?
    [ "$st" -eq 2 ] || fail "'sieve bench $bad' exited $st, not 2"
    [ -s "$dir/err" ] || fail "'sieve bench $bad' gave no message"
done

[ "$fails" -eq 0 ] && echo "ok" || exit 1
