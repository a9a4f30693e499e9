#!/usr/bin/env bash
# Installs libsieve into a scratch root, builds examples/dedupe.c with
# nothing but pkg-config, as an embedder would, and checks what it prints.
# usage: test-example.sh BUILD_DIR SOURCE_DIR SANITIZE_OPTION
set -euo pipefail
build=$1
src=$2
sanitize=${3:-none}

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT

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
