#!/usr/bin/env bash
# Runs warc-check.mjs with warcio, the Webrecorder project's JavaScript
# WARC library, installed from the npm registry into PREFIX (under the
# build tree) the first time; later runs need no network.
# usage: warcio.sh PREFIX WARC-CHECK.mjs [--index-only] OURS.cdxj WARC-FILE...
set -euo pipefail
prefix=$1
shift
version=2.4.11

installed() {
  [ -f "$prefix/node_modules/warcio/package.json" ] &&
    grep -q "\"version\": \"$version\"" "$prefix/node_modules/warcio/package.json"
}

command -v node >/dev/null || { echo "warcio.sh: node is not installed" >&2; exit 1; }
if ! installed; then
  command -v npm >/dev/null || { echo "warcio.sh: npm is not installed" >&2; exit 1; }
  mkdir -p "$prefix"
  # Two test runs at once install once.
  (
    flock 9
    installed || npm install --prefix "$prefix" --no-audit --no-fund --no-save --loglevel=error \
      "warcio@$version" >&2
  ) 9>"$prefix/.install.lock"
fi
mjs=$1
shift
exec node "$mjs" "$prefix" "$@"
