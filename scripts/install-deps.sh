#!/usr/bin/env bash
# Installs, from the Debian archive, whatever the build, the tests and the
# demo need and the machine lacks. Safe to run again: with everything in
# place it changes nothing and needs no network.
set -euo pipefail

packages=(
  gcc clang libclang-rt-14-dev meson ninja-build pkg-config
  libcurl4-openssl-dev libxml2-dev libxxhash-dev check
  libmicrohttpd-dev libpsl-dev zlib1g-dev libdeflate-dev libssl-dev
  gnuplot-nox curl
)
# The tests' checkers (ajv for the records, warcio for the archives) come
# from the npm registry: npm from the archive where the machine has none.
if ! command -v npm >/dev/null 2>&1; then
  packages+=(nodejs npm)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "sieve: missing packages: ${missing[*]}" >&2
  echo "sieve: run this script as root (or install them with sudo apt-get install)" >&2
  exit 1
fi

echo "sieve: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
