#!/usr/bin/env bash
# traces.sh [BINDIR] — stage 1 (callbacks) and stage 2 (coroutines) stopped at the same
# moment in gdb, their C stacks side by side:
#   (a) the link parser's SAX callback at the first <a> of page p/2 of a local site;
#   (b) the raw transport writing "connect: Connection refused" (the same site's port,
#       once the site has stopped; --max-tries 1);
# then, for (b), stage 2's own view: the Task's chain of coroutine frames (coro-bt,
# docs/gdb/crawlstages.py: read from memory, no call into the program), and the
# Python-style traceback task.c prints when the error escapes a Task.
# Everything is produced by this run. Each gdb gets TRACES_TIMEOUT seconds (60).
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$here/build/bin}
gdbdir=$here/docs/gdb
limit=${TRACES_TIMEOUT:-60}
s1=crawl-callbacks
s2=crawl-generators
for f in "$bin/$s1" "$bin/$s2" "$bin/testsite"; do
    [ -x "$f" ] || { echo "traces.sh: $f not built" >&2; exit 1; }
done
command -v gdb >/dev/null || { echo "traces.sh: gdb not found" >&2; exit 1; }

. "$here/scripts/testsite-lib.sh"
work=$(mktemp -d)
cleanup() { site_stop; rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# gdb NAME PROG GDBFILE ARGS... — batch gdb, output (its own and the crawler's) in
# $work/NAME; never more than $limit seconds.
run_gdb() {
    local name=$1 prog=$2 file=$3
    shift 3
    timeout -k 5 "$limit" gdb -q -batch -nx -ex "set \$page = \"${page:-}\"" -x "$file" \
        --args "$bin/$prog" -q --output /dev/null "$@" >"$work/$name" 2>&1 </dev/null
    local rc=$?
    [ $rc -eq 124 ] || [ $rc -eq 137 ] && echo "traces.sh: gdb on $prog timed out after ${limit}s" >&2
    return 0
}

# Lines between two markers of a gdb log.
section() { sed -n "/^@@$2-begin/,/^@@$2-end/{/^@@/d;p}" "$work/$1"; }

# One backtrace, trimmed to "#N function  file:line" (library frames: [library]).
frames() {
    section "$1" bt | awk -v root="$here/" '
        /^#[0-9]+ / {
            n = $1; fn = $2; loc = "?"
            if (match($0, / at [^ ]+:[0-9]+$/)) { loc = substr($0, RSTART + 4); sub(root, "", loc) }
            else if (match($0, / from [^ ]+$/)) { loc = substr($0, RSTART + 6); sub(/.*\//, "", loc); loc = "[" loc "]" }
            printf "%-4s%-22s %s\n", n, fn, loc
        }'
}

# Two backtraces as two columns, innermost frame (#0) on the first row.
side_by_side() {
    local a=$work/$1.frames b=$work/$2.frames
    frames "$1" >"$a"
    frames "$2" >"$b"
    if [ ! -s "$a" ] || [ ! -s "$b" ]; then
        echo "traces.sh: a breakpoint was not reached; gdb said:" >&2
        tail -n 5 "$work/$1" "$work/$2" >&2
        return 1
    fi
    local w
    w=$(awk '{ if (length > m) m = length } END { print m + 3 }' "$a")
    awk -v w="$w" -v h1="$s1 (stage 1)" -v h2="$s2 (stage 2)" '
        NR == FNR { left[FNR] = $0; nl = FNR; next }
        { right[FNR] = $0; nr = FNR }
        END {
            printf "  %-*s%s\n", w, h1, h2
            n = nl > nr ? nl : nr
            for (i = 1; i <= n; i++) printf "  %-*s%s\n", w, left[i], right[i]
        }' "$a" "$b"
}

status=0
spec=pages=6,links=3,size=9000,seed=1
site_start "$bin" "$spec" || exit 1
page="${site_url}p/2"

echo "== (a) the link parser at the first <a> of $page"
echo "   a conditional breakpoint on tok_start: that page, the tag a  (docs/gdb/trace-links.gdb)"
echo
run_gdb links1 "$s1" "$gdbdir/trace-links.gdb" --max-tasks 1 "$site_url"
run_gdb links2 "$s2" "$gdbdir/trace-links.gdb" --max-tasks 1 "$site_url"
side_by_side links1 links2 || status=1

# The site goes away: its port is now closed, and connecting to it is refused.
site_stop
page=
echo
echo "== (b) connect refused: raw_error writes the text, $site_url after the site stopped, --max-tries 1"
echo "   break raw_error  (docs/gdb/trace-error.gdb)"
echo
run_gdb err1 "$s1" "$gdbdir/trace-error.gdb" --max-tries 1 "$site_url"
run_gdb err2 "$s2" "$gdbdir/trace-error.gdb" --max-tries 1 "$site_url"
side_by_side err1 err2 || status=1

run_gdb escape "$s2" "$gdbdir/trace-escape.gdb" --max-tries 1 "$site_url"
echo
echo "== (b) in stage 2's terms, at the same breakpoint: coro-bt"
echo
section escape dump | sed 's/^/  /'
echo
echo "== (b) the same error escaping its Task: gdb makes fetch_response and fetch return where"
echo "   they would catch it (break remember_error, then crawl_record_failure: up; return 1),"
echo "   and task.c prints:"
echo
section escape escape | sed -n "/^Task '/,/^[A-Za-z]*\(Error\|Exception\):/p" | sed 's/^/  /' >"$work/tb"
if grep -q '^  Traceback (most recent call last):' "$work/tb"; then
    cat "$work/tb"
else
    echo "traces.sh: no traceback was printed; gdb said:" >&2
    tail -n 8 "$work/escape" >&2
    status=1
fi
# A gdb error in any run (a Python command that failed, a refused call) fails the
# script too: the output above would be missing a part.
for f in "$work"/links1 "$work"/links2 "$work"/err1 "$work"/err2 "$work"/escape; do
    if grep -E 'Python Exception|Error occurred in Python|Cannot call functions|Undefined command' "$f" >&2; then
        echo "traces.sh: gdb reported an error in $(basename "$f")" >&2
        status=1
    fi
done
exit $status
