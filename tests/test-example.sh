#!/usr/bin/env bash
# Installs libsieve into a scratch root, builds examples/dedupe.c with
# nothing but pkg-config, as an embedder would, and checks what it prints.
# Given sieve-web, also builds examples/crawl.c the same way and crawls a
# sieve-web on a free loopback port with it: the URLs it prints must be the
# web's ground truth.
# usage: test-example.sh BUILD_DIR SOURCE_DIR SANITIZE_OPTION [SIEVE_WEB]
set -euo pipefail
build=$1
src=$2
sanitize=${3:-none}
web=${4:-}

root=$(mktemp -d)
webpid=
cleanup() {
  [ -n "$webpid" ] && kill "$webpid" 2>/dev/null && wait "$webpid" 2>/dev/null
  rm -rf "$root"
}
trap cleanup EXIT

meson install -C "$build" --destdir "$root" --no-rebuild --quiet >/dev/null
pc=$(dirname "$(find "$root" -name sieve.pc | head -n 1)")
[ -n "$pc" ] || { echo "sieve.pc was not installed"; exit 1; }
export PKG_CONFIG_PATH=$pc PKG_CONFIG_SYSROOT_DIR=$root

flags=()
[ "$sanitize" != none ] && flags+=("-fsanitize=$sanitize")
cc -std=c11 -Wall -Wextra -Werror "${flags[@]}" "$src/examples/dedupe.c" \
  $(pkg-config --cflags --libs sieve) -o "$root/dedupe"
libdir=$(pkg-config --variable=libdir sieve) # the sysroot is already applied

printf '%s\n' http://a.test/ http://b.test/x http://a.test/ "" "not a url" http://c.test/ http://b.test/x \
  > "$root/in.txt"
for mode in --exact --bloom; do
  LD_LIBRARY_PATH=$libdir "$root/dedupe" $mode < "$root/in.txt" > "$root/out.txt" 2> "$root/err.txt"
  printf '%s\n' http://a.test/ http://b.test/x http://c.test/ > "$root/want.txt"
  diff -u "$root/want.txt" "$root/out.txt"
  grep -q "line 5: not a URL" "$root/err.txt"
  grep -q "7 lines, 3 unique, 2 repeated, 1 refused" "$root/err.txt"
done
echo "example built through pkg-config and ran correctly"

[ -n "$web" ] || exit 0

cc -std=c11 -Wall -Wextra -Werror "${flags[@]}" "$src/examples/crawl.c" \
  $(pkg-config --cflags --libs sieve) -o "$root/crawl"

# Starts sieve-web with the given options on 127.0.0.1 and a free port.
start_web() {
  rm -f "$root/port"
  "$web" --host 127.0.0.1 --port 0 --port-file "$root/port" "$@" 2> "$root/web.txt" &
  webpid=$!
  for _ in $(seq 500); do
    [ -s "$root/port" ] && break
    sleep 0.01
  done
  [ -s "$root/port" ] || { echo "sieve-web did not start"; cat "$root/web.txt"; exit 1; }
  port=$(cat "$root/port")
}

stop_web() {
  kill "$webpid"
  wait "$webpid" || true
  webpid=
}

web_opts=(--pages 60 --no-hostile)
start_web "${web_opts[@]}"
st=0
LD_LIBRARY_PATH=$libdir "$root/crawl" --delay 0 "http://127.0.0.1:$port/" \
  > "$root/crawl.txt" 2> "$root/crawl-err.txt" || st=$?
[ "$st" -eq 0 ] || { echo "crawl exited with $st"; cat "$root/crawl-err.txt"; exit 1; }
"$web" --truth --host 127.0.0.1 --port "$port" "${web_opts[@]}" > "$root/want.txt"
cut -d ' ' -f 1 "$root/crawl.txt" | LC_ALL=C sort > "$root/got.txt"
diff -u "$root/want.txt" "$root/got.txt"
# every line: URL STATUS BYTES, or URL STATUS error: WHY
if grep -Evq '^http://[^ ]+ [0-9]+ ([0-9]+|error: .+)$' "$root/crawl.txt"; then
  echo "malformed lines:"
  grep -Ev '^http://[^ ]+ [0-9]+ ([0-9]+|error: .+)$' "$root/crawl.txt" | head
  exit 1
fi
grep -q "^http://127.0.0.1:$port/p/0.html 200 [1-9]" "$root/crawl.txt"
n=$(wc -l < "$root/want.txt")
grep -q "^crawl: $n fetched, " "$root/crawl-err.txt" \
  || { echo "summary:"; cat "$root/crawl-err.txt"; exit 1; }
stop_web

# Bad arguments: exit 2.
for args in "" "--delay" "--delay x http://127.0.0.1:1/" "--delay -1 http://127.0.0.1:1/" \
  "ftp://127.0.0.1/" "http://127.0.0.1:1/ extra"; do
  st=0
  # shellcheck disable=SC2086 # split on purpose
  LD_LIBRARY_PATH=$libdir "$root/crawl" $args > /dev/null 2> "$root/crawl-err.txt" || st=$?
  [ "$st" -eq 2 ] || { echo "crawl $args: exit $st, not 2"; cat "$root/crawl-err.txt"; exit 1; }
done

# Two SIGINTs against pages that answer after a minute: the first stops the
# crawl, the second cuts the transfers in flight; it exits 0, interrupted.
start_web --pages 10 --no-hostile --delay-ms 60000
LD_LIBRARY_PATH=$libdir "$root/crawl" --delay 0 "http://127.0.0.1:$port/" \
  > "$root/crawl.txt" 2> "$root/crawl-err.txt" &
crawlpid=$!
sleep 1
kill -INT "$crawlpid"
sleep 0.5
kill -INT "$crawlpid"
for _ in $(seq 300); do
  kill -0 "$crawlpid" 2>/dev/null || break
  sleep 0.1
done
if kill -0 "$crawlpid" 2>/dev/null; then
  kill -KILL "$crawlpid"
  echo "crawl still running 30 s after two SIGINTs"
  exit 1
fi
st=0
wait "$crawlpid" || st=$?
[ "$st" -eq 0 ] || { echo "interrupted crawl exited with $st"; cat "$root/crawl-err.txt"; exit 1; }
grep -q "interrupted" "$root/crawl-err.txt" || { cat "$root/crawl-err.txt"; exit 1; }
[ ! -s "$root/crawl.txt" ] || { echo "records of unanswered pages:"; cat "$root/crawl.txt"; exit 1; }
stop_web
echo "crawl example built through pkg-config and crawled the ground truth"
