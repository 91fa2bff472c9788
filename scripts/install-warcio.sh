#!/usr/bin/env bash
# Install warcio.js (webrecorder's WARC library, npm package "warcio", with its `warcio`
# command), the independent reader the --warc tests check archives with
# (tests/scenarios/warcio_check.mjs). Needs node and npm (Debian: npm). Idempotent.
# Not root: prints the command to run instead.
set -euo pipefail

version=2.4.11
if command -v warcio >/dev/null 2>&1 && [ "$(warcio --version 2>/dev/null)" = "$version" ]; then
    echo "install-warcio: warcio $version present"
    exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
    echo "install-warcio: npm is missing (apt-get install npm)"
    exit 1
fi
cmd=(npm install --global --no-audit --no-fund "warcio@$version")
if [ "$(id -u)" -ne 0 ]; then
    echo "install-warcio: run as root:"
    echo "  ${cmd[*]}"
    exit 1
fi
echo "install-warcio: installing warcio $version"
"${cmd[@]}" >/dev/null
echo "install-warcio: done ($(command -v warcio))"
