#!/usr/bin/env bash
# inflight.sh [BINDIR] — each stage stopped in the middle of a crawl of a slow local
# site (every response waits INFLIGHT_DELAY_MS, 300; --max-tasks 3), and what it has
# in flight at that moment:
#   1. in gdb (stopped by a SIGINT, then at the loop's next wait): stage 1's
#      `info fetchers`, stage 2's and 3's `info tasks` and `coro-bt` (docs/gdb/
#      crawlstages.py: read from memory, no call into the program);
#   2. without a debugger: `kill -USR1 PID`, which makes each crawler print the same
#      on stderr at the next turn of its loop, and go on crawling.
# Callbacks leave only objects; coroutines leave chains of frames. Everything is
# produced by this run; each gdb gets INFLIGHT_TIMEOUT seconds (60).
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$here/build/bin}
delay=${INFLIGHT_DELAY_MS:-300}
limit=${INFLIGHT_TIMEOUT:-60}
for f in crawl-callbacks crawl-generators crawl-queue testsite; do
    [ -x "$bin/$f" ] || { echo "inflight.sh: $bin/$f not built" >&2; exit 1; }
done
command -v gdb >/dev/null || { echo "inflight.sh: gdb not found" >&2; exit 1; }

. "$here/scripts/testsite-lib.sh"
work=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; site_stop; rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
site_start "$bin" pages=30,links=4,size=2000,seed=1 --delay "$delay" || exit 1
status=0

# The crawler's pid, once gdb (run by `timeout`, pid T) has started it.
inferior_pid() {
    local t=$1 prog=$2 g p
    for _ in $(seq 100); do
        g=$(pgrep -n -P "$t" -x gdb) && p=$(pgrep -n -P "$g" -x "${prog:0:15}") &&
            { echo "$p"; return 0; }
        sleep 0.05
    done
    return 1
}

# The flags that make PROG the chapter's crawler: crawl-queue's CHAPTER_QUEUE
# (chapter-flags.sh: its Queue, no politeness); none for stages 1 and 2, which are the
# chapter.
# shellcheck source=chapter-flags.sh
. "$here/scripts/chapter-flags.sh"
chapter_of() {
    [ "$1" = crawl-queue ] && echo "${CHAPTER_QUEUE[*]}"
    return 0
}

# gdb PROG COMMANDS...: run PROG on the site under gdb, stop it with SIGINT after
# 1.5 s (while it waits for the slow responses), then run COMMANDS.
in_gdb() {
    local prog=$1 args=() c
    shift
    local chapter
    read -r -a chapter <<<"$(chapter_of "$prog")"
    for c in "$@"; do args+=(-ex "$c"); done
    timeout -k 5 "$limit" gdb -q -batch -nx -x "$here/docs/gdb/crawlstages.py" \
        -ex 'set may-call-functions off' -ex 'set pagination off' -ex 'set confirm off' \
        -ex 'set print frame-arguments none' -ex 'set print address off' -ex run \
        -ex 'tbreak epoll_wait_fired' -ex continue "${args[@]}" -ex kill \
        --args "$bin/$prog" -q --max-tasks 3 "${chapter[@]}" --output /dev/null "$site_url" \
        >"$work/gdb.out" 2>&1 </dev/null &
    local g=$! p
    if p=$(inferior_pid "$g" "$prog"); then
        # Under load gdb may still be loading the libraries 1.5 s after the start: count
        # from the crawler's first connection (its first socket), at most 20 s.
        for _ in $(seq 400); do
            find "/proc/$p/fd" -lname 'socket:*' 2>/dev/null | grep -q . && break
            sleep 0.05
        done
        sleep 1.5
        kill -INT "$p"
    fi
    wait "$g"
    # The SIGINT lands wherever the crawler is (in epoll_wait, mostly; under load, maybe
    # in a callback); the temporary breakpoint then stops it where its loop is about to
    # wait again, all callbacks of the turn done. From that stop on, without gdb's
    # start-up chatter and the program's addresses. With threads running (stage 3's
    # pool) gdb says 'Thread 1 "crawl-queue" hit Temporary breakpoint 1, ...'.
    sed -En '/^(Thread [0-9]+ ".*" hit )?Temporary breakpoint 1, /,$p' "$work/gdb.out" |
        grep -v -e '^\[Inferior 1 .* killed\]' -e 'No such file or directory' | sed "s|$here/||g"
    # ... and it stopped mid-crawl: something is in flight.
    if grep -qE 'Python Exception|Error occurred in Python|Undefined command|Cannot call functions' "$work/gdb.out" ||
       ! grep -qE '^(Program|Thread [0-9]+ ".*") received signal SIGINT' "$work/gdb.out" ||
       ! grep -qE '^(Thread [0-9]+ ".*" hit )?Temporary breakpoint 1, ' "$work/gdb.out" ||
       ! grep -qE '^[1-9][0-9]* live (task|Fetcher)\(s\):' "$work/gdb.out"; then
        echo "inflight.sh: gdb on $prog did not do it:" >&2
        tail -n 8 "$work/gdb.out" >&2
        status=1
    fi
}

# usr1 PROG: run PROG on the site, send it SIGUSR1 after 1.5 s, print its stderr and
# how the crawl ended.
usr1() {
    local prog=$1 rc chapter
    read -r -a chapter <<<"$(chapter_of "$prog")"
    "$bin/$prog" -q --max-tasks 3 "${chapter[@]}" --format jsonl --output "$work/report" "$site_url" 2>"$work/err" &
    pid=$!
    sleep 1.5
    kill -USR1 "$pid"
    wait "$pid"
    rc=$?
    pid=
    sed 's/^/  /' "$work/err"
    echo "  ($prog went on: exit status $rc, $(grep -c '"url"' "$work/report") pages in its report)"
    grep -qE '^[0-9]+ live (task|Fetcher)\(s\):' "$work/err" || status=1
}

echo "== A slow site: $site_url, 30 pages, every response $delay ms; --max-tasks 3."
echo "   gdb stops each crawler 1.5 s in, with SIGINT, then (tbreak epoll_wait_fired; continue)"
echo "   where its loop is about to wait again."
echo
echo "== crawl-callbacks (stage 1): bt, then info fetchers"
echo
in_gdb crawl-callbacks 'bt' 'info fetchers'
echo
echo "== crawl-generators (stage 2): info tasks, then coro-bt 1 (the first Task)"
echo
in_gdb crawl-generators 'info tasks' 'coro-bt 1'
echo
echo "== crawl-queue (stage 3): info tasks"
echo
in_gdb crawl-queue 'info tasks'
echo
echo "== Without a debugger: kill -USR1 PID, 1.5 s in. The crawler prints at the next turn"
echo "   of its loop and goes on."
for prog in crawl-callbacks crawl-generators crawl-queue; do
    echo
    c=$(chapter_of "$prog")
    echo "\$ $prog --max-tasks 3 ${c:+$c }$site_url &  kill -USR1 \$!"
    usr1 "$prog"
done
exit $status
