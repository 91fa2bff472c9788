#!/usr/bin/env bash
# watch-line.sh [BINDIR] — a gdb -batch session on crawl-generators that watches the
# saved resume line of the fetch frame and then of its http_get frame change
# (docs/gdb/watch-line.gdb). Starts and stops a local testsite; at most 60 s.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$here/build/bin}
. "$here/scripts/testsite-lib.sh"
trap site_stop EXIT
trap 'exit 130' INT TERM HUP
site_start "$bin" pages=2,links=1,size=300,seed=1 || exit 1
echo "\$ gdb -batch -x docs/gdb/watch-line.gdb --args crawl-generators --max-tasks 1 $site_url"
timeout -k 5 "${WATCH_TIMEOUT:-60}" gdb -q -batch -nx -x "$here/docs/gdb/watch-line.gdb" \
    --args "$bin/crawl-generators" --max-tasks 1 --output /dev/null "$site_url" </dev/null 2>&1 |
    grep -v -e '^\[Thread debugging' -e '^Using host libthread_db' -e '^\[Inferior 1 .* killed\]' |
    sed "s|$here/||g"
