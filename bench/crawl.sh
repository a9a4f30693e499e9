#!/usr/bin/env bash
# bench/crawl.sh - crawl benchmark: `sieve crawl` against `wget2 -r` on a
# static site served by nginx on 127.0.0.1.
#
# What it does, in order:
#   1. installs nginx(-light), wget2, GNU time and a C compiler with apt-get
#      when one is missing (needs root then; nothing is installed otherwise);
#   2. compiles the site generator and writes one site per size (default
#      20,000 and 100,000 pages) into the work directory, reusing a site
#      already written for the same size, port and generator: with --site
#      light (the default) bench/gen-site.c, pages of about 7 KB and 20
#      links each; with --site dense bench/gen-dense.c, pages shaped like a
#      documentation site's (median about 5 KB and 15 links, 1% of pages of
#      1-3 MB with 10,000-25,000 links; bench/dense-page.h has the
#      distributions and their sources);
#   3. for each site, starts a private nginx (`nginx -c CONF -p PREFIX`, its
#      own config, 127.0.0.1 only, stopped at exit whatever happens) and
#      crawls the site REPS times with each tool, alternating them so that
#      a change in the machine's load hits both alike;
#   4. prints one row per run, then a side-by-side table of medians and the
#      issue's three targets with PASS/FAIL.
#
# Fairness. Both tools get the same total concurrency C: wget2
# --max-threads C, sieve --workers W --concurrency C/W. Both parse every
# page to recurse. wget2 writes bodies to /dev/null; sieve writes its JSON
# Lines records (its product) to a file in the work directory, whose lines
# are counted as a cross-check. What each tool fetched is counted from
# nginx's access log, truncated before each run, the same way for both:
# the log costs nginx the same per request whoever asks.
#
# Each crawl runs under `/usr/bin/time -f '%e %U %S %M'`: wall seconds,
# user and system CPU seconds, peak resident set (KiB) of the crawler
# process (all its threads). nginx's CPU is not counted for either.
#
# Exit status: 0 when every crawl ran (whatever the targets say), 1 when
# setup or a crawl failed, 2 for bad arguments.
set -euo pipefail

usage() {
    cat <<'EOF'
usage: bench/crawl.sh [OPTIONS] [WORKDIR]

Crawls generated static sites served by nginx on 127.0.0.1 with `sieve crawl`
and with `wget2 -r`, at equal concurrency, and prints pages fetched, pages/s,
CPU seconds and peak resident memory for both, side by side.

  --workdir DIR       sites, nginx prefix and run files (default /tmp/sieve-crawlbench)
  --sizes LIST        site sizes in pages, space or comma separated (default 20000,100000)
  --site KIND         light: bench/gen-site.c, every page about 7 KB with 20 links
                      (the default); dense: bench/gen-dense.c, a documentation
                      site's shape, median page about 5 KB with 15 links, 1% of
                      pages of 1-3 MB with 10,000-25,000 links, a seventh of the
                      links fragment-only, links repeated within a page, inline
                      scripts and styles (about 2.8 GB at 100,000 pages)
  --concurrency N     total concurrent transfers for each tool (default 16)
  --workers W         sieve worker threads; each gets N/W transfers (default 2)
  --reps R            crawls per tool and site; the table shows medians (default 3)
  --port P            nginx port on 127.0.0.1 (default: first free from 18080)
  --nginx-workers K   nginx worker_processes (default 2)
  --sieve PATH        the sieve binary (default: build-release/src/cmd/sieve of
                      this checkout, built with meson if missing)
  --sieve-args ARGS   extra arguments for sieve crawl (e.g. "--seen exact")
  --timeout S         seconds one crawl may take before it is stopped (default 600)
  --no-install        never run apt-get; fail if something is missing
  -h, --help          this text
EOF
}

REPO=$(cd "$(dirname "$0")/.." && pwd)
WORKDIR=/tmp/sieve-crawlbench
SIZES="20000 100000"
SITE=light
CONC=16
WORKERS=2
REPS=3
PORT=""
NGINX_WORKERS=2
SIEVE=""
SIEVE_ARGS=""
LIMIT=600
INSTALL=1
CMDLINE="bench/crawl.sh $*"

die() {
    echo "crawl.sh: $*" >&2
    exit 1
}

bad() {
    echo "crawl.sh: $*" >&2
    echo "Try 'bench/crawl.sh --help'." >&2
    exit 2
}

is_uint() {
    [[ $1 =~ ^[0-9]+$ ]] && (($1 > 0))
}

# shared_option ARGS...: takes $1 (and its value) when it is one of the
# options every benchmark of this folder has, and sets TOOK to the number
# of arguments used; TOOK=0 when $1 is none of them.
shared_option() {
    TOOK=2
    case $1 in
    --workdir) WORKDIR=${2:?} ;;
    --concurrency) CONC=${2:?} ;;
    --workers) WORKERS=${2:?} ;;
    --reps) REPS=${2:?} ;;
    --port) PORT=${2:?} ;;
    --nginx-workers) NGINX_WORKERS=${2:?} ;;
    --sieve) SIEVE=${2:?} ;;
    --sieve-args) SIEVE_ARGS=${2-} ;;
    --timeout) LIMIT=${2:?} ;;
    --no-install) INSTALL=0; TOOK=1 ;;
    -h | --help) usage; exit 0 ;;
    -*) TOOK=0 ;;
    *) WORKDIR=$1; TOOK=1 ;;
    esac
}

parse_args() {
    while (($#)); do
        case $1 in
        --sizes) SIZES=${2//,/ }; shift 2; continue ;;
        --site) SITE=${2:?}; shift 2; continue ;;
        esac
        shared_option "$@"
        ((TOOK)) || bad "unknown option $1"
        shift "$TOOK"
    done
    for v in "$CONC" "$WORKERS" "$REPS" "$NGINX_WORKERS" "$LIMIT"; do
        is_uint "$v" || bad "'$v' is not a positive integer"
    done
    for s in $SIZES; do
        is_uint "$s" || bad "site size '$s' is not a positive integer"
    done
    [[ -n $SIZES ]] || bad "no site size"
    [[ $SITE == light || $SITE == dense ]] || bad "--site is light or dense, not '$SITE'"
    ((CONC % WORKERS == 0)) || bad "--concurrency $CONC is not a multiple of --workers $WORKERS"
    if [[ -n $PORT ]]; then
        if ! is_uint "$PORT" || ((PORT > 65535)); then
            bad "bad port '$PORT'"
        fi
    fi
    [[ $WORKDIR == /* ]] || WORKDIR=$PWD/$WORKDIR
}

# ---- installing what is missing -------------------------------------------

APT_UPDATED=0

apt_install() {
    ((INSTALL)) || die "$1 is missing and --no-install was given"
    (($(id -u) == 0)) || die "$1 is missing: run as root so that apt-get can install it"
    if ((!APT_UPDATED)); then
        echo "crawl.sh: apt-get update" >&2
        apt-get update -q >&2 || die "apt-get update failed"
        APT_UPDATED=1
    fi
    # A package's maintainer script would start the system nginx on port 80;
    # policy-rc.d tells invoke-rc.d not to, for the length of the install.
    local policy=/usr/sbin/policy-rc.d made=0
    if [[ ! -e $policy ]]; then
        printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy" && made=1
    fi
    echo "crawl.sh: apt-get install $*" >&2
    local rc=0
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >&2 || rc=$?
    ((made)) && rm -f "$policy"
    return $rc
}

ensure_tools() {
    if ! command -v nginx >/dev/null && [[ ! -x /usr/sbin/nginx ]]; then
        apt_install nginx-light || apt_install nginx || die "cannot install nginx"
    fi
    command -v wget2 >/dev/null || apt_install wget2 || die "cannot install wget2"
    [[ -x /usr/bin/time ]] || apt_install time || die "cannot install time"
    command -v cc >/dev/null || apt_install gcc libc6-dev || die "cannot install a C compiler"
    command -v timeout >/dev/null || die "timeout (coreutils) is missing"
    NGINX=$(command -v nginx || echo /usr/sbin/nginx)
}

ensure_sieve() {
    if [[ -z $SIEVE ]]; then
        SIEVE=$REPO/build-release/src/cmd/sieve
        if [[ ! -x $SIEVE ]]; then
            echo "crawl.sh: building sieve in $REPO/build-release" >&2
            (cd "$REPO" && { [[ -d build-release ]] ||
                meson setup build-release --buildtype=release >&2; } &&
                ninja -C build-release >&2) || die "cannot build sieve"
        fi
    fi
    [[ -x $SIEVE ]] || die "$SIEVE: not an executable"
    "$SIEVE" crawl --help >/dev/null 2>&1 || die "$SIEVE: no working 'crawl' command"
}

# ---- the port, the sites, nginx -------------------------------------------

port_busy() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

pick_port() {
    if [[ -n $PORT ]]; then
        port_busy "$PORT" && die "port $PORT on 127.0.0.1 is in use"
        return 0
    fi
    for ((p = 18080; p < 18280; p++)); do
        if ! port_busy "$p"; then
            PORT=$p
            return 0
        fi
    done
    die "no free port in 18080..18279 on 127.0.0.1"
}

GEN=""

GEN_SRC=()

build_generator() {
    if [[ $SITE == dense ]]; then
        GEN=$WORKDIR/gen-dense
        GEN_SRC=("$REPO/bench/gen-dense.c" "$REPO/bench/dense-page.h")
    else
        GEN=$WORKDIR/gen-site
        GEN_SRC=("$REPO/bench/gen-site.c")
    fi
    GEN_SRC+=("$REPO/bench/site-io.h")
    local stale=0 f
    for f in "${GEN_SRC[@]}"; do
        if [[ $f -nt $GEN ]]; then stale=1; fi
    done
    if [[ ! -x $GEN ]] || ((stale)); then
        cc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -o "$GEN" "${GEN_SRC[0]}" -lm ||
            die "cannot compile ${GEN_SRC[0]}"
    fi
}

# Writes (or reuses) the site of $1 pages; sets SITE_DIR, SITE_COUNTS and
# SITE_NOTE. The stamp records what the site was made from, so a stale site
# (other port, other generator) is written again.
make_site() {
    local n=$1
    SITE_DIR=$WORKDIR/site-$n
    if [[ $SITE == dense ]]; then SITE_DIR=$WORKDIR/dense-$n; fi
    local want
    want="$n $PORT $(cat "${GEN_SRC[@]}" | cksum | cut -d' ' -f1)"
    if [[ -f $SITE_DIR/.stamp && $(head -n1 "$SITE_DIR/.stamp") == "$want" ]]; then
        SITE_COUNTS=$(sed -n 2p "$SITE_DIR/.stamp")
        SITE_NOTE="reused from an earlier run"
        return 0
    fi
    rm -rf "$SITE_DIR"
    local t0 t1
    t0=$(date +%s.%N)
    SITE_COUNTS=$("$GEN" "$SITE_DIR" "$n" "$PORT") || die "$(basename "$GEN") failed for $n pages"
    t1=$(date +%s.%N)
    printf '%s\n%s\n' "$want" "$SITE_COUNTS" >"$SITE_DIR/.stamp"
    SITE_NOTE=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "generated in %.1f s", b - a }')
}

# warm_site DIR: reads every file of the site, so that the crawl after it
# finds the site in the page cache. Done before each crawl, not once: some
# machines reclaim page cache that looks cold on their own (a virtual
# machine's proactive reclaim, such as DAMON's pageout scheme), and a crawl
# whose server reads the site back from the disk measures the disk: nginx's
# workers wait on the reads and the cores go idle.
warm_site() {
    find "$1" -type f -exec cat {} + >/dev/null
}

# Page-cache pages read back in after an eviction, so far, all processes
# (/proc/vmstat; 0 where the kernel does not count them). A crawl during
# which this grows by hundreds had its server wait for the disk.
refaults() {
    awk '$1 == "workingset_refault_file" { print $2; found = 1 }
        END { if (!found) print 0 }' /proc/vmstat
}

NGINX_PREFIX=""
NGINX_RUNNING=0

stop_nginx() {
    if ((NGINX_RUNNING)); then
        "$NGINX" -c "$NGINX_PREFIX/nginx.conf" -p "$NGINX_PREFIX/" -s quit 2>/dev/null || true
        local pid
        pid=$(cat "$NGINX_PREFIX/nginx.pid" 2>/dev/null || true)
        for _ in $(seq 50); do
            if [[ -z $pid ]] || ! kill -0 "$pid" 2>/dev/null; then
                break
            fi
            sleep 0.1
        done
        [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null && kill "$pid" 2>/dev/null
        NGINX_RUNNING=0
    fi
}

start_nginx() {
    local root=$1
    NGINX_PREFIX=$WORKDIR/nginx
    mkdir -p "$NGINX_PREFIX/tmp"
    # access_log counts the requests of each run; gzip is off so both tools
    # get the same bytes; keepalive lets each connection carry a whole crawl.
    cat >"$NGINX_PREFIX/nginx.conf" <<EOF
worker_processes $NGINX_WORKERS;
pid $NGINX_PREFIX/nginx.pid;
error_log $NGINX_PREFIX/error.log warn;
events { worker_connections 4096; }
http {
    types { text/html html; text/plain txt; image/png png; }
    default_type application/octet-stream;
    log_format counts '\$status \$request_uri';
    access_log $NGINX_PREFIX/access.log counts;
    sendfile on;
    tcp_nopush on;
    gzip off;
    keepalive_timeout 65;
    keepalive_requests 10000000;
    client_body_temp_path $NGINX_PREFIX/tmp/body;
    server {
        listen 127.0.0.1:$PORT;
        root $root;
    }
}
EOF
    "$NGINX" -c "$NGINX_PREFIX/nginx.conf" -p "$NGINX_PREFIX/" ||
        die "nginx did not start (see $NGINX_PREFIX/error.log)"
    NGINX_RUNNING=1
    local i
    for ((i = 0; i < 50; i++)); do
        port_busy "$PORT" && break
        sleep 0.1
    done
    wget2 -q -O /dev/null "http://127.0.0.1:$PORT/index.html" ||
        die "nginx does not serve $root/index.html (its workers run as nobody: is the path readable?)"
}

cleanup() {
    stop_nginx
}

# ---- one crawl ------------------------------------------------------------

# run_one TOOL SITE_PAGES REP: crawls once and appends a row to $RESULTS:
#   tool size rep rc wall cpu rss_kib requests html_pages distinct records
run_one() {
    local tool=$1 n=$2 rep=$3
    local url="http://127.0.0.1:$PORT/index.html"
    local tf=$WORKDIR/runs/$tool-$n-$rep.time
    local out=$WORKDIR/runs/$tool-$n-$rep.out
    local rec=$WORKDIR/runs/$tool-$n-$rep.jsonl
    local log=$NGINX_PREFIX/access.log
    local cmd rc=0
    if [[ $tool != wget2 ]]; then
        # sieve: per-host scheduling on, with no delay and as many connections
        # as transfers (one host); fifo: the same crawler without per-host
        # scheduling. robots.txt is off, as for wget2.
        local sched=(--delay 0 --host-connections "$CONC")
        [[ $tool == fifo ]] && sched=(--host-connections 0)
        # shellcheck disable=SC2206
        cmd=("$SIEVE" crawl --workers "$WORKERS" --concurrency "$((CONC / WORKERS))"
            "${sched[@]}" --ignore-robots --quiet -o "$rec" $SIEVE_ARGS "$url")
    else
        cmd=(wget2 -r -l inf -O /dev/null --robots=off --no-parent -q
            --max-threads "$CONC" "$url")
    fi
    warm_site "$SITE_DIR"
    : >"$log"
    # timeout runs inside time, in the foreground so that ^C reaches the
    # crawler; wait4 reports the crawler's CPU and peak RSS through it.
    /usr/bin/time -f '%e %U %S %M' -o "$tf" timeout --foreground -k 10 "$LIMIT" "${cmd[@]}" \
        >"$out" 2>&1 || rc=$?
    # wget2 exits 8 when the server answered an error, as the 404s make it.
    local ok=$rc
    [[ $tool == wget2 && $rc == 8 ]] && ok=0
    if [[ $ok != 0 ]]; then
        echo "crawl.sh: $tool on the $n-page site (run $rep) exited $rc; its output:" >&2
        tail -n 5 "$out" >&2
        FAILED=1
    fi
    local wall user sys rss
    read -r wall user sys rss < <(tail -n 1 "$tf" 2>/dev/null || echo "0 0 0 0")
    [[ $wall =~ ^[0-9.]+$ ]] || { wall=0 user=0 sys=0 rss=0; }
    local reqs html distinct records=-
    reqs=$(wc -l <"$log")
    html=$(awk '$1 == 200 && $2 ~ /\.html$/ { print $2 }' "$log" | sort -u | wc -l)
    distinct=$(awk '{ print $2 }' "$log" | sort -u | wc -l)
    if [[ $tool != wget2 ]]; then
        records=$(wc -l <"$rec" 2>/dev/null || echo 0)
        rm -f "$rec"
    fi
    local cpu
    cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
    echo "$tool $n $rep $rc $wall $cpu $rss $reqs $html $distinct $records" >>"$RESULTS"
    printf '  %-5s run %d: exit %-3s %7d requests %7d pages  %7.2f s  %7.2f CPU s  %7.1f MiB%s\n' \
        "$tool" "$rep" "$rc" "$reqs" "$html" "$wall" "$cpu" \
        "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')" \
        "$([[ $tool != wget2 ]] && echo "  ($records records)")"
}

# ---- the report -----------------------------------------------------------

# median TOOL SIZE COLUMN: the median of a column of $RESULTS over the runs.
median() {
    awk -v t="$1" -v n="$2" -v c="$3" '$1 == t && $2 == n { print $c }' "$RESULTS" |
        sort -g | awk '{ v[NR] = $1 } END {
            if (NR == 0) print 0
            else if (NR % 2) print v[(NR + 1) / 2]
            else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# least TOOL SIZE COLUMN: the smallest value of a column over the runs.
least() {
    awk -v t="$1" -v n="$2" -v c="$3" '$1 == t && $2 == n { print $c }' "$RESULTS" |
        sort -g | head -n 1
}

report() {
    echo
    echo "Medians of $REPS runs per tool and site (pages: the fewest any run fetched)."
    echo "pages = distinct HTML URLs nginx answered 200; requests = all requests in nginx's log;"
    echo "pages/s = pages / wall s; CPU s = user + system of the crawler process;"
    echo "CPU ms/page = CPU s / pages; peak RSS = the crawler process's maximum resident set (GNU time %M)."
    echo
    printf '%-6s %8s %9s %9s %8s %9s %8s %11s %13s\n' tool site pages requests "wall s" pages/s "CPU s" \
        "CPU ms/page" "peak RSS MiB"
    local n tool
    for n in $SIZES; do
        for tool in sieve fifo wget2; do
            local pages reqs wall cpu rss
            pages=$(least "$tool" "$n" 9)
            reqs=$(median "$tool" "$n" 8)
            wall=$(median "$tool" "$n" 5)
            cpu=$(median "$tool" "$n" 6)
            rss=$(median "$tool" "$n" 7)
            awk -v t="$tool" -v n="$n" -v p="$pages" -v r="$reqs" -v w="$wall" -v c="$cpu" \
                -v m="$rss" 'BEGIN { printf "%-6s %8d %9d %9d %8.2f %9.0f %8.2f %11.3f %13.1f\n",
                t, n, p, r, w, (w > 0 ? p / w : 0), c, (p > 0 ? 1000 * c / p : 0), m / 1024 }'
        done
    done
    echo
    echo "sieve / wget2 (medians):"
    printf '%-8s %14s %10s %14s\n' site pages/s "CPU/page" "peak RSS"
    for n in $SIZES; do
        awk -v n="$n" -v sp="$(least sieve "$n" 9)" -v wp="$(least wget2 "$n" 9)" \
            -v sw="$(median sieve "$n" 5)" -v ww="$(median wget2 "$n" 5)" \
            -v sc="$(median sieve "$n" 6)" -v wc="$(median wget2 "$n" 6)" \
            -v sm="$(median sieve "$n" 7)" -v wm="$(median wget2 "$n" 7)" 'BEGIN {
                r = (sw > 0 && ww > 0 && wp > 0) ? (sp / sw) / (wp / ww) : 0
                printf "%-8d %14.2f %10.2f %14.2f\n", n, r,
                    (wc > 0 && sp > 0 && wp > 0 ? (sc / sp) / (wc / wp) : 0),
                    (wm > 0 ? sm / wm : 0) }'
    done
    targets
}

verdict() {
    if (($1)); then echo PASS; else echo FAIL; fi
}

targets() {
    echo
    echo "Targets:"
    local n want got all
    for n in $SIZES; do
        want=$(awk '{ print $2 }' <<<"${COUNTS[$n]}")
        got=$(least sieve "$n" 9)
        all=$(awk -v n="$n" -v w="$want" '$1 == "sieve" && $2 == n && $9 == w { k++ }
            END { print k + 0 }' "$RESULTS")
        printf '  %-7s sieve fetches every page: %d of %d pages in the worst run, %d of %d runs complete   %s\n' \
            "$n" "$got" "$want" "$all" "$REPS" "$(verdict $((all == REPS)))"
    done
    for n in $SIZES; do
        local s w
        s=$(awk -v p="$(least sieve "$n" 9)" -v w="$(median sieve "$n" 5)" 'BEGIN { print (w > 0 ? p / w : 0) }')
        w=$(awk -v p="$(least wget2 "$n" 9)" -v w="$(median wget2 "$n" 5)" 'BEGIN { print (w > 0 ? p / w : 0) }')
        printf '  %-7s pages/s >= wget2 at concurrency %d: %.0f against %.0f (x%.2f)   %s\n' \
            "$n" "$CONC" "$s" "$w" "$(awk -v a="$s" -v b="$w" 'BEGIN { print (b > 0 ? a / b : 0) }')" \
            "$(verdict "$(awk -v a="$s" -v b="$w" 'BEGIN { print (a >= b && b > 0) }')")"
    done
    for n in $SIZES; do
        local s f
        s=$(awk -v p="$(least sieve "$n" 9)" -v w="$(median sieve "$n" 5)" 'BEGIN { print (w > 0 ? p / w : 0) }')
        f=$(awk -v p="$(least fifo "$n" 9)" -v w="$(median fifo "$n" 5)" 'BEGIN { print (w > 0 ? p / w : 0) }')
        printf '  %-7s per-host scheduling (D=0, K=%d) keeps >= 95%% of pages/s without it: %.0f against %.0f (x%.2f)   %s\n' \
            "$n" "$CONC" "$s" "$f" "$(awk -v a="$s" -v b="$f" 'BEGIN { print (b > 0 ? a / b : 0) }')" \
            "$(verdict "$(awk -v a="$s" -v b="$f" 'BEGIN { print (b > 0 && a >= 0.95 * b) }')")"
    done
    local big=0
    for n in $SIZES; do ((n > big)) && big=$n; done
    local sm wm
    sm=$(median sieve "$big" 7)
    wm=$(median wget2 "$big" 7)
    printf '  %-7s peak RSS <= half of wget2'"'"'s: %.1f MiB against %.1f MiB (x%.2f)   %s\n' \
        "$big" "$(awk -v k="$sm" 'BEGIN { print k / 1024 }')" "$(awk -v k="$wm" 'BEGIN { print k / 1024 }')" \
        "$(awk -v a="$sm" -v b="$wm" 'BEGIN { print (b > 0 ? a / b : 0) }')" \
        "$(verdict "$(awk -v a="$sm" -v b="$wm" 'BEGIN { print (b > 0 && a <= b / 2) }')")"
    [[ $big == 100000 ]] || echo "  (the issue states the memory target for the 100000-page site)"
}

# ---- main -----------------------------------------------------------------

# What every benchmark of this folder does first: the tools, sieve, the work
# directory, nginx stopped on any exit, a port, the site generator for $SITE.
prepare_bench() {
    ensure_tools
    ensure_sieve
    mkdir -p "$WORKDIR/runs" || die "cannot create $WORKDIR"
    chmod a+rx "$WORKDIR"
    trap cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    pick_port
    build_generator
}

main() {
    parse_args "$@"
    prepare_bench
    RESULTS=$WORKDIR/runs/results.txt
    : >"$RESULTS"
    FAILED=0
    declare -gA COUNTS

    local started
    started=$(date +%s)
    echo "Crawl benchmark: sieve crawl against wget2"
    echo "command: $CMDLINE"
    echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'); $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo |
        cut -d: -f2 | sed 's/^ //')); $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo);" \
        "load average $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "sieve: $("$SIEVE" --version 2>&1 | head -n1) ($SIEVE)"
    echo "wget2: $(wget2 --version 2>/dev/null | head -n1 | sed 's/ - .*//')"
    echo "nginx: $("$NGINX" -v 2>&1 | sed 's/.*: //'), worker_processes $NGINX_WORKERS, 127.0.0.1:$PORT, keepalive, gzip off"
    echo "concurrency $CONC for each tool: sieve --workers $WORKERS --concurrency $((CONC / WORKERS));" \
        "wget2 --max-threads $CONC"
    echo "sieve crawl --delay 0 --host-connections $CONC --ignore-robots --quiet -o FILE ${SIEVE_ARGS:+$SIEVE_ARGS }(records to $WORKDIR/runs)"
    echo "fifo: the same with --host-connections 0 (no per-host scheduling)"
    echo "wget2 -r -l inf -O /dev/null --robots=off --no-parent -q --max-threads $CONC"
    echo "$REPS runs per tool and site, alternating sieve, fifo and wget2; $SITE site ($(basename "$GEN"))"

    local n rep
    for n in $SIZES; do
        make_site "$n"
        COUNTS[$n]=$SITE_COUNTS
        read -r _ pages _ files _ missing _ urls <<<"$SITE_COUNTS"
        echo
        echo "Site $n: $pages HTML pages (index included), $files files, $missing missing pages" \
            "linked: $urls URLs in all; $(du -sh "$SITE_DIR" | cut -f1); $SITE_NOTE"
        start_nginx "$SITE_DIR"
        for ((rep = 1; rep <= REPS; rep++)); do
            run_one sieve "$n" "$rep"
            run_one fifo "$n" "$rep"
            run_one wget2 "$n" "$rep"
        done
        stop_nginx
    done
    report
    echo
    echo "total time $(($(date +%s) - started)) s; load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
    ((FAILED == 0)) || exit 1
}

# bench/hosts.sh sources this file for its helpers, without running it.
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
    main "$@"
fi
