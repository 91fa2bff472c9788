#!/usr/bin/env bash
# usr1_dump.sh BINDIR — `kill -USR1 PID` prints a crawler's work in flight on stderr,
# at the next turn of its loop, and the crawl goes on (ctest scenario.usr1_dump).
# Each stage crawls a slow local site (every response waits 400 ms, --max-tasks 3);
# once its SIGUSR1 handler is installed (/proc/PID/status says it catches the signal:
# before that, SIGUSR1 would kill it, and a loaded machine can take far more than the
# 100 ms this once slept to start a process) it gets SIGUSR1, again every 100 ms until
# a dump appears (a signal before the loop exists is ignored). Then:
#   crawl-generators, crawl-queue: the task tree, as gdb's `info tasks` prints it —
#     "N live task(s):", "Task 'NAME' (pending)", a frame line per coroutine;
#   crawl-callbacks: "N live Fetcher(s):" and a line per Fetcher (URL, state, bytes);
# the crawl must still finish with exit status 0 and every page in its report.
set -uo pipefail
bin=${1:?usage: usr1_dump.sh BINDIR}
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/scripts/testsite-lib.sh"
work=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; site_stop; rm -rf "$work"; }
trap cleanup EXIT
pages=12
site_start "$bin" "pages=$pages,links=3,size=400,seed=3" --delay 400 || exit 1

# Whether process $1 catches signal $2 (its bit in SigCgt of /proc/PID/status).
catches() {
    local mask
    mask=$(awk '$1 == "SigCgt:" { print $2 }' "/proc/$1/status" 2>/dev/null) || return 1
    [ -n "$mask" ] && (( (16#$mask >> ($2 - 1)) & 1 ))
}

fail=0
for prog in crawl-callbacks crawl-generators crawl-queue; do
    "$bin/$prog" -q --max-tasks 3 --format jsonl --output "$work/$prog.jsonl" "$site_url" \
        2>"$work/$prog.err" &
    pid=$!
    for _ in $(seq 1000); do                    # 10 s at most
        catches "$pid" "$(kill -l USR1)" && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.01
    done
    for _ in $(seq 50); do
        sleep 0.1
        kill -USR1 "$pid" 2>/dev/null || break
        grep -qE '^[0-9]+ live (task|Fetcher)\(s\):' "$work/$prog.err" && break
    done
    wait "$pid"
    rc=$?
    pid=
    err=$work/$prog.err
    case $prog in
        crawl-callbacks)
            ok=$(grep -cE "^  Fetcher 'http://127\.0\.0\.1:[0-9]+/[^']*' (connecting|sending|reading|waiting for a free descriptor|transfer \(curl\)|between tries), [0-9]+ bytes, try [0-9]+$" "$err")
            head=$(grep -cE '^[1-9][0-9]* live Fetcher\(s\):$' "$err") ;;
        *)
            ok=$(grep -cE '^  File "stage[23]_[a-z]+/[a-z_]+\.c", line [0-9]+, in [a-z_]+' "$err")
            head=$(grep -cE '^[1-9][0-9]* live task\(s\):$' "$err")
            grep -qE "^Task '[^']+' \(pending\)$" "$err" || ok=0 ;;
    esac
    done_n=$(grep -c '"url"' "$work/$prog.jsonl" 2>/dev/null)
    if [ "$head" -ge 1 ] && [ "$ok" -ge 1 ] && [ $rc -eq 0 ] && [ "$done_n" -eq $pages ]; then
        echo "ok    $prog: $head dump(s) on SIGUSR1; the crawl went on: exit 0, $done_n pages"
        awk '/ live (task|Fetcher)\(s\):$/ { n++ } n == 1' "$err" | head -n 12 | sed 's/^/        /'
    else
        echo "FAIL  $prog: $head dump header(s), $ok dump line(s), exit $rc, $done_n of $pages pages; stderr:"
        head -n 20 "$err" | sed 's/^/        /'
        fail=1
    fi
done
exit $fail
