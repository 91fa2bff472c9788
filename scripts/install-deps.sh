#!/usr/bin/env bash
# Install the Debian packages crawlstages needs, when missing, then warcio.js (npm: the
# --warc tests' independent reader, scripts/install-warcio.sh). Idempotent.
# Not root: prints the apt-get line to run instead.
set -euo pipefail

packages=(gcc make cmake pkg-config libcurl4-openssl-dev libssl-dev libxml2-dev zlib1g-dev libcmocka-dev
          libsqlite3-dev libpcre2-dev libhiredis-dev redis-server gdb openssl valgrind wget liblua5.4-dev)
# nginx-light: the HTTP/2 test's server (scenario.h2; it is skipped without it)
packages+=(nginx-light)
packages+=(man-db)   # scenario.install: man -l renders the man pages (skipped without it)
packages+=(tmux)   # test_summary: crawl-queue's progress line in a terminal (a tmux pane)
# The peers and tools the benchmarks and the checks beside the suite use (the default
# suite skips what needs them): Scrapy, wget2, an HTTP/2 server library, an HTML5
# parser for differential tests, a real browser and ImageMagick for mirrors, perf.
packages+=(python3-scrapy wget2 python3-h2 python3-html5lib chromium imagemagick linux-perf)
# python3-doc: a real site of 533 pages, for test_links_tokenizer's differential run
# (it compares only the test corpora without it) and the benchmarks
packages+=(python3-doc)
# npm: Debian's package only where no npm is installed. A machine with NodeSource's nodejs
# has npm inside it, and that nodejs conflicts with Debian's npm package.
command -v npm >/dev/null 2>&1 || packages+=(npm)
[ "$#" -gt 0 ] && packages+=("$@")    # extra packages, e.g. valgrind wget clang

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
install_warcio() { bash "$(dirname "$0")/install-warcio.sh"; }
if [ "${#missing[@]}" -eq 0 ]; then
    echo "install-deps: all packages present"
    install_warcio
    exit 0
fi
cmd=(apt-get install -y --no-install-recommends "${missing[@]}")
if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: missing ${missing[*]}; run as root:"
    echo "  apt-get update && ${cmd[*]}"
    exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
"${cmd[@]}" >/dev/null
echo "install-deps: done"
install_warcio
