#!/usr/bin/env bash
# install.sh BUILD_DIR — `cmake --install` gives a crawler that works as a tool (ctest
# scenario.install): into a prefix under BUILD_DIR it installs the three crawlers, a man
# page for each that `man -l` renders (groff or mandoc when man is missing; skipped,
# exit 77, when none is there) listing every flag of the crawler's --help, a bash
# completion that offers every flag, and the example spiders; and the installed
# crawl-queue, run from another directory with the installed titles.lua, crawls a
# loopback testsite: every page a record and an item.
set -uo pipefail
build=$(cd "${1:?usage: install.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/scripts/testsite-lib.sh"
work=$build/scenario-install
rm -rf "$work"
mkdir -p "$work/elsewhere"
trap 'site_stop' EXIT
prefix=$work/prefix
fail=0
bad() { echo "install: FAIL: $*"; fail=1; }

if ! cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1; then
    cat "$work/install.log"
    bad "cmake --install failed"
    exit 1
fi

# The man page as text: man -l, else groff or mandoc (every one with ASCII dashes).
render() {
    if command -v man >/dev/null; then
        LC_ALL=C MANWIDTH=200 man -l "$1"
    elif command -v groff >/dev/null; then
        LC_ALL=C groff -man -Tascii -rLL=200n "$1" | col -b
    elif command -v mandoc >/dev/null; then
        LC_ALL=C mandoc -Tascii -Owidth=200 "$1" | col -b
    else
        return 77
    fi
}
# The flags a --help lists (as scripts/check-options.sh reads them), and the short ones.
help_flags() {
    "$1" --help | sed -nE 's/^ +(-([a-zA-Z]), )?--([a-z0-9.-]+).*/--\3\n-\2/p' | grep -vx -- - |
        sort -u
}

skipped=0
for prog in crawl-callbacks crawl-generators crawl-queue; do
    bin=$prefix/bin/$prog
    [ -x "$bin" ] || { bad "$prog: not installed in $prefix/bin"; continue; }
    flags=$(help_flags "$bin")
    [ "$(wc -l <<<"$flags")" -ge 15 ] || bad "$prog: only $(wc -l <<<"$flags") flags in --help"

    man=$prefix/share/man/man1/$prog.1
    if [ ! -f "$man" ]; then
        bad "$prog: no man page $man"
    else
        render "$man" >"$work/$prog.txt" 2>"$work/$prog.man-err"
        rc=$?
        if [ "$rc" -eq 77 ]; then
            skipped=1
        elif [ "$rc" -ne 0 ] || [ -s "$work/$prog.man-err" ]; then
            bad "$prog: man -l $man: exit $rc: $(head -3 "$work/$prog.man-err")"
        else
            grep -q "^NAME" "$work/$prog.txt" || bad "$prog: the man page has no NAME"
            missing=0
            while read -r f; do
                grep -qE -- "(^|[ ,])$f( |,|$)" "$work/$prog.txt" || { bad "$prog: $f not in its man page"; missing=$((missing + 1)); }
            done <<<"$flags"
            echo "install: $prog: $(wc -l <<<"$flags") flags of --help, $missing missing from its man page"
        fi
    fi

    comp=$prefix/share/bash-completion/completions/$prog
    if [ ! -f "$comp" ]; then
        bad "$prog: no bash completion $comp"
    else
        offered=$(bash -c '. "$1" || exit 1
            complete -p "$2" >/dev/null || exit 1
            fn=$(complete -p "$2" | sed -nE "s/.*-F ([^ ]+).*/\1/p")
            COMP_WORDS=("$2" -); COMP_CWORD=1; "$fn"; printf "%s\n" "${COMPREPLY[@]}"' \
            _ "$comp" "$prog") || bad "$prog: its completion does not load"
        missing=$(comm -23 <(echo "$flags") <(sort -u <<<"$offered"))
        [ -z "$missing" ] || bad "$prog: not completed: $(paste -sd ' ' <<<"$missing")"
        echo "install: $prog: $(wc -l <<<"$offered") flags completed"
    fi
done

# The installed spider examples, and the installed crawl-queue run from elsewhere.
examples=$prefix/share/crawlstages/examples
for f in titles.lua listing.lua broken_links.lua; do
    # A handout may withhold an example (docs/exercises/*/handout.conf): none to install.
    [ -f "$here/stage3_queue/spiders/examples/$f" ] || [ ! -f "$here/HANDOUT.md" ] || continue
    [ -f "$examples/$f" ] || bad "no $examples/$f"
done
if command -v readelf >/dev/null && readelf -d "$prefix/bin/crawl-queue" | grep -F -- "$build" >/dev/null; then
    bad "the installed crawl-queue names the build tree: $(readelf -d "$prefix/bin/crawl-queue" | grep -F -- "$build")"
fi
pages=6
site_start "$build/bin" "pages=$pages,links=2,size=300,seed=4" || exit 1
(cd "$work/elsewhere" && env -i PATH="$prefix/bin:/usr/bin:/bin" HOME="$work/elsewhere" \
    crawl-queue -q --format jsonl --output out.jsonl --spider "$examples/titles.lua" \
    --items items.jsonl "$site_url") >"$work/crawl.err" 2>&1
rc=$?
[ "$rc" -eq 0 ] || bad "the installed crawl-queue: exit $rc: $(head -3 "$work/crawl.err")"
records=$(grep -c '"status": 200' "$work/elsewhere/out.jsonl" 2>/dev/null)
items=$(grep -c '"title"' "$work/elsewhere/items.jsonl" 2>/dev/null)
echo "install: the installed crawl-queue from $work/elsewhere: ${records:-0} pages of $pages, ${items:-0} items"
[ "${records:-0}" -eq "$pages" ] || bad "expected $pages pages with status 200, got ${records:-0}"
[ "${items:-0}" -eq "$pages" ] || bad "expected $pages items, got ${items:-0}"

[ "$fail" -eq 0 ] || exit 1
if [ "$skipped" -eq 1 ]; then
    echo "install: no man, groff nor mandoc: man pages not rendered (scripts/install-deps.sh installs man-db)"
    exit 77
fi
echo "install: ok"
