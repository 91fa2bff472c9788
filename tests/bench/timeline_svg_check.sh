#!/usr/bin/env bash
# timeline_svg_check.sh BIN_DIR — timeline-svg (ctest timeline_svg):
#   - "slots busy" is the fetches' time over the slots drawn: 4 slots of a trace whose
#     crawl says --max-tasks 100, each busy half of the crawl, are 50% busy (not 2%);
#   - a crawl-queue trace of a testsite gives one outlined bar per fetch;
#   - the trace is streamed: on a trace of some 3.5 MB (8,000 fetches, each with its three
#     phases) its peak RSS (runstat) stays under 64 MB over a small trace's — a parse
#     of the whole document took some 400 times the trace's size.
set -uo pipefail
bin=$(cd "${1:?usage: timeline_svg_check.sh BIN_DIR}" && pwd)
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/scripts/testsite-lib.sh"
work=$bin/../timeline-svg-check
rm -rf "$work"
mkdir -p "$work"
trap 'site_stop' EXIT
fail=0
bad() { echo "timeline_svg: FAIL: $*"; fail=1; }

# A trace as trace.c writes it: fetches on slots 1..SLOTS, the crawl's end at END us.
trace() {  # trace SLOTS FETCHES_PER_SLOT DUR END MAX_TASKS
    awk -v slots="$1" -v per="$2" -v dur="$3" -v end="$4" -v mt="$5" 'BEGIN {
        print "{\"traceEvents\": ["
        print "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 3, \"tid\": 0, \"args\": {\"name\": \"synthetic\"}},"
        for (k = 1; k <= slots; k++)
            for (i = 0; i < per; i++) {
                ts = i * (end / per)
                printf "{\"name\": \"/p/%d/%d\", \"cat\": \"fetch\", \"ph\": \"X\", \"ts\": %d, \"dur\": %d, \"pid\": 3, \"tid\": %d, \"args\": {\"url\": \"http://127.0.0.1:1/p/%d/%d\", \"status\": 200, \"size\": 300}},\n", k, i, ts, dur, k, k, i
                printf "{\"name\": \"connect\", \"cat\": \"phase\", \"ph\": \"X\", \"ts\": %d, \"dur\": %d, \"pid\": 3, \"tid\": %d},\n", ts, dur / 4, k
                printf "{\"name\": \"waiting\", \"cat\": \"phase\", \"ph\": \"X\", \"ts\": %d, \"dur\": %d, \"pid\": 3, \"tid\": %d},\n", ts + dur / 4, dur / 2, k
                printf "{\"name\": \"body\", \"cat\": \"phase\", \"ph\": \"X\", \"ts\": %d, \"dur\": %d, \"pid\": 3, \"tid\": %d},\n", ts + 3 * dur / 4, dur / 4, k
            }
        printf "{\"name\": \"crawl finished\", \"cat\": \"crawl\", \"ph\": \"i\", \"s\": \"g\", \"ts\": %d, \"pid\": 3, \"tid\": 0, \"args\": {\"urls\": %d, \"ms\": %d, \"max_tasks\": %d, \"peak_in_flight\": %d, \"transport\": \"curl\", \"selector\": \"epoll\", \"interrupted\": 0}}\n", end, slots * per, end / 1000, mt, slots
        print "],"
        print "\"displayTimeUnit\": \"ms\"}"
    }'
}

# Slots busy: 4 slots, one fetch each of 500 ms in a crawl of 1 s, --max-tasks 100.
trace 4 1 500000 1000000 100 >"$work/half.json"
"$bin/timeline-svg" "$work/half.json" "$work/half.svg" || bad "timeline-svg half.json failed"
busy=$(grep -o 'slots busy [0-9]*%' "$work/half.svg")
echo "timeline_svg: 4 slots each busy 0.5 s of 1 s, --max-tasks 100: $busy"
[ "$busy" = "slots busy 50%" ] || bad "expected slots busy 50%, got '$busy'"

# A real trace: one outlined bar (a tooltip) per fetch.
site_start "$bin" "pages=8,links=2,size=300,seed=5" || exit 1
"$bin/crawl-queue" -q --max-tasks 100 --trace-events "$work/real.json" "$site_url" >/dev/null ||
    bad "crawl-queue --trace-events failed"
site_stop
"$bin/timeline-svg" "$work/real.json" "$work/real.svg" || bad "timeline-svg real.json failed"
fetches=$(grep -c '"cat": "fetch"' "$work/real.json")
bars=$(grep -c '<title>' "$work/real.svg")
echo "timeline_svg: crawl-queue's trace: $fetches fetches, $bars bars"
[ "$fetches" -ge 9 ] && [ "$fetches" -eq "$bars" ] || bad "$fetches fetches, $bars bars"

# Memory: streamed, whatever the trace's size: what the big trace takes over the small
# one's peak (the program's own, and a sanitizer's shadow in an ASan build, whose
# quarantine of freed blocks is made small here: it would hold what streaming frees).
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=1
"$bin/runstat" -o "$work/half.stat" "$bin/timeline-svg" "$work/half.json" "$work/half.svg" ||
    bad "timeline-svg half.json failed"
base_kb=$(sed -nE 's/.*maxrss_kb=([0-9]+).*/\1/p' "$work/half.stat")
trace 8 1000 800 10000000 100 >"$work/big.json"
size_kb=$(( $(stat -c %s "$work/big.json") / 1024 ))
"$bin/runstat" -o "$work/big.stat" "$bin/timeline-svg" "$work/big.json" "$work/big.svg" ||
    bad "timeline-svg big.json failed"
rss_kb=$(sed -nE 's/.*maxrss_kb=([0-9]+).*/\1/p' "$work/big.stat")
echo "timeline_svg: a trace of ${size_kb} KB: peak RSS ${rss_kb:-?} KB (${base_kb:-?} KB for a small one)"
[ -n "$rss_kb" ] && [ -n "$base_kb" ] && [ $((rss_kb - base_kb)) -lt 65536 ] ||
    bad "peak RSS ${rss_kb:-?} KB for a ${size_kb} KB trace, ${base_kb:-?} KB for a small one (at most 65536 more)"
rm -f "$work/big.json" "$work/big.svg"
[ "$fail" -eq 0 ] && echo "timeline_svg: ok"
exit "$fail"
