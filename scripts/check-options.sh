#!/usr/bin/env bash
# check-options.sh BIN_DIR — README.md's option table and the crawlers' --help agree:
# every long flag crawl-queue's --help lists is in the table (in a row of its own, or
# explained in another's) and every row's flag is in that help; each flag of crawl-queue's
# own table (in its --help, not in crawl-callbacks') is in a row that says "crawl-queue
# only", and no such row is about a flag stages 1 and 2 take; and stages 1 and 2 list
# the same flags. Prints each disagreement; exit 1 if any.
#
#   check-options.sh BIN_DIR             check README.md against the crawlers in BIN_DIR
#   check-options.sh --selftest BIN_DIR  plant a flag in crawl-queue's --help (as a row of
#                                        its table prints it) and see it caught without its
#                                        README row, and pass with one
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
if [ "${1:-}" = --selftest ]; then
    real=${2:?usage: check-options.sh --selftest BIN_DIR}
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-options.XXXXXX") || exit 1
    trap 'rm -rf "$tmp"' EXIT
    mkdir "$tmp/bin"
    for p in crawl-callbacks crawl-generators; do
        printf '#!/bin/sh\nexec "%s/%s" "$@"\n' "$real" "$p" >"$tmp/bin/$p"
    done
    printf '#!/bin/sh\n"%s/crawl-queue" --help\necho "      --planted-flag      planted in the rows only [off]"\n' \
        "$real" >"$tmp/bin/crawl-queue"
    chmod +x "$tmp/bin"/*
    fails=0
    out=$(bash "$0" "$tmp/bin" 2>&1)
    if [ $? -ne 0 ] && grep -q -- "--planted-flag: in crawl-queue --help, not in README.md's option table" <<<"$out"; then
        echo "selftest: a flag without its README row: fails as it should"
    else
        echo "selftest: a flag without its README row: expected fail, got:"; sed 's/^/    /' <<<"$out"; fails=1
    fi
    awk '{ print } /^\| `--insecure`/ { print "| `--planted-flag` | off | crawl-queue only: planted |" }' \
        "$here/README.md" >"$tmp/README.md"
    out=$(CHECK_OPTIONS_README="$tmp/README.md" bash "$0" "$tmp/bin" 2>&1)
    if [ $? -eq 0 ]; then
        echo "selftest: the flag with its row: passes as it should"
    else
        echo "selftest: the flag with its row: expected pass, got:"; sed 's/^/    /' <<<"$out"; fails=1
    fi
    exit "$fails"
fi
bin=${1:?usage: check-options.sh BIN_DIR}
readme_file=${CHECK_OPTIONS_README:-$here/README.md}
cd "$here" || exit 1

# The long flags a --help lists: the words "--name" that open an option's line.
help_flags() {
    "$bin/$1" --help | sed -nE 's/^ +(-[a-zA-Z], )?--([a-z0-9-]+).*/\2/p' |
        grep -vxE 'help|version' | sort -u
}
# The table's rows (after its header and rule, up to the first line that is not a row).
table_rows() {
    awk '/^\| option \| default \| meaning \|/ { on = 1; next } on && /^\|---/ { next }
         on && !/^\|/ { exit } on' "$readme_file"
}
# The long flags of the rows matching $1: of their first cell (the flags a row is
# about), or with $2 = all, of the whole row (a flag explained in another's row).
row_flags() {
    table_rows | grep -E -- "$1" | if [ "${2:-}" = all ]; then cat; else cut -d'|' -f2; fi |
        grep -oE -- '--[a-z][a-z0-9-]*' | sed 's/^--//' | sort -u
}
# -v / -q: the rows name the short forms; the help, --verbose and --quiet.
short=$(table_rows | cut -d'|' -f2 | grep -q -- '`-v`' && printf 'verbose\nquiet\n')
readme=$(printf '%s\n%s\n' "$(row_flags .)" "$short" | sed '/^$/d' | sort -u)
readme_all=$(printf '%s\n%s\n' "$(row_flags . all)" "$short" | sed '/^$/d' | sort -u)
queue=$(help_flags crawl-queue) || exit 1
chapter=$(help_flags crawl-callbacks) || exit 1
bad=0
report() {  # report WHAT LIST
    [ -z "$2" ] && return
    sed "s/^/check-options: --/; s/\$/: $1/" <<<"$2"
    bad=$((bad + $(wc -l <<<"$2")))
}
report "in crawl-queue --help, not in README.md's option table" "$(comm -23 <(echo "$queue") <(echo "$readme_all"))"
report "a row of README.md's option table, not in crawl-queue --help" "$(comm -13 <(echo "$queue") <(echo "$readme"))"
report "crawl-queue's own (not in crawl-callbacks --help): its row should say \"crawl-queue only\"" \
    "$(comm -23 <(comm -23 <(echo "$queue") <(echo "$chapter")) <(row_flags 'crawl-queue only' all))"
report "its row says \"crawl-queue only\", but crawl-callbacks --help lists it" \
    "$(comm -12 <(echo "$chapter") <(row_flags 'crawl-queue only'))"
report "crawl-callbacks and crawl-generators list different flags" \
    "$(comm -3 <(echo "$chapter") <(help_flags crawl-generators) | tr -d '\t')"
echo "check-options: $(wc -l <<<"$queue") flags of crawl-queue, $(wc -l <<<"$chapter") of stages 1 and 2, $bad disagreement(s)"
[ "$bad" -eq 0 ]
