#!/usr/bin/env bash
# Checks JSON Lines record files against docs/record.schema.json with ajv,
# the JSON Schema validator, installed from the npm registry (with
# ajv-formats, for date-time and the IP formats) into PREFIX under the
# build tree the first time; later runs need no network.
# usage: record-check.sh PREFIX SCHEMA RECORDS.jsonl...
set -euo pipefail
prefix=$1
shift
ajv=8.17.1
formats=3.0.1

installed() {
  [ -f "$prefix/node_modules/ajv/package.json" ] &&
    grep -q "\"version\": \"$ajv\"" "$prefix/node_modules/ajv/package.json" &&
    [ -f "$prefix/node_modules/ajv-formats/package.json" ] &&
    grep -q "\"version\": \"$formats\"" "$prefix/node_modules/ajv-formats/package.json"
}

command -v node >/dev/null || { echo "record-check.sh: node is not installed" >&2; exit 1; }
if ! installed; then
  command -v npm >/dev/null || { echo "record-check.sh: npm is not installed" >&2; exit 1; }
  mkdir -p "$prefix"
  # Two test runs at once install once.
  (
    flock 9
    installed || npm install --prefix "$prefix" --no-audit --no-fund --no-save --loglevel=error \
      "ajv@$ajv" "ajv-formats@$formats" >&2
  ) 9>"$prefix/.install.lock"
fi
exec node "$(dirname "$0")/record-check.mjs" "$prefix" "$@"
