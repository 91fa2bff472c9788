#!/usr/bin/env bash
# demo.sh BINDIR — serve a generated site from testsite with a small delay per
# response, crawl it with each stage, print a side-by-side table, and compare the
# three reports record by record.
set -euo pipefail
bin=${1:-build/bin}
pages=${DEMO_PAGES:-1000}
delay=${DEMO_DELAY_MS:-20}
tasks=${DEMO_MAX_TASKS:-100}

# In a handout (scripts/handout.sh) an exercise still to do is a stub, and the programs
# that run its code crawl nothing: say which, and leave them out.
progs=(crawl-callbacks crawl-generators crawl-queue)
todo=$(bash "$(dirname "$0")/exercise.sh" todo)
if [ -n "$todo" ]; then
    echo "This copy is a handout: these exercises are still to do (HANDOUT.md, docs/exercises.md):"
    while read -r ex uses; do
        if [ -n "$uses" ]; then
            printf '  %-22s (until it is written, nothing is crawled by %s)\n' "$ex" "$(sed 's/ / or /g' <<<"$uses")"
        else    # no program holds it: a spider file (exercise.sh graph says the same)
            printf '  %-22s (a spider file, for crawl-queue --spider: until it is written, it emits no item)\n' "$ex"
        fi
        for p in $uses; do progs=("${progs[@]/$p}"); done
    done <<<"$todo"
    read -r -a progs <<<"${progs[*]}"
    if [ ${#progs[@]} -eq 0 ]; then
        echo "No stage can crawl yet: write the exercises, check each with"
        echo "  make -f Makefile.tutorial check-exercise EX=NAME"
        exit 0
    fi
    echo "The demo runs the others: ${progs[*]}."
    echo
fi

. "$(dirname "$0")/testsite-lib.sh"
work=$(mktemp -d)
trap 'site_stop; rm -rf "$work"' EXIT

site_start "$bin" "pages=$pages,links=12,size=7000,seed=1" --delay "$delay" ||
    { echo "demo: testsite did not start" >&2; exit 1; }
root=$site_url

echo "Crawling $root ($pages pages, ${delay} ms per response, --max-tasks $tasks)"
echo
printf '%-18s %-9s %6s %8s %8s %10s %9s\n' stage transport pages seconds cpu_s peak_rss peak_in_flight
for prog in "${progs[@]}"; do
    # crawl-queue as the chapter has it (--chapter: its Queue, no politeness)
    chapter=()
    [ "$prog" = crawl-queue ] && chapter=(--chapter)
    "$bin/runstat" -o "$work/stat" "$bin/$prog" -q --format jsonl --max-tasks "$tasks" "${chapter[@]}" \
        --output "$work/$prog.jsonl" "$root"
    summary=$(tail -n1 "$work/$prog.jsonl")
    field() { sed -E "s/.*\"$1\": \"?([^,\"}]*)\"?.*/\1/" <<<"$summary"; }
    read -r wall cpu rss _ < <(sed -E 's/[a-z_]+=//g' "$work/stat")
    printf '%-18s %-9s %6s %8s %8s %8s MB %9s\n' "$prog" "$(field transport)" "$(field done)" \
        "$wall" "$cpu" "$((rss / 1024))" "$(field peak_in_flight)"
done
echo
echo "The ideal wall time is pages x delay / max_tasks = $(awk "BEGIN{print $pages*$delay/$tasks/1000}") s."

# The reports: one record per URL, sorted, without num_new_urls (how many of a page's
# links were new when it arrived depends on which page arrived first, so it differs
# from run to run whenever fetches overlap) and without crawl-queue's http_version (which
# HTTP version answered), fetched_at and elapsed (a run's own times) and url_normalized:
# keys stages 1 and 2 do not write.
records() {
    grep -v '^{"summary"' "$work/$1.jsonl" |
        sed -e 's/, "num_new_urls": [0-9]*//' -e 's/, "http_version": \("[^"]*"\|null\)//' \
            -e 's/, "fetched_at": "[^"]*"//' -e 's/, "elapsed": \([0-9.]*\|null\)//' \
            -e 's/, "url_normalized": "[^"]*"//' | sort
}
echo
[ ${#progs[@]} -gt 1 ] || exit 0
records "${progs[0]}" >"$work/1"
n=$(wc -l <"$work/1")
same=1
for prog in "${progs[@]:1}"; do
    records "$prog" >"$work/2"
    if ! cmp -s "$work/1" "$work/2"; then
        same=0
        echo "${progs[0]} and $prog differ (< ${progs[0]}, > $prog):"
        diff "$work/1" "$work/2" | grep '^[<>]' | head -n 6
    fi
done
echo "The ${#progs[@]} reports, record by record ($n records, sorted; num_new_urls left out: it"
if [ $same = 1 ]; then
    echo "depends on which page arrived first; http_version too): identical."
else
    echo "depends on which page arrived first; http_version too): NOT identical (above)."
    exit 1
fi
