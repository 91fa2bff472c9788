#!/usr/bin/env bash
# linkpath.sh — CPU per page of the link path (issue #35): crawlers side by side with
# wget2 on "site A", LINKPATH_PAGES static pages (12 links, ~7 KB each: bench.sh's http2
# site, plain HTTP) served by nginx on 127.0.0.1. Each crawler runs LINKPATH_RUNS times,
# round-robin with the others; prints the medians of wall and CPU seconds (runstat), the
# pages and the CPU microseconds per page.
#
#   tests/bench/linkpath.sh NAME=COMMAND... [wget2]
#       NAME=COMMAND  a crawler: COMMAND (quoted if it has spaces) is run with the site's
#                     root URL appended, e.g. 'tok=build-release/bin/crawl-queue --chapter -q'
#       wget2         /usr/bin/wget2 -r -l inf --delete-after (its pages: nginx's 200s)
#   LINKPATH_RUNS (5), LINKPATH_PAGES (2000), LINKPATH_BUILD (build-release: its runstat),
#   LINKPATH_OUT (LINKPATH_BUILD/linkpath)
set -uo pipefail

runs=${LINKPATH_RUNS:-5}
pages=${LINKPATH_PAGES:-2000}
build=${LINKPATH_BUILD:-build-release}
out=${LINKPATH_OUT:-$build/linkpath}
runstat=$build/bin/runstat
[ -x "$runstat" ] || { echo "linkpath: $runstat is missing (cmake --build $build --target runstat)" >&2; exit 1; }
. "$(dirname "$0")/../../scripts/nginx-lib.sh"
[ -n "$nginx_bin" ] || { echo "linkpath: nginx not found (scripts/install-deps.sh)" >&2; exit 1; }
[ $# -gt 0 ] || { echo "usage: linkpath.sh NAME=COMMAND... [wget2]" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
dir=$out/site
rm -rf "$dir"
mkdir -p "$dir"

# Site A: the pages, served by nginx.
awk -v n="$pages" -v dir="$dir" 'BEGIN {
    for (i = 0; i < n; i++) {
        f = dir "/p" i ".html"
        printf "<html><body><h1>page %d</h1>\n", i > f
        for (k = 1; k <= 12; k++)
            printf "<a href=\"p%d.html\">link %d</a>\n", (i * 7 + k * 131) % n, k > f
        for (b = 0; b < 7000; b += 64)
            printf "<p>filler filler filler filler filler filler filler fill</p>\n" > f
        printf "</body></html>\n" > f
        close(f)
    }
}'
nginx_start "$out" "  types { text/html html; }
  log_format st '\$status';
  access_log $out/access.log st;" "    listen 127.0.0.1:@PORT@;
    root $dir;
    index p0.html;" ||
    { echo "linkpath: nginx did not start: $(tail -c 300 "$out/error.log")" >&2; exit 1; }
trap nginx_stop EXIT
url=http://127.0.0.1:$nginx_port/

names=()
declare -A cmds
for a in "$@"; do
    if [ "$a" = wget2 ]; then
        names+=(wget2)
    else
        names+=("${a%%=*}")
        cmds[${a%%=*}]=${a#*=}
    fi
done

for r in $(seq "$runs"); do
    for n in "${names[@]}"; do
        if [ "$n" = wget2 ]; then
            w=$(mktemp -d "$out/wget2.XXXXXX")
            : >"$out/access.log"
            "$runstat" -o "$out/$n.$r.stat" /usr/bin/wget2 -r -l inf --delete-after -q -P "$w" \
                "$url" >"$out/$n.$r.log" 2>&1
            grep -c '^200$' "$out/access.log" >"$out/$n.$r.pages"
            rm -rf "$w"
        else
            # shellcheck disable=SC2086
            "$runstat" -o "$out/$n.$r.stat" ${cmds[$n]} --format jsonl --output "$out/$n.$r.jsonl" \
                "$url" 2>"$out/$n.$r.err"
            tail -n1 "$out/$n.$r.jsonl" | sed -nE 's/.*"done": ([0-9]+).*/\1/p' >"$out/$n.$r.pages"
            rm -f "$out/$n.$r.jsonl"
        fi
    done
done

median() { sort -g | awk '{v[NR]=$1} END {if (NR) print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2); else print "-"}'; }
field() { sed -nE "s/.*$2=([^ ]*).*/\1/p" "$1"; }
printf '%-10s %6s %8s %8s %12s\n' crawler pages wall_s cpu_s cpu_us/page
for n in "${names[@]}"; do
    p=$(for r in $(seq "$runs"); do cat "$out/$n.$r.pages"; done | median)
    w=$(for r in $(seq "$runs"); do field "$out/$n.$r.stat" wall; done | median)
    c=$(for r in $(seq "$runs"); do field "$out/$n.$r.stat" cpu; done | median)
    printf '%-10s %6s %8s %8s %12s\n' "$n" "$p" "$w" "$c" \
        "$(awk -v c="$c" -v p="$p" 'BEGIN { if (p > 0) printf "%.0f", c * 1e6 / p; else print "-" }')"
done
