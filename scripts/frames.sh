#!/usr/bin/env bash
# frames.sh [--check] [BINDIR [OUTDIR]] — a picture of the frames, Python Tutor's view for this
# course: stage 1 (callbacks) and stage 2 (coroutines) stopped in gdb at the same
# moment — the link parser at the first <a> of page p/2 of a local site, as
# scripts/traces.sh (a) — and each drawn by frames-svg (docs/gdb/crawlstages.py) as
# one SVG: OUTDIR/stage1.svg (the callback's C stack, the Fetchers that are all it
# keeps) and OUTDIR/stage2.svg (the C stack, and the Tasks with each coroutine's heap
# frame, its fields and the Futures it waits on). OUTDIR: build/frames. Each gdb gets
# FRAMES_TIMEOUT seconds (60). Exit 1 when a picture is not made. --check (the test
# docs.frames): then each picture must show what it is for, by name, not by pixels.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
check=0
[ "${1:-}" = --check ] && { check=1; shift; }
bin=${1:-$here/build/bin}
out=${2:-$here/build/frames}
limit=${FRAMES_TIMEOUT:-60}
for f in "$bin/crawl-callbacks" "$bin/crawl-generators" "$bin/testsite"; do
    [ -x "$f" ] || { echo "frames.sh: $f not built" >&2; exit 1; }
done
command -v gdb >/dev/null || { echo "frames.sh: gdb not found" >&2; exit 1; }
mkdir -p "$out" || exit 1
out=$(cd "$out" && pwd)

# The pictures show the sockets' numbers: an fd this script inherited (ctest holds one
# open) would be the crawler's too and shift them. Only stdin, stdout and stderr go on.
for fd in /proc/$$/fd/*; do
    fd=${fd##*/}
    [ "$fd" -gt 2 ] 2>/dev/null && eval "exec $fd>&-" 2>/dev/null
done

. "$here/scripts/testsite-lib.sh"
work=$(mktemp -d)
cleanup() { site_stop; rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

site_start "$bin" pages=6,links=3,size=9000,seed=1 || exit 1
page="${site_url}p/2"
status=0
for n in 1 2; do
    prog=crawl-callbacks what="a callback's stack, and the Fetchers"
    [ $n = 2 ] && prog=crawl-generators what="a coroutine's stack, and its Tasks' heap frames"
    rm -f "$out/stage$n.svg"
    timeout -k 5 "$limit" gdb -q -batch -nx -ex "set \$root = \"$here\"" -ex "set \$page = \"$page\"" \
        -ex "set \$svg = \"$out/stage$n.svg\"" -ex "set \$title = \"stage $n, $prog: $what, at the first <a> of /p/2\"" \
        -x "$here/docs/gdb/frames.gdb" --args "$bin/$prog" -q --max-tasks 2 --output /dev/null "$site_url" \
        >"$work/gdb$n" 2>&1 </dev/null
    if [ -s "$out/stage$n.svg" ] && ! grep -qE 'Python Exception|Error occurred in Python|Cannot call functions|Undefined command' "$work/gdb$n"; then
        grep '^frames-svg: ' "$work/gdb$n"
    else
        echo "frames.sh: no picture of stage $n; gdb said:" >&2
        tail -n 8 "$work/gdb$n" >&2
        status=1
    fi
done
[ $check = 1 ] && [ $status = 0 ] || exit $status

# What each picture must hold: WHICH|TEXT|WHY, TEXT as the SVG writes it.
while IFS='|' read -r n text why; do
    if grep -qF -- "$text" "$out/stage$n.svg"; then
        echo "ok    stage$n.svg: $why"
    else
        echo "FAIL  stage$n.svg: $why: no '$text'"
        status=1
    fi
done <<'CHECKS'
1|read_response   fetcher.c:|the C stack holds the callback that read the chunk
1|dispatch_io   selector.c:|... called by the event loop
1|tok_start   links.c:|... down to the link parser's breakpoint
1|Heap: the Fetchers|the heap side is the Fetchers
1|Fetcher 'http://|a Fetcher box
1|url = &quot;http://|... with its fields: the URL
1|connected = 1|... and what the callbacks saved by hand
2|read_all_body   sockio.c:|the C stack holds the coroutine reading the body
2|task_step   task.c:|... resumed by its Task's step
2|Heap: the Tasks and their coroutine frames|the heap side is the Tasks
2|Task 'http://|a Task box
2|fetch   stage2_generators/fetch.c:|... with the fetch coroutine's frame
2|read_all   stage2_generators/sockio.c:|... down to read_all's frame
2|(running: C frame #|the frames of the running Task marked with their C frame
2|fd_backoff = 0|a frame's own fields (its locals across awaits)
2|waits on &lt;Future pending cb=[wakeup(Task|a Future a frame waits on, with the Task it wakes
CHECKS
exit $status
