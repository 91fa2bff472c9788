#!/usr/bin/env bash
# demo-cluster.sh BINDIR — one crawl, several processes (docs/scale.md): a redis-server
# of its own on a free 127.0.0.1 port (no config file, nothing saved, in a temporary
# directory), a generated testsite, DEMO_PROCS (2) crawl-queue processes sharing
# --frontier redis://127.0.0.1:PORT/demo, then the merged table (scripts/merge-jsonl.sh
# --table) and one process alone on the same site for comparison. Everything it
# started is stopped when it exits.
set -euo pipefail
bin=${1:-build/bin}
pages=${DEMO_PAGES:-5000}
delay=${DEMO_DELAY_MS:-2}
tasks=${DEMO_MAX_TASKS:-100}
procs=${DEMO_PROCS:-2}
here=$(cd "$(dirname "$0")" && pwd)
command -v redis-server >/dev/null && command -v redis-cli >/dev/null ||
    { echo "demo-cluster: redis-server and redis-cli are needed: make -f Makefile.tutorial setup" >&2; exit 1; }

. "$here/testsite-lib.sh"
. "$here/redis-lib.sh"
work=$(mktemp -d)
stop_all() {
    redis_stop
    site_stop
    rm -rf "$work"
}
trap stop_all EXIT

redis_start "$work" || { echo "demo-cluster: redis-server did not start" >&2; exit 1; }

site_start "$bin" "pages=$pages,links=8,size=2000,seed=3" --delay "$delay" ||
    { echo "demo-cluster: testsite did not start" >&2; exit 1; }
frontier="redis://127.0.0.1:$redis_port/demo"
echo "Crawling $site_url ($pages pages, $delay ms per response) with $procs crawl-queue processes"
echo "sharing --frontier $frontier (--max-tasks $tasks each)"
echo
t0=$(date +%s.%N)
pids=()
for i in $(seq "$procs"); do
    "$bin/crawl-queue" -q --max-tasks "$tasks" --frontier "$frontier" --format jsonl \
        --output "$work/p$i.jsonl" "$site_url" &
    pids+=($!)
done
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
t1=$(date +%s.%N)
[ "$status" -eq 0 ] || { echo "demo-cluster: a crawler failed" >&2; exit 1; }
files=()
for i in $(seq "$procs"); do files+=("$work/p$i.jsonl"); done
bash "$here/merge-jsonl.sh" --table "${files[@]}"
echo
echo "Redis: $(redis-cli -p "$redis_port" scard crawl:demo:seen) URLs seen, counter" \
     "$(redis-cli -p "$redis_port" get crawl:demo:unfinished), seen set" \
     "$(redis-cli -p "$redis_port" memory usage crawl:demo:seen samples 0) bytes"
"$bin/crawl-queue" -q --max-tasks "$tasks" --format jsonl --output "$work/one.jsonl" "$site_url"
t2=$(date +%s.%N)
awk -v a="$t0" -v b="$t1" -v c="$t2" -v n="$procs" -v pages="$(grep -vc '^{"summary"' "$work/one.jsonl")" 'BEGIN {
    printf "%d processes: %.2f s (%.0f pages/s); one process alone: %.2f s (%.0f pages/s)\n",
           n, b - a, pages / (b - a), c - b, pages / (c - b) }'
