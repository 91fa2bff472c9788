#!/usr/bin/env bash
# timeline.sh BUILD — serve a generated site from testsite with a delay per response,
# crawl it with each stage and --trace-events, and draw each trace as an SVG timeline
# (tests/bench/timeline_svg.c). Prints the paths: the JSON opens in ui.perfetto.dev or
# chrome://tracing, the SVG in any browser. docs/timeline.md explains what to look for.
set -euo pipefail
build=${1:-build}
bin=$build/bin
pages=${TIMELINE_PAGES:-200}
links=${TIMELINE_LINKS:-8}
delay=${TIMELINE_DELAY_MS:-30}
tasks=${TIMELINE_MAX_TASKS:-10}

work=$(mktemp -d)
site_pid=
cleanup() {
    if [ -n "$site_pid" ]; then
        kill "$site_pid" 2>/dev/null || true
        wait "$site_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

"$bin/testsite" --generate "pages=$pages,links=$links,size=6000,seed=1" --delay "$delay" \
    > "$work/site.out" &
site_pid=$!
for _ in $(seq 100); do
    [ -s "$work/site.out" ] && break
    sleep 0.1
done
root=$(head -n1 "$work/site.out")
[ -n "$root" ] || { echo "timeline: testsite did not start" >&2; exit 1; }

echo "Crawling $root ($pages pages, $links links each, ${delay} ms per response, --max-tasks $tasks)"
n=0
for prog in crawl-callbacks crawl-generators crawl-queue; do
    n=$((n + 1))
    json=$build/timeline-stage$n.json
    svg=$build/timeline-stage$n.svg
    "$bin/$prog" -q --format jsonl --max-tasks "$tasks" --trace-events "$json" \
        --output "$work/report.jsonl" "$root"
    "$bin/timeline-svg" "$json" "$svg"
    printf '  %-17s %s  (Perfetto: ui.perfetto.dev, Open trace file)\n' "$prog" "$json"
    printf '  %-17s %s\n' "" "$svg"
done
