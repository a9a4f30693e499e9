#!/usr/bin/env bash
# The main job, offline: installs what is missing, builds, serves the bundled
# synthetic web on 127.0.0.1:8917, crawls it from seeds/local.txt, and checks
# the fetched URLs against the web's own ground truth.
# Records go to out/crawl.jsonl; extra arguments are passed to `sieve crawl`.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh

if [ ! -f build-release/build.ninja ]; then
  meson setup build-release --buildtype=release -Dtests=false >/dev/null
fi
ninja -C build-release >/dev/null

port=8917
web=build-release/src/web/sieve-web
sieve=build-release/src/cmd/sieve
mkdir -p out

"$web" --port "$port" --pages 5000 --sitemap --drip-ms 100 --port-file out/web.port &
web_pid=$!
trap 'kill "$web_pid" 2>/dev/null; wait "$web_pid" 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  [ -s out/web.port ] && break
  kill -0 "$web_pid" 2>/dev/null || { echo "demo: sieve-web could not listen on 127.0.0.1:$port" >&2; exit 1; }
  sleep 0.05
done
echo "demo: local web of 5000 pages (hostile ones too, and sitemaps) on http://127.0.0.1:$port/" >&2

echo "demo: sieve crawl --delay 0 --host-connections 64 --retries 1 --retry-wait 0.2" \
  "-o out/crawl.jsonl $* seeds/local.txt" >&2
status=0
# The local web is ours: no per-host delay, as many connections as transfers,
# and its broken page (a 500) and its slow one (a timeout) tried again once,
# soon, rather than three times over seconds.
"$sieve" crawl --delay 0 --host-connections 64 --low-speed 100,5 --retries 1 --retry-wait 0.2 \
  -o out/crawl.jsonl "$@" seeds/local.txt || status=$?

"$web" --truth --port "$port" --pages 5000 --sitemap | sort > out/truth.txt
grep -o '"url":"[^"]*"' out/crawl.jsonl | cut -d'"' -f4 | sort -u > out/fetched.txt
missing=$(comm -23 out/truth.txt out/fetched.txt | wc -l)
extra=$(comm -13 out/truth.txt out/fetched.txt | wc -l)
echo "demo: fetched $(wc -l < out/fetched.txt) URLs; ground truth $(wc -l < out/truth.txt);" \
  "missing $missing, extra $extra" >&2
exit $status
