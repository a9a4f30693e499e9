#!/usr/bin/env bash
# Checks the shared library's dynamic symbol table against the public API:
# every defined, exported symbol must start with "sieve_" (internal helpers
# are hidden, see sieve/export.h), and every function the public headers
# given declare must be exported, so that hiding the rest never hides a
# part of the API.
# usage: test-symbols.sh LIBSIEVE.so [PUBLIC_HEADER...]
set -euo pipefail
lib=$1
shift

# The linker's own symbols appear in some toolchains' tables.
linker_made='^(_init|_fini|_edata|_end|__bss_start)$'

exported=$(nm -D --defined-only "$lib" | awk '{ print $NF }' | sed 's/@.*//' | sort -u)
[ -n "$exported" ] || { echo "$lib exports nothing"; exit 1; }

status=0
foreign=$(grep -Ev "$linker_made" <<<"$exported" | grep -v '^sieve_' || true)
if [ -n "$foreign" ]; then
  echo "exported symbols outside the sieve_ namespace (internal, or missing hidden visibility):"
  sed 's/^/  /' <<<"$foreign"
  status=1
fi

if [ $# -gt 0 ]; then
  # Function declarations start a line, in the project's style; one that
  # lacks SIEVE_API is hidden, and so reported as missing.
  declared=$(grep -hE '^(SIEVE_API )?[a-z][a-z0-9_ ]*[ *]sieve_[a-z0-9_]*\(' "$@" |
    grep -Ev '^(typedef|static|return) ' | sed -E 's/\(.*//; s/.*[ *]//' | sort -u)
  [ -n "$declared" ] || { echo "no function declaration in $*"; exit 1; }
  missing=$(comm -23 <(echo "$declared") <(echo "$exported"))
  if [ -n "$missing" ]; then
    echo "declared in a public header but not exported by $lib (SIEVE_API missing?):"
    sed 's/^/  /' <<<"$missing"
    status=1
  fi
fi

[ $status -eq 0 ] && echo "$(grep -c "^sieve_" <<<"$exported") exported symbols, all public API"
exit $status
