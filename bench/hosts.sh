#!/usr/bin/env bash
# bench/hosts.sh - many hosts against few: `sieve crawl`'s pages/s on one
# site spread over a few host names and over a thousand, in the same run.
#
# The site is bench/gen-site.c's (pages of about 7 KB, 20 links each)
# written with its HOSTS argument: page, file or missing page K is on host
# h<K mod HOSTS>.test and every link is absolute. The draws do not depend
# on HOSTS, so the sites for 4 and for 1000 hosts have the same pages, the
# same links and the same bytes; only the host each URL is on differs.
# nginx (crawl.sh's configuration: 127.0.0.1, keepalive, gzip off) serves
# the tree whatever the Host, with a robots.txt that allows everything.
#
# The names resolve to 127.0.0.1 through bench/resolve-test.c, preloaded
# into sieve (LD_PRELOAD): curl resolves every host as in a real crawl, in
# its resolver thread, with its DNS cache; only the lookup is local, after
# --dns-ms milliseconds (default 0) that stand for a name server's answer.
#
# Every crawl: sieve crawl --workers W --concurrency C/W --delay 0
# --host-connections K --scope any --allow-private, robots.txt on: each
# host costs a robots.txt fetch, a DNS resolution and connections of its
# own (curl reuses a connection only for its host name). K defaults to C,
# so that no per-host limit binds in either crawl and the comparison is of
# the engine's cost per host, not of politeness: with K below C/HOSTS the
# few-host crawl would run fewer transfers than the many-host one.
#
# With --wget2, wget2 crawls the same sites in the same run (`wget2 -q -r
# -l inf --max-threads=C --span-hosts -O /dev/null URL`, robots.txt on, its
# lookups through the same preloaded resolver), so the cost of many hosts
# can be set against another crawler's.
#
# The crawls alternate over the host counts (and tools), REPS times, each under
# `/usr/bin/time` (wall, CPU, peak RSS of the crawler); nginx is restarted
# on the next site between runs, outside the measured time. The table
# shows medians, and each count's pages/s against the first count's.
#
# Exit status: 0 when every crawl ran, 1 when setup or a crawl failed, 2
# for bad arguments.
set -euo pipefail

# crawl.sh's helpers: installing what is missing, building sieve, the port,
# nginx, medians. Sourcing it runs nothing.
# shellcheck source=bench/crawl.sh
source "$(dirname "$0")/crawl.sh"

die() {
    echo "hosts.sh: $*" >&2
    exit 1
}

bad() {
    echo "hosts.sh: $*" >&2
    echo "Try 'bench/hosts.sh --help'." >&2
    exit 2
}

usage() {
    cat <<'EOF'
usage: bench/hosts.sh [OPTIONS] [WORKDIR]

Crawls the same generated site spread over a few host names and over many
(*.test, resolved to 127.0.0.1 by a preloaded library), served by nginx on
127.0.0.1, with `sieve crawl`, alternating, and prints pages/s, CPU seconds
and peak resident memory for each host count.

  --workdir DIR       sites, nginx prefix and run files (default /tmp/sieve-hostsbench)
  --pages N           pages of the site (default 20000)
  --hosts LIST        host counts, space or comma separated; the first is the
                      baseline of the ratios (default 4,1000)
  --dns-ms MS         each resolution of a host name takes MS milliseconds (default 0)
  --concurrency C     total concurrent transfers (default 16)
  --workers W         sieve worker threads; each gets C/W transfers (default 2)
  --host-connections K  sieve --host-connections (default: C)
  --reps R            crawls per host count; the table shows medians (default 5)
  --port P            nginx port on 127.0.0.1 (default: first free from 18080)
  --nginx-workers N   nginx worker_processes (default 2)
  --sieve PATH        the sieve binary (default: build-release/src/cmd/sieve of
                      this checkout, built with meson if missing)
  --sieve-args ARGS   extra arguments for sieve crawl
  --wget2             crawl each site with wget2 too, alternating with sieve
  --timeout S         seconds one crawl may take before it is stopped (default 600)
  --no-install        never run apt-get; fail if something is missing
  -h, --help          this text
EOF
}

WORKDIR=/tmp/sieve-hostsbench
PAGES=20000
HOST_COUNTS="4 1000"
DNS_MS=0
REPS=5
HOST_CONN=""
TOOLS=sieve
CMDLINE="bench/hosts.sh $*"

parse_host_args() {
    while (($#)); do
        case $1 in
        --pages) PAGES=${2:?}; shift 2; continue ;;
        --hosts) HOST_COUNTS=${2//,/ }; shift 2; continue ;;
        --dns-ms) DNS_MS=${2:?}; shift 2; continue ;;
        --host-connections) HOST_CONN=${2:?}; shift 2; continue ;;
        --wget2) TOOLS="sieve wget2"; shift; continue ;;
        esac
        shared_option "$@"
        ((TOOK)) || bad "unknown option $1"
        shift "$TOOK"
    done
    HOST_CONN=${HOST_CONN:-$CONC}
    local v
    for v in "$PAGES" "$CONC" "$WORKERS" "$HOST_CONN" "$REPS" "$NGINX_WORKERS" "$LIMIT"; do
        is_uint "$v" || bad "'$v' is not a positive integer"
    done
    [[ $DNS_MS =~ ^[0-9]+$ ]] || bad "--dns-ms wants milliseconds, not '$DNS_MS'"
    [[ -n $HOST_COUNTS ]] || bad "no host count"
    for v in $HOST_COUNTS; do
        if ! is_uint "$v" || ((v > 100000)); then
            bad "host count '$v' is not in 1..100000"
        fi
    done
    ((CONC % WORKERS == 0)) || bad "--concurrency $CONC is not a multiple of --workers $WORKERS"
    if [[ -n $PORT ]] && { ! is_uint "$PORT" || ((PORT > 65535)); }; then
        bad "bad port '$PORT'"
    fi
    [[ $WORKDIR == /* ]] || WORKDIR=$PWD/$WORKDIR
}

# The preloaded resolver, compiled again when its source changed.
build_resolver() {
    RESOLVER=$WORKDIR/resolve-test.so
    if [[ ! -f $RESOLVER || $REPO/bench/resolve-test.c -nt $RESOLVER ]]; then
        cc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -shared -fPIC -o "$RESOLVER" \
            "$REPO/bench/resolve-test.c" -ldl || die "cannot compile bench/resolve-test.c"
    fi
}

# Writes (or reuses) the site over $1 hosts; sets HOST_SITE[$1] and
# HOST_SITE_COUNTS[$1]. The stamp records what the site was made from.
make_host_site() {
    local h=$1 dir=$WORKDIR/site-$PAGES-h$1 want
    want="$PAGES $PORT $h $(cksum <"$REPO/bench/gen-site.c" | cut -d' ' -f1)"
    HOST_SITE[$h]=$dir
    if [[ -f $dir/.stamp && $(head -n1 "$dir/.stamp") == "$want" ]]; then
        HOST_SITE_COUNTS[$h]=$(sed -n 2p "$dir/.stamp")
        return 0
    fi
    rm -rf "$dir"
    HOST_SITE_COUNTS[$h]=$("$GEN" "$dir" "$PAGES" "$PORT" "$h") || die "gen-site failed for $h hosts"
    printf '%s\n%s\n' "$want" "${HOST_SITE_COUNTS[$h]}" >"$dir/.stamp"
}

# TCP connections this machine has opened so far (/proc/net/snmp's
# ActiveOpens): nginx only accepts, so the difference over a crawl is the
# connections the crawler opened.
active_opens() {
    awk '$1 == "Tcp:" && $6 ~ /^[0-9]+$/ { print $6 }' /proc/net/snmp
}

# crawl_hosts TOOL H REP: one crawl of the site over H hosts with TOOL
# (sieve or wget2); appends a row to $RESULTS:
# TOOL-h<H> pages rep rc wall cpu rss_kib requests html_pages distinct records connections
crawl_hosts() {
    local tool=$1 h=$2 rep=$3 tag=$1-h$2
    local tf=$WORKDIR/runs/$tag-$rep.time out=$WORKDIR/runs/$tag-$rep.out
    local rec=$WORKDIR/runs/$tag-$rep.jsonl log=$NGINX_PREFIX/access.log rc=0
    local seed="http://h00000.test:$PORT/index.html" cmd
    if [[ $tool == wget2 ]]; then
        cmd=(env LD_PRELOAD="$RESOLVER" SIEVE_BENCH_DNS_MS="$DNS_MS" wget2 -q -r -l inf
            --max-threads="$CONC" --span-hosts -O /dev/null "$seed")
    else
        # shellcheck disable=SC2206
        cmd=(env LD_PRELOAD="$RESOLVER" SIEVE_BENCH_DNS_MS="$DNS_MS"
            "$SIEVE" crawl --workers "$WORKERS" --concurrency "$((CONC / WORKERS))"
            --delay 0 --host-connections "$HOST_CONN" --scope any --allow-private
            --quiet -o "$rec" $SIEVE_ARGS "$seed")
    fi
    : >"$log"
    local opens0 opens1
    opens0=$(active_opens)
    /usr/bin/time -f '%e %U %S %M' -o "$tf" timeout --foreground -k 10 "$LIMIT" "${cmd[@]}" \
        >"$out" 2>&1 || rc=$?
    opens1=$(active_opens)
    # wget2 exits 8 when a server answered an error, as the site's missing
    # pages make it.
    [[ $tool == wget2 && $rc == 8 ]] && rc=0
    if ((rc != 0)); then
        echo "hosts.sh: $tool's crawl over $h hosts (run $rep) exited $rc; its output:" >&2
        tail -n 5 "$out" >&2
        FAILED=1
    fi
    local wall user sys rss reqs html distinct records cpu
    read -r wall user sys rss < <(tail -n 1 "$tf" 2>/dev/null || echo "0 0 0 0")
    [[ $wall =~ ^[0-9.]+$ ]] || { wall=0 user=0 sys=0 rss=0; }
    reqs=$(wc -l <"$log")
    html=$(awk '$1 == 200 && $2 ~ /\.html$/ { print $2 }' "$log" | sort -u | wc -l)
    distinct=$(awk '{ print $2 }' "$log" | sort -u | wc -l)
    records=0
    [[ -f $rec ]] && records=$(wc -l <"$rec")
    rm -f "$rec"
    cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
    echo "$tag $PAGES $rep $rc $wall $cpu $rss $reqs $html $distinct $records $((opens1 - opens0))" >>"$RESULTS"
    printf '  %-5s %5d hosts run %d: exit %-3s %7d requests %7d pages %7d records %6d connections  %6.2f s  %6.2f CPU s  %6.1f MiB\n' \
        "$tool" "$h" "$rep" "$rc" "$reqs" "$html" "$records" "$((opens1 - opens0))" "$wall" "$cpu" \
        "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')"
}

host_report() {
    echo
    echo "Medians of $REPS runs per host count (pages: the fewest any run fetched)."
    echo "pages = distinct HTML URLs nginx answered 200; requests = all requests (robots.txt included);"
    echo "connections = TCP connections opened during the crawl (/proc/net/snmp ActiveOpens);"
    echo "pages/s = pages / wall s; CPU s = user + system of the crawler; peak RSS = GNU time %M;"
    echo "ratio = pages/s against the same tool's first host count."
    echo
    printf '%-6s %6s %8s %9s %11s %8s %9s %8s %13s %6s\n' tool hosts pages requests connections \
        "wall s" pages/s "CPU s" "peak RSS MiB" ratio
    local tool h
    for tool in $TOOLS; do
        local base=""
        for h in $HOST_COUNTS; do
            local t=$tool-h$h pages reqs conns wall cpu rss rate
            pages=$(least "$t" "$PAGES" 9)
            reqs=$(median "$t" "$PAGES" 8)
            conns=$(median "$t" "$PAGES" 12)
            wall=$(median "$t" "$PAGES" 5)
            cpu=$(median "$t" "$PAGES" 6)
            rss=$(median "$t" "$PAGES" 7)
            rate=$(awk -v p="$pages" -v w="$wall" 'BEGIN { print (w > 0 ? p / w : 0) }')
            base=${base:-$rate}
            awk -v t="$tool" -v h="$h" -v p="$pages" -v r="$reqs" -v w="$wall" -v c="$cpu" \
                -v m="$rss" -v x="$rate" -v b="$base" -v n="$conns" 'BEGIN {
                printf "%-6s %6d %8d %9d %11d %8.2f %9.0f %8.2f %13.1f %6.2f\n",
                t, h, p, r, n, w, x, c, m / 1024, (b > 0 ? x / b : 0) }'
        done
    done
}

host_main() {
    CONC=16
    WORKERS=2
    parse_host_args "$@"
    SITE=light
    prepare_bench
    build_resolver
    RESULTS=$WORKDIR/runs/results.txt
    : >"$RESULTS"
    FAILED=0
    declare -gA HOST_SITE HOST_SITE_COUNTS

    local started h rep tool
    started=$(date +%s)
    echo "Host benchmark: a crawl over few hosts and many, the same site ($TOOLS)"
    echo "command: $CMDLINE"
    echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'); $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo |
        cut -d: -f2 | sed 's/^ //')); $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo);" \
        "load average $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "sieve: $("$SIEVE" --version 2>&1 | head -n1) ($SIEVE)"
    echo "nginx: $("$NGINX" -v 2>&1 | sed 's/.*: //'), worker_processes $NGINX_WORKERS, 127.0.0.1:$PORT, keepalive, gzip off"
    echo "LD_PRELOAD=resolve-test.so SIEVE_BENCH_DNS_MS=$DNS_MS sieve crawl --workers $WORKERS" \
        "--concurrency $((CONC / WORKERS)) --delay 0 --host-connections $HOST_CONN --scope any" \
        "--allow-private --quiet -o FILE ${SIEVE_ARGS:+$SIEVE_ARGS }http://h00000.test:$PORT/index.html"
    for h in $HOST_COUNTS; do
        make_host_site "$h"
        find "${HOST_SITE[$h]}" -type f -exec cat {} + >/dev/null # page cache warm
        echo "site over $h hosts: ${HOST_SITE_COUNTS[$h]}; $(du -sh "${HOST_SITE[$h]}" | cut -f1)"
    done
    echo "$REPS runs per host count and tool, alternating: $HOST_COUNTS; $TOOLS"
    [[ $TOOLS == *wget2* ]] && echo "wget2: $(wget2 --version 2>/dev/null | head -n1)" \
        "-q -r -l inf --max-threads=$CONC --span-hosts -O /dev/null URL"
    echo
    for ((rep = 1; rep <= REPS; rep++)); do
        for h in $HOST_COUNTS; do
            for tool in $TOOLS; do
                start_nginx "${HOST_SITE[$h]}" >/dev/null
                crawl_hosts "$tool" "$h" "$rep"
                stop_nginx
            done
        done
    done
    host_report
    echo
    echo "total time $(($(date +%s) - started)) s; load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
    ((FAILED == 0)) || exit 1
}

host_main "$@"
