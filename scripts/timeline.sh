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

. "$(dirname "$0")/testsite-lib.sh"
work=$(mktemp -d)
trap 'site_stop; rm -rf "$work"' EXIT

site_start "$bin" "pages=$pages,links=$links,size=6000,seed=1" --delay "$delay" ||
    { echo "timeline: testsite did not start" >&2; exit 1; }
root=$site_url

echo "Crawling $root ($pages pages, $links links each, ${delay} ms per response, --max-tasks $tasks)"
n=0
for prog in crawl-callbacks crawl-generators crawl-queue; do
    n=$((n + 1))
    json=$build/timeline-stage$n.json
    svg=$build/timeline-stage$n.svg
    # crawl-queue as the chapter has it (--chapter: its Queue, no politeness)
    chapter=()
    [ "$prog" = crawl-queue ] && chapter=(--chapter)
    "$bin/$prog" -q --format jsonl --max-tasks "$tasks" "${chapter[@]}" --trace-events "$json" \
        --output "$work/report.jsonl" "$root"
    "$bin/timeline-svg" "$json" "$svg"
    printf '  %-17s %s  (Perfetto: ui.perfetto.dev, Open trace file)\n' "$prog" "$json"
    printf '  %-17s %s\n' "" "$svg"
done
