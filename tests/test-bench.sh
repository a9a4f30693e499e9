#!/bin/bash
# Smoke test of `sieve bench`.
#
# The whole frontier (the default): a small run exits 0 and writes one CSV
# row per (n, p, contestant); the exact frontier enqueues every synthetic
# URL (they are distinct by construction) and the Bloom ones nearly all,
# the two Bloom frontiers the same count (same bits); every URL stays
# queued, bloom+disk's past its budget in the journal, which the state
# directory's size shows and which reopening queues again; --hosts bounds
# the hosts; the states are removed. The seen-set alone (--seen-set): its
# rows as before. Bad arguments exit 2.
set -u
sieve=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# column numbers from a CSV's header, so the checks survive new columns
col() { head -1 "$1" | tr ',' '\n' | grep -nx "$2" | cut -d: -f1; }
# get CSV N C COLUMN: the value of COLUMN in the row of contestant C at n=N
get() {
    local c_n c_name c_k
    c_n=$(col "$1" n) c_name=$(col "$1" contestant) c_k=$(col "$1" "$4")
    awk -F, -v n="$2" -v c="$3" -v nc="$c_n" -v cc="$c_name" -v k="$c_k" \
        '$nc == n && $cc == c { print $k }' "$1"
}

# ---- the whole frontier ----
csv=$dir/frontier.csv
mkdir "$dir/tmp"
if ! TMPDIR=$dir/tmp "$sieve" bench --n 1000,5000 --queue-memory 64K --csv "$csv" \
    >"$dir/stdout" 2>"$dir/stderr"; then
    fail "sieve bench exited $?"
    cat "$dir/stdout" "$dir/stderr"
fi
grep -q '^sieve bench --n 1000,5000 --queue-memory 64K --csv ' "$dir/stdout" ||
    fail "command line not echoed"
grep -q 'Targets' "$dir/stdout" || fail "no targets section"
for t in 'bloom+disk resident <= 2 bytes/URL' 'exact+ram / bloom+disk resident' \
    'bloom+disk push spilling / filter add' "reopen bloom+disk's state"; do
    grep -qF "$t" "$dir/stdout" || fail "no target line '$t'"
done
[ -z "$(ls -A "$dir/tmp")" ] || fail "states left in TMPDIR: $(ls -A "$dir/tmp")"

rows=$(($(wc -l <"$csv") - 1))
[ "$rows" -eq 8 ] || fail "expected 8 CSV rows (2 n x 4 contestants), got $rows"
head -1 "$csv" | grep -q '^n,fp_rate,hosts,queue_memory,contestant,' || fail "bad CSV header"
for n in 1000 5000; do
    [ "$(get "$csv" $n exact+ram enqueued)" = "$n" ] ||
        fail "n=$n: exact+ram enqueued '$(get "$csv" $n exact+ram enqueued)', not $n"
    for c in bloom+disk bloom+ram exact+ram filter; do
        [ "$(get "$csv" $n $c status)" = ok ] || { fail "n=$n: $c did not run"; continue; }
        rss=$(get "$csv" $n $c rss_growth_bytes)
        [ "${rss:-0}" -gt 0 ] || fail "n=$n: $c resident growth '$rss'"
        ns=$(get "$csv" $n $c ns_per_push_median)
        awk -v v="$ns" 'BEGIN { exit !(v > 0) }' || fail "n=$n: $c ns per push '$ns'"
    done
    for c in bloom+disk bloom+ram filter; do
        e=$(get "$csv" $n $c enqueued)
        [ "$e" -le "$n" ] && [ "$e" -gt $((n * 9 / 10)) ] || fail "n=$n: $c enqueued $e of $n"
    done
    d=$(get "$csv" $n bloom+disk enqueued)
    [ "$d" = "$(get "$csv" $n bloom+ram enqueued)" ] ||
        fail "n=$n: bloom+disk enqueued $d, bloom+ram $(get "$csv" $n bloom+ram enqueued)"
    # nothing popped: every URL enqueued is still queued, in RAM or spilled
    [ "$(get "$csv" $n bloom+ram in_ram)" = "$(get "$csv" $n bloom+ram enqueued)" ] ||
        fail "n=$n: bloom+ram does not hold its queue in RAM"
    ram=$(get "$csv" $n bloom+disk in_ram) spilled=$(get "$csv" $n bloom+disk spilled)
    [ "$spilled" -gt 0 ] || fail "n=$n: bloom+disk spilled nothing past a 64K budget"
    [ $((ram + spilled)) -eq "$d" ] || fail "n=$n: bloom+disk in RAM $ram + spilled $spilled != $d"
    [ "$(get "$csv" $n bloom+disk recovered)" = "$d" ] ||
        fail "n=$n: reopening queued $(get "$csv" $n bloom+disk recovered) again, not $d"
    # the journal holds every URL: more than 30 bytes each
    disk=$(get "$csv" $n bloom+disk disk_apparent_bytes)
    [ "${disk:-0}" -gt $((n * 30)) ] || fail "n=$n: bloom+disk state of '$disk' bytes"
    [ -n "$(get "$csv" $n bloom+disk reopen_s_median)" ] || fail "n=$n: no reopen time"
    [ -n "$(get "$csv" $n bloom+disk ns_per_push_spilling_median)" ] ||
        fail "n=$n: no ns per push while spilling"
    for c in bloom+ram exact+ram filter; do
        [ -z "$(get "$csv" $n $c disk_bytes)" ] || fail "n=$n: $c has disk bytes"
    done
done

# --hosts: the URLs come from that many hosts; --dir: states made there, removed
mkdir "$dir/states"
if ! "$sieve" bench --n 3000 --reps 1 --absent 0 --hosts 20 --dir "$dir/states" \
    --csv "$dir/hosts.csv" >"$dir/stdout" 2>"$dir/stderr"; then
    fail "sieve bench --hosts 20 exited $?"
    cat "$dir/stdout" "$dir/stderr"
fi
h=$(get "$dir/hosts.csv" 3000 bloom+ram hosts_seen)
[ "${h:-0}" -gt 0 ] && [ "$h" -le 20 ] || fail "--hosts 20: bloom+ram saw '$h' hosts"
[ -z "$(ls -A "$dir/states")" ] || fail "--dir: states left: $(ls -A "$dir/states")"

# ---- the seen-set alone ----
csv=$dir/seen.csv
if ! "$sieve" bench --seen-set --n 1000,5000 --csv "$csv" >"$dir/stdout" 2>"$dir/stderr"; then
    fail "sieve bench --seen-set exited $?"
    cat "$dir/stdout" "$dir/stderr"
fi
grep -q 'Targets' "$dir/stdout" || fail "--seen-set: no targets section"
rows=$(($(wc -l <"$csv") - 1))
[ "$rows" -eq 6 ] || fail "--seen-set: expected 6 CSV rows (2 n x 3 contestants), got $rows"
head -1 "$csv" | grep -q '^n,fp_rate,contestant,' || fail "--seen-set: bad CSV header"
for n in 1000 5000; do
    exact=$(get "$csv" $n exact seen_bytes)
    [ -n "$exact" ] || { fail "n=$n: no exact row"; continue; }
    [ "$(get "$csv" $n exact enqueued)" = "$n" ] ||
        fail "n=$n: exact enqueued $(get "$csv" $n exact enqueued), not $n"
    for c in bloom classic; do
        b=$(get "$csv" $n $c seen_bytes)
        [ -n "$b" ] || { fail "n=$n: no $c row"; continue; }
        [ "$b" -lt "$exact" ] || fail "n=$n: $c seen-set $b bytes is not below exact's $exact"
        e=$(get "$csv" $n $c enqueued)
        [ "$e" -le "$n" ] && [ "$e" -gt $((n * 9 / 10)) ] || fail "n=$n: $c enqueued $e of $n"
    done
done

for bad in "--n 0" "--n 1e5x" "--fp-rate 1" "--fp-rate 0.01,,0.1" "--reps 0" "--plot x.pdf" \
    "--hosts 0" "--queue-memory 0" "--queue-memory 12X" "--bogus" "extra"; do
    # shellcheck disable=SC2086
    "$sieve" bench $bad >/dev/null 2>"$dir/err"
    st=$?
    [ "$st" -eq 2 ] || fail "'sieve bench $bad' exited $st, not 2"
    [ -s "$dir/err" ] || fail "'sieve bench $bad' gave no message"
done

[ "$fails" -eq 0 ] && echo "ok" || exit 1
