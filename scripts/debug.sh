#!/usr/bin/env bash
# debug.sh STAGE [BINDIR] — a gdb session on one stage's crawler, ready to step.
#
# Starts testsite on a small generated site, then gdb on the stage's crawler with the
# site's root URL and --max-tasks 2, breakpoints set by docs/gdb/stageSTAGE.gdb, which
# also prints what to try. Type `run` to start. The server stops when gdb exits
# (also after Ctrl-C; inside gdb, Ctrl-C only interrupts the crawler).
#
#   DEBUG_SITE=pages=6,links=3,size=500,seed=1   the generated site
#   DEBUG_MAX_TASKS=2                             --max-tasks
#   DEBUG_DELAY_MS=0                              testsite's delay per response
#   DEBUG_ARGS="..."                              more crawler options (e.g. -v)
#   DEBUG_ENGINE=1                                stage 3 with robots.txt and the engine
#                                                 (its default); else the chapter's path
#                                                 the guide narrates (chapter-flags.sh)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
stage=${1:-}
bin=${2:-$here/build/bin}
case $stage in
    1) prog=crawl-callbacks ;;
    2) prog=crawl-generators ;;
    3) prog=crawl-queue ;;     # the chapter's path unless DEBUG_ENGINE=1 (below)
    *) echo "usage: $0 1|2|3 [BINDIR]" >&2; exit 2 ;;
esac
for f in "$bin/$prog" "$bin/testsite"; do
    [ -x "$f" ] || { echo "debug.sh: $f not built (make -f Makefile.tutorial build)" >&2; exit 1; }
done
command -v gdb >/dev/null || { echo "debug.sh: gdb not found (make -f Makefile.tutorial setup)" >&2; exit 1; }

. "$here/scripts/testsite-lib.sh"
trap site_stop EXIT
trap 'exit 130' INT TERM HUP

site_start "$bin" "${DEBUG_SITE:-pages=6,links=3,size=500,seed=1}" --delay "${DEBUG_DELAY_MS:-0}"
echo "testsite: ${DEBUG_SITE:-pages=6,links=3,size=500,seed=1} at $site_url (pid $site_pid; stopped when gdb exits)"
# A Ctrl-C typed at gdb interrupts the crawler; it must not end this script first.
trap : INT
# shellcheck source=chapter-flags.sh
. "$here/scripts/chapter-flags.sh"
# Stage 3 as the chapter has it (its Queue, no politeness), and without robots.txt and
# the engine unless DEBUG_ENGINE=1.
chapter=()
[ "$stage" = 3 ] && chapter=("${CHAPTER_QUEUE[@]}")
[ "$stage" = 3 ] && [ "${DEBUG_ENGINE:-0}" != 1 ] && chapter=("${CHAPTER_FLAGS[@]}")
# shellcheck disable=SC2086
gdb -q -x "$here/docs/gdb/stage$stage.gdb" \
    --args "$bin/$prog" --max-tasks "${DEBUG_MAX_TASKS:-2}" "${chapter[@]}" ${DEBUG_ARGS:-} "$site_url"
