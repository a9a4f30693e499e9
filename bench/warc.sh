#!/usr/bin/env bash
# bench/warc.sh - what archiving costs a crawl: `sieve crawl` with and
# without --warc on the same site, in the same run.
#
# The site and nginx are crawl.sh's (bench/gen-site.c's light pages of
# about 7 KB with 20 links, or with --site dense bench/gen-dense.c's pages
# shaped like a documentation site's; served on 127.0.0.1 with keepalive,
# gzip off)
# and every crawl is crawl.sh's "sieve" row: --workers W --concurrency
# C/W --delay 0 --host-connections C --ignore-robots --quiet -o FILE. The
# kinds of crawl, run in turn in each round so that a change in the
# machine's load hits them alike:
#
#   none   no archive
#   warc   --warc WORKDIR/runs/bench.warc (plain)
#   gz     --warc WORKDIR/runs/bench.warc.gz (with --gz)
#   tmpfs  --warc DIR/bench.warc on a tmpfs (with --tmpfs DIR): the plain
#          archive without the disk's part (ext4's write path, writeback,
#          the fsyncs and the disk's interrupts), so that a run splits
#          what the crawler's own work costs from what the file system's does
#
# Before each crawl the archive of the one before is removed, the site
# read into the page cache again (warm_site in crawl.sh), the disk synced
# and two seconds left for the file system to settle, so that no crawl pays
# for another's writeback or deletion, or for the site's pages coming back
# from the disk. Archives kept instead made the later rounds slower (the
# system time of a crawl with an archive grew from 0.5 to 1 s after the
# third round here). With --base BIN, a second sieve binary runs the same
# kinds in the same rounds (a before/after of a change). Each crawl runs
# under /usr/bin/time: wall, user and system CPU, peak RSS and voluntary
# context switches of the crawler; the machine's idle time during the
# crawl (/proc/stat: idle and iowait, in CPU seconds over all cores) says
# whether the cores were saturated, and the page-cache refaults during it
# (/proc/vmstat) whether something, most often nginx reading the site,
# waited for the disk.
#
# The report: one row per crawl, then per binary the medians of each kind
# and the median over the rounds of each round's pages/s with an archive
# against the same round's without, then those medians again with 95%
# bootstrap intervals (and with --base, new's pages/s against base's,
# round by round). Rounds here differ by up to a fifth, so a median of ten
# moves by some 0.05 between runs: the intervals say what a run can tell.
#
# Exit status: 0 when every crawl ran, 1 when setup or a crawl failed, 2
# for bad arguments.
set -euo pipefail

# crawl.sh's helpers: installing what is missing, building sieve, the port,
# the site, nginx, medians. Sourcing it runs nothing.
# shellcheck source=bench/crawl.sh
source "$(dirname "$0")/crawl.sh"

die() {
    echo "warc.sh: $*" >&2
    exit 1
}

bad() {
    echo "warc.sh: $*" >&2
    echo "Try 'bench/warc.sh --help'." >&2
    exit 2
}

usage() {
    cat <<'EOF'
usage: bench/warc.sh [OPTIONS] [WORKDIR]

Crawls one generated site served by nginx on 127.0.0.1 with `sieve crawl`,
without an archive and with --warc, alternating, and prints pages/s, CPU and
memory of each, and the ratio of pages/s with an archive to without.

  --workdir DIR       site, nginx prefix and run files (default /tmp/sieve-crawlbench)
  --pages N           site size in pages (default 20000)
  --site KIND         light (bench/gen-site.c, the default) or dense
                      (bench/gen-dense.c), as in bench/crawl.sh
  --reps R            rounds; the report shows medians (default 5)
  --gz                also crawl with a .gz archive (compressed on threads)
  --tmpfs DIR         also crawl with a plain archive in DIR, a tmpfs (such as
                      /dev/shm): the archive's cost without the disk's
  --base PATH         a second sieve binary, run in the same rounds
  --concurrency N     total concurrent transfers (default 16)
  --workers W         sieve worker threads; each gets N/W transfers (default 2)
  --port P            nginx port on 127.0.0.1 (default: first free from 18080)
  --nginx-workers K   nginx worker_processes (default 2)
  --sieve PATH        the sieve binary (default: build-release/src/cmd/sieve of
                      this checkout, built with meson if missing)
  --sieve-args ARGS   extra arguments for every sieve crawl
  --timeout S         seconds one crawl may take before it is stopped (default 600)
  --no-install        never run apt-get; fail if something is missing
  -h, --help          this text
EOF
}

PAGES=20000
GZ=0
REPS=5
KINDS="none warc"
BASE=""
TMPFS=""
CMDLINE="bench/warc.sh $*"

parse_warc_args() {
    while (($#)); do
        case $1 in
        --pages) PAGES=${2:?}; shift 2; continue ;;
        --site) SITE=${2:?}; shift 2; continue ;;
        --gz) GZ=1; shift; continue ;;
        --tmpfs) TMPFS=${2:?}; shift 2; continue ;;
        --base) BASE=${2:?}; shift 2; continue ;;
        esac
        shared_option "$@"
        ((TOOK)) || bad "unknown option $1"
        shift "$TOOK"
    done
    local v
    for v in "$PAGES" "$CONC" "$WORKERS" "$REPS" "$NGINX_WORKERS" "$LIMIT"; do
        is_uint "$v" || bad "'$v' is not a positive integer"
    done
    [[ $SITE == light || $SITE == dense ]] || bad "--site is light or dense, not '$SITE'"
    ((CONC % WORKERS == 0)) || bad "--concurrency $CONC is not a multiple of --workers $WORKERS"
    if [[ -n $PORT ]] && { ! is_uint "$PORT" || ((PORT > 65535)); }; then
        bad "bad port '$PORT'"
    fi
    [[ -z $BASE || -x $BASE ]] || bad "--base $BASE: not an executable"
    ((GZ)) && KINDS="$KINDS gz"
    if [[ -n $TMPFS ]]; then
        [[ -d $TMPFS && -w $TMPFS ]] || bad "--tmpfs $TMPFS: not a writable directory"
        [[ $(df --output=fstype "$TMPFS" | tail -n 1) == tmpfs ]] || bad "--tmpfs $TMPFS: not on a tmpfs"
        KINDS="$KINDS tmpfs"
    fi
    [[ $WORKDIR == /* ]] || WORKDIR=$PWD/$WORKDIR
}

# crawl_kind BIN LABEL KIND ROUND: one crawl, a row on stdout and in $RESULTS.
crawl_kind() {
    local bin=$1 label=$2 kind=$3 rep=$4 tag=$2-$3
    local tf=$WORKDIR/runs/$tag-$rep.time out=$WORKDIR/runs/$tag-$rep.out
    local rec=$WORKDIR/runs/$tag-$rep.jsonl archive=() rc=0
    rm -f "$WORKDIR"/runs/*.warc "$WORKDIR"/runs/*.warc.gz
    if [[ -n $TMPFS ]]; then rm -f "$TMPFS"/sieve-warcbench-*.warc; fi
    warm_site "$SITE_DIR"
    sync
    sleep 2
    case $kind in
    warc) archive=(--warc "$WORKDIR/runs/$tag-$rep.warc") ;;
    gz) archive=(--warc "$WORKDIR/runs/$tag-$rep.warc.gz") ;;
    tmpfs) archive=(--warc "$TMPFS/sieve-warcbench-$tag-$rep.warc") ;;
    esac
    local idle0 idle1 refaults0 refaults1
    refaults0=$(refaults)
    idle0=$(idle_ticks)
    # shellcheck disable=SC2086 # SIEVE_ARGS is split into arguments on purpose
    /usr/bin/time -f '%e %U %S %M %w' -o "$tf" timeout --foreground -k 10 "$LIMIT" \
        "$bin" crawl --workers "$WORKERS" --concurrency "$((CONC / WORKERS))" --delay 0 \
        --host-connections "$CONC" --ignore-robots --quiet -o "$rec" $SIEVE_ARGS "${archive[@]}" "$URL" \
        >"$out" 2>&1 || rc=$?
    idle1=$(idle_ticks)
    refaults1=$(refaults)
    if ((rc != 0)); then
        echo "warc.sh: $label $kind (round $rep) exited $rc; its output:" >&2
        tail -n 5 "$out" >&2
        FAILED=1
    fi
    local wall user sys rss vcs records
    read -r wall user sys rss vcs < <(tail -n 1 "$tf" 2>/dev/null || echo "0 0 0 0 0")
    [[ $wall =~ ^[0-9.]+$ ]] || { wall=0 user=0 sys=0 rss=0 vcs=0; }
    records=0
    [[ -f $rec ]] && records=$(wc -l <"$rec")
    rm -f "$rec"
    local idle
    idle=$(awk -v a="$idle0" -v b="$idle1" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", (b - a) / hz }')
    local paged=$((refaults1 - refaults0))
    echo "$tag $rep $rc $wall $user $sys $rss $vcs $records $idle $paged" >>"$RESULTS"
    awk -v l="$label" -v k="$kind" -v r="$rep" -v w="$wall" -v u="$user" -v s="$sys" -v m="$rss" \
        -v v="$vcs" -v n="$records" -v i="$idle" -v f="$paged" 'BEGIN {
        printf "  %-4s %-4s round %2d: %6d records %6.2f s %7.0f pages/s  user %5.2f s  sys %5.2f s  %6.1f MiB  %5d waits  idle %5.2f s  %5d refaults\n",
        l, k, r, n, w, (w > 0 ? n / w : 0), u, s, m / 1024, v, i, f }'
}

# The machine's idle and iowait ticks so far, all cores (/proc/stat).
idle_ticks() {
    awk '$1 == "cpu" { print $5 + $6; exit }' /proc/stat
}

# col TAG COLUMN: a column of $RESULTS over the rounds, one value a line.
col() {
    awk -v t="$1" -v c="$2" '$1 == t { print $c }' "$RESULTS"
}

med() {
    sort -g | awk '{ v[NR] = $1 } END {
        if (NR == 0) print 0
        else if (NR % 2) print v[(NR + 1) / 2]
        else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

warc_report() {
    echo
    echo "Medians over $REPS rounds. pages/s = records / wall s; CPU us/page = (user + system) / records;"
    echo "waits = voluntary context switches of the crawler; idle = the machine's idle and iowait CPU s"
    echo "during the crawl; refaults = page-cache pages read back from the disk during the crawl, any"
    echo "process's (the server's reads of an evicted site among them); ratio = pages/s against \"none\""
    echo "of the same round and binary, the median of the rounds' ratios (their range in brackets)."
    echo
    printf '%-6s %-5s %8s %9s %7s %7s %12s %8s %6s %6s %8s  %s\n' binary kind records pages/s "user s" \
        "sys s" "CPU us/page" "RSS MiB" waits idle refaults ratio
    local label kind
    for label in $LABELS; do
        for kind in $KINDS; do
            local t=$label-$kind
            awk -v l="$label" -v k="$kind" -v n="$(col "$t" 9 | med)" -v w="$(col "$t" 4 | med)" \
                -v u="$(col "$t" 5 | med)" -v s="$(col "$t" 6 | med)" -v m="$(col "$t" 7 | med)" \
                -v v="$(col "$t" 8 | med)" -v i="$(col "$t" 10 | med)" -v f="$(col "$t" 11 | med)" \
                -v c="$(awk -v t="$t" '$1 == t && $9 > 0 { print 1e6 * ($5 + $6) / $9 }' "$RESULTS" | med)" \
                -v ratio="$(ratios "$label" "$kind")" 'BEGIN {
                printf "%-6s %-5s %8d %9.0f %7.2f %7.2f %12.1f %8.1f %6d %6.2f %8d  %s\n",
                l, k, n, (w > 0 ? n / w : 0), u, s, c, m / 1024, v, i, f, ratio }'
        done
    done
}

# ratios LABEL KIND: "median [min max]" of the rounds' pages/s ratios.
ratios() {
    [[ $2 == none ]] && { echo "-"; return; }
    join <(awk -v t="$1-none" '$1 == t && $4 > 0 { print $2, $9 / $4 }' "$RESULTS" | sort) \
        <(awk -v t="$1-$2" '$1 == t && $4 > 0 { print $2, $9 / $4 }' "$RESULTS" | sort) |
        awk '{ print $3 / $2 }' | sort -g | awk '{ v[NR] = $1 } END {
            if (NR == 0) { print "-"; exit }
            m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
            printf "%.3f [%.2f %.2f]\n", m, v[1], v[NR] }'
}

# paired A B: each round's pages/s of A (LABEL-KIND) over B's, one a line.
paired() {
    join <(awk -v t="$2" '$1 == t && $4 > 0 { print $2, $9 / $4 }' "$RESULTS" | sort) \
        <(awk -v t="$1" '$1 == t && $4 > 0 { print $2, $9 / $4 }' "$RESULTS" | sort) |
        awk '{ print $3 / $2 }'
}

# median_ci: of the numbers read, one a line, "median [lo hi]": lo and hi
# hold 95% of the medians of 2,000 resamples of them (a bootstrap, seeded,
# so the same numbers give the same interval). On this machine a set's
# median moves by some 0.05 from one run to the next; the interval says
# how far it can.
median_ci() {
    awk 'function median(a, n,   i, j, x, b) {
            for (i = 1; i <= n; i++) {
                x = a[i]
                for (j = i - 1; j >= 1 && b[j] > x; j--)
                    b[j + 1] = b[j]
                b[j + 1] = x
            }
            return n % 2 ? b[(n + 1) / 2] : (b[n / 2] + b[n / 2 + 1]) / 2
        }
        { v[++n] = $1 }
        END {
            if (n == 0) { print "-"; exit }
            srand(1)
            for (r = 1; r <= 2000; r++) {
                for (i = 1; i <= n; i++)
                    s[i] = v[int(rand() * n) + 1]
                m[r] = median(s, n)
            }
            # the 2,000 medians in order (an insertion sort: awk has none)
            for (r = 1; r <= 2000; r++)
                sorted[r] = m[r]
            for (i = 2; i <= 2000; i++) {
                x = sorted[i]
                for (j = i - 1; j >= 1 && sorted[j] > x; j--)
                    sorted[j + 1] = sorted[j]
                sorted[j + 1] = x
            }
            printf "%.3f [%.3f %.3f]\n", median(v, n), sorted[50], sorted[1951]
        }'
}

# The intervals of the ratios, and with --base, of new's pages/s against
# base's, kind by kind, round by round.
warc_intervals() {
    echo
    echo "Medians of the rounds' ratios with 95% bootstrap intervals:"
    local label kind
    for label in $LABELS; do
        for kind in $KINDS; do
            [[ $kind == none ]] && continue
            printf '  %-5s %-5s pages/s against none:   %s\n' "$label" "$kind" \
                "$(paired "$label-$kind" "$label-none" | median_ci)"
        done
    done
    [[ -n $BASE ]] || return 0
    for kind in $KINDS; do
        printf '  new   %-5s pages/s against base %-5s %s\n' "$kind" "$kind:" \
            "$(paired "new-$kind" "base-$kind" | median_ci)"
    done
}

warc_main() {
    SITE=light
    parse_warc_args "$@"
    prepare_bench
    RESULTS=$WORKDIR/runs/warc-results.txt
    : >"$RESULTS"
    rm -f "$WORKDIR"/runs/*.warc "$WORKDIR"/runs/*.warc.gz
    sync
    FAILED=0
    LABELS="new"
    [[ -n $BASE ]] && LABELS="base new"

    local started
    started=$(date +%s)
    echo "Archive benchmark: sieve crawl without an archive and with --warc ($KINDS)"
    echo "command: $CMDLINE"
    echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'); $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo |
        cut -d: -f2 | sed 's/^ //')); $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo);" \
        "load average $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "new: $("$SIEVE" --version 2>&1 | head -n1) ($SIEVE)"
    [[ -n $BASE ]] && echo "base: $("$BASE" --version 2>&1 | head -n1) ($BASE)"
    echo "archive: $(df -T "$WORKDIR/runs" | awk 'NR == 2 { print $2 }') file system under $WORKDIR/runs"
    if [[ -n $TMPFS ]]; then echo "tmpfs: the archive of kind tmpfs under $TMPFS"; fi
    make_site "$PAGES"
    read -r _ pages _ files _ missing _ urls <<<"$SITE_COUNTS"
    echo "site: $pages HTML pages, $files files, $missing missing pages linked: $urls URLs; $SITE_NOTE"
    start_nginx "$SITE_DIR" >/dev/null
    URL="http://127.0.0.1:$PORT/index.html"
    echo "sieve crawl --workers $WORKERS --concurrency $((CONC / WORKERS)) --delay 0" \
        "--host-connections $CONC --ignore-robots --quiet -o FILE ${SIEVE_ARGS:+$SIEVE_ARGS }[--warc FILE] $URL"
    echo
    local rep label kind
    for ((rep = 1; rep <= REPS; rep++)); do
        for label in $LABELS; do
            local bin=$SIEVE
            [[ $label == base ]] && bin=$BASE
            for kind in $KINDS; do
                crawl_kind "$bin" "$label" "$kind" "$rep"
            done
        done
    done
    stop_nginx
    rm -f "$WORKDIR"/runs/*.warc "$WORKDIR"/runs/*.warc.gz
    if [[ -n $TMPFS ]]; then rm -f "$TMPFS"/sieve-warcbench-*.warc; fi
    warc_report
    warc_intervals
    echo
    echo "total time $(($(date +%s) - started)) s; load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
    ((FAILED == 0)) || exit 1
}

warc_main "$@"
