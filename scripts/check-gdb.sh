#!/usr/bin/env bash
# check-gdb.sh [BINDIR] — prove docs/gdb/stage{1,2,3}.gdb work: in gdb -batch, each
# stage crawls a small local site to the end with every breakpoint enabled; each
# breakpoint must resolve and be hit, the commands the guide suggests must run
# without a gdb error (the Python ones of docs/gdb/crawlstages.py included: they must
# print what they found), no call into the program may be asked for (the gdb files
# set may-call-functions off), and the crawl must exit normally. One line per stage.
#
# check-gdb.sh --selftest [BINDIR] — shows that the check fails on each kind of error a
# guide's output may hold: gdb on crawl-queue (not run) prints each for real — a
# printer's `<unreadable`, `There is no member`, `No symbol`, a Python `Traceback` —
# and each must be flagged, and a clean `print` must not.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
selftest=0
[ "${1:-}" = --selftest ] && { selftest=1; shift; }
bin=${1:-$here/build/bin}
limit=${CHECK_GDB_TIMEOUT:-120}

# The lines of a gdb log that say a command failed or read nothing: a gdb error, a
# printer that could not read (crawlstages.py's `<unreadable ...>`), a Python error.
gdb_errors() {
    grep -E '<unreadable|There is no member|No symbol|Cannot access|A syntax error|not defined|Error in sourced|Function ".*" not defined|Python Exception|Error occurred in Python|Error while executing Python code|Traceback|Undefined command|Cannot call functions' "$1"
}

if [ $selftest = 1 ]; then
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    fail=0
    # CASE|COMMAND|WHAT THE OUTPUT MUST SHOW
    while IFS='|' read -r case cmd shows; do
        gdb -q -batch -nx -x "$here/docs/gdb/crawlstages.py" -ex 'set python print-stack full' \
            -ex "$cmd" "$bin/crawl-queue" >"$work/log" 2>&1 </dev/null
        if ! grep -qF "$shows" "$work/log"; then
            echo "selftest: $case: gdb did not print '$shows' for: $cmd"; sed 's/^/  | /' "$work/log"; fail=1
        elif [ "$case" = clean ] && gdb_errors "$work/log" >/dev/null; then
            echo "selftest: clean output flagged: $(gdb_errors "$work/log")"; fail=1
        elif [ "$case" != clean ] && ! gdb_errors "$work/log" >/dev/null; then
            echo "selftest: $case not flagged: $(head -n1 "$work/log")"; fail=1
        else
            echo "selftest: $case: $([ "$case" = clean ] && echo "not flagged" || echo "flagged"): $(grep -F "$shows" "$work/log" | head -n1 | cut -c1-70)"
        fi
    done <<'CASES'
unreadable|p *(queue *)main|<unreadable Queue:
no-member|p ((queue *)0)->getters_head|There is no member named getters_head
no-symbol|p no_such_symbol|No symbol "no_such_symbol"
python-traceback|python raise RuntimeError("a course command failed")|Traceback (most recent call last)
clean|p sizeof(queue) > 0|= 1
CASES
    exit $fail
fi
. "$here/scripts/testsite-lib.sh"
# shellcheck source=chapter-flags.sh
. "$here/scripts/chapter-flags.sh"
work=$(mktemp -d)
trap 'site_stop; rm -rf "$work"' EXIT
site_start "$bin" pages=6,links=3,size=500,seed=1 || exit 1

# The guide's commands, tried at the first stop of each stage.
guide1=(bt 'info fetchers' 'p *(Fetcher *)data' 'p ((Fetcher *)data)->url' finish 'info breakpoints')
guide2=('info tasks' coro-bt coro-list 'p *co' 'p co->line' 'p *(fetch_frame *)co' bt
        'display co->line' next 'watch -l co->line' continue 'delete 5' 'undisplay' up
        'p co->line' 'enable 1')
# (get_frame's cast is for a stop in get_body: the one the temporary breakpoint makes.)
guide3=('info tasks' coro-bt 'p *co->task' 'p *co' bt disable 'tbreak get_body' continue
        'p *((get_frame *)co)->q' enable 'disable 1 2' continue 'enable 1 2')
progs=(x crawl-callbacks crawl-generators crawl-queue)
# Then: continue until the crawl exits, and report.
cat >"$work/finish.gdb" <<'GDB'
while $_isvoid($_exitcode)
  continue
end
info breakpoints
printf "exitcode=%d\n", $_exitcode
GDB
fail=0
# Stage 3 twice: as debug-stage3 runs it (chapter-flags.sh's CHAPTER_FLAGS: the chapter's
# path the guide narrates), and with DEBUG_ENGINE=1 (CHAPTER_QUEUE: the chapter's Queue,
# robots.txt and the engine).
for run in 1 2 3 3e; do
    stage=${run%e}
    extra=()
    [ "$stage" = 3 ] && extra=("${CHAPTER_QUEUE[@]}")
    [ "$run" = 3 ] && extra=("${CHAPTER_FLAGS[@]}")
    args=()
    name="guide$stage[@]"
    for c in "${!name}"; do args+=(-ex "$c"); done
    log=$work/stage$run
    timeout -k 5 "$limit" gdb -q -batch -nx -x "$here/docs/gdb/stage$stage.gdb" \
        -ex run "${args[@]}" -x "$work/finish.gdb" \
        --args "$bin/${progs[$stage]}" --max-tasks 2 "${extra[@]}" --output /dev/null \
        "$site_url" >"$log" 2>&1 </dev/null
    rc=$?
    nbp=$(grep -c '^Breakpoint [0-9]* at ' "$log")
    # The last `info breakpoints` (the guide may run one too).
    awk '/^Num +Type/ { n = 0 } { last[++n] = $0 } END { for (i = 1; i <= n; i++) print last[i] }' \
        "$log" >"$log.bp"
    hits=$(grep -c 'breakpoint already hit' "$log.bp")
    errs=$(gdb_errors "$log")
    # The stages' gdb commands printed what they read (not an empty answer).
    case $stage in
        1) grep -qE "^[0-9]+ live Fetcher\(s\):" "$log" && grep -q "^  Fetcher '" "$log" ||
               errs="$errs${errs:+$'\n'}info fetchers listed no Fetcher" ;;
        *) grep -qE "^[0-9]+ live task\(s\):" "$log" && grep -q "^Task '.*outermost first:" "$log" ||
               errs="$errs${errs:+$'\n'}info tasks or coro-bt printed nothing" ;;
    esac
    # The Queue printer decoded the packed jobq (jobq.c): at the get_body stop the
    # root URL is still queued.
    [ "$stage" = 3 ] && ! grep -qF "<Queue _queue=['$site_url" "$log" &&
        errs="$errs${errs:+$'\n'}p *q did not list the Queue's URL ($site_url)"
    exitcode=$(sed -n 's/^exitcode=//p' "$log" | tail -n1)
    if [ $rc -eq 0 ] && [ "$nbp" -gt 0 ] && [ "$hits" -eq "$nbp" ] && [ -z "$errs" ] && [ "$exitcode" = 0 ]; then
        echo "stage$stage.gdb${extra[*]:+ ${extra[*]}}: ok ($nbp breakpoints, all hit: $(grep -o 'already hit [0-9]* time' "$log.bp" | grep -o '[0-9]*' | paste -sd,) times; guide commands ran; crawl exited 0)"
    else
        echo "stage$stage.gdb${extra[*]:+ ${extra[*]}}: FAILED (gdb rc $rc, $nbp breakpoints, $hits hit, exit code '$exitcode')"
        [ -n "$errs" ] && echo "$errs" | sed 's/^/  /'
        tail -n 15 "$log" | sed 's/^/  | /'
        fail=1
    fi
done
exit $fail
