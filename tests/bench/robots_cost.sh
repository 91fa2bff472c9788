#!/usr/bin/env bash
# robots_cost.sh — what robots.txt files of 500 KiB cost crawl-queue (issue 27 H4, H5;
# docs/benchmarks.md, "robots.txt: time and memory"): N origins (one testsite each, on
# 127.0.0.1 and its own port) serve the same robots.txt, and crawl-queue crawls their
# roots; runstat prints its wall time and peak RSS.
#
#   tests/bench/robots_cost.sh [BUILD_DIR] [N] [KIND]
#
# BUILD_DIR: where bin/crawl-queue, bin/runstat and tests/testsite/testsite are (build);
# N: origins (200); KIND: "distinct" (rules "Disallow: /zzI/*q", all different: what
# the middleware keeps per origin) or "stars" ("Allow:*aab" 46,542 times, and each
# root links a page whose path is 60,000 a's: what matching costs). Prints one line
# "KIND N origins: wall=W cpu=C maxrss_kb=R status=S".
set -euo pipefail
build=${1:-build}
n=${2:-200}
kind=${3:-distinct}
tmp=$(mktemp -d /tmp/robots_cost.XXXXXX)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

testsite=$build/tests/testsite/testsite
[ -x "$testsite" ] || testsite=$build/bin/testsite
for f in "$testsite" "$build/bin/crawl-queue" "$build/bin/runstat"; do
    [ -x "$f" ] || { echo "robots_cost.sh: $f: not built" >&2; exit 2; }
done

# The robots.txt: 500 KiB (RFC 9309's parsing limit) of rules for everyone.
awk -v kind="$kind" 'BEGIN {
    print "User-agent: *"; size = 14
    for (i = 0; ; i++) {
        line = kind == "stars" ? "Allow:*aab" : sprintf("Disallow: /zz%d/*q", i)
        if (size + length(line) + 1 > 500 * 1024) break
        print line; size += length(line) + 1
    }
}' > "$tmp/robots.txt"
long=$(head -c 60000 /dev/zero | tr '\0' a)
{
    echo "page /robots.txt type=text/plain body=@robots.txt"
    if [ "$kind" = stars ]; then
        echo "page /"; echo " link /$long"; echo "page /$long"
    else
        echo "page /"
    fi
} > "$tmp/site"

roots=()
for ((i = 0; i < n; i++)); do
    "$testsite" "$tmp/site" > "$tmp/url.$i" &
    pids+=($!)
done
for ((i = 0; i < n; i++)); do
    for _ in $(seq 100); do [ -s "$tmp/url.$i" ] && break; sleep 0.05; done
    roots+=("$(head -n 1 "$tmp/url.$i")")
done
"$build/bin/runstat" -o "$tmp/stat" "$build/bin/crawl-queue" -q --max-tries 1 \
    --output "$tmp/out.jsonl" --format jsonl "${roots[@]}" || true
echo "$kind $n origins: $(cat "$tmp/stat")"
