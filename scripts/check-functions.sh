#!/usr/bin/env bash
# check-functions.sh — no function of stage 3's engine longer than the engine's screen:
# each of stage3_queue/engine/*.c, from the '{' that opens a function at the start of a
# line to the '}' that closes it there, at most MAX lines (60), so that each reads
# beside its Scrapy counterpart. Prints each that is longer; exit 1 if any.
#
#   check-functions.sh             check this tree
#   check-functions.sh --selftest  a file with a function of MAX lines passes, MAX + 1 fails
set -uo pipefail
MAX=60

# check FILE...: the functions longer than MAX lines, one line each; exit 1 if any.
check() {
    awk -v max="$MAX" '
        FNR == 1 { start = 0; name = "" }
        /^[A-Za-z_].*\)[[:space:]]*$/ { name = $0 }
        /^\{/ { start = FNR }
        /^\}/ && start {
            n = FNR - start + 1
            if (n > max) { printf "%s:%d: %s: %d lines (at most %d)\n", FILENAME, start, name, n, max; bad++ }
            start = 0
        }
        END { exit bad > 0 }' "$@"
}

if [ "${1:-}" = --selftest ]; then
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-functions.XXXXXX") || exit 1
    trap 'rm -rf "$tmp"' EXIT
    body() { # body N: a function of N lines, braces included
        printf 'static int f(void)\n{\n'
        for ((i = 0; i < $1 - 2; i++)); do printf '    x++;\n'; done
        printf '}\n'
    }
    fails=0
    body "$MAX" >"$tmp/ok.c"
    if check "$tmp/ok.c" >/dev/null; then echo "selftest: $MAX lines: passes as it should"
    else echo "selftest: $MAX lines: expected pass"; fails=1; fi
    body $((MAX + 1)) >"$tmp/long.c"
    if ! check "$tmp/long.c" >/dev/null; then echo "selftest: $((MAX + 1)) lines: fails as it should"
    else echo "selftest: $((MAX + 1)) lines: expected fail"; fails=1; fi
    exit "$fails"
fi
cd "$(dirname "$0")/.." || exit 1
files=(stage3_queue/engine/*.c)
if check "${files[@]}"; then
    echo "check-functions: ${#files[@]} files of stage3_queue/engine/, every function at most $MAX lines"
else
    exit 1
fi
