#!/usr/bin/env bash
# demo.sh BINDIR — serve a generated site from testsite with a small delay per
# response, crawl it with each stage, and print a side-by-side table.
set -euo pipefail
bin=${1:-build/bin}
pages=${DEMO_PAGES:-1000}
delay=${DEMO_DELAY_MS:-20}
tasks=${DEMO_MAX_TASKS:-100}

. "$(dirname "$0")/testsite-lib.sh"
work=$(mktemp -d)
trap 'site_stop; rm -rf "$work"' EXIT

site_start "$bin" "pages=$pages,links=12,size=7000,seed=1" --delay "$delay" ||
    { echo "demo: testsite did not start" >&2; exit 1; }
root=$site_url

echo "Crawling $root ($pages pages, ${delay} ms per response, --max-tasks $tasks)"
echo
printf '%-18s %-9s %6s %8s %8s %10s %9s\n' stage transport pages seconds cpu_s peak_rss peak_in_flight
for prog in crawl-callbacks crawl-generators crawl-queue; do
    "$bin/runstat" -o "$work/stat" "$bin/$prog" -q --format jsonl --max-tasks "$tasks" \
        --output "$work/report.jsonl" "$root"
    summary=$(tail -n1 "$work/report.jsonl")
    field() { sed -E "s/.*\"$1\": \"?([^,\"}]*)\"?.*/\1/" <<<"$summary"; }
    read -r wall cpu rss _ < <(sed -E 's/[a-z_]+=//g' "$work/stat")
    printf '%-18s %-9s %6s %8s %8s %8s MB %9s\n' "$prog" "$(field transport)" "$(field done)" \
        "$wall" "$cpu" "$((rss / 1024))" "$(field peak_in_flight)"
done
echo
echo "The ideal wall time is pages x delay / max_tasks = $(awk "BEGIN{print $pages*$delay/$tasks/1000}") s."
