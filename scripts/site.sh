#!/usr/bin/env bash
# site.sh [BINDIR] — serve a local test site in the foreground until Ctrl-C, and say
# how to crawl it (make -f Makefile.tutorial site).
#
#   SITE=tests/sites/basic.site   a site file (format: tests/sites/README.md), or
#   GEN=pages=50,links=4,size=2000,seed=1   a generated site instead
#   PORT=8000                     the port (0: any free one)
#   DELAY=0                       milliseconds before each response: slow enough to
#                                 watch the crawlers wait (DELAY=300)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$here/build/bin}
[ -x "$bin/testsite" ] || { echo "site: $bin/testsite not built (make -f Makefile.tutorial build)" >&2; exit 1; }
args=(--port "${PORT:-8000}" --delay "${DELAY:-0}")
if [ -n "${GEN:-}" ]; then
    args+=(--generate "$GEN")
    what="a generated site ($GEN)"
else
    site=${SITE:-$here/tests/sites/basic.site}
    args+=("$site")
    what=${site#"$here/"}
fi
# testsite prints its URL first; the lines after it tell what to do with it.
"$bin/testsite" "${args[@]}" | {
    read -r url || exit 1
    slow=; [ "${DELAY:-0}" -gt 0 ] && slow="(${DELAY} ms per response) "
    echo "Serving $what at $url ${slow}— Ctrl-C stops it."
    echo "In another terminal:"
    for p in crawl-callbacks crawl-generators crawl-queue; do
        echo "  ${bin#"$here/"}/$p $url"
    done
    cat
}
