#!/usr/bin/env bash
# demo.sh BINDIR — serve a generated site from testsite with a small delay per
# response, crawl it with each stage, and print a side-by-side table.
set -euo pipefail
bin=${1:-build/bin}
pages=${DEMO_PAGES:-1000}
delay=${DEMO_DELAY_MS:-20}
tasks=${DEMO_MAX_TASKS:-100}

work=$(mktemp -d)
site_pid=
cleanup() {
    [ -n "$site_pid" ] && kill "$site_pid" 2>/dev/null && wait "$site_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

"$bin/testsite" --generate "pages=$pages,links=12,size=7000,seed=1" --delay "$delay" \
    > "$work/site.out" &
site_pid=$!
for _ in $(seq 100); do
    [ -s "$work/site.out" ] && break
    sleep 0.1
done
root=$(head -n1 "$work/site.out")
[ -n "$root" ] || { echo "demo: testsite did not start" >&2; exit 1; }

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
