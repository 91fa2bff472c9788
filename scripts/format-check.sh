#!/usr/bin/env bash
# format-check.sh — the C sources keep the project's style (.editorconfig, .clang-format).
#
#   every .c and .h git tracks: no tab, no trailing white space, at most 100 columns
#     (characters, not bytes), a final newline;
#   every .c and .h, tracked or not yet added: as clang-format writes it, whole
#     (the tree was formatted once, in one commit; the formatter holds it since).
#
# Prints each violation; exit 1 if any. `--fix` formats every file in place.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
fix=0
[ "${1:-}" = "--fix" ] && fix=1

bad=0
files=$(git ls-files '*.c' '*.h')
if ! out=$(printf '%s\n' $files | python3 -c '
import sys
bad = 0
for f in sys.stdin.read().split():
    data = open(f, "rb").read()
    text = data.decode("utf-8", "replace")
    if data and not data.endswith(b"\n"):
        print(f"{f}: no newline at the end"); bad += 1
    for i, line in enumerate(text.split("\n"), 1):
        if "\t" in line:
            print(f"{f}:{i}: a tab"); bad += 1
        if line != line.rstrip(" "):
            print(f"{f}:{i}: trailing white space"); bad += 1
        if len(line) > 100:
            print(f"{f}:{i}: {len(line)} columns (at most 100)"); bad += 1
sys.exit(1 if bad else 0)
'); then
    echo "$out"
    bad=1
fi

# Every .c and .h, tracked or new: as clang-format writes it, whole.
if ! command -v clang-format >/dev/null 2>&1; then
    echo "format-check: clang-format is missing (Debian: clang-format)"; exit 1
fi
all=$(git ls-files --cached --others --exclude-standard -- '*.c' '*.h')
for f in $all; do
    [ -f "$f" ] || continue
    if [ "$fix" -eq 1 ]; then
        clang-format -i "$f"
    elif ! clang-format --dry-run -Werror "$f" 2>/dev/null; then
        echo "$f: not as clang-format writes it (clang-format -i $f)"
        bad=1
    fi
done
n=$(printf '%s\n' $all | wc -l)   # what the formatter checked: tracked and new
if [ "$bad" -eq 0 ]; then echo "format-check: $n files clean"; else echo "format-check: FAILED"; fi
exit "$bad"
