#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite three
# times over: a plain build, an AddressSanitizer + UndefinedBehaviorSanitizer
# build, and a ThreadSanitizer build for the concurrency suite; then a short
# libFuzzer run of each fuzz target. Ends with "tests: N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh

passed=0
failed=0

# run_suite BUILDDIR MESON-TEST-ARGS...: runs meson test and adds its counts.
run_suite() {
  local dir=$1
  shift
  local rc=0
  meson test -C "$dir" --print-errorlogs "$@" || rc=$?
  local log="$dir/meson-logs/testlog.json"
  if [ -f "$log" ]; then
    passed=$((passed + $(grep -c '"result": "OK"' "$log" || true)))
    failed=$((failed + $(grep -c -E '"result": "(FAIL|TIMEOUT|ERROR|UNEXPECTEDPASS)"' "$log" || true)))
  fi
  return $rc
}

status=0

echo "== plain build"
meson setup build --wipe >/dev/null 2>&1 || meson setup build >/dev/null
ninja -C build
run_suite build || status=1

echo "== address and undefined-behaviour sanitizers"
meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false --wipe >/dev/null 2>&1 ||
  meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false >/dev/null
ninja -C build-asan
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  run_suite build-asan || status=1

echo "== thread sanitizer (concurrency suite)"
meson setup build-tsan -Db_sanitize=thread -Db_lundef=false --wipe >/dev/null 2>&1 ||
  meson setup build-tsan -Db_sanitize=thread -Db_lundef=false >/dev/null
ninja -C build-tsan
TSAN_OPTIONS=halt_on_error=1 run_suite build-tsan --suite concurrency || status=1

echo "== fuzzing (libFuzzer, ${SIEVE_FUZZ_SECONDS:=20} s per target)"
CC=clang meson setup build-fuzz -Dfuzz=true -Dtests=false --wipe >/dev/null 2>&1 ||
  CC=clang meson setup build-fuzz -Dfuzz=true -Dtests=false >/dev/null
ninja -C build-fuzz
for target in url links robots sitemap response warc warc-write state frontier; do
  mkdir -p "build-fuzz/corpus-$target"
  # New inputs go to the first directory; fuzz/corpus/ holds the seeds
  # (pages, records, files of each kind) that a short run starts from.
  seeds=()
  [ -d "fuzz/corpus/$target" ] && seeds=("fuzz/corpus/$target")
  if build-fuzz/fuzz/fuzz-$target -max_total_time="$SIEVE_FUZZ_SECONDS" -rss_limit_mb=2048 \
      -print_final_stats=1 "build-fuzz/corpus-$target" "${seeds[@]}" \
      >"build-fuzz/fuzz-$target.log" 2>&1; then
    echo "fuzz-$target: $(grep -o 'stat::number_of_executed_units: *[0-9]*' "build-fuzz/fuzz-$target.log" |
      grep -o '[0-9]*$') inputs, no crash"
    passed=$((passed + 1))
  else
    tail -n 40 "build-fuzz/fuzz-$target.log"
    echo "fuzz-$target: FAILED"
    failed=$((failed + 1))
    status=1
  fi
done

echo "tests: $passed passed, $failed failed"
exit $status
